"""Every ``qonnx-cc`` command as a function returning Python values (the CLI's logic, not a subprocess).

Models go in as paths, bytes, ``onnx.ModelProto`` or a qonnx ``ModelWrapper``; transformed models come back as
an ``onnx.ModelProto`` (bytes with ``as_bytes=True`` or when the ``onnx`` package is missing), or are saved to
``output`` (then the path is returned; the way for models above protobuf's 2 GB, with external data).
Errors raise the qonnx_cc exception of the CLI's exit code, with the CLI's message.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._errors import NumericMismatch, UsageError
from ._model import ModelLike, load

#: What the model-producing functions return: a ModelProto, bytes, or the path written.
ModelResult = Union[Any, bytes, str]


def _result(model: _core.Model, output: Optional[Union[str, "os.PathLike[str]"]], external_data: str,
            as_bytes: bool) -> ModelResult:
    if output is not None:
        path = os.fspath(output)
        model.save(path, external_data)
        return path
    data = model.serialize()
    if as_bytes:
        return data
    try:
        import onnx
    except ImportError:
        return data
    return onnx.load_model_from_string(data)


def _input_name(model: ModelLike) -> str:
    """How errors and reports name the model: its path, or ``<memory>``."""
    return os.fspath(model) if isinstance(model, (str, os.PathLike)) else "<memory>"


def _raise_if_check_failed(result: Dict[str, Any]) -> None:
    if result["check_failed"]:
        raise NumericMismatch(f"--check: {result['check_failure']}; nothing written")


def convert(model: ModelLike, target: str = "qdq", target_opset: Optional[int] = None,
            passes: Optional[str] = None, check: int = 0, *, seed: int = 0, atol: Optional[float] = None,
            rtol: Optional[float] = None, strict: bool = False, allow_approximate: bool = False,
            keep_initializer_inputs: bool = False, round_mode: Optional[int] = None,
            max_multithreshold_bits: Optional[int] = None,
            output: Optional[Union[str, "os.PathLike[str]"]] = None, external_data: str = "auto",
            as_bytes: bool = False, full_report: bool = False, arith: str = "float") -> Tuple[ModelResult, Any]:
    """``qonnx-cc convert``: runs a target's pipeline (or ``passes``, a textual pipeline) on the model.

    Returns ``(model, report)``: the report is the list of per-quantizer outcomes that ``--report`` writes
    (``node``, ``op_type``, ``outcome``, ``detail``, ``pass``), or the whole ``--report`` JSON as a dict with
    ``full_report=True``. ``check=N`` compares original and result on N seeded random inputs (``atol``/``rtol``
    as the CLI's ``--atol``/``--rtol``) and raises :class:`NumericMismatch` on a difference.
    ``max_multithreshold_bits`` is ``--max-multithreshold-bits`` (``target="finn"``); ``arith`` is how
    ``check`` runs both models' quantized layers (``--arith``: ``"float"``, the default, or ``"int"``).
    """
    options: Dict[str, Any] = {
        "target": target, "passes": passes or "", "target_opset": int(target_opset or 0), "check": int(check),
        "seed": int(seed), "strict": bool(strict), "allow_approximate": bool(allow_approximate),
        "keep_initializer_inputs": bool(keep_initializer_inputs),
        "round_mode": "" if round_mode is None else str(int(round_mode)),
        "max_multithreshold_bits": int(max_multithreshold_bits or 0),
        "input_name": _input_name(model),
        "output_name": os.fspath(output) if output is not None else "",
        "arith": str(arith),
    }
    if atol is not None:
        options["atol"] = float(atol)
    if rtol is not None:
        options["rtol"] = float(rtol)
    result = _core.convert(load(model), options)
    _raise_if_check_failed(result)
    report = json.loads(result["report_json"])
    converted = _result(result["model"], output, external_data, as_bytes)
    return converted, report if full_report else report["quantizers"]


def cleanup(model: ModelLike, *, preserve_qnt_ops: bool = True, extract_conv_bias: bool = False,
            override_batchsize: Optional[int] = None, override_inpsize: Optional[Union[str, Sequence[int]]] = None,
            check: int = 0, seed: int = 0, output: Optional[Union[str, "os.PathLike[str]"]] = None,
            external_data: str = "auto", as_bytes: bool = False) -> ModelResult:
    """``qonnx-cc cleanup`` (qonnx-cleanup): folds constants, keeps quantizers, gives readable names.

    ``override_inpsize`` is a shape (``(1, 3, 224, 224)`` or its string form); ``check=N`` requires
    bit-identical outputs on N seeded random inputs (else :class:`NumericMismatch`).
    """
    inpsize = override_inpsize
    if inpsize is not None and not isinstance(inpsize, str):
        inpsize = "(" + ",".join(str(int(d)) for d in inpsize) + ")"
    options = {
        "preserve_qnt_ops": bool(preserve_qnt_ops), "extract_conv_bias": bool(extract_conv_bias),
        "override_batchsize": int(override_batchsize or 0), "override_inpsize": inpsize or "",
        "check": int(check), "seed": int(seed),
        "input_name": _input_name(model),
    }
    result = _core.cleanup(load(model), options)
    _raise_if_check_failed(result)
    return _result(result["model"], output, external_data, as_bytes)


def channels_last(model: ModelLike, *, make_input_channels_last: bool = False, check: int = 0, seed: int = 0,
                  output: Optional[Union[str, "os.PathLike[str]"]] = None, external_data: str = "auto",
                  as_bytes: bool = False) -> ModelResult:
    """``qonnx-cc channels-last`` (qonnx-to-channels-last): channels-last ops and layout, bit for bit the same
    results (``check=N`` verifies it exactly)."""
    options = {
        "make_input_channels_last": bool(make_input_channels_last), "check": int(check), "seed": int(seed),
        "input_name": _input_name(model),
    }
    result = _core.channels_last(load(model), options)
    _raise_if_check_failed(result)
    return _result(result["model"], output, external_data, as_bytes)


def cost(model: ModelLike, *, breakdown: bool = False, discount_sparsity: bool = True, flat: bool = False,
         clip_aware: bool = False, qonnx_ops_only: bool = False) -> Dict[str, Any]:
    """``qonnx-cc cost`` (qonnx-inference-cost): the CLI's JSON as a dict (MACs, BOPs, weight and activation
    memory; ``breakdown`` adds per-op-type and per-node tables; ``flat`` is qonnx's 2021 layout)."""
    options = {"breakdown": bool(breakdown), "discount_sparsity": bool(discount_sparsity), "flat": bool(flat),
               "clip_aware": bool(clip_aware), "qonnx_ops_only": bool(qonnx_ops_only)}
    return json.loads(_core.cost(load(model), options))


def info(model: ModelLike) -> Dict[str, Any]:
    """``qonnx-cc info --json`` as a dict: opsets, op counts, quantizers, initializer sizes."""
    return json.loads(load(model).info_json())


def check(model: ModelLike) -> None:
    """``qonnx-cc check``: structure, ONNX checker, kernels and quantizer parameters; raises on a problem."""
    load(model).validate()


def trans_quant_param(scale: Union[float, Sequence[float], np.ndarray],
                      offset: Optional[Union[float, Sequence[float], np.ndarray]] = None,
                      round_mode: int = 0) -> np.ndarray:
    """``qonnx-cc trans-quant-param``: Ascend TransQuantParamV2 uint64 words for float32 scales (and offsets;
    a length-1 list broadcasts). ``round_mode`` 0 truncates the scales to FP19, 1 rounds half to even."""
    scales = np.asarray(scale, dtype=np.float32).ravel().tolist()
    offsets = None if offset is None else np.asarray(offset, dtype=np.float32).ravel().tolist()
    return _core.trans_quant_param(scales, offsets, int(round_mode))


def run_dataset(model: ModelLike, x: Union[np.ndarray, Mapping[str, np.ndarray]], batch_size: int = 1,
                labels: Optional[np.ndarray] = None, *, threads: int = 1,
                arith: str = "int") -> Tuple[List[np.ndarray], Optional[float]]:
    """``qonnx-cc exec``'s dataset mode: N samples along axis 0 of ``x`` (an array for a one-input model, or
    arrays by input name) run in batches of ``batch_size``; returns the outputs stacked along axis 0 (graph
    output order) and the top-1 accuracy of the first output against integer ``labels`` (None without).
    ``arith`` is ``exec --arith`` (``"int"`` or ``"float"``)."""
    if batch_size < 1:
        raise UsageError(f"batch_size {batch_size}: must be at least 1")
    session = _core.Session(load(model), check_input_shapes=False, arith=str(arith))
    data = dict(x) if isinstance(x, Mapping) else None
    if data is None:
        if len(session.input_names) != 1:
            raise UsageError(f"the model has {len(session.input_names)} inputs: give x as a dict by input name")
        data = {session.input_names[0]: x}
    outputs, _ = session.run_dataset(data, int(batch_size), int(threads))
    accuracy = None
    if labels is not None:
        correct, total = _core.top1_accuracy(outputs[0], np.asarray(labels))
        accuracy = correct / total if total else 0.0
    return outputs, accuracy
