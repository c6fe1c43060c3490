//! The host/device split on whole Hugging Face exports (`tests/fixtures/hf/`): the device takes
//! the embeddings' sum and the attention mask and runs the encoder (and a classifier's pooler and
//! head); mask preparation and the embedding lookups run on the host before it; the device's
//! own graph and the host parts compute exactly what the whole model computes there.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use mase_emit::host_split::{device_graph, split, Side};
use mase_emit::HwConfig;
use mase_ir::interp::run_graph;
use mase_ir::metadata::Toolchain;
use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::pass::{PassArgs, PassManager};
use mase_ir::{MaseGraph, Tensor};

const INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

fn hf() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hf")
}

fn import(name: &str) -> MaseGraph {
    let shapes: BTreeMap<String, Vec<usize>> = INPUTS.iter().map(|i| (i.to_string(), vec![3, 16])).collect();
    let opts = ImportOptions { input_shapes: shapes, ..Default::default() };
    import_file(&hf().join(format!("{name}.onnx")), &opts).unwrap()
}

fn batch() -> HashMap<String, Tensor> {
    INPUTS
        .iter()
        .map(|i| (i.to_string(), mase_ir::npy::read_npy(hf().join(format!("batch.{i}.npy"))).unwrap()))
        .collect()
}

fn names(g: &MaseGraph, ids: Vec<mase_ir::NodeId>) -> Vec<String> {
    ids.into_iter().map(|i| g.node(i).name.clone()).collect()
}

fn hw(text: &str) -> HwConfig {
    HwConfig::from_toml(text, "test").unwrap()
}

#[test]
fn the_device_runs_everything_after_the_hosts_embeddings_and_mask() {
    for name in
        ["bert_cls_ts_static", "bert_cls_dynamo_dynamic", "bert_model_ts_dynamic", "bert_model_dynamo_static"]
    {
        let g = import(name);
        let s = split(&g, &hw(""));
        let ins = s.device_inputs(&g);
        // Two device inputs: the boolean key mask and the embeddings' sum.
        assert_eq!(ins.len(), 2, "{name}: {:?}", names(&g, ins));
        let shapes: Vec<_> = ins.iter().map(|&i| g.node(i).out_shape().unwrap().to_vec()).collect();
        assert!(
            shapes.contains(&vec![3, 1, 1, 16]) && shapes.contains(&vec![3, 16, 64]),
            "{name}: {shapes:?}"
        );
        // One device output: the model's own output (a classifier's logits come out of the
        // device, pooler and head included).
        let outs = s.device_outputs(&g);
        assert_eq!(outs, g.output_values(), "{name}");
        // Embedding lookups are on the host (the stitcher does not stream token ids), every
        // linear, softmax, layer norm and gelu on the device.
        for (id, n) in g.nodes() {
            match n.op.mase_op() {
                "embedding" => assert_eq!(s.side[id.0], Side::Pre, "{name}: {}", n.name),
                "softmax" | "layer_norm" | "gelu" => {
                    assert!(
                        s.side[id.0] == Side::Device || n.name.contains("embeddings"),
                        "{name}: {}",
                        n.name
                    )
                }
                _ => {}
            }
        }
        let post = g.nodes().filter(|(id, _)| s.side[id.0] == Side::Post).count();
        assert_eq!(post, 0, "{name}");
    }
}

#[test]
fn the_device_graph_computes_what_the_model_computes_there() {
    for name in ["bert_cls_ts_static", "bert_model_dynamo_static"] {
        let g = import(name);
        let s = split(&g, &hw(""));
        let d = device_graph(&g, &s).unwrap();
        let whole = run_graph(&g, &batch()).unwrap();
        let inputs: HashMap<String, Tensor> =
            s.device_inputs(&g).into_iter().map(|i| (g.node(i).name.clone(), whole[i.0].clone())).collect();
        let got = mase_ir::interp::run_outputs(&d, &inputs).unwrap();
        let want: Vec<Tensor> = s.device_outputs(&g).into_iter().map(|o| whole[o.0].clone()).collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn overrides_move_nodes_to_the_host_and_the_pass_records_them() {
    let g = import("bert_model_ts_static");
    // The embeddings' layer norm on the host: the device starts at the first projections.
    let s = split(&g, &hw("host_ops = [\"layer_norm\"]"));
    let ln = g.nodes().find(|(_, n)| n.op.mase_op() == "layer_norm").unwrap().0;
    assert_eq!(s.side[ln.0], Side::Pre);
    // A node of the last layer forced onto the host ends the device region there.
    let last = g.nodes().filter(|(_, n)| n.op.mase_op() == "gelu").last().unwrap().1.name.clone();
    let s = split(&g, &hw(&format!("[nodes.{last}]\nhost = true")));
    assert_eq!(s.ended_by.map(|i| g.node(i).name.clone()), Some(last));
    // The pass marks every host node HOST and leaves the device's unset.
    let mut args = PassArgs::new();
    args.insert("split_host_device".into(), toml::Value::Table(toml::Table::new()));
    let pm = PassManager::software().with(mase_emit::HARDWARE_PASSES).unwrap();
    let (marked, info) = pm.run(g, &["split_host_device"], &args).unwrap();
    let hosts = marked.nodes().filter(|(_, n)| n.meta.hardware.toolchain == Some(Toolchain::Host)).count();
    let listed = info["split_host_device"]["host_pre"].as_array().unwrap().len();
    assert_eq!(hosts, listed);
    assert!(hosts > 0);
}

/// The host parts, written as ONNX and imported back, compute what the whole model computes:
/// pre gives the device's inputs from the model's inputs, post the model's outputs from the
/// device's outputs; the three parts join by tensor name.
#[test]
fn host_parts_round_trip_through_onnx_and_join_the_device_by_name() {
    use mase_emit::host_split::{host_graph, HostPart};
    use mase_ir::onnx::{import_bytes, to_onnx, ExportOptions};
    for name in ["bert_cls_dynamo_static", "bert_model_ts_static"] {
        let mut g = import(name);
        // Send the last layer norm and everything after it to the host, so post has work.
        let last = g.nodes().filter(|(_, n)| n.op.mase_op() == "layer_norm").last().unwrap().1.name.clone();
        let s = split(&g, &hw(&format!("[nodes.{last}]\nhost = true")));
        g.output_names =
            vec![if name.starts_with("bert_cls") { "logits" } else { "last_hidden_state" }.into()];
        let whole = run_graph(&g, &batch()).unwrap();
        let reimport = |part| {
            let h = host_graph(&g, &s, part).unwrap();
            let bytes = to_onnx(&h, &ExportOptions::default()).unwrap();
            import_bytes(&bytes, name, &ImportOptions::default()).unwrap()
        };
        let (pre, post) = (reimport(HostPart::Pre), reimport(HostPart::Post));
        let pre_out = mase_ir::interp::run_outputs(&pre, &batch()).unwrap();
        let mut values: HashMap<String, Tensor> = batch();
        for (k, t) in pre_out.into_iter().enumerate() {
            values.insert(pre.output_name(k), t);
        }
        for id in s.device_inputs(&g) {
            assert_eq!(values[&g.node(id).name], whole[id.0], "{name}: device input {}", g.node(id).name);
        }
        for id in s.device_outputs(&g) {
            values.insert(g.node(id).name.clone(), whole[id.0].clone());
        }
        let post_in: HashMap<String, Tensor> = post
            .input_ids()
            .into_iter()
            .map(|i| post.node(i).name.clone())
            .map(|n| (n.clone(), values[&n].clone()))
            .collect();
        let got = mase_ir::interp::run_outputs(&post, &post_in).unwrap();
        let want = mase_ir::interp::run_outputs(&g, &batch()).unwrap();
        assert_eq!(got, want, "{name}");
        assert_eq!(post.output_name(0), g.output_names[0], "{name}: the model's output name");
    }
}
