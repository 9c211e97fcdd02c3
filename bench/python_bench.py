"""make bench, section 5: the Python package against the CLI and onnxruntime, side by side in one run.

Usage: python3 bench/python_bench.py BUILD_DIR MODELS_DIR OUT_DIR
  a. per-call overhead of InferenceSession.run over the C++ executor (same process, same inputs): median
     of Python-timed run() minus median of the executor's own runs timed in C++; and execute_onnx per call
     on the ModelProto (qonnx's way: the model is serialized on every call, the plan is cached);
  b. per inference, steady-state medians: Python run(), the CLI's exec --repeat, onnxruntime-node
     (tools/ort/run_ort.js, graph optimizations "all") on qonnx-cc's --target qdq conversion;
  c. run_dataset samples/s against the CLI's dataset mode (exec --batch-size) on the same 10,000 samples.
"""

from __future__ import annotations

import pathlib
import re
import statistics
import subprocess
import sys
import time
from typing import Dict, List

import numpy as np
import onnx
from onnx import helper, numpy_helper

BUILD, MODELS, OUT = (pathlib.Path(a) for a in sys.argv[1:4])
sys.path.insert(0, str(BUILD / "python"))
import qonnx_cc  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLI = str(BUILD / "qonnx-cc")
RUN_ORT = ROOT / "tools" / "ort" / "run_ort.js"
MLPS = ["qonnx_model_zoo/TFC_2W2A.onnx", "qonnx_model_zoo/unsw_nb15-mlp-w2a2.onnx", "qonnx_model_zoo/kwsmlp_w3a3.onnx"]
CNNS = ["example-models/branched_model_ch_last.onnx", "example-models/separable_conv_model_ch_last.onnx",
        "qonnx/bsd300x3-espcn/subpixel/quant_model.onnx"]


def python_median_ms(sess: qonnx_cc.InferenceSession, feed: Dict[str, np.ndarray], repeats: int) -> float:
    for _ in range(3):
        sess.run(None, feed)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def steady_ms(args: List[str]) -> float:
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    found = re.findall(r"steady state:.*median ([0-9.]+) ms", done.stderr)
    if not found:
        raise RuntimeError(f"no steady-state line from {' '.join(args)}: {done.stderr[-300:]}")
    return float(found[-1])


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    print("\n5. Python package (qonnx_cc) vs the C++ executor, the CLI and onnxruntime")
    print("  a. per-call overhead of InferenceSession.run over the executor (1 thread, batch 1)")
    print(f"  {'model':<26} {'run() us':>10} {'executor us':>12} {'overhead us':>12} {'execute_onnx us':>16}")
    identity = OUT / "identity.onnx"
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "identity",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])), str(identity))
    for path in [identity] + [MODELS / m for m in MLPS]:
        sess = qonnx_cc.InferenceSession(str(path))
        feed = {a.name: np.random.default_rng(1).uniform(0, 1, size=[d if isinstance(d, int) else 1 for d in a.shape])
                .astype(np.float32) for a in sess.get_inputs()}
        core = sess._session  # the same executor, timed from C++
        # Blocks of each, alternated, so that the machine's drift hits both alike.
        py_blocks, cpp_blocks = [], []
        for _ in range(10):
            py_blocks.append(python_median_ms(sess, feed, 200) * 1e3)
            cpp_blocks.append(statistics.median(core.timed_runs(feed, 200, 1)) * 1e6)
        py_us, cpp_us = statistics.median(py_blocks), statistics.median(cpp_blocks)
        # execute_onnx on a ModelProto, as qonnx and FINN call it (random inputs break the models' input
        # datatype annotations, which sanitizing would reject: off here)
        proto = onnx.load(str(path))
        exec_us = _median_us(lambda: qonnx_cc.execute_onnx(proto, feed, sanitize=False), 500)
        print(f"  {path.stem:<26} {py_us:>10.1f} {cpp_us:>12.1f} {py_us - cpp_us:>12.1f} {exec_us:>16.1f}")

    print("  b. ms per inference, steady-state median (1 thread, batch 1); ort runs the qdq conversion")
    print(f"  {'model':<26} {'python':>9} {'CLI':>9} {'ort':>9} {'python/CLI':>11} {'python/ort':>11}")
    for m in MLPS + CNNS:
        path = MODELS / m
        tag = re.sub(r"[^A-Za-z0-9]+", "_", m)
        qdq = OUT / f"{tag}.qdq.onnx"
        subprocess.run([CLI, "convert", str(path), "--target", "qdq", "-o", str(qdq)], capture_output=True, check=True)
        folder = OUT / f"{tag}.in"
        subprocess.run([CLI, "exec", str(path), "--random-inputs", "--seed", "1", "--save-inputs", str(folder)],
                       capture_output=True, check=True)
        sess = qonnx_cc.InferenceSession(str(path))
        feed = {a.name: numpy_helper.to_array(onnx.load_tensor(str(folder / f"input_{k}.pb")))
                for k, a in enumerate(sess.get_inputs())}
        t_one = python_median_ms(sess, feed, 5)
        repeats = max(5, min(200, int(3000 / max(t_one, 0.01))))
        py = python_median_ms(sess, feed, repeats)
        cli = steady_ms([CLI, "exec", str(path), "--input-dir", str(folder), "--repeat", str(repeats)])
        ort = steady_ms(["node", str(RUN_ORT), str(qdq), "--input-dir", str(folder), "--repeat", str(repeats),
                         "--opt-level", "all", "--quiet"])
        print(f"  {path.stem if 'quant_model' not in m else m.split('/')[2]:<26} {py:>9.3f} {cli:>9.3f} {ort:>9.3f} "
              f"{py / cli:>11.2f} {py / ort:>11.2f}")

    print("  c. dataset mode: 10,000 samples of TFC_2W2A, batch 100 (samples/s)")
    path = MODELS / "qonnx_model_zoo/TFC_2W2A.onnx"
    x = np.random.default_rng(7).uniform(0, 1, size=(10000, 1, 28, 28)).astype(np.float32)
    np.save(OUT / "dataset_x.npy", x)
    best_py = min(_timed(lambda: qonnx_cc.run_dataset(str(path), x, batch_size=100)) for _ in range(3))
    rates = []
    for _ in range(3):
        done = subprocess.run([CLI, "exec", str(path), "--input", str(OUT / "dataset_x.npy"), "--batch-size", "100"],
                              capture_output=True, text=True, check=True)
        rates.append(float(re.search(r"([0-9.]+) samples/s", done.stdout).group(1)))
    py_rate = len(x) / best_py
    print(f"  run_dataset (planning included) {py_rate:,.0f} samples/s   CLI exec --batch-size {max(rates):,.0f} samples/s   "
          f"ratio {py_rate / max(rates):.2f}")


def _median_us(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
