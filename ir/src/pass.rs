//! The pass system. A pass takes the graph and its arguments and returns the graph and an info
//! map, as MASE's passes do. Passes are listed once, in [`crate::passes::REGISTRY`], and found
//! by name so the CLI and TOML configs can chain them.

use crate::error::{Error, Result};
use crate::graph::MaseGraph;

/// Arguments of one pass: the TOML table given for it (empty when none).
pub type PassArgs = toml::Table;

/// What a pass reports besides the graph (counts, decisions, warnings), as JSON values.
pub type PassInfo = serde_json::Map<String, serde_json::Value>;

/// An analysis or transform pass.
pub trait Pass: Sync {
    /// Registry name, e.g. `add_common_metadata`.
    fn name(&self) -> &'static str;
    /// One line for `mase passes --list`.
    fn description(&self) -> &'static str;
    /// Runs the pass.
    fn run(&self, graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)>;
}

/// The registered pass with this name; the error lists every registered name.
pub fn find_pass(name: &str) -> Result<&'static dyn Pass> {
    crate::passes::REGISTRY.iter().copied().find(|p| p.name() == name).ok_or_else(|| {
        let known: Vec<&str> = crate::passes::REGISTRY.iter().map(|p| p.name()).collect();
        Error::Config(format!("unknown pass '{name}'; known passes: {}", known.join(", ")))
    })
}

/// Runs one pass and validates the graph it returns; errors carry the pass name.
pub fn run_pass(pass: &dyn Pass, graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    let (graph, info) = pass.run(graph, args).map_err(|e| e.in_pass(pass.name()))?;
    graph.validate().map_err(|e| e.in_pass(pass.name()))?;
    Ok((graph, info))
}

/// Runs passes by name in order. `args` maps a pass name to its argument table (a missing
/// entry means no arguments). Returns the graph and each pass's info under its name.
pub fn run_passes(mut graph: MaseGraph, names: &[&str], args: &toml::Table) -> Result<(MaseGraph, PassInfo)> {
    let passes: Vec<&dyn Pass> = names.iter().map(|n| find_pass(n)).collect::<Result<_>>()?;
    let empty = PassArgs::new();
    let mut all = PassInfo::new();
    for p in passes {
        let a = match args.get(p.name()) {
            Some(toml::Value::Table(t)) => t,
            Some(other) => {
                return Err(Error::Config(format!(
                    "arguments of pass '{}' must be a table, got {}",
                    p.name(),
                    other.type_str()
                )))
            }
            None => &empty,
        };
        let (g, info) = run_pass(p, graph, a)?;
        graph = g;
        all.insert(p.name().to_string(), serde_json::Value::Object(info));
    }
    Ok((graph, all))
}
