//! `mase sweep` from the user's side: a small sweep of the fixture classifier, its rerun from
//! the cache, two shards merged, `--json`, and an unknown axis. No Verilator needed.

use std::process::Output;

mod common;
use common::{classifier_sweep_args, fixture, mase, CLASSIFIER_AXES};

/// A temp dir holding `SWEEP.toml` with these contents.
fn sweep_dir(sweep_toml: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("SWEEP.toml"), sweep_toml).unwrap();
    tmp
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn sweep_rerun_shards_merge_and_errors() {
    let tmp = sweep_dir(CLASSIFIER_AXES);
    let dir = tmp.path();
    let model = fixture("mlp_classifier.onnx").display().to_string();
    let run = |extra: &[&str]| {
        let mut a = classifier_sweep_args(true);
        a.extend(extra.iter().map(|s| s.to_string()));
        mase(&a.iter().map(String::as_str).collect::<Vec<_>>(), dir)
    };
    let first = ok(&run(&["-j", "2", "-o", "full"]));
    assert!(first.contains("4 points (4 evaluated, 0 cached)"), "{first}");
    assert!(first.contains("pareto"), "{first}");
    let again = ok(&run(&["-o", "full"]));
    assert!(again.contains("4 points (0 evaluated, 4 cached)"), "{again}");
    let json: serde_json::Value = serde_json::from_str(&ok(&run(&["--json", "-o", "full"]))).unwrap();
    assert_eq!((json["points"].as_u64(), json["cached"].as_u64()), (Some(4), Some(4)));
    for i in 0..2 {
        let s = ok(&run(&["--shard", &format!("{i}/2"), "-o", &format!("s{i}")]));
        assert!(s.contains("2 points (2 evaluated"), "{s}");
    }
    let merged = ok(&mase(&["sweep", "merge", "s0", "s1", "-o", "merged"], dir));
    assert!(merged.contains("2 directories: 4 of 4 selected points"), "{merged}");
    for f in ["points.csv", "points.json", "pareto.csv", "pareto.svg", "README.md"] {
        assert_eq!(
            std::fs::read(dir.join("full").join(f)).unwrap(),
            std::fs::read(dir.join("merged").join(f)).unwrap(),
            "{f}"
        );
    }
    // An axis the sweep does not have.
    std::fs::write(dir.join("BAD.toml"), "[sweep]\nweight_precision = [8]\n").unwrap();
    let out = mase(&["sweep", &model, "--config", "BAD.toml", "-o", "bad"], dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("BAD.toml") && err.contains("weight_precision"), "{err}");
    assert!(
        err.contains("`width`") && err.contains("`multiplier_budget`") && err.contains("`target_ii`"),
        "{err}"
    );
    assert!(!dir.join("bad").exists(), "nothing written on a configuration error");
    // A bad shard.
    let out = run(&["--shard", "2/2", "-o", "x"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("I/N"));
}

/// `mase sweep --pnr 1` on the fixture classifier: the most accurate front point is placed and
/// routed, and `points.csv` gives it a positive Fmax and inferences per second equal to that
/// clock over its ii; the other points leave both columns empty.
#[test]
fn sweep_pnr_adds_fmax_and_inferences_per_second() {
    let tmp = sweep_dir("[sweep]\nwidth = [8]\nweight_width = [8]\ntarget_ii = [16, 128]\n");
    let dir = tmp.path();
    let (model, cal) = (
        fixture("mlp_classifier.onnx").display().to_string(),
        format!("x={}", fixture("mlp_classifier.calib.x.npy").display()),
    );
    let out = ok(&mase(
        &["sweep", &model, "--config", "SWEEP.toml", "--calibrate", &cal, "--pnr", "1", "-o", "s"],
        dir,
    ));
    assert!(out.contains("MHz on LFE5U-85F-6"), "{out}");
    let csv = std::fs::read_to_string(dir.join("s/points.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col =
        |name: &str| head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {head:?}"));
    let (fmax, ips, ii) = (col("fmax_mhz"), col("inferences_per_s"), col("ii_cycles"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let routed: Vec<&Vec<&str>> = rows.iter().filter(|r| !r[fmax].is_empty()).collect();
    assert_eq!(routed.len(), 1, "{csv}");
    let r = routed[0];
    let (f, i, cycles): (f64, f64, f64) =
        (r[fmax].parse().unwrap(), r[ips].parse().unwrap(), r[ii].parse().unwrap());
    assert!(f > 0.0, "{csv}");
    assert!((i - f * 1e6 / cycles).abs() / i < 1e-4, "{i} inferences/s at {f} MHz and ii {cycles}");
    assert!(rows.iter().filter(|r| r[fmax].is_empty()).all(|r| r[ips].is_empty()));
    let routed_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("s/pnr.json")).unwrap()).unwrap();
    assert_eq!(routed_json.as_array().unwrap().len(), 1);
}
