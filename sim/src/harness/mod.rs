//! A cocotb-style stream harness in Rust: per-stream drivers (seeded random valid gaps), monitors
//! (seeded random ready back-pressure), a scoreboard against expected integers, a deadlock
//! watchdog naming the stalled stream, cycle accounting and a VCD window around a mismatch.
//!
//! One cycle is: drive inputs and readies with `clk = 0`, `eval` (combinational settle), sample
//! every handshake (a beat moves when valid && ready), `clk = 1`, `eval` (the rising edge).
//! Drivers follow the stream rules themselves: once valid is raised it stays with the same data
//! until the beat is taken. Reset holds `rst` high for [`RESET_CYCLES`] cycles first; cycle 0 is
//! the first cycle after reset.
//!
//! Pieces, one job each: `driver.rs` (an input stream), `monitor.rs` (an output stream and the
//! stream rule), `scoreboard.rs` (comparison), `watchdog.rs` (deadlock report), `stream.rs` (the
//! ports a driver and a monitor share), `pack.rs` (lane values to port words). [`run_streams`]
//! here sequences them cycle by cycle; `step.rs` ([`Stepper`]) runs the same cycle for front ends
//! that feed stimulus incrementally and wait for events (the Python package).

mod driver;
mod monitor;
mod pack;
mod scoreboard;
mod step;
mod stream;
mod watchdog;

use std::path::PathBuf;

use mase_hwlib::{Direction, StreamSpec, StreamValues};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{Result, SimError};
use crate::model::Model;
use driver::Driver;
use monitor::{Monitor, Seen};
pub use pack::{pack, unpack, unpack_u64};
use scoreboard::Scoreboard;
pub use step::{Stepper, Wait};
use stream::StreamPorts;
use watchdog::Watchdog;

/// Cycles with `rst` high before cycle 0.
pub const RESET_CYCLES: u64 = 3;

/// How to run the streams.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Seed of the valid-gap and back-pressure choices.
    pub seed: u64,
    /// Probability that an idle driver leaves valid low in a cycle, and that a monitor drops
    /// ready in a cycle (0 = no stalls).
    pub stall_prob: f64,
    /// Cycles without any beat moving after which the watchdog declares a deadlock.
    pub watchdog_cycles: u64,
    /// Record a VCD of cycles `[from, to]` into this file (traced builds only).
    pub vcd: Option<(PathBuf, u64, u64)>,
    /// Stop the scoreboard from recording more than this many mismatches.
    pub max_mismatches: usize,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { seed: 1, stall_prob: 0.0, watchdog_cycles: 10_000, vcd: None, max_mismatches: 20 }
    }
}

/// One output element that differed from the expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// Output stream name.
    pub stream: String,
    /// Element index in stream order.
    pub index: usize,
    /// Beat index and lane of the element.
    pub beat: usize,
    /// Lane within the beat.
    pub lane: usize,
    /// The model's value.
    pub expected: i64,
    /// The RTL's value.
    pub actual: i64,
    /// Cycle at which the beat was taken.
    pub cycle: u64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}[{}] (beat {}, lane {}) at cycle {}: expected {}, got {}",
            self.stream, self.index, self.beat, self.lane, self.cycle, self.expected, self.actual
        )
    }
}

/// What a run observed.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Values received per output stream (stream order).
    pub outputs: StreamValues,
    /// Mismatches against the expectation (at most `max_mismatches`).
    pub mismatches: Vec<Mismatch>,
    /// Total number of differing elements.
    pub mismatch_count: usize,
    /// Cycles simulated after reset.
    pub cycles: u64,
    /// Cycle of the first input beat taken.
    pub first_input_cycle: Option<u64>,
    /// Cycle in which the first output beat was valid.
    pub first_output_valid_cycle: Option<u64>,
    /// Cycle at which the last beat of each output row was taken (first output stream).
    pub row_done_cycles: Vec<u64>,
    /// Wall-clock seconds of the cycle loop.
    pub wall_s: f64,
}

impl RunResult {
    /// First-output latency: cycles from the first input beat taken to the first output valid.
    pub fn latency_cycles(&self) -> Option<u64> {
        Some(self.first_output_valid_cycle?.saturating_sub(self.first_input_cycle?))
    }

    /// Steady-state cycles per row: the average spacing of row completions over the last three
    /// quarters of the rows (the first quarter absorbs pipeline fill). `None` with < 2 rows.
    pub fn ii_cycles(&self) -> Option<f64> {
        let r = &self.row_done_cycles;
        if r.len() < 2 {
            return None;
        }
        let start = (r.len() / 4).min(r.len() - 2);
        let end = r.len() - 1;
        Some((r[end] - r[start]) as f64 / (end - start) as f64)
    }
}

/// One stream's agent, in the order of the component's streams (the order of the random draws).
enum Agent {
    /// An input stream.
    Driver(Driver),
    /// An output stream and its scoreboard slot.
    Monitor(Monitor, usize),
}

impl Agent {
    /// The stream's ports and progress.
    fn ports(&self) -> &StreamPorts {
        match self {
            Agent::Driver(d) => &d.s,
            Agent::Monitor(m, _) => &m.s,
        }
    }
}

/// Drives `inputs` into the model's input streams and collects the output streams until each has
/// produced as many elements as `expected` holds for it, comparing element by element.
///
/// `streams` are the component's streams (ports `<name>`, `<name>_valid`, `<name>_ready`); the
/// model must also have `clk` and `rst`.
pub fn run_streams(
    model: &mut Model,
    streams: &[StreamSpec],
    inputs: &StreamValues,
    expected: &StreamValues,
    cfg: &RunConfig,
) -> Result<RunResult> {
    let clk = model.port_index("clk")?;
    let rst = model.port_index("rst")?;
    let mut board = Scoreboard::new(cfg.max_mismatches);
    let mut agents = Vec::with_capacity(streams.len());
    for s in streams {
        let values = match s.dir {
            Direction::In => inputs.get(&s.name),
            Direction::Out => expected.get(&s.name),
        }
        .ok_or_else(|| SimError::Invalid(format!("no values given for stream `{}`", s.name)))?;
        agents.push(match s.dir {
            Direction::In => Agent::Driver(Driver::new(model, s, values)?),
            Direction::Out => {
                let m = Monitor::new(model, s, values)?;
                Agent::Monitor(m, board.expect(values.clone()))
            }
        });
    }
    reset(model, &agents, clk, rst)?;

    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let stall = cfg.stall_prob.clamp(0.0, 1.0);
    let stopped = |cycle: u64, log: String| SimError::Stopped { cycle, log };
    let mut res = RunResult {
        outputs: StreamValues::new(),
        mismatches: Vec::new(),
        mismatch_count: 0,
        cycles: 0,
        first_input_cycle: None,
        first_output_valid_cycle: None,
        row_done_cycles: Vec::new(),
        wall_s: 0.0,
    };
    let first_out = agents.iter().position(|a| matches!(a, Agent::Monitor(..)));
    let mut pending_outputs =
        agents.iter().filter(|a| matches!(a, Agent::Monitor(m, _) if m.s.total > 0)).count();
    let mut watchdog = Watchdog::new(cfg.watchdog_cycles);
    let (mut words, mut vals) = (Vec::new(), Vec::new());
    let mut cycle = 0u64;
    if let Some((path, _, _)) = &cfg.vcd {
        model.trace_open(path)?;
    }
    let t0 = std::time::Instant::now();
    while pending_outputs > 0 {
        for a in agents.iter_mut() {
            match a {
                Agent::Driver(d) => d.drive(model, &mut rng, stall),
                Agent::Monitor(m, _) => m.drive(&mut rng, stall),
            }
        }
        model.eval().map_err(|log| stopped(cycle, log))?;
        let dumping = matches!(&cfg.vcd, Some((_, a, b)) if cycle >= *a && cycle <= *b);
        if dumping {
            model.trace_dump(2 * cycle);
        }
        let mut progress = false;
        for (ai, a) in agents.iter_mut().enumerate() {
            match a {
                Agent::Driver(d) => {
                    if d.sample() {
                        progress = true;
                        res.first_input_cycle.get_or_insert(cycle);
                    }
                }
                Agent::Monitor(m, slot) => {
                    let seen = m.sample(model, cycle, &mut words, &mut vals)?;
                    if !matches!(seen, Seen::Nothing) && Some(ai) == first_out {
                        res.first_output_valid_cycle.get_or_insert(cycle);
                    }
                    let Seen::Beat(base) = seen else { continue };
                    let beat = m.s.done - 1;
                    board.check(
                        *slot,
                        &m.s.spec.name,
                        beat,
                        base,
                        &m.got[base..base + m.s.spec.lanes],
                        cycle,
                    );
                    progress = true;
                    if m.s.done == m.s.total {
                        pending_outputs -= 1;
                    }
                    if Some(ai) == first_out && m.s.done % m.s.spec.beats_per_row.max(1) == 0 {
                        res.row_done_cycles.push(cycle);
                    }
                }
            }
        }
        watchdog.tick(cycle, progress, model, agents.iter().map(Agent::ports))?;
        model.set(clk, 1);
        model.eval().map_err(|log| stopped(cycle, log))?;
        if dumping {
            model.trace_dump(2 * cycle + 1);
        }
        model.set(clk, 0);
        cycle += 1;
    }
    res.wall_s = t0.elapsed().as_secs_f64();
    if cfg.vcd.is_some() {
        model.trace_close();
    }
    res.cycles = cycle;
    res.mismatches = board.mismatches;
    res.mismatch_count = board.count;
    for a in agents {
        if let Agent::Monitor(m, _) = a {
            res.outputs.insert(m.s.spec.name, m.got);
        }
    }
    Ok(res)
}

/// Holds `rst` high for [`RESET_CYCLES`] cycles with every valid and ready low, and leaves the
/// clock low.
fn reset(model: &mut Model, agents: &[Agent], clk: usize, rst: usize) -> Result<()> {
    let stopped = |log: String| SimError::Stopped { cycle: 0, log };
    for a in agents {
        let p = a.ports();
        match p.spec.dir {
            Direction::In => model.set(p.valid, 0),
            Direction::Out => model.set(p.ready, 0),
        }
    }
    model.set(rst, 1);
    for _ in 0..RESET_CYCLES {
        model.set(clk, 0);
        model.eval().map_err(stopped)?;
        model.set(clk, 1);
        model.eval().map_err(stopped)?;
    }
    model.set(rst, 0);
    model.set(clk, 0);
    Ok(())
}
