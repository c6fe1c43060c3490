//! `mase synth … --target ecp5`: place and route of a project or a component on a Lattice ECP5,
//! printed as Fmax, critical path, utilisation and times (or `--json`).

use std::path::Path;

use mase_sim::pnr::{PnrOptions, PnrReport};

/// What `mase synth` synthesizes for.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Yosys `synth_xilinx` (7-series): resource counts against the resource model.
    Xilinx,
    /// Yosys `synth_ecp5` then nextpnr-ecp5: Fmax, critical path and utilisation of the part.
    Ecp5,
}

/// The target options of `mase synth`.
#[derive(clap::Args, Clone, Debug)]
pub struct TargetArgs {
    /// `xilinx` (resource counts, the default) or `ecp5` (place and route with nextpnr-ecp5).
    #[arg(long, value_enum, default_value_t = Target::Xilinx)]
    pub target: Target,
    /// ECP5 part (with `--target ecp5`; default LFE5U-85F).
    #[arg(long)]
    pub part: Option<String>,
    /// ECP5 speed grade 6, 7 or 8 (with `--target ecp5`; default 6).
    #[arg(long)]
    pub speed: Option<u8>,
    /// ECP5 package (with `--target ecp5`; default CABGA381).
    #[arg(long)]
    pub package: Option<String>,
    /// The clock to aim for, MHz (with `--target ecp5`; default 125).
    #[arg(long)]
    pub freq: Option<f64>,
    /// The placer's seed (with `--target ecp5`; default 1).
    #[arg(long)]
    pub seed: Option<u64>,
}

impl TargetArgs {
    /// The place-and-route options for `--target ecp5`, `None` for `xilinx` (refusing ECP5
    /// options there, which would otherwise be silently ignored).
    pub fn ecp5(&self) -> anyhow::Result<Option<PnrOptions>> {
        if self.target == Target::Xilinx {
            let given = [
                ("--part", self.part.is_some()),
                ("--speed", self.speed.is_some()),
                ("--package", self.package.is_some()),
                ("--freq", self.freq.is_some()),
                ("--seed", self.seed.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
                anyhow::bail!("{flag} is a place-and-route option: add `--target ecp5`");
            }
            return Ok(None);
        }
        let d = PnrOptions::default();
        Ok(Some(PnrOptions {
            part: self.part.clone().unwrap_or(d.part),
            speed: self.speed.unwrap_or(d.speed),
            package: self.package.clone().unwrap_or(d.package),
            freq_mhz: self.freq.unwrap_or(d.freq_mhz),
            seed: self.seed.unwrap_or(d.seed),
        }))
    }
}

/// Places and routes one component instance and prints the report.
pub fn component(
    name: &str,
    overrides: &[(String, i64)],
    opts: &PnrOptions,
    json: bool,
) -> anyhow::Result<()> {
    let r = mase_sim::pnr_component(name, overrides, opts, true)?;
    print(&format!("component {name}"), &r, json)
}

/// Places and routes the project in `dir` (which keeps the report in the project,
/// [`mase_sim::pnr::project_report_path`]) and prints the report.
pub fn project(dir: &Path, opts: &PnrOptions, json: bool) -> anyhow::Result<()> {
    let r = mase_sim::pnr_project(dir, opts, true)?;
    let path = mase_sim::pnr::project_report_path(dir);
    print(&format!("project {} (top {})", dir.display(), r.top), &r, json)?;
    if !json {
        println!("wrote      {}", path.display());
    }
    Ok(())
}

/// Prints `r` as text headed by `what`, or as JSON.
fn print(what: &str, r: &PnrReport, json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    let o = &r.options;
    println!(
        "{what} on {}-{} {}, out of context, aiming at {} MHz (seed {})",
        o.part, o.speed, o.package, o.freq_mhz, o.seed
    );
    let verdict = if r.met { "met" } else { "not met" };
    println!("fmax       {:.1} MHz ({verdict})", r.fmax_mhz);
    if let Some(p) = &r.critical_path {
        let at = |pl: &mase_sim::pnr::Place| match (pl.instance.as_str(), pl.component.as_str()) {
            ("", _) => "top".to_string(),
            (i, "") => i.to_string(),
            (i, c) => format!("{i}, {c}"),
        };
        println!(
            "critical   {:.2} ns = {:.2} logic + {:.2} routing, from {} ({}) to {} ({})",
            p.logic_ns + p.routing_ns,
            p.logic_ns,
            p.routing_ns,
            p.start.cell,
            at(&p.start),
            p.end.cell,
            at(&p.end)
        );
        for s in &p.steps {
            match &s.net {
                Some(net) => println!("  {:<9} {:>6.2} ns  net {net} to {}", s.kind, s.delay_ns, s.to),
                None => println!("  {:<9} {:>6.2} ns  {}", s.kind, s.delay_ns, s.to),
            }
        }
    }
    let used: Vec<String> = r
        .utilisation
        .iter()
        .map(|u| {
            let pct = if u.available == 0 { 0.0 } else { 100.0 * u.used as f64 / u.available as f64 };
            format!("{} {}/{} ({pct:.1} %)", u.resource, u.used, u.available)
        })
        .collect();
    println!("uses       {}", used.join(", "));
    println!(
        "time       synth_ecp5 {:.1} s, nextpnr-ecp5 {:.1} s ({})",
        r.synth_s,
        r.pnr_s,
        r.tools.join("; ")
    );
    Ok(())
}
