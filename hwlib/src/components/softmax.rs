//! `softmax`: softmax over the innermost dimension of a signed fixed-point stream
//! (`rtl/mase_softmax.sv`, the datapath `rtl/mase_softmax_core.sv` without a mask), by an exact
//! integer algorithm, at full throughput. The same datapath under a key-padding mask is the
//! component [`masked_softmax`](super::masked_softmax), whose model, cost and resources are the
//! functions of this file with `masked = true`.
//!
//! # Exact algorithm (per row of `L = DATA_IN_0_TENSOR_SIZE_DIM_0` input codes `x_i`)
//!
//! Input: signed codes, `W` bits, `F = DATA_IN_0_PRECISION_1` fractional bits (`0 ≤ F ≤ 24`).
//! Internal widths: `EF = EXP_FRAC` (fractional bits of exp values), `H = EXP_TABLE_BITS`
//! (index bits of each exp table), `RB = RECIP_BITS` (reciprocal precision), `KF = 24`,
//! `CL = ⌈log2 L⌉`, `Z = EF + CL + RB`.
//!
//! 1. `m = max_i x_i`; `d_i = m − x_i ≥ 0` (integer, `W` bits unsigned).
//! 2. `t_i = d_i · K` with `K = round(log2(e) · 2^KF)` (so `t_i / 2^(F+KF) ≈ d_i · 2^-F · log2 e`);
//!    `k_i = t_i >> (F + KF)` (integer part), `f_i = (t_i >> (F + KF − 2H)) mod 2^(2H)` (the top
//!    `2H` fractional bits, truncated), `fh = f_i >> H`, `fl = f_i mod 2^H`.
//! 3. `e_i = (T_hi[fh] · T_lo[fl]) >> (EF + k_i)`, and `e_i = 0` when `k_i > EF`, where
//!    `T_hi[j] = round(2^(−j / 2^H) · 2^EF)` and `T_lo[j] = round(2^(−j / 2^(2H)) · 2^EF)`
//!    (`EF + 1` bits; `T[0] = 2^EF`), so `e_i ≈ 2^EF · exp(−d_i · 2^-F)` and the row maximum gives
//!    exactly `2^EF`.
//! 4. `S = Σ_i e_i` (exact integer; `2^EF ≤ S ≤ L · 2^EF`).
//! 5. `R = ⌊2^Z / S⌋` (exact integer division; `R < 2^(CL + RB + 1)`, at least `RB` significant
//!    bits).
//! 6. `y_i = cast_code(e_i · R, Z, out)`: the exact product, read with `Z` fractional bits
//!    (≈ `e_i / S`), cast once into the output format (`DATA_OUT_0_PRECISION_0/1`,
//!    `DATA_OUT_0_SIGNED`, `DATA_OUT_0_ROUNDING/OVERFLOW`).
//!
//! The tables come from [`exp_tables`] (deterministic: [`exp_neg`] uses only IEEE-exact
//! operations; entries rounded with [`from_f64`]); they are the memories `exp_hi` / `exp_lo`
//! (file parameters `EXP_HI_MEM_FILE` / `EXP_LO_MEM_FILE`, word `j` = entry `j`).
//!
//! With a mask ([`softmax_row_masked`]): step 1 takes the maximum over the kept elements only,
//! masked elements get `e_i = 0` (so `S` sums the kept ones) and `y_i = 0`; a row with no kept
//! element outputs all zeros.
//!
//! # Hardware (`rtl/mase_softmax_core.sv`)
//!
//! Three stages joined by FIFOs (`mase_fifo`), each moving one beat of `P` lanes per cycle:
//! (A) input: beats enter the row FIFO `X` (2 rows + 4 beats) while the row maximum is taken by a
//! pipelined max tree; the maximum enters FIFO `M` `⌈log2 P⌉ + 2` cycles after the row's last
//! beat (the running maximum is registered before it is written). (B) exp: once a row's maximum is known its beats leave `X` through a 10-stage pipeline
//! (difference, `·K` as registered partial products and their sum, table reads, table entries
//! registered again, table product as registered operands, partial products (registered again in fabric) and sum, shifted
//! exp value), the exp
//! values enter FIFO `E` (1 row + divider depth + `⌈log2 P⌉` + 9 beats) and are summed by a
//! pipelined adder tree; at the row's last beat the registered sum enters a free-running
//! pipelined non-restoring divider (one quotient bit per stage,
//! `CL + RB + 1` stages) whose quotients enter FIFO `Rq` (deep enough for every row whose last
//! beat is in `E`, so no credit counter is needed).
//! (C) normalize: once a row's reciprocal is known its exp values leave `E`, are multiplied by `R`,
//! cast and sent through a `mase_skid_buffer`. The next row's maximum is taken while the current
//! one is normalized, so the steady state is one beat per cycle for any row length.
//! Resources: `3P` multipliers (`d·K`, table product, `e·R`), `2P` table ROMs (each lane has its
//! own pair of read ports; at large `P` the tables dominate the memory bits, so lower
//! `EXP_TABLE_BITS` there), FIFO bits as in [`Component::cost`]. `X` and `E` are built from
//! lock-step `mase_fifo` groups with words of at most 1024 bits (Verilator 5.006 emits C++ that
//! does not compile for wider memory words).

use mase_ir::fixed::{cast_code, from_f64, FixedFormat, Overflow, Rounding};

use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, MemorySpec, ParamSpec, Params, Stimulus, StreamSpec,
    StreamValues,
};
use crate::components::cast::{check_modes, output_format};
pub use crate::components::gelu::exp_neg;
use crate::overrides::{input, output, row, rows};
use crate::port::{beats_per_row, block_stream, check_format, check_same_shape};
use crate::resources::{const_factor_bits, mul_dsps};
use crate::{
    check_divides, check_range, output_modes, param, param_list, port_format, port_shape, same_shape,
};

/// The softmax component.
pub struct Softmax;

/// Fractional bits of the constant `K = round(log2(e) · 2^KF)`.
pub const KF: u32 = 24;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "softmax",
    description: "softmax over dim 0: max subtraction, exp by two tables and a shift, exact sum, pipelined exact reciprocal, multiply and cast",
    dependencies: DEPENDENCIES,
    buffers_whole_unit: true,
    params: PARAMS,
    ..Info::DEFAULT
};

/// RTL files of both softmax components (the datapath `mase_softmax_core.sv` and what it
/// instantiates), the shared header first.
pub(crate) const DEPENDENCIES: &[&str] = &[
    "mase_assert.svh",
    "mase_fifo.sv",
    "mase_wide_fifo.sv",
    "mase_cast_core.sv",
    "mase_skid_buffer.sv",
    "mase_delay.sv",
    "mase_dsp_mul.sv",
    "mase_split_mul.sv",
    "mase_reduce_tree.sv",
    "mase_softmax_core.sv",
];

/// The parameters of `softmax`, which `masked_softmax` extends by `MASK_ROWS`.
pub(crate) const PARAMS: &[ParamSpec] = param_list![
    port_format!("DATA_IN_0", 8, "input total bits (1..16), signed", 4, "input fractional bits (0..24)"),
    port_shape!(
        "DATA_IN_0",
        [8, 1, 4, 1],
        [
            "row length L (softmax dimension, 1..4096)",
            "rows of the tensor",
            "elements of a row per beat (P)",
            "rows per beat (must be 1)",
        ]
    ),
    port_format!("DATA_OUT_0", 8, "output total bits (1..32)", 7, "output fractional bits (-2^24..2^24)"),
    [ParamSpec::value("DATA_OUT_0_SIGNED", 0, "1: output two's complement, 0: unsigned")],
    same_shape!(
        "DATA_OUT_0",
        "DATA_IN_0",
        [
            "output dim 0 (= input)",
            "output dim 1 (= input)",
            "output elements per beat (= input)",
            "output rows per beat (= input)",
        ]
    ),
    output_modes!("DATA_OUT_0", "rounding", "overflow"),
    [
        ParamSpec::value("EXP_FRAC", 24, "fractional bits EF of exp values and table entries (4..28)"),
        ParamSpec::value("EXP_TABLE_BITS", 10, "index bits H of each of the two exp tables (1..12)"),
        ParamSpec::value("RECIP_BITS", 20, "reciprocal precision RB in bits (4..28)"),
        ParamSpec::value(
            "FOLD",
            1,
            "cycles per exp beat: 1 (3P multipliers) or 2 (d*K and the table product share one multiplier per lane: 2P)"
        ),
    ],
];

/// `K = round(log2(e) · 2^KF)`.
pub fn log2e_const() -> i64 {
    from_f64(
        std::f64::consts::LOG2_E * (1u64 << KF) as f64,
        &FixedFormat::signed(40, 0).with_modes(Rounding::Rnd, Overflow::Sat),
    )
}

/// Internal widths of an instance.
#[derive(Debug, Clone, Copy)]
pub struct Widths {
    /// Input fractional bits.
    pub f_in: u32,
    /// Exp fraction bits.
    pub ef: u32,
    /// Exp table index bits.
    pub h: u32,
    /// Reciprocal precision.
    pub rb: u32,
    /// `⌈log2 L⌉`.
    pub cl: u32,
}

impl Widths {
    /// Widths of resolved parameters.
    pub fn of(p: &Params) -> Self {
        let l = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as u64;
        Widths {
            f_in: param(p, "DATA_IN_0_PRECISION_1") as u32,
            ef: param(p, "EXP_FRAC") as u32,
            h: param(p, "EXP_TABLE_BITS") as u32,
            rb: param(p, "RECIP_BITS") as u32,
            cl: if l <= 1 { 0 } else { 64 - (l - 1).leading_zeros() },
        }
    }

    /// `Z = EF + CL + RB`: fractional bits of `e · R`.
    pub fn z(&self) -> u32 {
        self.ef + self.cl + self.rb
    }

    /// Quotient bits of the reciprocal (divider stages): `CL + RB + 1`.
    pub fn qb(&self) -> u32 {
        self.cl + self.rb + 1
    }
}

/// The two exp tables `(T_hi, T_lo)` (see the module documentation), `2^H` entries each.
pub fn exp_tables(ef: u32, h: u32) -> (Vec<i64>, Vec<i64>) {
    let fmt = FixedFormat::unsigned(ef + 1, ef as i32).with_modes(Rounding::Rnd, Overflow::Sat);
    let ln2 = std::f64::consts::LN_2;
    let n = 1usize << h;
    let hi = (0..n).map(|j| from_f64(exp_neg(j as f64 / n as f64 * ln2), &fmt)).collect();
    let lo = (0..n).map(|j| from_f64(exp_neg(j as f64 / (n * n) as f64 * ln2), &fmt)).collect();
    (hi, lo)
}

/// `e = 2^EF · exp(−d · 2^-F)` of one difference `d = m − x` (steps 2 and 3).
pub fn exp_code(w: &Widths, t_hi: &[i64], t_lo: &[i64], d: i64) -> i64 {
    let t = d as i128 * log2e_const() as i128;
    let tf = w.f_in + KF;
    let k = (t >> tf) as i64;
    let f = ((t >> (tf - 2 * w.h)) as i64) & ((1i64 << (2 * w.h)) - 1);
    let (fh, fl) = ((f >> w.h) as usize, (f & ((1i64 << w.h) - 1)) as usize);
    if k > w.ef as i64 {
        return 0;
    }
    ((t_hi[fh] as i128 * t_lo[fl] as i128) >> (w.ef as i64 + k)) as i64
}

/// Softmax of one row of input codes with the given tables (steps 1–6).
pub fn softmax_row(p: &Params, t_hi: &[i64], t_lo: &[i64], row: &[i64]) -> Vec<i64> {
    softmax_row_masked(p, t_hi, t_lo, row, None)
}

/// Softmax of one row of input codes under the keep bits `keep` (`keep[i]`: element `i` takes
/// part; `None`: every element does, which is [`softmax_row`]): steps 1–6 over the kept elements,
/// the maximum and the sum taken over them only, and exactly 0 for every masked element (the RTL
/// casts `0 · R`, which is 0 in every format). A row with no kept element gives all zeros.
pub fn softmax_row_masked(
    p: &Params,
    t_hi: &[i64],
    t_lo: &[i64],
    row: &[i64],
    keep: Option<&[bool]>,
) -> Vec<i64> {
    let w = Widths::of(p);
    let out = output_format(p, "DATA_OUT_0", param(p, "DATA_OUT_0_SIGNED") == 1);
    let kept = |i: usize| keep.is_none_or(|k| k[i]);
    let m = (0..row.len()).filter(|&i| kept(i)).map(|i| row[i]).max().unwrap_or(0);
    let e: Vec<Option<i64>> =
        (0..row.len()).map(|i| kept(i).then(|| exp_code(&w, t_hi, t_lo, m - row[i]))).collect();
    let s: i128 = e.iter().flatten().map(|&v| v as i128).sum();
    let r = (1i128 << w.z()) / s.max(1);
    e.iter().map(|v| v.map_or(0, |v| cast_code(v as i128 * r, w.z() as i32, &out))).collect()
}

/// LUT model of softmax over `[1, lanes × input bits, lanes × exp bits, lanes × output bits,
/// quotient bits, logic-ROM LUTs of the exp tables, lanes × quotient bits (the normalising
/// products' cast), folded × lanes × the shared multiplier's operand bits, quotient bits × sum
/// bits (the reciprocal's divider stages)]`, fitted to Yosys 0.23 with
/// `sim/examples/resource_fit.rs --only softmax --max-lut 10000` (least absolute relative error,
/// non-negative; 40 instances, median error 2 %). The divider's coefficient was refitted when the
/// divider became non-restoring (one adder per stage where the restoring one had a compare, a
/// subtracter and a select: 2.94 LUTs per stage bit before): the smallest largest error over
/// three test sets measured with `mase synth component softmax` (defaults 1921 LUTs, set 1
/// 1028, set 2 1863; estimates −8 %, +8 %, −6 %). The folded multiplier's coefficient was
/// refitted when its operand multiplexer began to choose the next cycle's operands (the next
/// table entries or the held ones, by stage B's enable, before the phase's choice: 1.864 LUTs
/// per operand bit before), the same way over the three folded test sets (`FOLD = 2` at the
/// defaults 2229 LUTs, sets 8 and 9 1189 and 807; estimates −5 %, +6 %, −5 %).
const SOFTMAX_LUT: [f64; 9] = [0.0, 4.746, 6.906, 0.0, 0.0, 0.0, 0.0, 3.46, 1.38];
/// FF model of softmax over the same features (same fit, median error 1 %).
const SOFTMAX_FF: [f64; 9] = [101.224, 0.0, 0.0, 3.754, 0.0, 0.0, 2.087, 2.877, 2.017];
/// LUTs a mask adds, over `[1, L, lanes, lanes × input bits, row counter bits]`: the masked
/// max-tree leaves and the keep multiplexer, about one LUT per input bit of a beat. Measured as
/// the difference of Yosys 0.23 counts of `masked_softmax` and `softmax` at the same parameters
/// (six pairs, `L` 5..128, `P` 1..8, `W` 2..16, `MASK_ROWS` 1..1536, one folded; measured
/// differences 0..99 LUTs and 6..28 FFs): within 22 LUTs and 4 FFs of each difference, so the
/// masked estimate is as good as the softmax model at the same parameters.
const MASK_LUT: [f64; 5] = [0.0, 0.0, 0.0, 1.2, 0.0];
/// FFs a mask adds, over the features of [`MASK_LUT`]: two keep flags per lane in the exp
/// pipeline and about one more per lane, and the row counter. The `L`-bit keep ring is a shift
/// register with enable, which Yosys maps to SRL16E/SRLC32E cells (counted neither as LUT nor FF
/// by `mase synth`), so it adds no FFs here; [`Component::cost`] counts its `L` bits.
const MASK_FF: [f64; 5] = [0.0, 0.0, 3.0, 0.0, 1.0];
/// DSPs of softmax: per lane the exp products (unfolded: `d·K`, with K's trailing zero bits
/// shifted out, and `a·c`; folded: one `max(W, EW) × max(25, EW)` multiplier for both) and the
/// normalising `e·R`, all unsigned, split by [`mul_dsps`]. Exact on the test set.
fn softmax_dsps(p: &Params) -> u64 {
    let w = Widths::of(p);
    let lanes = param(p, "DATA_IN_0_PARALLELISM_DIM_0") as u64;
    let win = param(p, "DATA_IN_0_PRECISION_0") as u32;
    let ew = w.ef + 1;
    let exp = if param(p, "FOLD") > 1 {
        split_dsps(win.max(ew), 24.max(ew), None)
    } else {
        split_dsps(win, 24, Some(log2e_const() as u64 >> 1)) + split_dsps(ew, ew, None)
    };
    lanes * (exp + split_dsps(ew, w.qb(), None))
}

/// Operand chunks of `rtl/mase_split_mul.sv`: `(offset, bits)` of each 17-bit slice of `bits`.
fn split_chunks(bits: u32) -> impl Iterator<Item = (u32, u32)> {
    (0..bits).step_by(17).map(move |o| (o, (bits - o).min(17)))
}

/// DSPs of an unsigned `a`×`b` product built by `rtl/mase_split_mul.sv`: one registered partial
/// product per pair of 17-bit chunks, each [`mul_dsps`] of its widths (with `b` the constant
/// `const_b`: each chunk of it trimmed by [`const_factor_bits`]; a chunk that is 0 or a power of
/// two needs no multiplier).
pub(crate) fn split_dsps(a: u32, b: u32, const_b: Option<u64>) -> u64 {
    split_chunks(a)
        .flat_map(|(_, wa)| split_chunks(b).map(move |(ob, wb)| (wa, ob, wb)))
        .map(|(wa, ob, wb)| {
            let wb = match const_b {
                Some(c) => match const_factor_bits((c >> ob) & ((1u64 << wb) - 1), false) {
                    Some(k) => k,
                    None => return 0,
                },
                None => wb,
            };
            mul_dsps(wa, wb, false, false, wa + wb)
        })
        .sum()
}

fn beats(p: &Params) -> usize {
    beats_per_row(p, "DATA_IN_0")
}

/// Levels of the max and adder trees, `⌈log2 P⌉` (each a register stage in the RTL).
pub fn tree_levels(p: &Params) -> u64 {
    let lanes = param(p, "DATA_IN_0_PARALLELISM_DIM_0") as u64;
    if lanes <= 1 {
        0
    } else {
        u64::from(64 - (lanes - 1).leading_zeros())
    }
}

/// FIFO depths `(X, M, E, R)` in beats / rows (each `mase_fifo` holds depth + 1, `X` and `E`
/// one more in their output registers). `E` also covers the `⌈log2 P⌉ + 1` cycles of the
/// pipelined row sum before the divider. A row's reciprocal is on its way or in `R` only while
/// the row's last beat is in `E`, and `k` such rows fill at least `(k - 1)·b + 1` of `E`'s
/// `depth + 2` places, so `R` holds `(depth_E + 1) / b + 1` rows and never fills.
pub fn fifo_depths(p: &Params) -> (u64, u64, u64, u64) {
    let b = beats(p) as u64;
    let qb = Widths::of(p).qb() as u64;
    let ds = tree_levels(p) + 1;
    let de = b + qb + ds + 8;
    (2 * b + 4, 8, de, (de + 1) / b + 1)
}

/// Rows per keep vector: `MASK_ROWS` of a masked instance, 1 otherwise.
pub fn mask_rows(p: &Params, masked: bool) -> u64 {
    if masked {
        param(p, "MASK_ROWS") as u64
    } else {
        1
    }
}

/// [`Component::validate`] of `softmax` (`masked = false`) and `masked_softmax` (`true`, which
/// adds `MASK_ROWS`).
pub(crate) fn validate_of(p: &Params, masked: bool) -> Result<(), String> {
    check_range(p, "DATA_IN_0_PRECISION_0", 1, 16)?;
    check_range(p, "DATA_IN_0_PRECISION_1", 0, 24)?;
    check_range(p, "DATA_IN_0_TENSOR_SIZE_DIM_0", 1, 4096)?;
    check_range(p, "DATA_IN_0_TENSOR_SIZE_DIM_1", 1, 1 << 20)?;
    check_range(p, "DATA_IN_0_PARALLELISM_DIM_0", 1, 1024)?;
    check_range(p, "DATA_IN_0_PARALLELISM_DIM_1", 1, 1)?;
    check_divides(p, "DATA_IN_0_PARALLELISM_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
    check_format(p, "DATA_OUT_0", 32)?;
    check_range(p, "DATA_OUT_0_SIGNED", 0, 1)?;
    check_same_shape(p, "DATA_OUT_0", "DATA_IN_0")?;
    check_modes(p, "DATA_OUT_0")?;
    check_range(p, "EXP_FRAC", 4, 28)?;
    check_range(p, "EXP_TABLE_BITS", 1, 12)?;
    check_range(p, "RECIP_BITS", 4, 28)?;
    check_range(p, "FOLD", 1, 2)?;
    if masked {
        check_range(p, "MASK_ROWS", 1, 1 << 20)?;
        check_divides(p, "MASK_ROWS", "DATA_IN_0_TENSOR_SIZE_DIM_1")?;
    }
    Ok(())
}

/// [`Component::streams`]: `data_in_0`, with a mask the keep stream `data_in_1` (`P` unsigned
/// 1-bit lanes, `L / P` beats per tensor), then `data_out_0`. A masked instance's harness row is
/// one tensor of `MASK_ROWS` rows (as `matmul`'s is one sequence), so that every stream has a
/// whole number of beats per row.
pub(crate) fn streams_of(p: &Params, masked: bool) -> Vec<StreamSpec> {
    let rows = mask_rows(p, masked) as usize;
    let signed = param(p, "DATA_OUT_0_SIGNED") == 1;
    let input = block_stream(p, "DATA_IN_0", Direction::In);
    let output = StreamSpec { signed, ..block_stream(p, "DATA_OUT_0", Direction::Out) };
    if !masked {
        return vec![input, output];
    }
    let keep = StreamSpec { name: "data_in_1".into(), width: 1, signed: false, ..input.clone() };
    vec![
        StreamSpec { beats_per_row: rows * input.beats_per_row, ..input },
        keep,
        StreamSpec { beats_per_row: rows * output.beats_per_row, ..output },
    ]
}

/// [`Component::model`]: every row of `data_in_0` by [`softmax_row_masked`], with a mask under
/// the keep bits of its tensor (`data_in_1`: `L` codes 0/1 per `MASK_ROWS` rows, nonzero = keep).
pub(crate) fn model_of(p: &Params, stim: &Stimulus, masked: bool) -> Result<StreamValues, String> {
    let name = if masked { "masked_softmax" } else { "softmax" };
    let x = stim.input(name, "data_in_0")?;
    let w = Widths::of(p);
    let (gen_hi, gen_lo) = exp_tables(w.ef, w.h);
    let t_hi = stim.memories.get("exp_hi").unwrap_or(&gen_hi);
    let t_lo = stim.memories.get("exp_lo").unwrap_or(&gen_lo);
    for (mem, t) in [("exp_hi", t_hi), ("exp_lo", t_lo)] {
        if t.len() != 1 << w.h {
            return Err(format!(
                "{name} model: memory `{mem}` has {} entries, expected {}",
                t.len(),
                1 << w.h
            ));
        }
    }
    let l = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
    let rows = mask_rows(p, masked) as usize;
    if x.len() % (l * rows) != 0 {
        return Err(format!(
            "{name} model: input has {} values, not a whole number of tensors of {rows} rows of {l}",
            x.len()
        ));
    }
    if !masked {
        return Ok(data_out_0(x.chunks(l).flat_map(|row| softmax_row(p, t_hi, t_lo, row)).collect()));
    }
    let keep = stim.input(name, "data_in_1")?;
    if keep.len() * rows != x.len() {
        return Err(format!(
            "{name} model: {} keep bits for {} tensors of {rows} rows of {l} (one bit per position and tensor)",
            keep.len(),
            x.len() / (l * rows)
        ));
    }
    let mut out = Vec::with_capacity(x.len());
    for (tensor, k) in x.chunks(l * rows).zip(keep.chunks(l)) {
        let k: Vec<bool> = k.iter().map(|&b| b != 0).collect();
        for row in tensor.chunks(l) {
            out.extend(softmax_row_masked(p, t_hi, t_lo, row, Some(&k)));
        }
    }
    Ok(data_out_0(out))
}

/// [`Component::cost`] (per harness row: a row, or a tensor of `MASK_ROWS` rows when masked;
/// the keep beats move with the first row's beats, so they cost no cycles). A mask adds the
/// `L`-bit keep register and one bit per lane of every `X` entry to the memory bits.
pub(crate) fn cost_of(p: &Params, masked: bool) -> Cost {
    let w = Widths::of(p);
    let lanes = param(p, "DATA_IN_0_PARALLELISM_DIM_0") as u64;
    let b = beats(p) as u64;
    let win = param(p, "DATA_IN_0_PRECISION_0") as u64;
    let (dx, dm, de, dr) = fifo_depths(p);
    let ew = w.ef as u64 + 1;
    let mask = u64::from(masked);
    let mem = (dx + 1) * lanes * (win + mask)
        + (dm + 1) * win
        + (de + 1) * lanes * ew
        + (dr + 1) * w.qb() as u64
        + 2 * lanes * (1u64 << w.h) * ew
        + mask * b * lanes;
    let fold = param(p, "FOLD") as u64;
    let tl = tree_levels(p);
    Cost {
        // The row maximum (a leaf register, `⌈log2 P⌉` max-tree levels, the registered running
        // maximum) takes `⌈log2 P⌉ + 2` cycles and the row sum (as many adder-tree levels and the
        // accumulator register) `⌈log2 P⌉ + 1`; the
        // exp pipeline has 10 stages (folded: 7 steps of 2 cycles, the shared multiplier's
        // partial products registered in the DSPs and again in fabric, so each product is
        // summed in its operands' phase two cycles later) and the normalize stage 4 (e·R's
        // partial products registered in the DSPs and again in fabric, then summed). Folded: the
        // first step waits one phase, the row's beats take 2 cycles each and the last one 7 more
        // cycles through the later steps.
        latency_cycles: 2 * b + w.qb() as u64 + 20 + 2 * tl + (fold - 1) * (b + 3),
        ii_cycles: fold * b * mask_rows(p, masked),
        multipliers: (4 - fold) * lanes,
        memory_bits: mem,
    }
}

/// FFs of the pipeline registers that cut the paths for 125 MHz on ECP5, counted exactly on top
/// of the fitted [`SOFTMAX_FF`] (which was fitted before they existed): the max tree's leaf
/// register and its `⌈log2 P⌉` registered levels (`W` bits per node, three flags per level), the
/// second register of the table entries and the registered shift and exp value (per lane
/// `3·(EF + 1)` bits and the shift's `⌈log2(EF + 2)⌉`, four flags; folded, also the tables'
/// output registers between read and second register, `2·(EF + 1)` bits), the adder tree's registered
/// levels (level `l` needs `EF + 1 + l` bits per node, one flag pair per level), the registered
/// row sum for the divider and the registered `e · R` products (the partial products of every
/// `mase_split_mul` sit in the DSPs' multiplier registers; `e · R`'s second copy of them, fabric
/// registers on ECP5, synth_xilinx absorbs into the DSPs: Yosys counts no FFs for it).
fn pipeline_ffs(p: &Params) -> u64 {
    let w = Widths::of(p);
    let lanes = param(p, "DATA_IN_0_PARALLELISM_DIM_0") as u64;
    let win = param(p, "DATA_IN_0_PRECISION_0") as u64;
    let ew = w.ef as u64 + 1;
    let kb = u64::from(64 - (u64::from(w.ef) + 1).leading_zeros());
    let sw = u64::from(w.ef + w.cl + 1);
    let tl = tree_levels(p);
    let nodes = |l: u64| lanes.div_ceil(1 << l);
    let max_tree = (0..=tl).map(|l| nodes(l) * win).sum::<u64>() + 3 * (tl + 1);
    let folded = param(p, "FOLD") > 1;
    let exp = lanes * (3 * ew + kb + if folded { 2 * ew } else { 0 }) + 4;
    let sum_tree = (1..=tl).map(|l| nodes(l) * (ew + l)).sum::<u64>() + 2 * tl + sw + 1;
    // The split multipliers' partial-product registers are absorbed into the DSPs (multiplier
    // registers; unfolded, the table product's operands sit in their input registers; folded,
    // the shared multiplier's second copy of its partial products, as `e · R`'s), so only the
    // flags of the four extra stages (unfolded; the shift's extra stages become shift
    // registers) or of the one extra stage and the two step flags (folded) count; the
    // registered `e · R` after the partial products' sum does, with the two flags of its
    // stages.
    let products = if folded { 4 } else { 8 };
    let norm = lanes * (ew + w.qb() as u64) + 3;
    max_tree + exp + sum_tree + norm + products
}

/// [`Component::resources`]: both exp tables per lane and every FIFO where Yosys puts them; DSPs
/// and LUT/FF per lane (fitted to Yosys 0.23 with `sim/examples/resource_fit.rs`). A mask widens
/// `X` by one bit per lane and adds its logic and registers ([`MASK_LUT`], [`MASK_FF`]).
pub(crate) fn resources_of(p: &Params, masked: bool) -> crate::Resources {
    use crate::resources::{fitted, pu, ram, rom};
    let w = Widths::of(p);
    let lanes = pu(p, "DATA_IN_0_PARALLELISM_DIM_0");
    let (win, wout) = (pu(p, "DATA_IN_0_PRECISION_0"), pu(p, "DATA_OUT_0_PRECISION_0"));
    let ew = w.ef as u64 + 1;
    let (dx, dm, de, dr) = fifo_depths(p);
    let mask = u64::from(masked);
    let mems = [
        ram(dx, lanes * (win + mask)),
        ram(dm, win),
        ram(de, lanes * ew),
        ram(dr, w.qb() as u64),
        rom(1 << w.h, ew),
        rom(1 << w.h, ew),
    ];
    let tables = 2 * lanes - 2;
    let bram18 = mems.iter().map(|m| m.0).sum::<u64>() + tables * mems[4].0;
    let lutram = mems[..4].iter().map(|m| m.1).sum::<u64>();
    let rom_lut = (tables + 2) * mems[4].1;
    let folded = u64::from(param(p, "FOLD") > 1);
    let x = [
        1,
        lanes * win,
        lanes * ew,
        lanes * wout,
        w.qb() as u64,
        rom_lut,
        lanes * w.qb() as u64,
        folded * lanes * win.max(ew),
        w.qb() as u64 * (w.ef + w.cl + 1) as u64,
    ];
    let (mut lut, mut ff) = (fitted(&SOFTMAX_LUT, &x), fitted(&SOFTMAX_FF, &x));
    ff += pipeline_ffs(p);
    // `X` and `E` register their reads once more (`OUT_REG`): a word and a valid flag per group
    // of at most 1024 bits (`mase_wide_fifo`), `E` also its registered ready per group; and the
    // flag that pushes the registered row maximum into `M`.
    let groups = |lane_bits: u64| lanes.div_ceil((1024 / lane_bits).max(1));
    ff += lanes * (win + mask + ew) + groups(win + mask) + 2 * groups(ew) + 1;
    if masked {
        let rows = mask_rows(p, true);
        let row_bits = if rows > 1 { 64 - u64::from((rows - 1).leading_zeros()) } else { 1 };
        let m = [1, pu(p, "DATA_IN_0_TENSOR_SIZE_DIM_0"), lanes, lanes * win, row_bits];
        lut += fitted(&MASK_LUT, &m);
        ff += fitted(&MASK_FF, &m);
    }
    crate::Resources { lut, ff, dsp: softmax_dsps(p), bram18, lutram }
}

impl Component for Softmax {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        validate_of(p, false)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        streams_of(p, false)
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        exp_memories(p)
    }

    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        layout_exp_memory(p, "softmax", mem, values)
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        model_of(p, stim, false)
    }

    fn cost(&self, p: &Params) -> Cost {
        cost_of(p, false)
    }

    fn resources(&self, p: &Params) -> crate::Resources {
        resources_of(p, false)
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            // P = 1, odd row length, 2-bit input
            [input(2, 0), row(5, 1), output(4, 3)].concat(),
            // 16-bit formats, signed output, rounding to nearest
            [
                input(16, 12),
                row(12, 3),
                output(16, 15),
                vec![("DATA_OUT_0_SIGNED", 1), ("DATA_OUT_0_ROUNDING", 2)],
            ]
            .concat(),
            // one beat per row (L = P), small internal widths
            [input(6, 2), row(4, 4), vec![("EXP_FRAC", 10), ("EXP_TABLE_BITS", 4), ("RECIP_BITS", 8)]]
                .concat(),
            // rows of 66 elements, P = 2 (33 beats per row), signed output with SAT_SYM
            [
                input(10, 6),
                row(66, 2),
                output(9, 8),
                vec![("DATA_OUT_0_SIGNED", 1), ("DATA_OUT_0_OVERFLOW", 3)],
            ]
            .concat(),
            // wide beats: 48 lanes (the exp FIFO is split into two groups of lanes), 2 beats per row
            [input(12, 8), row(96, 48), output(16, 16), vec![("EXP_TABLE_BITS", 6)]].concat(),
            // a single element per row: output is 1.0 saturated
            row(1, 1),
            // Folded exp pipeline: defaults at FOLD = 2.
            vec![("FOLD", 2)],
            // Folded, P = 1, odd row length, 16-bit input, signed output.
            [input(16, 12), row(7, 1), output(16, 15), vec![("DATA_OUT_0_SIGNED", 1), ("FOLD", 2)]].concat(),
            // Folded, one beat per row (L = P), small internal widths.
            [
                input(6, 2),
                row(4, 4),
                vec![("EXP_FRAC", 10), ("EXP_TABLE_BITS", 4), ("RECIP_BITS", 8), ("FOLD", 2)],
            ]
            .concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            rows(1, 2),
            input(17, 4),
            row(8, 3),
            vec![("EXP_FRAC", 29)],
            vec![("DATA_OUT_0_SIGNED", 2)],
            vec![("FOLD", 3)],
        ]
    }

    fn generated_memory(&self, p: &Params, mem: &str) -> Option<Vec<i64>> {
        generated_exp_memory(p, mem)
    }

    fn random_stimulus(&self, p: &Params, rows: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Stimulus {
        let mut stim = crate::component::uniform_stimulus(&self.streams(p), &[], rows, rng);
        insert_exp_tables(p, &mut stim);
        stim
    }
}

/// The two exp table memories `exp_hi`, `exp_lo` (`2^H` words of `EF + 1` bits).
pub(crate) fn exp_memories(p: &Params) -> Vec<MemorySpec> {
    let w = Widths::of(p);
    ["exp_hi", "exp_lo"]
        .iter()
        .map(|name| MemorySpec {
            name: name.to_string(),
            param: format!("{}_MEM_FILE", name.to_uppercase()),
            values: 1 << w.h,
            depth: 1 << w.h,
            lanes: 1,
            lane_width: w.ef + 1,
            signed: false,
        })
        .collect()
}

/// [`Component::layout_memory`] of the exp tables: one entry per word.
pub(crate) fn layout_exp_memory(
    p: &Params,
    component: &str,
    mem: &str,
    values: &[i64],
) -> Result<Vec<Vec<i64>>, String> {
    let n = 1usize << Widths::of(p).h;
    if mem != "exp_hi" && mem != "exp_lo" {
        return Err(format!(
            "component `{component}` has no memory `{mem}`; its memories are `exp_hi`, `exp_lo`"
        ));
    }
    if values.len() != n {
        return Err(format!("{component} memory `{mem}`: expected {n} entries, got {}", values.len()));
    }
    Ok(values.iter().map(|&v| vec![v]).collect())
}

/// [`Component::generated_memory`]: the exp tables of [`exp_tables`].
pub(crate) fn generated_exp_memory(p: &Params, mem: &str) -> Option<Vec<i64>> {
    let w = Widths::of(p);
    let (hi, lo) = exp_tables(w.ef, w.h);
    match mem {
        "exp_hi" => Some(hi),
        "exp_lo" => Some(lo),
        _ => None,
    }
}

/// Puts the generated exp tables into a stimulus.
pub(crate) fn insert_exp_tables(p: &Params, stim: &mut Stimulus) {
    let w = Widths::of(p);
    let (hi, lo) = exp_tables(w.ef, w.h);
    stim.memories.insert("exp_hi".into(), hi);
    stim.memories.insert("exp_lo".into(), lo);
}

impl Binding for Softmax {
    /// A softmax given a second (boolean key mask) input binds `masked_softmax`.
    fn variant(&self, v: &NodeView) -> Option<&'static dyn Binding> {
        (v.node.inputs.len() == 2).then_some(&super::masked_softmax::MaskedSoftmax as &dyn Binding)
    }

    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let mase_ir::Op::Softmax { axis } = &v.node.op else {
            return Err(v.error("the softmax component binds softmax nodes only"));
        };
        let shape = v.in_shape(0)?;
        v.require_last_axis(*axis, shape.len())?;
        let out = v.out_format()?;
        crate::binding::Overrides::default()
            .tensor("DATA_IN_0", &v.signed_input(0, 16)?, &shape, par.p_in)
            .output(&out)
            .set("DATA_OUT_0_SIGNED", out.signed as i64)
            .set("FOLD", par.fold as i64)
            .done()
    }

    /// Every divisor of the row up to 256 lanes, at full rate and with the exp pipeline folded
    /// (`FOLD = 2`: `2P` multipliers at half the rate, which the search takes where the node
    /// has slack).
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        let lanes = crate::binding::divisors(v.row_len()?, 256);
        Ok([1, 2]
            .into_iter()
            .flat_map(|f| lanes.iter().map(move |&p| Par { fold: f, ..Par::lanes(p) }))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    #[test]
    fn row_maximum_has_exp_exactly_one() {
        let p = resolve_params::<&str>(&Softmax, &[]).unwrap();
        let w = Widths::of(&p);
        let (hi, lo) = exp_tables(w.ef, w.h);
        assert_eq!(exp_code(&w, &hi, &lo, 0), 1 << w.ef);
        // exp(-1) for d = 1.0 (16 codes at F = 4)
        let e1 = exp_code(&w, &hi, &lo, 16) as f64 / (1u64 << w.ef) as f64;
        assert!((e1 - exp_neg(1.0)).abs() < 1e-6, "{e1}");
    }

    #[test]
    fn rtl_uses_the_same_log2e_constant() {
        let sv = std::fs::read_to_string(crate::rtl_dir().join("mase_softmax_core.sv")).unwrap();
        let want = format!("localparam logic [24:0] K = 25'd{};", log2e_const());
        assert!(sv.contains(&want), "rtl/mase_softmax_core.sv must declare `{want}`");
    }

    #[test]
    fn uniform_row_gives_one_over_l() {
        let p = resolve_params(
            &Softmax,
            &[("DATA_OUT_0_PRECISION_0", 16), ("DATA_OUT_0_PRECISION_1", 16), ("DATA_OUT_0_ROUNDING", 2)],
        )
        .unwrap();
        let w = Widths::of(&p);
        let (hi, lo) = exp_tables(w.ef, w.h);
        let y = softmax_row(&p, &hi, &lo, &[5; 8]);
        assert!(y.iter().all(|&v| v == 1 << 13), "{y:?}");
    }
}
