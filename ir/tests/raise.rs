//! The raising passes, one test per pattern on the fixture models of
//! `scripts/make_fixtures.py`, plus lookalikes that must not be raised (fixtures `neg_*` and
//! small graphs built here). Numerical agreement of every fixture with onnxruntime, raised and
//! not, is checked in `onnx_import.rs`.

use std::path::{Path, PathBuf};

use mase_ir::metadata::TensorMeta;
use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::op::GeluApprox;
use mase_ir::pass::{find_pass, run_pass, PassArgs};
use mase_ir::{MaseGraph, NodeId, Op, Tensor};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/fixtures/{name}.onnx"))
}

fn import(name: &str, raise: bool) -> MaseGraph {
    let mut o = ImportOptions { raise, ..Default::default() };
    if name == "encoder_layer_decomposed_ln" {
        o.input_shapes.insert("hidden_states".into(), vec![1, 8, 128]);
    }
    import_file(&fixture(name), &o).unwrap_or_else(|e| panic!("{e}"))
}

fn ops(g: &MaseGraph) -> Vec<Op> {
    g.nodes()
        .map(|(_, n)| n.op.clone())
        .filter(|o| !matches!(o, Op::Placeholder | Op::Output | Op::Constant { .. }))
        .collect()
}

fn count(g: &MaseGraph, f: fn(&Op) -> bool) -> usize {
    g.nodes().filter(|(_, n)| f(&n.op)).count()
}

/// Runs one registered pass and returns the graph and the number it raised.
fn run(name: &str, g: MaseGraph) -> (MaseGraph, u64) {
    let (g, info) = run_pass(find_pass(name).unwrap(), g, &PassArgs::new()).unwrap();
    (g, info["raised"].as_u64().unwrap())
}

#[test]
fn gelu_erf_div_form() {
    let (g, n) = run("raise_gelu", import("mlp_matmul_gelu", false));
    assert_eq!(n, 1);
    assert_eq!(count(&g, |o| matches!(o, Op::Gelu { approximate: GeluApprox::None })), 1);
    assert_eq!(count(&g, |o| matches!(o, Op::Erf | Op::Div)), 0);
    // Idempotent: nothing left to raise.
    assert_eq!(run("raise_gelu", g).1, 0);
}

#[test]
fn gelu_erf_mul_and_half_first_forms() {
    for name in ["pat_gelu_erf_mul", "pat_gelu_erf_half_first"] {
        assert_eq!(ops(&import(name, true)), [Op::Gelu { approximate: GeluApprox::None }], "{name}");
    }
}

#[test]
fn gelu_tanh_form() {
    assert_eq!(ops(&import("pat_gelu_tanh", true)), [Op::Gelu { approximate: GeluApprox::Tanh }]);
}

#[test]
fn gelu_op() {
    assert_eq!(ops(&import("pat_gelu_op", true)), [Op::Gelu { approximate: GeluApprox::None }]);
    assert_eq!(ops(&import("pat_gelu_op_tanh", false)), [Op::Gelu { approximate: GeluApprox::Tanh }]);
}

#[test]
fn gelu_lookalikes_are_not_raised() {
    // Div by 1.5 instead of √2.
    let g = import("neg_gelu_wrong_const", true);
    assert_eq!(count(&g, |o| matches!(o, Op::Gelu { .. })), 0);
    assert_eq!(count(&g, |o| matches!(o, Op::Erf)), 1);
    // The Erf output feeds a node outside the pattern.
    let g = import("neg_gelu_shared", true);
    assert_eq!(count(&g, |o| matches!(o, Op::Gelu { .. })), 0);
    assert_eq!(count(&g, |o| matches!(o, Op::Erf)), 1);
}

#[test]
fn linear_from_gemm_transb1_and_matmul_add() {
    let raw = import("mlp_gemm_relu", false);
    let w_onnx = raw.weights.values().find(|t| t.shape() == [16, 32]).cloned();
    let (g, n) = run("raise_linear", raw);
    assert_eq!(n, 2);
    assert_eq!(count(&g, |o| matches!(o, Op::Linear { bias: Some(_), .. })), 2);
    assert_eq!(count(&g, |o| matches!(o, Op::Matmul | Op::Add)), 0);
    // The [in, out] constant of the import is stored transposed as [out, in].
    let (_, l) = g.nodes().find(|(_, n)| matches!(n.op, Op::Linear { .. })).unwrap();
    let Op::Linear { weight, .. } = &l.op else { unreachable!() };
    let w = g.weights[weight].as_f32().unwrap();
    let w_in_out = w_onnx.unwrap().to_f32();
    assert_eq!(w.shape(), [32, 16]);
    assert_eq!(w, &w_in_out.t());
    let g = import("mlp_matmul_gelu", true);
    assert_eq!(count(&g, |o| matches!(o, Op::Linear { bias: Some(_), .. })), 2);
}

#[test]
fn linear_from_gemm_transb0_alpha_beta_and_without_bias() {
    let g = import("pat_gemm_transb0", true);
    let o = ops(&g);
    assert_eq!(o.len(), 1);
    let Op::Linear { weight, bias: Some(bias) } = &o[0] else { panic!("{o:?}") };
    assert_eq!(g.weights[weight].shape(), [8, 16]);
    assert_eq!(g.weights[bias].shape(), [8]);
    let g = import("pat_gemm_nobias", true);
    assert!(matches!(ops(&g).as_slice(), [Op::Linear { bias: None, .. }]), "{:?}", ops(&g));
}

#[test]
fn linear_does_not_absorb_a_2d_addend() {
    let g = import("neg_linear_bias_2d", true);
    assert!(matches!(ops(&g).as_slice(), [Op::Linear { bias: None, .. }, Op::Add]), "{:?}", ops(&g));
}

#[test]
fn layer_norm_op_and_decomposed_forms() {
    let g = import("pat_layer_norm_op", true);
    assert!(
        matches!(ops(&g).as_slice(), [Op::LayerNorm { axis: -1, weight: Some(_), bias: Some(_), epsilon }] if *epsilon == 1e-5),
        "{:?}",
        ops(&g)
    );
    let g = import("pat_layer_norm_decomposed_noaffine", true);
    assert!(
        matches!(ops(&g).as_slice(), [Op::LayerNorm { axis: -1, weight: None, bias: None, epsilon }] if *epsilon == 1e-5),
        "{:?}",
        ops(&g)
    );
    let (g, n) = run("raise_layer_norm", import("encoder_layer_decomposed_ln", false));
    assert_eq!(n, 2);
    assert_eq!(count(&g, |o| matches!(o, Op::LayerNorm { weight: Some(_), bias: Some(_), .. })), 2);
    assert_eq!(count(&g, |o| matches!(o, Op::ReduceMean { .. } | Op::Sqrt | Op::Pow | Op::Sub)), 0);
}

#[test]
fn layer_norm_over_another_axis_is_not_raised() {
    let g = import("neg_layer_norm_axis", true);
    assert_eq!(count(&g, |o| matches!(o, Op::LayerNorm { .. })), 0);
    assert_eq!(count(&g, |o| matches!(o, Op::ReduceMean { .. })), 2);
}

#[test]
fn mul_and_div_by_scalar() {
    assert_eq!(ops(&import("pat_mul_scalar", true)), [Op::MulScalar { scalar: 0.125 }]);
    assert_eq!(ops(&import("pat_div_scalar", true)), [Op::MulScalar { scalar: 0.125 }]);
    assert_eq!(ops(&import("neg_mul_tensor", true)), [Op::Mul]);
}

// ---- lookalikes built directly as graphs

fn meta(shape: &[usize]) -> TensorMeta {
    TensorMeta { precision: vec![32], shape: shape.to_vec(), ..Default::default() }
}

struct B {
    g: MaseGraph,
}

impl B {
    fn new() -> Self {
        B { g: MaseGraph::new("t") }
    }
    fn node(&mut self, name: &str, op: Op, inputs: &[NodeId], shape: &[usize]) -> NodeId {
        let id = self.g.add_node(name, op, inputs.to_vec()).unwrap();
        self.g.node_mut(id).meta.common.results.insert("data_out_0".into(), meta(shape));
        id
    }
    fn constant(&mut self, name: &str, t: Tensor) -> NodeId {
        let shape = t.shape().to_vec();
        self.g.weights.insert(name.into(), t);
        self.node(name, Op::Constant { tensor: name.into() }, &[], &shape)
    }
    fn finish(mut self, outs: &[NodeId]) -> MaseGraph {
        self.g.add_node("output", Op::Output, outs.to_vec()).unwrap();
        self.g
    }
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Tensor {
    Tensor::from_f32(shape, v).unwrap()
}

#[test]
fn scalar_lookalikes_are_not_raised() {
    let mut b = B::new();
    let x = b.node("x", Op::Placeholder, &[], &[4]);
    // A [1, 1] constant broadcasts x up to rank 2: not an element-wise scaling.
    let c2 = b.constant("c2", f32s(&[1, 1], vec![2.0]));
    let m = b.node("m", Op::Mul, &[x, c2], &[1, 4]);
    // Constant divided by an activation.
    let c = b.constant("c", f32s(&[], vec![3.0]));
    let d = b.node("d", Op::Div, &[c, x], &[4]);
    // Division by zero.
    let z = b.constant("z", f32s(&[], vec![0.0]));
    let dz = b.node("dz", Op::Div, &[x, z], &[4]);
    let g = b.finish(&[m, d, dz]);
    let (g, n) = run("raise_mul_scalar", g);
    assert_eq!(n, 0);
    assert_eq!(count(&g, |o| matches!(o, Op::MulScalar { .. })), 0);
}

#[test]
fn linear_lookalikes() {
    let mut b = B::new();
    let x = b.node("x", Op::Placeholder, &[], &[2, 3]);
    let w = b.constant("w", f32s(&[3, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let bias = b.constant("b", f32s(&[2], vec![0.5, -0.5]));
    // Weight on the left: W · x is not a linear layer over x's last dimension.
    let wt = b.constant("wt", f32s(&[2, 2], vec![1.0, 0.0, 0.0, 1.0]));
    let left = b.node("left", Op::Matmul, &[wt, x], &[2, 3]);
    // A product used twice keeps its bias Add separate.
    let mm = b.node("mm", Op::Matmul, &[x, w], &[2, 2]);
    let add = b.node("add", Op::Add, &[mm, bias], &[2, 2]);
    let g = b.finish(&[left, add, mm]);
    let (g, n) = run("raise_linear", g);
    assert_eq!(n, 1);
    assert_eq!(count(&g, |o| matches!(o, Op::Matmul)), 1);
    assert_eq!(count(&g, |o| matches!(o, Op::Linear { bias: None, .. })), 1);
    assert_eq!(count(&g, |o| matches!(o, Op::Add)), 1);
}

#[test]
fn layer_norm_needs_private_intermediates() {
    // Decomposed layer norm whose centred value d is also a graph output.
    let mut b = B::new();
    let x = b.node("x", Op::Placeholder, &[], &[2, 4]);
    let mean = b.node("mean", Op::ReduceMean { axes: vec![-1], keepdims: true }, &[x], &[2, 1]);
    let d = b.node("d", Op::Sub, &[x, mean], &[2, 4]);
    let two = b.constant("two", f32s(&[], vec![2.0]));
    let p = b.node("p", Op::Pow, &[d, two], &[2, 4]);
    let var = b.node("var", Op::ReduceMean { axes: vec![1], keepdims: true }, &[p], &[2, 1]);
    let eps = b.constant("eps", f32s(&[], vec![1e-5]));
    let ve = b.node("ve", Op::Add, &[var, eps], &[2, 1]);
    let s = b.node("s", Op::Sqrt, &[ve], &[2, 1]);
    let y = b.node("y", Op::Div, &[d, s], &[2, 4]);
    let g = b.finish(&[y, d]);
    let (g2, n) = run("raise_layer_norm", g.clone());
    assert_eq!(n, 0);
    assert_eq!(g2, g);
    // Without the extra output the same graph (axis given as rank-1 = 1) is raised.
    let mut g = g;
    let out = g.output_id().unwrap();
    g.node_mut(out).inputs.truncate(1);
    let (g, n) = run("raise_layer_norm", g);
    assert_eq!(n, 1);
    assert!(matches!(ops(&g).as_slice(), [Op::LayerNorm { weight: None, bias: None, .. }]), "{:?}", ops(&g));
}
