//! Quantizers: ONNX `QuantizeLinear` / `DequantizeLinear` (default domain, per tensor or per
//! axis, int8 / uint8 codes, int32 codes for dequantized biases) and the QONNX ops `Quant`,
//! `BipolarQuant` and `Trunc` (version 2) of the `qonnx.custom_op.general` domain (also under
//! its older names `onnx.brevitas` and `finn.custom_op.general`, see [`QONNX_DOMAINS`]).
//! Scales, zero points and bit widths must be constants; they become tensors the node owns
//! (`<node>.scale`, `<node>.zero_point`, …), so a checkpoint keeps them.

use super::{OnnxNode, OnnxOp};
use crate::error::Result;
use crate::onnx::proto::data_type;
use crate::onnx::{Importer, Val};
use crate::op::{Op, QuantIntType, RoundingMode};
use crate::tensor::{DType, Tensor};

/// The domains whose `Quant`, `BipolarQuant` and `Trunc` are QONNX's: its own and the names
/// older Brevitas / FINN exports use.
pub const QONNX_DOMAINS: [&str; 3] = ["qonnx.custom_op.general", "onnx.brevitas", "finn.custom_op.general"];

/// The default-domain op types of the family.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp { name: "QuantizeLinear", max_inputs: 3, convert: quantize_linear },
    OnnxOp { name: "DequantizeLinear", max_inputs: 3, convert: dequantize_linear },
];

/// The op types of the QONNX domains.
pub(super) const QONNX_OPS: &[OnnxOp] = &[
    OnnxOp { name: "Quant", max_inputs: 4, convert: quant },
    OnnxOp { name: "BipolarQuant", max_inputs: 2, convert: bipolar_quant },
    OnnxOp { name: "Trunc", max_inputs: 6, convert: trunc },
];

/// Stores the constant input `v` as the tensor `<name>.<role>` the node owns; `float` converts
/// it to float32 (QONNX computes its parameters in float), else it must be integer.
fn owned(imp: &mut Importer, n: &OnnxNode, name: &str, role: &str, v: &Val, float: bool) -> Result<String> {
    let t = v.known().ok_or_else(|| {
        n.ctx.err(format!(
            "the {role} input must be a constant (an initializer); a computed {role} is not supported"
        ))
    })?;
    let t = match (float, t.dtype()) {
        (true, DType::F32) => t.clone(),
        (true, d) if d.is_int() => Tensor::F32(t.to_f32()),
        (false, d) if d.is_int() => Tensor::I64(t.to_i64()),
        (_, d) => {
            return Err(n.ctx.err(format!(
                "the {role} input is {}; it must be {}",
                d.name(),
                if float { "float" } else { "integer" }
            )))
        }
    };
    let key = format!("{name}.{role}");
    imp.graph.weights.insert(key.clone(), t);
    Ok(key)
}

/// A 0/1 integer attribute as a bool; `default` None makes it required (as qonnx does).
fn flag(n: &OnnxNode, attr: &str, default: Option<bool>) -> Result<bool> {
    match (n.at.int(attr)?, default) {
        (Some(0), _) => Ok(false),
        (Some(1), _) => Ok(true),
        (Some(v), _) => Err(n.ctx.err(format!("attribute '{attr}' is {v}; it must be 0 or 1"))),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(n.ctx.err(format!("attribute '{attr}' is required"))),
    }
}

/// The `rounding_mode` attribute; `default` None makes it required.
fn rounding(n: &OnnxNode, default: Option<RoundingMode>) -> Result<RoundingMode> {
    match (n.at.string("rounding_mode")?, default) {
        (Some(s), _) => RoundingMode::from_qonnx(&s).ok_or_else(|| {
            let all: Vec<&str> = RoundingMode::ALL.iter().map(|m| m.qonnx_name()).collect();
            n.ctx.err(format!("attribute 'rounding_mode' is '{s}'; supported: {}", all.join(", ")))
        }),
        (None, Some(d)) => Ok(d),
        (None, None) => Err(n.ctx.err("attribute 'rounding_mode' is required")),
    }
}

/// QONNX `Quant` (IntQuant): inputs x, scale, zero point, bit width.
fn quant(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&["signed", "narrow", "rounding_mode"])?;
    let [x, s, z, b] = <[Val; 4]>::try_from(n.inputs(4)?).map_err(|_| n.ctx.err("expects 4 inputs"))?;
    let (signed, narrow) = (flag(n, "signed", None)?, flag(n, "narrow", None)?);
    let rounding = rounding(n, Some(RoundingMode::Round))?;
    let name = imp.graph.fresh_name(n.base);
    let op = Op::Quant {
        scale: owned(imp, n, &name, "scale", &s, true)?,
        zero_point: owned(imp, n, &name, "zero_point", &z, true)?,
        bit_width: owned(imp, n, &name, "bit_width", &b, true)?,
        signed,
        narrow,
        rounding,
    };
    Ok(vec![imp.emit(n.ctx, &name, op, &[x])?])
}

/// QONNX `BipolarQuant`: inputs x, scale.
fn bipolar_quant(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    n.at.check(&[])?;
    let [x, s] = <[Val; 2]>::try_from(n.inputs(2)?).map_err(|_| n.ctx.err("expects 2 inputs"))?;
    let name = imp.graph.fresh_name(n.base);
    let op = Op::BipolarQuant { scale: owned(imp, n, &name, "scale", &s, true)? };
    Ok(vec![imp.emit(n.ctx, &name, op, &[x])?])
}

/// QONNX `Trunc`: version 2 (the domain's opset ≥ 2: inputs x, scale, zero point, input bit
/// width, output scale, output bit width) only.
fn trunc(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    let version = imp.domain_opsets.get(n.domain).copied().unwrap_or(1);
    if version < 2 {
        return Err(n.ctx.err(format!(
            "Trunc version 1 (domain '{}' at opset {version}) is not supported: v1 has no output scale and \
             rescales the truncated integers by the input scale, so the scale of its output is ambiguous \
             (qonnx redefined it in v2). Re-export with the domain at opset 2 (Trunc v2, with an output \
             scale input), as current Brevitas does",
            n.domain
        )));
    }
    n.at.check(&["rounding_mode", "signed", "narrow"])?;
    let v = n.inputs(6).map_err(|_| {
        n.ctx.err(format!(
            "Trunc v2 takes 6 inputs (x, scale, zero point, input bit width, output scale, output bit width), \
             got {}",
            n.ins.len()
        ))
    })?;
    let name = imp.graph.fresh_name(n.base);
    let op = Op::Trunc {
        scale: owned(imp, n, &name, "scale", &v[1], true)?,
        zero_point: owned(imp, n, &name, "zero_point", &v[2], true)?,
        input_bit_width: owned(imp, n, &name, "input_bit_width", &v[3], true)?,
        output_scale: owned(imp, n, &name, "output_scale", &v[4], true)?,
        output_bit_width: owned(imp, n, &name, "output_bit_width", &v[5], true)?,
        signed: flag(n, "signed", Some(true))?,
        narrow: flag(n, "narrow", Some(false))?,
        rounding: rounding(n, None)?,
    };
    Ok(vec![imp.emit(n.ctx, &name, op, &[v[0].clone()])?])
}

/// The code type an ONNX element type names, for the role `what` (messages).
fn code_type(n: &OnnxNode, ty: i32, what: &str, int32: bool) -> Result<QuantIntType> {
    match ty {
        data_type::INT8 => Ok(QuantIntType::Int8),
        data_type::UINT8 => Ok(QuantIntType::Uint8),
        data_type::INT32 if int32 => Ok(QuantIntType::Int32),
        other => Err(n.ctx.err(format!(
            "the {what} is {}; supported: INT8, UINT8{}",
            data_type::name(other),
            if int32 { ", INT32" } else { "" }
        ))),
    }
}

/// The ONNX element type of input `i` as the model declares it (initializers, `Constant` and
/// `Cast` outputs and the codes of an earlier `QuantizeLinear`).
fn input_type(imp: &Importer, n: &OnnxNode, i: usize, what: &str) -> Result<i32> {
    let name = n.names.get(i).map(String::as_str).unwrap_or("");
    imp.elem_types.get(name).copied().ok_or_else(|| {
        n.ctx.err(format!(
            "the element type of the {what} '{name}' is not known: it must be an initializer or the output of a \
             Constant, a Cast or a QuantizeLinear"
        ))
    })
}

/// The attributes a QuantizeLinear / DequantizeLinear of this opset may have.
fn qdq_attrs(imp: &Importer, n: &OnnxNode) -> Result<i64> {
    // Opset 19 adds `saturate`, which applies to float8 codes only (integer codes always
    // saturate); float8 codes are refused by their type.
    if imp.opset >= 19 {
        n.at.check(&["axis", "saturate"])?;
    } else {
        n.at.check(&["axis"])?;
    }
    Ok(n.at.int("axis")?.unwrap_or(1))
}

/// QuantizeLinear: inputs x, scale, optional zero point (its type is the codes' type; none:
/// uint8 codes with zero point 0).
fn quantize_linear(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    let axis = qdq_attrs(imp, n)?;
    let (Some(x), Some(s)) = (n.opt(0), n.opt(1)) else {
        return Err(n.ctx.err("inputs x and y_scale are required"));
    };
    let to = match n.opt(2) {
        Some(_) => code_type(n, input_type(imp, n, 2, "zero point")?, "zero point's type", false)?,
        None => QuantIntType::Uint8,
    };
    let name = imp.graph.fresh_name(n.base);
    let scale = owned(imp, n, &name, "scale", &s, true)?;
    let zero_point = n.opt(2).map(|z| owned(imp, n, &name, "zero_point", &z, false)).transpose()?;
    let y = imp.emit(n.ctx, &name, Op::QuantizeLinear { scale, zero_point, axis, to }, &[x])?;
    if let Some(out) = n.outs.first() {
        let ty = match to {
            QuantIntType::Int8 => data_type::INT8,
            QuantIntType::Uint8 => data_type::UINT8,
            QuantIntType::Int32 => data_type::INT32,
        };
        imp.elem_types.insert(out.clone(), ty);
    }
    Ok(vec![y])
}

/// DequantizeLinear: inputs codes, scale, optional zero point (of the codes' type).
fn dequantize_linear(imp: &mut Importer, n: &OnnxNode) -> Result<Vec<Val>> {
    let axis = qdq_attrs(imp, n)?;
    let (Some(x), Some(s)) = (n.opt(0), n.opt(1)) else {
        return Err(n.ctx.err("inputs x and x_scale are required"));
    };
    let codes = code_type(n, input_type(imp, n, 0, "codes input")?, "codes' type", true)?;
    if n.opt(2).is_some() {
        let z = code_type(n, input_type(imp, n, 2, "zero point")?, "zero point's type", true)?;
        if z != codes {
            return Err(n.ctx.err(format!(
                "the zero point is {} but the codes are {}; they must have one type",
                z.name(),
                codes.name()
            )));
        }
    }
    let name = imp.graph.fresh_name(n.base);
    let scale = owned(imp, n, &name, "scale", &s, true)?;
    let zero_point = n.opt(2).map(|z| owned(imp, n, &name, "zero_point", &z, false)).transpose()?;
    Ok(vec![imp.emit(n.ctx, &name, Op::DequantizeLinear { codes, scale, zero_point, axis }, &[x])?])
}
