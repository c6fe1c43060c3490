//! `raise_masked_softmax`: an additive attention mask before a softmax becomes the softmax's
//! boolean mask input. Exporters write the mask as `softmax(scores + M)` with
//! - `M = Where(keep, 0, m)` (current transformers), or
//! - `M = (1 − keep) · m` (older exports: `Mul(Sub(1, keep_f), m)`, `keep_f` a 0/1 float),
//!
//! where `m` is an additive-mask constant (`|m| ≥ 1e30`, see [`crate::quant::is_mask_value`],
//! e.g. −3.4028235e38). Adding it drives a position's exponential to exactly 0 in float, which
//! is what the masked softmax computes (masked positions output 0 and take no part in the max
//! or the sum), so the result is unchanged while the mask becomes one boolean per position that
//! hardware can take as an input instead of a −3.4e38 operand no fixed-point format holds.
//!
//! The keep mask is taken at its smallest form: through `Expand` and through an `And` with an
//! all-true constant (the exporters' broadcast of a key-padding mask over query rows), as long as
//! it still broadcasts to the scores, so a key-padding mask stays one value per key position.
//!
//! Not raised: an Add whose result has another user, a `Where` whose branches are not exactly 0
//! and a mask value, a mask that does not broadcast to the scores.
//!
//! A `Where(keep, softmax, +0)` after a softmax masked by the same keep (the ONNX exporter
//! writes it so that onnxruntime, too, gives a fully masked row all 0) selects what the masked
//! softmax already outputs, so it is dropped, and a re-imported export is the graph it was.

use super::raise_common::{const_tensor, raise_all, replace, scalar_const, single_user, users_map};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::interp::elementwise::broadcast_shapes;
use crate::op::{LogicOp, Op};
use crate::pass::{PassArgs, PassInfo};
use crate::quant::is_mask_value;
use crate::tensor::{DType, Tensor};

/// What a match keeps as the mask: an existing boolean node, or a 0/1 float node to convert.
enum Keep {
    Bool(NodeId),
    Float(NodeId),
}

/// True when the constant node `id` holds only values `pred` accepts.
fn const_all(g: &MaseGraph, id: NodeId, pred: impl Fn(f32) -> bool) -> bool {
    match const_tensor(g, id) {
        Some(Tensor::F32(a)) => !a.is_empty() && a.iter().all(|&v| pred(v)),
        _ => false,
    }
}

/// The keep mask an additive mask node `m` encodes, if it is one of the two forms.
fn keep_of(g: &MaseGraph, m: NodeId) -> Option<Keep> {
    let n = g.node(m);
    match (&n.op, n.inputs.as_slice()) {
        (Op::Where, [c, z, v]) if const_all(g, *z, |x| x == 0.0) && const_all(g, *v, is_mask_value) => {
            Some(Keep::Bool(*c))
        }
        (Op::Mul, [a, b]) => {
            let (sub, c) = if const_all(g, *b, is_mask_value) { (*a, *b) } else { (*b, *a) };
            if !const_all(g, c, is_mask_value) || scalar_const(g, c).is_none() {
                return None;
            }
            match (&g.node(sub).op, g.node(sub).inputs.as_slice()) {
                (Op::Sub, [one, k]) if scalar_const(g, *one).is_some_and(|(v, _)| v == 1.0) => {
                    Some(Keep::Float(*k))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `keep` at its smallest form that still broadcasts to `shape` (see the module documentation).
fn smallest_keep(g: &MaseGraph, mut keep: NodeId, shape: &[usize]) -> NodeId {
    loop {
        let n = g.node(keep);
        let next = match (&n.op, n.inputs.as_slice()) {
            (Op::Expand { .. }, [x]) => Some(*x),
            (Op::Logic { logic: LogicOp::And }, [a, b]) => {
                let all_true =
                    |id: NodeId| matches!(const_tensor(g, id), Some(Tensor::Bool(t)) if t.iter().all(|&v| v));
                if all_true(*a) {
                    Some(*b)
                } else if all_true(*b) {
                    Some(*a)
                } else {
                    None
                }
            }
            _ => None,
        };
        let fits = |id: NodeId| {
            g.node(id).out_shape().and_then(|s| broadcast_shapes(s, shape)).is_some_and(|b| b == shape)
        };
        match next {
            Some(x) if fits(x) => keep = x,
            _ => return keep,
        }
    }
}

/// A raisable softmax: (softmax, scores, keep).
fn find(g: &MaseGraph) -> Option<(NodeId, NodeId, Keep)> {
    let users = users_map(g);
    g.ids().find_map(|id| {
        let n = g.node(id);
        let (Op::Softmax { .. }, [add]) = (&n.op, n.inputs.as_slice()) else { return None };
        single_user(g, &users, *add)?;
        let a = g.node(*add);
        let (Op::Add, [p, q]) = (&a.op, a.inputs.as_slice()) else { return None };
        let (scores, keep) = match keep_of(g, *q) {
            Some(k) => (*p, k),
            None => (*q, keep_of(g, *p)?),
        };
        let shape = g.node(scores).out_shape()?;
        let keep_shape = match &keep {
            Keep::Bool(k) | Keep::Float(k) => g.node(*k).out_shape()?,
        };
        (broadcast_shapes(keep_shape, shape).as_deref() == Some(shape)).then_some((id, scores, keep))
    })
}

/// A `Where(keep, softmax, +0)` that selects the output of a softmax masked by `keep` (or by
/// the smallest form of `keep`) at that softmax's shape: (where, softmax).
fn redundant_where(g: &MaseGraph) -> Option<(NodeId, NodeId)> {
    g.ids().find_map(|id| {
        let n = g.node(id);
        let (Op::Where, [c, s, z]) = (&n.op, n.inputs.as_slice()) else { return None };
        let sn = g.node(*s);
        let (Op::Softmax { .. }, [_, keep]) = (&sn.op, sn.inputs.as_slice()) else { return None };
        // +0 exactly: a −0 branch would change the masked positions' bits.
        let shape = sn.out_shape()?;
        let same_keep = *c == *keep || smallest_keep(g, *c, shape) == *keep;
        (same_keep && n.out_shape() == Some(shape) && const_all(g, *z, |v| v.to_bits() == 0))
            .then_some((id, *s))
    })
}

/// The pass (`raise_masked_softmax` in [`super::REGISTRY`]): raises `softmax(scores + additive
/// mask)` to a softmax with a boolean mask input, and drops a `Where` that re-selects its
/// masked positions.
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some((id, scores, keep)) = find(g) else {
            let Some((w, s)) = redundant_where(g) else { return Ok(false) };
            g.replace_all_uses(w, s);
            return Ok(true);
        };
        let shape = g.node(scores).out_shape().map(<[usize]>::to_vec).unwrap_or_default();
        let keep = match keep {
            Keep::Bool(k) => smallest_keep(g, k, &shape),
            Keep::Float(k) => {
                let name = g.fresh_name(&format!("{}_keep", g.node(k).name));
                let results = g.node(k).meta.common.results.clone();
                let c = g.add_node(name, Op::Cast { to: DType::Bool }, vec![k])?;
                let n = g.node_mut(c);
                n.meta.common.results = results;
                if let Some(r) = n.meta.common.results.get_mut("data_out_0") {
                    *r = crate::metadata::TensorMeta::unquantized(&r.shape.clone(), DType::Bool);
                }
                // The new node must come before its users: compaction restores the order.
                c
            }
        };
        let op = g.node(id).op.clone();
        let name = g.node(id).name.clone();
        replace(g, id, &format!("{name}_masked"), op, vec![scores, keep])?;
        Ok(true)
    })
}
