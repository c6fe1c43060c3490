//! Parallelism choice on the encoder-layer fixture: targets are met with the fewest multipliers,
//! budgets are respected, the default lets the slowest stage set the pace, bad settings are
//! errors that say what is valid.

use mase_emit::design::InstKind;
use mase_emit::flow::quantized_graph;
use mase_emit::{add_hardware_metadata, design_of, HwConfig};
use mase_ir::MaseGraph;

fn encoder() -> MaseGraph {
    let bytes =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/encoder_layer.onnx")).unwrap();
    quantized_graph(&bytes, &mase_emit::flow::FlowOptions::new("encoder_layer.onnx", "")).unwrap().1
}

fn cfg(text: &str) -> HwConfig {
    HwConfig::from_toml(text, "test").unwrap()
}

/// (cycles per inference of the slowest node instance, total multipliers of node instances)
fn figures(g: &MaseGraph, c: &HwConfig) -> (u64, u64) {
    let (g, _) = add_hardware_metadata(g.clone(), c).unwrap();
    let d = design_of(&g, "top").unwrap();
    let nodes = d.instances.iter().filter(|i| i.kind == InstKind::Node);
    let ii = nodes.clone().map(|i| i.cycles_per_inference()).max().unwrap();
    let mults = nodes.map(|i| i.component().cost(&i.params).multipliers).sum();
    (ii, mults)
}

#[test]
fn targets_budgets_and_the_default() {
    let g = encoder();
    let (ii_default, m_default) = figures(&g, &cfg(""));
    // Default: the FFN linears at 4×4 lanes set the pace; everything else keeps up.
    assert_eq!(ii_default, 8 * 128 * 512 / 16);
    for target in [4096, 16384, 65536] {
        let (ii, m) = figures(&g, &cfg(&format!("target_ii = {target}")));
        assert!(ii <= target, "target {target}: slowest stage takes {ii}");
        let (ii_row, m_row) = figures(&g, &cfg(&format!("target_ii_per_row = {}", target / 8)));
        assert_eq!((ii, m), (ii_row, m_row), "8 rows per inference");
        // A looser target never needs more multipliers.
        if target > ii_default {
            assert!(m <= m_default);
        }
    }
    for budget in [40, 77, 300] {
        let (ii, m) = figures(&g, &cfg(&format!("multiplier_budget = {budget}")));
        assert!(m <= budget, "budget {budget}: {m} multipliers");
        // One multiplier fewer would not reach this rate: the search is tight.
        let (_, m_faster) = figures(&g, &cfg(&format!("target_ii = {}", ii - 1)));
        assert!(
            m_faster > budget || ii == 1,
            "budget {budget}: ii {ii}, a faster design fits with {m_faster}"
        );
    }
}

#[test]
fn bad_settings_are_explained() {
    let g = encoder();
    let e =
        add_hardware_metadata(g.clone(), &cfg("[nodes.attention_self_query_linear]\nparallelism = [3, 4]"))
            .unwrap_err();
    assert!(e.to_string().contains("valid:"), "{e}");
    let e = add_hardware_metadata(g.clone(), &cfg("[nodes.no_such_node]\nparallelism = [4]")).unwrap_err();
    assert!(e.to_string().contains("no node of that name"), "{e}");
    let e = add_hardware_metadata(g, &cfg("multiplier_budget = 1")).unwrap_err();
    assert!(e.to_string().contains("multiplier_budget = 1"), "{e}");
    assert!(HwConfig::from_toml("target_ii = 5\nmultiplier_budget = 9", "t").is_err());
    assert!(HwConfig::from_toml("targetii = 5", "t").unwrap_err().to_string().contains("target_ii"));
}

/// `FOLD` of every instance of `component` in the design `c` gives.
fn folds(g: &MaseGraph, c: &HwConfig, component: &str) -> Vec<i64> {
    let (g, _) = add_hardware_metadata(g.clone(), c).unwrap();
    let d = design_of(&g, "top").unwrap();
    d.instances.iter().filter(|i| i.component == component).map(|i| i.params["FOLD"]).collect()
}

#[test]
fn folded_forms_trade_slack_for_multipliers_and_can_be_fixed() {
    let g = encoder();
    // A target only the full-rate form meets keeps the layer norms at FOLD = 1: 8 rows of 128
    // in 16 cycles needs 64 lanes at full rate; folded, even 128 lanes take 8·3 = 24 cycles.
    let fast = folds(&g, &cfg("target_ii = 16"), "layer_norm");
    assert!(fast.iter().all(|&f| f == 1), "layer_norm folds at target 16: {fast:?}");
    // A small budget: the layer norms and the softmax do no MACs and have slack, so they fold.
    let small = cfg("multiplier_budget = 40");
    let (ln, sm) = (folds(&g, &small, "layer_norm"), folds(&g, &small, "softmax"));
    assert!(!ln.is_empty() && ln.iter().all(|&f| f > 1), "layer_norm folds {ln:?}");
    assert!(!sm.is_empty() && sm.iter().all(|&f| f == 2), "softmax folds {sm:?}");
    // `fold` fixes a node's form, alone or with `parallelism`.
    let name = "attention_output_LayerNorm_LayerNormalization";
    let (g1, _) = add_hardware_metadata(
        g.clone(),
        &cfg(&format!("multiplier_budget = 40\n[nodes.{name}]\nfold = 1\nparallelism = [2]")),
    )
    .unwrap();
    let d = design_of(&g1, "top").unwrap();
    let inst = d.instances.iter().find(|i| i.node == name && i.kind == InstKind::Node).unwrap();
    assert_eq!((inst.params["FOLD"], inst.params["DATA_IN_0_PARALLELISM_DIM_0"]), (1, 2));
    // A fold the component does not offer is explained with the ones it does.
    let e = add_hardware_metadata(g, &cfg(&format!("[nodes.{name}]\nfold = 2"))).unwrap_err();
    assert!(e.to_string().contains("fold = 2 is not offered") && e.to_string().contains("[1, 3, 4]"), "{e}");
}
