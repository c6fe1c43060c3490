//! `quantize`: fixed-point formats from a MASE-style TOML config.
//!
//! The arguments are the config itself (see [`crate::quant::config`] for the format, the
//! matching rules and which mistakes are errors or warnings); a flow config's
//! `[passes.quantize]` table is the same thing ([`crate::quant::config::quantize_table_from_flow`]).
//! Matched `integer` nodes get `common.args/results` of type `fixed` with `precision =
//! [width, frac_width]` and their modes, and their weights and biases are stored as integer
//! codes with their format in `graph.qweights`; placeholders, constants, implicit nodes and the
//! output take their neighbours' formats; `NA` and unmatched nodes are left untouched (see
//! [`crate::quant::plan`]). Requires `add_common_metadata` (shapes).
//!
//! Info map: `by`, `quantized`, `carried`, `untouched`, `na` (node → table key), `tensors`
//! (key → `[width, frac]`), `clipped` / `wrapped` (key → count of weight values that did not fit
//! and were saturated/zeroed or wrapped), `warnings` (types that do not occur, wrapped weights
//! with the node and count, clipped weights).

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::pass::PassInfo;
use crate::quant::{apply_plan, config};

/// The pass (`quantize` in [`super::REGISTRY`]): applies a quantize config, the pass arguments.
pub fn quantize(graph: MaseGraph, table: &toml::Table) -> Result<(MaseGraph, PassInfo)> {
    let cfg = config::parse(table)?;
    crate::quant::plan::require_common_metadata(&graph, "quantize")?;
    let (plan, warnings, na) = config::build_plan(&graph, &cfg)?;
    let (graph, report) = apply_plan(graph, &plan, "quantize")?;
    let mut info = PassInfo::new();
    let by = match cfg.by {
        config::MatchBy::Type => "type",
        config::MatchBy::Name => "name",
        config::MatchBy::RegexName => "regex_name",
    };
    info.insert("by".into(), by.into());
    info.insert("warnings".into(), warnings.into());
    report.write_info(&mut info);
    let na: serde_json::Map<String, serde_json::Value> = na.into_iter().map(|(n, k)| (n, k.into())).collect();
    info.insert("na".into(), na.into());
    Ok((graph, info))
}
