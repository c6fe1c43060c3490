//! The host's share of a whole-model project: the graph cut at the device's edges
//! ([`crate::host_split`]) into the part before the device and the part after it, written as
//! `host/pre.onnx` and `host/post.onnx` (ONNX any runtime runs) with `host/host.json`, the map
//! of how they join the device's ports.
//!
//! The parts join by tensor name: `pre.onnx` takes the model's inputs and outputs one tensor per
//! device input port (`report.json` `ports[].tensor`) and per value it hands straight to the
//! post part; `post.onnx` takes the device's outputs (and those values) and outputs the model's
//! outputs under the model's own names.

use std::path::{Path, PathBuf};

use mase_ir::onnx::{to_onnx, ExportOptions};
use mase_ir::pass::PassInfo;
use mase_ir::{Error, MaseGraph, Result};
use serde::Serialize;

use crate::config::HwConfig;
use crate::design::{Design, PortDir};
use crate::host_split::{device_graph, host_graph, index_formats, split, split_info, HostPart, LookupTable};

/// A whole model cut into host parts around the device.
#[derive(Debug, Clone)]
pub struct HostParts {
    /// Before the device: the model's inputs → the device's inputs (and hand-overs).
    pub pre: MaseGraph,
    /// After the device: the device's outputs → the model's outputs.
    pub post: MaseGraph,
    /// The split's info map (host nodes, device inputs and outputs, where the device region
    /// ended).
    pub info: PassInfo,
}

/// One tensor crossing a boundary: name, element type, shape.
#[derive(Debug, Clone, Serialize)]
pub struct HostTensor {
    /// Tensor name (a model input or output, or a graph node's name).
    pub name: String,
    /// Element type (`float32`, `int64`, `int32`, `bool`).
    pub dtype: String,
    /// Shape.
    pub shape: Vec<usize>,
}

/// `host/host.json`: the host parts and how they join the device.
#[derive(Debug, Clone, Serialize)]
pub struct HostReport {
    /// The model's inputs (what `pre.onnx` takes).
    pub model_inputs: Vec<HostTensor>,
    /// The model's outputs (what `post.onnx` gives).
    pub model_outputs: Vec<HostTensor>,
    /// `pre.onnx`'s outputs: the device's input tensors, then hand-overs to `post.onnx`.
    pub pre_outputs: Vec<HostTensor>,
    /// `post.onnx`'s inputs: the device's output tensors and hand-overs.
    pub post_inputs: Vec<HostTensor>,
    /// The split: host nodes before and after, device inputs and outputs, the node that ended
    /// the device region, post nodes the library implements.
    pub split: PassInfo,
}

/// Cuts a quantized whole-model graph: the device's own graph and, when some node runs on the
/// host, the host parts. Without host nodes the graph is returned whole (its token-id inputs
/// given their stream codes, [`index_formats`]); when no node could run on the device, as it is:
/// the hardware passes then name the first node the library does not implement, with what it
/// supports.
pub fn cut(graph: MaseGraph, hw: &HwConfig) -> Result<(MaseGraph, Option<HostParts>)> {
    let s = split(&graph, hw);
    if s.device_outputs(&graph).is_empty() {
        return Ok((graph, None));
    }
    if !s.has_host() {
        let mut graph = graph;
        index_formats(&mut graph)?;
        return Ok((graph, None));
    }
    let info = split_info(&graph, &s, hw);
    let pre = host_graph(&graph, &s, HostPart::Pre)?;
    let post = host_graph(&graph, &s, HostPart::Post)?;
    let device = device_graph(&graph, &s)?;
    Ok((device, Some(HostParts { pre, post, info })))
}

/// The warnings a split gives: post nodes the library implements (the device region ended
/// early, at a node it cannot implement).
pub fn warnings(h: &HostParts) -> Vec<String> {
    let movable = h.info.get("host_post_the_library_implements").and_then(|v| v.as_array());
    let ended = h.info.get("device_ended_by").and_then(|v| v.as_str());
    match (movable, ended) {
        (Some(m), Some(end)) if !m.is_empty() => {
            let names: Vec<&str> = m.iter().filter_map(|v| v.as_str()).collect();
            vec![format!(
                "warning: the device region ends at node '{end}', which the hardware library does not implement; \
                 {} later node(s) the library implements run on the host after it: {}",
                names.len(),
                names.join(", ")
            )]
        }
        _ => Vec::new(),
    }
}

fn tensors(g: &MaseGraph, ids: &[mase_ir::NodeId], names: Option<&[String]>) -> Result<Vec<HostTensor>> {
    ids.iter()
        .enumerate()
        .map(|(k, &id)| {
            let n = g.node(id);
            let r =
                n.meta.common.results.get("data_out_0").ok_or_else(|| n.error("has no result metadata"))?;
            Ok(HostTensor {
                name: names.map_or_else(|| n.name.clone(), |v| v[k].clone()),
                dtype: r.dtype().name().to_string(),
                shape: r.shape.clone(),
            })
        })
        .collect()
}

/// The model's lookup tables and where the split placed them, one line: `node rows×dim (bits)
/// device|host, …; budget N bits`; `None` for a model without tables.
pub fn tables_summary(h: &HostParts) -> Option<String> {
    let (tables, budget) = tables_of(&h.info)?;
    let list: Vec<String> = tables
        .iter()
        .map(|t| {
            let side = if t.on_device { "device" } else { "host" };
            format!("{} {}×{} ({} bits) {side}", t.node, t.rows, t.dim, t.bits)
        })
        .collect();
    Some(format!("{}; budget {budget} bits ([hardware] table_budget_bits)", list.join(", ")))
}

/// The lookup tables a split's info lists, with the budget, `None` when there are none.
fn tables_of(info: &PassInfo) -> Option<(Vec<LookupTable>, u64)> {
    let tables: Vec<LookupTable> = serde_json::from_value(info.get("lookup_tables")?.clone()).ok()?;
    let budget = info.get("table_budget_bits").and_then(|v| v.as_u64()).unwrap_or_default();
    (!tables.is_empty()).then_some((tables, budget))
}

/// The report of host parts.
pub fn host_report(h: &HostParts) -> Result<HostReport> {
    let names = |g: &MaseGraph| (0..g.output_values().len()).map(|k| g.output_name(k)).collect::<Vec<_>>();
    Ok(HostReport {
        model_inputs: tensors(&h.pre, &h.pre.input_ids(), None)?,
        model_outputs: tensors(&h.post, &h.post.output_values(), Some(&names(&h.post)))?,
        pre_outputs: tensors(&h.pre, &h.pre.output_values(), Some(&names(&h.pre)))?,
        post_inputs: tensors(&h.post, &h.post.input_ids(), None)?,
        split: h.info.clone(),
    })
}

/// The project README's section on the host: what each part computes and how the host feeds
/// and reads the device's ports.
pub fn readme_section(r: &HostReport, d: &Design) -> String {
    use std::fmt::Write;
    let list = |v: &[HostTensor]| {
        v.iter().map(|t| format!("`{}` {} {:?}", t.name, t.dtype, t.shape)).collect::<Vec<_>>().join(", ")
    };
    let mut s = String::from("\n## Host: the rest of the model\n\n");
    let _ = writeln!(
        s,
        "This accelerator is the device part of a whole model; the host runs what comes before and after it.\n"
    );
    let _ = writeln!(s, "1. `host/pre.onnx` (ONNX, opset 17; onnxruntime or `mase` run it) takes the model's inputs {} and computes the device's input tensors.", list(&r.model_inputs));
    let _ = writeln!(
        s,
        "2. Each device input is quantized into its port's format (code = the value scaled by 2^frac, rounded and \
         saturated as the format says: a token id is its own code, a boolean is the code 1 for true) and streamed row-major, `lanes` codes per \
         beat, lane 0 in the low bits:\n"
    );
    let _ = writeln!(s, "   | port | tensor | format | lanes | shape |\n   |---|---|---|---|---|");
    for p in &d.ports {
        let _ = writeln!(
            s,
            "   | `{}` | `{}` | `{}` | {} | {:?} |",
            p.name, p.tensor, p.format, p.lanes, p.shape
        );
    }
    let _ = writeln!(
        s,
        "\n3. The device's outputs are read back as values (code × 2^-frac) under their tensor names.\n\
         4. `host/post.onnx` takes them (and {}) and computes the model's outputs {}.\n",
        if r.post_inputs.len() > d.ports.iter().filter(|p| p.dir == PortDir::Output).count() {
            "values the pre part hands over"
        } else {
            "nothing else"
        },
        list(&r.model_outputs)
    );
    if let Some((t, budget)) = tables_of(&r.split) {
        let _ = writeln!(
            s,
            "Lookup tables (embeddings) go on the device smallest first while together they fit the budget of \
             {budget} bits (`[hardware] table_budget_bits`); the others are looked up on the host:\n"
        );
        let _ = writeln!(s, "| node | rows × dim | bits | runs on |\n|---|---|---|---|");
        for t in &t {
            let side = if t.on_device { "device" } else { "host" };
            let _ = writeln!(s, "| `{}` | {} × {} | {} | {side} |", t.node, t.rows, t.dim, t.bits);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "`mase sim DIR {}` runs all of it: the host parts by mase's interpreter, the device under Verilator \
         against the golden model; the model's outputs land in `sim/<name>.npy`. `host/host.json` lists every \
         tensor crossing the boundaries and which nodes run on the host.",
        r.model_inputs.iter().map(|t| format!("--input {0}={0}.npy", t.name)).collect::<Vec<_>>().join(" ")
    );
    s
}

/// Writes `host/pre.onnx`, `host/post.onnx` and `host/host.json` into the project directory
/// `lock` holds (after the device's project) and adds the host section to its `README.md`;
/// returns the paths written, relative to the directory.
pub fn write_host(h: &HostParts, d: &Design, lock: &crate::project::ProjectLock) -> Result<Vec<PathBuf>> {
    let dir = lock.dir();
    let host = dir.join("host");
    std::fs::create_dir_all(&host).map_err(|e| Error::io(&host, e))?;
    let mut files = Vec::new();
    let mut put = |name: &str, bytes: &[u8]| -> Result<()> {
        let p = host.join(name);
        std::fs::write(&p, bytes).map_err(|e| Error::io(&p, e))?;
        files.push(Path::new("host").join(name));
        Ok(())
    };
    put("pre.onnx", &to_onnx(&h.pre, &ExportOptions::default())?)?;
    put("post.onnx", &to_onnx(&h.post, &ExportOptions::default())?)?;
    let report = host_report(h)?;
    let json =
        serde_json::to_string_pretty(&report).map_err(|e| Error::Config(format!("host.json: {e}")))? + "\n";
    put("host.json", json.as_bytes())?;
    let readme = dir.join("README.md");
    let mut text = std::fs::read_to_string(&readme).map_err(|e| Error::io(&readme, e))?;
    text.push_str(&readme_section(&report, d));
    std::fs::write(&readme, text).map_err(|e| Error::io(&readme, e))?;
    Ok(files)
}
