//! `ecrt bench`'s flags, which each backend's bench reads.

use crate::args::backend_parser;
use ecrt_driver::backends::BackendKind;
use std::path::PathBuf;

/// Time decryption on a backend, against phe + gmpy2 on the same ciphertexts when a Python with
/// phe is given (`scripts/bench` sets one up).
#[derive(clap::Args)]
pub struct Args {
    /// The backend to measure.
    #[arg(long, default_value = "cpu",
          value_parser = backend_parser(&[BackendKind::Cpu, BackendKind::Sim, BackendKind::Xdma]))]
    pub backend: BackendKind,
    /// Bits of the modulus n.
    #[arg(long, default_value_t = 2048)]
    pub key_bits: u64,
    /// Ciphertexts per pass (CPU: 64, xdma: 20,000) or in the simulated batch (sim: 64).
    #[arg(long)]
    pub count: Option<usize>,
    /// The XDMA device to measure (xdma); without it, an emulated device that answers at once.
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// The simulated accelerator (sim): its top's parameters.
    #[command(flatten)]
    pub top: crate::args::TopArgs,
    /// The accelerator's exponent schedule.
    #[command(flatten)]
    pub schedule: crate::args::ScheduleArgs,
    /// Skip the Yosys resource estimate (sim; the resource fields are then null).
    #[arg(long)]
    pub no_estimate: bool,
    /// Write the waveform of the idle-pipeline decryption to this VCD file (sim; a slower model).
    #[arg(long)]
    pub vcd: Option<PathBuf>,
    /// Interleaved passes of each measure; the median pass counts.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Threads for the throughput measure (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// A Python interpreter with phe (and gmpy2) installed, to measure phe side by side.
    #[arg(long)]
    pub phe_python: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON object to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
}
