//! `add`: element-wise sum of two streams with format alignment (`rtl/mase_add.sv`), the join
//! of a residual connection. Each input has its own signed format; the exact sum
//! ([`mase_ir::fixed::add`], aligned to the finer fractional bit count) is cast once to the
//! output format with the output's rounding and overflow modes ([`mase_ir::fixed::cast_code`]).

use mase_ir::fixed::{add, cast_code};

use super::cast::{check_modes, output_format, MAX_FRAC};
use crate::component::{Component, Cost, Direction, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::{check_block_shape, check_equal, check_range, param};

/// The add (join) component.
pub struct Add;

/// Largest distance between the two inputs' fractional bit counts (the exact sum then fits in
/// 128 bits, as [`mase_ir::fixed::add`] requires).
pub const MAX_ALIGN: i64 = 63;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::value("DATA_IN_0_PRECISION_0", 8, "input 0 bits (1..64, signed)"),
    ParamSpec::value("DATA_IN_0_PRECISION_1", 4, "input 0 fractional bits"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_0", 8, "tensor size along dim 0 (elements per row)"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_1", 1, "tensor size along dim 1 (rows)"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_0", 4, "elements of dim 0 per beat"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_1", 1, "rows per beat"),
    ParamSpec::value("DATA_IN_1_PRECISION_0", 8, "input 1 bits (1..64, signed)"),
    ParamSpec::value("DATA_IN_1_PRECISION_1", 4, "input 1 fractional bits (within 63 of input 0's)"),
    ParamSpec::same_as(
        "DATA_IN_1_TENSOR_SIZE_DIM_0",
        "DATA_IN_0_TENSOR_SIZE_DIM_0",
        "input 1 dim 0 (= input 0)",
    ),
    ParamSpec::same_as(
        "DATA_IN_1_TENSOR_SIZE_DIM_1",
        "DATA_IN_0_TENSOR_SIZE_DIM_1",
        "input 1 dim 1 (= input 0)",
    ),
    ParamSpec::same_as(
        "DATA_IN_1_PARALLELISM_DIM_0",
        "DATA_IN_0_PARALLELISM_DIM_0",
        "input 1 elements of dim 0 per beat (= input 0)",
    ),
    ParamSpec::same_as(
        "DATA_IN_1_PARALLELISM_DIM_1",
        "DATA_IN_0_PARALLELISM_DIM_1",
        "input 1 rows per beat (= input 0)",
    ),
    ParamSpec::value("DATA_OUT_0_PRECISION_0", 8, "output bits (1..64, signed)"),
    ParamSpec::value("DATA_OUT_0_PRECISION_1", 4, "output fractional bits"),
    ParamSpec::same_as(
        "DATA_OUT_0_TENSOR_SIZE_DIM_0",
        "DATA_IN_0_TENSOR_SIZE_DIM_0",
        "output dim 0 (= input 0)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_TENSOR_SIZE_DIM_1",
        "DATA_IN_0_TENSOR_SIZE_DIM_1",
        "output dim 1 (= input 0)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_PARALLELISM_DIM_0",
        "DATA_IN_0_PARALLELISM_DIM_0",
        "output elements of dim 0 per beat (= input 0)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_PARALLELISM_DIM_1",
        "DATA_IN_0_PARALLELISM_DIM_1",
        "output rows per beat (= input 0)",
    ),
    ParamSpec::value(
        "DATA_OUT_0_ROUNDING",
        0,
        "rounding: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV",
    ),
    ParamSpec::value("DATA_OUT_0_OVERFLOW", 1, "overflow: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM"),
];

/// Dimension parameter suffixes shared by the three streams.
const DIMS: [&str; 4] = ["TENSOR_SIZE_DIM_0", "TENSOR_SIZE_DIM_1", "PARALLELISM_DIM_0", "PARALLELISM_DIM_1"];

impl Component for Add {
    fn name(&self) -> &'static str {
        "add"
    }

    fn description(&self) -> &'static str {
        "element-wise sum of two streams, each in its own format, exact then cast to the output format"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_range(p, "DATA_IN_0_PRECISION_0", 1, 64)?;
        check_range(p, "DATA_IN_0_PRECISION_1", -MAX_FRAC, MAX_FRAC)?;
        check_block_shape(p, "DATA_IN_0")?;
        check_range(p, "DATA_IN_1_PRECISION_0", 1, 64)?;
        check_range(p, "DATA_IN_1_PRECISION_1", -MAX_FRAC, MAX_FRAC)?;
        let (f0, f1) = (param(p, "DATA_IN_0_PRECISION_1"), param(p, "DATA_IN_1_PRECISION_1"));
        if (f1 - f0).abs() > MAX_ALIGN {
            return Err(format!(
                "DATA_IN_1_PRECISION_1 ({f1}) must be within {MAX_ALIGN} of DATA_IN_0_PRECISION_1 ({f0})"
            ));
        }
        for s in DIMS {
            check_equal(p, &format!("DATA_IN_1_{s}"), &format!("DATA_IN_0_{s}"))?;
        }
        check_range(p, "DATA_OUT_0_PRECISION_0", 1, 64)?;
        check_range(p, "DATA_OUT_0_PRECISION_1", -MAX_FRAC, MAX_FRAC)?;
        for s in DIMS {
            check_equal(p, &format!("DATA_OUT_0_{s}"), &format!("DATA_IN_0_{s}"))?;
        }
        check_modes(p, "DATA_OUT_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let lanes =
            (param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "DATA_IN_0_PARALLELISM_DIM_1")) as usize;
        let beats =
            (param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0")) as usize;
        [("DATA_IN_0", Direction::In), ("DATA_IN_1", Direction::In), ("DATA_OUT_0", Direction::Out)]
            .into_iter()
            .map(|(prefix, dir)| StreamSpec {
                name: prefix.to_lowercase(),
                dir,
                lanes,
                width: param(p, &format!("{prefix}_PRECISION_0")) as u32,
                signed: true,
                beats_per_row: beats,
            })
            .collect()
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let a = stim.inputs.get("data_in_0").ok_or("add model: missing input stream data_in_0")?;
        let b = stim.inputs.get("data_in_1").ok_or("add model: missing input stream data_in_1")?;
        if a.len() != b.len() {
            return Err(format!("add model: data_in_0 has {} values but data_in_1 has {}", a.len(), b.len()));
        }
        let (f0, f1) = (param(p, "DATA_IN_0_PRECISION_1") as i32, param(p, "DATA_IN_1_PRECISION_1") as i32);
        let to = output_format(p, "DATA_OUT_0", true);
        let y = a
            .iter()
            .zip(b)
            .map(|(&x0, &x1)| {
                add(x0, f0, x1, f1)
                    .map(|(sum, f)| cast_code(sum, f, &to))
                    .ok_or_else(|| format!("add model: fractional bits {f0} and {f1} are too far apart"))
            })
            .collect::<Result<Vec<i64>, String>>()?;
        let mut out = StreamValues::new();
        out.insert("data_out_0".into(), y);
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
        vec![
            vec![],
            // P = 1, odd size, 2-bit + 5-bit inputs with different fractions, RND + WRAP.
            vec![
                ("DATA_IN_0_PRECISION_0", 2),
                ("DATA_IN_0_PRECISION_1", 0),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 7),
                ("DATA_IN_0_PARALLELISM_DIM_0", 1),
                ("DATA_IN_1_PRECISION_0", 5),
                ("DATA_IN_1_PRECISION_1", 3),
                ("DATA_OUT_0_PRECISION_0", 3),
                ("DATA_OUT_0_PRECISION_1", 1),
                ("DATA_OUT_0_ROUNDING", 2),
                ("DATA_OUT_0_OVERFLOW", 0),
            ],
            // 2-D blocks, 16-bit + 12-bit, coarser output, RND_CONV + SAT_SYM.
            vec![
                ("DATA_IN_0_PRECISION_0", 16),
                ("DATA_IN_0_PRECISION_1", 10),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 9),
                ("DATA_IN_0_PARALLELISM_DIM_0", 3),
                ("DATA_IN_0_TENSOR_SIZE_DIM_1", 4),
                ("DATA_IN_0_PARALLELISM_DIM_1", 2),
                ("DATA_IN_1_PRECISION_0", 12),
                ("DATA_IN_1_PRECISION_1", 4),
                ("DATA_OUT_0_PRECISION_0", 10),
                ("DATA_OUT_0_PRECISION_1", 3),
                ("DATA_OUT_0_ROUNDING", 6),
                ("DATA_OUT_0_OVERFLOW", 3),
            ],
            // Negative fractional bits on one side, RND_MIN_INF + SAT_ZERO.
            vec![
                ("DATA_IN_0_PRECISION_0", 9),
                ("DATA_IN_0_PRECISION_1", -2),
                ("DATA_IN_1_PRECISION_0", 7),
                ("DATA_IN_1_PRECISION_1", 6),
                ("DATA_OUT_0_PRECISION_0", 12),
                ("DATA_OUT_0_PRECISION_1", 2),
                ("DATA_OUT_0_ROUNDING", 5),
                ("DATA_OUT_0_OVERFLOW", 2),
            ],
            // 64-bit lanes, large alignment.
            vec![
                ("DATA_IN_0_PRECISION_0", 64),
                ("DATA_IN_0_PRECISION_1", 0),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 4),
                ("DATA_IN_0_PARALLELISM_DIM_0", 2),
                ("DATA_IN_1_PRECISION_0", 40),
                ("DATA_IN_1_PRECISION_1", 50),
                ("DATA_OUT_0_PRECISION_0", 64),
                ("DATA_OUT_0_PRECISION_1", 8),
                ("DATA_OUT_0_ROUNDING", 4),
                ("DATA_OUT_0_OVERFLOW", 1),
            ],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![("DATA_IN_0_PARALLELISM_DIM_0", 3)],
            vec![("DATA_IN_1_PRECISION_1", 70)],
            vec![("DATA_IN_1_PARALLELISM_DIM_0", 2)],
            vec![("DATA_OUT_0_PRECISION_0", 65)],
            vec![("DATA_OUT_0_ROUNDING", 9)],
        ]
    }
}

impl crate::binding::Binding for Add {
    fn overrides(&self, v: &crate::binding::NodeView, par: crate::binding::Par) -> mase_ir::Result<Vec<(String, i64)>> {
        super::add::join_overrides(v, par)
    }
}

/// Overrides of a join node (add, sub): operands of equal shapes, each in its own format.
pub(crate) fn join_overrides(
    v: &crate::binding::NodeView,
    par: crate::binding::Par,
) -> mase_ir::Result<Vec<(String, i64)>> {
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
    use super::*;
    use crate::resolve_params;

    #[test]
    fn validation_matches_the_documented_rules() {
        for bad in Add.invalid_params() {
            assert!(resolve_params(&Add, &bad).is_err(), "{bad:?} accepted");
        }
        for good in Add.test_params() {
            resolve_params(&Add, &good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
        }
    }

    #[test]
    fn model_aligns_then_casts_once() {
        // 1.5 (s8.1: code 3) + 0.25 (s8.2: code 1) = 1.75 → s8.1 with TRN: 1.5 (code 3), RND: 2.0 (4)
        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), vec![3, 0, 0, 0]);
        stim.inputs.insert("data_in_1".into(), vec![1, 0, 0, 0]);
        let base =
            [("DATA_IN_0_PRECISION_1", 1), ("DATA_IN_1_PRECISION_1", 2), ("DATA_OUT_0_PRECISION_1", 1)];
        let p = resolve_params(&Add, &base).unwrap();
        assert_eq!(Add.model(&p, &stim).unwrap()["data_out_0"][0], 3);
        let mut rnd = base.to_vec();
        rnd.push(("DATA_OUT_0_ROUNDING", 2));
        let p = resolve_params(&Add, &rnd).unwrap();
        assert_eq!(Add.model(&p, &stim).unwrap()["data_out_0"][0], 4);
    }
}
