//! Quantized execution: the graph run with every tensor cast to its format at the node
//! boundaries, for accuracy studies.
//!
//! Each node's data inputs are cast (by [`crate::fixed::cast_code`], or
//! [`crate::fixed::from_f64`] from a float value) into the node's `data_in_k` format when that is
//! fixed; weights, biases and constants come from [`crate::MaseGraph::qweights`]; the result is
//! cast once into `data_out_0`. Nodes whose result is not fixed run in float (f32) on the
//! dequantized values of their inputs.
//!
//! **Exact** (integer arithmetic on the codes, one rounding at the output, as the hardware's
//! full-precision datapath followed by its output cast):
//! `linear` (Σ x·w in i128 plus the bias aligned to the product's fraction), `matmul` (rank ≥ 2,
//! numpy batch broadcasting), `add`, `sub`, `mul` (aligned / full products with broadcasting),
//! `mul` by a scalar (the f32 scalar is an exact dyadic rational), `relu`, a quantized
//! `constant`, `embedding` (rows of the quantized table), and the element-moving ops `reshape`,
//! `transpose`, `flatten`, `squeeze`, `unsqueeze`, `slice`, `gather`, `gather_nd`, `expand`,
//! `where`, `cat` (fixed inputs of one format; integer indices and boolean conditions go along
//! unchanged), `identity`, `dropout`; and `qlinear` on integer codes with real scales, and a
//! weight-only `linear` (the model's own weight codes with real scales) between fixed-point
//! formats ([`super::qlinear`], the hardware's integer requantisation).
//!
//! Integer and boolean results (token ids, masks, comparisons, shapes) have no format and are
//! computed exactly by the interpreter.
//!
//! **Emulated** (the float interpreter in f32 on the dequantized inputs and weights, the result
//! rounded once into `data_out_0`): `gelu`, `softmax`, `layer_norm`, `div`, `pow`, `sqrt`,
//! `erf`, `tanh`, `mean`, `sum`, `max`, `min`, `cast`, and anything the exact path cannot take
//! (e.g. a 1-D matmul operand). These approximate what the RTL's integer algorithms compute; the bit-exact golden
//! model of each component lives with the components (mase-hwlib). Dequantizing to f32 is exact
//! for codes of up to 24 significant bits.

use std::collections::{BTreeMap, HashMap};

use ndarray::{ArrayD, Axis, IxDyn};

use crate::error::{Error, Result};
use crate::fixed::{cast_code, decompose_f64, from_f64, FixedFormat};
use crate::graph::{MaseGraph, Node};
use crate::interp::{check_input_names, eval_op, placeholder_value};
use crate::op::Op;
use crate::tensor::Tensor;

use super::saturation::SaturationCounter;
use super::{dequantize, format_of};

/// A value during quantized execution.
#[derive(Debug, Clone, PartialEq)]
pub enum QValue {
    /// A float (or integer shape/index) tensor.
    Float(Tensor),
    /// Codes in a fixed-point format.
    Fixed {
        /// The codes.
        codes: ArrayD<i64>,
        /// Their format.
        format: FixedFormat,
    },
}

impl QValue {
    /// The value as a tensor: dequantized f32 for fixed values.
    pub fn to_tensor(&self) -> Tensor {
        match self {
            QValue::Float(t) => t.clone(),
            QValue::Fixed { codes, format } => Tensor::F32(dequantize(codes, format)),
        }
    }

    /// The value cast into `fmt` (integer tensors are taken as integers).
    pub fn cast_to(&self, fmt: &FixedFormat) -> ArrayD<i64> {
        match self {
            QValue::Float(Tensor::F32(a)) => a.mapv(|x| from_f64(f64::from(x), fmt)),
            QValue::Float(t) => t.to_i64().mapv(|c| cast_code(c as i128, 0, fmt)),
            QValue::Fixed { codes, format } if format == fmt => codes.clone(),
            QValue::Fixed { codes, format } => codes.mapv(|c| cast_code(c as i128, format.frac, fmt)),
        }
    }
}

/// An exact intermediate: wide codes at one fractional bit count.
struct Wide {
    codes: ArrayD<i128>,
    frac: i32,
}

fn fixed_in(v: &QValue) -> Option<(&ArrayD<i64>, &FixedFormat)> {
    match v {
        QValue::Fixed { codes, format } => Some((codes, format)),
        QValue::Float(_) => None,
    }
}

/// Two wide arrays aligned to the finer fraction (`None` when the shift exceeds 63 bits).
fn align(a: &ArrayD<i64>, fa: i32, b: &ArrayD<i64>, fb: i32) -> Option<(ArrayD<i128>, ArrayD<i128>, i32)> {
    let f = fa.max(fb);
    let (sa, sb) = ((f - fa) as u32, (f - fb) as u32);
    if sa > 63 || sb > 63 {
        return None;
    }
    Some((a.mapv(|c| (c as i128) << sa), b.mapv(|c| (c as i128) << sb), f))
}

/// Co-broadcasts two arrays (numpy rules) and combines them element-wise.
fn zip_broadcast(
    a: &ArrayD<i128>,
    b: &ArrayD<i128>,
    f: impl Fn(i128, i128) -> Option<i128>,
) -> std::result::Result<ArrayD<i128>, String> {
    let shape = crate::interp::elementwise::broadcast_shapes(a.shape(), b.shape())
        .ok_or_else(|| format!("shapes {:?} and {:?} do not broadcast", a.shape(), b.shape()))?;
    let av = a.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?;
    let bv = b.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?;
    let mut out = ArrayD::<i128>::zeros(IxDyn(&shape));
    for ((o, x), y) in out.iter_mut().zip(av.iter()).zip(bv.iter()) {
        *o = f(*x, *y).ok_or("the exact result exceeds 128 bits")?;
    }
    Ok(out)
}

/// Σ x·wᵀ (+ b) over the last axis, exact.
fn linear_exact(
    x: &ArrayD<i64>,
    fx: i32,
    w: &ArrayD<i64>,
    fw: i32,
    b: Option<(&ArrayD<i64>, i32)>,
) -> std::result::Result<Wide, String> {
    let k = *x.shape().last().ok_or("linear input is a scalar")?;
    if w.ndim() != 2 || w.shape()[1] != k {
        return Err(format!("linear: weight {:?} does not match input {:?}", w.shape(), x.shape()));
    }
    let n_out = w.shape()[0];
    let rows = x.len() / k.max(1);
    let xs = x
        .as_standard_layout()
        .into_owned()
        .into_shape_with_order(IxDyn(&[rows, k]))
        .map_err(|e| e.to_string())?;
    let w2 = w.view().into_dimensionality::<ndarray::Ix2>().map_err(|e| e.to_string())?;
    let fp = fx + fw;
    let (frac, acc_shift, bias_shift) = match b {
        Some((_, fb)) if fb > fp => (fb, (fb - fp) as u32, 0),
        Some((_, fb)) => (fp, 0, (fp - fb) as u32),
        None => (fp, 0, 0),
    };
    if acc_shift > 63 || bias_shift > 63 {
        return Err("linear: the bias and product fractions differ by more than 63 bits".into());
    }
    let mut out = Vec::with_capacity(rows * n_out);
    for r in 0..rows {
        let xr = xs.index_axis(Axis(0), r);
        for o in 0..n_out {
            let wr = w2.row(o);
            let pairs = xr.iter().zip(wr.iter()).map(|(&a, &b)| (a, b));
            let (acc, _) =
                crate::fixed::accumulate(pairs, fx, fw).ok_or("linear: the sum exceeds 128 bits")?;
            let mut v = acc.checked_mul(1i128 << acc_shift).ok_or("linear: the sum exceeds 128 bits")?;
            if let Some((bias, _)) = b {
                let bc = bias.get(IxDyn(&[o])).copied().ok_or("linear: bias shorter than the output")?;
                v = v.checked_add((bc as i128) << bias_shift).ok_or("linear: the sum exceeds 128 bits")?;
            }
            out.push(v);
        }
    }
    let mut shape = x.shape().to_vec();
    *shape.last_mut().expect("rank >= 1") = n_out;
    Ok(Wide { codes: ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string())?, frac })
}

/// numpy matmul of rank ≥ 2 operands, exact.
fn matmul_exact(a: &ArrayD<i64>, b: &ArrayD<i64>) -> Option<std::result::Result<ArrayD<i128>, String>> {
    if a.ndim() < 2 || b.ndim() < 2 {
        return None;
    }
    let (m, k) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
    let (k2, n) = (b.shape()[b.ndim() - 2], b.shape()[b.ndim() - 1]);
    if k != k2 {
        return Some(Err(format!("matmul: shapes {:?} and {:?} do not chain", a.shape(), b.shape())));
    }
    let batch =
        crate::interp::elementwise::broadcast_shapes(&a.shape()[..a.ndim() - 2], &b.shape()[..b.ndim() - 2])?;
    let nb: usize = batch.iter().product();
    let full = |x: &ArrayD<i64>, r: usize, c: usize| -> Option<ArrayD<i64>> {
        let mut s = batch.clone();
        s.extend([r, c]);
        let v = x.broadcast(IxDyn(&s))?.to_owned();
        v.into_shape_with_order(IxDyn(&[nb, r, c])).ok()
    };
    let (a3, b3) = (full(a, m, k)?, full(b, k, n)?);
    let mut out = Vec::with_capacity(nb * m * n);
    for bi in 0..nb {
        for i in 0..m {
            for j in 0..n {
                let mut acc: i128 = 0;
                for t in 0..k {
                    let p = a3[[bi, i, t]] as i128 * b3[[bi, t, j]] as i128;
                    match acc.checked_add(p) {
                        Some(v) => acc = v,
                        None => return Some(Err("matmul: the sum exceeds 128 bits".into())),
                    }
                }
                out.push(acc);
            }
        }
    }
    let mut shape = batch;
    shape.extend([m, n]);
    Some(ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string()))
}

/// The exact result of a node whose result is fixed, or `None` when the op is emulated.
fn exact(node: &Node, ins: &[QValue], graph: &MaseGraph) -> Option<std::result::Result<Wide, String>> {
    let q = &graph.qweights;
    let wide = |c: &ArrayD<i64>, frac: i32| Wide { codes: c.mapv(|v| v as i128), frac };
    match &node.op {
        Op::Constant { tensor } => q.get(tensor)?.fixed().map(|t| Ok(wide(&t.codes, t.format.frac))),
        Op::Linear { weight, bias } => {
            let (x, fx) = fixed_in(ins.first()?)?;
            let w = q.get(weight)?.fixed()?;
            let b = match bias {
                Some(k) => Some(q.get(k)?.fixed()?),
                None => None,
            };
            Some(linear_exact(
                x,
                fx.frac,
                &w.aligned_codes(),
                w.format.frac,
                b.map(|b| (&b.codes, b.format.frac)),
            ))
        }
        Op::Matmul => {
            let (a, fa) = fixed_in(ins.first()?)?;
            let (b, fb) = fixed_in(ins.get(1)?)?;
            let r = matmul_exact(a, b)?;
            Some(r.map(|codes| Wide { codes, frac: fa.frac + fb.frac }))
        }
        Op::Relu => {
            let (x, f) = fixed_in(ins.first()?)?;
            Some(Ok(Wide { codes: x.mapv(|c| c.max(0) as i128), frac: f.frac }))
        }
        Op::Add | Op::Sub | Op::Mul => {
            let (a, fa) = fixed_in(ins.first()?)?;
            let (b, fb) = fixed_in(ins.get(1)?)?;
            if matches!(node.op, Op::Mul) {
                let (aw, bw) = (a.mapv(|c| c as i128), b.mapv(|c| c as i128));
                return Some(
                    zip_broadcast(&aw, &bw, |x, y| x.checked_mul(y))
                        .map(|codes| Wide { codes, frac: fa.frac + fb.frac }),
                );
            }
            let (aw, bw, f) = align(a, fa.frac, b, fb.frac)?;
            let sub = matches!(node.op, Op::Sub);
            Some(
                zip_broadcast(&aw, &bw, |x, y| if sub { x.checked_sub(y) } else { x.checked_add(y) })
                    .map(|codes| Wide { codes, frac: f }),
            )
        }
        Op::MulScalar { scalar } => {
            let (x, f) = fixed_in(ins.first()?)?;
            let (m, e) = decompose_f64(f64::from(*scalar)).unwrap_or((0, 0));
            if !scalar.is_finite() {
                return None;
            }
            Some(Ok(Wide { codes: x.mapv(|c| c as i128 * m), frac: f.frac + e }))
        }
        Op::Embedding { table } => {
            let t = q.get(table)?;
            let idx = match ins.first()? {
                QValue::Float(i) => crate::interp::shape::index_values("embedding", i),
                QValue::Fixed { .. } => return None,
            };
            let rows = Tensor::I64(t.codes.clone());
            Some(idx.and_then(|i| crate::interp::shape::gather(&rows, &i, 0)).and_then(|r| match r {
                Tensor::I64(c) => Ok(wide(&c, t.format.frac)),
                _ => Err("embedding: the table codes are not integers".into()),
            }))
        }
        op if super::plan::is_carrier(op) => {
            // The fixed inputs (one format) move as codes; integer indices and boolean
            // conditions go along as they are; a float input means the move is not exact.
            let format = carried_format(ins)?;
            let mut ts = Vec::with_capacity(ins.len());
            for v in ins {
                ts.push(match v {
                    QValue::Fixed { codes, format: f } if *f == format => Tensor::I64(codes.clone()),
                    QValue::Fixed { .. } | QValue::Float(Tensor::F32(_)) => return None,
                    QValue::Float(t) => t.clone(),
                });
            }
            let refs: Vec<&Tensor> = ts.iter().collect();
            Some(eval_op(op, &refs, &graph.weights).and_then(|t| match t {
                Tensor::I64(c) => Ok(wide(&c, format.frac)),
                _ => Err("element-moving op returned another type from integer codes".into()),
            }))
        }
        // Everything else is emulated in floating point (its result is re-quantized to the
        // declared format): gelu, softmax, layer_norm, div, pow, sqrt, erf, tanh, the
        // reductions, max/min, and the ops on integers and booleans, which have no format.
        _ => None,
    }
}

/// The format of the fixed inputs of an element-moving node, when it has some.
fn carried_format(ins: &[QValue]) -> Option<FixedFormat> {
    ins.iter().find_map(|v| fixed_in(v).map(|(_, f)| *f))
}

/// The format the exact result of a constant or an element-moving node already has (its cast
/// into `data_out_0` is then no cast and is not counted).
fn moved_format(node: &Node, ins: &[QValue], graph: &MaseGraph) -> Option<FixedFormat> {
    if let Op::Constant { tensor } = &node.op {
        return graph.qweights.get(tensor).and_then(|t| t.fixed()).map(|t| t.format);
    }
    if super::plan::is_carrier(&node.op) {
        return carried_format(ins);
    }
    None
}

/// Weights for float evaluation: the float tensors, with the quantized ones dequantized when
/// `quantized` is set.
fn eval_weights(node: &Node, graph: &MaseGraph, quantized: bool) -> BTreeMap<String, Tensor> {
    let mut w = BTreeMap::new();
    for (_, key) in node.op.weight_names() {
        let t = match graph.qweights.get(key) {
            Some(q) if quantized => Tensor::F32(q.dequantize()),
            _ => match graph.weights.get(key) {
                Some(t) => t.clone(),
                None => continue,
            },
        };
        w.insert(key.to_string(), t);
    }
    w
}

/// Runs the graph quantized and returns the value of every node (see the module
/// documentation). `inputs` maps graph input names to float tensors.
pub fn run_quantized_values(graph: &MaseGraph, inputs: &HashMap<String, Tensor>) -> Result<Vec<QValue>> {
    run_values(graph, inputs, None)
}

/// `value` cast into `fmt`, counted under `site` when a counter is given.
fn cast_counted(
    sat: &mut Option<&mut SaturationCounter>,
    site: &str,
    value: &QValue,
    fmt: &FixedFormat,
) -> ArrayD<i64> {
    let codes = value.cast_to(fmt);
    if let Some(s) = sat.as_deref_mut() {
        s.record_value(site, value, fmt, &codes);
    }
    codes
}

/// The value of every node; every cast is counted in `sat` when given (see
/// [`super::saturation`]).
fn run_values(
    graph: &MaseGraph,
    inputs: &HashMap<String, Tensor>,
    mut sat: Option<&mut SaturationCounter>,
) -> Result<Vec<QValue>> {
    let expected = check_input_names(graph, inputs)?;
    let mut values: Vec<QValue> = Vec::with_capacity(graph.len());
    for (_, node) in graph.nodes() {
        if let Some(s) = sat.as_deref_mut() {
            mark_mask_sites(graph, node, s);
        }
        let out_fmt = node.meta.common.results.get("data_out_0").and_then(format_of);
        let raw = if let Op::Placeholder = &node.op {
            QValue::Float(placeholder_value(node, inputs, &expected)?.clone())
        } else {
            let mut ins = Vec::with_capacity(node.inputs.len());
            for (k, i) in node.inputs.iter().enumerate() {
                let v = &values[i.0];
                let fmt = node.meta.common.args.get(&format!("data_in_{k}")).and_then(format_of);
                ins.push(match fmt {
                    Some(f) => QValue::Fixed {
                        codes: cast_counted(&mut sat, &format!("{}/data_in_{k}", node.name), v, &f),
                        format: f,
                    },
                    None => v.clone(),
                });
            }
            if matches!(node.op, Op::Output) {
                ins.into_iter().next().ok_or_else(|| node.error("the output node has no inputs"))?
            } else if let Op::Qlinear { .. } = &node.op {
                let x = ins.first().ok_or_else(|| node.error("qlinear has no input"))?.to_tensor().to_i64();
                let y = super::qlinear::qlinear_codes(graph, &node.op, &x).map_err(|m| node.error(m))?;
                QValue::Float(Tensor::I64(y))
            } else if let (Some(y), Some(QValue::Fixed { codes, format: x }), true) =
                (out_fmt, ins.first(), super::qlinear::is_weight_only(graph, node))
            {
                let p = super::qlinear::weight_only_plan(graph, node, x, &y).map_err(|m| node.error(m))?;
                let codes = super::qlinear::linear_codes(&p, codes).map_err(|m| node.error(m))?;
                QValue::Fixed { codes, format: y }
            } else {
                match out_fmt.and_then(|_| exact(node, &ins, graph)) {
                    Some(Ok(w)) => {
                        let f = out_fmt.expect("checked");
                        let codes = w.codes.mapv(|c| cast_code(c, w.frac, &f));
                        let moved = moved_format(node, &ins, graph) == Some(f);
                        if let (Some(s), false) = (sat.as_deref_mut(), moved) {
                            s.record_wide(&node.name, &w.codes, w.frac, &f, &codes);
                        }
                        QValue::Fixed { codes, format: f }
                    }
                    Some(Err(m)) => return Err(node.error(m)),
                    None => {
                        let ts: Vec<Tensor> = ins.iter().map(QValue::to_tensor).collect();
                        let refs: Vec<&Tensor> = ts.iter().collect();
                        let w = eval_weights(node, graph, out_fmt.is_some());
                        QValue::Float(eval_op(&node.op, &refs, &w).map_err(|m| node.error(m))?)
                    }
                }
            }
        };
        let v = match (out_fmt, raw) {
            (Some(f), v @ QValue::Float(Tensor::F32(_))) | (Some(f), v @ QValue::Fixed { .. }) => match &v {
                QValue::Fixed { format, .. } if *format == f => v,
                _ => QValue::Fixed { codes: cast_counted(&mut sat, &node.name, &v, &f), format: f },
            },
            (_, v) => v,
        };
        values.push(v);
    }
    Ok(values)
}

/// True when calibration saw additive-mask values in the result of `node`.
fn carries_mask(node: &Node) -> bool {
    node.meta.software.results.get("data_out_0").is_some_and(|r| r.stat.mask_values.is_some())
}

/// Marks the cast sites of `node` that carry an additive mask: its result, and each input whose
/// producer's result does.
fn mark_mask_sites(graph: &MaseGraph, node: &Node, sat: &mut SaturationCounter) {
    if carries_mask(node) {
        sat.mark_mask(&node.name);
    }
    for (k, i) in node.inputs.iter().enumerate() {
        if carries_mask(graph.node(*i)) {
            sat.mark_mask(&format!("{}/data_in_{k}", node.name));
        }
    }
}

/// Runs the graph quantized and returns what its output node returns, dequantized to f32.
pub fn run_quantized(graph: &MaseGraph, inputs: &HashMap<String, Tensor>) -> Result<Vec<Tensor>> {
    run_outputs(graph, inputs, None)
}

/// [`run_quantized`], also counting in `sat` how many elements every cast clipped or wrapped
/// (see [`super::saturation`]); call it once per inference with the same counter to sum them.
pub fn run_quantized_counted(
    graph: &MaseGraph,
    inputs: &HashMap<String, Tensor>,
    sat: &mut SaturationCounter,
) -> Result<Vec<Tensor>> {
    run_outputs(graph, inputs, Some(sat))
}

fn run_outputs(
    graph: &MaseGraph,
    inputs: &HashMap<String, Tensor>,
    sat: Option<&mut SaturationCounter>,
) -> Result<Vec<Tensor>> {
    let out = graph
        .output_id()
        .ok_or_else(|| Error::Invalid(format!("graph '{}' has no output node", graph.name)))?;
    // The output node's input casts were counted by run_values; these repeat them.
    let values = run_values(graph, inputs, sat)?;
    let node = graph.node(out);
    let mut outs = Vec::new();
    for (k, i) in node.inputs.iter().enumerate() {
        let v = &values[i.0];
        let fmt = node.meta.common.args.get(&format!("data_in_{k}")).and_then(format_of);
        outs.push(match fmt {
            Some(f) => QValue::Fixed { codes: v.cast_to(&f), format: f }.to_tensor(),
            None => v.to_tensor(),
        });
    }
    Ok(outs)
}
