//! `row_select`: keeps the rows of one position of a gathered axis and drops the others
//! (`rtl/mase_row_select.sv`): an ONNX `Gather` of one constant index on an axis before the last,
//! such as a BERT classifier's pooler taking the first token (`Gather(hidden [B, S, H], 0,
//! axis = 1) → [B, H]`).
//!
//! # Semantics
//!
//! The input streams rows of the tensor's last axis (`D0 = DATA_IN_0_TENSOR_SIZE_DIM_0`
//! elements, `P = DATA_IN_0_PARALLELISM_DIM_0` per beat, `B = D0 / P` beats per row). For a
//! tensor of shape `[O.., G, I.., D0]` gathered on the axis of size `G` at index `k`, the rows
//! come in groups of `GROUP × INNER` rows (`GROUP = G`, `INNER` = the product of the axes `I..`
//! strictly between the gathered axis and the last one): row `r` of a group lies at position
//! `r / INNER` of the gathered axis. The `INNER` rows at position `INDEX = k` pass unchanged, in
//! order and in the input's format; every other beat is taken (ready high) and dropped. So the
//! output holds `DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP` rows: `[O.., I.., D0]`, exactly what the
//! Gather computes.
//!
//! # Harness rows and cost
//!
//! A harness row is one group: `data_in_0` has `GROUP · INNER · B` beats per row, `data_out_0`
//! `INNER · B`. The component takes one input beat per cycle, kept or dropped, so
//! [`Component::cost`]'s `ii_cycles` is `GROUP · INNER · B` per group (the input rate) and its
//! latency, from a group's first input beat to its first output beat, is the `INDEX · INNER · B`
//! dropped beats before the kept rows plus the output register's cycle
//! ([`Component::beats_before_first_output`] is those beats plus one). No multipliers, no memory.

use crate::binding::{Binding, NodeView, Par};
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::port::{block_stream, check_derived, check_format, check_row_shape, check_same_format};
use crate::{check_equal, check_range, param, param_list, port_format, port_shape};

/// The row selection component.
pub struct RowSelect;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "row_select",
    description: "keeps the rows at position INDEX of a gathered axis (groups of GROUP x INNER rows) and drops the others: a Gather of one constant index on an axis before the last; full rate, output registered",
    dependencies: &["mase_assert.svh", "mase_skid_buffer.sv"],
    keeps_input_format: true,
    params: param_list![
        port_format!(
            "DATA_IN_0",
            8,
            "element bits (1..64; moved, not interpreted)",
            4,
            "element fractional bits (format only)"
        ),
        port_shape!(
            "DATA_IN_0",
            [8, 4, 4, 1],
            [
                "elements per row: the last axis (1..2^20)",
                "rows per tensor (1..2^20, a multiple of GROUP * INNER)",
                "elements per beat (1..1024, divides the row)",
                "rows per beat (1)",
            ]
        ),
        [
            ParamSpec::value("GROUP", 4, "size of the gathered axis (1..DATA_IN_0_TENSOR_SIZE_DIM_1)"),
            ParamSpec::value(
                "INNER",
                1,
                "rows per position of the gathered axis: product of the axes between it and the last (1..DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP)"
            ),
            ParamSpec::value("INDEX", 0, "the position kept (0..GROUP - 1)"),
            ParamSpec::same_as("DATA_OUT_0_PRECISION_0", "DATA_IN_0_PRECISION_0", "output element bits (= input)"),
            ParamSpec::same_as(
                "DATA_OUT_0_PRECISION_1",
                "DATA_IN_0_PRECISION_1",
                "output fractional bits (= input)"
            ),
            ParamSpec::same_as(
                "DATA_OUT_0_TENSOR_SIZE_DIM_0",
                "DATA_IN_0_TENSOR_SIZE_DIM_0",
                "output elements per row (= input)"
            ),
            ParamSpec::value("DATA_OUT_0_TENSOR_SIZE_DIM_1", 1, "output rows (= DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP)"),
            ParamSpec::same_as(
                "DATA_OUT_0_PARALLELISM_DIM_0",
                "DATA_IN_0_PARALLELISM_DIM_0",
                "output elements per beat (= input)"
            ),
            ParamSpec::same_as(
                "DATA_OUT_0_PARALLELISM_DIM_1",
                "DATA_IN_0_PARALLELISM_DIM_1",
                "output rows per beat (= input)"
            ),
        ],
    ],
    ..Info::DEFAULT
};

/// LUT model of row_select over `[1, bits per beat, counter bits]` (the output skid buffer's
/// input mux and the three position counters), least squares over the 32 instances of
/// `sim/examples/resource_fit.rs --only row_select` (Yosys 0.23; median LUT error 1.9 %, at
/// most 7 %).
const ROW_SELECT_LUT: [f64; 3] = [-1.925, 1.002, 2.368];
/// FF model over the same features (skid buffer: two words and two valid bits; the counters);
/// median error 0.7 %, at most 7 %.
const ROW_SELECT_FF: [f64; 3] = [-1.192, 2.001, 1.391];

/// The geometry of an instance.
#[derive(Debug, Clone, Copy)]
struct Geo {
    /// Elements per row.
    d0: usize,
    /// Elements per beat.
    p: usize,
    /// Rows per group and per position, and the position kept.
    group: usize,
    inner: usize,
    index: usize,
}

impl Geo {
    fn of(p: &Params) -> Geo {
        let u = |n: &str| param(p, n).max(1) as usize;
        Geo {
            d0: u("DATA_IN_0_TENSOR_SIZE_DIM_0"),
            p: u("DATA_IN_0_PARALLELISM_DIM_0"),
            group: u("GROUP"),
            inner: u("INNER"),
            index: param(p, "INDEX").max(0) as usize,
        }
    }

    /// Beats per row.
    fn row_beats(&self) -> usize {
        self.d0 / self.p
    }

    /// Input beats per group (a harness row).
    fn group_beats(&self) -> usize {
        self.group * self.inner * self.row_beats()
    }

    /// Input beats of a group before its first kept beat.
    fn dropped_before(&self) -> usize {
        self.index * self.inner * self.row_beats()
    }

    /// Bits of the three position counters (beat, row within the position, position).
    fn counter_bits(&self) -> u64 {
        use crate::resources::clog2;
        clog2(self.row_beats() as u64) + clog2(self.inner as u64) + clog2(self.group as u64)
    }
}

/// Parameter overrides of an instance: `width`-bit elements (`width / 2` fractional), rows of
/// `len` elements at `lanes` per beat, `outer` groups of `group × inner` rows, position `index`
/// kept; the output parameters derived (what the binding does).
pub fn instance(
    width: i64,
    len: i64,
    lanes: i64,
    outer: i64,
    group: i64,
    inner: i64,
    index: i64,
) -> Vec<(&'static str, i64)> {
    let rows = outer * group * inner;
    vec![
        ("DATA_IN_0_PRECISION_0", width),
        ("DATA_IN_0_PRECISION_1", width / 2),
        ("DATA_IN_0_TENSOR_SIZE_DIM_0", len),
        ("DATA_IN_0_TENSOR_SIZE_DIM_1", rows),
        ("DATA_IN_0_PARALLELISM_DIM_0", lanes),
        ("DATA_IN_0_PARALLELISM_DIM_1", 1),
        ("GROUP", group),
        ("INNER", inner),
        ("INDEX", index),
        ("DATA_OUT_0_TENSOR_SIZE_DIM_1", rows / group.max(1)),
    ]
}

impl Component for RowSelect {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_format(p, "DATA_IN_0", 64)?;
        check_row_shape(p, "DATA_IN_0", 1 << 20, 1 << 20, 1024)?;
        let rows = param(p, "DATA_IN_0_TENSOR_SIZE_DIM_1");
        check_range(p, "GROUP", 1, rows)?;
        let group = param(p, "GROUP");
        check_range(p, "INNER", 1, rows / group)?;
        check_range(p, "INDEX", 0, group - 1)?;
        let gi = group * param(p, "INNER");
        if rows % gi != 0 {
            return Err(format!("GROUP * INNER ({gi}) must divide DATA_IN_0_TENSOR_SIZE_DIM_1 ({rows})"));
        }
        check_same_format(p, "DATA_OUT_0", "DATA_IN_0")?;
        check_equal(p, "DATA_OUT_0_TENSOR_SIZE_DIM_0", "DATA_IN_0_TENSOR_SIZE_DIM_0")?;
        check_derived(
            p,
            &[("DATA_OUT_0_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1 / GROUP")],
            &[rows / group],
        )?;
        check_equal(p, "DATA_OUT_0_PARALLELISM_DIM_0", "DATA_IN_0_PARALLELISM_DIM_0")?;
        check_equal(p, "DATA_OUT_0_PARALLELISM_DIM_1", "DATA_IN_0_PARALLELISM_DIM_1")
    }

    /// `data_in_0`: a group of `GROUP · INNER` rows per harness row; `data_out_0`: its `INNER`
    /// kept rows.
    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let g = Geo::of(p);
        let input = StreamSpec { beats_per_row: g.group_beats(), ..block_stream(p, "DATA_IN_0", Direction::In) };
        let output = StreamSpec {
            beats_per_row: g.inner * g.row_beats(),
            ..block_stream(p, "DATA_OUT_0", Direction::Out)
        };
        vec![input, output]
    }

    /// Row `r` of every group of `GROUP · INNER` rows is kept when `r / INNER = INDEX`.
    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let g = Geo::of(p);
        let x = stim.input("row_select", "data_in_0")?;
        let group_len = g.group * g.inner * g.d0;
        if x.len() % group_len != 0 {
            return Err(format!(
                "row_select model: {} input values are not whole groups of {} rows of {}",
                x.len(),
                g.group * g.inner,
                g.d0
            ));
        }
        let y = x
            .chunks(g.d0)
            .enumerate()
            .filter(|(r, _)| (r % (g.group * g.inner)) / g.inner == g.index)
            .flat_map(|(_, row)| row.iter().copied())
            .collect();
        Ok(data_out_0(y))
    }

    fn cost(&self, p: &Params) -> Cost {
        let g = Geo::of(p);
        Cost::streaming(g.dropped_before() as u64 + 1, g.group_beats() as u64)
    }

    /// The dropped beats before a group's kept rows, and the first kept beat.
    fn beats_before_first_output(&self, p: &Params, _port: &str) -> usize {
        Geo::of(p).dropped_before() + 1
    }

    /// Output beat `k` of a group is input beat `k` after the dropped rows before the kept ones.
    fn input_beats_for_output(&self, p: &Params, out_beats: usize) -> Option<usize> {
        Some(Geo::of(p).dropped_before() + out_beats)
    }

    /// The output skid buffer and the position counters ([`ROW_SELECT_LUT`], [`ROW_SELECT_FF`]).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::fitted;
        let g = Geo::of(p);
        let bits = (g.p as u64) * param(p, "DATA_IN_0_PRECISION_0") as u64;
        let x = [1, bits, g.counter_bits()];
        crate::Resources { lut: fitted(&ROW_SELECT_LUT, &x), ff: fitted(&ROW_SELECT_FF, &x), ..Default::default() }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: a [1, 4, 8] tensor gathered at index 0 of its 4 rows, 4 lanes.
            vec![],
            // The last index of 5, two groups, P = 2 over rows of 6, 13-bit elements.
            instance(13, 6, 2, 2, 5, 1, 4),
            // INNER = 4 ([.., 3, 4, 5] gathered on the axis of 3 at 1), P = 1, 2-bit elements.
            instance(2, 5, 1, 1, 3, 4, 1),
            // A whole row per beat, INNER = 2, the last index of 2, 16-bit elements.
            instance(16, 12, 12, 3, 2, 2, 1),
            // A middle index with INNER = 3 and 4 lanes.
            instance(8, 8, 4, 2, 4, 3, 2),
            // GROUP = 1 keeps every row; 64-bit lanes (a port wider than 64 bits).
            instance(64, 6, 3, 2, 1, 1, 0),
            // One element per row and beat, 12 positions, index 7.
            instance(5, 1, 1, 1, 12, 1, 7),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // INDEX = GROUP.
            vec![("INDEX", 4)],
            // GROUP larger than the rows.
            vec![("GROUP", 5)],
            // GROUP * INNER does not divide the rows.
            vec![("GROUP", 3)],
            // INNER beyond the rows per group.
            vec![("INNER", 2)],
            // Two rows per beat.
            vec![("DATA_IN_0_PARALLELISM_DIM_1", 2), ("DATA_OUT_0_PARALLELISM_DIM_1", 2)],
            // Lanes not dividing the row.
            vec![("DATA_IN_0_PARALLELISM_DIM_0", 3)],
            // Output rows not DIM_1 / GROUP.
            vec![("DATA_OUT_0_TENSOR_SIZE_DIM_1", 4)],
            // Output format differs.
            vec![("DATA_OUT_0_PRECISION_1", 2)],
            // 65-bit elements.
            vec![("DATA_IN_0_PRECISION_0", 65)],
        ]
    }
}

/// What a gather node selects: `(GROUP, INNER, INDEX)`, or an error naming the node when it is
/// not a gather of one constant index on an axis before the last.
pub fn selection(v: &NodeView) -> mase_ir::Result<(usize, usize, usize)> {
    const SCOPE: &str = "the row_select component implements a gather of one constant index on an axis before the last";
    let mase_ir::Op::Gather { axis } = &v.node.op else {
        return Err(v.error("the row_select component binds gather nodes only"));
    };
    let shape = v.in_shape(0)?;
    let rank = shape.len() as i64;
    let a = if *axis < 0 { axis + rank } else { *axis };
    if !(0..rank).contains(&a) {
        return Err(v.error(format!("axis {axis} is out of range for a rank-{rank} input {shape:?}")));
    }
    if a == rank - 1 {
        return Err(v.error(format!(
            "gather on the last axis (axis {axis} of input shape {shape:?}) selects elements within \
             rows, which the hardware does not support; {SCOPE}"
        )));
    }
    let src = v.node.inputs.get(1).map(|&i| v.graph.node(i));
    match src {
        Some(n) if matches!(n.op, mase_ir::Op::Constant { .. }) => {}
        Some(n) => {
            return Err(v.error(format!(
                "its indices are computed by node '{}' (`{}`), not a constant; {SCOPE}",
                n.name,
                n.op.mase_op()
            )))
        }
        None => return Err(v.error(format!("it has no indices input; {SCOPE}"))),
    }
    let t = v.constant_input(1)?;
    let idx = t.int_values().ok_or_else(|| {
        v.error(format!("its indices are {} {:?}, not integers; {SCOPE}", t.dtype().name(), t.shape()))
    })?;
    if idx.len() != 1 {
        return Err(v.error(format!(
            "its constant indices have shape {:?} ({} indices); {SCOPE}",
            idx.shape(),
            idx.len()
        )));
    }
    let group = shape[a as usize];
    let i = idx.iter().copied().next().unwrap_or(0);
    let k = if i < 0 { i + group as i64 } else { i };
    if !(0..group as i64).contains(&k) {
        return Err(v.error(format!("index {i} is out of range for axis {axis} of size {group}")));
    }
    let inner = shape[a as usize + 1..shape.len() - 1].iter().product();
    Ok((group, inner, k as usize))
}

impl Binding for RowSelect {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let (group, inner, index) = selection(v)?;
        let shape = v.in_shape(0)?;
        let (rows, _) = crate::binding::rows_cols(&shape);
        crate::binding::Overrides::default()
            .tensor("DATA_IN_0", &v.in_format(0)?, &shape, par.p_in)
            .set("GROUP", group as i64)
            .set("INNER", inner as i64)
            .set("INDEX", index as i64)
            .set("DATA_OUT_0_TENSOR_SIZE_DIM_1", (rows / group.max(1)) as i64)
            .done()
    }

    /// Only the data: the index (input 1) is a constant that [`selection`] reads.
    fn streamed_inputs(&self, v: &NodeView) -> mase_ir::Result<usize> {
        selection(v)?;
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    fn run(ov: &[(&'static str, i64)], x: Vec<i64>) -> Vec<i64> {
        let p = resolve_params(&RowSelect, ov).unwrap();
        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), x);
        RowSelect.model(&p, &stim).unwrap()["data_out_0"].clone()
    }

    /// A `[2, 3, 2, 2]` tensor (`x = 0..24`) gathered on axis 1 keeps rows `2k, 2k + 1` of each
    /// group of six, as the float interpreter's gather does.
    #[test]
    fn model_is_the_gather() {
        let x: Vec<i64> = (0..24).collect();
        let t = mase_ir::Tensor::from_i64(&[2, 3, 2, 2], x.clone()).unwrap();
        for k in 0..3 {
            let idx = mase_ir::Tensor::from_i64(&[], vec![k]).unwrap().to_i64();
            let want = mase_ir::interp::shape::gather(&t, &idx, 1).unwrap();
            let got = run(&instance(8, 2, 1, 2, 3, 2, k), x.clone());
            assert_eq!(got, want.to_i64().iter().copied().collect::<Vec<_>>(), "index {k}");
        }
    }

    #[test]
    fn latency_counts_the_dropped_rows() {
        let p = resolve_params(&RowSelect, &instance(8, 8, 2, 1, 5, 3, 2)).unwrap();
        // 2 positions × 3 rows × 4 beats dropped, then the output register.
        assert_eq!(RowSelect.cost(&p).latency_cycles, 25);
        assert_eq!(RowSelect.cost(&p).ii_cycles, 60);
        assert_eq!(RowSelect.beats_before_first_output(&p, "data_in_0"), 25);
        let s = RowSelect.streams(&p);
        assert_eq!((s[0].beats_per_row, s[1].beats_per_row), (60, 12));
    }
}
