"""The verification loop of docs/python.md, on generated data (MNIST cannot be downloaded offline)."""

from __future__ import annotations

import pathlib

import numpy as np

import qonnx_cc
from conftest import SHARED

TFC = str(SHARED / "qonnx_model_zoo" / "TFC_2W2A.onnx")


def test_verification_loop(tmp_path: pathlib.Path) -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 1, size=(300, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, size=300)
    outputs, accuracy = qonnx_cc.run_dataset(TFC, x, batch_size=100, labels=y)
    sess = qonnx_cc.InferenceSession(TFC)
    name, out_name = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    per_sample = [qonnx_cc.execute_onnx(TFC, {name: x[i:i + 1]})[out_name] for i in range(len(x))]
    assert np.concatenate(per_sample).tobytes() == outputs[0].tobytes()
    correct = sum(int(np.argmax(p) == y[i]) for i, p in enumerate(per_sample))
    assert accuracy == correct / len(x)
