//! `mase flow` configuration from the user's side: calibration from data files (`--calibrate`
//! and `[calibration] inputs`), the warning when the flow falls back to seeded random inputs,
//! and errors for unknown keys and bad paths. No Verilator needed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mase_ir::Tensor;

fn mase(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mase")).args(args).current_dir(dir).output().expect("runs mase")
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name).display().to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), stderr(out));
    stderr(out)
}

fn err(out: &Output) -> String {
    assert!(!out.status.success(), "should fail:\n{}", String::from_utf8_lossy(&out.stdout));
    stderr(out)
}

/// The fixture's inference and the same scaled by 8, stacked in one 1-D file (the flow splits
/// it into inferences of the graph input's shape); returns the values.
fn write_stacked(path: &Path) -> Vec<f32> {
    let x = mase_ir::npy::read_npy(fixture("mlp_gemm_relu.in.x.npy")).unwrap().to_f32();
    let mut data: Vec<f32> = x.iter().copied().collect();
    data.extend(x.iter().map(|v| v * 8.0));
    mase_ir::npy::write_npy(path, &Tensor::from_f32(&[data.len()], data.clone()).unwrap()).unwrap();
    data
}

/// The min/max statistics recorded for graph input `x` in an emitted project.
fn recorded_range(project: &Path) -> (f64, f64, u64) {
    let g = mase_ir::checkpoint::load(&project.join("mase/model")).unwrap();
    let x = g.node(g.find("x").unwrap());
    let r = x.meta.software.results["data_out_0"].stat.range_min_max.unwrap();
    (r.min, r.max, r.count)
}

#[test]
fn calibrate_records_the_statistics_of_the_data_and_random_calibration_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = write_stacked(&dir.join("calib.npy"));
    let model = fixture("mlp_gemm_relu.onnx");
    let msg = ok(&mase(&["flow", &model, "--calibrate", "x=calib.npy", "-o", "hw"], dir));
    assert!(!msg.contains("seeded random"), "no warning with data: {msg}");
    let (min, max, count) = recorded_range(&dir.join("hw"));
    let want_min = data.iter().copied().fold(f32::INFINITY, f32::min) as f64;
    let want_max = data.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    assert_eq!((min, max, count), (want_min, want_max, data.len() as u64));

    // The same data through the config file, relative to the config's directory.
    std::fs::create_dir(dir.join("cfg")).unwrap();
    std::fs::rename(dir.join("calib.npy"), dir.join("cfg/calib.npy")).unwrap();
    std::fs::write(dir.join("cfg/flow.toml"), "[calibration]\ninputs = { x = [\"calib.npy\"] }\n").unwrap();
    ok(&mase(&["flow", &model, "--config", "cfg/flow.toml", "-o", "hw2"], dir));
    assert_eq!(recorded_range(&dir.join("hw2")), (want_min, want_max, data.len() as u64));

    // Without data: seeded random inputs, a warning that says how to give data, other ranges.
    let msg = ok(&mase(&["flow", &model, "-o", "hw3"], dir));
    assert!(msg.contains("seeded random") && msg.contains("--calibrate"), "{msg}");
    assert_ne!(recorded_range(&dir.join("hw3")).1, want_max);
}

#[test]
fn unknown_keys_list_the_valid_ones_and_bad_paths_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = fixture("mlp_gemm_relu.onnx");
    let cases = [
        ("[hardware]\nlanez = 4\n", &["flow.toml", "[hardware]", "lanez", "`lanes`", "`target_ii`"][..]),
        ("[calibraton]\nsamples = 2\n", &["flow.toml", "calibraton", "`calibration`", "`hardware`"]),
        ("[calibration]\nsample = 2\n", &["[calibration]", "sample", "`samples`", "`inputs`"]),
        ("[passes.auto_precision]\nwidht = 8\n", &["[passes.auto_precision]", "widht", "`weight_width`"]),
        ("[passes.quantise]\n", &["[passes]", "quantise", "`quantize`", "`auto_precision`"]),
        (
            "[hardware.nodes.fc1]\nparalelism = [2]\n",
            &["[hardware.nodes.fc1]", "`parallelism`", "`external`"],
        ),
    ];
    for (text, wants) in cases {
        std::fs::write(dir.join("flow.toml"), text).unwrap();
        let msg = err(&mase(&["flow", &model, "--config", "flow.toml", "-o", "hw"], dir));
        for w in wants {
            assert!(msg.contains(w), "{text:?}: error lacks {w}: {msg}");
        }
    }
    let msg = err(&mase(&["flow", &model, "--calibrate", "x=missing.npy", "-o", "hw"], dir));
    assert!(msg.contains("missing.npy"), "{msg}");
    std::fs::create_dir(dir.join("cfg")).unwrap();
    std::fs::write(dir.join("cfg/flow.toml"), "[calibration]\ninputs = { x = [\"nope.npy\"] }\n").unwrap();
    let msg = err(&mase(&["flow", &model, "--config", "cfg/flow.toml", "-o", "hw"], dir));
    assert!(msg.contains("cfg/nope.npy"), "the path is relative to the config: {msg}");
    let msg = err(&mase(&["flow", &model, "--calibrate", "y=missing.npy", "-o", "hw"], dir));
    assert!(msg.contains("'y'") && msg.contains("inputs: x"), "{msg}");
    std::fs::write(dir.join("odd.npy"), b"").unwrap();
    let odd = Tensor::from_f32(&[3], vec![1.0, 2.0, 3.0]).unwrap();
    mase_ir::npy::write_npy(dir.join("odd.npy"), &odd).unwrap();
    let msg = err(&mase(&["flow", &model, "--calibrate", "x=odd.npy", "-o", "hw"], dir));
    assert!(msg.contains("odd.npy") && msg.contains("whole number of inferences"), "{msg}");
}
