//! The host/device split on whole Hugging Face exports (`tests/fixtures/hf/`): the device takes
//! the token ids, token types and the attention mask and runs the embeddings (lookups within the
//! table budget) and the encoder (and a classifier's pooler and head); mask preparation runs on
//! the host before it; the device's own graph and the host parts compute exactly what the whole
//! model computes there.

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

fn hw(text: &str) -> HwConfig {
    HwConfig::from_toml(text, "test").unwrap()
}

/// The device inputs of a split, by name and shape.
fn device_inputs(g: &MaseGraph, s: &mase_emit::host_split::Split) -> Vec<(String, Vec<usize>)> {
    s.device_inputs(g)
        .into_iter()
        .map(|i| (g.node(i).name.clone(), g.node(i).out_shape().unwrap().to_vec()))
        .collect()
}

#[test]
fn the_device_runs_everything_after_the_hosts_mask_preparation() {
    for name in
        ["bert_cls_ts_static", "bert_cls_dynamo_dynamic", "bert_model_ts_dynamic", "bert_model_dynamo_static"]
    {
        let g = import(name);
        let s = split(&g, &hw(""));
        let ins = device_inputs(&g, &s);
        // Three device inputs: the boolean key mask, the token ids and the token types (the
        // lookup tables fit the default budget).
        let shapes: Vec<&Vec<usize>> = ins.iter().map(|(_, sh)| sh).collect();
        assert_eq!(shapes.len(), 3, "{name}: {ins:?}");
        assert!(shapes.contains(&&vec![3, 1, 1, 16]), "{name}: {ins:?}");
        for i in ["input_ids", "token_type_ids"] {
            assert!(ins.iter().any(|(n, sh)| n == i && sh == &vec![3, 16]), "{name}: {ins:?}");
        }
        // One device output: the model's own output (a classifier's logits come out of the
        // device, pooler and head included).
        let outs = s.device_outputs(&g);
        assert_eq!(outs, g.output_values(), "{name}");
        // Lookups, the position table's add and every linear, softmax, layer norm and gelu run
        // on the device.
        for (id, n) in g.nodes() {
            if matches!(n.op.mase_op(), "embedding" | "softmax" | "layer_norm" | "gelu" | "linear" | "add") {
                assert_eq!(s.side[id.0], Side::Device, "{name}: {}", n.name);
            }
        }
        let post = g.nodes().filter(|(id, _)| s.side[id.0] == Side::Post).count();
        assert_eq!(post, 0, "{name}");
    }
}

/// Tables go on the device smallest first while they fit the budget: with room for the token
/// types' table only, the word lookup runs on the host and its rows stream in; the split's
/// info lists both tables with their bits and sides.
#[test]
fn lookup_tables_beyond_the_budget_run_on_the_host() {
    use mase_emit::host_split::lookup_tables;
    let g = import("bert_model_ts_static");
    let all = lookup_tables(&g, &split(&g, &hw("")));
    let bits = |part: &str| all.iter().find(|t| t.node.contains(part)).unwrap().bits;
    let (word, types) = (bits("word"), bits("token_type"));
    // Unquantized tables count 32 bits per element.
    assert_eq!((word, types), (1000 * 64 * 32, 2 * 64 * 32));
    assert!(all.iter().all(|t| t.on_device));
    let cfg = hw(&format!("table_budget_bits = {}", word - 1));
    let s = split(&g, &cfg);
    for (id, n) in g.nodes().filter(|(_, n)| n.op.mase_op() == "embedding") {
        let want = if n.name.contains("word") { Side::Pre } else { Side::Device };
        assert_eq!(s.side[id.0], want, "{}", n.name);
    }
    let ins = device_inputs(&g, &s);
    assert!(ins.iter().any(|(n, sh)| n.contains("word") && sh == &vec![3, 16, 64]), "{ins:?}");
    assert!(ins.iter().any(|(n, _)| n == "token_type_ids"), "{ins:?}");
    let placed: Vec<bool> = lookup_tables(&g, &s).iter().map(|t| t.on_device).collect();
    assert_eq!(placed.iter().filter(|d| **d).count(), 1);
    // No budget: both lookups on the host, their sum on the device.
    let s = split(&g, &hw("table_budget_bits = 0"));
    assert!(g
        .nodes()
        .filter(|(_, n)| n.op.mase_op() == "embedding")
        .all(|(id, _)| s.side[id.0] == Side::Pre));
    assert_eq!(device_inputs(&g, &s).len(), 3);
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
    // Lookups on the host by op: their rows stream in, the device starts at their sum.
    let s = split(&g, &hw("host_ops = [\"embedding\"]"));
    for (id, n) in g.nodes() {
        if n.op.mase_op() == "embedding" {
            assert_eq!(s.side[id.0], Side::Pre, "{}", n.name);
        }
        if n.op.mase_op() == "add" && g.node(n.inputs[0]).op.mase_op() == "embedding" {
            assert_eq!(s.side[id.0], Side::Device, "{}", n.name);
        }
    }
    assert_eq!(s.ended_by, None);
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
