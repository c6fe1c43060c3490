//! Tests of the metadata and basic passes on hand-built graphs: shape propagation, software
//! statistics against independently computed values, dropout removal, op counting, and
//! validation of recorded shapes.

use std::collections::HashMap;

use mase_ir::metadata::{MaseType, Stats, TensorMeta, ValueType};
use mase_ir::pass::{find_pass, run_pass, run_passes, PassArgs};
use mase_ir::passes::add_software_metadata::{software_stats, StatsOptions};
use mase_ir::tensor::Tensor;
use mase_ir::{MaseGraph, NodeId, Op};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A float tensor of uniform random values in [-2, 2).
fn random(rng: &mut ChaCha8Rng, shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_f32(shape, (0..n).map(|_| rng.gen_range(-2.0f32..2.0)).collect()).unwrap()
}

/// Adds a float placeholder with a declared shape.
fn input(g: &mut MaseGraph, name: &str, shape: &[usize]) -> NodeId {
    let id = g.add_node(name, Op::Placeholder, vec![]).unwrap();
    g.node_mut(id).meta.common.results.insert(
        "data_out_0".into(),
        TensorMeta { ty: ValueType::Float, precision: vec![32], shape: shape.to_vec(), ..Default::default() },
    );
    id
}

const BATCH: usize = 2;
const IN: usize = 3;
const HID: usize = 4;
const OUT: usize = 2;

/// x[BATCH, IN] → fc1 (bias) → relu → dropout → fc2 (no bias) → output.
fn mlp() -> MaseGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut g = MaseGraph::new("mlp");
    let x = input(&mut g, "x", &[BATCH, IN]);
    g.weights.insert("fc1.weight".into(), random(&mut rng, &[HID, IN]));
    g.weights.insert("fc1.bias".into(), random(&mut rng, &[HID]));
    g.weights.insert("fc2.weight".into(), random(&mut rng, &[OUT, HID]));
    let fc1 = g
        .add_node("fc1", Op::Linear { weight: "fc1.weight".into(), bias: Some("fc1.bias".into()) }, vec![x])
        .unwrap();
    let relu = g.add_node("relu", Op::Relu, vec![fc1]).unwrap();
    let drop = g.add_node("dropout", Op::Dropout { ratio: 0.1 }, vec![relu]).unwrap();
    let fc2 = g.add_node("fc2", Op::Linear { weight: "fc2.weight".into(), bias: None }, vec![drop]).unwrap();
    g.add_node("output", Op::Output, vec![fc2]).unwrap();
    g.validate().unwrap();
    g
}

fn run(g: MaseGraph, pass: &str) -> (MaseGraph, mase_ir::pass::PassInfo) {
    run_pass(find_pass(pass).unwrap(), g, &PassArgs::new()).unwrap()
}

fn meta<'a>(g: &'a MaseGraph, node: &str) -> &'a mase_ir::metadata::CommonMeta {
    &g.node(g.find(node).unwrap()).meta.common
}

#[test]
fn every_pass_is_registered() {
    for name in
        ["init_metadata", "add_common_metadata", "add_software_metadata", "remove_dropout", "count_ops"]
    {
        let p = find_pass(name).unwrap();
        assert_eq!(p.name(), name);
        assert!(!p.description().is_empty());
    }
}

#[test]
fn add_common_metadata_propagates_shapes_and_types() {
    let (g, info) = run(mlp(), "add_common_metadata");
    assert_eq!(info["nodes"], g.len());
    let w1 = g.weights["fc1.weight"].shape().to_vec();
    let w2 = g.weights["fc2.weight"].shape().to_vec();
    let fc1 = meta(&g, "fc1");
    assert_eq!(fc1.mase_op, "linear");
    assert_eq!(fc1.mase_type, MaseType::Module);
    let keys: Vec<&str> = fc1.args.keys().map(String::as_str).collect();
    assert_eq!(keys, ["data_in_0", "weight", "bias"]);
    assert_eq!(fc1.args["data_in_0"].shape, [BATCH, IN]);
    assert_eq!(fc1.args["weight"].shape, w1);
    assert_eq!(fc1.args["bias"].shape, [w1[0]]);
    // y = x · Wᵀ: the last dimension becomes W's first.
    assert_eq!(fc1.results["data_out_0"].shape, [BATCH, w1[0]]);
    assert_eq!(fc1.results["data_out_0"].ty, ValueType::Float);
    assert_eq!(fc1.results["data_out_0"].precision, [32]);
    let relu = meta(&g, "relu");
    assert_eq!(relu.mase_type, MaseType::ModuleRelatedFunc);
    assert_eq!(relu.args["data_in_0"].shape, relu.results["data_out_0"].shape);
    let fc2 = meta(&g, "fc2");
    assert_eq!(fc2.args.keys().map(String::as_str).collect::<Vec<_>>(), ["data_in_0", "weight"]);
    assert_eq!(fc2.results["data_out_0"].shape, [BATCH, w2[0]]);
    let out = meta(&g, "output");
    assert_eq!(out.args["data_in_0"].shape, [BATCH, w2[0]]);
    assert_eq!(meta(&g, "x").results["data_out_0"].shape, [BATCH, IN]);
    g.validate().unwrap();
}

#[test]
fn add_common_metadata_through_views_and_integer_tensors() {
    let dims = [2usize, 3, 5];
    let perm = [0usize, 2, 1];
    let mut g = MaseGraph::new("views");
    let x = input(&mut g, "x", &dims);
    let t = g.add_node("t", Op::Transpose { perm: perm.to_vec() }, vec![x]).unwrap();
    let r = g.add_node("r", Op::Reshape { shape: vec![0, -1] }, vec![t]).unwrap();
    let s = g.add_node("s", Op::Shape { start: 0, end: None }, vec![r]).unwrap();
    g.add_node("output", Op::Output, vec![r, s]).unwrap();
    let (g, _) = run(g, "add_common_metadata");
    let permuted: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    assert_eq!(meta(&g, "t").results["data_out_0"].shape, permuted);
    assert_eq!(meta(&g, "t").mase_type, MaseType::ImplicitFunc);
    let flat = vec![permuted[0], permuted[1] * permuted[2]];
    assert_eq!(meta(&g, "r").results["data_out_0"].shape, flat);
    // The shape of a rank-2 tensor is a 1-D i64 tensor of 2 elements: type NA.
    let sm = &meta(&g, "s").results["data_out_0"];
    assert_eq!(
        (sm.ty, sm.shape.as_slice(), sm.precision.as_slice()),
        (ValueType::Integer, &[flat.len()][..], &[64][..])
    );
    let out = meta(&g, "output");
    assert_eq!(out.args["data_in_1"].ty, ValueType::Integer);
}

#[test]
fn add_common_metadata_needs_input_shapes() {
    let mut g = MaseGraph::new("noshape");
    let x = g.add_node("tokens", Op::Placeholder, vec![]).unwrap();
    g.add_node("output", Op::Output, vec![x]).unwrap();
    let err =
        run_pass(find_pass("add_common_metadata").unwrap(), g, &PassArgs::new()).unwrap_err().to_string();
    assert!(err.contains("tokens") && err.contains("--input-shape"), "{err}");
}

#[test]
fn add_common_metadata_keeps_fixed_formats() {
    let (mut g, _) = run(mlp(), "add_common_metadata");
    let id = g.find("relu").unwrap();
    let fixed = TensorMeta {
        ty: ValueType::Fixed,
        precision: vec![8, 4],
        shape: g.node(id).meta.common.results["data_out_0"].shape.clone(),
        ..Default::default()
    };
    g.node_mut(id).meta.common.results.insert("data_out_0".into(), fixed.clone());
    g.node_mut(id)
        .meta
        .common
        .args
        .insert("data_in_0".into(), TensorMeta { shape: vec![BATCH, HID], ..fixed.clone() });
    let (g, _) = run(g, "add_common_metadata");
    assert_eq!(meta(&g, "relu").results["data_out_0"], fixed);
    assert_eq!(meta(&g, "relu").args["data_in_0"].precision, [8, 4]);
    // A neighbour keeps its float type.
    assert_eq!(meta(&g, "fc1").results["data_out_0"].ty, ValueType::Float);
}

#[test]
fn init_metadata_resets_but_keeps_input_shapes() {
    let (g, _) = run(mlp(), "add_common_metadata");
    let g = software_stats(
        g,
        &[HashMap::from([("x".to_string(), Tensor::zeros_f32(&[BATCH, IN]))])],
        &Default::default(),
    )
    .unwrap();
    let (g, info) = run(g, "init_metadata");
    assert_eq!(info["nodes"], g.len());
    for (_, n) in g.nodes() {
        assert_eq!(n.meta.common.mase_op, n.op.mase_op());
        assert_eq!(n.meta.common.mase_type, n.op.mase_type());
        assert!(n.meta.common.args.is_empty(), "{}", n.name);
        assert!(n.meta.software.results.is_empty() && n.meta.software.args.is_empty());
        assert_eq!(n.meta.hardware.device_id, -1);
        if matches!(n.op, Op::Placeholder) {
            assert_eq!(n.meta.common.results["data_out_0"].shape, [BATCH, IN]);
        } else {
            assert!(n.meta.common.results.is_empty());
        }
    }
    // And the shapes can be propagated again.
    run(g, "add_common_metadata");
}

/// Independently computed statistics of `v` (see the pass documentation for definitions).
struct Expected {
    mean: f64,
    var: f64,
    min: f64,
    max: f64,
    q_lo: f64,
    q_hi: f64,
}

fn expected(v: &[f32], quantile: f64) -> Expected {
    let x: Vec<f64> = v.iter().map(|&a| a as f64).collect();
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n;
    let mut s = x.clone();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // numpy's "linear" quantile.
    let q = |p: f64| {
        let h = (s.len() - 1) as f64 * p;
        let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
        s[lo] + (h - lo as f64) * (s[hi] - s[lo])
    };
    Expected { mean, var, min: s[0], max: s[s.len() - 1], q_lo: q(1.0 - quantile), q_hi: q(quantile) }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

fn check_stats(st: &Stats, values: &[f32], opts: &StatsOptions) {
    let e = expected(values, opts.quantile);
    let count = values.len() as u64;
    let on = st.variance_online.unwrap();
    let pr = st.variance_precise.unwrap();
    assert_eq!((on.count, pr.count), (count, count));
    assert!(close(on.mean, e.mean) && close(on.variance, e.var), "{on:?} vs {} {}", e.mean, e.var);
    assert!(close(pr.mean, e.mean) && close(pr.variance, e.var), "{pr:?} vs {} {}", e.mean, e.var);
    let mm = st.range_min_max.unwrap();
    assert_eq!((mm.min, mm.max, mm.count), (e.min, e.max, count));
    let q = st.range_quantile.unwrap();
    assert!(close(q.min, e.q_lo) && close(q.max, e.q_hi), "{q:?} vs {} {}", e.q_lo, e.q_hi);
    let ns = st.range_n_sigma.unwrap();
    let sd = e.var.sqrt();
    assert!(close(ns.min, e.mean - opts.n_sigma * sd) && close(ns.max, e.mean + opts.n_sigma * sd));
}

/// x → relu → mul by 0.5 → output, with `n` random samples of x.
fn relu_graph(n: usize) -> (MaseGraph, Vec<HashMap<String, Tensor>>) {
    let shape = [4usize, 8];
    let mut g = MaseGraph::new("relu");
    let x = input(&mut g, "x", &shape);
    let r = g.add_node("relu", Op::Relu, vec![x]).unwrap();
    let m = g.add_node("half", Op::MulScalar { scalar: 0.5 }, vec![r]).unwrap();
    g.add_node("output", Op::Output, vec![m]).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let samples = (0..n).map(|_| HashMap::from([("x".to_string(), random(&mut rng, &shape))])).collect();
    (g, samples)
}

fn all_values(samples: &[HashMap<String, Tensor>], f: impl Fn(f32) -> f32) -> Vec<f32> {
    samples.iter().flat_map(|s| s["x"].as_f32().unwrap().iter().map(|&v| f(v)).collect::<Vec<_>>()).collect()
}

#[test]
fn software_stats_match_independent_computation() {
    let (g, samples) = relu_graph(5);
    let opts = StatsOptions { quantile: 0.9, n_sigma: 2.5, max_samples: None };
    let g = software_stats(g, &samples, &opts).unwrap();
    let sw = |name: &str| g.node(g.find(name).unwrap()).meta.software.clone();
    check_stats(&sw("x").results["data_out_0"].stat, &all_values(&samples, |v| v), &opts);
    check_stats(&sw("relu").args["data_in_0"].stat, &all_values(&samples, |v| v), &opts);
    check_stats(&sw("relu").results["data_out_0"].stat, &all_values(&samples, |v| v.max(0.0)), &opts);
    check_stats(&sw("half").results["data_out_0"].stat, &all_values(&samples, |v| v.max(0.0) * 0.5), &opts);
    assert_eq!(sw("output").args["data_in_0"], sw("half").results["data_out_0"]);
    assert!(sw("output").results.is_empty());

    // max_samples keeps the first samples only.
    let (g, _) = relu_graph(0);
    let capped = software_stats(g, &samples, &StatsOptions { max_samples: Some(2), ..opts }).unwrap();
    let st = &capped.node(capped.find("relu").unwrap()).meta.software.results["data_out_0"].stat;
    check_stats(st, &all_values(&samples[..2], |v| v.max(0.0)), &opts);
}

#[test]
fn software_stats_cover_weights() {
    let g = mlp();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let samples: Vec<_> =
        (0..3).map(|_| HashMap::from([("x".to_string(), random(&mut rng, &[BATCH, IN]))])).collect();
    let opts = StatsOptions::default();
    let weight: Vec<f32> = g.weights["fc1.weight"].as_f32().unwrap().iter().copied().collect();
    let g = software_stats(g, &samples, &opts).unwrap();
    let sw = &g.node(g.find("fc1").unwrap()).meta.software;
    check_stats(&sw.args["weight"].stat, &weight, &opts);
    assert_eq!(sw.args.keys().map(String::as_str).collect::<Vec<_>>(), ["data_in_0", "weight", "bias"]);
}

#[test]
fn add_software_metadata_reads_npy_files() {
    let (g, samples) = relu_graph(3);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let p = dir.path().join(format!("x{i}.npy"));
        mase_ir::npy::write_npy(&p, &s["x"]).unwrap();
        files.push(toml::Value::String(p.display().to_string()));
    }
    let mut inputs = toml::Table::new();
    inputs.insert("x".into(), toml::Value::Array(files.clone()));
    let mut args = toml::Table::new();
    args.insert("inputs".into(), toml::Value::Table(inputs));
    args.insert("quantile".into(), toml::Value::Float(0.95));
    let mut all = toml::Table::new();
    all.insert("add_software_metadata".into(), toml::Value::Table(args.clone()));
    let (from_files, info) = run_passes(g.clone(), &["add_software_metadata"], &all).unwrap();
    assert_eq!(info["add_software_metadata"]["samples"], 3);
    let opts = StatsOptions { quantile: 0.95, ..Default::default() };
    let direct = software_stats(g.clone(), &samples, &opts).unwrap();
    assert_eq!(from_files, direct);

    let pass = find_pass("add_software_metadata").unwrap();
    let bad = |edit: &dyn Fn(&mut toml::Table)| {
        let mut a = args.clone();
        edit(&mut a);
        run_pass(pass, g.clone(), &a).unwrap_err().to_string()
    };
    let e = bad(&|a| {
        a.insert("quantile".into(), toml::Value::Float(0.2));
    });
    assert!(e.contains("quantile"), "{e}");
    let e = bad(&|a| {
        a.remove("inputs");
    });
    assert!(e.contains("inputs") && e.contains('x'), "{e}");
    let e = bad(&|a| {
        let mut t = toml::Table::new();
        t.insert("y".into(), toml::Value::Array(files.clone()));
        a.insert("inputs".into(), toml::Value::Table(t));
    });
    assert!(e.contains("'y'"), "{e}");
    let e = bad(&|a| {
        a.insert("bogus".into(), toml::Value::Integer(1));
    });
    assert!(e.contains("bogus"), "{e}");
    let e = bad(&|a| {
        let mut t = toml::Table::new();
        t.insert("x".into(), toml::Value::Array(vec![toml::Value::String("/nonexistent/x.npy".into())]));
        a.insert("inputs".into(), toml::Value::Table(t));
    });
    assert!(e.contains("/nonexistent/x.npy"), "{e}");
}

#[test]
fn add_software_metadata_needs_equal_sample_counts() {
    let mut g = MaseGraph::new("two");
    let a = input(&mut g, "a", &[2]);
    let b = input(&mut g, "b", &[2]);
    let s = g.add_node("sum", Op::Add, vec![a, b]).unwrap();
    g.add_node("output", Op::Output, vec![s]).unwrap();
    let args: toml::Table = toml::from_str(r#"inputs = { a = ["1.npy", "2.npy"], b = ["3.npy"] }"#).unwrap();
    let e = run_pass(find_pass("add_software_metadata").unwrap(), g, &args).unwrap_err().to_string();
    assert!(e.contains("same number of samples") && e.contains("'a'") && e.contains("'b'"), "{e}");
}

#[test]
fn software_stats_reject_non_finite_values() {
    let (g, mut samples) = relu_graph(1);
    samples[0].insert("x".into(), Tensor::from_f32(&[4, 8], vec![f32::NAN; 32]).unwrap());
    let e = software_stats(g, &samples, &Default::default()).unwrap_err().to_string();
    assert!(e.contains("non-finite") && e.contains("sample 0"), "{e}");
}

fn count(info: &mase_ir::pass::PassInfo, op: &str) -> u64 {
    info.get(op).and_then(|v| v.as_u64()).unwrap_or(0)
}

#[test]
fn remove_dropout_rewires_and_removes() {
    let mut g = MaseGraph::new("chain");
    let x = input(&mut g, "x", &[3]);
    let d = g.add_node("drop", Op::Dropout { ratio: 0.5 }, vec![x]).unwrap();
    let r = g.add_node("relu", Op::Relu, vec![d]).unwrap();
    let i1 = g.add_node("id1", Op::Identity, vec![r]).unwrap();
    let i2 = g.add_node("id2", Op::Identity, vec![i1]).unwrap();
    let s = g.add_node("sum", Op::Add, vec![i2, d]).unwrap();
    g.add_node("output", Op::Output, vec![s, i2]).unwrap();
    let (g, before) = run(g, "count_ops");
    assert_eq!((count(&before, "dropout"), count(&before, "identity")), (1, 2));
    let (g, info) = run(g, "remove_dropout");
    assert_eq!(
        (info["removed"].as_u64(), info["dropout"].as_u64(), info["identity"].as_u64()),
        (Some(3), Some(1), Some(2))
    );
    let (g, after) = run(g, "count_ops");
    assert_eq!((count(&after, "dropout"), count(&after, "identity")), (0, 0));
    assert_eq!(after["total"].as_u64(), Some(before["total"].as_u64().unwrap() - 3));
    let name = |id: NodeId| g.node(id).name.clone();
    let relu = g.node(g.find("relu").unwrap());
    assert_eq!(relu.inputs.iter().map(|&i| name(i)).collect::<Vec<_>>(), ["x"]);
    let sum = g.node(g.find("sum").unwrap());
    assert_eq!(sum.inputs.iter().map(|&i| name(i)).collect::<Vec<_>>(), ["relu", "x"]);
    let out = g.node(g.output_id().unwrap());
    assert_eq!(out.inputs.iter().map(|&i| name(i)).collect::<Vec<_>>(), ["sum", "relu"]);
    for gone in ["drop", "id1", "id2"] {
        assert!(g.find(gone).is_none(), "{gone} still present");
    }
    g.validate().unwrap();
}

#[test]
fn remove_dropout_keeps_the_function_of_the_graph() {
    let (g, _) = run(mlp(), "add_common_metadata");
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let inputs = HashMap::from([("x".to_string(), random(&mut rng, &[BATCH, IN]))]);
    let before = mase_ir::interp::run_outputs(&g, &inputs).unwrap();
    let (g, info) = run(g, "remove_dropout");
    assert_eq!(info["removed"].as_u64(), Some(1));
    assert_eq!(mase_ir::interp::run_outputs(&g, &inputs).unwrap(), before);
}

#[test]
fn count_ops_counts_each_op() {
    let g = mlp();
    let (g, info) = run(g, "count_ops");
    let mut expected = std::collections::BTreeMap::<&str, u64>::new();
    for (_, n) in g.nodes() {
        *expected.entry(n.op.mase_op()).or_default() += 1;
    }
    assert_eq!(expected["linear"], 2);
    let keys: Vec<&str> = info.keys().map(String::as_str).collect();
    let mut want: Vec<&str> = expected.keys().copied().collect();
    want.push("total");
    assert_eq!(keys, want, "op names in order, then total");
    for (op, n) in expected {
        assert_eq!(info[op].as_u64(), Some(n), "{op}");
    }
    assert_eq!(info["total"].as_u64(), Some(g.len() as u64));
    assert!(run_pass(find_pass("count_ops").unwrap(), g, &toml::from_str("x = 1").unwrap()).is_err());
}

#[test]
fn validate_catches_a_bad_shape() {
    let (mut g, _) = run(mlp(), "add_common_metadata");
    let id = g.find("relu").unwrap();
    g.node_mut(id).meta.common.args.get_mut("data_in_0").unwrap().shape = vec![9, 9];
    let e = g.validate().unwrap_err().to_string();
    assert!(e.contains("relu") && e.contains("fc1") && e.contains("[9, 9]"), "{e}");
    let e = run_pass(find_pass("validate").unwrap(), g, &PassArgs::new()).unwrap_err().to_string();
    assert!(e.contains("validate"), "{e}");
}
