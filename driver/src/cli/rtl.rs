//! `ecrt rtl`: the accelerator's Verilog for one configuration, and its manifest.

use anyhow::Context;
use ecrt_hdl::config::AcceleratorConfig;
use ecrt_hdl::emit::{emit, write, MANIFEST_FILE, VERILOG_FILE};
use std::path::PathBuf;
use std::process::ExitCode;

/// The accelerator's configuration, as every command that builds or drives it takes it.
#[derive(clap::Args, Clone)]
pub struct ConfigArgs {
    /// Bits of the Paillier modulus n (512 to 4096, a multiple of 64).
    #[arg(long, default_value_t = 2048)]
    pub key_bits: usize,
    /// Bits of a multiplier digit (only 17 is implemented).
    #[arg(long, default_value_t = 17)]
    pub limb_bits: usize,
    /// Width of the exponent's segments (fixed windows), 1 to 6 bits.
    #[arg(long, visible_alias = "segment-bits", default_value_t = 5)]
    pub window_bits: usize,
    /// The reference clock for reported times, in MHz.
    #[arg(long, default_value_t = 100.0)]
    pub clock_mhz: f64,
    #[command(flatten)]
    pub top: TopArgs,
}

/// The accelerator top's parameters (the key size comes from elsewhere: a flag or the key).
#[derive(clap::Args, Clone)]
pub struct TopArgs {
    /// Decryption cores behind the dispatcher and the collector.
    #[arg(long, default_value_t = 1)]
    pub cores: usize,
    /// TDATA width of the AXI4-Stream ports: 64, 128, 256 or 512 bits.
    #[arg(long, default_value_t = 256)]
    pub stream_bits: usize,
}

impl TopArgs {
    /// The configuration that decrypts under `key` (its key size) with these parameters.
    pub fn config_for_key(&self, key: &ecrt_golden::PrivateKey, window_bits: usize) -> AcceleratorConfig {
        let base =
            AcceleratorConfig { window_bits, cores: self.cores, stream_bits: self.stream_bits, ..Default::default() };
        ecrt_driver::sim::config_for_key(key, &base)
    }
}

impl ConfigArgs {
    /// The validated configuration.
    pub fn config(&self) -> anyhow::Result<AcceleratorConfig> {
        let config = AcceleratorConfig {
            key_bits: self.key_bits,
            limb_bits: self.limb_bits,
            window_bits: self.window_bits,
            clock_mhz: self.clock_mhz,
            cores: self.top.cores,
            stream_bits: self.top.stream_bits,
            ..Default::default()
        };
        config.validate()?;
        Ok(config)
    }
}

/// Write the Verilog of the accelerator and its manifest.json.
#[derive(clap::Args)]
pub struct Args {
    /// The output directory.
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.config.config()?;
    let spinner = crate::cli::progress_spinner(&format!("generating the {}-bit RTL", config.key_bits));
    let emitted = emit(&config)?;
    spinner.finish_and_clear();
    write(&emitted, &args.out).with_context(|| format!("cannot write to {}", args.out.display()))?;
    let m = &emitted.manifest;
    eprintln!(
        "ecrt: wrote {} ({} modules, {} digits, {} multiplications per exponentiation) and {} to {}",
        VERILOG_FILE,
        m.modules.len(),
        m.digits,
        m.multiplications_per_exponentiation,
        MANIFEST_FILE,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
