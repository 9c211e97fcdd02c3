"""Turning what users hold (a path, bytes, an ``onnx.ModelProto``, a qonnx ``ModelWrapper``) into a loaded model."""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from . import _core

#: A model as the functions of qonnx_cc accept it: a path (external data next to it is read from its folder;
#: the way to run models above protobuf's 2 GB), serialized bytes, an ``onnx.ModelProto``, or anything with a
#: ``.model`` ModelProto (qonnx's and FINN's ``ModelWrapper``).
ModelLike = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Any]


def model_proto(model: Any) -> Optional[Any]:
    """The ModelProto inside ``model`` (itself, or a ModelWrapper's ``.model``), or None for a path or bytes."""
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "SerializeToString"):
        return inner
    if hasattr(model, "SerializeToString"):
        return model
    return None


def serialized(model: Any) -> Optional[bytes]:
    """The model's bytes when it is given in memory (bytes, ModelProto, ModelWrapper); None for a path."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    proto = model_proto(model)
    if proto is not None:
        return proto.SerializeToString()
    return None


def load(model: ModelLike, base_dir: Optional[Union[str, "os.PathLike[str]"]] = None) -> _core.Model:
    """Loads ``model`` with qonnx-cc's loader (the CLI's checks and errors).

    ``base_dir`` is the folder external data of an in-memory model is read from (default: none may be read).
    """
    if isinstance(model, _core.Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        return _core.Model.from_path(os.fspath(model))
    data = serialized(model)
    if data is None:
        raise TypeError(
            f"expected a model path, bytes, an onnx.ModelProto or a ModelWrapper, got {type(model).__name__}")
    return _core.Model.from_bytes(data, os.fspath(base_dir) if base_dir is not None else "")
