//! Float reference interpreter (f32, ndarray): the accuracy reference and the engine of shape
//! propagation and constant folding.
//!
//! [`eval_op`] computes one op from its input values with ONNX semantics (negative axes count
//! from the end, numpy broadcasting, numpy `matmul`); [`run_graph`] evaluates a whole graph in
//! arena (topological) order and [`run_outputs`] returns just what the output node returns.
//! Bad shapes are errors that name the op, the input and the shapes, never panics.
//!
//! Kernels live in [`elementwise`], [`linalg`], [`logic`], [`nn`], [`quantize`] and [`shape`]; they are
//! public so that numerics code can call a single kernel on arrays directly.

pub mod elementwise;
pub mod linalg;
pub mod logic;
pub mod nn;
pub mod quantize;
pub mod shape;

use std::collections::{BTreeMap, HashMap};

use ndarray::ArrayD;

pub use elementwise::erf;
use elementwise::{BinaryOp, UnaryOp};

use crate::error::{Error, Result};
use crate::graph::{MaseGraph, Node};
use crate::op::Op;
use crate::tensor::Tensor;

/// Checks the number of inputs an op got.
fn arity(op: &Op, inputs: &[&Tensor], n: usize) -> std::result::Result<(), String> {
    if inputs.len() != n {
        return Err(format!(
            "{} takes {n} input{}, got {}",
            op.mase_op(),
            if n == 1 { "" } else { "s" },
            inputs.len()
        ));
    }
    Ok(())
}

/// Input `i` as f32 data, or an error naming the op, the input and its type.
fn f32_in<'a>(op: &Op, inputs: &[&'a Tensor], i: usize) -> std::result::Result<&'a ArrayD<f32>, String> {
    let t = inputs[i];
    t.as_f32().ok_or_else(|| {
        format!("{}: input {i} is {} {:?}; it must be float32", op.mase_op(), t.dtype().name(), t.shape())
    })
}

/// The f32 weight named `key` (its `role` is for the message).
fn f32_weight<'a>(
    op: &Op,
    weights: &'a BTreeMap<String, Tensor>,
    key: &str,
    role: &str,
) -> std::result::Result<&'a ArrayD<f32>, String> {
    let t = weights
        .get(key)
        .ok_or_else(|| format!("{}: the {role} tensor '{key}' is missing from the weights", op.mase_op()))?;
    t.as_f32().ok_or_else(|| {
        format!("{}: the {role} tensor '{key}' is {}; it must be float32", op.mase_op(), t.dtype().name())
    })
}

/// The integer weight named `key`, widened to i64 (its `role` is for the message).
fn int_weight(
    op: &Op,
    weights: &BTreeMap<String, Tensor>,
    key: &str,
    role: &str,
) -> std::result::Result<ArrayD<i64>, String> {
    let t = weights
        .get(key)
        .ok_or_else(|| format!("{}: the {role} tensor '{key}' is missing from the weights", op.mase_op()))?;
    t.int_values().ok_or_else(|| {
        format!("{}: the {role} tensor '{key}' is {}; it must be integer", op.mase_op(), t.dtype().name())
    })
}

/// Evaluates one op on its input values. `weights` holds the tensors the op names. The error
/// is a message; callers locate it at the node.
pub fn eval_op(
    op: &Op,
    inputs: &[&Tensor],
    weights: &BTreeMap<String, Tensor>,
) -> std::result::Result<Tensor, String> {
    let bin = |k: BinaryOp| -> std::result::Result<Tensor, String> {
        arity(op, inputs, 2)?;
        elementwise::binary(k, inputs[0], inputs[1])
    };
    let un = |k: UnaryOp| -> std::result::Result<Tensor, String> {
        arity(op, inputs, 1)?;
        elementwise::unary(k, inputs[0])
    };
    match op {
        Op::Placeholder => Err("a placeholder has no computation: its value is a graph input \
                                (run_graph takes it from the inputs by node name)"
            .into()),
        Op::Output => inputs.first().map(|t| (*t).clone()).ok_or_else(|| "output has no inputs".to_string()),
        Op::Identity | Op::Dropout { .. } => {
            arity(op, inputs, 1)?;
            Ok(inputs[0].clone())
        }
        Op::Constant { tensor } => {
            arity(op, inputs, 0)?;
            weights
                .get(tensor)
                .cloned()
                .ok_or_else(|| format!("constant: the tensor '{tensor}' is missing from the weights"))
        }
        Op::Linear { weight, bias } => {
            arity(op, inputs, 1)?;
            let x = f32_in(op, inputs, 0)?;
            let w = f32_weight(op, weights, weight, "weight")?;
            let b = bias.as_deref().map(|k| f32_weight(op, weights, k, "bias")).transpose()?;
            linalg::linear(x, w, b).map(Tensor::F32)
        }
        Op::Matmul => {
            arity(op, inputs, 2)?;
            linalg::matmul(f32_in(op, inputs, 0)?, f32_in(op, inputs, 1)?).map(Tensor::F32)
        }
        Op::Relu => {
            arity(op, inputs, 1)?;
            elementwise::relu(inputs[0])
        }
        Op::Gelu { approximate } => un(UnaryOp::Gelu(*approximate)),
        Op::Sqrt => un(UnaryOp::Sqrt),
        Op::Erf => un(UnaryOp::Erf),
        Op::Tanh => un(UnaryOp::Tanh),
        Op::Softmax { axis } if inputs.len() == 2 => {
            let keep = inputs[1].as_bool().ok_or_else(|| {
                format!(
                    "softmax: input 1 (the mask) is {} {:?}; it must be bool",
                    inputs[1].dtype().name(),
                    inputs[1].shape()
                )
            })?;
            nn::softmax_masked(f32_in(op, inputs, 0)?, *axis, Some(keep)).map(Tensor::F32)
        }
        Op::Softmax { axis } => {
            arity(op, inputs, 1)?;
            nn::softmax(f32_in(op, inputs, 0)?, *axis).map(Tensor::F32)
        }
        Op::LayerNorm { axis, epsilon, weight, bias } => {
            arity(op, inputs, 1)?;
            let x = f32_in(op, inputs, 0)?;
            let g = weight.as_deref().map(|k| f32_weight(op, weights, k, "weight")).transpose()?;
            let b = bias.as_deref().map(|k| f32_weight(op, weights, k, "bias")).transpose()?;
            nn::layer_norm(x, *axis, *epsilon, g, b).map(Tensor::F32)
        }
        Op::Add => bin(BinaryOp::Add),
        Op::Sub => bin(BinaryOp::Sub),
        Op::Mul => bin(BinaryOp::Mul),
        Op::Div => bin(BinaryOp::Div),
        Op::Pow => bin(BinaryOp::Pow),
        Op::MulScalar { scalar } => {
            arity(op, inputs, 1)?;
            elementwise::mul_scalar(inputs[0], *scalar)
        }
        Op::ReduceMean { axes, keepdims } => {
            arity(op, inputs, 1)?;
            match inputs[0] {
                Tensor::F32(a) => nn::reduce_mean_f32(a, axes, *keepdims).map(Tensor::F32),
                t => nn::reduce_mean_i64(&shape::index_values("mean", t)?, axes, *keepdims).map(Tensor::I64),
            }
        }
        Op::ReduceSum { axes, keepdims } => {
            arity(op, inputs, 1)?;
            nn::reduce_sum(inputs[0], axes, *keepdims)
        }
        Op::Reshape { shape: target } => {
            arity(op, inputs, 1)?;
            shape::reshape(inputs[0], target)
        }
        Op::Transpose { perm } => {
            arity(op, inputs, 1)?;
            shape::transpose(inputs[0], perm)
        }
        Op::Flatten { axis } => {
            arity(op, inputs, 1)?;
            shape::flatten(inputs[0], *axis)
        }
        Op::Unsqueeze { axes } => {
            arity(op, inputs, 1)?;
            shape::unsqueeze(inputs[0], axes)
        }
        Op::Squeeze { axes } => {
            arity(op, inputs, 1)?;
            shape::squeeze(inputs[0], axes)
        }
        Op::Concat { axis } => shape::concat(inputs, *axis),
        Op::Slice { starts, ends, axes, steps } => {
            arity(op, inputs, 1)?;
            shape::slice(inputs[0], starts, ends, axes, steps)
        }
        Op::Gather { axis } => {
            arity(op, inputs, 2)?;
            shape::gather(inputs[0], &shape::index_values("gather", inputs[1])?, *axis)
        }
        Op::Embedding { table } => {
            arity(op, inputs, 1)?;
            let t = weights
                .get(table)
                .ok_or_else(|| format!("embedding: the table '{table}' is missing from the weights"))?;
            shape::gather(t, &shape::index_values("embedding", inputs[0])?, 0)
        }
        Op::GatherNd { batch_dims } => {
            arity(op, inputs, 2)?;
            shape::gather_nd(inputs[0], &shape::index_values("gather_nd", inputs[1])?, *batch_dims)
        }
        Op::Compare { cmp } => {
            arity(op, inputs, 2)?;
            logic::compare(*cmp, inputs[0], inputs[1])
        }
        Op::Logic { logic: l } => {
            arity(op, inputs, 2)?;
            logic::logic(*l, inputs[0], inputs[1])
        }
        Op::Not => {
            arity(op, inputs, 1)?;
            logic::not(inputs[0])
        }
        Op::Where => {
            arity(op, inputs, 3)?;
            logic::where_(inputs[0], inputs[1], inputs[2])
        }
        Op::Max => logic::extremum(inputs, true),
        Op::Min => logic::extremum(inputs, false),
        Op::Expand { shape: target } => {
            arity(op, inputs, 1)?;
            shape::expand(inputs[0], target)
        }
        Op::Range => {
            arity(op, inputs, 3)?;
            shape::range(inputs[0], inputs[1], inputs[2])
        }
        Op::ConstantOfShape { value, dtype } => {
            arity(op, inputs, 1)?;
            shape::constant_of_shape(inputs[0], *value, *dtype)
        }
        Op::Cast { to } => {
            arity(op, inputs, 1)?;
            Ok(shape::cast(inputs[0], *to))
        }
        Op::Shape { start, end } => {
            arity(op, inputs, 1)?;
            Ok(shape::shape_of(inputs[0], *start, *end))
        }
        Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding } => {
            arity(op, inputs, 1)?;
            let w = |k: &str, role: &str| f32_weight(op, weights, k, role);
            quantize::int_quant(
                f32_in(op, inputs, 0)?,
                w(scale, "scale")?,
                w(zero_point, "zero point")?,
                w(bit_width, "bit width")?,
                *signed,
                *narrow,
                *rounding,
            )
            .map(Tensor::F32)
            .map_err(|m| format!("quant: {m}"))
        }
        Op::BipolarQuant { scale } => {
            arity(op, inputs, 1)?;
            quantize::bipolar_quant(f32_in(op, inputs, 0)?, f32_weight(op, weights, scale, "scale")?)
                .map(Tensor::F32)
                .map_err(|m| format!("bipolar_quant: {m}"))
        }
        Op::Trunc { scale, zero_point, output_scale, output_bit_width, signed, narrow, rounding, .. } => {
            arity(op, inputs, 1)?;
            let w = |k: &str, role: &str| f32_weight(op, weights, k, role);
            quantize::trunc(
                f32_in(op, inputs, 0)?,
                w(scale, "scale")?,
                w(zero_point, "zero point")?,
                w(output_scale, "output scale")?,
                w(output_bit_width, "output bit width")?,
                *signed,
                *narrow,
                *rounding,
            )
            .map(Tensor::F32)
            .map_err(|m| format!("trunc: {m}"))
        }
        Op::QuantizeLinear { scale, zero_point, axis, to } => {
            arity(op, inputs, 1)?;
            let zp = zero_point.as_deref().map(|k| int_weight(op, weights, k, "zero point")).transpose()?;
            let s = f32_weight(op, weights, scale, "scale")?;
            quantize::quantize_linear(f32_in(op, inputs, 0)?, s, zp.as_ref(), *axis, *to).map(Tensor::I64)
        }
        Op::Qlinear { weight, bias, x_scale, x_zero_point, y_scale, y_zero_point, y_type, relu, .. } => {
            arity(op, inputs, 1)?;
            let codes = int_codes("qlinear", inputs[0])?;
            let w = f32_weight(op, weights, weight, "weight")?;
            let b = bias.as_deref().map(|k| f32_weight(op, weights, k, "bias")).transpose()?;
            let scalar_f = |v: f32| ndarray::arr0(v).into_dyn();
            let scalar_i = |v: i64| ndarray::arr0(v).into_dyn();
            // The steps of the graph it was raised from, each as its own op computes it.
            let x =
                quantize::dequantize_linear(&codes, &scalar_f(*x_scale), Some(&scalar_i(*x_zero_point)), 1)?;
            let mut v = Tensor::F32(linalg::linear(&x, w, b)?);
            if *relu {
                v = elementwise::relu(&v)?;
            }
            let v = v.as_f32().ok_or("qlinear: internal: the sum is not float")?;
            quantize::quantize_linear(v, &scalar_f(*y_scale), Some(&scalar_i(*y_zero_point)), 1, *y_type)
                .map(Tensor::I64)
        }
        Op::DequantizeLinear { scale, zero_point, axis, .. } => {
            arity(op, inputs, 1)?;
            let codes = int_codes("dequantize_linear", inputs[0])?;
            let zp = zero_point.as_deref().map(|k| int_weight(op, weights, k, "zero point")).transpose()?;
            let s = f32_weight(op, weights, scale, "scale")?;
            quantize::dequantize_linear(&codes, s, zp.as_ref(), *axis).map(Tensor::F32)
        }
    }
}

/// The integer codes of input 0 of `op`, or an error naming its type and shape.
fn int_codes(op: &str, t: &Tensor) -> std::result::Result<ArrayD<i64>, String> {
    t.int_values().ok_or_else(|| {
        format!("{op}: input 0 is {} {:?}; it must be integer codes", t.dtype().name(), t.shape())
    })
}

/// Checks that every name in `inputs` is a graph input (other names are usually typos) and
/// returns the graph's input names in order, for messages.
pub fn check_input_names<'g>(graph: &'g MaseGraph, inputs: &HashMap<String, Tensor>) -> Result<Vec<&'g str>> {
    let expected: Vec<&str> = graph.input_ids().into_iter().map(|i| graph.node(i).name.as_str()).collect();
    let mut unknown: Vec<&str> =
        inputs.keys().map(String::as_str).filter(|k| !expected.contains(k)).collect();
    if !unknown.is_empty() {
        unknown.sort_unstable();
        return Err(Error::Invalid(format!(
            "input(s) {} given, but graph '{}' has no such input; its inputs are: {}",
            unknown.join(", "),
            graph.name,
            expected.join(", ")
        )));
    }
    Ok(expected)
}

/// The value given for placeholder `node`, checked against the shape its metadata records
/// (when non-empty). `expected` lists the graph's inputs for the message.
pub fn placeholder_value<'a>(
    node: &Node,
    inputs: &'a HashMap<String, Tensor>,
    expected: &[&str],
) -> Result<&'a Tensor> {
    let t = inputs.get(&node.name).ok_or_else(|| {
        node.error(format!(
            "no value given for graph input '{}'; the graph's inputs are: {}",
            node.name,
            expected.join(", ")
        ))
    })?;
    if let Some(want) = node.out_shape().filter(|s| !s.is_empty()) {
        if want != t.shape() {
            return Err(node.error(format!(
                "graph input '{}' was given shape {:?}, but the graph expects {want:?}",
                node.name,
                t.shape()
            )));
        }
    }
    if let Some(m) = node.meta.common.results.get("data_out_0") {
        if m.dtype() != t.dtype() {
            return Err(node.error(format!(
                "graph input '{}' was given {} data, but the graph expects {}",
                node.name,
                t.dtype().name(),
                m.dtype().name()
            )));
        }
    }
    Ok(t)
}

/// Runs the graph on named inputs and returns the value of every node, indexed by node id
/// (the output node's value is its first input's value).
///
/// Each placeholder's value is `inputs[node name]`; when its `common.results["data_out_0"]`
/// metadata records a non-empty shape, the given tensor must have that shape. Names in
/// `inputs` that are not placeholders are an error too (they are usually typos).
pub fn run_graph(graph: &MaseGraph, inputs: &HashMap<String, Tensor>) -> Result<Vec<Tensor>> {
    let expected = check_input_names(graph, inputs)?;
    let mut values: Vec<Tensor> = Vec::with_capacity(graph.len());
    for (id, node) in graph.nodes() {
        let value = if let Op::Placeholder = &node.op {
            placeholder_value(node, inputs, &expected)?.clone()
        } else {
            let mut args = Vec::with_capacity(node.inputs.len());
            for (k, i) in node.inputs.iter().enumerate() {
                let v = values.get(i.0).filter(|_| i.0 < id.0).ok_or_else(|| {
                    node.error(format!("input {k} (node #{}) is not computed before this node", i.0))
                })?;
                args.push(v);
            }
            eval_op(&node.op, &args, &graph.weights).map_err(|m| node.error(m))?
        };
        values.push(value);
    }
    Ok(values)
}

/// Runs the graph and returns the values its output node returns, in order.
pub fn run_outputs(graph: &MaseGraph, inputs: &HashMap<String, Tensor>) -> Result<Vec<Tensor>> {
    let out = graph
        .output_id()
        .ok_or_else(|| Error::Invalid(format!("graph '{}' has no output node", graph.name)))?;
    let values = run_graph(graph, inputs)?;
    Ok(graph.node(out).inputs.iter().map(|i| values[i.0].clone()).collect())
}
