//! `ecrt decrypt`: pheutil ciphertext lines to values, on a backend.

use crate::cli::files::{open_input, open_output, read_private_key_file};
use crate::cli::rtl::TopArgs;
use crate::cli::{BackendKind, ItemErrors};
use anyhow::Context;
use ecrt_driver::api::{timeout_from_seconds, BackendSpec, Decryptor, Options};
use ecrt_driver::jsonl::{decrypt_stream, LineReader, OutputMode, MAX_LINE_BYTES};
use ecrt_sim::BuildOptions;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Decrypt JSON lines of ciphertexts with a private key.
///
/// Each input line is a pheutil ciphertext object {"v": "<decimal>", "e": <exponent>} or a bare
/// decimal integer (a raw ciphertext, exponent 0). Each output line is the decrypted value as phe's
/// `decrypt` returns it (a JSON int or float), in input order; a line that cannot be decrypted
/// gives `null`, an error on stderr naming its line number, and exit status 1.
#[derive(clap::Args)]
pub struct Args {
    /// The private key, a pheutil JWK (`pheutil genpkey` or `ecrt keygen`).
    #[arg(long)]
    key: PathBuf,
    /// Where decryption runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    /// Read ciphertexts from this file instead of stdin (`-` for stdin).
    #[arg(long = "in", value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the values here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Output the raw plaintext integer (a decimal string) instead of phe's decoded value.
    #[arg(long)]
    raw: bool,
    /// Check every result against the golden model (slow: a software decryption each).
    #[arg(long)]
    verify: bool,
    /// Worker threads for the CPU backend (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// The simulated accelerator (`--backend sim`): the key size comes from the key.
    #[command(flatten)]
    top: TopArgs,
    /// The accelerator's exponent schedule.
    #[command(flatten)]
    schedule: crate::cli::rtl::ScheduleArgs,
    #[command(flatten)]
    device: DeviceArgs,
}

/// Where the XDMA backend finds the board, and how it paces it.
#[derive(clap::Args, Clone)]
pub struct DeviceArgs {
    /// The XDMA device (`--backend xdma`): the prefix of its nodes, `/dev/xdma0` for
    /// `/dev/xdma0_user`, `_h2c_0` and `_c2h_0` (or `DIR/xdma0` under `ecrt emulate --mount DIR`).
    #[arg(long, default_value = "/dev/xdma0")]
    pub device: PathBuf,
    /// Ciphertexts in flight at most.
    #[arg(long, default_value_t = Options::default().queue_depth)]
    pub queue_depth: usize,
    /// Seconds to wait for the next result, with items in flight, before giving up on the device
    /// (0: wait forever; at most 86400).
    #[arg(long, default_value_t = 30.0, value_parser = parse_timeout)]
    pub timeout: f64,
}

/// clap names the option and the value in front of the error.
fn parse_timeout(text: &str) -> Result<f64, String> {
    let seconds = text.trim().parse().unwrap_or(f64::NAN);
    timeout_from_seconds(seconds).map(|_| seconds)
}

impl DeviceArgs {
    pub fn options(&self) -> anyhow::Result<Options> {
        let timeout =
            timeout_from_seconds(self.timeout).map_err(|e| anyhow::anyhow!("--timeout {}: {e}", self.timeout))?;
        Ok(Options { queue_depth: self.queue_depth, timeout })
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut options = args.device.options()?;
    if args.backend != BackendKind::Xdma {
        options.timeout = None; // a batch on the CPU or in Verilator reports when it is done
    }
    let key = read_private_key_file(&args.key)?;
    let spec = match args.backend {
        BackendKind::Cpu => BackendSpec::Cpu { threads: crate::cli::thread_count(args.threads) },
        BackendKind::Sim => BackendSpec::Sim {
            config: args.top.config_for_key(&key, &args.schedule),
            build: BuildOptions { progress: true, ..Default::default() },
            progress: true,
        },
        BackendKind::Xdma => BackendSpec::Xdma { device: args.device.device.clone() },
    };
    let mut lines = LineReader::new(open_input(args.input.as_deref())?, MAX_LINE_BYTES);
    let mut out = open_output(args.out.as_deref(), args.input.as_deref())?;
    let mut decryptor = Decryptor::open(&spec, &key, options)?;
    if let Some(takeover) = decryptor.takeover().filter(|t| t.dropped_results > 0) {
        eprintln!("ecrt: took over {}: {takeover}", args.device.device.display());
    }
    let mode = if args.raw { OutputMode::Raw } else { OutputMode::Decoded };
    let (mut errors, mut number, mut read_error) = (ItemErrors::new("line"), 0usize, None);
    let input = std::iter::from_fn(|| match lines.next_line() {
        Ok(line) => line,
        Err(e) => {
            read_error = Some(e);
            None
        }
    });
    let written = decrypt_stream(&mut decryptor, key.public(), input, mode, args.verify.then_some(&key), |result| {
        number += 1;
        match result {
            Ok(value) => writeln!(out, "{value}"),
            Err(error) => {
                errors.report(number, error);
                writeln!(out, "null")
            }
        }
    });
    if let Some(reason) = decryptor.failure() {
        eprintln!("ecrt: the {} backend failed: {reason}", decryptor.backend_name());
    }
    drop(decryptor);
    written.and_then(|_| out.flush()).context("cannot write the output")?;
    if let Some(e) = read_error {
        anyhow::bail!("cannot read the input after line {number}: {e}");
    }
    Ok(errors.exit_code())
}
