//! Precision from calibration statistics: the plan of the `auto_precision` pass.
//!
//! For a total width `W` (signed formats), each tensor gets the **largest** number of
//! fractional bits `f` such that its range `[lo, hi]` fits: `hi · 2^f ≤ 2^(W-1) - 1` and
//! `lo · 2^f ≥ -2^(W-1)`. Rounding then never carries a value of the range out of the format
//! (the bounds are integers), so nothing in the range overflows; values outside it (possible
//! with the quantile and n-sigma ranges) saturate.
//!
//! - Activations (every node's result and, identically, its data inputs) use the range chosen by
//!   the `range` argument from `software.results/args[..].stat` (written by
//!   `add_software_metadata`): `min_max`, `quantile` or `n_sigma`.
//! - Weights, biases and constants use their own exact min/max (they are known, so no value of
//!   them ever clips), at `weight_width` (default `W`) and `bias_width` (default
//!   `weight_width`).
//! - A range of all zeros gets `f = W - 1`; `f` is clamped to [-256, 256].

use super::channel::Granularity;
use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::fixed::{FixedFormat, Overflow, Rounding};
use crate::graph::MaseGraph;
use crate::metadata::{RangeStat, Stats};
use crate::op::Op;
use crate::tensor::Tensor;

use super::plan::{has_float_result, is_carrier, NodeFormats, Plan};

/// Which statistic gives an activation's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    /// `range_min_max`.
    MinMax,
    /// `range_quantile`.
    Quantile,
    /// `range_n_sigma`.
    NSigma,
}

impl std::str::FromStr for RangeKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "min_max" => Ok(RangeKind::MinMax),
            "quantile" => Ok(RangeKind::Quantile),
            "n_sigma" => Ok(RangeKind::NSigma),
            _ => Err(format!("range = \"{s}\": supported are \"min_max\", \"quantile\", \"n_sigma\"")),
        }
    }
}

impl RangeKind {
    /// The statistic this kind reads.
    pub fn pick(self, s: &Stats) -> Option<RangeStat> {
        match self {
            RangeKind::MinMax => s.range_min_max,
            RangeKind::Quantile => s.range_quantile,
            RangeKind::NSigma => s.range_n_sigma,
        }
    }

    /// The name used in configs (`min_max`, `quantile`, `n_sigma`).
    pub fn name(self) -> &'static str {
        match self {
            RangeKind::MinMax => "min_max",
            RangeKind::Quantile => "quantile",
            RangeKind::NSigma => "n_sigma",
        }
    }
}

/// The largest fractional bit count for which `[lo, hi]` fits a signed `width`-bit format
/// (see the module documentation). `width` must be at least 2.
pub fn frac_for_range(lo: f64, hi: f64, width: u32) -> i32 {
    let max_c = ((1i128 << (width - 1)) - 1) as f64;
    let min_c = -((1i128 << (width - 1)) as f64);
    let fits = |f: i32| hi * 2f64.powi(f) <= max_c && lo * 2f64.powi(f) >= min_c;
    let (hi_pos, lo_neg) = (hi.max(0.0), (-lo).max(0.0));
    let m = hi_pos.max(lo_neg);
    if m == 0.0 || !m.is_finite() {
        return if m == 0.0 { width as i32 - 1 } else { -256 };
    }
    let mut f = ((max_c / m).log2().floor() as i32).clamp(-256, 256);
    while f > -256 && !fits(f) {
        f -= 1;
    }
    while f < 256 && fits(f + 1) {
        f += 1;
    }
    f
}

/// Options of the `auto_precision` plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoOptions {
    /// Total width of activations.
    pub width: u32,
    /// Width of weights and constants.
    pub weight_width: u32,
    /// Width of biases.
    pub bias_width: u32,
    /// Whether linear weights get one fraction per output channel.
    pub weight_granularity: Granularity,
    /// Which statistic gives activation ranges.
    pub range: RangeKind,
}

fn act_format(width: u32, r: &RangeStat) -> FixedFormat {
    FixedFormat {
        signed: true,
        width,
        frac: frac_for_range(r.min, r.max, width),
        rounding: Rounding::Trn,
        overflow: Overflow::Sat,
    }
}

fn tensor_format(graph: &MaseGraph, key: &str, width: u32) -> Option<FixedFormat> {
    let Some(Tensor::F32(a)) = graph.weights.get(key) else { return None };
    let (lo, hi) =
        a.iter().fold((0.0f64, 0.0f64), |(lo, hi), &x| (lo.min(f64::from(x)), hi.max(f64::from(x))));
    Some(FixedFormat {
        signed: true,
        width,
        frac: frac_for_range(lo, hi, width),
        rounding: Rounding::RndConv,
        overflow: Overflow::Sat,
    })
}

/// The plan `auto_precision` applies. Errors name the node whose statistics are missing.
pub fn auto_plan(graph: &MaseGraph, opts: &AutoOptions) -> Result<Plan> {
    for (w, what) in
        [(opts.width, "width"), (opts.weight_width, "weight_width"), (opts.bias_width, "bias_width")]
    {
        if !(2..=64).contains(&w) {
            return Err(Error::Config(format!("auto_precision: {what} = {w}: supported widths are 2..=64")));
        }
    }
    let mut plan = Plan::new();
    for (id, n) in graph.nodes() {
        if matches!(n.op, Op::Output) || is_carrier(&n.op) || !has_float_result(graph, id) {
            continue;
        }
        let mut f = NodeFormats::default();
        if let Op::Constant { tensor } = &n.op {
            f.data_out = tensor_format(graph, tensor, opts.weight_width);
            plan.insert(id, f);
            continue;
        }
        let stat = |which: &str, key: &str| -> Result<FixedFormat> {
            let sw = if which == "results" { &n.meta.software.results } else { &n.meta.software.args };
            let st = sw.get(key).ok_or_else(|| {
                n.error(format!(
                    "auto_precision needs statistics of {key}: run add_software_metadata with calibration inputs first"
                ))
            })?;
            let r = opts.range.pick(&st.stat).ok_or_else(|| {
                n.error(format!("the statistics of {key} have no range_{}", opts.range.name()))
            })?;
            Ok(act_format(opts.width, &r))
        };
        for (k, i) in n.inputs.iter().enumerate() {
            let key = format!("data_in_{k}");
            let float =
                n.meta.common.args.get(&key).is_some_and(|a| a.ty.is_real()) && has_float_result(graph, *i);
            f.data_in.push(if float { Some(stat("args", &key)?) } else { None });
        }
        for (role, key) in n.op.weight_names() {
            match role {
                "weight" => {
                    f.weight = tensor_format(graph, key, opts.weight_width);
                    f.weight_granularity = opts.weight_granularity;
                }
                "bias" => f.bias = tensor_format(graph, key, opts.bias_width),
                _ => {}
            }
        }
        f.data_out = Some(stat("results", "data_out_0")?);
        plan.insert(id, f);
    }
    Ok(plan)
}

/// The chosen precisions as JSON for the info map: node → role → `[width, frac]`.
pub fn describe_plan(graph: &MaseGraph, plan: &Plan) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    for (id, f) in plan {
        let mut e: BTreeMap<String, serde_json::Value> = BTreeMap::new();
        for (k, d) in f.data_in.iter().enumerate() {
            if let Some(d) = d {
                e.insert(format!("data_in_{k}"), serde_json::json!([d.width, d.frac]));
            }
        }
        for (k, d) in [("weight", f.weight), ("bias", f.bias), ("data_out_0", f.data_out)] {
            if let Some(d) = d {
                e.insert(k.into(), serde_json::json!([d.width, d.frac]));
            }
        }
        m.insert(graph.node(*id).name.clone(), serde_json::to_value(e).unwrap_or_default());
    }
    m
}
