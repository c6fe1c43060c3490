//! Writes `rtl/mase_layer_norm_rsqrt_lut.sv`, the seed table of `layer_norm`'s reciprocal
//! square root, from `mase_hwlib::components::layer_norm::rsqrt_lut_sv` (a unit test checks the
//! file is up to date). Run: `cargo run -p mase-hwlib --example layer_norm_lut`.

fn main() -> std::io::Result<()> {
    let path = mase_hwlib::rtl_dir().join("mase_layer_norm_rsqrt_lut.sv");
    std::fs::write(&path, mase_hwlib::components::layer_norm::rsqrt_lut_sv())?;
    println!("wrote {}", path.display());
    Ok(())
}
