//! Test support shared by the integration tests of the `mase` crate (`tests/*.rs`): fixtures,
//! flows from ONNX bytes and a TOML configuration, seeded samples, and small ONNX models built
//! with the importer's protobuf types.

// Each test crate uses only some of these.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mase_emit::flow::{run_flow, seeded_inputs, Flow, FlowOptions};
use mase_emit::FlowConfig;
use mase_ir::onnx::proto::*;
use mase_ir::Tensor;
use prost::Message;

/// Runs the `mase` binary with `args` in `dir`.
pub fn mase(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mase"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("runs the mase binary")
}

/// A file of `tests/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures").join(name)
}

/// The flow on the ONNX `bytes` of `model` (also the configuration's name) with the TOML
/// `config`, emitting into `dir`.
pub fn try_flow_bytes(bytes: &[u8], model: &str, config: &str, dir: &Path) -> mase_ir::Result<Flow> {
    let table: toml::Table = config.parse().unwrap();
    let mut opts = FlowOptions::new(model, dir);
    opts.config = FlowConfig::from_table(&table, model, None)?;
    run_flow(bytes, &opts)
}

/// The flow on fixture `model` with the TOML `config`, emitting into `dir`.
pub fn try_flow(model: &str, config: &str, dir: &Path) -> mase_ir::Result<Flow> {
    try_flow_bytes(&std::fs::read(fixture(model)).unwrap(), model, config, dir)
}

/// [`try_flow`], panicking with the model's name on an error.
pub fn flow(model: &str, config: &str, dir: &Path) -> Flow {
    try_flow(model, config, dir).unwrap_or_else(|e| panic!("{model}: {e}"))
}

/// `n` seeded input sets for the flow's graph (seeds 100, 101, …).
pub fn samples(f: &Flow, n: u64) -> Vec<HashMap<String, Tensor>> {
    (0..n).map(|k| seeded_inputs(&f.graph, 100 + k).unwrap()).collect()
}

/// A tensor value `name` of ONNX element type `elem_type` and shape `dims` (`None`: left to
/// inference), for a graph input or output.
pub fn value_info(name: &str, elem_type: i32, dims: Option<&[i64]>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeProtoTensor {
                elem_type,
                shape: dims.map(|dims| TensorShapeProto {
                    dim: dims.iter().map(|&d| Dimension { value: Some(DimValue::DimValue(d)) }).collect(),
                }),
            }),
        }),
    }
}

/// The bytes of an ONNX model (IR version 8, opset 13) whose graph `name` has these nodes,
/// initializers, inputs and outputs.
pub fn onnx_model(
    name: &str,
    node: Vec<NodeProto>,
    initializer: Vec<TensorProto>,
    input: Vec<ValueInfoProto>,
    output: Vec<ValueInfoProto>,
) -> Vec<u8> {
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: 13 }],
        graph: Some(GraphProto { name: name.into(), node, initializer, input, output, ..Default::default() }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// An ONNX node `name` of `op` from `inputs` to the one output `out`.
pub fn onnx_node(op: &str, name: &str, inputs: &[&str], out: &str) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        op_type: op.into(),
        name: name.into(),
        ..Default::default()
    }
}

/// The sweep axes of the sweep tests (four points of the fixture classifier, two or more of
/// them on the front).
pub const CLASSIFIER_AXES: &str = "[sweep]\nwidth = [8, 12]\nweight_width = [8]\ntarget_ii = [16, 128]\n";

/// `mase sweep` of the fixture classifier: the model, `--config SWEEP.toml` (a file of the run's
/// directory), its calibration and evaluation data and, with `labels`, the evaluation labels.
pub fn classifier_sweep_args(labels: bool) -> Vec<String> {
    let f = |name: &str| fixture(name).display().to_string();
    let mut a = vec!["sweep".to_string(), f("mlp_classifier.onnx"), "--config".into(), "SWEEP.toml".into()];
    a.extend(["--calibrate".into(), format!("x={}", f("mlp_classifier.calib.x.npy"))]);
    a.extend(["--eval".into(), format!("x={}", f("mlp_classifier.eval.x.npy"))]);
    if labels {
        a.extend(["--labels".into(), f("mlp_classifier.eval.labels.npy")]);
    }
    a
}

/// A command's standard output as JSON, failing with both of its streams when it is not.
pub fn stdout_json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    })
}
