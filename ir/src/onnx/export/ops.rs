//! One MaseGraph node as ONNX nodes: the exhaustive match over [`Op`] (a new op does not
//! compile until it says how it is written) and the ops that map to one standard op, with
//! shapes, axes and scalars as initializers. The ops that need a few ONNX nodes to compute
//! what the interpreter computes are in `nn.rs`.

use std::collections::BTreeMap;

use super::builder::{self, Builder};
use super::nn;
use super::Ty;
use crate::error::{Error, Result};
use crate::graph::Node;
use crate::onnx::tensors::onnx_data_type;
use crate::op::{CmpOp, LogicOp, Op};
use crate::tensor::{DType, Tensor};

/// The node being written and what it needs: its inputs' ONNX value names and types, the name
/// its value must get, the opset and the graph's weights.
pub(super) struct At<'a> {
    /// The node.
    pub node: &'a Node,
    /// ONNX value names of its inputs, in order.
    pub ins: Vec<String>,
    /// Types of its inputs, in order.
    pub in_types: Vec<&'a Ty>,
    /// The value name its result must have.
    pub out: String,
    /// The default-domain opset written.
    pub opset: i64,
    /// The graph's weights.
    pub weights: &'a BTreeMap<String, Tensor>,
}

impl At<'_> {
    /// An error at this node (names the node and its op).
    pub fn err(&self, msg: impl Into<String>) -> Error {
        self.node.error(msg)
    }

    /// Exactly `N` inputs, or an error saying how many the op takes.
    pub fn take<const N: usize>(&self) -> Result<[String; N]> {
        <[String; N]>::try_from(self.ins.clone())
            .map_err(|v| self.err(format!("takes {N} input(s) but has {}; cannot write it as ONNX", v.len())))
    }

    /// A base for the names of helper values and nodes of this node.
    pub fn base(&self, what: &str) -> String {
        format!("{}_{what}", self.out)
    }

    /// The weight `key`, which [`crate::MaseGraph::validate`] has checked is present.
    pub fn weight(&self, key: &str) -> Result<&Tensor> {
        self.weights
            .get(key)
            .ok_or_else(|| self.err(format!("the tensor '{key}' is missing from the weights")))
    }
}

/// A rank-0 f32 tensor.
pub(super) fn scalar_f32(v: f32) -> Tensor {
    Tensor::F32(ndarray::arr0(v).into_dyn())
}

/// A 1-D i64 tensor (shapes, axes, slice bounds).
fn ints_tensor(v: &[i64]) -> Tensor {
    Tensor::from_i64(&[v.len()], v.to_vec()).expect("a 1-D shape matches its data")
}

/// Writes the ONNX nodes (and initializers) computing `at.node`'s value under `at.out`.
pub(super) fn lower(b: &mut Builder, at: &At) -> Result<()> {
    // The op's own ONNX op on the node's `n` inputs (`None`: one or more), attributes as given.
    let plain = |b: &mut Builder, op_type: &str, n: Option<usize>, attrs| {
        match n {
            Some(n) if at.ins.len() != n => {
                return Err(
                    at.err(format!("takes {n} input(s) but has {}; cannot write it as ONNX", at.ins.len()))
                )
            }
            None if at.ins.is_empty() => return Err(at.err("has no inputs; cannot write it as ONNX")),
            _ => {}
        }
        b.node_to(op_type, at.ins.clone(), at.out.clone(), attrs);
        Ok(())
    };
    match &at.node.op {
        op @ (Op::Quant { .. }
        | Op::BipolarQuant { .. }
        | Op::Trunc { .. }
        | Op::QuantizeLinear { .. }
        | Op::DequantizeLinear { .. }) => super::quant::lower(b, at, op),
        Op::Qlinear { .. } => super::quant::qlinear(b, at),
        Op::Placeholder | Op::Output => {
            Err(at.err("internal: graph inputs and outputs are written as the graph's, not as nodes"))
        }
        Op::Constant { tensor } => {
            let t = at.weight(tensor)?;
            b.initializer_to(at.out.clone(), t);
            Ok(())
        }
        Op::Linear { weight, bias } => nn::linear(b, at, weight, bias.as_deref()),
        Op::Matmul => plain(b, "MatMul", Some(2), vec![]),
        Op::Relu => {
            let [x] = at.take()?;
            match at.in_types[0].dtype {
                DType::F32 => plain(b, "Relu", Some(1), vec![]),
                // onnxruntime runs Relu on float data only; max(x, 0) is the same on integers.
                d => {
                    let zero = crate::interp::shape::cast(&scalar_f32(0.0), d);
                    let zero = b.initializer(&at.base("zero"), &zero);
                    b.node_to("Max", vec![x, zero], at.out.clone(), vec![]);
                    Ok(())
                }
            }
        }
        Op::Gelu { approximate } => nn::gelu(b, at, *approximate),
        Op::Softmax { axis } => nn::softmax(b, at, *axis),
        Op::LayerNorm { axis, epsilon, weight, bias } => {
            nn::layer_norm(b, at, *axis, *epsilon, weight.as_deref(), bias.as_deref())
        }
        Op::Add => plain(b, "Add", Some(2), vec![]),
        Op::Sub => plain(b, "Sub", Some(2), vec![]),
        Op::Mul => plain(b, "Mul", Some(2), vec![]),
        Op::Div => plain(b, "Div", Some(2), vec![]),
        Op::Pow => plain(b, "Pow", Some(2), vec![]),
        Op::MulScalar { scalar } => mul_scalar(b, at, *scalar),
        Op::Sqrt => plain(b, "Sqrt", Some(1), vec![]),
        Op::Erf => plain(b, "Erf", Some(1), vec![]),
        Op::Tanh => plain(b, "Tanh", Some(1), vec![]),
        Op::ReduceMean { axes, keepdims } => reduce(b, at, "ReduceMean", 18, axes, *keepdims),
        Op::ReduceSum { axes, keepdims } => reduce(b, at, "ReduceSum", 13, axes, *keepdims),
        Op::Reshape { shape } => with_ints(b, at, "Reshape", "shape", shape),
        Op::Transpose { perm } => {
            // An empty perm reverses the dimensions, as ONNX's default does.
            let attrs = if perm.is_empty() {
                vec![]
            } else {
                vec![builder::ints("perm", &perm.iter().map(|&p| p as i64).collect::<Vec<_>>())]
            };
            plain(b, "Transpose", Some(1), attrs)
        }
        Op::Flatten { axis } => plain(b, "Flatten", Some(1), vec![builder::int("axis", *axis)]),
        Op::Dropout { ratio } => {
            let [x] = at.take()?;
            // ONNX Dropout takes float data only; at inference it is the identity either way.
            if at.in_types[0].dtype != DType::F32 {
                return plain(b, "Identity", Some(1), vec![]);
            }
            let r = b.initializer(&at.base("ratio"), &scalar_f32(*ratio));
            b.node_to("Dropout", vec![x, r], at.out.clone(), vec![]);
            Ok(())
        }
        Op::Identity => plain(b, "Identity", Some(1), vec![]),
        Op::Unsqueeze { axes } => with_ints(b, at, "Unsqueeze", "axes", axes),
        // No axes input removes every size-1 dimension, as the empty list does here.
        Op::Squeeze { axes } if axes.is_empty() => plain(b, "Squeeze", Some(1), vec![]),
        Op::Squeeze { axes } => with_ints(b, at, "Squeeze", "axes", axes),
        Op::Concat { axis } => plain(b, "Concat", None, vec![builder::int("axis", *axis)]),
        Op::Slice { starts, ends, axes, steps } => {
            let [x] = at.take()?;
            let axes: Vec<i64> =
                if axes.is_empty() { (0..starts.len() as i64).collect() } else { axes.clone() };
            let steps: Vec<i64> = if steps.is_empty() { vec![1; starts.len()] } else { steps.clone() };
            let mut ins = vec![x];
            for (what, v) in [("starts", starts), ("ends", ends), ("axes", &axes), ("steps", &steps)] {
                ins.push(b.initializer(&at.base(what), &ints_tensor(v)));
            }
            b.node_to("Slice", ins, at.out.clone(), vec![]);
            Ok(())
        }
        Op::Gather { axis } => plain(b, "Gather", Some(2), vec![builder::int("axis", *axis)]),
        Op::Embedding { table } => {
            let [ids] = at.take()?;
            let w = at.weight(table)?;
            let t = b.cached_initializer(format!("weight:{table}"), table, || w.clone());
            b.node_to("Gather", vec![t, ids], at.out.clone(), vec![builder::int("axis", 0)]);
            Ok(())
        }
        Op::GatherNd { batch_dims } => {
            let [x, idx] = at.take()?;
            // ONNX GatherND takes int64 indices only.
            let idx = cast_if(b, at, idx, at.in_types[1], DType::I32, DType::I64, "indices");
            b.node_to(
                "GatherND",
                vec![x, idx],
                at.out.clone(),
                vec![builder::int("batch_dims", *batch_dims)],
            );
            Ok(())
        }
        Op::Compare { cmp } => compare(b, at, *cmp),
        Op::Logic { logic } => {
            let op_type = match logic {
                LogicOp::And => "And",
                LogicOp::Or => "Or",
                LogicOp::Xor => "Xor",
            };
            plain(b, op_type, Some(2), vec![])
        }
        Op::Not => plain(b, "Not", Some(1), vec![]),
        Op::Where => plain(b, "Where", Some(3), vec![]),
        Op::Max => plain(b, "Max", None, vec![]),
        Op::Min => plain(b, "Min", None, vec![]),
        Op::Expand { shape } => with_ints(b, at, "Expand", "shape", shape),
        Op::Range => range(b, at),
        Op::ConstantOfShape { value, dtype } => {
            let [shape] = at.take()?;
            // ONNX takes the shape as int64 only.
            let shape = cast_if(b, at, shape, at.in_types[0], DType::I32, DType::I64, "shape");
            let fill = crate::interp::shape::constant_of_shape(&ints_tensor(&[1]), *value, *dtype)
                .map_err(|m| at.err(m))?;
            b.node_to("ConstantOfShape", vec![shape], at.out.clone(), vec![builder::tensor("value", &fill)]);
            Ok(())
        }
        Op::Cast { to } => {
            plain(b, "Cast", Some(1), vec![builder::int("to", i64::from(onnx_data_type(*to)))])
        }
        Op::Shape { start, end } => {
            let mut attrs = vec![builder::int("start", *start)];
            if let Some(e) = end {
                attrs.push(builder::int("end", *e));
            }
            plain(b, "Shape", Some(1), attrs)
        }
    }
}

/// `op_type(x, ints)` with the integer list as an int64 initializer input named after `what`.
fn with_ints(b: &mut Builder, at: &At, op_type: &str, what: &str, v: &[i64]) -> Result<()> {
    let [x] = at.take()?;
    let c = b.initializer(&at.base(what), &ints_tensor(v));
    b.node_to(op_type, vec![x, c], at.out.clone(), vec![]);
    Ok(())
}

/// `name` cast to `to` when its type is `from`, else `name` as it is.
fn cast_if(b: &mut Builder, at: &At, name: String, ty: &Ty, from: DType, to: DType, what: &str) -> String {
    if ty.dtype != from {
        return name;
    }
    let attrs = vec![builder::int("to", i64::from(onnx_data_type(to)))];
    b.node("Cast", vec![name], &at.base(&format!("{what}_{}", to.name())), attrs)
}

/// `x · scalar` as `Mul` by a rank-0 constant of `x`'s type (ONNX Mul needs equal types); the
/// interpreter multiplies an int64 input only by an integer scalar.
fn mul_scalar(b: &mut Builder, at: &At, scalar: f32) -> Result<()> {
    let [x] = at.take()?;
    let c = match at.in_types[0].dtype {
        DType::F32 => scalar_f32(scalar),
        DType::I64 if scalar.fract() == 0.0 => Tensor::I64(ndarray::arr0(scalar as i64).into_dyn()),
        d => {
            return Err(at.err(format!(
                "multiplies {} data by {scalar}; supported: float32 data, or int64 data by an integer",
                d.name()
            )))
        }
    };
    let c = b.initializer(&at.base("scalar"), &c);
    b.node_to("Mul", vec![x, c], at.out.clone(), vec![]);
    Ok(())
}

/// ReduceMean or ReduceSum. The axes are written resolved (non-negative, sorted, distinct), as
/// the interpreter reads them; empty axes reduce every dimension, as ONNX's absent axes do.
/// They are an attribute before opset `axes_input_from` and an input from it.
fn reduce(
    b: &mut Builder,
    at: &At,
    op_type: &str,
    axes_input_from: i64,
    axes: &[i64],
    keepdims: bool,
) -> Result<()> {
    let [x] = at.take()?;
    let rank = at.in_types[0].shape.len();
    let mut resolved = Vec::with_capacity(axes.len());
    for &a in axes {
        resolved.push(crate::interp::nn::norm_axis(op_type, a, rank).map_err(|m| at.err(m))? as i64);
    }
    resolved.sort_unstable();
    resolved.dedup();
    // The interpreter's integer mean widens int32 to int64 (and returns int64): so does the
    // ONNX graph, whose ReduceMean would otherwise return int32.
    let x = if op_type == "ReduceMean" {
        cast_if(b, at, x, at.in_types[0], DType::I32, DType::I64, "input")
    } else {
        x
    };
    let mut ins = vec![x];
    let mut attrs = vec![builder::int("keepdims", i64::from(keepdims))];
    if !resolved.is_empty() {
        if at.opset >= axes_input_from {
            ins.push(b.initializer(&at.base("axes"), &ints_tensor(&resolved)));
        } else {
            attrs.push(builder::ints("axes", &resolved));
        }
    }
    b.node_to(op_type, ins, at.out.clone(), attrs);
    Ok(())
}

/// A comparison. ONNX orders only numbers, so two booleans compared by `<`-like ops are cast
/// to int32 first (false < true holds as 0 < 1).
fn compare(b: &mut Builder, at: &At, cmp: CmpOp) -> Result<()> {
    let [x, y] = at.take()?;
    let op_type = match cmp {
        CmpOp::Equal => "Equal",
        CmpOp::Less => "Less",
        CmpOp::LessOrEqual => "LessOrEqual",
        CmpOp::Greater => "Greater",
        CmpOp::GreaterOrEqual => "GreaterOrEqual",
    };
    let (x, y) = if cmp == CmpOp::Equal {
        (x, y)
    } else {
        (
            cast_if(b, at, x, at.in_types[0], DType::Bool, DType::I32, "a"),
            cast_if(b, at, y, at.in_types[1], DType::Bool, DType::I32, "b"),
        )
    };
    b.node_to(op_type, vec![x, y], at.out.clone(), vec![]);
    Ok(())
}

/// Range. ONNX takes rank-0 start, limit and delta; the interpreter any one-element tensors,
/// which are reshaped to rank 0 first.
fn range(b: &mut Builder, at: &At) -> Result<()> {
    let ins: [String; 3] = at.take()?;
    let mut scalars = Vec::with_capacity(3);
    for ((name, ty), what) in ins.into_iter().zip(&at.in_types).zip(["start", "limit", "delta"]) {
        if ty.shape.is_empty() {
            scalars.push(name);
        } else {
            let shape = b.initializer(&at.base(&format!("{what}_shape")), &ints_tensor(&[]));
            scalars.push(b.node("Reshape", vec![name, shape], &at.base(what), vec![]));
        }
    }
    b.node_to("Range", scalars, at.out.clone(), vec![]);
    Ok(())
}
