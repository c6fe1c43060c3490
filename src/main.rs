//! `mase`: the command-line interface of mase-rs. Parsing lives in [`cli`]; each command is a
//! file there that calls the library crates.

mod cli;

fn main() -> std::process::ExitCode {
    match cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
