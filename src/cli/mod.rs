//! Command-line parsing (clap) and dispatch. One file per command.

mod args;
mod demo;
mod draw;
mod flow;
mod hw;
mod import;
mod info;
mod parts;
mod passes;
mod pnr;
mod quantize;
mod run;
mod sim;
mod sweep;
mod sweep_slurm;

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
        /// Keep nodes whose inputs are all constants (shape sub-graphs, mask arithmetic on
        /// constants) as graph nodes instead of folding them, to inspect the graph as exported.
        #[arg(long)]
        no_fold: bool,
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
        /// Execute in fixed point: every tensor cast to its format at node boundaries.
        #[arg(long)]
        quantized: bool,
    },
    /// Quantize a checkpoint with a MASE-style TOML config (see examples/quantize_int8.toml).
    Quantize {
        /// Checkpoint prefix.
        prefix: PathBuf,
        /// The config: `by = ...` and `[<key>.config]` tables, or a flow config with `[passes.quantize]`.
        #[arg(long)]
        config: PathBuf,
        /// Output checkpoint prefix.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Compare quantized with float execution (errors, cosine, argmax agreement, accuracy).
    Accuracy {
        /// Checkpoint prefix (quantized).
        prefix: PathBuf,
        /// An input as NAME=FILE.npy (one per graph input).
        #[arg(long, value_name = "NAME=FILE")]
        input: Vec<String>,
        /// Class labels (.npy of integers, one per row of the first output).
        #[arg(long)]
        labels: Option<PathBuf>,
        /// Also compare with the model's own quantized execution: a checkpoint that keeps its
        /// quantizer nodes (QONNX Quant, QDQ; e.g. the import before `raise_qonnx`), run by the
        /// float interpreter on the same inputs.
        #[arg(long, value_name = "PREFIX")]
        against: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Draw a checkpoint's graph as SVG (or DOT when the file ends in .dot).
    Draw {
        /// Checkpoint prefix.
        prefix: PathBuf,
        /// Output file (.svg or .dot).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// List the hardware components with their parameters and defaults.
    Components {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print the README's component table (Markdown).
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
    /// List the named FPGA parts `[[hardware.devices]] part = "NAME"` takes, with their LUTs,
    /// multipliers and memories.
    Parts {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Characterize under Verilator (`mase bench component NAME …`).
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
    /// Synthesize an emitted project (`mase synth DIR`) or one component (`mase synth component
    /// NAME …`): with Yosys synth_xilinx (per-instance resources, estimate next to measured), or
    /// placed and routed on a Lattice ECP5 with `--target ecp5` (Fmax, critical path,
    /// utilisation; a project keeps the report in DIR/pnr_ecp5.json).
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Synth {
        #[command(subcommand)]
        what: Option<SynthWhat>,
        /// Project directory written by `mase emit` / `mase flow`.
        #[arg(required = true)]
        dir: Option<PathBuf>,
        #[command(flatten)]
        target: pnr::TargetArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Bind a quantized checkpoint to components and write the hardware project (top.sv, RTL,
    /// memories, file list, FuseSoC core, report, README).
    Emit {
        /// Checkpoint prefix (quantized).
        prefix: PathBuf,
        /// Hardware configuration (TOML: target_ii, multiplier_budget, lanes, top, nodes.*).
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        rate: flow::Rate,
        /// Project directory to write (new, empty, or an earlier emit's).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Simulate an emitted project under Verilator and compare every output element with the
    /// golden model; writes the outputs as .npy under DIR/sim/ (and with --write-vectors the
    /// golden vectors for the project's cocotb testbench).
    Sim {
        /// The project directory written by `mase emit` or `mase flow`.
        dir: PathBuf,
        #[command(flatten)]
        args: sim::SimArgs,
    },
    /// ONNX model to verified-ready hardware project in one go: import, passes, quantize,
    /// hardware passes, emit.
    Flow {
        /// The ONNX model.
        model: PathBuf,
        /// Full shape of an input with dynamic dimensions, e.g. input=1x8x128.
        #[arg(long = "input-shape", value_name = "NAME=DIMS")]
        input_shape: Vec<String>,
        /// Flow configuration (TOML: [passes.quantize] or [passes.auto_precision],
        /// [calibration] inputs/samples, [hardware]); defaults for everything left out.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Calibration data of a graph input, NAME=FILE.npy (repeatable; a file may stack
        /// several inferences along the batch axis); replaces [calibration] inputs.
        #[arg(long, value_name = "NAME=FILE")]
        calibrate: Vec<String>,
        #[command(flatten)]
        rate: flow::Rate,
        /// Project directory to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Design-space sweep: the flow over precision and rate axes (SWEEP.toml [sweep]), each
    /// point's golden-model accuracy and cost-model figures, the Pareto front; `mase sweep merge`
    /// joins shards.
    #[command(args_conflicts_with_subcommands = true)]
    Sweep {
        #[command(subcommand)]
        merge: Option<SweepWhat>,
        /// The ONNX model.
        #[arg(required = true)]
        model: Option<PathBuf>,
        #[command(flatten)]
        args: sweep::SweepArgs,
        /// Output directory.
        #[arg(short, long, required = true)]
        output: Option<PathBuf>,
    },
    /// The main job on a built-in BERT-tiny-shaped encoder layer: ONNX → quantize → RTL →
    /// Verilator with random stalls, bit-exact against the golden model, with figures.
    Demo {
        /// Output directory (created; only files inside it are written).
        #[arg(short, long, default_value = "mase-demo")]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
enum SweepWhat {
    /// Merge the output directories of shards (`--shard I/N`) into one; the front is
    /// recomputed over all points.
    Merge {
        /// The shards' output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The merged output directory.
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Build one component instance, simulate random rows with random stalls, check it bit-exact
    /// against its model and print latency, II, multipliers and simulation speed.
    Component {
        /// Component name (see `mase components`).
        name: String,
        /// Override an SV parameter, e.g. `DATA_IN_0_TENSOR_SIZE_DIM_0=64`.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        /// Rows of random data.
        #[arg(long, default_value_t = 64)]
        rows: usize,
        /// Seed of data and stalls.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Per-cycle probability of a valid gap or a ready drop in the checked run.
        #[arg(long, default_value_t = 0.2)]
        stall_prob: f64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// On a mismatch, write a VCD of the cycles around the first one here.
        #[arg(long)]
        vcd: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum SynthWhat {
    /// Synthesize one component instance and print LUT, FF, DSP, BRAM and LUTRAM counts (or,
    /// with `--target ecp5`, its Fmax, critical path and utilisation).
    Component {
        /// Component name (see `mase components`).
        name: String,
        /// Override an SV parameter, e.g. `DATA_IN_0_PARALLELISM_DIM_0=4`.
        #[arg(long = "param", value_name = "KEY=VALUE")]
        params: Vec<String>,
        #[command(flatten)]
        target: pnr::TargetArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Parses the command line and runs the command.
pub fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Import { model, output, input_shape, no_raise, no_fold } => {
            import::run(&model, &output, &input_shape, !no_raise, !no_fold)
        }
        Command::Info { prefix, json } => info::run(&prefix, json),
        Command::Passes { prefix, run, args, output, list } => {
            passes::run(prefix.as_deref(), &run, args.as_deref(), output.as_deref(), list)
        }
        Command::Run { prefix, input, output, quantized } => run::run(&prefix, &input, &output, quantized),
        Command::Quantize { prefix, config, output } => quantize::quantize(&prefix, &config, &output),
        Command::Accuracy { prefix, input, labels, against, json } => {
            quantize::accuracy_cmd(&prefix, &input, labels.as_deref(), against.as_deref(), json)
        }
        Command::Draw { prefix, output } => draw::run(&prefix, &output),
        Command::Components { json, markdown } => hw::list(json, markdown),
        Command::Parts { json } => parts::run(json),
        Command::Bench { what: BenchWhat::Component { name, params, rows, seed, stall_prob, json, vcd } } => {
            hw::bench(&hw::BenchArgs { name, params, rows, seed, stall_prob, json, vcd })
        }
        Command::Synth { what: Some(SynthWhat::Component { name, params, target, json }), .. } => {
            match target.ecp5()? {
                Some(opts) => pnr::component(&name, &hw::param_overrides(&params)?, &opts, json),
                None => hw::synth(&name, &params, json),
            }
        }
        Command::Synth { what: None, dir, target, json } => {
            let Some(dir) = dir else {
                anyhow::bail!("mase synth: name a project directory (or `component NAME`)")
            };
            // Read under the project's shared lock: no writer replaces it meanwhile.
            let _read = mase_emit::project::read_lock(&dir)?;
            match target.ecp5()? {
                Some(opts) => pnr::project(&dir, &opts, json),
                None => hw::synth_project(&dir, json),
            }
        }
        Command::Emit { prefix, config, rate, output } => {
            flow::emit(&prefix, config.as_deref(), rate, &output)
        }
        Command::Sim { dir, args } => {
            let _read = mase_emit::project::read_lock(&dir)?;
            sim::sim(&dir, &args)
        }
        Command::Flow { model, input_shape, config, calibrate, rate, output } => {
            flow::flow(&model, &flow::FlowArgs { shapes: input_shape, config, calibrate, rate }, &output)
        }
        Command::Sweep { merge: Some(SweepWhat::Merge { dirs, output }), .. } => sweep::merge(&dirs, &output),
        Command::Sweep { merge: None, model, args, output } => {
            let (Some(model), Some(output)) = (model, output) else {
                anyhow::bail!("mase sweep needs MODEL, --config SWEEP.toml and -o DIR (or: mase sweep merge DIR… -o DIR)");
            };
            sweep::sweep(&model, &args, &output)
        }
        Command::Demo { output } => demo::run(&output),
    }
}
