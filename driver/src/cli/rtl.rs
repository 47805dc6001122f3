//! `ecrt rtl`: the accelerator's Verilog for one configuration, and its manifest; with `--board`,
//! also the board design that Vivado builds into a bitstream (docs/bitstream.md).

use anyhow::Context;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::parser::ValueSource;
use ecrt_contract::config::{AcceleratorConfig, ExponentSchedule};
use ecrt_hdl::board::{self, Board};
use ecrt_hdl::emit::{emit, write, MANIFEST_FILE, VERILOG_FILE};
use std::path::PathBuf;
use std::process::ExitCode;

/// The accelerator's configuration, as every command that builds or drives it takes it.
#[derive(clap::Args, Clone)]
pub struct ConfigArgs {
    /// Bits of the Paillier modulus n (512 to 4096, a multiple of 64).
    #[arg(long, default_value_t = AcceleratorConfig::default().key_bits)]
    pub key_bits: usize,
    /// Bits of a multiplier digit (only 17 is implemented).
    #[arg(long, default_value_t = AcceleratorConfig::default().limb_bits)]
    pub limb_bits: usize,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// The accelerator's clock in MHz: the reference for reported times, and with `rtl --board` the
    /// clock the board makes for it.
    #[arg(long, default_value_t = AcceleratorConfig::default().clock_mhz)]
    pub clock_mhz: f64,
    #[command(flatten)]
    pub top: TopArgs,
}

/// How the exponent's bits become multiplications.
#[derive(clap::Args, Clone)]
pub struct ScheduleArgs {
    /// The exponent schedule: `windows` (fixed windows, left to right, a table multiplication per
    /// window) or `segmented` (MESA's right to left: per bit a multiplication and a squaring).
    #[arg(long, default_value = "windows",
          value_parser = PossibleValuesParser::new(ExponentSchedule::ALL.map(ExponentSchedule::name))
              .try_map(|name| name.parse::<ExponentSchedule>()))]
    pub schedule: ExponentSchedule,
    /// Width of the exponent's windows with `--schedule windows`, 1 to 6 bits [default: 5].
    #[arg(long)]
    pub window_bits: Option<usize>,
}

impl ScheduleArgs {
    /// `config` with this schedule; the segmented one loads the exponent in 1-bit windows.
    pub fn apply(&self, config: AcceleratorConfig) -> AcceleratorConfig {
        let default_window_bits = match self.schedule {
            ExponentSchedule::Windows => AcceleratorConfig::default().window_bits,
            ExponentSchedule::Segmented => 1,
        };
        AcceleratorConfig {
            schedule: self.schedule,
            window_bits: self.window_bits.unwrap_or(default_window_bits),
            ..config
        }
    }
}

/// The accelerator top's parameters (the key size comes from elsewhere: a flag or the key).
#[derive(clap::Args, Clone)]
pub struct TopArgs {
    /// Decryption cores behind the dispatcher and the collector.
    #[arg(long, default_value_t = AcceleratorConfig::default().cores)]
    pub cores: usize,
    /// TDATA width of the AXI4-Stream ports: 64, 128, 256 or 512 bits.
    #[arg(long, default_value_t = AcceleratorConfig::default().stream_bits)]
    pub stream_bits: usize,
    /// Limbs of the multiplier the exponentiation's folding multiplier consumes per step, 1 to 16:
    /// more is fewer cycles per multiplication for more DSP48E1s.
    #[arg(long, default_value_t = AcceleratorConfig::default().digits_per_step)]
    pub digits_per_step: usize,
}

impl TopArgs {
    /// The configuration that decrypts under `key` (its key size) with these parameters.
    pub fn config_for_key(&self, key: &ecrt_golden::PrivateKey, schedule: &ScheduleArgs) -> AcceleratorConfig {
        let base = schedule.apply(AcceleratorConfig {
            cores: self.cores,
            stream_bits: self.stream_bits,
            digits_per_step: self.digits_per_step,
            ..Default::default()
        });
        ecrt_driver::sim::config_for_key(key, &base)
    }
}

impl ConfigArgs {
    /// The validated configuration.
    pub fn config(&self) -> anyhow::Result<AcceleratorConfig> {
        let config = self.unvalidated();
        config.validate()?;
        Ok(config)
    }

    /// The configuration as given, not yet validated.
    fn unvalidated(&self) -> AcceleratorConfig {
        self.schedule.apply(AcceleratorConfig {
            key_bits: self.key_bits,
            limb_bits: self.limb_bits,
            clock_mhz: self.clock_mhz,
            cores: self.top.cores,
            stream_bits: self.top.stream_bits,
            digits_per_step: self.top.digits_per_step,
            ..Default::default()
        })
    }
}

/// Write the Verilog of the accelerator and its manifest.json; with --board, also the board design
/// for Vivado (board top, params.tcl, constraints, build and program scripts).
#[derive(clap::Args)]
pub struct Options {
    /// The output directory.
    #[arg(long)]
    out: PathBuf,
    /// Also write the board design for a bitstream on this board (vc709 or vc707): it sets the part
    /// and the stream width of the board's PCIe link (docs/bitstream.md).
    #[arg(long)]
    board: Option<Board>,
    #[command(flatten)]
    config: ConfigArgs,
}

/// `ecrt rtl`'s arguments: the options, and whether --stream-bits was given (a board fixes the
/// stream width, so an explicit other width is refused rather than overridden).
pub struct Args {
    options: Options,
    stream_bits_given: bool,
}

impl Args {
    fn new(options: Options, matches: &clap::ArgMatches) -> Self {
        let stream_bits_given = matches.value_source("stream_bits") == Some(ValueSource::CommandLine);
        Args { options, stream_bits_given }
    }
}

impl clap::FromArgMatches for Args {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Args::new(Options::from_arg_matches(matches)?, matches))
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.options.update_from_arg_matches(matches)?;
        self.stream_bits_given |= matches.value_source("stream_bits") == Some(ValueSource::CommandLine);
        Ok(())
    }
}

impl clap::Args for Args {
    fn augment_args(command: clap::Command) -> clap::Command {
        Options::augment_args(command)
    }
    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Options::augment_args_for_update(command)
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args { options, stream_bits_given } = args;
    let base = options.config.unvalidated();
    let config = match options.board {
        Some(board) => board::configure(&base, board, stream_bits_given.then_some(base.stream_bits))?,
        None => {
            base.validate()?;
            base
        }
    };
    let spinner = crate::cli::progress_spinner(&format!("generating the {}-bit RTL", config.key_bits));
    let emitted = emit(&config)?;
    spinner.finish_and_clear();
    // The board design first: a clock it cannot make stops before anything is written.
    let design = options.board.map(|board| board::generate(&emitted.manifest, board)).transpose()?;
    let out = &options.out;
    write(&emitted, out).with_context(|| format!("cannot write to {}", out.display()))?;
    let m = &emitted.manifest;
    eprintln!(
        "ecrt: wrote {} ({} modules, {} digits, {} multiplications per exponentiation) and {} to {}",
        VERILOG_FILE,
        m.modules.len(),
        m.digits,
        m.multiplications_per_exponentiation,
        MANIFEST_FILE,
        out.display()
    );
    if let Some(design) = design {
        design.write(out).with_context(|| format!("cannot write to {}", out.display()))?;
        let names: Vec<&str> = design.files.iter().map(|(name, _)| name.as_str()).collect();
        eprintln!(
            "ecrt: wrote the {} board design ({}-bit streams, accelerator clock {:.3} MHz{}): {}\n\
             ecrt: build the bitstream with `vivado -mode batch -source {dir}/build.tcl -tclargs {dir}` (docs/bitstream.md)",
            design.board,
            m.stream_bits,
            design.clock.mhz(),
            if design.clock.is_shared() { ", XDMA's clock" } else { " from an MMCM" },
            names.join(", "),
            dir = out.display(),
        );
    }
    Ok(ExitCode::SUCCESS)
}
