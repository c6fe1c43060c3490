//! The subset of the ONNX protobuf schema the importer reads and the exporter writes, written by
//! hand as `prost` messages. Field numbers are those of `onnx.proto` (ONNX IR version 10); fields
//! neither needs are left out and skipped by the decoder. Proto2 `optional` scalars decode into
//! plain values (absent = default), which is what the importer wants.

/// `ModelProto`: the top-level message of an `.onnx` file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelProto {
    /// IR version of the file format.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// Operator sets the graph uses, one per domain.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Name of the tool that wrote the file.
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// Version of the tool that wrote the file.
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// The main graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
}

/// `OperatorSetIdProto`: a domain and its opset version.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OperatorSetIdProto {
    /// Domain; empty or `ai.onnx` for the default operator set.
    #[prost(string, tag = "1")]
    pub domain: String,
    /// Opset version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `GraphProto`: nodes in topological order, initializers, inputs and outputs.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GraphProto {
    /// Nodes in topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// Graph name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors (weights); may also be listed among the inputs.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Graph inputs.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Graph outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
    /// Types of intermediate values (informational; the importer infers shapes itself).
    #[prost(message, repeated, tag = "13")]
    pub value_info: Vec<ValueInfoProto>,
}

/// `NodeProto`: one operator application.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NodeProto {
    /// Input value names (empty string = optional input left out).
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output value names.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// Node name (may be empty).
    #[prost(string, tag = "3")]
    pub name: String,
    /// Operator type, e.g. `MatMul`.
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// Operator domain; empty or `ai.onnx` for the default set.
    #[prost(string, tag = "7")]
    pub domain: String,
    /// Attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
}

/// `AttributeProto`: a named attribute value of one of several types.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AttributeProto {
    /// Attribute name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Which value field is used (see [`attr_type`]).
    #[prost(int32, tag = "20")]
    pub r#type: i32,
    /// Reference to a function attribute (not supported; detected to give an error).
    #[prost(string, tag = "21")]
    pub ref_attr_name: String,
    /// Float value. With presence, as in `onnx.proto` (proto2): a written 0.0 is on the wire,
    /// as ONNX's own writers put it, rather than dropped as a proto3 default would be.
    #[prost(float, optional, tag = "2")]
    pub f: Option<f32>,
    /// Integer value (with presence, as `f`).
    #[prost(int64, optional, tag = "3")]
    pub i: Option<i64>,
    /// String value (bytes).
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    /// Tensor value.
    #[prost(message, optional, tag = "5")]
    pub t: Option<TensorProto>,
    /// Float list.
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    /// Integer list.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
}

/// Values of `AttributeProto.type`.
pub mod attr_type {
    /// A float.
    pub const FLOAT: i32 = 1;
    /// An integer.
    pub const INT: i32 = 2;
    /// A string.
    pub const STRING: i32 = 3;
    /// A tensor.
    pub const TENSOR: i32 = 4;
    /// A graph.
    pub const GRAPH: i32 = 5;
    /// A list of floats.
    pub const FLOATS: i32 = 6;
    /// A list of integers.
    pub const INTS: i32 = 7;
    /// A list of strings.
    pub const STRINGS: i32 = 8;
}

/// `StringStringEntryProto`: a key/value pair.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringStringEntryProto {
    /// Key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `TensorProto`: a dense tensor (initializer or attribute value).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// Dimensions, outermost first.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// Element type (see [`data_type`]).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// Float elements (FLOAT, COMPLEX64).
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// 32-bit (and narrower) integer elements, and FLOAT16/BOOL bit patterns.
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    /// 64-bit integer elements.
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    /// Tensor name (the value name of an initializer).
    #[prost(string, tag = "8")]
    pub name: String,
    /// Little-endian packed elements; when present it wins over the typed fields.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    /// Double elements.
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// Unsigned 32/64-bit integer elements.
    #[prost(uint64, repeated, tag = "11")]
    pub uint64_data: Vec<u64>,
    /// Where external data lives, when `data_location` is EXTERNAL.
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    /// 0 = DEFAULT (in this message), 1 = EXTERNAL (in another file).
    #[prost(int32, tag = "14")]
    pub data_location: i32,
}

/// Values of `TensorProto.data_type` that the importer reads.
pub mod data_type {
    /// 32-bit float.
    pub const FLOAT: i32 = 1;
    /// Unsigned 8-bit integer.
    pub const UINT8: i32 = 2;
    /// Signed 8-bit integer.
    pub const INT8: i32 = 3;
    /// Signed 16-bit integer.
    pub const INT16: i32 = 5;
    /// Signed 32-bit integer.
    pub const INT32: i32 = 6;
    /// Signed 64-bit integer.
    pub const INT64: i32 = 7;
    /// Boolean.
    pub const BOOL: i32 = 9;
    /// 16-bit IEEE float.
    pub const FLOAT16: i32 = 10;
    /// 64-bit float.
    pub const DOUBLE: i32 = 11;

    /// The ONNX name of a data type number, for error messages.
    pub fn name(t: i32) -> &'static str {
        match t {
            0 => "UNDEFINED",
            1 => "FLOAT",
            2 => "UINT8",
            3 => "INT8",
            4 => "UINT16",
            5 => "INT16",
            6 => "INT32",
            7 => "INT64",
            8 => "STRING",
            9 => "BOOL",
            10 => "FLOAT16",
            11 => "DOUBLE",
            12 => "UINT32",
            13 => "UINT64",
            14 => "COMPLEX64",
            15 => "COMPLEX128",
            16 => "BFLOAT16",
            _ => "an unsupported type",
        }
    }
}

/// `ValueInfoProto`: a named value with its type.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueInfoProto {
    /// Value name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Type (tensor element type and shape).
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// `TypeProto`: only the tensor alternative of the `value` oneof is read.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProto {
    /// The tensor type (absent for sequences, maps and other kinds).
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TypeProtoTensor>,
}

/// `TypeProto.Tensor`: element type and shape.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeProtoTensor {
    /// Element type (see [`data_type`]).
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// Shape; absent means unknown rank.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `TensorShapeProto`: a list of dimensions.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    /// Dimensions, outermost first.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `TensorShapeProto.Dimension`: a fixed size, a symbolic name, or nothing (unknown).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dimension {
    /// The dimension.
    #[prost(oneof = "DimValue", tags = "1, 2")]
    pub value: Option<DimValue>,
}

/// The `value` oneof of [`Dimension`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum DimValue {
    /// A fixed size.
    #[prost(int64, tag = "1")]
    DimValue(i64),
    /// A symbolic (dynamic) size.
    #[prost(string, tag = "2")]
    DimParam(String),
}
