//! `mase import`: ONNX → MaseGraph checkpoint.

use std::path::Path;

use mase_ir::onnx::{import_file, ImportOptions};

/// Imports `model` (folding constants and running the raising passes unless told not to), records common metadata (so the
/// checkpoint is ready for `quantize` and `info` shows every shape), and writes the checkpoint.
pub fn run(model: &Path, output: &Path, shapes: &[String], raise: bool, fold: bool) -> anyhow::Result<()> {
    let opts = ImportOptions { input_shapes: super::args::input_shapes(shapes)?, raise, fold };
    let t = std::time::Instant::now();
    let graph = import_file(model, &opts)?;
    let (graph, _) = mase_ir::pass::run_passes(graph, &["add_common_metadata"], &toml::Table::new())?;
    let elapsed = t.elapsed();
    mase_ir::checkpoint::export(&graph, output)?;
    println!(
        "imported {} ({} nodes, {} weight tensors) in {:.1} ms -> {}.json/.safetensors",
        model.display(),
        graph.len(),
        graph.weights.len(),
        elapsed.as_secs_f64() * 1e3,
        output.display()
    );
    Ok(())
}
