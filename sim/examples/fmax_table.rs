//! Places and routes every library component at each of its test parameter sets
//! ([`mase_hwlib::Component::test_params`]) on a Lattice ECP5 ([`mase_sim::pnr_component`],
//! LFE5U-85F speed 6 unless told otherwise) and prints, per component, the slowest instance's
//! Fmax and where its critical path runs, as the README's Markdown table.
//!
//! `cargo run --release -p mase-sim --example fmax_table -- [--only NAME,…] [--sets I,…]
//! [--save FILE] [--load FILE,…] [--part P] [--speed S] [--freq MHz] [--instances]`
//!
//! `--sets I,…` measures only those test sets of each component (their 0-based positions in
//! `test_params`, the `set` column of `--instances`). `--save FILE` keeps the measurements
//! (JSON) and merges: an instance already in FILE (same component and parameters) is replaced,
//! the others stay, and the file is written after every instance, so component-by-component runs
//! (`--only A --save F`, then `--only B --save F`) build one table and an interrupted run keeps
//! what it measured. `--load A,B,…` reprints the table without placing anything (later files
//! replace earlier ones instance by instance; with `--save` the merge is written);
//! `--instances` prints one row per instance instead of per component. An instance that does
//! not fit the part (or fails otherwise) is kept with Fmax 0 and the reason, and left out of the
//! per-component figures. A sample below the target keeps every step of its critical path.
//! `sim/examples/fmax_measured.json` holds the library's measurements (one file, assembled
//! component by component with `--save`).
//! Runs the tools serially (a few seconds to several minutes per instance).

use std::collections::BTreeMap;

use mase_hwlib::{registry, resolve_params};
use mase_sim::pnr::{PnrOptions, PnrReport};

/// One placed and routed instance.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Sample {
    component: String,
    /// Position of the parameter set in the component's `test_params` (absent in files written
    /// before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    set: Option<usize>,
    overrides: Vec<(String, i64)>,
    /// 0 when the instance was not placed and routed ([`Sample::failed`] says why).
    fmax_mhz: f64,
    /// `start cell → end cell` of the critical path.
    path: String,
    logic_ns: f64,
    routing_ns: f64,
    lut4: u64,
    ff: u64,
    mult18: u64,
    dp16kd: u64,
    /// Why the instance has no Fmax (it does not fit the part, a tool failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failed: Option<String>,
    /// Every step of the critical path (`kind delay from → to`), kept when the Fmax is below the
    /// target, where the path is what to fix.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    steps: Vec<String>,
}

impl Sample {
    /// Whether `other` measured the same instance (a later measurement replaces it).
    fn same_instance(&self, other: &Sample) -> bool {
        self.component == other.component && self.overrides == other.overrides
    }
}

/// `samples` with `newer` laid over them instance by instance, in `samples`' order (new
/// instances appended).
fn merge(samples: &mut Vec<Sample>, newer: Vec<Sample>) {
    for s in newer {
        match samples.iter_mut().find(|t| t.same_instance(&s)) {
            Some(t) => *t = s,
            None => samples.push(s),
        }
    }
}

/// The samples kept in `file` (none when it does not exist yet).
fn read_samples(file: &str) -> Result<Vec<Sample>, Box<dyn std::error::Error>> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(serde_json::from_str(&text)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

fn write_samples(file: &str, samples: &[Sample]) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::write(file, serde_json::to_string_pretty(samples)? + "\n")?;
    Ok(())
}

fn sample(component: &str, set: usize, overrides: Vec<(String, i64)>, r: &PnrReport) -> Sample {
    let used = |cell: &str| r.utilisation.iter().find(|u| u.cell == cell).map(|u| u.used).unwrap_or(0);
    let (path, logic_ns, routing_ns) = match &r.critical_path {
        Some(p) => (format!("{} → {}", p.start.cell, p.end.cell), p.logic_ns, p.routing_ns),
        None => (String::new(), 0.0, 0.0),
    };
    let steps = match &r.critical_path {
        Some(p) if r.fmax_mhz < r.options.freq_mhz => {
            p.steps.iter().map(|s| format!("{} {:.2} {} → {}", s.kind, s.delay_ns, s.from, s.to)).collect()
        }
        _ => Vec::new(),
    };
    Sample {
        component: component.into(),
        set: Some(set),
        overrides,
        fmax_mhz: r.fmax_mhz,
        path,
        logic_ns,
        routing_ns,
        lut4: used("TRELLIS_COMB"),
        ff: used("TRELLIS_FF"),
        mult18: used("MULT18X18D"),
        dp16kd: used("DP16KD"),
        failed: None,
        steps,
    }
}

/// An instance that has no Fmax, and why.
fn failure(component: &str, set: usize, overrides: Vec<(String, i64)>, why: String) -> Sample {
    Sample {
        component: component.into(),
        set: Some(set),
        overrides,
        fmax_mhz: 0.0,
        path: String::new(),
        logic_ns: 0.0,
        routing_ns: 0.0,
        lut4: 0,
        ff: 0,
        mult18: 0,
        dp16kd: 0,
        failed: Some(why),
        steps: Vec::new(),
    }
}

/// Keeps the samples of parameter sets still among their component's test sets, numbered by
/// their position there (a file from before a set was changed, added or removed would otherwise
/// carry a figure for an instance the library no longer tests).
fn current_sets(samples: &mut Vec<Sample>) {
    samples.retain_mut(|s| {
        let set = registry().iter().find(|c| c.name() == s.component).and_then(|c| {
            c.test_params().iter().position(|t| {
                t.len() == s.overrides.len()
                    && t.iter().zip(&s.overrides).all(|((k, v), (n, w))| k == n && v == w)
            })
        });
        if set.is_none() {
            eprintln!("{}: dropping a sample of a set no longer tested: {:?}", s.component, s.overrides);
        }
        s.set = set;
        set.is_some()
    });
}

/// The value after `flag` on the command line.
fn arg(args: &[String], flag: &str) -> Option<String> {
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only: Option<Vec<String>> = arg(&args, "--only").map(|s| s.split(',').map(String::from).collect());
    let sets: Option<Vec<usize>> =
        arg(&args, "--sets").map(|s| s.split(',').map(str::parse).collect()).transpose()?;
    let save = arg(&args, "--save");
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
            let mut all: Vec<Sample> = Vec::new();
            for file in files.split(',') {
                let these: Vec<Sample> = serde_json::from_str(&std::fs::read_to_string(file)?)?;
                merge(&mut all, these);
            }
            current_sets(&mut all);
            if let Some(file) = &save {
                write_samples(file, &all)?;
            }
            all
        }
        None => {
            // What the save file already holds, so each instance measured here is merged into it
            // (and written at once) without losing the others.
            let mut kept = match &save {
                Some(file) => read_samples(file)?,
                None => Vec::new(),
            };
            let mut out = Vec::new();
            for c in registry() {
                if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == c.name())) {
                    continue;
                }
                for (i, t) in c.test_params().iter().enumerate() {
                    if sets.as_ref().is_some_and(|s| !s.contains(&i)) {
                        continue;
                    }
                    let o: Vec<(String, i64)> = t.iter().map(|(k, v)| (k.to_string(), *v)).collect();
                    if resolve_params(*c, &o).is_err() {
                        continue;
                    }
                    // An instance that does not fit the part (or fails otherwise) is recorded
                    // with its reason, so one does not stop the others.
                    let s = match mase_sim::pnr_component(c.name(), &o, &opts, false) {
                        Ok(r) => {
                            let s = sample(c.name(), i, o, &r);
                            eprintln!("{:<16} {i:>2} {:>7.1} MHz  {}", s.component, s.fmax_mhz, s.path);
                            s
                        }
                        Err(e) => {
                            eprintln!("{:<16} {i:>2} failed: {e}", c.name());
                            failure(c.name(), i, o, e.to_string())
                        }
                    };
                    if let Some(file) = &save {
                        merge(&mut kept, vec![s.clone()]);
                        write_samples(file, &kept)?;
                    }
                    out.push(s);
                }
            }
            out
        }
    };
    if args.iter().any(|a| a == "--instances") {
        println!("| component | set | parameters | Fmax MHz | logic / routing ns | LUT4 | FF | MULT18 | DP16KD | critical path |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for s in &samples {
            let p: Vec<String> = s.overrides.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let set = s.set.map(|i| i.to_string()).unwrap_or_default();
            let fmax = match &s.failed {
                Some(why) => format!("– ({})", why.lines().next().unwrap_or_default()),
                None => format!("{:.1}", s.fmax_mhz),
            };
            println!(
                "| {} | {set} | {} | {fmax} | {:.1} / {:.1} | {} | {} | {} | {} | {} |",
                s.component,
                p.join(" "),
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
    let mut failed: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &samples {
        match s.failed {
            Some(_) => *failed.entry(&s.component).or_default() += 1,
            None => by.entry(&s.component).or_default().push(s),
        }
    }
    println!("| component | instances | slowest Fmax MHz | fastest | logic / routing ns (slowest) | its critical path |");
    println!("|---|---|---|---|---|---|");
    let mut worst = f64::INFINITY;
    for (c, v) in &by {
        let slow = v.iter().min_by(|a, b| a.fmax_mhz.total_cmp(&b.fmax_mhz)).expect("non-empty");
        let fast = v.iter().map(|s| s.fmax_mhz).fold(0.0, f64::max);
        worst = worst.min(slow.fmax_mhz);
        let unplaced = match failed.get(c) {
            Some(n) => format!(" (+{n} not placed)"),
            None => String::new(),
        };
        println!(
            "| `{c}` | {}{unplaced} | {:.1} | {:.1} | {:.1} / {:.1} | {} |",
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
