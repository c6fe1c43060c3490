//! `raise_masked_softmax` on hand-built graphs: both additive-mask forms are raised and compute
//! what they computed before; look-alikes are left alone.

use std::collections::HashMap;

use mase_ir::interp::run_outputs;
use mase_ir::metadata::TensorMeta;
use mase_ir::pass::{find_pass, run_pass, PassArgs};
use mase_ir::tensor::DType;
use mase_ir::{MaseGraph, NodeId, Op, Tensor};
use ndarray::{ArrayD, IxDyn};

fn node(g: &mut MaseGraph, name: &str, op: Op, inputs: Vec<NodeId>, shape: &[usize], dtype: DType) -> NodeId {
    let id = g.add_node(name, op, inputs).unwrap();
    g.node_mut(id).meta.common.results.insert("data_out_0".into(), TensorMeta::unquantized(shape, dtype));
    id
}

fn constant(g: &mut MaseGraph, name: &str, t: Tensor) -> NodeId {
    let (shape, dtype) = (t.shape().to_vec(), t.dtype());
    g.weights.insert(name.into(), t);
    node(g, name, Op::Constant { tensor: name.into() }, vec![], &shape, dtype)
}

fn scalar(v: f32) -> Tensor {
    Tensor::F32(ndarray::arr0(v).into_dyn())
}

/// scores [2, 4] + mask built from keep [2, 4] in the given `form`, then softmax; returns the
/// graph and its inputs.
fn masked(form: &str, zero: f32) -> (MaseGraph, HashMap<String, Tensor>) {
    let mut g = MaseGraph::new("m");
    let x = node(&mut g, "x", Op::Placeholder, vec![], &[2, 4], DType::F32);
    let keep = node(&mut g, "keep", Op::Placeholder, vec![], &[2, 4], DType::Bool);
    let m = match form {
        "where" => {
            let z = constant(&mut g, "zero", scalar(zero));
            let n = constant(&mut g, "neg", scalar(f32::MIN));
            node(&mut g, "mask", Op::Where, vec![keep, z, n], &[2, 4], DType::F32)
        }
        _ => {
            let kf = node(&mut g, "keep_f", Op::Cast { to: DType::F32 }, vec![keep], &[2, 4], DType::F32);
            let one = constant(&mut g, "one", scalar(1.0));
            let inv = node(&mut g, "inv", Op::Sub, vec![one, kf], &[2, 4], DType::F32);
            let n = constant(&mut g, "neg", scalar(f32::MIN));
            node(&mut g, "mask", Op::Mul, vec![inv, n], &[2, 4], DType::F32)
        }
    };
    let add = node(&mut g, "add", Op::Add, vec![x, m], &[2, 4], DType::F32);
    let sm = node(&mut g, "softmax", Op::Softmax { axis: -1 }, vec![add], &[2, 4], DType::F32);
    g.add_node("output", Op::Output, vec![sm]).unwrap();
    let xs = Tensor::from_f32(&[2, 4], vec![0.5, -1.0, 2.0, 0.25, 3.0, 1.0, -2.0, 0.0]).unwrap();
    let ks = Tensor::Bool(
        ArrayD::from_shape_vec(IxDyn(&[2, 4]), vec![true, true, false, true, true, false, false, false])
            .unwrap(),
    );
    (g, HashMap::from([("x".to_string(), xs), ("keep".to_string(), ks)]))
}

fn softmaxes(g: &MaseGraph) -> Vec<usize> {
    g.nodes().filter(|(_, n)| matches!(n.op, Op::Softmax { .. })).map(|(_, n)| n.inputs.len()).collect()
}

#[test]
fn both_additive_mask_forms_become_the_softmax_mask_and_compute_the_same() {
    for form in ["where", "one_minus_keep"] {
        let (g, inputs) = masked(form, 0.0);
        let before = run_outputs(&g, &inputs).unwrap();
        let (r, info) = run_pass(find_pass("raise_masked_softmax").unwrap(), g, &PassArgs::new()).unwrap();
        assert_eq!(info["raised"].as_u64(), Some(1), "{form}");
        assert_eq!(softmaxes(&r), vec![2], "{form}");
        let after = run_outputs(&r, &inputs).unwrap();
        assert_eq!(before, after, "{form}");
        // Masked positions are exactly 0 and each row sums to 1.
        let a = after[0].as_f32().unwrap();
        assert_eq!(a[[0, 2]], 0.0);
        assert_eq!((a[[1, 1]], a[[1, 2]], a[[1, 3]]), (0.0, 0.0, 0.0));
        assert!((a[[1, 0]] - 1.0).abs() < 1e-7, "{a}");
    }
}

#[test]
fn a_where_whose_branch_is_not_zero_is_not_a_mask() {
    let (g, _) = masked("where", 0.5);
    let (r, info) = run_pass(find_pass("raise_masked_softmax").unwrap(), g, &PassArgs::new()).unwrap();
    assert_eq!(info["raised"].as_u64(), Some(0));
    assert_eq!(softmaxes(&r), vec![1]);
}

/// A raised (two-input) softmax on x [2, 4] and keep [2, 4], followed by `Where(cond, softmax,
/// zero)` with `cond` the softmax's mask or another boolean input.
fn reselected(zero: f32, same_cond: bool) -> (MaseGraph, HashMap<String, Tensor>) {
    let (g, mut inputs) = masked("where", 0.0);
    let (mut g, _) = run_pass(find_pass("raise_masked_softmax").unwrap(), g, &PassArgs::new()).unwrap();
    let out = g.output_id().unwrap();
    let sm = g.node(out).inputs[0];
    let keep = g.find("keep").unwrap();
    let cond = if same_cond {
        keep
    } else {
        inputs.insert("other".into(), inputs["keep"].clone());
        node(&mut g, "other", Op::Placeholder, vec![], &[2, 4], DType::Bool)
    };
    let z = constant(&mut g, "reselect_zero", scalar(zero));
    let w = node(&mut g, "reselect", Op::Where, vec![cond, sm, z], &[2, 4], DType::F32);
    g.node_mut(out).inputs[0] = w;
    g.compact().unwrap();
    (g, inputs)
}

fn wheres(g: &MaseGraph) -> usize {
    g.nodes().filter(|(_, n)| matches!(n.op, Op::Where)).count()
}

#[test]
fn a_where_reselecting_the_masked_softmax_output_is_dropped() {
    let (g, inputs) = reselected(0.0, true);
    let before = run_outputs(&g, &inputs).unwrap();
    let (r, info) = run_pass(find_pass("raise_masked_softmax").unwrap(), g, &PassArgs::new()).unwrap();
    assert_eq!(info["raised"].as_u64(), Some(1));
    assert_eq!((wheres(&r), softmaxes(&r)), (0, vec![2]));
    assert_eq!(run_outputs(&r, &inputs).unwrap(), before);
    // Kept: a −0 branch (it changes the bits of the masked positions) and another condition.
    for (zero, same) in [(-0.0, true), (0.0, false)] {
        let (g, _) = reselected(zero, same);
        let (r, info) = run_pass(find_pass("raise_masked_softmax").unwrap(), g, &PassArgs::new()).unwrap();
        assert_eq!((info["raised"].as_u64(), wheres(&r)), (Some(0), 1), "zero {zero}, same condition {same}");
    }
}
