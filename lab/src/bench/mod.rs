//! `ecrt bench`: decryption speed of a backend, measured side by side with what it is compared
//! with, in one run: the CPU against phe + gmpy2 ([`cpu`]), the simulated accelerator's cycles and
//! resources ([`sim`]), the host's own cost per decryption on the XDMA path ([`host`]).

mod args;
pub mod cpu;
pub mod host;
pub mod sim;

pub use args::Args;
use ecrt_driver::backends::BackendKind;
use std::process::ExitCode;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.backend {
        BackendKind::Sim => sim::run(&args),
        BackendKind::Xdma => host::run(&args),
        BackendKind::Cpu | BackendKind::Service => cpu::run(&args),
    }
}
