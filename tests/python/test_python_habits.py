"""Errors per exit code, threads, memory, zero-copy inputs, and help()."""

from __future__ import annotations

import pathlib
import pydoc
import resource
import threading
import time
import tracemalloc

import numpy as np
import onnx
import pytest
from onnx import helper

import qonnx_cc
from conftest import make_model, run_cli, tensor


def test_exception_classes_and_exit_codes(qonnx_cc_bin: str, tmp_path: pathlib.Path) -> None:
    """The same bad input gives the CLI's exit code and the class of that code, with the CLI's message."""
    missing = tmp_path / "missing.onnx"
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07not a model at all\xff\xff")
    for path in (missing, garbage):
        done = run_cli(qonnx_cc_bin, "check", str(path), check=False)
        with pytest.raises(qonnx_cc.Error) as caught:
            qonnx_cc.check(str(path))
        assert caught.value.exit_code == done.returncode, path
        assert type(caught.value) is qonnx_cc._errors.BY_EXIT_CODE[done.returncode]
        assert str(caught.value) in done.stderr
    assert issubclass(qonnx_cc.InvalidModel, qonnx_cc.Error)
    assert qonnx_cc.UsageError.exit_code == 2 and qonnx_cc.NumericMismatch.exit_code == 7
    assert qonnx_cc.Unsupported.exit_code == 6 and qonnx_cc.InvalidModel.exit_code == 5


def test_unsupported_op_raises_unsupported() -> None:
    model = make_model([helper.make_node("NoSuchOp", ["x"], ["y"], domain="made.up")], [tensor("x", [1])],
                       [tensor("y", [1])])
    model.opset_import.append(helper.make_opsetid("made.up", 1))
    with pytest.raises(qonnx_cc.Unsupported, match="NoSuchOp"):
        qonnx_cc.InferenceSession(model)


def matmul_model(n: int) -> onnx.ModelProto:
    w = np.random.default_rng(0).uniform(-1, 1, size=(n, n)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm0"),
             helper.make_node("MatMul", ["h", "w"], ["y"], name="mm1")]
    return make_model(nodes, [tensor("x", [n, n])], [tensor("y", [n, n])], {"w": w})


def test_two_threads_same_bits_and_overlap() -> None:
    sess = qonnx_cc.InferenceSession(matmul_model(384))
    x = np.random.default_rng(1).uniform(-1, 1, size=(384, 384)).astype(np.float32)
    (reference,) = sess.run(None, {"x": x})
    spans: list = []
    results: list = []

    def worker() -> None:
        for _ in range(6):
            start = time.perf_counter()
            (y,) = sess.run(None, {"x": x})
            spans.append((start, time.perf_counter()))
            results.append(y.tobytes())

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 12 and all(r == reference.tobytes() for r in results)
    spans.sort()
    overlaps = sum(1 for a, b in zip(spans, spans[1:]) if b[0] < a[1])
    assert overlaps > 0, "runs from two threads never overlapped: the GIL is held during run"


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_no_leak_over_10000_runs() -> None:
    model = make_model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                        helper.make_node("Add", ["r", "x"], ["y"], name="add")],
                       [tensor("x", [16, 64])], [tensor("y", [16, 64])])
    sess = qonnx_cc.InferenceSession(model)
    x = np.ones((16, 64), np.float32)
    for _ in range(1000):
        sess.run(None, {"x": x})
    before = rss_kib()
    for _ in range(10000):
        sess.run(None, {"x": x})
    grown = rss_kib() - before
    print(f"RSS growth over 10,000 runs: {grown} KiB")
    assert grown < 2048, f"RSS grew by {grown} KiB over 10,000 runs"


def identity_sum_model(shape: tuple) -> onnx.ModelProto:
    return make_model([helper.make_node("ReduceSum", ["x"], ["y"], name="sum", keepdims=0)],
                      [tensor("x", list(shape))], [tensor("y", [])])


def test_inputs_are_read_in_place_or_copied_once() -> None:
    shape = (1024, 2048)  # 8 MiB of float32
    nbytes = shape[0] * shape[1] * 4
    sess = qonnx_cc.InferenceSession(identity_sum_model(shape))
    contiguous = np.ones(shape, np.float32)
    strided = np.ones((shape[1], shape[0]), np.float32).T  # Fortran order: needs one copy
    sess.run(None, {"x": contiguous})
    for array, copies in ((contiguous, 0), (strided, 1)):
        tracemalloc.start()
        (total,) = sess.run(None, {"x": array})
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert total == np.float32(shape[0] * shape[1])
        assert copies * nbytes <= peak < copies * nbytes + nbytes // 2, (copies, peak)


def test_any_layout_and_byte_order_gives_the_same_bits() -> None:
    model = make_model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [tensor("x", [3, 4])],
                       [tensor("y", [3, 4])])
    sess = qonnx_cc.InferenceSession(model)
    x = np.random.default_rng(4).uniform(-1, 1, size=(3, 4)).astype(np.float32)
    (expected,) = sess.run(None, {"x": x})
    for variant in (np.asfortranarray(x), x.astype(">f4"), np.ascontiguousarray(x.T).T, x.tolist()):
        (y,) = sess.run(None, {"x": variant if not isinstance(variant, list) else np.asarray(variant, np.float32)})
        assert y.tobytes() == expected.tobytes()


def test_help_is_useful() -> None:
    text = pydoc.render_doc(qonnx_cc, renderer=pydoc.plaintext)
    for word in ("InferenceSession", "execute_onnx", "convert", "NumericMismatch", "patch_qonnx"):
        assert word in text, word
    assert "onnxruntime" in (qonnx_cc.InferenceSession.__doc__ or "")
