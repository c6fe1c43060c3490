//! The two-input element-wise components with format alignment (`add`, `sub`): one
//! implementation, parameterized by the exact operation. Each input has its own signed format;
//! the exact result ([`Binary::EXACT`], aligned to the finer fractional bit count) is cast once
//! to the output format with the output's rounding and overflow modes
//! ([`mase_ir::fixed::cast_code`]). A component of this kind is a unit struct implementing
//! [`Binary`] (its RTL `rtl/mase_<name>.sv` takes these parameters); [`Component`] follows.

use mase_ir::fixed::cast_code;

use super::cast::output_format;
use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{input, input_1, modes, output, row, rows};
use crate::port::{
    beats_per_row, block_stream, check_cast_output, check_format, check_port, check_same_shape,
};
use crate::{output_modes, param, param_list, port_format, port_shape, same_shape};

/// Cycles from a joined pair of beats to its result on `data_out_0`: the exact stage E, then
/// the cast into the output register (`MASE_ALIGNED_BINARY` in `rtl/mase_assert.svh`).
pub const LATENCY: u64 = 2;

/// Largest distance between the two inputs' fractional bit counts (the exact result then fits in
/// 128 bits, as [`mase_ir::fixed::add`] and [`mase_ir::fixed::sub`] require).
pub const MAX_ALIGN: i64 = 63;

/// Checks that the fractional bit counts of two operand ports (`<PORT>_PRECISION_1`) are within
/// [`MAX_ALIGN`] of each other, so their aligned exact sum fits.
pub fn check_alignment(p: &Params, port: &str, other: &str) -> Result<(), String> {
    let (a, b) = (format!("{port}_PRECISION_1"), format!("{other}_PRECISION_1"));
    let (fa, fb) = (param(p, &a), param(p, &b));
    if (fa - fb).abs() > MAX_ALIGN {
        return Err(format!("{a} ({fa}) must be within {MAX_ALIGN} of {b} ({fb})"));
    }
    Ok(())
}

/// The exact operation of a binary component on `(code_0, frac_0, code_1, frac_1)`: `(code,
/// frac)` of the result, `None` when the fractional bit counts are too far apart.
pub type Exact = fn(i64, i32, i64, i32) -> Option<(i128, i32)>;

/// A binary element-wise component: its [`Info`] (from [`info`]) and its operation.
pub trait Binary: Sync {
    /// Name, description, and the parameters and dependencies shared by every binary component.
    const INFO: Info;
    /// The exact operation.
    const EXACT: Exact;
}

/// The [`Info`] of the binary component `name`: its own name and description, the shared
/// parameters and RTL dependencies.
pub const fn info(name: &'static str, description: &'static str) -> Info {
    Info {
        name,
        description,
        dependencies: &["mase_assert.svh", "mase_cast_core.sv"],
        params: PARAMS,
        ..Info::DEFAULT
    }
}

const PARAMS: &[ParamSpec] = param_list![
    port_format!("DATA_IN_0", 8, "input 0 bits (1..64, signed)", 4, "input 0 fractional bits"),
    port_shape!("DATA_IN_0", [8, 1, 4, 1]),
    port_format!(
        "DATA_IN_1",
        8,
        "input 1 bits (1..64, signed)",
        4,
        "input 1 fractional bits (within 63 of input 0's)"
    ),
    same_shape!("DATA_IN_1", "DATA_IN_0", "input 1", "input 0"),
    port_format!("DATA_OUT_0", 8, "output bits (1..64, signed)", 4, "output fractional bits"),
    same_shape!("DATA_OUT_0", "DATA_IN_0", "output", "input 0"),
    output_modes!("DATA_OUT_0", "rounding", "overflow"),
];

/// LUT and FF model of add/sub over `[1, lanes × in0 bits, lanes × in1 bits, lanes × out bits]`,
/// fitted to Yosys 0.23 with `sim/examples/resource_fit.rs`.
const BINARY_LUT: [f64; 4] = [0.0, 1.99, 0.22, 0.0];
/// See [`BINARY_LUT`].
const BINARY_FF: [f64; 4] = [1.0, 0.0, 0.0, 1.0];

impl<T: Binary> Component for T {
    fn info(&self) -> &'static Info {
        &T::INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_port(p, "DATA_IN_0", 64)?;
        check_format(p, "DATA_IN_1", 64)?;
        check_alignment(p, "DATA_IN_1", "DATA_IN_0")?;
        check_same_shape(p, "DATA_IN_1", "DATA_IN_0")?;
        check_cast_output(p, "DATA_OUT_0", "DATA_IN_0", 64)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        [("DATA_IN_0", Direction::In), ("DATA_IN_1", Direction::In), ("DATA_OUT_0", Direction::Out)]
            .into_iter()
            .map(|(port, dir)| block_stream(p, port, dir))
            .collect()
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let name = T::INFO.name;
        let (a, b) = (stim.input(name, "data_in_0")?, stim.input(name, "data_in_1")?);
        if a.len() != b.len() {
            return Err(format!(
                "{name} model: data_in_0 has {} values but data_in_1 has {}",
                a.len(),
                b.len()
            ));
        }
        let (f0, f1) = (param(p, "DATA_IN_0_PRECISION_1") as i32, param(p, "DATA_IN_1_PRECISION_1") as i32);
        let to = output_format(p, "DATA_OUT_0", true);
        let y = a
            .iter()
            .zip(b)
            .map(|(&x0, &x1)| {
                (T::EXACT)(x0, f0, x1, f1)
                    .map(|(v, f)| cast_code(v, f, &to))
                    .ok_or_else(|| format!("{name} model: fractional bits {f0} and {f1} are too far apart"))
            })
            .collect::<Result<Vec<i64>, String>>()?;
        Ok(data_out_0(y))
    }

    fn cost(&self, p: &Params) -> Cost {
        Cost::streaming(LATENCY, beats_per_row(p, "DATA_IN_0") as u64)
    }

    /// Per lane: the aligned exact sum of both inputs and its cast to the output bits, the
    /// output register (fitted to Yosys 0.23 with `sim/examples/resource_fit.rs`), and the
    /// exact stage's register: one valid bit and the exact result's bits per lane (less the bits
    /// below the output's fraction under TRN, which the cast never reads, and otherwise the
    /// low bits folded into one rounding bit).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{fitted, pu};
        let lanes = pu(p, "DATA_IN_0_PARALLELISM_DIM_0") * pu(p, "DATA_IN_0_PARALLELISM_DIM_1");
        let x = [
            1,
            lanes * pu(p, "DATA_IN_0_PRECISION_0"),
            lanes * pu(p, "DATA_IN_1_PRECISION_0"),
            lanes * pu(p, "DATA_OUT_0_PRECISION_0"),
        ];
        let (f0, f1) = (param(p, "DATA_IN_0_PRECISION_1"), param(p, "DATA_IN_1_PRECISION_1"));
        let f = f0.max(f1);
        let (w0, w1) = (param(p, "DATA_IN_0_PRECISION_0"), param(p, "DATA_IN_1_PRECISION_0"));
        // Bits the cast drops; below its half bit, the lowest m of the exact result (m up to
        // the larger alignment shift) are kept as one bit (whether the unshifted operand's low
        // bits are zero, tested on the input).
        let cr = f - param(p, "DATA_OUT_0_PRECISION_1");
        let m = (cr - 1).min((f - f0).max(f - f1));
        let dropped = if param(p, "DATA_OUT_0_ROUNDING") == 0 { cr.max(0) } else { (m - 1).max(0) };
        let exact_bits = ((w0 + f - f0).max(w1 + f - f1) + 1 - dropped).max(1) as u64;
        let ff = fitted(&BINARY_FF, &x) + 1 + lanes * exact_bits;
        crate::Resources { lut: fitted(&BINARY_LUT, &x), ff, ..Default::default() }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            // P = 1, odd size, 2-bit + 5-bit inputs with different fractions, RND + WRAP.
            [input(2, 0), row(7, 1), input_1(5, 3), output(3, 1), modes(2, 0)].concat(),
            // 2-D blocks, 16-bit + 12-bit, coarser output, RND_CONV + SAT_SYM.
            [input(16, 10), row(9, 3), rows(4, 2), input_1(12, 4), output(10, 3), modes(6, 3)].concat(),
            // Negative fractional bits on one side, RND_MIN_INF + SAT_ZERO.
            [input(9, -2), input_1(7, 6), output(12, 2), modes(5, 2)].concat(),
            // 64-bit lanes, large alignment.
            [input(64, 0), row(4, 2), input_1(40, 50), output(64, 8), modes(4, 1)].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![row(8, 3), input_1(8, 70), vec![("DATA_IN_1_PARALLELISM_DIM_0", 2)], output(65, 4), modes(9, 1)]
    }
}

/// Every binary component binds a join node the same way: operands of equal shapes, each in
/// its own format.
impl<T: Binary> Binding for T {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        join_overrides(v, par)
    }

    /// An `add` of a computed tensor (input 0) and a constant (input 1) is `add_table`: the
    /// constant becomes a ROM of the instance instead of a stream (whether its shape broadcasts
    /// as `add_table` requires is that binding's check, with its own message).
    fn variant(&self, v: &NodeView) -> Option<&'static dyn Binding> {
        let is_constant = |k: usize| {
            v.node.inputs.get(k).is_some_and(|&i| matches!(v.graph.node(i).op, mase_ir::Op::Constant { .. }))
        };
        (T::INFO.name == "add" && is_constant(1) && !is_constant(0))
            .then_some(&super::add_table::AddTable as &dyn Binding)
    }
}

/// Overrides of a join node (add, sub): operands of equal shapes, each in its own format.
fn join_overrides(v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
    let (a, b) = (v.in_shape(0)?, v.in_shape(1)?);
    if a != b {
        return Err(v.error(format!(
            "operands of shapes {a:?} and {b:?}: the {} component takes equal shapes (no broadcasting)",
            v.node.op.mase_op()
        )));
    }
    crate::binding::Overrides::default()
        .tensor("DATA_IN_0", &v.signed_input(0, 64)?, &a, par.p_in)
        .format("DATA_IN_1", &v.signed_input(1, 64)?)
        .output(&v.out_format()?)
        .done()
}

#[cfg(test)]
mod tests {
    use super::super::{add::Add, sub::Sub};
    use super::*;
    use crate::resolve_params;

    /// `data_out_0` of `c` for `data_in_0 = [3, -128, 0, 0]` (s8.1) and `data_in_1 = [1, 127, 0, 0]`
    /// (s8.2) into s8.1 with the given rounding code.
    fn run(c: &dyn Component, rounding: i64) -> Vec<i64> {
        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), vec![3, -128, 0, 0]);
        stim.inputs.insert("data_in_1".into(), vec![1, 127, 0, 0]);
        let ov = [
            ("DATA_IN_0_PRECISION_1", 1),
            ("DATA_IN_1_PRECISION_1", 2),
            ("DATA_OUT_0_PRECISION_1", 1),
            ("DATA_OUT_0_ROUNDING", rounding),
        ];
        c.model(&resolve_params(c, &ov).unwrap(), &stim).unwrap()["data_out_0"].clone()
    }

    #[test]
    fn add_aligns_then_casts_once() {
        // 1.5 (s8.1: code 3) + 0.25 (s8.2: code 1) = 1.75 → s8.1 with TRN: 1.5 (code 3), RND: 2.0 (4)
        assert_eq!(run(&Add, 0)[0], 3);
        assert_eq!(run(&Add, 2)[0], 4);
    }

    #[test]
    fn sub_aligns_subtracts_then_casts_once() {
        // 1.5 (s8.1: code 3) - 0.25 (s8.2: code 1) = 1.25 → s8.1 with TRN: 1.0 (code 2), RND: 1.5 (3)
        let y = run(&Sub, 0);
        assert_eq!(y[0], 2);
        // -64 - 31.75 saturates to the s8.1 minimum.
        assert_eq!(y[1], -128);
        assert_eq!(run(&Sub, 2)[0], 3);
    }

    #[test]
    fn add_and_sub_share_every_parameter_and_rule() {
        assert_eq!(Add.params(), Sub.params());
        assert_eq!((Add.name(), Sub.name()), ("add", "sub"));
        let p = resolve_params(&Add, &[("DATA_IN_1_PRECISION_1", 70)]);
        let q = resolve_params(&Sub, &[("DATA_IN_1_PRECISION_1", 70)]);
        assert_eq!(p.unwrap_err().replace("`add`", "`sub`"), q.unwrap_err());
    }
}
