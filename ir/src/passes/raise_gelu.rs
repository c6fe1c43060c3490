//! `raise_gelu`: the decomposed GELU forms PyTorch exports become one `gelu` node.
//!
//! Erf form: `x · 0.5 · (1 + erf(x / √2))`, with the division written as `Div(x, √2)` or
//! `Mul(x, 1/√2)`, and the final products in any of the orders `(x · a) · 0.5`,
//! `(x · a) / 2`, `x · (a · 0.5)` and `(x · 0.5) · a` where `a = 1 + erf(…)`.
//! Tanh form: `x · 0.5 · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))` with `x³` as `Pow(x, 3)`,
//! with the same final products. The ONNX `Gelu` op (opset 20) is imported as `gelu` directly.
//!
//! Every condition is checked: each constant (to a relative 1e-5, 1e-4 for 0.044715), the same
//! `x` everywhere, and every intermediate node used only inside the pattern.

use super::raise_common::{
    close, other_input, raise_all, replace, scalar_const, single_user, sole_input, stem, users_map,
    with_scalar,
};
use crate::error::Result;
use crate::graph::{MaseGraph, NodeId};
use crate::op::{GeluApprox, Op};
use crate::pass::{PassArgs, PassInfo};

const SQRT2: f64 = std::f64::consts::SQRT_2;
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const TOL: f64 = 1e-5;

fn is_mul(op: &Op) -> bool {
    matches!(op, Op::Mul)
}
fn is_div(op: &Op) -> bool {
    matches!(op, Op::Div)
}
fn is_add(op: &Op) -> bool {
    matches!(op, Op::Add)
}
fn is_pow(op: &Op) -> bool {
    matches!(op, Op::Pow)
}

/// `a = 1 + f`: the single user of `f` adding the constant 1.
fn plus_one(g: &MaseGraph, users: &[Vec<NodeId>], f: NodeId) -> Option<NodeId> {
    let a = single_user(g, users, f)?;
    let (other, c) = with_scalar(g, a, is_add, true)?;
    (other == f && close(c, 1.0, TOL)).then_some(a)
}

/// The products `x · 0.5 · a` in the orders PyTorch emits; returns the node computing them.
fn tail(g: &MaseGraph, users: &[Vec<NodeId>], a: NodeId, x: NodeId) -> Option<NodeId> {
    let u1 = single_user(g, users, a)?;
    if !is_mul(&g.node(u1).op) {
        return None;
    }
    let o = other_input(g, u1, a)?;
    if o == x {
        // (x · a) · 0.5 or (x · a) / 2
        let u2 = single_user(g, users, u1)?;
        if let Some((p, c)) = with_scalar(g, u2, is_mul, true) {
            return (p == u1 && close(c, 0.5, TOL)).then_some(u2);
        }
        let (p, c) = with_scalar(g, u2, is_div, false)?;
        return (p == u1 && close(c, 2.0, TOL)).then_some(u2);
    }
    if scalar_const(g, o).is_some_and(|(c, r)| r <= 1 && close(c, 0.5, TOL)) {
        // x · (a · 0.5)
        let (_, _) = with_scalar(g, u1, is_mul, true)?;
        let u2 = single_user(g, users, u1)?;
        return (is_mul(&g.node(u2).op) && other_input(g, u2, u1) == Some(x)).then_some(u2);
    }
    // (x · 0.5) · a
    let (hx, c) = with_scalar(g, o, is_mul, true)?;
    (hx == x && close(c, 0.5, TOL) && single_user(g, users, o) == Some(u1)).then_some(u1)
}

/// Erf form anchored at an Erf node: returns (root, x).
fn erf_form(g: &MaseGraph, users: &[Vec<NodeId>], e: NodeId) -> Option<(NodeId, NodeId)> {
    let t = sole_input(g, users, e, |op| matches!(op, Op::Erf))?;
    let x = if let Some((x, c)) = with_scalar(g, t, is_div, false) {
        close(c, SQRT2, TOL).then_some(x)?
    } else {
        let (x, c) = with_scalar(g, t, is_mul, true)?;
        close(c, 1.0 / SQRT2, TOL).then_some(x)?
    };
    let a = plus_one(g, users, e)?;
    Some((tail(g, users, a, x)?, x))
}

/// Tanh form anchored at a Tanh node: returns (root, x).
fn tanh_form(g: &MaseGraph, users: &[Vec<NodeId>], th: NodeId) -> Option<(NodeId, NodeId)> {
    let u = sole_input(g, users, th, |op| matches!(op, Op::Tanh))?;
    let (s, c1) = with_scalar(g, u, is_mul, true)?;
    if !close(c1, SQRT_2_OVER_PI, TOL) || single_user(g, users, s) != Some(u) || !is_add(&g.node(s).op) {
        return None;
    }
    let sn = g.node(s);
    if sn.inputs.len() != 2 {
        return None;
    }
    // One input of s is x, the other 0.044715 · x³.
    let cubic = |t3: NodeId, x: NodeId| -> Option<()> {
        let (p3, c) = with_scalar(g, t3, is_mul, true)?;
        if !close(c, 0.044_715, 1e-4) || single_user(g, users, t3) != Some(s) {
            return None;
        }
        let (px, e) = with_scalar(g, p3, is_pow, false)?;
        (px == x && e == 3.0 && single_user(g, users, p3) == Some(t3)).then_some(())
    };
    let (i0, i1) = (sn.inputs[0], sn.inputs[1]);
    let x = if cubic(i1, i0).is_some() {
        i0
    } else {
        cubic(i0, i1)?;
        i1
    };
    let a = plus_one(g, users, th)?;
    Some((tail(g, users, a, x)?, x))
}

fn find(g: &MaseGraph) -> Option<(NodeId, NodeId, NodeId, GeluApprox)> {
    let users = users_map(g);
    g.ids().find_map(|id| {
        erf_form(g, &users, id)
            .map(|(r, x)| (id, r, x, GeluApprox::None))
            .or_else(|| tanh_form(g, &users, id).map(|(r, x)| (id, r, x, GeluApprox::Tanh)))
    })
}

/// The pass (`raise_gelu` in [`super::REGISTRY`]): raises Erf-form and Tanh-form GELU sub-graphs to
/// `gelu`.
pub fn run(g: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    raise_all(g, |g| {
        let Some((anchor, root, x, approximate)) = find(g) else { return Ok(false) };
        let base = stem(&g.node(anchor).name, &["erf", "tanh"]).to_string();
        replace(g, root, &format!("{base}_gelu"), Op::Gelu { approximate }, vec![x])?;
        Ok(true)
    })
}
