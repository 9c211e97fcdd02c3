"""A stand-in for the ``onnxruntime`` module: ``sys.modules["onnxruntime"] = qonnx_cc.ort`` makes code written
for onnxruntime run its models on qonnx-cc, QONNX and FINN custom ops included.

``__version__`` is the onnxruntime API level this module follows, with qonnx-cc's version as the local part
(``1.30.0+qonnxcc.0.1.0``), so that version checks written for onnxruntime keep working. onnxruntime's
exception classes are here under their names (``Fail``, ``InvalidArgument``, ``NoSuchFile``, ``InvalidGraph``,
``NotImplemented``, ``RuntimeException``), each the qonnx_cc exception of the same meaning.
"""

from __future__ import annotations

from . import _core
from ._errors import CannotRead, Error, Failed, InvalidModel, Unsupported, UsageError
from .session import (
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    ModelMetadata,
    NodeArg,
    RunOptions,
    SessionOptions,
    get_all_providers,
    get_available_providers,
    get_device,
)

ORT_API_LEVEL = "1.30.0"
__version__ = f"{ORT_API_LEVEL}+qonnxcc.{_core.__version__}"

Fail = Failed
InvalidArgument = UsageError
NoSuchFile = CannotRead
InvalidGraph = InvalidModel
NotImplemented = Unsupported  # noqa: A001 - onnxruntime's name
RuntimeException = Error


def get_version_string() -> str:
    """The version string (``__version__``)."""
    return __version__


def set_default_logger_severity(level: int) -> None:
    """onnxruntime's severities (0 verbose .. 4 fatal) mapped onto qonnx-cc's log levels."""
    _core.set_log_level("debug" if level <= 1 else "warn" if level == 2 else "error")


def set_seed(seed: int) -> None:
    """Accepted for compatibility: qonnx-cc's kernels draw no random numbers."""


__all__ = [
    "ExecutionMode", "GraphOptimizationLevel", "InferenceSession", "ModelMetadata", "NodeArg", "RunOptions",
    "SessionOptions", "get_all_providers", "get_available_providers", "get_device", "get_version_string",
    "set_default_logger_severity", "set_seed", "Fail", "InvalidArgument", "NoSuchFile", "InvalidGraph",
    "NotImplemented", "RuntimeException",
]
