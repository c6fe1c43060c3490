"""mase_rs.sweep over a real Dask cluster (a LocalCluster of worker processes, through
``Client.get_executor()``): the fixture classifier swept with ``verify=2, synth=1`` gives the
files of the local run byte for byte; a worker killed while it runs a front point's steps costs
only those steps: calling again evaluates no point and runs only the steps left unfinished."""

import os
import threading
import time

import dask
import pytest
from distributed import Client, LocalCluster

import mase_rs

AXES = {"width": [8, 12], "weight_width": [8], "target_ii": [16, 128]}
COMPARED = ["points.csv", "pareto.csv", "verify.json", "synth.json"]
STEPS = 3  # verify on two front points, synth on one


def classifier_sweep(fixtures, out_dir, **kw):
    return mase_rs.sweep(
        fixtures / "mlp_classifier.onnx",
        out_dir,
        config={"sweep": AXES},
        calibrate={"x": fixtures / "mlp_classifier.calib.x.npy"},
        eval={"x": fixtures / "mlp_classifier.eval.x.npy"},
        labels=fixtures / "mlp_classifier.eval.labels.npy",
        verify=2,
        synth=1,
        **kw,
    )


def cluster():
    return LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)


def assert_same_files(a, b):
    for f in COMPARED:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f"{f} differs between {a} and {b}"


def records(out_dir):
    steps = out_dir / "steps"
    return len(list(steps.glob("*.json"))) if steps.is_dir() else 0


def test_a_sweep_over_dask_workers_writes_the_local_runs_files(fixtures, tmp_path):
    local = classifier_sweep(fixtures, tmp_path / "local", jobs=1)
    with cluster() as c, Client(c) as client:
        spread = classifier_sweep(fixtures, tmp_path / "dask", executor=client.get_executor(), tasks=3)
    assert_same_files(tmp_path / "local", tmp_path / "dask")
    assert spread["points"] == local["points"] and spread["front"] == local["front"]
    assert (spread["evaluated"], spread["cached"]) == (4, 0), "each point evaluated once, by one shard"
    assert spread["steps"]["ran"] == STEPS and spread["verified"] == local["verified"]


def test_a_killed_worker_costs_only_its_unfinished_steps(fixtures, tmp_path):
    local = tmp_path / "local"
    classifier_sweep(fixtures, local, jobs=1)
    # No retry of a task whose worker died, so that the call fails as a lost job would; the
    # worker is killed while it synthesizes (Yosys runs for seconds, the Verilator builds come
    # from the cache the local run filled).
    out = tmp_path / "killed"
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with cluster() as c, Client(c) as client:
            failure = []

            def first_run():
                try:
                    classifier_sweep(fixtures, out, executor=client.get_executor(), tasks=2)
                except Exception as e:  # the killed worker's task
                    failure.append(e)

            runner = threading.Thread(target=first_run)
            runner.start()
            deadline = time.monotonic() + 600
            while not (out / "synth").is_dir():
                assert time.monotonic() < deadline and runner.is_alive(), "no step started"
                time.sleep(0.1)
            busy = [w for w, keys in client.processing().items() if keys]
            assert busy, "a worker runs the synthesis"
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            os.kill(pid, 9)
            runner.join()
            assert failure, "the sweep reports the lost task"
            left = records(out)
            assert left < STEPS, f"the killed task left its steps unfinished ({left} of {STEPS})"

            again = classifier_sweep(fixtures, out, executor=client.get_executor(), tasks=2)
    assert_same_files(local, out)
    assert again["evaluated"] == 0, "every point came from the cache"
    assert (again["steps"]["ran"], again["steps"]["reused"]) == (STEPS - left, left)
