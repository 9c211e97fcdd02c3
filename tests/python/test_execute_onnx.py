"""qonnx's execute_onnx semantics: outputs, full context, sub-ranges, finn_datatype sanitizing, errors."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import helper

import qonnx_cc
from conftest import FakeModelWrapper, SHARED, annotate, make_model, tensor

SCALE = np.float32(2.0)
EPS = np.float32(0.004)  # more than np.isclose allows, less than ERROR_THRESH


def chain_model(annotation: str = "INT8") -> onnx.ModelProto:
    """x -> Mul(2) -> m -> Add(0.004) -> d [annotated] -> Add(b) -> y, shapes declared (as qonnx needs)."""
    nodes = [helper.make_node("Mul", ["x", "s"], ["m"], name="mul"),
             helper.make_node("Add", ["m", "e"], ["d"], name="nudge"),
             helper.make_node("Add", ["d", "b"], ["y"], name="add")]
    model = make_model(nodes, [tensor("x", [1, 4])], [tensor("y", [1, 4])],
                       {"s": np.array(SCALE, np.float32), "e": np.array(EPS, np.float32), "b": np.array([0.5, 0.25, 0, 1], np.float32)},
                       value_info=[tensor("m", [1, 4]), tensor("d", [1, 4])])
    if annotation:
        annotate(model, "d", annotation)
    return model


def by_numpy(x: np.ndarray, sanitize: bool) -> dict:
    m = x * SCALE
    d = m + EPS
    if sanitize:
        d = np.round(d)
    return {"m": m, "d": d, "y": d + np.array([0.5, 0.25, 0, 1], np.float32)}


X = np.array([[13, 21, -26, 7]], np.float32)


def test_outputs_and_sanitizing_match_qonnx() -> None:
    expected = by_numpy(X, sanitize=True)
    assert not np.array_equal(by_numpy(X, False)["d"], expected["d"]), "the case must need rounding"
    with pytest.warns(UserWarning, match=r"tensor d can't be represented with the set datatype annotation \(INT8\)"):
        out = qonnx_cc.execute_onnx(FakeModelWrapper(chain_model()), {"x": X})
    assert list(out) == ["y"]
    assert out["y"].tobytes() == expected["y"].tobytes()


def test_sanitizing_off_by_argument_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = by_numpy(X, sanitize=False)["y"]
    assert qonnx_cc.execute_onnx(chain_model(), {"x": X}, sanitize=False)["y"].tobytes() == plain.tobytes()
    monkeypatch.setenv("SANITIZE_QUANT_TENSORS", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert qonnx_cc.execute_onnx(chain_model(), {"x": X})["y"].tobytes() == plain.tobytes()


def test_rounding_beyond_threshold_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.array([[0.3, 1, 2, 3]], np.float32)  # d = 0.604: 0.396 away from an integer
    with pytest.raises(qonnx_cc.NumericMismatch, match="tensor 'd'.*INT8"):
        qonnx_cc.execute_onnx(chain_model(), {"x": x})
    monkeypatch.setenv("ERROR_THRESH", "0.5")
    with pytest.warns(UserWarning):
        out = qonnx_cc.execute_onnx(chain_model(), {"x": x})
    assert out["y"][0, 0] == np.float32(1.5)  # 0.604 rounded to 1, plus b


@pytest.mark.parametrize("datatype,value,expected", [
    ("BIPOLAR", 0.999, 1.0), ("TERNARY", -0.001, -0.0), ("UINT4", 2.5, 2.0), ("INT8", 100.00001, 100.0),
    # qonnx sanitizes only integer datatypes: FIXED and FLOAT<e,m,b> values stay as they are
    ("FIXED<8,4>", 0.3, 0.3), ("FLOAT<4,3>", 1.003, 1.003), ("SCALEDINT<8>", 0.3, 0.3),
])
def test_datatypes_as_qonnx_allows_them(datatype: str, value: float, expected: float,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ERROR_THRESH", "0.6")
    model = make_model([helper.make_node("Identity", ["x"], ["y"], name="id")], [tensor("x", [1])], [tensor("y", [1])])
    annotate(model, "y", datatype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = qonnx_cc.execute_onnx(model, {"x": np.array([value], np.float32)})
    assert out["y"][0] == np.float32(expected)


def test_full_context_holds_every_tensor() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = qonnx_cc.execute_onnx(chain_model(annotation=""), {"x": X}, return_full_exec_context=True)
    assert set(ctx) == {"x", "s", "e", "b", "m", "d", "y"}
    expected = by_numpy(X, sanitize=False)
    for name in ("m", "d", "y"):
        assert ctx[name].tobytes() == expected[name].tobytes(), name
    assert ctx["s"] == SCALE


def test_sub_range_runs_from_the_given_context() -> None:
    model = chain_model(annotation="")
    d = np.array([[1, 2, 3, 4]], np.float32)
    for start in (model.graph.node[2], "add", 2):
        ctx = qonnx_cc.execute_onnx(model, {"d": d}, return_full_exec_context=True, start_node=start, end_node=start)
        assert ctx["y"].tolist() == [[1.5, 2.25, 3, 5]]
        assert not ctx["m"].any(), "nodes outside the range do not run: their outputs stay zeros"
        assert not ctx["x"].any()
    # A range whose input is neither given nor declared is an error naming it.
    with pytest.raises(qonnx_cc.UsageError, match="end node"):
        qonnx_cc.execute_onnx(model, {"x": X}, start_node="add", end_node="mul")


def test_unprovided_inputs_are_zeros_and_unknown_names_ignored() -> None:
    model = chain_model(annotation="")
    out = qonnx_cc.execute_onnx(model, {"not_a_tensor": X})
    assert out["y"].tobytes() == by_numpy(np.zeros((1, 4), np.float32), sanitize=False)["y"].tobytes()


def test_shape_mismatch_and_exec_mode() -> None:
    with pytest.raises(qonnx_cc.UsageError, match="shape mismatch for provided input 'x'"):
        qonnx_cc.execute_onnx(chain_model(), {"x": np.zeros((2, 4), np.float32)})
    model = chain_model()
    helper.set_model_props(model, {"exec_mode": "rtlsim"})
    with pytest.raises(qonnx_cc.Unsupported, match="rtlsim"):
        qonnx_cc.execute_onnx(model, {"x": X})


def test_shared_qonnx_model_through_both_paths() -> None:
    """The planned path and the node-by-node path give the same bits on a real QONNX model."""
    path = SHARED / "qonnx_model_zoo" / "TFC_2W2A.onnx"
    model = onnx.load(str(path))
    x = np.random.default_rng(5).uniform(0, 1, size=(1, 1, 28, 28)).astype(np.float32)
    name = model.graph.input[0].name
    planned = qonnx_cc.execute_onnx(model, {name: x})
    stepwise = qonnx_cc.execute_onnx(model, {name: x}, start_node=0)
    assert list(planned) == [o.name for o in model.graph.output]
    for key in planned:
        assert planned[key].tobytes() == stepwise[key].tobytes()
    full = qonnx_cc.execute_onnx(model, {name: x}, return_full_exec_context=True)
    assert full[model.graph.output[0].name].tobytes() == planned[model.graph.output[0].name].tobytes()
    assert all(init.name in full for init in model.graph.initializer)


def _identity(elem: int, datatype: str) -> onnx.ModelProto:
    model = make_model([helper.make_node("Identity", ["x"], ["y"], name="id")], [tensor("x", [2], elem)],
                       [tensor("y", [2], elem)])
    annotate(model, "y", datatype)
    return model


def test_double_and_integer_carriers() -> None:
    with pytest.warns(UserWarning, match="tensor y"):
        out = qonnx_cc.execute_onnx(_identity(onnx.TensorProto.DOUBLE, "INT4"), {"x": np.array([2.004, -1], np.float64)})
    assert out["y"].dtype == np.float64 and out["y"].tolist() == [2.0, -1.0]
    with pytest.warns(UserWarning, match="tensor y"):  # an integer carrier cannot be rounded: reported only
        out = qonnx_cc.execute_onnx(_identity(onnx.TensorProto.INT64, "INT4"), {"x": np.array([20, 1], np.int64)})
    assert out["y"].tolist() == [20, 1]
    with pytest.raises(qonnx_cc.UsageError, match="provided input 'x' is double"):
        qonnx_cc.execute_onnx(_identity(onnx.TensorProto.FLOAT, "INT4"), {"x": np.array([1, 2], np.float64)})


def test_full_context_holds_stale_value_info_as_zeros() -> None:
    model = chain_model(annotation="")
    model.graph.value_info.append(tensor("stale", [3]))
    for start in (None, 0):  # the planned path and the node-by-node path
        ctx = qonnx_cc.execute_onnx(model, {"x": X}, return_full_exec_context=True, start_node=start)
        assert ctx["stale"].tolist() == [0.0, 0.0, 0.0]


def test_graph_level_exec_mode_is_refused() -> None:
    """qonnx reads exec_mode from the graph's metadata_props (GraphProto field 16, unknown to onnx 1.12)."""
    model = chain_model()
    entry = onnx.StringStringEntryProto(key="exec_mode", value="rtlsim").SerializeToString()
    model.graph.MergeFromString(bytes([0x82, 0x01, len(entry)]) + entry)  # field 16, length-delimited
    with pytest.raises(qonnx_cc.Unsupported, match="rtlsim"):
        qonnx_cc.execute_onnx(model, {"x": X})
