//! `ecrt rtl`: the accelerator's Verilog for one configuration, and its manifest; with `--board`,
//! also the board design that Vivado builds into a bitstream (docs/bitstream.md).

use anyhow::Context;
use clap::parser::ValueSource;
use ecrt_hdl::board::{self, Board};
use ecrt_hdl::emit::{emit, write, MANIFEST_FILE, VERILOG_FILE};
use ecrt_lab::args::ConfigArgs;
use std::path::PathBuf;
use std::process::ExitCode;

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

/// `ecrt rtl`'s arguments: the options, and whether --stream-bits and --clock-mhz were given (a
/// board fixes the stream width, so an explicit other width is refused rather than overridden; a
/// board design's clock defaults to the design's conservative clock, not to the flag's default).
pub struct Args {
    options: Options,
    stream_bits_given: bool,
    clock_given: bool,
}

fn given(matches: &clap::ArgMatches, id: &str) -> bool {
    matches.value_source(id) == Some(ValueSource::CommandLine)
}

impl Args {
    fn new(options: Options, matches: &clap::ArgMatches) -> Self {
        Args { options, stream_bits_given: given(matches, "stream_bits"), clock_given: given(matches, "clock_mhz") }
    }
}

impl clap::FromArgMatches for Args {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Args::new(Options::from_arg_matches(matches)?, matches))
    }
    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.options.update_from_arg_matches(matches)?;
        self.stream_bits_given |= given(matches, "stream_bits");
        self.clock_given |= given(matches, "clock_mhz");
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
    let Args { options, stream_bits_given, clock_given } = args;
    let base = options.config.unvalidated();
    let config = match options.board {
        Some(board) => {
            let mut config = board::configure(&base, board, stream_bits_given.then_some(base.stream_bits))?;
            if !clock_given {
                config.clock_mhz = default_clock(&config, board)?;
            }
            config
        }
        None => {
            base.validate()?;
            base
        }
    };
    let spinner = ecrt_driver::batch::progress_spinner(&format!("generating the {}-bit RTL", config.key_bits));
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

/// The design's conservative clock, rounded down to one the board makes (a timing run of
/// minutes the first time, then cached).
fn default_clock(config: &ecrt_contract::config::AcceleratorConfig, board: Board) -> anyhow::Result<f64> {
    let clocks = ecrt_lab::clocked::design_clocks(config)?;
    let clock = ecrt_lab::clocked::default_board_clock(&clocks, board)?;
    eprintln!(
        "ecrt: accelerator clock {:.3} MHz: the design's conservative clock, 1000 / (4 × {:.2} ns of logic) = {:.1} MHz, \
         rounded down to a clock the {board} makes; --clock-mhz sets another",
        clock.mhz(),
        clocks.logic_delay_ns,
        clocks.conservative_clock_mhz,
    );
    Ok(clock.mhz())
}
