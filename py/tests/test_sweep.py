"""mase_rs.sweep: a small sweep of the fixture classifier returns the points and front that
`mase sweep` writes, as plain data; a rerun comes from the cache; bad axes raise MaseError."""

import json

import numpy as np
import pytest

import mase_rs
from mase_rs import MaseError

AXES = {"width": [8, 12], "weight_width": [8], "target_ii": [16, 128]}


def objectives(m):
    """What the front maximises: accuracy (top-1 with labels), fewer LUTs, fewer DSPs (the
    resource model's estimates) and fewer cycles per inference."""
    return (m["top1"], -m["lut"], -m["dsp"], -m["ii_cycles"])


def classifier_sweep(fixtures, out_dir, **kw):
    """The fixture classifier over AXES, calibration data as an array, labels as an array."""
    return mase_rs.sweep(
        fixtures / "mlp_classifier.onnx",
        out_dir,
        config={"passes": {"auto_precision": {"range": "min_max"}}, "sweep": AXES},
        calibrate={"x": np.load(fixtures / "mlp_classifier.calib.x.npy")},
        eval={"x": fixtures / "mlp_classifier.eval.x.npy"},
        labels=np.load(fixtures / "mlp_classifier.eval.labels.npy"),
        **kw,
    )


def dominates(a, b):
    oa, ob = objectives(a), objectives(b)
    return all(x >= y for x, y in zip(oa, ob)) and any(x > y for x, y in zip(oa, ob))


def test_sweep_returns_points_and_front(fixtures, tmp_path):
    out_dir = tmp_path / "sweep"
    out = classifier_sweep(fixtures, out_dir, jobs=2)
    points = out["points"]
    assert len(points) == 4 and (out["evaluated"], out["cached"]) == (4, 0)
    assert sorted((p["width"], p["rate"]["target_ii"]) for p in points) == [(8, 16), (8, 128), (12, 16), (12, 128)]
    # The returned data is what points.json holds.
    assert json.loads((out_dir / "points.json").read_text())["points"] == points
    assert (out_dir / "data" / "calibrate.x.npy").exists() and (out_dir / "data" / "labels.npy").exists()
    built = [p for p in points if p["error"] is None]
    assert built, points
    front = out["front"]
    assert front and all(p["pareto"] for p in front)
    assert {p["id"] for p in front} == {p["id"] for p in points if p["pareto"]}
    for f in front:
        assert not any(dominates(o["metrics"], f["metrics"]) for o in built), f
    for p in built:
        if not p["pareto"]:
            assert any(dominates(f["metrics"], p["metrics"]) for f in front), p
    accuracies = [p["metrics"]["top1"] for p in front]
    assert accuracies == sorted(accuracies, reverse=True)
    assert out["sweep"]["selected"] == 4

    again = classifier_sweep(fixtures, out_dir)
    assert (again["evaluated"], again["cached"]) == (0, 4) and again["points"] == points


def test_sweep_errors_name_the_key(fixtures, tmp_path):
    with pytest.raises(MaseError, match="widht"):
        mase_rs.sweep(fixtures / "mlp_classifier.onnx", tmp_path / "s", config={"sweep": {"widht": [8]}})
    with pytest.raises(MaseError, match=r"no \[sweep\] table"):
        mase_rs.sweep(fixtures / "mlp_classifier.onnx", tmp_path / "s", config={})
