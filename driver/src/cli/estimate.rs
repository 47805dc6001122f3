//! `ecrt estimate`: FPGA resources of a configuration's RTL from Yosys (`synth_xilinx -family xc7`),
//! an estimate until a Vivado run is on record.

use crate::cli::rtl::ConfigArgs;
use ecrt_sim::{estimate, EstimateOptions};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// Estimate LUT, FF, DSP48E1 and BRAM of the accelerator with Yosys (tens of minutes for 2048 bits;
/// results are cached by content).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON object to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.config.config()?;
    let emitted = ecrt_hdl::emit::emit(&config)?;
    let resources =
        estimate(&emitted.verilog, &emitted.manifest.top, &EstimateOptions { progress: true, ..Default::default() })?;
    let report = json!({
        "config": config,
        "verilog_sha256": emitted.manifest.sha256,
        "lut": resources.lut,
        "ff": resources.ff,
        "dsp48e1": resources.dsp48e1,
        "bram36": resources.bram36,
        "lutram": resources.lutram,
        "carry4": resources.carry4,
        "tool": resources.tool,
    });
    crate::cli::emit_report(&report, args.json, args.out.as_ref(), |report| {
        println!(
            "Yosys estimate for the {}-bit accelerator, {} core(s) (not a Vivado result):",
            config.key_bits, config.cores
        );
        for name in ["lut", "ff", "dsp48e1", "bram36", "lutram", "carry4"] {
            println!("  {name:<8} {}", report[name]);
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
