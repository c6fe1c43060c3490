//! The host/device split on whole Hugging Face exports (`tests/fixtures/hf/`): the device takes
//! the embeddings' sum and the attention mask and runs the encoder; mask preparation and the
//! embedding lookups run on the host before it, a classifier's pooler and head after it; the
//! device's own graph computes exactly what the whole model computes there.

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
fn the_device_runs_the_encoder_between_the_hosts_embeddings_and_head() {
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
        let outs = s.device_outputs(&g);
        assert_eq!(outs.len(), 1, "{name}");
        assert!(
            g.node(outs[0]).name.contains("layer_1") || g.node(outs[0]).name.contains("layer_norm"),
            "{name}"
        );
        // Embedding lookups are on the host (no embedding component yet), every linear of the
        // encoder on the device, and a classifier's pooler and head after it.
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
        assert_eq!(post, if name.starts_with("bert_cls") { 4 } else { 0 }, "{name}");
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
