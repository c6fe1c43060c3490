//! `mase`: the command-line interface of mase-rs. Parsing lives in [`cli`]; each command is a
//! file there that calls the library crates.

mod cli;

fn main() -> std::process::ExitCode {
    restore_default_sigpipe();
    match cli::main() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Rust ignores SIGPIPE, which turns `mase info x | head` into a panic on the closed pipe; a
/// command-line tool should end quietly instead, as `cat` does.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
