//! `mase`: the command-line interface.
fn main() {}
