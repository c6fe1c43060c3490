//! A steppable harness for front ends that run their own test logic (the Python package's
//! cocotb-style tests): the same cycle as [`super::run_streams`] (drive with `clk = 0`, settle,
//! sample every handshake, rising edge), but the stimulus arrives incrementally and the caller
//! advances the clock until one of the events it waits for happens ([`Stepper::run_until`]).
//! Drivers (valid gaps), monitors (back-pressure, stream rule) and the scoreboard stay here, so
//! a front end crosses into Rust once per awaited event, not once per cycle.
//!
//! A stream is harness-owned once the front end gives it work: an input after its first
//! [`Stepper::drive`], an output after its first [`Stepper::monitor`] (or [`Stepper::expect`]).
//! Until then its valid/data (input) or ready (output) keep whatever [`Stepper::poke`] wrote, so
//! a test can also drive ports by hand, cycle by cycle.

use std::collections::VecDeque;

use mase_hwlib::{Direction, StreamSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::pack::{pack, unpack, unpack_u64_into};
use super::stream::StreamPorts;
use super::{Mismatch, RESET_CYCLES};
use crate::error::{Result, SimError};
use crate::model::{BitPort, Model};

/// What [`Stepper::run_until`] waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The cycle counter reaching this value.
    Cycle(u64),
    /// Output stream `k` (index into the streams) holding at least this many uncollected elements.
    Elements(usize, usize),
    /// Input stream `k` having no beat left to send.
    Drained(usize),
}

/// One stream: its ports, its driver or monitor state and, for outputs, received values and the
/// scoreboard's expectations.
struct Agent {
    /// Ports (the progress counters of `StreamPorts` count beats moved).
    s: StreamPorts,
    /// Harness-owned (see the module documentation).
    active: bool,
    /// Probability of a valid gap (input) or a ready drop (output) in a cycle.
    stall: f64,
    /// Input: packed beats not yet taken, `s.words` words each.
    queue: VecDeque<u32>,
    /// Input: the front beat is offered (valid high).
    offering: bool,
    /// Output: ready this cycle.
    ready: bool,
    /// Output: the beat refused last cycle, which must still be offered unchanged.
    held: Option<Vec<u32>>,
    /// Output: received elements not yet taken by [`Stepper::take`].
    got: VecDeque<i64>,
    /// Output: expected elements not yet compared (scoreboard).
    expected: VecDeque<i64>,
    /// Output: elements received so far (index of the next one, for mismatch reports).
    received: usize,
}

/// A loaded model with steppable drivers and monitors.
pub struct Stepper {
    model: Model,
    clk: BitPort,
    rst: BitPort,
    agents: Vec<Agent>,
    rng: ChaCha8Rng,
    cycle: u64,
    last_progress: u64,
    /// Cycles without any beat while waiting on a stream event before a deadlock is declared.
    pub watchdog_cycles: u64,
    /// The first mismatches (at most `max_mismatches`).
    pub mismatches: Vec<Mismatch>,
    /// Every differing element.
    pub mismatch_count: usize,
    /// How many mismatches to keep.
    pub max_mismatches: usize,
    words: Vec<u32>,
    vals: Vec<i64>,
}

impl Stepper {
    /// A stepper over `model`, whose streams are `streams` (ports `<name>`, `_valid`, `_ready`,
    /// plus `clk` and `rst`); `seed` seeds the stall choices.
    pub fn new(model: Model, streams: &[StreamSpec], seed: u64) -> Result<Stepper> {
        let bit = |name: &str| -> Result<BitPort> {
            let i = model.port_index(name)?;
            model.bit_port(i).ok_or_else(|| SimError::Invalid(format!("port `{name}` is not 1 bit wide")))
        };
        let (clk, rst) = (bit("clk")?, bit("rst")?);
        let mut agents = Vec::new();
        for s in streams {
            agents.push(Agent {
                s: StreamPorts::new(&model, s, &[])?,
                active: false,
                stall: 0.0,
                queue: VecDeque::new(),
                offering: false,
                ready: false,
                held: None,
                got: VecDeque::new(),
                expected: VecDeque::new(),
                received: 0,
            });
        }
        Ok(Stepper {
            model,
            clk,
            rst,
            agents,
            rng: ChaCha8Rng::seed_from_u64(seed),
            cycle: 0,
            last_progress: 0,
            watchdog_cycles: 10_000,
            mismatches: Vec::new(),
            mismatch_count: 0,
            max_mismatches: 20,
            words: Vec::new(),
            vals: Vec::new(),
        })
    }

    /// Cycles simulated since the last reset.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The stream specs, in order.
    pub fn streams(&self) -> impl Iterator<Item = &StreamSpec> {
        self.agents.iter().map(|a| &a.s.spec)
    }

    /// Index of stream `name`.
    pub fn stream_index(&self, name: &str) -> Result<usize> {
        self.agents.iter().position(|a| a.s.spec.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.agents.iter().map(|a| a.s.spec.name.as_str()).collect();
            SimError::Invalid(format!("no stream `{name}`; streams: {}", names.join(", ")))
        })
    }

    fn agent(&mut self, k: usize, dir: Direction) -> Result<&mut Agent> {
        let a = self.agents.get_mut(k).ok_or_else(|| SimError::Invalid(format!("no stream {k}")))?;
        if a.s.spec.dir != dir {
            let what = if dir == Direction::In { "an input" } else { "an output" };
            return Err(SimError::Invalid(format!("stream `{}` is not {what}", a.s.spec.name)));
        }
        Ok(a)
    }

    /// Holds `rst` high for [`RESET_CYCLES`] cycles with every valid and ready low, drops every
    /// queued beat, received value and expectation, and restarts the cycle counter at 0.
    pub fn reset(&mut self) -> Result<()> {
        for a in &mut self.agents {
            a.queue.clear();
            a.offering = false;
            a.held = None;
            a.got.clear();
            a.expected.clear();
            a.received = 0;
            match a.s.spec.dir {
                Direction::In => a.s.valid_p.set(false),
                Direction::Out => a.s.ready_p.set(false),
            }
        }
        self.rst.set(true);
        for _ in 0..RESET_CYCLES {
            for v in [false, true] {
                self.clk.set(v);
                self.model.eval().map_err(|log| SimError::Stopped { cycle: 0, log })?;
            }
        }
        self.rst.set(false);
        self.clk.set(false);
        self.cycle = 0;
        self.last_progress = 0;
        Ok(())
    }

    /// Queues `codes` (stream order, whole beats, each within the lane's range) on input stream
    /// `k`, offered with valid gaps of probability `stall`; the stream becomes harness-owned.
    pub fn drive(&mut self, k: usize, codes: &[i64], stall: f64) -> Result<()> {
        let a = self.agent(k, Direction::In)?;
        let spec = &a.s.spec;
        if !codes.len().is_multiple_of(spec.lanes) {
            return Err(SimError::Invalid(format!(
                "stream `{}`: {} values is not a whole number of {}-lane beats",
                spec.name,
                codes.len(),
                spec.lanes
            )));
        }
        let (lo, hi) = spec.range();
        if let Some(v) = codes.iter().find(|v| **v < lo || **v > hi) {
            return Err(SimError::Invalid(format!(
                "stream `{}`: code {v} outside the {}-bit {} range",
                spec.name,
                spec.width,
                if spec.signed { "signed" } else { "unsigned" }
            )));
        }
        let mut w = Vec::new();
        for b in codes.chunks(spec.lanes) {
            pack(b, spec.width, &mut w);
            w.resize(a.s.words, 0);
            a.queue.extend(&w);
        }
        a.stall = stall.clamp(0.0, 1.0);
        a.active = true;
        Ok(())
    }

    /// Makes output stream `k` harness-owned: ready high except for drops of probability `stall`,
    /// every beat taken kept for [`Stepper::take`].
    pub fn monitor(&mut self, k: usize, stall: f64) -> Result<()> {
        let a = self.agent(k, Direction::Out)?;
        a.stall = stall.clamp(0.0, 1.0);
        a.active = true;
        Ok(())
    }

    /// Queues expected elements of output stream `k`: the scoreboard compares every element
    /// received from then on with them, in order (mismatches in [`Stepper::mismatches`]).
    pub fn expect(&mut self, k: usize, codes: &[i64]) -> Result<()> {
        let a = self.agent(k, Direction::Out)?;
        a.expected.extend(codes);
        a.active = true;
        Ok(())
    }

    /// Received, uncollected elements of output stream `k`.
    pub fn available(&self, k: usize) -> usize {
        self.agents.get(k).map_or(0, |a| a.got.len())
    }

    /// Beats queued on input stream `k` and not yet taken.
    pub fn pending_beats(&self, k: usize) -> usize {
        self.agents.get(k).map_or(0, |a| a.queue.len() / a.s.words.max(1))
    }

    /// Takes the first `n` received elements of output stream `k`.
    pub fn take(&mut self, k: usize, n: usize) -> Result<Vec<i64>> {
        let a = self.agent(k, Direction::Out)?;
        if a.got.len() < n {
            return Err(SimError::Invalid(format!(
                "stream `{}`: {n} elements asked, {} received",
                a.s.spec.name,
                a.got.len()
            )));
        }
        Ok(a.got.drain(..n).collect())
    }

    /// Index of port `name`.
    pub fn port_index(&self, name: &str) -> Result<usize> {
        self.model.port_index(name)
    }

    /// Width of port `idx` in bits.
    pub fn port_width(&self, idx: usize) -> usize {
        self.model.width(idx)
    }

    /// Reads port `idx` as 32-bit words, least significant first.
    pub fn peek(&self, idx: usize, out: &mut Vec<u32>) {
        self.model.get_words(idx, out)
    }

    /// Writes port `idx` from 32-bit words (least significant first); takes effect at the next
    /// settle. Harness-owned streams overwrite their own ports every cycle.
    pub fn poke(&mut self, idx: usize, words: &[u32]) {
        self.model.set_words(idx, words)
    }

    /// Whether `w` holds now.
    fn holds(&self, w: Wait) -> bool {
        match w {
            Wait::Cycle(c) => self.cycle >= c,
            Wait::Elements(k, n) => self.available(k) >= n,
            Wait::Drained(k) => self.pending_beats(k) == 0,
        }
    }

    /// Steps the clock until one of `waits` holds and returns its index (the first that holds).
    /// A wait on a stream event fails with a deadlock report when no beat moves on any stream for
    /// [`Stepper::watchdog_cycles`] cycles.
    pub fn run_until(&mut self, waits: &[Wait]) -> Result<usize> {
        if waits.is_empty() {
            return Err(SimError::Invalid("run_until: nothing to wait for".into()));
        }
        let on_streams = waits.iter().any(|w| !matches!(w, Wait::Cycle(_)));
        self.last_progress = self.cycle;
        loop {
            if let Some(i) = waits.iter().position(|w| self.holds(*w)) {
                return Ok(i);
            }
            let progress = self.step()?;
            if progress {
                self.last_progress = self.cycle;
            } else if on_streams && self.cycle - self.last_progress > self.watchdog_cycles {
                return Err(SimError::Deadlock { cycle: self.cycle, detail: self.stall_report() });
            }
        }
    }

    /// One clock cycle; whether any beat moved.
    fn step(&mut self) -> Result<bool> {
        let cycle = self.cycle;
        for a in &mut self.agents {
            if !a.active {
                continue;
            }
            match a.s.spec.dir {
                Direction::In => {
                    if !a.offering
                        && !a.queue.is_empty()
                        && (a.stall == 0.0 || self.rng.gen::<f64>() >= a.stall)
                    {
                        a.offering = true;
                        match a.s.data_p {
                            // The fast path's beats are two words (one u64).
                            Some(d) => d.set(a.queue[0] as u64 | (a.queue[1] as u64) << 32),
                            None => {
                                let w: Vec<u32> = a.queue.iter().take(a.s.words).copied().collect();
                                self.model.set_words(a.s.data, &w)
                            }
                        }
                    }
                    a.s.valid_p.set(a.offering);
                }
                Direction::Out => {
                    a.ready = a.stall == 0.0 || self.rng.gen::<f64>() >= a.stall;
                    a.s.ready_p.set(a.ready);
                }
            }
        }
        self.model.eval().map_err(|log| SimError::Stopped { cycle, log })?;
        let mut progress = false;
        for a in &mut self.agents {
            match a.s.spec.dir {
                Direction::In => {
                    if a.offering && a.s.ready_p.get() {
                        a.offering = false;
                        a.queue.drain(..a.s.words);
                        a.s.done += 1;
                        a.s.waiting = 0;
                        progress = true;
                    } else if a.offering {
                        a.s.waiting += 1;
                    }
                }
                Direction::Out if a.active => {
                    if sample(a, &self.model, cycle, &mut self.words, &mut self.vals)? {
                        progress = true;
                        let n = a.s.spec.lanes;
                        let base = a.received;
                        a.received += n;
                        let start = a.got.len() - n;
                        for lane in 0..n {
                            let Some(e) = a.expected.pop_front() else { break };
                            let v = a.got[start + lane];
                            if v != e {
                                self.mismatch_count += 1;
                                if self.mismatches.len() < self.max_mismatches {
                                    self.mismatches.push(Mismatch {
                                        stream: a.s.spec.name.clone(),
                                        index: base + lane,
                                        beat: a.s.done - 1,
                                        lane,
                                        expected: e,
                                        actual: v,
                                        cycle,
                                    });
                                }
                            }
                        }
                    }
                }
                Direction::Out => {}
            }
        }
        self.clk.set(true);
        self.model.eval().map_err(|log| SimError::Stopped { cycle, log })?;
        self.clk.set(false);
        self.cycle += 1;
        Ok(progress)
    }

    /// Names every stream with work left, with its handshake state.
    fn stall_report(&self) -> String {
        let mut parts = Vec::new();
        for a in &self.agents {
            let (v, r) = (a.s.valid_p.get(), a.s.ready_p.get());
            match a.s.spec.dir {
                Direction::In if !a.queue.is_empty() => {
                    let why = if v && !r {
                        format!("valid high, ready low for {} cycles", a.s.waiting)
                    } else {
                        "not offering".into()
                    };
                    parts.push(format!(
                        "input `{}`: {} beats sent, {} queued, {why}",
                        a.s.spec.name,
                        a.s.done,
                        a.queue.len() / a.s.words.max(1)
                    ));
                }
                Direction::Out => {
                    let why = match (a.active, v) {
                        (false, _) => "not monitored (ready held by the test)",
                        (true, false) => "valid low (starved)",
                        (true, true) => "back-pressured",
                    };
                    parts.push(format!("output `{}`: {} beats received, {why}", a.s.spec.name, a.s.done));
                }
                _ => {}
            }
        }
        parts.join("; ")
    }
}

/// Samples output agent `a` after the settle: checks a held beat, then takes the offered beat
/// when ready (appending its elements to `a.got`). Whether a beat was taken.
fn sample(
    a: &mut Agent,
    model: &Model,
    cycle: u64,
    words: &mut Vec<u32>,
    vals: &mut Vec<i64>,
) -> Result<bool> {
    let s = &mut a.s;
    let valid = s.valid_p.get();
    super::monitor::check_held(s, a.held.take(), valid, model, cycle, words)?;
    if !valid {
        return Ok(false);
    }
    if !a.ready {
        let mut h = Vec::new();
        s.read(model, &mut h);
        a.held = Some(h);
        return Ok(false);
    }
    let (n, width, signed) = (s.spec.lanes, s.spec.width, s.spec.signed);
    vals.clear();
    match s.data_p {
        Some(d) => unpack_u64_into(d.get(), n, width, signed, vals),
        None => {
            model.get_words(s.data, words);
            unpack(words, n, width, signed, vals);
        }
    }
    a.got.extend(vals.iter());
    s.done += 1;
    Ok(true)
}
