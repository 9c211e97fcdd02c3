"""Swapping qonnx's and FINN's ``execute_onnx`` for :func:`qonnx_cc.execute_onnx`.

``patch_qonnx()`` replaces ``qonnx.core.onnx_exec.execute_onnx`` (and every module's reference to it, such as
``from qonnx.core.onnx_exec import execute_onnx`` done earlier); ``patch_finn()`` does the same for FINN's
``finn.core.onnx_exec.execute_onnx``. Calls qonnx-cc cannot serve go to the original function unchanged: a
model whose ``exec_mode`` metadata is set (FINN's rtlsim and remote modes), and a model with an op qonnx-cc has
no kernel for (FINN's fpgadataflow layers, StreamingDataflowPartition). ``unpatch()`` restores the originals.
"""

from __future__ import annotations

import functools
import importlib
import sys
from typing import Any, Callable, Dict, List

from ._model import load
from .execute import exec_mode_of, execute_onnx

_originals: Dict[str, Callable[..., Any]] = {}


def _served_by_qonnx_cc(model: Any) -> bool:
    """Whether qonnx-cc runs this model: no exec_mode metadata and a kernel for every op."""
    try:
        core = load(model)
    except Exception:  # noqa: BLE001 - whatever qonnx-cc cannot load stays with the original
        return False
    return not exec_mode_of(core) and core.plannable() is None


def _patch(module_name: str) -> bool:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return False
    if module_name in _originals:
        return True
    original = module.execute_onnx

    @functools.wraps(original)
    def patched(model: Any, input_dict: Dict[str, Any], return_full_exec_context: bool = False,
                start_node: Any = None, end_node: Any = None) -> Dict[str, Any]:
        if not _served_by_qonnx_cc(model):
            return original(model, input_dict, return_full_exec_context, start_node, end_node)
        return execute_onnx(model, input_dict, return_full_exec_context, start_node, end_node)

    patched.__qonnx_cc_original__ = original  # type: ignore[attr-defined]
    _originals[module_name] = original
    _replace_everywhere(original, patched)
    return True


def _replace_everywhere(old: Callable[..., Any], new: Callable[..., Any]) -> None:
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not namespace:
            continue
        for name, value in list(namespace.items()):
            if value is old:
                setattr(module, name, new)


def patch_qonnx() -> bool:
    """Routes qonnx's ``execute_onnx`` to qonnx-cc; False when qonnx is not importable."""
    return _patch("qonnx.core.onnx_exec")


def patch_finn() -> bool:
    """Routes FINN's ``execute_onnx`` to qonnx-cc (rtlsim/remote models stay with FINN); False when FINN is not
    importable."""
    return _patch("finn.core.onnx_exec")


def unpatch() -> List[str]:
    """Restores every patched ``execute_onnx``; returns the modules restored."""
    restored = []
    for module_name, original in list(_originals.items()):
        module = sys.modules.get(module_name)
        patched = getattr(module, "execute_onnx", None) if module else None
        if patched is not None:
            _replace_everywhere(patched, original)
        del _originals[module_name]
        restored.append(module_name)
    return restored


__all__ = ["patch_qonnx", "patch_finn", "unpatch"]
