//! `skid_buffer`: full-throughput two-entry register slice (`rtl/mase_skid_buffer.sv`) that cuts
//! the data, valid and ready paths of a stream. Data is opaque: `LANES` lanes of `DATA_WIDTH` bits.

use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::{check_range, param};

/// The skid buffer (register slice) component.
pub struct SkidBuffer;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "skid_buffer",
    description: "two-entry register slice cutting data, valid and ready paths at full throughput",
    dependencies: &["mase_assert.svh"],
    params: &WORD_PARAMS,
    ..Info::DEFAULT
};

/// The word of an opaque pass-through (the RTL's `MASE_WORD_PARAMS`): `LANES` lanes of
/// `DATA_WIDTH` bits, checked by [`check_lanes`].
pub(crate) const WORD_PARAMS: [ParamSpec; 2] = [
    ParamSpec::value("DATA_WIDTH", 8, "bits per lane (1..64)"),
    ParamSpec::value("LANES", 1, "lanes per beat (1..1024); ports are LANES*DATA_WIDTH bits"),
];

/// Checks the lane parameters of an opaque pass-through: `DATA_WIDTH` in 1..64, `LANES` in
/// 1..1024.
pub(crate) fn check_lanes(p: &Params) -> Result<(), String> {
    check_range(p, "DATA_WIDTH", 1, 64)?;
    check_range(p, "LANES", 1, 1024)
}

/// Input and output streams of an opaque `LANES × DATA_WIDTH` pass-through (one beat per row).
pub(crate) fn passthrough_streams(p: &Params) -> Vec<StreamSpec> {
    let (width, lanes) = (param(p, "DATA_WIDTH") as u32, param(p, "LANES") as usize);
    vec![
        StreamSpec {
            name: "data_in_0".into(),
            dir: Direction::In,
            lanes,
            width,
            signed: false,
            beats_per_row: 1,
        },
        StreamSpec {
            name: "data_out_0".into(),
            dir: Direction::Out,
            lanes,
            width,
            signed: false,
            beats_per_row: 1,
        },
    ]
}

/// The identity model of a pass-through: `data_out_0` = `data_in_0`.
pub(crate) fn passthrough_model(name: &str, stim: &Stimulus) -> Result<StreamValues, String> {
    let x = stim.input(name, "data_in_0")?;
    Ok(data_out_0(x.clone()))
}

impl Component for SkidBuffer {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_lanes(p)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        passthrough_streams(p)
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        passthrough_model("skid_buffer", stim)
    }

    fn cost(&self, p: &Params) -> Cost {
        let bits = (2 * param(p, "DATA_WIDTH") * param(p, "LANES")) as u64;
        Cost { latency_cycles: 1, ii_cycles: 1, multipliers: 0, memory_bits: bits }
    }

    /// Exact on the fit set of `sim/examples/resource_fit.rs` (Yosys 0.23): two registers of a
    /// beat plus two state bits; one LUT per data bit (the output mux) plus four of control.
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::pu;
        let word = pu(p, "DATA_WIDTH") * pu(p, "LANES");
        crate::Resources { lut: word + 4, ff: 2 * word + 2, ..Default::default() }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            vec![("DATA_WIDTH", 2)],
            vec![("DATA_WIDTH", 13), ("LANES", 3)],
            vec![("DATA_WIDTH", 64), ("LANES", 2)],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("DATA_WIDTH", 65)], vec![("LANES", 1025)]]
    }
}
