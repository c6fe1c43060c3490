"""MASE's passes by their MASE names: each takes the graph and a dict of arguments and returns
``(mg, info)``. The graph is updated in place (a failing pass leaves it unchanged) and returned,
so ``mg, info = pass(mg, args)`` reads as in MASE. The argument dicts have the shape of the
pass's TOML table in the ``mase`` CLI (README, "Passes"); an unknown key is an error naming the
valid ones.

``PASSES`` maps every MASE name to the registered pass it runs; ``run_pass(mg, name, args)``
runs any registered pass by its registry name.
"""

from os import PathLike
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _native
from ._native import MaseError, MaseGraph

Info = Dict[str, Any]

#: MASE name -> registry name of the pass it runs.
PASSES: Dict[str, str] = {
    "validate_analysis_pass": "validate",
    "init_metadata_analysis_pass": "init_metadata",
    "add_common_metadata_analysis_pass": "add_common_metadata",
    "add_software_metadata_analysis_pass": "add_software_metadata",
    "quantize_transform_pass": "quantize",
    "auto_precision_transform_pass": "auto_precision",
    "remove_dropout_transform_pass": "remove_dropout",
    "count_ops_analysis_pass": "count_ops",
    "raise_linear_transform_pass": "raise_linear",
    "split_qonnx_quant_transform_pass": "split_qonnx_quant",
    "raise_qdq_transform_pass": "raise_qdq",
    "raise_gelu_transform_pass": "raise_gelu",
    "raise_layer_norm_transform_pass": "raise_layer_norm",
    "raise_mul_scalar_transform_pass": "raise_mul_scalar",
    "raise_embedding_transform_pass": "raise_embedding",
    "raise_masked_softmax_transform_pass": "raise_masked_softmax",
    "raise_qonnx_transform_pass": "raise_qonnx",
    "add_hardware_metadata_analysis_pass": "add_hardware_metadata",
    "partition_devices_analysis_pass": "partition_devices",
    "split_host_device_analysis_pass": "split_host_device",
}


def run_pass(mg: MaseGraph, name: str, pass_args: Optional[Dict[str, Any]] = None) -> Tuple[MaseGraph, Info]:
    """Runs registered pass ``name`` (``mase passes --list``) with ``pass_args``."""
    return mg, _native.run_pass(mg, name, pass_args)


def pass_list() -> List[Tuple[str, str]]:
    """Every registered pass as ``(registry name, description)``."""
    return _native.pass_list()


def _simple(mase_name: str, doc: str):
    name = PASSES[mase_name]

    def run(mg: MaseGraph, pass_args: Optional[Dict[str, Any]] = None) -> Tuple[MaseGraph, Info]:
        return mg, _native.run_pass(mg, name, pass_args)

    run.__name__ = run.__qualname__ = mase_name
    run.__doc__ = f"{doc}\n\nRuns the registered pass ``{name}``; returns ``(mg, info)``."
    return run


validate_analysis_pass = _simple(
    "validate_analysis_pass", "Checks the graph: acyclic, every use defined, one output, weights present, shapes consistent."
)
init_metadata_analysis_pass = _simple(
    "init_metadata_analysis_pass", "Resets every node's metadata tree (keeps input shapes)."
)
quantize_transform_pass = _simple(
    "quantize_transform_pass",
    'Fixed-point formats and quantized weights from a MASE-style config: ``{"by": "type", "default": '
    '{"config": {"name": "integer", "data_in_width": 8, "data_in_frac_width": 4, ...}}, "linear": '
    '{"config": {...}}}``; ``by`` is ``type``, ``name`` or ``regex_name``.',
)
auto_precision_transform_pass = _simple(
    "auto_precision_transform_pass",
    "Fractional bits per tensor from the calibration statistics for a given width (``width``, "
    "``range``, ``weight_width``, ``bias_width``); run add_software_metadata_analysis_pass first.",
)
remove_dropout_transform_pass = _simple("remove_dropout_transform_pass", "Removes Dropout and Identity nodes.")
count_ops_analysis_pass = _simple("count_ops_analysis_pass", "Counts the nodes per MASE op into the info map.")
raise_linear_transform_pass = _simple(
    "raise_linear_transform_pass", "Gemm, MatMul with a constant weight, + bias Add -> linear."
)
split_qonnx_quant_transform_pass = _simple(
    "split_qonnx_quant_transform_pass",
    "QONNX activation Quant (one float scale, zero point 0, ROUND, 8 bits) -> QuantizeLinear + DequantizeLinear.",
)
raise_qdq_transform_pass = _simple(
    "raise_qdq_transform_pass",
    "DequantizeLinear -> linear -> [Relu] -> QuantizeLinear (per-tensor activation scales) -> qlinear on the codes.",
)
raise_gelu_transform_pass = _simple("raise_gelu_transform_pass", "The erf and tanh forms of GELU -> gelu.")
raise_layer_norm_transform_pass = _simple(
    "raise_layer_norm_transform_pass", "The decomposed LayerNorm -> layer_norm."
)
raise_mul_scalar_transform_pass = _simple(
    "raise_mul_scalar_transform_pass", "Mul/Div by a one-element constant -> mul."
)
raise_embedding_transform_pass = _simple(
    "raise_embedding_transform_pass", "Gather of a constant 2-D table at token ids -> embedding."
)
raise_masked_softmax_transform_pass = _simple(
    "raise_masked_softmax_transform_pass",
    "softmax(scores + additive attention mask) -> softmax with a boolean mask input.",
)
raise_qonnx_transform_pass = _simple(
    "raise_qonnx_transform_pass",
    "QONNX Quant nodes with power-of-two scales and zero point 0 -> fixed-point formats (weights keep their codes).",
)
add_hardware_metadata_analysis_pass = _simple(
    "add_hardware_metadata_analysis_pass",
    "Binds every node to a component and chooses its parallelism; the arguments are the "
    '``[hardware]`` keys: ``target_ii``, ``target_ii_per_row``, ``multiplier_budget``, ``lanes``, '
    '``top``, ``nodes: {name: {"parallelism": [p_in, p_out]}}``.',
)
partition_devices_analysis_pass = _simple(
    "partition_devices_analysis_pass",
    "Spreads the design over devices: every node's ``device_id`` and parallelism for the smallest "
    "system ii within each device's budgets. The arguments are the ``[hardware]`` keys with "
    '``devices: [{"name", "multipliers", "memory_bits", "lut" (optional), "link_bits_per_cycle", '
    '"link_latency_cycles"}, ...]`` (every device but the last with its link to the next). Emit '
    'the result with ``emit_verilog_top_transform_pass`` and the same ``devices``.',
)
split_host_device_analysis_pass = _simple(
    "split_host_device_analysis_pass",
    "Whole models: marks the nodes that run on the host before and after the device "
    '(``toolchain = "HOST"``); the arguments are the ``[hardware]`` keys, with ``host_ops`` and '
    '``nodes: {name: {"host": True}}`` moving nodes to the host.',
)


def add_common_metadata_analysis_pass(
    mg: MaseGraph, pass_args: Optional[Dict[str, Any]] = None
) -> Tuple[MaseGraph, Info]:
    """mase_type / mase_op, args and results with type, precision and shape, by running the float
    interpreter on a dummy input of the graph's input shapes.

    MASE's ``dummy_in`` (graph input -> array) is accepted and checked against those shapes;
    ``add_value`` may be ``False`` (values are never stored in the metadata).
    """
    args = dict(pass_args or {})
    dummy = args.pop("dummy_in", None)
    add_value = args.pop("add_value", False)
    if add_value:
        raise MaseError("add_common_metadata: add_value=True is not supported (metadata holds no values)")
    if dummy is not None:
        declared = {n: mg.nodes[n].meta["mase"].parameters["common"]["results"]["data_out_0"]["shape"] for n in mg.inputs}
        for name, value in dummy.items():
            if name not in declared:
                raise MaseError(f"add_common_metadata: dummy_in '{name}' is not a graph input (inputs: {', '.join(mg.inputs)})")
            shape = list(np.shape(value))
            if shape != list(declared[name]):
                raise MaseError(f"add_common_metadata: dummy_in '{name}' has shape {shape}, the graph input has {declared[name]}")
    return mg, _native.run_pass(mg, "add_common_metadata", args)


def add_software_metadata_analysis_pass(
    mg: MaseGraph, pass_args: Optional[Dict[str, Any]] = None
) -> Tuple[MaseGraph, Info]:
    """Statistics over calibration inputs (min/max, quantile and n-sigma ranges, variances) into
    every node's ``software`` metadata.

    ``{"inputs": {"x": array}}``: arrays in memory (each holds one or more inferences stacked
    along the batch axis; a list of arrays works too), or ``{"inputs": {"x": ["a.npy"]}}``: .npy
    files as the CLI reads them. Optional ``quantile``, ``n_sigma``, ``max_samples``.
    """
    args = dict(pass_args or {})
    inputs = args.get("inputs") or {}

    def is_path(v: Any) -> bool:
        return isinstance(v, (str, PathLike))

    files = all(isinstance(v, (list, tuple)) and v and all(is_path(x) for x in v) for v in inputs.values())
    if inputs and files:
        return mg, _native.run_pass(mg, "add_software_metadata", args)
    unknown = set(args) - {"inputs", "quantile", "n_sigma", "max_samples"}
    if unknown:
        raise MaseError(
            f"add_software_metadata: unknown argument(s) {', '.join(sorted(unknown))}; expected inputs, quantile, n_sigma, max_samples"
        )
    info = _native.add_software_metadata(
        mg, inputs, args.get("quantile"), args.get("n_sigma"), args.get("max_samples")
    )
    return mg, info


def emit_verilog_top_transform_pass(
    mg: MaseGraph, pass_args: Optional[Dict[str, Any]] = None
) -> Tuple[MaseGraph, Info]:
    """Writes the project of a graph with hardware metadata: ``top.sv``, ``rtl/`` (library files),
    ``mem/`` (weights), ``files.f``, FuseSoC core, ``report.json``, README and the graph under
    ``mase/`` (what :class:`mase_rs.sim.Design` builds). MASE's separate BRAM and internal-RTL
    emission passes are part of this one.

    ``{"project_dir": path, "top_name": "top"}``; the info map has ``project_dir``, ``top``,
    ``files`` and ``report``. Refuses to write into an existing directory it did not make. After
    ``partition_devices_analysis_pass``, pass the same ``devices`` list to write one project per
    device and the system simulation top. ``clock_mhz`` (as ``[hardware] clock_mhz``) adds
    inferences per second and latency in µs to the report and README.
    """
    args = dict(pass_args or {})
    if "project_dir" not in args:
        raise MaseError("emit_verilog_top: pass_args needs 'project_dir'")
    project_dir = args.pop("project_dir")
    top = args.pop("top_name", "top")
    devices = args.pop("devices", None)
    clock_mhz = args.pop("clock_mhz", None)
    if args:
        raise MaseError(
            f"emit_verilog_top: unknown argument(s) {', '.join(sorted(args))}; "
            "expected project_dir, top_name, devices, clock_mhz"
        )
    return mg, _native.emit_project(mg, project_dir, top, devices, clock_mhz)


__all__ = sorted(list(PASSES) + ["emit_verilog_top_transform_pass", "run_pass", "pass_list", "PASSES"])
