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
//! boundary once, as its producer made it; a stream that skips a device passes through it.
//!
//! A boundary may be crossed by several streams (a transformer cut between layers carries the
//! hidden states and the attention mask; a cut inside a residual block, the residual too). Each
//! gets a link of its own: no multiplexing RTL, each link keeps its own valid and credit wires,
//! and the boundary's `link_bits_per_cycle` data bits are shared among them
//! ([`link::share_width`]: in proportion to the bits each carries per inference, at least one
//! bit each, summing to the boundary's width; a lone stream takes the whole width). Every link's
//! instance has its share as its `LINK_WIDTH`, so the cost model prices the boundary honestly:
//! its cycles per inference are the slowest of its links' ([`boundary_cycles`]).

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

/// Bits a wire carries per inference (beats × lanes × lane bits): what its link's share of a
/// boundary is proportional to.
pub fn wire_bits(d: &Design, w: &Wire) -> u64 {
    wire_beats(d, w) * (w.lanes * w.width as usize) as u64
}

/// Bits per cycle of each link on a boundary of `link_width` bits per cycle crossed by `wires`
/// (indices into [`Design::wires`], in that order): [`link::share_width`] of the bits each
/// carries per inference. An error when the boundary has fewer bits than streams.
pub fn boundary_widths(
    d: &Design,
    wires: &[usize],
    link_width: usize,
) -> std::result::Result<Vec<usize>, String> {
    let bits: Vec<u64> = wires.iter().map(|&w| wire_bits(d, &d.wires[w])).collect();
    link::share_width(&bits, link_width)
}

/// Link cycles per inference of a boundary of `link_width` bits per cycle crossed by `wires`:
/// the slowest of its links, each at its [`boundary_widths`] share (0 when nothing crosses);
/// `None` when the boundary has fewer bits than streams.
pub fn boundary_cycles(d: &Design, wires: &[usize], link_width: usize) -> Option<u64> {
    let widths = boundary_widths(d, wires, link_width).ok()?;
    Some(wires.iter().zip(widths).map(|(&w, lw)| link_cycles(d, &d.wires[w], lw)).max().unwrap_or(0))
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
    /// Link bits per cycle: the boundary's `link_bits_per_cycle` when the link has the boundary
    /// to itself, its share ([`link::share_width`]) when several streams cross it.
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
    /// How the link shares its boundary with the others crossing it; absent when it has the
    /// boundary to itself (then nothing of a link's names or files changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedBoundary>,
}

/// A link's place among the links that share one device boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SharedBoundary {
    /// The link's position among the boundary's links (the order of their streams' wires in the
    /// design), the `_<index>` of its names.
    pub index: usize,
    /// Links on the boundary.
    pub links: usize,
    /// The boundary's `link_bits_per_cycle`, split among its links.
    pub boundary_width: usize,
    /// The boundary's cycles per inference: the slowest of its links'.
    pub boundary_cycles: u64,
}

impl LinkInfo {
    /// What the link's names carry after the boundary's: `""` for a link that has its boundary
    /// to itself (`rx_data`, `link_0_flit_cycles`), `"_<index>"` for one of several
    /// (`rx_1_data`, `link_0_1_flit_cycles`).
    pub fn tag(&self) -> String {
        self.shared.map_or(String::new(), |s| format!("_{}", s.index))
    }

    /// The link for messages and figures: `'<from>' -> '<to>'`, followed by `#<index>` and the
    /// tensor in backticks and parentheses when it shares its boundary.
    pub fn describe(&self, devices: &[Device]) -> String {
        let base = format!("'{}' -> '{}'", devices[self.from].name, devices[self.from + 1].name);
        match self.shared {
            Some(s) => format!("{base} #{} (`{}`)", s.index, self.tensor),
            None => base,
        }
    }
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
    /// The links, in boundary order, and on one boundary in the order of their streams' wires
    /// (one per stream crossing it).
    pub links: Vec<LinkInfo>,
}

impl System {
    /// Devices that hold at least one instance or port (trailing devices may stay unused).
    pub fn used_devices(&self) -> usize {
        let pl = &self.placement;
        pl.inst.iter().chain(pl.port.iter()).copied().max().map_or(1, |m| m + 1)
    }

    /// The links on the boundary after device `b` (none when no stream crosses it).
    pub fn links_after(&self, b: usize) -> Vec<&LinkInfo> {
        self.links.iter().filter(|l| l.from == b).collect()
    }

    /// The links arriving at device `k` (from the boundary before it).
    pub fn links_into(&self, k: usize) -> Vec<&LinkInfo> {
        k.checked_sub(1).map(|b| self.links_after(b)).unwrap_or_default()
    }
}

/// Spreads `d` over `devices` with the given placement: every crossing wire gets one `link`
/// instance per boundary it crosses, the links of one boundary sharing its bits
/// ([`boundary_widths`]). An error names the boundary when streams cross one without a link or
/// with fewer bits per cycle than streams.
pub fn build(d: &Design, pl: &Placement, devices: &[Device]) -> Result<System> {
    let mut design = d.clone();
    let mut placement = pl.clone();
    let mut links = Vec::new();
    for b in 0..devices.len().saturating_sub(1) {
        let cross = crossing(&design, &placement, b);
        if cross.is_empty() {
            continue;
        }
        let (link_width, latency) = devices[b].link().ok_or_else(|| {
            graph_error(format!("device '{}' has no link to the next device", devices[b].name))
        })?;
        let widths = boundary_widths(&design, &cross, link_width).map_err(|e| {
            let names: Vec<String> = cross.iter().map(|&w| stream_name(&design, &design.wires[w])).collect();
            graph_error(format!(
                "the boundary between devices '{}' and '{}' is crossed by {} streams ({}): {e}; widen \
                 link_bits_per_cycle of device '{}'",
                devices[b].name,
                devices[b + 1].name,
                cross.len(),
                names.join(", "),
                devices[b].name
            ))
        })?;
        let mut boundary = Vec::new();
        for (index, (&w, &width)) in cross.iter().zip(&widths).enumerate() {
            let wire = design.wires[w].clone();
            let beat_bits = wire.lanes * wire.width as usize;
            let beats = wire_beats(&design, &wire);
            let (params, flits, depth) = link_on(&wire, width, latency)
                .map_err(|e| graph_error(format!("link after device '{}': {e}", devices[b].name)))?;
            let tensor = stream_name(&design, &wire);
            let node = match &wire.from {
                Endpoint::Inst(i, _) => design.instances[*i].node.clone(),
                Endpoint::Top(p) => design.ports[*p].tensor.clone(),
            };
            let mut name = format!("link_{}_{}", devices[b].name, devices[b + 1].name);
            if cross.len() > 1 {
                name = format!("{name}_{index}");
            }
            design.instances.push(Instance {
                name: crate::design::ident(&name),
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
            boundary.push(LinkInfo {
                from: b,
                instance: li,
                tensor,
                lanes: wire.lanes,
                format: wire.format,
                link_width: width,
                latency,
                flits,
                depth,
                beats,
                cycles: link::link_cycles(beats, beat_bits, width),
                shared: None,
            });
        }
        if boundary.len() > 1 {
            let boundary_cycles = boundary.iter().map(|l| l.cycles).max().unwrap_or(0);
            let count = boundary.len();
            for (index, l) in boundary.iter_mut().enumerate() {
                l.shared =
                    Some(SharedBoundary { index, links: count, boundary_width: link_width, boundary_cycles });
            }
        }
        links.extend(boundary);
    }
    Ok(System { design, placement, devices: devices.to_vec(), links })
}

/// Who drives a stream, for messages: the node it carries, or the input port.
pub fn stream_name(d: &Design, w: &Wire) -> String {
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
