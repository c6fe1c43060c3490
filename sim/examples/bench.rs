//! Prints a component's [`mase_sim::BenchReport`] as JSON (the library call behind
//! `mase bench component`), and with `--synth` its [`mase_sim::SynthReport`].
//!
//! `cargo run --release -p mase-sim --example bench -- NAME [KEY=VALUE ...] [--rows N] [--seed S]
//! [--stall-prob P] [--synth]`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args
        .next()
        .ok_or("usage: bench NAME [KEY=VALUE ...] [--rows N] [--seed S] [--stall-prob P] [--synth]")?;
    let (mut params, mut rows, mut seed, mut stall, mut synth) = (Vec::new(), 64usize, 1u64, 0.0f64, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rows" => rows = args.next().ok_or("--rows needs a value")?.parse()?,
            "--seed" => seed = args.next().ok_or("--seed needs a value")?.parse()?,
            "--stall-prob" => stall = args.next().ok_or("--stall-prob needs a value")?.parse()?,
            "--synth" => synth = true,
            kv => {
                let (k, v) = kv.split_once('=').ok_or_else(|| format!("expected KEY=VALUE, got `{kv}`"))?;
                params.push((k.to_string(), v.parse::<i64>()?));
            }
        }
    }
    let r = mase_sim::bench_component(&name, &params, rows, seed, stall)?;
    println!("{}", serde_json::to_string_pretty(&r)?);
    if synth {
        let s = mase_sim::synth_component(&name, &params)?;
        println!("{}", serde_json::to_string_pretty(&s)?);
    }
    Ok(())
}
