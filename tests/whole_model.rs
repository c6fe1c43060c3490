//! Whole models as exporters write them (`tests/fixtures/hf/`, from `scripts/export_hf.py`):
//! token ids, attention mask and token types in, the model's own outputs out. The flow cuts the
//! model into the host's pre part (mask preparation; lookups whose tables exceed the budget), the
//! device (token ids in, through the embeddings and the encoder) and the
//! host's post part; the device runs under Verilator with random stalls, bit-exact against the
//! golden model, and the model's outputs are compared with onnxruntime's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mase_emit::flow::{run_flow, FlowOptions};
use mase_emit::FlowConfig;
use mase_ir::Tensor;
use mase_sim::host_run::{model_outputs, ModelOutputs, Named};
use mase_sim::{check_project, device_outputs_named, load_project, Project, RunConfig};

const INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

/// 16-bit activations, 8-bit per-channel weights, calibrated on the fixture batch.
const CONFIG: &str =
    "[passes.auto_precision]\nwidth = 16\nweight_width = 8\nweight_granularity = \"per_channel\"\n";

fn hf(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name)
}

fn npy(name: &str) -> Tensor {
    mase_ir::npy::read_npy(hf(name)).unwrap()
}

/// The fixture batch, with `input_ids` from `ids_file`.
fn batch(ids_file: &str) -> Named {
    INPUTS
        .iter()
        .map(|i| {
            let file = if *i == "input_ids" { ids_file.to_string() } else { format!("batch.{i}.npy") };
            (i.to_string(), npy(&file))
        })
        .collect()
}

/// The weight-only fixtures (`tests/fixtures/weight_only/`, from `scripts/export_weight_only.py`).
fn weight_only(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/weight_only").join(name)
}

/// Runs the flow on a static export, calibrated on the batch.
fn flow(model: &str, dir: &Path) -> mase_emit::flow::Flow {
    flow_file(&hf(&format!("{model}.onnx")), model, dir)
}

/// Runs the flow on the model file `file`, calibrated on the batch.
fn flow_file(file: &Path, model: &str, dir: &Path) -> mase_emit::flow::Flow {
    let bytes = std::fs::read(file).unwrap();
    let mut opts = FlowOptions::new(model, dir);
    opts.config = FlowConfig::from_table(&CONFIG.parse().unwrap(), model, None).unwrap();
    opts.calibration = Some(vec![batch("batch.input_ids.npy").into_iter().collect()]);
    run_flow(&bytes, &opts).unwrap_or_else(|e| panic!("{model}: {e}"))
}

/// The device's inputs of one inference, from the host pre part's values.
fn device_inputs(p: &Project, pre: &Named) -> HashMap<String, Tensor> {
    p.design
        .ports
        .iter()
        .filter(|x| x.dir == mase_emit::design::PortDir::Input)
        .map(|x| (x.tensor.clone(), pre[&x.tensor].clone()))
        .collect()
}

/// Host pre, the device (golden model), host post: the model's outputs.
fn golden_model(p: &Project, inputs: &Named) -> ModelOutputs {
    let host = p.host.as_ref().expect("a whole-model project has host parts");
    let pre = host.run_pre(inputs).unwrap();
    let codes = mase_sim::quantize_samples(p, &[device_inputs(p, &pre)]).unwrap();
    let outs = mase_emit::golden::run(&p.design, &codes).unwrap();
    model_outputs(host, &p.graph, &[pre], &device_outputs_named(p, &outs).unwrap()).unwrap()
}

fn argmax_rows(t: &Tensor) -> Vec<usize> {
    let a = t.to_f32();
    let cols = *a.shape().last().unwrap();
    let v: Vec<f32> = a.iter().copied().collect();
    v.chunks(cols)
        .map(|r| r.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).map(|(i, _)| i).unwrap())
        .collect()
}

fn cosine(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (a.to_f64(), b.to_f64());
    let dot: f64 = a.iter().zip(b.iter()).map(|(x, y)| x * y).sum();
    let n = |v: &ndarray::ArrayD<f64>| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (n(&a) * n(&b))
}

#[test]
fn classifier_exports_go_from_token_ids_to_logits_bit_exact_under_verilator() {
    for model in ["bert_cls_ts_static", "bert_cls_dynamo_static"] {
        let dir = tempfile::tempdir().unwrap();
        let f = flow(model, dir.path());
        assert!(f.host.is_some(), "{model}: the mask preparation runs on the host");
        // Token ids stream into the device, whose lookups hold the tables.
        let ids = f.design.ports.iter().find(|p| p.tensor == "input_ids").expect("an input_ids port");
        assert_eq!(
            (ids.format.signed, ids.format.width, ids.format.frac),
            (false, 10, 0),
            "{model}: 1000 rows"
        );
        let tables = &f.emitted.report.lookup_tables;
        assert!(
            tables.iter().any(|t| t.rows == 1000 && t.memory_bits == 1000 * 64 * 8),
            "{model}: {tables:?}"
        );
        for file in ["host/pre.onnx", "host/post.onnx", "host/host.json"] {
            assert!(dir.path().join(file).exists(), "{model}: {file}");
        }
        let p = load_project(dir.path()).unwrap();
        let host = p.host.as_ref().unwrap();
        assert_eq!(host.output_names(), ["logits"], "{model}");
        let pre = host.run_pre(&batch("batch.input_ids.npy")).unwrap();
        let cfg = RunConfig { seed: 3, stall_prob: 0.3, ..RunConfig::default() };
        let (run, _) = check_project(&p, &[device_inputs(&p, &pre)], &cfg).unwrap();
        let r = &run.report;
        assert!(r.bit_exact, "{model}: {} mismatches, first {:?}", r.mismatches, r.first_mismatches);
        // The latency model against the stall-free run (the model is built for no stalls).
        let fast = RunConfig { stall_prob: 0.0, ..RunConfig::default() };
        let (free, _) = check_project(&p, &[device_inputs(&p, &pre)], &fast).unwrap();
        let (measured, est) = (free.report.latency_cycles as f64, free.report.model_latency_cycles as f64);
        assert!(
            (est - measured).abs() <= 0.05 * measured,
            "{model}: latency model {est} against {measured} measured"
        );
        let m =
            model_outputs(host, &p.graph, &[pre], &device_outputs_named(&p, &run.outputs).unwrap()).unwrap();
        // Against onnxruntime's logits of the same export.
        let ort = npy(&format!("{model}.out.logits.npy"));
        let logits = &m.hardware[0][0];
        let c = cosine(logits, &ort);
        assert!(c >= 0.999, "{model}: logits cosine {c} against onnxruntime");
        assert_eq!(argmax_rows(logits), argmax_rows(&ort), "{model}: argmax per sentence");
        // The float model (host pre, float device graph, host post) is onnxruntime's model.
        let cf = cosine(&m.float[0][0], &ort);
        assert!(cf > 0.999_999, "{model}: float path cosine {cf} against onnxruntime");
    }
}

/// Changing the token ids at padded positions (mask 0) changes nothing the model outputs at
/// real positions: the device's output codes at real rows and the logits are bit-identical.
#[test]
fn outputs_at_real_positions_do_not_depend_on_padded_tokens() {
    for model in ["bert_cls_ts_static", "bert_model_dynamo_static"] {
        let dir = tempfile::tempdir().unwrap();
        flow(model, dir.path());
        let p = load_project(dir.path()).unwrap();
        let a = golden_model(&p, &batch("batch.input_ids.npy"));
        let b = golden_model(&p, &batch("batch_repad.input_ids.npy"));
        let ids_a = npy("batch.input_ids.npy").to_i64();
        let ids_b = npy("batch_repad.input_ids.npy").to_i64();
        assert_ne!(ids_a, ids_b, "the repad batch differs at padded positions");
        let mask = npy("batch.attention_mask.npy").to_i64();
        let out = a.hardware[0][0].to_f32();
        let (out_b, shape) = (b.hardware[0][0].to_f32(), out.shape().to_vec());
        if model.starts_with("bert_cls") {
            assert_eq!(out, out_b, "{model}: logits");
        } else {
            // last_hidden_state [B, S, H]: rows at real positions.
            let hidden = shape[2];
            let (fa, fb): (Vec<f32>, Vec<f32>) =
                (out.iter().copied().collect(), out_b.iter().copied().collect());
            let mut real = 0;
            for (row, keep) in mask.iter().enumerate() {
                if *keep == 1 {
                    let r = row * hidden..(row + 1) * hidden;
                    assert_eq!(fa[r.clone()], fb[r], "{model}: row {row}");
                    real += 1;
                }
            }
            assert_eq!(real, mask.iter().filter(|k| **k == 1).count());
            assert!(real < mask.len(), "the batch has padding");
        }
    }
}

/// A whole model over two devices: every cut carries the attention mask next to the hidden
/// state, so the system's RTL runs bit-exact under stalls and its outputs equal the single
/// device's (golden model) on the same inputs.
#[test]
fn the_mask_crosses_every_device_boundary_and_the_system_equals_one_device() {
    let model = "bert_model_ts_static";
    let one_dir = tempfile::tempdir().unwrap();
    let one = flow(model, one_dir.path());
    let memory = one.emitted.report.memory_bits;
    let devices = format!(
        "{CONFIG}\n[[hardware.devices]]\nname = \"a\"\nmultipliers = 256\nmemory_bits = {}\nlink_bits_per_cycle = 32\nlink_latency_cycles = 20\n\n[[hardware.devices]]\nname = \"b\"\nmultipliers = 256\nmemory_bits = {}\n",
        memory * 6 / 10,
        memory * 6 / 10
    );
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(hf(&format!("{model}.onnx"))).unwrap();
    let mut opts = FlowOptions::new(model, dir.path());
    opts.config = FlowConfig::from_table(&devices.parse().unwrap(), model, None).unwrap();
    opts.calibration = Some(vec![batch("batch.input_ids.npy").into_iter().collect()]);
    let f = run_flow(&bytes, &opts).unwrap();
    let sys = f.system.as_ref().expect("two devices");
    // The keep mask [B, 1, 1, S] (the token types are 1-bit too, but [B, S]).
    let mask = &sys
        .design
        .ports
        .iter()
        .find(|p| p.format.width == 1 && p.shape.len() == 4)
        .expect("a 1-bit mask port")
        .tensor;
    assert!(sys.links.len() >= 2, "{} links", sys.links.len());
    for b in 0..sys.used_devices() - 1 {
        assert!(
            sys.links_after(b).iter().any(|l| &l.tensor == mask),
            "the mask `{mask}` crosses boundary {b}: {:?}",
            sys.links_after(b).iter().map(|l| &l.tensor).collect::<Vec<_>>()
        );
    }
    let p = load_project(dir.path()).unwrap();
    let pre = p.host.as_ref().unwrap().run_pre(&batch("batch.input_ids.npy")).unwrap();
    let cfg = RunConfig { seed: 5, stall_prob: 0.25, ..RunConfig::default() };
    let (run, _) = check_project(&p, &[device_inputs(&p, &pre)], &cfg).unwrap();
    assert!(run.report.bit_exact, "{} mismatches", run.report.mismatches);
    let single = load_project(one_dir.path()).unwrap();
    let codes = mase_sim::quantize_samples(&single, &[device_inputs(&single, &pre)]).unwrap();
    assert_eq!(run.outputs, mase_emit::golden::run(&single.design, &codes).unwrap());
}

/// With a table budget below the word table's bits, the word lookup runs on the host and its
/// rows stream into the device next to the token types (whose table still fits); the model
/// still matches onnxruntime (golden model of the device).
#[test]
fn a_word_table_beyond_the_budget_is_looked_up_on_the_host() {
    let model = "bert_cls_ts_static";
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(hf(&format!("{model}.onnx"))).unwrap();
    let mut opts = FlowOptions::new(model, dir.path());
    let config = format!("{CONFIG}[hardware]\ntable_budget_bits = 100000\n");
    opts.config = FlowConfig::from_table(&config.parse().unwrap(), model, None).unwrap();
    opts.calibration = Some(vec![batch("batch.input_ids.npy").into_iter().collect()]);
    let f = run_flow(&bytes, &opts).unwrap();
    assert!(f.design.ports.iter().all(|p| p.tensor != "input_ids"), "the word lookup is on the host");
    assert!(f.design.ports.iter().any(|p| p.tensor == "token_type_ids"));
    let tables = &f.emitted.report.lookup_tables;
    assert_eq!(tables.iter().map(|t| t.rows).collect::<Vec<_>>(), [2], "{tables:?}");
    let p = load_project(dir.path()).unwrap();
    let m = golden_model(&p, &batch("batch.input_ids.npy"));
    let ort = npy(&format!("{model}.out.logits.npy"));
    let c = cosine(&m.hardware[0][0], &ort);
    assert!(c >= 0.999, "logits cosine {c} against onnxruntime");
    assert_eq!(argmax_rows(&m.hardware[0][0]), argmax_rows(&ort));
}

/// A weight-only int8 export (each weight an INT8 initializer cast to float and scaled per
/// output channel): every linear binds `qlinear`, whose weight memory holds the model's own
/// codes, read back from the emitted `.mem` files; the device is bit-exact under stalls and the
/// logits keep a cosine of 0.999 against onnxruntime's execution of the same int8 model.
#[test]
fn a_weight_only_int8_export_keeps_its_codes_in_the_weight_memories() {
    let model = "bert_cls_w8_ts_static";
    let dir = tempfile::tempdir().unwrap();
    let f = flow_file(&weight_only(&format!("{model}.onnx")), model, dir.path());
    let p = load_project(dir.path()).unwrap();
    let qlinears: Vec<_> = p.design.instances.iter().filter(|i| i.component == "qlinear").collect();
    let mut files: Vec<_> = std::fs::read_dir(weight_only(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(&format!("{model}.codes.")))
        .collect();
    files.sort();
    assert_eq!(files.len(), 14, "the export script writes one codes file per linear: {files:?}");
    assert_eq!(qlinears.len(), files.len(), "one qlinear per int8 linear");
    // Each model weight, laid out as the component lays out its weight memory, is the text of
    // exactly one instance's weight .mem file.
    let mut matched = std::collections::BTreeSet::new();
    for file in &files {
        let codes: Vec<i64> =
            mase_ir::npy::read_npy(weight_only(file)).unwrap().to_i64().iter().copied().collect();
        let hits: Vec<_> = qlinears
            .iter()
            .filter(|inst| {
                let c = inst.component();
                let Some(mem) = c.memories(&inst.params).into_iter().find(|m| m.name == "weight") else {
                    return false;
                };
                let Ok(words) = c.layout_memory(&inst.params, "weight", &codes) else { return false };
                let path = dir.path().join("mem").join(mase_emit::sv::mem_file_name(inst, "weight"));
                std::fs::read_to_string(path).unwrap() == mase_hwlib::mem_file_text(&words, mem.lane_width)
            })
            .collect();
        let names: Vec<&str> = hits.iter().map(|inst| inst.name.as_str()).collect();
        assert_eq!(hits.len(), 1, "{file}: weight memories holding its codes: {names:?}");
        let inst = hits[0];
        assert!(matched.insert(&inst.name), "{file}: {} holds two weights' codes", inst.name);
        assert_eq!(inst.params["WEIGHT_PRECISION_0"], 8, "{}: 8-bit weight lanes", inst.name);
    }
    assert!(f.host.is_some());
    let host = p.host.as_ref().unwrap();
    let pre = host.run_pre(&batch("batch.input_ids.npy")).unwrap();
    let cfg = RunConfig { seed: 5, stall_prob: 0.3, ..RunConfig::default() };
    let (run, _) = check_project(&p, &[device_inputs(&p, &pre)], &cfg).unwrap();
    let r = &run.report;
    assert!(r.bit_exact, "{} mismatches, first {:?}", r.mismatches, r.first_mismatches);
    let m = model_outputs(host, &p.graph, &[pre], &device_outputs_named(&p, &run.outputs).unwrap()).unwrap();
    let ort = mase_ir::npy::read_npy(weight_only(&format!("{model}.out.logits.npy"))).unwrap();
    let c = cosine(&m.hardware[0][0], &ort);
    assert!(c >= 0.999, "logits cosine {c} against onnxruntime's int8 model");
    assert_eq!(argmax_rows(&m.hardware[0][0]), argmax_rows(&ort));
}
