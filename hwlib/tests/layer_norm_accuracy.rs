//! Accuracy of the `layer_norm` model against f64 LayerNorm: random rows spanning the 16-bit
//! input format, default internal widths, error in LSBs of the output format (values outside
//! the output range are compared with the saturated real value). Prints a table; asserts the
//! issue's bound (max ≤ 2 LSB).

use mase_hwlib::components::layer_norm::LayerNorm;
use mase_hwlib::{resolve_params, Component, Stimulus};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Max and mean absolute error (output LSBs) of one configuration over `rows` random rows.
pub fn measure(in_frac: i64, out_frac: i64, d: i64, rows: usize, seed: u64) -> (f64, f64) {
    let p = resolve_params(
        &LayerNorm,
        &[
            ("DATA_IN_0_PRECISION_1", in_frac),
            ("DATA_IN_0_TENSOR_SIZE_DIM_0", d),
            ("DATA_IN_0_PARALLELISM_DIM_0", 1),
            ("DATA_OUT_0_PRECISION_1", out_frac),
        ],
    )
    .expect("valid accuracy configuration");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (gf, bf) = (p["WEIGHT_PRECISION_1"] as i32, p["BIAS_PRECISION_1"] as i32);
    let du = d as usize;
    // gamma in [0.5, 1.5), beta in [-0.5, 0.5) (typical trained values).
    let gamma: Vec<i64> = (0..du).map(|_| rng.gen_range((1i64 << gf) / 2..(3i64 << gf) / 2)).collect();
    let beta: Vec<i64> = (0..du).map(|_| rng.gen_range(-(1i64 << bf) / 2..(1i64 << bf) / 2)).collect();
    let x: Vec<i64> = (0..du * rows).map(|_| rng.gen_range(-32768i64..=32767)).collect();
    let mut stim = Stimulus::default();
    stim.inputs.insert("data_in_0".into(), x.clone());
    stim.memories.insert("weight".into(), gamma.clone());
    stim.memories.insert("bias".into(), beta.clone());
    let y = &LayerNorm.model(&p, &stim).expect("model")["data_out_0"];
    let eps = p["EPS"] as f64 * 2f64.powi(-(p["EPS_FRAC"] as i32));
    let (lo, hi) = (-32768.0, 32767.0);
    let (mut max, mut sum) = (0f64, 0f64);
    for (r, row) in x.chunks(du).enumerate() {
        let xs: Vec<f64> = row.iter().map(|&v| v as f64 * 2f64.powi(-(in_frac as i32))).collect();
        let mean = xs.iter().sum::<f64>() / d as f64;
        let var = xs.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / d as f64;
        for i in 0..du {
            let real = (xs[i] - mean) / (var + eps).sqrt() * gamma[i] as f64 * 2f64.powi(-gf)
                + beta[i] as f64 * 2f64.powi(-bf);
            let real_code = (real * 2f64.powi(out_frac as i32)).clamp(lo, hi);
            let err = (y[r * du + i] as f64 - real_code).abs();
            max = max.max(err);
            sum += err;
        }
    }
    (max, sum / (du * rows) as f64)
}

#[test]
fn layer_norm_error_within_two_lsb_for_16_bit_formats() {
    println!("| input frac | output frac | D | max err (LSB) | mean err (LSB) |");
    println!("|---|---|---|---|---|");
    for (fi, fo, d) in [(8, 12, 64), (8, 12, 768), (12, 13, 100), (4, 10, 64), (0, 8, 257)] {
        let (max, mean) = measure(fi, fo, d, 64, 11);
        println!("| {fi} | {fo} | {d} | {max:.3} | {mean:.3} |");
        assert!(max <= 2.0, "in frac {fi}, out frac {fo}, D {d}: max error {max} LSB > 2");
    }
}
