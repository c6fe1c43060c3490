//! `relu`: element-wise `max(x, 0)` on a stream of signed fixed-point blocks (`rtl/mase_relu.sv`).
//! Input and output share one format; the output is registered by a `mase_skid_buffer`.

use crate::component::{Component, Cost, Direction, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::{check_divides, check_equal, check_range, param};

/// The ReLU component.
pub struct Relu;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::value("DATA_IN_0_PRECISION_0", 8, "total bits of an input element (1..64)"),
    ParamSpec::value("DATA_IN_0_PRECISION_1", 4, "fractional bits of an input element (format only)"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_0", 8, "tensor size along dim 0 (columns)"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_1", 1, "tensor size along dim 1 (rows)"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_0", 4, "elements of dim 0 per beat"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_1", 1, "rows per beat"),
    ParamSpec::same_as("DATA_OUT_0_PRECISION_0", "DATA_IN_0_PRECISION_0", "output total bits (= input)"),
    ParamSpec::same_as("DATA_OUT_0_PRECISION_1", "DATA_IN_0_PRECISION_1", "output fractional bits (= input)"),
    ParamSpec::same_as(
        "DATA_OUT_0_TENSOR_SIZE_DIM_0",
        "DATA_IN_0_TENSOR_SIZE_DIM_0",
        "output size along dim 0 (= input)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_TENSOR_SIZE_DIM_1",
        "DATA_IN_0_TENSOR_SIZE_DIM_1",
        "output size along dim 1 (= input)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_PARALLELISM_DIM_0",
        "DATA_IN_0_PARALLELISM_DIM_0",
        "output elements of dim 0 per beat (= input)",
    ),
    ParamSpec::same_as(
        "DATA_OUT_0_PARALLELISM_DIM_1",
        "DATA_IN_0_PARALLELISM_DIM_1",
        "output rows per beat (= input)",
    ),
];

fn lanes(p: &Params) -> i64 {
    param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "DATA_IN_0_PARALLELISM_DIM_1")
}

impl Component for Relu {
    fn name(&self) -> &'static str {
        "relu"
    }

    fn description(&self) -> &'static str {
        "element-wise ReLU max(x, 0) on signed fixed-point blocks; output registered"
    }

    fn keeps_input_format(&self) -> bool {
        true
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_range(p, "DATA_IN_0_PRECISION_0", 1, 64)?;
        check_divides(p, "DATA_IN_0_PARALLELISM_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
        check_divides(p, "DATA_IN_0_PARALLELISM_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1")?;
        let n = lanes(p);
        if !(1..=1024).contains(&n) {
            return Err(format!(
                "DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 must be between 1 and 1024, got {n}"
            ));
        }
        for s in ["PRECISION_0", "PRECISION_1", "TENSOR_SIZE_DIM_0", "TENSOR_SIZE_DIM_1"] {
            check_equal(p, &format!("DATA_OUT_0_{s}"), &format!("DATA_IN_0_{s}"))?;
        }
        for s in ["PARALLELISM_DIM_0", "PARALLELISM_DIM_1"] {
            check_equal(p, &format!("DATA_OUT_0_{s}"), &format!("DATA_IN_0_{s}"))?;
        }
        Ok(())
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let beats =
            (param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0")) as usize;
        let width = param(p, "DATA_IN_0_PRECISION_0") as u32;
        let lanes = lanes(p) as usize;
        ["data_in_0", "data_out_0"]
            .iter()
            .zip([Direction::In, Direction::Out])
            .map(|(name, dir)| StreamSpec {
                name: name.to_string(),
                dir,
                lanes,
                width,
                signed: true,
                beats_per_row: beats,
            })
            .collect()
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.inputs.get("data_in_0").ok_or("relu model: missing input stream data_in_0")?;
        let mut out = StreamValues::new();
        out.insert("data_out_0".to_string(), x.iter().map(|&v| v.max(0)).collect());
        Ok(out)
    }

    fn cost(&self, p: &Params) -> Cost {
        let beats = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0");
        Cost { latency_cycles: 1, ii_cycles: beats as u64, multipliers: 0, memory_bits: 0 }
    }

    fn dependencies(&self) -> &'static [&'static str] {
        &["mase_assert.svh", "mase_skid_buffer.sv"]
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            vec![
                ("DATA_IN_0_PRECISION_0", 2),
                ("DATA_IN_0_PARALLELISM_DIM_0", 1),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 5),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 13),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 9),
                ("DATA_IN_0_PARALLELISM_DIM_0", 3),
                ("DATA_IN_0_TENSOR_SIZE_DIM_1", 4),
                ("DATA_IN_0_PARALLELISM_DIM_1", 2),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 16),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 12),
                ("DATA_IN_0_PARALLELISM_DIM_0", 12),
            ],
            // wide port (> 64 bits) with full 64-bit lanes
            vec![
                ("DATA_IN_0_PRECISION_0", 64),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 6),
                ("DATA_IN_0_PARALLELISM_DIM_0", 3),
            ],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![("DATA_IN_0_PARALLELISM_DIM_0", 3)],
            vec![("DATA_OUT_0_PRECISION_1", 2)],
            vec![("DATA_IN_0_TENSOR_SIZE_DIM_1", 3), ("DATA_IN_0_PARALLELISM_DIM_1", 2)],
        ]
    }
}

impl crate::binding::Binding for Relu {
    fn overrides(&self, v: &crate::binding::NodeView, par: crate::binding::Par) -> mase_ir::Result<Vec<(String, i64)>> {
        crate::binding::Overrides::default().tensor("DATA_IN_0", &v.signed_input(0, 64)?, &v.in_shape(0)?, par.p_in).done()
    }
}
