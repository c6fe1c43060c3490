"""mase_rs: MASE's hardware flow in Rust, from Python.

ONNX -> MaseGraph -> passes -> fixed point -> SystemVerilog -> Verilator, with MASE's Python
shapes: ``MaseGraph.from_onnx``, passes as functions returning ``(mg, info)``
(:mod:`mase_rs.passes`), metadata read as ``mg.nodes["fc1"].meta["mase"].parameters[...]``,
``mase_rs.flow`` for the whole flow in one call, ``mase_rs.sweep`` for design-space sweeps, and :mod:`mase_rs.sim`, a cocotb-style harness
whose clock, handshakes, stalls and scoreboard run in Rust.

Errors raise :class:`MaseError` with the same messages as the ``mase`` CLI.
"""

from concurrent.futures import Executor
from os import PathLike
from typing import Any, Dict, List, Optional, Union

from . import _native
from ._native import MaseError, MaseGraph, MaseMetadata, Node

__all__ = ["MaseError", "MaseGraph", "MaseMetadata", "Node", "flow", "passes", "sim", "sweep"]


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


def sweep(
    model: Union[str, PathLike],
    out_dir: Union[str, PathLike],
    config: Union[Dict[str, Any], str, PathLike],
    input_shapes: Optional[Dict[str, List[int]]] = None,
    calibrate: Optional[Dict[str, Any]] = None,
    eval: Optional[Dict[str, Any]] = None,
    labels: Optional[Any] = None,
    jobs: int = 1,
    shard: Optional[str] = None,
    verify: int = 0,
    synth: int = 0,
    pnr: int = 0,
    cache: Optional[Union[str, PathLike]] = None,
    front_rank: Optional[int] = None,
    executor: Optional[Executor] = None,
    tasks: int = 2,
) -> Dict[str, Any]:
    """Runs a design-space sweep (``mase sweep``) and writes its files into ``out_dir``.

    ``config`` is SWEEP.toml as a dict (a flow configuration plus a ``"sweep"`` table of axes,
    e.g. ``{"sweep": {"width": [8, 12], "target_ii": [16, 128]}}``) or its path. ``calibrate``
    and ``eval`` map graph inputs to ``.npy`` paths, lists of paths, or arrays (inferences
    stacked along the batch axis); ``labels`` is a path or an integer array with one class per
    row of the first output. Arrays are saved under ``out_dir/data/``, since the cache key and
    the per-point ``mase flow`` commands name files. ``jobs`` points run in parallel;
    ``shard="I/N"`` runs one slice; ``verify=K`` simulates the K most accurate front points
    under Verilator; ``synth=K`` synthesizes them with Yosys (measured resources next to the
    resource model's estimate); ``pnr=K`` places and routes them on an ECP5 (Fmax and
    inferences per second, also in ``points.csv``). Finished points are cached in
    ``out_dir/cache/`` (or ``cache``, which shards may share), finished steps kept as records in
    ``out_dir/steps/``; ``front_rank=R`` runs only front point R's steps (every point must be
    cached already).

    ``executor`` (any :class:`concurrent.futures.Executor`: a process pool, Dask's
    ``Client.get_executor()``, submitit's Slurm executor) spreads the sweep over its workers:
    ``tasks`` shards of the points, then one task per front point with steps, then the files
    written here from the cache and the records, the same bytes as a local run. A task lost
    with its worker loses no finished point or step: calling again redoes only what is missing.

    Returns plain data: ``points`` (one dict per point: ``id``, its settings such as ``width``,
    ``weight_width``, ``weight_granularity``, ``rate``, then ``metrics`` — accuracy, cosine,
    ``ii_cycles``, ``lut``, ``dsp``, ``multipliers``, … — or ``error``, and ``pareto``),
    ``front`` (the Pareto points, most accurate first), ``evaluated``, ``cached``, ``verified``,
    ``synthesized``, ``routed`` and ``sweep`` (the model, data, base configuration, axes and cache key).
    """
    kwargs = dict(
        model=str(model), out_dir=str(out_dir), config=config, input_shapes=input_shapes,
        calibrate=calibrate, eval=eval, labels=labels, jobs=jobs, shard=shard, verify=verify,
        synth=synth, pnr=pnr, cache=None if cache is None else str(cache), front_rank=front_rank,
    )
    if executor is not None:
        from ._spread import sweep_over

        return sweep_over(executor, tasks, kwargs)
    return _native.sweep(**kwargs)


from . import passes, sim  # noqa: E402  (they import the names above)
