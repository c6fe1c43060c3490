//! The pass system. A pass takes the graph and its arguments and returns the graph and an info
//! map, as MASE's passes do. A [`PassManager`] holds the registered passes, finds them by name
//! (for the CLI and TOML configs) and runs them through one loop that validates the graph after
//! every pass. The IR's passes are listed once, in [`crate::passes::REGISTRY`]
//! ([`PassManager::software`]); crates above the IR extend the manager with their own passes
//! (mase-emit's hardware passes: `mase_emit::pass_manager`), so every front end runs passes the
//! same way.

use serde::de::DeserializeOwned;

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

/// A pass given by its registry name, its description and the function that runs it: how the
/// IR's passes are declared ([`crate::passes::REGISTRY`]).
pub struct FnPass {
    /// Registry name, e.g. `add_common_metadata`.
    pub name: &'static str,
    /// One line for `mase passes --list`.
    pub description: &'static str,
    /// Runs the pass.
    pub run: fn(MaseGraph, &PassArgs) -> Result<(MaseGraph, PassInfo)>,
}

impl Pass for FnPass {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        self.description
    }
    fn run(&self, graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
        (self.run)(graph, args)
    }
}

/// For a pass that takes no arguments: an error naming `pass` and the first argument given.
pub fn no_args(pass: &str, args: &PassArgs) -> Result<()> {
    match args.keys().next() {
        Some(k) => Err(Error::Config(format!("{pass} takes no arguments, got '{k}'"))),
        None => Ok(()),
    }
}

/// The info of a pass that reports the graph's size: `nodes` = its node count.
pub fn node_count(graph: &MaseGraph) -> PassInfo {
    PassInfo::from_iter([("nodes".to_string(), graph.len().into())])
}

/// A set of registered passes with one run loop.
#[derive(Clone)]
pub struct PassManager {
    passes: Vec<&'static dyn Pass>,
}

impl std::fmt::Debug for PassManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.passes.iter().map(|p| p.name())).finish()
    }
}

impl PassManager {
    /// The IR's own passes ([`crate::passes::REGISTRY`]).
    pub fn software() -> PassManager {
        PassManager { passes: crate::passes::REGISTRY.to_vec() }
    }

    /// This manager with `more` registered after its passes; an error names a pass whose name
    /// is already taken (names are how configs and the CLI find passes, so they must be unique).
    pub fn with(mut self, more: &[&'static dyn Pass]) -> Result<PassManager> {
        for p in more {
            if self.passes.iter().any(|q| q.name() == p.name()) {
                return Err(Error::Config(format!("two passes are registered as '{}'", p.name())));
            }
            self.passes.push(*p);
        }
        Ok(self)
    }

    /// Every registered pass, in registration order.
    pub fn passes(&self) -> impl Iterator<Item = &'static dyn Pass> + '_ {
        self.passes.iter().copied()
    }

    /// The pass with this name; the error lists every registered name.
    pub fn find(&self, name: &str) -> Result<&'static dyn Pass> {
        self.passes().find(|p| p.name() == name).ok_or_else(|| {
            let known: Vec<&str> = self.passes().map(|p| p.name()).collect();
            Error::Config(format!("unknown pass '{name}'; known passes: {}", known.join(", ")))
        })
    }

    /// Runs passes by name in order. `args` maps a pass name to its argument table (a missing
    /// entry means no arguments; entries for passes not run are ignored, so one file can hold
    /// the arguments of several chains). Every name is looked up before the first pass runs.
    /// Returns the graph and each pass's info under its name.
    pub fn run(
        &self,
        mut graph: MaseGraph,
        names: &[&str],
        args: &toml::Table,
    ) -> Result<(MaseGraph, PassInfo)> {
        let passes: Vec<&dyn Pass> = names.iter().map(|n| self.find(n)).collect::<Result<_>>()?;
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
}

/// Runs one step of a pipeline under a pass name: the step's errors and the validation of the
/// graph it returns carry the name. Every pass runs through here ([`run_pass`]); so do the
/// steps a front end calls with typed arguments instead of a TOML table (the flow's
/// `auto_precision` on in-memory statistics, `add_hardware_metadata` with a parsed config).
pub fn run_step(
    name: &str,
    graph: MaseGraph,
    step: impl FnOnce(MaseGraph) -> Result<(MaseGraph, PassInfo)>,
) -> Result<(MaseGraph, PassInfo)> {
    let (graph, info) = step(graph).map_err(|e| e.in_pass(name))?;
    graph.validate().map_err(|e| e.in_pass(name))?;
    Ok((graph, info))
}

/// Runs one pass and validates the graph it returns; errors carry the pass name.
pub fn run_pass(pass: &dyn Pass, graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    run_step(pass.name(), graph, |g| pass.run(g, args))
}

/// The IR's pass with this name ([`PassManager::software`]).
pub fn find_pass(name: &str) -> Result<&'static dyn Pass> {
    PassManager::software().find(name)
}

/// Runs IR passes by name in order ([`PassManager::run`] on [`PassManager::software`]).
pub fn run_passes(graph: MaseGraph, names: &[&str], args: &toml::Table) -> Result<(MaseGraph, PassInfo)> {
    PassManager::software().run(graph, names, args)
}

/// Reads a TOML table (pass arguments or a section of a configuration file) into a typed
/// struct. Structs reject unknown keys with `#[serde(deny_unknown_fields)]`, whose message lists
/// the valid keys; the error names `origin` and the table the mistake is in, e.g.
/// `FLOW.toml: [hardware.nodes.fc1]: unknown field `paralelism`, expected `parallelism` or
/// `external``.
pub fn typed<T: DeserializeOwned>(table: &toml::Table, origin: &str) -> Result<T> {
    table.clone().try_into().map_err(|e: toml::de::Error| Error::Config(typed_error(origin, &e.to_string())))
}

/// `origin: [path]: message` from toml's `message\nin `path`` (the path of the offending
/// table or key); serde's "unknown field" message already lists the valid keys.
fn typed_error(origin: &str, text: &str) -> String {
    let text = text.trim_end();
    match text.rsplit_once("\nin `") {
        Some((msg, path)) => {
            let path = path.trim_end_matches('`');
            format!("{origin}: [{path}]: {}", msg.trim_end())
        }
        None => format!("{origin}: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        width: Option<u32>,
        range: Option<String>,
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        #[serde(default)]
        nodes: std::collections::BTreeMap<String, Inner>,
        top: Option<String>,
    }

    #[test]
    fn typed_errors_name_the_origin_the_table_and_the_valid_keys() {
        let t: toml::Table = "[nodes.fc1]\nwidht = 3\n".parse().unwrap();
        let e = typed::<Outer>(&t, "f.toml").unwrap_err().to_string();
        assert!(e.contains("f.toml: [nodes.fc1]") && e.contains("widht"), "{e}");
        assert!(e.contains("`width`") && e.contains("`range`"), "{e}");
        let t: toml::Table = "tpo = 1\n".parse().unwrap();
        let e = typed::<Outer>(&t, "f.toml").unwrap_err().to_string();
        assert!(e.contains("f.toml") && e.contains("`nodes`") && e.contains("`top`"), "{e}");
        let t: toml::Table = "top = 1\n".parse().unwrap();
        let e = typed::<Outer>(&t, "f.toml").unwrap_err().to_string();
        assert!(e.contains("[top]") && e.contains("string"), "{e}");
    }

    #[test]
    fn registering_a_taken_name_is_an_error() {
        let e = PassManager::software().with(&[crate::passes::REGISTRY[0]]).unwrap_err().to_string();
        assert!(e.contains(crate::passes::REGISTRY[0].name()), "{e}");
    }
}
