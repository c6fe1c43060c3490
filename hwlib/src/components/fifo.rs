//! `fifo`: first-word-fall-through FIFO (`rtl/mase_fifo.sv`) over a plain synchronous-read memory
//! (block or distributed RAM) whose read register is the output, or with `OUT_REG = 1` is
//! registered once more (so a multi-block-RAM depth mux ends at a register, not in the consumer's
//! logic); with `IN_REG = 1` the input beat is registered before the memory write (so the
//! producer's valid reaches neither the write enable nor the occupancy counter, and input ready
//! is a register); `READY_REG = 1` registers the memory's not-full and not-empty flags, so neither
//! the write enable nor the read enable waits for a compare of the occupancy counter;
//! `NO_RW_CHECK = 1` (the default: a FIFO reads only when not empty and writes only when not full,
//! so never both at one address) tells synthesis so, and no collision bypass follows the read.
//! The stitcher's join FIFOs set all four. Cuts the data, valid and ready
//! paths. Latency `2 + OUT_REG + IN_REG` cycles. Data is opaque: `LANES` lanes of `DATA_WIDTH`
//! bits; capacity `DEPTH + 1 + OUT_REG + IN_REG` beats.

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
            ParamSpec::value(
                "DEPTH",
                16,
                "memory depth in beats (2..65536); capacity is DEPTH + 1 + OUT_REG + IN_REG"
            ),
            ParamSpec::value("OUT_REG", 0, "1: register the memory's read once more (latency +1)"),
            ParamSpec::value(
                "IN_REG",
                0,
                "1: register the input before the memory write (latency +1, capacity +1, ready a register)"
            ),
            ParamSpec::value(
                "READY_REG",
                0,
                "1: the memory's not-full and not-empty flags are registers (push and pop skip the occupancy compares)"
            ),
            ParamSpec::value(
                "NO_RW_CHECK",
                1,
                "1: tell synthesis reads never meet writes of their address (no collision bypass); 0: let it build one"
            ),
        ],
    ],
    ..Info::DEFAULT
};

/// Resolved parameters of a FIFO of `depth` beats (clamped to the component's 2..65536) of
/// `lanes` lanes of `width` bits: the typed instance builder the stitcher uses. Its FIFOs feed
/// joins (a residual add's second input), so the memory's read is registered once more
/// (`OUT_REG`): the block RAM read and depth mux then end at a register, not in the adder. They
/// also sit behind a fork, whose valid arrives late: the input is registered (`IN_REG`), so that
/// valid ends at the input register instead of running through the write enable into the
/// occupancy counter; the memory's not-full and not-empty flags are registers (`READY_REG`), so
/// the write and read enables do not wait for a compare of the counter (in a 552-deep join FIFO
/// of the encoder layer, spread over block RAMs across the die, the compare, the push and the
/// counter's adder were the critical path, and then the compare, the pop and the routing to the
/// block RAMs' read enables); and the memory is marked free of read-write collisions
/// (`NO_RW_CHECK`), so no bypass multiplexer sits between the block RAM's read and the output
/// register.
pub fn instance(width: u32, lanes: usize, depth: usize) -> Result<Params, String> {
    crate::resolve_params(
        &Fifo,
        &[
            ("DATA_WIDTH", width as i64),
            ("LANES", lanes as i64),
            ("DEPTH", depth.clamp(2, 65536) as i64),
            ("OUT_REG", 1),
            ("IN_REG", 1),
            ("READY_REG", 1),
            ("NO_RW_CHECK", 1),
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
        check_range(p, "OUT_REG", 0, 1)?;
        check_range(p, "IN_REG", 0, 1)?;
        check_range(p, "READY_REG", 0, 1)?;
        check_range(p, "NO_RW_CHECK", 0, 1)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        passthrough_streams(p)
    }

    fn model(&self, _p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        passthrough_model("fifo", stim)
    }

    fn cost(&self, p: &Params) -> Cost {
        let word = (param(p, "DATA_WIDTH") * param(p, "LANES")) as u64;
        let (out_reg, in_reg) = (param(p, "OUT_REG") as u64, param(p, "IN_REG") as u64);
        Cost {
            // (IN_REG) into the input register, write, read into the memory's read register, then
            // (OUT_REG) into the output register.
            latency_cycles: 2 + out_reg + in_reg,
            ii_cycles: 1,
            multipliers: 0,
            memory_bits: word * (param(p, "DEPTH") as u64 + 1 + out_reg + in_reg),
        }
    }

    /// LUT/FF fitted to Yosys 0.23 over the fit set of `sim/examples/resource_fit.rs`
    /// (pointer logic grows with log2(depth); the read register holds one word unless the RAM
    /// holds it; `OUT_REG` adds a word and a valid bit; `IN_REG` a word, a valid bit, the ready
    /// register and a few LUTs of its next-state logic); the memory by Yosys' mapping rule
    /// ([`crate::resources::ram`]). `NO_RW_CHECK` costs nothing here: `synth_xilinx` builds no
    /// collision bypass for this memory either way (on ECP5 the bypass is a word of LUTs and FFs).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{linear, pu, ram};
        let (word, depth) = (pu(p, "DATA_WIDTH") * pu(p, "LANES"), pu(p, "DEPTH"));
        let (out_reg, in_reg) = (pu(p, "OUT_REG"), pu(p, "IN_REG"));
        let abits = depth.max(2).next_power_of_two().trailing_zeros() as u64;
        let (bram18, lutram) = ram(depth, word);
        // OUT_REG's output register is a word of FFs and a valid bit; IN_REG's input register a
        // word, its valid bit and the ready register (Yosys 0.23: +18 FFs at 16 bits).
        // READY_REG's not-full and not-empty registers are two FFs more.
        let stages = out_reg * (word + 1) + in_reg * (word + 2) + 2 * pu(p, "READY_REG");
        crate::Resources {
            // Refitted to the S1/S2 read path (Yosys 0.23: 27..51 LUTs at 32..4096 deep, 16 bits);
            // IN_REG's ready and valid next-state logic adds about 4 (47 -> 52 at 1024 deep).
            lut: linear(4.0, &[(4.0, abits), (4.0, in_reg)]),
            // In block RAM the read register is the RAM's own; in LUT RAM it is a word of FFs.
            ff: if bram18 > 0 {
                linear(12.0, &[(2.0, abits), (1.0, stages)])
            } else {
                linear(6.0, &[(1.0, word), (2.0, abits), (1.0, stages)])
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
            vec![("DATA_WIDTH", 2), ("DEPTH", 2), ("IN_REG", 1)],
            vec![("DATA_WIDTH", 11), ("LANES", 3), ("DEPTH", 5), ("OUT_REG", 1), ("IN_REG", 1)],
            vec![("DATA_WIDTH", 16), ("LANES", 5), ("DEPTH", 64), ("OUT_REG", 1), ("IN_REG", 1), ("NO_RW_CHECK", 1)],
            vec![("DATA_WIDTH", 7), ("DEPTH", 3), ("IN_REG", 1), ("NO_RW_CHECK", 0)],
            vec![("DATA_WIDTH", 5), ("DEPTH", 2), ("READY_REG", 1)],
            vec![("DATA_WIDTH", 9), ("LANES", 2), ("DEPTH", 7), ("OUT_REG", 1), ("IN_REG", 1), ("READY_REG", 1), ("NO_RW_CHECK", 1)],
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![vec![("DEPTH", 1)], vec![("DATA_WIDTH", 65)], vec![("OUT_REG", 2)], vec![("IN_REG", 2)], vec![("READY_REG", 2)], vec![("NO_RW_CHECK", 2)]]
    }
}
