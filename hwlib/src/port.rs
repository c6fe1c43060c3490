//! The MASE tensor-port convention in one place: every tensor port `PORT` (`DATA_IN_0`,
//! `DATA_OUT_0`, `WEIGHT`, …) of a component is described by the same parameters
//! (`PORT_PRECISION_0/1`, `PORT_TENSOR_SIZE_DIM_0/1`, `PORT_PARALLELISM_DIM_0/1`, and for an output
//! cast `PORT_ROUNDING/OVERFLOW`), checked by the same rules and streamed the same way. This
//! module holds the pieces the components build their [`Component::params`],
//! [`Component::validate`] and [`Component::streams`] from:
//!
//! [`Component::params`]: crate::Component::params
//! [`Component::validate`]: crate::Component::validate
//! [`Component::streams`]: crate::Component::streams
//!
//! - parameter groups, as macros because the names are `concat!`ed at compile time:
//!   [`port_format!`](crate::port_format), [`port_shape!`](crate::port_shape),
//!   [`same_shape!`](crate::same_shape), [`output_modes!`](crate::output_modes), joined into
//!   one `&'static [ParamSpec]` by [`param_list!`](crate::param_list);
//! - validation: [`check_format`], [`check_port`], [`check_same_format`], [`check_same_shape`],
//!   [`check_row_shape`], [`check_derived`],
//!   [`check_cast_output`] (messages from [`check_range`], [`check_equal`], [`check_divides`], so
//!   they stay what the RTL prints);
//! - streams: [`block_stream`], [`lanes`], [`beats_per_row`].

use crate::component::{Direction, ParamSpec, Params, StreamSpec};
use crate::components::cast::check_modes;
use crate::{check_block_shape, check_divides, check_equal, check_range, param};

/// Largest fractional bit magnitude a format parameter may take (as `FixedFormat::validate`).
pub const MAX_FRAC: i64 = mase_ir::fixed::MAX_FRAC_MAGNITUDE as i64;

/// The shape parameter suffixes of a port, in declaration (and checking) order.
pub const SHAPE: [&str; 4] =
    ["TENSOR_SIZE_DIM_0", "TENSOR_SIZE_DIM_1", "PARALLELISM_DIM_0", "PARALLELISM_DIM_1"];

/// Number of parameters in `groups` (for [`concat`]'s length).
pub const fn total_len(groups: &[&[ParamSpec]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < groups.len() {
        n += groups[i].len();
        i += 1;
    }
    n
}

/// The parameter groups one after another (`N` = [`total_len`] of `groups`; checked at compile
/// time).
pub const fn concat<const N: usize>(groups: &[&[ParamSpec]]) -> [ParamSpec; N] {
    let mut out = [ParamSpec::value("", 0, ""); N];
    let (mut i, mut k) = (0, 0);
    while i < groups.len() {
        let mut j = 0;
        while j < groups[i].len() {
            out[k] = groups[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "concat: N differs from the groups' total length");
    out
}

/// `param_list![group, …]`: the `&'static [ParamSpec]` of a component, its groups (each an
/// array or slice of [`ParamSpec`]) in declaration order.
#[macro_export]
macro_rules! param_list {
    ($($group:expr),* $(,)?) => {{
        const GROUPS: &[&[$crate::ParamSpec]] = &[$(&$group),*];
        &$crate::port::concat::<{ $crate::port::total_len(GROUPS) }>(GROUPS)
    }};
}

/// `port_format!("PORT", bits, "bits doc", frac, "frac doc")`: `PORT_PRECISION_0` (total bits)
/// and `PORT_PRECISION_1` (fractional bits) with their defaults.
#[macro_export]
macro_rules! port_format {
    ($port:literal, $bits:expr, $bits_doc:expr, $frac:expr, $frac_doc:expr $(,)?) => {
        [
            $crate::ParamSpec::value(concat!($port, "_PRECISION_0"), $bits, $bits_doc),
            $crate::ParamSpec::value(concat!($port, "_PRECISION_1"), $frac, $frac_doc),
        ]
    };
}

/// `port_shape!("PORT", [size_0, size_1, par_0, par_1])`: the four [`SHAPE`] parameters of a
/// block-streamed port with their defaults and the usual docs (dim 0 = elements per row, dim 1 =
/// rows; `port_shape!("PORT", [..], "dim 0 doc")` words dim 0 differently), or with four docs of
/// its own (`port_shape!("PORT", [..], [doc, doc, doc, doc])`).
#[macro_export]
macro_rules! port_shape {
    ($port:literal, [$s0:expr, $s1:expr, $p0:expr, $p1:expr]) => {
        $crate::port_shape!($port, [$s0, $s1, $p0, $p1], "tensor size along dim 0 (elements per row)")
    };
    ($port:literal, [$s0:expr, $s1:expr, $p0:expr, $p1:expr], $dim0_doc:literal) => {
        $crate::port_shape!(
            $port,
            [$s0, $s1, $p0, $p1],
            [$dim0_doc, "tensor size along dim 1 (rows)", "elements of dim 0 per beat", "rows per beat"]
        )
    };
    ($port:literal, [$s0:expr, $s1:expr, $p0:expr, $p1:expr], [$d0:expr, $d1:expr, $d2:expr, $d3:expr $(,)?]) => {
        [
            $crate::ParamSpec::value(concat!($port, "_TENSOR_SIZE_DIM_0"), $s0, $d0),
            $crate::ParamSpec::value(concat!($port, "_TENSOR_SIZE_DIM_1"), $s1, $d1),
            $crate::ParamSpec::value(concat!($port, "_PARALLELISM_DIM_0"), $p0, $d2),
            $crate::ParamSpec::value(concat!($port, "_PARALLELISM_DIM_1"), $p1, $d3),
        ]
    };
}

/// `same_shape!("PORT", "LIKE", "port words", "like words")`: the four [`SHAPE`] parameters of
/// `PORT` defaulting to those of `LIKE` (docs `<port words> dim 0 (= <like words>)`, …), for a
/// port that must have the shape of another ([`check_same_shape`]). `same_shape!("PORT", "LIKE",
/// [doc, doc, doc, doc])` gives four docs of its own.
#[macro_export]
macro_rules! same_shape {
    ($port:literal, $like:literal, $who:literal, $src:literal) => {
        $crate::same_shape!(
            $port,
            $like,
            [
                concat!($who, " dim 0 (= ", $src, ")"),
                concat!($who, " dim 1 (= ", $src, ")"),
                concat!($who, " elements of dim 0 per beat (= ", $src, ")"),
                concat!($who, " rows per beat (= ", $src, ")"),
            ]
        )
    };
    ($port:literal, $like:literal, [$d0:expr, $d1:expr, $d2:expr, $d3:expr $(,)?]) => {
        $crate::same_shape!(@each $port, $like, [
            ("_TENSOR_SIZE_DIM_0", $d0),
            ("_TENSOR_SIZE_DIM_1", $d1),
            ("_PARALLELISM_DIM_0", $d2),
            ("_PARALLELISM_DIM_1", $d3),
        ])
    };
    (@each $port:literal, $like:literal, [$(($suffix:literal, $doc:expr)),* $(,)?]) => {
        [$($crate::ParamSpec::same_as(concat!($port, $suffix), concat!($like, $suffix), $doc)),*]
    };
}

/// `output_modes!("PORT", "rounding words", "overflow words")`: `PORT_ROUNDING` (default 0, TRN)
/// and `PORT_OVERFLOW` (default 1, SAT), documented with their codes (see
/// [`crate::components::cast::rounding_code`]); the words name what the mode applies to.
#[macro_export]
macro_rules! output_modes {
    ($port:literal, $rounding:literal, $overflow:literal) => {
        [
            $crate::ParamSpec::value(
                concat!($port, "_ROUNDING"),
                0,
                concat!(
                    $rounding,
                    ": 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV"
                ),
            ),
            $crate::ParamSpec::value(
                concat!($port, "_OVERFLOW"),
                1,
                concat!($overflow, ": 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM"),
            ),
        ]
    };
}

/// Checks `PORT_PRECISION_0` in `1..=max_bits` and `PORT_PRECISION_1` within ±[`MAX_FRAC`].
pub fn check_format(p: &Params, port: &str, max_bits: i64) -> Result<(), String> {
    check_range(p, &format!("{port}_PRECISION_0"), 1, max_bits)?;
    check_range(p, &format!("{port}_PRECISION_1"), -MAX_FRAC, MAX_FRAC)
}

/// Checks a block-streamed port: [`check_format`] then [`check_block_shape`].
pub fn check_port(p: &Params, port: &str, max_bits: i64) -> Result<(), String> {
    check_format(p, port, max_bits)?;
    check_block_shape(p, port)
}

/// Checks that `PORT_PRECISION_0/1` equal those of `like` (a port that moves values unchanged).
pub fn check_same_format(p: &Params, port: &str, like: &str) -> Result<(), String> {
    check_equal(p, &format!("{port}_PRECISION_0"), &format!("{like}_PRECISION_0"))?;
    check_equal(p, &format!("{port}_PRECISION_1"), &format!("{like}_PRECISION_1"))
}

/// Checks that the four [`SHAPE`] parameters of `port` equal those of `like`, in order.
pub fn check_same_shape(p: &Params, port: &str, like: &str) -> Result<(), String> {
    for s in SHAPE {
        check_equal(p, &format!("{port}_{s}"), &format!("{like}_{s}"))?;
    }
    Ok(())
}

/// Checks parameters another formula determines: `name` of each `(name, formula)` rule must equal
/// its `wanted` value. Message: `NAME (GOT) must equal FORMULA (WANT)`.
pub fn check_derived(p: &Params, rules: &[(&str, &str)], wanted: &[i64]) -> Result<(), String> {
    for (&(name, formula), &want) in rules.iter().zip(wanted) {
        let got = param(p, name);
        if got != want {
            return Err(format!("{name} ({got}) must equal {formula} ({want})"));
        }
    }
    Ok(())
}

/// Checks a port streamed one row at a time: `PORT_TENSOR_SIZE_DIM_0` (row length) in
/// `1..=max_len`, `_DIM_1` (rows) in `1..=max_rows`, `PORT_PARALLELISM_DIM_0` in `1..=max_lanes`
/// and dividing the row length, `PORT_PARALLELISM_DIM_1` equal to 1, in that order.
pub fn check_row_shape(
    p: &Params,
    port: &str,
    max_len: i64,
    max_rows: i64,
    max_lanes: i64,
) -> Result<(), String> {
    let [s0, s1, p0, p1] = SHAPE.map(|s| format!("{port}_{s}"));
    check_range(p, &s0, 1, max_len)?;
    check_range(p, &s1, 1, max_rows)?;
    check_range(p, &p0, 1, max_lanes)?;
    check_divides(p, &p0, &s0)?;
    check_range(p, &p1, 1, 1)
}

/// Checks the output `port` of an element-wise component that casts into its own signed format:
/// [`check_format`] (up to `max_bits`), the shape of `like` ([`check_same_shape`]), then the
/// rounding and overflow codes.
pub fn check_cast_output(p: &Params, port: &str, like: &str, max_bits: i64) -> Result<(), String> {
    check_format(p, port, max_bits)?;
    check_same_shape(p, port, like)?;
    check_modes(p, port)
}

/// Lanes per beat of a block-streamed port: `PORT_PARALLELISM_DIM_0 × PORT_PARALLELISM_DIM_1`.
pub fn lanes(p: &Params, port: &str) -> usize {
    (param(p, &format!("{port}_PARALLELISM_DIM_0")) * param(p, &format!("{port}_PARALLELISM_DIM_1"))) as usize
}

/// Beats per (block) row of a port: `PORT_TENSOR_SIZE_DIM_0 / PORT_PARALLELISM_DIM_0`.
pub fn beats_per_row(p: &Params, port: &str) -> usize {
    (param(p, &format!("{port}_TENSOR_SIZE_DIM_0")) / param(p, &format!("{port}_PARALLELISM_DIM_0"))) as usize
}

/// The signed stream of block-streamed port `PORT` (named `port` in lower case): [`lanes`] lanes
/// of `PORT_PRECISION_0` bits, [`beats_per_row`] beats per row.
pub fn block_stream(p: &Params, port: &str, dir: Direction) -> StreamSpec {
    StreamSpec {
        name: port.to_lowercase(),
        dir,
        lanes: lanes(p, port),
        width: param(p, &format!("{port}_PRECISION_0")) as u32,
        signed: true,
        beats_per_row: beats_per_row(p, port),
    }
}

/// [`block_stream`] of `DATA_IN_0` and `DATA_OUT_0`: the ports of a one-input element-wise
/// component.
pub fn unary_streams(p: &Params) -> Vec<StreamSpec> {
    vec![block_stream(p, "DATA_IN_0", Direction::In), block_stream(p, "DATA_OUT_0", Direction::Out)]
}
