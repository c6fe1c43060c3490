#!/usr/bin/env python3
"""Prints what spreading a sweep costs against running it locally: the fixture classifier's
sweep (4 points; `--verify 2 --synth 1`, so 3 expensive steps) run locally at -j 1, over a
Dask LocalCluster of 2 worker processes (`mase_rs.sweep(executor=…)`), and, when `sbatch`
answers, as `mase sweep --slurm 3` on the cluster it reaches (waiting for the collecting job).
Each run starts from empty point caches and step records but shares one Verilator build cache,
warmed by a first local run, so the figures are the distribution's own cost, not the builds'.

Needs: the `mase` binary (built by `cargo build --release`), the Python package (`pip install
./py`) and `dask[distributed]`; for Slurm, `sbatch`/`squeue` reaching a cluster (SLURM_CONF).

    python3 scripts/sweep_overhead.py [--mase target/release/mase] [--runs 3]
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
AXES = "[sweep]\nwidth = [8, 12]\nweight_width = [8]\ntarget_ii = [16, 128]\n"
STEPS = ["--verify", "2", "--synth", "1"]
POINTS, STEP_COUNT = 4, 3


def cli_args(mase, config):
    return [
        str(mase), "sweep", str(FIX / "mlp_classifier.onnx"), "--config", str(config),
        "--calibrate", f"x={FIX / 'mlp_classifier.calib.x.npy'}",
        "--eval", f"x={FIX / 'mlp_classifier.eval.x.npy'}",
        "--labels", str(FIX / "mlp_classifier.eval.labels.npy"), *STEPS,
    ]


def local(mase, config, out):
    t = time.perf_counter()
    subprocess.run(cli_args(mase, config) + ["-j", "1", "-o", str(out)], check=True, capture_output=True)
    return time.perf_counter() - t


def python_run(out, executor=None):
    """The sweep through the Python package, locally or over `executor` (the package's own
    baseline: its extension may be built with other optimisation than the `mase` binary)."""
    import mase_rs

    t = time.perf_counter()
    mase_rs.sweep(
        FIX / "mlp_classifier.onnx", out, config={"sweep": {"width": [8, 12], "weight_width": [8], "target_ii": [16, 128]}},
        calibrate={"x": FIX / "mlp_classifier.calib.x.npy"}, eval={"x": FIX / "mlp_classifier.eval.x.npy"},
        labels=FIX / "mlp_classifier.eval.labels.npy", verify=2, synth=1, executor=executor, tasks=3,
    )
    return time.perf_counter() - t


def slurm_run(mase, config, out):
    t = time.perf_counter()
    done = subprocess.run(cli_args(mase, config) + ["--slurm", "3", "--json", "-o", str(out)], check=True, capture_output=True, text=True)
    jobs = json.loads(done.stdout)
    ids = ",".join(j for j in (jobs["points"], jobs["steps"], jobs["collect"]) if j)
    while subprocess.run(["squeue", "-h", "-j", ids], capture_output=True, text=True).stdout.strip():
        time.sleep(0.2)
    if not (out / "synth.json").exists():
        raise SystemExit(f"the Slurm sweep wrote no synth.json; see {out}/slurm/logs")
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mase", default=ROOT / "target" / "release" / "mase", type=Path)
    ap.add_argument("--runs", default=3, type=int)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mase-overhead-"))
    config = work / "SWEEP.toml"
    config.write_text(AXES)
    os.environ["MASE_CACHE_DIR"] = str(work / "builds")
    local(a.mase, config, work / "warm")  # Verilator builds cached for every run below

    def fresh(name):
        out = work / name
        shutil.rmtree(out, ignore_errors=True)
        return out

    median = lambda ts: sorted(ts)[len(ts) // 2]  # noqa: E731
    rows = []  # (name, seconds, baseline seconds)
    cli = median([local(a.mase, config, fresh("local")) for _ in range(a.runs)])
    rows.append(("mase sweep -j 1", cli, cli))
    if shutil.which("sbatch") and subprocess.run(["sinfo", "-h"], capture_output=True).returncode == 0:
        rows.append(("--slurm 3", median([slurm_run(a.mase, config, fresh("slurm")) for _ in range(a.runs)]), cli))
    else:
        print("slurm: no cluster answers (sinfo), skipped")
    try:
        from distributed import Client, LocalCluster

        py = median([python_run(fresh("py")) for _ in range(a.runs)])
        rows.append(("mase_rs.sweep", py, py))
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, Client(c) as client:
            rows.append(("dask, 2 workers", median([python_run(fresh("dask"), client.get_executor()) for _ in range(a.runs)]), py))
    except ImportError:
        print("dask: not installed (pip install 'dask[distributed]'), skipped")
    print(f"{POINTS} points, {STEP_COUNT} steps (verify 2, synth 1); median of {a.runs} runs each")
    for name, secs, base in rows:
        print(f"{name:16} {secs:7.2f} s  ({(secs - base) / (POINTS + STEP_COUNT):+.2f} s per point or step against its local run)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
