//! `lane_converter`: changes the number of lanes per beat of a row-major stream
//! (`rtl/mase_lane_converter.sv`), for the emitter to put between a producer emitting
//! `P_IN = DATA_IN_0_PARALLELISM_DIM_0` elements per beat and a consumer taking
//! `P_OUT = DATA_OUT_0_PARALLELISM_DIM_0`. Element order is unchanged (lane `i` of a beat is its
//! `i`-th element on both sides), so the model is the identity on values.
//!
//! One of `P_IN`, `P_OUT` must divide the other and both must divide the row length
//! (`DATA_IN_0_TENSOR_SIZE_DIM_0`), so no beat straddles two rows; for any other pair the emitter
//! chains two converters through `gcd(P_IN, P_OUT)`. Gathering `K = P_OUT / P_IN` beats costs `K`
//! cycles of latency; splitting (and `P_IN = P_OUT`, a register slice) costs 1. Both run at full
//! rate: `row / min(P_IN, P_OUT)` cycles per row.

use mase_ir::fixed::FixedFormat;

use crate::component::{
    Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::Overrides;
use crate::port::check_format;
use crate::{check_divides, check_range, param, param_list, port_format};

/// The lane converter component.
pub struct LaneConverter;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "lane_converter",
    description: "changes the lanes per beat of a row-major stream (gather or split); full rate, order kept",
    dependencies: &["mase_assert.svh"],
    keeps_input_format: true,
    params: param_list![
        port_format!(
            "DATA_IN_0",
            8,
            "lane bits (1..64), the same on both sides",
            4,
            "fractional bits (format only; data passes through)"
        ),
        [
            ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_0", 8, "tensor size along dim 0 (elements per row)"),
            ParamSpec::value("DATA_IN_0_TENSOR_SIZE_DIM_1", 1, "tensor size along dim 1 (rows; format only)"),
            ParamSpec::value("DATA_IN_0_PARALLELISM_DIM_0", 2, "P_IN: elements of dim 0 per input beat"),
            ParamSpec::value(
                "DATA_OUT_0_PARALLELISM_DIM_0",
                4,
                "P_OUT: elements of dim 0 per output beat (a multiple or a divisor of P_IN)",
            ),
        ],
    ],
    ..Info::DEFAULT
};

/// `(P_IN, P_OUT)` of resolved parameters.
fn lanes(p: &Params) -> (i64, i64) {
    (param(p, "DATA_IN_0_PARALLELISM_DIM_0"), param(p, "DATA_OUT_0_PARALLELISM_DIM_0"))
}

/// Resolved parameters of a converter from `lanes_in` to `lanes_out` elements per beat of a
/// stream of `numel` elements in `format`, counted in rows of `row_len` elements (a multiple of
/// both lane counts): the typed instance builder the stitcher uses.
pub fn instance(
    format: &FixedFormat,
    row_len: usize,
    numel: usize,
    lanes_in: usize,
    lanes_out: usize,
) -> Result<Params, String> {
    let rows = (numel / row_len.max(1)) as i64;
    let lanes = conversion(format.width.into(), row_len as i64, rows, lanes_in as i64, lanes_out as i64);
    crate::resolve_params(
        &LaneConverter,
        &[lanes, vec![("DATA_IN_0_PRECISION_1", format.frac.into())]].concat(),
    )
}

/// Overrides of a converter of `bits`-bit lanes over `rows` rows of `row_len` elements, `lanes_in`
/// elements per input beat and `lanes_out` per output beat ([`instance`], the test instances).
fn conversion(bits: i64, row_len: i64, rows: i64, lanes_in: i64, lanes_out: i64) -> Overrides {
    vec![
        ("DATA_IN_0_PRECISION_0", bits),
        ("DATA_IN_0_TENSOR_SIZE_DIM_0", row_len),
        ("DATA_IN_0_TENSOR_SIZE_DIM_1", rows),
        ("DATA_IN_0_PARALLELISM_DIM_0", lanes_in),
        ("DATA_OUT_0_PARALLELISM_DIM_0", lanes_out),
    ]
}

impl Component for LaneConverter {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_format(p, "DATA_IN_0", 64)?;
        check_range(p, "DATA_IN_0_TENSOR_SIZE_DIM_0", 1, 1 << 20)?;
        check_range(p, "DATA_IN_0_TENSOR_SIZE_DIM_1", 1, 1 << 20)?;
        check_range(p, "DATA_IN_0_PARALLELISM_DIM_0", 1, 1024)?;
        check_range(p, "DATA_OUT_0_PARALLELISM_DIM_0", 1, 1024)?;
        let (pi, po) = lanes(p);
        if po % pi != 0 && pi % po != 0 {
            return Err(format!(
                "DATA_IN_0_PARALLELISM_DIM_0 ({pi}) and DATA_OUT_0_PARALLELISM_DIM_0 ({po}) must divide one \
                 another (the emitter chains two lane converters through their gcd otherwise)"
            ));
        }
        check_divides(p, "DATA_IN_0_PARALLELISM_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
        check_divides(p, "DATA_OUT_0_PARALLELISM_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let row = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
        let width = param(p, "DATA_IN_0_PRECISION_0") as u32;
        let (pi, po) = lanes(p);
        [("data_in_0", Direction::In, pi as usize), ("data_out_0", Direction::Out, po as usize)]
            .into_iter()
            .map(|(name, dir, lanes)| StreamSpec {
                name: name.to_string(),
                dir,
                lanes,
                width,
                signed: true,
                beats_per_row: row / lanes,
            })
            .collect()
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let x = stim.input("lane_converter", "data_in_0")?;
        Ok(std::iter::once(("data_out_0".to_string(), x.clone())).collect())
    }

    fn cost(&self, p: &Params) -> Cost {
        let row = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0");
        let (pi, po) = lanes(p);
        // Gather: the K-th beat of the first group arrives K-1 cycles after the first and the
        // output register is valid one cycle later. Split / equal: one register stage.
        let latency = (po / pi).max(1);
        Cost {
            latency_cycles: latency as u64,
            ii_cycles: (row / pi.min(po)) as u64,
            multipliers: 0,
            memory_bits: 0,
        }
    }

    /// Fitted to Yosys 0.23 with `sim/examples/resource_fit.rs`. Gather (P_OUT > P_IN): the
    /// collect and output registers, W × (2·P_OUT − P_IN) flip-flops, a beat counter. Split: the
    /// hold register (W × P_IN) shifted by P_OUT lanes per output beat, about 1.8 LUTs per held
    /// bit for a power-of-two ratio and 3.5 otherwise (the counter wraps at a non-power of
    /// two). Equal lane counts: one output register.
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{pu, round};
        let w = pu(p, "DATA_IN_0_PRECISION_0");
        let (pi, po) = (pu(p, "DATA_IN_0_PARALLELISM_DIM_0"), pu(p, "DATA_OUT_0_PARALLELISM_DIM_0"));
        let (lut, ff) = if po > pi {
            (3 + po / pi.max(1), w * (2 * po - pi) + 2)
        } else if pi > po {
            let ratio = pi / po.max(1);
            let per_bit = if ratio.is_power_of_two() { 1.8 } else { 3.5 };
            (round(per_bit * (w * pi) as f64), w * pi + 3)
        } else {
            (3, w * pi + 1)
        };
        crate::Resources { lut, ff, ..Default::default() }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: gather 2 -> 4.
            vec![],
            // Gather from single lanes, narrow lanes, several groups per row.
            conversion(2, 12, 1, 1, 3),
            // Split to single lanes, odd width, several rows per tensor.
            conversion(13, 10, 3, 5, 1),
            // Split 8 -> 2 (K = 4), 64-bit lanes.
            conversion(64, 16, 1, 8, 2),
            // Gather 2 -> 8 (K = 4), 64-bit lanes, a whole row per output beat.
            conversion(64, 8, 4, 2, 8),
            // Equal lane counts: a register slice.
            conversion(7, 9, 1, 3, 3),
            // P = 1 on both sides.
            conversion(5, 3, 1, 1, 1),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Neither lane count divides the other.
            conversion(8, 6, 1, 3, 2),
            // P_OUT does not divide the row.
            conversion(8, 6, 1, 2, 4),
            // P_IN does not divide the row.
            conversion(8, 6, 1, 4, 2),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    #[test]
    fn non_dividing_pair_names_the_gcd_workaround() {
        let ov = [
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", 6),
            ("DATA_IN_0_PARALLELISM_DIM_0", 3),
            ("DATA_OUT_0_PARALLELISM_DIM_0", 2),
        ];
        let e = resolve_params(&LaneConverter, &ov).unwrap_err();
        assert!(e.contains("must divide one another") && e.contains("gcd"), "{e}");
    }

    #[test]
    fn streams_and_cost_follow_the_lane_counts() {
        for (pi, po, row) in [(2, 8, 16), (8, 2, 16), (4, 4, 12), (1, 6, 6), (6, 1, 6)] {
            let ov = [
                ("DATA_IN_0_TENSOR_SIZE_DIM_0", row),
                ("DATA_IN_0_PARALLELISM_DIM_0", pi),
                ("DATA_OUT_0_PARALLELISM_DIM_0", po),
            ];
            let p = resolve_params(&LaneConverter, &ov).unwrap();
            let s = LaneConverter.streams(&p);
            assert_eq!((s[0].lanes, s[0].beats_per_row), (pi as usize, (row / pi) as usize));
            assert_eq!((s[1].lanes, s[1].beats_per_row), (po as usize, (row / po) as usize));
            let c = LaneConverter.cost(&p);
            // One beat per cycle on the side with more beats per row.
            assert_eq!(c.ii_cycles as usize, s[0].beats_per_row.max(s[1].beats_per_row));
            let expected_latency = if po > pi { po / pi } else { 1 };
            assert_eq!(c.latency_cycles, expected_latency as u64);
        }
    }
}
