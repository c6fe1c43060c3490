"""mase_rs: MASE's hardware flow in Rust, from Python.

ONNX -> MaseGraph -> passes -> fixed point -> SystemVerilog -> Verilator, with MASE's Python
shapes: ``MaseGraph.from_onnx``, passes as functions returning ``(mg, info)``
(:mod:`mase_rs.passes`), metadata read as ``mg.nodes["fc1"].meta["mase"].parameters[...]``,
``mase_rs.flow`` for the whole flow in one call, and :mod:`mase_rs.sim`, a cocotb-style harness
whose clock, handshakes, stalls and scoreboard run in Rust.

Errors raise :class:`MaseError` with the same messages as the ``mase`` CLI.
"""

from os import PathLike
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._native import MaseError, MaseGraph, MaseMetadata, Node

__all__ = ["MaseError", "MaseGraph", "MaseMetadata", "Node", "flow", "passes", "sim"]


def flow(
    model: Union[str, PathLike],
    project_dir: Union[str, PathLike],
    input_shapes: Optional[Dict[str, List[int]]] = None,
    config: Optional[Union[Dict[str, Any], str, PathLike]] = None,
    calibrate: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """Runs the whole flow (``mase flow``): import, analysis passes, quantization (a
    ``passes.quantize`` config, else ``auto_precision`` on calibration data), hardware passes and
    the project written into ``project_dir``.

    ``config`` is the FLOW.toml shape as a dict (``{"passes": {"quantize": {...}}, "hardware":
    {"lanes": 4}}``) or the path of a FLOW.toml. ``calibrate`` maps graph inputs to arrays (one
    or more inferences stacked along the batch axis, or a list of arrays).

    Returns plain data: ``project_dir``, ``files``, ``report`` (the ``report.json`` contents),
    ``info`` (every pass's info map), ``warnings``, ``times_ms``, and ``graph`` (the quantized
    :class:`MaseGraph` with hardware metadata).
    """
    return _native.flow(model, project_dir, input_shapes, config, calibrate)


from . import passes, sim  # noqa: E402  (they import the names above)
