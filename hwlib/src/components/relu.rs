//! `relu`: element-wise `max(x, 0)` on a stream of signed fixed-point blocks (`rtl/mase_relu.sv`).
//! Input and output share one format; the output is registered by a `mase_skid_buffer`.

use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{row, rows};
use crate::port::{beats_per_row, check_same_format, check_same_shape, lanes, unary_streams};
use crate::{check_divides, check_range, param_list, port_format, port_shape, same_shape};

/// The ReLU component.
pub struct Relu;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "relu",
    description: "element-wise ReLU max(x, 0) on signed fixed-point blocks; output registered",
    dependencies: &["mase_assert.svh", "mase_skid_buffer.sv"],
    keeps_input_format: true,
    params: param_list![
        port_format!(
            "DATA_IN_0",
            8,
            "total bits of an input element (1..64)",
            4,
            "fractional bits of an input element (format only)"
        ),
        port_shape!("DATA_IN_0", [8, 1, 4, 1], "tensor size along dim 0 (columns)"),
        [
            ParamSpec::same_as(
                "DATA_OUT_0_PRECISION_0",
                "DATA_IN_0_PRECISION_0",
                "output total bits (= input)"
            ),
            ParamSpec::same_as(
                "DATA_OUT_0_PRECISION_1",
                "DATA_IN_0_PRECISION_1",
                "output fractional bits (= input)"
            ),
        ],
        same_shape!(
            "DATA_OUT_0",
            "DATA_IN_0",
            [
                "output size along dim 0 (= input)",
                "output size along dim 1 (= input)",
                "output elements of dim 0 per beat (= input)",
                "output rows per beat (= input)",
            ]
        ),
    ],
    ..Info::DEFAULT
};

impl Component for Relu {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_range(p, "DATA_IN_0_PRECISION_0", 1, 64)?;
        check_divides(p, "DATA_IN_0_PARALLELISM_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
        check_divides(p, "DATA_IN_0_PARALLELISM_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1")?;
        let n = lanes(p, "DATA_IN_0");
        if !(1..=1024).contains(&n) {
            return Err(format!(
                "DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 must be between 1 and 1024, got {n}"
            ));
        }
        check_same_format(p, "DATA_OUT_0", "DATA_IN_0")?;
        check_same_shape(p, "DATA_OUT_0", "DATA_IN_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        unary_streams(p)
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.input("relu", "data_in_0")?;
        Ok(data_out_0(x.iter().map(|&v| v.max(0)).collect()))
    }

    fn cost(&self, p: &Params) -> Cost {
        Cost::streaming(1, beats_per_row(p, "DATA_IN_0") as u64)
    }

    /// Exact on the fit set of `sim/examples/resource_fit.rs` (Yosys 0.23): the output skid
    /// buffer holds each lane's sign-cleared value in W - 1 bits (the sign of a ReLU output is
    /// always 0).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::pu;
        let lanes = pu(p, "DATA_IN_0_PARALLELISM_DIM_0") * pu(p, "DATA_IN_0_PARALLELISM_DIM_1");
        let w = pu(p, "DATA_IN_0_PRECISION_0");
        let bits = lanes * w.saturating_sub(1);
        crate::Resources { lut: 2 * bits + 5, ff: 2 * bits + 2, ..Default::default() }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            [vec![("DATA_IN_0_PRECISION_0", 2)], row(5, 1)].concat(),
            [vec![("DATA_IN_0_PRECISION_0", 13)], row(9, 3), rows(4, 2)].concat(),
            [vec![("DATA_IN_0_PRECISION_0", 16)], row(12, 12)].concat(),
            // wide port (> 64 bits) with full 64-bit lanes
            [vec![("DATA_IN_0_PRECISION_0", 64)], row(6, 3)].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![row(8, 3), vec![("DATA_OUT_0_PRECISION_1", 2)], rows(3, 2)]
    }
}

impl Binding for Relu {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        crate::binding::Overrides::default()
            .tensor("DATA_IN_0", &v.signed_input(0, 64)?, &v.in_shape(0)?, par.p_in)
            .done()
    }
}
