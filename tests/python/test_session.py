"""InferenceSession: bit-identical to the CLI's exec on every shared model, onnxruntime's surface and metadata."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import onnx
import pytest

import qonnx_cc
from conftest import SHARED, make_model, ort_run, random_feed, run_cli, shared_models, tensor

MODELS = shared_models()
ORT_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)", "int64": "tensor(int64)",
             "int32": "tensor(int32)", "uint8": "tensor(uint8)", "int8": "tensor(int8)", "bool": "tensor(bool)"}


def test_shared_models_present() -> None:
    assert MODELS, f"no shared models under {SHARED}"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: str(p.relative_to(SHARED)))
def test_session_equals_cli_exec(path: pathlib.Path, qonnx_cc_bin: str, tmp_path: pathlib.Path) -> None:
    sess = qonnx_cc.InferenceSession(str(path))
    feed = random_feed(sess.get_inputs(), seed=3)
    args = ["exec", str(path), "--output-dir", str(tmp_path), "--npy"]
    for name, array in feed.items():
        np.save(tmp_path / f"{name.replace('/', '_')}.npy", array)
        args += ["--input", f"{name}={tmp_path / (name.replace('/', '_') + '.npy')}"]
    run_cli(qonnx_cc_bin, *args)
    outputs = sess.run(None, feed)
    assert [o.name for o in sess.get_outputs()] == [o.name for o in sess.get_outputs()]
    assert len(outputs) == len(sess.get_outputs())
    for k, out in enumerate(outputs):
        expected = np.load(tmp_path / f"output_{k}.npy")
        assert out.dtype == expected.dtype and out.shape == expected.shape
        assert out.tobytes() == expected.tobytes(), f"output {k} differs from qonnx-cc exec"


def _qdq_models(tmp: pathlib.Path) -> list:
    """The shared QONNX models converted to QDQ (which onnxruntime can load)."""
    converted = []
    for path in MODELS:
        try:
            qonnx_cc.convert(str(path), target="qdq", output=tmp / (path.stem + ".qdq.onnx"))
        except qonnx_cc.Error:
            continue
        converted.append(tmp / (path.stem + ".qdq.onnx"))
    return converted


def test_metadata_and_outputs_match_onnxruntime(ort_node: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """Input/output metadata equal onnxruntime's; outputs agree (bit-identical where no float sum is reordered).

    onnxruntime (optimizations disabled) computes the QDQ layers in float, so qonnx-cc does too (arith="float"):
    the exact integer sums can put a value on the other side of the next quantizer's rounding step.
    """
    models = _qdq_models(tmp_path) + sorted((SHARED / "example-models" / "old_opset").glob("*.onnx"))
    checked = identical = compared = 0
    for path in models:
        sess = qonnx_cc.InferenceSession(str(path), arith="float")
        feed = random_feed(sess.get_inputs(), seed=1)
        try:
            ref = ort_run(ort_node, path, feed)
        except RuntimeError as e:
            if "Could not find an implementation" in str(e) or "not a registered function/op" in str(e):
                continue  # onnxruntime lacks an op of this model
            raise
        for mine, theirs in ((sess.get_inputs(), ref["input_metadata"]), (sess.get_outputs(), ref["output_metadata"])):
            assert [a.name for a in mine] == [m["name"] for m in theirs], path
            assert [a.type for a in mine] == [ORT_TYPES.get(m["type"], m["type"]) for m in theirs], path
            assert [a.shape for a in mine] == [m["shape"] for m in theirs], path
        outputs = sess.run(None, feed)
        for arg, out in zip(sess.get_outputs(), outputs):
            theirs = ref["outputs"][arg.name]
            assert out.shape == theirs.shape and out.dtype == theirs.dtype
            np.testing.assert_allclose(out, theirs, rtol=1e-4, atol=1e-4, err_msg=f"{path}: {arg.name}")
            identical += out.tobytes() == theirs.tobytes()
            compared += 1
        checked += 1
    print(f"onnxruntime metadata and outputs: {checked} of {len(models)} models compared; "
          f"{identical} of {compared} outputs bit-identical, the others within 1e-4")
    assert checked >= 10


def _add_model() -> onnx.ModelProto:
    return make_model([onnx.helper.make_node("Add", ["x", "y"], ["z"], name="add")],
                      [tensor("x", ["batch", 3]), tensor("y", [1, 3])], [tensor("z", ["batch", 3])])


def test_onnxruntime_surface() -> None:
    so = qonnx_cc.SessionOptions()
    so.graph_optimization_level = qonnx_cc.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 2
    sess = qonnx_cc.InferenceSession(_add_model().SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert sess.threads == 2
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert qonnx_cc.get_available_providers() == ["CPUExecutionProvider"]
    (x, y) = sess.get_inputs()
    assert (x.name, x.shape, x.type) == ("x", ["batch", 3], "tensor(float)")
    assert y.shape == [1, 3]
    assert sess.get_outputs()[0].shape == ["batch", 3]
    assert sess.get_modelmeta().producer_name == "qonnx-cc-tests"
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((1, 3), np.float32)
    (z,) = sess.run(None, {"x": a, "y": b})
    np.testing.assert_array_equal(z, a + b)
    assert sess.run(["z"], {"x": a, "y": b})[0].tobytes() == z.tobytes()
    assert z.flags.owndata and z.flags.writeable


def test_model_proto_and_wrapper_inputs() -> None:
    model = _add_model()
    from conftest import FakeModelWrapper

    for source in (model, FakeModelWrapper(model)):
        sess = qonnx_cc.InferenceSession(source)
        (z,) = sess.run(None, {"x": np.zeros((1, 3), np.float32), "y": np.ones((1, 3), np.float32)})
        assert z.tolist() == [[1.0, 1.0, 1.0]]


def test_run_errors_are_onnxruntime_like() -> None:
    sess = qonnx_cc.InferenceSession(_add_model())
    ok = {"x": np.zeros((1, 3), np.float32), "y": np.zeros((1, 3), np.float32)}
    with pytest.raises(qonnx_cc.UsageError, match="missing"):
        sess.run(None, {"x": ok["x"]})
    with pytest.raises(qonnx_cc.UsageError, match="invalid input name 'w'"):
        sess.run(None, dict(ok, w=ok["x"]))
    with pytest.raises(qonnx_cc.UsageError, match="invalid output name 'q'"):
        sess.run(["q"], ok)
    with pytest.raises(qonnx_cc.Error):
        sess.run(None, {"x": ok["x"].astype(np.float64), "y": ok["y"]})
    with pytest.raises(qonnx_cc.Error):
        sess.run(None, {"x": np.zeros((1, 4), np.float32), "y": ok["y"]})


def test_ort_stand_in_runs_onnxruntime_code(tmp_path: pathlib.Path) -> None:
    """Code written for onnxruntime, unchanged, on a QONNX model (custom domain) through qonnx_cc.ort."""
    path = SHARED / "qonnx_model_zoo" / "TFC_2W2A.onnx"
    saved = sys.modules.get("onnxruntime")
    sys.modules["onnxruntime"] = qonnx_cc.ort
    try:
        import onnxruntime as ort  # the stand-in

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(path), options, providers=ort.get_available_providers())
        name = session.get_inputs()[0].name
        x = np.random.default_rng(0).uniform(0, 1, size=(1, 1, 28, 28)).astype(np.float32)
        (scores,) = session.run(None, {name: x})
        assert scores.shape == (1, 10)
        assert ort.get_device() == "CPU"
        assert ort.__version__.startswith("1.")
        with pytest.raises(ort.InvalidArgument):
            session.run(None, {"nope": x})
    finally:
        if saved is None:
            del sys.modules["onnxruntime"]
        else:
            sys.modules["onnxruntime"] = saved
    direct = qonnx_cc.InferenceSession(path).run(None, {name: x})[0]
    assert direct.tobytes() == scores.tobytes()


def test_arith_modes_match_the_cli_and_report_their_paths(qonnx_cc_bin: str, tmp_path: pathlib.Path) -> None:
    """``arith=`` is ``exec --arith``: the same bytes as the CLI in each mode, the integer path reported per layer."""
    path = SHARED / "qonnx" / "bsd300x3-espcn" / "nn_resize" / "quant_model.onnx"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    for arith in ("int", "float"):
        sess = qonnx_cc.InferenceSession(str(path), arith=arith)
        feed = random_feed(sess.get_inputs(), seed=5)
        ((name, array),) = feed.items()
        np.save(tmp_path / "x.npy", array)
        out_dir = tmp_path / arith
        run_cli(qonnx_cc_bin, "exec", str(path), "--arith", arith, "--input", f"{name}={tmp_path / 'x.npy'}",
                "--output-dir", str(out_dir), "--npy")
        assert sess.run(None, feed)[0].tobytes() == np.load(out_dir / "output_0.npy").tobytes(), arith
        notes = sess.path_notes()
        if arith == "int":
            assert any(note.startswith("integer:") for _, note in notes), notes
        else:
            assert notes == []
    with pytest.raises(qonnx_cc.UsageError, match="arith 'fast'"):
        qonnx_cc.InferenceSession(str(path), arith="fast")


def test_session_streams_external_weights_over_max_memory(tmp_path: pathlib.Path) -> None:
    """Weights past qonnx_cc.max_memory(): the session streams them from external data, same bits as held."""
    rng = np.random.default_rng(5)
    width, layers = 64, 5
    nodes, weights, act = [], {}, "x"
    for layer in range(layers):
        weights[f"w{layer}"] = (rng.standard_normal((width, width)) * 0.1).astype(np.float32)
        nodes.append(onnx.helper.make_node("MatMul", [act, f"w{layer}"], [f"h{layer}"]))
        nodes.append(onnx.helper.make_node("Relu", [f"h{layer}"], [f"r{layer}"]))
        act = f"r{layer}"
    model = make_model(nodes, [tensor("x", [3, width])], [tensor(act, [3, width])], weights)
    path = tmp_path / "mlp.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="mlp.onnx.data", size_threshold=1024)
    feed = {"x": rng.standard_normal((3, width)).astype(np.float32)}
    held = qonnx_cc.InferenceSession(str(path))
    assert held.streaming_note() == ""
    expected = held.run(None, feed)[0]
    del held
    saved = qonnx_cc.max_memory()
    try:
        qonnx_cc.set_max_memory(0)
        base = qonnx_cc._core.memory_in_use()
        qonnx_cc.set_max_memory(base + 48 * 1024)  # one 16 KiB weight fits with room to run, five do not
        streamed = qonnx_cc.InferenceSession(str(path))
        assert "from external data per run" in streamed.streaming_note()
        for _ in range(2):
            assert streamed.run(None, feed)[0].tobytes() == expected.tobytes()
        del streamed
        qonnx_cc.set_max_memory(base + 8 * 1024)  # not even one weight
        with pytest.raises(qonnx_cc.Failed, match="tensor 'w0'"):
            qonnx_cc.InferenceSession(str(path))
    finally:
        qonnx_cc.set_max_memory(saved)
