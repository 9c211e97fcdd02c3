"""patch_qonnx / patch_finn swap the packages' execute_onnx, defer what qonnx-cc cannot serve, and unpatch.

qonnx and FINN cannot be installed here (no PyPI), so each is represented by a module at its real import path
holding an execute_onnx with qonnx's signature that records its calls.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Dict, Iterator, List

import numpy as np
import pytest
from onnx import helper

import qonnx_cc
from qonnx_cc import compat
from conftest import FakeModelWrapper, make_model, tensor


def _install(module_name: str, calls: List[str]) -> types.ModuleType:
    parts = module_name.split(".")
    for i in range(1, len(parts)):
        sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
    module = types.ModuleType(module_name)

    def execute_onnx(model: Any, input_dict: Dict[str, Any], return_full_exec_context: bool = False,
                     start_node: Any = None, end_node: Any = None) -> Dict[str, Any]:
        calls.append(module_name)
        return {"original": np.zeros(1)}

    module.execute_onnx = execute_onnx  # type: ignore[attr-defined]
    sys.modules[module_name] = module
    return module


@pytest.fixture
def packages() -> Iterator[Dict[str, Any]]:
    calls: List[str] = []
    names = ["qonnx.core.onnx_exec", "finn.core.onnx_exec"]
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in ("qonnx", "finn")}
    modules = {name: _install(name, calls) for name in names}
    # A module that imported the function by name before the patch (as FINN's steps do).
    user = types.ModuleType("user_of_qonnx")
    user.execute_onnx = modules["qonnx.core.onnx_exec"].execute_onnx  # type: ignore[attr-defined]
    sys.modules["user_of_qonnx"] = user
    yield {"calls": calls, "modules": modules, "user": user}
    compat.unpatch()
    for k in [k for k in sys.modules if k.split(".")[0] in ("qonnx", "finn", "user_of_qonnx")]:
        del sys.modules[k]
    sys.modules.update(saved)


def _model(exec_mode: str = "") -> FakeModelWrapper:
    model = make_model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [tensor("x", [1, 2])],
                       [tensor("y", [1, 2])])
    if exec_mode:
        helper.set_model_props(model, {"exec_mode": exec_mode})
    return FakeModelWrapper(model)


def test_patch_routes_to_qonnx_cc_and_defers_exec_modes(packages: Dict[str, Any]) -> None:
    assert compat.patch_qonnx() and compat.patch_finn()
    qonnx_exec = packages["modules"]["qonnx.core.onnx_exec"]
    x = {"x": np.array([[-1.0, 2.0]], np.float32)}
    for fn in (qonnx_exec.execute_onnx, packages["user"].execute_onnx,
               packages["modules"]["finn.core.onnx_exec"].execute_onnx):
        assert fn(_model(), x)["y"].tolist() == [[0.0, 2.0]]
    assert packages["calls"] == []
    assert "original" in packages["modules"]["finn.core.onnx_exec"].execute_onnx(_model("rtlsim"), x)
    assert packages["calls"] == ["finn.core.onnx_exec"]
    assert sorted(compat.unpatch()) == ["finn.core.onnx_exec", "qonnx.core.onnx_exec"]
    assert "original" in packages["user"].execute_onnx(_model(), x)


def test_ops_without_kernel_stay_with_the_original(packages: Dict[str, Any]) -> None:
    compat.patch_finn()
    model = make_model([helper.make_node("MatrixVectorActivation", ["x"], ["y"], domain="finn.custom_op.fpgadataflow")],
                       [tensor("x", [1, 2])], [tensor("y", [1, 2])])
    assert "original" in packages["modules"]["finn.core.onnx_exec"].execute_onnx(FakeModelWrapper(model), {})


def test_patch_without_the_package() -> None:
    saved = sys.modules.pop("qonnx", None)
    try:
        sys.modules["qonnx"] = None  # type: ignore[assignment]  # makes the import fail
        assert compat.patch_qonnx() is False
    finally:
        del sys.modules["qonnx"]
        if saved is not None:
            sys.modules["qonnx"] = saved
    assert qonnx_cc.execute_onnx is not None
