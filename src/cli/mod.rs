//! Command-line parsing (clap) and dispatch. One file per command.

mod args;
mod demo;
mod draw;
mod import;
mod info;
mod passes;
mod run;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// mase: a trained model (ONNX) in, a verified streaming accelerator (SystemVerilog) out.
#[derive(Parser)]
#[command(name = "mase", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import an ONNX model into a MaseGraph checkpoint (PREFIX.json + PREFIX.safetensors).
    Import {
        /// The ONNX file.
        model: PathBuf,
        /// Output checkpoint prefix.
        #[arg(short, long)]
        output: PathBuf,
        /// Fix an input's shape, e.g. `input=1x8x128` (needed for dynamic dimensions).
        #[arg(long = "input-shape", value_name = "NAME=DIMS")]
        input_shape: Vec<String>,
        /// Keep the ONNX ops as imported (skip the raising passes).
        #[arg(long)]
        no_raise: bool,
    },
    /// Print a checkpoint's nodes as a table (or every node's metadata as JSON).
    Info {
        /// Checkpoint prefix.
        prefix: PathBuf,
        /// Print JSON: every node's name, op kind, mase_type, mase_op, shapes and metadata.
        #[arg(long)]
        json: bool,
    },
    /// Run passes on a checkpoint, or list the registered passes.
    Passes {
        /// Checkpoint prefix (not needed with --list).
        prefix: Option<PathBuf>,
        /// Comma-separated pass names, run in order.
        #[arg(long, value_delimiter = ',')]
        run: Vec<String>,
        /// TOML file with one table of arguments per pass name.
        #[arg(long)]
        args: Option<PathBuf>,
        /// Output checkpoint prefix.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// List the registered passes.
        #[arg(long)]
        list: bool,
    },
    /// Execute a checkpoint with the float interpreter on .npy inputs.
    Run {
        /// Checkpoint prefix.
        prefix: PathBuf,
        /// An input as NAME=FILE.npy (one per graph input).
        #[arg(long, value_name = "NAME=FILE")]
        input: Vec<String>,
        /// Output .npy file (with several outputs: OUT.0.npy, OUT.1.npy, …).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Draw a checkpoint's graph as SVG (or DOT when the file ends in .dot).
    Draw {
        /// Checkpoint prefix.
        prefix: PathBuf,
        /// Output file (.svg or .dot).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// The main job on a built-in BERT-tiny-shaped encoder layer.
    Demo {
        /// Output directory (created; only files inside it are written).
        #[arg(short, long, default_value = "mase-demo")]
        output: PathBuf,
    },
}

/// Parses the command line and runs the command.
pub fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Import { model, output, input_shape, no_raise } => {
            import::run(&model, &output, &input_shape, !no_raise)
        }
        Command::Info { prefix, json } => info::run(&prefix, json),
        Command::Passes { prefix, run, args, output, list } => {
            passes::run(prefix.as_deref(), &run, args.as_deref(), output.as_deref(), list)
        }
        Command::Run { prefix, input, output } => run::run(&prefix, &input, &output),
        Command::Draw { prefix, output } => draw::run(&prefix, &output),
        Command::Demo { output } => demo::run(&output),
    }
}
