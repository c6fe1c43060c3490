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
        /// Softmax along one axis.
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
    /// The MASE op name (`common.mase_op`), e.g. `linear`, `layer_norm`.
    pub fn mase_op(self) -> &'static str {
        match self {
            OpKind::Placeholder => "placeholder",
            OpKind::Output => "output",
            OpKind::Constant => "constant",
            OpKind::Linear => "linear",
            OpKind::Matmul => "matmul",
            OpKind::Relu => "relu",
            OpKind::Gelu => "gelu",
            OpKind::Softmax => "softmax",
            OpKind::LayerNorm => "layer_norm",
            OpKind::Add => "add",
            OpKind::Sub => "sub",
            OpKind::Mul | OpKind::MulScalar => "mul",
            OpKind::Div => "div",
            OpKind::Pow => "pow",
            OpKind::Sqrt => "sqrt",
            OpKind::Erf => "erf",
            OpKind::Tanh => "tanh",
            OpKind::ReduceMean => "mean",
            OpKind::Reshape => "reshape",
            OpKind::Transpose => "transpose",
            OpKind::Flatten => "flatten",
            OpKind::Dropout => "dropout",
            OpKind::Identity => "identity",
            OpKind::Unsqueeze => "unsqueeze",
            OpKind::Squeeze => "squeeze",
            OpKind::Concat => "cat",
            OpKind::Slice => "slice",
            OpKind::Gather => "gather",
            OpKind::Embedding => "embedding",
            OpKind::GatherNd => "gather_nd",
            OpKind::Compare => "compare",
            OpKind::Logic => "logical",
            OpKind::Not => "not",
            OpKind::Where => "where",
            OpKind::Max => "max",
            OpKind::Min => "min",
            OpKind::ReduceSum => "sum",
            OpKind::Expand => "expand",
            OpKind::Range => "range",
            OpKind::ConstantOfShape => "constant_of_shape",
            OpKind::Cast => "cast",
            OpKind::Shape => "shape",
        }
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
        match self.kind() {
            OpKind::Placeholder => NodeKind::Placeholder,
            OpKind::Output => NodeKind::Output,
            OpKind::Constant => NodeKind::GetAttr,
            OpKind::Linear | OpKind::LayerNorm | OpKind::Embedding => NodeKind::CallModule,
            OpKind::Reshape
            | OpKind::Expand
            | OpKind::Transpose
            | OpKind::Flatten
            | OpKind::Unsqueeze
            | OpKind::Squeeze
            | OpKind::Cast
            | OpKind::Shape => NodeKind::CallMethod,
            OpKind::Matmul
            | OpKind::Relu
            | OpKind::Gelu
            | OpKind::Softmax
            | OpKind::Add
            | OpKind::Sub
            | OpKind::Mul
            | OpKind::Div
            | OpKind::Pow
            | OpKind::MulScalar
            | OpKind::Sqrt
            | OpKind::Erf
            | OpKind::Tanh
            | OpKind::ReduceMean
            | OpKind::Dropout
            | OpKind::Identity
            | OpKind::Concat
            | OpKind::Slice
            | OpKind::Gather
            | OpKind::GatherNd
            | OpKind::Compare
            | OpKind::Logic
            | OpKind::Not
            | OpKind::Where
            | OpKind::Max
            | OpKind::Min
            | OpKind::ReduceSum
            | OpKind::Range
            | OpKind::ConstantOfShape => NodeKind::CallFunction,
        }
    }

    /// The MASE type (`common.mase_type`) of a node with this op.
    pub fn mase_type(&self) -> MaseType {
        match self.kind() {
            OpKind::Placeholder => MaseType::Placeholder,
            OpKind::Output => MaseType::Output,
            OpKind::Constant => MaseType::GetAttr,
            OpKind::Linear | OpKind::LayerNorm | OpKind::Embedding => MaseType::Module,
            OpKind::Relu | OpKind::Gelu | OpKind::Softmax | OpKind::Dropout => MaseType::ModuleRelatedFunc,
            OpKind::Reshape
            | OpKind::Transpose
            | OpKind::Flatten
            | OpKind::Identity
            | OpKind::Unsqueeze
            | OpKind::Squeeze
            | OpKind::Concat
            | OpKind::Slice
            | OpKind::Gather
            | OpKind::GatherNd
            | OpKind::Expand
            | OpKind::Cast
            | OpKind::Shape => MaseType::ImplicitFunc,
            OpKind::Matmul
            | OpKind::Add
            | OpKind::Sub
            | OpKind::Mul
            | OpKind::Div
            | OpKind::Pow
            | OpKind::MulScalar
            | OpKind::Sqrt
            | OpKind::Erf
            | OpKind::Tanh
            | OpKind::ReduceMean
            | OpKind::ReduceSum
            | OpKind::Compare
            | OpKind::Logic
            | OpKind::Not
            | OpKind::Where
            | OpKind::Max
            | OpKind::Min
            | OpKind::Range
            | OpKind::ConstantOfShape => MaseType::BuiltinFunc,
        }
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
            Op::LayerNorm { weight: None, bias: None, .. }
            | Op::Placeholder
            | Op::Output
            | Op::Matmul
            | Op::Relu
            | Op::Gelu { .. }
            | Op::Softmax { .. }
            | Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Pow
            | Op::MulScalar { .. }
            | Op::Sqrt
            | Op::Erf
            | Op::Tanh
            | Op::ReduceMean { .. }
            | Op::Reshape { .. }
            | Op::Transpose { .. }
            | Op::Flatten { .. }
            | Op::Dropout { .. }
            | Op::Identity
            | Op::Unsqueeze { .. }
            | Op::Squeeze { .. }
            | Op::Concat { .. }
            | Op::Slice { .. }
            | Op::Cast { .. }
            | Op::Shape { .. }
            | Op::Gather { .. }
            | Op::GatherNd { .. }
            | Op::Compare { .. }
            | Op::Logic { .. }
            | Op::Not
            | Op::Where
            | Op::Max
            | Op::Min
            | Op::ReduceSum { .. }
            | Op::Expand { .. }
            | Op::Range
            | Op::ConstantOfShape { .. } => vec![],
        }
    }
}
