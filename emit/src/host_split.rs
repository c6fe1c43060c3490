//! The host/device split: which nodes of a whole model run on the accelerator and which on the
//! host before it (index arithmetic, embedding lookups the library does not implement, mask
//! preparation) or after it (what the library does not implement), recorded in MASE's metadata
//! style as `hardware.toolchain = "HOST"` on every host node ([`SPLIT_HOST_DEVICE`]), and the
//! device's own graph cut out of the model ([`device_graph`]).
//!
//! The rule, in dataflow order:
//! - A node the device can implement is one whose op the library binds (or passes through, like
//!   a reshape) and whose inputs are all streamed real-valued tensors, except where a component
//!   takes something else: a softmax's key mask is boolean, an embedding's index is an integer
//!   (token ids stream in as `u<bits>.0`, [`index_formats`]), a gather's single index and an
//!   added table (a position embedding, `add_table`) are constants. Not when `[hardware]
//!   host_ops` names its op or `[hardware.nodes.NAME] host = true` is set.
//! - **Lookup tables** ([`device_tables`]): an embedding the device can implement runs there when
//!   its table fits `[hardware] table_budget_bits` (default
//!   [`crate::config::DEFAULT_TABLE_BUDGET_BITS`]) next to the smaller tables already placed;
//!   otherwise it is looked up on the host and its rows stream in as values.
//! - **Host before the device** (`pre`): the graph inputs, and every node the device cannot
//!   implement whose inputs are all on the host; a node the device could implement is pulled onto
//!   the host too when such a host node needs it and its own inputs are already on the host (the
//!   sum of two embedding lookups feeding an add of a constant stays on the host with them).
//! - **Device**: the other nodes the device can implement, until the first it cannot.
//! - **Host after the device** (`post`): the first node the device cannot implement that takes a
//!   device result, and everything that depends on it. The device region thus ends there; the
//!   pass's info names that node and every post node the library could have implemented, so a
//!   head that could move onto the device is visible.
//!
//! Constants belong to the side of the nodes that read them (a constant read on both sides is
//! copied).

use std::collections::{BTreeMap, BTreeSet};

use mase_hwlib::components::{add_table, embedding, row_select};
use mase_hwlib::{NodeView, OpRole};
use mase_ir::metadata::{TensorMeta, Toolchain, ValueType};
use mase_ir::pass::{FnPass, PassArgs, PassInfo};
use mase_ir::tensor::DType;
use mase_ir::{Error, MaseGraph, NodeId, Op, Result};
use serde::Serialize;
use serde_json::json;

use crate::config::HwConfig;

/// Where a node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A graph input (given to the host).
    Input,
    /// A constant (read where its users run).
    Constant,
    /// On the host, before the device.
    Pre,
    /// On the device.
    Device,
    /// On the host, after the device.
    Post,
    /// The graph output node.
    Output,
}

impl Side {
    /// True for the sides whose values the host has before the device runs.
    fn before_device(self) -> bool {
        matches!(self, Side::Input | Side::Constant | Side::Pre)
    }
}

/// The split of a graph: every node's side (indexed by node id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Side of every node, by node id.
    pub side: Vec<Side>,
    /// The node that ended the device region, if any.
    pub ended_by: Option<NodeId>,
}

impl Split {
    /// The values that enter the device: host (or input) nodes read by a device node, in graph
    /// order.
    pub fn device_inputs(&self, g: &MaseGraph) -> Vec<NodeId> {
        g.ids()
            .filter(|&id| matches!(self.side[id.0], Side::Input | Side::Pre))
            .filter(|&id| g.users(id).iter().any(|u| self.side[u.0] == Side::Device))
            .collect()
    }

    /// The device results the host (or the graph output) reads, in graph order.
    pub fn device_outputs(&self, g: &MaseGraph) -> Vec<NodeId> {
        g.ids()
            .filter(|&id| self.side[id.0] == Side::Device)
            .filter(|&id| g.users(id).iter().any(|u| matches!(self.side[u.0], Side::Post | Side::Output)))
            .collect()
    }

    /// True when some node runs on the host (beyond the graph inputs).
    pub fn has_host(&self) -> bool {
        self.side.iter().any(|s| matches!(s, Side::Pre | Side::Post))
    }
}

/// True when the device can implement node `id` (see the module documentation).
pub fn device_capable(g: &MaseGraph, id: NodeId, cfg: &HwConfig) -> bool {
    let n = g.node(id);
    let settings = cfg.nodes.get(&n.name);
    if settings.is_some_and(|s| s.host) || cfg.host_ops.iter().any(|o| o == n.op.mase_op()) {
        return false;
    }
    let bound = settings.is_some_and(|s| s.external.is_some())
        || matches!(mase_hwlib::op_role(n.op.kind()), OpRole::Bound(..) | OpRole::Implicit);
    let dtype = |i: &NodeId| g.node(*i).meta.common.results.get("data_out_0").map(|r| r.dtype());
    let table_add = matches!(n.op, Op::Add) && added_table(g, n).is_some();
    // The rows a gather picks are a parameter of its instance (the row_select binding's rule).
    let row_select = matches!(n.op, Op::Gather { .. }) && row_select::selection(&NodeView::new(g, n)).is_ok();
    let streamed = n.inputs.iter().enumerate().all(|(k, i)| {
        if let Op::Constant { .. } = &g.node(*i).op {
            return k == 1 && (table_add || row_select);
        }
        match dtype(i) {
            Some(DType::F32) => true,
            // A softmax's key mask; an embedding's token ids; a qlinear's input codes.
            Some(DType::Bool) => k == 1 && matches!(n.op, Op::Softmax { .. }),
            Some(DType::I64 | DType::I32) => {
                k == 0 && matches!(n.op, Op::Embedding { .. } | Op::Qlinear { .. })
            }
            None => false,
        }
    });
    let same_shapes = !matches!(n.op, Op::Add | Op::Sub)
        || table_add
        || n.inputs.windows(2).all(|w| g.node(w[0]).out_shape() == g.node(w[1]).out_shape());
    bound && streamed && same_shapes
}

/// The rows of the constant table an add node adds to its streamed input 0 (input 1 a constant
/// broadcast over leading axes, as the `add_table` component takes it), `None` otherwise.
fn added_table(g: &MaseGraph, n: &mase_ir::Node) -> Option<usize> {
    let (x, c) = (g.node(*n.inputs.first()?), g.node(*n.inputs.get(1)?));
    if matches!(x.op, Op::Constant { .. }) || !matches!(c.op, Op::Constant { .. }) {
        return None;
    }
    add_table::table_rows(x.out_shape()?, c.out_shape()?).ok()
}

/// A lookup table of the model: an embedding node, its table's geometry and bits as the device
/// would hold them (the quantized codes, or 32-bit floats before quantization).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LookupTable {
    /// The embedding node.
    pub node: String,
    /// Table rows (the vocabulary) and row length.
    pub rows: usize,
    /// Elements per row.
    pub dim: usize,
    /// Bits of the table.
    pub bits: u64,
    /// True when the table is on the device (within the budget, [`device_tables`], and in the
    /// device region).
    pub on_device: bool,
}

fn table_geometry(g: &MaseGraph, n: &mase_ir::Node) -> Option<(usize, usize, u64)> {
    let Op::Embedding { table } = &n.op else { return None };
    let (shape, width) = match g.qweights.get(table) {
        Some(q) => (q.codes.shape().to_vec(), u64::from(q.format.width)),
        None => (g.weights.get(table)?.shape().to_vec(), 32),
    };
    let [rows, dim] = shape[..] else { return None };
    Some((rows, dim, (rows * dim) as u64 * width))
}

/// The embedding nodes whose tables the device holds: of those the device can implement, the
/// smallest tables first while their sum stays within [`HwConfig::table_budget`] (ties in graph
/// order), so token-type and position tables go before a word table.
pub fn device_tables(g: &MaseGraph, cfg: &HwConfig) -> BTreeSet<NodeId> {
    let mut tables: Vec<(u64, NodeId)> = g
        .nodes()
        .filter(|(id, _)| device_capable(g, *id, cfg))
        .filter_map(|(id, n)| table_geometry(g, n).map(|t| (t.2, id)))
        .collect();
    tables.sort();
    let mut used = 0u64;
    let mut on = BTreeSet::new();
    for (bits, id) in tables {
        if used + bits <= cfg.table_budget() {
            used += bits;
            on.insert(id);
        }
    }
    on
}

/// Every lookup table of the model with where split `s` placed it, in graph order.
pub fn lookup_tables(g: &MaseGraph, s: &Split) -> Vec<LookupTable> {
    g.nodes()
        .filter_map(|(id, n)| {
            let (rows, dim, bits) = table_geometry(g, n)?;
            let on_device = s.side[id.0] == Side::Device;
            Some(LookupTable { node: n.name.clone(), rows, dim, bits, on_device })
        })
        .collect()
}

/// Splits `g` (see the module documentation).
pub fn split(g: &MaseGraph, cfg: &HwConfig) -> Split {
    let mut side = vec![Side::Pre; g.len()];
    let mut ended_by = None;
    let tables = device_tables(g, cfg);
    let on_device = |id: NodeId, n: &mase_ir::Node| {
        device_capable(g, id, cfg) && (!matches!(n.op, Op::Embedding { .. }) || tables.contains(&id))
    };
    for (id, n) in g.nodes() {
        side[id.0] = match n.op {
            Op::Placeholder => Side::Input,
            Op::Constant { .. } => Side::Constant,
            Op::Output => Side::Output,
            _ if n.inputs.iter().any(|i| side[i.0] == Side::Post) => Side::Post,
            _ if on_device(id, n) => Side::Device,
            _ if n.inputs.iter().all(|i| side[i.0].before_device() || pullable(g, &side, *i)) => {
                for i in &n.inputs {
                    pull(&mut side, *i);
                }
                Side::Pre
            }
            _ => {
                ended_by.get_or_insert(id);
                Side::Post
            }
        };
    }
    Split { side, ended_by }
}

/// True when device node `id` can move to the host before the device: its inputs are all there
/// already. Only one node deep, so that a host node late in the model ends the device region
/// rather than pulling the device's work onto the host.
fn pullable(g: &MaseGraph, side: &[Side], id: NodeId) -> bool {
    side[id.0] == Side::Device && g.node(id).inputs.iter().all(|i| side[i.0].before_device())
}

/// Moves device node `id` to the host before the device.
fn pull(side: &mut [Side], id: NodeId) {
    if side[id.0] == Side::Device {
        side[id.0] = Side::Pre;
    }
}

/// The device's own graph: the device nodes with a placeholder per device input (named as the
/// host value it receives, with its metadata: shape, type, format) and an output node returning
/// the device outputs, the constants and weights the device nodes read, and the device nodes'
/// metadata. Errors when nothing runs on the device.
pub fn device_graph(g: &MaseGraph, s: &Split) -> Result<MaseGraph> {
    let outputs = s.device_outputs(g);
    if outputs.is_empty() {
        return Err(Error::Invalid(format!(
            "graph '{}': no node runs on the device (the library implements none of the nodes between the \
             host's inputs and outputs)",
            g.name
        )));
    }
    let mut d = MaseGraph::new(g.name.clone());
    let mut map: BTreeMap<NodeId, NodeId> = BTreeMap::new();
    for id in s.device_inputs(g) {
        let n = g.node(id);
        let new = d.add_node(n.name.clone(), Op::Placeholder, vec![])?;
        let nn = d.node_mut(new);
        nn.origin = n.origin.clone();
        if let Some(r) = n.meta.common.results.get("data_out_0") {
            nn.meta.common.results.insert("data_out_0".into(), r.clone());
        }
        nn.meta.software.results = n.meta.software.results.clone();
        map.insert(id, new);
    }
    for (id, n) in g.nodes() {
        let used_by_device = g.users(id).iter().any(|u| s.side[u.0] == Side::Device);
        let keep = s.side[id.0] == Side::Device || (s.side[id.0] == Side::Constant && used_by_device);
        if !keep {
            continue;
        }
        let inputs = n.inputs.iter().map(|i| map[i]).collect();
        let new = d.add_node(n.name.clone(), n.op.clone(), inputs)?;
        let nn = d.node_mut(new);
        nn.meta = n.meta.clone();
        nn.origin = n.origin.clone();
        for (_, key) in n.op.weight_names() {
            if let Some(t) = g.weights.get(key) {
                d.weights.insert(key.to_string(), t.clone());
            }
            if let Some(q) = g.qweights.get(key) {
                d.qweights.insert(key.to_string(), q.clone());
            }
        }
        map.insert(id, new);
    }
    let outs = outputs.iter().map(|o| map[o]).collect();
    let name = d.fresh_name("output");
    d.add_node(name, Op::Output, outs)?;
    index_formats(&mut d)?;
    d.validate()?;
    Ok(d)
}

/// Gives every integer input of the device (token ids, which only embeddings take) the unsigned
/// code of its tables' indices, `u<bits>.0` with the bits of the largest table's last row
/// ([`embedding::index_bits`]), on the input and on every embedding that reads it (integer
/// metadata `precision = [storage bits, code bits]`, `unsigned`): the top's port then streams
/// exactly the bits the lookups use, and the values stay integers for the interpreters. An id
/// outside the table saturates to the largest code (the lookup of an index past the table gives
/// zeros). A graph not quantized yet is left as it is.
pub fn index_formats(d: &mut MaseGraph) -> Result<()> {
    code_formats(d)?;
    // Inputs that already stream codes (a qlinear's, from `code_formats`) keep them.
    let inputs: Vec<NodeId> = d
        .input_ids()
        .into_iter()
        .filter(|&i| {
            d.node(i)
                .meta
                .common
                .results
                .get("data_out_0")
                .is_some_and(|r| r.ty == ValueType::Integer && r.precision.len() == 1)
        })
        .collect();
    'inputs: for i in inputs {
        let mut bits = 1;
        for u in d.users(i) {
            let n = d.node(u);
            let Op::Embedding { table } = &n.op else {
                return Err(n.error(format!(
                    "reads the integer device input '{}'; on the device only embeddings take integers",
                    d.node(i).name
                )));
            };
            // A graph not yet quantized keeps its integers (formats come with quantization).
            let Some(q) = d.qweights.get(table) else { continue 'inputs };
            bits = bits.max(embedding::index_bits(q.codes.shape()[0]));
        }
        let code = |tm: &mut TensorMeta| {
            tm.precision.truncate(1);
            tm.precision.push(i64::from(bits));
            tm.unsigned = true;
        };
        for u in d.users(i) {
            let n = d.node_mut(u);
            for (k, _) in n.inputs.clone().iter().enumerate().filter(|(_, x)| **x == i) {
                if let Some(tm) = n.meta.common.args.get_mut(&format!("data_in_{k}")) {
                    code(tm);
                }
            }
        }
        if let Some(tm) = d.node_mut(i).meta.common.results.get_mut("data_out_0") {
            code(tm);
        }
    }
    Ok(())
}

/// Gives every qlinear's input and output the integer code format of its model's quantizer
/// (`u8` / `s8` …, integer metadata `precision = [storage bits, code bits]`), on the node and on
/// the producer of its input: the streams between quantized layers, and the top's ports where
/// the host quantizes before the device and dequantizes after it, carry exactly the model's
/// codes. A qlinear fed by another whose output codes mean something else (another type, scale
/// or zero point) is an error naming both.
pub fn code_formats(d: &mut MaseGraph) -> Result<()> {
    let ids: Vec<NodeId> =
        d.nodes().filter(|(_, n)| matches!(n.op, Op::Qlinear { .. })).map(|(i, _)| i).collect();
    for id in ids {
        let Op::Qlinear { x_type, x_scale, x_zero_point, y_type, .. } = d.node(id).op.clone() else {
            continue;
        };
        let src = d.node(id).inputs[0];
        if let Op::Qlinear { y_type, y_scale, y_zero_point, .. } = &d.node(src).op {
            if (*y_type, *y_scale, *y_zero_point) != (x_type, x_scale, x_zero_point) {
                return Err(d.node(id).error(format!(
                    "reads the codes of qlinear '{}' ({y_type:?}, scale {y_scale}, zero point {y_zero_point}) as \
                     {x_type:?} with scale {x_scale} and zero point {x_zero_point}; a requantisation between them \
                     is not supported",
                    d.node(src).name
                )));
            }
        }
        let code = |tm: &mut TensorMeta, ty| {
            let f = mase_ir::quant::affine::code_format(ty);
            tm.ty = ValueType::Integer;
            tm.precision = vec![64, i64::from(f.width)];
            tm.unsigned = !f.signed;
        };
        if let Some(tm) = d.node_mut(src).meta.common.results.get_mut("data_out_0") {
            code(tm, x_type);
        }
        let n = d.node_mut(id);
        if let Some(tm) = n.meta.common.args.get_mut("data_in_0") {
            code(tm, x_type);
        }
        if let Some(tm) = n.meta.common.results.get_mut("data_out_0") {
            code(tm, y_type);
        }
    }
    Ok(())
}

/// Which host part a graph is cut for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPart {
    /// Before the device: the model's inputs → the device's inputs.
    Pre,
    /// After the device: the device's outputs → the model's outputs.
    Post,
}

/// The values the host computes before the device and the part after it reads (besides the
/// device's outputs), in graph order: the pre part outputs them next to the device inputs.
pub fn host_handovers(g: &MaseGraph, s: &Split) -> Vec<NodeId> {
    g.ids()
        .filter(|&id| s.side[id.0] == Side::Pre)
        .filter(|&id| g.users(id).iter().any(|u| matches!(s.side[u.0], Side::Post | Side::Output)))
        .collect()
}

/// A host part's own graph, for writing as ONNX and running on the host.
/// - [`HostPart::Pre`]: the model's inputs the pre nodes read (placeholders as in the model),
///   the pre nodes and their constants; outputs the device inputs, then [`host_handovers`].
/// - [`HostPart::Post`]: a placeholder per device output and per model input or pre value the
///   post nodes (or the model's outputs) read, the post nodes and their constants; outputs the
///   model's outputs under the model's output names.
///
/// Placeholders keep the model's names, so the parts join by name: pre output = device
/// placeholder, device output = post placeholder.
pub fn host_graph(g: &MaseGraph, s: &Split, part: HostPart) -> Result<MaseGraph> {
    let mut h = MaseGraph::new(format!("{}_{}", g.name, if part == HostPart::Pre { "pre" } else { "post" }));
    let mut map: BTreeMap<NodeId, NodeId> = BTreeMap::new();
    let is_part = |id: NodeId| match part {
        HostPart::Pre => s.side[id.0] == Side::Pre,
        HostPart::Post => s.side[id.0] == Side::Post,
    };
    let reads = |id: NodeId| {
        g.users(id).iter().any(|&u| is_part(u) || (part == HostPart::Post && s.side[u.0] == Side::Output))
    };
    for (id, n) in g.nodes() {
        let placeholder = match part {
            HostPart::Pre => {
                s.side[id.0] == Side::Input && g.users(id).iter().any(|&u| s.side[u.0] != Side::Post)
            }
            HostPart::Post => matches!(s.side[id.0], Side::Input | Side::Pre | Side::Device) && reads(id),
        };
        let keep = is_part(id) || (s.side[id.0] == Side::Constant && reads(id));
        if placeholder {
            let new = h.add_node(n.name.clone(), Op::Placeholder, vec![])?;
            let nn = h.node_mut(new);
            nn.origin = n.origin.clone();
            if let Some(r) = n.meta.common.results.get("data_out_0") {
                nn.meta.common.results.insert("data_out_0".into(), r.clone());
            }
            map.insert(id, new);
        } else if keep {
            let inputs = n.inputs.iter().map(|i| map[i]).collect();
            let new = h.add_node(n.name.clone(), n.op.clone(), inputs)?;
            let nn = h.node_mut(new);
            nn.meta = n.meta.clone();
            nn.origin = n.origin.clone();
            for key in n.op.weight_names().into_iter().map(|(_, k)| k.to_string()).chain(match &n.op {
                Op::Constant { tensor } => Some(tensor.clone()),
                _ => None,
            }) {
                if let Some(t) = g.weights.get(&key) {
                    h.weights.insert(key, t.clone());
                }
            }
            map.insert(id, new);
        }
    }
    let (outs, names): (Vec<NodeId>, Vec<String>) = match part {
        HostPart::Pre => s
            .device_inputs(g)
            .into_iter()
            .chain(host_handovers(g, s))
            .map(|i| (map[&i], g.node(i).name.clone()))
            .unzip(),
        HostPart::Post => {
            let out =
                g.output_id().ok_or_else(|| Error::Invalid(format!("graph '{}' has no output", g.name)))?;
            g.node(out).inputs.iter().enumerate().map(|(k, i)| (map[i], g.output_name(k))).unzip()
        }
    };
    let name = h.fresh_name("output");
    h.add_node(name, Op::Output, outs)?;
    h.output_names = names;
    h.validate()?;
    Ok(h)
}

/// The pass (`split_host_device`, registered in [`crate::HARDWARE_PASSES`]): records
/// `hardware.toolchain = "HOST"` on every node that runs on the host and lists the sides.
pub static SPLIT_HOST_DEVICE: FnPass = FnPass {
    name: "split_host_device",
    description: "mark the nodes that run on the host before or after the device (toolchain HOST): what the library does not implement, with [hardware] host_ops / nodes.NAME.host overrides",
    run: run_split,
};

fn run_split(mut graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
    let cfg = HwConfig::from_table(args, "split_host_device arguments")?;
    let s = split(&graph, &cfg);
    let info = split_info(&graph, &s, &cfg);
    let ids: Vec<NodeId> = graph.ids().collect();
    for id in ids {
        if matches!(s.side[id.0], Side::Pre | Side::Post) {
            graph.node_mut(id).meta.hardware.toolchain = Some(Toolchain::Host);
        }
    }
    Ok((graph, info))
}

/// The info map of a split: the host nodes before and after, the device's inputs and outputs,
/// the node that ended the device region and the post nodes the library could implement.
pub fn split_info(g: &MaseGraph, s: &Split, cfg: &HwConfig) -> PassInfo {
    let names = |side: Side| -> Vec<String> {
        g.nodes().filter(|(id, _)| s.side[id.0] == side).map(|(_, n)| n.name.clone()).collect()
    };
    let listed =
        |ids: Vec<NodeId>| -> Vec<String> { ids.into_iter().map(|i| g.node(i).name.clone()).collect() };
    let movable: Vec<String> = g
        .nodes()
        .filter(|(id, _)| s.side[id.0] == Side::Post && device_capable(g, *id, cfg))
        .map(|(_, n)| n.name.clone())
        .collect();
    let mut info = PassInfo::new();
    info.insert("host_pre".into(), json!(names(Side::Pre)));
    info.insert("device_nodes".into(), json!(names(Side::Device).len()));
    info.insert("host_post".into(), json!(names(Side::Post)));
    info.insert("device_inputs".into(), json!(listed(s.device_inputs(g))));
    info.insert("device_outputs".into(), json!(listed(s.device_outputs(g))));
    info.insert("device_ended_by".into(), json!(s.ended_by.map(|i| g.node(i).name.clone())));
    info.insert("host_post_the_library_implements".into(), json!(movable));
    info.insert("table_budget_bits".into(), json!(cfg.table_budget()));
    info.insert("lookup_tables".into(), json!(lookup_tables(g, s)));
    info
}
