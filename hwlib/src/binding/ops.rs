//! The one table from ops to hardware: for every [`OpKind`], whether it is a port of the top, a
//! constant, implicit (the stream passes through) or bound to a component, or not supported.
//! The match has no wildcard arm, so a new op does not compile until it is placed here.

use mase_ir::op::OpKind;

use super::Binding;
use crate::components::{
    add, embedding, gelu, layer_norm, linear, matmul, mul, qlinear, relu, row_select, softmax, sub, tanh,
    transpose,
};

/// What the hardware does with an op.
#[derive(Clone, Copy)]
pub enum OpRole {
    /// A graph input: a stream port of the top.
    Input,
    /// The graph output node: its producers drive output ports of the top.
    Output,
    /// A constant that only feeds weights (not streamed).
    Constant,
    /// No hardware: the stream of its (single) data input passes through.
    Implicit,
    /// Implemented by this component, with the scope of what it implements for messages.
    Bound(&'static dyn Binding, &'static str),
    /// No component implements it.
    Unsupported,
}

/// The hardware role of ops of kind `kind`.
pub fn op_role(kind: OpKind) -> OpRole {
    use OpRole::*;
    match kind {
        OpKind::Placeholder => Input,
        OpKind::Output => Output,
        OpKind::Constant => Constant,
        OpKind::Reshape
        | OpKind::Flatten
        | OpKind::Squeeze
        | OpKind::Unsqueeze
        | OpKind::Identity
        | OpKind::Dropout => Implicit,
        OpKind::Linear => Bound(&linear::Linear, ""),
        OpKind::Qlinear => Bound(&qlinear::Qlinear, "symmetric weights, per-tensor activation scales"),
        OpKind::Matmul => Bound(&matmul::Matmul, ""),
        OpKind::Relu => Bound(&relu::Relu, ""),
        OpKind::Gelu => Bound(&gelu::Gelu, "erf and tanh forms"),
        OpKind::Tanh => Bound(&tanh::Tanh, ""),
        OpKind::Softmax => Bound(&softmax::Softmax, "last axis"),
        OpKind::LayerNorm => Bound(&layer_norm::LayerNorm, "last axis"),
        OpKind::Add => Bound(&add::Add, "same shapes, or plus a constant over leading axes: add_table"),
        OpKind::Sub => Bound(&sub::Sub, "same shapes"),
        OpKind::MulScalar => Bound(&mul::Mul, "by a scalar"),
        OpKind::Transpose => {
            Bound(&transpose::Transpose, "block reorders such as head split/merge and 2-D transposes")
        }
        OpKind::Gather => {
            Bound(&row_select::RowSelect, "a gather of one constant index on an axis before the last")
        }
        OpKind::Embedding => {
            Bound(&embedding::Embedding, "a [rows, dim] table quantized per tensor, unsigned indices")
        }
        OpKind::Mul
        | OpKind::Div
        | OpKind::Pow
        | OpKind::Sqrt
        | OpKind::Erf
        | OpKind::ReduceMean
        | OpKind::Concat
        | OpKind::Slice
        | OpKind::GatherNd
        | OpKind::Compare
        | OpKind::Logic
        | OpKind::Not
        | OpKind::Where
        | OpKind::Max
        | OpKind::Min
        | OpKind::ReduceSum
        | OpKind::Expand
        | OpKind::Range
        | OpKind::ConstantOfShape
        | OpKind::Cast
        | OpKind::Shape
        // Quantizers run on the host (power-of-two QONNX ones become formats, `raise_qonnx`; the
        // QDQ pairs around a linear become a `qlinear`, `raise_qdq`).
        | OpKind::Quant
        | OpKind::BipolarQuant
        | OpKind::Trunc
        | OpKind::QuantizeLinear
        | OpKind::DequantizeLinear => Unsupported,
    }
}

/// What the hardware flow maps, for error messages: the bound ops with their scope, then the
/// implicit ones (derived from [`op_role`]).
pub fn supported_ops() -> String {
    let mut bound = Vec::new();
    let mut implicit = Vec::new();
    for &k in OpKind::ALL {
        match op_role(k) {
            OpRole::Bound(_, "") => bound.push(k.mase_op().to_string()),
            OpRole::Bound(_, scope) => bound.push(format!("{} ({scope})", k.mase_op())),
            OpRole::Implicit => implicit.push(k.mase_op()),
            OpRole::Input | OpRole::Output | OpRole::Constant | OpRole::Unsupported => {}
        }
    }
    format!("{}, and the implicit {}", bound.join(", "), implicit.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ops bound to a component of another name (the component does less than the op).
    const RENAMED: &[(OpKind, &str)] = &[(OpKind::Gather, "row_select")];

    #[test]
    fn every_bound_component_is_registered_under_its_ops_name() {
        for &k in OpKind::ALL {
            if let OpRole::Bound(b, _) = op_role(k) {
                let want = RENAMED.iter().find(|(o, _)| *o == k).map_or(k.mase_op(), |(_, n)| n);
                assert_eq!(b.name(), want, "{k:?}");
                assert!(crate::lookup(b.name()).is_ok(), "{} is not in the registry", b.name());
            }
        }
        assert!(supported_ops().contains("softmax (last axis)"), "{}", supported_ops());
    }
}
