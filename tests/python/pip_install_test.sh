#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a fresh venv (offline: --no-index), then `import qonnx_cc` from
# outside the repository runs a QONNX model. Usage: pip_install_test.sh REPO PYTHON [BUILD_DIR]
# With BUILD_DIR (ctest passes its own), setup.py reuses that configured tree (QONNX_CC_BUILD_DIR) instead
# of configuring and compiling everything again in build-pip/.
set -euo pipefail
repo=$1
python=$2
[ -n "${3:-}" ] && export QONNX_CC_BUILD_DIR=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --no-build-isolation --no-index --quiet "$repo"
cd "$work"
"$work/venv/bin/python" -s - "$work/venv" <<'PY'
import pathlib, sys
import numpy as np
import qonnx_cc
from onnx import helper, TensorProto

venv = pathlib.Path(sys.argv[1]).resolve()
assert venv in pathlib.Path(qonnx_cc.__file__).resolve().parents, f"imported from {qonnx_cc.__file__}"
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
nodes = [helper.make_node("Quant", ["x", "s", "z", "b"], ["y"], domain="qonnx.custom_op.general",
                          signed=1, narrow=0, rounding_mode="ROUND")]
inits = [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]), helper.make_tensor("z", TensorProto.FLOAT, [], [0.0]),
         helper.make_tensor("b", TensorProto.FLOAT, [], [4.0])]
model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits),
                          opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("qonnx.custom_op.general", 1)])
(out,) = qonnx_cc.InferenceSession(model).run(None, {"x": np.array([0.2, 0.3, 0.75, 9.0], np.float32)})
assert out.tolist() == [0.0, 0.5, 1.0, 3.5], out.tolist()
print(f"pip-installed qonnx_cc {qonnx_cc.__version__} from {qonnx_cc.__file__}: ok")
PY
