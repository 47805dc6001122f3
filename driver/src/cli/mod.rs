//! The `ecrt` command line: one module per subcommand.

mod bench;
mod bench_host;
mod bench_sim;
mod decrypt;
mod demo;
mod emulate;
mod emulator_process;
mod encrypt;
mod estimate;
mod explore;
mod files;
mod keygen;
mod modexp_bench;
mod multiplier_bench;
mod pareto_plot;
mod rtl;
mod serve;
mod serve_process;
mod status;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Some items of a batch failed; the others were processed and written.
pub const EXIT_ITEM_ERRORS: u8 = 1;
/// Nothing was processed: bad arguments, an unusable key, an I/O failure.
pub const EXIT_FATAL: u8 = 2;

/// Paillier decryption offload, in python-paillier's (phe) formats.
///
/// Keys are pheutil JWK files; ciphertexts are JSON lines as pheutil writes them
/// ({"v": "<decimal>", "e": <exponent>}) or bare decimal integers.
#[derive(Parser)]
#[command(name = "ecrt", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Keygen(keygen::Args),
    Encrypt(encrypt::Args),
    Decrypt(decrypt::Args),
    Bench(bench::Args),
    Rtl(rtl::Args),
    BenchModexp(modexp_bench::Args),
    BenchMultiplier(multiplier_bench::Args),
    Estimate(estimate::Args),
    Explore(explore::Args),
    Emulate(emulate::Args),
    Demo(demo::Args),
    Serve(serve::Args),
    Status(status::Args),
}

/// Where decryptions run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendKind {
    /// eCRT on the host CPU (OpenSSL, constant-time exponentiation), multi-threaded.
    Cpu,
    /// The accelerator's Verilator model (built on first use, then cached).
    Sim,
    /// The accelerator behind Xilinx's XDMA driver (`--device`), on a board or emulated.
    Xdma,
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Keygen(args) => keygen::run(args),
        Command::Encrypt(args) => encrypt::run(args),
        Command::Decrypt(args) => decrypt::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Rtl(args) => rtl::run(args),
        Command::BenchModexp(args) => modexp_bench::run(args),
        Command::BenchMultiplier(args) => multiplier_bench::run(args),
        Command::Estimate(args) => estimate::run(args),
        Command::Explore(args) => explore::run(args),
        Command::Emulate(args) => emulate::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Status(args) => status::run(args),
    }
}

/// Worker threads: the requested count, or one per available core.
fn thread_count(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
}

/// `text` with its control characters escaped (but those in `kept`): text from a service or a
/// device cannot move the cursor, recolour or clear the terminal it is printed on.
pub fn printable(text: &str, kept: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && !kept.contains(c) { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

/// The failed items of a batch, reported on stderr as they come; they pick the exit status.
struct ItemErrors {
    what: &'static str,
    failed: usize,
}

impl ItemErrors {
    fn new(what: &'static str) -> Self {
        ItemErrors { what, failed: 0 }
    }

    /// Item `index` (from 1) failed.
    fn report(&mut self, index: usize, error: impl std::fmt::Display) {
        eprintln!("ecrt: {} {index}: {}", self.what, printable(&error.to_string(), ""));
        self.failed += 1;
    }

    fn exit_code(&self) -> ExitCode {
        if self.failed == 0 {
            ExitCode::SUCCESS
        } else {
            eprintln!("ecrt: {} {}(s) failed; their output is null", self.failed, self.what);
            ExitCode::from(EXIT_ITEM_ERRORS)
        }
    }
}

/// A spinner on stderr for work of unknown length, drawn only on a terminal.
fn progress_spinner(message: &str) -> indicatif::ProgressBar {
    let spinner = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    spinner.set_message(message.to_string());
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}

/// Writes a report to `out` as pretty JSON, and prints it as one JSON line (`json`) or as `table`
/// renders it.
fn emit_report(
    report: &serde_json::Value,
    json: bool,
    out: Option<&PathBuf>,
    table: impl FnOnce(&serde_json::Value),
) -> anyhow::Result<()> {
    if let Some(path) = out {
        std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json {
        println!("{report}");
    } else {
        table(report);
    }
    Ok(())
}
