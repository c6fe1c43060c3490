//! `mase passes`: list the registered passes or run a chain of them on a checkpoint.

use std::path::Path;

use anyhow::{bail, Context};
use mase_ir::pass::Pass;

/// The IR's passes followed by the hardware passes.
fn all_passes() -> impl Iterator<Item = &'static dyn Pass> {
    mase_ir::passes::REGISTRY.iter().copied().chain(mase_emit::HARDWARE_PASSES.iter().copied())
}

/// Lists passes, or runs `names` in order with per-pass arguments from a TOML file.
pub fn run(
    prefix: Option<&Path>,
    names: &[String],
    args: Option<&Path>,
    output: Option<&Path>,
    list: bool,
) -> anyhow::Result<()> {
    if list {
        for p in all_passes() {
            println!("{:<24} {}", p.name(), p.description());
        }
        return Ok(());
    }
    let (Some(prefix), Some(output)) = (prefix, output) else {
        bail!("usage: mase passes PREFIX --run a,b,c [--args FILE.toml] -o PREFIX2 (or mase passes --list)");
    };
    if names.is_empty() {
        bail!("--run needs at least one pass name (see mase passes --list)");
    }
    let table = match args {
        Some(file) => {
            let text =
                std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            text.parse::<toml::Table>().with_context(|| format!("parsing {}", file.display()))?
        }
        None => toml::Table::new(),
    };
    let graph = mase_ir::checkpoint::load(prefix)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let passes: Vec<&dyn Pass> = refs
        .iter()
        .map(|n| {
            all_passes().find(|p| p.name() == *n).with_context(|| {
                let known: Vec<&str> = all_passes().map(|p| p.name()).collect();
                format!("unknown pass '{n}'; known passes: {}", known.join(", "))
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let mut graph = graph;
    let mut info = serde_json::Map::new();
    let empty = toml::Table::new();
    for p in passes {
        let a = match table.get(p.name()) {
            Some(toml::Value::Table(t)) => t,
            Some(other) => {
                bail!("arguments of pass '{}' must be a table, got {}", p.name(), other.type_str())
            }
            None => &empty,
        };
        let (g, i) = mase_ir::pass::run_pass(p, graph, a)?;
        graph = g;
        info.insert(p.name().to_string(), serde_json::Value::Object(i));
    }
    mase_ir::checkpoint::export(&graph, output)?;
    println!("{}", serde_json::to_string_pretty(&info)?);
    eprintln!("ran {} -> {}", refs.join(", "), output.display());
    Ok(())
}
