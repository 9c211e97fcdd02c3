"""Every command as a function: the same results as the CLI on the same model."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import onnx
import pytest

import qonnx_cc
from conftest import SHARED, make_model, quant_node, run_cli, tensor

TFC = SHARED / "qonnx_model_zoo" / "TFC_2W2A.onnx"
CNV_LIKE = SHARED / "example-models" / "separable_conv_model_ch_last.onnx"


@pytest.mark.parametrize("target", ["qdq", "ngraph", "fold", "ascend"])
def test_convert_matches_cli(target: str, qonnx_cc_bin: str, tmp_path: pathlib.Path) -> None:
    cli_out, cli_report = tmp_path / "cli.onnx", tmp_path / "report.json"
    run_cli(qonnx_cc_bin, "convert", str(TFC), "--target", target, "-o", str(cli_out), "--report", str(cli_report))
    model, report = qonnx_cc.convert(str(TFC), target=target)
    assert isinstance(model, onnx.ModelProto)
    assert model.SerializeToString() == cli_out.read_bytes()
    assert report == json.loads(cli_report.read_text())["quantizers"]
    assert report and all({"node", "op_type", "outcome", "detail"} <= set(r) for r in report)


def test_convert_in_memory_check_and_options(tmp_path: pathlib.Path) -> None:
    proto = onnx.load(str(TFC))
    model, full = qonnx_cc.convert(proto, target="qdq", target_opset=21, check=2, full_report=True)
    assert [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")] == [21]
    assert full["check"] and all(c["ok"] for c in full["check"])
    data, _ = qonnx_cc.convert(proto, passes="cleanup", as_bytes=True)
    assert isinstance(data, bytes) and onnx.load_model_from_string(data).graph.node
    path, _ = qonnx_cc.convert(proto, output=tmp_path / "out.onnx")
    assert pathlib.Path(path).is_file()
    with pytest.raises(qonnx_cc.UsageError, match="unknown target"):
        qonnx_cc.convert(proto, target="nope")


def _floor_quant_model(bits: float) -> onnx.ModelProto:
    """x -> Quant(scale 0.1, zero point 3, FLOOR, `bits`) -> y: the activation form FINN's front end refuses."""
    return make_model([quant_node("q", "x", "s", "z", "b", "y", rounding="FLOOR")], [tensor("x", [1, 4, 8])],
                      [tensor("y", [1, 4, 8])], {"s": np.array(0.1, np.float32), "z": np.array(3.0, np.float32),
                                                  "b": np.array(bits, np.float32)})


def test_convert_to_finn_with_multithreshold_options() -> None:
    model, report = qonnx_cc.convert(_floor_quant_model(4), target="finn", check=2)
    assert [n.op_type for n in model.graph.node] == ["MultiThreshold", "Mul"]
    assert report[0]["outcome"] == "converted" and "exact on every float32 but NaN" in report[0]["detail"]
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(1, 4, 8)
    want = qonnx_cc.InferenceSession(_floor_quant_model(4).SerializeToString()).run(None, {"x": x})[0]
    got = qonnx_cc.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    assert np.array_equal(want, got)
    kept, report = qonnx_cc.convert(_floor_quant_model(4), target="finn", max_multithreshold_bits=3)
    assert [n.op_type for n in kept.graph.node] == ["Quant"] and "above max-bits 3" in report[0]["detail"]
    with pytest.raises(qonnx_cc.Unsupported, match="above max-bits 3"):
        qonnx_cc.convert(_floor_quant_model(4), target="finn", max_multithreshold_bits=3, strict=True)
    with pytest.raises(qonnx_cc.UsageError):
        qonnx_cc.convert(_floor_quant_model(4), target="finn", max_multithreshold_bits=17)


def test_cleanup_and_channels_last_match_cli(qonnx_cc_bin: str, tmp_path: pathlib.Path) -> None:
    run_cli(qonnx_cc_bin, "cleanup", str(TFC), "-o", str(tmp_path / "clean.onnx"))
    assert qonnx_cc.cleanup(str(TFC), check=2).SerializeToString() == (tmp_path / "clean.onnx").read_bytes()
    run_cli(qonnx_cc_bin, "channels-last", str(CNV_LIKE), "-o", str(tmp_path / "cl.onnx"))
    assert qonnx_cc.channels_last(str(CNV_LIKE), check=2).SerializeToString() == (tmp_path / "cl.onnx").read_bytes()


def test_cost_and_info_match_cli(qonnx_cc_bin: str) -> None:
    cli = json.loads(run_cli(qonnx_cc_bin, "cost", str(TFC), "--breakdown").stdout)
    assert qonnx_cc.cost(str(TFC), breakdown=True) == cli
    assert qonnx_cc.cost(str(TFC))["total_cost"] == cli["total_cost"]
    assert qonnx_cc.info(str(TFC)) == json.loads(run_cli(qonnx_cc_bin, "info", str(TFC), "--json").stdout)


def test_check_and_trans_quant_param(qonnx_cc_bin: str) -> None:
    assert qonnx_cc.check(str(TFC)) is None
    words = qonnx_cc.trans_quant_param([0.5, 0.001], offset=[3, -2], round_mode=1)
    cli = json.loads(run_cli(qonnx_cc_bin, "trans-quant-param", "--scale", "0.5,0.001", "--offset", "3,-2",
                             "--round-mode", "1", "--json").stdout)
    assert words.dtype == np.uint64 and words.tolist() == [w["decimal"] for w in cli["words"]]
    with pytest.raises(qonnx_cc.Error):
        qonnx_cc.trans_quant_param([1.0, 2.0], offset=[1, 2, 3])


def test_run_dataset_matches_cli(qonnx_cc_bin: str, tmp_path: pathlib.Path) -> None:
    x = np.random.default_rng(2).uniform(0, 1, size=(37, 1, 28, 28)).astype(np.float32)
    labels = np.random.default_rng(3).integers(0, 10, size=37).astype(np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", labels)
    outputs, accuracy = qonnx_cc.run_dataset(str(TFC), x, batch_size=8, labels=labels)
    done = run_cli(qonnx_cc_bin, "exec", str(TFC), "--input", str(tmp_path / "x.npy"), "--batch-size", "8",
                   "--labels", str(tmp_path / "y.npy"), "--output-dir", str(tmp_path), "--npy")
    assert outputs[0].tobytes() == np.load(tmp_path / "output_0.npy").tobytes()
    sess = qonnx_cc.InferenceSession(str(TFC))
    name = sess.get_inputs()[0].name
    one_by_one = np.concatenate([sess.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])
    assert outputs[0].tobytes() == one_by_one.tobytes()
    expected = float(np.mean(np.argmax(one_by_one, axis=1) == labels))
    assert accuracy == pytest.approx(expected)
    correct = int(np.sum(np.argmax(one_by_one, axis=1) == labels))
    assert f"top-1 accuracy: {correct}/37 " in done.stdout
