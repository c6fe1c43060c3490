//! Per-node format plans and applying them to a graph: the code the `quantize` and
//! `auto_precision` passes share.
//!
//! A [`Plan`] gives, for the nodes it names, the formats of their data inputs, weight, bias and
//! result. [`apply_plan`] records them in `common` metadata, quantizes the weights and biases of
//! those nodes into [`MaseGraph::qweights`], and then gives formats to the nodes around them:
//!
//! - a **placeholder** or **constant** not in the plan takes the `data_in` format of the first
//!   planned node that reads it (looking through implicit nodes such as reshape); a constant's
//!   tensor is then quantized into it;
//! - an **implicit** node (reshape, transpose, flatten, squeeze, unsqueeze, slice, gather,
//!   identity, dropout, and concat when all its inputs agree) and the **output** node carry the
//!   format of their producer;
//! - every other node stays as it is (float) and is listed as untouched.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::fixed::{FixedFormat, Overflow};
use crate::graph::{MaseGraph, NodeId};
use crate::metadata::MaseType;
use crate::op::Op;
use crate::pass::PassInfo;
use crate::tensor::{QuantTensor, Tensor};

use super::channel::{quantize_per_channel, Granularity};
use super::{format_of, quantize_f32, set_format};

/// Formats of one node (`None` = leave that tensor as it is).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeFormats {
    /// One entry per data input, in order.
    pub data_in: Vec<Option<FixedFormat>>,
    /// Format of the `weight` tensor (linear, layer_norm).
    pub weight: Option<FixedFormat>,
    /// Whether a linear's weight gets one fraction width per output channel (its `frac` is then
    /// chosen per channel, see [`super::channel`]).
    pub weight_granularity: Granularity,
    /// Format of the `bias` tensor.
    pub bias: Option<FixedFormat>,
    /// Format of the result.
    pub data_out: Option<FixedFormat>,
}

/// Formats by node.
pub type Plan = BTreeMap<NodeId, NodeFormats>;

/// What [`apply_plan`] did, for the pass info map.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApplyReport {
    /// Nodes whose formats came from the plan.
    pub quantized: Vec<String>,
    /// Placeholders, constants, implicit nodes and the output, which took a neighbour's format.
    pub carried: Vec<String>,
    /// Nodes left in float.
    pub untouched: Vec<String>,
    /// Weight/bias/constant tensors quantized: key → format.
    pub tensors: BTreeMap<String, FixedFormat>,
    /// Values that did not fit, by tensor key: (overflow mode, count, total).
    pub overflows: BTreeMap<String, (Overflow, usize, usize)>,
    /// Human-readable warnings (wrapped weights, unusual situations).
    pub warnings: Vec<String>,
    /// Weight-only linears, which keep the model's own weight codes (not requantized).
    pub weight_only: Vec<String>,
}

impl ApplyReport {
    /// Writes the report into a pass info map: `quantized`, `carried`, `untouched` and, when
    /// there are any, `weight_only` (node names), `tensors` (key → `[width, frac]`), `clipped`
    /// and `wrapped` (key → count of values that saturated/zeroed or wrapped), `warnings`.
    pub fn write_info(&self, info: &mut PassInfo) {
        let names = |v: &Vec<String>| serde_json::Value::from(v.clone());
        info.insert("quantized".into(), names(&self.quantized));
        info.insert("carried".into(), names(&self.carried));
        info.insert("untouched".into(), names(&self.untouched));
        if !self.weight_only.is_empty() {
            info.insert("weight_only".into(), names(&self.weight_only));
        }
        let tensors: serde_json::Map<String, serde_json::Value> =
            self.tensors.iter().map(|(k, f)| (k.clone(), serde_json::json!([f.width, f.frac]))).collect();
        info.insert("tensors".into(), tensors.into());
        let mut clipped = serde_json::Map::new();
        let mut wrapped = serde_json::Map::new();
        for (k, (mode, n, _)) in &self.overflows {
            let m = if *mode == Overflow::Wrap { &mut wrapped } else { &mut clipped };
            m.insert(k.clone(), (*n).into());
        }
        info.insert("clipped".into(), clipped.into());
        info.insert("wrapped".into(), wrapped.into());
        let mut w = self.warnings.clone();
        if let Some(serde_json::Value::Array(old)) = info.get("warnings") {
            let mut all: Vec<String> = old.iter().filter_map(|v| v.as_str().map(str::to_string)).collect();
            all.append(&mut w);
            w = all;
        }
        info.insert("warnings".into(), w.into());
    }
}

/// Fails unless `add_common_metadata` has run (every node records its result, every input an
/// argument).
pub fn require_common_metadata(graph: &MaseGraph, pass: &str) -> Result<()> {
    for (_, n) in graph.nodes() {
        let missing_in =
            (0..n.inputs.len()).any(|k| !n.meta.common.args.contains_key(&format!("data_in_{k}")));
        if n.meta.common.results.get("data_out_0").is_none() || missing_in {
            return Err(n.error(format!(
                "{pass} needs the shapes of common metadata, which this node does not have: run \
                 add_common_metadata first"
            )));
        }
    }
    Ok(())
}

/// True for ops that only move or select elements (no arithmetic): they carry their
/// producer's format (for `where`, that of its two value inputs; index and condition inputs
/// are integers and booleans, which have none).
/// `exec::exact` moves their codes exactly.
pub fn is_carrier(op: &Op) -> bool {
    matches!(
        op,
        Op::Reshape { .. }
            | Op::Transpose { .. }
            | Op::Flatten { .. }
            | Op::Squeeze { .. }
            | Op::Unsqueeze { .. }
            | Op::Slice { .. }
            | Op::Gather { .. }
            | Op::GatherNd { .. }
            | Op::Expand { .. }
            | Op::Where
            | Op::Identity
            | Op::Dropout { .. }
            | Op::Concat { .. }
    )
}

/// True for nodes whose result is a float tensor (not shapes or indices).
pub fn has_float_result(graph: &MaseGraph, id: NodeId) -> bool {
    graph.node(id).meta.common.results.get("data_out_0").is_some_and(|r| r.ty.is_real())
}

/// Quantizes the tensor `key` into `fmt`, stores it in `qweights` and counts overflows.
fn quantize_weight(
    graph: &mut MaseGraph,
    node: &str,
    key: &str,
    fmt: &FixedFormat,
    per_channel: bool,
    report: &mut ApplyReport,
) -> Result<()> {
    let t = graph.weights.get(key).ok_or_else(|| {
        crate::Error::Invalid(format!("node '{node}': tensor '{key}' is missing from the weights"))
    })?;
    let Tensor::F32(a) = t else { return Ok(()) };
    let (qt, overflowed) = if per_channel {
        quantize_per_channel(a, fmt)
    } else {
        let q = quantize_f32(a, fmt);
        (QuantTensor::per_tensor(*fmt, q.codes), q.overflowed)
    };
    let fmt = &qt.format;
    if overflowed > 0 {
        let what = match fmt.overflow {
            Overflow::Wrap => "wrapped",
            Overflow::Sat | Overflow::SatSym => "saturated",
            Overflow::SatZero => "set to zero",
        };
        let msg = format!(
            "node '{node}': {} of {} values of '{key}' do not fit {fmt} (range [{}, {}]) and were {what}",
            overflowed,
            a.len(),
            crate::fixed::to_f64(fmt.min_code(), fmt),
            crate::fixed::to_f64(fmt.max_code(), fmt)
        );
        if fmt.overflow == Overflow::Wrap {
            report.warnings.push(format!("warning: {msg}"));
        } else {
            report.warnings.push(format!("note: {msg}"));
        }
        report.overflows.insert(key.to_string(), (fmt.overflow, overflowed, a.len()));
    }
    report.tensors.insert(key.to_string(), *fmt);
    graph.qweights.insert(key.to_string(), qt);
    Ok(())
}

/// Sets the formats of a planned node and quantizes its tensors.
fn apply_node(graph: &mut MaseGraph, id: NodeId, f: &NodeFormats, report: &mut ApplyReport) -> Result<()> {
    let node = graph.node(id).clone();
    for (k, fmt) in f.data_in.iter().enumerate() {
        if let (Some(fmt), Some(tm)) =
            (fmt, graph.node_mut(id).meta.common.args.get_mut(&format!("data_in_{k}")))
        {
            if tm.ty.is_real() {
                set_format(tm, fmt);
            }
        }
    }
    let roles = node.op.weight_names();
    // A weight-only linear computes on the model's own codes (super::qlinear): its weight keeps
    // them and its bias stays real, to be put on the sum's grid by the integer plan.
    let own_codes = super::qlinear::is_weight_only(graph, &node);
    if own_codes {
        if let Op::Linear { weight, .. } = &node.op {
            let fmt = graph.qweights[weight].format;
            if let Some(tm) = graph.node_mut(id).meta.common.args.get_mut("weight") {
                set_format(tm, &fmt);
            }
            report.weight_only.push(node.name.clone());
        }
    }
    for (role, key) in roles {
        if own_codes && (role == "weight" || role == "bias") {
            continue;
        }
        let fmt = match role {
            "value" => f.data_out,
            "weight" => f.weight,
            "bias" => f.bias,
            _ => None,
        };
        let Some(fmt) = fmt else { continue };
        // Per-channel fractions apply to a linear's `[out, in]` weight; other tensors keep one.
        let per_channel = f.weight_granularity == Granularity::PerChannel
            && role == "weight"
            && matches!(node.op, Op::Linear { .. })
            && graph.weights.get(key).is_some_and(|t| t.shape().len() == 2);
        let fmt = if per_channel {
            quantize_weight(graph, &node.name, key, &fmt, true, report)?;
            graph.qweights[key].format
        } else {
            quantize_weight(graph, &node.name, key, &fmt, false, report)?;
            fmt
        };
        if role != "value" {
            if let Some(tm) = graph.node_mut(id).meta.common.args.get_mut(role) {
                set_format(tm, &fmt);
            }
        }
    }
    if let Some(fmt) = &f.data_out {
        if let Some(tm) = graph.node_mut(id).meta.common.results.get_mut("data_out_0") {
            if tm.ty.is_real() {
                set_format(tm, fmt);
            }
        }
    }
    Ok(())
}

/// The `data_in` format a planned node (reached from `id` through carrier nodes) expects for
/// the value of `id`.
fn consumer_format(graph: &MaseGraph, plan: &Plan, id: NodeId, depth: usize) -> Option<FixedFormat> {
    if depth > 32 {
        return None;
    }
    for u in graph.users(id) {
        let un = graph.node(u);
        if plan.contains_key(&u) {
            for (k, i) in un.inputs.iter().enumerate() {
                if *i == id {
                    if let Some(f) = un.meta.common.args.get(&format!("data_in_{k}")).and_then(format_of) {
                        return Some(f);
                    }
                }
            }
        } else if is_carrier(&un.op) {
            if let Some(f) = consumer_format(graph, plan, u, depth + 1) {
                return Some(f);
            }
        }
    }
    None
}

/// Applies a plan (see the module documentation). Requires common metadata.
pub fn apply_plan(mut graph: MaseGraph, plan: &Plan, pass: &str) -> Result<(MaseGraph, ApplyReport)> {
    require_common_metadata(&graph, pass)?;
    let mut report = ApplyReport::default();
    for (id, f) in plan {
        apply_node(&mut graph, *id, f, &mut report)?;
        report.quantized.push(graph.node(*id).name.clone());
    }
    // Sources (placeholders, constants) take the format their planned readers expect.
    let ids: Vec<NodeId> = graph.ids().collect();
    for &id in &ids {
        if plan.contains_key(&id) || !has_float_result(&graph, id) {
            continue;
        }
        if !matches!(graph.node(id).op, Op::Placeholder | Op::Constant { .. }) {
            continue;
        }
        if let Some(fmt) = consumer_format(&graph, plan, id, 0) {
            let f = NodeFormats { data_out: Some(fmt), ..Default::default() };
            apply_node(&mut graph, id, &f, &mut report)?;
            report.carried.push(graph.node(id).name.clone());
        }
    }
    // Carriers and the output take their producer's format, in topological order.
    for &id in &ids {
        let node = graph.node(id);
        if plan.contains_key(&id) || !(is_carrier(&node.op) || matches!(node.op, Op::Output)) {
            continue;
        }
        let in_fmts: Vec<Option<FixedFormat>> =
            node.inputs.iter().map(|&i| super::result_format(&graph, i)).collect();
        let Some(Some(first)) = in_fmts.first().cloned() else { continue };
        let all_same = in_fmts.iter().all(|f| *f == Some(first));
        if matches!(node.op, Op::Concat { .. }) && !all_same {
            report.warnings.push(format!(
                "note: node '{}' (cat) joins inputs of different formats; it stays float",
                node.name
            ));
            continue;
        }
        let f = NodeFormats {
            data_in: in_fmts,
            data_out: if has_float_result(&graph, id) { Some(first) } else { None },
            ..Default::default()
        };
        apply_node(&mut graph, id, &f, &mut report)?;
        report.carried.push(graph.node(id).name.clone());
    }
    for (id, n) in graph.nodes() {
        let touched = plan.contains_key(&id) || report.carried.contains(&n.name);
        if !touched && n.meta.common.mase_type != MaseType::Output {
            report.untouched.push(n.name.clone());
        }
    }
    Ok((graph, report))
}
