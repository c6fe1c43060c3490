//! Faults in a sweep's expensive steps, as real `mase sweep` processes: a front point whose
//! verification fails (here its project directory is taken by a file of the user's, so writing
//! the project is refused) is recorded with its error in `verify.json` while the other point is
//! still verified, every output is written and the exit status says what failed; the rerun takes
//! every point from the cache and verifies both.

use std::path::Path;
use std::process::Command;

mod common;
use common::{classifier_sweep_args, stdout_json as json, CLASSIFIER_AXES};

#[test]
fn a_failed_verification_is_recorded_and_the_rerun_completes_from_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("SWEEP.toml"), CLASSIFIER_AXES).unwrap();
    let run = |extra: &[&str]| {
        let mut a = classifier_sweep_args(false);
        a.extend(["--json", "-o", "out"].iter().chain(extra).map(|s| s.to_string()));
        Command::new(env!("CARGO_BIN_EXE_mase")).args(&a).current_dir(dir).output().expect("runs mase")
    };
    let first = run(&[]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let first = json(&first);
    let front: Vec<String> =
        first["pareto"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert!(front.len() >= 2, "the test needs two front points: {front:?}");
    let points_csv = std::fs::read(dir.join("out/points.csv")).unwrap();

    // The most accurate front point's project directory is the user's: writing it is refused.
    let taken = dir.join("out/verify").join(&front[0]);
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("notes.txt"), "mine").unwrap();
    let out = run(&["--verify", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a failed verification shows in the exit status");
    assert!(stderr.contains(&format!("verify {}", front[0])), "the failure is named: {stderr}");
    let second = json(&out);
    assert_eq!((second["evaluated"].as_u64(), second["cached"].as_u64()), (Some(0), Some(4)), "{second}");
    let verified = second["verified"].as_array().unwrap();
    assert_eq!(verified.len(), 2, "{second}");
    let error = verified[0]["error"].as_str().expect("the failed point carries its error");
    let named = Path::new("out/verify").join(&front[0]);
    assert!(error.contains(&named.display().to_string()) && error.contains("not written by"), "{error}");
    assert_eq!(std::fs::read_to_string(taken.join("notes.txt")).unwrap(), "mine", "the user's file is kept");
    assert_eq!(verified[1]["id"], front[1].as_str());
    assert!(
        verified[1]["error"].is_null() && verified[1]["bit_exact"] == true,
        "the other point still runs: {second}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/verify.json")).unwrap()).unwrap();
    assert_eq!(&file, &second["verified"], "verify.json records both, the error included");
    assert_eq!(std::fs::read(dir.join("out/points.csv")).unwrap(), points_csv, "points.csv as before");

    std::fs::remove_dir_all(&taken).unwrap();
    let out = run(&["--verify", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let third = json(&out);
    assert_eq!((third["evaluated"].as_u64(), third["cached"].as_u64()), (Some(0), Some(4)), "{third}");
    for v in third["verified"].as_array().unwrap() {
        assert!(v["error"].is_null() && v["bit_exact"] == true, "{third}");
    }
    assert!(Path::new(&taken).join("top.sv").is_file());
}
