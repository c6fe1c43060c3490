//! Test support shared by the ONNX integration tests (`tests/onnx_fuzz.rs`,
//! `tests/onnx_import.rs`, `tests/onnx_export.rs`, `tests/onnx_export_ops.rs`): ONNX protobuf
//! pieces for models built in the tests, the fixtures, and bit-for-bit tensor equality.

// Each test crate uses only some of these.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_ir::npy::read_npy;
use mase_ir::onnx::proto::*;
use mase_ir::onnx::ImportOptions;
use mase_ir::{MaseGraph, Tensor};

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

/// The fixtures folder (`tests/fixtures` of the workspace).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// Names of the fixtures importable with default options (`*.onnx` but `bad_*`), sorted;
/// panics when fewer than 15 are there (the fixtures not made).
pub fn fixture_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".onnx").map(str::to_string))
        .filter(|n| !n.starts_with("bad_"))
        .collect();
    v.sort();
    assert!(v.len() >= 15, "fixtures missing: run scripts/make_fixtures.py ({v:?})");
    v
}

/// The import options for fixture `name` (with `raise`): the input shapes a fixture with a
/// dynamic input needs.
pub fn fixture_opts(name: &str, raise: bool) -> ImportOptions {
    let mut o = ImportOptions { raise, ..Default::default() };
    if name == "encoder_layer_decomposed_ln" {
        o.input_shapes.insert("hidden_states".into(), vec![1, 8, 128]);
    }
    o
}

/// Equal element type, shape and bits.
pub fn same_bits(a: &Tensor, b: &Tensor) -> bool {
    let bits = |t: &Tensor| -> Vec<u64> {
        match t {
            Tensor::F32(x) => x.iter().map(|v| u64::from(v.to_bits())).collect(),
            Tensor::I64(x) => x.iter().map(|&v| v as u64).collect(),
            Tensor::I32(x) => x.iter().map(|&v| v as u64).collect(),
            Tensor::Bool(x) => x.iter().map(|&v| u64::from(v)).collect(),
        }
    };
    a.dtype() == b.dtype() && a.shape() == b.shape() && bits(a) == bits(b)
}

/// A fixture's inputs by ONNX input name (`<name>.in.<input>.npy`); panics when there are none.
pub fn fixture_inputs(name: &str) -> HashMap<String, Tensor> {
    let prefix = format!("{name}.in.");
    let mut inputs = HashMap::new();
    for e in std::fs::read_dir(fixtures()).unwrap() {
        let f = e.unwrap().file_name().into_string().unwrap();
        if let Some(input) = f.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".npy")) {
            inputs.insert(input.to_string(), read_npy(fixtures().join(&f)).unwrap());
        }
    }
    assert!(!inputs.is_empty(), "{name}: no input files");
    inputs
}

/// The inputs keyed by the graph's placeholder names, given by ONNX input name (a placeholder
/// remembers the ONNX input it came from as its origin).
pub fn by_placeholder(g: &MaseGraph, onnx_inputs: &HashMap<String, Tensor>) -> HashMap<String, Tensor> {
    g.input_ids()
        .into_iter()
        .map(|id| {
            let n = g.node(id);
            let origin = n.origin.as_deref().unwrap_or(&n.name);
            let t = onnx_inputs.get(origin).unwrap_or_else(|| panic!("no value for input '{origin}'"));
            (n.name.clone(), t.clone())
        })
        .collect()
}
