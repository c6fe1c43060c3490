//! Scratch (not committed): prints the Yosys read+chparam prelude of a component instance.
use mase_hwlib::{lookup, resolve_params};
use mase_sim::bench::component_build_spec;
use mase_sim::ParamValue;
use rand::SeedableRng;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let c = lookup(&a[0]).unwrap();
    let mut o: Vec<(String, i64)> = if a.len() > 2 && a[1] == "--test" {
        c.test_params()[a[2].parse::<usize>().unwrap()].iter().map(|(k, v)| (k.to_string(), *v)).collect()
    } else {
        Vec::new()
    };
    let skip = if a.len() > 2 && a[1] == "--test" { 3 } else { 1 };
    let o2: Vec<(String, i64)> = a[skip..]
        .iter()
        .map(|s| {
            let (k, v) = s.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    o.extend(o2);
    let p = resolve_params(c, &o).unwrap();
    eprintln!("ntests {}", c.test_params().len());
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let stim = c.random_stimulus(&p, 1, &mut rng);
    let spec = component_build_spec(c, &p, &stim, false).unwrap();
    for f in &spec.sources {
        println!("read_verilog -sv {}", f.display());
    }
    print!("chparam");
    for (k, v) in &spec.params {
        match v {
            ParamValue::Int(i) => print!(
                " -set {k} {}",
                if *i >= 0 { i.to_string() } else { format!("32'sh{:08x}", *i as i32 as u32) }
            ),
            ParamValue::Str(s) => print!(" -set {k} \"{s}\""),
        }
    }
    println!(" {}\nhierarchy -check -top {}", spec.top, spec.top);
    eprintln!("est {:?}", c.resources(&p));
}
