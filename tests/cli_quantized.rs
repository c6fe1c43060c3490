//! Models quantized by their own quantizers, from ONNX to RTL: `mase flow` on the Brevitas
//! power-of-two fixture raises its quantizers (no calibration); on onnxruntime's QDQ fixture and
//! Brevitas's float-scale one it raises each quantized linear into a `qlinear` on the model's
//! codes. Each emitted design is bit-exact under Verilator with random stalls, and its outputs
//! on the 360 labelled evaluation rows equal the reference tool's (qonnx's executor,
//! onnxruntime), value for value. `mase info` shows what each
//! quantizer and each raised result holds; `mase accuracy --against` compares the raised
//! model's integer execution with the model's own quantized execution.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::mase;

fn quant(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quant").join(file)
}

fn ok(out: &Output) -> String {
    let (o, e) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "command failed\nstdout:\n{o}\nstderr:\n{e}");
    o.into_owned()
}

/// The stderr of a command that must fail.
fn err(out: &Output) -> String {
    assert!(!out.status.success(), "command should fail; stdout:\n{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `mase COMMAND <fixture model> -o OUT` in `dir` (`import` or `flow`).
fn on_model(command: &str, model: &str, out: &str, dir: &Path) -> Output {
    mase(&[command, quant(model).to_str().unwrap(), "-o", out], dir)
}

fn f32s(path: &Path) -> Vec<f32> {
    let t = mase_ir::npy::read_npy(path).unwrap();
    t.to_f32().iter().copied().collect()
}

/// `mase flow` of a fixture model, then `mase sim` of its project on the 360 evaluation rows:
/// bit-exact under random stalls, and the model's outputs (the host's dequantization of the
/// device's codes, where the model has one) equal the reference tool's `want`, value for value.
fn rtl_equals_reference(model: &str, want: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(&on_model("flow", model, "p", dir));
    let x = quant("eval.x.npy");
    let x = format!("x={}", x.display());
    let report = ok(&mase(&["sim", "p", "--input", &x, "--json"], dir));
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(v["bit_exact"], true, "{model}: {v}");
    assert_eq!(v["mismatches"], 0);
    // `mase sim` writes the device's outputs, then the model's (after the host's part) if any.
    let out = v["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .rfind(|o| !o.ends_with(".codes.npy"));
    let got = f32s(&dir.join(out.unwrap()));
    let want = f32s(&quant(want));
    assert_eq!(got.len(), want.len());
    assert_eq!(got.len(), 3600);
    // By value: a dequantized zero code may be -0.0 in one tool and 0.0 in the other.
    let differ = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "{model}: {differ} of {} output values differ from the reference's", got.len());
}

#[test]
fn brevitas_po2_rtl_equals_qonnx_code_for_code() {
    rtl_equals_reference("brevitas_mlp_po2.onnx", "brevitas_mlp_po2.eval.out.y.npy");
}

/// onnxruntime's QDQ model (uint8 activations with zero points, per-channel int8 weights, int32
/// bias codes): its linears become `qlinear` instances on the model's own codes.
#[test]
fn qdq_rtl_equals_onnxruntime_code_for_code() {
    rtl_equals_reference("ort_qdq_mlp.onnx", "ort_qdq_mlp.eval.out.y.npy");
}

/// Brevitas's float scales (4-bit per-channel weights, int8 activations), exported to QONNX.
#[test]
fn float_scale_qonnx_rtl_equals_qonnx_code_for_code() {
    rtl_equals_reference("brevitas_mlp_float.onnx", "brevitas_mlp_float.eval.out.y.npy");
}

/// The `quantization` cell of node `name`'s row in a `mase info` table.
fn quantization_cell<'a>(table: &'a str, name: &str) -> &'a str {
    let header = table.lines().next().unwrap();
    let (start, end) = (header.find("quantization").unwrap(), header.find("weights").unwrap());
    let row = table.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).unwrap();
    row[start..end.min(row.len())].trim()
}

#[test]
fn info_shows_scales_zero_points_and_raised_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(&on_model("import", "ort_qdq_mlp.onnx", "q", dir));
    let table = ok(&mase(&["info", "q"], dir));
    let g = mase_ir::checkpoint::load(&dir.join("q")).unwrap();
    let id = g.find("x_QuantizeLinear").unwrap();
    let mase_ir::op::Op::QuantizeLinear { scale, zero_point: Some(z), to, .. } = &g.node(id).op else {
        panic!("x_QuantizeLinear is not a QuantizeLinear with a zero point")
    };
    let (s, z) = (g.weights[scale].to_f32(), g.weights[z].to_f32());
    let want = format!("{} ×{} zp {}", to.name(), s.iter().next().unwrap(), z.iter().next().unwrap());
    assert_eq!(quantization_cell(&table, "x_QuantizeLinear"), want, "{table}");
    // The raised qlinear shows its output and input grids, and its weights the model's codes on
    // their per-channel grids.
    let id = g.find("Gemm_qlinear").unwrap();
    let mase_ir::op::Op::Qlinear {
        weight, x_type, x_scale, x_zero_point, y_type, y_scale, y_zero_point, ..
    } = &g.node(id).op
    else {
        panic!("Gemm_qlinear is not a qlinear")
    };
    let want = format!(
        "{} ×{y_scale} zp {y_zero_point} from {} ×{x_scale} zp {x_zero_point}",
        y_type.name(),
        x_type.name()
    );
    assert_eq!(quantization_cell(&table, "Gemm_qlinear"), want, "{table}");
    let a = g.qweights[weight].affine.as_ref().unwrap();
    let (lo, hi) = a.scale.iter().fold((f32::MAX, 0f32), |(l, h), &s| (l.min(s), h.max(s)));
    let row = table.lines().find(|l| l.split_whitespace().nth(1) == Some("Gemm_qlinear")).unwrap();
    assert!(row.contains(&format!("weight int8 ×[{lo}..{hi}]/{} zp 0", a.scale.len())), "{row}");

    ok(&on_model("import", "brevitas_mlp_po2.onnx", "p", dir));
    assert!(quantization_cell(&ok(&mase(&["info", "p"], dir)), "node__symbolic").starts_with("int8 ×"));
    ok(&mase(&["passes", "p", "--run", "raise_qonnx", "-o", "r"], dir));
    let raised = ok(&mase(&["info", "r"], dir));
    let g = mase_ir::checkpoint::load(&dir.join("r")).unwrap();
    for (id, n) in g.nodes() {
        if let Some(f) = mase_ir::quant::result_format(&g, id) {
            assert_eq!(quantization_cell(&raised, &n.name), f.short(), "{raised}");
        }
    }
    assert!(raised.contains("weight s4.3"), "{raised}");
}

#[test]
fn accuracy_against_the_models_own_quantized_execution() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    ok(&on_model("import", "brevitas_mlp_po2.onnx", "p", dir));
    ok(&mase(&["passes", "p", "--run", "raise_qonnx", "-o", "r"], dir));
    // The first four evaluation rows: the graph's batch.
    let x = mase_ir::npy::read_npy(quant("eval.x.npy")).unwrap().to_f32();
    let x4 = x.slice(ndarray::s![0..4, ..]).to_owned().into_dyn();
    mase_ir::npy::write_npy(dir.join("x4.npy"), &mase_ir::Tensor::F32(x4)).unwrap();
    let out = ok(&mase(&["accuracy", "r", "--input", "x=x4.npy", "--against", "p", "--json"], dir));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let a = &v["against"];
    assert_eq!(a["elements"], 40, "{v}");
    assert_eq!(a["identical_elements"], 40, "{v}");
    assert_eq!(a["max_abs_error"], 0.0, "{v}");
    // Against the float model the quantized outputs differ (the quantizers are not no-ops).
    assert!(v["max_abs_error"].as_f64().unwrap() > 0.0, "{v}");
    let text = ok(&mase(&["accuracy", "r", "--input", "x=x4.npy", "--against", "p"], dir));
    assert!(
        text.contains("against the model's own quantized execution")
            && text.contains("identical_elements 40 of 40"),
        "{text}"
    );
    let e = err(&mase(&["accuracy", "r", "--input", "x=x4.npy", "--against", "missing"], dir));
    assert!(e.contains("--against missing"), "{e}");
}

#[test]
fn dynamic_quantization_is_refused_with_the_reason_and_the_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let e = err(&on_model("import", "ort_dynamic_mlp.onnx", "d", tmp.path()));
    assert!(e.contains("(DynamicQuantizeLinear, from ONNX node"), "{e}");
    assert!(e.contains("at run time") && e.contains("QuantFormat.QDQ") && e.contains("mase flow"), "{e}");
    assert!(!tmp.path().join("d.json").exists(), "a refused import wrote a checkpoint");
}

/// Brevitas's power-of-two transformer layer (`scripts/export_quantized_layer.py`): attention's
/// matmuls, its power-of-two scale and the residual adds get their exact formats between the
/// quantizers, the layer norms' float scales and shifts 16 bits. The emitted design is bit-exact
/// under random stalls on 64 sequences. Softmax and layer norm are our integer units where
/// qonnx computes in float32, so the outputs are compared code by code: at least 99 % equal and
/// none more than one code apart.
#[test]
fn brevitas_po2_transformer_layer_rtl_is_within_one_code_of_qonnx() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fixture =
        |f: &str| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quant_layer").join(f);
    ok(&mase(&["flow", fixture("brevitas_layer_po2.onnx").to_str().unwrap(), "-o", "p"], dir));
    let x = format!("x={}", fixture("eval.x.npy").display());
    let report = ok(&mase(&["sim", "p", "--input", &x, "--json"], dir));
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(v["bit_exact"], true, "{v}");
    assert_eq!(v["inferences"], 64, "{v}");
    let outputs: Vec<&str> = v["outputs"].as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
    let values = outputs.iter().find(|o| !o.ends_with(".codes.npy")).unwrap();
    let codes = outputs.iter().find(|o| o.ends_with(".codes.npy")).unwrap();
    let got = f32s(&dir.join(values));
    let got_codes: Vec<i64> =
        mase_ir::npy::read_npy(dir.join(codes)).unwrap().to_i64().iter().copied().collect();
    let want = f32s(&fixture("brevitas_layer_po2.eval.out.y.npy"));
    assert_eq!((got.len(), got_codes.len(), want.len()), (64 * 8 * 16, 64 * 8 * 16, 64 * 8 * 16));
    // The output grid's step, from the design's own values and codes.
    let (v0, c0) = got.iter().zip(&got_codes).find(|(_, &c)| c != 0).unwrap();
    let step = f64::from(*v0) / *c0 as f64;
    let apart: Vec<i64> =
        got.iter().zip(&want).map(|(&a, &b)| ((f64::from(a) - f64::from(b)) / step).round() as i64).collect();
    let equal = apart.iter().filter(|&&d| d == 0).count();
    let worst = apart.iter().map(|d| d.abs()).max().unwrap();
    assert!(worst <= 1, "an output is {worst} codes from qonnx's");
    assert!(equal * 100 >= 99 * apart.len(), "only {equal} of {} output codes equal qonnx's", apart.len());
}
