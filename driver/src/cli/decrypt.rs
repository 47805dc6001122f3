//! `ecrt decrypt`: pheutil ciphertext lines to values, on a backend.

use crate::cli::rtl::TopArgs;
use crate::cli::{batch_lines, read_input, report_item_errors, write_output, BackendKind};
use anyhow::Context;
use ecrt_driver::api::{BackendSpec, Decryptor, Options};
use ecrt_driver::jsonl::{decrypt_lines, OutputMode};
use ecrt_golden::phe_format::read_private_key;
use ecrt_sim::BuildOptions;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    /// The simulated accelerator's exponent window width.
    #[arg(long, default_value_t = 5)]
    window_bits: usize,
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
    /// Seconds without any result, with items in flight, before the device counts as stalled
    /// (0: wait forever).
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
}

impl DeviceArgs {
    pub fn options(&self) -> anyhow::Result<Options> {
        anyhow::ensure!(self.timeout.is_finite() && self.timeout >= 0.0, "--timeout must be a number of seconds");
        let timeout = (self.timeout > 0.0).then(|| Duration::from_secs_f64(self.timeout));
        Ok(Options { queue_depth: self.queue_depth, timeout })
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let key_text = std::fs::read_to_string(&args.key).with_context(|| format!("cannot read {}", args.key.display()))?;
    let key = read_private_key(&key_text).with_context(|| format!("cannot use key file {}", args.key.display()))?;
    let spec = match args.backend {
        BackendKind::Cpu => BackendSpec::Cpu { threads: crate::cli::thread_count(args.threads) },
        BackendKind::Sim => BackendSpec::Sim {
            config: args.top.config_for_key(&key, args.window_bits),
            build: BuildOptions { progress: true, ..Default::default() },
            progress: true,
        },
        BackendKind::Xdma => BackendSpec::Xdma { device: args.device.device.clone() },
    };
    let input = read_input(args.input.as_deref().filter(|p| p.as_os_str() != "-"))?;
    let mut options = args.device.options()?;
    if args.backend != BackendKind::Xdma {
        options.timeout = None; // a batch on the CPU or in Verilator reports when it is done
    }
    let mut decryptor = Decryptor::open(&spec, &key, options)?;
    let mode = if args.raw { OutputMode::Raw } else { OutputMode::Decoded };
    let outcome = decrypt_lines(&mut decryptor, key.public(), &batch_lines(&input), mode, args.verify.then_some(&key));
    if let Some(reason) = decryptor.failure() {
        eprintln!("ecrt: the {} backend failed: {reason}", decryptor.backend_name());
    }
    drop(decryptor);
    write_output(args.out.as_ref(), &outcome.render())?;
    Ok(report_item_errors("line", outcome.errors()))
}
