//! First-output latency of a stitched design from its components' cost models, and the chain
//! of instances that sets it.
//!
//! A component's own `latency_cycles` holds when its inputs arrive at its full rate. In a
//! design they often do not: an instance downstream of a slow one receives its input spread
//! over the producer's cycles per inference, and an instance that must take a whole row (or a
//! whole operand, see [`Component::beats_before_first_output`]) before its first output waits
//! for that spread. The model follows every stream with two figures: when its first beat
//! leaves and how many cycles one inference's data takes to leave (the slowest instance
//! upstream sets that pace). Then, for an instance fed `need` of the `beats` per inference of a
//! port by a producer whose beats leave evenly from `first` to `last`,
//!
//! `first_output = max over ports (first + max(0, need/beats · (last − first) − need) + latency)`:
//! the `need` beats arrive at the producer's pace instead of one per cycle, the rest of the
//! component's latency follows. The design's latency is the latest first output on a top output.
//!
//! [`Component::beats_before_first_output`]: mase_hwlib::Component::beats_before_first_output

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
#[derive(Debug, Clone, Copy, Default)]
struct Timing {
    /// Cycle its first beat leaves.
    first: u64,
    /// Cycle the last beat of the inference leaves.
    last: u64,
    /// The instance that set `first` (none: a top input), and the waiting part of its step.
    pred: Option<usize>,
    waiting: u64,
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
        let rows = streams
            .iter()
            .find(|s| s.name == "data_in_0")
            .map_or(1, |s| inst.numel_in.div_ceil((s.beats_per_row * s.lanes).max(1)).max(1));
        // After its producers' last beats, the instance still processes the part of its input
        // it needs per output (e.g. a linear's last row) at its own rate.
        let main_need = c.beats_before_first_output(p, "data_in_0") as u64;
        let main_row = streams.iter().find(|s| s.name == "data_in_0").map_or(1, |s| s.beats_per_row) as u64;
        let tail = cost.latency_cycles
            + (cost.ii_cycles * main_need).div_ceil(main_row.max(1)).saturating_sub(main_need);
        let mut me = Timing::default();
        let mut inputs_last = 0;
        for w in &d.wires {
            let Endpoint::Inst(to, port) = &w.to else { continue };
            if *to != i {
                continue;
            }
            let (first, last, pred) = match &w.from {
                Endpoint::Top(k) => (0, d.ports[*k].numel().div_ceil(d.ports[*k].lanes.max(1)) as u64, None),
                Endpoint::Inst(s, _) => (t[*s].first, t[*s].last, Some(*s)),
            };
            let beats = streams.iter().find(|s| &s.name == port).map_or(1, |s| s.beats_per_row) * rows;
            let need = c.beats_before_first_output(p, port).min(beats) as u64;
            let arrive = (need as u128 * (last - first) as u128).div_ceil(beats.max(1) as u128) as u64;
            let waiting = arrive.saturating_sub(need);
            let out = first + waiting + cost.latency_cycles;
            if out >= me.first {
                me.first = out;
                me.pred = pred;
                me.waiting = waiting;
            }
            inputs_last = inputs_last.max(last);
        }
        me.last = (me.first + inst.cycles_per_inference()).max(inputs_last + tail);
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
