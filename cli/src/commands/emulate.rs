//! `ecrt emulate`: serve an emulated XDMA device (FUSE, backed by the Verilator model) until
//! SIGINT or SIGTERM.

use anyhow::Context;
use ecrt_emulate::{build_responder, Emulator, EmulatorOptions, Fault, ResponderKind};
use ecrt_lab::args::ConfigArgs;
use ecrt_sim::BuildOptions;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Emulate the board's XDMA device nodes (xdma0_user, xdma0_h2c_0, xdma0_c2h_0) in a directory,
/// backed by the accelerator's Verilator model, until interrupted (SIGINT or SIGTERM).
///
/// Drivers open DIR/xdma0_user etc. as they would /dev/xdma0_user. Needs FUSE: /dev/fuse, and
/// root or fusermount3 (the fuse3 package).
#[derive(clap::Args)]
pub struct Args {
    /// The directory to mount the device nodes in: empty, or created if missing.
    #[arg(long, value_name = "DIR")]
    mount: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
    /// What answers requests: `rtl`, the Verilator model (built on first use, then cached), or
    /// `instant`, a stand-in that answers at once with fake plaintexts (for measuring the host's
    /// own overhead).
    #[arg(long, default_value = "rtl", value_name = "rtl|instant")]
    responder: ResponderKind,
    /// Inject a fault (repeatable): `stall-after=N` (no result leaves after N; requests are taken
    /// while the cores have room) or `corrupt-result=K` (bit 31 of word 1 of the K-th result,
    /// 0-based, is flipped).
    #[arg(long = "fault", value_name = "SPEC")]
    faults: Vec<Fault>,
    /// How long an H2C write or a C2H read may wait before failing with ETIMEDOUT, in ms (at
    /// most a day: larger values would overflow a deadline).
    #[arg(long, default_value_t = 10_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    timeout_ms: u64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.config.config()?;
    let mut options = EmulatorOptions::new(config.clone()).with_timeout(Duration::from_millis(args.timeout_ms.max(1)));
    options.responder = args.responder;
    options.faults = args.faults;
    options.build = BuildOptions { progress: true, ..Default::default() };
    if args.responder == ResponderKind::Rtl {
        eprintln!(
            "ecrt emulate: building the {}-bit Verilator model (minutes the first time; cached after)",
            config.key_bits
        );
    }
    // Until the mount exists, a signal may end the process as usual (a build can be interrupted).
    let responder = build_responder(&options)?;
    let mut signals = Signals::new([SIGINT, SIGTERM]).context("cannot install the signal handlers")?;
    let emulator = Emulator::mount_responder(&args.mount, &options, responder)?;
    eprintln!(
        "ecrt emulate: {} mounted at {} ({})",
        ecrt_emulate::DEVICE_NAME,
        emulator.mount_dir().display(),
        emulator.summary()
    );
    if let Some(signal) = signals.forever().next() {
        let name = if signal == SIGINT { "SIGINT" } else { "SIGTERM" };
        eprintln!("ecrt emulate: {name}: unmounting {}", emulator.mount_dir().display());
    }
    emulator.unmount()?;
    Ok(ExitCode::SUCCESS)
}
