//! ONNX `TensorProto` to [`Tensor`] (element types, raw and typed data, size checks before
//! allocation) and back ([`tensor_to_proto`], for the exporter).

use super::proto::{data_type, TensorProto};
use super::{checked_elements, MAX_TENSOR_ELEMENTS};
use crate::op::QuantIntType;
use crate::tensor::{DType, Tensor};

/// Converts a TensorProto to a [`Tensor`]: float types become f32, INT32 i32, BOOL bool, the
/// other integer types i64.
/// Checks the element count against the data before allocating.
pub fn tensor_from_proto(t: &TensorProto) -> std::result::Result<Tensor, String> {
    if t.data_location == 1 || !t.external_data.is_empty() {
        return Err("its data is stored in an external file, which is not supported; save the model with the tensors inside (onnx.save(model, path, save_as_external_data=False))".into());
    }
    let mut shape = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        shape.push(usize::try_from(d).map_err(|_| format!("dimension {d} is negative"))?);
    }
    let n = checked_elements(&shape)
        .filter(|&n| n <= MAX_TENSOR_ELEMENTS)
        .ok_or_else(|| format!("shape {shape:?} has more than {MAX_TENSOR_ELEMENTS} elements"))?;
    let raw = &t.raw_data;
    let check_len = |have: usize, what: &str| {
        if have == n {
            Ok(())
        } else {
            Err(format!("shape {shape:?} needs {n} elements but {what} holds {have}"))
        }
    };
    let from_raw = |size: usize| -> std::result::Result<std::slice::ChunksExact<'_, u8>, String> {
        if raw.len() != n.saturating_mul(size) {
            return Err(format!(
                "shape {shape:?} needs {} bytes of raw_data, it has {}",
                n * size,
                raw.len()
            ));
        }
        Ok(raw.chunks_exact(size))
    };
    let f32s = |v: Vec<f32>| Tensor::from_f32(&shape, v).ok_or_else(|| "internal: size".to_string());
    let i64s = |v: Vec<i64>| Tensor::from_i64(&shape, v).ok_or_else(|| "internal: size".to_string());
    match t.data_type {
        data_type::FLOAT => {
            if !raw.is_empty() || t.float_data.is_empty() {
                f32s(from_raw(4)?.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            } else {
                check_len(t.float_data.len(), "float_data")?;
                f32s(t.float_data.clone())
            }
        }
        data_type::DOUBLE => {
            if !raw.is_empty() || t.double_data.is_empty() {
                f32s(from_raw(8)?.map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32).collect())
            } else {
                check_len(t.double_data.len(), "double_data")?;
                f32s(t.double_data.iter().map(|&v| v as f32).collect())
            }
        }
        data_type::FLOAT16 => {
            if !raw.is_empty() || t.int32_data.is_empty() {
                f32s(from_raw(2)?.map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))).collect())
            } else {
                check_len(t.int32_data.len(), "int32_data")?;
                f32s(t.int32_data.iter().map(|&v| f16_to_f32(v as u16)).collect())
            }
        }
        data_type::INT64 => {
            if !raw.is_empty() || t.int64_data.is_empty() {
                i64s(from_raw(8)?.map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
            } else {
                check_len(t.int64_data.len(), "int64_data")?;
                i64s(t.int64_data.clone())
            }
        }
        ty @ (data_type::INT32 | data_type::INT16 | data_type::INT8 | data_type::UINT8 | data_type::BOOL) => {
            let v: Vec<i64> = if !raw.is_empty() || t.int32_data.is_empty() {
                match ty {
                    data_type::INT32 => from_raw(4)?.map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect(),
                    data_type::INT16 => from_raw(2)?.map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect(),
                    data_type::INT8 => from_raw(1)?.map(|c| c[0] as i8 as i64).collect(),
                    _ => from_raw(1)?.map(|c| c[0] as i64).collect(),
                }
            } else {
                check_len(t.int32_data.len(), "int32_data")?;
                t.int32_data.iter().map(|&v| v as i64).collect()
            };
            let t = i64s(v)?;
            Ok(match ty {
                data_type::INT32 => crate::interp::shape::cast(&t, DType::I32),
                data_type::BOOL => crate::interp::shape::cast(&t, DType::Bool),
                _ => t,
            })
        }
        other => Err(format!(
            "element type {} ({other}) is not supported; supported: FLOAT, DOUBLE, FLOAT16, INT64, INT32, INT16, INT8, UINT8, BOOL",
            data_type::name(other)
        )),
    }
}

/// The ONNX element type of a [`DType`].
pub fn onnx_data_type(d: DType) -> i32 {
    match d {
        DType::F32 => data_type::FLOAT,
        DType::I64 => data_type::INT64,
        DType::I32 => data_type::INT32,
        DType::Bool => data_type::BOOL,
    }
}

/// A [`Tensor`] as a `TensorProto` named `name`: its dims and its elements as little-endian
/// `raw_data` in row-major order (one byte per boolean), which [`tensor_from_proto`] reads back
/// bit for bit.
pub fn tensor_to_proto(name: &str, t: &Tensor) -> TensorProto {
    let raw_data: Vec<u8> = match t {
        Tensor::F32(a) => a.iter().flat_map(|v| v.to_le_bytes()).collect(),
        Tensor::I64(a) => a.iter().flat_map(|v| v.to_le_bytes()).collect(),
        Tensor::I32(a) => a.iter().flat_map(|v| v.to_le_bytes()).collect(),
        Tensor::Bool(a) => a.iter().map(|&v| u8::from(v)).collect(),
    };
    TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: onnx_data_type(t.dtype()),
        name: name.to_string(),
        raw_data,
        ..Default::default()
    }
}

/// The ONNX element type of quantized codes.
pub fn quant_data_type(ty: QuantIntType) -> i32 {
    match ty {
        QuantIntType::Int8 => data_type::INT8,
        QuantIntType::Uint8 => data_type::UINT8,
        QuantIntType::Int32 => data_type::INT32,
    }
}

/// Integer codes as a `TensorProto` of the code type `ty` (little-endian `raw_data`), which
/// [`tensor_from_proto`] reads back as the same i64 values; values outside `ty`'s range wrap.
pub fn codes_to_proto(name: &str, t: &Tensor, ty: QuantIntType) -> TensorProto {
    let v = t.to_i64();
    let raw_data: Vec<u8> = match ty {
        QuantIntType::Int8 => v.iter().map(|&x| x as i8 as u8).collect(),
        QuantIntType::Uint8 => v.iter().map(|&x| x as u8).collect(),
        QuantIntType::Int32 => v.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect(),
    };
    TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: quant_data_type(ty),
        name: name.to_string(),
        raw_data,
        ..Default::default()
    }
}

/// IEEE half to single precision.
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match exp {
        0 if man == 0 => sign,
        0 => {
            // Subnormal: value = man · 2^-24.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        0x1f => sign | 0x7f80_0000 | (man << 13),
        e => sign | ((e + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}
