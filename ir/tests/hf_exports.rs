//! Whole Hugging Face models as the exporters write them (`tests/fixtures/hf/`, written by
//! `scripts/export_hf.py` with torch's TorchScript and dynamo exporters, static and dynamic
//! axes): import with shape folding and raising, the float interpreter against onnxruntime's
//! outputs on a padded batch, padding independence, import without folding, and quantized
//! execution at 16-bit activations and 8-bit per-channel weights.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use mase_ir::interp::run_outputs;
use mase_ir::npy::read_npy;
use mase_ir::onnx::{import_file, ImportOptions};
use mase_ir::quant::{accuracy, run_quantized_counted, SaturationCounter};
use mase_ir::{MaseGraph, Op, Tensor};

const INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];

fn hf() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hf")
}

/// Every exported model and the name of its output.
fn models() -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for (kind, out) in [("bert_model", "last_hidden_state"), ("bert_cls", "logits")] {
        for exporter in ["ts", "dynamo"] {
            for axes in ["static", "dynamic"] {
                v.push((format!("{kind}_{exporter}_{axes}"), out));
            }
        }
    }
    v
}

fn import(name: &str, fold: bool) -> MaseGraph {
    let shapes: BTreeMap<String, Vec<usize>> = INPUTS.iter().map(|i| (i.to_string(), vec![3, 16])).collect();
    let opts = ImportOptions { input_shapes: shapes, fold, ..Default::default() };
    import_file(&hf().join(format!("{name}.onnx")), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The batch's inputs (`batch` or `batch_repad`, which differs only in the ids at padding).
fn batch(set: &str) -> HashMap<String, Tensor> {
    INPUTS
        .iter()
        .map(|i| {
            let file = if *i == "input_ids" { format!("{set}.{i}.npy") } else { format!("batch.{i}.npy") };
            (i.to_string(), read_npy(hf().join(file)).unwrap())
        })
        .collect()
}

fn f32s(t: &Tensor) -> Vec<f32> {
    t.as_f32().expect("a float output").iter().copied().collect()
}

/// max |got − want| / max |want|.
fn rel_err(got: &[f32], want: &[f32]) -> f64 {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(0f64, |m, &w| m.max(f64::from(w).abs()));
    let err = got.iter().zip(want).fold(0f64, |m, (&g, &w)| m.max((f64::from(g) - f64::from(w)).abs()));
    err / scale
}

#[test]
fn every_export_matches_onnxruntime_on_a_padded_batch() {
    for (name, out) in models() {
        let g = import(&name, true);
        let got = run_outputs(&g, &batch("batch")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = read_npy(hf().join(format!("{name}.out.{out}.npy"))).unwrap();
        assert_eq!(got[0].shape(), want.shape(), "{name}");
        let e = rel_err(&f32s(&got[0]), &f32s(&want));
        assert!(e <= 1e-5, "{name}: relative error {e:e} against onnxruntime");
    }
}

#[test]
fn folded_graphs_hold_only_the_models_computation_raised_to_mase_ops() {
    for (name, _) in models() {
        let g = import(&name, true);
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, n) in g.nodes() {
            *count.entry(n.op.mase_op()).or_default() += 1;
            // Nothing computed from constants only survives folding.
            let inputs_const =
                !n.inputs.is_empty() && n.inputs.iter().all(|i| matches!(g.node(*i).op, Op::Constant { .. }));
            assert!(
                !inputs_const,
                "{name}: node '{}' ({}) computes on constants only",
                n.name,
                n.op.mase_op()
            );
            assert!(
                !matches!(n.op, Op::Shape { .. } | Op::Range | Op::ConstantOfShape { .. }),
                "{name}: '{}' ({}) is left after folding",
                n.name,
                n.op.mase_op()
            );
        }
        let heads = if name.starts_with("bert_cls") { 2 } else { 0 };
        // Two layers of q, k, v, output, FFN in and out projections, plus pooler and classifier.
        assert_eq!(count.get("linear"), Some(&(12 + heads)), "{name}: {count:?}");
        assert_eq!(count.get("layer_norm"), Some(&5), "{name}: {count:?}");
        assert_eq!(count.get("softmax"), Some(&2), "{name}: {count:?}");
        assert_eq!(count.get("gelu"), Some(&2), "{name}: {count:?}");
        assert_eq!(count.get("matmul"), Some(&4), "{name}: {count:?}");
        assert!(count.get("embedding").is_some_and(|&e| e >= 2), "{name}: {count:?}");
        assert!(!count.contains_key("erf") && !count.contains_key("div"), "{name}: {count:?}");
        // The additive attention mask became every softmax's boolean input, one value per key
        // position of each sentence.
        for (_, n) in g.nodes().filter(|(_, n)| matches!(n.op, Op::Softmax { .. })) {
            let [_, keep] = n.inputs.as_slice() else { panic!("{name}: softmax '{}' has no mask", n.name) };
            assert_eq!(g.node(*keep).out_shape(), Some(&[3, 1, 1, 16][..]), "{name}: mask of '{}'", n.name);
        }
        assert!(!count.contains_key("where"), "{name}: the additive mask is left: {count:?}");
    }
}

#[test]
fn tokens_at_padded_positions_change_no_output_at_real_positions() {
    let mask = read_npy(hf().join("batch.attention_mask.npy")).unwrap().to_i64();
    for (name, _) in models() {
        let g = import(&name, true);
        let a = run_outputs(&g, &batch("batch")).unwrap();
        let b = run_outputs(&g, &batch("batch_repad")).unwrap();
        let (a, b) = (a[0].as_f32().unwrap(), b[0].as_f32().unwrap());
        if a.ndim() == 3 {
            let mut changed_at_padding = false;
            for (i, &x) in a.indexed_iter() {
                let (s, t, y) = (i[0], i[1], b[&i]);
                if mask[[s, t]] == 1 {
                    assert_eq!(x.to_bits(), y.to_bits(), "{name}: sentence {s} position {t} changed");
                } else {
                    changed_at_padding |= x != y;
                }
            }
            assert!(
                changed_at_padding,
                "{name}: the repadded ids changed nothing, so the test tests nothing"
            );
        } else {
            assert_eq!(a, b, "{name}: logits depend on the ids at padded positions");
        }
    }
}

#[test]
fn import_without_folding_keeps_the_shape_graph_and_computes_the_same() {
    for name in ["bert_model_ts_dynamic", "bert_cls_dynamo_dynamic"] {
        let folded = import(name, true);
        let whole = import(name, false);
        assert!(
            whole.len() > folded.len(),
            "{name}: {} nodes unfolded, {} folded",
            whole.len(),
            folded.len()
        );
        let kept = whole.nodes().filter(|(_, n)| matches!(n.op, Op::Shape { .. } | Op::Range)).count();
        assert!(kept > 0, "{name}: no Shape or Range node kept without folding");
        let inputs = batch("batch");
        let a = run_outputs(&folded, &inputs).unwrap();
        let b = run_outputs(&whole, &inputs).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn inputs_of_the_wrong_type_or_shape_are_errors_naming_the_input() {
    let g = import("bert_model_ts_static", true);
    let mut inputs = batch("batch");
    let ids = inputs["input_ids"].clone();
    inputs.insert("input_ids".into(), Tensor::F32(ids.to_f32()));
    let e = run_outputs(&g, &inputs).unwrap_err().to_string();
    assert!(e.contains("input_ids") && e.contains("float32") && e.contains("int64"), "{e}");
    inputs.insert("input_ids".into(), Tensor::from_i64(&[3, 8], vec![1; 24]).unwrap());
    let e = run_outputs(&g, &inputs).unwrap_err().to_string();
    assert!(e.contains("input_ids") && e.contains("[3, 8]") && e.contains("[3, 16]"), "{e}");
}

/// Calibrates `g` on the batch, quantizes it at 16-bit activations and 8-bit per-channel
/// weights, and returns the float-vs-quantized report and the saturation report.
fn quantize_and_compare(
    g: MaseGraph,
) -> (MaseGraph, mase_ir::quant::AccuracyReport, mase_ir::quant::SaturationReport) {
    let (g, _) = mase_ir::pass::run_passes(g, &["add_common_metadata"], &toml::Table::new()).unwrap();
    let inputs = batch("batch");
    let g = mase_ir::passes::add_software_metadata::software_stats(
        g,
        std::slice::from_ref(&inputs),
        &Default::default(),
    )
    .unwrap();
    let args: toml::Table = toml::from_str(
        "[auto_precision]\nwidth = 16\nweight_width = 8\nweight_granularity = \"per_channel\"",
    )
    .unwrap();
    let (q, _) = mase_ir::pass::run_passes(g, &["auto_precision"], &args).unwrap();
    let float = run_outputs(&q, &inputs).unwrap();
    let mut sat = SaturationCounter::new();
    let quant = run_quantized_counted(&q, &inputs, &mut sat).unwrap();
    let r = accuracy(&float, &quant, None).unwrap();
    (q, r, sat.report())
}

#[test]
fn quantized_whole_models_stay_close_to_float() {
    for name in ["bert_model_ts_static", "bert_cls_dynamo_dynamic"] {
        let (q, r, report) = quantize_and_compare(import(name, true));
        // The token-id tables are weights with formats like any other; integer tensors have none.
        let emb = q.nodes().find(|(_, n)| matches!(n.op, Op::Embedding { .. })).map(|(_, n)| n).unwrap();
        let Op::Embedding { table } = &emb.op else { unreachable!() };
        assert_eq!(q.qweights[table].format.width, 8, "{name}: embedding table");
        let ids = q.nodes().find(|(_, n)| n.name == "input_ids").map(|(_, n)| n).unwrap();
        assert!(!ids.meta.common.results["data_out_0"].ty.is_real(), "{name}: input_ids got a format");
        assert!(r.cosine >= 0.999, "{name}: cosine {}", r.cosine);
        // Raised into the softmax, the mask is no operand of any cast.
        assert!(report.mask.is_none(), "{name}: {:?}", report.mask);
    }
}

#[test]
fn an_additive_mask_left_in_the_graph_saturates_and_is_reported_once() {
    let (_, r, report) = quantize_and_compare(import_raw("bert_model_ts_static"));
    assert!(r.cosine >= 0.999, "cosine {}", r.cosine);
    let mask = report.mask.as_deref().expect("a mask line");
    assert!(mask.contains("additive attention mask"), "{mask}");
    assert!(report.lines().iter().any(|l| l.starts_with("mask: ")), "{:?}", report.lines());
    assert!(
        report.warnings.iter().all(|w| !w.contains("attention_self_Add'")),
        "the mask's saturation is warned about: {:?}",
        report.warnings
    );
}

/// The model imported without the raising passes (the mask stays an additive operand).
fn import_raw(name: &str) -> MaseGraph {
    let shapes: BTreeMap<String, Vec<usize>> = INPUTS.iter().map(|i| (i.to_string(), vec![3, 16])).collect();
    let opts = ImportOptions { input_shapes: shapes, raise: false, ..Default::default() };
    import_file(&hf().join(format!("{name}.onnx")), &opts).unwrap()
}

#[test]
fn dynamic_exports_fold_at_other_shapes_and_give_the_same_sentences() {
    // Sentence 1 is 11 tokens long: alone at sequence 11 (no padding) it must give what the
    // padded batch gave for it (its logits; its hidden states at its real positions).
    let full = batch("batch");
    for (name, out) in models().into_iter().filter(|(n, _)| n.ends_with("dynamic")) {
        let shapes: BTreeMap<String, Vec<usize>> =
            INPUTS.iter().map(|i| (i.to_string(), vec![1, 11])).collect();
        let opts = ImportOptions { input_shapes: shapes, ..Default::default() };
        let g =
            import_file(&hf().join(format!("{name}.onnx")), &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let one: HashMap<String, Tensor> = full
            .iter()
            .map(|(k, t)| {
                let a = t.as_i64().unwrap().slice(ndarray::s![1..2, 0..11]).to_owned().into_dyn();
                (k.clone(), Tensor::I64(a))
            })
            .collect();
        let got = run_outputs(&g, &one).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = read_npy(hf().join(format!("{name}.out.{out}.npy"))).unwrap();
        let want = want.as_f32().unwrap();
        let want: Vec<f32> = if want.ndim() == 3 {
            want.slice(ndarray::s![1, 0..11, ..]).iter().copied().collect()
        } else {
            want.slice(ndarray::s![1, ..]).iter().copied().collect()
        };
        let e = rel_err(&f32s(&got[0]), &want);
        assert!(e <= 1e-5, "{name}: sentence 1 alone differs by {e:e} (relative) from the padded batch");
    }
}
