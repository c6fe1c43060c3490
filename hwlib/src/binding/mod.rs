//! Binding graph nodes to components: the other half of the component contract.
//!
//! [`Component`] says what a module is; [`Binding`] says how a node of a quantized graph becomes
//! an instance of it: the parameters its metadata implies at a parallelism, the parallelisms worth
//! trying, the contents of the memories its weights fill. Which op binds to which component is
//! one exhaustive table over [`OpKind`], [`op_role`]: a new op does not compile until it has an
//! entry there, and a component bound to an op is named in that one place.
//!
//! Glue components (fifo, fork, cast, lane converter, skid buffer) bind to no op; the stitcher
//! builds them with their typed `instance()` constructors.

pub mod layout;
mod ops;
pub mod perm;

pub use ops::{op_role, supported_ops, OpRole};

use mase_ir::fixed::FixedFormat;
use mase_ir::metadata::TensorMeta;
use mase_ir::quant::format_of;
use mase_ir::tensor::{QuantTensor, Tensor};
use mase_ir::{Error, MaseGraph, Node, Result};

use crate::component::{Component, Params};

/// Parallelism of one hardware node: elements per beat on its main input and on its output.
/// For `linear` these are `P_IN` and `P_OUT` (so `P_IN·P_OUT` multipliers); for `matmul`
/// `p_in` is fixed to 1 and `p_out` is the output lanes; for element-wise and row ops both are
/// the lane count. `fold` is the cycles per beat of components that can time-share their
/// multipliers (the `FOLD` parameter, 1 = full rate; only their bindings offer more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Par {
    /// Elements per beat of the main input.
    pub p_in: usize,
    /// Elements per beat of the output.
    pub p_out: usize,
    /// Cycles per beat (1 = full rate).
    pub fold: usize,
}

impl Par {
    /// The same lane count in and out (element-wise and row components), full rate.
    pub fn lanes(p: usize) -> Self {
        Par { p_in: p, p_out: p, fold: 1 }
    }

    /// `p_in` and `p_out` lanes at full rate.
    pub fn io(p_in: usize, p_out: usize) -> Self {
        Par { p_in, p_out, fold: 1 }
    }
}

/// A node as its binding reads it: the graph around it, its shapes and declared formats.
#[derive(Clone, Copy)]
pub struct NodeView<'g> {
    /// The graph holding the node (its weights, producers and users).
    pub graph: &'g MaseGraph,
    /// The node.
    pub node: &'g Node,
}

impl<'g> NodeView<'g> {
    /// The view of `node` of `graph`.
    pub fn new(graph: &'g MaseGraph, node: &'g Node) -> Self {
        NodeView { graph, node }
    }

    /// An error about this node (its name and op are part of the message).
    pub fn error(&self, msg: impl Into<String>) -> Error {
        self.node.error(msg)
    }

    /// Shape of data input `k`.
    pub fn in_shape(&self, k: usize) -> Result<Vec<usize>> {
        let id = self.node.inputs.get(k).ok_or_else(|| self.error(format!("has no data input {k}")))?;
        self.graph
            .node(*id)
            .out_shape()
            .map(<[usize]>::to_vec)
            .ok_or_else(|| self.error(format!("input {k} has no shape; run add_common_metadata first")))
    }

    /// Shape of the node's result.
    pub fn out_shape(&self) -> Result<Vec<usize>> {
        result_shape(self.node)
    }

    /// Length of the last axis of data input 0 (the axis lanes run along).
    pub fn row_len(&self) -> Result<usize> {
        Ok(*self.in_shape(0)?.last().unwrap_or(&1))
    }

    /// The declared format of data input `k` (`common.args["data_in_k"]`).
    pub fn in_format(&self, k: usize) -> Result<FixedFormat> {
        let key = format!("data_in_{k}");
        fixed_of(self.node, self.node.meta.common.args.get(&key), &key)
    }

    /// The declared result format (`common.results["data_out_0"]`).
    pub fn out_format(&self) -> Result<FixedFormat> {
        fixed_of(self.node, self.node.meta.common.results.get("data_out_0"), "data_out_0")
    }

    /// The format component input `k` receives: components take signed inputs, so an unsigned
    /// declared format becomes the signed format one bit wider (lossless); at most `max_width`.
    pub fn signed_input(&self, k: usize, max_width: u32) -> Result<FixedFormat> {
        let f = self.in_format(k)?;
        let g = if f.signed { f } else { FixedFormat { signed: true, width: f.width + 1, ..f } };
        if g.width > max_width {
            return Err(self.error(format!(
                "input format {} is {} bits wide; the {} component takes at most {max_width}-bit signed inputs",
                fmt_name(&f),
                g.width,
                self.node.op.mase_op()
            )));
        }
        Ok(g)
    }

    /// The value of input `k` when it is a constant (an [`mase_ir::Op::Constant`] node: a tensor
    /// of the graph's weights), e.g. a gather's index; an error naming the producer otherwise.
    pub fn constant_input(&self, k: usize) -> Result<&'g Tensor> {
        let id = self.node.inputs.get(k).ok_or_else(|| self.error(format!("has no input {k}")))?;
        let n = self.graph.node(*id);
        let mase_ir::Op::Constant { tensor } = &n.op else {
            return Err(self.error(format!(
                "input {k} is computed by node '{}' (`{}`), not a constant",
                n.name,
                n.op.mase_op()
            )));
        };
        self.graph
            .weights
            .get(tensor)
            .ok_or_else(|| self.error(format!("input {k}: constant '{tensor}' is missing from the weights")))
    }

    /// The quantized weight `key` of the graph.
    pub fn qweight(&self, key: &str) -> Result<&'g QuantTensor> {
        let q = self.graph.qweights.get(key).ok_or_else(|| {
            self.error(format!(
                "weight `{key}` is not quantized; run the quantize (or auto_precision) pass first"
            ))
        })?;
        q.fixed().ok_or_else(|| {
            self.error(format!(
                "weight `{key}` holds the model's codes on a scale that is not a power of two; the \
                 requantisation hardware is not built yet: run the quantize (or auto_precision) pass to give \
                 it a fixed-point format"
            ))
        })
    }

    /// The codes of quantized weight `key`, flattened row-major.
    pub fn weight_codes(&self, key: &str) -> Result<Vec<i64>> {
        Ok(self.qweight(key)?.codes.iter().copied().collect())
    }

    /// An error unless `axis` is the last axis of a rank-`rank` tensor.
    pub fn require_last_axis(&self, axis: i64, rank: usize) -> Result<()> {
        let a = if axis < 0 { axis + rank as i64 } else { axis };
        if a != rank as i64 - 1 {
            return Err(self.error(format!(
                "axis {axis} of a rank-{rank} tensor: the component works over the last axis only"
            )));
        }
        Ok(())
    }
}

/// Shape of the result of `node`.
pub fn result_shape(node: &Node) -> Result<Vec<usize>> {
    node.out_shape()
        .map(<[usize]>::to_vec)
        .ok_or_else(|| node.error("has no result shape; run add_common_metadata first"))
}

/// The 1-bit unsigned code a boolean stream carries (1 = true), with the modes of a plain cast.
pub const BOOL_FORMAT: FixedFormat = FixedFormat {
    signed: false,
    width: 1,
    frac: 0,
    rounding: mase_ir::fixed::Rounding::Trn,
    overflow: mase_ir::fixed::Overflow::Sat,
};

/// The fixed-point format of a metadata entry; a boolean (an attention mask's keep bits) is
/// streamed as [`BOOL_FORMAT`], token ids as the unsigned integer code their metadata gives.
fn fixed_of(node: &Node, tm: Option<&TensorMeta>, what: &str) -> Result<FixedFormat> {
    if tm.is_some_and(|m| m.ty == mase_ir::metadata::ValueType::Bool) {
        return Ok(BOOL_FORMAT);
    }
    // Integers streamed as codes (token ids): `precision = [storage bits, code bits]`.
    if let Some(m) = tm.filter(|m| m.ty == mase_ir::metadata::ValueType::Integer && m.precision.len() == 2) {
        return Ok(FixedFormat {
            signed: !m.unsigned,
            width: u32::try_from(m.precision[1]).unwrap_or(0),
            frac: 0,
            rounding: mase_ir::fixed::Rounding::Trn,
            overflow: mase_ir::fixed::Overflow::Sat,
        });
    }
    tm.and_then(format_of).ok_or_else(|| {
        node.error(format!(
            "{what} is not fixed point; run the quantize (or auto_precision) pass before the hardware passes"
        ))
    })
}

/// `s16.8` / `u8.8`: a format's short name for messages and reports.
pub fn fmt_name(f: &FixedFormat) -> String {
    format!("{}{}.{}", if f.signed { "s" } else { "u" }, f.width, f.frac)
}

/// How a library component implements graph nodes. Implemented next to the [`Component`] in
/// `components/<name>.rs`; [`op_role`] names which op binds to it.
pub trait Binding: Component {
    /// Parameter overrides of an instance for node `v` at parallelism `par` (resolved and
    /// validated by [`crate::resolve_params`] afterwards).
    fn overrides(&self, v: &NodeView, par: Par) -> Result<Vec<(String, i64)>>;

    /// The binding that implements `v` in place of this one, when the node's inputs call for a
    /// variant of the op's component (a softmax given a key mask binds `masked_softmax`).
    /// Default: none, this binding implements every node of its op.
    fn variant(&self, _v: &NodeView) -> Option<&'static dyn Binding> {
        None
    }

    /// Parallelisms worth trying for `v`, before validation. Default: the same lane count in and
    /// out, every divisor of the last axis up to 256.
    fn candidates(&self, v: &NodeView) -> Result<Vec<Par>> {
        Ok(divisors(v.row_len()?, 256).into_iter().map(Par::lanes).collect())
    }

    /// The parallelism `[hardware.nodes.NAME] parallelism = [a]` (one number) asks for.
    /// Default: `a` lanes in and out.
    fn par_of_one(&self, a: usize) -> Par {
        Par::lanes(a)
    }

    /// The implementation forms `[hardware.nodes.NAME] form = "…"` may select (read back from
    /// the node's `hardware.form` metadata in [`Binding::overrides`]). Default: none (the
    /// component has one form and a `form` setting is an error).
    fn forms(&self) -> &'static [&'static str] {
        &[]
    }

    /// Contents of the memories the node's data fills (weights, or a table the node's attributes
    /// choose), by memory name; memories not listed are [`Component::generated_memory`].
    /// Default: none.
    fn data_memories(&self, _v: &NodeView, _p: &Params) -> Result<Vec<(String, Vec<i64>)>> {
        Ok(Vec::new())
    }

    /// Whether `v` needs no instance because its stream passes through unchanged (a transpose
    /// that keeps the element order); an error when the component cannot implement it at all.
    /// Default: never.
    fn passes_through(&self, _v: &NodeView) -> Result<bool> {
        Ok(false)
    }

    /// How many of the node's inputs the instance streams: inputs `0..n` are its `data_in_0..n`;
    /// the inputs after them are constants that [`Binding::overrides`] reads through
    /// [`NodeView::constant_input`] (a gather's index) and that get no stream. An error when the
    /// node's inputs are not what the component implements. Default: every input.
    fn streamed_inputs(&self, v: &NodeView) -> Result<usize> {
        Ok(v.node.inputs.len())
    }

    /// Fraction of one inference of data input `k` that the instance consumes before the data of
    /// its other inputs is needed (a matmul takes a whole `B` sequence before its first `A` row):
    /// the stitcher sizes join FIFOs from it. Default: 0.
    fn input_lead(&self, _v: &NodeView, _k: usize) -> Result<f64> {
        Ok(0.0)
    }
}

/// The divisors of `n` up to `max`, ascending.
pub fn divisors(n: usize, max: usize) -> Vec<usize> {
    (1..=n.min(max)).filter(|d| n.is_multiple_of(*d)).collect()
}

/// `(rows, cols)` of a shape read as a matrix of its last axis.
pub fn rows_cols(shape: &[usize]) -> (usize, usize) {
    let cols = shape.last().copied().unwrap_or(1);
    (shape.iter().product::<usize>() / cols.max(1), cols)
}

/// Overrides under construction: SV parameter name → value, in push order.
#[derive(Debug, Default)]
pub struct Overrides(pub Vec<(String, i64)>);

impl Overrides {
    /// Sets `name` to `value`.
    pub fn set(&mut self, name: impl Into<String>, value: i64) -> &mut Self {
        self.0.push((name.into(), value));
        self
    }

    /// Sets every pair of a typed `instance()` constructor's list.
    pub fn extend<S: Into<String>>(&mut self, v: impl IntoIterator<Item = (S, i64)>) -> &mut Self {
        self.0.extend(v.into_iter().map(|(k, x)| (k.into(), x)));
        self
    }

    /// `<PORT>_PRECISION_0/1` of a format.
    pub fn format(&mut self, port: &str, f: &FixedFormat) -> &mut Self {
        self.set(format!("{port}_PRECISION_0"), f.width as i64)
            .set(format!("{port}_PRECISION_1"), f.frac as i64)
    }

    /// A streamed 2-D tensor port: its format, `TENSOR_SIZE_DIM_0/1` = `(cols, rows)` of `shape`
    /// and `PARALLELISM_DIM_0/1` = `(lanes, 1)`.
    pub fn tensor(&mut self, port: &str, f: &FixedFormat, shape: &[usize], lanes: usize) -> &mut Self {
        let (rows, cols) = rows_cols(shape);
        self.format(port, f)
            .set(format!("{port}_TENSOR_SIZE_DIM_0"), cols as i64)
            .set(format!("{port}_TENSOR_SIZE_DIM_1"), rows as i64)
            .set(format!("{port}_PARALLELISM_DIM_0"), lanes as i64)
            .set(format!("{port}_PARALLELISM_DIM_1"), 1)
    }

    /// The output format with its rounding and overflow modes (`DATA_OUT_0_*`).
    pub fn output(&mut self, f: &FixedFormat) -> &mut Self {
        use crate::components::cast::{overflow_code, rounding_code};
        self.format("DATA_OUT_0", f)
            .set("DATA_OUT_0_ROUNDING", rounding_code(f.rounding))
            .set("DATA_OUT_0_OVERFLOW", overflow_code(f.overflow))
    }

    /// The finished list.
    pub fn done(&mut self) -> Result<Vec<(String, i64)>> {
        Ok(std::mem::take(&mut self.0))
    }
}
