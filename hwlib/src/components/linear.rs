//! `linear`: fixed-point fully connected layer `y = x·Wᵀ + b` over a stream of rows
//! (`rtl/mase_linear.sv`), `P_IN × P_OUT` multipliers, weights and bias in ROMs.
//!
//! Datapath and read order (what [`Linear::layout_memory`] lays out): for each output block `ob`
//! (`P_OUT` outputs) and each input chunk `ib` (`P_IN` inputs, fastest), weight word
//! `ob·(IN/P_IN) + ib` holds `W[ob·P_OUT + o][ib·P_IN + i]` in lane `o·P_IN + i`; bias word `ob`
//! holds `b[ob·P_OUT + o]` in lane `o`. The sum is exact (products and bias aligned to
//! `max(frac_x + frac_w, frac_b)` fractional bits), the optional fused ReLU acts on the exact sum,
//! and one cast ([`mase_ir::fixed::cast_code`], modes from `DATA_OUT_0_ROUNDING/OVERFLOW`) gives
//! each output. The input row is double-buffered, so every multiplier is busy every cycle:
//! II = `(OUT/P_OUT)·(IN/P_IN)` cycles per row, first output `2·IN/P_IN + 6` cycles after the
//! first input beat, `+ 7` with products of 24 bits or more and `P_IN ≥ 3`
//! ([`dot_product_stages`]), one more when the weight ROM is split by depth ([`weight_pieces`]:
//! weight word `a` of a split ROM holds the words `a`, `depth + a`, … side by side).
//!
//! Per-channel weight precision (`WEIGHT_PER_CHANNEL = 1`): output channel `o` has weight fraction
//! width `f_o = WEIGHT_PRECISION_1 − s_o` with the shift code `s_o ∈ 0..2^WEIGHT_SHIFT_WIDTH`
//! in memory `weight_shift` (logical `[out]`, word `ob` holds `s[ob·P_OUT + o]` in lane `o`). The
//! RTL shifts channel `o`'s product sums left by `s_o` into the accumulator, so every channel's
//! exact sum (and the per-tensor bias) has the fraction `max(frac_x + WEIGHT_PRECISION_1, frac_b)`
//! and the single output cast is the per-tensor one. Latency and II do not change.

use mase_ir::fixed::{accumulate, cast_code};

use super::cast::{check_modes, output_format};
use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    check_memory_len,
    data_out_0, Component, Cost, Info, MemorySpec, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{bias, input, layer_formats, modes, output, row, rows, weight};
use crate::port::{check_format, check_row_shape, unary_streams};
use crate::{
    check_divides, check_equal, check_range, output_modes, param, param_list, pingpong_bits, port_format,
    port_shape,
};

/// Widest product (bits) whose `P_IN` products `mase_dot_product` sums in one register stage
/// (its `SUM_SPLIT_WIDTH`). A wider one, of 3 or more products, is summed over two (P and S3):
/// linear 16-bit × 16-bit at `P_IN = 4`, `P_OUT = 5` routed at 116.2 MHz with the DSP outputs'
/// routing and the 34-bit sum in one cycle, and the demo encoder layer's FFN linear (16-bit ×
/// 8-bit, `P_IN = 4`) at 109.0 MHz with its 26-bit sum in one cycle (LFE5U-85F-6).
const SUM_SPLIT_WIDTH: u64 = 23;

/// Register stages of `mase_dot_product`'s product sums (its `SUM_STAGES`): 2 for products of
/// `x_width + w_width > SUM_SPLIT_WIDTH` bits summed `p_in ≥ 3` at a time, else 1.
pub(crate) fn sum_stages(x_width: u64, w_width: u64, p_in: u64) -> u64 {
    if x_width + w_width > SUM_SPLIT_WIDTH && p_in >= 3 {
        2
    } else {
        1
    }
}

/// Cycles `mase_dot_product` (shared by linear and matmul) takes from a block's last chunk in the
/// caller's S1 to the block's output beat: R (S1 registered; on ECP5 a weight ROM's block-RAM
/// output register), D (R registered again in the multipliers' input registers), S2 products,
/// [P partial sums, see [`sum_stages`]], S3 sums, S4 accumulators, output register
/// (`rtl/mase_dot_product.sv`): 6, or 7 with P.
pub(crate) fn dot_product_stages(x_width: u64, w_width: u64, p_in: u64) -> u64 {
    5 + sum_stages(x_width, w_width, p_in)
}

/// Flip-flops of `mase_dot_product`'s stage P (none without it): per output lane the
/// `⌈P_IN / 2^l⌉` partial sums of `2^l` products (`l = ⌈levels / 2⌉` of the `⌈log2 P_IN⌉`-level
/// tree), each `x_width + w_width + l` bits, plus the first/last/valid flags and the caller's tag
/// (`tag_bits`), which now leaves a stage later.
pub(crate) fn dot_product_p_ffs(x_width: u64, w_width: u64, p_in: u64, p_out: u64, tag_bits: u64) -> u64 {
    if sum_stages(x_width, w_width, p_in) == 1 {
        return 0;
    }
    let levels = crate::resources::clog2(p_in);
    let l = levels.div_ceil(2);
    let groups = p_in.div_ceil(1 << l);
    p_out * groups * (x_width + w_width + l) + 3 + tag_bits
}

/// Aspect ratios `(bits, words)` of an 18-kbit block RAM: ECP5's DP16KD and 7-series' RAMB18E1
/// alike.
const BRAM_RATIOS: [(u64, u64); 6] = [(1, 16384), (2, 8192), (4, 4096), (9, 2048), (18, 1024), (36, 512)];

/// Block RAMs a memory of `depth` words of `width` bits takes in its cheapest aspect ratio: over
/// every ratio, or (`unsplit`) over those at least `depth` deep, with no multiplexer after the
/// reads (`u64::MAX` when none is that deep). The RTL's `w_brams`.
fn ratio_brams(depth: u64, width: u64, unsplit: bool) -> u64 {
    BRAM_RATIOS
        .iter()
        .filter(|&&(_, d)| !unsplit || d >= depth)
        .map(|&(w, d)| width.div_ceil(w) * depth.div_ceil(d))
        .min()
        .unwrap_or(u64::MAX)
}

/// `(words per piece, pieces)` of a weight ROM of `words` words of `width` bits (the RTL's
/// `w_piece_depth` and `WK`). Whole (`(words, 1)`) when an aspect ratio at least `words` deep is
/// among the cheapest; otherwise synthesis would split it by depth with a multiplexer between the
/// block RAMs and their first register (so their output registers could not take that register),
/// and the ROM is cut into the fewest pieces of a power-of-two depth, at least 512, whose
/// side-by-side words are cheapest unsplit. A split ROM's read is registered once more before the
/// piece is selected: one more cycle of latency ([`weight_stages`]).
pub(crate) fn weight_pieces(words: u64, width: u64) -> (u64, u64) {
    if ratio_brams(words, width, true) <= ratio_brams(words, width, false) {
        return (words, 1);
    }
    let mut pd = 1u64 << (crate::resources::clog2(words) - 1);
    while pd > 512 {
        let w = words.div_ceil(pd) * width;
        if ratio_brams(pd, w, true) <= ratio_brams(pd, w, false) {
            break;
        }
        pd /= 2;
    }
    (pd, words.div_ceil(pd))
}

/// Stages a weight ROM adds before the dot product: 1 (the pieces' read registered, stage M) when
/// [`weight_pieces`] splits it, else 0.
fn weight_stages(d: &Dims, p: &Params) -> u64 {
    u64::from(d.weight_pieces(p).1 > 1)
}

/// LUT model of linear over the features of [`Linear`]'s `resources`, fitted to Yosys 0.23 with
/// `sim/examples/resource_fit.rs` (36 instances).
const LINEAR_LUT: [f64; 6] = [0.0, 1.38, 0.78, 0.0, 8.9, 6.79];
/// FF model of linear (same features and fit).
const LINEAR_FF: [f64; 6] = [0.0, 0.68, 1.16, 2.28, 7.5, 1.28];

/// The linear component.
pub struct Linear;

/// Largest allowed distance between the bias fractional bits and the product fractional bits
/// (keeps the exact accumulator within 128 bits).
pub const MAX_BIAS_ALIGN: i64 = 32;

/// Largest `WEIGHT_SHIFT_WIDTH`: channel fraction widths may then spread over 15 bits, and the
/// exact accumulator still fits in 128 bits (RTL and model).
pub const MAX_WEIGHT_SHIFT_WIDTH: i64 = mase_ir::quant::channel::MAX_CHANNEL_SHIFT_BITS as i64;

/// The RTL files linear and matmul instantiate: their shared dot-product datapath
/// (`mase_dot_product`) and its multipliers (`mase_dsp_mul`), the double-buffered operand rows
/// (`mase_pingpong_buffer`), the output cast and register.
pub(crate) const DOT_PRODUCT_RTL: &[&str] = &[
    "mase_assert.svh",
    "mase_cast_core.sv",
    "mase_skid_buffer.sv",
    "mase_pingpong_buffer.sv",
    "mase_delay.sv",
    "mase_dsp_mul.sv",
    "mase_dot_product.sv",
];

/// The input rows' shape parameters of a layer (`linear`'s and `qlinear`'s).
pub(crate) const IN_SHAPE: [ParamSpec; 4] = port_shape!(
    "DATA_IN_0",
    [64, 1, 4, 1],
    [
        "IN: elements per input row (1..65536)",
        "rows per tensor (any number of rows may stream)",
        "P_IN: input elements per beat (divides IN)",
        "input rows per beat (must be 1)",
    ]
);

/// The weight's shape parameters and `HAS_BIAS` (`linear`'s and `qlinear`'s).
pub(crate) const WEIGHT_SHAPE: [ParamSpec; 5] = [
    ParamSpec::same_as("WEIGHT_TENSOR_SIZE_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0", "weight columns (= IN)"),
    ParamSpec::value("WEIGHT_TENSOR_SIZE_DIM_1", 64, "OUT: weight rows = outputs per row (1..65536)"),
    ParamSpec::same_as("WEIGHT_PARALLELISM_DIM_0", "DATA_IN_0_PARALLELISM_DIM_0", "weight block columns (= P_IN)"),
    ParamSpec::value("WEIGHT_PARALLELISM_DIM_1", 4, "P_OUT: outputs per beat (divides OUT)"),
    ParamSpec::value("HAS_BIAS", 1, "1: add the bias vector, 0: no bias"),
];

/// The bias's shape parameters (`linear`'s and `qlinear`'s).
pub(crate) const BIAS_SHAPE: [ParamSpec; 2] = [
    ParamSpec::same_as("BIAS_TENSOR_SIZE_DIM_0", "WEIGHT_TENSOR_SIZE_DIM_1", "bias elements (= OUT)"),
    ParamSpec::same_as("BIAS_PARALLELISM_DIM_0", "WEIGHT_PARALLELISM_DIM_1", "bias elements per word (= P_OUT)"),
];

/// The output rows' shape parameters of a layer (`linear`'s and `qlinear`'s).
pub(crate) const OUT_SHAPE: [ParamSpec; 4] = [
    ParamSpec::same_as("DATA_OUT_0_TENSOR_SIZE_DIM_0", "WEIGHT_TENSOR_SIZE_DIM_1", "output elements per row (= OUT)"),
    ParamSpec::same_as("DATA_OUT_0_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1", "output rows (= input rows)"),
    ParamSpec::same_as("DATA_OUT_0_PARALLELISM_DIM_0", "WEIGHT_PARALLELISM_DIM_1", "outputs per beat (= P_OUT)"),
    ParamSpec::same_as("DATA_OUT_0_PARALLELISM_DIM_1", "DATA_IN_0_PARALLELISM_DIM_1", "output rows per beat (= 1)"),
];

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "linear",
    description: "fully connected layer y = x·Wᵀ + b, P_IN×P_OUT multipliers, ROM weights, exact sum, output cast, optional ReLU",
    dependencies: DOT_PRODUCT_RTL,
    buffers_whole_unit: true,
    params: param_list![
        port_format!("DATA_IN_0", 8, "input element bits (1..32, signed)", 4, "input fractional bits"),
        IN_SHAPE,
        port_format!("WEIGHT", 8, "weight bits (1..32, signed)", 4, "weight fractional bits"),
        WEIGHT_SHAPE,
        port_format!(
            "BIAS",
            8,
            "bias bits (1..32, signed)",
            4,
            "bias fractional bits (within 32 of input + weight frac)"
        ),
        BIAS_SHAPE,
        port_format!("DATA_OUT_0", 8, "output element bits (1..64, signed)", 4, "output fractional bits"),
        OUT_SHAPE,
        output_modes!("DATA_OUT_0", "output rounding", "output overflow"),
        [
            ParamSpec::value("FUSED_RELU", 0, "1: max(0, ·) on the exact sum before the output cast"),
            ParamSpec::value(
                "WEIGHT_PER_CHANNEL",
                0,
                "1: output channel o has weight frac WEIGHT_PRECISION_1 − s_o (memory weight_shift), 0: one weight format",
            ),
            ParamSpec::value(
                "WEIGHT_SHIFT_WIDTH",
                2,
                "bits of each channel shift code s_o (1..4, spread up to 2^W − 1 bits; per-channel only)",
            ),
        ],
    ],
    ..Info::DEFAULT
};

/// Overrides of the test instances: `OUT` outputs per row (`WEIGHT_TENSOR_SIZE_DIM_1`) in
/// beats of `P_OUT` (`WEIGHT_PARALLELISM_DIM_1`).
fn outputs(out: i64, p_out: i64) -> crate::overrides::Overrides {
    vec![("WEIGHT_TENSOR_SIZE_DIM_1", out), ("WEIGHT_PARALLELISM_DIM_1", p_out)]
}

/// Derived sizes of an instance.
struct Dims {
    inp: usize,
    out: usize,
    p_in: usize,
    p_out: usize,
    has_bias: bool,
    /// Bits of a channel shift code, `None` for per-tensor weights.
    shift_width: Option<u32>,
}

impl Dims {
    fn of(p: &Params) -> Dims {
        Dims {
            inp: param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize,
            out: param(p, "WEIGHT_TENSOR_SIZE_DIM_1") as usize,
            p_in: param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize,
            p_out: param(p, "WEIGHT_PARALLELISM_DIM_1") as usize,
            has_bias: param(p, "HAS_BIAS") == 1,
            shift_width: (param(p, "WEIGHT_PER_CHANNEL") == 1).then(|| param(p, "WEIGHT_SHIFT_WIDTH") as u32),
        }
    }

    /// Input chunks per row (input beats per row).
    fn nib(&self) -> usize {
        self.inp / self.p_in
    }

    /// Output blocks per row (output beats per row).
    fn nob(&self) -> usize {
        self.out / self.p_out
    }

    /// The weight ROM's `(words per piece, pieces)` ([`weight_pieces`]).
    fn weight_pieces(&self, p: &Params) -> (u64, u64) {
        let width = (self.p_out * self.p_in) as u64 * param(p, "WEIGHT_PRECISION_0") as u64;
        weight_pieces((self.nob() * self.nib()) as u64, width)
    }
}

/// Fractional bits of a product, `frac_x + frac_w`.
fn product_frac(p: &Params) -> i64 {
    param(p, "DATA_IN_0_PRECISION_1") + param(p, "WEIGHT_PRECISION_1")
}

/// Checks the logical contents of memory `weight_shift`: `OUT` codes in `0..2^WEIGHT_SHIFT_WIDTH`.
fn check_shifts(d: &Dims, values: &[i64]) -> Result<(), String> {
    let sw = d.shift_width.unwrap_or(0);
    check_memory_len("linear", "weight_shift", values, d.out, "OUT")?;
    let max = (1i64 << sw) - 1;
    match values.iter().position(|&v| !(0..=max).contains(&v)) {
        Some(o) => Err(format!(
            "linear: weight_shift[{o}] = {} is outside 0..={max} (WEIGHT_SHIFT_WIDTH {sw})",
            values[o]
        )),
        None => Ok(()),
    }
}

impl Component for Linear {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_format(p, "DATA_IN_0", 32)?;
        check_row_shape(p, "DATA_IN_0", 65536, 1 << 20, 1024)?;
        check_format(p, "WEIGHT", 32)?;
        check_equal(p, "WEIGHT_TENSOR_SIZE_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
        check_range(p, "WEIGHT_TENSOR_SIZE_DIM_1", 1, 65536)?;
        check_equal(p, "WEIGHT_PARALLELISM_DIM_0", "DATA_IN_0_PARALLELISM_DIM_0")?;
        check_range(p, "WEIGHT_PARALLELISM_DIM_1", 1, 1024)?;
        check_divides(p, "WEIGHT_PARALLELISM_DIM_1", "WEIGHT_TENSOR_SIZE_DIM_1")?;
        let mults = param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "WEIGHT_PARALLELISM_DIM_1");
        if mults > 4096 {
            return Err(format!(
                "DATA_IN_0_PARALLELISM_DIM_0 * WEIGHT_PARALLELISM_DIM_1 must be between 1 and 4096, got {mults}"
            ));
        }
        check_range(p, "HAS_BIAS", 0, 1)?;
        check_format(p, "BIAS", 32)?;
        let (bf, pf) = (param(p, "BIAS_PRECISION_1"), product_frac(p));
        if param(p, "HAS_BIAS") == 1 && (bf - pf).abs() > MAX_BIAS_ALIGN {
            return Err(format!(
                "BIAS_PRECISION_1 ({bf}) must be within {MAX_BIAS_ALIGN} of DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1 ({pf})"
            ));
        }
        check_equal(p, "BIAS_TENSOR_SIZE_DIM_0", "WEIGHT_TENSOR_SIZE_DIM_1")?;
        check_equal(p, "BIAS_PARALLELISM_DIM_0", "WEIGHT_PARALLELISM_DIM_1")?;
        check_format(p, "DATA_OUT_0", 64)?;
        check_equal(p, "DATA_OUT_0_TENSOR_SIZE_DIM_0", "WEIGHT_TENSOR_SIZE_DIM_1")?;
        check_equal(p, "DATA_OUT_0_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1")?;
        check_equal(p, "DATA_OUT_0_PARALLELISM_DIM_0", "WEIGHT_PARALLELISM_DIM_1")?;
        check_equal(p, "DATA_OUT_0_PARALLELISM_DIM_1", "DATA_IN_0_PARALLELISM_DIM_1")?;
        check_modes(p, "DATA_OUT_0")?;
        check_range(p, "FUSED_RELU", 0, 1)?;
        check_range(p, "WEIGHT_PER_CHANNEL", 0, 1)?;
        check_range(p, "WEIGHT_SHIFT_WIDTH", 1, MAX_WEIGHT_SHIFT_WIDTH)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        unary_streams(p)
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        let d = Dims::of(p);
        let (piece_depth, pieces) = d.weight_pieces(p);
        let mut m = vec![MemorySpec {
            name: "weight".into(),
            param: "WEIGHT_MEM_FILE".into(),
            values: d.out * d.inp,
            depth: piece_depth as usize,
            lanes: pieces as usize * d.p_out * d.p_in,
            lane_width: param(p, "WEIGHT_PRECISION_0") as u32,
            signed: true,
        }];
        if d.has_bias {
            m.push(MemorySpec {
                name: "bias".into(),
                param: "BIAS_MEM_FILE".into(),
                values: d.out,
                depth: d.nob(),
                lanes: d.p_out,
                lane_width: param(p, "BIAS_PRECISION_0") as u32,
                signed: true,
            });
        }
        if let Some(sw) = d.shift_width {
            m.push(MemorySpec {
                name: "weight_shift".into(),
                param: "WEIGHT_SHIFT_MEM_FILE".into(),
                values: d.out,
                depth: d.nob(),
                lanes: d.p_out,
                lane_width: sw,
                signed: false,
            });
        }
        m
    }

    /// `weight`: logical `[out][in]` row-major (as `torch.nn.Linear.weight`); `bias`: `[out]`;
    /// `weight_shift` (per-channel weights): `[out]`, `s_o = WEIGHT_PRECISION_1 − f_o`.
    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        let d = Dims::of(p);
        match mem {
            "weight" => {
                check_memory_len("linear", mem, values, d.out * d.inp, &format!("OUT {} × IN {}", d.out, d.inp))?;
                let mut words = Vec::with_capacity(d.nob() * d.nib());
                for ob in 0..d.nob() {
                    for ib in 0..d.nib() {
                        let mut w = Vec::with_capacity(d.p_out * d.p_in);
                        for o in 0..d.p_out {
                            for i in 0..d.p_in {
                                w.push(values[(ob * d.p_out + o) * d.inp + ib * d.p_in + i]);
                            }
                        }
                        words.push(w);
                    }
                }
                // A split ROM: word a holds words a, depth + a, 2·depth + a, … side by side
                // (zeros past the last).
                let (depth, pieces) = d.weight_pieces(p);
                if pieces == 1 {
                    return Ok(words);
                }
                let lanes = d.p_out * d.p_in;
                Ok((0..depth as usize)
                    .map(|a| {
                        (0..pieces as usize)
                            .flat_map(|k| {
                                words.get(k * depth as usize + a).cloned().unwrap_or_else(|| vec![0; lanes])
                            })
                            .collect()
                    })
                    .collect())
            }
            "bias" if d.has_bias => {
                check_memory_len("linear", mem, values, d.out, "OUT")?;
                Ok(values.chunks(d.p_out).map(<[i64]>::to_vec).collect())
            }
            "weight_shift" if d.shift_width.is_some() => {
                check_shifts(&d, values)?;
                Ok(values.chunks(d.p_out).map(<[i64]>::to_vec).collect())
            }
            _ => Err(format!(
                "component `linear` has no memory `{mem}` (memories: weight{}{})",
                if d.has_bias { ", bias" } else { "" },
                if d.shift_width.is_some() { ", weight_shift" } else { "" }
            )),
        }
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let d = Dims::of(p);
        let x = stim.input("linear", "data_in_0")?;
        let w = stim.memories.get("weight").ok_or("linear model: missing memory `weight`")?;
        if w.len() != d.out * d.inp {
            return Err(format!("linear model: weight has {} values, expected {}", w.len(), d.out * d.inp));
        }
        if x.len() % d.inp != 0 {
            return Err(format!("linear model: {} input values are not whole rows of {}", x.len(), d.inp));
        }
        let bias = if d.has_bias {
            let b = stim.memories.get("bias").ok_or("linear model: missing memory `bias`")?;
            if b.len() != d.out {
                return Err(format!("linear model: bias has {} values, expected {}", b.len(), d.out));
            }
            Some(b)
        } else {
            None
        };
        let (xf, wf) = (param(p, "DATA_IN_0_PRECISION_1") as i32, param(p, "WEIGHT_PRECISION_1") as i32);
        let bf = param(p, "BIAS_PRECISION_1") as i32;
        let pf = xf + wf;
        let af = if d.has_bias { pf.max(bf) } else { pf };
        let relu = param(p, "FUSED_RELU") == 1;
        let shifts = match d.shift_width {
            Some(_) => {
                let s =
                    stim.memories.get("weight_shift").ok_or("linear model: missing memory `weight_shift`")?;
                check_shifts(&d, s).map_err(|e| format!("linear model: {e}"))?;
                Some(s)
            }
            None => None,
        };
        let to = output_format(p, "DATA_OUT_0", true);
        let mut y = Vec::with_capacity(x.len() / d.inp * d.out);
        for row in x.chunks(d.inp) {
            for o in 0..d.out {
                let wrow = &w[o * d.inp..(o + 1) * d.inp];
                let (sum, sum_frac) = accumulate(row.iter().copied().zip(wrow.iter().copied()), xf, wf)
                    .ok_or("linear model: dot product exceeds 128 bits")?;
                // Channel o's weights have `s_o` fewer fractional bits than WEIGHT_PRECISION_1.
                let s_o = shifts.map_or(0, |s| s[o] as i32);
                // Exact alignment to `af` (|af - frac| ≤ 32 and s_o ≤ 15 by validation: the RTL's
                // accumulator width, within i128).
                let mut acc = sum << (af - sum_frac + s_o);
                if let Some(b) = bias {
                    acc += (b[o] as i128) << (af - bf);
                }
                if relu && acc < 0 {
                    acc = 0;
                }
                y.push(cast_code(acc, af, &to));
            }
        }
        Ok(data_out_0(y))
    }

    /// Memory bits include the channel shift ROM (`OUT × WEIGHT_SHIFT_WIDTH` bits) when
    /// per-channel; the shift adds no stage, so latency and II are the per-tensor ones. A split
    /// weight ROM ([`weight_pieces`]) counts its padding words and adds a cycle (stage M).
    fn cost(&self, p: &Params) -> Cost {
        let d = Dims::of(p);
        let row_buffer = pingpong_bits(d.nib(), d.p_in as u64 * param(p, "DATA_IN_0_PRECISION_0") as u64);
        let roms: u64 = self.memories(p).iter().map(MemorySpec::bits).sum();
        Cost {
            latency_cycles: 2 * d.nib() as u64
                + weight_stages(&d, p)
                + dot_product_stages(
                    param(p, "DATA_IN_0_PRECISION_0") as u64,
                    param(p, "WEIGHT_PRECISION_0") as u64,
                    d.p_in as u64,
                ),
            ii_cycles: (d.nob() * d.nib()) as u64,
            multipliers: (d.p_in * d.p_out) as u64,
            memory_bits: roms + row_buffer,
        }
    }

    /// DSPs by Yosys' multiplier mapping (P_IN × P_OUT products of IW × WW bits; products under
    /// 9 bits go to LUTs), the weight ROM in block RAM (`rom_style = "block"`), the bias ROM and
    /// the row buffer by Yosys' ROM and RAM rules; LUT/FF fitted to Yosys 0.23 with
    /// `sim/examples/resource_fit.rs` over `[1, LUT-multiplier bits, accumulator bits
    /// (P_OUT × (IW + WW + log2 IN)), output bits, block-counter bits, bias-ROM LUTs]`.
    fn resources(&self, p: &Params) -> crate::Resources {
        linear_resources(p, None)
    }

    /// [`Linear::resources`] with the weight ROM's width cut to its varying bit columns.
    fn resources_with_memories(&self, p: &Params, memories: &StreamValues) -> crate::Resources {
        let varying = memories
            .get("weight")
            .and_then(|v| self.layout_memory(p, "weight", v).ok())
            .map(|words| crate::resources::varying_bits(&words, param(p, "WEIGHT_PRECISION_0") as u32));
        linear_resources(p, varying)
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // The performance point (IN = OUT = 64, P_IN = P_OUT = 4, 8-bit), output range
            // widened so that most results do not saturate.
            output(16, 2),
            // P = 1, odd sizes, 2..4-bit formats, fused ReLU.
            [
                layer_formats((2, 1), (3, 2), (2, 0), (4, 2)),
                row(5, 1),
                outputs(3, 1),
                vec![("FUSED_RELU", 1)],
            ]
            .concat(),
            // Non-square, odd, bias finer than the products, RND_CONV + SAT_SYM; 24-bit products
            // three per sum, the narrowest that take stage P.
            [layer_formats((17, 6), (7, 5), (16, 14), (11, 3)), row(9, 3), outputs(6, 2), modes(6, 3)]
                .concat(),
            // No bias, 16-bit operands, P_OUT = OUT (one block), RND + WRAP.
            [
                input(16, 8),
                row(12, 4),
                weight(16, 12),
                outputs(5, 5),
                vec![("HAS_BIAS", 0)],
                output(16, -2),
                modes(2, 0),
            ]
            .concat(),
            // One input beat per row and three output blocks (IN = P_IN, OUT = 3·P_OUT): one
            // chunk per block, so the bias word changes every cycle; bias coarser than the
            // products, TRN_ZERO + SAT_ZERO.
            [row(4, 4), outputs(9, 3), bias(10, -1), output(9, 5), modes(1, 2)].concat(),
            // Per-channel weights at the performance point (spread up to 3 bits), wide output.
            [output(20, 2), vec![("WEIGHT_PER_CHANNEL", 1)]].concat(),
            // Per-channel, P = 1, odd sizes, 3..6-bit formats, spread up to 7 bits, bias coarser
            // than the products, fused ReLU.
            [
                layer_formats((3, 1), (4, 3), (5, 2), (6, 1)),
                row(7, 1),
                outputs(5, 1),
                vec![("FUSED_RELU", 1), ("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 3)],
            ]
            .concat(),
            // Per-channel, non-square, odd, the widest spread (15 bits), bias finer than the
            // products, RND_CONV + SAT_SYM.
            [
                layer_formats((13, 6), (7, 5), (16, 14), (30, 3)),
                row(9, 3),
                outputs(6, 2),
                modes(6, 3),
                vec![("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 4)],
            ]
            .concat(),
            // Per-channel, no bias, one chunk per block (the shift changes every cycle), 16-bit
            // operands, 1-bit codes, RND + WRAP.
            [
                input(16, 8),
                row(4, 4),
                weight(16, 12),
                outputs(6, 3),
                vec![("HAS_BIAS", 0)],
                output(16, 0),
                modes(2, 0),
                vec![("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 1)],
            ]
            .concat(),
            // A weight ROM split by depth: 5120 words of 36 bits are cheapest in 2048x9 block
            // RAMs, so three pieces of 2048 words side by side (the last one half padding), stage
            // M and a three-way piece select.
            [row(80, 1), weight(9, 7), outputs(256, 4)].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            row(64, 3),
            rows(1, 2),
            input(33, 4),
            bias(8, 60),
            vec![("DATA_OUT_0_TENSOR_SIZE_DIM_0", 32)],
            vec![("FUSED_RELU", 2)],
            vec![("WEIGHT_PER_CHANNEL", 2)],
            vec![("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 0)],
            vec![("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 5)],
        ]
    }
}

/// The per-channel alignment shifts `s_o = WEIGHT_PRECISION_1 − f_o` of a weight quantized per
/// channel (memory `weight_shift`), `None` for a per-tensor weight.
fn channel_shifts(w: &mase_ir::tensor::QuantTensor) -> Option<Vec<i64>> {
    let fracs = w.channel_frac.as_ref()?;
    Some(fracs.iter().map(|f| i64::from(w.format.frac - f)).collect())
}

impl Binding for Linear {
    /// A weight-only linear (the model's own weight codes with real scales, see
    /// [`mase_ir::quant::qlinear::is_weight_only`]) binds `qlinear`, whose requantisation applies
    /// the scales; its weight memory holds the model's codes.
    fn variant(&self, v: &NodeView) -> Option<&'static dyn Binding> {
        mase_ir::quant::qlinear::is_weight_only(v.graph, v.node).then_some(&super::qlinear::Qlinear as _)
    }

    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let mase_ir::Op::Linear { weight, bias } = &v.node.op else {
            return Err(v.error("the linear component binds linear nodes only"));
        };
        let shape = v.in_shape(0)?;
        let cols = *shape.last().unwrap_or(&1);
        let w = v.qweight(weight)?;
        let wshape = w.codes.shape().to_vec();
        if wshape.len() != 2 || wshape[1] != cols {
            return Err(v.error(format!("weight `{weight}` has shape {wshape:?}; expected [out, {cols}]")));
        }
        let mut o = crate::binding::Overrides::default();
        o.tensor("DATA_IN_0", &v.signed_input(0, 32)?, &shape, par.p_in)
            .format("WEIGHT", &w.format)
            .set("WEIGHT_TENSOR_SIZE_DIM_1", wshape[0] as i64)
            .set("WEIGHT_PARALLELISM_DIM_1", par.p_out as i64);
        if let Some(shifts) = channel_shifts(w) {
            // The narrowest shift code that holds every channel's alignment (at least 1 bit).
            let top = shifts.iter().copied().max().unwrap_or(0);
            let bits = (64 - top.leading_zeros() as i64).max(1);
            o.set("WEIGHT_PER_CHANNEL", 1).set("WEIGHT_SHIFT_WIDTH", bits);
        }
        match bias {
            Some(b) => o.set("HAS_BIAS", 1).format("BIAS", &v.qweight(b)?.format),
            None => o.set("HAS_BIAS", 0),
        };
        o.output(&v.out_format()?).done()
    }

    /// Every `P_IN` dividing the input row and `P_OUT` dividing the output row, up to 256 each
    /// and 4096 multipliers.
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        use crate::binding::{divisors, Par};
        let out = *v.out_shape()?.last().unwrap_or(&1);
        let mut c = Vec::new();
        for p_in in divisors(v.row_len()?, 256) {
            for p_out in divisors(out, 256) {
                if p_in * p_out <= 4096 {
                    c.push(Par::io(p_in, p_out));
                }
            }
        }
        Ok(c)
    }

    fn data_memories(&self, v: &NodeView, _p: &Params) -> mase_ir::Result<Vec<(String, Vec<i64>)>> {
        let mase_ir::Op::Linear { weight, bias } = &v.node.op else { return Ok(Vec::new()) };
        let mut m = vec![("weight".to_string(), v.weight_codes(weight)?)];
        if let Some(shifts) = channel_shifts(v.qweight(weight)?) {
            m.push(("weight_shift".to_string(), shifts));
        }
        if let Some(b) = bias {
            m.push(("bias".to_string(), v.weight_codes(b)?));
        }
        Ok(m)
    }
}

/// LUT, FF, DSP, BRAM and LUTRAM of a linear instance; `weight_bits`: the weight ROM's varying
/// bit columns when its contents are known, else all of them count.
fn linear_resources(p: &Params, weight_bits: Option<u64>) -> crate::Resources {
    use crate::resources::{clog2, fitted, mul_dsps, pingpong, pu, rom, rom_bram18};
    let (inn, out) = (pu(p, "DATA_IN_0_TENSOR_SIZE_DIM_0"), pu(p, "WEIGHT_TENSOR_SIZE_DIM_1"));
    let (pi, po) = (pu(p, "DATA_IN_0_PARALLELISM_DIM_0"), pu(p, "WEIGHT_PARALLELISM_DIM_1"));
    let (iw, ww, ow) =
        (pu(p, "DATA_IN_0_PRECISION_0"), pu(p, "WEIGHT_PRECISION_0"), pu(p, "DATA_OUT_0_PRECISION_0"));
    let bw = pu(p, "BIAS_PRECISION_0") * pu(p, "HAS_BIAS");
    let shw = pu(p, "WEIGHT_SHIFT_WIDTH") * pu(p, "WEIGHT_PER_CHANNEL");
    let (nib, nob) = (inn / pi.max(1), out / po.max(1));
    let dsp_each = mul_dsps(iw as u32, ww as u32, true, true, (iw + ww) as u32);
    let lut_mul = if dsp_each == 0 { pi * po * iw * ww } else { 0 };
    let (bias_bram, bias_lut) = rom(nob, po * bw);
    let x = [1, lut_mul, po * (iw + ww + clog2(inn)), po * ow, clog2(nib) + clog2(nob), bias_lut];
    let (buf_bram, buf_lutram) = pingpong(nib, pi * iw);
    // A one-word ROM is a constant; Yosys also drops the bit columns that are constant in the
    // data (`weight_bits` counts the others when the contents are known). A split ROM is
    // `pieces` words side by side.
    let wb = po * pi * ww;
    let (depth, pieces) = weight_pieces(nob * nib, wb);
    let rom_bits = weight_bits.unwrap_or(pieces * wb);
    let weights = if nob * nib > 1 { rom_bram18(depth, rom_bits) } else { 0 };
    // Stage M of a split ROM: the read registered again (in fabric under synth_xilinx), the
    // piece select twice, the row chunk, flags and tag; the multiplexer, a LUT6 per bit for up
    // to four pieces.
    let (split_lut, split_ff) = if pieces > 1 {
        let sel = clog2(nob * nib) - clog2(depth);
        (wb * (pieces - 1).div_ceil(3), rom_bits + 2 * sel + pi * iw + 3 + clog2(nob))
    } else {
        (0, 0)
    };
    crate::Resources {
        lut: fitted(&LINEAR_LUT, &x) + split_lut,
        // The bias and shift words are registered once more after their ROM reads (their read
        // moved a stage earlier so that no block RAM output drives the accumulator's adder); the
        // split product sum's stage P (wide products only) reads the tag a stage later.
        ff: fitted(&LINEAR_FF, &x)
            + po * (bw + shw)
            + super::linear::dot_product_p_ffs(iw, ww, pi, po, clog2(nob))
            + split_ff,
        dsp: pi * po * dsp_each,
        bram18: weights + bias_bram + buf_bram,
        lutram: buf_lutram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    #[test]
    fn weight_layout_is_block_major_chunk_minor() {
        let p = resolve_params(
            &Linear,
            &[
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 4),
                ("DATA_IN_0_PARALLELISM_DIM_0", 2),
                ("WEIGHT_TENSOR_SIZE_DIM_1", 4),
                ("WEIGHT_PARALLELISM_DIM_1", 2),
            ],
        )
        .unwrap();
        // W[o][i] = 10*o + i
        let w: Vec<i64> = (0..4).flat_map(|o| (0..4).map(move |i| 10 * o + i)).collect();
        let words = Linear.layout_memory(&p, "weight", &w).unwrap();
        // word ob*2 + ib, lane o*2 + i = W[ob*2 + o][ib*2 + i]
        assert_eq!(words[0], vec![0, 1, 10, 11]);
        assert_eq!(words[1], vec![2, 3, 12, 13]);
        assert_eq!(words[2], vec![20, 21, 30, 31]);
        assert_eq!(words[3], vec![22, 23, 32, 33]);
        let b = Linear.layout_memory(&p, "bias", &[5, 6, 7, 8]).unwrap();
        assert_eq!(b, vec![vec![5, 6], vec![7, 8]]);
        assert!(Linear.layout_memory(&p, "weight", &w[..3]).is_err());
    }

    /// Products of 24 bits or more, three or more per sum, take one more stage (P) in
    /// `mase_dot_product`: the 16-bit test set without bias (IN/P_IN = 3 chunks) 2·3 + 7 cycles.
    #[test]
    fn wide_products_add_the_partial_sum_stage() {
        assert_eq!((dot_product_stages(8, 8, 4), dot_product_stages(16, 16, 2)), (6, 6));
        assert_eq!((dot_product_stages(15, 8, 4), dot_product_stages(16, 8, 2)), (6, 6));
        assert_eq!((dot_product_stages(16, 16, 3), dot_product_stages(13, 12, 4)), (7, 7));
        assert_eq!(dot_product_stages(16, 8, 4), 7);
        let p = resolve_params(&Linear, &Linear.test_params()[3]).unwrap();
        assert_eq!(Linear.cost(&p).latency_cycles, 2 * 3 + 7);
        // P holds 5 outputs × 2 partial sums of 33 bits, 3 flags and no used tag bits (one block).
        assert_eq!(dot_product_p_ffs(16, 16, 4, 5, 0), 5 * 2 * 33 + 3);
    }

    /// The weight ROM stays whole where an aspect ratio deep enough for it is among the cheapest
    /// (up to 512 words always; the encoder's 128 × 128 linears at P 2×2, 4096 words of 32 bits,
    /// take 8 block RAMs as 4096×4 as in any other ratio) and is split where a shallower ratio
    /// packs it into fewer (the FFN's 4096 words of 128 bits: 30 as 2048×9, two deep, against 32
    /// as 4096×4; as two pieces side by side, 2048 words of 256 bits, 29 as 2048×9).
    #[test]
    fn weight_rom_splits_only_where_a_shallower_ratio_is_cheaper() {
        assert_eq!(weight_pieces(512, 4096), (512, 1));
        assert_eq!(weight_pieces(4096, 32), (4096, 1));
        assert_eq!(ratio_brams(4096, 128, true), 32);
        assert_eq!(ratio_brams(4096, 128, false), 30);
        assert_eq!(weight_pieces(4096, 128), (2048, 2));
        assert_eq!(ratio_brams(2048, 256, true), 29);
        // The split test set: 5120 words of 36 bits in three pieces of 2048 (12 block RAMs).
        assert_eq!(weight_pieces(5120, 36), (2048, 3));
        assert_eq!(ratio_brams(2048, 108, true), 12);
        // Deeper than any ratio: pieces of at most 16384 words.
        assert_eq!(weight_pieces(32768, 1).1, 2);
    }

    /// A split ROM's word `a` holds words `a`, `depth + a`, … of the unsplit layout side by side,
    /// zeros past the last; the split adds stage M to the latency.
    #[test]
    fn split_weight_rom_lays_pieces_side_by_side() {
        let set = Linear.test_params().last().cloned().unwrap();
        let p = resolve_params(&Linear, &set).unwrap();
        let (inp, out) = (80usize, 256usize);
        let w: Vec<i64> = (0..inp * out).map(|k| (k % 251) as i64 - 125).collect();
        let words = Linear.layout_memory(&p, "weight", &w).unwrap();
        let m = &Linear.memories(&p)[0];
        assert_eq!((words.len(), m.depth, m.lanes), (2048, 2048, 3 * 4));
        // Unsplit word n (block n / 80, chunk n % 80), lane o = W[4·(n / 80) + o][n % 80].
        let unsplit = |n: usize| -> Vec<i64> {
            if n >= 5120 {
                return vec![0; 4];
            }
            (0..4).map(|o| w[(4 * (n / inp) + o) * inp + n % inp]).collect()
        };
        for a in [0, 1, 1023, 1024, 2047] {
            let expect: Vec<i64> = (0..3).flat_map(|k| unsplit(k * 2048 + a)).collect();
            assert_eq!(words[a], expect, "word {a}");
        }
        // 2·IN/P_IN, the dot product's 6 stages (17-bit products) and M.
        assert_eq!(Linear.cost(&p).latency_cycles, 2 * 80 + 6 + 1);
    }

    #[test]
    fn cost_at_the_performance_point() {
        let p = resolve_params(&Linear, &[] as &[(&str, i64)]).unwrap();
        let c = Linear.cost(&p);
        assert_eq!(c.ii_cycles, 64 * 64 / 16);
        assert_eq!(c.multipliers, 16);
        assert!(c.latency_cycles <= 300);
        // 64×64×8 weight bits + 64×8 bias bits + 2 banks × 16 words × 32 bits of row buffer
        assert_eq!(c.memory_bits, 64 * 64 * 8 + 64 * 8 + 2 * 16 * 32);
    }

    /// A per-channel instance computes what a per-tensor one computes with each channel's weights
    /// scaled up to the common fraction width (`w << s_o`, in a format `2^W − 1` bits wider).
    #[test]
    fn per_channel_equals_per_tensor_with_aligned_weights() {
        use rand::SeedableRng;
        let base: &[(&str, i64)] = &[
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", 6),
            ("DATA_IN_0_PARALLELISM_DIM_0", 2),
            ("WEIGHT_TENSOR_SIZE_DIM_1", 4),
            ("WEIGHT_PARALLELISM_DIM_1", 2),
            ("BIAS_PRECISION_1", 9),
            ("DATA_OUT_0_PRECISION_0", 12),
            ("DATA_OUT_0_PRECISION_1", 3),
            ("DATA_OUT_0_ROUNDING", 6),
        ];
        let pc = resolve_params(
            &Linear,
            &[base, &[("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 2)]].concat(),
        )
        .unwrap();
        let pt = resolve_params(&Linear, &[base, &[("WEIGHT_PRECISION_0", 11)]].concat()).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let stim = Linear.random_stimulus(&pc, 3, &mut rng);
            let (w, s) = (&stim.memories["weight"], &stim.memories["weight_shift"]);
            assert!(s.iter().all(|&v| (0..=3).contains(&v)));
            let mut scaled = stim.clone();
            scaled.memories.shift_remove("weight_shift");
            let aligned: Vec<i64> = w.iter().enumerate().map(|(k, &v)| v << s[k / 6]).collect();
            scaled.memories.insert("weight".into(), aligned);
            assert_eq!(Linear.model(&pc, &stim).unwrap(), Linear.model(&pt, &scaled).unwrap());
        }
        // Shift codes out of range are an error naming the channel.
        let mut stim = Linear.random_stimulus(&pc, 1, &mut rng);
        stim.memories.insert("weight_shift".into(), vec![0, 4, 1, 2]);
        assert!(Linear.model(&pc, &stim).unwrap_err().contains("weight_shift[1] = 4"));
    }

    #[test]
    fn per_channel_memories_and_cost() {
        let p = resolve_params(&Linear, &[("WEIGHT_PER_CHANNEL", 1), ("WEIGHT_SHIFT_WIDTH", 3)]).unwrap();
        let m = Linear.memories(&p);
        let s = m.iter().find(|m| m.name == "weight_shift").unwrap();
        assert_eq!((s.depth, s.lanes, s.lane_width, s.signed), (16, 4, 3, false));
        let words =
            Linear.layout_memory(&p, "weight_shift", &(0..64).map(|o| o % 8).collect::<Vec<_>>()).unwrap();
        assert_eq!(words[1], vec![4, 5, 6, 7]);
        let pt = resolve_params(&Linear, &[] as &[(&str, i64)]).unwrap();
        let (c, ct) = (Linear.cost(&p), Linear.cost(&pt));
        assert_eq!(
            (c.latency_cycles, c.ii_cycles, c.multipliers),
            (ct.latency_cycles, ct.ii_cycles, ct.multipliers)
        );
        assert_eq!(c.memory_bits, ct.memory_bits + 64 * 3);
        assert!(Linear.layout_memory(&pt, "weight_shift", &[0; 64]).is_err());
    }
}
