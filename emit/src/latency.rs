//! First-output latency of a stitched design from its components' cost models, and the chain
//! of instances that sets it.
//!
//! A component's own `latency_cycles` holds when its inputs arrive at its full rate. In a
//! design they often do not: an instance downstream of a slow one receives its input spread
//! over the producer's cycles per inference, and an instance that must take a whole row (or a
//! whole operand, see [`Component::beats_before_first_output`]) before its first output waits
//! for that spread. The model times every stream beat by beat: a beat leaves an
//! instance no earlier than its own rate allows after its first beat, and no earlier than the
//! `data_in_0` beats it is computed from have arrived, followed back through the producers to
//! the top's inputs. So a slow stage upstream paces everything after it, and the order a
//! reordering component emits in is kept through the lane converters and casts after it (the
//! first head of a transposed key needs its whole sentence: [`Component::input_beats_for_output`];
//! a row select's kept row leaves as soon as it has passed). For an instance that needs `need`
//! beats of a port,
//!
//! `first_output = max over ports (arrival(need) − (need − 1) + latency)`:
//! the `need` beats arrive at the producer's pace instead of one per cycle, the rest of the
//! component's latency follows. The design's latency is the latest first output on a top
//! output. Measured under Verilator without stalls it is within 3 % on the whole-model fixtures
//! (`tests/whole_model.rs`) and a MiniLM-sized model.
//!
//! [`Component::beats_before_first_output`]: mase_hwlib::Component::beats_before_first_output
//! [`Component::input_beats_for_output`]: mase_hwlib::Component::input_beats_for_output

use serde::Serialize;

use crate::design::{Design, Endpoint, PortDir};

/// One instance on the chain that sets the latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyStep {
    /// Instance name.
    pub instance: String,
    /// Component.
    pub component: String,
    /// Cycle (from the first input beat of the design) at which its first output beat leaves.
    pub first_output: u64,
    /// Cycles it adds to the chain: from its producer's first beat to its own first output.
    pub added: u64,
    /// Of `added`, the cycles spent waiting for input the producer delivers below this
    /// instance's full rate (the rest is the component's own latency).
    pub waiting: u64,
}

/// The latency model's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// Cycles from the first input beat to the first output beat, no stalls.
    pub cycles: u64,
    /// The chain that sets it, input side first.
    pub path: Vec<LatencyStep>,
}

/// Timing of one instance's output stream.
#[derive(Debug, Clone, Default)]
struct Timing {
    /// Cycle its first beat leaves.
    first: u64,
    /// Its own cycles per inference (at full input rate).
    cycles: u64,
    /// `data_out_0` beats per inference.
    beats: u64,
    /// `data_out_0` beats per row (a reordering component's unit).
    row_beats: u64,
    /// `data_in_0` beats per row, and of them the beats it takes before a row's first output.
    in_row_beats: u64,
    need: u64,
    /// Its own latency (cycles from taking `need` beats at full rate to its first output).
    latency: u64,
    /// The source of its `data_in_0` (for a reordering component's timing).
    feed: Option<Endpoint>,
    /// The instance that set `first` (none: a top input).
    pred: Option<usize>,
    /// The cycles of its step spent waiting for input below full rate.
    waiting: u64,
}

/// Cycle at which beat `n ≥ 1` of an inference leaves `from`: a top input delivers one beat per
/// cycle from cycle 0. An instance's beat leaves no earlier than its own rate allows after its
/// first beat, and no earlier than the `data_in_0` beats it is computed from arrive (followed
/// back through its producers, so a slow stage upstream paces it, and the order a reordering
/// component emits in is kept: the first head of a transposed key needs the whole sentence).
fn arrival(d: &Design, t: &[Timing], from: &Endpoint, n: u64) -> u64 {
    let s = match from {
        Endpoint::Top(_) => return n.saturating_sub(1),
        Endpoint::Inst(s, _) => *s,
    };
    let ts = &t[s];
    let inst = &d.instances[s];
    let c = inst.component();
    let (row, k) = ((n - 1) / ts.row_beats.max(1), (n - 1) % ts.row_beats.max(1) + 1);
    // Input beats (within the input row) output beat `k` of a row needs. A component that
    // reorders or drops beats moves one per cycle once they are in; any other spreads its
    // output over its own cycles per inference.
    let (within, own) = match c.input_beats_for_output(&inst.params, k as usize) {
        Some(m) => (m as u64, ts.first + n - 1),
        None => (
            ts.need.max((k * ts.in_row_beats).div_ceil(ts.row_beats.max(1))),
            ts.first + ((n.saturating_sub(1) as u128 * ts.cycles as u128) / ts.beats.max(1) as u128) as u64,
        ),
    };
    let within = within.min(ts.in_row_beats);
    let Some(feed) = &ts.feed else { return own };
    let m = row * ts.in_row_beats + within.max(1);
    let fed = arrival(d, t, feed, m).saturating_sub(ts.need.min(within).saturating_sub(1)) + ts.latency;
    own.max(fed)
}

/// The latency model of `d` (see the module documentation).
pub fn latency(d: &Design) -> Latency {
    let mut t = vec![Timing::default(); d.instances.len()];
    for i in topological_order(d) {
        let inst = &d.instances[i];
        let c = inst.component();
        let p = &inst.params;
        let cost = c.cost(p);
        let streams = c.streams(p);
        let row_beats =
            |name: &str| streams.iter().find(|s| s.name == name).map_or(1, |s| s.beats_per_row) as u64;
        let rows = streams
            .iter()
            .find(|s| s.name == "data_in_0")
            .map_or(1, |s| inst.numel_in.div_ceil((s.beats_per_row * s.lanes).max(1)).max(1))
            as u64;
        let main_need = c.beats_before_first_output(p, "data_in_0") as u64;
        let mut me = Timing {
            row_beats: row_beats("data_out_0"),
            in_row_beats: row_beats("data_in_0"),
            need: main_need.clamp(1, row_beats("data_in_0").max(1)),
            latency: cost.latency_cycles,
            cycles: inst.cycles_per_inference(),
            ..Timing::default()
        };
        me.beats = me.row_beats * rows;
        let mut first = None;
        for w in &d.wires {
            let Endpoint::Inst(to, port) = &w.to else { continue };
            if *to != i {
                continue;
            }
            let (from_first, pred) = match &w.from {
                Endpoint::Top(_) => (0, None),
                Endpoint::Inst(s, _) => (t[*s].first, Some(*s)),
            };
            if port == "data_in_0" {
                me.feed = Some(w.from.clone());
            }
            let need =
                (c.beats_before_first_output(p, port) as u64).clamp(1, (row_beats(port) * rows).max(1));
            // The `need` beats arrive at the producer's pace; at full rate they would take `need`
            // cycles from its first beat, which the component's own latency already counts.
            let start = arrival(d, &t, &w.from, need).saturating_sub(need - 1).max(from_first);
            let out = start + cost.latency_cycles;
            if first.is_none_or(|f| out >= f) {
                first = Some(out);
                me.pred = pred;
                me.waiting = start - from_first;
            }
        }
        me.first = first.unwrap_or(cost.latency_cycles);
        t[i] = me;
    }
    let last = d
        .wires
        .iter()
        .filter_map(|w| match (&w.from, &w.to) {
            (Endpoint::Inst(s, _), Endpoint::Top(k)) if d.ports[*k].dir == PortDir::Output => Some(*s),
            _ => None,
        })
        .max_by_key(|s| (t[*s].first, std::cmp::Reverse(*s)));
    let mut path = Vec::new();
    let mut at = last;
    while let Some(i) = at {
        let before = t[i].pred.map_or(0, |p| t[p].first);
        path.push(LatencyStep {
            instance: d.instances[i].name.clone(),
            component: d.instances[i].component.clone(),
            first_output: t[i].first,
            added: t[i].first - before,
            waiting: t[i].waiting,
        });
        at = t[i].pred;
    }
    path.reverse();
    Latency { cycles: last.map_or(0, |s| t[s].first), path }
}

/// The instances of `d`, each after every instance that feeds it (the design is acyclic).
fn topological_order(d: &Design) -> Vec<usize> {
    let n = d.instances.len();
    let mut feeds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending = vec![0usize; n];
    for w in &d.wires {
        if let (Endpoint::Inst(a, _), Endpoint::Inst(b, _)) = (&w.from, &w.to) {
            feeds[*a].push(*b);
            pending[*b] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| pending[i] == 0).rev().collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &b in &feeds[i] {
            pending[b] -= 1;
            if pending[b] == 0 {
                ready.push(b);
            }
        }
    }
    order
}
