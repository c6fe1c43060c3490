//! ONNX export of imported models: every fixture (`tests/fixtures/*.onnx`, the Hugging Face
//! exports in `tests/fixtures/hf/`) imported, exported, imported again and run with the float
//! interpreter on the fixture inputs gives the same outputs bit for bit; graph output names
//! survive; what the file holds (opset, producer, inputs, outputs with types and shapes);
//! determinism; and the errors bad requests give.

mod onnx_support;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use mase_ir::npy::read_npy;
use mase_ir::onnx::proto::{self, DimValue, ModelProto};
use mase_ir::onnx::{import_bytes, import_file, to_onnx, ExportOptions, ImportOptions};
use mase_ir::{interp, MaseGraph, Op, Tensor};
use onnx_support::{by_placeholder, fixture_inputs, fixture_names, fixture_opts, fixtures, same_bits};
use prost::Message;

fn hf() -> PathBuf {
    fixtures().join("hf")
}

const HF_INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

/// Exports `g` at `opset`, imports it back with `opts` and checks that both give the same
/// outputs bit for bit on `onnx_inputs` (by ONNX input name) and have the same output names.
/// Returns the re-imported graph.
fn round_trip(
    label: &str,
    g: &MaseGraph,
    opset: i64,
    opts: &ImportOptions,
    onnx_inputs: &HashMap<String, Tensor>,
) -> MaseGraph {
    let bytes =
        to_onnx(g, &ExportOptions { opset, ..Default::default() }).unwrap_or_else(|e| panic!("{label}: {e}"));
    let back = import_bytes(&bytes, label, opts).unwrap_or_else(|e| panic!("{label}: re-import: {e}"));
    let inputs = by_placeholder(g, onnx_inputs);
    let want = interp::run_outputs(g, &inputs).unwrap_or_else(|e| panic!("{label}: {e}"));
    // The exported inputs are named as the placeholders, which are the re-import's origins.
    let got = interp::run_outputs(&back, &by_placeholder(&back, &inputs))
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(got.len(), want.len(), "{label}");
    for (k, (a, b)) in got.iter().zip(&want).enumerate() {
        assert!(same_bits(a, b), "{label}: output {k} differs after the round trip");
    }
    let names = |g: &MaseGraph| (0..g.output_values().len()).map(|k| g.output_name(k)).collect::<Vec<_>>();
    assert_eq!(names(&back), names(g), "{label}: output names");
    back
}

#[test]
fn every_fixture_round_trips_bit_for_bit() {
    for name in fixture_names() {
        let inputs = fixture_inputs(&name);
        let raised =
            import_file(&fixtures().join(format!("{name}.onnx")), &fixture_opts(&name, true)).unwrap();
        // Re-imported with the same options: raising turns the exported forms of the MASE ops
        // (linear, gelu, masked softmax, mul by a scalar) back into them.
        for opset in [17, 20] {
            round_trip(
                &format!("{name} at opset {opset}"),
                &raised,
                opset,
                &ImportOptions::default(),
                &inputs,
            );
        }
        // Without raising, the graph holds ONNX's own ops; GELU is then only kept as one op
        // from opset 20 (before it, it is written as its formula, which raising reads back).
        let raw = import_file(&fixtures().join(format!("{name}.onnx")), &fixture_opts(&name, false)).unwrap();
        let opts = ImportOptions { raise: false, ..Default::default() };
        round_trip(&format!("{name} unraised"), &raw, 20, &opts, &inputs);
    }
}

/// The ONNX element type number of a tensor type.
fn onnx_type(d: mase_ir::tensor::DType) -> i32 {
    use mase_ir::tensor::DType;
    match d {
        DType::F32 => proto::data_type::FLOAT,
        DType::I64 => proto::data_type::INT64,
        DType::I32 => proto::data_type::INT32,
        DType::Bool => proto::data_type::BOOL,
    }
}

fn hf_models() -> Vec<String> {
    let mut v = Vec::new();
    for kind in ["bert_model", "bert_cls"] {
        for exporter in ["ts", "dynamo"] {
            for axes in ["static", "dynamic"] {
                v.push(format!("{kind}_{exporter}_{axes}"));
            }
        }
    }
    v
}

fn hf_import(name: &str, fold: bool) -> MaseGraph {
    let shapes: BTreeMap<String, Vec<usize>> =
        HF_INPUTS.iter().map(|i| (i.to_string(), vec![3, 16])).collect();
    let opts = ImportOptions { input_shapes: shapes, fold, ..Default::default() };
    import_file(&hf().join(format!("{name}.onnx")), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn hf_batch() -> HashMap<String, Tensor> {
    HF_INPUTS
        .iter()
        .map(|i| (i.to_string(), read_npy(hf().join(format!("batch.{i}.npy"))).unwrap()))
        .collect()
}

#[test]
fn hugging_face_exports_round_trip_bit_for_bit_with_their_output_names() {
    let batch = hf_batch();
    for name in hf_models() {
        let g = hf_import(&name, true);
        let back = round_trip(&name, &g, 17, &ImportOptions::default(), &batch);
        let want = if name.starts_with("bert_cls") { "logits" } else { "last_hidden_state" };
        assert_eq!(back.output_names, [want], "{name}");
        // Raised back to the same MASE ops, so the re-import is the same computation.
        let ops = |g: &MaseGraph| {
            let mut m: BTreeMap<&str, usize> = BTreeMap::new();
            for (_, n) in g.nodes().filter(|(_, n)| !matches!(n.op, Op::Constant { .. })) {
                *m.entry(n.op.mase_op()).or_default() += 1;
            }
            m
        };
        assert_eq!(ops(&back), ops(&g), "{name}");
    }
    // Without folding the shape sub-graphs (Shape, Gather, Concat, Range, ConstantOfShape, Cast,
    // Expand, …) are nodes, and are written and read back as such.
    for name in ["bert_model_ts_dynamic", "bert_cls_dynamo_dynamic"] {
        let g = hf_import(name, false);
        assert!(g.nodes().any(|(_, n)| matches!(n.op, Op::Shape { .. } | Op::Range)), "{name}");
        let opts = ImportOptions { fold: false, ..Default::default() };
        round_trip(&format!("{name} unfolded"), &g, 17, &opts, &batch);
    }
}

#[test]
fn the_file_holds_the_opset_the_inputs_and_the_typed_outputs() {
    let g = hf_import("bert_cls_ts_static", true);
    let bytes = to_onnx(&g, &ExportOptions::default()).unwrap();
    assert_eq!(to_onnx(&g, &ExportOptions::default()).unwrap(), bytes, "two exports differ");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(m.producer_name, "mase-rs");
    assert_eq!((m.ir_version, m.opset_import.len(), m.opset_import[0].version), (8, 1, 17));
    assert!(m.opset_import[0].domain.is_empty());
    let graph = m.graph.unwrap();
    let dims = |vi: &proto::ValueInfoProto| -> (i32, Vec<i64>) {
        let tt = vi.r#type.as_ref().unwrap().tensor_type.as_ref().unwrap();
        let d = tt.shape.as_ref().unwrap().dim.iter().map(|d| match d.value {
            Some(DimValue::DimValue(v)) => v,
            _ => panic!("{}: a dimension is not static", vi.name),
        });
        (tt.elem_type, d.collect())
    };
    let inputs: Vec<(&str, (i32, Vec<i64>))> =
        graph.input.iter().map(|i| (i.name.as_str(), dims(i))).collect();
    // The inputs as the placeholders record them: the three int64 [3, 16] token tensors.
    let recorded = |id: mase_ir::NodeId| {
        let m = &g.node(id).meta.common.results["data_out_0"];
        let shape = m.shape.iter().map(|&d| d as i64).collect::<Vec<_>>();
        (onnx_type(m.dtype()), shape)
    };
    let want: Vec<(&str, (i32, Vec<i64>))> =
        g.input_ids().into_iter().map(|id| (g.node(id).name.as_str(), recorded(id))).collect();
    assert_eq!(inputs, want);
    assert_eq!(want.iter().map(|w| w.0).collect::<Vec<_>>(), HF_INPUTS);
    assert!(want.iter().all(|w| w.1 == (proto::data_type::INT64, vec![3, 16])), "{want:?}");
    assert_eq!(graph.output.len(), 1);
    let logits = g.output_values()[0];
    assert_eq!((graph.output[0].name.as_str(), dims(&graph.output[0])), ("logits", recorded(logits)));
    // Every op-owned weight and constant is an initializer once; nothing else is a graph input.
    let mut names: Vec<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "an initializer name is used twice");
    let owned: usize = g.nodes().map(|(_, n)| n.op.weight_names().len()).sum();
    assert!(count >= owned, "{count} initializers for {owned} weights");
    // Standard ops only, and the model's computation in them.
    let types: Vec<&str> = graph.node.iter().map(|n| n.op_type.as_str()).collect();
    for t in ["MatMul", "LayerNormalization", "Softmax", "Erf", "Gather", "Where"] {
        assert!(types.contains(&t), "no {t} in {types:?}");
    }
    assert!(graph.node.iter().all(|n| n.domain.is_empty()));
}

#[test]
fn output_names_come_from_the_options_the_graph_or_the_producing_nodes() {
    let g = import_file(&fixtures().join("mlp_two_outputs.onnx"), &ImportOptions::default()).unwrap();
    let onnx_names = |bytes: &[u8]| -> Vec<String> {
        ModelProto::decode(bytes).unwrap().graph.unwrap().output.into_iter().map(|o| o.name).collect()
    };
    let written = onnx_names(&to_onnx(&g, &ExportOptions::default()).unwrap());
    assert_eq!(written, g.output_names);
    let opts = ExportOptions { output_names: vec!["first".into(), "second".into()], ..Default::default() };
    let bytes = to_onnx(&g, &opts).unwrap();
    assert_eq!(onnx_names(&bytes), ["first", "second"]);
    let back = import_bytes(&bytes, "renamed", &ImportOptions::default()).unwrap();
    assert_eq!(back.output_names, ["first", "second"]);
    // A graph that never had names (built, or cut out of another) uses the producing nodes'.
    let mut unnamed = g.clone();
    unnamed.output_names.clear();
    let producers: Vec<String> =
        unnamed.output_values().iter().map(|&v| unnamed.node(v).name.clone()).collect();
    assert_eq!(onnx_names(&to_onnx(&unnamed, &ExportOptions::default()).unwrap()), producers);
}

#[test]
fn bad_requests_are_errors_that_say_what_is_wrong() {
    let g = import_file(&fixtures().join("mlp_two_outputs.onnx"), &ImportOptions::default()).unwrap();
    let err = |opts: ExportOptions| to_onnx(&g, &opts).unwrap_err().to_string();
    let e = err(ExportOptions { opset: 16, ..Default::default() });
    assert!(e.contains("opset 16") && e.contains("17 to 20"), "{e}");
    let e = err(ExportOptions { output_names: vec!["only".into()], ..Default::default() });
    assert!(e.contains("1 output names") && e.contains("2 outputs"), "{e}");
    let e = err(ExportOptions { output_names: vec!["y".into(), "y".into()], ..Default::default() });
    assert!(e.contains("'y' again") && e.contains("distinct"), "{e}");
    let input = g.node(g.input_ids()[0]).name.clone();
    let e = err(ExportOptions { output_names: vec![input.clone(), "y".into()], ..Default::default() });
    assert!(e.contains(&format!("graph input '{input}'")), "{e}");

    // A node the exporter cannot write names itself and its op.
    let mut bad = MaseGraph::new("bad");
    let x = bad.add_node("x", Op::Placeholder, vec![]).unwrap();
    bad.node_mut(x).meta.common.results.insert(
        "data_out_0".into(),
        mase_ir::metadata::TensorMeta::unquantized(&[2], mase_ir::tensor::DType::I32),
    );
    let m = bad.add_node("twice", Op::MulScalar { scalar: 2.0 }, vec![x]).unwrap();
    bad.node_mut(m).meta.common.results.insert(
        "data_out_0".into(),
        mase_ir::metadata::TensorMeta::unquantized(&[2], mase_ir::tensor::DType::I32),
    );
    bad.add_node("output", Op::Output, vec![m]).unwrap();
    let e = to_onnx(&bad, &ExportOptions::default()).unwrap_err().to_string();
    assert!(e.contains("'twice'") && e.contains("(mul") && e.contains("int32"), "{e}");

    // An input without a recorded shape cannot be written with a static one.
    let mut shapeless = MaseGraph::new("shapeless");
    let x = shapeless.add_node("x", Op::Placeholder, vec![]).unwrap();
    shapeless.add_node("output", Op::Output, vec![x]).unwrap();
    let e = to_onnx(&shapeless, &ExportOptions::default()).unwrap_err().to_string();
    assert!(e.contains("'x'") && e.contains("add_common_metadata"), "{e}");
}
