//! `fork`: one stream to two consumers (`rtl/mase_fork.sv`), each with its own ready; the input
//! beat is consumed once both have taken it. Zero latency, full throughput when both consumers
//! are ready. Fan-out to N > 2 consumers is a tree of N − 1 forks (the SV port list cannot vary
//! with a parameter, and every port of an instance must be a real stream of the graph).

use mase_ir::fixed::FixedFormat;

use crate::component::{Component, Cost, Direction, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::{check_block_shape, check_range, param};

use super::cast::MAX_FRAC;

/// The fork component.
pub struct Fork;

/// Number of consumers of one fork (output streams `data_out_0`, `data_out_1`).
pub const CONSUMERS: usize = 2;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::value("DATA_IN_0_PRECISION_0", 8, "lane bits (1..64)"),
    ParamSpec::value("DATA_IN_0_PRECISION_1", 4, "fractional bits (format only; data passes through)"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_0", 8, "tensor size along dim 0 (elements per row)"),
    ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_1", 1, "tensor size along dim 1 (rows)"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_0", 4, "elements of dim 0 per beat"),
    ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_1", 1, "rows per beat"),
];

/// Resolved parameters of a fork of a stream of `rows` × `cols` elements in `format`, `lanes`
/// per beat: the typed instance builder the stitcher uses.
pub fn instance(format: &FixedFormat, rows: usize, cols: usize, lanes: usize) -> Result<Params, String> {
    crate::resolve_params(
        &Fork,
        &[
            ("DATA_IN_0_PRECISION_0", format.width as i64),
            ("DATA_IN_0_PRECISION_1", format.frac as i64),
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", cols as i64),
            ("DATA_IN_0_TENSOR_SIZE_DIM_1", rows as i64),
            ("DATA_IN_0_PARALLELISM_DIM_0", lanes as i64),
        ],
    )
}

impl Component for Fork {
    fn name(&self) -> &'static str {
        "fork"
    }

    fn dependencies(&self) -> &'static [&'static str] {
        &["mase_assert.svh"]
    }

    fn description(&self) -> &'static str {
        "one stream to two consumers, each with its own ready; zero latency, full throughput"
    }

    fn keeps_input_format(&self) -> bool {
        true
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_range(p, "DATA_IN_0_PRECISION_0", 1, 64)?;
        check_range(p, "DATA_IN_0_PRECISION_1", -MAX_FRAC, MAX_FRAC)?;
        check_block_shape(p, "DATA_IN_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let lanes =
            (param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "DATA_IN_0_PARALLELISM_DIM_1")) as usize;
        let beats =
            (param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0")) as usize;
        let width = param(p, "DATA_IN_0_PRECISION_0") as u32;
        std::iter::once(("data_in_0".to_string(), Direction::In))
            .chain((0..CONSUMERS).map(|k| (format!("data_out_{k}"), Direction::Out)))
            .map(|(name, dir)| StreamSpec { name, dir, lanes, width, signed: true, beats_per_row: beats })
            .collect()
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.inputs.get("data_in_0").ok_or("fork model: missing input stream data_in_0")?;
        Ok((0..CONSUMERS).map(|k| (format!("data_out_{k}"), x.clone())).collect())
    }

    fn cost(&self, p: &Params) -> Cost {
        let beats = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / param(p, "DATA_IN_0_PARALLELISM_DIM_0");
        Cost { latency_cycles: 0, ii_cycles: beats as u64, multipliers: 0, memory_bits: 0 }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            vec![
                ("DATA_IN_0_PRECISION_0", 2),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 5),
                ("DATA_IN_0_PARALLELISM_DIM_0", 1),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 13),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 9),
                ("DATA_IN_0_PARALLELISM_DIM_0", 3),
                ("DATA_IN_0_TENSOR_SIZE_DIM_1", 4),
                ("DATA_IN_0_PARALLELISM_DIM_1", 2),
            ],
            vec![
                ("DATA_IN_0_PRECISION_0", 64),
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", 6),
                ("DATA_IN_0_PARALLELISM_DIM_0", 3),
            ],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("DATA_IN_0_PARALLELISM_DIM_0", 3)], vec![("DATA_IN_0_PRECISION_0", 65)]]
    }
}
