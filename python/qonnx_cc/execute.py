"""qonnx's ``execute_onnx`` on qonnx-cc's kernels: same signature, same results, without an onnxruntime
session per node.

qonnx (``qonnx.core.onnx_exec.execute_onnx``) builds a context of every tensor (zeros for declared tensors,
then initializers, then ``input_dict``), runs the nodes from ``start_node`` to ``end_node`` one by one, and
rounds tensors annotated with an integer ``finn_datatype`` (INTk, UINTk, BINARY, BIPOLAR, TERNARY) before and
after each node
(``sanitize_quant_values``, on unless the environment sets ``SANITIZE_QUANT_TENSORS=0``; a rounding larger
than ``ERROR_THRESH``, default 0.01, is an error). This function does the same. Where nothing needs sanitizing
and the whole graph runs, it takes the executor's planned path (the plan is kept for the next call with the
same model), which gives the same bits faster. Differences from qonnx: docs/python.md.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings
from collections import OrderedDict
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

from . import _core
from ._errors import Unsupported, UsageError
from ._model import ModelLike, load, model_proto, serialized

NodeRef = Union[int, str, Any]  # an index, a node name, or a NodeProto of the model

_CACHE_SIZE = 4


@dataclasses.dataclass
class _Loaded:
    """A model loaded once for many calls (FINN calls once per sample), with what every call asks of it."""

    core: _core.Model
    exec_mode: str
    sanitizable: bool  # some tensor carries an integer datatype annotation (qonnx sanitizes only those)
    sessions: Dict[bool, _core.Session] = dataclasses.field(default_factory=dict)
    # The runtime inputs' declared shapes where they are static (qonnx checks given inputs against them).
    static_shapes: Dict[str, Tuple[int, ...]] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, core: _core.Model) -> "_Loaded":
        return cls(core, exec_mode_of(core), core.has_datatype_annotations())

    def session(self, expose_all: bool) -> _core.Session:
        with _cache_lock:
            if expose_all not in self.sessions:
                self.sessions[expose_all] = _core.Session(self.core, expose_all)
                self.static_shapes = {name: tuple(shape) for name, shape, _ in self.sessions[expose_all].inputs()
                                      if shape and all(isinstance(d, int) for d in shape)}
            return self.sessions[expose_all]


_cache: "OrderedDict[Any, _Loaded]" = OrderedDict()
_cache_lock = threading.Lock()


def _cached_model(model: ModelLike) -> _Loaded:
    """The loaded model, kept for the last few models (keyed by bytes, or path and modification time)."""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        key: Any = ("path", path, os.stat(path).st_mtime_ns)
        data = None
    else:
        data = serialized(model)
        if data is None:
            return _Loaded.of(load(model))
        key = data
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    entry = _Loaded.of(load(model if data is None else data))
    with _cache_lock:
        _cache[key] = entry
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return entry


def _node_index(model: ModelLike, core: _core.Model, node: NodeRef, which: str) -> int:
    """qonnx's get_node_index: the position of ``node`` (a NodeProto equal to one of the graph's, a name,
    or an index)."""
    if isinstance(node, (int, np.integer)):
        index = int(node)
        if not 0 <= index < core.node_count():
            raise UsageError(f"{which} {index}: the graph has {core.node_count()} nodes")
        return index
    if isinstance(node, str):
        found = core.node_index(node)
        if found is None:
            raise UsageError(f"{which} '{node}': no node of that name")
        return found
    proto = model_proto(model)
    if proto is not None:
        for index, candidate in enumerate(proto.graph.node):
            if candidate == node:
                return index
    found = core.node_index(getattr(node, "name", ""))
    if found is None:
        raise UsageError(f"{which}: the node is not in the model")
    return found


def exec_mode_of(core: _core.Model) -> str:
    """The model's ``exec_mode`` metadata: qonnx reads the graph's metadata_props (since 2025), older qonnx
    and FINN the model's; either one set means the model is not for a software executor."""
    return core.graph_metadata().get("exec_mode", "") or core.metadata().get("exec_mode", "")


def execute_onnx(model: ModelLike, input_dict: Dict[str, Any], return_full_exec_context: bool = False,
                 start_node: Optional[NodeRef] = None, end_node: Optional[NodeRef] = None, *,
                 sanitize: Optional[bool] = None, error_threshold: Optional[float] = None,
                 threads: int = 1) -> Dict[str, np.ndarray]:
    """Executes ``model`` on ``input_dict`` as qonnx's ``execute_onnx`` does.

    Returns the graph outputs by name, or with ``return_full_exec_context`` every tensor of the context
    (inputs, initializers, every node's outputs, declared tensors the run did not reach as zeros).
    ``start_node``/``end_node`` (NodeProtos of the model, node names or indices) run only that range, on a
    context seeded from ``input_dict``. ``sanitize`` and ``error_threshold`` default to qonnx's environment
    settings (``SANITIZE_QUANT_TENSORS``, default on; ``ERROR_THRESH``, default 0.01). A model whose
    ``exec_mode`` metadata is set (FINN's rtlsim/remote modes) is refused: those stay with FINN.
    """
    if sanitize is None:
        sanitize = int(os.environ.get("SANITIZE_QUANT_TENSORS", "1")) != 0
    if error_threshold is None:
        error_threshold = float(os.environ.get("ERROR_THRESH", "1e-2"))
    entry = _cached_model(model)
    core = entry.core
    exec_mode = entry.exec_mode
    if exec_mode:
        raise Unsupported(f"metadata exec_mode '{exec_mode}': qonnx-cc runs graphs with its own kernels; "
                          "rtlsim and remote execution stay with FINN (qonnx_cc.compat.patch_finn leaves them to it)")
    count = core.node_count()
    begin = 0 if start_node is None else _node_index(model, core, start_node, "start_node")
    end = count if end_node is None else _node_index(model, core, end_node, "end_node") + 1
    if end < begin:
        raise UsageError("start/end nodes must define a valid subgraph: end_node comes before start_node")

    session = entry.session(return_full_exec_context)
    whole_graph = begin == 0 and end == count
    if whole_graph and not (sanitize and entry.sanitizable) and set(session.input_names) <= set(input_dict):
        feed = {name: input_dict[name] for name in session.input_names}
        _check_shapes(entry.static_shapes, feed)
        if return_full_exec_context:
            return session.run_all(feed, threads)
        return dict(zip(session.output_names, session.run(None, feed, threads)))

    context, rounded = _core.run_in_context(core, dict(input_dict), begin, end, bool(sanitize), float(error_threshold))
    for tensor, datatype in rounded:
        warnings.warn(f"The values of tensor {tensor} can't be represented with the set datatype annotation "
                      f"({datatype}), they will be rounded to match the datatype annotation.")
    if return_full_exec_context:
        return context
    missing = [name for name in session.output_names if name not in context]
    if missing:
        raise UsageError(f"graph outputs {missing} have no value: they are not declared with a static shape and "
                         "the nodes run did not produce them")
    return {name: context[name] for name in session.output_names}


def _check_shapes(static_shapes: Dict[str, Tuple[int, ...]], feed: Dict[str, Any]) -> None:
    """qonnx's check of provided inputs against the declared shapes (the node-by-node path's is in C++)."""
    for name, shape in static_shapes.items():
        given = np.shape(feed[name])
        if shape != tuple(given):
            raise UsageError(f"shape mismatch for provided input '{name}': given {list(given)}, the model "
                             f"declares {list(shape)}")
