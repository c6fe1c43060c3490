//! `layer_norm`: LayerNorm over the innermost dimension (`rtl/mase_layer_norm.sv`),
//! `y = (x − mean)/sqrt(var + eps)·gamma + beta`, gamma / beta from ROMs, one exact integer
//! algorithm shared by this model and the RTL.
//!
//! # The algorithm (per row of `D` input codes `x_i`, `F` fractional bits)
//!
//! 1. Exact sums `S1 = Σ x_i`, `S2 = Σ x_i²`.
//! 2. No division: `V = D·S2 − S1²` (`= D²·var` at `2F` fractional bits, exact, ≥ 0) and the
//!    centred values `c_i = D·x_i − S1` (`= D·(x_i − mean)` at `F` fractional bits, exact).
//! 3. `eps = EPS·2^-EPS_FRAC` (integer code `EPS ≥ 1`). Both terms are aligned, exactly, to
//!    `FQ = max(2F, EPS_FRAC rounded up to even)` fractional bits:
//!    `Q = V·2^(FQ−2F) + D²·EPS·2^(FQ−EPS_FRAC)` (`= D²·(var + eps)`, `Q ≥ 1`).
//! 4. `1/sqrt(Q)`: `L` = bit length of `Q`, `k = ceil(L/2)`, mantissa
//!    `u = floor(Q·2^(MF−2k))` (`MF` = [`MANT_FRAC`] fractional bits, `u ∈ [1/4, 1)`);
//!    seed `y = T[u >> (MF − TB)]·2^(YF−TF)` from the [`rsqrt_table`] (`TB` = [`TABLE_BITS`]
//!    index bits, entries at `TF` = [`TABLE_FRAC`] bits), then [`NEWTON_STEPS`] integer Newton
//!    steps at `YF` = [`RSQRT_FRAC`] bits, each
//!    `s = ⌊y²/2^YF⌋, t = ⌊u·s/2^MF⌋, y ← ⌊y·(3·2^YF − t)/2^(YF+1)⌋`.
//!    Then `1/sqrt(Q) ≈ y·2^-(YF+k)`.
//! 5. Normalised value at `NF = NORM_FRAC` bits: `n_i = ⌊c_i·y·2^-(k + YF − NF + F − FQ/2)⌋`
//!    (floor; `|n_i| < sqrt(D)·2^NF`).
//! 6. `acc_i = n_i·gamma_i + beta_i` exact (aligned to `max(NF + frac_gamma, frac_beta)`), one
//!    [`cast_code`] into the `DATA_OUT_0` format and modes.
//!
//! # Hardware
//!
//! Input rows go into a ring of `NSLOT` row slots ([`slots`]) while their sums accumulate; at the
//! end of a row the statistics enter a fully pipelined `1/sqrt` unit ([`RSQRT_STAGES`] stages);
//! the normalising pipeline reads a slot once its statistics are ready. With
//! `NSLOT = 2 + ceil((SD − 1 + FOLD)/(FOLD·D/P))` (`SD`: [`stats_delay`]) the next rows'
//! statistics accumulate while the current one is normalised, so the II is `FOLD·D/P` cycles per
//! row for every row length.
//!
//! For timing (≥ 125 MHz on an ECP5-6) every product wider than 18×18 bits is split by the RTL
//! into 18×18-bit partial products in the DSPs' own output registers, added in pairs into
//! registers before the product is summed (at full rate three cycles from registered operands;
//! folded, two from the choice of operands, which go from a mux of registers straight into the
//! DSPs), the constant multiplies by `D` are balanced shift-add trees, and the lane sums are
//! balanced adder trees between registers.
//!
//! `FOLD` ≥ 3 is the same algorithm at `1/FOLD` of the rate with `P + 1` multipliers instead of
//! `3P + 7`: one multiplier per lane serves the square, `c·y` and `n·gamma` in turn (input taken
//! one beat every `FOLD` cycles, the normalising pipeline stepping once every `FOLD` cycles), and
//! the `1/sqrt` unit is one multiplier stepping through a row's multiplies, one step per beat
//! period (one row at a time: `FOLD·D/P ≥` [`min_row_cycles`]).

use mase_ir::fixed::cast_code;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::cast::output_format;
use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    check_memory_len,
    data_out_0, uniform_stimulus, value_range, Component, Cost, Info, MemorySpec, ParamSpec, Params,
    Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{bias, input, layer_formats, modes, output, row};
use crate::port::{check_cast_output, check_row_shape, unary_streams};
use crate::resources::mul_dsps;
use crate::{check_equal, check_range, output_modes, param, param_list, port_format, port_shape, same_shape};

/// The layer_norm component.
pub struct LayerNorm;

/// `YF`: fractional bits of the reciprocal square root mantissa `y` (value in (1, 2]).
pub const RSQRT_FRAC: u32 = 24;
/// `MF`: fractional bits of the normalised mantissa `u ∈ [1/4, 1)`.
pub const MANT_FRAC: u32 = 26;
/// `TB`: table index bits (the top bits of `u`; indices 32..128 occur).
pub const TABLE_BITS: u32 = 7;
/// `TF`: fractional bits of a table entry.
pub const TABLE_FRAC: u32 = 10;
/// Newton steps after the table.
pub const NEWTON_STEPS: usize = 2;
/// Pipeline stages of the RTL's fully pipelined `1/sqrt` unit (`FOLD = 1`: `S1²` partials, their
/// pair sums and `D·S2` aligned, `S1²`, `Q`, `Q`'s 8-bit groups, the top group, `k`, `u`, the
/// seed, and per Newton step `y²` partials, pair sums, `s`, `u·s` partials, pair sums, `t`,
/// `3·2^YF − t`, `y·f` partials, pair sums, `y`: every product three stages from its operands).
pub const RSQRT_STAGES: usize = 29;
/// Newton / statistics steps of the RTL's sequential `1/sqrt` unit (`FOLD ≥ 3`), one per beat
/// period.
pub const RSQRT_STEPS: i64 = 11;
/// Largest `FOLD` (cycles per beat of the folded form).
pub const MAX_FOLD: i64 = 16;
/// The folds the binding offers besides full rate: 3 (`P + 1` multipliers) and 4 (`P`: the
/// `1/sqrt` unit borrows lane 0's multiplier).
pub const OFFERED_FOLDS: [usize; 2] = [3, 4];
/// Largest internal width (bits) the parameters may imply.
pub const MAX_INTERNAL_BITS: i64 = 120;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "layer_norm",
    description:
        "LayerNorm over dim 0: exact sums, table + Newton 1/sqrt, gamma/beta ROMs, output cast, full rate",
    dependencies: &[
        "mase_assert.svh",
        "mase_layer_norm_rsqrt_lut.sv",
        "mase_delay.sv",
        "mase_dsp_mul.sv",
        "mase_cast_core.sv",
        "mase_skid_buffer.sv",
    ],
    buffers_whole_unit: true,
    params: param_list![
        port_format!(
            "DATA_IN_0",
            16,
            "input element bits (1..32, signed)",
            8,
            "input fractional bits (-32..32)"
        ),
        port_shape!(
            "DATA_IN_0",
            [64, 1, 4, 1],
            [
                "D: elements per row, normalised together (1..4096)",
                "rows per tensor (any number of rows may stream)",
                "P: elements per beat (1..256, divides D)",
                "rows per beat (must be 1)",
            ]
        ),
        port_format!("WEIGHT", 16, "gamma bits (1..32, signed)", 14, "gamma fractional bits (-32..32)"),
        [
            ParamSpec::same_as(
                "WEIGHT_TENSOR_SIZE_DIM_0",
                "DATA_IN_0_TENSOR_SIZE_DIM_0",
                "gamma elements (= D)"
            ),
            ParamSpec::same_as(
                "WEIGHT_PARALLELISM_DIM_0",
                "DATA_IN_0_PARALLELISM_DIM_0",
                "gamma per ROM word (= P)"
            ),
        ],
        port_format!(
            "BIAS",
            16,
            "beta bits (1..32, signed)",
            12,
            "beta fractional bits (-32..32, within 32 of NORM_FRAC + gamma frac)"
        ),
        [
            ParamSpec::same_as(
                "BIAS_TENSOR_SIZE_DIM_0",
                "DATA_IN_0_TENSOR_SIZE_DIM_0",
                "beta elements (= D)"
            ),
            ParamSpec::same_as(
                "BIAS_PARALLELISM_DIM_0",
                "DATA_IN_0_PARALLELISM_DIM_0",
                "beta per ROM word (= P)"
            ),
        ],
        port_format!("DATA_OUT_0", 16, "output element bits (1..64, signed)", 12, "output fractional bits"),
        same_shape!(
            "DATA_OUT_0",
            "DATA_IN_0",
            [
                "output row length (= D)",
                "output rows (= input rows)",
                "outputs per beat (= P)",
                "output rows per beat (= 1)"
            ]
        ),
        output_modes!("DATA_OUT_0", "output rounding", "output overflow"),
        [
            ParamSpec::value("EPS", 687195, "eps as an integer code: eps = EPS * 2^-EPS_FRAC (1..2^31-1)"),
            ParamSpec::value(
                "EPS_FRAC",
                36,
                "fractional bits of EPS (0..64); default eps = 687195*2^-36 ≈ 1e-5"
            ),
            ParamSpec::value(
                "NORM_FRAC",
                16,
                "NF: fractional bits of the normalised value before gamma (1..32)"
            ),
            ParamSpec::value(
                "FOLD",
                1,
                "cycles per beat: 1 (full rate, 3P + 7 multipliers) or 3..16 (P + 1 multipliers; FOLD·D/P >= 34 at 3, 47 at 4, 59 at 5, 11·FOLD − 1 above)"
            ),
        ],
    ],
    ..Info::DEFAULT
};

/// `ceil(log2(n))` for `n ≥ 1` (SV `$clog2`, 0 for 1).
fn clog2(n: i64) -> i64 {
    (n.max(1) as u64).next_power_of_two().trailing_zeros() as i64
}

/// LUT model of layer_norm (ROMs aside) over `[1, lanes × input bits, lanes × output bits,
/// lanes × gamma bits, lanes × ceil(log2 D), folded, folded × lanes, statistics width QW]`
/// (`folded` = `FOLD > 1`), fitted to the 42 instances of `sim/examples/resource_fit.rs --only
/// layer_norm` (Yosys 0.23; least absolute relative error, non-negative: median error 4 %,
/// worst 21 %) before the multipliers were split for timing; the unfolded form's intercept then
/// moved by the 240 LUTs the split products' partial sums and the deeper 1/sqrt pipeline added
/// on the `resources` test's instance (a refit with `resource_fit` is due).
const LAYER_NORM_LUT: [f64; 8] = [400.492, 8.05, 4.309, 0.0, 24.827, -240.0, 126.214, 6.344];
/// FF model of layer_norm over the same features (least squares, QW unused: median error 6 %,
/// worst 33 %).
const LAYER_NORM_FF: [f64; 8] = [269.922, -2.407, 25.488, -13.682, 6.053, 114.506, 68.066, 0.0];
/// Slice widths of a signed `w`-bit operand split like the RTL's `MASE_LAYER_NORM_MUL`: 17-bit
/// unsigned slices (18-bit signed operands) below a signed top slice of at most 18 bits.
fn slices(w: u32) -> Vec<u32> {
    if w <= 18 {
        return vec![w];
    }
    let n = (w - 2) / 17 + 1;
    let mut v = vec![18; (n - 1) as usize];
    v.push(w - 17 * (n - 1));
    v
}

/// DSPs of an `a`×`b`-bit product split like the RTL's `MASE_LAYER_NORM_MUL`, one multiplier per
/// pair of slices (each by [`mul_dsps`]).
fn split_dsps(a: u32, b: u32) -> u64 {
    let (sa, sb) = (slices(a), slices(b));
    sa.iter().flat_map(|&x| sb.iter().map(move |&y| mul_dsps(x, y, true, true, x + y))).sum()
}

/// DSPs of the square of a split `a`-bit operand: Yosys merges the two equal cross products of
/// each pair of slices, so one multiplier per unordered pair.
fn split_square_dsps(a: u32) -> u64 {
    let s = slices(a);
    let pair = |(i, j): (usize, usize)| mul_dsps(s[i], s[j], true, true, s[i] + s[j]);
    (0..s.len()).flat_map(|i| (i..s.len()).map(move |j| (i, j))).map(pair).sum()
}

/// Operand widths of layer_norm's products (the RTL's localparams): input `w`, `gamma` `gw`,
/// lanes, the normalised value `nnw`, and `S1W`, `CW`, `YW + 1` (y with its zero sign bit),
/// `SW + 1`, `MF + 1`.
struct ProductWidths {
    w: u32,
    gw: u32,
    lanes: u64,
    ld: u32,
    nnw: u32,
    s1w: u32,
    cw: u32,
    yw1: u32,
    sw1: u32,
    mf1: u32,
}

impl ProductWidths {
    fn of(p: &Params) -> Self {
        let w = param(p, "DATA_IN_0_PRECISION_0") as u32;
        let ld = clog2(param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0")) as u32;
        ProductWidths {
            w,
            gw: param(p, "WEIGHT_PRECISION_0") as u32,
            lanes: param(p, "DATA_IN_0_PARALLELISM_DIM_0") as u64,
            ld,
            nnw: (param(p, "NORM_FRAC") as u32) + ld.div_ceil(2) + 2,
            s1w: w + ld + 1,
            cw: w + ld + 2,
            yw1: RSQRT_FRAC + 3,
            sw1: RSQRT_FRAC + 5,
            mf1: MANT_FRAC + 1,
        }
    }
}

/// DSPs of the unfolded layer_norm: every product of the RTL split into 18×18-bit partial
/// products ([`split_dsps`]) at the operand widths Yosys keeps: per lane `x²`, `c·y` (y with a
/// zero sign bit) and `n·gamma`; `S1²`; per Newton step `y²`, `u·s` and `y·f` (unsigned values
/// with a zero sign bit). The first `y²` squares the table seed, whose low `YF − TF` bits are
/// constant zeros Yosys drops: its low slice keeps the seed's bits below bit 17 only. Squares
/// have one multiplier per unordered pair of slices ([`split_square_dsps`]).
fn unfolded_dsps(p: &Params) -> u64 {
    let ProductWidths { w, gw, lanes, nnw, s1w, cw, yw1, sw1, mf1, .. } = ProductWidths::of(p);
    // The seed y0 << (YF - TF): the slice below bit 17 keeps 17 - (YF - TF) bits and a sign bit.
    let seed_low = 17 - (RSQRT_FRAC - TABLE_FRAC) + 1;
    let seed_sq = mul_dsps(seed_low, seed_low, true, true, 2 * seed_low)
        + mul_dsps(seed_low, yw1 - 17, true, true, seed_low + yw1 - 17)
        + mul_dsps(yw1 - 17, yw1 - 17, true, true, 2 * (yw1 - 17));
    let newton = seed_sq + split_square_dsps(yw1) + 2 * split_dsps(mf1, sw1) + 2 * split_dsps(yw1, sw1);
    let lane = split_square_dsps(w) + split_dsps(cw, yw1) + split_dsps(nnw, gw);
    split_square_dsps(s1w) + newton + lanes * lane
}

/// `cost(a, b)` summed over the folded layer_norm's multipliers (`a`×`b` operand bits): one per
/// lane as wide as the widest product it serves (lane 0's also the 1/sqrt unit's at `FOLD ≥ 4`),
/// and the unit's own at `FOLD = 3`.
fn folded_mults(p: &Params, cost: impl Fn(u32, u32) -> u64) -> u64 {
    let ProductWidths { w, gw, lanes, nnw, s1w, cw, yw1, sw1, mf1, .. } = ProductWidths::of(p);
    let (la, lb) = (cw.max(nnw).max(w), yw1.max(gw).max(w));
    let (uma, umb) = (s1w.max(yw1).max(mf1), s1w.max(yw1).max(sw1));
    if param(p, "FOLD") == 3 {
        lanes * cost(la, lb) + cost(uma, umb)
    } else {
        (lanes - 1) * cost(la, lb) + cost(la.max(uma), lb.max(umb))
    }
}

/// DSPs of the folded layer_norm: [`split_dsps`] of each of its multipliers ([`folded_mults`]).
fn folded_dsps(p: &Params) -> u64 {
    folded_mults(p, split_dsps)
}

/// Flip-flops of the registered pair sums of an `a`×`b`-bit product of `pw` bits split like the
/// RTL's `MASE_LAYER_NORM_MUL`: `ceil(NA·NB/2)` registers of `pw` bits.
fn pair_sum_ff(a: u32, b: u32, pw: u32) -> u64 {
    let n = (slices(a).len() * slices(b).len()) as u64;
    n.div_ceil(2) * u64::from(pw)
}

/// Flip-flops of the unfolded layer_norm's pair-sum registers (every product's partial products
/// added in pairs into registers, for timing), as the RTL declares them: per lane `x²`, `c·y`,
/// `n·gamma`; `S1²`; per Newton step `y²`, `u·s`, `y·f`. Not in the fit (added after it).
fn unfolded_pair_sum_ff(p: &Params) -> u64 {
    let ProductWidths { w, gw, lanes, ld, nnw, s1w, cw, yw1, sw1, .. } = ProductWidths::of(p);
    let lane = pair_sum_ff(w, w, 2 * w + ld + 1) + pair_sum_ff(cw, yw1, cw + yw1) + pair_sum_ff(nnw, gw, nnw + gw);
    let step = pair_sum_ff(yw1, yw1, 2 * yw1) + 2 * pair_sum_ff(yw1, sw1, yw1 + sw1);
    lanes * lane + pair_sum_ff(s1w, s1w, 2 * s1w) + NEWTON_STEPS as u64 * step
}

/// Flip-flops the folded layer_norm holds beyond [`LAYER_NORM_FF`] (fitted before the pair sums):
/// per multiplier its pair-sum registers, at `FOLD ≥ 4` the 1/sqrt unit's operand registers
/// (lane 0's own operand registers take them at phase 0) and the seed table's output register,
/// less the unit's `s` and `t` registers (`s` and `3·2^YF − t` now go straight into its operand
/// registers). Not in the fit (added after it).
fn folded_mult_ff(p: &Params) -> u64 {
    let ProductWidths { s1w, yw1, sw1, mf1, .. } = ProductWidths::of(p);
    let unit_operands = if param(p, "FOLD") >= 4 { s1w.max(yw1).max(mf1) + s1w.max(yw1).max(sw1) } else { 0 };
    let (s_t, seed) = (2 * u64::from(RSQRT_FRAC + 4), u64::from(TABLE_FRAC + 2));
    (folded_mults(p, |a, b| pair_sum_ff(a, b, a + b)) + u64::from(unit_operands) + seed).saturating_sub(s_t)
}

/// Derived constants of an instance (the RTL's localparams, same names).
#[derive(Debug, Clone, Copy)]
struct Geo {
    w: i64,
    f: i64,
    d: i64,
    p: i64,
    fq: i64,
    ef: i64,
    nf: i64,
    base: i64,
    qw: i64,
    prw: i64,
    aw: i64,
    gf: i64,
    bf: i64,
    af: i64,
}

impl Geo {
    fn of(p: &Params) -> Geo {
        let w = param(p, "DATA_IN_0_PRECISION_0");
        let f = param(p, "DATA_IN_0_PRECISION_1");
        let d = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0");
        let ld = clog2(d);
        let ef = param(p, "EPS_FRAC");
        let fq = (2 * f).max(ef + (ef & 1));
        let vw = 2 * w + 2 * ld + 2;
        let qw = (vw + fq - 2 * f).max(2 * ld + 32 + fq - ef) + 1;
        let nf = param(p, "NORM_FRAC");
        let base = RSQRT_FRAC as i64 - nf + f - fq / 2;
        let g = (-base).max(0);
        let cw = w + ld + 2;
        let prw = cw + RSQRT_FRAC as i64 + 3 + g;
        let nnw = nf + (ld + 1) / 2 + 2;
        let (gw, gf) = (param(p, "WEIGHT_PRECISION_0"), param(p, "WEIGHT_PRECISION_1"));
        let (bw, bf) = (param(p, "BIAS_PRECISION_0"), param(p, "BIAS_PRECISION_1"));
        let af = (nf + gf).max(bf);
        let aw = (nnw + gw + af - nf - gf).max(bw + af - bf) + 1;
        Geo { w, f, d, p: param(p, "DATA_IN_0_PARALLELISM_DIM_0"), fq, ef, nf, base, qw, prw, aw, gf, bf, af }
    }

    /// Beats per row.
    fn nw(&self) -> i64 {
        self.d / self.p
    }

    /// The largest internal width.
    fn internal_bits(&self) -> i64 {
        self.qw.max(self.prw).max(self.aw)
    }
}

/// Cycles from an input beat being taken to its registered squares (the RTL's `SQ`): the beat
/// register, the partial products, their pair sums and the squares at full rate; folded, the
/// square is chosen at phase `FOLD − 1` (the beat arrives at phase 0) and takes four cycles more
/// (operands, partials, pair sums, square).
/// The row's sums are final (`row_end`) two cycles later (the lane sums registered, then
/// accumulated).
fn square_delay(fold: i64) -> i64 {
    if fold == 1 {
        4
    } else {
        fold + 3
    }
}

/// Cycles from a row's last input beat to its statistics being ready (the RTL's `SD`): `row_end`
/// at `SQ + 2`, then the pipelined `1/sqrt` unit's [`RSQRT_STAGES`] and the write; sequential,
/// the first step starts at the first phase 0 after `row_end` (`SEL1`, a multiple of `FOLD`),
/// each of the [`RSQRT_STEPS`] steps takes a beat period (its result written `UL` cycles after
/// its phase 0: 2 on the unit's own multiplier at `FOLD = 3`, 3 on lane 0's), then the write.
fn stats_delay(fold: i64) -> i64 {
    let sq = square_delay(fold);
    if fold == 1 {
        return sq + RSQRT_STAGES as i64 + 3;
    }
    let sel1 = fold * (sq + 3 + fold - 1).div_euclid(fold);
    let ul = if fold == 3 { 2 } else { 3 };
    sel1 + (RSQRT_STEPS - 1) * fold + ul + 2
}

/// The shortest row period (`FOLD·D/P` cycles) the sequential `1/sqrt` unit keeps up with (one
/// row in flight): the next row's `row_end` (`SQ + 2` after its last beat) no earlier than the
/// cycle the statistics of this one are written (`SD − 1`): 34 at `FOLD = 3`, 47 at 4, 59 at 5,
/// `11·FOLD − 1` above.
pub fn min_row_cycles(fold: i64) -> i64 {
    stats_delay(fold) - 1 - (square_delay(fold) + 2)
}

/// Row slots of the RTL's ring buffer: `2 + ceil((SD − 1 + FOLD) / (FOLD·D/P))`.
pub fn slots(p: &Params) -> i64 {
    let fold = param(p, "FOLD");
    let rowc = fold * Geo::of(p).nw();
    2 + (stats_delay(fold) - 1 + fold + rowc - 1) / rowc
}

/// First-output latency: the last beat of the first row enters at `(D/P − 1)·FOLD`, its
/// statistics are ready `stats_delay` cycles later, the first word issues at the next step
/// (phase `FOLD − 1`); at full rate eleven stages (N1, NR, N2 .. N10: read, the block RAM output
/// register, centre, `c·y` partials, pair sums and product, shift, `n·gamma` partials, pair sums
/// and product, `+ beta`) and the output register follow (`D/P + 47` cycles), folded six more
/// steps of `FOLD` cycles fill N6 (N1, NR, N2 .. N6), which the output register takes the next cycle.
fn latency(p: &Params) -> u64 {
    let fold = param(p, "FOLD") as u64;
    let ready = (Geo::of(p).nw() as u64 - 1) * fold + stats_delay(fold as i64) as u64;
    if fold == 1 {
        return ready + 12;
    }
    let issue = ready + (fold - 1 + fold - ready % fold) % fold;
    issue + 6 * fold + 2
}

/// The seed table: entry `i` (for `i` in `2^(TB−2)..2^TB`, the indices a normalised mantissa
/// can have) is `round(2^TF / sqrt((i + 1/2) / 2^TB))`; entries below `2^(TB−2)` repeat the
/// first used one (never read). Generated once (f64 `sqrt` is correctly rounded, so the result
/// is the same everywhere) and emitted into `rtl/mase_layer_norm_rsqrt_lut.sv` by
/// [`rsqrt_lut_sv`].
pub fn rsqrt_table() -> Vec<u32> {
    let n = 1u32 << TABLE_BITS;
    let first = n / 4;
    (0..n)
        .map(|i| {
            let i = i.max(first);
            let mid = (f64::from(i) + 0.5) / f64::from(n);
            ((1u64 << TABLE_FRAC) as f64 / mid.sqrt()).round() as u32
        })
        .collect()
}

/// The text of `rtl/mase_layer_norm_rsqrt_lut.sv` (the table as a `case` ROM).
pub fn rsqrt_lut_sv() -> String {
    let t = rsqrt_table();
    let mut s = String::new();
    s.push_str("// mase_layer_norm_rsqrt_lut: seed table of mase_layer_norm's reciprocal square root.\n");
    s.push_str("//\n");
    s.push_str(&format!(
        "// GENERATED by hwlib/src/components/layer_norm.rs (rsqrt_lut_sv); do not edit. Entry i\n\
         // (i = {}..{}) is round(2^{} / sqrt((i + 1/2) / 2^{})); lower entries repeat entry {}.\n",
        t.len() / 4,
        t.len() - 1,
        TABLE_FRAC,
        TABLE_BITS,
        t.len() / 4
    ));
    s.push_str("// Purely combinational (a ROM of LUTs): no latency, no state.\n");
    s.push_str("module mase_layer_norm_rsqrt_lut (\n");
    s.push_str(&format!("    /// Table index: the top {TABLE_BITS} bits of the normalised mantissa.\n"));
    s.push_str(&format!("    input  logic [{}:0] idx,\n", TABLE_BITS - 1));
    s.push_str(&format!("    /// Seed 1/sqrt(mantissa) with {TABLE_FRAC} fractional bits.\n"));
    s.push_str(&format!("    output logic [{}:0] y0\n", TABLE_FRAC + 1));
    s.push_str(");\n");
    s.push_str("  always_comb begin\n");
    s.push_str("    case (idx)\n");
    for (i, v) in t.iter().enumerate() {
        s.push_str(&format!("      {}'d{i}: y0 = {}'d{v};\n", TABLE_BITS, TABLE_FRAC + 2));
    }
    s.push_str("      default: y0 = '0;\n");
    s.push_str("    endcase\n");
    s.push_str("  end\n");
    s.push_str("endmodule\n");
    s
}

/// Floor of `v·2^-s` (`s` may be negative: exact left shift).
fn shift_floor(v: i128, s: i64) -> i128 {
    if s >= 0 {
        v >> s
    } else {
        v << (-s)
    }
}

/// The reciprocal square root of step 4: `(y, k)` with `1/sqrt(q) ≈ y·2^-(YF + k)`, `q ≥ 1`.
pub fn rsqrt_int(q: i128) -> (i128, i64) {
    let l = 128 - q.leading_zeros() as i64;
    let k = (l + 1) / 2;
    let mf = MANT_FRAC as i64;
    let u = shift_floor(q, 2 * k - mf);
    let table = rsqrt_table();
    let idx = (u >> (MANT_FRAC - TABLE_BITS)) as usize;
    let mut y = (table[idx.min(table.len() - 1)] as i128) << (RSQRT_FRAC - TABLE_FRAC);
    for _ in 0..NEWTON_STEPS {
        let s = (y * y) >> RSQRT_FRAC;
        let t = (u * s) >> MANT_FRAC;
        let r = (3i128 << RSQRT_FRAC) - t;
        y = (y * r) >> (RSQRT_FRAC + 1);
    }
    (y, k)
}

/// The normalised values `n_i` (step 5, `NORM_FRAC` fractional bits) of one row.
fn normalise_row(g: &Geo, eps: i64, row: &[i64]) -> Vec<i128> {
    let d = g.d as i128;
    let s1: i128 = row.iter().map(|&x| x as i128).sum();
    let s2: i128 = row.iter().map(|&x| (x as i128) * (x as i128)).sum();
    let v = d * s2 - s1 * s1;
    let q = (v << (g.fq - 2 * g.f)) + ((d * d * eps as i128) << (g.fq - g.ef));
    let (y, k) = rsqrt_int(q);
    row.iter().map(|&x| shift_floor((d * x as i128 - s1) * y, k + g.base)).collect()
}

impl Component for LayerNorm {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        // Input, gamma and beta formats: 1..32 bits, -32..32 fractional bits.
        let narrow_format = |port: &str| {
            check_range(p, &format!("{port}_PRECISION_0"), 1, 32)?;
            check_range(p, &format!("{port}_PRECISION_1"), -32, 32)
        };
        narrow_format("DATA_IN_0")?;
        check_row_shape(p, "DATA_IN_0", 4096, 1 << 20, 256)?;
        for port in ["WEIGHT", "BIAS"] {
            narrow_format(port)?;
            check_equal(p, &format!("{port}_TENSOR_SIZE_DIM_0"), "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
            check_equal(p, &format!("{port}_PARALLELISM_DIM_0"), "DATA_IN_0_PARALLELISM_DIM_0")?;
        }
        check_cast_output(p, "DATA_OUT_0", "DATA_IN_0", 64)?;
        check_range(p, "EPS", 1, i32::MAX as i64)?;
        check_range(p, "EPS_FRAC", 0, 64)?;
        check_range(p, "NORM_FRAC", 1, 32)?;
        let (bf, nf, gf) =
            (param(p, "BIAS_PRECISION_1"), param(p, "NORM_FRAC"), param(p, "WEIGHT_PRECISION_1"));
        if (bf - nf - gf).abs() > 32 {
            return Err(format!(
                "BIAS_PRECISION_1 ({bf}) must be within 32 of NORM_FRAC + WEIGHT_PRECISION_1 ({})",
                nf + gf
            ));
        }
        let bits = Geo::of(p).internal_bits();
        if bits > MAX_INTERNAL_BITS {
            return Err(format!("internal width must be between 1 and {MAX_INTERNAL_BITS} bits, got {bits}"));
        }
        let fold = param(p, "FOLD");
        if fold != 1 && !(3..=MAX_FOLD).contains(&fold) {
            return Err(format!("FOLD must be 1 or between 3 and {MAX_FOLD}, got {fold}"));
        }
        let (rowc, rowmin) = (fold * Geo::of(p).nw(), min_row_cycles(fold));
        if fold > 1 && rowc < rowmin {
            return Err(format!(
                "FOLD * D/P ({rowc}) must be at least {rowmin} (the sequential 1/sqrt unit)"
            ));
        }
        Ok(())
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        unary_streams(p)
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        let g = Geo::of(p);
        [("weight", "WEIGHT_MEM_FILE", "WEIGHT_PRECISION_0"), ("bias", "BIAS_MEM_FILE", "BIAS_PRECISION_0")]
            .iter()
            .map(|(name, file, width)| MemorySpec {
                name: (*name).into(),
                param: (*file).into(),
                values: g.d as usize,
                depth: g.nw() as usize,
                lanes: g.p as usize,
                lane_width: param(p, width) as u32,
                signed: true,
            })
            .collect()
    }

    /// `weight` (gamma) and `bias` (beta): `[D]` each; word `j` holds elements `j·P .. j·P + P`
    /// (lane `i` = element `j·P + i`), the order the beats of a row arrive.
    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        let g = Geo::of(p);
        if mem != "weight" && mem != "bias" {
            return Err(format!("component `layer_norm` has no memory `{mem}` (memories: weight, bias)"));
        }
        check_memory_len("layer_norm", mem, values, g.d as usize, "D")?;
        Ok(values.chunks(g.p as usize).map(<[i64]>::to_vec).collect())
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let g = Geo::of(p);
        let d = g.d as usize;
        let x = stim.input("layer_norm", "data_in_0")?;
        let gamma = stim.memories.get("weight").ok_or("layer_norm model: missing memory `weight`")?;
        let beta = stim.memories.get("bias").ok_or("layer_norm model: missing memory `bias`")?;
        if gamma.len() != d || beta.len() != d {
            return Err(format!("layer_norm model: gamma/beta need {d} values each"));
        }
        if x.len() % d != 0 {
            return Err(format!("layer_norm model: {} input values are not whole rows of {d}", x.len()));
        }
        let to = output_format(p, "DATA_OUT_0", true);
        let eps = param(p, "EPS");
        let mut y = Vec::with_capacity(x.len());
        for row in x.chunks(d) {
            for (i, n) in normalise_row(&g, eps, row).into_iter().enumerate() {
                let acc =
                    ((n * gamma[i] as i128) << (g.af - g.nf - g.gf)) + ((beta[i] as i128) << (g.af - g.bf));
                y.push(cast_code(acc, g.af as i32, &to));
            }
        }
        Ok(data_out_0(y))
    }

    /// Latency: see [`latency`] (`D/P + 47` at full rate). II `FOLD·D/P`.
    /// Multipliers at `FOLD = 1`: per lane the square, `c·y` and `n·gamma` (3P), plus `S1²` and
    /// three per Newton step (1 + 3·NEWTON_STEPS); folded: one per lane and the sequential
    /// `1/sqrt` unit's one at `FOLD = 3`, none above (it borrows lane 0's); `D·x`, `D·S2` are
    /// shift-add trees. (Each is split into 18×18-bit partial products in the RTL.)
    /// Memory: the row ring (`NSLOT·D/P` words of `P·W` bits) and the gamma / beta ROMs.
    fn cost(&self, p: &Params) -> Cost {
        let g = Geo::of(p);
        let (nw, fold) = (g.nw() as u64, param(p, "FOLD") as u64);
        let ring = slots(p) as u64 * nw * (g.p * g.w) as u64;
        let roms: u64 = self.memories(p).iter().map(MemorySpec::bits).sum();
        Cost {
            latency_cycles: latency(p),
            ii_cycles: fold * nw,
            multipliers: match fold {
                1 => 3 * g.p as u64 + 1 + 3 * NEWTON_STEPS as u64,
                3 => g.p as u64 + 1,
                _ => g.p as u64,
            },
            memory_bits: ring + roms,
        }
    }

    /// The row ring by the RAM rule, gamma/beta ROMs where Yosys puts them; LUT/FF from
    /// [`LAYER_NORM_LUT`] / [`LAYER_NORM_FF`] (plus [`unfolded_pair_sum_ff`] or
    /// [`folded_mult_ff`]), DSPs
    /// from [`unfolded_dsps`] or the folded multipliers.
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{fitted, pu, ram, rom};
        let g = Geo::of(p);
        let (lanes, w) = (g.p as u64, g.w as u64);
        let nw = g.nw() as u64;
        let (ring_bram, ring_lutram) = ram(slots(p) as u64 * nw, lanes * w);
        // Per-slot statistics (S1, y, k), one word per row slot: distributed RAM.
        let nslot = slots(p) as u64;
        let qwe = (g.qw + g.qw % 2) as u64;
        let kw = crate::resources::clog2(qwe / 2 + 1) + 1;
        let s1w = w + clog2(g.d) as u64 + 1;
        let stats: u64 = [s1w, u64::from(RSQRT_FRAC) + 2, kw].iter().map(|&b| ram(nslot, b).1).sum();
        let (gb, gl) = rom(nw, lanes * pu(p, "WEIGHT_PRECISION_0"));
        let (bb, bl) = rom(nw, lanes * pu(p, "BIAS_PRECISION_0"));
        let ld = crate::resources::clog2(g.d as u64);
        let fold = pu(p, "FOLD");
        let folded = u64::from(fold > 1);
        let x = [
            1,
            lanes * w,
            lanes * pu(p, "DATA_OUT_0_PRECISION_0"),
            lanes * pu(p, "WEIGHT_PRECISION_0"),
            lanes * ld,
            folded,
            folded * lanes,
            g.qw as u64,
        ];

        let dsp = if fold > 1 { folded_dsps(p) } else { unfolded_dsps(p) };
        crate::Resources {
            lut: fitted(&LAYER_NORM_LUT, &x) + gl + bl,
            ff: fitted(&LAYER_NORM_FF, &x) + if fold > 1 { folded_mult_ff(p) } else { unfolded_pair_sum_ff(p) },
            dsp,
            bram18: ring_bram + gb + bb,
            lutram: ring_lutram + stats,
        }
    }

    /// Uniform data (full input range) for gamma, beta and three rows in four; the fourth row
    /// alternates between the extremes of the algorithm: one full-scale element among zeros
    /// (largest normalised value, `sqrt(D − 1)`) and a constant row (`V = 0`, eps alone).
    fn random_stimulus(&self, p: &Params, rows: usize, rng: &mut ChaCha8Rng) -> Stimulus {
        let mut stim = uniform_stimulus(&self.streams(p), &self.memories(p), rows, rng);
        let g = Geo::of(p);
        let d = g.d as usize;
        let (lo, hi) = value_range(g.w as u32, true);
        if let Some(x) = stim.inputs.get_mut("data_in_0") {
            for (r, row) in x.chunks_mut(d).enumerate() {
                match r % 8 {
                    3 => {
                        row.fill(0);
                        row[rng.gen_range(0..d)] = if rng.gen::<bool>() { hi } else { lo };
                    }
                    7 => row.fill(rng.gen_range(lo..=hi)),
                    _ => {}
                }
            }
        }
        stim
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: D = 64, P = 4, 16-bit formats.
            vec![],
            // P = 1, odd D, narrow formats, RND_CONV + SAT_SYM.
            [
                layer_formats((4, 2), (3, 1), (2, 1), (6, 3)),
                row(7, 1),
                modes(6, 3),
                vec![("EPS", 1), ("EPS_FRAC", 5), ("NORM_FRAC", 8)],
            ]
            .concat(),
            // One beat per row (D = P = 3), 2-bit input, RND + WRAP.
            [input(2, 0), row(3, 3), output(10, 6), modes(2, 0)].concat(),
            // D = 1 (every output is beta), 16-bit.
            row(1, 1),
            // D = 15 in beats of 5, 12-bit input with negative frac, beta coarser.
            [layer_formats((12, -2), (8, 6), (8, 2), (8, 4)), row(15, 5), vec![("EPS", 3), ("EPS_FRAC", 0)]]
                .concat(),
            // Folded: defaults (D = 64, P = 4) at FOLD = 3 (the 1/sqrt unit's own multiplier).
            vec![("FOLD", 3)],
            // Folded at FOLD = 3, P = 1, the shortest row it allows (FOLD·D = 36 ≥ 34).
            [row(12, 1), vec![("FOLD", 3)]].concat(),
            // FOLD = 4 (1/sqrt on lane 0's multiplier) at P = 1, the shortest row it allows
            // (FOLD·D = 48 ≥ 47), narrow formats, RND_CONV + SAT_SYM.
            [
                layer_formats((4, 2), (3, 1), (2, 1), (6, 3)),
                row(12, 1),
                modes(6, 3),
                vec![("EPS", 1), ("EPS_FRAC", 5), ("NORM_FRAC", 8), ("FOLD", 4)],
            ]
            .concat(),
            // FOLD = 5 (a phase idles), D = 60 in beats of 5, negative frac, beta coarser;
            // D = 60 exercises the shift-add D·x with four terms.
            [
                layer_formats((12, -2), (8, 6), (8, 2), (8, 4)),
                row(60, 5),
                vec![("EPS", 3), ("EPS_FRAC", 0), ("FOLD", 5)],
            ]
            .concat(),
            // Folded, 16-bit, D = 384 at P = 1 (the MiniLM width), FOLD = 4.
            [row(384, 1), vec![("FOLD", 4)]].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            row(64, 3),
            input(33, 8),
            vec![("EPS", 0)],
            vec![("NORM_FRAC", 0)],
            bias(16, -32),
            vec![("WEIGHT_TENSOR_SIZE_DIM_0", 32)],
            [input(32, -32), vec![("EPS_FRAC", 64)]].concat(),
            vec![("FOLD", 2)],
            vec![("FOLD", 17)],
            [row(8, 4), vec![("FOLD", 3)]].concat(),
        ]
    }
}

impl Binding for LayerNorm {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let mase_ir::Op::LayerNorm { axis, epsilon, weight, bias } = &v.node.op else {
            return Err(v.error("the layer_norm component binds layer_norm nodes only"));
        };
        let shape = v.in_shape(0)?;
        v.require_last_axis(*axis, shape.len())?;
        // Absent gamma / beta are the constants 1 / 0, held in the narrowest format.
        let format_of = |key: &Option<String>| -> mase_ir::Result<mase_ir::fixed::FixedFormat> {
            Ok(match key {
                Some(k) => v.qweight(k)?.format,
                None => mase_ir::fixed::FixedFormat::signed(2, 0),
            })
        };
        let (eps, eps_frac) = eps_code(*epsilon).map_err(|e| v.error(e))?;
        crate::binding::Overrides::default()
            .tensor("DATA_IN_0", &v.signed_input(0, 32)?, &shape, par.p_in)
            .format("WEIGHT", &format_of(weight)?)
            .format("BIAS", &format_of(bias)?)
            .set("EPS", eps)
            .set("EPS_FRAC", eps_frac)
            .set("FOLD", par.fold as i64)
            .output(&v.out_format()?)
            .done()
    }

    /// Every divisor of the row up to 256 lanes, at full rate and folded ([`OFFERED_FOLDS`]:
    /// fewer multipliers at a lower rate, which the search takes where the node has slack;
    /// folds too short for the row fail validation and drop out).
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        let lanes = crate::binding::divisors(v.row_len()?, 256);
        let folds = std::iter::once(1).chain(OFFERED_FOLDS);
        Ok(folds.flat_map(|f| lanes.iter().map(move |&p| Par { fold: f, ..Par::lanes(p) })).collect())
    }

    fn data_memories(&self, v: &NodeView, p: &Params) -> mase_ir::Result<Vec<(String, Vec<i64>)>> {
        let mase_ir::Op::LayerNorm { weight, bias, .. } = &v.node.op else { return Ok(Vec::new()) };
        let d = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
        let or_const = |key: &Option<String>, c: i64| match key {
            Some(k) => v.weight_codes(k),
            None => Ok(vec![c; d]),
        };
        Ok(vec![("weight".to_string(), or_const(weight, 1)?), ("bias".to_string(), or_const(bias, 0)?)])
    }
}

/// The epsilon of a layer norm as the component's integer code: `EPS · 2^-EPS_FRAC`, with the
/// largest `EPS_FRAC ≤ 64` that keeps `EPS < 2^31` (round to nearest).
pub fn eps_code(eps: f32) -> Result<(i64, i64), String> {
    let e = f64::from(eps);
    if !(e > 0.0 && e.is_finite()) {
        return Err(format!("epsilon {eps} must be a positive number for the layer_norm component"));
    }
    let mut frac = 64i32;
    while frac > 0 && (e * 2f64.powi(frac)).round() >= 2_147_483_647.0 {
        frac -= 1;
    }
    let code = (e * 2f64.powi(frac)).round().max(1.0);
    if code >= 2_147_483_647.0 {
        return Err(format!("epsilon {eps} is too large for the layer_norm component (below 2^31)"));
    }
    Ok((code as i64, frac as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsqrt_is_accurate_over_many_magnitudes() {
        for q in [1i128, 2, 3, 4, 5, 63, 64, 65, 1000, 123_456_789, 1 << 40, (1 << 61) - 1, 3 << 90] {
            let (y, k) = rsqrt_int(q);
            let got = y as f64 * 2f64.powi(-(RSQRT_FRAC as i32) - k as i32);
            let want = 1.0 / (q as f64).sqrt();
            assert!(((got - want) / want).abs() < 1e-6, "q = {q}: {got} vs {want}");
        }
    }

    #[test]
    fn generated_lut_file_is_up_to_date() {
        let path = crate::rtl_dir().join("mase_layer_norm_rsqrt_lut.sv");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            text == rsqrt_lut_sv(),
            "{} is stale: run `cargo run -p mase-hwlib --example layer_norm_lut`",
            path.display()
        );
    }
}
