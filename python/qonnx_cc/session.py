"""An onnxruntime-compatible session over qonnx-cc's executor (``qonnx_cc.InferenceSession``).

It follows ``onnxruntime.InferenceSession``'s documented surface: ``run``, ``get_inputs``/``get_outputs``
(``NodeArg`` with ``name``, ``shape`` and ``type``), ``get_modelmeta``, providers, and ``SessionOptions``
whose thread count it honours (the other options are accepted and have no effect: qonnx-cc plans every graph
the same way). QONNX, FINN and qonnx-cc custom-domain ops run as well as standard ONNX ops.
"""

from __future__ import annotations

import enum
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._model import ModelLike, load

_PROVIDER = "CPUExecutionProvider"


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's optimization levels; qonnx-cc plans every graph the same way whatever the level."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's execution modes (nodes run in order either way)."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """onnxruntime's SessionOptions. ``intra_op_num_threads`` sets the kernel threads (0: every core)."""

    def __init__(self) -> None:
        self.intra_op_num_threads: int = 0
        self.inter_op_num_threads: int = 0
        self.graph_optimization_level: GraphOptimizationLevel = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode: ExecutionMode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level: int = 2
        self.log_verbosity_level: int = 0
        self.logid: str = ""
        self.enable_profiling: bool = False
        self.profile_file_prefix: str = "onnxruntime_profile_"
        self.optimized_model_filepath: str = ""
        self.enable_cpu_mem_arena: bool = True
        self.enable_mem_pattern: bool = True
        self.enable_mem_reuse: bool = True
        self.use_deterministic_compute: bool = False
        self._config: Dict[str, str] = {}

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Stores a config entry (read back with get_session_config_entry; none changes qonnx-cc)."""
        self._config[key] = value

    def get_session_config_entry(self, key: str) -> str:
        """The value stored under ``key``."""
        return self._config[key]

    def add_free_dimension_override_by_name(self, name: str, value: int) -> None:
        """Accepted for compatibility: qonnx-cc takes symbolic dims from the inputs of each run."""

    def add_free_dimension_override_by_denotation(self, denotation: str, value: int) -> None:
        """Accepted for compatibility: qonnx-cc takes symbolic dims from the inputs of each run."""

    def register_custom_ops_library(self, library_path: str) -> None:
        """onnxruntime custom-op libraries cannot run in qonnx-cc: always an error."""
        from ._errors import Unsupported

        raise Unsupported(f"custom op library '{library_path}': qonnx-cc runs its own kernels only "
                          "(QONNX, FINN and standard ops are built in)")


class RunOptions:
    """onnxruntime's RunOptions (accepted; a run cannot be cancelled)."""

    def __init__(self) -> None:
        self.log_severity_level: int = 2
        self.log_verbosity_level: int = 0
        self.logid: str = ""
        self.terminate: bool = False
        self.only_execute_path_to_fetches: bool = False
        self._config: Dict[str, str] = {}

    def add_run_config_entry(self, key: str, value: str) -> None:
        """Stores a config entry (no effect)."""
        self._config[key] = value

    def get_run_config_entry(self, key: str) -> str:
        """The value stored under ``key``."""
        return self._config[key]


class NodeArg:
    """An input or output as onnxruntime describes it.

    ``shape`` holds an int per fixed dim, the dim's name for a symbolic one and None for an unknown one.
    """

    def __init__(self, name: str, shape: Optional[List[Union[int, str, None]]], type: str) -> None:
        self.name = name
        self.shape = shape
        self.type = type

    def __repr__(self) -> str:
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class ModelMetadata:
    """onnxruntime's ModelMetadata: the model's header and metadata_props."""

    def __init__(self, header: Dict[str, Any], custom: Dict[str, str]) -> None:
        self.producer_name: str = header["producer_name"]
        self.graph_name: str = header["graph_name"]
        self.domain: str = header["domain"]
        self.description: str = header["doc_string"]
        self.graph_description: str = header["graph_doc_string"]
        self.version: int = header["model_version"]
        self.custom_metadata_map: Dict[str, str] = custom


class InferenceSession:
    """Runs a model with qonnx-cc's kernels, as ``onnxruntime.InferenceSession`` does with its own.

    ``path_or_bytes`` is a path (external data read from its folder; no size limit), serialized bytes, an
    ``onnx.ModelProto`` or a qonnx ``ModelWrapper``. ``threads`` sets the kernel threads (default: the
    options' ``intra_op_num_threads`` when set, else 1); results are bit-identical for every count.
    ``arith`` is ``exec --arith``: ``"int"`` (default) sums the integer products of quantized layers exactly
    and scales once, ``"float"`` multiplies their dequantized float values (docs/arithmetic.md).
    ``run`` releases the GIL, and one session may run from several Python threads at once.
    """

    def __init__(self, path_or_bytes: ModelLike, sess_options: Optional[SessionOptions] = None,
                 providers: Optional[Sequence[Any]] = None, provider_options: Optional[Sequence[Dict[str, Any]]] = None,
                 *, threads: Optional[int] = None, arith: str = "int", **kwargs: Any) -> None:
        self._options = sess_options if sess_options is not None else SessionOptions()
        if threads is None:
            threads = self._options.intra_op_num_threads if self._options.intra_op_num_threads > 0 else 1
        self._threads = int(threads)
        self._model_path = os.fspath(path_or_bytes) if isinstance(path_or_bytes, (str, os.PathLike)) else None
        self._model = load(path_or_bytes)
        self._session = _core.Session(self._model, arith=arith)
        self._inputs = [NodeArg(*d) for d in self._session.inputs()]
        # Output shapes may need shape inference (onnxruntime reports inferred dims): done on first request.
        self._outputs: Optional[List[NodeArg]] = None
        # `providers` and `provider_options` are accepted as onnxruntime does: every op runs on qonnx-cc's
        # CPU kernels whatever they name.
        self._providers = [_PROVIDER]

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any],
            run_options: Optional[RunOptions] = None) -> List[np.ndarray]:
        """The outputs named (all graph outputs when None or empty), in that order, as new numpy arrays.

        Inputs are numpy arrays (or array-likes) by input name; C-contiguous arrays of the model's dtype are
        read in place, others converted once.
        """
        return self._session.run(list(output_names) if output_names else None, input_feed, self._threads)

    def path_notes(self) -> List[Tuple[str, str]]:
        """Each Conv/MatMul/Gemm that chose between the integer and the float path: (node, why), run order
        (``exec --show-paths``)."""
        return [(node, note) for node, note in self._session.path_notes()]

    def streaming_note(self) -> str:
        """Empty, or why the session streams weights: they exceed ``qonnx_cc.max_memory()`` when the session was
        made, so the layers whose weights are in external data read them per run (the same outputs)."""
        return str(self._session.streaming_note())

    def get_inputs(self) -> List[NodeArg]:
        """The inputs a run must feed (graph inputs that are not initializers)."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The graph outputs."""
        if self._outputs is None:
            self._outputs = [NodeArg(*d) for d in self._session.outputs()]
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Always empty: initializers listed as graph inputs are constants, as convert treats them."""
        return []

    def get_modelmeta(self) -> ModelMetadata:
        """The model's producer, graph name, description, version and metadata_props."""
        return ModelMetadata(self._model.header(), self._model.metadata())

    def get_providers(self) -> List[str]:
        """``['CPUExecutionProvider']``: qonnx-cc's kernels."""
        return list(self._providers)

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        """No provider options."""
        return {_PROVIDER: {}}

    def set_providers(self, providers: Optional[Sequence[Any]] = None,
                      provider_options: Optional[Sequence[Dict[str, Any]]] = None) -> None:
        """Accepted for compatibility; every op keeps running on qonnx-cc's kernels."""

    def get_session_options(self) -> SessionOptions:
        """The options the session was made with."""
        return self._options

    def disable_fallback(self) -> None:
        """Accepted for compatibility (there is one provider)."""

    def enable_fallback(self) -> None:
        """Accepted for compatibility (there is one provider)."""

    def end_profiling(self) -> str:
        """No profile is written: returns ''."""
        return ""

    @property
    def threads(self) -> int:
        """Kernel threads of this session's runs."""
        return self._threads


def get_available_providers() -> List[str]:
    """``['CPUExecutionProvider']``."""
    return [_PROVIDER]


def get_all_providers() -> List[str]:
    """``['CPUExecutionProvider']``."""
    return [_PROVIDER]


def get_device() -> str:
    """``'CPU'``."""
    return "CPU"
