//! Parameter overrides by port aspect, for writing the components' [`Component::test_params`]
//! one instance per line: `[input(2, 0), row(7, 1), output(3, 1), modes(2, 0)].concat()` sets
//! `DATA_IN_0_PRECISION_0/1`, `DATA_IN_0_TENSOR_SIZE_DIM_0` / `PARALLELISM_DIM_0`,
//! `DATA_OUT_0_PRECISION_0/1` and `DATA_OUT_0_ROUNDING/OVERFLOW`.
//!
//! [`Component::test_params`]: crate::Component::test_params

/// Parameter overrides: SV parameter name → value.
pub type Overrides = Vec<(&'static str, i64)>;

/// Declares, per port, the function overriding its format `PORT_PRECISION_0/1`.
macro_rules! format_overrides {
    ($($f:ident = $port:literal),* $(,)?) => {$(
        #[doc = concat!("`", $port, "_PRECISION_0 = bits`, `", $port, "_PRECISION_1 = frac`.")]
        pub fn $f(bits: i64, frac: i64) -> Overrides {
            vec![(concat!($port, "_PRECISION_0"), bits), (concat!($port, "_PRECISION_1"), frac)]
        }
    )*};
}

format_overrides!(
    input = "DATA_IN_0",
    input_1 = "DATA_IN_1",
    output = "DATA_OUT_0",
    weight = "WEIGHT",
    bias = "BIAS",
    constant = "CONST",
);

/// The four formats of a layer with weights and bias (`linear`, `layer_norm`): [`input`],
/// [`weight`], [`bias`] and [`output`], each `(bits, frac)`.
pub fn layer_formats(
    input: (i64, i64),
    weight: (i64, i64),
    bias: (i64, i64),
    output: (i64, i64),
) -> Overrides {
    [
        self::input(input.0, input.1),
        self::weight(weight.0, weight.1),
        self::bias(bias.0, bias.1),
        self::output(output.0, output.1),
    ]
    .concat()
}

/// `DATA_IN_0_TENSOR_SIZE_DIM_0 = len` (elements per row), `DATA_IN_0_PARALLELISM_DIM_0 = lanes`.
pub fn row(len: i64, lanes: i64) -> Overrides {
    vec![("DATA_IN_0_TENSOR_SIZE_DIM_0", len), ("DATA_IN_0_PARALLELISM_DIM_0", lanes)]
}

/// `DATA_IN_0_TENSOR_SIZE_DIM_1 = rows`, `DATA_IN_0_PARALLELISM_DIM_1 = per_beat` (rows per
/// beat of a 2-D block stream).
pub fn rows(rows: i64, per_beat: i64) -> Overrides {
    vec![("DATA_IN_0_TENSOR_SIZE_DIM_1", rows), ("DATA_IN_0_PARALLELISM_DIM_1", per_beat)]
}

/// `DATA_OUT_0_ROUNDING = rounding`, `DATA_OUT_0_OVERFLOW = overflow` (codes as
/// [`crate::components::cast::rounding_code`] / [`crate::components::cast::overflow_code`]).
pub fn modes(rounding: i64, overflow: i64) -> Overrides {
    vec![("DATA_OUT_0_ROUNDING", rounding), ("DATA_OUT_0_OVERFLOW", overflow)]
}
