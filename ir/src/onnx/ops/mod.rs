//! The ONNX op registry: one file per op family, each holding the attribute parsing and input
//! checks of its ONNX op types and the MASE ops they become. The float semantics (evaluation,
//! and with it shape inference and constant folding) are the interpreter's kernels
//! ([`crate::interp::eval_op`]), so no op is implemented twice.
//!
//! Adding an ONNX op type: a function `fn(&mut Importer, &OnnxNode) -> Result<Vec<Val>>` in the
//! family file (a new file for a new family) and one [`OnnxOp`] line in that file's `OPS`; a new
//! family file is one more line in [`FAMILIES`]. When the op needs a MASE op that does not exist
//! yet, see `docs/ARCHITECTURE.md` ("An op").

mod constant;
mod index;
mod linalg;
mod logic;
mod math;
mod movement;
mod nn;
mod quant;
mod reduce;

use super::attributes::Attrs;
use super::{Ctx, Importer, Val};
use crate::error::Result;
use crate::tensor::Tensor;

/// One ONNX op type the importer takes.
pub(super) struct OnnxOp {
    /// The ONNX op type, e.g. `MatMul`.
    pub name: &'static str,
    /// The most inputs it takes (ONNX's optional inputs included).
    pub max_inputs: usize,
    /// Converts a node of this type into MASE ops or a folded constant; returns its outputs.
    pub convert: fn(&mut Importer, &OnnxNode) -> Result<Vec<Val>>,
}

/// Every family's ops.
const FAMILIES: &[&[OnnxOp]] = &[
    constant::OPS,
    index::OPS,
    linalg::OPS,
    logic::OPS,
    math::OPS,
    movement::OPS,
    nn::OPS,
    quant::OPS,
    reduce::OPS,
];

pub use quant::QONNX_DOMAINS;

/// The ONNX op types the importer supports, sorted.
pub fn supported_ops() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = FAMILIES.iter().flat_map(|f| f.iter().map(|o| o.name)).collect();
    v.sort_unstable();
    v
}

/// The QONNX op types the importer supports (in the domains [`QONNX_DOMAINS`]).
pub fn supported_qonnx_ops() -> Vec<&'static str> {
    quant::QONNX_OPS.iter().map(|o| o.name).collect()
}

/// The registry entry of `op_type` in the default domain.
pub(super) fn lookup(op_type: &str) -> Option<&'static OnnxOp> {
    FAMILIES.iter().flat_map(|f| f.iter()).find(|o| o.name == op_type)
}

/// The registry entry of `op_type` in a QONNX domain.
pub(super) fn lookup_qonnx(op_type: &str) -> Option<&'static OnnxOp> {
    quant::QONNX_OPS.iter().find(|o| o.name == op_type)
}

/// One ONNX node being converted: where it is (for errors), its attributes, its inputs (`None`
/// for an empty optional input name) and the base name of the graph nodes it makes.
pub(super) struct OnnxNode<'a> {
    /// Error context.
    pub ctx: &'a Ctx<'a>,
    /// Node name the graph nodes it makes derive from.
    pub base: &'a str,
    /// Its attributes.
    pub at: &'a Attrs<'a>,
    /// Its inputs.
    pub ins: &'a [Option<Val>],
    /// Its input value names, as in the model (empty for an omitted optional input).
    pub names: &'a [String],
    /// Its output value names.
    pub outs: &'a [String],
    /// Its domain (`""` for the default one).
    pub domain: &'a str,
}

impl OnnxNode<'_> {
    /// Exactly `n` inputs, all present.
    pub fn inputs(&self, n: usize) -> Result<Vec<Val>> {
        if self.ins.len() != n {
            return Err(self.ctx.err(format!("expects {n} input(s), got {}", self.ins.len())));
        }
        self.ins
            .iter()
            .enumerate()
            .map(|(i, v)| v.clone().ok_or_else(|| self.ctx.err(format!("input {i} is required but empty"))))
            .collect()
    }

    /// The first input, required (further optional inputs are read with [`Self::opt`]).
    pub fn first(&self) -> Result<Val> {
        self.ins.first().cloned().flatten().ok_or_else(|| self.ctx.err("input 0 is required"))
    }

    /// Optional input `i`.
    pub fn opt(&self, i: usize) -> Option<Val> {
        self.ins.get(i).cloned().flatten()
    }

    /// Input `i` as a constant integer list (shape, axes, starts…), when given.
    pub fn opt_ints(&self, i: usize, what: &str) -> Result<Option<Vec<i64>>> {
        self.opt(i).map(|v| const_ints(self.ctx, &v, what)).transpose()
    }
}

/// A constant integer list (shape, axes, starts…).
pub(super) fn const_ints(ctx: &Ctx, v: &Val, what: &str) -> Result<Vec<i64>> {
    let t = v.known().ok_or_else(|| {
        ctx.err(format!(
            "the '{what}' input must be a constant or fold to one; it is computed from the model's inputs at \
             run time, which is not supported (are all input shapes fixed with --input-shape?)"
        ))
    })?;
    match t.int_values() {
        Some(a) if a.ndim() <= 1 => Ok(a.iter().copied().collect()),
        _ => Err(ctx.err(format!(
            "the '{what}' input must be a 1-D integer tensor, got {} {:?}",
            t.dtype().name(),
            t.shape()
        ))),
    }
}

/// A constant single-element value, as f64.
pub(super) fn const_scalar(ctx: &Ctx, v: &Val, what: &str) -> Result<f64> {
    let t = v.known().ok_or_else(|| ctx.err(format!("the '{what}' input must be a constant")))?;
    if t.len() != 1 {
        return Err(
            ctx.err(format!("the '{what}' input must have one element, it has shape {:?}", t.shape()))
        );
    }
    Ok(t.to_f64().iter().next().copied().unwrap_or(0.0))
}

/// A scalar f32 constant value.
pub(super) fn f32_scalar(v: f32) -> Tensor {
    Tensor::F32(ndarray::arr0(v).into_dyn())
}
