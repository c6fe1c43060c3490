//! `gelu`: element-wise GELU, `x · Φ(x)` (erf form, as `torch.nn.GELU()`), by table lookup
//! (`rtl/mase_gelu.sv`), for signed inputs of up to 16 bits, in two forms: a full table (one
//! entry per input code) or interpolated breakpoints ([`super::gelu_interp`]).
//!
//! # Exact algorithm
//!
//! Input codes `x` (signed, `W = DATA_IN_0_PRECISION_0 ≤ 16` bits, `F = DATA_IN_0_PRECISION_1`
//! fractional bits) are mapped to output codes (signed, `DATA_OUT_0_PRECISION_0/1`, rounding and
//! overflow `DATA_OUT_0_ROUNDING/OVERFLOW`) piecewise, with the table range
//! `[LO, HI] = [max(−TABLE_NEG, min code), min(TABLE_POS, max code)]` (the table always holds
//! code 0; both parameters are non-negative):
//!
//! | input code | output code |
//! |---|---|
//! | `x < LO` | `0` (GELU tends to 0 for large negative x) |
//! | `LO ≤ x ≤ HI`, `FORM = 0` | `table[x − LO]` |
//! | `LO ≤ x ≤ HI`, `FORM = 1` | linear segments of `2^SEG_BITS` codes in the inner band `−BAND_MID ≤ x < BAND_MID`, `2^SEG_BITS_MID` in the middle band (`−BAND_OUT ≤ x < BAND_OUT` outside it), `2^SEG_BITS_OUT` beyond; `GUARD_BITS` guard bits, interpolation in integers, one cast ([`super::gelu_interp`]) |
//! | `x > HI` | `cast_code(x, F, out)` (GELU tends to the identity for large positive x) |
//!
//! `FORM = 0`: `table[k] = from_f64(gelu(x_k · 2^-F), out)` for `x_k = LO + k`, computed by
//! [`gelu_table`] with a deterministic double-precision GELU ([`gelu_f64`]: erf by a
//! positive-term series, exp by halving and squaring; only IEEE +, −, ×, ÷ and √, so the same
//! bytes on every machine). The same generator yields the model's table
//! ([`Component::random_stimulus`]) and the emitted `.mem` file (memory `table`, file parameter
//! `TABLE_MEM_FILE`, one entry per word, word `k` = input code `LO + k`). `FORM = 1`: the words
//! pack breakpoint and difference ([`InterpSpec::table`]); the breakpoints' common offset is
//! chosen by evaluating every input code, so the worst case is known, not estimated.
//!
//! The defaults `TABLE_NEG = 32768`, `TABLE_POS = 32767` tabulate every input code (exact to the
//! output rounding). [`table_range`] gives the narrowest range `[lo, hi]` whose tails stay within
//! a quarter of an output LSB of GELU (so the tails add at most 0.25 LSB of error; use
//! `TABLE_NEG = −lo`, `TABLE_POS = hi`); the emitter uses it for both forms.
//!
//! # Which form (the binding's choice, `[hardware.nodes.NAME] form = "table" | "interp"`)
//!
//! The full table is exact to the output rounding but grows as `2^W`: at 16 bits, s16.12 →
//! s16.12, 34 239 entries × 16 bits = 548 kbit per table even after [`table_range`] (1 Mbit for
//! the whole range). The interpolated form holds 108 words of 38 bits (4.1 kbit) for the same
//! formats, at most 0.98 LSB from f64 GELU over every input code (the full table: 0.5 LSB with
//! RND, 1 LSB with TRN). Its segments are `2^7` codes for `|x| < 0.69`, `2^8` up to `|x| < 1.125`
//! and `2^9` beyond: GELU's curvature `φ(x)(2 − x²)` is 0.8 at 0 and below 0.11 past 1.2, and
//! the linear interpolation error grows as the segment length squared times the curvature, so
//! one segment size for the whole range pays the centre's price everywhere (the uniform form
//! needed 577 words × 39 bits = 22.5 kbit for s16.12 → s16.14; the banded one 226 × 41 =
//! 9.3 kbit). So by default a node gets the full table while one table fits in
//! [`TABLE_BUDGET_BITS`] (16 kbit: every 8-bit format, 10-bit ones after shrinking) and the
//! interpolated form beyond, with the bands and segment sizes [`choose`] finds (fewest table
//! bits with every input code within 1 output LSB) and `GUARD_BITS` = [`GUARD_BITS`].
//! `form = "…"` overrides it per node. `cargo run --release -p mase-hwlib --example
//! nonlinear_error gelu_forms gelu_sweep` prints both forms' sizes and worst-case errors over
//! every code; a unit test asserts ≤ 1 LSB and ≤ 16 kbit for every 16-bit input format with
//! 8..14 fractional bits and outputs with two fewer to two more (0..15), both roundings (the
//! largest: s16.13 → s16.15, 278 words × 42 bits = 11.7 kbit).
//!
//! # Hardware
//!
//! Full table: two lanes share one ROM, each on its own synchronous read port, so `P` lanes cost
//! `⌈P/2⌉` tables. A Xilinx 7-series block RAM has two ports: a RAMB36 serves two reads of up to
//! 36 bits (1024 × 36 per port; 72-bit words only as a simple dual port, one read), a RAMB18
//! two reads of up to 18 bits (1024 × 18). A 16-bit table of 34 239 entries is 31 RAMB18 for one
//! lane; two lanes sharing it take 16 RAMB36, where two copies took 62 RAMB18 (Yosys 0.23,
//! measured). Small tables become distributed ROM in LUTs, where a second read port is a second
//! copy of the LUTs: sharing then neither saves nor costs. Tables deeper than [`BANK_WORDS`]
//! (2048) are read as [`banks`] side by side, one ROM word holding an entry of each
//! ([`layout_table`]), and the bank is picked from flip-flops after the read: one ROM of many rows
//! of block RAMs puts a wide read mux after their clock-to-out (5.8 ns on ECP5), which no clock
//! near 125 MHz leaves room for. The word register is copied once more before the select (one
//! more cycle), so that it has one load and sits at its block RAM. Interpolated form: one ROM per lane.
//! Its words (`YW + DW`, 38 bits for s16.12) are one read of a block RAM in simple-dual-port
//! mode (two RAMB18 beyond 36 bits); two reads of such words need twice the ports, the silicon of
//! a second copy, so sharing saves nothing there (and Yosys 0.23 maps that shared ROM to LUTs).
//! Pipeline ([`latency`]), one register stage per step so that each path holds one piece of
//! arithmetic (≥ 125 MHz on ECP5): `FORM = 1`: the band (four comparisons), registered → the
//! address (`FORM = 0`: `x − LO`; `FORM = 1`: `(x >> S) + OFF` of the band) and the tail flags,
//! registered → the ROM read (the
//! block RAM's own register; the upper tail's cast beside it) → the ROM word again in flip-flops
//! (a block RAM's clock-to-out is most of a cycle) → `FORM = 1`: `d` and `r` registered again
//! (on ECP5 the DSP's input registers: the routing from the word register by its block RAM
//! into the DSP gets a cycle of its own) → the product `d·(r·2^(M−S))` (one `DW × M`
//! multiplier per lane, `M` the largest segment bits in use, a DSP48 under Yosys), registered
//! → its floor by `2^M` added: `v = y + product`, registered → its cast in two
//! halves (the rounding, registered → the overflow mode, registered; exact, as the cast is the
//! overflow mode of the rounded integer) → the tail select and `mase_skid_buffer`. Latency 4
//! (`FORM = 0`; 5 for a banked table), 10 (`FORM = 1`); `SHAPE = 1` two more (below).
//! One beat per cycle in both.
//!
//! # The lookup of other functions
//!
//! `mase_gelu` is the library's one table lookup of a function of one input, and this file its
//! Rust twin: [`function_table`], [`lookup_element`], [`lookup_model`], [`lookup_resources`] and
//! [`layout_table`] take the lookup's parameters and serve every component built on it. The module
//! has one parameter the gelu component does not declare (its instances keep the default 0):
//! `SHAPE = 1`, the odd, saturating shape that `mase_tanh` sets ([`super::tanh`]): the table
//! covers magnitudes `[0, HI]` (`TABLE_NEG` unused, `TABLE_POS` up to 32768), `|x|` is clamped to
//! `HI` before either form looks it up (in two register stages of their own, `|x|` and the
//! comparisons with `HI`, then the clamp: two more cycles), and
//! negative inputs negate the output code (saturating).

use mase_ir::fixed::{cast_code, from_f64, to_f64, FixedFormat};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Info, MemorySpec, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::components::cast::output_format;
pub use crate::components::gelu_interp::{choose, neg_sat, Band, InterpSpec, BAND_NONE, MAX_WORD_BITS};
use crate::overrides::{input, modes, output, row, rows};
use crate::port::{self, check_cast_output, check_port};
use crate::{check_range, param, param_list};

/// The GELU component.
pub struct Gelu;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "gelu",
    description: "element-wise GELU (erf form): full table (a ROM per two lanes) or interpolated breakpoints (≤ 1 LSB), identity/zero tails; inputs up to 16 bits",
    dependencies: &["mase_assert.svh", "mase_delay.sv", "mase_dsp_mul.sv", "mase_cast_core.sv", "mase_skid_buffer.sv"],
    params: param_list![
        lookup_io_params!(4, "rounding of the table entries and the upper tail"),
        [
            ParamSpec::value(
                "TABLE_NEG",
                32768,
                "lowest tabulated input code is -TABLE_NEG (0..32768, clamped to the input range); below it GELU = 0",
            ),
            ParamSpec::value(
                "TABLE_POS",
                32767,
                "highest tabulated input code (0..32767, clamped to the input range); above it GELU = cast(x)",
            ),
        ],
        FORM_PARAMS,
    ],
    ..Info::DEFAULT
};

/// `lookup_io_params!(out_frac, "rounding words")`: the parameters every component built on
/// `mase_gelu` starts with (the RTL's `MASE_LOOKUP_IO_PARAMS`): a signed input of 1..16 bits and
/// its shape, a signed output of 1..32 bits (`out_frac` fractional bits by default) of the same
/// shape, and the output's rounding (documented by the words) and overflow.
macro_rules! lookup_io_params {
    ($out_frac:expr, $rounding:literal) => {
        $crate::port::concat::<14>(&[
            &$crate::port_format!("DATA_IN_0", 8, "input total bits (1..16), signed", 4, "input fractional bits"),
            &$crate::port_shape!("DATA_IN_0", [8, 1, 4, 1], "tensor size along dim 0 (columns)"),
            &$crate::port_format!("DATA_OUT_0", 8, "output total bits (1..32), signed", $out_frac, "output fractional bits"),
            &$crate::same_shape!("DATA_OUT_0", "DATA_IN_0", "output", "input"),
            &$crate::output_modes!("DATA_OUT_0", $rounding, "overflow"),
        ])
    };
}
pub(crate) use lookup_io_params;

/// The parameters of the lookup's two forms (after the table range), shared by every component
/// built on `mase_gelu`.
pub(crate) const FORM_PARAMS: [ParamSpec; 7] = [
    ParamSpec::value("FORM", 0, "0: one table entry per input code; 1: linear segments (sizes by band), integer interpolation"),
    ParamSpec::value("SEG_BITS", 7, "FORM 1: inner band (-BAND_MID <= x < BAND_MID): input codes per segment are 2^SEG_BITS (0..12)"),
    ParamSpec::value("SEG_BITS_MID", 7, "FORM 1: segment bits of the middle band (-BAND_OUT <= x < BAND_OUT outside the inner one; 0..12)"),
    ParamSpec::value("SEG_BITS_OUT", 7, "FORM 1: segment bits of the outer band (the rest of the table range; 0..12)"),
    ParamSpec::value("BAND_MID", 32768, "FORM 1: inner band threshold (codes, 0..32768; 32768 with BAND_OUT = 32768: uniform segments)"),
    ParamSpec::value("BAND_OUT", 32768, "FORM 1: middle band threshold (codes, BAND_MID..32768)"),
    ParamSpec::value("GUARD_BITS", 4, "FORM 1: breakpoint bits below the output LSB (0..8)"),
];

/// `e^{-y}` for `y ≥ 0` in double precision using only IEEE-exact operations (+, ×, ÷ by
/// powers of two): halve `y` until it is at most 2^-6, sum the Taylor series, square back.
/// Deterministic on every platform (no libm); relative error below 1e-12 for `y ≤ 64`.
pub fn exp_neg(y: f64) -> f64 {
    if y.is_nan() || y <= 0.0 {
        return 1.0;
    }
    if y > 745.0 {
        return 0.0;
    }
    let mut r = y;
    let mut k = 0;
    while r > 1.0 / 64.0 {
        r *= 0.5;
        k += 1;
    }
    // e^{-r} = Σ (-r)^n / n!, Horner form, 12 terms (r ≤ 2^-6: truncation far below 1 ulp).
    let mut e = 1.0;
    for n in (1..=12).rev() {
        e = 1.0 - r * e / n as f64;
    }
    for _ in 0..k {
        e *= e;
    }
    e
}

/// `erf(z)` in double precision, deterministic (see [`exp_neg`]): for `|z| < 6`,
/// `erf(z) = 2/√π · e^{-z²} · Σ_{n≥0} 2^n z^{2n+1} / (1·3·…·(2n+1))` (all terms positive, no
/// cancellation); `±1` beyond (|erf − 1| < 2^-53 there).
pub fn erf(z: f64) -> f64 {
    let a = z.abs();
    if a >= 6.0 {
        return z.signum();
    }
    let two_z2 = 2.0 * a * a;
    let (mut term, mut sum) = (a, a);
    let mut n = 0u32;
    while term > sum * 1e-18 && n < 400 {
        n += 1;
        term *= two_z2 / (2 * n + 1) as f64;
        sum += term;
    }
    // 2/√π
    let v = std::f64::consts::FRAC_2_SQRT_PI * exp_neg(a * a) * sum;
    if z < 0.0 {
        -v
    } else {
        v
    }
}

/// GELU in double precision: `0.5 · x · (1 + erf(x / √2))`.
pub fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + erf(x * std::f64::consts::FRAC_1_SQRT_2))
}

/// `tanh(z)` in double precision, deterministic (see [`exp_neg`]): `(1 − e)/(1 + e)` with
/// `e = e^{-2|z|}`, the sign of `z` restored, so exactly odd. Within 1e-12 (relative, and
/// absolute below 1e-15 near 0) of libm's `tanh`.
pub fn tanh_f64(z: f64) -> f64 {
    let e = exp_neg(2.0 * z.abs());
    let t = (1.0 - e) / (1.0 + e);
    if z < 0.0 {
        -t
    } else {
        t
    }
}

/// GELU, tanh approximation (`torch.nn.GELU(approximate="tanh")`, GPT-2's `gelu_new`):
/// `0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))`, with [`tanh_f64`] so that the value is
/// the same on every platform.
pub fn gelu_tanh_f64(x: f64) -> f64 {
    let z = 0.797_884_560_802_865_4 * (x + 0.044715 * x * x * x);
    0.5 * x * (1.0 + tanh_f64(z))
}

/// The functions the lookup evaluates for bound ops (the keys of the binding's memoized
/// searches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableFn {
    /// GELU, erf form ([`gelu_f64`]).
    Gelu,
    /// GELU, tanh approximation ([`gelu_tanh_f64`]).
    GeluTanh,
    /// `tanh` ([`tanh_f64`]; the odd shape, `SHAPE = 1`).
    Tanh,
}

impl TableFn {
    /// The function in f64.
    pub fn f(self) -> fn(f64) -> f64 {
        match self {
            TableFn::Gelu => gelu_f64,
            TableFn::GeluTanh => gelu_tanh_f64,
            TableFn::Tanh => tanh_f64,
        }
    }
}

/// Table contents for the instance with another function `f` of the instance's shape (`SHAPE =
/// 0`: tends to 0 below, to the identity above, as GELU; `SHAPE = 1`: odd): `from_f64(f(x ·
/// 2^-F), out)` over the effective range, lowest first (the interpolated form: its words). The
/// component's model takes such a table through its `table` memory.
pub fn function_table(p: &Params, f: impl Fn(f64) -> f64) -> Vec<i64> {
    if is_interp(p) {
        return interp_spec(p).table(&f);
    }
    let (fi, fo) = (input_format(p), output_format(p, "DATA_OUT_0", true));
    let (lo, hi) = effective_range(p);
    (lo..=hi).map(|x| from_f64(f(to_f64(x, &fi)), &fo)).collect()
}

/// Whether the instance is the interpolated form (`FORM = 1`).
pub fn is_interp(p: &Params) -> bool {
    param(p, "FORM") == 1
}

/// `SHAPE` of the odd, saturating functions (tanh): the module parameter that `mase_tanh` sets
/// on its `mase_gelu` (not a parameter of the gelu component, whose instances keep 0).
pub const SHAPE_ODD: i64 = 1;

/// Whether the lookup instance has the odd shape (`SHAPE = 1`): table over magnitudes, `|x|`
/// clamped to `HI`, sign restored. Parameters without `SHAPE` (the gelu component's) are 0.
pub fn is_odd(p: &Params) -> bool {
    p.get("SHAPE") == Some(&SHAPE_ODD)
}

/// The interpolation of an instance (meaningful for `FORM = 1`).
pub fn interp_spec(p: &Params) -> InterpSpec {
    let (lo, hi) = effective_range(p);
    InterpSpec {
        fi: input_format(p),
        fo: output_format(p, "DATA_OUT_0", true),
        lo,
        hi,
        seg: ["SEG_BITS", "SEG_BITS_MID", "SEG_BITS_OUT"].map(|n| param(p, n).clamp(0, 12) as u32),
        band: ["BAND_MID", "BAND_OUT"].map(|n| param(p, n).clamp(0, BAND_NONE)),
        guard: param(p, "GUARD_BITS").clamp(0, 8) as u32,
        odd: is_odd(p),
    }
}

/// Bits of one ROM word: the output width (full table) or `YW + DW` (interpolated).
pub fn word_bits(p: &Params) -> u32 {
    if is_interp(p) {
        interp_spec(p).word_bits() as u32
    } else {
        param(p, "DATA_OUT_0_PRECISION_0") as u32
    }
}

/// Bits of one table (ROM) of the instance ([`tables`] of them serve the lanes).
pub fn table_bits(p: &Params) -> u64 {
    depth(p) as u64 * word_bits(p) as u64
}

/// Tables of the instance: the full table serves two lanes (a ROM's two read ports), the
/// interpolated one a lane (see the module documentation).
pub fn tables(p: &Params) -> u64 {
    (lanes(p) as u64).div_ceil(if is_interp(p) { 1 } else { 2 })
}

/// Input format (`DATA_IN_0_PRECISION_0/1`, signed).
fn input_format(p: &Params) -> FixedFormat {
    FixedFormat::signed(param(p, "DATA_IN_0_PRECISION_0") as u32, param(p, "DATA_IN_0_PRECISION_1") as i32)
}

/// The effective table range `[LO, HI]`: `[−TABLE_NEG, TABLE_POS]` clamped to the input code
/// range; with the odd shape the magnitudes `[0, min(TABLE_POS, 2^(W−1))]`.
pub fn effective_range(p: &Params) -> (i64, i64) {
    let f = input_format(p);
    if is_odd(p) {
        return (0, param(p, "TABLE_POS").min(-f.min_code()));
    }
    ((-param(p, "TABLE_NEG")).max(f.min_code()), param(p, "TABLE_POS").min(f.max_code()))
}

/// The table contents for the instance: `from_f64(gelu_f64(x · 2^-F), out)` for every code `x` of
/// the effective range, lowest first (word order of the ROM).
pub fn gelu_table(p: &Params) -> Vec<i64> {
    function_table(p, gelu_f64)
}

/// The narrowest table range `(lo, hi)` (codes, `lo ≤ 0 ≤ hi`; parameters `TABLE_NEG = −lo`,
/// `TABLE_POS = hi`) for the given formats such that for every input code outside it the tail
/// (0 below, `x` above) is within a quarter of an output LSB of GELU. `fi` is the (signed) input
/// format, `fo_frac` the output fractional bits.
pub fn table_range(fi: &FixedFormat, fo_frac: i32) -> (i64, i64) {
    table_range_of(fi, fo_frac, gelu_f64)
}

/// [`table_range`] for another function `f` of GELU's shape (e.g. [`gelu_tanh_f64`]).
pub fn table_range_of(fi: &FixedFormat, fo_frac: i32, f: impl Fn(f64) -> f64) -> (i64, i64) {
    let thr = 0.25 * FixedFormat::signed(16, fo_frac).lsb();
    let mut hi = fi.max_code();
    while hi > 0 && (to_f64(hi, fi) - f(to_f64(hi, fi))).abs() <= thr {
        hi -= 1;
    }
    let mut lo = fi.min_code();
    while lo < 0 && f(to_f64(lo, fi)).abs() <= thr {
        lo += 1;
    }
    (lo, hi)
}

/// The output code of input code `x` given the instance's table: the element function of the
/// lookup (gelu's, and tanh's with the odd shape: `±` the entry of `min(|x|, HI)`).
pub fn lookup_element(p: &Params, table: &[i64], x: i64) -> i64 {
    let (lo, hi) = effective_range(p);
    if is_odd(p) {
        if is_interp(p) {
            return interp_spec(p).element(table, x);
        }
        let y = table[x.abs().min(hi) as usize];
        return if x < 0 { neg_sat(y, &output_format(p, "DATA_OUT_0", true)) } else { y };
    }
    if x < lo {
        0
    } else if x > hi {
        cast_code(x as i128, param(p, "DATA_IN_0_PRECISION_1") as i32, &output_format(p, "DATA_OUT_0", true))
    } else if is_interp(p) {
        interp_spec(p).element(table, x)
    } else {
        table[(x - lo) as usize]
    }
}

/// LUT model of the direct-table gelu (`FORM = 0`) over [`lookup_features`], fitted to Yosys
/// 0.23 with `sim/examples/resource_fit.rs --only gelu` (least absolute relative error,
/// non-negative; 23 instances, median error 10 %).
const GELU_LUT: [f64; 9] = [4.012, 1.635, 0.0, 0.0, 0.0, 0.0, 0.237, 0.789, 1.683];
/// FF model of the direct-table gelu (same fit; median error 0 %).
const GELU_FF: [f64; 9] = [2.982, 2.963, 0.0, 0.0, 0.0, 0.0, 0.03, 0.028, 0.0];
/// LUT model of the interpolating gelu (`FORM = 1`), same features and fit (36 instances,
/// median error 17 %).
const GELU_INTERP_LUT: [f64; 9] = [0.0, 1.772, 0.0, 0.0, 0.0, 1.308, 1.291, 0.0, 1.946];
/// FF model of the interpolating gelu (same fit; median error 8 %).
const GELU_INTERP_FF: [f64; 9] = [0.0, 0.0, 5.863, 0.0, 0.0, 0.205, 0.157, 0.0, 0.029];

/// Where the tables go and the features of the LUT/FF model: `(bram18, features)` with features
/// `[1, lanes × IW, lanes × OW, lanes × YW, lanes × DW, lanes × IW × bands (interpolating: the
/// band comparators and shifts), logic-ROM LUTs (a read mux per port over the table's varying
/// bit columns), block-RAM output-mux bits, logic-ROM bits deeper than 32 words (past one LUT5
/// per bit)]`. The direct form
/// shares a table between two lanes (two read ports), the interpolating one has one per lane.
/// The tables' contents (`table`, from the parameters and the function) tell their constant
/// columns (which Yosys drops).
pub fn lookup_features(p: &Params, table: &[i64]) -> (u64, [u64; 9]) {
    use crate::resources::{pu, rom_placed, varying_bits};
    let n = lanes(p) as u64;
    let (iw, ow) = (pu(p, "DATA_IN_0_PRECISION_0"), pu(p, "DATA_OUT_0_PRECISION_0"));
    let d = rom_depth(p) as u64;
    let words = bank_words(p, table);
    let width = varying_bits(&words, word_bits(p));
    let per_table = if is_interp(p) { 1 } else { 2 };
    let (full, rest) = (n / per_table, n % per_table);
    let (mut bram, mut rom_lut, mut mux, mut deep) = (0, 0, 0, 0);
    for (count, ports) in [(full, per_table), (u64::from(rest > 0), rest)] {
        let (b, l, m) = rom_placed(d, width, ports);
        bram += count * b;
        rom_lut += count * l;
        mux += count * m;
        if l > 0 && d > 32 {
            deep += count * ports * width;
        }
    }
    let (yw, dw, bands) = if is_interp(p) {
        let spec = interp_spec(p);
        let (yw, dw) = spec.widths();
        (yw as u64, dw as u64, spec.bands().iter().filter(|b| b.end > b.start).count() as u64)
    } else {
        (0, 0, 0)
    };
    (bram, [1, n * iw, n * ow, n * yw, n * dw, n * iw * bands, rom_lut, mux, deep])
}

fn lanes(p: &Params) -> usize {
    port::lanes(p, "DATA_IN_0")
}

/// Cycles from an accepted input beat to its output beat: the register stages of `mase_gelu`
/// (`SHAPE = 1`: `|x|` and the compares, then the magnitude; `FORM = 1`: the band; then the
/// address, the ROM read and the ROM word; a banked table ([`banks`]): the word's copy;
/// `FORM = 1`: the product's operands, the product, the interpolated value, its rounding and its
/// overflow mode) plus the output skid buffer.
pub fn latency(p: &Params) -> u64 {
    2 * is_odd(p) as u64 + 3 + (banks(p) > 1) as u64 + 6 * is_interp(p) as u64 + 1
}

/// Flip-flops per lane that the pipeline has beyond the two-register one the FF model
/// ([`GELU_FF`], [`GELU_INTERP_FF`]) was fitted to, counted bit by bit from `mase_gelu`: the
/// address register, the ROM word's second register, the tail output (`OW` bits, SHAPE 0) and the
/// tail and sign flags carried through the added stages; `SHAPE = 1`: the clamped magnitude and
/// its sign, and the sign stage before them (`|x|`, its clamp flag and the sign); a banked table
/// ([`banks`]): the other banks' entries in the word register, its copy and the bank index; `FORM = 1`: the band stage (the coordinate, a one-hot band per non-empty band and
/// the flags), the offset's two more delays, the breakpoint's two registers (`2·YW`; the
/// product's operand and product registers are the DSP's own, as in softmax's model), rounded
/// (`YW − G + 3`) and cast (`OW`) registers (the band stage's input code replaces the old sum
/// stage's copy).
fn added_ff_per_lane(p: &Params) -> u64 {
    let ow = param(p, "DATA_OUT_0_PRECISION_0") as u64;
    let bits = |n: u64| 64 - n.leading_zeros() as u64;
    let aw = bits(depth(p) as u64 - 1).max(1);
    let word = word_bits(p) as u64;
    let odd = is_odd(p);
    // SHAPE 1: min(|x|, HI) (0..HI) and the sign, then two more copies of the sign.
    let mag = if odd { bits(effective_range(p).1 as u64) + 3 } else { 0 };
    // SHAPE 1's sign stage: |x| (the bits the clamp's select passes on: the magnitude's, all of
    // the input's with FORM 1's comparisons), |x| > HI and the sign.
    let iw = param(p, "DATA_IN_0_PRECISION_0") as u64;
    let sign_stage = match (odd, is_interp(p)) {
        (false, _) => 0,
        (true, true) => iw + 2,
        (true, false) => bits(effective_range(p).1 as u64) + 2,
    };
    if is_interp(p) {
        let spec = interp_spec(p);
        let (yw, rw) = (spec.widths().0 as u64, u64::from(spec.seg_max().max(1)));
        let nbands = spec.bands().iter().filter(|b| b.end > b.start).count() as u64;
        let rounded = yw + 3 - spec.guard as u64;
        let common = aw + 2 * rw + word + 2 * yw + nbands + rounded;
        if odd {
            // The band stage's magnitude and sign; the sign has six more copies (eight stages
            // where it had two).
            common + ow + 2 * mag + 2 + sign_stage
        } else {
            // The band stage's code (its input-code copy merges with it; the sum stage's copy
            // is gone) and two flags; seven carried tail outputs, five more tail flags.
            common + 8 * ow + 7
        }
    } else {
        // The word register holds an entry of every bank and is copied once more (with the tail
        // output and flags), the bank index travels four stages.
        let nb = banks(p) as u64;
        let copy = if odd { 1 } else { ow + 1 };
        let bank = if nb > 1 { (2 * nb - 1) * word + 4 * bits(nb - 1) + copy } else { 0 };
        aw + word + bank + if odd { mag + sign_stage } else { 2 * (ow + 1) }
    }
}

fn beats(p: &Params) -> usize {
    port::beats_per_row(p, "DATA_IN_0")
}

/// Number of table entries (ROM depth; at least 1, also for parameter sets that `validate`
/// rejects, so that the RTL still elaborates far enough to print the rejection).
fn depth(p: &Params) -> usize {
    let (lo, hi) = effective_range(p);
    if is_interp(p) {
        return interp_spec(p).depth();
    }
    (hi - lo + 1).max(1) as usize
}

impl Component for Gelu {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_port(p, "DATA_IN_0", 16)?;
        check_cast_output(p, "DATA_OUT_0", "DATA_IN_0", 32)?;
        check_range(p, "TABLE_NEG", 0, 32768)?;
        check_range(p, "TABLE_POS", 0, if is_odd(p) { 32768 } else { 32767 })?;
        check_range(p, "FORM", 0, 1)?;
        check_range(p, "SEG_BITS", 0, 12)?;
        check_range(p, "SEG_BITS_MID", 0, 12)?;
        check_range(p, "SEG_BITS_OUT", 0, 12)?;
        check_range(p, "BAND_MID", 0, BAND_NONE)?;
        check_range(p, "BAND_OUT", param(p, "BAND_MID"), BAND_NONE)?;
        check_range(p, "GUARD_BITS", 0, 8)?;
        if p.contains_key("SHAPE") {
            check_range(p, "SHAPE", 0, 1)?;
        }
        let bits = word_bits(p) as i64;
        if is_interp(p) && bits > MAX_WORD_BITS {
            return Err(format!("WORD_BITS must be between 1 and {MAX_WORD_BITS}, got {bits}"));
        }
        Ok(())
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        port::unary_streams(p)
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        vec![MemorySpec {
            name: "table".into(),
            param: "TABLE_MEM_FILE".into(),
            values: depth(p),
            depth: rom_depth(p),
            lanes: banks(p),
            lane_width: word_bits(p),
            signed: true,
        }]
    }

    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        layout_table("gelu", p, mem, values)
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        lookup_model("gelu", p, stim, gelu_f64)
    }

    fn cost(&self, p: &Params) -> Cost {
        let interp = is_interp(p) as u64;
        Cost {
            latency_cycles: latency(p),
            ii_cycles: beats(p) as u64,
            multipliers: interp * lanes(p) as u64,
            memory_bits: table_bits(p) * tables(p),
        }
    }

    /// [`lookup_resources`] of the instance's GELU table.
    fn resources(&self, p: &Params) -> crate::Resources {
        lookup_resources(p, &gelu_table(p))
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        let (lo16, hi16) = table_range(&FixedFormat::signed(16, 12), 12);
        vec![
            vec![],
            [input(2, 0), output(3, 1), row(5, 1)].concat(),
            // 16-bit formats with the recommended (narrowed) table, P = 2, odd beat count
            [input(16, 12), output(16, 12), row(6, 2), vec![("TABLE_NEG", -lo16), ("TABLE_POS", hi16)]]
                .concat(),
            // narrow table so both tails are hit often; 2-D blocks; RND + SAT_SYM
            [
                input(12, 8),
                output(10, 6),
                modes(2, 3),
                row(12, 4),
                rows(4, 2),
                vec![("TABLE_NEG", 600), ("TABLE_POS", 500)],
            ]
            .concat(),
            // output narrower than the tail values: upper tail saturates
            [input(9, 3), output(6, 2), row(9, 3), vec![("TABLE_NEG", 40), ("TABLE_POS", 30)]].concat(),
            // interpolated form, 16-bit, the binding's range and segments; P = 4: two shared ROMs
            [input(16, 12), output(16, 12), row(8, 4), interp(-lo16, hi16, 7)].concat(),
            // interpolated, P = 3 (the last ROM serves one lane), 8-bit, both tails hit
            [input(8, 4), output(8, 4), row(9, 3), interp(40, 30, 3)].concat(),
            // interpolated, rounding to nearest, symmetric saturation, wide output, 2-D blocks
            [input(12, 8), output(18, 9), modes(2, 3), row(12, 2), rows(4, 2), interp(600, 500, 5)].concat(),
            // interpolated with S = 0 (a table with guard bits) and an odd range
            [input(6, 2), output(7, 3), row(5, 1), interp(17, 13, 0)].concat(),
            // banded, 16-bit s16.12 -> s16.14 as the binding chooses it (finer output than input)
            {
                let (fi, fo) = (FixedFormat::signed(16, 12), FixedFormat::signed(16, 14));
                let (lo, hi) = table_range(&fi, 14);
                let b = choose(&InterpSpec::uniform(fi, fo, lo, hi, 0, GUARD_BITS), &gelu_f64);
                let (s, band) = (b.seg.map(|v| v as i64), b.band);
                [input(16, 12), output(16, 14), row(6, 2), interp(-lo, hi, s[0]), bands(s[1], s[2], band)]
                    .concat()
            },
            // banded, thresholds off the segment grid, middle segments finer than the inner ones,
            // both tails hit; RND + SAT_SYM, 2-D blocks
            [
                input(12, 8),
                output(12, 9),
                modes(2, 3),
                row(12, 4),
                rows(4, 2),
                interp(600, 500, 4),
                bands(2, 7, [100, 301]),
            ]
            .concat(),
            // banded, empty inner band, outer band past the range on one side, P = 3
            [input(8, 4), output(8, 5), row(9, 3), interp(40, 30, 2), bands(3, 4, [0, 20])].concat(),
            // banded, single-code middle segments (S = 0), wide outer ones
            [input(10, 6), output(10, 6), row(5, 1), interp(200, 150, 4), bands(0, 6, [16, 50])].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            input(17, 4),
            vec![("TABLE_NEG", 32769)],
            vec![("TABLE_POS", 40000)],
            modes(0, 4),
            row(8, 3),
            vec![("FORM", 2)],
            vec![("FORM", 1), ("SEG_BITS", 13)],
            vec![("FORM", 1), ("GUARD_BITS", 9)],
            vec![("FORM", 1), ("SEG_BITS_MID", 13)],
            vec![("FORM", 1), ("SEG_BITS_OUT", -1)],
            vec![("FORM", 1), ("BAND_MID", 32769)],
            vec![("FORM", 1), ("BAND_MID", 100), ("BAND_OUT", 99)],
        ]
    }

    fn generated_memory(&self, p: &Params, mem: &str) -> Option<Vec<i64>> {
        (mem == "table").then(|| gelu_table(p))
    }

    fn random_stimulus(&self, p: &Params, rows: usize, rng: &mut ChaCha8Rng) -> Stimulus {
        let f = input_format(p);
        let n = rows * beats(p) * lanes(p);
        let mut stim = Stimulus::default();
        stim.inputs
            .insert("data_in_0".into(), (0..n).map(|_| rng.gen_range(f.min_code()..=f.max_code())).collect());
        stim.memories.insert("table".into(), gelu_table(p));
        stim
    }
}

/// The resource model of a lookup instance whose table holds `table`: the tables where Yosys puts
/// a ROM ([`lookup_features`]); FORM 1: one `DW × M` interpolation multiplier per lane
/// ([`crate::resources::mul_dsps`]); index arithmetic and the output register per lane (fitted
/// to Yosys 0.23 with `sim/examples/resource_fit.rs`).
pub fn lookup_resources(p: &Params, table: &[i64]) -> crate::Resources {
    use crate::resources::{fitted, mul_dsps};
    let n = lanes(p) as u64;
    let dsp = if is_interp(p) {
        let spec = interp_spec(p);
        let (_, dw) = spec.widths();
        let m = spec.seg_max();
        let rw = m.max(1);
        // Only the product's bits from M up feed the step (Yosys narrows it to M + DW).
        n * mul_dsps(dw, rw + 1, true, true, (dw + rw + 1).min(m + dw))
    } else {
        0
    };
    let (bram18, x) = lookup_features(p, table);
    let (lut, ff) =
        if is_interp(p) { (&GELU_INTERP_LUT, &GELU_INTERP_FF) } else { (&GELU_LUT, &GELU_FF) };
    let ff = fitted(ff, &x) + lanes(p) as u64 * added_ff_per_lane(p);
    crate::Resources { lut: fitted(lut, &x), ff, dsp, bram18, lutram: 0 }
}


/// The memory layout of a lookup instance ([`bank_words`]: one table entry per ROM word, or for a
/// banked table one entry of each bank per word); messages name `component`.
pub fn layout_table(component: &str, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
    if mem != "table" {
        return Err(format!("component `{component}` has no memory `{mem}`; its memory is `table`"));
    }
    if values.len() != depth(p) {
        return Err(format!("{component} memory `table`: expected {} entries, got {}", depth(p), values.len()));
    }
    Ok(bank_words(p, values))
}

/// `FORM = 0`: table entries per bank of a deep table (`mase_gelu` `BANK_WORDS`): a 2048-word bank
/// fills a column of ECP5 block RAMs in their 2K × 9 mode, so reading one needs no read mux after
/// the block RAMs.
pub const BANK_WORDS: usize = 2048;

/// Banks of the table: `FORM = 0` tables deeper than [`BANK_WORDS`] are read as banks side by side
/// (one ROM word holds an entry of each, the bank is picked from flip-flops after the read), so
/// that the block RAMs' clock-to-out is not followed by a wide read mux; otherwise 1.
pub fn banks(p: &Params) -> usize {
    let d = depth(p);
    if !is_interp(p) && d > BANK_WORDS {
        d.div_ceil(BANK_WORDS)
    } else {
        1
    }
}

/// ROM words (rows of the `.mem` file): [`BANK_WORDS`] for a banked table, else the table depth.
pub fn rom_depth(p: &Params) -> usize {
    if banks(p) > 1 {
        BANK_WORDS
    } else {
        depth(p)
    }
}

/// The ROM words of `table` ([`rom_depth`] words of [`banks`] lanes): word `r` lane `b` holds
/// entry `r + b · BANK_WORDS` (0 past the table's end).
pub fn bank_words(p: &Params, table: &[i64]) -> Vec<Vec<i64>> {
    let (nb, rows) = (banks(p), rom_depth(p));
    if nb == 1 {
        return table.iter().map(|&v| vec![v]).collect();
    }
    (0..rows).map(|r| (0..nb).map(|b| table.get(r + b * BANK_WORDS).copied().unwrap_or(0)).collect()).collect()
}

/// The bit-exact model of a lookup instance: [`lookup_element`] of every input element, with the
/// stimulus' `table` or, without one, the table of `f` ([`function_table`]); messages name
/// `component`.
pub fn lookup_model(component: &str, p: &Params, stim: &Stimulus, f: fn(f64) -> f64) -> Result<StreamValues, String> {
    let x = stim.input(component, "data_in_0")?;
    let generated;
    let table = match stim.memories.get("table") {
        Some(t) => t,
        None => {
            generated = function_table(p, f);
            &generated
        }
    };
    if table.len() != depth(p) {
        return Err(format!(
            "{component} model: memory `table` has {} entries, expected {}",
            table.len(),
            depth(p)
        ));
    }
    Ok(data_out_0(x.iter().map(|&v| lookup_element(p, table, v)).collect()))
}


impl Binding for Gelu {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let x = v.signed_input(0, 16)?;
        let out = v.out_format()?;
        // The narrowest table whose 0 / identity tails stay within a quarter output LSB of the
        // function (the component's recommended range).
        let func = approximation(v);
        let (lo, hi) = node_table_range(&x, out.frac, func);
        let interp = node_form(v, "gelu", (hi - lo + 1) as u64 * out.width as u64)?;
        let spec = if interp {
            node_choose(&InterpSpec::uniform(x, out, lo, hi, 0, GUARD_BITS), func)
        } else {
            InterpSpec::uniform(x, out, lo, hi, 7, GUARD_BITS)
        };
        let mut o = crate::binding::Overrides::default();
        o.tensor("DATA_IN_0", &x, &v.in_shape(0)?, par.p_in).output(&out);
        for (k, val) in spec.table_params(interp) {
            o.set(k, val);
        }
        o.done()
    }

    fn forms(&self) -> &'static [&'static str] {
        FORMS
    }

    /// The tanh form uses the component's table lookup with its own table.
    fn data_memories(&self, v: &NodeView, p: &Params) -> mase_ir::Result<Vec<(String, Vec<i64>)>> {
        Ok(match approximation(v) {
            TableFn::GeluTanh => vec![("table".to_string(), function_table(p, gelu_tanh_f64))],
            TableFn::Gelu | TableFn::Tanh => Vec::new(),
        })
    }
}

/// Whether a lookup node takes the interpolated form: its `[hardware.nodes.NAME] form`, or by
/// default when the full table (`table_bits`, one ROM) exceeds [`TABLE_BUDGET_BITS`] (the full
/// table is exact to the output rounding; the interpolated one within 1 LSB). Messages name
/// `component`.
pub fn node_form(v: &NodeView, component: &str, table_bits: u64) -> mase_ir::Result<bool> {
    match v.node.meta.hardware.form.as_deref() {
        Some("table") => Ok(false),
        Some("interp") => Ok(true),
        Some(other) => Err(v.node.error(format!(
            "hardware form \"{other}\" is not a {component} form; supported: {}",
            FORMS.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ")
        ))),
        None => Ok(table_bits > TABLE_BUDGET_BITS),
    }
}

/// The forms `[hardware.nodes.NAME] form = "…"` selects: `FORM = 0` and `FORM = 1`.
pub const FORMS: &[&str] = &["table", "interp"];

/// Largest full table (bits of one ROM) the binding uses by default; wider formats get the
/// interpolated form (16 kbit: one 18 kbit block RAM, or a 2^16-entry table shrunk 64 times).
pub const TABLE_BUDGET_BITS: u64 = 16 * 1024;

/// Guard bits the binding gives the interpolated form (breakpoint rounding and the floor of the
/// interpolation then stay within 1/16 of an output LSB).
pub const GUARD_BITS: u32 = 4;

/// Overrides of the interpolated form: table range `[-neg, pos]`, `SEG_BITS = seg`.
fn interp(neg: i64, pos: i64, seg: i64) -> Vec<(&'static str, i64)> {
    vec![("TABLE_NEG", neg), ("TABLE_POS", pos), ("FORM", 1), ("SEG_BITS", seg)]
}

/// Overrides of the banded interpolated form (with [`interp`], which sets the inner segment
/// bits): middle and outer segment bits, band thresholds `[BAND_MID, BAND_OUT]`.
fn bands(mid: i64, out: i64, band: [i64; 2]) -> Vec<(&'static str, i64)> {
    vec![("SEG_BITS_MID", mid), ("SEG_BITS_OUT", out), ("BAND_MID", band[0]), ("BAND_OUT", band[1])]
}

/// The function of a gelu node (its GELU form).
fn approximation(v: &NodeView) -> TableFn {
    match &v.node.op {
        mase_ir::Op::Gelu { approximate: mase_ir::op::GeluApprox::Tanh } => TableFn::GeluTanh,
        _ => TableFn::Gelu,
    }
}

/// A memo of the binding's searches, keyed by formats and range.
pub(crate) type Memo<K, V> = std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<K, V>>>;

/// `compute()` memoized in `memo` under `key`: the parallelism search binds a node once per
/// candidate, and these searches evaluate the function at every code of a range.
pub(crate) fn memoized<K, V>(memo: &'static Memo<K, V>, key: K, compute: impl FnOnce() -> V) -> V
where
    K: Eq + std::hash::Hash + Send,
    V: Copy + Send,
{
    let memo = memo.get_or_init(Default::default);
    if let Some(r) = memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return *r;
    }
    let r = compute();
    memo.lock().unwrap_or_else(|e| e.into_inner()).insert(key, r);
    r
}

/// [`choose`] for a node's formats and function, memoized (it evaluates every code of the range
/// for each candidate).
pub fn node_choose(spec: &InterpSpec, func: TableFn) -> InterpSpec {
    type Key = (u32, i32, u32, i32, i64, i64, i64, i64, u32, bool, TableFn);
    static MEMO: Memo<Key, InterpSpec> = std::sync::OnceLock::new();
    let (fi, fo) = (spec.fi, spec.fo);
    let key = (
        fi.width,
        fi.frac,
        fo.width,
        fo.frac,
        fo.rounding as i64,
        fo.overflow as i64,
        spec.lo,
        spec.hi,
        spec.guard,
        spec.odd,
        func,
    );
    memoized(&MEMO, key, || choose(spec, &func.f()))
}

/// The table range for an input format and output fraction, memoized: the parallelism search
/// asks for it once per candidate, and it scans up to 2^16 function values.
fn node_table_range(x: &FixedFormat, out_frac: i32, func: TableFn) -> (i64, i64) {
    static MEMO: Memo<(u32, i32, i32, TableFn), (i64, i64)> = std::sync::OnceLock::new();
    memoized(&MEMO, (x.width, x.frac, out_frac, func), || table_range_of(x, out_frac, func.f()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    #[test]
    fn erf_matches_known_values() {
        // erf(1), erf(0.5), erf(2) to 15 digits (Abramowitz & Stegun table 7.1 values).
        for (z, want) in
            [(1.0, 0.842_700_792_949_715), (0.5, 0.520_499_877_813_047), (2.0, 0.995_322_265_018_953)]
        {
            assert!((erf(z) - want).abs() < 1e-14, "erf({z}) = {}", erf(z));
            assert!((erf(-z) + want).abs() < 1e-14);
        }
        assert!((exp_neg(1.0) - (-1.0f64).exp()).abs() < 1e-15);
    }

    /// Worst error (output LSBs) over every input code whose GELU lies in the output range, of
    /// the instance the binding would choose for these formats and form.
    fn worst_error(fi: FixedFormat, fo: FixedFormat, rounding: i64, form: i64) -> (f64, Params) {
        let fo = fo.with_modes(
            crate::components::cast::rounding_from_code(rounding).expect("rounding code"),
            Default::default(),
        );
        let (lo, hi) = table_range(&fi, fo.frac);
        let spec = choose(&InterpSpec::uniform(fi, fo, lo, hi, 0, GUARD_BITS), &gelu_f64);
        let mut ov = vec![
            ("DATA_IN_0_PRECISION_0", fi.width as i64),
            ("DATA_IN_0_PRECISION_1", fi.frac as i64),
            ("DATA_OUT_0_PRECISION_0", fo.width as i64),
            ("DATA_OUT_0_PRECISION_1", fo.frac as i64),
            ("DATA_OUT_0_ROUNDING", rounding),
        ];
        ov.extend(spec.table_params(form == 1));
        let p = resolve_params(&Gelu, &ov).unwrap();
        let table = gelu_table(&p);
        let (rlo, rhi) = (to_f64(fo.min_code(), &fo), to_f64(fo.max_code(), &fo) + fo.lsb());
        let mut worst = 0.0f64;
        for x in fi.min_code()..=fi.max_code() {
            let r = gelu_f64(to_f64(x, &fi));
            if r >= rlo && r < rhi {
                let y = to_f64(lookup_element(&p, &table, x), &fo);
                worst = worst.max((y - r).abs() / fo.lsb());
            }
        }
        (worst, p)
    }

    /// Every 16-bit input format with 8..14 fractional bits, outputs of 16 bits with two fewer
    /// to two more fractional bits (within 0..15), truncation and rounding to nearest: the
    /// binding's interpolated table is within 1 LSB over every input code in ≤ 16 kbit.
    #[test]
    fn interpolated_form_is_within_one_lsb_over_every_code_in_16_kbit() {
        let mut formats = vec![(8, 4, 8, 4), (8, 5, 8, 6)];
        for fin in 8..=14 {
            for fout in (fin - 2).max(0)..=(fin + 2).min(15) {
                formats.push((16, fin, 16, fout));
            }
        }
        for (wi, fin, wo, fout) in formats {
            for rounding in [0, 2] {
                let (fi, fo) = (FixedFormat::signed(wi, fin), FixedFormat::signed(wo, fout));
                let (err, p) = worst_error(fi, fo, rounding, 1);
                let bits = table_bits(&p);
                assert!(err <= 1.0, "s{wi}.{fin} -> s{wo}.{fout} rounding {rounding}: {err} LSB");
                assert!(
                    bits <= 16 * 1024,
                    "s{wi}.{fin} -> s{wo}.{fout} rounding {rounding}: {bits} table bits"
                );
                // the full table of the same formats is no better than 1 LSB either
                if wi == 8 {
                    let (full, _) = worst_error(fi, fo, rounding, 0);
                    assert!(full <= 1.0, "full table s{wi}.{fin}: {full}");
                }
            }
        }
    }

    /// Bands with every segment size the same are the uniform table, word for word, and the
    /// banded model agrees with the unpacked interpolation on every code.
    #[test]
    fn uniform_bands_equal_one_band() {
        let (fi, fo) = (FixedFormat::signed(12, 8), FixedFormat::signed(12, 8));
        let (lo, hi) = table_range(&fi, 8);
        let one = InterpSpec::uniform(fi, fo, lo, hi, 5, GUARD_BITS);
        let five = InterpSpec { band: [96, 704], ..one };
        assert_eq!(one.depth(), five.depth());
        assert_eq!(one.table(&gelu_f64), five.table(&gelu_f64));
        let mixed = InterpSpec { seg: [3, 5, 8], band: [100, 700], ..one };
        assert!(mixed.depth() < InterpSpec::uniform(fi, fo, lo, hi, 3, GUARD_BITS).depth());
        assert_eq!(mixed.bands().iter().map(|b| b.words).sum::<i64>() as usize, mixed.depth());
    }

    #[test]
    fn tails_agree_with_the_full_table_within_a_quarter_lsb() {
        let fi = FixedFormat::signed(12, 8);
        let (lo, hi) = table_range(&fi, 8);
        assert!(lo > fi.min_code() && hi < fi.max_code(), "range ({lo}, {hi}) should be narrowed");
        let full =
            resolve_params(&Gelu, &[("DATA_IN_0_PRECISION_0", 12), ("DATA_IN_0_PRECISION_1", 8)]).unwrap();
        let ft = gelu_table(&full);
        for x in [fi.min_code(), lo - 1, hi + 1, fi.max_code()] {
            let exact = ft[(x - fi.min_code()) as usize];
            let narrow = resolve_params(
                &Gelu,
                &[
                    ("DATA_IN_0_PRECISION_0", 12),
                    ("DATA_IN_0_PRECISION_1", 8),
                    ("TABLE_NEG", -lo),
                    ("TABLE_POS", hi),
                ],
            )
            .unwrap();
            let y = lookup_element(&narrow, &gelu_table(&narrow), x);
            assert!((y - exact).abs() <= 1, "x = {x}: tail {y}, table {exact}");
        }
    }

    #[test]
    fn deep_tables_are_laid_out_as_banks_side_by_side() {
        // 12-bit codes: 4096 entries, two banks; word r holds entries r and r + 2048.
        let p = resolve_params(&Gelu, &[("DATA_IN_0_PRECISION_0", 12), ("DATA_IN_0_PRECISION_1", 8)]).unwrap();
        assert_eq!((depth(&p), banks(&p), rom_depth(&p)), (4096, 2, BANK_WORDS));
        let table: Vec<i64> = (0..4096).collect();
        let words = layout_table("gelu", &p, "table", &table).unwrap();
        assert_eq!(words.len(), BANK_WORDS);
        assert_eq!((&words[0], &words[2047]), (&vec![0, 2048], &vec![2047, 4095]));
        // A partial last bank is padded with zeros; a table that fits one bank is not banked.
        let q = resolve_params(&Gelu, &[("DATA_IN_0_PRECISION_0", 12), ("TABLE_NEG", 1000)]).unwrap();
        assert_eq!((depth(&q), banks(&q)), (3048, 2));
        let words = layout_table("gelu", &q, "table", &(1..=3048).collect::<Vec<_>>()).unwrap();
        assert_eq!((&words[999], &words[1000]), (&vec![1000, 3048], &vec![1001, 0]));
        let small = resolve_params::<&str>(&Gelu, &[]).unwrap();
        assert_eq!((banks(&small), rom_depth(&small)), (1, depth(&small)));
        let mem = &Gelu.memories(&p)[0];
        assert_eq!((mem.values, mem.depth, mem.lanes), (4096, BANK_WORDS, 2));
    }
}
