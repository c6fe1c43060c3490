//! `mase run`: execute a checkpoint on .npy inputs with the float interpreter (or quantized,
//! with a saturation report).

use std::path::{Path, PathBuf};

/// Runs the graph (float, or fixed point with `quantized`) and writes its outputs as .npy.
pub fn run(prefix: &Path, inputs: &[String], output: &Path, quantized: bool) -> anyhow::Result<()> {
    let graph = mase_ir::checkpoint::load(prefix)?;
    let inputs = super::args::npy_inputs(inputs, &graph)?;
    let mut sat = mase_ir::quant::SaturationCounter::new();
    let outs = if quantized {
        mase_ir::quant::run_quantized_counted(&graph, &inputs, &mut sat)?
    } else {
        mase_ir::interp::run_outputs(&graph, &inputs)?
    };
    for (k, t) in outs.iter().enumerate() {
        let path = output_path(output, k, outs.len());
        mase_ir::npy::write_npy(&path, t)?;
        println!("output {k}: shape {:?} -> {}", t.shape(), path.display());
    }
    if quantized {
        print_saturation(&sat.report());
    }
    Ok(())
}

/// Prints a saturation report: one `saturation` line per cast site that clipped or wrapped
/// (or one saying none did) on stdout, the warnings on stderr.
pub fn print_saturation(r: &mase_ir::quant::SaturationReport) {
    for line in r.lines() {
        println!("saturation {line}");
    }
    for w in &r.warnings {
        eprintln!("{w}");
    }
}

/// `OUT.npy` for a single output; `OUT.<k>.npy` when there are several.
pub fn output_path(output: &Path, k: usize, count: usize) -> PathBuf {
    if count == 1 {
        return output.to_path_buf();
    }
    let stem = output.with_extension("");
    PathBuf::from(format!("{}.{k}.npy", stem.display()))
}
