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

use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{self, input, modes, output, row, rows};
use crate::port::{beats_per_row, block_stream, check_same_shape};
use crate::{
    check_block_shape, check_range, output_modes, param, param_list, port_format, port_shape, same_shape,
};

/// LUT model of a cast over [`cast_features`], fitted to Yosys 0.23 with
/// `sim/examples/resource_fit.rs --only cast` (least squares on relative error, non-negative;
/// 40 instances, median error 7 %).
const CAST_LUT: [f64; 6] = [2.006, 0.124, 0.359, 0.343, 0.876, 1.048];
/// FF model of a cast over `[1, lanes × output bits, lanes × output bits that carry
/// information]` (the output register; constant bits fold away), same fit (median error 8 %).
const CAST_FF: [f64; 3] = [-1.37, 0.376, 0.633];

/// Features of the resource model of a cast from port `from` to port `to` (per lane, times the
/// lanes): `[1, rounded output bits (the increment), dropped bits the rounding mode ORs (all
/// modes but RND), integer bits the saturation checks, output bits when saturating, output bits
/// when SAT_SYM can see a negative value]`. After a rounding add every integer bit of the RTL's
/// `n` may carry, so the saturation checks all of them; without one, only those the input holds.
pub fn cast_features(p: &Params, from: &str, to: &str) -> [u64; 6] {
    let g = |k: &str| p.get(k).copied().unwrap_or(0);
    let signed = |port: &str| p.get(&format!("{port}_SIGNED")).copied().unwrap_or(1) != 0;
    CastShape {
        lanes: (g(&format!("{from}_PARALLELISM_DIM_0")) * g(&format!("{from}_PARALLELISM_DIM_1")).max(1))
            .max(1) as u64,
        from: (g(&format!("{from}_PRECISION_0")), g(&format!("{from}_PRECISION_1")), signed(from)),
        to: (g(&format!("{to}_PRECISION_0")), g(&format!("{to}_PRECISION_1")), signed(to)),
        rounding: g(&format!("{to}_ROUNDING")),
        overflow: g(&format!("{to}_OVERFLOW")),
    }
    .features()
}

/// A cast as the resource model sees it: lanes, input and output `(width, fraction, signed)`,
/// rounding and overflow codes (components whose output stage is a cast of an internal value,
/// such as `mul`'s exact product, describe it with one).
#[derive(Debug, Clone, Copy)]
pub struct CastShape {
    /// Lanes cast in parallel.
    pub lanes: u64,
    /// Input `(width, fractional bits, signed)`.
    pub from: (i64, i64, bool),
    /// Output `(width, fractional bits, signed)`.
    pub to: (i64, i64, bool),
    /// Rounding code ([`rounding_code`]).
    pub rounding: i64,
    /// Overflow code ([`overflow_code`]).
    pub overflow: i64,
}

impl CastShape {
    /// The features of [`cast_features`].
    pub fn features(&self) -> [u64; 6] {
        let ((wi, fi, si), (wo, fo, so)) = (self.from, self.to);
        // The RTL's SHIFT, RSH, LSH and NW (bits of the shifted, rounded value n).
        let shift = fi - fo;
        let rsh = shift.min(wi + 1);
        let nw = if shift > 0 { wi + 3 - rsh } else { wi + 2 + (-shift).min(wo + 1) };
        let rounds = i64::from(self.rounding != 0 && shift > 0);
        let sticky = rounds * i64::from(self.rounding != 2) * (rsh - 1).max(0);
        let eff = (wi - fi + fo + rounds).min(wo).max(1);
        let live = if rounds == 1 { nw - 1 } else { wi - fi + fo };
        let sat = if self.overflow != 0 { (live + i64::from(si != so) - wo).max(0) } else { 0 };
        let sym = i64::from(self.overflow == 3 && si);
        let per = [1, rounds * eff, sticky, sat, if sat > 0 { wo } else { 0 }, sym * wo];
        let mut x = [1; 6];
        for i in 1..6 {
            x[i] = self.lanes * per[i].max(0) as u64;
        }
        x
    }

    /// Estimated LUTs of the cast ([`CAST_LUT`] over [`CastShape::features`]), unrounded.
    pub fn lut(&self) -> f64 {
        CAST_LUT.iter().zip(self.features()).map(|(c, x)| c * x as f64).sum()
    }
}

/// Features of [`CAST_FF`]: `[1, lanes × output bits, lanes × output bits that carry
/// information]`.
fn cast_ff_features(p: &Params) -> [u64; 3] {
    let g = |k: &str| p.get(k).copied().unwrap_or(0);
    let lanes = (g("DATA_IN_0_PARALLELISM_DIM_0") * g("DATA_IN_0_PARALLELISM_DIM_1").max(1)).max(1) as u64;
    let (wi, fi) = (g("DATA_IN_0_PRECISION_0"), g("DATA_IN_0_PRECISION_1"));
    let (wo, fo) = (g("DATA_OUT_0_PRECISION_0"), g("DATA_OUT_0_PRECISION_1"));
    let rounds = i64::from(g("DATA_OUT_0_ROUNDING") != 0 && fi > fo);
    let eff = (wi - fi + fo + rounds).min(wo).max(1) as u64;
    [1, lanes * wo.max(0) as u64, lanes * eff]
}

/// The cast component.
pub struct Cast;

pub use crate::port::MAX_FRAC;

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

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "cast",
    description:
        "element-wise fixed-point format conversion, every ap_fixed rounding/overflow mode; output registered",
    dependencies: &["mase_assert.svh", "mase_cast_core.sv"],
    params: param_list![
        port_format!(
            "DATA_IN_0",
            16,
            "input total bits (1..64 signed, 1..63 unsigned)",
            8,
            "input fractional bits (-2^24..2^24)"
        ),
        [ParamSpec::value("DATA_IN_0_SIGNED", 1, "1: input is two's complement, 0: unsigned")],
        port_shape!("DATA_IN_0", [8, 1, 4, 1]),
        port_format!(
            "DATA_OUT_0",
            8,
            "output total bits (1..64 signed, 1..63 unsigned)",
            4,
            "output fractional bits (-2^24..2^24)"
        ),
        [ParamSpec::value("DATA_OUT_0_SIGNED", 1, "1: output is two's complement, 0: unsigned")],
        same_shape!("DATA_OUT_0", "DATA_IN_0", "output", "input"),
        output_modes!("DATA_OUT_0", "rounding", "overflow"),
    ],
    ..Info::DEFAULT
};

/// Checks `<prefix>_SIGNED` (0 or 1), then the `<prefix>_PRECISION_0` width against it (1..64
/// signed, 1..63 unsigned) and the `<prefix>_PRECISION_1` fractional bits.
fn check_signed_format(p: &Params, prefix: &str) -> Result<(), String> {
    check_range(p, &format!("{prefix}_SIGNED"), 0, 1)?;
    let signed = param(p, &format!("{prefix}_SIGNED")) == 1;
    check_range(p, &format!("{prefix}_PRECISION_0"), 1, if signed { 64 } else { 63 })?;
    check_range(p, &format!("{prefix}_PRECISION_1"), -MAX_FRAC, MAX_FRAC)
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
    let overrides = [
        overrides::input(from.width.into(), from.frac.into()),
        overrides::row(cols as i64, lanes as i64),
        overrides::rows(rows as i64, 1),
        vec![("DATA_IN_0_SIGNED", from.signed.into()), ("DATA_OUT_0_SIGNED", to.signed.into())],
        overrides::output(to.width.into(), to.frac.into()),
        overrides::modes(rounding_code(to.rounding), overflow_code(to.overflow)),
    ];
    crate::resolve_params(&Cast, &overrides.concat())
}

impl Component for Cast {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_signed_format(p, "DATA_IN_0")?;
        check_block_shape(p, "DATA_IN_0")?;
        check_signed_format(p, "DATA_OUT_0")?;
        check_same_shape(p, "DATA_OUT_0", "DATA_IN_0")?;
        check_modes(p, "DATA_OUT_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        [("DATA_IN_0", Direction::In), ("DATA_OUT_0", Direction::Out)]
            .into_iter()
            .map(|(port, dir)| StreamSpec {
                signed: param(p, &format!("{port}_SIGNED")) == 1,
                ..block_stream(p, port, dir)
            })
            .collect()
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.input("cast", "data_in_0")?;
        let from_frac = param(p, "DATA_IN_0_PRECISION_1") as i32;
        let to = output_format(p, "DATA_OUT_0", param(p, "DATA_OUT_0_SIGNED") == 1);
        Ok(data_out_0(x.iter().map(|&v| cast_code(v as i128, from_frac, &to)).collect()))
    }

    fn cost(&self, p: &Params) -> Cost {
        Cost::streaming(1, beats_per_row(p, "DATA_IN_0") as u64)
    }

    /// Per lane: the output bits that carry information, the rounding adder when fractional
    /// bits are dropped with a rounding mode, the saturation logic when integer bits are dropped
    /// (or the signedness changes) with a saturating mode ([`cast_features`]; fitted to Yosys 0.23
    /// with `sim/examples/resource_fit.rs`).
    fn resources(&self, p: &Params) -> crate::Resources {
        let x = cast_features(p, "DATA_IN_0", "DATA_OUT_0");
        crate::Resources {
            lut: crate::resources::fitted(&CAST_LUT, &x),
            ff: crate::resources::fitted(&CAST_FF, &cast_ff_features(p)),
            ..Default::default()
        }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        // Every rounding and overflow mode appears; widths 2..16, P = 1, odd sizes, unsigned
        // on either side, negative and larger-than-width fractional bits, 64-bit lanes.
        vec![
            vec![],
            [input(2, 0), output(3, 2), row(5, 1), modes(1, 0)].concat(),
            [input(13, 7), output(5, 2), row(9, 3), rows(4, 2), modes(2, 2)].concat(),
            [input(12, 9), vec![("DATA_IN_0_SIGNED", 0)], output(6, 3), modes(3, 3)].concat(),
            [input(16, 10), output(7, 5), vec![("DATA_OUT_0_SIGNED", 0)], modes(4, 1)].concat(),
            [input(9, -2), output(11, 1), modes(5, 3)].concat(),
            [input(10, 14), output(4, 6), row(6, 6), modes(6, 0)].concat(),
            [input(64, 20), output(64, 30), row(4, 2), modes(6, 1)].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![("DATA_IN_0_SIGNED", 0), ("DATA_IN_0_PRECISION_0", 64)],
            output(65, 4),
            row(8, 3),
            modes(7, 1),
            modes(0, -1),
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
}
