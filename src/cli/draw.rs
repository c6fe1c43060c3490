//! `mase draw`: SVG or DOT of a checkpoint's graph.

use std::path::Path;

use anyhow::Context;

/// Writes the drawing; the format follows the file extension (`.dot` → DOT, else SVG).
pub fn run(prefix: &Path, output: &Path) -> anyhow::Result<()> {
    let graph = mase_ir::checkpoint::load(prefix)?;
    let text = if output.extension().is_some_and(|e| e == "dot") {
        mase_ir::draw::to_dot(&graph)
    } else {
        mase_ir::draw::to_svg(&graph)
    };
    std::fs::write(output, text).with_context(|| format!("writing {}", output.display()))?;
    println!("drew {} nodes -> {}", graph.len(), output.display());
    Ok(())
}
