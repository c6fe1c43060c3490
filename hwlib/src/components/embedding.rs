//! `embedding`: table lookup (`rtl/mase_embedding.sv`), the hardware of `Op::Embedding` (a
//! `Gather` on axis 0 of a constant `[V, H]` table at token ids, raised by `raise_embedding`).
//!
//! # Interface
//!
//! - `data_in_0`: one index per beat, **unsigned**, `IDX_WIDTH` bits (`IDX_WIDTH ≥` the bits of
//!   `V − 1`, at least 1, at most 32). Negative indices do not exist on the port: the producer
//!   sends `0..V`.
//! - `data_out_0`: for each index `r`, `NB = H / PAR` beats of `PAR = DATA_OUT_0_PARALLELISM_DIM_0`
//!   signed `DATA_OUT_0_PRECISION_0`-bit elements: row `r` of the table in order (beat `j`, lane
//!   `i` = element `j·PAR + i`), each cast from the table's format (`WEIGHT_PRECISION_0/1`) to
//!   `DATA_OUT_0_PRECISION_0/1` with `DATA_OUT_0_ROUNDING/OVERFLOW` — exactly what quantized
//!   execution computes (the row's codes, then the node's output cast).
//! - **An index `r ≥ V`** (possible when `2^IDX_WIDTH > V`) gives a row of `H` zeros; the model
//!   does the same. (The float and quantized interpreters reject such an index.)
//! - Memory `weight` (`WEIGHT_MEM_FILE`): the quantized table `graph.qweights[table]`, logical
//!   order `[V][H]` row-major; `V·NB` words of `PAR` lanes of `WEIGHT_PRECISION_0` bits, word
//!   `r·NB + j`, lane `i` = `table[r][j·PAR + i]` (a block ROM, `rom_style = "block"`).
//!
//! # Harness rows and cost
//!
//! A harness row is one index: `data_in_0` has 1 beat per row, `data_out_0` `NB`. The output
//! moves one beat per cycle and the next index is taken with the last read of the current row,
//! so `ii_cycles = NB` per index; latency 4 (take, ROM read, R, output register).

use mase_ir::fixed::cast_code;

use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec,
    StreamValues,
};
use crate::components::cast::{check_modes, output_format, CastShape};
use crate::components::row_table::{quantized_table, weight_memory, RowTable};
use crate::overrides::{modes, output, weight};
use crate::port::{check_format, check_row_shape};
use crate::resources::clog2;
use crate::{check_equal, check_range, output_modes, param, param_list, port_format, port_shape};

/// The embedding component.
pub struct Embedding;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "embedding",
    description: "table lookup: one unsigned index per beat in, the table's row out (PAR elements per beat, cast to the output format); a block ROM from a .mem file, out-of-range indices give a zero row",
    dependencies: &["mase_assert.svh", "mase_cast_core.sv", "mase_skid_buffer.sv"],
    params: param_list![
        [ParamSpec::value(
            "IDX_WIDTH",
            4,
            "bits of an index on data_in_0 (unsigned; at least the bits of V - 1, 1..32)"
        )],
        port_format!("WEIGHT", 8, "table element bits (1..64), signed", 6, "table fractional bits"),
        [
            ParamSpec::value("WEIGHT_TENSOR_SIZE_DIM_0", 8, "H: elements per table row (1..65536)"),
            ParamSpec::value("WEIGHT_TENSOR_SIZE_DIM_1", 10, "V: table rows (1..2^24 / NB)"),
        ],
        port_format!("DATA_OUT_0", 8, "output element bits (1..64), signed", 4, "output fractional bits"),
        port_shape!(
            "DATA_OUT_0",
            [8, 4, 4, 1],
            [
                "output elements per row (= WEIGHT_TENSOR_SIZE_DIM_0)",
                "output rows: indices per tensor (1..2^20)",
                "PAR: output elements per beat (1..1024, divides H)",
                "output rows per beat (1)",
            ]
        ),
        output_modes!("DATA_OUT_0", "rounding of the table's elements", "overflow"),
    ],
    ..Info::DEFAULT
};

/// LUT model of embedding over `[1, the output cast's LUTs (`CastShape::lut`), lanes × output
/// bits that vary (the skid buffer's muxes; see [`varying_out_bits`]), address and beat counter
/// bits]`, least squares on relative error over the 31 instances of
/// `sim/examples/resource_fit.rs --only embedding` with more than one ROM word (Yosys 0.23;
/// median LUT error 5.7 %, at most 24 %).
const EMBEDDING_LUT: [f64; 4] = [14.085, 0.46, 1.955, 1.351];
/// FF model over `[1, lanes × output bits that vary (skid buffer: two words), address and beat
/// counter bits]` (the ROM's read register is the block RAM's own), same fit; median error
/// 3.3 %, at most 15 %; the R register after the read is counted on top.
const EMBEDDING_FF: [f64; 3] = [10.731, 1.989, 0.618];
/// A one-word table is a constant: only the handshake remains (Yosys 0.23: 9 LUT, 8 FF at every
/// width measured).
const CONSTANT_TABLE: crate::Resources = crate::Resources { lut: 9, ff: 8, dsp: 0, bram18: 0, lutram: 0 };

/// The table of an instance: `V` rows, `H` elements, `PAR` output lanes.
fn geo(p: &Params) -> RowTable {
    RowTable::of(p, "WEIGHT_TENSOR_SIZE_DIM_0", "DATA_OUT_0_PARALLELISM_DIM_0")
}

/// Parameter overrides of an instance: a `[v, h]` table of `table = (bits, frac)` elements,
/// `idx_width`-bit indices, `lanes` output elements per beat, output `(bits, frac)`.
pub fn instance(
    v: i64,
    h: i64,
    idx_width: i64,
    lanes: i64,
    table: (i64, i64),
    out: (i64, i64),
) -> Vec<(&'static str, i64)> {
    [
        vec![
            ("IDX_WIDTH", idx_width),
            ("WEIGHT_TENSOR_SIZE_DIM_0", h),
            ("WEIGHT_TENSOR_SIZE_DIM_1", v),
            ("DATA_OUT_0_TENSOR_SIZE_DIM_0", h),
            ("DATA_OUT_0_PARALLELISM_DIM_0", lanes),
        ],
        weight(table.0, table.1),
        output(out.0, out.1),
    ]
    .concat()
}

impl Component for Embedding {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_format(p, "WEIGHT", 64)?;
        check_range(p, "WEIGHT_TENSOR_SIZE_DIM_0", 1, 65536)?;
        check_format(p, "DATA_OUT_0", 64)?;
        check_equal(p, "DATA_OUT_0_TENSOR_SIZE_DIM_0", "WEIGHT_TENSOR_SIZE_DIM_0")?;
        check_row_shape(p, "DATA_OUT_0", 65536, 1 << 20, 1024)?;
        let nb = geo(p).nb() as i64;
        check_range(p, "WEIGHT_TENSOR_SIZE_DIM_1", 1, (1 << 24) / nb)?;
        let vbits = clog2(param(p, "WEIGHT_TENSOR_SIZE_DIM_1") as u64) as i64;
        check_range(p, "IDX_WIDTH", vbits, 32)?;
        check_modes(p, "DATA_OUT_0")
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let g = geo(p);
        vec![
            StreamSpec {
                name: "data_in_0".into(),
                dir: Direction::In,
                lanes: 1,
                width: param(p, "IDX_WIDTH") as u32,
                signed: false,
                beats_per_row: 1,
            },
            g.out_stream(p),
        ]
    }

    crate::row_table_memory!(geo, "embedding");

    /// Row `r` of the table, cast to the output format, for each index `r < V`; `H` zeros for
    /// `r ≥ V`.
    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let g = geo(p);
        let idx = stim.input("embedding", "data_in_0")?;
        let table = g.values("embedding", stim)?;
        let frac = param(p, "WEIGHT_PRECISION_1") as i32;
        let to = output_format(p, "DATA_OUT_0", true);
        let mut y = Vec::with_capacity(idx.len() * g.h);
        for &r in idx {
            match usize::try_from(r) {
                Ok(r) if r < g.rows => y.extend(table[r * g.h..(r + 1) * g.h].iter().map(|&c| cast_code(c as i128, frac, &to))),
                _ => y.extend(std::iter::repeat_n(0, g.h)),
            }
        }
        Ok(data_out_0(y))
    }

    fn cost(&self, p: &Params) -> Cost {
        let g = geo(p);
        Cost {
            latency_cycles: 4,
            ii_cycles: g.nb() as u64,
            multipliers: 0,
            memory_bits: g.memory_bits(p),
        }
    }

    /// [`embedding_resources`] with every table bit varying.
    fn resources(&self, p: &Params) -> crate::Resources {
        embedding_resources(p, None)
    }

    /// [`Embedding::resources`] with the ROM's width cut to its varying bit columns.
    fn resources_with_memories(&self, p: &Params, memories: &StreamValues) -> crate::Resources {
        let varying = memories
            .get("weight")
            .and_then(|v| self.layout_memory(p, "weight", v).ok())
            .map(|words| crate::resources::varying_bits(&words, param(p, "WEIGHT_PRECISION_0") as u32));
        embedding_resources(p, varying)
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: V = 10 (indices 10..15 give zero rows), H = 8, 4 lanes, s8.6 -> s8.4.
            vec![],
            // V = 16 with 4-bit indices (none out of range), P = 1, widening s3.1 -> s5.3,
            // RND_CONV + SAT_SYM.
            [instance(16, 6, 4, 1, (3, 1), (5, 3)), modes(6, 3)].concat(),
            // One beat per row (PAR = H = 12), s16.12 -> s8.4 rounding and saturating (RND, SAT),
            // 5-bit indices over 5 rows.
            [instance(5, 12, 5, 12, (16, 12), (8, 4)), modes(2, 1)].concat(),
            // A one-row table (a one-word ROM); index 1 is out of range.
            instance(1, 3, 1, 3, (8, 4), (8, 4)),
            // s32.16 -> s12.2, TRN_ZERO + WRAP, 7 rows, 3-bit indices (7 is out of range).
            [instance(7, 4, 3, 2, (32, 16), (12, 2)), modes(1, 0)].concat(),
            // 33 rows, 8-bit indices, 2-bit elements kept as they are, P = 1 over rows of 5.
            instance(33, 5, 8, 1, (2, 0), (2, 0)),
            // 64-bit output lanes (a port wider than 64 bits), 2 lanes.
            instance(6, 4, 3, 2, (12, 4), (64, 30)),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // 3-bit indices cannot address 10 rows.
            vec![("IDX_WIDTH", 3)],
            vec![("IDX_WIDTH", 33)],
            // Lanes not dividing the row.
            vec![("DATA_OUT_0_PARALLELISM_DIM_0", 3)],
            // Output row length differs from the table's.
            vec![("DATA_OUT_0_TENSOR_SIZE_DIM_0", 4)],
            // More than 2^24 ROM words (V × 8 beats).
            [instance(2_097_153, 8, 22, 1, (8, 6), (8, 4))].concat(),
            vec![("DATA_OUT_0_PARALLELISM_DIM_1", 2)],
            vec![("WEIGHT_PRECISION_1", -16_777_217)],
            vec![("DATA_OUT_0_ROUNDING", 7)],
        ]
    }
}

/// Output bits per lane that vary: the table's bits that survive the cast (fraction bits
/// dropped, plus one for a rounding carry; appended fraction bits are constant zeros), at most
/// the output width, at least 1.
fn varying_out_bits(p: &Params) -> u64 {
    let (ww, wf) = (param(p, "WEIGHT_PRECISION_0"), param(p, "WEIGHT_PRECISION_1"));
    let (ow, of) = (param(p, "DATA_OUT_0_PRECISION_0"), param(p, "DATA_OUT_0_PRECISION_1"));
    let shift = wf - of;
    let rounds = i64::from(param(p, "DATA_OUT_0_ROUNDING") != 0 && shift > 0);
    (ww - shift.max(0) + rounds).min(ow - (-shift).max(0)).max(1) as u64
}

/// Resources of an embedding whose ROM words have `table_bits` varying bit columns (`None`:
/// all `PAR × WEIGHT_PRECISION_0`): the block ROM by [`crate::resources::rom_bram18`], LUT/FF
/// by [`EMBEDDING_LUT`] / [`EMBEDDING_FF`]; a one-word table is [`CONSTANT_TABLE`].
fn embedding_resources(p: &Params, table_bits: Option<u64>) -> crate::Resources {
    use crate::resources::{fitted, pu, round, rom_bram18};
    let g = geo(p);
    let words = g.words() as u64;
    if words <= 1 {
        return CONSTANT_TABLE;
    }
    let lanes = g.par as u64;
    let ww = pu(p, "WEIGHT_PRECISION_0");
    let cast = CastShape {
        lanes,
        from: (ww as i64, param(p, "WEIGHT_PRECISION_1"), true),
        to: (param(p, "DATA_OUT_0_PRECISION_0"), param(p, "DATA_OUT_0_PRECISION_1"), true),
        rounding: param(p, "DATA_OUT_0_ROUNDING"),
        overflow: param(p, "DATA_OUT_0_OVERFLOW"),
    };
    let out_bits = lanes * varying_out_bits(p);
    let counters = clog2(words) + clog2(g.nb() as u64);
    let x = [1, round(cast.lut()), out_bits, counters];
    // The R register (the ROM word once more, and its zero flag and valid bit): the bits the
    // cast reads.
    let read = crate::resources::bits_read_by_cast(
        ww as i64,
        param(p, "WEIGHT_PRECISION_1"),
        param(p, "DATA_OUT_0_PRECISION_1"),
        param(p, "DATA_OUT_0_ROUNDING"),
    );
    let r_stage = table_bits.map_or(lanes * read, |t| t.min(lanes * read)) + 2;
    crate::Resources {
        lut: fitted(&EMBEDDING_LUT, &x),
        ff: fitted(&EMBEDDING_FF, &[1, out_bits, counters]) + r_stage,
        dsp: 0,
        bram18: rom_bram18(words, table_bits.unwrap_or(lanes * ww)),
        lutram: 0,
    }
}

/// Bits of an index into a table of `rows` rows (of `rows − 1`, at least 1): the instance's
/// `IDX_WIDTH` and the unsigned format `u<bits>.0` of the index stream that feeds it.
pub fn index_bits(rows: usize) -> u32 {
    clog2(rows as u64) as u32
}

/// The table of an embedding node: `(V, H, its format, its codes [V][H] row-major)`, or an error
/// naming the node.
fn table_of<'g>(v: &NodeView<'g>) -> mase_ir::Result<(usize, usize, mase_ir::fixed::FixedFormat, &'g mase_ir::tensor::QuantTensor)> {
    let mase_ir::Op::Embedding { table } = &v.node.op else {
        return Err(v.error("the embedding component binds embedding nodes only"));
    };
    let (f, q) = quantized_table(v, table, "embedding")?;
    let shape = q.codes.shape();
    if shape.len() != 2 {
        return Err(v.error(format!("its table '{table}' has shape {shape:?}; the embedding component takes a [rows, dim] table")));
    }
    Ok((shape[0], shape[1], f, q))
}

impl Binding for Embedding {
    /// `V`, `H` and the format of the node's quantized table, `IDX_WIDTH` = the bits of `V − 1`,
    /// the node's output format and modes, `par.p_out` lanes, one output row per index.
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let (rows, dim, f, _) = table_of(v)?;
        let out = v.out_format()?;
        if !out.signed {
            return Err(v.error(format!(
                "its output format {} is unsigned; the embedding component outputs signed formats",
                crate::binding::fmt_name(&out)
            )));
        }
        let indices: usize = v.in_shape(0)?.iter().product();
        crate::binding::Overrides::default()
            .set("IDX_WIDTH", index_bits(rows) as i64)
            .format("WEIGHT", &f)
            .set("WEIGHT_TENSOR_SIZE_DIM_0", dim as i64)
            .set("WEIGHT_TENSOR_SIZE_DIM_1", rows as i64)
            .output(&out)
            .set("DATA_OUT_0_TENSOR_SIZE_DIM_0", dim as i64)
            .set("DATA_OUT_0_TENSOR_SIZE_DIM_1", indices as i64)
            .set("DATA_OUT_0_PARALLELISM_DIM_0", par.p_out as i64)
            .set("DATA_OUT_0_PARALLELISM_DIM_1", 1)
            .done()
    }

    /// One index per beat in; every divisor of the table's row (up to 256) out.
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        let (_, dim, _, _) = table_of(v)?;
        Ok(crate::binding::divisors(dim, 256).into_iter().map(|d| Par::io(1, d)).collect())
    }

    /// `[a]` is `a` output elements per beat (the input is one index per beat).
    fn par_of_one(&self, a: usize) -> Par {
        Par::io(1, a)
    }

    /// The quantized table, `[V][H]` row-major.
    fn data_memories(&self, v: &NodeView, _p: &Params) -> mase_ir::Result<Vec<(String, Vec<i64>)>> {
        Ok(weight_memory(table_of(v)?.3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    #[test]
    fn model_looks_up_casts_and_zeroes_out_of_range_rows() {
        // V = 3, H = 2, s8.2 table -> s8.1 output, TRN.
        let p = resolve_params(&Embedding, &instance(3, 2, 2, 1, (8, 2), (8, 1))).unwrap();
        let mut stim = Stimulus::default();
        stim.memories.insert("weight".into(), vec![1, 2, 3, -3, 5, 7]);
        stim.inputs.insert("data_in_0".into(), vec![2, 0, 3, 1]);
        let y = Embedding.model(&p, &stim).unwrap()["data_out_0"].clone();
        // codes at frac 2 -> frac 1, floor: 5 -> 2, 7 -> 3, 1 -> 0, 2 -> 1, 3 -> 1, -3 -> -2.
        assert_eq!(y, vec![2, 3, 0, 1, 0, 0, 1, -2]);
    }

    #[test]
    fn layout_is_row_major_par_per_word() {
        let p = resolve_params(&Embedding, &instance(2, 4, 1, 2, (8, 4), (8, 4))).unwrap();
        let words = Embedding.layout_memory(&p, "weight", &[0, 1, 2, 3, 10, 11, 12, 13]).unwrap();
        assert_eq!(words, vec![vec![0, 1], vec![2, 3], vec![10, 11], vec![12, 13]]);
        assert!(Embedding.layout_memory(&p, "weight", &[0; 7]).is_err());
        let c = Embedding.cost(&p);
        assert_eq!((c.latency_cycles, c.ii_cycles, c.memory_bits), (4, 2, 64));
    }
}
