//! `qlinear`: a fully connected layer on integer codes with real scales (`rtl/mase_qlinear.sv`),
//! the hardware of [`mase_ir::Op::Qlinear`] and of a weight-only `linear` (the model's own weight
//! codes with real scales between fixed-point activations; its ports then carry those formats'
//! fractions, which only name the grid).
//!
//! A model quantized elsewhere (onnxruntime's QDQ, Brevitas float scales) gives its input codes
//! a scale and zero point, its weights integer codes with a scale per output channel, and its
//! output codes a scale and zero point. The component computes what
//! [`mase_ir::quant::qlinear`] computes, bit for bit:
//!
//! - each input code minus the input zero point (`DATA_IN_0_ZERO_POINT`), exact;
//! - the exact sum of those times the weight codes, plus the bias codes on the sum's grid
//!   (`BIAS_PRECISION_1` fraction bits), by a `mase_linear` whose output format holds every sum;
//! - ReLU on the exact sum (`FUSED_RELU`);
//! - the requantisation of [`mase_ir::quant::requant::apply`]: column `j`'s sum times the unsigned
//!   multiplier `m[j]` (memory `multiplier`), rounded half to even at `MULT_SHIFT` more fraction
//!   bits, plus the output zero point, saturated into the output codes (`rtl/mase_requant.sv`).
//!
//! Weights, bias, rows, lanes and schedule are `linear`'s (its memory layouts, its latency and
//! II); the requantisation adds 8 cycles of latency and `P_OUT` multipliers of
//! `sum bits × MULT_WIDTH` (one DSP per 17 × 17 piece).

use mase_ir::fixed::{FixedFormat, Overflow, Rounding};
use mase_ir::quant::qlinear::QlinearPlan;
use mase_ir::quant::requant::{apply, Requant};

use super::linear::{Linear, BIAS_SHAPE, IN_SHAPE, OUT_SHAPE, WEIGHT_SHAPE};
use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, MemorySpec, ParamSpec, Params, Stimulus, StreamSpec,
    StreamValues,
};
use crate::overrides::row;
use crate::port::{beats_per_row, lanes};
use crate::{check_range, param, param_list, port_format};

/// The quantized-linear component.
pub struct Qlinear;

/// Cycles `rtl/mase_requant.sv` adds after the linear's output.
pub const REQUANT_LATENCY: u64 = 8;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "qlinear",
    description: "fully connected layer on integer codes with real scales: zero points, exact sum, per-channel requantisation multiplier (round half to even), output zero point",
    dependencies: &["mase_assert.svh", "mase_linear.sv", "mase_split_mul.sv", "mase_requant.sv"],
    buffers_whole_unit: true,
    params: param_list![
        port_format!("DATA_IN_0", 8, "input code bits (1..31)", 0, "input fraction: names the grid only (a weight-only layer's fixed-point input; the multipliers hold the scales)"),
        IN_SHAPE,
        [
            ParamSpec::value("DATA_IN_0_SIGNED", 1, "1: two's complement input codes, 0: unsigned"),
            ParamSpec::value("DATA_IN_0_ZERO_POINT", 0, "input zero point (within the input code range)"),
        ],
        port_format!("WEIGHT", 8, "weight code bits (1..32, signed, zero point 0)", 0, "weight fractional bits (must be 0)"),
        WEIGHT_SHAPE,
        port_format!("BIAS", 32, "bias code bits (1..32, signed)", 0, "bias fraction bits on the sum's grid (0..16)"),
        BIAS_SHAPE,
        [
            ParamSpec::value("FUSED_RELU", 0, "1: max(0, ·) on the exact sum before the requantisation"),
            ParamSpec::value("MULT_WIDTH", 24, "bits of each column's unsigned requantisation multiplier (1..32)"),
            ParamSpec::value("MULT_SHIFT", 30, "fraction bits of every multiplier (0..62)"),
        ],
        port_format!("DATA_OUT_0", 8, "output code bits (1..32)", 0, "output fraction: names the grid only, as the input's"),
        [
            ParamSpec::value("DATA_OUT_0_SIGNED", 1, "1: two's complement output codes, 0: unsigned"),
            ParamSpec::value(
                "DATA_OUT_0_ZERO_POINT",
                0,
                "output zero point, added after the rounding (within the output code range)",
            ),
        ],
        OUT_SHAPE,
    ],
    ..Info::DEFAULT
};

/// The code range of a `bits`-bit lane, signed or not.
fn code_range(bits: i64, signed: bool) -> (i64, i64) {
    crate::component::value_range(bits.clamp(1, 64) as u32, signed)
}

/// Bits of the exact sums (the inner linear's output): `mase_qlinear.sv`'s `AW`.
pub fn sum_bits(p: &Params) -> i64 {
    let xw = param(p, "DATA_IN_0_PRECISION_0") + 1;
    let inn = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0");
    let log_in = if inn > 1 { 64 - i64::from((inn - 1).leading_zeros()) } else { 0 };
    let has_bias = param(p, "HAS_BIAS") == 1;
    let bf = if has_bias { param(p, "BIAS_PRECISION_1") } else { 0 };
    let sumw = xw + param(p, "WEIGHT_PRECISION_0") + log_in + bf;
    let bw = param(p, "BIAS_PRECISION_0");
    if has_bias && bw > sumw {
        bw + 1
    } else {
        sumw + 1
    }
}

/// The parameters of the `linear` inside: the codes minus the zero point (one bit wider, signed,
/// fraction 0), the weights and bias as they are, an output format holding every exact sum.
fn inner_linear(p: &Params) -> Result<Params, String> {
    let shapes = [&IN_SHAPE[..], &WEIGHT_SHAPE, &BIAS_SHAPE, &OUT_SHAPE].concat();
    let own = ["WEIGHT_PRECISION_0", "WEIGHT_PRECISION_1", "BIAS_PRECISION_0", "BIAS_PRECISION_1", "FUSED_RELU"];
    let mut o = crate::copy_params(p, shapes.iter().map(|s| s.name).chain(own));
    let bias_frac = if param(p, "HAS_BIAS") == 1 { param(p, "BIAS_PRECISION_1") } else { 0 };
    o.extend(
        [
            ("DATA_IN_0_PRECISION_0", param(p, "DATA_IN_0_PRECISION_0") + 1),
            ("DATA_IN_0_PRECISION_1", 0),
            ("DATA_OUT_0_PRECISION_0", sum_bits(p)),
            ("DATA_OUT_0_PRECISION_1", bias_frac),
            ("DATA_OUT_0_ROUNDING", 0),
            ("DATA_OUT_0_OVERFLOW", 1),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    crate::fill_params(&Linear, &o)
}

/// The output codes' format (fraction 0, saturating).
fn out_format(p: &Params) -> FixedFormat {
    FixedFormat {
        signed: param(p, "DATA_OUT_0_SIGNED") == 1,
        width: param(p, "DATA_OUT_0_PRECISION_0") as u32,
        frac: 0,
        rounding: Rounding::Trn,
        overflow: Overflow::Sat,
    }
}

/// Checks that `name` lies in the code range of a `bits`-bit lane of the given signedness.
fn check_zero_point(p: &Params, name: &str, bits: &str, signed: &str) -> Result<(), String> {
    let (lo, hi) = code_range(param(p, bits), param(p, signed) == 1);
    check_range(p, name, lo, hi)
}

impl Component for Qlinear {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        crate::port::check_format(p, "DATA_IN_0", 31)?;
        check_range(p, "DATA_IN_0_SIGNED", 0, 1)?;
        check_zero_point(p, "DATA_IN_0_ZERO_POINT", "DATA_IN_0_PRECISION_0", "DATA_IN_0_SIGNED")?;
        check_range(p, "WEIGHT_PRECISION_1", 0, 0)?;
        if param(p, "HAS_BIAS") == 1 {
            check_range(p, "BIAS_PRECISION_1", 0, 16)?;
        }
        check_range(p, "MULT_WIDTH", 1, 32)?;
        check_range(p, "MULT_SHIFT", 0, 62)?;
        crate::port::check_format(p, "DATA_OUT_0", 32)?;
        check_range(p, "DATA_OUT_0_SIGNED", 0, 1)?;
        check_zero_point(p, "DATA_OUT_0_ZERO_POINT", "DATA_OUT_0_PRECISION_0", "DATA_OUT_0_SIGNED")?;
        let aw = sum_bits(p);
        if aw > 64 {
            return Err(format!("the exact sum needs {aw} bits; at most 64 are supported"));
        }
        // The rest (shapes, lanes, widths of weights and bias) is the inner linear's.
        let inner = inner_linear(p)?;
        Linear.validate(&inner)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let stream = |port: &str, dir| StreamSpec {
            name: port.to_lowercase(),
            dir,
            lanes: lanes(p, port),
            width: param(p, &format!("{port}_PRECISION_0")) as u32,
            signed: param(p, &format!("{port}_SIGNED")) == 1,
            beats_per_row: beats_per_row(p, port),
        };
        vec![stream("DATA_IN_0", Direction::In), stream("DATA_OUT_0", Direction::Out)]
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        let Ok(inner) = inner_linear(p) else { return Vec::new() };
        let mut m = Linear.memories(&inner);
        let (out, p_out) = (param(p, "WEIGHT_TENSOR_SIZE_DIM_1") as usize, param(p, "WEIGHT_PARALLELISM_DIM_1") as usize);
        m.push(MemorySpec {
            name: "multiplier".into(),
            param: "MULT_MEM_FILE".into(),
            values: out,
            depth: out / p_out.max(1),
            lanes: p_out,
            lane_width: param(p, "MULT_WIDTH") as u32,
            signed: false,
        });
        m
    }

    /// `weight` `[out][in]` and `bias` `[out]` as `linear` lays them out; `multiplier` `[out]`,
    /// word `b` the multipliers of columns `b·P_OUT ..`.
    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        if mem == "multiplier" {
            let out = param(p, "WEIGHT_TENSOR_SIZE_DIM_1") as usize;
            crate::component::check_memory_len("qlinear", mem, values, out, "OUT")?;
            return Ok(values.chunks(param(p, "WEIGHT_PARALLELISM_DIM_1") as usize).map(<[i64]>::to_vec).collect());
        }
        Linear.layout_memory(&inner_linear(p)?, mem, values).map_err(|e| e.replace("`linear`", "`qlinear`"))
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.input("qlinear", "data_in_0")?;
        let zx = param(p, "DATA_IN_0_ZERO_POINT");
        let inner = inner_linear(p)?;
        let mut lin = Stimulus::default();
        lin.inputs.insert("data_in_0".into(), x.iter().map(|v| v - zx).collect());
        for (k, v) in &stim.memories {
            if k != "multiplier" {
                lin.memories.insert(k.clone(), v.clone());
            }
        }
        let sums = Linear.model(&inner, &lin).map_err(|e| e.replace("linear model", "qlinear model"))?;
        let m = stim.memories.get("multiplier").ok_or("qlinear model: missing memory `multiplier`")?;
        let out = param(p, "WEIGHT_TENSOR_SIZE_DIM_1") as usize;
        if m.len() != out {
            return Err(format!("qlinear model: multiplier has {} values, expected {out}", m.len()));
        }
        let r = Requant { multiplier: m.clone(), shift: param(p, "MULT_SHIFT") as i32 };
        let frac = param(&inner, "DATA_OUT_0_PRECISION_1") as i32;
        let (zy, fmt) = (param(p, "DATA_OUT_0_ZERO_POINT"), out_format(p));
        let y = sums["data_out_0"]
            .iter()
            .enumerate()
            .map(|(k, &acc)| apply(i128::from(acc), frac, m[k % out], &r, zy, &fmt))
            .collect();
        Ok(data_out_0(y))
    }

    /// `linear`'s cost on the codes, plus the requantisation's latency, multipliers and ROM.
    fn cost(&self, p: &Params) -> Cost {
        let Ok(inner) = inner_linear(p) else { return Cost::streaming(0, 0) };
        let c = Linear.cost(&inner);
        let p_out = param(p, "WEIGHT_PARALLELISM_DIM_1") as u64;
        let rom = param(p, "WEIGHT_TENSOR_SIZE_DIM_1") as u64 * param(p, "MULT_WIDTH") as u64;
        Cost {
            latency_cycles: c.latency_cycles + REQUANT_LATENCY,
            ii_cycles: c.ii_cycles,
            multipliers: c.multipliers + p_out,
            memory_bits: c.memory_bits + rom,
        }
    }

    /// `linear`'s resources on the codes plus the requantisation's: per lane the
    /// `mase_split_mul` DSPs of the sum times the multiplier and its registers (input, operand,
    /// partial products, sign and multiplier delays, sum, product, rounded value, output skid), the
    /// multiplier ROM in LUTs, and the rounding, zero point and saturation adders.
    fn resources(&self, p: &Params) -> crate::Resources {
        let Ok(inner) = inner_linear(p) else { return crate::Resources::default() };
        let lin = Linear.resources(&inner);
        requant_resources(p, lin)
    }

    /// [`Qlinear::resources`] with `linear`'s weight ROM cut to its varying bit columns.
    fn resources_with_memories(&self, p: &Params, memories: &StreamValues) -> crate::Resources {
        let Ok(inner) = inner_linear(p) else { return crate::Resources::default() };
        let lin = Linear.resources_with_memories(&inner, memories);
        requant_resources(p, lin)
    }

    /// Sums that stay mostly inside the output range: multipliers near `2^(MULT_SHIFT − sum
    /// bits + output bits)` would saturate nearly everything at random codes, so the uniform
    /// stimulus is kept and the test sets choose `MULT_SHIFT` so that outputs spread.
    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // int8 codes, 64 × 64 at P 4 × 4, a 20-bit bias, 24-bit multipliers: sums of about
            // 2^26 times 2^24 at shift 45 give outputs of about ±2^5. The port fractions of a
            // weight-only layer, which name the grids and change no bit of the arithmetic.
            [vec![
                ("BIAS_PRECISION_0", 20),
                ("MULT_SHIFT", 45),
                ("DATA_IN_0_PRECISION_1", 6),
                ("DATA_OUT_0_PRECISION_1", -3),
            ]]
            .concat(),
            // uint8 input and output with zero points (onnxruntime's activations), ReLU, P = 1,
            // odd sizes, bias with 3 fraction bits.
            [
                row(7, 1),
                vec![
                    ("DATA_IN_0_SIGNED", 0),
                    ("DATA_IN_0_ZERO_POINT", 131),
                    ("WEIGHT_TENSOR_SIZE_DIM_1", 5),
                    ("WEIGHT_PARALLELISM_DIM_1", 1),
                    ("BIAS_PRECISION_0", 16),
                    ("BIAS_PRECISION_1", 3),
                    ("FUSED_RELU", 1),
                    ("MULT_SHIFT", 33),
                    ("DATA_OUT_0_SIGNED", 0),
                    ("DATA_OUT_0_ZERO_POINT", 7),
                ],
            ]
            .concat(),
            // Many rounding ties: 3-bit multipliers at shift 2 (every product's fraction is a
            // multiple of 1/4), 4-bit weights (Brevitas), no bias, signed output with a negative
            // zero point, one block.
            [
                row(6, 3),
                vec![
                    ("DATA_IN_0_ZERO_POINT", -5),
                    ("WEIGHT_PRECISION_0", 4),
                    ("WEIGHT_TENSOR_SIZE_DIM_1", 4),
                    ("WEIGHT_PARALLELISM_DIM_1", 4),
                    ("HAS_BIAS", 0),
                    ("MULT_WIDTH", 3),
                    ("MULT_SHIFT", 2),
                    ("DATA_OUT_0_PRECISION_0", 12),
                    ("DATA_OUT_0_ZERO_POINT", -9),
                ],
            ]
            .concat(),
            // One input beat per row and three output blocks (the multiplier word changes every
            // beat), 32-bit bias codes as onnxruntime writes them, 4-bit outputs.
            [
                row(4, 4),
                vec![
                    ("WEIGHT_TENSOR_SIZE_DIM_1", 9),
                    ("WEIGHT_PARALLELISM_DIM_1", 3),
                    ("MULT_SHIFT", 52),
                    ("DATA_OUT_0_PRECISION_0", 4),
                ],
            ]
            .concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![("WEIGHT_PRECISION_1", 2)],
            vec![("DATA_IN_0_SIGNED", 0), ("DATA_IN_0_ZERO_POINT", -1)],
            vec![("DATA_OUT_0_ZERO_POINT", 128)],
            vec![("MULT_SHIFT", 63)],
            vec![("MULT_WIDTH", 0)],
            row(64, 3),
        ]
    }
}

/// [`Qlinear::resources`] given the inner linear's.
fn requant_resources(p: &Params, lin: crate::Resources) -> crate::Resources {
    use crate::resources::{pu, rom};
    let p_out = pu(p, "WEIGHT_PARALLELISM_DIM_1");
    let (aw, mw, ow) = (sum_bits(p) as u64, pu(p, "MULT_WIDTH"), pu(p, "DATA_OUT_0_PRECISION_0"));
    let pw = aw + mw + 1;
    let nob = pu(p, "WEIGHT_TENSOR_SIZE_DIM_1") / p_out.max(1);
    let (rom_bram, rom_lut) = rom(nob, p_out * mw);
    let pieces = aw.div_ceil(17) * mw.div_ceil(17);
    let dsp = p_out * super::softmax::split_dsps(aw as u32, mw as u32, None);
    // Registers per lane: S1 (aw + mw), the DSPs' operand registers (aw + mw), the partial
    // products twice, the sign and multiplier delays, U (the sum and the correction's
    // multiplier bits), P, R (about pw − shift + 2, bounded by ow + 3), the skid buffer's two
    // words.
    let per_lane_ff = 2 * (aw + mw) + 2 * pieces * 34 + 3 * (mw + 1) + (aw + 2 * mw) + pw + (ow + 3) + 2 * ow;
    // Adders per lane: the sign correction and the sum of the partial products (about pw each),
    // the rounding and zero point (about ow + 3 each), the saturation.
    let per_lane_lut = 2 * pw + 2 * (ow + 3) + ow;
    crate::Resources {
        lut: lin.lut + p_out * per_lane_lut + rom_lut,
        ff: lin.ff + p_out * per_lane_ff + 3,
        dsp: lin.dsp + dsp,
        bram18: lin.bram18 + rom_bram,
        lutram: lin.lutram,
    }
}

impl Binding for Qlinear {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let (q, x_frac, y_frac) = plan_of(v)?;
        let shape = v.in_shape(0)?;
        let (rows, cols) = crate::binding::rows_cols(&shape);
        if cols != q.inp {
            return Err(v.error(format!("its input rows have {cols} elements; the weight takes {}", q.inp)));
        }
        let weight_bits = bits_of(q.weight.iter().map(|&c| i128::from(c)));
        if weight_bits > 32 {
            return Err(v.error(format!("its weight codes need {weight_bits} bits; the qlinear component takes at most 32")));
        }
        let mut o = crate::binding::Overrides::default();
        o.set("DATA_IN_0_PRECISION_0", i64::from(q.x_format.width))
            .set("DATA_IN_0_PRECISION_1", i64::from(x_frac))
            .set("DATA_IN_0_TENSOR_SIZE_DIM_0", cols as i64)
            .set("DATA_IN_0_TENSOR_SIZE_DIM_1", rows as i64)
            .set("DATA_IN_0_PARALLELISM_DIM_0", par.p_in as i64)
            .set("DATA_IN_0_PARALLELISM_DIM_1", 1)
            .set("DATA_IN_0_SIGNED", i64::from(q.x_format.signed))
            .set("DATA_IN_0_ZERO_POINT", q.x_zero_point)
            .set("WEIGHT_PRECISION_0", weight_bits)
            .set("WEIGHT_PRECISION_1", 0)
            .set("WEIGHT_TENSOR_SIZE_DIM_1", q.out as i64)
            .set("WEIGHT_PARALLELISM_DIM_1", par.p_out as i64)
            .set("FUSED_RELU", i64::from(q.relu))
            .set("MULT_WIDTH", i64::from(mase_ir::quant::requant::MULTIPLIER_BITS))
            .set("MULT_SHIFT", i64::from(q.requant.shift))
            .set("DATA_OUT_0_PRECISION_0", i64::from(q.y_format.width))
            .set("DATA_OUT_0_PRECISION_1", i64::from(y_frac))
            .set("DATA_OUT_0_SIGNED", i64::from(q.y_format.signed))
            .set("DATA_OUT_0_ZERO_POINT", q.y_zero_point);
        match &q.bias {
            Some(b) => {
                let bits = bits_of(b.iter().copied());
                if bits > 32 {
                    return Err(v.error(format!(
                        "its bias needs {bits}-bit codes on the sum's grid; the qlinear component takes at most 32"
                    )));
                }
                o.set("HAS_BIAS", 1).set("BIAS_PRECISION_0", bits).set("BIAS_PRECISION_1", i64::from(q.frac))
            }
            None => o.set("HAS_BIAS", 0),
        };
        o.done()
    }

    /// `linear`'s: every `P_IN` dividing the input row and `P_OUT` dividing the output row.
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        Linear.candidates(v)
    }

    /// The model's own weight codes, the bias codes on the sum's grid and the multipliers.
    fn data_memories(&self, v: &NodeView, _p: &Params) -> mase_ir::Result<Vec<(String, Vec<i64>)>> {
        let (q, ..) = plan_of(v)?;
        let mut m = vec![("weight".to_string(), q.weight.clone())];
        if let Some(b) = &q.bias {
            m.push(("bias".to_string(), b.iter().map(|&c| c as i64).collect()));
        }
        m.push(("multiplier".to_string(), q.requant.multiplier.clone()));
        Ok(m)
    }
}

/// The integer plan of the node (a `qlinear`, or a weight-only `linear` between its fixed-point
/// formats), its errors naming it, and the fractions its input and output ports carry: 0 for a
/// `qlinear`'s codes, the fixed-point formats' of a weight-only `linear` (its codes are those
/// formats' codes; the multipliers hold the scales), so the stitcher sees the formats its
/// neighbours have.
fn plan_of(v: &NodeView) -> mase_ir::Result<(QlinearPlan, i32, i32)> {
    use mase_ir::quant::qlinear::{plan, weight_only_plan};
    match &v.node.op {
        mase_ir::Op::Linear { .. } => {
            let (x, y) = (v.in_format(0)?, v.out_format()?);
            let q = weight_only_plan(v.graph, v.node, &x, &y).map_err(|m| v.error(m))?;
            Ok((q, x.frac, y.frac))
        }
        op => Ok((plan(v.graph, op).map_err(|m| v.error(m))?, 0, 0)),
    }
}

/// Bits of the narrowest two's complement lane holding every value (at least 2).
fn bits_of(values: impl Iterator<Item = i128>) -> i64 {
    let need = |c: i128| -> i64 {
        let m = if c < 0 { !c } else { c };
        i64::from(128 - m.leading_zeros()) + 1
    };
    values.map(need).max().unwrap_or(2).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    /// The inner linear holds every exact sum: its output is as wide as the RTL's `AW`.
    #[test]
    fn inner_linear_output_holds_the_exact_sum() {
        let p = resolve_params(&Qlinear, &[("BIAS_PRECISION_0", 20)]).expect("valid");
        let inner = inner_linear(&p).expect("valid");
        // 9-bit centred codes × 8-bit weights over 64 inputs: 9 + 8 + 6 bits, one more for the bias.
        assert_eq!(param(&inner, "DATA_OUT_0_PRECISION_0"), 24);
        assert_eq!(param(&inner, "DATA_IN_0_PRECISION_0"), 9);
        let wide_bias = resolve_params::<&str>(&Qlinear, &[]).expect("valid");
        assert_eq!(sum_bits(&wide_bias), 33);
    }

    #[test]
    fn two_lane_bits() {
        assert_eq!(bits_of([127i128, -128].into_iter()), 8);
        assert_eq!(bits_of([128i128].into_iter()), 9);
        assert_eq!(bits_of(std::iter::empty()), 2);
    }
}
