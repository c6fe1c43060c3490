//! Component commands: `mase components`, `mase bench component`, `mase synth component`, and
//! `mase synth DIR` (a whole emitted project).

use std::path::PathBuf;

use anyhow::{bail, Context};

/// Parses `--param KEY=VALUE` overrides (KEY = the component's SV parameter name).
pub fn param_overrides(specs: &[String]) -> anyhow::Result<Vec<(String, i64)>> {
    specs
        .iter()
        .map(|s| {
            let Some((k, v)) = s.split_once('=') else {
                bail!("--param '{s}': expected KEY=VALUE, e.g. DATA_IN_0_TENSOR_SIZE_DIM_0=64");
            };
            let v: i64 =
                v.trim().parse().with_context(|| format!("--param '{s}': the value must be an integer"))?;
            Ok((k.trim().to_string(), v))
        })
        .collect()
}

/// Lists the component registry with each component's parameters and defaults (or the README's
/// Markdown table of components).
pub fn list(json: bool, markdown: bool) -> anyhow::Result<()> {
    if markdown {
        print!("{}", markdown_table());
        return Ok(());
    }
    let infos = mase_sim::components();
    if json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
        return Ok(());
    }
    for c in mase_hwlib::registry() {
        println!("{} (module mase_{}): {}", c.name(), c.name(), c.description());
        for p in c.params() {
            let default = match p.default {
                mase_hwlib::ParamDefault::Value(v) => v.to_string(),
                mase_hwlib::ParamDefault::SameAs(o) => format!("= {o}"),
            };
            println!("    {:<32} {:>16}  {}", p.name, default, p.doc);
        }
    }
    Ok(())
}

/// Options of `mase bench component`.
pub struct BenchArgs {
    /// Component name.
    pub name: String,
    /// `KEY=VALUE` parameter overrides.
    pub params: Vec<String>,
    /// Rows of random data.
    pub rows: usize,
    /// Seed of data and stalls.
    pub seed: u64,
    /// Probability of a valid gap / ready drop per cycle in the checked run.
    pub stall_prob: f64,
    /// Print JSON.
    pub json: bool,
    /// Write a VCD around the first mismatch here.
    pub vcd: Option<PathBuf>,
}

/// Builds, simulates and reports one component instance.
pub fn bench(a: &BenchArgs) -> anyhow::Result<()> {
    let overrides = param_overrides(&a.params)?;
    let opts = mase_sim::BenchOptions { vcd: a.vcd.clone(), vcd_window: None };
    let r = mase_sim::bench_component_with(&a.name, &overrides, a.rows, a.seed, a.stall_prob, &opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!(
            "component        {} ({} rows, seed {}, stall probability {})",
            r.component, r.rows, r.seed, r.stall_prob
        );
        println!("bit_exact        {} ({} mismatches)", r.bit_exact, r.mismatches);
        for m in &r.first_mismatches {
            println!("  mismatch       {m:?}");
        }
        println!("latency_cycles   {} (model {})", r.latency_cycles, r.model_latency_cycles);
        println!("ii_cycles        {:.2} per row (model {})", r.ii_cycles, r.model_ii_cycles);
        println!("elements/cycle   {:.3} (output, steady state)", r.elements_per_cycle);
        println!("multipliers      {}", r.multipliers);
        println!("memory_bits      {}", r.memory_bits);
        println!("sim_cycles_per_s {:.0}", r.sim_cycles_per_s);
        println!("build_s          {:.2} (cache hit: {})", r.build_s, r.cache_hit);
        if let Some(v) = &r.vcd {
            println!("vcd              {}", v.display());
        }
    }
    if !r.bit_exact {
        bail!("{} is not bit-exact against its model: {} mismatching elements", r.component, r.mismatches);
    }
    Ok(())
}

/// Runs Yosys `synth_xilinx` on one component instance and reports resources.
pub fn synth(name: &str, params: &[String], json: bool) -> anyhow::Result<()> {
    let r = mase_sim::synth_component(name, &param_overrides(params)?)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let source = if r.cache_hit { "from the synthesis cache" } else { "yosys synth_xilinx" };
        println!("component {} ({source}, {:.1} s)", r.component, r.synth_s);
        let e = &r.estimate;
        println!("         measured  estimate  error");
        for (k, m, est) in [
            ("lut", r.lut, e.lut),
            ("ff", r.ff, e.ff),
            ("dsp", r.dsp, e.dsp),
            ("bram18", r.bram18, e.bram18),
            ("lutram", r.lutram, e.lutram),
        ] {
            println!("{k:<8} {m:>9} {est:>9}  {}", rel_error(est, m));
        }
    }
    Ok(())
}

/// `est` against `meas` as a signed percentage ("-" when both are zero).
fn rel_error(est: u64, meas: u64) -> String {
    match (est, meas) {
        (0, 0) => "-".into(),
        (_, 0) => "n/a".into(),
        _ => format!("{:+.0} %", 100.0 * (est as f64 - meas as f64) / meas as f64),
    }
}

/// Runs Yosys on an emitted project and prints per instance and in total the measured resources
/// next to the estimate of its `report.json`.
pub fn synth_project(dir: &std::path::Path, json: bool) -> anyhow::Result<()> {
    let r = mase_sim::synth_project(dir, true)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!(
        "project {} (top {}; yosys synth_xilinx, hierarchy kept, {:.1} s)",
        dir.display(),
        r.top,
        r.synth_s
    );
    println!(
        "{:<40} {:<15} {:>15} {:>13} {:>9} {:>11} {:>11}",
        "instance", "component", "LUT meas/est", "FF meas/est", "DSP", "BRAM18", "LUTRAM"
    );
    let row = |name: &str, comp: &str, m: &mase_hwlib::Resources, e: &mase_hwlib::Resources| {
        println!(
            "{:<40} {:<15} {:>15} {:>13} {:>9} {:>11} {:>11}",
            name,
            comp,
            format!("{}/{}", m.lut, e.lut),
            format!("{}/{}", m.ff, e.ff),
            format!("{}/{}", m.dsp, e.dsp),
            format!("{}/{}", m.bram18, e.bram18),
            format!("{}/{}", m.lutram, e.lutram),
        )
    };
    for i in &r.instances {
        row(&i.name, &i.component, &i.measured, &i.estimate);
    }
    row("(top glue)", "", &r.glue, &r.glue_estimate);
    row("total", "", &r.measured, &r.estimate);
    println!("total LUT error {}", rel_error(r.estimate.lut, r.measured.lut));
    Ok(())
}

/// The README's component table, made from the registry so the two cannot drift apart.
pub fn markdown_table() -> String {
    let mut out = String::from("| component | module | files | what it computes |\n|---|---|---|---|\n");
    for c in mase_hwlib::registry() {
        let files: Vec<String> = mase_hwlib::rtl_file_names(*c).iter().map(|f| format!("`{f}`")).collect();
        out += &format!(
            "| `{}` | `mase_{}` | {} | {} |\n",
            c.name(),
            c.name(),
            files.join(", "),
            c.description()
        );
    }
    out
}
