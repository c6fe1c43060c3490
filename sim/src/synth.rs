//! Whole-design synthesis: Yosys `synth_xilinx` on an emitted project directory with the
//! hierarchy kept, so that every instance of the top gets its own measured resources next to
//! the resource model's estimate from the project's `report.json` ([`synth_project`]). Also the
//! cell tally shared with [`crate::synth_component`].

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use mase_hwlib::Resources;
use serde::Serialize;

use crate::error::{Result, SimError};
use crate::tool;

/// LUTs per distributed-RAM primitive of the 7-series library.
fn lutram_luts(cell: &str) -> Option<u64> {
    Some(match cell {
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => 4,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM16X1S" | "RAM32X1S" | "RAM64X1S" | "RAM16X1D" => 1,
        _ => return None,
    })
}

/// Resources of a flat list of 7-series cells (type → count): LUT1..6 as LUTs, FDRE/FDSE/FDCE/FDPE
/// as FFs, DSP48*, RAMB18 (1) / RAMB36 (2) as 18k block RAMs, distributed RAMs in LUTs.
pub fn tally(cells: &BTreeMap<String, u64>) -> Resources {
    let mut r = Resources::default();
    for (cell, &n) in cells {
        let cell = cell.as_str();
        if cell.starts_with("LUT") && cell.len() == 4 {
            r.lut += n;
        } else if ["FDRE", "FDSE", "FDCE", "FDPE"].contains(&cell) {
            r.ff += n;
        } else if cell.starts_with("DSP48") {
            r.dsp += n;
        } else if cell.starts_with("RAMB36") {
            r.bram18 += 2 * n;
        } else if cell.starts_with("RAMB18") {
            r.bram18 += n;
        } else if let Some(l) = lutram_luts(cell) {
            r.lutram += n * l;
        }
    }
    r
}

/// Parses Yosys `stat` output: per module (`=== NAME ===` blocks) the cell type → count lines,
/// submodule instances included under their module names. The `design hierarchy` block is skipped.
pub fn parse_stat(log: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut in_cells = false;
    for line in log.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("=== ").and_then(|s| s.strip_suffix(" ===")) {
            // A later `stat` of the same module replaces the earlier one.
            current = (name != "design hierarchy").then(|| name.to_string());
            if let Some(m) = &current {
                out.insert(m.clone(), BTreeMap::new());
            }
            in_cells = false;
            continue;
        }
        let Some(module) = &current else { continue };
        if t.starts_with("Number of cells:") {
            in_cells = true;
            out.entry(module.clone()).or_default();
            continue;
        }
        if !in_cells {
            continue;
        }
        // "<CELL TYPE>   <count>"; the type may contain `$` and `\` (derived modules).
        let Some((cell, n)) = t.rsplit_once(char::is_whitespace) else {
            in_cells = false;
            continue;
        };
        match n.parse::<u64>() {
            Ok(n) => *out.entry(module.clone()).or_default().entry(cell.trim().to_string()).or_default() += n,
            Err(_) => in_cells = false,
        }
    }
    out
}

/// Flattened cell counts of `module`: its own primitive cells plus, recursively, those of the
/// modules it instantiates (each times its instance count).
pub fn flat_cells(
    module: &str,
    modules: &BTreeMap<String, BTreeMap<String, u64>>,
    memo: &mut HashMap<String, BTreeMap<String, u64>>,
) -> BTreeMap<String, u64> {
    if let Some(c) = memo.get(module) {
        return c.clone();
    }
    let mut out = BTreeMap::new();
    for (cell, &n) in modules.get(module).into_iter().flatten() {
        if modules.contains_key(cell) && cell != module {
            for (c, m) in flat_cells(cell, modules, memo) {
                *out.entry(c).or_default() += n * m;
            }
        } else {
            *out.entry(cell.clone()).or_default() += n;
        }
    }
    memo.insert(module.to_string(), out.clone());
    out
}

/// One instance of the top: measured and estimated resources.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceSynth {
    /// Instance name in the top.
    pub name: String,
    /// Component (from `report.json`; empty when the report does not list the instance).
    pub component: String,
    /// The module Yosys derived for it (parameters folded into the name).
    pub module: String,
    /// Yosys' count, submodules included.
    pub measured: Resources,
    /// The resource model's estimate from `report.json`.
    pub estimate: Resources,
}

/// Outcome of [`synth_project`].
#[derive(Debug, Clone, Serialize)]
pub struct ProjectSynthReport {
    /// The project directory.
    pub dir: PathBuf,
    /// Top module.
    pub top: String,
    /// Every instance of the top, in the order of `report.json` (instances missing from the
    /// report, e.g. of an older emit, after them by name).
    pub instances: Vec<InstanceSynth>,
    /// Cells of the top itself, outside every instance (clock buffer, any glue logic).
    pub glue: Resources,
    /// The modelled glue from `report.json` (`glue_resources`).
    pub glue_estimate: Resources,
    /// Whole-design measurement (instances + glue).
    pub measured: Resources,
    /// Whole-design estimate from `report.json` (instances + modelled glue).
    pub estimate: Resources,
    /// Every primitive cell type and count of the whole design.
    pub cells: BTreeMap<String, u64>,
    /// Seconds Yosys took.
    pub synth_s: f64,
}

fn resources_of(v: &serde_json::Value) -> Resources {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

/// The instances a project's `report.json` lists: the top's instance name (`<name>_inst`), the
/// component, and the whole entry.
pub(crate) fn report_instances(
    report: &serde_json::Value,
) -> impl Iterator<Item = (String, String, &serde_json::Value)> {
    report.get("instances").and_then(|v| v.as_array()).into_iter().flatten().map(|i| {
        let s = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        (format!("{}_inst", s("name")), s("component"), i)
    })
}

/// Reads `files.f`, `report.json` and the top name of an emitted project.
pub(crate) fn project_inputs(dir: &Path) -> Result<(Vec<String>, serde_json::Value, String)> {
    let ff = dir.join("files.f");
    if !ff.exists() && dir.join("device_0").join("files.f").exists() {
        return Err(SimError::Invalid(format!(
            "{} is a multi-device project: synthesize each device's project, e.g. `mase synth {}`",
            dir.display(),
            dir.join("device_0").display()
        )));
    }
    let list = std::fs::read_to_string(&ff).map_err(|e| {
        SimError::Invalid(format!(
            "{}: {e}; `mase synth DIR` takes a project written by `mase emit` or `mase flow`",
            ff.display()
        ))
    })?;
    let rp = dir.join("report.json");
    let text = std::fs::read_to_string(&rp).map_err(SimError::io("reading", &rp))?;
    let report: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| SimError::Invalid(format!("{}: not a mase report: {e}", rp.display())))?;
    let top = report
        .get("top")
        .and_then(|t| t.as_str())
        .ok_or_else(|| SimError::Invalid(format!("{}: no `top` field", rp.display())))?
        .to_string();
    let files = list.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect();
    Ok((files, report, top))
}

/// Runs `cmd` to completion; while it runs and `progress` is set and stderr is a terminal,
/// rewrites one status line on stderr with the elapsed seconds.
pub(crate) fn run_with_progress(mut cmd: Command, what: &str, progress: bool) -> Result<()> {
    let show = progress && std::io::stderr().is_terminal();
    let log =
        tempfile::NamedTempFile::new().map_err(SimError::io("creating temp file", std::env::temp_dir()))?;
    let err_file = log.reopen().map_err(SimError::io("opening", log.path()))?;
    cmd.stdout(Stdio::null()).stderr(err_file);
    let t0 = Instant::now();
    let mut child = cmd.spawn().map_err(|e| SimError::Command { cmd: what.into(), detail: e.to_string() })?;
    let status = loop {
        if let Some(s) =
            child.try_wait().map_err(|e| SimError::Command { cmd: what.into(), detail: e.to_string() })?
        {
            break s;
        }
        if show {
            eprint!("\r{what}: {} s", t0.elapsed().as_secs());
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    if show {
        eprintln!("\r{what}: done in {:.0} s", t0.elapsed().as_secs_f64());
    }
    if !status.success() {
        let text = std::fs::read_to_string(log.path()).unwrap_or_default();
        return Err(SimError::Command {
            cmd: what.into(),
            detail: format!("{status}\n{}", tool::tail(&text, 3000)),
        });
    }
    Ok(())
}

/// Synthesizes the emitted project in `dir` with Yosys `synth_xilinx -noiopad`, hierarchy kept
/// (so each instance of the top is counted on its own; cross-instance optimisation is lost,
/// which a flattened run would do), and sets each instance's measurement next to the estimate
/// the project's `report.json` holds. `progress`: show elapsed seconds on stderr when it is a
/// terminal.
pub fn synth_project(dir: &Path, progress: bool) -> Result<ProjectSynthReport> {
    let (files, report, top) = project_inputs(dir)?;
    let yosys = tool::yosys()?;
    let work = tempfile::tempdir().map_err(SimError::io("creating temp dir", std::env::temp_dir()))?;
    let (stat, cells) = (work.path().join("stat.txt"), work.path().join("cells.txt"));
    let sources: Vec<&String> = files.iter().filter(|f| !f.ends_with(".svh")).collect();
    // Yosys takes `tee -o` paths verbatim (quotes would become part of the name); temp-dir paths
    // have no spaces.
    let quote = |p: &Path| p.display().to_string();
    let mut script = String::new();
    // Paths are relative to the project (the top's MEM_DIR defaults to "mem/"): Yosys runs in it.
    script.push_str(&format!(
        "read_verilog -sv -I rtl {}\n",
        sources.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
    ));
    script.push_str(&format!("hierarchy -check -top {top}\nsynth_xilinx -noiopad -top {top}\n"));
    script.push_str(&format!("tee -q -o {} stat\n", quote(&stat)));
    script.push_str(&format!("tee -q -o {} dump {top}/c:*\n", quote(&cells)));
    let ys = work.path().join("synth.ys");
    std::fs::write(&ys, &script).map_err(SimError::io("writing", &ys))?;
    let mut cmd = yosys.command();
    cmd.current_dir(dir).arg("-q").arg("-s").arg(&ys);
    let t0 = Instant::now();
    run_with_progress(cmd, &format!("yosys synth_xilinx of {}", dir.display()), progress)?;
    let synth_s = t0.elapsed().as_secs_f64();
    let stat_text = std::fs::read_to_string(&stat).map_err(SimError::io("reading", &stat))?;
    let cells_text = std::fs::read_to_string(&cells).map_err(SimError::io("reading", &cells))?;
    let modules = parse_stat(&stat_text);
    let mut memo = HashMap::new();
    // `dump` lines: "  cell <type> \<instance name>".
    let mut inst_module: BTreeMap<String, String> = BTreeMap::new();
    for line in cells_text.lines() {
        let mut it = line.split_whitespace();
        if let (Some("cell"), Some(ty), Some(name)) = (it.next(), it.next(), it.next()) {
            if modules.contains_key(ty) {
                inst_module.insert(name.trim_start_matches('\\').to_string(), ty.to_string());
            }
        }
    }
    let estimates: Vec<(String, String, Resources)> = report_instances(&report)
        .map(|(inst, component, i)| {
            (inst, component, resources_of(i.get("resources").unwrap_or(&serde_json::Value::Null)))
        })
        .collect();
    let mut instances = Vec::new();
    for (name, component, estimate) in &estimates {
        if let Some(module) = inst_module.remove(name) {
            let measured = tally(&flat_cells(&module, &modules, &mut memo));
            instances.push(InstanceSynth {
                name: name.clone(),
                component: component.clone(),
                module,
                measured,
                estimate: *estimate,
            });
        }
    }
    for (name, module) in inst_module {
        let measured = tally(&flat_cells(&module, &modules, &mut memo));
        instances.push(InstanceSynth {
            name,
            component: String::new(),
            module,
            measured,
            estimate: Resources::default(),
        });
    }
    let own: BTreeMap<String, u64> = modules
        .get(&top)
        .into_iter()
        .flatten()
        .filter(|(c, _)| !modules.contains_key(*c))
        .map(|(c, n)| (c.clone(), *n))
        .collect();
    let all = flat_cells(&top, &modules, &mut memo);
    Ok(ProjectSynthReport {
        dir: dir.to_path_buf(),
        top,
        glue: tally(&own),
        glue_estimate: report.get("glue_resources").map(resources_of).unwrap_or_default(),
        measured: tally(&all),
        estimate: report.get("resources").map(resources_of).unwrap_or_default(),
        instances,
        cells: all,
        synth_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lutram_weights_cover_the_7_series_primitives() {
        assert_eq!(lutram_luts("RAM64M"), Some(4));
        assert_eq!(lutram_luts("RAM32X1D"), Some(2));
        assert_eq!(lutram_luts("FDRE"), None);
    }

    /// A hierarchical `stat`: a module used twice inside another is counted twice, the top's own
    /// cells are its glue, RAMB36 counts two 18k equivalents.
    #[test]
    fn stat_hierarchy_flattens_with_instance_counts() {
        let log = "=== $paramod$ab\\leaf ===\n\n   Number of cells:   3\n     LUT4   2\n     FDRE   1\n\n\
                   === mid ===\n\n   Number of cells:   3\n     $paramod$ab\\leaf   2\n     RAMB36E1   1\n\n\
                   === top ===\n\n   Number of cells:   2\n     mid   1\n     BUFG   1\n\n\
                   === design hierarchy ===\n\n   top   1\n     mid   1\n";
        let modules = parse_stat(log);
        assert_eq!(modules.len(), 3);
        let mut memo = HashMap::new();
        let all = tally(&flat_cells("top", &modules, &mut memo));
        assert_eq!((all.lut, all.ff, all.bram18), (4, 2, 2));
        assert_eq!(tally(&flat_cells("mid", &modules, &mut memo)).lut, 4);
    }
}
