//! Per-op activation widths for `auto_precision` (`[passes.auto_precision.ops.<op>] width = W`
//! in a flow configuration, and the `[sweep.ops]` axes of mase-sweep): every node of a mase op
//! takes the formats the `auto_precision` plan at that op's width gives it (its data inputs and
//! output; weights keep `weight_width`), every other node the plan at the base width. Casts
//! between differing formats are the stitcher's, as for any format change at a node boundary.

use std::collections::{BTreeMap, HashMap};

use mase_ir::pass::PassInfo;
use mase_ir::quant::auto::{auto_plan, describe_plan, AutoOptions};
use mase_ir::{Error, MaseGraph, Result};

/// Quantizes a graph with calibration statistics: `auto_precision` with `opts`, except that the
/// nodes of each op in `ops` (mase op name → activation width) take that width. Without `ops`
/// this is exactly the `auto_precision` pass. An op that no node has is an error listing the
/// graph's ops.
pub fn auto_precision_ops(
    graph: MaseGraph,
    opts: &AutoOptions,
    ops: &BTreeMap<String, u32>,
) -> Result<(MaseGraph, PassInfo)> {
    if ops.is_empty() {
        return mase_ir::passes::auto_precision::auto_precision(graph, opts);
    }
    let present: std::collections::BTreeSet<&str> = graph.nodes().map(|(_, n)| n.op.mase_op()).collect();
    if let Some(op) = ops.keys().find(|o| !present.contains(o.as_str())) {
        return Err(Error::Config(format!(
            "auto_precision ops.{op}: no node of op `{op}` in the graph (its ops: {})",
            present.iter().copied().collect::<Vec<_>>().join(", ")
        )));
    }
    let mut plan = auto_plan(&graph, opts)?;
    let mut by_width: HashMap<u32, mase_ir::quant::Plan> = HashMap::new();
    for (op, &w) in ops {
        if let std::collections::hash_map::Entry::Vacant(e) = by_width.entry(w) {
            e.insert(auto_plan(&graph, &AutoOptions { width: w, ..*opts })?);
        }
        for (id, f) in &by_width[&w] {
            if graph.node(*id).op.mase_op() == op {
                plan.insert(*id, f.clone());
            }
        }
    }
    let precision = describe_plan(&graph, &plan);
    let (graph, report) = mase_ir::quant::apply_plan(graph, &plan, "auto_precision")?;
    let mut info = PassInfo::new();
    info.insert("width".into(), opts.width.into());
    info.insert("weight_width".into(), opts.weight_width.into());
    info.insert("bias_width".into(), opts.bias_width.into());
    info.insert("range".into(), opts.range.name().into());
    info.insert("ops".into(), serde_json::to_value(ops).unwrap_or_default());
    info.insert("precision".into(), precision.into());
    report.write_info(&mut info);
    Ok((graph, info))
}
