//! `masked_softmax`: [`softmax`](super::softmax) under a key-padding attention mask
//! (`rtl/mase_masked_softmax.sv`, the datapath `rtl/mase_softmax_core.sv` with `MASKED = 1`).
//!
//! A whole BERT model adds `where(keep, 0, -3.4e38)` to the attention scores before every
//! softmax, one boolean per key position and sentence. This component takes those booleans as a
//! device input and gives what float gives: probability exactly 0 at masked positions.
//!
//! # Driving the mask
//!
//! - `data_in_1` is the keep stream: `P = DATA_IN_0_PARALLELISM_DIM_0` unsigned 1-bit lanes per
//!   beat, lane `i` of beat `b` = key position `b·P + i` (1 = keep, 0 = masked), `L / P` beats
//!   (`L = DATA_IN_0_TENSOR_SIZE_DIM_0`) per tensor.
//! - One keep vector per tensor of `MASK_ROWS` softmax rows (a sentence's heads × query rows;
//!   default `DATA_IN_0_TENSOR_SIZE_DIM_1`, all rows of the input; it must divide it, so that an
//!   inference holds a whole number of sentences). It applies to each of those rows.
//! - The keep beats are taken together with the data beats of the tensor's first row (a join,
//!   beat by beat) and stored in an `L`-bit register for the other rows: the mask for tensor
//!   `k + 1` is taken after tensor `k`'s last row entered, with no cycle of its own (same latency,
//!   same II per row as `softmax`).
//!
//! # Semantics (exact, [`softmax_row_masked`](softmax::softmax_row_masked))
//!
//! Masked elements are left out of the row maximum and of the sum of exponentials and output
//! code 0; kept elements get exactly `softmax`'s integer algorithm over the kept elements (with
//! the instance's internal widths, which depend on the full row length `L`). A row with every
//! position masked outputs all zeros.
//!
//! # Harness rows
//!
//! One harness row is one tensor of `MASK_ROWS` rows: `data_in_0` and `data_out_0` have
//! `MASK_ROWS · L / P` beats per row, `data_in_1` `L / P`, and [`Component::cost`]'s `ii_cycles`
//! is cycles per tensor. The component holds one softmax row, not a tensor, before its first
//! output, so [`Info::buffers_whole_unit`] is false (the stitcher then counts what enters during
//! the pipeline latency, more than a row, as for `softmax`) and
//! [`Component::beats_before_first_output`] is one softmax row of data and the whole keep vector.

use rand::Rng;

use super::softmax;
use crate::binding::{Binding, NodeView, Par};
use crate::component::{Component, Cost, Info, MemorySpec, ParamSpec, Params, Stimulus, StreamSpec, StreamValues};
use crate::overrides::{input, output, row, rows};
use crate::param_list;
use crate::port::beats_per_row;

/// The masked softmax component.
pub struct MaskedSoftmax;

/// Name, description, RTL dependencies and parameters: those of `softmax` and `MASK_ROWS`.
const INFO: Info = Info {
    name: "masked_softmax",
    description: "softmax over dim 0 under a key-padding mask (keep bits on data_in_1, once per MASK_ROWS rows): masked elements out of the max and sum, output exactly 0",
    dependencies: softmax::DEPENDENCIES,
    params: param_list![
        *softmax::PARAMS,
        [ParamSpec::same_as(
            "MASK_ROWS",
            "DATA_IN_0_TENSOR_SIZE_DIM_1",
            "rows per keep vector (a sentence's heads x query rows; 1..2^20, divides dim 1)"
        )],
    ],
    ..Info::DEFAULT
};

impl Component for MaskedSoftmax {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        softmax::validate_of(p, true)
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        softmax::streams_of(p, true)
    }

    fn memories(&self, p: &Params) -> Vec<MemorySpec> {
        softmax::exp_memories(p)
    }

    fn layout_memory(&self, p: &Params, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        softmax::layout_exp_memory(p, "masked_softmax", mem, values)
    }

    fn generated_memory(&self, p: &Params, mem: &str) -> Option<Vec<i64>> {
        softmax::generated_exp_memory(p, mem)
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        softmax::model_of(p, stim, true)
    }

    fn cost(&self, p: &Params) -> Cost {
        softmax::cost_of(p, true)
    }

    fn resources(&self, p: &Params) -> crate::Resources {
        softmax::resources_of(p, true)
    }

    /// One softmax row of data (as `softmax`) and the whole keep vector, which moves with the
    /// tensor's first row.
    fn beats_before_first_output(&self, p: &Params, _port: &str) -> usize {
        beats_per_row(p, "DATA_IN_0")
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: a keep vector per row (MASK_ROWS = dim 1 = 1), 4 lanes, 2 beats per row.
            vec![],
            // P = 1, odd row length, 2-bit input (a masked lane is the code -2 in the max tree),
            // 3 rows per mask.
            [input(2, 0), row(5, 1), output(4, 3), rows(6, 1), vec![("MASK_ROWS", 3)]].concat(),
            // rows of 66 elements, P = 2 (33 beats per row), signed output with SAT_SYM, 4 rows
            // per mask, two masks per tensor.
            [
                input(10, 6),
                row(66, 2),
                output(9, 8),
                rows(8, 1),
                vec![("DATA_OUT_0_SIGNED", 1), ("DATA_OUT_0_OVERFLOW", 3), ("MASK_ROWS", 4)],
            ]
            .concat(),
            // one beat per row (L = P), small internal widths, 2 rows per mask.
            [
                input(6, 2),
                row(4, 4),
                rows(2, 1),
                vec![("EXP_FRAC", 10), ("EXP_TABLE_BITS", 4), ("RECIP_BITS", 8), ("MASK_ROWS", 2)],
            ]
            .concat(),
            // 16-bit formats, 3 lanes, rounding to nearest, 3 rows per mask.
            [
                input(16, 12),
                row(12, 3),
                output(16, 15),
                rows(3, 1),
                vec![("DATA_OUT_0_SIGNED", 1), ("DATA_OUT_0_ROUNDING", 2), ("MASK_ROWS", 3)],
            ]
            .concat(),
            // a single element per row: 1.0 saturated when kept, 0 when masked.
            [row(1, 1), rows(2, 1), vec![("MASK_ROWS", 2)]].concat(),
            // Folded, 3 lanes, 2 rows per mask.
            [input(12, 8), row(12, 3), rows(2, 1), vec![("FOLD", 2), ("MASK_ROWS", 2)]].concat(),
            // Folded, P = 1, odd row length, 16-bit input, signed output, 3 rows per mask.
            [
                input(16, 12),
                row(7, 1),
                output(16, 15),
                rows(3, 1),
                vec![("DATA_OUT_0_SIGNED", 1), ("FOLD", 2), ("MASK_ROWS", 3)],
            ]
            .concat(),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            vec![("MASK_ROWS", 0)],
            [rows(4, 1), vec![("MASK_ROWS", 3)]].concat(),
            vec![("FOLD", 3)],
        ]
    }

    /// Uniform data and one keep vector per tensor, of a kind drawn per tensor: all kept, all
    /// masked, a kept prefix (key padding), most positions masked (one in eight kept), or half.
    fn random_stimulus(&self, p: &Params, rows: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Stimulus {
        let streams = self.streams(p);
        let data: Vec<StreamSpec> = streams.iter().filter(|s| s.name != "data_in_1").cloned().collect();
        let mut stim = crate::component::uniform_stimulus(&data, &[], rows, rng);
        let l = crate::param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize;
        let mut keep = Vec::with_capacity(rows * l);
        for _ in 0..rows {
            let kind = rng.gen_range(0..8);
            let prefix = rng.gen_range(1..=l);
            keep.extend((0..l).map(|i| {
                let k = match kind {
                    0 => true,
                    1 => false,
                    2 | 3 => i < prefix,
                    4 | 5 => rng.gen_bool(0.125),
                    _ => rng.gen_bool(0.5),
                };
                i64::from(k)
            }));
        }
        stim.inputs.insert("data_in_1".into(), keep);
        softmax::insert_exp_tables(p, &mut stim);
        stim
    }
}

impl Binding for MaskedSoftmax {
    /// `softmax`'s parameters and `MASK_ROWS`, the softmax rows one keep vector covers (see
    /// [`mask_rows`]).
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let mut o = softmax::Softmax.overrides(v, par)?;
        o.push(("MASK_ROWS".into(), mask_rows(v)? as i64));
        Ok(o)
    }

    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        softmax::Softmax.candidates(v)
    }
}

/// Softmax rows per keep vector: the scores `[d_0, …, d_{r-1}]` and the mask (right-aligned,
/// missing axes 1) agree on a leading block of axes and the mask is 1 on the other axes but the
/// last, so one keep vector covers the consecutive rows of those axes (`[B,1,1,S]` against
/// `[B,H,S,S]`: `H·S` rows). Any other broadcast is an error naming the node.
pub fn mask_rows(v: &NodeView) -> mase_ir::Result<usize> {
    let (s, m) = (v.in_shape(0)?, v.in_shape(1)?);
    let r = s.len();
    let ok_rank = m.len() <= r && r >= 1 && m.last() == s.last();
    let padded: Vec<usize> = std::iter::repeat_n(1, r.saturating_sub(m.len())).chain(m.iter().copied()).collect();
    let lead = (0..r.saturating_sub(1)).take_while(|&i| padded[i] == s[i]).count();
    if !ok_rank || padded[lead..r.saturating_sub(1)].iter().any(|&d| d != 1) {
        return Err(v.error(format!(
            "key mask of shape {m:?} against scores of shape {s:?}: the masked softmax takes one keep vector \
             per leading block of rows (a mask like [B, 1, …, 1, L] for scores [B, …, L]), over the last axis"
        )));
    }
    Ok(s[lead..r - 1].iter().product())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;
    use softmax::softmax_row_masked;

    fn tables(p: &Params) -> (Vec<i64>, Vec<i64>) {
        let w = softmax::Widths::of(p);
        softmax::exp_tables(w.ef, w.h)
    }

    /// Kept elements get the unmasked softmax of the kept elements alone; masked ones 0.
    #[test]
    fn masked_row_is_the_softmax_of_its_kept_elements() {
        let p = resolve_params(&MaskedSoftmax, &[] as &[(&str, i64)]).unwrap();
        let (hi, lo) = tables(&p);
        let row = [5, -3, 17, 2, 90, -128, 7, 1];
        let keep = [true, false, true, true, false, false, true, true];
        let y = softmax_row_masked(&p, &hi, &lo, &row, Some(&keep));
        let kept: Vec<i64> = row.iter().zip(keep).filter(|(_, k)| *k).map(|(x, _)| *x).collect();
        // A row of 5 has the same CL (ceil(log2 5) = ceil(log2 8) = 3), so the same widths.
        let p_short =
            resolve_params(&softmax::Softmax, &[("DATA_IN_0_TENSOR_SIZE_DIM_0", 5), ("DATA_IN_0_PARALLELISM_DIM_0", 1)])
                .unwrap();
        let want = softmax::softmax_row(&p_short, &hi, &lo, &kept);
        let got: Vec<i64> = y.iter().zip(keep).filter(|(_, k)| *k).map(|(v, _)| *v).collect();
        assert_eq!(got, want);
        assert!(y.iter().zip(keep).all(|(v, k)| k || *v == 0), "{y:?}");
        // No mask is softmax.
        assert_eq!(softmax_row_masked(&p, &hi, &lo, &row, None), softmax::softmax_row(&p, &hi, &lo, &row));
    }

    #[test]
    fn fully_masked_row_is_all_zeros() {
        let p = resolve_params(&MaskedSoftmax, &[("DATA_OUT_0_SIGNED", 1)]).unwrap();
        let (hi, lo) = tables(&p);
        let y = softmax_row_masked(&p, &hi, &lo, &[1, 2, 3, 4, 5, 6, 7, 8], Some(&[false; 8]));
        assert_eq!(y, vec![0; 8]);
    }

    /// One keep vector per MASK_ROWS rows; the harness row is that tensor.
    #[test]
    fn one_keep_vector_per_tensor() {
        let p = resolve_params(
            &MaskedSoftmax,
            &[("DATA_IN_0_TENSOR_SIZE_DIM_1", 6), ("MASK_ROWS", 3), ("DATA_IN_0_PARALLELISM_DIM_0", 2)],
        )
        .unwrap();
        let s = MaskedSoftmax.streams(&p);
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["data_in_0", "data_in_1", "data_out_0"]);
        assert_eq!((s[0].beats_per_row, s[1].beats_per_row, s[2].beats_per_row), (12, 4, 12));
        assert_eq!((s[1].lanes, s[1].width, s[1].signed), (2, 1, false));
        let c = MaskedSoftmax.cost(&p);
        let plain = softmax::Softmax.cost(&resolve_params(&softmax::Softmax, &[("DATA_IN_0_PARALLELISM_DIM_0", 2)]).unwrap());
        assert_eq!(c.ii_cycles, 3 * plain.ii_cycles);
        assert_eq!(c.latency_cycles, plain.latency_cycles);
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let stim = MaskedSoftmax.random_stimulus(&p, 2, &mut rng);
        assert_eq!(stim.inputs["data_in_0"].len(), 2 * 3 * 8);
        assert_eq!(stim.inputs["data_in_1"].len(), 2 * 8);
        let out = MaskedSoftmax.model(&p, &stim).unwrap();
        let keep = &stim.inputs["data_in_1"];
        for (i, y) in out["data_out_0"].iter().enumerate() {
            let (tensor, pos) = (i / 24, i % 8);
            if keep[tensor * 8 + pos] == 0 {
                assert_eq!(*y, 0, "element {i}");
            }
        }
    }

    /// The plain component's parameters are unchanged and the masked one's are those and
    /// MASK_ROWS.
    #[test]
    fn masked_params_extend_softmax() {
        let names = |c: &dyn Component| c.params().iter().map(|s| s.name).collect::<Vec<_>>();
        let (plain, masked) = (names(&softmax::Softmax), names(&MaskedSoftmax));
        assert_eq!(masked[..plain.len()], plain[..]);
        assert_eq!(masked[plain.len()..], ["MASK_ROWS"]);
        assert!(!plain.contains(&"MASK_ROWS") && !plain.contains(&"MASKED"));
    }
}
