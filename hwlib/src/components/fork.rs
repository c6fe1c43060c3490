//! `fork`: one stream to two consumers (`rtl/mase_fork.sv`), each with its own ready; the input
//! beat is consumed once both have taken it. Zero latency, full throughput when both consumers
//! are ready. Fan-out to N > 2 consumers is a tree of N − 1 forks (the SV port list cannot vary
//! with a parameter, and every port of an instance must be a real stream of the graph).

use mase_ir::fixed::FixedFormat;

use crate::component::{Component, Cost, Direction, Info, Params, Stimulus, StreamSpec, StreamValues};
use crate::overrides::{self, row, rows};
use crate::port::{beats_per_row, block_stream, check_port};
use crate::{param_list, port_format, port_shape};

/// LUTs of a fork's handshake, independent of its parameters (measured with Yosys 0.23).
const FORK_LUT: u64 = 5;

/// The fork component.
pub struct Fork;

/// Number of consumers of one fork (output streams `data_out_0`, `data_out_1`).
pub const CONSUMERS: usize = 2;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "fork",
    description: "one stream to two consumers, each with its own ready; zero latency, full throughput",
    dependencies: &["mase_assert.svh"],
    keeps_input_format: true,
    params: param_list![
        port_format!(
            "DATA_IN_0",
            8,
            "lane bits (1..64)",
            4,
            "fractional bits (format only; data passes through)"
        ),
        port_shape!("DATA_IN_0", [8, 1, 4, 1]),
    ],
    ..Info::DEFAULT
};

/// Resolved parameters of a fork of a stream of `rows` × `cols` elements in `format`, `lanes`
/// per beat: the typed instance builder the stitcher uses.
pub fn instance(format: &FixedFormat, rows: usize, cols: usize, lanes: usize) -> Result<Params, String> {
    let overrides = [
        overrides::input(format.width.into(), format.frac.into()),
        overrides::row(cols as i64, lanes as i64),
        vec![("DATA_IN_0_TENSOR_SIZE_DIM_1", rows as i64)],
    ];
    crate::resolve_params(&Fork, &overrides.concat())
}

impl Component for Fork {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_port(p, "DATA_IN_0", 64)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let input = block_stream(p, "DATA_IN_0", Direction::In);
        let outputs = (0..CONSUMERS).map(|k| StreamSpec {
            name: format!("data_out_{k}"),
            dir: Direction::Out,
            ..input.clone()
        });
        std::iter::once(input.clone()).chain(outputs).collect()
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.input("fork", "data_in_0")?;
        Ok((0..CONSUMERS).map(|k| (format!("data_out_{k}"), x.clone())).collect())
    }

    fn cost(&self, p: &Params) -> Cost {
        Cost::streaming(0, beats_per_row(p, "DATA_IN_0") as u64)
    }

    /// Data passes through as wires; two "taken" flags and the handshake logic remain
    /// (fitted to Yosys 0.23 with `sim/examples/resource_fit.rs`).
    fn resources(&self, _p: &Params) -> crate::Resources {
        crate::Resources { lut: FORK_LUT, ff: 2, ..Default::default() }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            [vec![("DATA_IN_0_PRECISION_0", 2)], row(5, 1)].concat(),
            [vec![("DATA_IN_0_PRECISION_0", 13)], row(9, 3), rows(4, 2)].concat(),
            [vec![("DATA_IN_0_PRECISION_0", 64)], row(6, 3)].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("DATA_IN_0_PARALLELISM_DIM_0", 3)], vec![("DATA_IN_0_PRECISION_0", 65)]]
    }
}
