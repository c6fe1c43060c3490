//! Writing the top-level SystemVerilog of a [`Design`], and checking every parameter and port it
//! names against the library sources it instantiates (so a mismatch fails at emit time, not in
//! simulation).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use mase_ir::{Error, Result};

use crate::design::{Design, Endpoint, Instance, PortDir, TopPort};

mod header;

pub use header::{find_module, include_dirs, parse_file, HeaderDir, HeaderParam, HeaderPort, ParsedHeader};

/// Parameters and ports a module declares in its header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleHeader {
    /// Parameter names.
    pub params: BTreeSet<String>,
    /// Port names.
    pub ports: BTreeSet<String>,
}

impl From<&ParsedHeader> for ModuleHeader {
    fn from(h: &ParsedHeader) -> Self {
        ModuleHeader {
            params: h.params.iter().map(|p| p.name.clone()).collect(),
            ports: h.ports.iter().map(|p| p.name.clone()).collect(),
        }
    }
}

/// Reads the header of module `module` from SystemVerilog `text` (parsed as if it were a file in
/// `rtl/`, so `include of library headers resolves); `None` when the text does not parse or does
/// not declare the module. Use [`find_module`] for the reason.
pub fn module_header(text: &str, module: &str) -> Option<ModuleHeader> {
    let path = mase_hwlib::rtl_dir().join(format!("{module}.sv"));
    let (_, h) = find_module(&[(path, text.to_string())], module).ok()??;
    Some(ModuleHeader::from(&h))
}

/// The name of the signal carried by wire `w` in the top: the top port when one end is a port,
/// else `<driver instance>_<stream>`.
fn signal(d: &Design, w: usize) -> String {
    let wire = &d.wires[w];
    match (&wire.from, &wire.to) {
        (Endpoint::Top(p), _) => d.ports[*p].name.clone(),
        (_, Endpoint::Top(p)) => d.ports[*p].name.clone(),
        (Endpoint::Inst(i, s), _) => format!("{}_{s}", d.instances[*i].name),
    }
}

fn mem_param_value(inst: &Instance, file: &str) -> String {
    format!("{{MEM_DIR, \"{}\"}}", mem_file_name(inst, file))
}

/// File name (inside `mem/`) of memory `mem` of an instance.
pub fn mem_file_name(inst: &Instance, mem: &str) -> String {
    format!("{}_{mem}.mem", inst.name)
}

/// Checks every instance's parameters and streams against the module headers in `sources`
/// (file name → text).
pub fn check_against_rtl(d: &Design, sources: &BTreeMap<String, String>) -> Result<()> {
    for inst in &d.instances {
        let c = inst.component();
        let module = inst.module();
        // The files searched (for the error when none declares the module) and what was found.
        let (searched, found): (Vec<PathBuf>, _) = match &inst.external {
            Some(e) => {
                let dir = e.path.parent().unwrap_or(Path::new("."));
                let files: Vec<_> = e
                    .manifest
                    .sources
                    .iter()
                    .map(|s| dir.join(s))
                    .zip(e.sources.iter().map(|(_, t)| t.clone()))
                    .collect();
                let found = find_module(&files, &module)?;
                (files.into_iter().map(|(p, _)| p).collect(), found)
            }
            None => {
                let file = format!("{module}.sv");
                let text = sources.get(&file).ok_or_else(|| {
                    Error::Config(format!("instance {}: library file {file} is missing", inst.name))
                })?;
                let path = mase_hwlib::rtl_dir().join(&file);
                let found = header::library_module(&path, text, &module)?.map(|h| (path.clone(), h));
                (vec![path], found)
            }
        };
        let (path, h) = found.ok_or_else(|| {
            Error::Config(format!(
                "instance {}: no readable header of module {module} in its sources ({})",
                inst.name,
                searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let h = ModuleHeader::from(&h);
        let mut names: Vec<String> = inst.params.keys().cloned().collect();
        names.extend(c.memories(&inst.params).into_iter().map(|m| m.param));
        for p in names {
            if !h.params.contains(&p) {
                return Err(Error::Config(format!(
                    "instance {} sets parameter {p}, which {module} ({file}) does not declare",
                    inst.name
                )));
            }
        }
        let mut ports = vec!["clk".to_string(), "rst".to_string()];
        for s in c.streams(&inst.params) {
            ports.extend([s.name.clone(), format!("{}_valid", s.name), format!("{}_ready", s.name)]);
        }
        for p in ports {
            if !h.ports.contains(&p) {
                return Err(Error::Config(format!(
                    "instance {} connects port {p}, which {module} ({file}) does not declare",
                    inst.name
                )));
            }
        }
    }
    Ok(())
}

/// The comment a generated SystemVerilog file opens with: `what`, generated by mase-rs, then
/// `lines` as comment lines.
pub(crate) fn generated_banner(what: &str, lines: &[&str]) -> String {
    let mut s = format!("// {what}, generated by mase-rs; do not edit.\n//\n");
    for l in lines {
        let _ = writeln!(s, "// {l}");
    }
    s
}

/// The text of `top.sv`.
pub fn top_sv(d: &Design) -> String {
    let mut s = generated_banner(
        &format!("{}: stitched streaming top of graph '{}'", d.top, d.graph),
        &[
            "Every stream is a valid/ready handshake (a beat moves when valid && ready) carrying",
            "`lanes` elements per beat, lane i at [i*W +: W], tensors in row-major order (last",
        ],
    );
    let _ = writeln!(s, "// dimension fastest). Instances ({}):", d.instances.len());
    for inst in &d.instances {
        let _ = writeln!(s, "//   {:<48} {:<20} {}", format!("{}_inst", inst.name), inst.module(), inst.node);
    }
    s.push_str(&module_head(
        &d.top,
        &[
            "Directory of the weight memory files, prefixed to each .mem name (relative paths are",
            "resolved from the simulator's or synthesis tool's working directory).",
        ],
        "mem/",
    ));
    for p in &d.ports {
        s.push_str(&stream_port_decl(p));
    }
    let _ = writeln!(s, "\n);");
    // Internal stream signals.
    for w in 0..d.wires.len() {
        let wire = &d.wires[w];
        if matches!(wire.from, Endpoint::Top(_)) || matches!(wire.to, Endpoint::Top(_)) {
            continue;
        }
        let name = signal(d, w);
        let bits = wire.lanes * wire.width as usize;
        let _ = writeln!(s, "  logic [{}:0] {name};", bits - 1);
        let _ = writeln!(s, "  logic {name}_valid;");
        let _ = writeln!(s, "  logic {name}_ready;");
    }
    // A graph input that is directly a graph output.
    for wire in &d.wires {
        if let (Endpoint::Top(a), Endpoint::Top(b)) = (&wire.from, &wire.to) {
            let (a, b) = (&d.ports[*a].name, &d.ports[*b].name);
            let _ = writeln!(
                s,
                "  assign {b} = {a};\n  assign {b}_valid = {a}_valid;\n  assign {a}_ready = {b}_ready;"
            );
        }
    }
    for (i, inst) in d.instances.iter().enumerate() {
        let c = inst.component();
        let _ = writeln!(s);
        let _ = writeln!(s, "  // {} ({:?} for node {})", inst.name, inst.kind, inst.node);
        let _ = writeln!(s, "  {} #(", inst.module());
        let mut params = param_lines(&inst.params);
        for m in c.memories(&inst.params) {
            params.push(format!("      .{}({})", m.param, mem_param_value(inst, &m.name)));
        }
        let _ = writeln!(s, "{}", params.join(",\n"));
        let _ = writeln!(s, "  ) {}_inst (", inst.name);
        let mut conns = vec!["      .clk(clk)".to_string(), "      .rst(rst)".to_string()];
        for st in c.streams(&inst.params) {
            let w = d.wires.iter().position(|w| match &st.dir {
                mase_hwlib::Direction::In => w.to == Endpoint::Inst(i, st.name.clone()),
                mase_hwlib::Direction::Out => w.from == Endpoint::Inst(i, st.name.clone()),
            });
            let sig = w.map(|w| signal(d, w)).unwrap_or_else(|| format!("{}_{}", inst.name, st.name));
            conns.extend(stream_conns(&st.name, &sig));
        }
        let _ = writeln!(s, "{}", conns.join(",\n"));
        let _ = writeln!(s, "  );");
    }
    let _ = writeln!(s, "\nendmodule");
    s
}

/// The opening of a generated top: `module <name>`, its `MEM_DIR` parameter (documented by
/// `mem_dir_doc`, one line each, defaulting to `mem_dir_default`), clock and reset; the caller
/// continues with its ports (each after a comma) and closes the list.
pub fn module_head(name: &str, mem_dir_doc: &[&str], mem_dir_default: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "module {name} #(");
    for line in mem_dir_doc {
        let _ = writeln!(s, "    /// {line}");
    }
    let _ = writeln!(s, "    parameter MEM_DIR = \"{mem_dir_default}\"");
    let _ = writeln!(s, ") (");
    let _ = writeln!(s, "    /// Clock.");
    let _ = writeln!(s, "    input  logic clk,");
    let _ = writeln!(s, "    /// Synchronous active-high reset.");
    let _ = write!(s, "    input  logic rst");
    s
}

/// One `.NAME(value)` line per integer parameter of an instance.
pub fn param_lines(p: &mase_hwlib::Params) -> Vec<String> {
    p.iter().map(|(k, v)| format!("      .{k}({})", sv_int(*v))).collect()
}

/// The three connections of stream port `port` of an instance to signal `sig` (data, valid,
/// ready).
pub fn stream_conns(port: &str, sig: &str) -> [String; 3] {
    [
        format!("      .{port}({sig})"),
        format!("      .{port}_valid({sig}_valid)"),
        format!("      .{port}_ready({sig}_ready)"),
    ]
}

/// The declaration of a top's stream port (data, valid, ready, each with its `///` comment),
/// preceded by the comma that ends the previous port.
pub fn stream_port_decl(p: &TopPort) -> String {
    let mut s = String::new();
    let bits = p.lanes * p.format.width as usize;
    let (fwd, back) = match p.dir {
        PortDir::Input => ("input ", "output"),
        PortDir::Output => ("output", "input "),
    };
    let what = format!(
        "`{}` {:?}, {} elements per beat of {}",
        p.tensor,
        p.shape,
        p.lanes,
        crate::bind::fmt_name(&p.format)
    );
    let _ = write!(s, ",\n    /// {what}.\n    {fwd} logic [{}:0] {},", bits - 1, p.name);
    let _ = write!(s, "\n    /// {} beat valid.\n    {fwd} logic {}_valid,", p.name, p.name);
    let _ = write!(s, "\n    /// {} beat accepted.\n    {back} logic {}_ready", p.name, p.name);
    s
}

/// An integer parameter value in SystemVerilog.
pub fn sv_int(v: i64) -> String {
    if v < 0 {
        format!("-{}", v.unsigned_abs())
    } else {
        v.to_string()
    }
}
