//! `transpose`: double-buffered reorder `[A][B][C] → [B][A][C]` of a tensor stream
//! (`rtl/mase_transpose.sv`), the plain 2-D transpose and the attention head split / merge.
//!
//! The input tensor has `A = DATA_IN_0_TENSOR_SIZE_DIM_1` rows of `DATA_IN_0_TENSOR_SIZE_DIM_0 =
//! B·C` elements, `C = BLOCK_SIZE` consecutive elements moving as one unit; the output has `B`
//! rows of `A·C` elements. How the emitter uses it:
//!
//! | use | A | B | BLOCK_SIZE |
//! |---|---|---|---|
//! | transpose `[R, K] → [K, R]` | R | K | 1 |
//! | head split `[S, H·d] → [H, S, d]` (streamed as `[H, S·d]`) | S | H | d |
//! | head merge `[H, S, d]` (streamed as `[H, S·d]`) `→ [S, H·d]` | H | S | d |
//!
//! With `BLOCK_SIZE = 1` the input streams as `P1 × P0` blocks (`P1 = DATA_IN_0_PARALLELISM_DIM_1`,
//! `P0 = DATA_IN_0_PARALLELISM_DIM_0`) and the output as `P0 × P1` blocks; with `BLOCK_SIZE > 1`
//! the parallelism is `P1 = 1`, `P0 | BLOCK_SIZE` on both sides. A harness "row" is one whole
//! tensor ([`Component::row_multiple`] = 1, `beats_per_row` = beats per tensor): the RTL buffers
//! a whole tensor in one bank while the other is read, so the stream never stops, and reads each
//! word as soon as it has been written: II = `NW` cycles per tensor (`NW` = beats per tensor),
//! latency 4 (the word read is registered once more before the output skid buffer, so the
//! block RAM's slow clock-to-out ends at a plain register), and each output beat leaves once
//! the input beat it moves has arrived ([`Component::input_beats_for_output`]).

use crate::binding::{Binding, NodeView, Par};
use crate::block_stream_order;
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{input, row};
use crate::port::{check_derived, check_format, check_same_format};
use crate::{check_divides, check_range, param, param_list, pingpong_bits, port_format, port_shape};

/// The transpose / head split / head merge component.
pub struct Transpose;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "transpose",
    description:
        "double-buffered reorder [A][B][C] -> [B][A][C]: 2-D transpose (C = 1), head split / merge (C = d)",
    dependencies: &["mase_assert.svh", "mase_skid_buffer.sv", "mase_pingpong_buffer.sv"],
    buffers_whole_unit: true,
    keeps_input_format: true,
    params: param_list![
        port_format!(
            "DATA_IN_0",
            8,
            "W: element bits (1..64; moved, not interpreted)",
            4,
            "element fractional bits (format only)"
        ),
        port_shape!(
            "DATA_IN_0",
            [8, 4, 2, 2],
            [
                "B·C: elements per input row (1..65536)",
                "A: input rows per tensor (1..65536)",
                "P0: elements of dim 0 per beat (divides dim 0, or BLOCK_SIZE when > 1)",
                "P1: rows per beat (divides dim 1; 1 when BLOCK_SIZE > 1)",
            ]
        ),
        [
            ParamSpec::value(
                "BLOCK_SIZE",
                1,
                "C: elements moved as a unit (1 = transpose, d = head split/merge)"
            ),
            ParamSpec::same_as(
                "DATA_OUT_0_PRECISION_0",
                "DATA_IN_0_PRECISION_0",
                "output element bits (= input)"
            ),
            ParamSpec::same_as(
                "DATA_OUT_0_PRECISION_1",
                "DATA_IN_0_PRECISION_1",
                "output fractional bits (= input)"
            ),
        ],
        port_shape!(
            "DATA_OUT_0",
            [4, 8, 2, 2],
            [
                "elements per output row (= A·C)",
                "output rows (= B)",
                "output elements per beat row (= P1 if C = 1, else P0)",
                "output rows per beat (= P0 if C = 1, else 1)",
            ]
        ),
    ],
};

/// LUT and FF model of transpose over `[1, word bits, address bits]` (output skid buffer and
/// address counters), least squares over the 22 instances of
/// `sim/examples/resource_fit.rs --only transpose` (Yosys 0.23; median LUT error 8 %, FF 1 %).
const TRANSPOSE_LUT: [f64; 3] = [5.595, 1.021, 11.325];
/// See [`TRANSPOSE_LUT`].
const TRANSPOSE_FF: [f64; 3] = [1.364, 3.011, 7.144];

/// Derived geometry of an instance.
#[derive(Debug, Clone, Copy)]
struct Geo {
    a: usize,
    b: usize,
    c: usize,
    p0: usize,
    p1: usize,
}

impl Geo {
    fn of(p: &Params) -> Geo {
        let c = param(p, "BLOCK_SIZE").max(1) as usize;
        Geo {
            a: param(p, "DATA_IN_0_TENSOR_SIZE_DIM_1") as usize,
            b: param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize / c,
            c,
            p0: param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize,
            p1: param(p, "DATA_IN_0_PARALLELISM_DIM_1") as usize,
        }
    }

    /// Lanes per beat.
    fn lanes(&self) -> usize {
        self.p0 * self.p1
    }

    /// Beats (memory words) per tensor.
    fn words(&self) -> usize {
        self.a * self.b * self.c / self.lanes()
    }

    /// The memory words as the RTL walks them: `(NA, NB, U)` = units along `a` (block rows when
    /// `C = 1`), units along `b`, words per unit; word `(a, b, k)` is input beat
    /// `a·NB·U + b·U + k` and output beat `b·NA·U + a·U + k`.
    fn word_grid(&self) -> (usize, usize, usize) {
        if self.c == 1 {
            (self.a / self.p1, self.b / self.p0, 1)
        } else {
            (self.a, self.b, self.c / self.p0)
        }
    }

    /// Input beats that must have arrived before the first `n ≥ 1` output beats of a tensor can
    /// leave: one past the latest input beat among them.
    fn input_beats_for(&self, n: usize) -> usize {
        let (na, nb, u) = self.word_grid();
        let j = n.clamp(1, (na * nb * u).max(1)) - 1;
        let (b, rem) = (j / (na * u), j % (na * u));
        let (a, k) = (rem / u, rem % u);
        let here = a * nb * u + b * u + k;
        // Every earlier `b` column was walked down to its last row `a = NA − 1`.
        let before = if b > 0 { (na - 1) * nb * u + (b - 1) * u + u - 1 } else { 0 };
        here.max(before) + 1
    }

    /// Output block shape `(rows, cols)`.
    fn out_block(&self) -> (usize, usize) {
        if self.c == 1 {
            (self.p0, self.p1)
        } else {
            (1, self.p0)
        }
    }
}

/// The output shape parameters the input shape implies:
/// `[TENSOR_SIZE_DIM_0, TENSOR_SIZE_DIM_1, PARALLELISM_DIM_0, PARALLELISM_DIM_1]`.
pub fn derived_output(p: &Params) -> [i64; 4] {
    let c = param(p, "BLOCK_SIZE");
    let (p0, p1) = (param(p, "DATA_IN_0_PARALLELISM_DIM_0"), param(p, "DATA_IN_0_PARALLELISM_DIM_1"));
    [
        param(p, "DATA_IN_0_TENSOR_SIZE_DIM_1") * c,
        param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") / c.max(1),
        if c == 1 { p1 } else { p0 },
        if c == 1 { p0 } else { p1 },
    ]
}

/// Parameter overrides for an instance: input shape, unit size, width; the output parameters
/// are derived (what the emitter does).
pub fn instance(width: i64, dim0: i64, dim1: i64, p0: i64, p1: i64, block: i64) -> Vec<(&'static str, i64)> {
    let mut v = vec![
        ("DATA_IN_0_PRECISION_0", width),
        ("DATA_IN_0_PRECISION_1", width / 2),
        ("DATA_IN_0_TENSOR_SIZE_DIM_0", dim0),
        ("DATA_IN_0_TENSOR_SIZE_DIM_1", dim1),
        ("DATA_IN_0_PARALLELISM_DIM_0", p0),
        ("DATA_IN_0_PARALLELISM_DIM_1", p1),
        ("BLOCK_SIZE", block),
    ];
    let mut p = Params::new();
    for (k, x) in &v {
        p.insert((*k).to_string(), *x);
    }
    let d = derived_output(&p);
    v.extend([
        ("DATA_OUT_0_TENSOR_SIZE_DIM_0", d[0]),
        ("DATA_OUT_0_TENSOR_SIZE_DIM_1", d[1]),
        ("DATA_OUT_0_PARALLELISM_DIM_0", d[2]),
        ("DATA_OUT_0_PARALLELISM_DIM_1", d[3]),
    ]);
    v
}

impl Component for Transpose {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_format(p, "DATA_IN_0", 64)?;
        check_range(p, "DATA_IN_0_TENSOR_SIZE_DIM_0", 1, 65536)?;
        check_range(p, "DATA_IN_0_TENSOR_SIZE_DIM_1", 1, 65536)?;
        check_range(p, "DATA_IN_0_PARALLELISM_DIM_0", 1, 1024)?;
        check_range(p, "DATA_IN_0_PARALLELISM_DIM_1", 1, 1024)?;
        let lanes = param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "DATA_IN_0_PARALLELISM_DIM_1");
        if lanes > 1024 {
            return Err(format!(
                "DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 must be between 1 and 1024, got {lanes}"
            ));
        }
        check_range(p, "BLOCK_SIZE", 1, 65536)?;
        check_divides(p, "BLOCK_SIZE", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
        if param(p, "BLOCK_SIZE") == 1 {
            check_divides(p, "DATA_IN_0_PARALLELISM_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
            check_divides(p, "DATA_IN_0_PARALLELISM_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1")?;
        } else {
            check_divides(p, "DATA_IN_0_PARALLELISM_DIM_0", "BLOCK_SIZE")?;
            let p1 = param(p, "DATA_IN_0_PARALLELISM_DIM_1");
            if p1 != 1 {
                return Err(format!("DATA_IN_0_PARALLELISM_DIM_1 must be 1 when BLOCK_SIZE > 1, got {p1}"));
            }
        }
        let nw = Geo::of(p).words();
        if nw > 1 << 20 {
            return Err(format!("beats per tensor must be between 1 and 1048576, got {nw}"));
        }
        check_same_format(p, "DATA_OUT_0", "DATA_IN_0")?;
        let d = derived_output(p);
        let rules = [
            ("DATA_OUT_0_TENSOR_SIZE_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_1 * BLOCK_SIZE"),
            ("DATA_OUT_0_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_0 / BLOCK_SIZE"),
            (
                "DATA_OUT_0_PARALLELISM_DIM_0",
                "DATA_IN_0_PARALLELISM_DIM_1 if BLOCK_SIZE = 1, else DATA_IN_0_PARALLELISM_DIM_0",
            ),
            (
                "DATA_OUT_0_PARALLELISM_DIM_1",
                "DATA_IN_0_PARALLELISM_DIM_0 if BLOCK_SIZE = 1, else DATA_IN_0_PARALLELISM_DIM_1",
            ),
        ];
        check_derived(p, &rules, &d)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let g = Geo::of(p);
        let width = param(p, "DATA_IN_0_PRECISION_0") as u32;
        ["data_in_0", "data_out_0"]
            .iter()
            .zip([Direction::In, Direction::Out])
            .map(|(name, dir)| StreamSpec {
                name: (*name).into(),
                dir,
                lanes: g.lanes(),
                width,
                signed: true,
                beats_per_row: g.words(),
            })
            .collect()
    }

    /// Element `(a, b, k)` of the input (row `a`, element `b·C + k`) becomes element `(b, a, k)`
    /// of the output (row `b`, element `a·C + k`); both sides in block stream order.
    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let g = Geo::of(p);
        let x = stim.input("transpose", "data_in_0")?;
        let n = g.a * g.b * g.c;
        if x.len() % n != 0 {
            return Err(format!("transpose model: {} input values are not whole tensors of {n}", x.len()));
        }
        let (ip1, ip0) = if g.c == 1 { (g.p1, g.p0) } else { (1, g.p0) };
        let in_order = block_stream_order(g.a, g.b * g.c, ip1, ip0);
        let (op1, op0) = g.out_block();
        let out_order = block_stream_order(g.b, g.a * g.c, op1, op0);
        let mut y = Vec::with_capacity(x.len());
        let mut tensor = vec![0i64; n];
        for t in x.chunks(n) {
            for (k, &idx) in in_order.iter().enumerate() {
                tensor[idx] = t[k];
            }
            for &oidx in &out_order {
                let (ob, rest) = (oidx / (g.a * g.c), oidx % (g.a * g.c));
                let (oa, k) = (rest / g.c, rest % g.c);
                y.push(tensor[oa * g.b * g.c + ob * g.c + k]);
            }
        }
        Ok(data_out_0(y))
    }

    fn cost(&self, p: &Params) -> Cost {
        let g = Geo::of(p);
        let nw = g.words() as u64;
        let word = (g.lanes() as u64) * param(p, "DATA_IN_0_PRECISION_0") as u64;
        Cost {
            // Word 0 is the first in both orders and leaves as soon as it is written: write,
            // synchronous read (S1), S2 register, output register.
            latency_cycles: 4,
            ii_cycles: nw,
            multipliers: 0,
            memory_bits: pingpong_bits(g.words(), word),
        }
    }

    /// Word 0 leaves first, once written.
    fn beats_before_first_output(&self, _p: &Params, _port: &str) -> usize {
        1
    }

    fn input_beats_for_output(&self, p: &Params, out_beats: usize) -> Option<usize> {
        Some(Geo::of(p).input_beats_for(out_beats))
    }

    /// The double buffer by the RAM rule; address counters and the output skid buffer
    /// ([`TRANSPOSE_LUT`]); the S2 register after the read (a word and its valid bit).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{clog2, fitted, pingpong};
        let g = Geo::of(p);
        let nw = g.words() as u64;
        let word = (g.lanes() as u64) * param(p, "DATA_IN_0_PRECISION_0") as u64;
        let (bram18, lutram) = pingpong(nw, word);
        let x = [1, word, clog2(nw)];
        crate::Resources {
            lut: fitted(&TRANSPOSE_LUT, &x),
            ff: fitted(&TRANSPOSE_FF, &x) + word + 1,
            dsp: 0,
            bram18,
            lutram,
        }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Plain transpose, 2×2 blocks, non-square.
            instance(8, 6, 4, 2, 2, 1),
            // Plain transpose, P = 1, odd sizes, 2-bit elements.
            instance(2, 5, 3, 1, 1, 1),
            // Plain transpose, 1×3 input beats (3×1 output beats), 16-bit.
            instance(16, 9, 5, 3, 1, 1),
            // Head split S = 5, H = 3, d = 4, two lanes.
            instance(11, 12, 5, 2, 1, 4),
            // Head merge H = 3, S = 5, d = 3 (input [H, S·d]), P = 1.
            instance(7, 15, 3, 1, 1, 3),
            // One beat per tensor.
            instance(4, 2, 2, 2, 2, 1),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            input(65, 4),
            row(8, 3),
            vec![("BLOCK_SIZE", 3)],
            instance(8, 8, 4, 2, 2, 4),
            vec![("DATA_OUT_0_TENSOR_SIZE_DIM_1", 7)],
            vec![("DATA_OUT_0_PRECISION_1", 3)],
        ]
    }
}

impl Binding for Transpose {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let t =
            block_of(v)?.ok_or_else(|| v.error("transpose keeps the element order; it needs no instance"))?;
        let x = v.in_format(0)?;
        let p = instance(x.width as i64, (t.b * t.c) as i64, t.a as i64, par.p_in as i64, 1, t.c as i64);
        crate::binding::Overrides::default().extend(p).set("DATA_IN_0_PRECISION_1", x.frac as i64).done()
    }

    /// Lanes dividing the unit moved whole (one lane when units are single elements).
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        use crate::binding::{divisors, Par};
        Ok(match block_of(v)? {
            Some(t) if t.c > 1 => divisors(t.c, 256).into_iter().map(Par::lanes).collect(),
            _ => vec![Par::lanes(1)],
        })
    }

    fn passes_through(&self, v: &NodeView) -> mase_ir::Result<bool> {
        Ok(block_of(v)?.is_none())
    }
}

/// The block reorder a transpose node is built as (`None`: the identity on the element stream),
/// or an error naming the permutation when the component cannot implement it.
fn block_of(v: &NodeView) -> mase_ir::Result<Option<crate::binding::perm::BlockTranspose>> {
    use crate::binding::perm::{classify, PermKind};
    let mase_ir::Op::Transpose { perm } = &v.node.op else {
        return Err(v.error("the transpose component binds transpose nodes only"));
    };
    let shape = v.in_shape(0)?;
    match classify(&shape, &crate::binding::layout::effective_perm(v.graph, v.node, perm)) {
        Some(PermKind::Identity) => Ok(None),
        Some(PermKind::Block(t)) => Ok(Some(t)),
        None => Err(v.error(format!(
            "permutation {perm:?} of a tensor of shape {shape:?} is not a block reorder \
             [A][B][C] -> [B][A][C] (head split/merge, 2-D transpose), which is what the \
             transpose component implements"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    /// The input beats the first `n` output beats need, against a walk of the RTL's read order.
    #[test]
    fn input_beats_for_output_follows_the_read_order() {
        // (width, dim 0, dim 1, P0, P1, BLOCK_SIZE): plain transposes and head split / merge.
        for inst in [(8, 6, 4, 2, 2, 1), (2, 5, 3, 1, 1, 1), (8, 12, 5, 2, 1, 4), (8, 15, 3, 1, 1, 3)] {
            let (w, d0, d1, p0, p1, c) = inst;
            let p = resolve_params(&Transpose, &instance(w, d0, d1, p0, p1, c)).unwrap();
            let g = Geo::of(&p);
            let (na, nb, u) = g.word_grid();
            let mut latest = 0;
            let mut n = 0;
            for b in 0..nb {
                for a in 0..na {
                    for k in 0..u {
                        latest = latest.max(a * nb * u + b * u + k + 1);
                        n += 1;
                        assert_eq!(Transpose.input_beats_for_output(&p, n), Some(latest), "{inst:?} n = {n}");
                    }
                }
            }
            assert_eq!(n, g.words());
        }
    }

    #[test]
    fn head_split_then_merge_is_identity() {
        // S = 3, H = 2, d = 2: split [3, 4] -> [2, 3, 2], merge back.
        let split = resolve_params(&Transpose, &instance(8, 4, 3, 1, 1, 2)).unwrap();
        let merge = resolve_params(&Transpose, &instance(8, 6, 2, 1, 1, 2)).unwrap();
        let x: Vec<i64> = (0..12).collect();
        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), x.clone());
        let y = Transpose.model(&split, &stim).unwrap()["data_out_0"].clone();
        // head 0 = columns 0..2 of each row, head 1 = columns 2..4
        assert_eq!(y, vec![0, 1, 4, 5, 8, 9, 2, 3, 6, 7, 10, 11]);
        stim.inputs.insert("data_in_0".into(), y);
        assert_eq!(Transpose.model(&merge, &stim).unwrap()["data_out_0"], x);
    }

    #[test]
    fn blocked_transpose_matches_plain() {
        let p = resolve_params(&Transpose, &instance(8, 4, 2, 2, 2, 1)).unwrap();
        // [2, 4] tensor: x[r][c] = 10r + c, streamed as 2×2 blocks.
        let t: Vec<i64> = (0..2).flat_map(|r| (0..4).map(move |c| 10 * r + c)).collect();
        let order = block_stream_order(2, 4, 2, 2);
        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), order.iter().map(|&i| t[i]).collect());
        let y = Transpose.model(&p, &stim).unwrap()["data_out_0"].clone();
        // output [4, 2] in 2×2 blocks: block rows (c 0..2) then (c 2..4)
        assert_eq!(y, vec![0, 10, 1, 11, 2, 12, 3, 13]);
    }
}
