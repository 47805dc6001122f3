//! The `ecrt` command line: one module per subcommand of the host library's, the service's and the
//! emulator's; the lab's tools (benches, estimates, the sweep) bring their own flags.

mod decrypt;
mod demo;
mod emulate;
mod encrypt;
mod keygen;
mod rtl;
mod serve;
mod status;

use clap::{Parser, Subcommand};
use ecrt_lab::{bench, estimate, explore, lanes_bench, modexp_bench, multiplier_bench};
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

// Parsed once per run: the size of the largest subcommand's flags costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    Keygen(keygen::Args),
    Encrypt(encrypt::Args),
    Decrypt(decrypt::Args),
    Bench(bench::Args),
    Rtl(rtl::Args),
    BenchModexp(modexp_bench::Args),
    BenchMultiplier(multiplier_bench::Args),
    BenchLanes(lanes_bench::Args),
    Estimate(estimate::Args),
    Explore(explore::Args),
    Emulate(emulate::Args),
    Demo(demo::Args),
    Serve(serve::Args),
    Status(status::Args),
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
        Command::BenchLanes(args) => lanes_bench::run(args),
        Command::Estimate(args) => estimate::run(args),
        Command::Explore(args) => explore::run(args),
        Command::Emulate(args) => emulate::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Status(args) => status::run(args),
    }
}

pub use ecrt_driver::redact::printable;

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
