//! A cocotb-style stream harness in Rust: per-stream drivers (seeded random valid gaps), monitors
//! (seeded random ready back-pressure), a scoreboard against expected integers, a deadlock
//! watchdog naming the stalled stream, cycle accounting and a VCD window around a mismatch.
//!
//! One cycle is: drive inputs and readies with `clk = 0`, `eval` (combinational settle), sample
//! every handshake (a beat moves when valid && ready), `clk = 1`, `eval` (the rising edge).
//! Drivers follow the stream rules themselves: once valid is raised it stays with the same data
//! until the beat is taken. Reset holds `rst` high for [`RESET_CYCLES`] cycles first; cycle 0 is
//! the first cycle after reset.

use std::path::PathBuf;

use mase_hwlib::{Direction, StreamSpec, StreamValues};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{Result, SimError};
use crate::model::{BitPort, Model, NarrowPort};

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

/// Port indices, data and progress of one stream.
struct Lane {
    spec: StreamSpec,
    data: usize,
    valid: usize,
    ready: usize,
    /// Direct handles: data (ports of at most 64 bits: the fast path), valid, ready.
    data_p: Option<NarrowPort>,
    valid_p: BitPort,
    ready_p: BitPort,
    /// Inputs: pre-packed beats, `words` 32-bit words each (narrow: two words = one u64).
    packed: Vec<u32>,
    /// 32-bit words per beat.
    words: usize,
    /// Outputs: expected values (stream order).
    exp: Vec<i64>,
    /// Outputs: received values.
    got: Vec<i64>,
    /// Beats transferred so far.
    done: usize,
    /// Beats expected in total.
    total: usize,
    /// Driver: a beat is being offered. Monitor: ready this cycle.
    active: bool,
    /// Cycles the current beat has waited (valid && !ready), for the watchdog.
    waiting: u64,
    /// Outputs: the beat offered but refused last cycle, which must still be offered unchanged.
    held: Option<Vec<u32>>,
}

impl Lane {
    /// Reads the data port into `words` (32-bit words, least significant first).
    #[inline]
    fn read(&self, model: &Model, words: &mut Vec<u32>) {
        if let Some(d) = self.data_p {
            let v = d.get();
            words.clear();
            words.extend([v as u32, (v >> 32) as u32]);
        } else {
            model.get_words(self.data, words);
        }
    }
}

/// Packs lane values (masked to `width`) into 32-bit words, lane 0 least significant.
pub fn pack(values: &[i64], width: u32, out: &mut Vec<u32>) {
    let total = values.len() * width as usize;
    out.clear();
    out.resize(total.div_ceil(32).max(1), 0);
    for (i, &v) in values.iter().enumerate() {
        let mut code = if width >= 64 { v as u64 } else { (v as u64) & ((1u64 << width) - 1) };
        let mut pos = i * width as usize;
        let mut left = width as usize;
        while left > 0 {
            let take = (32 - pos % 32).min(left);
            let mask = if take == 32 { u32::MAX } else { (1u32 << take) - 1 };
            out[pos / 32] |= (code as u32 & mask) << (pos % 32);
            code = if take == 64 { 0 } else { code >> take };
            pos += take;
            left -= take;
        }
    }
}

/// Unpacks `lanes` lanes of `width` bits from words (lane 0 least significant), sign-extending
/// when `signed`.
pub fn unpack(words: &[u32], lanes: usize, width: u32, signed: bool, out: &mut Vec<i64>) {
    out.clear();
    for i in 0..lanes {
        let mut code: u64 = 0;
        let mut pos = i * width as usize;
        let mut got = 0usize;
        while got < width as usize {
            let take = (32 - pos % 32).min(width as usize - got);
            let w = words.get(pos / 32).copied().unwrap_or(0) as u64;
            let bits = (w >> (pos % 32)) & ((1u64 << take) - 1);
            code |= bits << got;
            pos += take;
            got += take;
        }
        let v = if signed && width < 64 && (code >> (width - 1)) & 1 == 1 {
            (code | !((1u64 << width) - 1)) as i64
        } else {
            code as i64
        };
        out.push(v);
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
    let mut lanes = Vec::new();
    for s in streams {
        let data = model.port_index(&s.name)?;
        let valid = model.port_index(&format!("{}_valid", s.name))?;
        let ready = model.port_index(&format!("{}_ready", s.name))?;
        let values = match s.dir {
            Direction::In => inputs.get(&s.name),
            Direction::Out => expected.get(&s.name),
        }
        .ok_or_else(|| SimError::Invalid(format!("no values given for stream `{}`", s.name)))?;
        if values.len() % s.lanes != 0 {
            return Err(SimError::Invalid(format!(
                "stream `{}`: {} values is not a whole number of {}-lane beats",
                s.name,
                values.len(),
                s.lanes
            )));
        }
        let narrow = s.port_width() <= 64;
        let words = if narrow { 2 } else { s.port_width().div_ceil(32) };
        let mut lane = Lane {
            spec: s.clone(),
            data,
            valid,
            ready,
            data_p: model.narrow_port(data),
            valid_p: model
                .bit_port(valid)
                .ok_or_else(|| SimError::Invalid(format!("port `{}_valid` is not 1 bit wide", s.name)))?,
            ready_p: model
                .bit_port(ready)
                .ok_or_else(|| SimError::Invalid(format!("port `{}_ready` is not 1 bit wide", s.name)))?,
            packed: Vec::new(),
            words,
            exp: Vec::new(),
            got: Vec::new(),
            done: 0,
            total: values.len() / s.lanes,
            active: false,
            waiting: 0,
            held: None,
        };
        match s.dir {
            Direction::In => {
                let (lo, hi) = s.range();
                if let Some(v) = values.iter().find(|v| **v < lo || **v > hi) {
                    return Err(SimError::Invalid(format!(
                        "stream `{}`: value {v} outside the {}-bit {} range",
                        s.name,
                        s.width,
                        if s.signed { "signed" } else { "unsigned" }
                    )));
                }
                let mut w = Vec::new();
                for b in values.chunks(s.lanes) {
                    pack(b, s.width, &mut w);
                    w.resize(words, 0);
                    lane.packed.extend_from_slice(&w);
                }
            }
            Direction::Out => {
                lane.exp = values.clone();
                lane.got.reserve(values.len());
            }
        }
        lanes.push(lane);
    }

    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let stall = cfg.stall_prob.clamp(0.0, 1.0);
    let stopped = |cycle: u64, log: String| SimError::Stopped { cycle, log };

    // Reset.
    for l in &lanes {
        match l.spec.dir {
            Direction::In => model.set(l.valid, 0),
            Direction::Out => model.set(l.ready, 0),
        }
    }
    model.set(rst, 1);
    for _ in 0..RESET_CYCLES {
        model.set(clk, 0);
        model.eval().map_err(|l| stopped(0, l))?;
        model.set(clk, 1);
        model.eval().map_err(|l| stopped(0, l))?;
    }
    model.set(rst, 0);
    model.set(clk, 0);

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
    let first_out = lanes.iter().position(|l| l.spec.dir == Direction::Out);
    let mut pending_outputs = lanes.iter().filter(|l| l.spec.dir == Direction::Out && l.total > 0).count();
    let mut words = Vec::new();
    let mut vals = Vec::new();
    let mut last_progress = 0u64;
    let mut cycle = 0u64;
    if let Some((path, _, _)) = &cfg.vcd {
        model.trace_open(path)?;
    }
    let t0 = std::time::Instant::now();
    while pending_outputs > 0 {
        // Drive.
        for l in lanes.iter_mut() {
            match l.spec.dir {
                Direction::In => {
                    if !l.active && l.done < l.total && (stall == 0.0 || rng.gen::<f64>() >= stall) {
                        l.active = true;
                        let w = &l.packed[l.done * l.words..(l.done + 1) * l.words];
                        match l.data_p {
                            Some(d) => d.set(w[0] as u64 | (w[1] as u64) << 32),
                            None => model.set_words(l.data, w),
                        }
                    }
                    l.valid_p.set(l.active);
                }
                Direction::Out => {
                    l.active = stall == 0.0 || rng.gen::<f64>() >= stall;
                    l.ready_p.set(l.active);
                }
            }
        }
        model.eval().map_err(|log| stopped(cycle, log))?;
        let dumping = matches!(&cfg.vcd, Some((_, a, b)) if cycle >= *a && cycle <= *b);
        if dumping {
            model.trace_dump(2 * cycle);
        }
        // Sample.
        let mut progress = false;
        for (li, l) in lanes.iter_mut().enumerate() {
            match l.spec.dir {
                Direction::In => {
                    if l.active && l.ready_p.get() {
                        l.active = false;
                        l.done += 1;
                        l.waiting = 0;
                        progress = true;
                        res.first_input_cycle.get_or_insert(cycle);
                    } else if l.active {
                        l.waiting += 1;
                    }
                }
                Direction::Out => {
                    let valid = l.valid_p.get();
                    if let Some(h) = l.held.take() {
                        l.read(model, &mut words);
                        let detail = if !valid {
                            "valid dropped while the beat was back-pressured"
                        } else if words != h {
                            "data changed while the beat was back-pressured"
                        } else {
                            ""
                        };
                        if !detail.is_empty() {
                            return Err(SimError::Protocol {
                                stream: l.spec.name.clone(),
                                cycle,
                                detail: detail.into(),
                            });
                        }
                    }
                    if !valid {
                        continue;
                    }
                    if Some(li) == first_out {
                        res.first_output_valid_cycle.get_or_insert(cycle);
                    }
                    if !l.active {
                        let mut h = Vec::new();
                        l.read(model, &mut h);
                        l.held = Some(h);
                        continue;
                    }
                    if l.done >= l.total {
                        return Err(SimError::Protocol {
                            stream: l.spec.name.clone(),
                            cycle,
                            detail: format!("an extra beat beyond the {} expected", l.total),
                        });
                    }
                    let (n, width, signed) = (l.spec.lanes, l.spec.width, l.spec.signed);
                    let base = l.done * n;
                    match l.data_p {
                        Some(d) => unpack_u64_into(d.get(), n, width, signed, &mut l.got),
                        None => {
                            model.get_words(l.data, &mut words);
                            unpack(&words, n, width, signed, &mut vals);
                            l.got.extend_from_slice(&vals);
                        }
                    }
                    let (got, exp) = (&l.got[base..base + n], &l.exp[base..base + n]);
                    if got.iter().zip(exp).any(|(a, b)| a != b) {
                        for (k, (&v, &e)) in got.iter().zip(exp).enumerate() {
                            if e != v {
                                res.mismatch_count += 1;
                                if res.mismatches.len() < cfg.max_mismatches {
                                    res.mismatches.push(Mismatch {
                                        stream: l.spec.name.clone(),
                                        index: base + k,
                                        beat: l.done,
                                        lane: k,
                                        expected: e,
                                        actual: v,
                                        cycle,
                                    });
                                }
                            }
                        }
                    }
                    l.done += 1;
                    progress = true;
                    if l.done == l.total {
                        pending_outputs -= 1;
                    }
                    if Some(li) == first_out && l.done % l.spec.beats_per_row.max(1) == 0 {
                        res.row_done_cycles.push(cycle);
                    }
                }
            }
        }
        if progress {
            last_progress = cycle;
        } else if cycle - last_progress > cfg.watchdog_cycles {
            return Err(SimError::Deadlock { cycle, detail: stall_report(&lanes, model) });
        }
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
    for l in lanes.into_iter().filter(|l| l.spec.dir == Direction::Out) {
        res.outputs.insert(l.spec.name, l.got);
    }
    Ok(res)
}

/// [`unpack`] for a port of at most 64 bits held in one `u64`.
pub fn unpack_u64(v: u64, lanes: usize, width: u32, signed: bool, out: &mut Vec<i64>) {
    out.clear();
    unpack_u64_into(v, lanes, width, signed, out);
}

/// [`unpack_u64`] appending to `out`.
#[inline(always)]
fn unpack_u64_into(v: u64, lanes: usize, width: u32, signed: bool, out: &mut Vec<i64>) {
    let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    for i in 0..lanes {
        let code = if width >= 64 { v } else { (v >> (i as u32 * width)) & mask };
        let x = if signed && width < 64 && (code >> (width - 1)) & 1 == 1 {
            (code | !mask) as i64
        } else {
            code as i64
        };
        out.push(x);
    }
}

/// Names every stream that has not finished, with its progress and handshake state.
fn stall_report(lanes: &[Lane], model: &Model) -> String {
    let mut parts = Vec::new();
    for l in lanes.iter().filter(|l| l.done < l.total) {
        let (v, r) = (model.get(l.valid) != 0, model.get(l.ready) != 0);
        let why = match (l.spec.dir, v, r) {
            (Direction::In, true, false) => {
                format!("input stalled: valid high, ready low for {} cycles", l.waiting)
            }
            (Direction::In, false, _) => "input idle (testbench not offering)".to_string(),
            (Direction::Out, false, _) => "output starved: valid low".to_string(),
            (Direction::Out, true, false) => "output back-pressured".to_string(),
            _ => "handshaking".to_string(),
        };
        parts.push(format!("`{}` {}/{} beats, {why}", l.spec.name, l.done, l.total));
    }
    if parts.is_empty() {
        "no stream pending".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_unpack_roundtrip_odd_widths() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for width in [1u32, 2, 3, 7, 13, 31, 32, 33, 63, 64] {
            for lanes in [1usize, 2, 5] {
                for signed in [false, true] {
                    let (lo, hi) = mase_hwlib::value_range(width, signed);
                    let v: Vec<i64> = (0..lanes).map(|_| rng.gen_range(lo..=hi)).collect();
                    let mut w = Vec::new();
                    pack(&v, width, &mut w);
                    assert_eq!(w.len(), (lanes * width as usize).div_ceil(32));
                    let mut back = Vec::new();
                    unpack(&w, lanes, width, signed, &mut back);
                    assert_eq!(back, v, "width {width} lanes {lanes} signed {signed}");
                    if lanes * width as usize <= 64 {
                        let x = w[0] as u64 | (w.get(1).copied().unwrap_or(0) as u64) << 32;
                        unpack_u64(x, lanes, width, signed, &mut back);
                        assert_eq!(back, v, "u64 path: width {width} lanes {lanes} signed {signed}");
                    }
                }
            }
        }
    }
}
