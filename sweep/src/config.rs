//! `SWEEP.toml`: a flow configuration (every key of `mase flow --config`, see
//! [`mase_emit::config`]) as the base of every point, plus a `[sweep]` table of axes, each a list:
//!
//! ```toml
//! [passes.auto_precision]
//! range = "min_max"            # base settings every point shares
//! [sweep]
//! width = [8, 12, 16]          # activation widths
//! weight_width = [4, 6, 8]     # weight and constant widths
//! weight_granularity = ["per_tensor", "per_channel"]  # linear weights: one fraction, or one per
//!                              # output channel
//! multiplier_budget = [16, 64] # or target_ii = [...] (cycles per inference): the rate axis
//! samples = 20                 # optional: a seeded random subset of 20 points of the product
//! seed = 0                     # optional: the subset's seed
//! [sweep.ops.softmax]          # optional per-op-type overrides (mase op names)
//! width = [12, 16]             # activation width of every node of that op
//! ```
//!
//! An axis left out takes the base configuration's value. Unknown keys (in `[sweep]` and in
//! `[sweep.ops.<op>]`) are errors naming the file and table and listing the valid keys; so is a
//! `[passes.quantize]` base (it fixes every format, so there is nothing to sweep).

use std::collections::BTreeMap;
use std::path::Path;

use mase_emit::FlowConfig;
use mase_ir::quant::channel::Granularity;
use serde::Deserialize;

use crate::error::{io, Result, SweepError};

/// The `[sweep]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axes {
    /// Activation widths.
    #[serde(default)]
    pub width: Option<Vec<u32>>,
    /// Weight (and constant) widths.
    #[serde(default)]
    pub weight_width: Option<Vec<u32>>,
    /// Weight granularities (`per_tensor`, `per_channel`).
    #[serde(default)]
    pub weight_granularity: Option<Vec<Granularity>>,
    /// Multiplier budgets of the whole design (rate axis; excludes `target_ii`).
    #[serde(default)]
    pub multiplier_budget: Option<Vec<u64>>,
    /// Cycles per inference the slowest stage may take (rate axis; excludes
    /// `multiplier_budget`).
    #[serde(default)]
    pub target_ii: Option<Vec<u64>>,
    /// Points to draw (seeded, without replacement) from the product instead of all of it.
    #[serde(default)]
    pub samples: Option<usize>,
    /// Seed of the `samples` draw.
    #[serde(default)]
    pub seed: u64,
    /// Per-op-type overrides by mase op name (`linear`, `relu`, `softmax`, …).
    #[serde(default)]
    pub ops: BTreeMap<String, OpAxes>,
}

/// `[sweep.ops.<op>]`: axes of one op type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpAxes {
    /// Activation widths of every node of the op (its inputs and output).
    pub width: Vec<u32>,
}

/// A parsed `SWEEP.toml`.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// Where it came from (for messages).
    pub origin: String,
    /// The base flow configuration table (the file without `[sweep]`), as written.
    pub base_table: toml::Table,
    /// The base flow configuration, checked and with relative paths resolved.
    pub base: FlowConfig,
    /// The axes.
    pub axes: Axes,
}

/// The rate axis of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// `[hardware] multiplier_budget`.
    MultiplierBudget(u64),
    /// `[hardware] target_ii`.
    TargetIi(u64),
}

impl SweepConfig {
    /// Reads `SWEEP.toml`; relative paths in it start from its directory.
    pub fn from_file(path: &Path) -> Result<SweepConfig> {
        let text = std::fs::read_to_string(path).map_err(io("reading", path))?;
        let origin = path.display().to_string();
        let table: toml::Table = text.parse().map_err(|e| SweepError::Config(format!("{origin}: {e}")))?;
        Self::from_table(table, &origin, path.parent())
    }

    /// As [`SweepConfig::from_file`] from a parsed table; `base_dir` is where relative paths
    /// start (the current directory when `None`).
    pub fn from_table(mut table: toml::Table, origin: &str, base_dir: Option<&Path>) -> Result<SweepConfig> {
        let sweep = match table.remove("sweep") {
            Some(toml::Value::Table(t)) => t,
            Some(v) => {
                return Err(SweepError::Config(format!(
                    "{origin}: [sweep] must be a table, got {}",
                    v.type_str()
                )))
            }
            None => {
                return Err(SweepError::Config(format!(
                    "{origin}: no [sweep] table; give at least one axis, e.g. [sweep] width = [8, 16]"
                )))
            }
        };
        let base = FlowConfig::from_table(&table, origin, base_dir)?;
        resolve_paths(&mut table, base_dir);
        if base.passes.quantize.is_some() {
            return Err(SweepError::Config(format!(
                "{origin}: [passes.quantize] fixes every format, so there is nothing to sweep; \
                 use [passes.auto_precision] (the sweep sets its width and weight_width)"
            )));
        }
        if !base.hardware.devices.is_empty() {
            return Err(SweepError::Config(format!(
                "{origin}: [[hardware.devices]]: a sweep evaluates single-device designs; remove the devices \
                 (and sweep each device's budget as multiplier_budget), or run `mase flow` with them"
            )));
        }
        let axes: Axes = mase_ir::pass::typed(&sweep, &format!("{origin}: [sweep]"))?;
        axes.check(origin)?;
        Ok(SweepConfig { origin: origin.to_string(), base_table: table, base, axes })
    }
}

/// Makes the paths of a flow configuration table absolute (`[calibration] inputs` and
/// `[hardware.nodes.*] external`, relative to `base_dir`), so that the per-point configuration
/// files the sweep writes elsewhere still find them.
fn resolve_paths(table: &mut toml::Table, base_dir: Option<&Path>) {
    let base = base_dir.unwrap_or(Path::new(""));
    let abs = |v: &mut toml::Value| {
        if let toml::Value::String(s) = v {
            if let Ok(p) = std::path::absolute(base.join(&*s)) {
                *s = p.to_string_lossy().into_owned();
            }
        }
    };
    if let Some(toml::Value::Table(inputs)) =
        table.get_mut("calibration").and_then(|c| c.as_table_mut()).and_then(|c| c.get_mut("inputs"))
    {
        for (_, files) in inputs.iter_mut() {
            if let toml::Value::Array(a) = files {
                a.iter_mut().for_each(abs);
            }
        }
    }
    if let Some(toml::Value::Table(nodes)) =
        table.get_mut("hardware").and_then(|h| h.as_table_mut()).and_then(|h| h.get_mut("nodes"))
    {
        for (_, n) in nodes.iter_mut() {
            if let Some(e) = n.as_table_mut().and_then(|n| n.get_mut("external")) {
                abs(e);
            }
        }
    }
}

impl Axes {
    fn check(&self, origin: &str) -> Result<()> {
        let bad = |msg: String| Err(SweepError::Config(format!("{origin}: [sweep] {msg}")));
        let mut widths: Vec<(String, &Vec<u32>)> = Vec::new();
        widths.extend(self.width.as_ref().map(|w| ("width".to_string(), w)));
        widths.extend(self.weight_width.as_ref().map(|w| ("weight_width".to_string(), w)));
        widths.extend(self.ops.iter().map(|(op, a)| (format!("ops.{op}.width"), &a.width)));
        for (name, list) in widths {
            if list.is_empty() {
                return bad(format!("{name} = []: an axis needs at least one value"));
            }
            if let Some(w) = list.iter().find(|w| !(2..=64).contains(*w)) {
                return bad(format!("{name} contains {w}: widths are 2..=64"));
            }
        }
        if self.weight_granularity.as_ref().is_some_and(Vec::is_empty) {
            return bad("weight_granularity = []: an axis needs at least one value".into());
        }
        if self.multiplier_budget.is_some() && self.target_ii.is_some() {
            return bad("gives both multiplier_budget and target_ii: choose one rate axis".into());
        }
        for (name, list) in [("multiplier_budget", &self.multiplier_budget), ("target_ii", &self.target_ii)] {
            if let Some(list) = list {
                if list.is_empty() || list.contains(&0) {
                    return bad(format!("{name} = {list:?}: give at least one positive value"));
                }
            }
        }
        if self.samples == Some(0) {
            return bad("samples = 0: give at least 1 (or leave it out to run the whole product)".into());
        }
        Ok(())
    }

    /// The rate axis (empty when the sweep keeps the base configuration's rate).
    pub fn rates(&self) -> Vec<Rate> {
        match (&self.multiplier_budget, &self.target_ii) {
            (Some(b), _) => b.iter().map(|&b| Rate::MultiplierBudget(b)).collect(),
            (None, Some(t)) => t.iter().map(|&t| Rate::TargetIi(t)).collect(),
            (None, None) => Vec::new(),
        }
    }
}
