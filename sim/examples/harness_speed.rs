//! Harness-speed bench: the Rust harness (drivers, monitors, scoreboard) against a plain C++ loop
//! (`testbenches/harness_speed_main.cpp`) driving the same cached shared library through the same
//! C ABI. Prints both rates and their ratio; asserts no timing.
//!
//! `cargo run --release -p mase-sim --example harness_speed [-- COMPONENT CYCLES]`
//! (default: `relu` at its defaults, 4 lanes of 8 bits, 2,000,000 cycles).

use std::process::Command;

use mase_hwlib::{lookup, resolve_params};
use mase_sim::{build, component_build_spec, run_streams, Model, RunConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map(String::as_str).unwrap_or("relu");
    let cycles: u64 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(2_000_000);
    let c = lookup(name)?;
    let p = resolve_params(c, &[] as &[(&str, i64)])?;
    let streams = c.streams(&p);
    if streams.len() != 2 || streams.iter().any(|s| s.port_width() > 32) {
        return Err(
            format!("{name}: the C++ baseline drives one input and one output stream of <= 32 bits").into()
        );
    }
    // As many rows as make `cycles` cycles at the component's II, so both loops run alike.
    let rows = (cycles / c.cost(&p).ii_cycles.max(1)).max(1) as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let stim = c.random_stimulus(&p, rows, &mut rng);
    let b = build(&component_build_spec(c, &p, &stim, false)?)?;
    println!("library: {} (cache hit: {}, {:.1} s)", b.lib.display(), b.cache_hit, b.build_s);

    // C++ baseline, compiled next to the library.
    let exe = b.lib.with_file_name("harness_speed_main");
    if !exe.is_file() {
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../testbenches/harness_speed_main.cpp");
        let st = Command::new("g++").args(["-O3", "-o"]).arg(&exe).arg(src).arg("-ldl").status()?;
        if !st.success() {
            return Err("compiling the C++ baseline failed".into());
        }
    }
    // Alternate the two three times and keep each one's best (the machine is shared).
    let expected = c.model(&p, &stim)?;
    let (mut cpp_rate, mut rust_rate, mut rust_cycles, mut raw_rate) = (0f64, 0f64, 0u64, 0f64);
    for _ in 0..3 {
        let out = Command::new(&exe)
            .arg(&b.lib)
            .arg(cycles.to_string())
            .arg(streams[0].port_width().to_string())
            .arg(streams[1].port_width().to_string())
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<f64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        if !out.status.success() || f.len() < 3 {
            return Err(format!("C++ baseline failed: {text}{}", String::from_utf8_lossy(&out.stderr)).into());
        }
        cpp_rate = cpp_rate.max(f[0] / f[2]);

        // Rust harness: full drivers/monitors/scoreboard, no stalls.
        let mut m = Model::new(&b)?;
        let r = run_streams(&mut m, &streams, &stim.inputs, &expected, &RunConfig::default())?;
        assert_eq!(r.mismatch_count, 0, "harness run not bit-exact");
        rust_rate = rust_rate.max(r.cycles as f64 / r.wall_s);
        rust_cycles = r.cycles;
        raw_rate = raw_rate.max(raw_loop(&b, cycles)?);
    }
    println!("C++ loop:     {cpp_rate:>12.0} cycles/s ({cycles} cycles, best of 3)");
    println!("Rust harness: {rust_rate:>12.0} cycles/s ({rust_cycles} cycles, scoreboard on, best of 3)");
    println!("Rust raw loop: {raw_rate:>11.0} cycles/s (the C++ loop's work through Model::set/get)");
    println!("ratio Rust harness/C++: {:.2}", rust_rate / cpp_rate);
    Ok(())
}

/// The C++ loop's exact work written in Rust against [`Model`] (no drivers, no scoreboard).
fn raw_loop(b: &mase_sim::Build, cycles: u64) -> Result<f64, Box<dyn std::error::Error>> {
    let mut m = Model::new(b)?;
    let [clk, rst, din, din_v, din_r, dout, dout_v, dout_r] = [0usize, 1, 2, 3, 4, 5, 6, 7];
    m.set(rst, 1);
    for _ in 0..3 {
        m.set(clk, 0);
        m.eval()?;
        m.set(clk, 1);
        m.eval()?;
    }
    m.set(rst, 0);
    m.set(clk, 0);
    let (mut next, mut sum, mut beats) = (0u32, 0u64, 0u64);
    let t0 = std::time::Instant::now();
    for _ in 0..cycles {
        m.set(din, next as u64);
        m.set(din_v, 1);
        m.set(dout_r, 1);
        m.eval()?;
        if m.get(din_r) != 0 {
            next = next.wrapping_mul(1664525).wrapping_add(1013904223);
        }
        if m.get(dout_v) != 0 {
            sum = sum.wrapping_mul(31).wrapping_add(m.get(dout));
            beats += 1;
        }
        m.set(clk, 1);
        m.eval()?;
        m.set(clk, 0);
    }
    let rate = cycles as f64 / t0.elapsed().as_secs_f64();
    std::hint::black_box((sum, beats));
    Ok(rate)
}
