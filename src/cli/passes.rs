//! `mase passes`: list the registered passes or run a chain of them on a checkpoint.

use std::path::Path;

use anyhow::{bail, Context};

/// Lists passes, or runs `names` in order with per-pass arguments from a TOML file.
pub fn run(
    prefix: Option<&Path>,
    names: &[String],
    args: Option<&Path>,
    output: Option<&Path>,
    list: bool,
) -> anyhow::Result<()> {
    if list {
        for p in mase_ir::passes::REGISTRY {
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
    let (graph, info) = mase_ir::pass::run_passes(graph, &refs, &table)?;
    mase_ir::checkpoint::export(&graph, output)?;
    println!("{}", serde_json::to_string_pretty(&info)?);
    eprintln!("ran {} -> {}", refs.join(", "), output.display());
    Ok(())
}
