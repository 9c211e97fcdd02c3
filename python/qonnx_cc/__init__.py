"""qonnx_cc: qonnx-cc's executor and commands from Python.

- ``InferenceSession`` runs QONNX, FINN and standard ONNX graphs as ``onnxruntime.InferenceSession`` does
  (``qonnx_cc.ort`` stands in for the whole ``onnxruntime`` module);
- ``execute_onnx`` is qonnx's ``execute_onnx`` (same signature and results), and ``qonnx_cc.compat.patch_qonnx()``
  / ``patch_finn()`` route qonnx's and FINN's own calls to it;
- ``convert``, ``cleanup``, ``channels_last``, ``cost``, ``info``, ``check``, ``trans_quant_param`` and
  ``run_dataset`` are the CLI's commands as functions;
- errors raise subclasses of ``qonnx_cc.Error``, one per CLI exit code (``InvalidModel``, ``Unsupported``,
  ``NumericMismatch``, ...), with the CLI's message.

Example::

    import numpy as np, qonnx_cc
    sess = qonnx_cc.InferenceSession("TFC_2W2A.onnx")
    x = np.random.rand(1, 1, 28, 28).astype(np.float32)
    (scores,) = sess.run(None, {sess.get_inputs()[0].name: x})
"""

from __future__ import annotations

from . import _core, compat, ort
from ._errors import (CannotRead, CannotWrite, Error, Failed, InvalidModel, NumericMismatch, Unsupported,
                      UsageError)
from ._model import ModelLike
from .commands import channels_last, check, cleanup, convert, cost, info, run_dataset, trans_quant_param
from .execute import execute_onnx
from .session import (ExecutionMode, GraphOptimizationLevel, InferenceSession, NodeArg, RunOptions, SessionOptions,
                      get_available_providers, get_device)

__version__: str = _core.__version__


def set_threads(n: int) -> None:
    """Kernel threads for calls that do not give their own (0: every core). Results do not depend on it."""
    _core.set_threads(int(n))


def threads() -> int:
    """The current kernel thread count."""
    return int(_core.threads())


def set_max_memory(n: int) -> None:
    """The cap on the bytes tensors hold, process-wide (the CLI's ``--max-memory``; 0: none). A session whose
    weights exceed it streams the layers whose weights are in external data (``InferenceSession.streaming_note``)."""
    _core.set_memory_limit(int(n))


def max_memory() -> int:
    """The current cap in bytes (0: none); the default is 3/4 of the physical memory."""
    return int(_core.memory_limit())


__all__ = [
    "compat", "ort", "CannotRead", "CannotWrite", "Error", "Failed", "InvalidModel", "NumericMismatch", "Unsupported", "UsageError",
    "ModelLike", "channels_last", "check", "cleanup", "convert", "cost", "info", "run_dataset", "trans_quant_param",
    "execute_onnx", "ExecutionMode", "GraphOptimizationLevel", "InferenceSession", "NodeArg", "RunOptions",
    "SessionOptions", "get_available_providers", "get_device", "set_threads", "threads", "set_max_memory", "max_memory",
    "__version__",
]
