//! Multi-device systems: a stitched design spread over the devices of `[[hardware.devices]]`,
//! with the streams that cross from one device to the next carried by links.
//!
//! A [`System`] is the whole stitched design with one `link` instance (the library's
//! `mase_link`: sender, link model and receiver in one streaming module) on every stream that
//! crosses a device boundary, and the device of every instance and top port. Because the link
//! is an ordinary instance of that flat design, the cost, latency and resource models, the
//! report and the golden model all read it as they read any instance; the emitted hardware
//! splits each link into its sender on one device and its receiver on the next
//! ([`crate::system_project`]).
//!
//! Which device an instance belongs to: a node's instance takes its node's `device_id`; an
//! output port the device of the node that produces it; glue (forks, FIFOs, casts, lane
//! converters) and input ports the first device that consumes them, so a stream crosses a
//! boundary once, as its producer made it. A boundary carries at most one stream (one link per
//! pair of neighbouring devices); a stream that skips a device passes through it.

use mase_hwlib::components::link;
use mase_hwlib::Params;
use mase_ir::fixed::FixedFormat;
use mase_ir::{MaseGraph, Result};
use serde::Serialize;

use crate::bind::graph_error;
use crate::config::Device;
use crate::design::{Design, Endpoint, InstKind, Instance, PortDir, Wire};

/// Where every instance and top port of a design lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Device of each instance (index into [`Design::instances`]).
    pub inst: Vec<usize>,
    /// Device of each top port.
    pub port: Vec<usize>,
}

impl Placement {
    /// Device of a wire's endpoint.
    pub fn of(&self, e: &Endpoint) -> usize {
        match e {
            Endpoint::Top(p) => self.port[*p],
            Endpoint::Inst(i, _) => self.inst[*i],
        }
    }
}

/// Places every instance and port of `d`, given the device of each node instance
/// (`node_device(index, instance)`, asked only for [`InstKind::Node`] instances).
pub fn place(d: &Design, node_device: &dyn Fn(usize, &Instance) -> Result<usize>) -> Result<Placement> {
    let n = d.instances.len();
    let mut inst: Vec<Option<usize>> = vec![None; n];
    for (i, x) in d.instances.iter().enumerate() {
        if x.kind == InstKind::Node {
            inst[i] = Some(node_device(i, x)?);
        }
    }
    // An output port lives with the node that produces it: walk back through glue.
    let driver = |to: &Endpoint| d.wires.iter().find(|w| w.to == *to).map(|w| w.from.clone());
    let mut port: Vec<Option<usize>> = vec![None; d.ports.len()];
    for (k, p) in d.ports.iter().enumerate() {
        if p.dir != PortDir::Output {
            continue;
        }
        let mut at = driver(&Endpoint::Top(k));
        let mut hops = 0;
        while let Some(Endpoint::Inst(i, _)) = &at {
            if let Some(dev) = inst[*i] {
                port[k] = Some(dev);
                break;
            }
            at = driver(&Endpoint::Inst(*i, "data_in_0".into()));
            hops += 1;
            if hops > n {
                break;
            }
        }
        // A graph input passed straight to an output, or glue only: device 0.
        port[k].get_or_insert(0);
    }
    // Glue and input ports: the first device among their consumers (iterated to a fixpoint,
    // since glue feeds glue).
    loop {
        let mut changed = false;
        for i in 0..n {
            if inst[i].is_some() {
                continue;
            }
            let succ: Option<Vec<usize>> = d
                .wires
                .iter()
                .filter(|w| matches!(&w.from, Endpoint::Inst(j, _) if *j == i))
                .map(|w| match &w.to {
                    Endpoint::Top(p) => port[*p],
                    Endpoint::Inst(j, _) => inst[*j],
                })
                .collect();
            if let Some(dev) = succ.and_then(|s| s.into_iter().min()) {
                inst[i] = Some(dev);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let inst: Vec<usize> = inst
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.ok_or_else(|| {
                graph_error(format!("instance {} feeds nothing; cannot place it", d.instances[i].name))
            })
        })
        .collect::<Result<_>>()?;
    for (k, p) in d.ports.iter().enumerate() {
        if p.dir == PortDir::Input {
            port[k] = d
                .wires
                .iter()
                .filter(|w| w.from == Endpoint::Top(k))
                .map(|w| match &w.to {
                    Endpoint::Top(q) => port[*q].unwrap_or(0),
                    Endpoint::Inst(j, _) => inst[*j],
                })
                .min();
        }
    }
    Ok(Placement { inst, port: port.into_iter().map(|p| p.unwrap_or(0)).collect() })
}

/// The wires of `d` that cross the boundary after device `b` (from device ≤ b to device > b).
pub fn crossing(d: &Design, pl: &Placement, b: usize) -> Vec<usize> {
    (0..d.wires.len()).filter(|&w| pl.of(&d.wires[w].from) <= b && pl.of(&d.wires[w].to) > b).collect()
}

/// Beats a wire carries per inference.
pub fn wire_beats(d: &Design, w: &Wire) -> u64 {
    let numel = match &w.from {
        Endpoint::Top(p) => d.ports[*p].numel(),
        Endpoint::Inst(i, port) => {
            let inst = &d.instances[*i];
            let streams = inst.component().streams(&inst.params);
            let unit = |name: &str| {
                streams.iter().find(|s| s.name == name).map_or(1, |s| (s.beats_per_row * s.lanes).max(1))
            };
            let rows = inst.numel_in.div_ceil(unit("data_in_0"));
            rows * unit(port)
        }
    };
    numel.div_ceil(w.lanes.max(1)) as u64
}

/// Link cycles per inference of wire `w` over a link of `link_width` bits per cycle.
pub fn link_cycles(d: &Design, w: &Wire, link_width: usize) -> u64 {
    link::link_cycles(wire_beats(d, w), w.lanes * w.width as usize, link_width)
}

/// The `link` instance that carries `wire` over a link of `link_width` bits per cycle and
/// `latency` cycles, with a receiver deep enough for full rate: (parameters, flits per beat,
/// receiver depth in beats).
pub fn link_on(
    wire: &Wire,
    link_width: usize,
    latency: usize,
) -> std::result::Result<(Params, usize, usize), String> {
    let flits = link::flits_per_beat(wire.lanes * wire.width as usize, link_width);
    let depth = link::full_rate_depth(latency, flits);
    Ok((link::instance(wire.width, wire.lanes, link_width, latency, depth)?, flits, depth))
}

/// One link of a system: the stream it carries across the boundary after device `from`.
#[derive(Debug, Clone, Serialize)]
pub struct LinkInfo {
    /// The sending device (the receiver is `from + 1`).
    pub from: usize,
    /// The `link` instance in [`System::design`].
    pub instance: usize,
    /// Node whose result the stream carries.
    pub tensor: String,
    /// Elements per beat.
    pub lanes: usize,
    /// Element format.
    #[serde(serialize_with = "ser_format")]
    pub format: FixedFormat,
    /// Link bits per cycle.
    pub link_width: usize,
    /// One-way latency of the link, cycles.
    pub latency: usize,
    /// Flits per beat.
    pub flits: usize,
    /// Beats the receiver buffers (the sender's credits).
    pub depth: usize,
    /// Beats per inference.
    pub beats: u64,
    /// Link cycles per inference (beats × flits): the link's initiation interval.
    pub cycles: u64,
}

fn ser_format<S: serde::Serializer>(f: &FixedFormat, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&crate::bind::fmt_name(f))
}

/// A design spread over devices.
#[derive(Debug, Clone)]
pub struct System {
    /// The whole design with a `link` instance on every boundary crossing.
    pub design: Design,
    /// Where each instance and port of [`System::design`] lives (a link: its sending device).
    pub placement: Placement,
    /// The devices, in order.
    pub devices: Vec<Device>,
    /// The links, in boundary order (at most one per boundary).
    pub links: Vec<LinkInfo>,
}

impl System {
    /// Devices that hold at least one instance or port (trailing devices may stay unused).
    pub fn used_devices(&self) -> usize {
        let pl = &self.placement;
        pl.inst.iter().chain(pl.port.iter()).copied().max().map_or(1, |m| m + 1)
    }

    /// The link on the boundary after device `b`, if a stream crosses it.
    pub fn link_after(&self, b: usize) -> Option<&LinkInfo> {
        self.links.iter().find(|l| l.from == b)
    }
}

/// Spreads `d` over `devices` with the given placement: every crossing wire gets one `link`
/// instance per boundary it crosses.
pub fn build(d: &Design, pl: &Placement, devices: &[Device]) -> Result<System> {
    let mut design = d.clone();
    let mut placement = pl.clone();
    let mut links = Vec::new();
    for b in 0..devices.len().saturating_sub(1) {
        let cross = crossing(&design, &placement, b);
        if cross.len() > 1 {
            let names: Vec<String> = cross.iter().map(|&w| stream_name(&design, &design.wires[w])).collect();
            return Err(graph_error(format!(
                "the boundary between devices '{}' and '{}' is crossed by {} streams ({}); a link carries one",
                devices[b].name,
                devices[b + 1].name,
                cross.len(),
                names.join(", ")
            )));
        }
        let Some(&w) = cross.first() else { continue };
        let (link_width, latency) = devices[b].link().ok_or_else(|| {
            graph_error(format!("device '{}' has no link to the next device", devices[b].name))
        })?;
        let wire = design.wires[w].clone();
        let beat_bits = wire.lanes * wire.width as usize;
        let beats = wire_beats(&design, &wire);
        let (params, flits, depth) = link_on(&wire, link_width, latency)
            .map_err(|e| graph_error(format!("link after device '{}': {e}", devices[b].name)))?;
        let tensor = stream_name(&design, &wire);
        let node = match &wire.from {
            Endpoint::Inst(i, _) => design.instances[*i].node.clone(),
            Endpoint::Top(p) => design.ports[*p].tensor.clone(),
        };
        let name = crate::design::ident(&format!("link_{}_{}", devices[b].name, devices[b + 1].name));
        design.instances.push(Instance {
            name,
            component: "link".into(),
            params,
            node,
            kind: InstKind::Link,
            memories: Vec::new(),
            numel_in: beats as usize * wire.lanes,
            external: None,
        });
        let li = design.instances.len() - 1;
        placement.inst.push(b);
        design.wires[w].to = Endpoint::Inst(li, "data_in_0".into());
        design.wires.push(Wire {
            from: Endpoint::Inst(li, "data_out_0".into()),
            to: wire.to.clone(),
            ..wire.clone()
        });
        links.push(LinkInfo {
            from: b,
            instance: li,
            tensor,
            lanes: wire.lanes,
            format: wire.format,
            link_width,
            latency,
            flits,
            depth,
            beats,
            cycles: link::link_cycles(beats, beat_bits, link_width),
        });
    }
    Ok(System { design, placement, devices: devices.to_vec(), links })
}

/// Who drives a stream, for messages: the node it carries, or the input port.
fn stream_name(d: &Design, w: &Wire) -> String {
    match &w.from {
        Endpoint::Inst(i, _) => d.instances[*i].node.clone(),
        Endpoint::Top(p) => d.ports[*p].tensor.clone(),
    }
}

/// The system of a graph whose hardware metadata carries device ids (`partition_devices`),
/// from its stitched design.
pub fn system_of(graph: &MaseGraph, d: &Design, devices: &[Device]) -> Result<System> {
    let pl = place(d, &|_, inst| {
        let id =
            graph.find(&inst.node).ok_or_else(|| graph_error(format!("node '{}' vanished", inst.node)))?;
        let node = graph.node(id);
        let dev = node.meta.hardware.device_id;
        usize::try_from(dev).ok().filter(|&k| k < devices.len()).ok_or_else(|| {
            node.error(format!(
                "hardware device_id = {dev}, but the configuration has {} devices; run partition_devices",
                devices.len()
            ))
        })
    })?;
    for w in &d.wires {
        if pl.of(&w.from) > pl.of(&w.to) {
            return Err(graph_error(format!(
                "stream of '{}' runs from device {} back to device {}: device ids must follow the dataflow",
                stream_name(d, w),
                pl.of(&w.from),
                pl.of(&w.to)
            )));
        }
    }
    build(d, &pl, devices)
}
