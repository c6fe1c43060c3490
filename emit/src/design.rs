//! The stitched design: component instances, the streams between them and the top's ports,
//! built from a graph whose hardware nodes have a chosen parallelism.
//!
//! [`stitch`] instantiates one component per hardware node, then connects every producer to its
//! consumers, inserting what they need between them, per consumer leg in this order:
//! - a `fork` chain when a stream has several consumers (each fork serves two);
//! - a `fifo` on the inputs of a join (`add`, `matmul`) whose paths from the common producer
//!   hold different amounts of data, sized from the components' cost models (see [`hold`]) so
//!   that the earlier path can run ahead by the whole difference: the design cannot deadlock
//!   and back-to-back inferences do not stall for want of buffering;
//! - a `cast` when the producer's format is not the format the consumer declares (`data_in_k`),
//!   with the consumer's rounding and overflow modes, as quantized execution casts;
//! - `lane_converter`s when the producer's elements per beat differ from the consumer's (two,
//!   through their gcd, when neither divides the other).
//!
//! A node whose component's own output format differs from its declared result format (a relu
//! whose result was given another format) gets a `cast` right after it.

use std::collections::BTreeMap;
use std::sync::Arc;

use mase_hwlib::binding::layout::stream_shape;
use mase_hwlib::binding::result_shape;
use mase_hwlib::components::{cast, fifo, fork, lane_converter};
use mase_hwlib::{lookup, param, Component, Params};
use mase_ir::fixed::FixedFormat;
use mase_ir::{NodeId, Result};
use serde::Serialize;

use crate::bind::{fmt_name, graph_error, Bindings, Implementation, Par, Role};
use crate::external::External;
use crate::parallel::{cycles_per_inference, stream_lanes};

mod stitch;
pub use stitch::stitch;

/// One end of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Endpoint {
    /// A stream port of the top (index into [`Design::ports`]).
    Top(usize),
    /// Stream `port` of instance `inst` (index into [`Design::instances`]).
    Inst(usize, String),
}

/// Why an instance exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstKind {
    /// Implements a graph node.
    Node,
    /// Format conversion inserted by the stitcher.
    Cast,
    /// Fan-out inserted by the stitcher.
    Fork,
    /// Buffer on a reconvergent path inserted by the stitcher.
    Fifo,
    /// Elements-per-beat conversion inserted by the stitcher.
    LaneConverter,
    /// Link to the next device, on a stream that crosses a device boundary
    /// ([`crate::system`]).
    Link,
}

/// A component instance.
#[derive(Debug, Clone, Serialize)]
pub struct Instance {
    /// Instance name in the top (`<name>_inst` is emitted).
    pub name: String,
    /// Component name (registry key).
    pub component: String,
    /// Resolved parameters.
    pub params: Params,
    /// The graph node it implements (also for glue: the node it serves).
    pub node: String,
    /// Why it exists.
    pub kind: InstKind,
    /// Logical memory contents by memory name.
    #[serde(skip)]
    pub memories: Vec<(String, Vec<i64>)>,
    /// Elements of `data_in_0` per inference.
    pub numel_in: usize,
    /// The user's module, for an EXTERNAL node (`component` is then `external`).
    #[serde(skip)]
    pub external: Option<Arc<External>>,
}

impl Instance {
    /// The component: a registered one, or the user's module.
    pub fn component(&self) -> &dyn Component {
        match &self.external {
            Some(e) => &**e,
            None => lookup(&self.component).expect("instances are made from registered components"),
        }
    }

    /// The SystemVerilog module instantiated.
    pub fn module(&self) -> String {
        match &self.external {
            Some(e) => e.manifest.module.clone(),
            None => format!("mase_{}", self.component),
        }
    }

    /// Cycles this instance needs per inference (its cost model).
    pub fn cycles_per_inference(&self) -> u64 {
        cycles_per_inference(self.component(), &self.params, self.numel_in)
    }
}

/// Direction of a top port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PortDir {
    /// Into the design.
    Input,
    /// Out of the design.
    Output,
}

/// A stream port of the top: one graph input or output tensor.
#[derive(Debug, Clone, Serialize)]
pub struct TopPort {
    /// Port name (`data_in_k` / `data_out_k`).
    pub name: String,
    /// The graph tensor (node name) it carries.
    pub tensor: String,
    /// Direction.
    pub dir: PortDir,
    /// Element format.
    #[serde(serialize_with = "ser_format")]
    pub format: FixedFormat,
    /// Elements per beat.
    pub lanes: usize,
    /// Tensor shape per inference (row-major stream order, last dimension fastest).
    pub shape: Vec<usize>,
}

impl TopPort {
    /// Elements per inference.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

fn ser_format<S: serde::Serializer>(f: &FixedFormat, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&fmt_name(f))
}

/// A stream between two endpoints.
#[derive(Debug, Clone, Serialize)]
pub struct Wire {
    /// Driver (an input port of the top or an output stream of an instance).
    pub from: Endpoint,
    /// Receiver (an output port of the top or an input stream of an instance).
    pub to: Endpoint,
    /// Elements per beat.
    pub lanes: usize,
    /// Bits per element.
    pub width: u32,
    /// Element format.
    #[serde(serialize_with = "ser_format")]
    pub format: FixedFormat,
}

/// The stitched design.
#[derive(Debug, Clone, Serialize)]
pub struct Design {
    /// Top module name.
    pub top: String,
    /// Graph name.
    pub graph: String,
    /// Stream ports of the top (inputs first, in graph order).
    pub ports: Vec<TopPort>,
    /// Instances, producers before consumers.
    pub instances: Vec<Instance>,
    /// Streams.
    pub wires: Vec<Wire>,
}

/// A produced stream waiting to be connected.
#[derive(Debug, Clone)]
struct Src {
    ep: Endpoint,
    fmt: FixedFormat,
    lanes: usize,
    shape: Vec<usize>,
    /// Data held between the graph inputs and this point, in inferences (see [`hold`]).
    hold: f64,
}

/// One input of a join: its producing node, input index and the data held before it.
type JoinInput = (NodeId, usize, f64);

impl Src {
    /// The stream as rows for a component's `TENSOR_SIZE` parameters: rows of the tensor's
    /// last dimension when the lanes tile it, else rows of one beat.
    fn rows_cols(&self) -> (usize, usize) {
        let numel: usize = self.shape.iter().product();
        let cols = *self.shape.last().unwrap_or(&1);
        if cols.is_multiple_of(self.lanes) {
            (numel / cols, cols)
        } else {
            (numel / self.lanes, self.lanes)
        }
    }
}

/// A consumer input waiting for its stream.
#[derive(Debug, Clone)]
struct Demand {
    inst: usize,
    port: String,
    fmt: FixedFormat,
    lanes: usize,
    shape: Vec<usize>,
    fifo_depth: usize,
}

/// Data an instance holds before its first output, as a fraction of one inference of its
/// input: the unit it must take whole (buffering components) or what enters during its
/// pipeline latency, whichever is larger.
pub fn hold(inst: &Instance) -> f64 {
    let c = inst.component();
    let lanes = stream_lanes(&inst.params, "DATA_IN_0").max(1);
    let unit = c
        .streams(&inst.params)
        .into_iter()
        .find(|s| s.name == "data_in_0")
        .map(|s| s.beats_per_row * s.lanes)
        .unwrap_or(lanes);
    let pipeline = c.cost(&inst.params).latency_cycles as usize * lanes;
    let held = if c.buffers_whole_unit() { unit.max(pipeline) } else { pipeline };
    held as f64 / inst.numel_in.max(1) as f64
}

/// The format an instance's `data_out_0` carries, given the format of what it receives.
fn produced_format(inst: &Instance, input: &FixedFormat) -> FixedFormat {
    let p = &inst.params;
    if inst.component().keeps_input_format() {
        return *input;
    }
    let signed = p.get("DATA_OUT_0_SIGNED").is_none_or(|s| *s != 0);
    FixedFormat {
        signed,
        width: param(p, "DATA_OUT_0_PRECISION_0") as u32,
        frac: param(p, "DATA_OUT_0_PRECISION_1") as i32,
        ..*input
    }
}

fn same_numbers(a: &FixedFormat, b: &FixedFormat) -> bool {
    a.signed == b.signed && a.width == b.width && a.frac == b.frac
}

/// SystemVerilog-safe identifier for a node name.
pub fn ident(name: &str) -> String {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert_str(0, "n_");
    }
    s
}

struct Builder {
    d: Design,
    names: BTreeMap<String, usize>,
}

impl Builder {
    fn unique(&mut self, base: &str) -> String {
        let base = ident(base);
        let n = self.names.entry(base.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base
        } else {
            format!("{base}_{}", *n - 1)
        }
    }

    fn add(
        &mut self,
        name: &str,
        component: &str,
        params: Params,
        node: &str,
        kind: InstKind,
        numel: usize,
    ) -> usize {
        let name = self.unique(name);
        self.d.instances.push(Instance {
            name,
            component: component.to_string(),
            params,
            node: node.to_string(),
            kind,
            memories: Vec::new(),
            numel_in: numel,
            external: None,
        });
        self.d.instances.len() - 1
    }

    fn wire(&mut self, from: Endpoint, to: Endpoint, lanes: usize, format: FixedFormat) {
        self.d.wires.push(Wire { from, to, lanes, width: format.width, format });
    }

    fn glue(
        &mut self,
        node: &str,
        what: &str,
        component: &str,
        params: std::result::Result<Params, String>,
        kind: InstKind,
        numel: usize,
    ) -> Result<usize> {
        let p = params.map_err(|e| graph_error(format!("stitching {what} for node '{node}': {e}")))?;
        Ok(self.add(&format!("{node}_{what}"), component, p, node, kind, numel))
    }

    /// Inserts `inst` (single input `data_in_0`, single output `data_out_0`) after `src`.
    fn chain(&mut self, src: Src, inst: usize, fmt: FixedFormat, lanes: usize) -> Src {
        self.wire(src.ep.clone(), Endpoint::Inst(inst, "data_in_0".into()), src.lanes, src.fmt);
        Src { ep: Endpoint::Inst(inst, "data_out_0".into()), fmt, lanes, shape: src.shape, hold: src.hold }
    }

    fn row_len(&self, node: &str, shape: &[usize], a: usize, b: usize) -> Result<usize> {
        let numel: usize = shape.iter().product();
        let cols = *shape.last().unwrap_or(&1);
        let lcm = a / gcd(a, b) * b;
        [cols, lcm].into_iter().find(|r| r % a == 0 && r % b == 0 && numel.is_multiple_of(*r)).ok_or_else(
            || {
                graph_error(format!(
                "node '{node}': {a} and {b} elements per beat cannot both tile a tensor of shape {shape:?}"
            ))
            },
        )
    }

    fn convert_lanes(&mut self, node: &str, src: Src, to: usize) -> Result<Src> {
        if src.lanes == to {
            return Ok(src);
        }
        let steps = if to.is_multiple_of(src.lanes) || src.lanes.is_multiple_of(to) {
            vec![to]
        } else {
            vec![gcd(src.lanes, to), to]
        };
        let mut s = src;
        for step in steps {
            let numel: usize = s.shape.iter().product();
            let r = self.row_len(node, &s.shape, s.lanes, step)?;
            let o = lane_converter::instance(&s.fmt, r, numel, s.lanes, step);
            let i = self.glue(node, "lanes", "lane_converter", o, InstKind::LaneConverter, numel)?;
            let fmt = s.fmt;
            s = self.chain(s, i, fmt, step);
        }
        Ok(s)
    }

    fn cast(&mut self, node: &str, src: Src, to: &FixedFormat) -> Result<Src> {
        if same_numbers(&src.fmt, to) {
            return Ok(src);
        }
        let (rows, cols) = src.rows_cols();
        let p = cast::instance(&src.fmt, to, rows, cols, src.lanes)
            .map_err(|e| graph_error(format!("stitching a cast for node '{node}': {e}")))?;
        let i = self.add(&format!("{node}_cast"), "cast", p, node, InstKind::Cast, rows * cols);
        let lanes = src.lanes;
        Ok(self.chain(src, i, *to, lanes))
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Parallelism of every hardware node, read back from `hardware.parallelism` (as
/// `add_hardware_metadata` records it).
pub fn recorded_parallelism(bound: &Bindings) -> Result<BTreeMap<NodeId, Par>> {
    let mut out = BTreeMap::new();
    for (id, _) in bound.hardware() {
        let n = bound.graph.node(id);
        let get = |k: &str| n.meta.hardware.parallelism.get(k).and_then(|v| v.first().copied());
        match (get("data_in_0"), get("data_out_0")) {
            (Some(p_in), Some(p_out)) => {
                let fold = n.meta.hardware.verilog_param.get("FOLD").map_or(1, |&f| f.max(1) as usize);
                out.insert(id, Par { p_in, p_out, fold });
            }
            _ => return Err(n.error("has no hardware parallelism; run add_hardware_metadata first")),
        }
    }
    Ok(out)
}
