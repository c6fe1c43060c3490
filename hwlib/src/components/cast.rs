//! `cast`: element-wise fixed-point format conversion of a stream (`rtl/mase_cast.sv`), any
//! signed/unsigned format into any other with every ap_fixed rounding and overflow mode,
//! bit-identical to [`mase_ir::fixed::cast_code`] (the model calls it; the RTL's
//! `mase_cast_core` implements the same two steps in gates).
//!
//! The mode parameters are integer codes, shared by every component with an output cast
//! (`cast`, `add`, `linear`): [`rounding_code`] / [`rounding_from_code`] and [`overflow_code`] /
//! [`overflow_from_code`] give the mapping (the declaration order of [`Rounding::ALL`] and
//! [`Overflow::ALL`]).

use mase_ir::fixed::{cast_code, FixedFormat, Overflow, Rounding};

use crate::component::{Component, Cost, Direction, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::{check_block_shape, check_equal, check_range, param};

/// The cast component.
pub struct Cast;

/// Largest fractional bit magnitude a format parameter may take (as `FixedFormat::validate`).
pub const MAX_FRAC: i64 = mase_ir::fixed::MAX_FRAC_MAGNITUDE as i64;

/// SV code of a rounding mode: its index in [`Rounding::ALL`] (TRN = 0 … RND_CONV = 6).
pub fn rounding_code(r: Rounding) -> i64 {
    Rounding::ALL.iter().position(|&m| m == r).unwrap_or(0) as i64
}

/// The rounding mode of SV code `c` (see [`rounding_code`]); `None` outside 0..=6.
pub fn rounding_from_code(c: i64) -> Option<Rounding> {
    usize::try_from(c).ok().and_then(|i| Rounding::ALL.get(i).copied())
}

/// SV code of an overflow mode: its index in [`Overflow::ALL`] (WRAP = 0, SAT = 1, SAT_ZERO = 2,
/// SAT_SYM = 3).
pub fn overflow_code(o: Overflow) -> i64 {
    Overflow::ALL.iter().position(|&m| m == o).unwrap_or(0) as i64
}

/// The overflow mode of SV code `c` (see [`overflow_code`]); `None` outside 0..=3.
pub fn overflow_from_code(c: i64) -> Option<Overflow> {
    usize::try_from(c).ok().and_then(|i| Overflow::ALL.get(i).copied())
}

/// Checks `<prefix>_ROUNDING` and `<prefix>_OVERFLOW` (messages as the RTL prints them).
pub fn check_modes(p: &Params, prefix: &str) -> Result<(), String> {
    check_range(p, &format!("{prefix}_ROUNDING"), 0, Rounding::ALL.len() as i64 - 1)?;
    check_range(p, &format!("{prefix}_OVERFLOW"), 0, Overflow::ALL.len() as i64 - 1)
}

/// The output format named by `<prefix>_PRECISION_0/1` and `<prefix>_ROUNDING/OVERFLOW` (the
/// parameters must have passed [`check_modes`]).
pub fn output_format(p: &Params, prefix: &str, signed: bool) -> FixedFormat {
    FixedFormat {
        signed,
        width: param(p, &format!("{prefix}_PRECISION_0")) as u32,
        frac: param(p, &format!("{prefix}_PRECISION_1")) as i32,
        rounding: rounding_from_code(param(p, &format!("{prefix}_ROUNDING"))).unwrap_or_default(),
        overflow: overflow_from_code(param(p, &format!("{prefix}_OVERFLOW"))).unwrap_or_default(),
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::value("DATA_IN_0_PRECISION_0", 16, "input total bits (1..64 signed, 1..63 unsigned)"),
    ParamSpec::value("DATA_IN_0_PRECISION_1", 8, "input fractional bits (-2^24..2^24)"),
    ParamSpec::value("DATA_IN_0_SIGNED", 1, "1: input is two's complement, 0: unsigned"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_0", 8, "tensor size along dim 0 (elements per row)"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_1", 1, "tensor size along dim 1 (rows)"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_0", 4, "elements of dim 0 per beat"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_1", 1, "rows per beat"),
    ParamSpec::value("DATA_OUT_0_PRECISION_0", 8, "output total bits (1..64 signed, 1..63 unsigned)"),
    ParamSpec::value("DATA_OUT_0_PRECISION_1", 4, "output fractional bits (-2^24..2^24)"),
    ParamSpec::value("DATA_OUT_0_SIGNED", 1, "1: output is two's complement, 0: unsigned"),
    ParamSpec::same_as(
        "DATA_OUT_0_TENSOR_SIZE_DIM_0",
        "DATA_IN_0_TENSOR_SIZE_DIM_0",
        "output dim 0 (= input)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_TENSOR_SIZE_DIM_1",
        "DATA_IN_0_TENSOR_SIZE_DIM_1",
        "output dim 1 (= input)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_PARALLELISM_DIM_0",
        "DATA_IN_0_PARALLELISM_DIM_0",
        "output elements of dim 0 per beat (= input)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_PARALLELISM_DIM_1",
        "DATA_IN_0_PARALLELISM_DIM_1",
        "output rows per beat (= input)",
    ),
    ParamSpec::value(
        "DATA_OUT_0_ROUNDING",
        0,
        "rounding: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV",
    ),
    ParamSpec::value("DATA_OUT_0_OVERFLOW", 1, "overflow: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM"),
];

/// Checks a `<prefix>_PRECISION_0` width against its signedness (1..64 signed, 1..63 unsigned).
fn check_width(p: &Params, prefix: &str, signed: bool) -> Result<(), String> {
    check_range(p, &format!("{prefix}_PRECISION_0"), 1, if signed { 64 } else { 63 })
}

fn lanes(p: &Params) -> usize {
    (param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "DATA_IN_0_PARALLELISM_DIM_1")) as usize
}

/// Resolved parameters of a cast from `from` into `to` (with `to`'s rounding and overflow) over
/// rows of `cols` elements in beats of `lanes`: the typed instance builder the stitcher uses.
pub fn instance(
    from: &FixedFormat,
    to: &FixedFormat,
    rows: usize,
    cols: usize,
    lanes: usize,
) -> Result<Params, String> {
    crate::resolve_params(
        &Cast,
        &[
            ("DATA_IN_0_PRECISION_0", from.width as i64),
            ("DATA_IN_0_PRECISION_1", from.frac as i64),
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", cols as i64),
            ("DATA_IN_0_TENSOR_SIZE_DIM_1", rows as i64),
            ("DATA_IN_0_PARALLELISM_DIM_0", lanes as i64),
            ("DATA_IN_0_PARALLELISM_DIM_1", 1),
            ("DATA_IN_0_SIGNED", from.signed as i64),
            ("DATA_OUT_0_PRECISION_0", to.width as i64),
            ("DATA_OUT_0_PRECISION_1", to.frac as i64),
            ("DATA_OUT_0_ROUNDING", rounding_code(to.rounding)),
            ("DATA_OUT_0_OVERFLOW", overflow_code(to.overflow)),
            ("DATA_OUT_0_SIGNED", to.signed as i64),
        ],
    )
}

impl Component for Cast {
    fn name(&self) -> &'static str {
        "cast"
    }

    fn description(&self) -> &'static str {
        "element-wise fixed-point format conversion, every ap_fixed rounding/overflow mode; output registered"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_range(p, "DATA_IN_0_SIGNED", 0, 1)?;
        check_width(p, "DATA_IN_0", param(p, "DATA_IN_0_SIGNED") == 1)?;
        check_range(p, "DATA_IN_0_PRECISION_1", -MAX_FRAC, MAX_FRAC)?;
        check_block_shape(p, "DATA_IN_0")?;
        check_range(p, "DATA_OUT_0_SIGNED", 0, 1)?;
        check_width(p, "DATA_OUT_0", param(p, "DATA_OUT_0_SIGNED") == 1)?;
        check_range(p, "DATA_OUT_0_PRECISION_1", -MAX_FRAC, MAX_FRAC)?;
        for s in ["TENSOR_SIZE_DIM_0", "TENSOR_SIZE_DIM_1", "PARALLELISM_DIM_0", "PARALLELISM_DIM_1"] {
            check_equal(p, &format!("DATA_OUT_0_{s}"), &format!("DATA_IN_0_{s}"))?;
        }
        check_modes(p, "DATA_OUT_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let beats =
            (param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0")) as usize;
        ["DATA_IN_0", "DATA_OUT_0"]
            .iter()
            .zip([Direction::In, Direction::Out])
            .map(|(prefix, dir)| StreamSpec {
                name: prefix.to_lowercase(),
                dir,
                lanes: lanes(p),
                width: param(p, &format!("{prefix}_PRECISION_0")) as u32,
                signed: param(p, &format!("{prefix}_SIGNED")) == 1,
                beats_per_row: beats,
            })
            .collect()
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.inputs.get("data_in_0").ok_or("cast model: missing input stream data_in_0")?;
        let from_frac = param(p, "DATA_IN_0_PRECISION_1") as i32;
        let to = output_format(p, "DATA_OUT_0", param(p, "DATA_OUT_0_SIGNED") == 1);
        let mut out = StreamValues::new();
        out.insert(
            "data_out_0".to_string(),
            x.iter().map(|&v| cast_code(v as i128, from_frac, &to)).collect(),
        );
        Ok(out)
    }

    fn cost(&self, p: &Params) -> Cost {
        let beats = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0");
        Cost { latency_cycles: 1, ii_cycles: beats as u64, multipliers: 0, memory_bits: 0 }
    }

    fn dependencies(&self) -> &'static [&'static str] {
        &["mase_assert.svh", "mase_cast_core.sv"]
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        // Every rounding and overflow mode appears; widths 2..16, P = 1, odd sizes, unsigned
        // on either side, negative and larger-than-width fractional bits, 64-bit lanes.
        vec![
            vec![],
            vec![
                ("DATA_IN_0_PRECISION_0", 2),
                ("DATA_IN_0_PRECISION_1", 0),
                ("DATA_OUT_0_PRECISION_0", 3),
                ("DATA_OUT_0_PRECISION_1", 2),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 5),
                ("DATA_IN_0_PARALLELISM_DIM_0", 1),
                ("DATA_OUT_0_ROUNDING", 1),
                ("DATA_OUT_0_OVERFLOW", 0),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 13),
                ("DATA_IN_0_PRECISION_1", 7),
                ("DATA_OUT_0_PRECISION_0", 5),
                ("DATA_OUT_0_PRECISION_1", 2),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 9),
                ("DATA_IN_0_PARALLELISM_DIM_0", 3),
                ("DATA_IN_0_TENSOR_SIZE_DIM_1", 4),
                ("DATA_IN_0_PARALLELISM_DIM_1", 2),
                ("DATA_OUT_0_ROUNDING", 2),
                ("DATA_OUT_0_OVERFLOW", 2),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 12),
                ("DATA_IN_0_PRECISION_1", 9),
                ("DATA_IN_0_SIGNED", 0),
                ("DATA_OUT_0_PRECISION_0", 6),
                ("DATA_OUT_0_PRECISION_1", 3),
                ("DATA_OUT_0_ROUNDING", 3),
                ("DATA_OUT_0_OVERFLOW", 3),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 16),
                ("DATA_IN_0_PRECISION_1", 10),
                ("DATA_OUT_0_PRECISION_0", 7),
                ("DATA_OUT_0_PRECISION_1", 5),
                ("DATA_OUT_0_SIGNED", 0),
                ("DATA_OUT_0_ROUNDING", 4),
                ("DATA_OUT_0_OVERFLOW", 1),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 9),
                ("DATA_IN_0_PRECISION_1", -2),
                ("DATA_OUT_0_PRECISION_0", 11),
                ("DATA_OUT_0_PRECISION_1", 1),
                ("DATA_OUT_0_ROUNDING", 5),
                ("DATA_OUT_0_OVERFLOW", 3),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 10),
                ("DATA_IN_0_PRECISION_1", 14),
                ("DATA_OUT_0_PRECISION_0", 4),
                ("DATA_OUT_0_PRECISION_1", 6),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 6),
                ("DATA_IN_0_PARALLELISM_DIM_0", 6),
                ("DATA_OUT_0_ROUNDING", 6),
                ("DATA_OUT_0_OVERFLOW", 0),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 64),
                ("DATA_IN_0_PRECISION_1", 20),
                ("DATA_OUT_0_PRECISION_0", 64),
                ("DATA_OUT_0_PRECISION_1", 30),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 4),
                ("DATA_IN_0_PARALLELISM_DIM_0", 2),
                ("DATA_OUT_0_ROUNDING", 6),
                ("DATA_OUT_0_OVERFLOW", 1),
            ],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![("DATA_IN_0_SIGNED", 0), ("DATA_IN_0_PRECISION_0", 64)],
            vec![("DATA_OUT_0_PRECISION_0", 65)],
            vec![("DATA_IN_0_PARALLELISM_DIM_0", 3)],
            vec![("DATA_OUT_0_ROUNDING", 7)],
            vec![("DATA_OUT_0_OVERFLOW", -1)],
            vec![("DATA_OUT_0_PARALLELISM_DIM_0", 2)],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_codes_round_trip() {
        for (i, &r) in Rounding::ALL.iter().enumerate() {
            assert_eq!(rounding_code(r), i as i64);
            assert_eq!(rounding_from_code(i as i64), Some(r));
        }
        for (i, &o) in Overflow::ALL.iter().enumerate() {
            assert_eq!(overflow_code(o), i as i64);
            assert_eq!(overflow_from_code(i as i64), Some(o));
        }
        assert_eq!(rounding_from_code(7), None);
        assert_eq!(overflow_from_code(-1), None);
        // The RTL defaults (0, 1) are the hardware defaults TRN, SAT.
        assert_eq!(rounding_from_code(0), Some(Rounding::default()));
        assert_eq!(overflow_from_code(1), Some(Overflow::default()));
    }

    #[test]
    fn validate_rejects_unsigned_64_and_bad_modes() {
        for bad in Cast.invalid_params() {
            assert!(crate::resolve_params(&Cast, &bad).is_err(), "{bad:?} accepted");
        }
        for good in Cast.test_params() {
            crate::resolve_params(&Cast, &good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        }
    }
}
