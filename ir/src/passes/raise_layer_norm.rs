//! `raise_layer_norm`: layer normalization decomposed the way PyTorch exports it below opset
//! 17 becomes one `layer_norm` node:
//!
//! ```text
//! mean = ReduceMean(x, last axis, keepdims)   d = Sub(x, mean)
//! var  = ReduceMean(Pow(d, 2) or Mul(d, d), last axis, keepdims)
//! y    = Div(d, Sqrt(Add(var, eps)))  [then Mul(y, gamma)] [then Add(·, beta)]
//! ```
//!
//! Conditions checked: both means over the last axis only (`-1`, or `rank-1` when the rank is
//! recorded) with keepdims; `d` used exactly by the power and the division; every other
//! intermediate used only inside the pattern; `eps` a non-negative single-element constant;
//! gamma and beta constant 1-D tensors whose length is the size of the last dimension (when
//! recorded). The ONNX `LayerNormalization` op is imported as `layer_norm` directly.

use super::raise_common::{
    close, const_tensor, raise_all, rank, replace, single_user, stem, users_map, with_scalar,
};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::Op;
use crate::pass::{PassArgs, PassInfo};
use crate::tensor::Tensor;

struct Match {
    div: NodeId,
    root: NodeId,
    x: NodeId,
    eps: f32,
    gamma: Option<Tensor>,
    beta: Option<Tensor>,
}

/// True for a keepdims mean over the last axis of its input.
fn mean_last(g: &MaseGraph, id: NodeId) -> Option<NodeId> {
    let n = g.node(id);
    let Op::ReduceMean { axes, keepdims: true } = &n.op else { return None };
    let [input] = n.inputs.as_slice() else { return None };
    let last = match axes.as_slice() {
        [-1] => true,
        [a] => rank(g, *input).is_some_and(|r| r >= 1 && *a == r as i64 - 1),
        _ => false,
    };
    last.then_some(*input)
}

/// A constant 1-D float vector whose length matches the last dimension of `x` (when known).
fn vector(g: &MaseGraph, c: NodeId, x: NodeId) -> Option<Tensor> {
    let t = const_tensor(g, c)?;
    let a = t.as_f32()?;
    if a.ndim() != 1 {
        return None;
    }
    if let Some(s) = g.node(x).out_shape() {
        if s.last() != Some(&a.len()) {
            return None;
        }
    }
    Some(t.clone())
}

/// For a binary `op` node with `known` as one input and a 1-D constant as the other.
fn affine(g: &MaseGraph, id: NodeId, known: NodeId, x: NodeId, is_op: fn(&Op) -> bool) -> Option<Tensor> {
    let n = g.node(id);
    if !is_op(&n.op) {
        return None;
    }
    let c = match n.inputs.as_slice() {
        [a, b] if *a == known => *b,
        [a, b] if *b == known => *a,
        _ => return None,
    };
    vector(g, c, x)
}

fn match_at(g: &MaseGraph, users: &[Vec<NodeId>], div: NodeId) -> Option<Match> {
    let dn = g.node(div);
    if !matches!(dn.op, Op::Div) {
        return None;
    }
    let [d, s] = dn.inputs.as_slice() else { return None };
    let (d, s) = (*d, *s);
    // d = x - mean(x)
    let sub = g.node(d);
    let [x, mean] = sub.inputs.as_slice() else { return None };
    let (x, mean) = (*x, *mean);
    if !matches!(sub.op, Op::Sub) || mean_last(g, mean) != Some(x) || single_user(g, users, mean) != Some(d) {
        return None;
    }
    // s = sqrt(var + eps)
    let sq = g.node(s);
    if !matches!(sq.op, Op::Sqrt) || single_user(g, users, s) != Some(div) {
        return None;
    }
    let ve = sq.inputs[0];
    let (var, eps) = with_scalar(g, ve, |o| matches!(o, Op::Add), true)?;
    if eps.is_nan()
        || eps < 0.0
        || single_user(g, users, ve) != Some(s)
        || single_user(g, users, var) != Some(ve)
    {
        return None;
    }
    // var = mean(d²)
    let p = mean_last(g, var)?;
    if single_user(g, users, p) != Some(var) {
        return None;
    }
    let pn = g.node(p);
    let square = match pn.op {
        Op::Pow => with_scalar(g, p, |o| matches!(o, Op::Pow), false)
            .is_some_and(|(b, e)| b == d && close(e, 2.0, 0.0)),
        Op::Mul => pn.inputs.as_slice() == [d, d],
        _ => false,
    };
    // d feeds exactly the square and the division.
    let mut du = users[d.0].clone();
    du.sort();
    let mut want = vec![p, div];
    want.sort();
    if !square || du != want {
        return None;
    }
    let mut m = Match { div, root: div, x, eps, gamma: None, beta: None };
    if let Some(u) = single_user(g, users, div) {
        if let Some(gm) = affine(g, u, div, x, |o| matches!(o, Op::Mul)) {
            m.gamma = Some(gm);
            m.root = u;
        }
    }
    if let Some(u) = single_user(g, users, m.root) {
        if let Some(b) = affine(g, u, m.root, x, |o| matches!(o, Op::Add)) {
            m.beta = Some(b);
            m.root = u;
        }
    }
    Some(m)
}

/// The pass (`raise_layer_norm` in [`super::REGISTRY`]): raises decomposed layer normalization to
/// `layer_norm`.
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let users = users_map(g);
        let Some(m) = g.ids().find_map(|id| match_at(g, &users, id)) else { return Ok(false) };
        let base = stem(&g.node(m.div).name, &["div"]).to_string();
        let name = g.fresh_name(&format!("{base}_layer_norm"));
        let mut put = |role: &str, t: Option<Tensor>| {
            t.map(|t| {
                let k = format!("{name}.{role}");
                g.weights.insert(k.clone(), t);
                k
            })
        };
        let weight = put("weight", m.gamma);
        let bias = put("bias", m.beta);
        let op = Op::LayerNorm { axis: -1, epsilon: m.eps, weight, bias };
        replace(g, m.root, &name, op, vec![m.x])?;
        Ok(true)
    })
}
