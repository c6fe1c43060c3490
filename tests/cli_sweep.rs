//! `mase sweep` from the user's side: a small sweep of the fixture classifier, its rerun from
//! the cache, two shards merged, `--json`, and an unknown axis. No Verilator needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mase(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mase")).args(args).current_dir(dir).output().expect("runs mase")
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).display().to_string()
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn sweep_rerun_shards_merge_and_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("SWEEP.toml"),
        "[sweep]\nwidth = [8, 12]\nweight_width = [8]\ntarget_ii = [16, 128]\n",
    )
    .unwrap();
    let model = fixture("mlp_classifier.onnx");
    let (cal, ev, lab) = (
        format!("x={}", fixture("mlp_classifier.calib.x.npy")),
        format!("x={}", fixture("mlp_classifier.eval.x.npy")),
        fixture("mlp_classifier.eval.labels.npy"),
    );
    let run = |extra: &[&str]| {
        let mut a = vec![
            "sweep",
            &model,
            "--config",
            "SWEEP.toml",
            "--calibrate",
            &cal,
            "--eval",
            &ev,
            "--labels",
            &lab,
        ];
        a.extend_from_slice(extra);
        mase(&a, dir)
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
