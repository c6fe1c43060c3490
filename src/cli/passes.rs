//! `mase passes`: list the registered passes or run a chain of them on a checkpoint, through
//! the one pass manager (software and hardware passes, `mase_emit::pass_manager`).

use std::path::Path;

use anyhow::bail;

/// Lists passes, or runs `names` in order with per-pass arguments from a TOML file.
pub fn run(
    prefix: Option<&Path>,
    names: &[String],
    args: Option<&Path>,
    output: Option<&Path>,
    list: bool,
) -> anyhow::Result<()> {
    let manager = mase_emit::pass_manager();
    if list {
        for p in manager.passes() {
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
        Some(file) => super::quantize::read_toml(file)?,
        None => toml::Table::new(),
    };
    let graph = mase_ir::checkpoint::load(prefix)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (graph, info) = manager.run(graph, &refs, &table)?;
    mase_ir::checkpoint::export(&graph, output)?;
    println!("{}", serde_json::to_string_pretty(&info)?);
    eprintln!("ran {} -> {}", refs.join(", "), output.display());
    Ok(())
}
