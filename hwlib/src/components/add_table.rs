//! `add_table`: a stream plus a constant table whose rows cycle (`rtl/mase_add_table.sv`), the
//! hardware of an `add` whose input 1 is a constant broadcast over leading axes: learned position
//! embeddings (BERT's `embeddings + position_const[1, S, H]`, ViT's `x + pos_embed[1, N, H]`).
//! The `add` binding picks it ([`Binding::variant`] in [`super::binary`]) when input 1 is an
//! `Op::Constant` and input 0 is not; [`table_rows`] is the broadcast rule it implements.
//!
//! # Interface
//!
//! - `data_in_0`: rows of `H = DATA_IN_0_TENSOR_SIZE_DIM_0` signed elements (`DATA_IN_0_PRECISION_0/1`),
//!   `PAR = DATA_IN_0_PARALLELISM_DIM_0` per beat, `NB = H / PAR` beats per row.
//! - `data_out_0`: the same rows, row `k` plus table row `k mod R` (`R = WEIGHT_TENSOR_SIZE_DIM_1`),
//!   element by element: the exact aligned sum ([`mase_ir::fixed::add`]) cast to
//!   `DATA_OUT_0_PRECISION_0/1` with `DATA_OUT_0_ROUNDING/OVERFLOW` ([`cast_code`]) — what the
//!   `add` component computes with the table row's codes on its input 1, and what quantized
//!   execution computes for the broadcast add. `R` divides the rows of a tensor
//!   (`DATA_IN_0_TENSOR_SIZE_DIM_1`), so each tensor starts at table row 0.
//! - Memory `weight` (`WEIGHT_MEM_FILE`): the quantized table, logical order `[R][H]` row-major,
//!   in `embedding`'s layout: `R·NB` words of `PAR` lanes of `WEIGHT_PRECISION_0` bits, word
//!   `r·NB + j`, lane `i` = `table[r][j·PAR + i]`.
//!
//! # Structure and cost
//!
//! An `embedding` instance reads the table; its index is a free-running row counter and its
//! output cast is the identity (the table's own format, TRN + SAT); its rows join `data_in_0` in
//! an `add` instance. The table runs ahead of the data, so a beat is summed as soon as it
//! arrives: latency [`super::binary::LATENCY`] (the add's stages), one beat per cycle
//! (`ii_cycles = NB` per row).

use mase_ir::fixed::{cast_code, FixedFormat};

use super::row_table::{quantized_table, weight_memory, RowTable};
use super::{add::Add, binary::check_alignment, embedding, embedding::Embedding};
use crate::binding::{Binding, NodeView, Par};
use crate::component::{data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::components::cast::{check_modes, output_format};
use crate::overrides::{input, modes, output, row, rows, weight};
use crate::port::{block_stream, check_format, check_row_shape};
use crate::resources::clog2;
use crate::{check_divides, check_equal, check_range, output_modes, param, param_list, port_format, port_shape};

/// The add-table component.
pub struct AddTable;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "add_table",
    description: "a stream plus a constant table whose rows cycle (row k gets table row k mod R, exact then cast to the output format); the table is a block ROM from a .mem file",
    dependencies: &["mase_assert.svh", "mase_cast_core.sv", "mase_skid_buffer.sv", "mase_embedding.sv", "mase_add.sv"],
    params: param_list![
        port_format!("DATA_IN_0", 8, "input bits (1..64, signed)", 4, "input fractional bits"),
        port_shape!("DATA_IN_0", [8, 4, 4, 1], "H: elements per row (1..65536; rows per tensor a multiple of R)"),
        port_format!(
            "WEIGHT",
            8,
            "table element bits (1..64), signed",
            6,
            "table fractional bits (within 63 of the input's)"
        ),
        [
            ParamSpec::same_as("WEIGHT_TENSOR_SIZE_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0", "elements per table row (= H)"),
            ParamSpec::value("WEIGHT_TENSOR_SIZE_DIM_1", 2, "R: table rows (1..2^24 / NB, divides the rows per tensor)"),
        ],
        port_format!("DATA_OUT_0", 8, "output bits (1..64, signed)", 4, "output fractional bits"),
        output_modes!("DATA_OUT_0", "rounding of the exact sum", "overflow"),
    ],
    ..Info::DEFAULT
};

/// The table of an instance: `R` rows of the input's `H` elements, the input's `PAR` lanes.
fn geo(p: &Params) -> RowTable {
    RowTable::of(p, "DATA_IN_0_TENSOR_SIZE_DIM_0", "DATA_IN_0_PARALLELISM_DIM_0")
}

/// Bits of the row counter (the embedding's index): of `R − 1`, at least 1.
fn row_bits(g: &RowTable) -> u64 {
    clog2(g.rows as u64).max(1)
}

/// Parameter overrides of an instance: `tensor_rows` rows of `h` input elements (`x = (bits,
/// frac)`), `lanes` per beat, an `r`-row table of `table = (bits, frac)` elements, output `out =
/// (bits, frac)`.
pub fn instance(
    h: i64,
    tensor_rows: i64,
    lanes: i64,
    r: i64,
    x: (i64, i64),
    table: (i64, i64),
    out: (i64, i64),
) -> Vec<(&'static str, i64)> {
    [
        input(x.0, x.1),
        row(h, lanes),
        rows(tensor_rows, 1),
        weight(table.0, table.1),
        vec![("WEIGHT_TENSOR_SIZE_DIM_0", h), ("WEIGHT_TENSOR_SIZE_DIM_1", r)],
        output(out.0, out.1),
    ]
    .concat()
}

/// The parameters of the `embedding` instance inside (the table reader): index = the row
/// counter, output = the table's own format with TRN + SAT (the identity cast).
fn embedding_params(p: &Params) -> Result<Params, String> {
    let g = geo(p);
    let (ww, wf) = (param(p, "WEIGHT_PRECISION_0"), param(p, "WEIGHT_PRECISION_1"));
    let ov = [
        embedding::instance(g.rows as i64, g.h as i64, row_bits(&g) as i64, g.par as i64, (ww, wf), (ww, wf)),
        modes(0, 1),
    ]
    .concat();
    crate::resolve_params(&Embedding, &ov)
}

/// The parameters of the `add` instance inside: input 0 = this component's input, input 1 = the
/// table's format, this component's output format and modes.
fn add_params(p: &Params) -> Result<Params, String> {
    let shape = crate::port::SHAPE.map(|s| format!("DATA_IN_0_{s}"));
    let formats = ["DATA_IN_0_PRECISION_0", "DATA_IN_0_PRECISION_1", "DATA_OUT_0_PRECISION_0", "DATA_OUT_0_PRECISION_1"];
    let modes = ["DATA_OUT_0_ROUNDING", "DATA_OUT_0_OVERFLOW"];
    let mut ov = crate::copy_params(p, shape.iter().map(String::as_str).chain(formats).chain(modes));
    ov.push(("DATA_IN_1_PRECISION_0".into(), param(p, "WEIGHT_PRECISION_0")));
    ov.push(("DATA_IN_1_PRECISION_1".into(), param(p, "WEIGHT_PRECISION_1")));
    crate::resolve_params(&Add, &ov)
}

/// The composed LUT count overestimates what Yosys 0.23 maps (the design is flattened, so logic
/// the separate models count twice, such as the embedding's identity cast, can merge away); one
/// scale fitted with `sim/examples/resource_fit.rs --only add_table` over its 29
/// instances: median LUT error 17 %, at most 55 %. FF are the composition's, unscaled (median
/// error 15 %; at most 117 %, on the instance with 64-bit lanes).
const COMPOSED_LUT_SCALE: f64 = 0.62;

/// The row counter: its register and its increment-and-wrap (Yosys 0.23 maps a `b`-bit counter
/// with a compare to about `b` LUTs).
fn counter_resources(g: &RowTable) -> crate::Resources {
    let b = row_bits(g);
    crate::Resources { lut: if g.rows > 1 { b } else { 0 }, ff: if g.rows > 1 { b } else { 0 }, ..Default::default() }
}

impl AddTable {
    /// The composition: the embedding's resources (with the ROM's varying columns when the
    /// table is known), the add's and the counter's.
    fn compose(&self, p: &Params, memories: Option<&StreamValues>) -> crate::Resources {
        let (Ok(e), Ok(a)) = (embedding_params(p), add_params(p)) else {
            return crate::Resources::default();
        };
        let table = match memories {
            Some(m) => Embedding.resources_with_memories(&e, m),
            None => Embedding.resources(&e),
        };
        let sum = table + Add.resources(&a) + counter_resources(&geo(p));
        crate::Resources { lut: crate::resources::round(COMPOSED_LUT_SCALE * sum.lut as f64), ..sum }
    }
}

impl Component for AddTable {
    fn info(&self) -> &'static Info {
        &INFO
    }

    /// The rules of the RTL's elaboration checks, in its order.
    /// (Every check runs; the first failing one, in this order, is the error.)
    fn validate(&self, p: &Params) -> Result<(), String> {
        [
            check_format(p, "DATA_IN_0", 64),
            check_row_shape(p, "DATA_IN_0", 65536, 1 << 20, 1024),
            check_format(p, "WEIGHT", 64),
            check_alignment(p, "WEIGHT", "DATA_IN_0"),
            check_equal(p, "WEIGHT_TENSOR_SIZE_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0"),
            check_range(p, "WEIGHT_TENSOR_SIZE_DIM_1", 1, (1 << 24) / geo(p).nb() as i64),
            check_divides(p, "WEIGHT_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1"),
            check_format(p, "DATA_OUT_0", 64),
            check_modes(p, "DATA_OUT_0"),
        ]
        .into_iter()
        .collect()
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        vec![block_stream(p, "DATA_IN_0", Direction::In), geo(p).out_stream(p)]
    }

    crate::row_table_memory!(geo, "add_table");

    /// Element `c` of input row `k` plus `table[k mod R][c]`, exact, then cast to the output
    /// format.
    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let (g, x, to) = (geo(p), stim.input("add_table", "data_in_0")?, output_format(p, "DATA_OUT_0", true));
        let (fx, fw) = (param(p, "DATA_IN_0_PRECISION_1") as i32, param(p, "WEIGHT_PRECISION_1") as i32);
        let table = g.values("add_table", stim)?;
        let y = x
            .iter()
            .enumerate()
            .map(|(e, &v)| {
                let (k, c) = (e / g.h, e % g.h);
                mase_ir::fixed::add(v, fx, table[(k % g.rows) * g.h + c], fw)
                    .map(|(s, f)| cast_code(s, f, &to))
                    .ok_or_else(|| format!("add_table model: fractional bits {fx} and {fw} are too far apart"))
            })
            .collect::<Result<Vec<i64>, String>>()?;
        Ok(data_out_0(y))
    }

    /// The add's stages are the only ones between a data beat and its sum (the table's beat is
    /// already waiting); one beat per cycle.
    fn cost(&self, p: &Params) -> Cost {
        let g = geo(p);
        Cost {
            memory_bits: g.memory_bits(p),
            ..Cost::streaming(super::binary::LATENCY, g.nb() as u64)
        }
    }

    /// The embedding's, the add's and the row counter's resource models summed (see
    /// [`AddTable::compose`]).
    fn resources(&self, p: &Params) -> crate::Resources {
        self.compose(p, None)
    }

    /// [`AddTable::resources`] with the ROM cut to its varying bit columns.
    fn resources_with_memories(&self, p: &Params, memories: &StreamValues) -> crate::Resources {
        self.compose(p, Some(memories))
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: H = 8, 4 lanes, 4 rows per tensor over a 2-row table, s8.4 + s8.6 -> s8.4.
            vec![],
            // R = 1 (one table row for every row: ViT's [H] broadcast), P = 1, odd H, 2-bit input
            // + 3-bit table into 4 bits, RND + WRAP.
            [instance(5, 3, 1, 1, (2, 0), (3, 1), (4, 1)), modes(2, 0)].concat(),
            // R = rows per tensor (BERT's [1, S, H] table), 16-bit input + 12-bit table into a
            // coarser 10-bit output, RND_CONV + SAT_SYM.
            [instance(6, 6, 2, 6, (16, 10), (12, 4), (10, 3)), modes(6, 3)].concat(),
            // R = 3 dividing 6 rows (the harness's 12 rows are two tensors), one beat per row
            // (PAR = H: one ROM word per table row), negative input fraction, RND_MIN_INF +
            // SAT_ZERO.
            [instance(4, 6, 4, 3, (9, -2), (7, 6), (12, 2)), modes(5, 2)].concat(),
            // A one-word table (R = 1, PAR = H), one row per tensor, TRN_ZERO + SAT.
            [instance(3, 1, 3, 1, (8, 4), (8, 4), (8, 4)), modes(1, 1)].concat(),
            // 32-bit input and output, a 24-bit table with more fractional bits, R = 4 of 4
            // rows, RND_INF + SAT.
            [instance(4, 4, 2, 4, (32, 16), (24, 20), (32, 8)), modes(4, 1)].concat(),
            // 64-bit lanes with a 50-bit alignment shift (ports wider than 64 bits), 2 lanes.
            [instance(4, 2, 2, 2, (64, 0), (40, 50), (64, 8)), modes(2, 1)].concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        // In order: lanes not dividing the row, two rows per beat, the table's fraction 70 bits
        // from the input's, table rows of another length than the input's, 3 table rows not
        // dividing 4 rows per tensor, a 65-bit output, an unknown rounding; then more than 2^24
        // ROM words (R × 8 beats).
        let mut bad: Vec<Vec<(&'static str, i64)>> = [
            ("DATA_IN_0_PARALLELISM_DIM_0", 3),
            ("DATA_IN_0_PARALLELISM_DIM_1", 2),
            ("WEIGHT_PRECISION_1", 74),
            ("WEIGHT_TENSOR_SIZE_DIM_0", 4),
            ("WEIGHT_TENSOR_SIZE_DIM_1", 3),
            ("DATA_OUT_0_PRECISION_0", 65),
            ("DATA_OUT_0_ROUNDING", 7),
        ]
        .into_iter()
        .map(|one| vec![one])
        .collect();
        bad.push(instance(8, 2_097_153, 1, 2_097_153, (8, 4), (8, 6), (8, 4)));
        bad
    }
}

/// The rows `R` of a constant table added to a tensor of shape `x_shape` when the table (shape
/// `table_shape`) broadcasts over `x`'s leading axes only: the table's shape without its leading
/// 1s must equal a suffix of `x_shape` that includes the last axis; `R` is that suffix's product
/// over the last axis' length `H`. `[H]`, `[S, H]` and `[1, S, H]` against `[B, S, H]` give 1, `S`
/// and `S`. An error (the two shapes and what is supported) otherwise. The `add_table` binding and
/// the flow's host/device split both decide with this one rule.
pub fn table_rows(x_shape: &[usize], table_shape: &[usize]) -> Result<usize, String> {
    let unsupported = || {
        format!(
            "a constant of shape {table_shape:?} added to input 0 of shape {x_shape:?}: the add_table component \
             adds a constant whose shape, leading 1s removed, equals the trailing axes of input 0 including the \
             last (for input [B, S, H]: [H], [S, H] or [1, S, H]), repeated over the leading axes"
        )
    };
    let Some(&h) = x_shape.last() else { return Err(unsupported()) };
    // Leading 1s broadcast; the last axis stays even when it is 1 (a table of [.., 1] rows).
    let start = table_shape.iter().take(table_shape.len().saturating_sub(1)).take_while(|&&d| d == 1).count();
    let t = &table_shape[start..];
    if t.is_empty() || t.len() > x_shape.len() || t != &x_shape[x_shape.len() - t.len()..] {
        return Err(unsupported());
    }
    Ok(t.iter().product::<usize>() / h.max(1))
}

/// The table of an add-table node, input 1 (a constant): `(R, H, its format, its codes)`, or an
/// error naming the node.
fn table_of<'g>(v: &NodeView<'g>) -> mase_ir::Result<(usize, usize, FixedFormat, &'g mase_ir::tensor::QuantTensor)> {
    v.constant_input(1)?;
    let src = v.graph.node(v.node.inputs[1]);
    let mase_ir::Op::Constant { tensor } = &src.op else {
        return Err(v.error("input 1 is not a constant; the add_table component adds a constant table"));
    };
    let (f, q) = quantized_table(v, tensor, "add_table")?;
    let x = v.in_shape(0)?;
    let r = table_rows(&x, q.codes.shape()).map_err(|e| v.error(e))?;
    Ok((r, *x.last().unwrap_or(&1), f, q))
}

impl Binding for AddTable {
    /// Input 0's format and shape at `par.p_in` lanes, the table's rows and format, the node's
    /// output format and modes.
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let (r, h, f, _) = table_of(v)?;
        crate::binding::Overrides::default()
            .tensor("DATA_IN_0", &v.signed_input(0, 64)?, &v.in_shape(0)?, par.p_in)
            .format("WEIGHT", &f)
            .set("WEIGHT_TENSOR_SIZE_DIM_0", h as i64)
            .set("WEIGHT_TENSOR_SIZE_DIM_1", r as i64)
            .output(&v.out_format()?)
            .done()
    }

    /// The quantized table, `[R][H]` row-major (its leading 1s do not change the order).
    fn data_memories(&self, v: &NodeView, _p: &Params) -> mase_ir::Result<Vec<(String, Vec<i64>)>> {
        Ok(weight_memory(table_of(v)?.3))
    }

    /// Only input 0: input 1 is the constant table, a ROM of the instance.
    fn streamed_inputs(&self, v: &NodeView) -> mase_ir::Result<usize> {
        table_of(v)?;
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    #[test]
    fn model_cycles_the_table_rows_aligns_and_casts() {
        // H = 2, 1 lane, 4 rows over a 2-row table; input s8.1, table s8.2, output s8.1 TRN.
        let p = resolve_params(&AddTable, &instance(2, 4, 1, 2, (8, 1), (8, 2), (8, 1))).unwrap();
        let mut stim = Stimulus::default();
        // Table rows [1, -3] and [6, 2] (quarters: 0.25, -0.75 / 1.5, 0.5).
        stim.memories.insert("weight".into(), vec![1, -3, 6, 2]);
        // Rows [3, 0], [0, 0], [-1, 5], [10, 10] (halves).
        stim.inputs.insert("data_in_0".into(), vec![3, 0, 0, 0, -1, 5, 10, 10]);
        let y = AddTable.model(&p, &stim).unwrap()["data_out_0"].clone();
        // Row 0 + table 0: 1.5 + 0.25 = 1.75 -> floor to halves 1.5 (3); 0 - 0.75 -> -1.0 (-2).
        // Row 1 + table 1: 1.5 (3), 0.5 (1). Row 2 + table 0: -0.5 + 0.25 = -0.25 -> -0.5 (-1);
        // 2.5 - 0.75 = 1.75 -> 1.5 (3). Row 3 + table 1: 5 + 1.5 = 6.5 (13); 5 + 0.5 = 5.5 (11).
        assert_eq!(y, vec![3, -2, 3, 1, -1, 3, 13, 11]);
    }

    #[test]
    fn model_saturates_into_the_output_format() {
        // One row, one table row: 7 + 7 in s4.0 saturates to 7 (SAT), wraps to -2 (WRAP).
        let sat = resolve_params(&AddTable, &instance(1, 1, 1, 1, (4, 0), (4, 0), (4, 0))).unwrap();
        let wrap = resolve_params(&AddTable, &[instance(1, 1, 1, 1, (4, 0), (4, 0), (4, 0)), modes(0, 0)].concat())
            .unwrap();
        let mut stim = Stimulus::default();
        stim.memories.insert("weight".into(), vec![7]);
        stim.inputs.insert("data_in_0".into(), vec![7]);
        assert_eq!(AddTable.model(&sat, &stim).unwrap()["data_out_0"], vec![7]);
        assert_eq!(AddTable.model(&wrap, &stim).unwrap()["data_out_0"], vec![-2]);
    }

    #[test]
    fn table_rows_broadcasts_over_leading_axes_only() {
        assert_eq!(table_rows(&[2, 5, 8], &[8]), Ok(1));
        assert_eq!(table_rows(&[2, 5, 8], &[5, 8]), Ok(5));
        assert_eq!(table_rows(&[2, 5, 8], &[1, 5, 8]), Ok(5));
        assert_eq!(table_rows(&[1, 5, 8], &[1, 1, 5, 8]), Ok(5));
        assert_eq!(table_rows(&[2, 5, 8], &[2, 5, 8]), Ok(10));
        assert_eq!(table_rows(&[3, 1], &[1]), Ok(1));
        for (x, t) in [(&[1, 5, 8][..], &[5, 1][..]), (&[1, 5, 8], &[2, 5, 8]), (&[5, 8], &[4, 8]), (&[5, 8], &[1]), (&[], &[1])] {
            let e = table_rows(x, t).unwrap_err();
            assert!(e.contains(&format!("{t:?}")) && e.contains(&format!("{x:?}")) && e.contains("[S, H]"), "{e}");
        }
    }

    #[test]
    fn layout_and_cost_follow_the_geometry() {
        let p = resolve_params(&AddTable, &instance(4, 4, 2, 2, (8, 4), (8, 4), (8, 4))).unwrap();
        let words = AddTable.layout_memory(&p, "weight", &[0, 1, 2, 3, 10, 11, 12, 13]).unwrap();
        assert_eq!(words, vec![vec![0, 1], vec![2, 3], vec![10, 11], vec![12, 13]]);
        assert!(AddTable.layout_memory(&p, "weight", &[0; 7]).is_err());
        let c = AddTable.cost(&p);
        assert_eq!((c.latency_cycles, c.ii_cycles, c.memory_bits), (super::super::binary::LATENCY, 2, 4 * 2 * 8));
    }
}
