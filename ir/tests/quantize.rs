//! The `quantize` and `auto_precision` passes, quantized execution and accuracy metrics, on
//! hand-built graphs and on the importer's fixtures.

mod fixed_model;
mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_ir::fixed::{cast_code, from_f64, FixedFormat, Overflow, Rounding};
use mase_ir::metadata::ValueType;
use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::pass::{find_pass, run_pass, PassInfo};
use mase_ir::passes::add_common_metadata::add_common_metadata;
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use mase_ir::quant::{
    self, accuracy, format_of, run_quantized, run_quantized_values, AccuracyReport, QValue,
};
use mase_ir::{MaseGraph, Op, Tensor};
use num_bigint::BigInt;
use num_rational::BigRational;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{mlp, rand_tensor};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn toml(s: &str) -> toml::Table {
    s.parse().unwrap()
}

fn quantize(g: MaseGraph, cfg: &toml::Table) -> mase_ir::Result<(MaseGraph, PassInfo)> {
    run_pass(find_pass("quantize").unwrap(), g, cfg)
}

fn int8_config() -> toml::Table {
    toml(&std::fs::read_to_string(root().join("examples/quantize_int8.toml")).unwrap())
}

fn fmt_of(g: &MaseGraph, node: &str, which: &str, key: &str) -> Option<FixedFormat> {
    let n = g.node(g.find(node).unwrap());
    let m = if which == "args" { &n.meta.common.args } else { &n.meta.common.results };
    m.get(key).and_then(format_of)
}

fn names(info: &PassInfo, key: &str) -> Vec<String> {
    info[key].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

fn input(seed: u64) -> HashMap<String, Tensor> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    HashMap::from([("x".to_string(), rand_tensor(&mut rng, &[4, 16], 2.0))])
}

#[test]
fn int8_example_by_type_sets_formats_and_quantizes_weights() {
    let (g, info) = quantize(mlp(1), &int8_config()).unwrap();
    let cfg = int8_config();
    let lin = cfg["linear"]["config"].as_table().unwrap();
    let get = |k: &str| lin[k].as_integer().unwrap();
    for fc in ["fc1", "fc2"] {
        let w = fmt_of(&g, fc, "args", "weight").unwrap();
        assert_eq!(w.precision(), [get("weight_width"), get("weight_frac_width")]);
        assert_eq!((w.rounding, w.overflow), (Rounding::RndConv, Overflow::Sat));
        let d = fmt_of(&g, fc, "args", "data_in_0").unwrap();
        assert_eq!(d.precision(), [get("data_in_width"), get("data_in_frac_width")]);
        assert_eq!((d.rounding, d.overflow), (Rounding::Trn, Overflow::Sat));
        let o = fmt_of(&g, fc, "results", "data_out_0").unwrap();
        assert_eq!(o.precision(), [get("data_out_width"), get("data_out_frac_width")]);
        let n = g.node(g.find(fc).unwrap());
        assert_eq!(n.meta.common.args["weight"].ty, ValueType::Fixed);
        // every weight code is the exact cast of the float weight
        for role in ["weight", "bias"] {
            let key = format!("{fc}.{role}");
            let q = &g.qweights[&key];
            let f = g.weights[&key].as_f32().unwrap();
            assert_eq!(q.format, fmt_of(&g, fc, "args", role).unwrap());
            for (c, x) in q.codes.iter().zip(f.iter()) {
                assert_eq!(
                    *c,
                    fixed_model::cast_i64(&fixed_model::f64_value(f64::from(*x)).unwrap(), &q.format)
                );
            }
        }
    }
    // placeholder takes fc1's data_in, reshape and output carry their producer's format
    assert_eq!(fmt_of(&g, "x", "results", "data_out_0"), fmt_of(&g, "fc1", "args", "data_in_0"));
    assert_eq!(fmt_of(&g, "view", "results", "data_out_0"), fmt_of(&g, "relu", "results", "data_out_0"));
    assert_eq!(fmt_of(&g, "output", "args", "data_in_0"), fmt_of(&g, "fc2", "results", "data_out_0"));
    assert_eq!(names(&info, "quantized"), ["fc1", "relu", "fc2"]);
    assert_eq!(names(&info, "carried"), ["x", "view", "output"]);
    assert!(names(&info, "untouched").is_empty());
    assert_eq!(info["by"], "type");
}

#[test]
fn na_and_unmatched_nodes_stay_float_and_are_listed() {
    let cfg = toml(
        r#"
by = "name"
[fc1.config]
name = "integer"
data_in_width = 8
data_in_frac_width = 4
weight_width = 8
weight_frac_width = 6
bias_width = 8
bias_frac_width = 6
[relu.config]
name = "NA"
"#,
    );
    let (g, info) = quantize(mlp(2), &cfg).unwrap();
    assert_eq!(names(&info, "quantized"), ["fc1"]);
    assert!(names(&info, "untouched").contains(&"relu".to_string()));
    assert!(names(&info, "untouched").contains(&"fc2".to_string()));
    assert_eq!(info["na"]["relu"], "relu");
    assert_eq!(g.node(g.find("fc2").unwrap()).meta.common.args["weight"].ty, ValueType::Float);
    assert!(!g.qweights.contains_key("fc2.weight"));
    // data_out defaults to the data_in format
    assert_eq!(fmt_of(&g, "fc1", "results", "data_out_0").unwrap().precision(), [8, 4]);
}

#[test]
fn config_mistakes_are_errors_naming_the_key() {
    // (config, what its error must name)
    let cases: &[(&str, &[&str])] = &[
        ("by = \"name\"\n[fc_1.config]\nname = \"NA\"\n", &["fc_1", "fc1"]),
        ("by = \"regex_name\"\n[\"conv.*\".config]\nname = \"NA\"\n", &["conv.*", "matches no node"]),
        (
            "by = \"regex_name\"\n[\"fc.*\".config]\nname = \"NA\"\n[\"fc1\".config]\nname = \"NA\"\n",
            &["two regexes", "fc1"],
        ),
        ("by = \"type\"\n[conv2d.config]\nname = \"NA\"\n", &["conv2d", "layer_norm"]),
        (
            "[linear.config]\nname = \"integer\"\ndata_in_width = 0\ndata_in_frac_width = 0\n",
            &["[linear.config]", "data_in_width = 0"],
        ),
        (
            "[linear.config]\nname = \"integer\"\nweight_width = 65\nweight_frac_width = 0\n",
            &["weight_width = 65"],
        ),
        ("[relu.config]\nname = \"integer\"\nrounding = \"ROUND\"\n", &["[relu.config]", "RND_CONV"]),
        ("[relu.config]\nname = \"integer\"\noverflow = \"CLIP\"\n", &["SAT_SYM"]),
        ("[relu.config]\nname = \"integer\"\ndata_in_widht = 8\n", &["data_in_widht"]),
        ("[relu.config]\nname = \"int8\"\n", &["int8", "NA"]),
        // a linear node needs weight formats
        (
            "[linear.config]\nname = \"integer\"\ndata_in_width = 8\ndata_in_frac_width = 4\n",
            &["fc1", "weight_width"],
        ),
        ("by = \"size\"\n", &["regex_name"]),
    ];
    for (config, parts) in cases {
        let e = quantize(mlp(3), &toml(config)).unwrap_err().to_string();
        for part in *parts {
            assert!(e.contains(part), "{config:?}: `{part}` not in: {e}");
        }
    }
}

#[test]
fn absent_type_is_a_warning() {
    let cfg = toml("[softmax.config]\nname = \"integer\"\ndata_in_width = 8\ndata_in_frac_width = 4\n");
    let (_, info) = quantize(mlp(4), &cfg).unwrap();
    let w = names(&info, "warnings");
    assert!(w.iter().any(|m| m.contains("softmax")), "{w:?}");
}

#[test]
fn overflowing_weights_are_reported() {
    let mut g = mlp(5);
    // make three weights of fc1 too large for [-1, 1)
    if let Some(Tensor::F32(a)) = g.weights.get_mut("fc1.weight") {
        a[[0, 0]] = 3.0;
        a[[1, 1]] = -5.0;
        a[[2, 2]] = 1.0;
    }
    let base = "[linear.config]\nname = \"integer\"\ndata_in_width = 8\ndata_in_frac_width = 4\n\
                weight_width = 8\nweight_frac_width = 7\nbias_width = 8\nbias_frac_width = 7\n";
    let (g2, info) = quantize(g.clone(), &toml(&format!("{base}weight_overflow = \"WRAP\"\n"))).unwrap();
    assert_eq!(info["wrapped"]["fc1.weight"], 3);
    let w = names(&info, "warnings");
    assert!(
        w.iter().any(|m| m.starts_with("warning") && m.contains("fc1") && m.contains("3 of 128")),
        "{w:?}"
    );
    // the wrapped codes are the low 8 bits: 3.0 → 384 → -128 ; -5.0 → -640 → -128; 1.0 → 128 → -128
    let q = &g2.qweights["fc1.weight"].codes;
    assert_eq!([q[[0, 0]], q[[1, 1]], q[[2, 2]]], [-128, -128, -128]);
    let (g3, info) = quantize(g, &toml(base)).unwrap();
    assert_eq!(info["clipped"]["fc1.weight"], 3);
    let q = &g3.qweights["fc1.weight"].codes;
    assert_eq!([q[[0, 0]], q[[1, 1]], q[[2, 2]]], [127, -128, 127]);
}

#[test]
fn needs_common_metadata() {
    let mut g = MaseGraph::new("bare");
    let x = g.add_node("x", Op::Placeholder, vec![]).unwrap();
    let r = g.add_node("relu", Op::Relu, vec![x]).unwrap();
    g.add_node("output", Op::Output, vec![r]).unwrap();
    let e = quantize(g, &int8_config()).unwrap_err().to_string();
    assert!(e.contains("add_common_metadata"), "{e}");
}

#[test]
fn flow_config_table_is_the_same_config() {
    let flow = toml(&format!(
        "[passes.quantize]\n{}",
        std::fs::read_to_string(root().join("examples/quantize_int8.toml"))
            .unwrap()
            .lines()
            .map(|l| match l.strip_prefix('[') {
                Some(rest) => format!("[passes.quantize.{rest}"),
                None => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    ));
    let t = quant::config::quantize_table_from_flow(&flow).unwrap();
    assert_eq!(t, int8_config());
    assert!(quant::config::quantize_table_from_flow(&toml("[passes]\n")).is_err());
}

/// The exact value of fc(x) for one output element, from the codes, in rationals.
fn linear_model(x: &[i64], fx: i32, w: &[i64], fw: i32, b: i64, fb: i32) -> BigRational {
    let mut acc = fixed_model::value(b as i128, fb);
    for (a, c) in x.iter().zip(w) {
        acc += fixed_model::value(*a as i128, fx) * fixed_model::value(*c as i128, fw);
    }
    acc
}

/// fc1's quantized outputs equal the exact rational model of its integer codes, each output
/// channel at its own weight fraction (per-channel weights) or the tensor's; fc1's codes and
/// format.
fn assert_fc1_exact<'v>(
    g: &MaseGraph,
    vals: &'v [QValue],
    inp: &HashMap<String, Tensor>,
) -> (&'v ndarray::ArrayD<i64>, FixedFormat) {
    let QValue::Fixed { codes: y, format: yf } = &vals[g.find("fc1").unwrap().0] else {
        panic!("fc1 is fixed")
    };
    let xf = fmt_of(g, "fc1", "args", "data_in_0").unwrap();
    let xq: Vec<i64> = inp["x"].as_f32().unwrap().iter().map(|v| from_f64(f64::from(*v), &xf)).collect();
    let (w, b) = (&g.qweights["fc1.weight"], &g.qweights["fc1.bias"]);
    for r in 0..4 {
        for o in 0..8 {
            let wrow: Vec<i64> = (0..16).map(|i| w.codes[[o, i]]).collect();
            let x = &xq[r * 16..(r + 1) * 16];
            let exact = linear_model(x, xf.frac, &wrow, w.frac_of_row(o), b.codes[[o]], b.format.frac);
            assert_eq!(y[[r, o]], fixed_model::cast_i64(&exact, yf), "row {r} out {o}");
        }
    }
    (y, *yf)
}

#[test]
fn quantized_execution_is_integer_exact_for_linear_layers() {
    let (g, _) = quantize(mlp(6), &int8_config()).unwrap();
    let inp = input(7);
    let vals = run_quantized_values(&g, &inp).unwrap();
    let (y, yf) = assert_fc1_exact(&g, &vals, &inp);
    // relu is exact on the codes: max(code, 0) cast into its data_out
    let relu = g.find("relu").unwrap();
    let QValue::Fixed { codes: rc, format: rf } = &vals[relu.0] else { panic!("relu is fixed") };
    let rin = fmt_of(&g, "relu", "args", "data_in_0").unwrap();
    for (out, inp) in rc.iter().zip(y.iter()) {
        let c = cast_code(*inp as i128, yf.frac, &rin).max(0);
        assert_eq!(*out, cast_code(c as i128, rin.frac, rf));
    }
    // the returned outputs are the dequantized codes of fc2
    let outs = run_quantized(&g, &inp).unwrap();
    let QValue::Fixed { codes: y2, format: f2 } = &vals[g.find("fc2").unwrap().0] else { panic!() };
    let want: Vec<f32> = y2.iter().map(|c| mase_ir::fixed::to_f64(*c, f2) as f32).collect();
    assert_eq!(outs[0].as_f32().unwrap().iter().copied().collect::<Vec<_>>(), want);
}

#[test]
fn unquantized_graph_runs_as_float() {
    let g = mlp(8);
    let inp = input(9);
    let q = run_quantized(&g, &inp).unwrap();
    let f = mase_ir::interp::run_outputs(&g, &inp).unwrap();
    assert_eq!(q, f);
}

#[test]
fn accuracy_figures() {
    let f = Tensor::from_f32(&[2, 3], vec![1.0, 2.0, 3.0, 0.0, -1.0, 0.5]).unwrap();
    let q = Tensor::from_f32(&[2, 3], vec![1.0, 2.5, 3.0, 0.0, 1.0, 0.5]).unwrap();
    let labels = Tensor::from_i64(&[2], vec![2, 2]).unwrap();
    let r = accuracy(std::slice::from_ref(&f), std::slice::from_ref(&q), Some(&labels)).unwrap();
    let (fa, qa) = (f.to_f32(), q.to_f32());
    let d: Vec<f64> = fa.iter().zip(qa.iter()).map(|(a, b)| f64::from(b - a).abs()).collect();
    assert_eq!(r.max_abs_error, d.iter().cloned().fold(0.0, f64::max));
    assert!((r.mean_abs_error - d.iter().sum::<f64>() / 6.0).abs() < 1e-12);
    let dot: f64 = fa.iter().zip(qa.iter()).map(|(a, b)| f64::from(a * b)).sum();
    let n = |x: &ndarray::ArrayD<f32>| x.iter().map(|v| f64::from(v * v)).sum::<f64>().sqrt();
    assert!((r.cosine - dot / (n(&fa) * n(&qa))).abs() < 1e-12);
    // row 0: argmax 2 vs 2; row 1: argmax 2 (0.5) vs 1 (1.0)
    assert_eq!(r.argmax_agreement, 0.5);
    assert_eq!((r.float_accuracy, r.quantized_accuracy), (Some(1.0), Some(0.5)));
    let j = serde_json::to_value(&r).unwrap();
    for k in [
        "max_abs_error",
        "mean_abs_error",
        "cosine",
        "argmax_agreement",
        "float_accuracy",
        "quantized_accuracy",
    ] {
        assert!(j.get(k).is_some(), "{k} missing from {j}");
    }
    let bad = Tensor::from_i64(&[2], vec![0, 3]).unwrap();
    let e = accuracy(std::slice::from_ref(&f), std::slice::from_ref(&q), Some(&bad)).unwrap_err();
    assert!(e.to_string().contains("label 3"), "{e}");
    assert!(accuracy(&[f], &[], None).is_err());
}

fn frac_ok(lo: f64, hi: f64, width: u32, f: i32) -> bool {
    let s = 2f64.powi(f);
    let m = (1i64 << (width - 1)) as f64;
    hi * s <= m - 1.0 && lo * s >= -m
}

#[test]
fn auto_precision_picks_the_largest_fraction_that_fits() {
    let g = mlp(10);
    let samples: Vec<_> = (0..4).map(|s| input(100 + s)).collect();
    let g = software_stats(g, &samples, &StatsOptions::default()).unwrap();
    let args = toml("width = 8\nweight_width = 6\n");
    let (g2, info) = run_pass(find_pass("auto_precision").unwrap(), g.clone(), &args).unwrap();
    for name in ["x", "fc1", "relu", "fc2"] {
        let n = g2.node(g2.find(name).unwrap());
        let r = g.node(g.find(name).unwrap()).meta.software.results["data_out_0"].stat.range_min_max.unwrap();
        let f = format_of(&n.meta.common.results["data_out_0"]).unwrap();
        assert_eq!(f.width, 8);
        assert!(frac_ok(r.min, r.max, 8, f.frac) && !frac_ok(r.min, r.max, 8, f.frac + 1), "{name}: {f}");
        assert_eq!(info["precision"][name]["data_out_0"], serde_json::json!([8, f.frac]));
    }
    for key in ["fc1.weight", "fc2.weight", "fc1.bias"] {
        let q = &g2.qweights[key];
        let a = g.weights[key].as_f32().unwrap();
        let (lo, hi) = a.iter().fold((0f64, 0f64), |(l, h), &x| (l.min(x.into()), h.max(x.into())));
        assert_eq!(q.format.width, 6);
        assert!(frac_ok(lo, hi, 6, q.format.frac) && !frac_ok(lo, hi, 6, q.format.frac + 1));
    }
    assert!(info["clipped"].as_object().unwrap().is_empty(), "weights never clip: {}", info["clipped"]);
    // on calibration data nothing saturates: the quantized run stays close to float
    let qo = run_quantized(&g2, &samples[0]).unwrap();
    let fo = mase_ir::interp::run_outputs(&g, &samples[0]).unwrap();
    let rep = accuracy(&fo, &qo, None).unwrap();
    assert!(rep.cosine > 0.98, "{rep:?}");
    // errors: no width, bad range, no statistics
    let e =
        run_pass(find_pass("auto_precision").unwrap(), g.clone(), &toml("range = \"min_max\"")).unwrap_err();
    assert!(e.to_string().contains("width"), "{e}");
    let e =
        run_pass(find_pass("auto_precision").unwrap(), g, &toml("width = 8\nrange = \"p99\"")).unwrap_err();
    assert!(e.to_string().contains("n_sigma"), "{e}");
    let e = run_pass(find_pass("auto_precision").unwrap(), mlp(11), &toml("width = 8")).unwrap_err();
    assert!(e.to_string().contains("add_software_metadata"), "{e}");
}

fn fixture(name: &str) -> PathBuf {
    root().join(format!("tests/fixtures/{name}.onnx"))
}

/// A fixture (required: made by scripts/make_fixtures.py) with common metadata, its float input and extra seeded calibration inputs drawn
/// like it (standard normal via Box-Muller).
type Fixture = (MaseGraph, HashMap<String, Tensor>, Vec<HashMap<String, Tensor>>);

fn load_fixture(name: &str, input: &str, n_calib: usize) -> Fixture {
    let path = fixture(name);
    assert!(path.exists(), "{} is missing: run scripts/make_fixtures.py", path.display());
    let mut g = import_file(&path, &ImportOptions::default()).unwrap();
    add_common_metadata(&mut g).unwrap();
    let x = mase_ir::npy::read_npy(root().join(format!("tests/fixtures/{name}.in.{input}.npy"))).unwrap();
    let shape = x.shape().to_vec();
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let calib = (0..n_calib)
        .map(|_| {
            let n: usize = shape.iter().product();
            let v: Vec<f32> = (0..n)
                .map(|_| {
                    let (u1, u2): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen_range(0.0..1.0));
                    ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
                })
                .collect();
            HashMap::from([(input.to_string(), Tensor::from_f32(&shape, v).unwrap())])
        })
        .collect();
    (g, HashMap::from([(input.to_string(), x)]), calib)
}

/// The accuracy of `q` (quantized `g`) against `g`'s float run on `test`, printed under `label`.
fn quantized_vs_float(
    g: &MaseGraph,
    q: &MaseGraph,
    test: &HashMap<String, Tensor>,
    label: &str,
) -> AccuracyReport {
    let fo = mase_ir::interp::run_outputs(g, test).unwrap();
    let r = accuracy(&fo, &run_quantized(q, test).unwrap(), None).unwrap();
    println!("{label} on the fixture input: {}", serde_json::to_string(&r).unwrap());
    r
}

#[test]
fn mlp_fixture_at_8_bits_with_auto_precision() {
    let (g, test, calib) = load_fixture("mlp_gemm_relu", "x", 16);
    let g = software_stats(g, &calib, &StatsOptions::default()).unwrap();
    let (q, _) = run_pass(find_pass("auto_precision").unwrap(), g.clone(), &toml("width = 8")).unwrap();
    let r = quantized_vs_float(&g, &q, &test, "mlp_gemm_relu 8-bit auto_precision(min_max)");
    assert!(r.cosine > 0.95, "{r:?}");
    // figures also for the int8 example config
    let (q8, _) = quantize(g.clone(), &int8_config()).unwrap();
    quantized_vs_float(&g, &q8, &test, "mlp_gemm_relu examples/quantize_int8.toml");
}

/// An encoder fixture quantized by auto_precision at 16 bits and by examples/quantize_int16.toml:
/// everything with a float result is quantized, and both reach cosine 0.999 against float.
fn encoder_at_16_bits_reaches_cosine_0999(name: &str) {
    let (g, test, calib) = load_fixture(name, "hidden_states", 4);
    let g = software_stats(g, &calib, &StatsOptions::default()).unwrap();
    let (q, info) = run_pass(find_pass("auto_precision").unwrap(), g.clone(), &toml("width = 16")).unwrap();
    println!(
        "{name} auto_precision: {} quantized, {} carried, untouched: {:?}",
        names(&info, "quantized").len(),
        names(&info, "carried").len(),
        names(&info, "untouched")
    );
    assert!(names(&info, "untouched").iter().all(|n| {
        let id = q.find(n).unwrap();
        !mase_ir::quant::plan::has_float_result(&q, id)
            || matches!(q.node(id).op, Op::Shape { .. } | Op::Cast { .. })
    }));
    let r = quantized_vs_float(&g, &q, &test, &format!("{name} 16-bit auto_precision(min_max)"));
    assert!(r.cosine >= 0.999, "{r:?}");
    let (q16, _) = quantize(
        g.clone(),
        &toml(&std::fs::read_to_string(root().join("examples/quantize_int16.toml")).unwrap()),
    )
    .unwrap();
    let r16 = quantized_vs_float(&g, &q16, &test, &format!("{name} examples/quantize_int16.toml"));
    assert!(r16.cosine >= 0.999, "{r16:?}");
}

#[test]
fn encoder_fixture_at_16_bits_reaches_cosine_0999() {
    encoder_at_16_bits_reaches_cosine_0999("encoder_layer");
}

#[test]
fn two_layer_encoder_fixture_at_16_bits_reaches_cosine_0999() {
    encoder_at_16_bits_reaches_cosine_0999("encoder_2layer");
}

#[test]
fn rational_model_agrees_on_a_product() {
    // sanity of the helper used above: 0.5 * 0.25 + 1 = 1.125
    let v = linear_model(&[2], 2, &[1], 2, 1, 0);
    assert_eq!(v, BigRational::new(BigInt::from(9), BigInt::from(8)));
}

#[test]
fn per_channel_weights_use_each_rows_own_fraction_exactly() {
    let cfg = toml(
        "[default.config]\nname = \"integer\"\ndata_in_width = 8\ndata_in_frac_width = 4\n\
         weight_width = 6\nweight_granularity = \"per_channel\"\nbias_width = 8\nbias_frac_width = 5\n",
    );
    let mut g = mlp(6);
    // Channel 0 of fc1 an order of magnitude larger than the rest, as in pretrained layers.
    if let Some(Tensor::F32(w)) = g.weights.get_mut("fc1.weight") {
        w.index_axis_mut(ndarray::Axis(0), 0).mapv_inplace(|v| v * 10.0);
    }
    let (g, _) = quantize(g, &cfg).unwrap();
    let w = &g.qweights["fc1.weight"];
    let fracs = w.channel_frac.clone().expect("per-channel fractions");
    assert!(fracs[0] < fracs[1], "the large channel gets the coarser fraction: {fracs:?}");
    assert_eq!(w.format.frac, *fracs.iter().max().unwrap());
    // The node's declared weight format is the finest fraction.
    assert_eq!(fmt_of(&g, "fc1", "args", "weight").unwrap().frac, w.format.frac);
    let inp = input(7);
    let vals = run_quantized_values(&g, &inp).unwrap();
    assert_fc1_exact(&g, &vals, &inp);
    // A fraction given with per-channel weights is an error naming the table.
    let bad = toml("[default.config]\nname = \"integer\"\nweight_width = 6\nweight_frac_width = 3\nweight_granularity = \"per_channel\"\n");
    let e = quantize(mlp(6), &bad).unwrap_err().to_string();
    assert!(e.contains("[default.config]") && e.contains("weight_frac_width"), "{e}");
}
