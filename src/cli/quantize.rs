//! `mase quantize` and `mase accuracy`: fixed-point quantization of a checkpoint, and quantized
//! against float outputs.

use std::path::Path;

use anyhow::Context;
use mase_ir::quant::{accuracy, run_quantized_counted, SaturationCounter};

/// Reads a TOML file into a table.
pub fn read_toml(path: &Path) -> anyhow::Result<toml::Table> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.parse::<toml::Table>().with_context(|| format!("parsing {}", path.display()))
}

/// Quantizes with a MASE-style config (top level, or nested under `[passes.quantize]` in a flow
/// config) and writes the new checkpoint.
pub fn quantize(prefix: &Path, config: &Path, output: &Path) -> anyhow::Result<()> {
    let table = read_toml(config)?;
    let table = if table.contains_key("passes") {
        mase_ir::quant::config::quantize_table_from_flow(&table)?
    } else {
        table
    };
    let graph = mase_ir::checkpoint::load(prefix)?;
    let mut args = toml::Table::new();
    args.insert("quantize".into(), toml::Value::Table(table));
    let (graph, info) = mase_ir::pass::run_passes(graph, &["quantize"], &args)?;
    mase_ir::checkpoint::export(&graph, output)?;
    println!("{}", serde_json::to_string_pretty(&info)?);
    eprintln!("quantized {} -> {}", prefix.display(), output.display());
    Ok(())
}

/// Runs float and quantized on the same inputs and prints the comparison and the saturation
/// report (JSON: the [`mase_ir::quant::AccuracyReport`] keys plus `saturation` and `warnings`).
/// With `against` (a checkpoint keeping the model's own quantizers) also the comparison with
/// that model's quantized execution (JSON `against`: the report's keys plus
/// `identical_elements`, the outputs equal to the last bit).
pub fn accuracy_cmd(
    prefix: &Path,
    inputs: &[String],
    labels: Option<&Path>,
    against: Option<&Path>,
    json: bool,
) -> anyhow::Result<()> {
    let graph = mase_ir::checkpoint::load(prefix)?;
    let inputs = super::args::npy_inputs(inputs, &graph)?;
    let float = mase_ir::interp::run_outputs(&graph, &inputs)?;
    let mut sat = SaturationCounter::new();
    let quant = run_quantized_counted(&graph, &inputs, &mut sat)?;
    let labels = labels.map(mase_ir::npy::read_npy).transpose()?;
    let r = accuracy(&float, &quant, labels.as_ref())?;
    let own = against
        .map(|p| {
            let compare = || -> mase_ir::Result<_> {
                let outs = mase_ir::interp::run_outputs(&mase_ir::checkpoint::load(p)?, &inputs)?;
                Ok((accuracy(&outs, &quant, labels.as_ref())?, identical_elements(&outs, &quant)))
            };
            compare().map_err(|e| anyhow::anyhow!("--against {}: {e}", p.display()))
        })
        .transpose()?;
    let sat = sat.report();
    if json {
        for w in &sat.warnings {
            eprintln!("{w}");
        }
        let mut v = serde_json::to_value(&r)?;
        if let Some((o, same)) = &own {
            v["against"] = serde_json::to_value(o)?;
            v["against"]["identical_elements"] = (*same).into();
        }
        v["saturation"] = serde_json::to_value(&sat.saturation)?;
        v["warnings"] = serde_json::to_value(&sat.warnings)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print_report("", &r, "float");
        if let Some((o, same)) = &own {
            println!(
                "against the model's own quantized execution ({}):",
                against.unwrap_or(prefix).display()
            );
            print_report("  ", o, "model");
            println!("  identical_elements {same} of {}", o.elements);
        }
        super::run::print_saturation(&sat);
    }
    Ok(())
}

/// Output elements equal in both runs, to the last bit.
fn identical_elements(a: &[mase_ir::Tensor], b: &[mase_ir::Tensor]) -> usize {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.to_f32().iter().zip(y.to_f32().iter()).filter(|(p, q)| p == q).count())
        .sum()
}

/// The report's lines, indented by `indent`; `reference` names the accuracy it is compared with.
fn print_report(indent: &str, r: &mase_ir::quant::AccuracyReport, reference: &str) {
    println!("{indent}max_abs_error      {:.6e}", r.max_abs_error);
    println!("{indent}mean_abs_error     {:.6e}", r.mean_abs_error);
    println!("{indent}cosine             {:.8}", r.cosine);
    println!("{indent}argmax_agreement   {:.4} ({} rows)", r.argmax_agreement, r.rows);
    if let (Some(f), Some(q)) = (r.float_accuracy, r.quantized_accuracy) {
        println!("{indent}{reference}_accuracy{} {f:.4}", " ".repeat(9usize.saturating_sub(reference.len())));
        println!("{indent}quantized_accuracy {q:.4}");
    }
}
