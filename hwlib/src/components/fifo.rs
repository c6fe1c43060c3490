//! `fifo`: first-word-fall-through FIFO (`rtl/mase_fifo.sv`) over a plain synchronous-read memory
//! (block or distributed RAM) whose read register is the output, or with `OUT_REG = 1` is
//! registered once more (so a multi-block-RAM depth mux ends at a register, not in the consumer's
//! logic; the stitcher's FIFOs do this); cuts the data, valid and ready paths. Latency
//! `2 + OUT_REG` cycles. Data is opaque: `LANES` lanes of `DATA_WIDTH` bits; capacity
//! `DEPTH + 1 + OUT_REG` beats.

use crate::component::{Component, Cost, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::components::skid_buffer::{check_lanes, passthrough_model, passthrough_streams, WORD_PARAMS};
use crate::{check_range, param};

/// The FIFO component.
pub struct Fifo;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "fifo",
    description:
        "first-word-fall-through FIFO on an inferred sync-read RAM; cuts data, valid and ready paths",
    dependencies: &["mase_assert.svh"],
    keeps_input_format: true,
    params: crate::param_list![
        WORD_PARAMS,
        [
            ParamSpec::value("DEPTH", 16, "memory depth in beats (2..65536); capacity is DEPTH + 1 + OUT_REG"),
            ParamSpec::value("OUT_REG", 0, "1: register the memory's read once more (latency +1)"),
        ],
    ],
    ..Info::DEFAULT
};

/// Resolved parameters of a FIFO of `depth` beats (clamped to the component's 2..65536) of
/// `lanes` lanes of `width` bits: the typed instance builder the stitcher uses. Its FIFOs feed
/// joins (a residual add's second input), so the memory's read is registered once more
/// (`OUT_REG`): the block RAM read and depth mux then end at a register, not in the adder.
pub fn instance(width: u32, lanes: usize, depth: usize) -> Result<Params, String> {
    crate::resolve_params(
        &Fifo,
        &[
            ("DATA_WIDTH", width as i64),
            ("LANES", lanes as i64),
            ("DEPTH", depth.clamp(2, 65536) as i64),
            ("OUT_REG", 1),
        ],
    )
}

impl Component for Fifo {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_lanes(p)?;
        check_range(p, "DEPTH", 2, 65536)?;
        check_range(p, "OUT_REG", 0, 1)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        passthrough_streams(p)
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        passthrough_model("fifo", stim)
    }

    fn cost(&self, p: &Params) -> Cost {
        let word = (param(p, "DATA_WIDTH") * param(p, "LANES")) as u64;
        let out_reg = param(p, "OUT_REG") as u64;
        Cost {
            // Write, read into the memory's read register, then (OUT_REG) into the output register.
            latency_cycles: 2 + out_reg,
            ii_cycles: 1,
            multipliers: 0,
            memory_bits: word * (param(p, "DEPTH") as u64 + 1 + out_reg),
        }
    }

    /// LUT/FF fitted to Yosys 0.23 over the fit set of `sim/examples/resource_fit.rs`
    /// (pointer logic grows with log2(depth); the read register holds one word unless the RAM
    /// holds it; `OUT_REG` adds a word and a valid bit); the memory by Yosys' mapping rule
    /// ([`crate::resources::ram`]).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{linear, pu, ram};
        let (word, depth) = (pu(p, "DATA_WIDTH") * pu(p, "LANES"), pu(p, "DEPTH"));
        let out_reg = pu(p, "OUT_REG");
        let abits = depth.max(2).next_power_of_two().trailing_zeros() as u64;
        let (bram18, lutram) = ram(depth, word);
        crate::Resources {
            // Refitted to the S1/S2 read path (Yosys 0.23: 27..51 LUTs at 32..4096 deep, 16 bits).
            lut: linear(4.0, &[(4.0, abits)]),
            // In block RAM the read register is the RAM's own; in LUT RAM it is a word of FFs.
            // OUT_REG's output register is a word of FFs and a valid bit either way.
            ff: if bram18 > 0 {
                linear(12.0, &[(2.0, abits), (1.0, out_reg * (word + 1))])
            } else {
                linear(6.0, &[(1.0, word), (2.0, abits), (1.0, out_reg * (word + 1))])
            },
            dsp: 0,
            bram18,
            lutram,
        }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![],
            vec![("DATA_WIDTH", 2), ("DEPTH", 2)],
            vec![("DATA_WIDTH", 11), ("LANES", 3), ("DEPTH", 5)],
            vec![("DATA_WIDTH", 16), ("LANES", 5), ("DEPTH", 64)],
            vec![("DATA_WIDTH", 2), ("DEPTH", 2), ("OUT_REG", 1)],
            vec![("DATA_WIDTH", 11), ("LANES", 3), ("DEPTH", 5), ("OUT_REG", 1)],
            vec![("DATA_WIDTH", 16), ("LANES", 5), ("DEPTH", 64), ("OUT_REG", 1)],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("DEPTH", 1)], vec![("DATA_WIDTH", 65)], vec![("OUT_REG", 2)]]
    }
}
