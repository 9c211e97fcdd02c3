"""Shared fixtures of the Python suite: the CLI binary, the shared models, onnxruntime-node, model builders.

ctest sets QONNX_CC_BIN, QONNX_SHARED_MODELS and QONNX_ORT_DIR and puts <build>/python on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
from typing import Any, Dict, List, Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("QONNX_SHARED_MODELS", REPO.parent / "shared" / "qonnx_models"))
ORT_DIR = pathlib.Path(os.environ.get("QONNX_ORT_DIR", REPO / "tools" / "ort"))


def shared_models() -> List[pathlib.Path]:
    """Every .onnx file of the team's shared models (sorted)."""
    return sorted(SHARED.rglob("*.onnx")) if SHARED.is_dir() else []


@pytest.fixture(scope="session")
def qonnx_cc_bin() -> str:
    """The CLI built beside the package."""
    path = os.environ.get("QONNX_CC_BIN") or str(REPO / "build" / "qonnx-cc")
    if not os.path.exists(path):
        pytest.fail(f"the qonnx-cc binary is missing at {path} (set QONNX_CC_BIN)")
    return path


def run_cli(binary: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the CLI; with ``check``, a non-zero exit fails the test with its stderr."""
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        pytest.fail(f"qonnx-cc {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


@pytest.fixture(scope="session")
def ort_node() -> pathlib.Path:
    """The onnxruntime-node reference runner (tests/python/ort_reference.js) with its node_modules."""
    if shutil.which("node") is None or not (ORT_DIR / "node_modules" / "onnxruntime-node").is_dir():
        subprocess.run(["bash", str(REPO / "scripts" / "install-ort.sh")], check=False)
    if shutil.which("node") is None or not (ORT_DIR / "node_modules" / "onnxruntime-node").is_dir():
        pytest.fail("onnxruntime-node is not installed (scripts/install-ort.sh)")
    return pathlib.Path(__file__).with_name("ort_reference.js")


def ort_run(runner: pathlib.Path, model: pathlib.Path, feed: Dict[str, np.ndarray]) -> Dict[str, Any]:
    """Runs ``model`` in onnxruntime-node: its input/output metadata and outputs (name -> array)."""
    request = {
        "model": str(model),
        "inputs": {name: {"dtype": str(a.dtype), "dims": list(a.shape), "data": a.tobytes().hex()}
                   for name, a in feed.items()},
    }
    env = dict(os.environ, NODE_PATH=str(ORT_DIR / "node_modules"))
    done = subprocess.run(["node", str(runner)], input=json.dumps(request), capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"onnxruntime-node failed on {model}: {done.stderr.strip()}")
    reply = json.loads(done.stdout)
    outputs = {}
    for name, t in reply["outputs"].items():
        outputs[name] = np.frombuffer(bytes.fromhex(t["data"]), dtype=t["dtype"]).reshape(t["dims"])
    reply["outputs"] = outputs
    return reply


def random_feed(inputs: Sequence[Any], seed: int = 0, batch: int = 1) -> Dict[str, np.ndarray]:
    """Seeded data for NodeArgs (symbolic dims as ``batch``), in [-1, 1) for floats."""
    rng = np.random.default_rng(seed)
    feed = {}
    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(int64)": np.int64,
             "tensor(int32)": np.int32, "tensor(uint8)": np.uint8, "tensor(int8)": np.int8, "tensor(bool)": np.bool_}
    for arg in inputs:
        shape = [d if isinstance(d, int) else batch for d in arg.shape]
        dtype = types[arg.type]
        if np.issubdtype(dtype, np.floating):
            feed[arg.name] = rng.uniform(-1, 1, size=shape).astype(dtype)
        elif dtype is np.bool_:
            feed[arg.name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        else:
            feed[arg.name] = rng.integers(0, 10, size=shape).astype(dtype)
    return feed


def quant_node(name: str, x: str, scale: str, zero: str, bits: str, out: str, rounding: str = "ROUND",
               signed: int = 1, narrow: int = 0) -> onnx.NodeProto:
    """A QONNX Quant node."""
    return helper.make_node("Quant", [x, scale, zero, bits], [out], name=name, domain="qonnx.custom_op.general",
                            signed=signed, narrow=narrow, rounding_mode=rounding)


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto],
               outputs: Sequence[onnx.ValueInfoProto], initializers: Dict[str, np.ndarray] = {},
               value_info: Sequence[onnx.ValueInfoProto] = (), opset: int = 13) -> onnx.ModelProto:
    """A model with the default opset and qonnx's custom domain imported."""
    graph = helper.make_graph(list(nodes), "test", list(inputs), list(outputs),
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()],
                              value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                   helper.make_opsetid("qonnx.custom_op.general", 1)],
                             producer_name="qonnx-cc-tests")


def tensor(name: str, dims: Sequence[Any], elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    """A tensor value_info."""
    return helper.make_tensor_value_info(name, elem, list(dims))


def annotate(model: onnx.ModelProto, tensor_name: str, datatype: str) -> None:
    """Sets a tensor's finn_datatype annotation, as qonnx's ModelWrapper.set_tensor_datatype does."""
    annotation = onnx.TensorAnnotation(tensor_name=tensor_name)
    entry = annotation.quant_parameter_tensor_names.add()
    entry.key, entry.value = "finn_datatype", datatype
    model.graph.quantization_annotation.append(annotation)


class FakeModelWrapper:
    """The part of qonnx's ModelWrapper that execute_onnx reads: ``.model`` (and ``.graph``)."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model

    @property
    def graph(self) -> onnx.GraphProto:
        return self.model.graph
