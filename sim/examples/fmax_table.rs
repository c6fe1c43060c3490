//! Places and routes every library component at each of its test parameter sets
//! ([`mase_hwlib::Component::test_params`]) on a Lattice ECP5 ([`mase_sim::pnr_component`],
//! LFE5U-85F speed 6 unless told otherwise) and prints, per component, the slowest instance's
//! Fmax and where its critical path runs, as the README's Markdown table.
//!
//! `cargo run --release -p mase-sim --example fmax_table -- [--only NAME,…] [--save FILE]
//! [--load FILE,…] [--part P] [--speed S] [--freq MHz] [--instances]`
//!
//! `--save FILE` writes every measurement (JSON) so that `--load FILE` reprints the table without
//! placing anything again (`--load A,B,…` merges files, a component's samples taken from the last
//! file that has it; with `--save` the merge is written); `--instances` prints one row per
//! instance instead of per component.
//! `sim/examples/fmax_measured.json` holds one run's measurements (the components whose RTL this
//! work left unchanged); the README's table adds per-component runs of the changed ones.
//! Runs the tools serially (a few seconds to a minute per instance).

use std::collections::BTreeMap;

use mase_hwlib::{registry, resolve_params};
use mase_sim::pnr::{PnrOptions, PnrReport};

/// One placed and routed instance.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sample {
    component: String,
    overrides: Vec<(String, i64)>,
    fmax_mhz: f64,
    /// `start cell → end cell` of the critical path.
    path: String,
    logic_ns: f64,
    routing_ns: f64,
    lut4: u64,
    ff: u64,
    mult18: u64,
    dp16kd: u64,
}

fn sample(component: &str, overrides: Vec<(String, i64)>, r: &PnrReport) -> Sample {
    let used = |cell: &str| r.utilisation.iter().find(|u| u.cell == cell).map(|u| u.used).unwrap_or(0);
    let (path, logic_ns, routing_ns) = match &r.critical_path {
        Some(p) => (format!("{} → {}", p.start.cell, p.end.cell), p.logic_ns, p.routing_ns),
        None => (String::new(), 0.0, 0.0),
    };
    Sample {
        component: component.into(),
        overrides,
        fmax_mhz: r.fmax_mhz,
        path,
        logic_ns,
        routing_ns,
        lut4: used("TRELLIS_COMB"),
        ff: used("TRELLIS_FF"),
        mult18: used("MULT18X18D"),
        dp16kd: used("DP16KD"),
    }
}

/// The value after `flag` on the command line.
fn arg(args: &[String], flag: &str) -> Option<String> {
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only: Option<Vec<String>> = arg(&args, "--only").map(|s| s.split(',').map(String::from).collect());
    let mut opts = PnrOptions::default();
    if let Some(p) = arg(&args, "--part") {
        opts.part = p;
    }
    if let Some(s) = arg(&args, "--speed") {
        opts.speed = s.parse()?;
    }
    if let Some(f) = arg(&args, "--freq") {
        opts.freq_mhz = f.parse()?;
    }
    let samples: Vec<Sample> = match arg(&args, "--load") {
        Some(files) => {
            // Later files replace earlier ones component by component, so a re-measured
            // component's file can be laid over the whole table's.
            let mut all: Vec<Sample> = Vec::new();
            for file in files.split(',') {
                let these: Vec<Sample> = serde_json::from_str(&std::fs::read_to_string(file)?)?;
                all.retain(|s| !these.iter().any(|t| t.component == s.component));
                all.extend(these);
            }
            all
        }
        None => {
            let mut out = Vec::new();
            for c in registry() {
                if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == c.name())) {
                    continue;
                }
                for t in c.test_params() {
                    let o: Vec<(String, i64)> = t.iter().map(|(k, v)| (k.to_string(), *v)).collect();
                    if resolve_params(*c, &o).is_err() {
                        continue;
                    }
                    // An instance that does not fit the part (or fails otherwise) is reported and
                    // left out of the table, so one does not stop the others.
                    match mase_sim::pnr_component(c.name(), &o, &opts, false) {
                        Ok(r) => {
                            let s = sample(c.name(), o, &r);
                            eprintln!("{:<16} {:>7.1} MHz  {}", s.component, s.fmax_mhz, s.path);
                            out.push(s);
                        }
                        Err(e) => eprintln!("{:<16} skipped: {e}", c.name()),
                    }
                }
            }
            out
        }
    };
    if let Some(file) = arg(&args, "--save") {
        std::fs::write(file, serde_json::to_string_pretty(&samples)? + "\n")?;
    }
    if args.iter().any(|a| a == "--instances") {
        println!("| component | parameters | Fmax MHz | logic / routing ns | LUT4 | FF | MULT18 | DP16KD | critical path |");
        println!("|---|---|---|---|---|---|---|---|---|");
        for s in &samples {
            let p: Vec<String> = s.overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
            println!(
                "| {} | {} | {:.1} | {:.1} / {:.1} | {} | {} | {} | {} | {} |",
                s.component,
                p.join(" "),
                s.fmax_mhz,
                s.logic_ns,
                s.routing_ns,
                s.lut4,
                s.ff,
                s.mult18,
                s.dp16kd,
                s.path
            );
        }
        return Ok(());
    }
    let mut by: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for s in &samples {
        by.entry(&s.component).or_default().push(s);
    }
    println!("| component | instances | slowest Fmax MHz | fastest | logic / routing ns (slowest) | its critical path |");
    println!("|---|---|---|---|---|---|");
    let mut worst = f64::INFINITY;
    for (c, v) in &by {
        let slow = v.iter().min_by(|a, b| a.fmax_mhz.total_cmp(&b.fmax_mhz)).expect("non-empty");
        let fast = v.iter().map(|s| s.fmax_mhz).fold(0.0, f64::max);
        worst = worst.min(slow.fmax_mhz);
        println!(
            "| `{c}` | {} | {:.1} | {:.1} | {:.1} / {:.1} | {} |",
            v.len(),
            slow.fmax_mhz,
            fast,
            slow.logic_ns,
            slow.routing_ns,
            slow.path
        );
    }
    eprintln!(
        "{} instances of {} components on {}-{}: slowest {:.1} MHz",
        samples.len(),
        by.len(),
        opts.part,
        opts.speed,
        worst
    );
    Ok(())
}
