//! Place and route on a Lattice ECP5: Yosys `synth_ecp5` (flattened) then `nextpnr-ecp5` with
//! the part's timing database, for an emitted project ([`pnr_project`]) or one component
//! instance ([`pnr_component`]). The report gives the achieved clock frequency, the critical path
//! (start and end cell, the instance and component each lies in, logic and routing delay) and
//! the utilisation of the part.
//!
//! Between the two, [`crate::bram_outreg`] folds each register that follows a block-RAM read into
//! the block RAM's output register (Yosys 0.23 leaves every `DP16KD` without it), a
//! semantics-preserving netlist pass.
//!
//! The design is placed *out of context* (`--out-of-context`: no I/O buffers, ports left
//! unconstrained), as a block inside a larger FPGA design is: an accelerator's streams are
//! wider than the package has pins, and the figure that matters is the register-to-register
//! Fmax of the block itself.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::error::{Result, SimError};
use crate::synth::{project_inputs, report_instances, run_with_progress};
use crate::tool;

/// An ECP5 part as nextpnr-ecp5 knows it: the name and the device flag.
const ECP5_PARTS: &[(&str, &str)] = &[
    ("LFE5U-12F", "--12k"),
    ("LFE5U-25F", "--25k"),
    ("LFE5U-45F", "--45k"),
    ("LFE5U-85F", "--85k"),
    ("LFE5UM-25F", "--um-25k"),
    ("LFE5UM-45F", "--um-45k"),
    ("LFE5UM-85F", "--um-85k"),
    ("LFE5UM5G-25F", "--um5g-25k"),
    ("LFE5UM5G-45F", "--um5g-45k"),
    ("LFE5UM5G-85F", "--um5g-85k"),
];

/// The speed grades nextpnr-ecp5 has timing for (6 slowest, 8 fastest).
const SPEED_GRADES: [u8; 3] = [6, 7, 8];

/// What to place and route on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PnrOptions {
    /// The part (`LFE5U-85F`, …; see [`ecp5_parts`]).
    pub part: String,
    /// Speed grade (6, 7 or 8).
    pub speed: u8,
    /// Package (`CABGA381`, …); out of context it only names the die's variant.
    pub package: String,
    /// The clock the placer and router aim for, MHz. The achieved Fmax is reported whether it is
    /// met or not.
    pub freq_mhz: f64,
    /// The placer's random seed (same seed, same result).
    pub seed: u64,
}

impl Default for PnrOptions {
    /// LFE5U-85F, speed 6, CABGA381, aiming at 125 MHz, seed 1.
    fn default() -> Self {
        PnrOptions {
            part: "LFE5U-85F".into(),
            speed: 6,
            package: "CABGA381".into(),
            freq_mhz: 125.0,
            seed: 1,
        }
    }
}

/// The ECP5 parts `--part` accepts.
pub fn ecp5_parts() -> Vec<&'static str> {
    ECP5_PARTS.iter().map(|(n, _)| *n).collect()
}

impl PnrOptions {
    /// Checks the part, speed grade and target; the part's nextpnr device flag.
    fn device_flag(&self) -> Result<&'static str> {
        let flag =
            ECP5_PARTS.iter().find(|(n, _)| n.eq_ignore_ascii_case(&self.part)).map(|(_, f)| *f).ok_or_else(
                || {
                    SimError::Invalid(format!(
                        "--part {}: not an ECP5 part nextpnr-ecp5 knows (known: {})",
                        self.part,
                        ecp5_parts().join(", ")
                    ))
                },
            )?;
        if !SPEED_GRADES.contains(&self.speed) {
            return Err(SimError::Invalid(format!(
                "--speed {}: ECP5 speed grades are 6, 7 and 8",
                self.speed
            )));
        }
        if !(self.freq_mhz.is_finite() && self.freq_mhz > 0.0) {
            return Err(SimError::Invalid(format!("--freq {}: give a positive clock in MHz", self.freq_mhz)));
        }
        Ok(flag)
    }
}

/// One step of the critical path.
#[derive(Debug, Clone, Serialize)]
pub struct PathStep {
    /// `clk-to-q`, `logic`, `routing` or `setup`.
    pub kind: String,
    /// Delay, ns.
    pub delay_ns: f64,
    /// Cell and port it starts at (`cell.port`).
    pub from: String,
    /// Cell and port it ends at.
    pub to: String,
    /// The net, for routing steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<String>,
}

/// Where a cell of the flattened netlist lies: the top's instance and its component.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Place {
    /// The flattened cell name.
    pub cell: String,
    /// The instance of the top it lies in (empty: the top's own logic).
    pub instance: String,
    /// That instance's library component (empty when unknown).
    pub component: String,
}

/// The slowest register-to-register path.
#[derive(Debug, Clone, Serialize)]
pub struct CriticalPath {
    /// Where it starts (a register or memory output).
    pub start: Place,
    /// Where it ends (a register or memory input).
    pub end: Place,
    /// Delay in cells (clock-to-out, logic, setup), ns.
    pub logic_ns: f64,
    /// Delay in routing, ns.
    pub routing_ns: f64,
    /// Every step, start first.
    pub steps: Vec<PathStep>,
}

/// One resource of the part.
#[derive(Debug, Clone, Serialize)]
pub struct Utilisation {
    /// What it is (`LUT4`, `FF`, `MULT18X18D`, `DP16KD`, `distributed RAM`).
    pub resource: String,
    /// nextpnr's cell type (`TRELLIS_COMB`, …).
    pub cell: String,
    /// Used.
    pub used: u64,
    /// Available on the part.
    pub available: u64,
}

/// What place and route of one design gave.
#[derive(Debug, Clone, Serialize)]
pub struct PnrReport {
    /// The design's top module.
    pub top: String,
    /// The component, for [`pnr_component`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// Part, speed grade, package, target and seed.
    pub options: PnrOptions,
    /// Achieved Fmax of the slowest clock, MHz.
    pub fmax_mhz: f64,
    /// Whether the target was met.
    pub met: bool,
    /// The critical path, when nextpnr reported one.
    pub critical_path: Option<CriticalPath>,
    /// LUT4, FF, MULT18X18D, DP16KD and distributed RAM against the part.
    pub utilisation: Vec<Utilisation>,
    /// Block-RAM read ports whose following register went into the block RAM's output register
    /// ([`crate::bram_outreg::absorb_output_registers`]).
    pub bram_outregs: usize,
    /// Seconds `synth_ecp5` took.
    pub synth_s: f64,
    /// Seconds nextpnr-ecp5 took.
    pub pnr_s: f64,
    /// The Yosys and nextpnr-ecp5 used.
    pub tools: Vec<String>,
}

/// The resources of the report, in this order, with nextpnr's cell type for each.
const RESOURCES: &[(&str, &str)] = &[
    ("LUT4", "TRELLIS_COMB"),
    ("FF", "TRELLIS_FF"),
    ("MULT18X18D", "MULT18X18D"),
    ("DP16KD", "DP16KD"),
    ("distributed RAM", "TRELLIS_RAMW"),
];

/// Places and routes the emitted project in `dir` (see the module doc) and keeps the report in
/// the project ([`project_report_path`], where `mase sim` finds the Fmax). `progress`: a status
/// line with the elapsed seconds on stderr while each tool runs, when it is a terminal.
pub fn pnr_project(dir: &Path, opts: &PnrOptions, progress: bool) -> Result<PnrReport> {
    let (files, report, top) = project_inputs(dir)?;
    let sources: Vec<&str> = files.iter().filter(|f| !f.ends_with(".svh")).map(String::as_str).collect();
    // Paths are relative to the project (the top's MEM_DIR defaults to "mem/"): Yosys runs in it.
    let script = format!("read_verilog -sv -I rtl {}\nhierarchy -check -top {top}\n", sources.join(" "));
    let instances: Vec<(String, String)> = report_instances(&report).map(|(i, c, _)| (i, c)).collect();
    let work = tempfile::tempdir().map_err(SimError::io("creating temp dir", std::env::temp_dir()))?;
    let r = run(Some(dir), work.path(), &script, &top, &instances, None, opts, progress)?;
    let kept = project_report_path(dir);
    let text = serde_json::to_string_pretty(&r).expect("reports serialize") + "\n";
    std::fs::write(&kept, text).map_err(SimError::io("writing", &kept))?;
    Ok(r)
}

/// Places and routes one component instance (parameters `overrides` over the defaults, memories
/// with [`crate::synth_stimulus`]'s contents) inside [`registered_wrapper`], so that the paths
/// from its inputs and to its outputs are timed as a stitched design times them (every stream
/// of a design is driven by, and drives, a register).
pub fn pnr_component(
    name: &str,
    overrides: &[(String, i64)],
    opts: &PnrOptions,
    progress: bool,
) -> Result<PnrReport> {
    let (c, p, _, script, top) = crate::bench::component_yosys_elaboration(name, overrides)?;
    let work = tempfile::tempdir().map_err(SimError::io("creating temp dir", std::env::temp_dir()))?;
    let wrapper = work.path().join("wrapper.sv");
    let text = registered_wrapper(&top, &crate::component_ports(c, &p));
    std::fs::write(&wrapper, text).map_err(SimError::io("writing", &wrapper))?;
    let script = format!("{script}read_verilog -sv {}\nhierarchy -check -top {WRAPPER}\n", wrapper.display());
    let instances = [(WRAPPED.to_string(), c.name().to_string())];
    run(None, work.path(), &script, WRAPPER, &instances, Some(c.name()), opts, progress)
}

/// The module [`registered_wrapper`] writes, and its instance of the component.
const WRAPPER: &str = "mase_pnr_registered";
const WRAPPED: &str = "dut";

/// A module with the ports of `top` (`clk`, `rst` and the streams) that registers every input
/// before `top` and every output of `top` before its own port; `rst` goes straight through.
pub fn registered_wrapper(top: &str, ports: &[crate::shim::Port]) -> String {
    use crate::shim::PortDir;
    let decl = |p: &crate::shim::Port| format!("logic [{}:0] {}", p.width.max(1) - 1, p.name);
    let mut heads = Vec::new();
    let mut body = String::new();
    let mut conns = Vec::new();
    for p in ports {
        let dir = if p.dir == PortDir::In { "input " } else { "output" };
        heads.push(format!("    {dir} {}", decl(p)));
        if p.name == "clk" || p.name == "rst" {
            conns.push(format!("      .{0}({0})", p.name));
            continue;
        }
        body += &format!("  logic [{}:0] {}_r;\n", p.width.max(1) - 1, p.name);
        body += &match p.dir {
            PortDir::In => format!("  always_ff @(posedge clk) {0}_r <= {0};\n", p.name),
            PortDir::Out => format!("  always_ff @(posedge clk) {0} <= {0}_r;\n", p.name),
        };
        conns.push(format!("      .{0}({0}_r)", p.name));
    }
    format!(
        "// Every stream port of {top} registered (generated by mase-sim for place and route).\n\
         module {WRAPPER} (\n{}\n);\n{body}  {top} {WRAPPED} (\n{}\n  );\nendmodule\n",
        heads.join(",\n"),
        conns.join(",\n")
    )
}

/// What the ECP5 flow's Yosys script starts with, before any source is read: the define
/// `MASE_TARGET_ECP5`, under which library RTL instantiates ECP5 primitives where Yosys 0.23 would
/// not infer them as well (`rtl/mase_dsp_mul.sv`: MULT18X18D with its input and output registers),
/// and the ECP5 cell library as blackboxes, so that `hierarchy -check` knows those primitives
/// (`synth_ecp5` reads the same library again, which replaces blackboxes silently).
const ECP5_PRELUDE: &str = "verilog_defines -DMASE_TARGET_ECP5\nread_verilog -lib +/ecp5/cells_bb.v\n";

/// `synth_ecp5` of the elaborated `script` (run in `cwd`, else `work`) into `work`, then
/// nextpnr-ecp5, then the report. `instances`: the top's instance names and components.
#[allow(clippy::too_many_arguments)]
fn run(
    cwd: Option<&Path>,
    work: &Path,
    script: &str,
    top: &str,
    instances: &[(String, String)],
    component: Option<&str>,
    opts: &PnrOptions,
    progress: bool,
) -> Result<PnrReport> {
    let device = opts.device_flag()?;
    let yosys = tool::yosys()?;
    let nextpnr = tool::nextpnr_ecp5()?;
    // Yosys and nextpnr take paths verbatim; temp-dir paths have no spaces.
    let netlist = work.join("netlist.json");
    let ys = work.join("synth.ys");
    let script = format!("{ECP5_PRELUDE}{script}synth_ecp5 -top {top} -json {}\n", netlist.display());
    std::fs::write(&ys, script).map_err(SimError::io("writing", &ys))?;
    let mut cmd = yosys.command();
    cmd.current_dir(cwd.unwrap_or(work)).arg("-q").arg("-s").arg(&ys);
    let t0 = Instant::now();
    run_with_progress(cmd, &format!("yosys synth_ecp5 of {top}"), progress)?;
    let bram_outregs = fold_output_registers(&netlist)?;
    let synth_s = t0.elapsed().as_secs_f64();

    let (report, log) = (work.join("report.json"), work.join("nextpnr.log"));
    let mut cmd = nextpnr.command();
    cmd.current_dir(work)
        .args([device, "--package", &opts.package, "--speed", &opts.speed.to_string()])
        .arg("--json")
        .arg(&netlist)
        .args(["--freq", &format!("{}", opts.freq_mhz), "--seed", &opts.seed.to_string()])
        .args(["--out-of-context", "--timing-allow-fail", "-q"])
        .arg("--report")
        .arg(&report)
        .arg("--log")
        .arg(&log);
    let t0 = Instant::now();
    let what = format!("nextpnr-ecp5 {device} of {top}");
    if let Err(e) = run_with_progress(cmd, &what, progress) {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let over = overflows(&text);
        if !over.is_empty() {
            return Err(SimError::Invalid(format!(
                "{top} does not fit {} ({}): {}",
                opts.part,
                opts.package,
                over.join(", ")
            )));
        }
        return Err(e);
    }
    let pnr_s = t0.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&report).map_err(SimError::io("reading", &report))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| SimError::Invalid(format!("{}: not a nextpnr report: {e}", report.display())))?;
    let fmax_mhz = slowest_clock(&json).ok_or_else(|| {
        SimError::Invalid(format!("{top}: nextpnr-ecp5 reported no clock (a design without registers?)"))
    })?;
    let critical_path = critical_path(&json, instances);
    Ok(PnrReport {
        top: top.to_string(),
        component: component.map(str::to_string),
        options: opts.clone(),
        fmax_mhz,
        met: fmax_mhz >= opts.freq_mhz,
        critical_path,
        utilisation: utilisation(&json),
        bram_outregs,
        synth_s,
        pnr_s,
        tools: vec![yosys.version.clone(), nextpnr.version.clone()],
    })
}

/// Folds the registers after block-RAM reads of the Yosys JSON `netlist` into the block RAMs'
/// output registers, in place ([`crate::bram_outreg`]); the number of read ports changed.
/// Why: a `DP16KD` without its output register has 5.6 ns clock-to-out on speed grade 6, with it
/// 0.96 ns, and Yosys 0.23 never turns it on.
fn fold_output_registers(netlist: &Path) -> Result<usize> {
    let text = std::fs::read_to_string(netlist).map_err(SimError::io("reading", netlist))?;
    let mut json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| SimError::Invalid(format!("{}: not a Yosys JSON netlist: {e}", netlist.display())))?;
    let folded = crate::bram_outreg::absorb_output_registers(&mut json);
    if folded > 0 {
        let text = serde_json::to_string(&json).expect("a parsed netlist serializes");
        std::fs::write(netlist, text).map_err(SimError::io("writing", netlist))?;
    }
    Ok(folded)
}

/// The lowest achieved frequency over the report's clocks, MHz.
fn slowest_clock(json: &serde_json::Value) -> Option<f64> {
    json.get("fmax")?.as_object()?.values().filter_map(|c| c.get("achieved")?.as_f64()).reduce(f64::min)
}

/// The report's resources of [`RESOURCES`].
fn utilisation(json: &serde_json::Value) -> Vec<Utilisation> {
    let u = json.get("utilization");
    RESOURCES
        .iter()
        .map(|(resource, cell)| {
            let get = |k: &str| u.and_then(|u| u.get(cell)).and_then(|c| c.get(k)).and_then(|v| v.as_u64());
            Utilisation {
                resource: resource.to_string(),
                cell: cell.to_string(),
                used: get("used").unwrap_or(0),
                available: get("available").unwrap_or(0),
            }
        })
        .collect()
}

/// The first critical path of the report (nextpnr lists the slowest clock's first), with its
/// ends placed in `instances`.
fn critical_path(json: &serde_json::Value, instances: &[(String, String)]) -> Option<CriticalPath> {
    let path = json.get("critical_paths")?.as_array()?.first()?.get("path")?.as_array()?;
    let end = |v: &serde_json::Value, k: &str| -> (String, String) {
        let s = |f: &str| {
            v.get(k).and_then(|e| e.get(f)).and_then(|x| x.as_str()).unwrap_or_default().to_string()
        };
        (s("cell"), s("port"))
    };
    let steps: Vec<PathStep> = path
        .iter()
        .map(|s| {
            let ((fc, fp), (tc, tp)) = (end(s, "from"), end(s, "to"));
            PathStep {
                kind: s.get("type").and_then(|t| t.as_str()).unwrap_or_default().to_string(),
                delay_ns: s.get("delay").and_then(|d| d.as_f64()).unwrap_or(0.0),
                from: format!("{fc}.{fp}"),
                to: format!("{tc}.{tp}"),
                net: s.get("net").and_then(|n| n.as_str()).map(str::to_string),
            }
        })
        .collect();
    let routing_ns = steps.iter().filter(|s| s.kind == "routing").map(|s| s.delay_ns).sum();
    let logic_ns = steps.iter().filter(|s| s.kind != "routing").map(|s| s.delay_ns).sum();
    let (first, last) = (path.first()?, path.last()?);
    Some(CriticalPath {
        start: place(&end(first, "from").0, instances),
        end: place(&end(last, "to").0, instances),
        logic_ns,
        routing_ns,
        steps,
    })
}

/// Where the flattened cell `cell` lies: its first hierarchy level names the top's instance
/// (with its component when `instances` lists it); a cell of the top's own logic has none.
pub fn place(cell: &str, instances: &[(String, String)]) -> Place {
    let instance = cell.split_once('.').map(|(first, _)| first).unwrap_or_default();
    let component = instances.iter().find(|(i, _)| i == instance).map(|(_, c)| c.clone()).unwrap_or_default();
    Place { cell: cell.to_string(), instance: instance.to_string(), component }
}

/// The resources a failed nextpnr run's log says the design uses beyond the part
/// (`Info:   MULT18X18D:   200/  156   128%` lines): `MULT18X18D 200 of 156`.
pub fn overflows(log: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.trim_start().strip_prefix("Info:") else { continue };
        let Some((name, counts)) = rest.trim().split_once(':') else { continue };
        let mut nums = counts.split(|c: char| c == '/' || c.is_whitespace()).filter(|s| !s.is_empty());
        let (Some(used), Some(avail)) = (nums.next(), nums.next()) else { continue };
        if let (Ok(u), Ok(a)) = (used.parse::<u64>(), avail.parse::<u64>()) {
            let entry = format!("{} {u} of {a}", name.trim());
            if u > a && !out.contains(&entry) {
                out.push(entry);
            }
        }
    }
    out
}

/// Where `mase synth DIR --target ecp5` keeps the last place-and-route report of a project.
pub fn project_report_path(dir: &Path) -> PathBuf {
    dir.join("pnr_ecp5.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_resources_are_named() {
        let log = "Info: Device utilisation:\nInfo: \t          TRELLIS_IO:     0/  365     0%\n\
                   Info: \t          MULT18X18D:   200/  156   128%\nInfo: \t        TRELLIS_COMB: 1075/83640     1%\n\
                   Info: Program finished normally.\n";
        assert_eq!(overflows(log), vec!["MULT18X18D 200 of 156"]);
        assert!(overflows("Info: Max frequency for clock 'clk': 75.76 MHz (FAIL at 100.00 MHz)").is_empty());
    }

    #[test]
    fn cells_are_placed_in_their_instance() {
        let inst = [("Gemm_linear_inst".to_string(), "linear".to_string())];
        let p = place("Gemm_linear_inst.w_rom.0.0", &inst);
        assert_eq!((p.instance.as_str(), p.component.as_str()), ("Gemm_linear_inst", "linear"));
        assert_eq!(place("valid_q", &inst).instance, "");
    }

    #[test]
    fn the_wrapper_registers_every_stream_port_but_not_the_clock_or_reset() {
        use crate::shim::{Port, PortDir};
        let port = |name: &str, width, dir| Port { name: name.into(), width, dir };
        let ports = [
            port("clk", 1, PortDir::In),
            port("rst", 1, PortDir::In),
            port("data_in_0", 8, PortDir::In),
            port("data_out_0_ready", 1, PortDir::In),
            port("data_out_0", 16, PortDir::Out),
        ];
        let v = registered_wrapper("mase_relu", &ports);
        assert!(v.contains("always_ff @(posedge clk) data_in_0_r <= data_in_0;"), "{v}");
        assert!(v.contains("always_ff @(posedge clk) data_out_0 <= data_out_0_r;"), "{v}");
        assert!(v.contains(".clk(clk)") && v.contains(".rst(rst)") && !v.contains("rst_r"), "{v}");
        assert!(v.contains("output logic [15:0] data_out_0") && v.contains("mase_relu dut ("), "{v}");
    }

    #[test]
    fn unknown_parts_and_grades_are_refused_with_the_known_ones() {
        let bad = PnrOptions { part: "LFE5U-99F".into(), ..PnrOptions::default() };
        let e = bad.device_flag().unwrap_err().to_string();
        assert!(e.contains("LFE5U-99F") && e.contains("LFE5U-85F"), "{e}");
        let slow = PnrOptions { speed: 5, ..PnrOptions::default() };
        assert!(slow.device_flag().unwrap_err().to_string().contains("speed"));
        assert_eq!(PnrOptions::default().device_flag().unwrap(), "--85k");
    }
}
