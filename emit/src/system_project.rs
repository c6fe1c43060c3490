//! Writing a multi-device [`System`] as projects:
//!
//! ```text
//! DIR/device_<k>/<top>_device_<k>.sv       device k's top: its graph ports and link ports
//! DIR/device_<k>/<top>_device_<k>_core.sv  its stitched streaming core
//! DIR/device_<k>/rtl/, mem/, files.f, <top>_device_<k>.core, report.json, README.md
//! DIR/system/<top>.sv       simulation top `<top>`: the device tops joined by link models,
//!                           with the ports of the single-device top
//! DIR/system/rtl/, files.f  the link model and the file list of the whole system
//! DIR/report.json           the system: devices, links, per-device figures, bottleneck
//! DIR/README.md, DIR/mase/  what the system is; the quantized graph with its device ids
//! ```
//!
//! A device's top wraps its core: a stream arriving from the previous device comes in as link
//! flits (`rx_data`, `rx_valid`, credits back on `rx_credit`) through a `mase_link_rx` and
//! enters the core as its `link_in` stream; the stream leaving for the next device goes from the
//! core's `link_out` through a `mase_link_tx` (`tx_data`, `tx_valid`, credits on `tx_credit`).
//! When several streams cross one boundary, each has a link of its own (its share of the
//! boundary's bits, [`crate::system`]) and its names carry the link's index on the boundary
//! ([`LinkInfo::tag`]): `rx_0_data`, `link_in_0`, …, `rx_1_data`, `link_in_1`, ….

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mase_hwlib::components::link;
use mase_ir::{Error, MaseGraph, Result};
use serde::Serialize;

use crate::config::Device;
use crate::design::{Design, Endpoint, InstKind, PortDir, TopPort, Wire};
use crate::project::{core_file, write, write_model, write_sources, Emitted, ProjectLock};
use crate::report::{report, Report};
use crate::sv::{module_head, param_lines, stream_conns, stream_port_decl, top_sv};
use crate::system::{LinkInfo, System};

/// The stream port of a device core that a link feeds.
pub const LINK_IN: &str = "link_in";
/// The stream port of a device core that feeds a link.
pub const LINK_OUT: &str = "link_out";

/// Module name of device `k`'s top.
pub fn device_top(top: &str, k: usize) -> String {
    format!("{top}_device_{k}")
}

/// Files of device `k`'s project holding its top and its core (each named after its module, so
/// `verilator -Wall` finds them by name): paths inside `device_<k>/`.
pub fn device_files(top: &str, k: usize) -> (String, String) {
    let t = device_top(top, k);
    (format!("{t}.sv"), format!("{t}_core.sv"))
}

/// The system top's output counting the cycles link `l` carries a flit: `link_<b>_flit_cycles`
/// for the link after device `b`, `link_<b>_<i>_flit_cycles` for its `i`-th when several streams
/// share the boundary.
pub fn link_flits_port(l: &LinkInfo) -> String {
    format!("link_{}{}_flit_cycles", l.from, l.tag())
}

/// The core stream port a link feeds ([`LINK_IN`]) or is fed by ([`LINK_OUT`]), with the link's
/// [`LinkInfo::tag`].
pub fn link_port(base: &str, l: &LinkInfo) -> String {
    format!("{base}{}", l.tag())
}

/// The names of device `k`'s link ports in its [`device_design`] (the other ports are graph
/// ports).
fn link_port_names(sys: &System, k: usize) -> Vec<String> {
    let ins = sys.links_into(k).into_iter().map(|l| link_port(LINK_IN, l));
    ins.chain(sys.links_after(k).into_iter().map(|l| link_port(LINK_OUT, l))).collect()
}

/// Path of the system's simulation top inside the project (`system/<top>.sv`).
pub fn system_top_file(top: &str) -> String {
    format!("system/{top}.sv")
}

/// The stitched core of device `k`: its instances and ports, plus a [`LINK_IN`] stream port for
/// each link from device `k − 1` and a [`LINK_OUT`] one for each link to device `k + 1` (named by
/// [`link_port`]).
pub fn device_design(sys: &System, k: usize) -> Design {
    let d = &sys.design;
    let pl = &sys.placement;
    let mut core = Design {
        top: format!("{}_core", device_top(&d.top, k)),
        graph: d.graph.clone(),
        ports: Vec::new(),
        instances: Vec::new(),
        wires: Vec::new(),
    };
    let mut port_map = BTreeMap::new();
    for (p, port) in d.ports.iter().enumerate() {
        if pl.port[p] == k {
            port_map.insert(p, core.ports.len());
            core.ports.push(port.clone());
        }
    }
    let stream_port = |l: &LinkInfo, name: &str, dir: PortDir| TopPort {
        name: name.into(),
        tensor: l.tensor.clone(),
        dir,
        format: l.format,
        lanes: l.lanes,
        shape: vec![l.beats as usize, l.lanes],
    };
    // Link instance → the core port standing for it.
    let mut link_in = BTreeMap::new();
    for l in sys.links_into(k) {
        core.ports.push(stream_port(l, &link_port(LINK_IN, l), PortDir::Input));
        link_in.insert(l.instance, core.ports.len() - 1);
    }
    let mut link_out = BTreeMap::new();
    for l in sys.links_after(k) {
        core.ports.push(stream_port(l, &link_port(LINK_OUT, l), PortDir::Output));
        link_out.insert(l.instance, core.ports.len() - 1);
    }
    let mut inst_map = BTreeMap::new();
    for (i, inst) in d.instances.iter().enumerate() {
        if pl.inst[i] == k && inst.kind != InstKind::Link {
            inst_map.insert(i, core.instances.len());
            core.instances.push(inst.clone());
        }
    }
    let map = |e: &Endpoint, is_from: bool| -> Option<Endpoint> {
        match e {
            Endpoint::Top(p) => port_map.get(p).map(|q| Endpoint::Top(*q)),
            Endpoint::Inst(i, _) if d.instances[*i].kind == InstKind::Link => {
                let ends = if is_from { &link_in } else { &link_out };
                ends.get(i).map(|p| Endpoint::Top(*p))
            }
            Endpoint::Inst(i, port) => inst_map.get(i).map(|j| Endpoint::Inst(*j, port.clone())),
        }
    };
    for w in &d.wires {
        if let (Some(from), Some(to)) = (map(&w.from, true), map(&w.to, false)) {
            core.wires.push(Wire { from, to, ..w.clone() });
        }
    }
    core
}

fn param_list(p: &mase_hwlib::Params) -> String {
    param_lines(p).join(",\n")
}

fn link_params(l: &LinkInfo, rx: bool) -> Result<mase_hwlib::Params> {
    let p = if rx {
        link::rx_params(l.format.width, l.lanes, l.link_width, l.depth)
    } else {
        link::tx_params(l.format.width, l.lanes, l.link_width, l.depth)
    };
    p.map_err(|e| Error::Config(format!("link of `{}`: {e}", l.tensor)))
}

/// The connections of the flit ports `<port>_data`, `<port>_valid`, `<port>_credit` of an instance
/// to the signals `<sig>_data`, `<sig>_valid`, `<sig>_credit`.
fn flit_conns(port: &str, sig: &str) -> [String; 3] {
    ["data", "valid", "credit"].map(|w| format!("      .{port}_{w}({sig}_{w})"))
}

/// Declares a device top's flit ports `<side><tag>_data/valid/credit` for link `l` with the
/// device `peer` at its other end: `rx` takes flits from `peer` and gives credits back, `tx`
/// gives flits to `peer` and takes its credits.
fn flit_port_decls(s: &mut String, side: &str, l: &LinkInfo, peer: &str) {
    let prefix = format!("{side}{}", l.tag());
    let (fwd, back, flits, credit) = if side == "rx" {
        let credit = format!("One receive buffer slot freed (a credit back to '{peer}').");
        ("input ", "output", format!("Flits of `{}` from device '{peer}'", l.tensor), credit)
    } else {
        let credit = format!("A credit from '{peer}': one more beat may be sent.");
        ("output", "input ", format!("Flits of `{}` to device '{peer}'", l.tensor), credit)
    };
    let (bits, msb) = (l.link_width, l.link_width - 1);
    let _ =
        write!(s, ",\n    /// {flits} ({bits} bits per cycle).\n    {fwd} logic [{msb}:0] {prefix}_data,");
    let _ = write!(s, "\n    /// {prefix}_data holds a flit.\n    {fwd} logic {prefix}_valid,");
    let _ = write!(s, "\n    /// {credit}\n    {back} logic {prefix}_credit");
}

/// Closes an instance: its connections (clock and reset first, then `conns`) and `);`.
fn close_instance(s: &mut String, conns: impl IntoIterator<Item = String>) {
    let all: Vec<String> =
        ["      .clk(clk)".to_string(), "      .rst(rst)".to_string()].into_iter().chain(conns).collect();
    let _ = writeln!(s, "{}\n  );", all.join(",\n"));
}

/// Appends one end of a link to a device top: the comment line, the instance `inst` of `module`
/// with parameters `p`, and its connections `conns` after clock and reset.
fn link_end(
    s: &mut String,
    comment: &str,
    module: &str,
    p: &mase_hwlib::Params,
    inst: &str,
    conns: Vec<String>,
) {
    let _ = writeln!(s, "\n  // {comment}.");
    let _ = writeln!(s, "  {module} #(\n{}\n  ) {inst} (", param_list(p));
    close_instance(s, conns);
}

/// The text of device `k`'s top (`device_<k>/<top>_device_<k>.sv`), wrapping `core` (its
/// [`device_design`]) with a link receiver per incoming link and a sender per outgoing one.
pub fn device_top_sv(sys: &System, k: usize, core: &Design) -> Result<String> {
    let top = device_top(&sys.design.top, k);
    let dev = &sys.devices[k];
    let rx = sys.links_into(k);
    let tx = sys.links_after(k);
    let links = link_port_names(sys, k);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {top}: device {k} ('{}') of the multi-device system of graph '{}', generated by mase-rs; do not edit.",
        dev.name, sys.design.graph
    );
    let _ = writeln!(s, "//");
    let _ =
        writeln!(s, "// The streaming core `{}` with its links: a stream from the previous device", core.top);
    let _ =
        writeln!(s, "// arrives as flits on rx_* (credits back on rx_credit); the stream to the next device");
    let _ = writeln!(s, "// leaves as flits on tx_* (credits in on tx_credit). Graph ports as in the core.");
    s.push_str(&module_head(
        &top,
        &["Directory of this device's memory files, prefixed to each .mem name."],
        "mem/",
    ));
    for p in core.ports.iter().filter(|p| !links.contains(&p.name)) {
        s.push_str(&stream_port_decl(p));
    }
    for l in &rx {
        flit_port_decls(&mut s, "rx", l, &sys.devices[l.from].name);
    }
    for l in &tx {
        flit_port_decls(&mut s, "tx", l, &sys.devices[l.from + 1].name);
    }
    let _ = writeln!(s, "\n);");
    let ends = rx.iter().map(|l| (*l, LINK_IN)).chain(tx.iter().map(|l| (*l, LINK_OUT)));
    for (l, base) in ends {
        let name = link_port(base, l);
        let _ = writeln!(s, "  logic [{}:0] {name};", l.lanes * l.format.width as usize - 1);
        let _ = writeln!(s, "  logic {name}_valid;");
        let _ = writeln!(s, "  logic {name}_ready;");
    }
    for l in &rx {
        let (tag, name) = (l.tag(), link_port(LINK_IN, l));
        let comment = format!("Receiver of the link from '{}'{}", sys.devices[l.from].name, carrying(l));
        let mut conns = flit_conns("link", &format!("rx{tag}")).to_vec();
        conns.extend(stream_conns("data_out_0", &name));
        let inst = format!("link_rx{tag}_inst");
        link_end(&mut s, &comment, link::RX_MODULE, &link_params(l, true)?, &inst, conns);
    }
    let _ = writeln!(s, "\n  {} #(\n      .MEM_DIR(MEM_DIR)\n  ) core_inst (", core.top);
    close_instance(&mut s, core.ports.iter().flat_map(|p| stream_conns(&p.name, &p.name)));
    for l in &tx {
        let (tag, name) = (l.tag(), link_port(LINK_OUT, l));
        let comment = format!("Sender of the link to '{}'{}", sys.devices[l.from + 1].name, carrying(l));
        let mut conns = stream_conns("data_in_0", &name).to_vec();
        conns.extend(flit_conns("link", &format!("tx{tag}")));
        let inst = format!("link_tx{tag}_inst");
        link_end(&mut s, &comment, link::TX_MODULE, &link_params(l, false)?, &inst, conns);
    }
    let _ = writeln!(s, "\nendmodule");
    Ok(s)
}

/// For comments on a link that shares its boundary: ` carrying `<tensor>` (<w> of the boundary's
/// <W> bits per cycle)`; nothing for a link that has its boundary to itself.
fn carrying(l: &LinkInfo) -> String {
    l.shared.map_or(String::new(), |sh| {
        format!(
            " carrying `{}` ({} of the boundary's {} bits per cycle)",
            l.tensor, l.link_width, sh.boundary_width
        )
    })
}

/// The text of the system's simulation top (`system/<top>.sv`): module `<top>` with the ports of
/// the single-device top, the device tops, and a `mase_link_model` on every link.
pub fn system_top_sv(sys: &System) -> Result<String> {
    let d = &sys.design;
    let used = sys.used_devices();
    let mut s = crate::sv::generated_banner(
        &format!("{}: simulation top of graph '{}' over {used} devices", d.top, d.graph),
        &[
            "The device tops (../device_<k>/) joined by link models (latency and width of each",
            "[[hardware.devices]] link); its stream ports are those of the single-device top.",
        ],
    );
    s.push_str(&module_head(
        &d.top,
        &["Directory holding device_<k>/mem/, prefixed to each device's memory directory."],
        "../",
    ));
    for p in &d.ports {
        s.push_str(&stream_port_decl(p));
    }
    for l in &sys.links {
        let _ = write!(
            s,
            ",\n    /// Cycles since reset in which link {} carried a flit (for the occupancy `mase sim`\n    /// measures).\n    output logic [63:0] {}",
            l.describe(&sys.devices),
            link_flits_port(l)
        );
    }
    let _ = writeln!(s, "\n);");
    for l in &sys.links {
        let b = l.from;
        let sig = format!("link_{b}{}", l.tag());
        let _ = writeln!(
            s,
            "\n  // Link '{}' -> '{}': `{}`{}.",
            sys.devices[b].name,
            sys.devices[b + 1].name,
            l.tensor,
            l.shared.map_or(String::new(), |sh| format!(
                ", link {} of {} sharing the boundary's {} bits per cycle ({} here)",
                sh.index, sh.links, sh.boundary_width, l.link_width
            ))
        );
        for side in ["tx", "rx"] {
            let _ = writeln!(s, "  logic [{}:0] {sig}_{side}_data;", l.link_width - 1);
            let _ = writeln!(s, "  logic {sig}_{side}_valid;");
            let _ = writeln!(s, "  logic {sig}_{side}_credit;");
        }
        let p = link::model_params(l.link_width, l.latency)
            .map_err(|e| Error::Config(format!("link model of `{}`: {e}", l.tensor)))?;
        let _ = writeln!(s, "  {} #(\n{}\n  ) {sig}_model_inst (", link::MODEL_MODULE, param_list(&p));
        let [tx, rx] = ["tx", "rx"].map(|side| flit_conns(side, &format!("{sig}_{side}")));
        close_instance(&mut s, tx.into_iter().chain(rx));
        let flits = link_flits_port(l);
        let _ = writeln!(
            s,
            "  always_ff @(posedge clk) begin\n    if (rst) {flits} <= '0;\n    else if ({sig}_tx_valid) {flits} <= {flits} + 64'd1;\n  end"
        );
    }
    for k in 0..used {
        let _ = writeln!(s, "\n  // Device {k}: '{}'.", sys.devices[k].name);
        let _ = writeln!(
            s,
            "  {} #(\n      .MEM_DIR({{MEM_DIR, \"device_{k}/mem/\"}})\n  ) device_{k}_inst (",
            device_top(&d.top, k)
        );
        let mut conns = Vec::new();
        for (p, port) in d.ports.iter().enumerate() {
            if sys.placement.port[p] == k {
                conns.extend(stream_conns(&port.name, &port.name));
            }
        }
        let ends = sys.links_into(k).into_iter().map(|l| ("rx", l));
        for (side, l) in ends.chain(sys.links_after(k).into_iter().map(|l| ("tx", l))) {
            let (tag, sig) = (l.tag(), format!("link_{}{}", l.from, l.tag()));
            conns.extend(flit_conns(&format!("{side}{tag}"), &format!("{sig}_{side}")));
        }
        close_instance(&mut s, conns);
    }
    let _ = writeln!(s, "\nendmodule");
    Ok(s)
}

/// Figures of one device.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    /// The device's configuration.
    pub device: Device,
    /// Its top module.
    pub top: String,
    /// The graph nodes it implements, in dataflow order.
    pub nodes: Vec<String>,
    /// Cycles per inference of its slowest instance (its stage of the system's pipeline).
    pub ii_cycles: u64,
    /// That instance.
    pub slowest: String,
    /// Multipliers used.
    pub multipliers: u64,
    /// Memory bits used (the link receiver's buffer included).
    pub memory_bits: u64,
    /// Resource estimate of its core.
    pub resources: mase_hwlib::Resources,
    /// Its stage's share of the system ii (`ii_cycles / system ii`).
    pub utilisation: f64,
}

/// Figures of one link.
#[derive(Debug, Clone, Serialize)]
pub struct LinkReport {
    /// Sending device's name.
    pub from: String,
    /// Receiving device's name.
    pub to: String,
    /// The link.
    #[serde(flatten)]
    pub link: LinkInfo,
    /// Share of the system ii the link carries flits (`cycles / system ii`).
    pub occupancy: f64,
}

impl LinkReport {
    /// The link's name in figures: `<from> -> <to>`, followed by `#<index>` and the tensor in
    /// backticks and parentheses when it shares its boundary with other links.
    pub fn name(&self) -> String {
        let base = format!("{} -> {}", self.from, self.to);
        match self.link.shared {
            Some(sh) => format!("{base} #{} (`{}`)", sh.index, self.link.tensor),
            None => base,
        }
    }
}

/// The report of a multi-device system (`DIR/report.json`).
#[derive(Debug, Clone, Serialize)]
pub struct SystemReport {
    /// Simulation top module (`system/<top>.sv`).
    pub top: String,
    /// Graph name.
    pub graph: String,
    /// Devices used.
    pub devices: Vec<DeviceReport>,
    /// Devices configured (trailing ones may be unused).
    pub devices_configured: Vec<Device>,
    /// Links, in order.
    pub links: Vec<LinkReport>,
    /// System initiation interval: the slowest device stage or link, cycles per inference.
    pub ii_cycles: u64,
    /// What sets it: `device '<name>'` or `link '<a>' -> '<b>'` (followed by `#<index>` and the
    /// tensor for one of several links sharing a boundary).
    pub bottleneck: String,
    /// The system ii and the design's latency estimate in real units at the configured clock
    /// (`clock_mhz`, `inferences_per_s`, `latency_us`), when one is configured.
    #[serde(flatten)]
    pub real_time: Option<crate::report::RealTime>,
    /// The whole system as one design (links as instances): the latency model's estimate and
    /// every instance's figures.
    pub design: Report,
}

/// The system report.
pub fn system_report(sys: &System) -> Result<SystemReport> {
    let flat = report(&sys.design);
    let ii = flat.ii_cycles.max(1);
    let mut devices = Vec::new();
    let mut bottleneck = (0u64, String::new());
    for k in 0..sys.used_devices() {
        let core = device_design(sys, k);
        let r = report(&core);
        let rx_bits: u64 = sys
            .links_into(k)
            .iter()
            .map(|l| {
                let inst = &sys.design.instances[l.instance];
                inst.component().cost(&inst.params).memory_bits
            })
            .sum();
        if r.ii_cycles > bottleneck.0 {
            bottleneck = (r.ii_cycles, format!("device '{}'", sys.devices[k].name));
        }
        devices.push(DeviceReport {
            device: sys.devices[k].clone(),
            top: device_top(&sys.design.top, k),
            nodes: core
                .instances
                .iter()
                .filter(|i| i.kind == InstKind::Node)
                .map(|i| i.node.clone())
                .collect(),
            ii_cycles: r.ii_cycles,
            slowest: r.slowest,
            multipliers: r.multipliers,
            memory_bits: r.memory_bits + rx_bits,
            resources: r.resources,
            utilisation: r.ii_cycles as f64 / ii as f64,
        });
    }
    let mut links = Vec::new();
    for l in &sys.links {
        // On a tie the link binds: the devices were given the link's rate and no more.
        if l.cycles >= bottleneck.0 {
            bottleneck = (l.cycles, format!("link {}", l.describe(&sys.devices)));
        }
        links.push(LinkReport {
            from: sys.devices[l.from].name.clone(),
            to: sys.devices[l.from + 1].name.clone(),
            link: l.clone(),
            occupancy: l.cycles as f64 / ii as f64,
        });
    }
    Ok(SystemReport {
        top: sys.design.top.clone(),
        graph: sys.design.graph.clone(),
        devices,
        devices_configured: sys.devices.clone(),
        links,
        ii_cycles: flat.ii_cycles,
        bottleneck: bottleneck.1,
        real_time: None,
        design: flat,
    })
}

impl SystemReport {
    /// The report with the system's ii and latency estimate also in real units at `clock_mhz`
    /// (unchanged without a clock).
    pub fn at_clock(mut self, clock_mhz: Option<f64>) -> SystemReport {
        self.real_time = clock_mhz.map(|f| {
            crate::report::real_time(
                f,
                Some(self.ii_cycles as f64),
                self.design.latency_cycles_estimate as f64,
            )
        });
        self
    }
}

/// Writes the system into `dir` (see the module documentation); `graph` carries the device ids.
/// With `clock_mhz` the system's report and README also give its figures in real units.
/// The directory is taken with [`ProjectLock::write`] and finished before it is released.
pub fn write_system(graph: &MaseGraph, sys: &System, dir: &Path, clock_mhz: Option<f64>) -> Result<Emitted> {
    crate::project::write_locked(dir, |lock| write_system_in(lock, graph, sys, clock_mhz))
}

/// [`write_system`] into the directory `lock` holds, without the marker
/// ([`ProjectLock::finish`] writes it).
pub fn write_system_in(
    lock: &ProjectLock,
    graph: &MaseGraph,
    sys: &System,
    clock_mhz: Option<f64>,
) -> Result<Emitted> {
    let dir = lock.dir();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut system_list: Vec<String> = Vec::new();
    let mut listed: Vec<String> = Vec::new();
    let model_files: Vec<String> = link::MODEL_FILES.iter().map(|f| f.to_string()).collect();
    for f in &model_files {
        let path = mase_hwlib::rtl_dir().join(f);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        write(dir, &format!("system/rtl/{f}"), &text, &mut files)?;
        system_list.push(format!("rtl/{f}"));
        listed.push(f.clone());
    }
    let mut tops = Vec::new();
    for k in 0..sys.used_devices() {
        let core = device_design(sys, k);
        let sub = format!("device_{k}");
        let subdir = dir.join(&sub);
        let mut extra = Vec::new();
        if !sys.links_into(k).is_empty() {
            extra.extend(link::RX_FILES.iter().map(|f| f.to_string()));
        }
        if !sys.links_after(k).is_empty() {
            extra.extend(link::TX_FILES.iter().map(|f| f.to_string()));
        }
        let mut sub_files = Vec::new();
        let lib = write_sources(&core, &subdir, &extra, &mut sub_files)?;
        let (top_file, core_file_name) = device_files(&sys.design.top, k);
        write(&subdir, &core_file_name, &top_sv(&core), &mut sub_files)?;
        let top_text = device_top_sv(sys, k, &core)?;
        write(&subdir, &top_file, &top_text, &mut sub_files)?;
        let mut list = String::new();
        for f in &lib {
            let _ = writeln!(list, "rtl/{f}");
            if !listed.contains(f) {
                listed.push(f.clone());
                system_list.push(format!("../{sub}/rtl/{f}"));
            }
        }
        let _ = writeln!(list, "{core_file_name}\n{top_file}");
        write(&subdir, "files.f", &list, &mut sub_files)?;
        let top = device_top(&sys.design.top, k);
        let core_text = core_file(&core, &lib, &sub_files, &[&core_file_name, &top_file], &top);
        write(&subdir, &format!("{top}.core"), &core_text, &mut sub_files)?;
        let rep = report(&core);
        let json =
            serde_json::to_string_pretty(&rep).map_err(|e| Error::Config(format!("report: {e}")))? + "\n";
        write(&subdir, "report.json", &json, &mut sub_files)?;
        write(&subdir, "README.md", &device_readme(sys, k, &core, &rep, &lib), &mut sub_files)?;
        tops.push(format!("../{sub}/{core_file_name}"));
        tops.push(format!("../{sub}/{top_file}"));
        files.extend(sub_files.into_iter().map(|f| Path::new(&sub).join(f)));
    }
    system_list.extend(tops);
    let system_file = system_top_file(&sys.design.top);
    system_list.push(system_file.trim_start_matches("system/").to_string());
    write(dir, &system_file, &system_top_sv(sys)?, &mut files)?;
    write(dir, "system/files.f", &(system_list.join("\n") + "\n"), &mut files)?;
    let rep = system_report(sys)?.at_clock(clock_mhz);
    let json = serde_json::to_string_pretty(&rep).map_err(|e| Error::Config(format!("report: {e}")))? + "\n";
    write(dir, "report.json", &json, &mut files)?;
    write(dir, "README.md", &system_readme(sys, &rep), &mut files)?;
    write_model(graph, &sys.design, dir, &mut files)?;
    files.sort();
    Ok(Emitted { files, report: rep.design })
}

/// A device README's paragraph on its link end `side` (`rx` or `tx`) of link `l`: `head`, the
/// flit ports and what they carry, then `credits` on the credit port.
fn link_paragraph(s: &mut String, head: &str, side: &str, l: &LinkInfo, credits: &str) {
    let _ = writeln!(
        s,
        "\n{head}: `{side}_data` [{}] + `{side}_valid` carry `{}` ({} lanes of {}) as {} flit(s) per beat; {credits}",
        l.link_width,
        l.tensor,
        l.lanes,
        crate::bind::fmt_name(&l.format),
        l.flits,
    );
}

fn device_readme(sys: &System, k: usize, core: &Design, r: &Report, lib: &[String]) -> String {
    let dev = &sys.devices[k];
    let top = device_top(&sys.design.top, k);
    let mut s = String::new();
    let _ = writeln!(s, "# {top}: device {k} ('{}') of graph `{}`\n", dev.name, sys.design.graph);
    let _ = writeln!(
        s,
        "Generated by mase-rs as part of a {}-device system (see ../README.md).\n",
        sys.used_devices()
    );
    let _ = writeln!(s, "## Interface\n");
    let _ = writeln!(
        s,
        "Clock `clk`, synchronous active-high reset `rst`; graph tensors as valid/ready streams:\n"
    );
    let _ = writeln!(s, "| port | tensor | direction | shape | format | lanes |");
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    let links = link_port_names(sys, k);
    for p in core.ports.iter().filter(|p| !links.contains(&p.name)) {
        let _ = writeln!(s, "{}", crate::project::port_row(p));
    }
    for l in sys.links_into(k) {
        let head = format!("Link in from '{}'", sys.devices[l.from].name);
        let r = format!("rx{}", l.tag());
        let credits =
            format!("`{r}_credit` pulses once per beat freed in the {}-beat receive buffer.", l.depth);
        link_paragraph(&mut s, &head, &r, l, &credits);
    }
    for l in sys.links_after(k) {
        let head = format!("Link out to '{}'", sys.devices[l.from + 1].name);
        let t = format!("tx{}", l.tag());
        let credits =
            format!("each `{t}_credit` pulse allows one more beat (the receiver buffers {}).", l.depth);
        link_paragraph(&mut s, &head, &t, l, &credits);
    }
    let _ = writeln!(s, "\n## Figures (cost models)\n");
    let _ = writeln!(
        s,
        "{}",
        crate::project::ii_item("stage initiation interval", "slowest", r.ii_cycles, &r.slowest)
    );
    let _ = writeln!(
        s,
        "- multipliers: {} of {}; memory: {} of {} bits",
        r.multipliers, dev.multipliers, r.memory_bits, dev.memory_bits
    );
    let _ = writeln!(s, "- resources (estimate): {}\n", r.resources);
    let _ = writeln!(s, "## Files\n");
    let (top_file, core_file_name) = device_files(&sys.design.top, k);
    let _ = writeln!(
        s,
        "- `{top_file}`: the device top `{top}`; `{core_file_name}`: its streaming core `{}`",
        core.top
    );
    let _ = writeln!(
        s,
        "- `rtl/`: the {} library files; `mem/`: memory contents (`MEM_DIR`, default `\"mem/\"`)",
        lib.len()
    );
    let _ = writeln!(
        s,
        "- `files.f`: sources in compile order; `{top}.core`: FuseSoC core; `report.json`: figures\n"
    );
    let _ = writeln!(s, "```sh\nverilator --lint-only -Wall -f files.f --top-module {top}\n```");
    s
}

fn system_readme(sys: &System, r: &SystemReport) -> String {
    let mut s = String::new();
    let _ =
        writeln!(s, "# {}: graph `{}` over {} devices\n", sys.design.top, sys.design.graph, r.devices.len());
    let _ = writeln!(
        s,
        "Generated by mase-rs. Every file here is rewritten by the next emit into this directory.\n"
    );
    let _ = writeln!(s, "| device | top | stage ii | multipliers | memory bits | utilisation |");
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for d in &r.devices {
        let _ = writeln!(
            s,
            "| {} | `device_{}/` `{}` | {} | {} / {} | {} / {} | {:.2} |",
            d.device.name,
            r.devices.iter().position(|x| x.top == d.top).unwrap_or(0),
            d.top,
            d.ii_cycles,
            d.multipliers,
            d.device.multipliers,
            d.memory_bits,
            d.device.memory_bits,
            d.utilisation
        );
    }
    if !r.links.is_empty() {
        let _ = writeln!(s, "\n| link | tensor | bits per cycle | latency | flits per beat | cycles per inference | occupancy |");
        let _ = writeln!(s, "|---|---|---|---|---|---|---|");
        for l in &r.links {
            let _ = writeln!(
                s,
                "| {} -> {} | `{}` | {} | {} | {} | {} | {:.2} |",
                l.from,
                l.to,
                l.link.tensor,
                l.link.link_width,
                l.link.latency,
                l.link.flits,
                l.link.cycles,
                l.occupancy
            );
        }
        // Boundaries several streams share: how their bits are split, and what the split costs.
        let mut shared: Vec<(&LinkReport, crate::system::SharedBoundary)> = Vec::new();
        for l in &r.links {
            if let Some(sh) = l.link.shared.filter(|sh| sh.index == 0) {
                shared.push((l, sh));
            }
        }
        for (l, sh) in shared {
            let widths: Vec<String> = r
                .links
                .iter()
                .filter(|x| x.from == l.from && x.to == l.to)
                .map(|x| format!("{} (`{}`)", x.link.link_width, x.link.tensor))
                .collect();
            let _ = writeln!(
                s,
                "\nThe boundary {} -> {} is crossed by {} streams, each on its own link: its {} bits per cycle are \
                 shared in proportion to the bits each carries per inference, {}; the boundary takes {} cycles per \
                 inference (its slowest link).",
                l.from,
                l.to,
                sh.links,
                sh.boundary_width,
                widths.join(" + "),
                sh.boundary_cycles
            );
        }
    }
    let _ = writeln!(
        s,
        "\nSystem initiation interval: {} cycles per inference, set by the {}; latency estimate {} cycles.\n",
        r.ii_cycles, r.bottleneck, r.design.latency_cycles_estimate
    );
    if let Some(t) = &r.real_time {
        let _ = writeln!(s, "In real units {} (`[hardware] clock_mhz`, a configured clock).\n", t.describe());
    }
    let _ =
        writeln!(s, "`device_<k>/` is device k's project (its own top, rtl, mem, file list, core, README);");
    let _ = writeln!(
        s,
        "`{}` (`{}`) joins the device tops through link models for simulation:\n",
        system_top_file(&sys.design.top),
        sys.design.top
    );
    let _ = writeln!(
        s,
        "```sh\nmase sim .   # the whole system under Verilator, checked against the golden model\n```"
    );
    s
}
