//! Saturation reports of `mase run --quantized`, `mase accuracy --json` and `mase sim --json`:
//! the count of the graph input's cast equals the count computed here from the data and the
//! reported format, and a site over 0.1 % is warned about by node and format.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::mase;

use mase_ir::Tensor;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn ok(out: &Output) -> (String, String) {
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "command failed\nstdout:\n{o}\nstderr:\n{e}");
    (o, e)
}

/// The fixture's input times `scale`, written to `dir/name`.
fn scaled_input(dir: &Path, name: &str, scale: f32) -> Vec<f32> {
    let t = mase_ir::npy::read_npy(root().join("tests/fixtures/mlp_gemm_relu.in.x.npy")).unwrap();
    let a = t.as_f32().unwrap().mapv(|v| v * scale);
    let data: Vec<f32> = a.iter().copied().collect();
    mase_ir::npy::write_npy(dir.join(name), &Tensor::F32(a)).unwrap();
    data
}

/// (width, frac) of a `fixed<s8.5 TRN SAT>` format string.
fn width_frac(format: &str) -> (u32, i32) {
    let inner = format.trim_start_matches("fixed<s").split(' ').next().unwrap();
    let (w, f) = inner.split_once('.').unwrap();
    (w.parse().unwrap(), f.parse().unwrap())
}

/// How many values floor(x·2^frac) falls outside a signed `width`-bit code (exact in f64).
fn clipped(data: &[f32], format: &str) -> u64 {
    let (w, f) = width_frac(format);
    let (lo, hi) = (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1);
    data.iter().map(|v| (f64::from(*v) * 2f64.powi(f)).floor() as i64).filter(|c| *c < lo || *c > hi).count()
        as u64
}

/// Checks the graph input's site `x` of a JSON report against the data.
fn check_input_site(v: &serde_json::Value, data: &[f32]) -> u64 {
    let x = &v["saturation"]["x"];
    let format = x["format"].as_str().unwrap();
    assert!(format.starts_with("fixed<s"), "{format}");
    let want = clipped(data, format);
    assert_eq!(x["clipped"], want, "{v}");
    assert_eq!(x["wrapped"], 0);
    assert_eq!(x["total"], data.len() as u64);
    if want > 0 {
        let warned = v["warnings"].as_array().unwrap().iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("node 'x'") && w.contains(format) && w.contains(&format!("{want} of {}", data.len()))
        });
        assert!(warned, "no warning for x: {v}");
    }
    want
}

#[test]
fn run_and_accuracy_report_saturation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = root().join("tests/fixtures/mlp_gemm_relu.onnx");
    ok(&mase(&["import", model.to_str().unwrap(), "-o", "m"], dir));
    let cfg = root().join("examples/quantize_int8.toml");
    ok(&mase(&["quantize", "m", "--config", cfg.to_str().unwrap(), "-o", "q"], dir));

    // Three times the fixture's input: beyond the input format's [-4, 4) in places.
    let data = scaled_input(dir, "x3.npy", 3.0);
    let (out, _) = ok(&mase(&["accuracy", "q", "--input", "x=x3.npy", "--json"], dir));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let n = check_input_site(&v, &data);
    assert!(n > 0, "the test input must clip");
    assert!(v["cosine"].is_number(), "the accuracy keys stay: {v}");

    let (out, err) = ok(&mase(&["run", "q", "--quantized", "--input", "x=x3.npy", "-o", "o.npy"], dir));
    assert!(out.contains(&format!("saturation x: {n} clipped of {} elements", data.len())), "{out}");
    assert!(err.contains("warning: node 'x' clipped"), "{err}");

    // A hundredth of the input: nothing clips anywhere.
    let data = scaled_input(dir, "small.npy", 0.01);
    let (out, err) = ok(&mase(&["accuracy", "q", "--input", "x=small.npy", "--json"], dir));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(check_input_site(&v, &data), 0);
    for (site, s) in v["saturation"].as_object().unwrap() {
        assert_eq!((&s["clipped"], &s["wrapped"]), (&0.into(), &0.into()), "{site}");
    }
    assert_eq!(v["warnings"], serde_json::json!([]));
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn sim_reports_saturation_of_the_same_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let model = root().join("tests/fixtures/mlp_gemm_relu.onnx");
    let cfg = root().join("examples/flow_mlp_int8.toml");
    ok(&mase(&["flow", model.to_str().unwrap(), "--config", cfg.to_str().unwrap(), "-o", "proj"], dir));
    let data = scaled_input(dir, "x3.npy", 3.0);
    let (out, _) = ok(&mase(&["sim", "proj", "--golden", "--input", "x=x3.npy", "--json"], dir));
    let golden: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(check_input_site(&golden, &data) > 0, "the test input must clip");
    let (out, _) = ok(&mase(&["sim", "proj", "--input", "x=x3.npy", "--json"], dir));
    let rtl: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rtl["bit_exact"], true);
    assert_eq!(rtl["saturation"], golden["saturation"]);
    assert_eq!(rtl["warnings"], golden["warnings"]);
}
