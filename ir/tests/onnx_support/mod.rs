//! Test support shared by `tests/onnx_fuzz.rs` and `tests/onnx_import.rs`: ONNX protobuf pieces
//! for models built in the tests.

use mase_ir::onnx::proto::*;

/// A float tensor value `name` of static `shape` (graph input or output).
pub fn vi(name: &str, shape: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeProtoTensor {
                elem_type: 1,
                shape: Some(TensorShapeProto {
                    dim: shape.iter().map(|&d| Dimension { value: Some(DimValue::DimValue(d)) }).collect(),
                }),
            }),
        }),
    }
}
