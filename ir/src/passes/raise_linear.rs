//! `raise_linear`: a matrix product of an activation by a constant 2-D weight, optionally
//! followed by the addition of a constant bias over the last dimension, becomes one `linear`
//! node (weight stored `[out, in]`, bias `[out]`).
//!
//! This covers ONNX `MatMul` (+ `Add`) as PyTorch exports `nn.Linear`, and `Gemm` with either
//! `transB`, `alpha` and `beta`: the importer turns Gemm into MatMul/Add with the transposition
//! and the scale factors folded into the constants. The bias is absorbed only when the product
//! has no other user and the added constant is `[out]` or `[1, …, 1, out]` with a rank no
//! larger than the product's (so broadcasting does not change the result shape). A product
//! of two activations stays `matmul`.

use ndarray::Ix2;

use super::raise_common::{const_tensor, raise_all, rank, replace, single_user, stem, users_map};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::{PassArgs, PassInfo};
use crate::tensor::Tensor;

struct Match {
    root: NodeId,
    matmul: NodeId,
    x: NodeId,
    weight: Tensor,
    bias: Option<Tensor>,
    /// The weight's codes and format when its constant has some (a folded weight quantizer),
    /// transposed as the weight is.
    qweight: Option<crate::tensor::QuantTensor>,
    /// The bias's codes when its constant has some (e.g. the int32 codes of a folded
    /// `DequantizeLinear`), reshaped to `[out]` as the bias is.
    qbias: Option<crate::tensor::QuantTensor>,
}

/// The constant `[in, out]` weight of a matmul node, transposed to `[out, in]`.
fn weight_of(g: &MaseGraph, m: NodeId) -> Option<(NodeId, Tensor)> {
    let n = g.node(m);
    if !matches!(n.op, Op::Matmul) || n.inputs.len() != 2 {
        return None;
    }
    let (x, w) = (n.inputs[0], n.inputs[1]);
    if const_tensor(g, x).is_some() {
        return None;
    }
    let w = const_tensor(g, w)?.as_f32()?.view().into_dimensionality::<Ix2>().ok()?;
    let wt = w.t().as_standard_layout().to_owned().into_dyn();
    Some((x, Tensor::F32(wt)))
}

/// A constant bias over the last dimension of `out` features, reshaped to `[out]`.
fn bias_of(g: &MaseGraph, c: NodeId, out: usize, product_rank: Option<usize>) -> Option<Tensor> {
    let t = const_tensor(g, c)?.as_f32()?;
    let shape = t.shape();
    let last_ok = shape.last() == Some(&out) && shape[..shape.len() - 1].iter().all(|&d| d == 1);
    let rank_ok = shape.len() == 1 || product_rank.is_some_and(|r| r >= shape.len());
    if !last_ok || !rank_ok {
        return None;
    }
    Some(Tensor::F32(t.to_shape(ndarray::IxDyn(&[out])).ok()?.to_owned()))
}

/// The codes of a constant node's tensor in `g.qweights`, transposed like [`weight_of`]'s
/// weight (not for per-channel fractions).
fn qweight_of(g: &MaseGraph, c: NodeId) -> Option<crate::tensor::QuantTensor> {
    let Op::Constant { tensor } = &g.node(c).op else { return None };
    let q = g.qweights.get(tensor).filter(|q| q.channel_frac.is_none() && q.codes.ndim() == 2)?;
    let codes = q.codes.t().as_standard_layout().to_owned();
    let mut t = crate::tensor::QuantTensor { codes, ..q.clone() };
    if let Some(a) = t.affine.as_mut().filter(|a| a.scale.len() > 1) {
        // A per-axis grid follows its axis through the transpose.
        a.axis = 1 - a.axis.min(1);
    }
    Some(t)
}

/// The codes of a bias constant in `g.qweights`, reshaped to `[out]` (its grid's axis, the last,
/// becomes 0).
fn qbias_of(g: &MaseGraph, c: NodeId, out: usize) -> Option<crate::tensor::QuantTensor> {
    let Op::Constant { tensor } = &g.node(c).op else { return None };
    let q = g.qweights.get(tensor).filter(|q| q.channel_frac.is_none())?;
    let codes = q.codes.to_shape(ndarray::IxDyn(&[out])).ok()?.to_owned();
    let mut t = crate::tensor::QuantTensor { codes, ..q.clone() };
    if let Some(a) = &mut t.affine {
        a.axis = 0;
    }
    Some(t)
}

fn find(g: &MaseGraph) -> Option<Match> {
    let users = users_map(g);
    for (m, _) in g.nodes() {
        let Some((x, weight)) = weight_of(g, m) else { continue };
        let out = weight.shape()[0];
        let qweight = qweight_of(g, g.node(m).inputs[1]);
        let mut found = Match { root: m, matmul: m, x, weight, bias: None, qweight, qbias: None };
        if let Some(a) = single_user(g, &users, m) {
            let an = g.node(a);
            if matches!(an.op, Op::Add) && an.inputs.len() == 2 {
                let c = if an.inputs[0] == m { an.inputs[1] } else { an.inputs[0] };
                if let Some(b) = bias_of(g, c, out, rank(g, m)) {
                    found.root = a;
                    found.bias = Some(b);
                    found.qbias = qbias_of(g, c, out);
                }
            }
        }
        return Some(found);
    }
    None
}

/// The pass (`raise_linear` in [`super::REGISTRY`]): raises MatMul / Gemm with a constant
/// weight (+ bias Add) to `linear`.
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some(m) = find(g) else { return Ok(false) };
        let base = stem(&g.node(m.matmul).name, &["matmul"]).to_string();
        let name = g.fresh_name(&format!("{base}_linear"));
        let wkey = format!("{name}.weight");
        g.weights.insert(wkey.clone(), m.weight);
        if let Some(q) = m.qweight {
            g.qweights.insert(wkey.clone(), q);
        }
        let bkey = m.bias.map(|b| {
            let k = format!("{name}.bias");
            g.weights.insert(k.clone(), b);
            if let Some(q) = m.qbias {
                g.qweights.insert(k.clone(), q);
            }
            k
        });
        replace(g, m.root, &name, Op::Linear { weight: wkey, bias: bkey }, vec![m.x])?;
        Ok(true)
    })
}
