//! `mul`: multiplication of a signed fixed-point stream by a constant (`rtl/mase_mul.sv`).
//!
//! The constant is either one scalar (`CONST_VALUE`, an integer code of the format
//! `CONST_PRECISION_0/1`) or one value per channel (column of dim 0) held in an on-chip ROM
//! (`CONST_PER_CHANNEL = 1`, memory `constant`, file parameter `CONST_MEM_FILE`).
//!
//! Exact algorithm: the product `x · c` is formed exactly (`DATA_IN_0_PRECISION_0 +
//! CONST_PRECISION_0` bits, `DATA_IN_0_PRECISION_1 + CONST_PRECISION_1` fractional bits) and cast
//! once into the output format with its rounding and overflow modes
//! ([`mase_ir::fixed::cast_code`], in RTL `mase_cast_core`). A scalar constant that is 0 or
//! `±2^k` needs no multiplier: the RTL forms the same exact product with a shift (and a negation
//! for negative constants), and the cost model reports 0 multipliers.
//!
//! Per-channel ROM layout (datapath read order): word `b` holds the constants of columns
//! `b·P0 .. b·P0+P0-1`, lane `j` = column `b·P0 + j`; the ROM is read once per beat with the beat
//! index within the (block) row, and lane `r·P0 + j` of a `P1 × P0` block uses lane `j` of the
//! word.
//!
//! Pipeline: input register (+ ROM read) → exact product register → cast (combinational) →
//! output `mase_skid_buffer`. Latency 3 cycles, one beat per cycle.

use mase_ir::fixed::cast_code;

use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Info, MemorySpec, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::components::cast::output_format;
use crate::overrides::{constant, input, modes, output, row, rows};
use crate::port::{self, check_cast_output, check_format, check_port};
use crate::{check_range, output_modes, param, param_list, port_format, port_shape, same_shape};

/// The constant-multiplier component.
pub struct Mul;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "mul",
    description: "multiplication by a scalar or per-channel constant (power-of-two scalars as shifts), exact product then output cast",
    dependencies: &["mase_assert.svh", "mase_cast_core.sv", "mase_skid_buffer.sv"],
    params: param_list![
        port_format!("DATA_IN_0", 8, "input total bits (1..32), signed", 4, "input fractional bits"),
        port_shape!("DATA_IN_0", [8, 1, 4, 1], "tensor size along dim 0 (channels / columns)"),
        port_format!("CONST", 8, "constant total bits (1..32), signed", 4, "constant fractional bits"),
        [
            ParamSpec::value(
                "CONST_PER_CHANNEL",
                0,
                "0: one scalar constant CONST_VALUE; 1: one constant per column from a ROM",
            ),
            ParamSpec::value(
                "CONST_VALUE",
                24,
                "scalar constant as an integer code of the constant format (unused per channel)",
            ),
        ],
        port_format!("DATA_OUT_0", 8, "output total bits (1..64), signed", 4, "output fractional bits"),
        same_shape!("DATA_OUT_0", "DATA_IN_0", "output", "input"),
        output_modes!("DATA_OUT_0", "rounding", "overflow"),
    ],
    ..Info::DEFAULT
};

/// Lanes per beat (`P1 × P0`).
/// LUT model of mul over `[1, lanes × IW, the output cast's LUTs (a cast of the exact product,
/// [`crate::components::cast::CastShape::lut`]), LUT-multiplier bits, logic-ROM LUTs]`, fitted
/// to Yosys 0.23 with `sim/examples/resource_fit.rs --only mul` (least absolute relative error,
/// non-negative; 26 instances, median error 5 %). A zero scalar keeps only the constant.
const MUL_LUT: [f64; 5] = [3.999, 0.923, 0.991, 0.519, 0.249];
/// FF model of mul over `[1, lanes × IW, lanes × OW, lanes × CW (per channel)]` (the input,
/// output and constant registers; same fit, median error 3 %).
const MUL_FF: [f64; 4] = [3.001, 0.0, 2.001, 0.173];

fn lanes(p: &Params) -> usize {
    port::lanes(p, "DATA_IN_0")
}

/// Beats per block row (`TENSOR_SIZE_DIM_0 / PARALLELISM_DIM_0`).
fn beats(p: &Params) -> usize {
    port::beats_per_row(p, "DATA_IN_0")
}

/// True when the instance multiplies by a scalar that is 0 or `±2^k`: the RTL then uses a shift
/// (and a negation for a negative constant) instead of a multiplier.
pub fn is_shift(p: &Params) -> bool {
    let c = param(p, "CONST_VALUE");
    param(p, "CONST_PER_CHANNEL") == 0 && (c == 0 || c.unsigned_abs().is_power_of_two())
}

/// The exact product `x · c` cast into the output format (the element function of the component).
pub fn mul_element(p: &Params, x: i64, c: i64) -> i64 {
    let frac = (param(p, "DATA_IN_0_PRECISION_1") + param(p, "CONST_PRECISION_1")) as i32;
    cast_code(x as i128 * c as i128, frac, &output_format(p, "DATA_OUT_0", true))
}

impl Component for Mul {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_port(p, "DATA_IN_0", 32)?;
        check_format(p, "CONST", 32)?;
        check_range(p, "CONST_PER_CHANNEL", 0, 1)?;
        let cw = param(p, "CONST_PRECISION_0");
        check_range(p, "CONST_VALUE", -(1i64 << (cw - 1)), (1i64 << (cw - 1)) - 1)?;
        check_cast_output(p, "DATA_OUT_0", "DATA_IN_0", 64)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        port::unary_streams(p)
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        if param(p, "CONST_PER_CHANNEL") == 0 {
            return Vec::new();
        }
        vec![MemorySpec {
            name: "constant".into(),
            param: "CONST_MEM_FILE".into(),
            values: param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize,
            depth: beats(p),
            lanes: param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize,
            lane_width: param(p, "CONST_PRECISION_0") as u32,
            signed: true,
        }]
    }

    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        let cols = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
        if mem != "constant" || param(p, "CONST_PER_CHANNEL") == 0 {
            return Err(format!(
                "component `mul` has no memory `{mem}` (it has one only when CONST_PER_CHANNEL = 1)"
            ));
        }
        if values.len() != cols {
            return Err(format!(
                "mul memory `constant`: expected {cols} values (one per column), got {}",
                values.len()
            ));
        }
        let p0 = param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize;
        Ok(values.chunks(p0).map(|w| w.to_vec()).collect())
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.input("mul", "data_in_0")?;
        let per_channel = param(p, "CONST_PER_CHANNEL") == 1;
        let consts: Vec<i64> = if per_channel {
            let c = stim
                .memories
                .get("constant")
                .ok_or("mul model: missing memory `constant` (CONST_PER_CHANNEL = 1)")?;
            let cols = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
            if c.len() != cols {
                return Err(format!("mul model: memory `constant` has {} values, expected {cols}", c.len()));
            }
            c.clone()
        } else {
            vec![param(p, "CONST_VALUE")]
        };
        let (p0, n, nb) = (param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize, lanes(p), beats(p));
        let out = x
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let c = if per_channel {
                    // beat index within the block row, then the column of the lane within the block
                    let (beat, lane) = (k / n, k % n);
                    consts[(beat % nb) * p0 + lane % p0]
                } else {
                    consts[0]
                };
                mul_element(p, v, c)
            })
            .collect();
        Ok(data_out_0(out))
    }

    fn cost(&self, p: &Params) -> Cost {
        let mem: u64 = self.memories(p).iter().map(|m| m.bits()).sum();
        Cost {
            // S1 input register, S2 product, the skid buffer's output register.
            latency_cycles: 3,
            ii_cycles: beats(p) as u64,
            multipliers: if is_shift(p) { 0 } else { lanes(p) as u64 },
            memory_bits: mem,
        }
    }

    /// DSPs by Yosys' multiplier mapping: a lane multiplies IW input bits by the constant's
    /// significant bits (a scalar, which Yosys narrows) or by CW ROM bits (per channel); none for
    /// a power-of-two scalar (a shift). LUT/FF from [`MUL_LUT`] and [`MUL_FF`].
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{fitted, mul_dsps, pu, rom};
        let n = lanes(p) as u64;
        let (iw, cw, ow) =
            (pu(p, "DATA_IN_0_PRECISION_0"), pu(p, "CONST_PRECISION_0"), pu(p, "DATA_OUT_0_PRECISION_0"));
        let per_channel = param(p, "CONST_PER_CHANNEL") != 0;
        let c = param(p, "CONST_VALUE");
        if !per_channel && c == 0 {
            // The product is the constant 0: only the handshake is left.
            return crate::Resources {
                lut: fitted(&MUL_LUT, &[1]),
                ff: fitted(&MUL_FF, &[1]),
                ..Default::default()
            };
        }
        // Significant bits of the constant as a signed number (Yosys narrows a constant operand;
        // a power of two is a shift by its exponent, one bit more when negated).
        let c_bits = if per_channel {
            cw
        } else if is_shift(p) {
            u64::from(c.unsigned_abs().trailing_zeros()) + 1 + u64::from(c < 0)
        } else {
            65 - (if c < 0 { !c } else { c }).leading_zeros() as u64
        };
        let dsp_each =
            if is_shift(p) { 0 } else { mul_dsps(iw as u32, c_bits as u32, true, true, (iw + cw) as u32) };
        let lut_mul = if dsp_each == 0 && !is_shift(p) { n * iw * c_bits } else { 0 };
        let (rom_bram, rom_lut) = if per_channel {
            let p0 = pu(p, "DATA_IN_0_PARALLELISM_DIM_0");
            rom(pu(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / p0.max(1), p0 * cw)
        } else {
            (0, 0)
        };
        let cast = crate::components::cast::CastShape {
            lanes: n,
            from: (
                (iw + c_bits) as i64,
                param(p, "DATA_IN_0_PRECISION_1") + param(p, "CONST_PRECISION_1"),
                true,
            ),
            to: (ow as i64, param(p, "DATA_OUT_0_PRECISION_1"), true),
            rounding: param(p, "DATA_OUT_0_ROUNDING"),
            overflow: param(p, "DATA_OUT_0_OVERFLOW"),
        };
        let x = [1, n * iw, crate::resources::round(cast.lut()), lut_mul, rom_lut];
        crate::Resources {
            lut: fitted(&MUL_LUT, &x),
            ff: fitted(&MUL_FF, &[1, n * iw, n * ow, n * cw * u64::from(per_channel)]),
            dsp: n * dsp_each,
            bram18: rom_bram,
            lutram: 0,
        }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            // power-of-two scalars: shift, negated shift, zero
            [vec![("CONST_VALUE", 64)], output(12, 3)].concat(),
            [
                input(2, 0),
                row(5, 1),
                constant(3, 1),
                vec![("CONST_VALUE", -4)],
                output(3, 0),
                vec![("DATA_OUT_0_ROUNDING", 2)],
            ]
            .concat(),
            [vec![("CONST_VALUE", 0)], row(3, 3)].concat(),
            // general scalar, rounding to nearest even, symmetric saturation
            [
                input(16, 12),
                constant(16, 14),
                vec![("CONST_VALUE", -23170)],
                output(16, 12),
                modes(6, 3),
                row(9, 3),
            ]
            .concat(),
            // per-channel constants, P = 1, odd length
            [vec![("CONST_PER_CHANNEL", 1)], row(7, 1)].concat(),
            // per-channel, 2-D blocks, wrapping output
            [
                vec![("CONST_PER_CHANNEL", 1)],
                input(11, 5),
                constant(5, 2),
                vec![("CONST_VALUE", 3)],
                row(12, 4),
                rows(4, 2),
                output(9, 3),
                vec![("DATA_OUT_0_OVERFLOW", 0)],
            ]
            .concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("CONST_VALUE", 128)], vec![("CONST_PER_CHANNEL", 2)], row(8, 3), modes(7, 1), input(33, 4)]
    }
}

impl Binding for Mul {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let mase_ir::Op::MulScalar { scalar } = &v.node.op else {
            return Err(v.error("the mul component binds multiplications by a scalar only"));
        };
        let (cf, code) = scalar_format(*scalar).map_err(|e| v.error(e))?;
        crate::binding::Overrides::default()
            .tensor("DATA_IN_0", &v.signed_input(0, 32)?, &v.in_shape(0)?, par.p_in)
            .format("CONST", &cf)
            .set("CONST_PER_CHANNEL", 0)
            .set("CONST_VALUE", code)
            .output(&v.out_format()?)
            .done()
    }
}

/// The format of a scalar constant that holds `x` exactly (at most 32 bits), and its code.
pub fn scalar_format(x: f32) -> Result<(mase_ir::fixed::FixedFormat, i64), String> {
    if x == 0.0 {
        return Ok((mase_ir::fixed::FixedFormat::signed(2, 0), 0));
    }
    let (mut code, mut frac) = mase_ir::fixed::decompose_f64(f64::from(x))
        .filter(|_| x.is_finite())
        .ok_or_else(|| format!("scalar {x} is not a finite number"))?;
    while code % 2 == 0 {
        code /= 2;
        frac -= 1;
    }
    let bits = 128 - code.unsigned_abs().leading_zeros() + 1;
    if bits > 32 {
        return Err(format!("scalar {x} needs {bits} bits; the mul component takes constants of up to 32"));
    }
    Ok((mase_ir::fixed::FixedFormat::signed(bits.max(2), frac), code as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;
    use mase_ir::fixed::{to_f64, FixedFormat};

    #[test]
    fn power_of_two_scalars_cost_no_multiplier() {
        for (c, shift) in [(64, true), (-4, true), (0, true), (24, false), (-23, false)] {
            let p = resolve_params(&Mul, &[("CONST_VALUE", c)]).unwrap();
            assert_eq!(is_shift(&p), shift, "CONST_VALUE {c}");
            assert_eq!(Mul.cost(&p).multipliers == 0, shift, "CONST_VALUE {c}");
        }
    }

    #[test]
    fn element_is_the_rounded_real_product() {
        // s8.4 × s8.4 (1.5) into s8.4 TRN SAT: compare with the real product floored/saturated.
        let p = resolve_params::<&str>(&Mul, &[]).unwrap();
        let fmt = FixedFormat::signed(8, 4);
        for x in -128..128 {
            let real = to_f64(x, &fmt) * to_f64(24, &fmt);
            let want = ((real * 16.0).floor() as i64).clamp(-128, 127);
            assert_eq!(mul_element(&p, x, 24), want, "x = {x}");
        }
    }

    #[test]
    fn per_channel_layout_is_datapath_order() {
        let p = resolve_params(&Mul, &[("CONST_PER_CHANNEL", 1)]).unwrap();
        let words = Mul.layout_memory(&p, "constant", &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(words, vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8]]);
        assert!(Mul.layout_memory(&p, "constant", &[1, 2]).is_err());
    }
}
