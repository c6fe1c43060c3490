"""A sweep spread over a :class:`concurrent.futures.Executor` (``mase_rs.sweep(…, executor=ex)``).

The same three stages as ``mase sweep --slurm``: ``tasks`` shards of the points, every shard
caching into ``out_dir/cache``; then one task per front point with expensive steps
(``front_rank``), each keeping its results as records in ``out_dir/steps``; then the sweep once
more here, every point from the cache and every step from its record, which writes the files
a local run writes, byte for byte. A task lost with its worker loses nothing finished: calling
``sweep`` again redoes only the missing points and steps.
"""

import os
from concurrent.futures import Executor, wait
from pathlib import Path
from typing import Any, Dict, List

from . import _native


def run_task(kwargs: Dict[str, Any], call: str = "") -> Dict[str, Any]:
    """One task, as a worker runs it (a module-level function, so executors can pickle it).
    ``call`` names the ``sweep`` call it belongs to: executors that key tasks by their arguments
    (Dask) would otherwise answer a rerun after a failure with the failure they remember."""
    return _native.sweep(**kwargs)


def _all(executor: Executor, calls: List[Dict[str, Any]], call: str) -> List[Dict[str, Any]]:
    """Runs the calls on the executor; when one fails, waits for the others (their finished
    points and steps are kept) before raising its error."""
    futures = [executor.submit(run_task, c, call) for c in calls]
    wait(futures)
    return [f.result() for f in futures]


def sweep_over(executor: Executor, tasks: int, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The sweep of ``kwargs`` (``_native.sweep``'s arguments) spread over ``executor``."""
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1, not {tasks}")
    if kwargs.get("shard") is not None or kwargs.get("front_rank") is not None:
        raise ValueError("an executor runs the whole sweep: give neither shard nor front_rank")
    out = Path(kwargs["out_dir"])
    files = _native.sweep_files(out, kwargs["calibrate"], kwargs["eval"], kwargs["labels"])
    kw = dict(kwargs, out_dir=str(out), cache=str(kwargs.get("cache") or out / "cache"), **files)
    points = dict(kw, verify=0, synth=0, pnr=0)
    call = os.urandom(8).hex()
    shards = _all(
        executor,
        [dict(points, shard=f"{i}/{tasks}", out_dir=str(out / "shards" / str(i))) for i in range(tasks)],
        call,
    )
    ranks = max(kw["verify"], kw["synth"], kw["pnr"])
    steps = _all(executor, [dict(kw, front_rank=r) for r in range(ranks)], call)
    result = _native.sweep(**kw)
    result["evaluated"] = sum(s["evaluated"] for s in shards)
    result["cached"] = sum(s["cached"] for s in shards)
    result["steps"] = {
        "ran": sum(s["steps"]["ran"] for s in steps),
        "reused": sum(s["steps"]["reused"] for s in steps),
        "seconds": {k: v for s in steps for k, v in s["steps"]["seconds"].items()},
    }
    return result
