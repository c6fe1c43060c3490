//! Models quantized by the real tools (`scripts/export_quantized.py`, `tests/fixtures/quant/`):
//! Brevitas QAT exported to QONNX with power-of-two and with float scales, and onnxruntime's
//! static QDQ quantization. Each imports, and the float interpreter's outputs equal the reference
//! tool's (qonnx's executor, onnxruntime with its graph optimizations off) on one inference and
//! on the 360 evaluation rows.
//!
//! Tolerance: the quantizers themselves are computed as qonnx and onnxruntime compute them (the
//! same float32 operations in the same order), and the outputs are quantized values (code ×
//! scale). What can differ is the float32 rounding of the Gemm sums between a quantizer and the
//! next (our accumulation order against onnxruntime's), which moves a value that lies within a
//! float32 rounding error of a rounding boundary into the next code. So for the float-scale
//! models an output may differ by exactly one output step (one code), and the test allows at
//! most 1 % of the elements to do so; for the power-of-two model every product and sum is exact
//! in float32 (4-bit weights and 8-bit activations on power-of-two grids, 32 terms), so the
//! outputs must be equal bit for bit. Measured: see `agreement` (printed with `--nocapture`).

mod onnx_support;

use std::collections::HashMap;
use std::path::PathBuf;

use mase_ir::npy::read_npy;
use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::{interp, MaseGraph, Op, Tensor};
use ndarray::{s, ArrayD, Axis};
use onnx_support::fixtures;

fn quant_dir() -> PathBuf {
    fixtures().join("quant")
}

fn import(name: &str, raise: bool, fold: bool) -> MaseGraph {
    let opts = ImportOptions { raise, fold, ..Default::default() };
    import_file(&quant_dir().join(format!("{name}.onnx")), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn npy(file: &str) -> Tensor {
    read_npy(quant_dir().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Runs `g` on `x` in batches of 4 rows; the outputs concatenated.
fn run_rows(g: &MaseGraph, x: &ArrayD<f32>) -> ArrayD<f32> {
    let input = g.node(g.input_ids()[0]).name.clone();
    let mut outs = Vec::new();
    for i in (0..x.shape()[0]).step_by(4) {
        let xb = x.slice(s![i..i + 4, ..]).to_owned().into_dyn();
        let mut inputs = HashMap::new();
        inputs.insert(input.clone(), Tensor::F32(xb));
        let y = interp::run_outputs(g, &inputs).unwrap();
        outs.push(y[0].as_f32().unwrap().clone());
    }
    let views: Vec<_> = outs.iter().map(|a| a.view()).collect();
    ndarray::concatenate(Axis(0), &views).unwrap()
}

/// How our outputs compare with the reference's.
#[derive(Debug)]
struct Agreement {
    /// Elements compared.
    n: usize,
    /// Elements not bit-identical.
    differ: usize,
    /// Largest difference in output steps (the smallest nonzero gap between reference values).
    max_steps: f32,
    /// Our top-1 accuracy on the labels, and the reference's.
    acc: (f64, f64),
}

fn agreement(got: &ArrayD<f32>, want: &ArrayD<f32>, labels: &ArrayD<i64>) -> Agreement {
    assert_eq!(got.shape(), want.shape());
    let mut vals: Vec<f32> = want.iter().copied().collect();
    vals.sort_by(f32::total_cmp);
    vals.dedup();
    let step = vals.windows(2).map(|w| w[1] - w[0]).fold(f32::INFINITY, f32::min);
    let differ = got.iter().zip(want.iter()).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
    let max_diff = got.iter().zip(want.iter()).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    let acc = |y: &ArrayD<f32>| {
        let right = y
            .axis_iter(Axis(0))
            .zip(labels.iter())
            .filter(|(row, &l)| {
                let best =
                    row.iter()
                        .enumerate()
                        .fold((0, f32::NEG_INFINITY), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
                best.0 as i64 == l
            })
            .count();
        right as f64 / labels.len() as f64
    };
    Agreement { n: got.len(), differ, max_steps: max_diff / step, acc: (acc(got), acc(want)) }
}

/// Imports `name` raised and unraised (and unfolded), checks the one-inference output and the
/// evaluation set against the reference tool; returns the evaluation agreement.
fn check(name: &str) -> Agreement {
    let x1 = npy(&format!("{name}.in.x.npy"));
    let want1 = npy(&format!("{name}.out.y.npy"));
    let x = npy("eval.x.npy").to_f32();
    let labels = npy("eval.labels.npy").to_i64();
    let want = npy(&format!("{name}.eval.out.y.npy")).to_f32();
    let mut result = None;
    for (raise, fold) in [(true, true), (false, true), (false, false)] {
        let g = import(name, raise, fold);
        let got1 = run_rows(&g, x1.as_f32().unwrap());
        let got = run_rows(&g, &x);
        let one = agreement(&got1, &want1.to_f32(), &labels.slice(s![0..4]).to_owned().into_dyn());
        let a = agreement(&got, &want, &labels);
        println!("{name} (raise {raise}, fold {fold}): one inference {one:?}; evaluation {a:?}");
        result.get_or_insert(a);
    }
    result.unwrap()
}

#[test]
fn brevitas_po2_equals_qonnx_bit_for_bit() {
    let a = check("brevitas_mlp_po2");
    assert_eq!(a.differ, 0, "{a:?}");
    assert_eq!(a.acc.0, a.acc.1);
}

#[test]
fn brevitas_float_scales_equal_qonnx_to_float_rounding() {
    let a = check("brevitas_mlp_float");
    assert!(a.max_steps <= 1.0 + 1e-3 && a.differ * 100 <= a.n, "{a:?}");
    assert!((a.acc.0 - a.acc.1).abs() <= 0.005, "{a:?}");
}

#[test]
fn ort_qdq_equals_onnxruntime_to_float_rounding() {
    let a = check("ort_qdq_mlp");
    assert!(a.max_steps <= 1.0 + 1e-3 && a.differ * 100 <= a.n, "{a:?}");
    assert!((a.acc.0 - a.acc.1).abs() <= 0.005, "{a:?}");
}

#[test]
fn quantizers_are_kept_and_weights_folded() {
    let count = |g: &MaseGraph, f: fn(&Op) -> bool| g.nodes().filter(|(_, n)| f(&n.op)).count();
    // Raised: the weight quantizers fold into the linear weights, the activation ones stay.
    let g = import("brevitas_mlp_po2", true, true);
    assert_eq!(count(&g, |o| matches!(o, Op::Quant { .. })), 3);
    assert_eq!(count(&g, |o| matches!(o, Op::Linear { .. })), 2);
    let g = import("brevitas_mlp_po2", false, false);
    assert_eq!(count(&g, |o| matches!(o, Op::Quant { .. })), 5);
    // Raised: each linear between quantizers becomes a qlinear; the input quantizer and the
    // output dequantizer stay.
    let g = import("ort_qdq_mlp", true, true);
    assert_eq!(count(&g, |o| matches!(o, Op::QuantizeLinear { .. })), 1);
    assert_eq!(count(&g, |o| matches!(o, Op::DequantizeLinear { .. })), 1);
    assert_eq!(count(&g, |o| matches!(o, Op::Qlinear { .. })), 2);
    assert_eq!(count(&g, |o| matches!(o, Op::Linear { .. })), 0);
    let g = import("ort_qdq_mlp", false, false);
    assert_eq!(count(&g, |o| matches!(o, Op::DequantizeLinear { .. })), 7);
    // The per-channel weight dequantizer owns its scale and int8 zero point.
    let (_, n) = g
        .nodes()
        .find(|(_, n)| matches!(&n.op, Op::DequantizeLinear { codes: mase_ir::op::QuantIntType::Int8, .. }))
        .unwrap();
    let names = n.op.weight_names();
    assert_eq!(names.iter().map(|(r, _)| *r).collect::<Vec<_>>(), ["scale", "zero_point"]);
    assert_eq!(g.weights[names[0].1].shape(), [32].as_slice());
}

/// `raise_qdq` changes no output bit: the interpreter computes a qlinear as the steps it was
/// raised from, on the 360 evaluation rows.
#[test]
fn raise_qdq_keeps_every_output_bit() {
    let x = npy("eval.x.npy");
    let x = x.as_f32().unwrap();
    let raised = run_rows(&import("ort_qdq_mlp", true, true), x);
    let plain = run_rows(&import("ort_qdq_mlp", false, true), x);
    assert_eq!(raised.len(), 3600);
    assert!(raised.iter().zip(plain.iter()).all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// The model run in integers (every qlinear's exact sum and fixed-point requantisation, as its
/// hardware computes it) on the evaluation rows, with the reference tool's outputs.
fn integer_agreement(name: &str) -> Agreement {
    let g = import(name, true, true);
    assert_eq!(g.nodes().filter(|(_, n)| matches!(n.op, Op::Qlinear { .. })).count(), 2, "{name}");
    let x = npy("eval.x.npy").to_f32();
    let input = g.node(g.input_ids()[0]).name.clone();
    let mut outs = Vec::new();
    for i in (0..x.shape()[0]).step_by(4) {
        let xb = x.slice(s![i..i + 4, ..]).to_owned().into_dyn();
        let y =
            mase_ir::quant::run_quantized(&g, &HashMap::from([(input.clone(), Tensor::F32(xb))])).unwrap();
        outs.push(y[0].as_f32().unwrap().clone());
    }
    let views: Vec<_> = outs.iter().map(|a| a.view()).collect();
    let got = ndarray::concatenate(Axis(0), &views).unwrap();
    let want = npy(&format!("{name}.eval.out.y.npy")).to_f32();
    let a = agreement(&got, &want, &npy("eval.labels.npy").to_i64());
    println!("{name} integer execution: {a:?}");
    a
}

/// The QDQ model in integers against onnxruntime's float execution of the same model, and the
/// float-scale Brevitas model (its 8-bit activation quantizers split into QDQ pairs) against
/// qonnx's: at most one code apart, at least 99 % of the outputs equal, the accuracy within half
/// a point.
#[test]
fn float_scale_integer_execution_agrees_with_the_reference_tools() {
    for name in ["ort_qdq_mlp", "brevitas_mlp_float"] {
        let a = integer_agreement(name);
        assert!(a.max_steps <= 1.0 + 1e-3 && a.differ * 100 <= a.n, "{name}: {a:?}");
        assert!((a.acc.0 - a.acc.1).abs() <= 0.005, "{name}: {a:?}");
    }
}

/// The QDQ model's qlinear weights and biases keep the model's own codes on their grids: the
/// codes the unfolded import reads from the initializers (each `DequantizeLinear`'s input), with
/// that dequantizer's scales and zero points, dequantizing to the folded float weights; and a
/// checkpoint keeps them.
#[test]
fn qdq_weights_keep_the_models_codes_and_grids() {
    let g = import("ort_qdq_mlp", true, true);
    let raw = import("ort_qdq_mlp", false, false);
    // Each dequantizer of a constant in the unfolded graph: (scales, zero points, codes).
    let grids: Vec<(Vec<f32>, Vec<i64>, ArrayD<i64>)> = raw
        .nodes()
        .filter_map(|(_, n)| {
            let Op::DequantizeLinear { scale, zero_point, .. } = &n.op else { return None };
            let Op::Constant { tensor } = &raw.node(n.inputs[0]).op else { return None };
            let z = zero_point.as_ref().map(|z| raw.weights[z].to_i64().iter().copied().collect());
            let s: Vec<f32> = raw.weights[scale].to_f32().iter().copied().collect();
            Some((s.clone(), z.unwrap_or(vec![0; s.len()]), raw.weights[tensor].to_i64()))
        })
        .collect();
    let mut checked = 0;
    for (_, n) in g.nodes() {
        let Op::Qlinear { weight, bias, .. } = &n.op else { continue };
        for key in std::iter::once(weight).chain(bias) {
            let q = &g.qweights[key];
            let a = q.affine.as_ref().unwrap_or_else(|| panic!("{key} has no grid"));
            let (_, z, codes) =
                grids.iter().find(|(s, _, _)| *s == a.scale).expect("a dequantizer with these scales");
            assert_eq!(&a.zero_point, z, "{key}");
            assert_eq!(&q.codes, codes, "{key}: the model's own codes");
            assert_eq!(a.axis, 0, "{key}: scales per output channel");
            assert_eq!(&Tensor::F32(q.dequantize()), &g.weights[key], "{key}");
            assert!(q.fixed().is_none());
            checked += 1;
        }
    }
    assert_eq!(checked, 4);
    let dir = tempfile::tempdir().unwrap();
    g.export(dir.path().join("m")).unwrap();
    // The whole graph comes back: qlinear attributes (float32 scales) and the codes' grids.
    assert_eq!(MaseGraph::from_checkpoint(dir.path().join("m")).unwrap(), g);
}

/// The float-scale Brevitas model's linear weights keep their codes (QONNX `Quant` integers,
/// 4-bit) on their grids, dequantizing to the folded float weights.
#[test]
fn float_scale_qonnx_weights_keep_their_codes() {
    let g = import("brevitas_mlp_float", true, true);
    let mut checked = 0;
    for (_, n) in g.nodes() {
        let Op::Qlinear { weight, .. } = &n.op else { continue };
        let q = &g.qweights[weight];
        let a = q.affine.as_ref().unwrap_or_else(|| panic!("{weight} has no grid"));
        assert!(q.codes.iter().all(|&c| q.format.contains_code(c)), "{weight}: codes outside {:?}", q.format);
        assert!(q.codes.iter().any(|&c| c != 0));
        assert!(a.scale.len() == 1 || a.scale.len() == q.codes.shape()[a.axis], "{a:?}");
        let back = q.dequantize();
        let want = g.weights[weight].to_f32();
        // Equal values (a code 0 dequantizes to +0.0 where qonnx's float steps may give −0.0).
        assert!(back.iter().zip(want.iter()).all(|(x, y)| x == y), "{weight}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

/// The power-of-two model raised by its own quantizers (`raise_qonnx`, no calibration, no
/// configuration).
fn raised_po2() -> MaseGraph {
    let g = import("brevitas_mlp_po2", true, true);
    let (g, info) = mase_ir::pass::run_passes(g, &["raise_qonnx"], &toml::Table::new()).unwrap();
    assert_eq!(info["raise_qonnx"]["activation_quantizers"].as_u64(), Some(3), "{info:?}");
    assert_eq!(info["raise_qonnx"]["weights"].as_u64(), Some(2), "{info:?}");
    g
}

#[test]
fn raise_qonnx_formats_come_from_the_quantizers() {
    use mase_ir::fixed::{Overflow, Rounding};
    use mase_ir::quant::format_of;
    let g = raised_po2();
    assert_eq!(g.nodes().filter(|(_, n)| matches!(n.op, Op::Quant { .. })).count(), 0);
    let fmt = |id, dir: &str| {
        let m = &g.node(id).meta.common;
        let tm = if dir == "out" { m.results.get("data_out_0") } else { m.args.get(dir) };
        format_of(tm.unwrap()).unwrap()
    };
    // Input quantizer: int8, ROUND -> RND_CONV, SAT (narrow off).
    let x = fmt(g.input_ids()[0], "out");
    assert!(x.signed && x.width == 8 && x.rounding == Rounding::RndConv, "{x:?}");
    let linears: Vec<_> =
        g.nodes().filter(|(_, n)| matches!(n.op, Op::Linear { .. })).map(|(i, _)| i).collect();
    assert_eq!(linears.len(), 2);
    for &l in &linears {
        // 4-bit weights with their own codes (|code| within the 4-bit range), kept from the
        // folded weight quantizers.
        let Op::Linear { weight, .. } = &g.node(l).op else { unreachable!() };
        let w = &g.qweights[weight];
        assert_eq!(w.format.width, 4, "{:?}", w.format);
        assert!(w.codes.iter().all(|&c| (-8..=7).contains(&c)));
        assert!(w.codes.iter().any(|&c| c != 0));
        assert_eq!(fmt(l, "weight"), w.format);
        // The weights' float values are exactly their codes' values.
        let wf = g.weights[weight].as_f32().unwrap();
        assert_eq!(&w.dequantize(), wf);
    }
    // First linear: full-precision sum (its relu's quantizer is after the relu); relu: uint8.
    let relu = g.nodes().find(|(_, n)| matches!(n.op, Op::Relu)).unwrap().0;
    let r = fmt(relu, "out");
    assert!(!r.signed && r.width == 8 && r.overflow == Overflow::Sat, "{r:?}");
    assert_eq!(fmt(relu, "data_in_0"), fmt(linears[0], "out"));
    // Second linear: its output quantizer's int8 format.
    let y = fmt(linears[1], "out");
    assert!(y.signed && y.width == 8, "{y:?}");
    assert_eq!(fmt(g.output_id().unwrap(), "data_in_0"), y);
    for (id, n) in g.nodes() {
        println!("{}: {:?}", n.name, n.meta.common.results.get("data_out_0").and_then(format_of));
        let _ = id;
    }
}

#[test]
fn raise_qonnx_quantized_execution_equals_qonnx_codes() {
    let g = raised_po2();
    let y = mase_ir::quant::format_of(&g.node(g.output_id().unwrap()).meta.common.args["data_in_0"]).unwrap();
    let x = npy("eval.x.npy").to_f32();
    let want = npy("brevitas_mlp_po2.eval.out.y.npy").to_f32();
    let input = g.node(g.input_ids()[0]).name.clone();
    let step = 2f64.powi(-y.frac);
    let code = |v: f32| {
        let c = f64::from(v) / step;
        assert_eq!(c.fract(), 0.0, "{v} is not a multiple of the output scale {step}");
        c as i64
    };
    let (mut n, mut differ) = (0usize, 0usize);
    for i in (0..x.shape()[0]).step_by(4) {
        let xb = x.slice(s![i..i + 4, ..]).to_owned().into_dyn();
        let inputs = HashMap::from([(input.clone(), Tensor::F32(xb))]);
        let got = mase_ir::quant::run_quantized(&g, &inputs).unwrap();
        let got = got[0].as_f32().unwrap();
        let w = want.slice(s![i..i + 4, ..]);
        for (a, b) in got.iter().zip(w.iter()) {
            n += 1;
            differ += usize::from(code(*a) != code(*b));
        }
    }
    println!(
        "raise_qonnx brevitas_mlp_po2: {n} output codes, {differ} differ from qonnx's (output scale 2^{})",
        -y.frac
    );
    assert_eq!(n, 3600);
    assert_eq!(differ, 0);
}

#[test]
fn raise_qonnx_refuses_float_scales() {
    // Unsplit (a 4-bit or narrow quantizer stays a Quant): refused by the scale.
    let g = import("brevitas_mlp_float", false, true);
    let e = mase_ir::pass::run_passes(g, &["raise_qonnx"], &toml::Table::new()).unwrap_err().to_string();
    assert!(e.contains("not one power of two") && e.contains("requantisation path"), "{e}");
    println!("{e}");
    let g = import("ort_qdq_mlp", true, true);
    let e = mase_ir::pass::run_passes(g, &["raise_qonnx"], &toml::Table::new()).unwrap_err().to_string();
    assert!(e.contains("requantisation path"), "{e}");
    println!("{e}");
}

/// Brevitas's power-of-two transformer layer (`scripts/export_quantized_layer.py`): between its
/// quantizers, attention's matmuls, the 0.25 score scale and the residual adds get exact
/// formats (every result of the quantized inputs representable), and the layer norms' float
/// scales and shifts 16-bit formats.
#[test]
fn raise_qonnx_gives_attention_and_residuals_exact_formats() {
    use mase_ir::quant::format_of;
    let path = fixtures().join("quant_layer/brevitas_layer_po2.onnx");
    let g = import_file(&path, &ImportOptions::default()).unwrap();
    // The nodes no quantizer follows: their formats are derived.
    let derived: std::collections::HashSet<String> = g
        .nodes()
        .filter(|&(i, _)| !g.users(i).iter().any(|&u| matches!(g.node(u).op, Op::Quant { .. })))
        .map(|(_, n)| n.name.clone())
        .collect();
    let (g, _) = mase_ir::pass::run_passes(g, &["raise_qonnx"], &toml::Table::new()).unwrap();
    let fmt = |id: mase_ir::graph::NodeId| format_of(&g.node(id).meta.common.results["data_out_0"]).unwrap();
    // Largest magnitude of a code of a format, and the largest magnitude a format holds.
    let max_code = |f: &mase_ir::fixed::FixedFormat| -> i128 {
        if f.signed {
            1 << (f.width - 1)
        } else {
            (1 << f.width) - 1
        }
    };
    let holds = |f: &mase_ir::fixed::FixedFormat, m: i128| m < (1i128 << (f.width - u32::from(f.signed)));
    let of = |op: fn(&Op) -> bool| -> Vec<_> {
        g.nodes().filter(|(_, n)| op(&n.op) && derived.contains(&n.name)).map(|(i, _)| i).collect()
    };
    // q·kᵀ (scaled before its quantizer); p·v has a quantizer of its own.
    let matmuls = of(|o| matches!(o, Op::Matmul));
    assert_eq!(matmuls.len(), 1);
    for m in matmuls {
        let n = g.node(m);
        let (a, b) = (fmt(n.inputs[0]), fmt(n.inputs[1]));
        let k = *g.node(n.inputs[0]).meta.common.results["data_out_0"].shape.last().unwrap() as i128;
        let y = fmt(m);
        assert_eq!(y.frac, a.frac + b.frac, "{}", n.name);
        assert!(holds(&y, k * max_code(&a) * max_code(&b)), "{}: {y:?}", n.name);
        // Not wider than needed: one bit less would not hold the largest product sum.
        assert!(!holds(
            &mase_ir::fixed::FixedFormat { width: y.width - 1, ..y },
            k * max_code(&a) * max_code(&b)
        ));
    }
    let adds = of(|o| matches!(o, Op::Add));
    assert_eq!(adds.len(), 2);
    for a in adds {
        let n = g.node(a);
        let (p, q, y) = (fmt(n.inputs[0]), fmt(n.inputs[1]), fmt(a));
        assert_eq!(y.frac, p.frac.max(q.frac));
        let m = (max_code(&p) << (y.frac - p.frac)) + (max_code(&q) << (y.frac - q.frac));
        assert!(holds(&y, m), "{}: {y:?}", n.name);
    }
    let norms: Vec<_> =
        g.nodes().filter(|(_, n)| matches!(n.op, Op::LayerNorm { .. })).map(|(i, _)| i).collect();
    assert_eq!(norms.len(), 2);
    for ln in norms {
        let Op::LayerNorm { weight: Some(w), bias: Some(b), .. } = &g.node(ln).op else {
            panic!("affine layer norm")
        };
        for key in [w, b] {
            let q = &g.qweights[key];
            assert_eq!((q.format.width, q.format.signed), (16, true), "{key}");
            // Within half a step of the float values (none saturates at the chosen fraction).
            let step = 2f32.powi(-q.format.frac);
            for (v, d) in g.weights[key].to_f32().iter().zip(q.dequantize().iter()) {
                assert!((v - d).abs() <= step / 2.0, "{key}: {v} -> {d}");
            }
        }
    }
}
