//! `auto_precision`: fixed-point formats chosen from calibration statistics.
//!
//! Arguments (TOML):
//!
//! ```toml
//! [auto_precision]
//! width = 8               # required: total width of activations (2..=64)
//! range = "min_max"       # optional: "min_max" (default), "quantile" or "n_sigma"
//! weight_width = 8        # optional: width of weights and constants (default: width)
//! bias_width = 8          # optional: width of biases (default: weight_width)
//! weight_granularity = "per_tensor"  # optional: or "per_channel" (one fraction per output
//!                                    # channel of each linear weight)
//! ```
//!
//! Each tensor gets the largest fraction for which its range does not overflow (see
//! [`crate::quant::auto`]); activations from `software` statistics (run
//! `add_software_metadata` first), weights from their own values. The choice is recorded in
//! `common` metadata (type `fixed`, `precision`, modes) exactly as `quantize` records it, and the
//! weights are quantized by the same code ([`crate::quant::apply_plan`]).
//!
//! Info map: `width`, `weight_width`, `bias_width`, `range`, `precision` (node → role →
//! `[width, frac]`), and the `quantize` report fields (`quantized`, `carried`, `untouched`,
//! `tensors`, `clipped`, `wrapped`, `warnings`).

use crate::error::{Error, Result};
use crate::graph::MaseGraph;
use crate::pass::{PassArgs, PassInfo};
use crate::quant::apply_plan;
use crate::quant::auto::{auto_plan, describe_plan, AutoOptions, RangeKind};
use crate::quant::channel::Granularity;

fn width_arg(args: &PassArgs, key: &str) -> Result<Option<u32>> {
    match args.get(key) {
        None => Ok(None),
        Some(toml::Value::Integer(w)) if (2..=64).contains(w) => Ok(Some(*w as u32)),
        Some(v) => Err(Error::Config(format!("auto_precision: {key} = {v}: must be an integer in 2..=64"))),
    }
}

/// Parses the pass arguments.
pub fn parse_args(args: &PassArgs) -> Result<AutoOptions> {
    const KNOWN: [&str; 5] = ["width", "range", "weight_width", "bias_width", "weight_granularity"];
    if let Some(k) = args.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(Error::Config(format!(
            "auto_precision: unknown argument '{k}'; arguments are: {}",
            KNOWN.join(", ")
        )));
    }
    let width = width_arg(args, "width")?.ok_or_else(|| {
        Error::Config("auto_precision needs width = <total bits of activations>, e.g. width = 8".into())
    })?;
    let range = match args.get("range") {
        None => RangeKind::MinMax,
        Some(toml::Value::String(s)) => {
            s.parse().map_err(|e| Error::Config(format!("auto_precision: {e}")))?
        }
        Some(v) => return Err(Error::Config(format!("auto_precision: range must be a string, got {v}"))),
    };
    let weight_width = width_arg(args, "weight_width")?.unwrap_or(width);
    let bias_width = width_arg(args, "bias_width")?.unwrap_or(weight_width);
    let weight_granularity = match args.get("weight_granularity") {
        None => Granularity::PerTensor,
        Some(toml::Value::String(s)) => {
            s.parse().map_err(|e| Error::Config(format!("auto_precision: {e}")))?
        }
        Some(v) => {
            return Err(Error::Config(format!(
                "auto_precision: weight_granularity must be a string, got {v}"
            )))
        }
    };
    Ok(AutoOptions { width, weight_width, bias_width, range, weight_granularity })
}

/// Runs the pass with parsed options.
pub fn auto_precision(graph: MaseGraph, opts: &AutoOptions) -> Result<(MaseGraph, PassInfo)> {
    crate::quant::plan::require_common_metadata(&graph, "auto_precision")?;
    let plan = auto_plan(&graph, opts)?;
    let precision = describe_plan(&graph, &plan);
    let (graph, report) = apply_plan(graph, &plan, "auto_precision")?;
    let mut info = PassInfo::new();
    info.insert("width".into(), opts.width.into());
    info.insert("weight_width".into(), opts.weight_width.into());
    info.insert("bias_width".into(), opts.bias_width.into());
    info.insert("range".into(), opts.range.name().into());
    info.insert("precision".into(), precision.into());
    report.write_info(&mut info);
    Ok((graph, info))
}

/// The pass (`auto_precision` in [`super::REGISTRY`]): picks precisions from statistics and
/// quantizes.
pub fn run(graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    let opts = parse_args(args)?;
    auto_precision(graph, &opts)
}
