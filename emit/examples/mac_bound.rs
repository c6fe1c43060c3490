//! How close the parallelism search gets to the MAC bound: for an ONNX model and a list of
//! multiplier budgets, the design's ii against `total MACs / multipliers used` (the ii a design
//! would have if every multiplier did one useful MAC per cycle).
//!
//! `cargo run --release -p mase-emit --example mac_bound -- MODEL.onnx [BUDGET ...]`
//! (budgets default to 64 128 256 512 1024). Total MACs are counted from the quantized graph's
//! `linear` and `matmul` nodes (output elements × the reduced axis); the flow runs with its
//! default configuration (seeded calibration) and `multiplier_budget = BUDGET`. A whole model
//! (token ids in) is cut as the flow cuts it, and only its device region is counted and built.

use std::process::ExitCode;

use mase_emit::flow::{quantized_graph, FlowOptions};
use mase_emit::report::report;
use mase_emit::HwConfig;
use mase_hwlib::NodeView;
use mase_ir::{MaseGraph, Op, Result};

/// Multiply-accumulates of one inference: every linear and matmul contributes its output
/// elements times the length of the axis it reduces (the last axis of its first input).
fn total_macs(g: &MaseGraph) -> Result<u64> {
    let mut macs = 0u64;
    for id in g.ids() {
        let node = g.node(id);
        if !matches!(node.op, Op::Linear { .. } | Op::Matmul) {
            continue;
        }
        let k = NodeView::new(g, node).in_shape(0)?.last().copied().unwrap_or(1) as u64;
        let out: usize = node.out_shape().ok_or_else(|| node.error("has no output shape"))?.iter().product();
        macs += out as u64 * k;
    }
    Ok(macs)
}

/// One row of the table: budget, multipliers used, ii, bound and the non-MAC multipliers.
fn row(q: &MaseGraph, macs: u64, budget: u64) -> Result<String> {
    let cfg = HwConfig { multiplier_budget: Some(budget), ..HwConfig::default() };
    let (g, _) = mase_emit::add_hardware_metadata(q.clone(), &cfg)?;
    let r = report(&mase_emit::design_of(&g, cfg.top_name())?);
    let non_mac: u64 = r
        .instances
        .iter()
        .filter(|i| i.component != "linear" && i.component != "matmul")
        .map(|i| i.multipliers)
        .sum();
    let folded: Vec<String> = r
        .instances
        .iter()
        .filter(|i| i.params.get("FOLD").is_some_and(|&f| f > 1))
        .map(|i| format!("{}:P{}F{}", i.component, i.params["DATA_IN_0_PARALLELISM_DIM_0"], i.params["FOLD"]))
        .collect();
    let bound = macs as f64 / r.multipliers.max(1) as f64;
    Ok(format!(
        "| {budget} | {} | {non_mac} | {} | {:.0} | {:.3} | {} |",
        r.multipliers,
        r.ii_cycles,
        bound,
        r.ii_cycles as f64 / bound,
        if folded.is_empty() { "-".to_string() } else { folded.join(" ") }
    ))
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(model) = args.first() else {
        return Err(mase_ir::Error::Config(
            "usage: mac_bound MODEL.onnx [BUDGET ...] (budgets default to 64 128 256 512 1024)".into(),
        ));
    };
    let mut budgets = Vec::new();
    for b in &args[1..] {
        budgets.push(
            b.parse::<u64>()
                .map_err(|_| mase_ir::Error::Config(format!("budget `{b}` is not a positive integer")))?,
        );
    }
    if budgets.is_empty() {
        budgets = vec![64, 128, 256, 512, 1024];
    }
    let bytes =
        std::fs::read(model).map_err(|e| mase_ir::Error::Config(format!("cannot read {model}: {e}")))?;
    let (_, q, _, _) = quantized_graph(&bytes, &FlowOptions::new(model.as_str(), "unused"))?;
    // A whole model's device region (what the flow builds); other graphs are all device.
    let (q, host) = mase_emit::host_project::cut(q, &HwConfig::default())?;
    let macs = total_macs(&q)?;
    let region = if host.is_some() { " (device region)" } else { "" };
    println!("model {model}: {macs} MACs per inference{region}");
    println!("| budget | multipliers | non-MAC mults | ii | MACs/mults | ii/bound | folded |");
    println!("|---|---|---|---|---|---|---|");
    for b in budgets {
        println!("{}", row(&q, macs, b)?);
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mac_bound: {e}");
            ExitCode::FAILURE
        }
    }
}
