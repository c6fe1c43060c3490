//! Values known at import time and type conversion: `Constant`, `Shape` (of any value: every
//! shape is known, so it folds to a constant), `ConstantOfShape`, `Range`, `Cast` and `CastLike`.

use super::{OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::proto::{attr_type, data_type};
use crate::onnx::{tensor_from_proto, Importer, Val};
use crate::op::Op;
use crate::tensor::DType;

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "Constant", max_inputs: 0, convert: constant },
    OnnxOp { name: "Shape", max_inputs: 1, convert: shape },
    OnnxOp { name: "ConstantOfShape", max_inputs: 1, convert: constant_of_shape },
    OnnxOp { name: "Range", max_inputs: 3, convert: range },
    OnnxOp { name: "Cast", max_inputs: 1, convert: cast },
    OnnxOp { name: "CastLike", max_inputs: 2, convert: cast_like },
];

fn constant(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["value", "value_float", "value_floats", "value_int", "value_ints"])?;
    Ok(vec![imp.constant(n.at.constant_value()?, n.base.to_string())])
}

/// Shape: dimensions `start..end` (negative values count from the end, clamped to the rank).
fn shape(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["start", "end"])?;
    let x = n.first()?;
    let op = Op::Shape { start: n.at.int("start")?.unwrap_or(0), end: n.at.int("end")? };
    let Op::Shape { start, end } = op else { unreachable!("built above") };
    let value = crate::interp::shape::dims_tensor(x.shape(), start, end);
    if imp.fold {
        return Ok(vec![imp.constant(value, n.base.to_string())]);
    }
    // Kept as a node, its value is still known: every shape is.
    Ok(vec![match imp.emit(n.ctx, n.base, op, &[x])? {
        Val::Node { id, shape, dtype, .. } => {
            Val::Node { id, shape, dtype, known: Some(std::rc::Rc::new(value)) }
        }
        other => other,
    }])
}

/// ConstantOfShape: the `value` attribute (one element, default float 0) over the shape input.
fn constant_of_shape(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["value"])?;
    let (value, dtype) = match n.at.get("value", attr_type::TENSOR, "TENSOR")? {
        None => (0.0, DType::F32),
        Some(a) => {
            let t = a.t.as_ref().ok_or_else(|| n.ctx.err("attribute 'value' has no tensor"))?;
            let t = tensor_from_proto(t).map_err(|m| n.ctx.err(format!("attribute 'value': {m}")))?;
            if t.len() != 1 {
                return Err(n
                    .ctx
                    .err(format!("attribute 'value' must have one element, it has shape {:?}", t.shape())));
            }
            (t.to_f64().iter().next().copied().unwrap_or(0.0), t.dtype())
        }
    };
    let v = n.inputs(1)?;
    Ok(vec![imp.emit(n.ctx, n.base, Op::ConstantOfShape { value, dtype }, &v)?])
}

/// Range: its length depends on the values of its inputs, so they must be known at import.
fn range(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    let v = n.inputs(3)?;
    if v.iter().any(|x| x.known().is_none()) {
        return Err(n.ctx.err(
            "start, limit and delta must be constants or fold to constants: a range computed from the model's \
             inputs has a data-dependent length (fix every input dimension with --input-shape)",
        ));
    }
    Ok(vec![imp.emit(n.ctx, n.base, Op::Range, &v)?])
}

/// Cast to FLOAT (DOUBLE and FLOAT16 computed as float32), INT64, INT32 (INT16, INT8 and UINT8
/// held as int64) or BOOL.
fn cast(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["to", "saturate"])?;
    let to = n.at.int("to")?.ok_or_else(|| n.ctx.err("attribute 'to' is required"))?;
    let to = match i32::try_from(to).unwrap_or(-1) {
        data_type::FLOAT | data_type::DOUBLE | data_type::FLOAT16 => DType::F32,
        data_type::INT64 | data_type::INT16 | data_type::INT8 | data_type::UINT8 => DType::I64,
        data_type::INT32 => DType::I32,
        data_type::BOOL => DType::Bool,
        other => {
            return Err(n.ctx.err(format!(
                "attribute 'to' is {} ({to}); supported: FLOAT, DOUBLE, FLOAT16 (as float32), INT64, INT32, \
                 INT16, INT8, UINT8 (as int64) and BOOL",
                data_type::name(other)
            )))
        }
    };
    emit_cast(imp, n, to)
}

/// `CastLike` (the dynamo exporter's cast to an activation's type): a cast to the element type
/// of its second input, which it does not otherwise read.
fn cast_like(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["saturate"])?;
    let to = n.inputs(2)?[1].dtype().ok_or_else(|| n.ctx.err("the type of its second input is not known"))?;
    emit_cast(imp, n, to)
}

/// The cast of the node's first input to `to`; int8 / uint8 constant codes cast to float keep
/// their codes.
fn emit_cast(imp: &mut Importer, n: &OnnxNode, to: DType) -> Result<Vec<Val>> {
    let x = n.first()?;
    let v = imp.emit(n.ctx, n.base, Op::Cast { to }, std::slice::from_ref(&x))?;
    // int8 / uint8 weight codes cast to float: kept as codes, the start of the weight-only
    // pattern `Cast → Mul(scale)` (crate::quant::affine::scaled_codes).
    let from = n.names.first().and_then(|x| imp.elem_types.get(x)).copied();
    let ty = match from {
        Some(data_type::INT8) => Some(crate::op::QuantIntType::Int8),
        Some(data_type::UINT8) => Some(crate::op::QuantIntType::Uint8),
        _ => None,
    };
    if let (Some(ty), DType::F32, Val::Const { key, t, .. }) = (ty, to, &v) {
        if let Some(codes) = x.known() {
            if codes.len() == t.len() {
                imp.qconsts.insert(*key, crate::quant::affine::cast_codes(ty, codes));
            }
        }
    }
    Ok(vec![v])
}
