//! `ecrt decrypt`: pheutil ciphertext lines to values, on a backend.

use crate::commands::ItemErrors;
use anyhow::Context;
use ecrt_driver::api::{timeout_from_seconds, Decryptor, Options};
use ecrt_driver::backends::service::ServiceClient;
use ecrt_driver::backends::{BackendKind, BackendSettings};
use ecrt_driver::files::{open_input, open_output};
use ecrt_driver::jsonl::{decrypt_stream, LineReader, OutputMode, MAX_LINE_BYTES};
use ecrt_driver::key_file::{read_private_key_file, read_public_key_file};
use ecrt_golden::{PrivateKey, PublicKey};
use ecrt_lab::args::backend_parser;
use ecrt_lab::args::TopArgs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Decrypt JSON lines of ciphertexts with a private key, or through a running `ecrt serve`
/// that holds it (`--service SOCKET --public-key FILE`: no private key here).
///
/// Each input line is a pheutil ciphertext object {"v": "<decimal>", "e": <exponent>} or a bare
/// decimal integer (a raw ciphertext, exponent 0). Each output line is the decrypted value as phe's
/// `decrypt` returns it (a JSON int or float), in input order; a line that cannot be decrypted
/// gives `null`, an error on stderr naming its line number, and exit status 1.
#[derive(clap::Args)]
pub struct Args {
    /// The private key, a pheutil JWK (`pheutil genpkey` or `ecrt keygen`).
    #[arg(long, required_unless_present = "service")]
    key: Option<PathBuf>,
    /// Where decryption runs (default: cpu).
    #[arg(long, conflicts_with = "service",
          value_parser = backend_parser(&[BackendKind::Cpu, BackendKind::Sim, BackendKind::Xdma]))]
    backend: Option<BackendKind>,
    /// Decrypt through the `ecrt serve` listening at this socket, under the key of `--public-key`
    /// or `--key-id`.
    #[arg(long, value_name = "SOCKET")]
    service: Option<PathBuf>,
    /// The public key (a pheutil JWK) whose private key the service holds.
    #[arg(long, value_name = "FILE", requires = "service", conflicts_with_all = ["key", "key_id"])]
    public_key: Option<PathBuf>,
    /// The service's key, by the id `ecrt status` shows (its public key is fetched from the service).
    #[arg(long, value_name = "ID", requires = "service", conflicts_with = "key")]
    key_id: Option<String>,
    /// Read ciphertexts from this file instead of stdin (`-` for stdin).
    #[arg(long = "in", value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the values here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Output the raw plaintext integer (a decimal string) instead of phe's decoded value.
    #[arg(long)]
    raw: bool,
    /// Check every result against the golden model (slow: a software decryption each; needs `--key`).
    #[arg(long, requires = "key")]
    verify: bool,
    /// Worker threads for the CPU backend (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// The simulated accelerator (`--backend sim`): the key size comes from the key.
    #[command(flatten)]
    top: TopArgs,
    /// The accelerator's exponent schedule.
    #[command(flatten)]
    schedule: ecrt_lab::args::ScheduleArgs,
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

/// The public key a service client decrypts under: from `--public-key`, from the service by
/// `--key-id`, or the public half of `--key`.
fn service_public_key(
    args: &Args,
    socket: &Path,
    key: Option<&PrivateKey>,
    timeout: Option<Duration>,
) -> anyhow::Result<PublicKey> {
    if let Some(path) = &args.public_key {
        return read_public_key_file(path);
    }
    if let Some(id) = &args.key_id {
        return Ok(ServiceClient::connect_within(socket, timeout)?.public_key(id)?);
    }
    key.map(|k| k.public().clone()).context("give the key to decrypt under: --public-key FILE or --key-id ID")
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut options = args.device.options()?;
    let backend = args.backend.unwrap_or(BackendKind::Cpu);
    if args.service.is_none() && backend != BackendKind::Xdma {
        options.timeout = None; // a batch on the CPU or in Verilator reports when it is done
    }
    let key = args.key.as_deref().map(read_private_key_file).transpose()?;
    let mut lines = LineReader::new(open_input(args.input.as_deref())?, MAX_LINE_BYTES);
    let mut out = open_output(args.out.as_deref(), args.input.as_deref())?;
    let (mut decryptor, public) = match (&args.service, &key) {
        (Some(socket), key) => {
            let public = service_public_key(&args, socket, key.as_ref(), options.timeout)?;
            (Decryptor::connect(socket, &public, options)?, public)
        }
        (None, Some(key)) => {
            let settings = BackendSettings {
                threads: args.threads,
                device: Some(args.device.device.clone()),
                socket: None,
                sim: args.top.base(&args.schedule),
                progress: true,
            };
            let spec = backend.spec(&settings, key)?;
            (Decryptor::open(&spec, key, options)?, key.public().clone())
        }
        (None, None) => unreachable!("clap requires --key without --service"),
    };
    if let Some(notice) = &decryptor.open_report().notice {
        eprintln!("ecrt: {}", crate::commands::printable(notice, ""));
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
    let verify = if args.verify { key.as_ref() } else { None };
    let written = decrypt_stream(&mut decryptor, &public, input, mode, verify, |result| {
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
