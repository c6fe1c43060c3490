//! `matmul`: `C = A·B` of two activation streams (`rtl/mase_matmul.sv`), for `Q·Kᵀ` and `A·V`.
//!
//! Per sequence, `A` is `[N, K]` (`data_in_0`, rows of `K` in beats of `P_IN`), `B` is `[K, M]`
//! and `C = [N, M]` leaves in beats of `P_OUT` (`data_out_0`). `B` is the buffered operand:
//! `data_in_1` carries it as `[K, M]` in `P_IN × P_OUT` blocks (`TRANSPOSE_B = 0`, e.g. `V` of
//! `A·V`) or as `Bᵀ = [M, K]` in `P_OUT × P_IN` blocks (`TRANSPOSE_B = 1`, e.g. the rows of `K`
//! of `Q·Kᵀ`, so no separate transpose is needed). The RTL keeps two `B` banks (the next
//! sequence's `B` loads while the current one computes) and double-buffers `A` rows; the
//! `P_IN × P_OUT` multipliers are busy every cycle in steady state.
//!
//! Numerics: the sum of the `K` products is exact (`frac_A + frac_B` fractional bits), then one
//! [`cast_code`] into the `DATA_OUT_0` format with its rounding / overflow modes.
//!
//! Harness rows: one "row" is one whole sequence (`beats_per_row` = beats per sequence on each
//! stream), so `ii_cycles` is cycles per sequence: `N·(M/P_OUT)·(K/P_IN)`.

use mase_ir::fixed::{accumulate, cast_code};

use super::cast::{check_modes, output_format};
use crate::binding::{Binding, NodeView, Par};
use crate::block_stream_order;
use crate::component::{
    data_out_0, Component, Cost, Direction, Info, ParamSpec, Params, Stimulus, StreamSpec, StreamValues,
};
use crate::overrides::{input, input_1, modes, output, row};
use crate::port::{check_derived, check_format, check_row_shape};
use crate::{
    check_divides, check_equal, check_range, output_modes, param, param_list, pingpong_bits, port_format,
    port_shape,
};

/// The matmul component.
pub struct Matmul;

/// Name, description, RTL dependencies and parameters.
const INFO: Info = Info {
    name: "matmul",
    description: "C = A·B of two streams (B or Bᵀ double-buffered per sequence), P_IN×P_OUT multipliers, exact sum, output cast",
    dependencies: super::linear::DOT_PRODUCT_RTL,
    buffers_whole_unit: true,
    params: param_list![
        port_format!("DATA_IN_0", 8, "A element bits (1..32, signed)", 4, "A fractional bits"),
        port_shape!(
            "DATA_IN_0",
            [16, 4, 4, 1],
            [
                "K: elements per A row (1..65536)",
                "N: A rows per sequence (1..65536)",
                "P_IN: A elements per beat (divides K)",
                "A rows per beat (must be 1)",
            ]
        ),
        port_format!("DATA_IN_1", 8, "B element bits (1..32, signed)", 4, "B fractional bits"),
        port_shape!(
            "DATA_IN_1",
            [8, 16, 2, 4],
            [
                "data_in_1 columns: M (TRANSPOSE_B = 0) or K (= 1)",
                "data_in_1 rows: K (TRANSPOSE_B = 0) or M (= 1)",
                "data_in_1 block columns: P_OUT (TRANSPOSE_B = 0) or P_IN",
                "data_in_1 block rows: P_IN (TRANSPOSE_B = 0) or P_OUT",
            ]
        ),
        port_format!("DATA_OUT_0", 16, "output element bits (1..64, signed)", 8, "output fractional bits"),
        [
            ParamSpec::value("DATA_OUT_0_TENSOR_SIZE_DIM_0", 8, "M: outputs per row (1..65536)"),
            ParamSpec::same_as("DATA_OUT_0_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1", "output rows (= N)"),
            ParamSpec::value("DATA_OUT_0_PARALLELISM_DIM_0", 2, "P_OUT: outputs per beat (divides M)"),
            ParamSpec::value("DATA_OUT_0_PARALLELISM_DIM_1", 1, "output rows per beat (must be 1)"),
        ],
        output_modes!("DATA_OUT_0", "output rounding", "output overflow"),
        [ParamSpec::value("TRANSPOSE_B", 0, "0: data_in_1 is B [K, M]; 1: data_in_1 is Bᵀ [M, K] (Q·Kᵀ)")],
    ],
    ..Info::DEFAULT
};

/// LUT and FF model of matmul over `[1, LUT-multiplier bits, accumulator bits, output bits,
/// block-counter bits, B word bits]`: linear's datapath coefficients (the shared
/// `mase_dot_product`) plus one LUT and FF per B word bit, checked against Yosys 0.23 on matmul's
/// first two test instances (-7 % and -10 % LUT) with `sim/examples/resource_fit.rs`.
const MATMUL_LUT: [f64; 6] = [0.0, 1.09, 1.82, 0.0, 11.83, 1.0];
/// See [`MATMUL_LUT`].
const MATMUL_FF: [f64; 6] = [30.0, 0.61, 1.43, 1.76, 2.05, 1.0];

/// Derived sizes of an instance.
#[derive(Debug, Clone, Copy)]
struct Dims {
    k: usize,
    n: usize,
    m: usize,
    p_in: usize,
    p_out: usize,
    transposed: bool,
}

impl Dims {
    fn of(p: &Params) -> Dims {
        Dims {
            k: param(p, "DATA_IN_0_TENSOR_SIZE_DIM_0") as usize,
            n: param(p, "DATA_IN_0_TENSOR_SIZE_DIM_1") as usize,
            m: param(p, "DATA_OUT_0_TENSOR_SIZE_DIM_0") as usize,
            p_in: param(p, "DATA_IN_0_PARALLELISM_DIM_0") as usize,
            p_out: param(p, "DATA_OUT_0_PARALLELISM_DIM_0") as usize,
            transposed: param(p, "TRANSPOSE_B") == 1,
        }
    }

    fn nib(&self) -> usize {
        self.k / self.p_in
    }

    fn nob(&self) -> usize {
        self.m / self.p_out
    }

    /// `data_in_1` shape `[dim1, dim0]` and block `[p1, p0]`.
    fn b_stream(&self) -> (usize, usize, usize, usize) {
        if self.transposed {
            (self.m, self.k, self.p_out, self.p_in)
        } else {
            (self.k, self.m, self.p_in, self.p_out)
        }
    }
}

/// The `DATA_IN_1_*` shape parameters implied by K, M, P_IN, P_OUT and TRANSPOSE_B:
/// `[TENSOR_SIZE_DIM_0, TENSOR_SIZE_DIM_1, PARALLELISM_DIM_0, PARALLELISM_DIM_1]`.
pub fn derived_b_shape(p: &Params) -> [i64; 4] {
    let d = Dims::of(p);
    let (d1, d0, p1, p0) = d.b_stream();
    [d0 as i64, d1 as i64, p0 as i64, p1 as i64]
}

/// Parameter overrides for an instance of `A[n, k] · B[k, m]` with the `DATA_IN_1_*` shape
/// derived (what the emitter does). Formats keep their defaults unless `extra` overrides them.
pub fn instance(
    n: i64,
    k: i64,
    m: i64,
    p_in: i64,
    p_out: i64,
    transpose_b: bool,
    extra: &[(&'static str, i64)],
) -> Vec<(&'static str, i64)> {
    let mut v = vec![
        ("DATA_IN_0_TENSOR_SIZE_DIM_0", k),
        ("DATA_IN_0_TENSOR_SIZE_DIM_1", n),
        ("DATA_IN_0_PARALLELISM_DIM_0", p_in),
        ("DATA_OUT_0_TENSOR_SIZE_DIM_0", m),
        ("DATA_OUT_0_PARALLELISM_DIM_0", p_out),
        ("TRANSPOSE_B", transpose_b as i64),
    ];
    let (b0, b1, q0, q1) = if transpose_b { (k, m, p_in, p_out) } else { (m, k, p_out, p_in) };
    v.extend([
        ("DATA_IN_1_TENSOR_SIZE_DIM_0", b0),
        ("DATA_IN_1_TENSOR_SIZE_DIM_1", b1),
        ("DATA_IN_1_PARALLELISM_DIM_0", q0),
        ("DATA_IN_1_PARALLELISM_DIM_1", q1),
    ]);
    v.extend_from_slice(extra);
    v
}

impl Component for Matmul {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn validate(&self, p: &Params) -> Result<(), String> {
        check_format(p, "DATA_IN_0", 32)?;
        check_row_shape(p, "DATA_IN_0", 65536, 65536, 1024)?;
        check_format(p, "DATA_OUT_0", 64)?;
        check_range(p, "DATA_OUT_0_TENSOR_SIZE_DIM_0", 1, 65536)?;
        check_equal(p, "DATA_OUT_0_TENSOR_SIZE_DIM_1", "DATA_IN_0_TENSOR_SIZE_DIM_1")?;
        check_range(p, "DATA_OUT_0_PARALLELISM_DIM_0", 1, 1024)?;
        check_divides(p, "DATA_OUT_0_PARALLELISM_DIM_0", "DATA_OUT_0_TENSOR_SIZE_DIM_0")?;
        check_range(p, "DATA_OUT_0_PARALLELISM_DIM_1", 1, 1)?;
        let mults = param(p, "DATA_IN_0_PARALLELISM_DIM_0") * param(p, "DATA_OUT_0_PARALLELISM_DIM_0");
        if mults > 4096 {
            return Err(format!(
                "DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PARALLELISM_DIM_0 must be between 1 and 4096, got {mults}"
            ));
        }
        let d = Dims::of(p);
        let words = d.nib() * d.nob();
        if words > 1 << 20 {
            return Err(format!("B words per bank must be between 1 and 1048576, got {words}"));
        }
        check_modes(p, "DATA_OUT_0")?;
        check_range(p, "TRANSPOSE_B", 0, 1)?;
        check_format(p, "DATA_IN_1", 32)?;
        let t = d.transposed;
        let rules = [
            ("DATA_IN_1_TENSOR_SIZE_DIM_0", if t { "K" } else { "M" }),
            ("DATA_IN_1_TENSOR_SIZE_DIM_1", if t { "M" } else { "K" }),
            ("DATA_IN_1_PARALLELISM_DIM_0", if t { "P_IN" } else { "P_OUT" }),
            ("DATA_IN_1_PARALLELISM_DIM_1", if t { "P_OUT" } else { "P_IN" }),
        ];
        check_derived(p, &rules, &derived_b_shape(p))
    }

    fn streams(&self, p: &Params) -> Vec<StreamSpec> {
        let d = Dims::of(p);
        vec![
            StreamSpec {
                name: "data_in_0".into(),
                dir: Direction::In,
                lanes: d.p_in,
                width: param(p, "DATA_IN_0_PRECISION_0") as u32,
                signed: true,
                beats_per_row: d.n * d.nib(),
            },
            StreamSpec {
                name: "data_in_1".into(),
                dir: Direction::In,
                // The port's declared width (= P_IN·P_OUT lanes once valid).
                lanes: (param(p, "DATA_IN_1_PARALLELISM_DIM_0") * param(p, "DATA_IN_1_PARALLELISM_DIM_1"))
                    as usize,
                width: param(p, "DATA_IN_1_PRECISION_0") as u32,
                signed: true,
                beats_per_row: d.nib() * d.nob(),
            },
            StreamSpec {
                name: "data_out_0".into(),
                dir: Direction::Out,
                lanes: d.p_out,
                width: param(p, "DATA_OUT_0_PRECISION_0") as u32,
                signed: true,
                beats_per_row: d.n * d.nob(),
            },
        ]
    }

    fn model(&self, p: &Params, stim: &Stimulus) -> Result<StreamValues, String> {
        let d = Dims::of(p);
        let a = stim.input("matmul", "data_in_0")?;
        let b = stim.input("matmul", "data_in_1")?;
        let (na, nb) = (d.n * d.k, d.k * d.m);
        if a.len() % na != 0 || b.len() % nb != 0 || a.len() / na != b.len() / nb {
            return Err(format!(
                "matmul model: {} A values and {} B values are not the same number of sequences of {na} and {nb}",
                a.len(),
                b.len()
            ));
        }
        let (xf, bf) = (param(p, "DATA_IN_0_PRECISION_1") as i32, param(p, "DATA_IN_1_PRECISION_1") as i32);
        let to = output_format(p, "DATA_OUT_0", true);
        let (r1, r0, q1, q0) = d.b_stream();
        let order = block_stream_order(r1, r0, q1, q0);
        // bt[m][k] = B[k][m], gathered from the block stream.
        let mut bt = vec![0i64; nb];
        let mut y = Vec::with_capacity(a.len() / na * d.n * d.m);
        for (aseq, bseq) in a.chunks(na).zip(b.chunks(nb)) {
            for (s, &idx) in order.iter().enumerate() {
                let (r, c) = (idx / r0, idx % r0);
                let (m, k) = if d.transposed { (r, c) } else { (c, r) };
                bt[m * d.k + k] = bseq[s];
            }
            for row in aseq.chunks(d.k) {
                for m in 0..d.m {
                    let col = &bt[m * d.k..(m + 1) * d.k];
                    let (sum, frac) = accumulate(row.iter().copied().zip(col.iter().copied()), xf, bf)
                        .ok_or("matmul model: dot product exceeds 128 bits")?;
                    y.push(cast_code(sum, frac, &to));
                }
            }
        }
        Ok(data_out_0(y))
    }

    /// All of `B` and the first row of `A` (one row of `A` gives one row of the product).
    fn beats_before_first_output(&self, p: &Params, port: &str) -> usize {
        let d = Dims::of(p);
        match port {
            "data_in_0" => d.nib(),
            _ => d.nib() * d.nob(),
        }
    }

    fn cost(&self, p: &Params) -> Cost {
        let d = Dims::of(p);
        let (nib, nob) = (d.nib() as u64, d.nob() as u64);
        let a_buf = pingpong_bits(d.nib(), d.p_in as u64 * param(p, "DATA_IN_0_PRECISION_0") as u64);
        let b_words = d.nib() * d.nob();
        let b_buf =
            pingpong_bits(b_words, (d.p_in * d.p_out) as u64 * param(p, "DATA_IN_1_PRECISION_0") as u64);
        Cost {
            latency_cycles: nob * nib
                + nib
                + super::linear::dot_product_stages(
                    param(p, "DATA_IN_0_PRECISION_0") as u64,
                    param(p, "DATA_IN_1_PRECISION_0") as u64,
                    d.p_in as u64,
                ),
            ii_cycles: d.n as u64 * nob * nib,
            multipliers: (d.p_in * d.p_out) as u64,
            memory_bits: a_buf + b_buf,
        }
    }

    /// DSPs by Yosys' multiplier mapping (P_IN × P_OUT products of A × B bits), both double
    /// buffers by the RAM rule; LUT/FF as linear's datapath (fitted to Yosys 0.23 with `sim/examples/resource_fit.rs`).
    fn resources(&self, p: &Params) -> crate::Resources {
        use crate::resources::{clog2, fitted, mul_dsps, pingpong, pu};
        let d = Dims::of(p);
        let (nib, nob) = (d.nib() as u64, d.nob() as u64);
        let (pi, po) = (d.p_in as u64, d.p_out as u64);
        let (aw, bw, ow) =
            (pu(p, "DATA_IN_0_PRECISION_0"), pu(p, "DATA_IN_1_PRECISION_0"), pu(p, "DATA_OUT_0_PRECISION_0"));
        let dsp_each = mul_dsps(aw as u32, bw as u32, true, true, (aw + bw) as u32);
        let lut_mul = if dsp_each == 0 { pi * po * aw * bw } else { 0 };
        let (a_bram, a_lutram) = pingpong(nib, pi * aw);
        let (b_bram, b_lutram) = pingpong(nib * nob, pi * po * bw);
        let x =
            [1, lut_mul, po * (aw + bw + clog2(d.k as u64)), po * ow, clog2(nib) + clog2(nob), pi * po * bw];
        crate::Resources {
            lut: fitted(&MATMUL_LUT, &x),
            // Stage P of the split product sum (wide products only; matmul's tag is a constant,
            // its registers are optimised away).
            ff: fitted(&MATMUL_FF, &x) + super::linear::dot_product_p_ffs(aw, bw, pi, po, 0),
            dsp: pi * po * dsp_each,
            bram18: a_bram + b_bram,
            lutram: a_lutram + b_lutram,
        }
    }

    fn test_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            // Defaults: A[4, 16] · B[16, 8], P_IN = 4, P_OUT = 2.
            instance(4, 16, 8, 4, 2, false, &[]),
            // Q·Kᵀ form: Bᵀ streamed as rows, odd sizes.
            instance(3, 6, 5, 3, 5, true, &output(12, 5)),
            // P = 1, 2..3-bit operands, RND_CONV + SAT_SYM.
            instance(2, 5, 3, 1, 1, false, &[input(2, 1), input_1(3, 0), output(4, 1), modes(6, 3)].concat()),
            // 16-bit operands, one row per sequence, one output block, RND + WRAP.
            instance(
                1,
                8,
                4,
                2,
                4,
                true,
                &[input(16, 12), input_1(16, 9), output(16, 6), modes(2, 0)].concat(),
            ),
            // A·V form with N > M·K/(P_IN·P_OUT) (B load shorter than compute), P_OUT > 1, P_IN = 1.
            instance(7, 3, 4, 1, 2, false, &output(10, 3)),
        ]
    }

    fn invalid_params(&self) -> Vec<Vec<(&'static str, i64)>> {
        vec![
            row(16, 3),
            input(33, 4),
            vec![("DATA_OUT_0_PARALLELISM_DIM_0", 3)],
            vec![("TRANSPOSE_B", 1)],
            vec![("DATA_IN_1_PARALLELISM_DIM_1", 2)],
            modes(0, 4),
        ]
    }
}

impl Binding for Matmul {
    fn overrides(&self, v: &NodeView, par: Par) -> mase_ir::Result<Vec<(String, i64)>> {
        let (a, b) = (v.in_shape(0)?, v.in_shape(1)?);
        if a.len() < 2
            || b.len() < 2
            || a[..a.len() - 2] != b[..b.len() - 2]
            || a[a.len() - 1] != b[b.len() - 2]
        {
            return Err(v.error(format!(
                "operands {a:?} · {b:?}: the matmul component takes [..., N, K] · [..., K, M] with equal batch dimensions"
            )));
        }
        let (n, k, m) = (a[a.len() - 2], a[a.len() - 1], b[b.len() - 1]);
        let (fa, fb) = (v.signed_input(0, 32)?, v.signed_input(1, 32)?);
        let extra = [
            ("DATA_IN_0_PRECISION_0", fa.width as i64),
            ("DATA_IN_0_PRECISION_1", fa.frac as i64),
            ("DATA_IN_1_PRECISION_0", fb.width as i64),
            ("DATA_IN_1_PRECISION_1", fb.frac as i64),
        ];
        let transposed_b = crate::binding::layout::matmul_transposed_b(v.graph, v.node);
        let p =
            instance(n as i64, k as i64, m as i64, par.p_in as i64, par.p_out as i64, transposed_b, &extra);
        crate::binding::Overrides::default().extend(p).output(&v.out_format()?).done()
    }

    /// `B` streams row-major: along K (`p_out = 1`) when read as `Bᵀ`, else along M (`p_in = 1`).
    fn candidates(&self, v: &NodeView) -> mase_ir::Result<Vec<Par>> {
        use crate::binding::{divisors, Par};
        Ok(if crate::binding::layout::matmul_transposed_b(v.graph, v.node) {
            divisors(v.row_len()?, 256).into_iter().map(|p| Par::io(p, 1)).collect()
        } else {
            let m = *v.out_shape()?.last().unwrap_or(&1);
            divisors(m, 256).into_iter().map(|p| Par::io(1, p)).collect()
        })
    }

    fn par_of_one(&self, a: usize) -> Par {
        Par::io(1, a)
    }

    /// One whole `B` sequence enters before the first `A` row is needed.
    fn input_lead(&self, v: &NodeView, k: usize) -> mase_ir::Result<f64> {
        if k != 1 {
            return Ok(0.0);
        }
        let a = v.in_shape(0)?;
        let seqs: usize = a[..a.len().saturating_sub(2)].iter().product();
        Ok(1.0 / seqs.max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve_params;

    fn run(p: &Params, a: &[i64], b_stream: &[i64]) -> Vec<i64> {
        let mut stim = Stimulus::default();
        stim.inputs.insert("data_in_0".into(), a.to_vec());
        stim.inputs.insert("data_in_1".into(), b_stream.to_vec());
        Matmul.model(p, &stim).unwrap()["data_out_0"].clone()
    }

    #[test]
    fn both_b_layouts_give_the_same_product() {
        // Integer formats, wide output: plain integer matrix product.
        let fmt = [
            ("DATA_IN_0_PRECISION_1", 0),
            ("DATA_IN_1_PRECISION_1", 0),
            ("DATA_OUT_0_PRECISION_1", 0),
            ("DATA_OUT_0_PRECISION_0", 32),
        ];
        let (n, k, m) = (2usize, 4usize, 4usize);
        let a: Vec<i64> = (0..(n * k) as i64).map(|v| v - 3).collect();
        let b: Vec<i64> = (0..(k * m) as i64).map(|v| (v * 7) % 11 - 5).collect(); // B[k][m]
        let mut expect = Vec::new();
        for r in 0..n {
            for c in 0..m {
                expect.push((0..k).map(|j| a[r * k + j] * b[j * m + c]).sum::<i64>());
            }
        }
        let p0 = resolve_params(&Matmul, &instance(2, 4, 4, 2, 2, false, &fmt)).unwrap();
        let order = block_stream_order(k, m, 2, 2);
        assert_eq!(run(&p0, &a, &order.iter().map(|&i| b[i]).collect::<Vec<_>>()), expect);
        let p1 = resolve_params(&Matmul, &instance(2, 4, 4, 2, 2, true, &fmt)).unwrap();
        let bt: Vec<i64> =
            (0..m).flat_map(|c| (0..k).map(move |j| (c, j))).map(|(c, j)| b[j * m + c]).collect();
        let order_t = block_stream_order(m, k, 2, 2);
        assert_eq!(run(&p1, &a, &order_t.iter().map(|&i| bt[i]).collect::<Vec<_>>()), expect);
    }

    #[test]
    fn cost_at_the_defaults() {
        let c = Matmul.cost(&resolve_params(&Matmul, &[] as &[(&str, i64)]).unwrap());
        assert_eq!(c.multipliers, 8);
        assert_eq!(c.ii_cycles, 4 * 4 * 4);
    }
}
