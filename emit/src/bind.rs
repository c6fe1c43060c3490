//! Binding graph nodes to library components: which node needs hardware, which component and
//! parameters implement it at a given parallelism, and what its memories hold.
//!
//! Every node of a quantized graph is one of: a graph input or output (a port of the top), an
//! implicit node (reshapes and element-order-preserving transposes: no hardware, the stream
//! passes through), or a hardware node bound to one component. Anything else is an error naming
//! the node and its op and listing what the hardware flow supports.

use mase_hwlib::components::{gelu, transpose};
use mase_hwlib::{lookup, resolve_params, Component, Params};
use mase_ir::fixed::{decompose_f64, FixedFormat};
use mase_ir::metadata::TensorMeta;
use mase_ir::op::GeluApprox;
use mase_ir::quant::format_of;
use mase_ir::{Error, MaseGraph, Node, NodeId, Op, Result};

use crate::perm::{classify, swap_last_two, PermKind};

/// Ops the hardware flow maps (implicit ones included), for error messages.
pub const SUPPORTED_OPS: &str = "linear, matmul, relu, gelu (erf and tanh forms), softmax (last axis), \
layer_norm (last axis), add and sub (same shapes), mul by a scalar, transpose (block reorders such as \
head split/merge and 2-D transposes), and the implicit reshape, flatten, squeeze, unsqueeze, \
identity, dropout";

/// Parallelism of one hardware node: elements per beat on its main input and on its output.
/// For `linear` these are `P_IN` and `P_OUT` (so `P_IN·P_OUT` multipliers); for `matmul`
/// `p_in` is fixed to 1 and `p_out` is the output lanes; for element-wise and row ops both are
/// the lane count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Par {
    /// Elements per beat of the main input.
    pub p_in: usize,
    /// Elements per beat of the output.
    pub p_out: usize,
}

/// What a node is for the hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A graph input: a stream port of the top.
    Input,
    /// The graph output node: its producers drive output ports of the top.
    Output,
    /// No hardware; the stream of its (single) data input passes through.
    Implicit,
    /// Bound to a component.
    Hardware,
    /// A constant that only feeds weights (not streamed).
    Constant,
}

/// The role of `node` (an error for ops the hardware flow cannot map).
pub fn role(graph: &MaseGraph, node: &Node) -> Result<Role> {
    if node.meta.hardware.external.is_some() {
        return Ok(Role::Hardware);
    }
    Ok(match &node.op {
        Op::Placeholder => Role::Input,
        Op::Output => Role::Output,
        Op::Constant { .. } => Role::Constant,
        Op::Reshape { .. }
        | Op::Flatten { .. }
        | Op::Squeeze { .. }
        | Op::Unsqueeze { .. }
        | Op::Identity
        | Op::Dropout { .. } => Role::Implicit,
        Op::Transpose { perm } => {
            match classify(&in_shape(graph, node, 0)?, &effective_perm(graph, node, perm)) {
                Some(PermKind::Identity) => Role::Implicit,
                Some(PermKind::Block(_)) => Role::Hardware,
                None => {
                    return Err(node.error(format!(
                        "permutation {perm:?} of a tensor of shape {:?} is not a block reorder \
                     [A][B][C] -> [B][A][C] (head split/merge, 2-D transpose), which is what the \
                     transpose component implements",
                        in_shape(graph, node, 0)?
                    )))
                }
            }
        }
        Op::Linear { .. }
        | Op::Matmul
        | Op::Relu
        | Op::Gelu { .. }
        | Op::Softmax { .. }
        | Op::LayerNorm { .. }
        | Op::Add
        | Op::Sub
        | Op::MulScalar { .. } => Role::Hardware,
        Op::Mul
        | Op::Div
        | Op::Pow
        | Op::Sqrt
        | Op::Erf
        | Op::Tanh
        | Op::ReduceMean { .. }
        | Op::Concat { .. }
        | Op::Slice { .. }
        | Op::Gather { .. }
        | Op::Cast { .. }
        | Op::Shape { .. } => {
            return Err(node.error(format!(
                "no hardware component implements `{}`; the hardware flow supports {SUPPORTED_OPS}",
                node.op.mase_op()
            )))
        }
    })
}

/// Whether transpose `node` feeds nothing but the `B` operand of one matmul, with a permutation
/// whose last-two-axes swap is a cheaper reorder: then the matmul reads `Bᵀ` instead
/// (`TRANSPOSE_B = 1`), so `Q·Kᵀ` needs no element-by-element 2-D transpose of `K`, only the
/// head split, and the matmul's parallelism runs along the head dimension.
pub fn feeds_transposed_b(graph: &MaseGraph, node: &Node) -> bool {
    let Op::Transpose { perm } = &node.op else { return false };
    let Some(id) = graph.find(&node.name) else { return false };
    let users = graph.users(id);
    let [u] = users.as_slice() else { return false };
    let m = graph.node(*u);
    if !matches!(m.op, Op::Matmul)
        || m.inputs.len() != 2
        || m.inputs[1] != id
        || m.inputs[0] == id
        || perm.len() < 2
    {
        return false;
    }
    // Only when reading Bᵀ makes the transpose cheaper: the identity, a block reorder that moves
    // whole units (several lanes possible) rather than single elements (one lane), or any
    // mappable reorder instead of none.
    let cost = |k: Option<PermKind>| match k {
        Some(PermKind::Identity) => 0,
        Some(PermKind::Block(t)) if t.c > 1 => 1,
        Some(PermKind::Block(_)) => 2,
        None => 3,
    };
    in_shape(graph, node, 0)
        .is_ok_and(|s| cost(classify(&s, &swap_last_two(perm))) < cost(classify(&s, perm)))
}

/// The permutation a transpose node is built with: its own, or the `Bᵀ` one (see
/// [`feeds_transposed_b`]).
pub fn effective_perm(graph: &MaseGraph, node: &Node, perm: &[usize]) -> Vec<usize> {
    if feeds_transposed_b(graph, node) {
        swap_last_two(perm)
    } else {
        perm.to_vec()
    }
}

/// Whether matmul `node` reads its `B` operand transposed (see [`feeds_transposed_b`]).
pub fn matmul_transposed_b(graph: &MaseGraph, node: &Node) -> bool {
    node.inputs.get(1).is_some_and(|b| feeds_transposed_b(graph, graph.node(*b)))
}

/// Shape of the stream a node produces: its result, except for a transpose that feeds a
/// matmul's `Bᵀ`, whose stream is the result with the last two axes swapped back.
pub fn stream_shape(graph: &MaseGraph, node: &Node) -> Result<Vec<usize>> {
    let mut s = out_shape(node)?;
    if feeds_transposed_b(graph, node) {
        let n = s.len();
        s.swap(n - 2, n - 1);
    }
    Ok(s)
}

/// The component that implements a hardware node's op.
/// The component's registry name is the op's MASE name (`mul` is the scalar form only).
pub fn component_of(node: &Node) -> Result<&'static dyn Component> {
    match &node.op {
        Op::Linear { .. }
        | Op::Matmul
        | Op::Relu
        | Op::Gelu { .. }
        | Op::Softmax { .. }
        | Op::LayerNorm { .. }
        | Op::Add
        | Op::Sub
        | Op::MulScalar { .. }
        | Op::Transpose { .. } => lookup(node.op.mase_op()).map_err(|e| node.error(e)),
        Op::Placeholder
        | Op::Output
        | Op::Constant { .. }
        | Op::Reshape { .. }
        | Op::Flatten { .. }
        | Op::Squeeze { .. }
        | Op::Unsqueeze { .. }
        | Op::Identity
        | Op::Dropout { .. }
        | Op::Mul
        | Op::Div
        | Op::Pow
        | Op::Sqrt
        | Op::Erf
        | Op::Tanh
        | Op::ReduceMean { .. }
        | Op::Concat { .. }
        | Op::Slice { .. }
        | Op::Gather { .. }
        | Op::Cast { .. }
        | Op::Shape { .. } => {
            Err(node.error(format!("`{}` has no component ({SUPPORTED_OPS})", node.op.mase_op())))
        }
    }
}

/// Shape of data input `k` of `node`.
pub fn in_shape(graph: &MaseGraph, node: &Node, k: usize) -> Result<Vec<usize>> {
    let id = node.inputs.get(k).ok_or_else(|| node.error(format!("has no data input {k}")))?;
    graph
        .node(*id)
        .out_shape()
        .map(<[usize]>::to_vec)
        .ok_or_else(|| node.error(format!("input {k} has no shape; run add_common_metadata first")))
}

/// Shape of the result of `node`.
pub fn out_shape(node: &Node) -> Result<Vec<usize>> {
    node.out_shape()
        .map(<[usize]>::to_vec)
        .ok_or_else(|| node.error("has no result shape; run add_common_metadata first"))
}

fn fixed_of(node: &Node, tm: Option<&TensorMeta>, what: &str) -> Result<FixedFormat> {
    tm.and_then(format_of).ok_or_else(|| {
        node.error(format!(
            "{what} is not fixed point; run the quantize (or auto_precision) pass before the hardware passes"
        ))
    })
}

/// The declared format of data input `k` (from `common.args["data_in_k"]`).
pub fn in_format(node: &Node, k: usize) -> Result<FixedFormat> {
    let key = format!("data_in_{k}");
    fixed_of(node, node.meta.common.args.get(&key), &key)
}

/// The declared result format (`common.results["data_out_0"]`).
pub fn out_format(node: &Node) -> Result<FixedFormat> {
    fixed_of(node, node.meta.common.results.get("data_out_0"), "data_out_0")
}

/// The format a component input receives for a declared input format: components take signed
/// inputs, so an unsigned format becomes the signed format one bit wider (lossless).
pub fn signed_input(node: &Node, f: FixedFormat, max_width: u32) -> Result<FixedFormat> {
    let g = if f.signed { f } else { FixedFormat { signed: true, width: f.width + 1, ..f } };
    if g.width > max_width {
        return Err(node.error(format!(
            "input format {} is {} bits wide; the {} component takes at most {max_width}-bit signed inputs",
            fmt_name(&f),
            g.width,
            node.op.mase_op()
        )));
    }
    Ok(g)
}

/// `s16.8` / `u8.8`: a format's short name for messages and reports.
pub fn fmt_name(f: &FixedFormat) -> String {
    format!("{}{}.{}", if f.signed { "s" } else { "u" }, f.width, f.frac)
}

fn rows_cols(shape: &[usize]) -> (usize, usize) {
    let cols = shape.last().copied().unwrap_or(1);
    (shape.iter().product::<usize>() / cols.max(1), cols)
}

fn last_axis(node: &Node, axis: i64, rank: usize) -> Result<()> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a != rank as i64 - 1 {
        return Err(node.error(format!(
            "axis {axis} of a rank-{rank} tensor: the component works over the last axis only"
        )));
    }
    Ok(())
}

/// Output format parameters (`DATA_OUT_0_PRECISION_*`, rounding, overflow).
fn out_params(v: &mut Vec<(String, i64)>, f: &FixedFormat) {
    v.push(("DATA_OUT_0_PRECISION_0".into(), f.width as i64));
    v.push(("DATA_OUT_0_PRECISION_1".into(), f.frac as i64));
    v.push(("DATA_OUT_0_ROUNDING".into(), mase_hwlib::components::cast::rounding_code(f.rounding)));
    v.push(("DATA_OUT_0_OVERFLOW".into(), mase_hwlib::components::cast::overflow_code(f.overflow)));
}

fn in_params(v: &mut Vec<(String, i64)>, port: &str, f: &FixedFormat, shape2: (usize, usize), p0: usize) {
    v.push((format!("{port}_PRECISION_0"), f.width as i64));
    v.push((format!("{port}_PRECISION_1"), f.frac as i64));
    v.push((format!("{port}_TENSOR_SIZE_DIM_0"), shape2.1 as i64));
    v.push((format!("{port}_TENSOR_SIZE_DIM_1"), shape2.0 as i64));
    v.push((format!("{port}_PARALLELISM_DIM_0"), p0 as i64));
    v.push((format!("{port}_PARALLELISM_DIM_1"), 1));
}

/// The format of a scalar constant that holds `x` exactly (at most 32 bits), and its code.
pub fn scalar_format(node: &Node, x: f32) -> Result<(FixedFormat, i64)> {
    if x == 0.0 {
        return Ok((FixedFormat::signed(2, 0), 0));
    }
    let (mut code, mut frac) = decompose_f64(f64::from(x))
        .filter(|_| x.is_finite())
        .ok_or_else(|| node.error(format!("scalar {x} is not a finite number")))?;
    while code % 2 == 0 {
        code /= 2;
        frac -= 1;
    }
    let bits = 128 - code.unsigned_abs().leading_zeros() + 1;
    if bits > 32 {
        return Err(node
            .error(format!("scalar {x} needs {bits} bits; the mul component takes constants of up to 32")));
    }
    Ok((FixedFormat::signed(bits.max(2), frac), code as i64))
}

/// The epsilon of a layer norm as the component's integer code: `EPS · 2^-EPS_FRAC`, with the
/// largest `EPS_FRAC ≤ 64` that keeps `EPS < 2^31` (round to nearest).
pub fn eps_code(node: &Node, eps: f32) -> Result<(i64, i64)> {
    let e = f64::from(eps);
    if !(e > 0.0 && e.is_finite()) {
        return Err(
            node.error(format!("epsilon {eps} must be a positive number for the layer_norm component"))
        );
    }
    let mut frac = 64i32;
    while frac > 0 && (e * 2f64.powi(frac)).round() >= 2_147_483_647.0 {
        frac -= 1;
    }
    let code = (e * 2f64.powi(frac)).round().max(1.0);
    if code >= 2_147_483_647.0 {
        return Err(
            node.error(format!("epsilon {eps} is too large for the layer_norm component (below 2^31)"))
        );
    }
    Ok((code as i64, frac as i64))
}

/// The gelu table range for an input format and output fraction, memoized: the parallelism
/// search asks for it once per candidate, and it scans up to 2^16 function values.
fn gelu_range(x: &FixedFormat, out_frac: i32, approx: GeluApprox) -> (i64, i64) {
    type Key = (u32, i32, i32, bool);
    static MEMO: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<Key, (i64, i64)>>> =
        std::sync::OnceLock::new();
    let key = (x.width, x.frac, out_frac, approx == GeluApprox::Tanh);
    let memo = MEMO.get_or_init(Default::default);
    if let Some(r) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return *r;
    }
    let r = match approx {
        GeluApprox::None => gelu::table_range(x, out_frac),
        GeluApprox::Tanh => gelu::table_range_of(x, out_frac, gelu::gelu_tanh_f64),
    };
    memo.lock().unwrap_or_else(|e| e.into_inner()).insert(key, r);
    r
}

/// Component parameter overrides of a hardware node at parallelism `par` (before resolution).
pub fn overrides(graph: &MaseGraph, node: &Node, par: Par) -> Result<Vec<(String, i64)>> {
    let mut v: Vec<(String, i64)> = Vec::new();
    let out = out_format(node)?;
    match &node.op {
        Op::Linear { weight, bias } => {
            let x = signed_input(node, in_format(node, 0)?, 32)?;
            let (rows, cols) = rows_cols(&in_shape(graph, node, 0)?);
            in_params(&mut v, "DATA_IN_0", &x, (rows, cols), par.p_in);
            let w = qweight(graph, node, weight)?;
            let shape = w.codes.shape().to_vec();
            if shape.len() != 2 || shape[1] != cols {
                return Err(
                    node.error(format!("weight `{weight}` has shape {shape:?}; expected [out, {cols}]"))
                );
            }
            v.push(("WEIGHT_PRECISION_0".into(), w.format.width as i64));
            v.push(("WEIGHT_PRECISION_1".into(), w.format.frac as i64));
            v.push(("WEIGHT_TENSOR_SIZE_DIM_1".into(), shape[0] as i64));
            v.push(("WEIGHT_PARALLELISM_DIM_1".into(), par.p_out as i64));
            match bias {
                Some(b) => {
                    let b = qweight(graph, node, b)?;
                    v.push(("HAS_BIAS".into(), 1));
                    v.push(("BIAS_PRECISION_0".into(), b.format.width as i64));
                    v.push(("BIAS_PRECISION_1".into(), b.format.frac as i64));
                }
                None => v.push(("HAS_BIAS".into(), 0)),
            }
            out_params(&mut v, &out);
        }
        Op::Matmul => {
            let (a, b) = (in_shape(graph, node, 0)?, in_shape(graph, node, 1)?);
            if a.len() < 2
                || b.len() < 2
                || a[..a.len() - 2] != b[..b.len() - 2]
                || a[a.len() - 1] != b[b.len() - 2]
            {
                return Err(node.error(format!(
                    "operands {a:?} · {b:?}: the matmul component takes [..., N, K] · [..., K, M] with equal batch dimensions"
                )));
            }
            let (n, k, m) = (a[a.len() - 2], a[a.len() - 1], b[b.len() - 1]);
            let fa = signed_input(node, in_format(node, 0)?, 32)?;
            let fb = signed_input(node, in_format(node, 1)?, 32)?;
            let extra = [
                ("DATA_IN_0_PRECISION_0", fa.width as i64),
                ("DATA_IN_0_PRECISION_1", fa.frac as i64),
                ("DATA_IN_1_PRECISION_0", fb.width as i64),
                ("DATA_IN_1_PRECISION_1", fb.frac as i64),
            ];
            let p = mase_hwlib::components::matmul::instance(
                n as i64,
                k as i64,
                m as i64,
                par.p_in as i64,
                par.p_out as i64,
                matmul_transposed_b(graph, node),
                &extra,
            );
            v.extend(p.into_iter().map(|(k, x)| (k.to_string(), x)));
            out_params(&mut v, &out);
        }
        Op::Relu => {
            let x = signed_input(node, in_format(node, 0)?, 64)?;
            in_params(&mut v, "DATA_IN_0", &x, rows_cols(&in_shape(graph, node, 0)?), par.p_in);
        }
        Op::Gelu { approximate } => {
            let x = signed_input(node, in_format(node, 0)?, 16)?;
            in_params(&mut v, "DATA_IN_0", &x, rows_cols(&in_shape(graph, node, 0)?), par.p_in);
            out_params(&mut v, &out);
            // The narrowest table whose 0 / identity tails stay within a quarter output LSB of
            // the function (the component's recommended range).
            let (lo, hi) = gelu_range(&x, out.frac, *approximate);
            v.push(("TABLE_NEG".into(), -lo));
            v.push(("TABLE_POS".into(), hi));
        }
        Op::Softmax { axis } => {
            let shape = in_shape(graph, node, 0)?;
            last_axis(node, *axis, shape.len())?;
            let x = signed_input(node, in_format(node, 0)?, 16)?;
            in_params(&mut v, "DATA_IN_0", &x, rows_cols(&shape), par.p_in);
            out_params(&mut v, &out);
            v.push(("DATA_OUT_0_SIGNED".into(), out.signed as i64));
        }
        Op::LayerNorm { axis, epsilon, weight, bias } => {
            let shape = in_shape(graph, node, 0)?;
            last_axis(node, *axis, shape.len())?;
            let x = signed_input(node, in_format(node, 0)?, 32)?;
            in_params(&mut v, "DATA_IN_0", &x, rows_cols(&shape), par.p_in);
            let gamma = match weight {
                Some(w) => qweight(graph, node, w)?.format,
                None => FixedFormat::signed(2, 0),
            };
            let beta = match bias {
                Some(b) => qweight(graph, node, b)?.format,
                None => FixedFormat::signed(2, 0),
            };
            v.push(("WEIGHT_PRECISION_0".into(), gamma.width as i64));
            v.push(("WEIGHT_PRECISION_1".into(), gamma.frac as i64));
            v.push(("BIAS_PRECISION_0".into(), beta.width as i64));
            v.push(("BIAS_PRECISION_1".into(), beta.frac as i64));
            let (eps, eps_frac) = eps_code(node, *epsilon)?;
            v.push(("EPS".into(), eps));
            v.push(("EPS_FRAC".into(), eps_frac));
            out_params(&mut v, &out);
        }
        Op::Add | Op::Sub => {
            let (a, b) = (in_shape(graph, node, 0)?, in_shape(graph, node, 1)?);
            if a != b {
                return Err(node.error(format!(
                    "operands of shapes {a:?} and {b:?}: the {} component takes equal shapes (no broadcasting)",
                    node.op.mase_op()
                )));
            }
            let fa = signed_input(node, in_format(node, 0)?, 64)?;
            let fb = signed_input(node, in_format(node, 1)?, 64)?;
            in_params(&mut v, "DATA_IN_0", &fa, rows_cols(&a), par.p_in);
            v.push(("DATA_IN_1_PRECISION_0".into(), fb.width as i64));
            v.push(("DATA_IN_1_PRECISION_1".into(), fb.frac as i64));
            out_params(&mut v, &out);
        }
        Op::MulScalar { scalar } => {
            let x = signed_input(node, in_format(node, 0)?, 32)?;
            in_params(&mut v, "DATA_IN_0", &x, rows_cols(&in_shape(graph, node, 0)?), par.p_in);
            let (cf, code) = scalar_format(node, *scalar)?;
            v.push(("CONST_PRECISION_0".into(), cf.width as i64));
            v.push(("CONST_PRECISION_1".into(), cf.frac as i64));
            v.push(("CONST_PER_CHANNEL".into(), 0));
            v.push(("CONST_VALUE".into(), code));
            out_params(&mut v, &out);
        }
        Op::Transpose { perm } => {
            let shape = in_shape(graph, node, 0)?;
            let Some(PermKind::Block(t)) = classify(&shape, &effective_perm(graph, node, perm)) else {
                return Err(node.error("transpose is not a block reorder (component_of/role disagree)"));
            };
            let x = in_format(node, 0)?;
            let p = transpose::instance(
                x.width as i64,
                (t.b * t.c) as i64,
                t.a as i64,
                par.p_in as i64,
                1,
                t.c as i64,
            );
            v.extend(p.into_iter().map(|(k, x)| (k.to_string(), x)));
            v.push(("DATA_IN_0_PRECISION_1".into(), x.frac as i64));
        }
        Op::Placeholder
        | Op::Output
        | Op::Constant { .. }
        | Op::Reshape { .. }
        | Op::Flatten { .. }
        | Op::Squeeze { .. }
        | Op::Unsqueeze { .. }
        | Op::Identity
        | Op::Dropout { .. }
        | Op::Mul
        | Op::Div
        | Op::Pow
        | Op::Sqrt
        | Op::Erf
        | Op::Tanh
        | Op::ReduceMean { .. }
        | Op::Concat { .. }
        | Op::Slice { .. }
        | Op::Gather { .. }
        | Op::Cast { .. }
        | Op::Shape { .. } => {
            return Err(node.error(format!("`{}` is not a hardware op ({SUPPORTED_OPS})", node.op.mase_op())))
        }
    }
    Ok(v)
}

/// Resolved parameters of a hardware node at parallelism `par` (validated by the component).
pub fn params(graph: &MaseGraph, node: &Node, par: Par) -> Result<Params> {
    let c = component_of(node)?;
    let o = overrides(graph, node, par)?;
    resolve_params(c, &o).map_err(|e| node.error(format!("at parallelism {}x{}: {e}", par.p_in, par.p_out)))
}

fn qweight<'g>(graph: &'g MaseGraph, node: &Node, key: &str) -> Result<&'g mase_ir::tensor::QuantTensor> {
    graph.qweights.get(key).ok_or_else(|| {
        node.error(format!(
            "weight `{key}` is not quantized; run the quantize (or auto_precision) pass first"
        ))
    })
}

/// Logical contents of a hardware node's memories (as `Component::layout_memory` takes them).
pub fn memories(graph: &MaseGraph, node: &Node, p: &Params) -> Result<Vec<(String, Vec<i64>)>> {
    let mut m = data_memories(graph, node, p)?;
    let c = component_of(node)?;
    for spec in c.memories(p) {
        if m.iter().any(|(n, _)| *n == spec.name) {
            continue;
        }
        let v = c.generated_memory(p, &spec.name).ok_or_else(|| {
            node.error(format!("no contents for memory `{}` of component {}", spec.name, c.name()))
        })?;
        m.push((spec.name, v));
    }
    Ok(m)
}

fn data_memories(graph: &MaseGraph, node: &Node, p: &Params) -> Result<Vec<(String, Vec<i64>)>> {
    let flat =
        |key: &str| -> Result<Vec<i64>> { Ok(qweight(graph, node, key)?.codes.iter().copied().collect()) };
    Ok(match &node.op {
        Op::Linear { weight, bias } => {
            let mut m = vec![("weight".to_string(), flat(weight)?)];
            if let Some(b) = bias {
                m.push(("bias".to_string(), flat(b)?));
            }
            m
        }
        Op::LayerNorm { weight, bias, .. } => {
            let d = mase_hwlib::param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
            let gamma = match weight {
                Some(w) => flat(w)?,
                None => vec![1; d],
            };
            let beta = match bias {
                Some(b) => flat(b)?,
                None => vec![0; d],
            };
            vec![("weight".to_string(), gamma), ("bias".to_string(), beta)]
        }
        // The tanh form uses the component's table lookup with its own table.
        Op::Gelu { approximate: GeluApprox::Tanh } => {
            vec![("table".to_string(), gelu::function_table(p, gelu::gelu_tanh_f64))]
        }
        // The other components' memories are generated from their parameters, if any.
        Op::Gelu { approximate: GeluApprox::None }
        | Op::Matmul
        | Op::Relu
        | Op::Softmax { .. }
        | Op::Add
        | Op::Sub
        | Op::MulScalar { .. }
        | Op::Transpose { .. }
        | Op::Placeholder
        | Op::Output
        | Op::Constant { .. }
        | Op::Reshape { .. }
        | Op::Flatten { .. }
        | Op::Squeeze { .. }
        | Op::Unsqueeze { .. }
        | Op::Identity
        | Op::Dropout { .. }
        | Op::Mul
        | Op::Div
        | Op::Pow
        | Op::Sqrt
        | Op::Erf
        | Op::Tanh
        | Op::ReduceMean { .. }
        | Op::Concat { .. }
        | Op::Slice { .. }
        | Op::Gather { .. }
        | Op::Cast { .. }
        | Op::Shape { .. } => Vec::new(),
    })
}

/// The user's module bound to `node`, when its hardware metadata names a manifest (relative
/// paths resolve against `base`, the emitted project holding the graph).
pub fn external_of(
    graph: &MaseGraph,
    node: &Node,
    base: Option<&std::path::Path>,
) -> Result<Option<std::sync::Arc<crate::external::External>>> {
    match &node.meta.hardware.external {
        None => Ok(None),
        Some(p) => {
            let path = crate::external::resolve(base, p);
            Ok(Some(std::sync::Arc::new(crate::external::External::load(&path, graph, node)?)))
        }
    }
}

/// Node-independent error for a graph that cannot be emitted.
pub fn graph_error(msg: impl Into<String>) -> Error {
    Error::Config(msg.into())
}

/// The data inputs of `id`, each followed back through implicit nodes to the node that
/// produces its stream (a graph input or a hardware node).
pub fn stream_sources(graph: &MaseGraph, id: NodeId) -> Result<Vec<NodeId>> {
    graph.node(id).inputs.iter().map(|&i| stream_source(graph, i)).collect()
}

/// Follows `id` back through implicit nodes to the node producing its stream.
pub fn stream_source(graph: &MaseGraph, mut id: NodeId) -> Result<NodeId> {
    loop {
        let n = graph.node(id);
        match role(graph, n)? {
            Role::Implicit => {
                id = *n.inputs.first().ok_or_else(|| n.error("implicit node without an input"))?
            }
            Role::Constant => {
                return Err(n.error(format!(
                "a constant tensor used as a streamed operand is not supported in hardware ({SUPPORTED_OPS})"
            )))
            }
            _ => return Ok(id),
        }
    }
}
