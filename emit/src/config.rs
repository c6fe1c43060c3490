//! The hardware section of a flow configuration (`[hardware]` in FLOW.toml, or the whole of a
//! HW.toml given to `mase emit --config`).
//!
//! ```toml
//! [hardware]
//! target_ii = 8192            # cycles per inference the slowest stage may take (optional)
//! target_ii_per_row = 1024    # or: the same per row of the graph input
//! multiplier_budget = 64      # or: the most multipliers the design may use (optional)
//! lanes = 4                   # default elements per beat when neither is given
//! top = "top"                 # name of the emitted top module
//! [hardware.nodes.attention_self_query_linear]
//! parallelism = [4, 2]        # fixed: [p_in, p_out] for linear, [lanes] for the others
//! [hardware.nodes.Relu]
//! external = "my_relu.toml"  # the user's module (EXTERNAL toolchain, see crate::external)
//! ```
//!
//! Rate selection: with `target_ii`, every node takes the fewest multipliers (then the fewest
//! lanes) that meet it; with `multiplier_budget`, the smallest target whose design fits the
//! budget is searched; with neither, the target is the slowest node's rate at `lanes`
//! elements per beat (`lanes × lanes` multipliers for a linear), so that node sets the pace and
//! every other node shrinks to the parallelism that keeps up with it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use mase_ir::{Error, Result};

/// Default elements per beat.
pub const DEFAULT_LANES: usize = 4;

/// Per-node settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeHw {
    /// Fixed parallelism: `[p_in, p_out]` for linear, `[lanes]` (or `[lanes, lanes]`) otherwise.
    #[serde(default)]
    pub parallelism: Option<Vec<usize>>,
    /// Implement the node with the user's module described by this manifest (EXTERNAL
    /// toolchain, see [`crate::external`]); relative to the configuration file.
    #[serde(default)]
    pub external: Option<String>,
}

/// Hardware configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HwConfig {
    /// Cycles per inference the slowest stage may take.
    #[serde(default)]
    pub target_ii: Option<u64>,
    /// The same target given per row of the (first) graph input: `target_ii_per_row × rows`
    /// cycles per inference (`--target-ii` on the command line).
    #[serde(default)]
    pub target_ii_per_row: Option<u64>,
    /// Most multipliers the whole design may use.
    #[serde(default)]
    pub multiplier_budget: Option<u64>,
    /// Default elements per beat (used when neither target is given).
    #[serde(default)]
    pub lanes: Option<usize>,
    /// Name of the top module.
    #[serde(default)]
    pub top: Option<String>,
    /// Per-node settings by node name.
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeHw>,
    /// Directory that relative manifest paths start from (the configuration file's).
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

impl HwConfig {
    /// Reads a hardware configuration from TOML text: the `[hardware]` table when there is one
    /// (a flow configuration), otherwise the whole document.
    pub fn from_toml(text: &str, origin: &str) -> Result<HwConfig> {
        let table: toml::Table = text.parse().map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        Self::from_table(&table, origin)
    }

    /// As [`HwConfig::from_toml`], from a parsed table.
    pub fn from_table(table: &toml::Table, origin: &str) -> Result<HwConfig> {
        let hw = match table.get("hardware") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(other) => {
                return Err(Error::Config(format!(
                    "{origin}: [hardware] must be a table, got {}",
                    other.type_str()
                )))
            }
            None => {
                let mut t = table.clone();
                t.remove("passes");
                t
            }
        };
        let cfg: HwConfig = hw
            .try_into()
            .map_err(|e| Error::Config(format!("{origin}: hardware section: {e} (keys: target_ii, target_ii_per_row, multiplier_budget, lanes, top, nodes.<name>.parallelism, nodes.<name>.external)")))?;
        cfg.check(origin)?;
        Ok(cfg)
    }

    fn check(&self, origin: &str) -> Result<()> {
        let targets = [self.target_ii, self.target_ii_per_row, self.multiplier_budget];
        if targets.contains(&Some(0)) || self.lanes == Some(0) {
            return Err(Error::Config(format!(
                "{origin}: target_ii, target_ii_per_row, multiplier_budget and lanes must be positive"
            )));
        }
        if targets.iter().filter(|t| t.is_some()).count() > 1 {
            return Err(Error::Config(format!(
                "{origin}: give one of target_ii, target_ii_per_row and multiplier_budget"
            )));
        }
        if let Some(top) = &self.top {
            let ok = top.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && top.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(Error::Config(format!(
                    "{origin}: top = {top:?} is not a SystemVerilog identifier (letters, digits, _)"
                )));
            }
        }
        for (name, n) in &self.nodes {
            if let Some(p) = &n.parallelism {
                if p.is_empty() || p.len() > 2 || p.contains(&0) {
                    return Err(Error::Config(format!(
                        "{origin}: nodes.{name}.parallelism = {p:?}: give [lanes] or [p_in, p_out], positive"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Validates after fields were set in code (command-line overrides).
    pub fn checked(self, origin: &str) -> Result<HwConfig> {
        self.check(origin)?;
        Ok(self)
    }

    /// The top module name (`top` by default).
    pub fn top_name(&self) -> &str {
        self.top.as_deref().unwrap_or("top")
    }
}
