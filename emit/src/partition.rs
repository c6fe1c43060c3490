//! The `partition_devices` pass: spreads the design over the devices of `[[hardware.devices]]`
//! as contiguous cuts of the dataflow order, choosing the cuts and every node's parallelism for
//! the smallest system initiation interval within every device's budgets.
//!
//! The system's ii is the slowest of the devices' stages (each instance's cycles per inference)
//! and the boundaries' transfer times. A boundary may be crossed by several streams, each on a
//! link of its own that gets a share of the boundary's `link_bits_per_cycle` in proportion to
//! the bits it carries per inference (at least one bit each; [`crate::system::boundary_widths`]),
//! so a boundary's time is the slowest of its links' beats × flits per beat at their shares
//! ([`boundary_cycles`]). For a candidate ii `T`, every node takes its cheapest parallelism
//! meeting `T` (as with a single device), the design is stitched, and the node instances are
//! assigned greedily in dataflow order: each device takes the longest run that fits its
//! multipliers, memory bits (its receivers' buffers included) and LUTs (when given) and ends at a
//! valid cut (its streams, however many, cross in at most `T` link cycles, and the boundary has
//! at least one bit per stream). Taking the longest run is optimal for a given `T` because a
//! shorter remainder never needs more of the later devices. `T` is the smallest feasible one,
//! by bisection (a larger `T` only makes nodes cheaper); `target_ii` fixes it,
//! `multiplier_budget` caps the system's total. Devices left over at the end stay unused.

use std::collections::BTreeMap;

use mase_hwlib::components::link;
use mase_hwlib::Component;
use mase_ir::pass::{Pass, PassArgs, PassInfo};
use mase_ir::{MaseGraph, NodeId, Result};
use serde_json::json;

use crate::bind::{bind_graph, graph_error, Bindings, Par};
use crate::config::{Device, HwConfig};
use crate::design::{Design, InstKind};
use crate::hw_pass::{apply, check_forms, record, with_node_settings};
use crate::parallel::{Selection, Space};
use crate::system::{boundary_cycles, boundary_widths, crossing, link_cycles, link_on, place, Placement};

/// The pass (registered in [`crate::HARDWARE_PASSES`]).
pub struct PartitionDevices;

impl Pass for PartitionDevices {
    fn name(&self) -> &'static str {
        "partition_devices"
    }

    fn description(&self) -> &'static str {
        "spread the design over [[hardware.devices]]: device ids and parallelism for the smallest system ii within each device's budgets"
    }

    fn run(&self, graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
        let cfg = HwConfig::from_table(args, "partition_devices arguments")?;
        partition_devices(graph, &cfg)
    }
}

/// What one node instance costs on a device.
#[derive(Debug, Clone, Copy, Default)]
struct Load {
    multipliers: u64,
    memory_bits: u64,
    lut: u64,
    cycles: u64,
}

impl std::ops::AddAssign for Load {
    fn add_assign(&mut self, o: Load) {
        self.multipliers += o.multipliers;
        self.memory_bits += o.memory_bits;
        self.lut += o.lut;
        self.cycles = self.cycles.max(o.cycles);
    }
}

/// The design at one candidate ii and what each of its instances costs.
struct Candidate {
    design: Design,
    loads: Vec<Load>,
    /// Node instances in dataflow order (indices into the design's instances).
    order: Vec<usize>,
    selection: BTreeMap<NodeId, crate::parallel::Choice>,
}

/// Why no partition exists at some ii: the node that fits on no remaining device.
#[derive(Debug, Clone)]
struct Blocked {
    node: String,
    component: String,
    device: usize,
    need: Load,
    why: String,
}

fn candidate(b: &Bindings, space: &Space, t: u64, top: &str) -> Result<Candidate> {
    let selection = space.at(t);
    let par: BTreeMap<NodeId, Par> = selection.iter().map(|(id, c)| (*id, c.par)).collect();
    let design = crate::design::stitch(b, &par, top)?;
    let loads = design
        .instances
        .iter()
        .map(|i| {
            let c = i.component();
            let cost = c.cost(&i.params);
            Load {
                multipliers: cost.multipliers,
                memory_bits: cost.memory_bits,
                lut: crate::report::instance_resources(i).lut,
                cycles: i.cycles_per_inference(),
            }
        })
        .collect();
    let order = (0..design.instances.len()).filter(|&i| design.instances[i].kind == InstKind::Node).collect();
    Ok(Candidate { design, loads, order, selection })
}

/// Node `i` of the dataflow order is on device `dev[i]`.
fn placement(c: &Candidate, dev: &[usize]) -> Result<Placement> {
    let pos: BTreeMap<usize, usize> = c.order.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let d = &c.design;
    place(d, &|i, _| Ok(dev[pos[&i]]))
}

/// The load of device `k` under a placement, the receiving ends of its incoming links included
/// (each at its share of the boundary's width).
fn device_load(c: &Candidate, pl: &Placement, k: usize, devices: &[Device]) -> Load {
    let mut load = Load::default();
    for (i, l) in c.loads.iter().enumerate() {
        if pl.inst[i] == k {
            load += *l;
        }
    }
    if k > 0 {
        if let Some((lw, lat)) = devices[k - 1].link() {
            let cross = crossing(&c.design, pl, k - 1);
            if let Ok(widths) = boundary_widths(&c.design, &cross, lw) {
                for (&w, width) in cross.iter().zip(widths) {
                    if let Ok((p, _, _)) = link_on(&c.design.wires[w], width, lat) {
                        load.memory_bits += link::Link.cost(&p).memory_bits;
                    }
                }
            }
        }
    }
    load
}

fn fits(load: &Load, dev: &Device, t: u64) -> bool {
    load.multipliers <= dev.multipliers
        && load.memory_bits <= dev.memory_bits
        && dev.lut.is_none_or(|l| load.lut <= l)
        && load.cycles <= t
}

/// The cut after device `b` is valid: nothing crosses it, or its streams cross the device's link
/// (at least one bit each) within `t` link cycles, the slowest of the links sharing it.
fn cut_ok(c: &Candidate, pl: &Placement, b: usize, devices: &[Device], t: u64) -> bool {
    let cross = crossing(&c.design, pl, b);
    match devices[b].link() {
        _ if cross.is_empty() => true,
        Some((lw, _)) => boundary_cycles(&c.design, &cross, lw).is_some_and(|cycles| cycles <= t),
        None => false,
    }
}

/// The most link cycles any cut of `c`'s dataflow order needs on any of the devices' links (the
/// links shared by the streams crossing it; cuts with fewer bits than streams left out).
fn slowest_cut(c: &Candidate, devices: &[Device]) -> Result<u64> {
    let mut widths: Vec<usize> = devices.iter().filter_map(|d| d.link()).map(|(w, _)| w).collect();
    widths.sort_unstable();
    widths.dedup();
    let n = c.order.len();
    let mut worst = 0;
    for end in 1..n {
        let dev: Vec<usize> = (0..n).map(|i| usize::from(i >= end)).collect();
        let pl = placement(c, &dev)?;
        let cross = crossing(&c.design, &pl, 0);
        for &lw in &widths {
            worst = worst.max(boundary_cycles(&c.design, &cross, lw).unwrap_or(0));
        }
    }
    Ok(worst)
}

/// The greedy assignment at ii `t`: each device's node run (device per node of the dataflow
/// order), or the node that fits nowhere.
fn assign(c: &Candidate, devices: &[Device], t: u64) -> Result<std::result::Result<Vec<usize>, Blocked>> {
    let n = c.order.len();
    let mut dev = vec![0usize; n];
    let mut start = 0;
    for k in 0..devices.len() {
        if start == n {
            break;
        }
        let last = k + 1 == devices.len();
        let mut chosen = None;
        // For the message when nothing works: the longest run that fits, the first valid cut.
        let (mut fit_end, mut first_cut) = (None, None);
        for end in (start + 1..=n).rev() {
            for (i, d) in dev.iter_mut().enumerate().skip(start) {
                *d = if i < end { k } else { k + 1 };
            }
            let pl = placement(c, &dev)?;
            let fit = fits(&device_load(c, &pl, k, devices), &devices[k], t);
            let cut = end == n || (!last && cut_ok(c, &pl, k, devices, t));
            if fit {
                fit_end.get_or_insert(end);
            }
            if cut {
                first_cut = Some(end);
            }
            if fit && cut && chosen.is_none() {
                chosen = Some(end);
            }
        }
        match chosen {
            Some(end) => {
                for d in dev.iter_mut().take(end).skip(start) {
                    *d = k;
                }
                start = end;
            }
            None => {
                let node = |i: usize| c.design.instances[c.order[i]].node.clone();
                let why = match (fit_end, first_cut) {
                    (None, _) => "it alone exceeds the device".to_string(),
                    (Some(f), Some(cut)) => format!(
                        "the device holds the nodes up to '{}', but the first place after it where the crossing \
                         streams fit the link (at least one bit each, in {t} link cycles) is after '{}'",
                        node(f - 1),
                        node(cut - 1)
                    ),
                    (Some(f), None) => format!(
                        "the device holds the nodes up to '{}', and no cut after it has its crossing streams \
                         fit the link (at least one bit each, in {t} link cycles)",
                        node(f - 1)
                    ),
                };
                let inst = &c.design.instances[c.order[start]];
                return Ok(Err(Blocked {
                    node: inst.node.clone(),
                    component: inst.component.clone(),
                    device: k,
                    need: c.loads[c.order[start]],
                    why,
                }));
            }
        }
    }
    if start < n {
        let inst = &c.design.instances[c.order[start]];
        return Ok(Err(Blocked {
            node: inst.node.clone(),
            component: inst.component.clone(),
            device: devices.len(),
            need: c.loads[c.order[start]],
            why: "every device is full before it".into(),
        }));
    }
    Ok(Ok(dev))
}

fn blocked_error(b: &Blocked, devices: &[Device], t: u64, budget_note: &str) -> mase_ir::Error {
    let dev = match devices.get(b.device) {
        Some(d) => format!(
            " on device '{}' ({} multipliers, {} memory bits{})",
            d.name,
            d.multipliers,
            d.memory_bits,
            d.lut.map(|l| format!(", {l} LUT")).unwrap_or_default()
        ),
        None => String::new(),
    };
    graph_error(format!(
        "partition_devices: node '{}' ({}) fits on no device at ii {t} cycles{budget_note}: it needs {} multipliers, \
         {} memory bits, {} LUT (estimate){dev}, where {}; add devices, raise their budgets or widen the links",
        b.node, b.component, b.need.multipliers, b.need.memory_bits, b.need.lut, b.why
    ))
}

/// Runs the pass with a parsed configuration: device ids and parallelism recorded in hardware
/// metadata; the info map has the system ii, the per-device node runs and loads.
pub fn partition_devices(graph: MaseGraph, cfg: &HwConfig) -> Result<(MaseGraph, PassInfo)> {
    let devices = &cfg.devices;
    if devices.is_empty() {
        return Err(graph_error("partition_devices: the configuration has no [[hardware.devices]]"));
    }
    let mut graph = with_node_settings(graph, cfg);
    let bound = bind_graph(&graph, None)?;
    check_forms(&bound)?;
    let space = Space::new(&bound, cfg)?;
    let top = cfg.top_name();
    let total_ok = |c: &Candidate| {
        cfg.multiplier_budget.is_none_or(|b| c.selection.values().map(|x| x.multipliers).sum::<u64>() <= b)
    };
    let budget_note =
        cfg.multiplier_budget.map(|b| format!(" (system multiplier_budget {b})")).unwrap_or_default();
    let fixed_target = cfg.target_ii.or(cfg.target_ii_per_row.map(|t| t * space.rows));
    let try_t = |t: u64| -> Result<(Candidate, std::result::Result<Vec<usize>, Blocked>)> {
        let c = candidate(&bound, &space, t, top)?;
        let a = if total_ok(&c) {
            assign(&c, devices, t)?
        } else {
            let total: u64 = c.selection.values().map(|x| x.multipliers).sum();
            return Err(graph_error(format!(
                "partition_devices: at ii {t} the design needs {total} multipliers, above multiplier_budget{budget_note}"
            )));
        };
        Ok((c, a))
    };
    let (t, cand, dev) = match fixed_target {
        Some(t) => {
            let (c, a) = try_t(t)?;
            match a {
                Ok(dev) => (t, c, dev),
                Err(b) => return Err(blocked_error(&b, devices, t, &budget_note)),
            }
        }
        None => {
            // Above the slowest design only the links can still be too slow.
            let slow = space.slowest();
            let c = candidate(&bound, &space, slow, top)?;
            let narrowest =
                devices.iter().filter_map(|d| d.link()).map(|(w, _)| w).min().unwrap_or(usize::MAX);
            let link_max =
                c.design.wires.iter().map(|w| link_cycles(&c.design, w, narrowest)).max().unwrap_or(0);
            let mut hi = slow.max(link_max);
            let feasible = |t: u64| -> Result<Option<(Candidate, Vec<usize>)>> {
                let c = candidate(&bound, &space, t, top)?;
                if !total_ok(&c) {
                    return Ok(None);
                }
                Ok(assign(&c, devices, t)?.ok().map(|dev| (c, dev)))
            };
            let mut found = feasible(hi)?;
            if found.is_none() {
                // A cut crossed by several streams shares its link, so it may need longer than
                // any one stream alone: the slowest cut of the slowest design at any link width.
                let cut_max = slowest_cut(&c, devices)?;
                if cut_max > hi {
                    hi = cut_max;
                    found = feasible(hi)?;
                }
            }
            let mut best = match found {
                Some(x) => x,
                None => {
                    let (_, a) = try_t(hi)?;
                    return Err(match a {
                        Err(b) => blocked_error(&b, devices, hi, &budget_note),
                        Ok(_) => graph_error("partition_devices: no feasible partition"),
                    });
                }
            };
            let mut lo = space.fastest();
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match feasible(mid)? {
                    Some(x) => {
                        best = x;
                        hi = mid;
                    }
                    None => lo = mid + 1,
                }
            }
            (hi, best.0, best.1)
        }
    };
    // Record: every node of an instance gets its device; the others (inputs, outputs, implicit
    // and constant nodes) the device of their first consumer, else of their producer.
    let pl = placement(&cand, &dev)?;
    let mut node_dev: BTreeMap<String, usize> = BTreeMap::new();
    for (i, inst) in cand.design.instances.iter().enumerate() {
        if inst.kind == InstKind::Node {
            node_dev.insert(inst.node.clone(), pl.inst[i]);
        }
    }
    for (p, port) in cand.design.ports.iter().enumerate() {
        node_dev.entry(port.tensor.clone()).or_insert(pl.port[p]);
    }
    let ids: Vec<NodeId> = graph.ids().collect();
    let mut by_id: BTreeMap<NodeId, usize> = BTreeMap::new();
    for id in &ids {
        if let Some(d) = node_dev.get(&graph.node(*id).name) {
            by_id.insert(*id, *d);
        }
    }
    for id in ids.iter().rev() {
        if by_id.contains_key(id) {
            continue;
        }
        let users: Option<usize> = graph.users(*id).iter().filter_map(|u| by_id.get(u).copied()).min();
        if let Some(d) = users {
            by_id.insert(*id, d);
        }
    }
    for id in &ids {
        if !by_id.contains_key(id) {
            let d = graph.node(*id).inputs.iter().filter_map(|u| by_id.get(u).copied()).max().unwrap_or(0);
            by_id.insert(*id, d);
        }
    }
    let sel = Selection { chosen: cand.selection.clone(), target_ii: t, mode: "devices" };
    let (metas, mut info) = record(&bound, &sel, &|id| by_id.get(&id).copied().unwrap_or(0))?;
    drop(bound);
    apply(&mut graph, metas);
    let used = pl.inst.iter().copied().max().map_or(1, |m| m + 1);
    let mut per_device = Vec::new();
    for (k, d) in devices.iter().enumerate().take(used) {
        let load = device_load(&cand, &pl, k, devices);
        let nodes: Vec<&str> = cand
            .order
            .iter()
            .filter(|&&i| pl.inst[i] == k)
            .map(|&i| cand.design.instances[i].node.as_str())
            .collect();
        per_device.push(json!({
            "device": d.name,
            "nodes": nodes,
            "ii_cycles": load.cycles,
            "multipliers": load.multipliers,
            "memory_bits": load.memory_bits,
            "lut_estimate": load.lut,
        }));
    }
    // One entry per link; a boundary several streams share also names each link's stream and
    // its share of the width.
    let mut links = Vec::new();
    for b in 0..used.saturating_sub(1) {
        let cross = crossing(&cand.design, &pl, b);
        let Some((lw, lat)) = devices[b].link() else { continue };
        let Ok(widths) = boundary_widths(&cand.design, &cross, lw) else { continue };
        for (&w, width) in cross.iter().zip(widths) {
            let wire = &cand.design.wires[w];
            let mut entry = json!({
                "from": devices[b].name,
                "to": devices[b + 1].name,
                "link_bits_per_cycle": lw,
                "link_latency_cycles": lat,
                "cycles": link_cycles(&cand.design, wire, width),
            });
            if cross.len() > 1 {
                entry["tensor"] = crate::system::stream_name(&cand.design, wire).into();
                entry["width"] = width.into();
            }
            links.push(entry);
        }
    }
    info.insert("devices".into(), per_device.into());
    info.insert("links".into(), links.into());
    Ok((graph, info))
}
