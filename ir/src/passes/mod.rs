//! Analysis and transform passes, one file each, and the registry that lists them.

mod validate;

pub mod add_common_metadata;
pub mod add_software_metadata;
pub mod auto_precision;
pub mod count_ops;
pub mod init_metadata;
pub mod quantize;
mod raise_common;
pub mod raise_embedding;
pub mod raise_gelu;
pub mod raise_layer_norm;
pub mod raise_linear;
pub mod raise_masked_softmax;
pub mod raise_mul_scalar;
pub mod raise_qdq;
pub mod raise_qonnx;
pub mod remove_dropout;
pub mod split_qonnx_quant;

use crate::pass::{FnPass, Pass};

/// Every IR pass, by name ([`crate::pass::PassManager::software`]): its registry name, its line
/// for `mase passes --list` and its function. Adding a pass: one file in this folder with a
/// `pub fn run` and one entry here (hardware passes: `mase_emit::HARDWARE_PASSES`).
pub static REGISTRY: &[&dyn Pass] = &[
    &FnPass {
        name: "validate",
        description: "check invariants: unique names, inputs defined before use (acyclic), one output, weights present, shapes consistent",
        run: validate::run,
    },
    &FnPass {
        name: "init_metadata",
        description: "reset every node's metadata to the empty tree with mase_op/mase_type from its op (input shapes kept)",
        run: init_metadata::run,
    },
    &FnPass {
        name: "add_common_metadata",
        description: "set mase_op/mase_type and propagate shapes and types (args/results) by running the float interpreter on a dummy input",
        run: add_common_metadata::run,
    },
    &FnPass {
        name: "add_software_metadata",
        description: "statistics over calibration inputs (min/max, quantile and n-sigma ranges, online and precise variance)",
        run: add_software_metadata::run,
    },
    &FnPass {
        name: "quantize",
        description: "fixed-point formats from a MASE-style config (by type/name/regex_name, [<key>.config] tables); quantizes weights",
        run: quantize::quantize,
    },
    &FnPass {
        name: "auto_precision",
        description: "pick fixed-point fractions from calibration statistics (min_max, quantile or n_sigma) for a total width; quantizes weights",
        run: auto_precision::run,
    },
    &FnPass {
        name: "remove_dropout",
        description: "transform: remove dropout and identity nodes, rewiring their users to their input",
        run: remove_dropout::run,
    },
    &FnPass {
        name: "count_ops",
        description: "analysis: number of nodes per mase op (and `total`) in the info map",
        run: count_ops::run,
    },
    &FnPass {
        name: "raise_qonnx",
        description: "fixed-point formats from the model's own QONNX Quant nodes (power-of-two scale, zero point 0): weights keep their codes, activation quantizers become result formats",
        run: raise_qonnx::run,
    },
    &FnPass {
        name: "raise_linear",
        description: "MatMul/Gemm by a constant 2-D weight (+ Add of a constant bias over the last dim) -> linear",
        run: raise_linear::run,
    },
    &FnPass {
        name: "split_qonnx_quant",
        description: "QONNX Quant of an activation with one float scale, zero point 0, ROUND, 8 bits -> QuantizeLinear + DequantizeLinear (the same float32 steps)",
        run: split_qonnx_quant::run,
    },
    &FnPass {
        name: "raise_qdq",
        description: "DequantizeLinear -> linear -> [Relu] -> QuantizeLinear with per-tensor activation scales -> qlinear on the codes",
        run: raise_qdq::run,
    },
    &FnPass {
        name: "raise_gelu",
        description: "Erf-form and Tanh-form GELU sub-graphs -> gelu",
        run: raise_gelu::run,
    },
    &FnPass {
        name: "raise_layer_norm",
        description: "decomposed layer norm (ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div [+Mul gamma][+Add beta]) -> layer_norm",
        run: raise_layer_norm::run,
    },
    &FnPass {
        name: "raise_mul_scalar",
        description: "Mul by / Div by a single-element constant -> mul by a scalar",
        run: raise_mul_scalar::run,
    },
    &FnPass {
        name: "raise_embedding",
        description: "Gather on axis 0 of a constant 2-D table at computed indices (token ids) -> embedding",
        run: raise_embedding::run,
    },
    &FnPass {
        name: "raise_masked_softmax",
        description: "softmax(scores + additive mask: Where(keep, 0, -3.4e38) or (1 - keep) * -3.4e38) -> softmax with a boolean mask input",
        run: raise_masked_softmax::run,
    },
];
