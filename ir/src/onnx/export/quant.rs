//! The quantizers as ONNX: QONNX `Quant`, `BipolarQuant` and `Trunc` (version 2) in the
//! `qonnx.custom_op.general` domain, with their scale, zero point and bit widths as float
//! initializers; `QuantizeLinear` / `DequantizeLinear` with the zero point in the codes' type.
//! The interpreter's codes are int64, so `QuantizeLinear` is followed by a `Cast` to INT64 and
//! `DequantizeLinear` preceded by a `Cast` to the codes' type: the ONNX graph computes what the
//! interpreter does.

use super::builder::{self, Builder};
use super::ops::At;
use crate::error::Result;
use crate::onnx::proto::{data_type, AttributeProto};
use crate::onnx::tensors::{codes_to_proto, quant_data_type};
use crate::onnx::QONNX_DOMAIN;
use crate::op::{Op, QuantIntType, RoundingMode};

/// The initializer of the node-owned weight `key` (written once per key).
fn weight_init(b: &mut Builder, at: &At, key: &str) -> Result<String> {
    let t = at.weight(key)?.clone();
    Ok(b.cached_initializer(format!("w:{key}"), key, || t))
}

/// A QONNX node in its domain, on `x` and the weights `keys`, with the given attributes.
fn qonnx_node(
    b: &mut Builder,
    at: &At,
    op_type: &str,
    keys: &[&str],
    attrs: Vec<AttributeProto>,
) -> Result<()> {
    let [x] = at.take()?;
    let mut ins = vec![x];
    for k in keys {
        ins.push(weight_init(b, at, k)?);
    }
    b.node_to(op_type, ins, at.out.clone(), attrs);
    if let Some(n) = b.nodes.last_mut() {
        n.domain = QONNX_DOMAIN.to_string();
    }
    Ok(())
}

/// The QONNX attributes `signed`, `narrow` and `rounding_mode`.
fn qonnx_attrs(signed: bool, narrow: bool, rounding: RoundingMode) -> Vec<AttributeProto> {
    vec![
        builder::int("signed", i64::from(signed)),
        builder::int("narrow", i64::from(narrow)),
        builder::string("rounding_mode", rounding.qonnx_name()),
    ]
}

/// The zero point of a QDQ op in the codes' type (zeros of the scale's shape when none).
fn zero_point_init(
    b: &mut Builder,
    at: &At,
    scale: &str,
    zp: Option<&str>,
    ty: QuantIntType,
) -> Result<String> {
    let t = match zp {
        Some(k) => at.weight(k)?.clone(),
        None => crate::tensor::Tensor::zeros(crate::tensor::DType::I64, at.weight(scale)?.shape()),
    };
    Ok(b.proto_initializer(&at.base("zero_point"), codes_to_proto("", &t, ty)))
}

/// Writes one quantizer node; `op` is one of the five quantizer ops.
pub(super) fn lower(b: &mut Builder, at: &At, op: &Op) -> Result<()> {
    match op {
        Op::Quant { scale, zero_point, bit_width, signed, narrow, rounding } => qonnx_node(
            b,
            at,
            "Quant",
            &[scale, zero_point, bit_width],
            qonnx_attrs(*signed, *narrow, *rounding),
        ),
        Op::BipolarQuant { scale } => qonnx_node(b, at, "BipolarQuant", &[scale], vec![]),
        Op::Trunc {
            scale,
            zero_point,
            input_bit_width,
            output_scale,
            output_bit_width,
            signed,
            narrow,
            rounding,
        } => qonnx_node(
            b,
            at,
            "Trunc",
            &[scale, zero_point, input_bit_width, output_scale, output_bit_width],
            qonnx_attrs(*signed, *narrow, *rounding),
        ),
        Op::QuantizeLinear { scale, zero_point, axis, to } => {
            let [x] = at.take()?;
            let s = weight_init(b, at, scale)?;
            let z = zero_point_init(b, at, scale, zero_point.as_deref(), *to)?;
            let codes =
                b.node("QuantizeLinear", vec![x, s, z], &at.base("codes"), vec![builder::int("axis", *axis)]);
            b.node_to(
                "Cast",
                vec![codes],
                at.out.clone(),
                vec![builder::int("to", i64::from(data_type::INT64))],
            );
            Ok(())
        }
        Op::DequantizeLinear { codes, scale, zero_point, axis } => {
            let [x] = at.take()?;
            let cast = builder::int("to", i64::from(quant_data_type(*codes)));
            let c = b.node("Cast", vec![x], &at.base("codes"), vec![cast]);
            let s = weight_init(b, at, scale)?;
            let z = zero_point_init(b, at, scale, zero_point.as_deref(), *codes)?;
            b.node_to("DequantizeLinear", vec![c, s, z], at.out.clone(), vec![builder::int("axis", *axis)]);
            Ok(())
        }
        _ => Err(at.err("internal: not a quantizer op")),
    }
}

/// A `qlinear` as the graph it was raised from: `Cast` to the input codes' type →
/// `DequantizeLinear` → the linear (`MatMul` [+ `Add`]) → [`Relu`] → `QuantizeLinear` → `Cast`
/// to INT64, per-tensor scales and zero points as initializers.
pub(super) fn qlinear(b: &mut Builder, at: &At) -> Result<()> {
    let Op::Qlinear { weight, bias, x_type, x_scale, x_zero_point, y_scale, y_zero_point, y_type, relu } =
        &at.node.op
    else {
        return Err(at.err("internal: not a qlinear"));
    };
    let [x] = at.take()?;
    let scalar =
        |b: &mut Builder, what: &str, v: f32| b.initializer(&at.base(what), &super::ops::scalar_f32(v));
    let zero = |b: &mut Builder, what: &str, v: i64, ty: QuantIntType| {
        let t = crate::tensor::Tensor::I64(ndarray::arr0(v).into_dyn());
        b.proto_initializer(&at.base(what), codes_to_proto("", &t, ty))
    };
    let cast = builder::int("to", i64::from(quant_data_type(*x_type)));
    let c = b.node("Cast", vec![x], &at.base("codes"), vec![cast]);
    let (s, z) = (scalar(b, "x_scale", *x_scale), zero(b, "x_zero_point", *x_zero_point, *x_type));
    let real = b.node("DequantizeLinear", vec![c, s, z], &at.base("x"), vec![]);
    let sum = at.base("sum");
    let lin = At { ins: vec![real], out: sum.clone(), in_types: at.in_types.clone(), ..*at };
    super::nn::linear(b, &lin, weight, bias.as_deref())?;
    let v = if *relu { b.node("Relu", vec![sum], &at.base("relu"), vec![]) } else { sum };
    let (s, z) = (scalar(b, "y_scale", *y_scale), zero(b, "y_zero_point", *y_zero_point, *y_type));
    let q = b.node("QuantizeLinear", vec![v, s, z], &at.base("y"), vec![]);
    b.node_to("Cast", vec![q], at.out.clone(), vec![builder::int("to", i64::from(data_type::INT64))]);
    Ok(())
}
