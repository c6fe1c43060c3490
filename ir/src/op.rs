//! The closed set of operations a MaseGraph node can compute.
//!
//! Adding an op means adding a variant here; the compiler then points at every `match` that
//! must handle it (interpreter, shape rules, metadata, emitter). Attributes are typed fields of
//! the variant; tensors an op owns (linear weights, layer-norm affine parameters, constants) are
//! named entries of [`crate::MaseGraph::weights`].
//!
//! Axis attributes follow ONNX: negative values count from the last dimension.

use serde::{Deserialize, Serialize};

use crate::graph::NodeKind;
use crate::metadata::MaseType;
use crate::tensor::DType;

/// Which GELU formula a `gelu` node computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GeluApprox {
    /// x/2 · (1 + erf(x/√2)).
    #[default]
    None,
    /// x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))).
    Tanh,
}

/// An element-wise comparison (ONNX `Equal`, `Less`, `LessOrEqual`, `Greater`,
/// `GreaterOrEqual`): inputs of one element type, boolean result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    /// a == b.
    Equal,
    /// a < b.
    Less,
    /// a <= b.
    LessOrEqual,
    /// a > b.
    Greater,
    /// a >= b.
    GreaterOrEqual,
}

/// An element-wise boolean connective (ONNX `And`, `Or`, `Xor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogicOp {
    /// a ∧ b.
    And,
    /// a ∨ b.
    Or,
    /// a ⊕ b.
    Xor,
}

/// Defines [`Op`] as written and, from the same variant list, [`OpKind`] (the variant without its
/// attributes), [`OpKind::ALL`] and [`Op::kind`]: lists of ops elsewhere (e.g. the mase op names a
/// quantization config may use) derive from here instead of being kept by hand.
macro_rules! op_enum {
    (
        $(#[$em:meta])*
        pub enum Op {
            $(
                $(#[$vm:meta])*
                $v:ident $({ $($fields:tt)* })?
            ),* $(,)?
        }
    ) => {
        $(#[$em])*
        pub enum Op {
            $( $(#[$vm])* $v $({ $($fields)* })? ),*
        }

        /// The variant of an [`Op`] without its attributes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $( #[doc = concat!("[`Op::", stringify!($v), "`].")] $v ),*
        }

        impl OpKind {
            /// Every variant of [`Op`], in declaration order.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$v),*];
        }

        impl Op {
            /// The variant of this op.
            pub fn kind(&self) -> OpKind {
                match self {
                    $( Op::$v { .. } => OpKind::$v ),*
                }
            }
        }
    };
}

op_enum! {
    /// One operation with its typed attributes. Serialized with the mase op name as tag `op`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "op", rename_all = "snake_case")]
    pub enum Op {
        /// A graph input; its shape is in the node's `common.results` metadata.
        Placeholder,
        /// The graph output; its inputs are the values the graph returns.
        Output,
        /// Reads the named entry of the graph's weights (a torch.fx `get_attr`).
        Constant {
            /// Key in [`crate::MaseGraph::weights`].
            tensor: String,
        },
        /// y = x · Wᵀ + b over the innermost dimension; W is `[out, in]`, b is `[out]`.
        Linear {
            /// Key of the `[out, in]` weight.
            weight: String,
            /// Key of the `[out]` bias, if any.
            bias: Option<String>,
        },
        /// Matrix product of two activations with numpy broadcasting of batch dimensions.
        Matmul,
        /// max(x, 0).
        Relu,
        /// Gaussian error linear unit.
        Gelu {
            /// The formula.
            approximate: GeluApprox,
        },
        /// Softmax along one axis. An optional second input is a boolean keep mask that
        /// broadcasts to the first (an attention mask, raised by `raise_masked_softmax`):
        /// masked positions output exactly 0 and take no part in the maximum or the sum.
        Softmax {
            /// The axis.
            axis: i64,
        },
        /// Layer normalization over the dimensions from `axis` to the last.
        LayerNorm {
            /// First normalized axis.
            axis: i64,
            /// Added to the variance before the square root.
            epsilon: f32,
            /// Key of the scale (gamma), if any.
            weight: Option<String>,
            /// Key of the shift (beta), if any.
            bias: Option<String>,
        },
        /// Element-wise sum with broadcasting.
        Add,
        /// Element-wise difference with broadcasting.
        Sub,
        /// Element-wise product of two tensors with broadcasting.
        Mul,
        /// Element-wise quotient with broadcasting.
        Div,
        /// Element-wise power with broadcasting.
        Pow,
        /// Multiplication by a scalar constant (raised from Mul/Div by a constant).
        MulScalar {
            /// The factor.
            scalar: f32,
        },
        /// Element-wise square root.
        Sqrt,
        /// Element-wise error function.
        Erf,
        /// Element-wise hyperbolic tangent.
        Tanh,
        /// Mean over the given axes.
        ReduceMean {
            /// Reduced axes (empty = all).
            axes: Vec<i64>,
            /// Keep reduced axes as size 1.
            keepdims: bool,
        },
        /// Reshape with ONNX semantics (0 copies a dimension unless `allowzero`, -1 is inferred).
        Reshape {
            /// The target shape.
            shape: Vec<i64>,
        },
        /// Permutes dimensions.
        Transpose {
            /// The permutation.
            perm: Vec<usize>,
        },
        /// Flattens to 2-D at `axis`.
        Flatten {
            /// Dimensions before `axis` form the first output dimension.
            axis: i64,
        },
        /// Identity at inference (kept until `remove_dropout` removes it).
        Dropout {
            /// Training-time drop probability.
            ratio: f32,
        },
        /// Passes its input through.
        Identity,
        /// Inserts size-1 dimensions.
        Unsqueeze {
            /// Positions in the output.
            axes: Vec<i64>,
        },
        /// Removes size-1 dimensions.
        Squeeze {
            /// Axes to remove (empty = all of size 1).
            axes: Vec<i64>,
        },
        /// Concatenates its inputs along an axis.
        Concat {
            /// The axis.
            axis: i64,
        },
        /// Takes a strided slice.
        Slice {
            /// Start per sliced axis.
            starts: Vec<i64>,
            /// End (exclusive) per sliced axis.
            ends: Vec<i64>,
            /// The sliced axes.
            axes: Vec<i64>,
            /// Step per sliced axis.
            steps: Vec<i64>,
        },
        /// Gathers input 0 along `axis` at the integer indices of input 1 (ONNX Gather; negative
        /// indices count from the end).
        Gather {
            /// The axis.
            axis: i64,
        },
        /// Looks up rows of a table at the integer indices of its input (a Gather on axis 0 of a
        /// constant 2-D table, raised by `raise_embedding`): `[..., n] → [..., n, dim]`.
        Embedding {
            /// Key of the `[rows, dim]` table.
            table: String,
        },
        /// ONNX GatherND: slices of input 0 at the index tuples of input 1.
        GatherNd {
            /// Leading dimensions shared by data and indices.
            batch_dims: i64,
        },
        /// Element-wise comparison with broadcasting; boolean result.
        Compare {
            /// The comparison.
            cmp: CmpOp,
        },
        /// Element-wise boolean connective with broadcasting.
        Logic {
            /// The connective.
            logic: LogicOp,
        },
        /// Element-wise boolean negation.
        Not,
        /// Element-wise choice: input 1 where input 0 is true, else input 2 (broadcasting).
        Where,
        /// Element-wise maximum of any number of inputs with broadcasting.
        Max,
        /// Element-wise minimum of any number of inputs with broadcasting.
        Min,
        /// Sum over the given axes.
        ReduceSum {
            /// Reduced axes (empty = all).
            axes: Vec<i64>,
            /// Keep reduced axes as size 1.
            keepdims: bool,
        },
        /// Broadcasts the input to a shape (ONNX Expand: the shape and the input's shape
        /// broadcast together).
        Expand {
            /// The target shape.
            shape: Vec<i64>,
        },
        /// The 1-D sequence start, start + delta, … below limit (inputs: start, limit, delta).
        Range,
        /// A tensor of the shape given by its 1-D integer input, filled with one value.
        ConstantOfShape {
            /// The fill value.
            value: f64,
            /// Its element type.
            dtype: DType,
        },
        /// Converts the element type.
        Cast {
            /// Target element type.
            to: DType,
        },
        /// The shape of the input as a 1-D i64 tensor (dimensions `start..end`).
        Shape {
            /// First dimension.
            start: i64,
            /// One past the last dimension (`None` = rank).
            end: Option<i64>,
        },
    }
}

impl OpKind {
    /// The fixed facts of an op kind: its MASE name (`common.mase_op`), the torch.fx node kind
    /// and the MASE type (`common.mase_type`) of a node with it. One line per op, so a new op is
    /// one line here.
    fn facts(self) -> (&'static str, NodeKind, MaseType) {
        use MaseType::{BuiltinFunc as B, ImplicitFunc as I, Module as M, ModuleRelatedFunc as R};
        use NodeKind::{CallFunction as F, CallMethod as Me, CallModule as Mo};
        match self {
            OpKind::Placeholder => ("placeholder", NodeKind::Placeholder, MaseType::Placeholder),
            OpKind::Output => ("output", NodeKind::Output, MaseType::Output),
            OpKind::Constant => ("constant", NodeKind::GetAttr, MaseType::GetAttr),
            OpKind::Linear => ("linear", Mo, M),
            OpKind::Matmul => ("matmul", F, B),
            OpKind::Relu => ("relu", F, R),
            OpKind::Gelu => ("gelu", F, R),
            OpKind::Softmax => ("softmax", F, R),
            OpKind::LayerNorm => ("layer_norm", Mo, M),
            OpKind::Add => ("add", F, B),
            OpKind::Sub => ("sub", F, B),
            OpKind::Mul | OpKind::MulScalar => ("mul", F, B),
            OpKind::Div => ("div", F, B),
            OpKind::Pow => ("pow", F, B),
            OpKind::Sqrt => ("sqrt", F, B),
            OpKind::Erf => ("erf", F, B),
            OpKind::Tanh => ("tanh", F, B),
            OpKind::ReduceMean => ("mean", F, B),
            OpKind::Reshape => ("reshape", Me, I),
            OpKind::Transpose => ("transpose", Me, I),
            OpKind::Flatten => ("flatten", Me, I),
            OpKind::Dropout => ("dropout", F, R),
            OpKind::Identity => ("identity", F, I),
            OpKind::Unsqueeze => ("unsqueeze", Me, I),
            OpKind::Squeeze => ("squeeze", Me, I),
            OpKind::Concat => ("cat", F, I),
            OpKind::Slice => ("slice", F, I),
            OpKind::Gather => ("gather", F, I),
            OpKind::Embedding => ("embedding", Mo, M),
            OpKind::GatherNd => ("gather_nd", F, I),
            OpKind::Compare => ("compare", F, B),
            OpKind::Logic => ("logical", F, B),
            OpKind::Not => ("not", F, B),
            OpKind::Where => ("where", F, B),
            OpKind::Max => ("max", F, B),
            OpKind::Min => ("min", F, B),
            OpKind::ReduceSum => ("sum", F, B),
            OpKind::Expand => ("expand", Me, I),
            OpKind::Range => ("range", F, B),
            OpKind::ConstantOfShape => ("constant_of_shape", F, B),
            OpKind::Cast => ("cast", Me, I),
            OpKind::Shape => ("shape", Me, I),
        }
    }

    /// The MASE op name (`common.mase_op`), e.g. `linear`, `layer_norm`.
    pub fn mase_op(self) -> &'static str {
        self.facts().0
    }

    /// Every distinct MASE op name, in [`Op`] declaration order (`mul` once: it names both
    /// [`Op::Mul`] and [`Op::MulScalar`]).
    pub fn mase_ops() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = Vec::new();
        for k in OpKind::ALL {
            if !v.contains(&k.mase_op()) {
                v.push(k.mase_op());
            }
        }
        v
    }
}

impl Op {
    /// The MASE op name (`common.mase_op`), e.g. `linear`, `layer_norm`.
    pub fn mase_op(&self) -> &'static str {
        self.kind().mase_op()
    }

    /// The torch.fx node kind a node with this op has.
    pub fn node_kind(&self) -> NodeKind {
        self.kind().facts().1
    }

    /// The MASE type (`common.mase_type`) of a node with this op.
    pub fn mase_type(&self) -> MaseType {
        self.kind().facts().2
    }

    /// Names of the weights this op owns (keys of [`crate::MaseGraph::weights`]), in the order
    /// MASE names its parameters (`weight`, then `bias`).
    pub fn weight_names(&self) -> Vec<(&'static str, &str)> {
        match self {
            Op::Constant { tensor } => vec![("value", tensor.as_str())],
            Op::Linear { weight, bias } | Op::LayerNorm { weight: Some(weight), bias, .. } => {
                let mut v = vec![("weight", weight.as_str())];
                if let Some(b) = bias {
                    v.push(("bias", b.as_str()));
                }
                v
            }
            Op::LayerNorm { weight: None, bias: Some(b), .. } => vec![("bias", b.as_str())],
            Op::Embedding { table } => vec![("weight", table.as_str())],
            // Every other op owns no tensor: ops name their weights in fields, matched above.
            _ => vec![],
        }
    }
}
