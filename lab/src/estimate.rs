//! `ecrt estimate`: FPGA resources of a configuration's RTL from Yosys (`synth_xilinx -family xc7`),
//! an estimate until a Vivado run is on record, the logic delay of its longest
//! register-to-register path (Yosys `sta`, no routing), and the nets of highest fanout of one
//! full-width core.

use crate::args::ConfigArgs;
use crate::chip::{Part, PROJECTION_PART};
use crate::report::{Config, Figure};
use ecrt_contract::clock::ClockEstimate;
use ecrt_hdl::config::AcceleratorConfig;
use ecrt_sim::timing::PathStep;
use ecrt_sim::{
    estimate, estimate_with_fanout, fanout, logic_delay, EstimateMethod, EstimateOptions, FanoutReport,
    ModuleResources, ResourceEstimate, TimingEstimate,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Estimate LUT, FF, DSP48E1 and BRAM of the accelerator with Yosys, and the logic delay of its
/// longest path (minutes for 2048 bits; results are cached by content, per distinct module).
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
    /// `hierarchical`: each distinct module synthesized once and summed over its instances, the
    /// fanout composed from the same runs (minutes); `flat`: the whole design flattened in one
    /// Yosys run, and the fanout from another (tens of minutes at 2048 bits).
    #[arg(long, value_enum, default_value = "hierarchical")]
    method: Method,
    /// Skip the timing figure (a flattened 512-bit one-core synthesis, a few minutes when not cached).
    #[arg(long)]
    no_timing: bool,
    /// Skip the fanout figure (composed from the resource estimate's units in seconds; with
    /// `--method flat`, a flattened one-core synthesis at the full key width: about ten minutes
    /// and 2.4 GB at 2048 bits when not cached).
    #[arg(long)]
    no_fanout: bool,
}

/// What `ecrt estimate` reports: Yosys's resources of the whole accelerator and, unless
/// `--no-timing`, the logic delay of its longest path (the timing fields null without it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EstimateReport {
    pub config: Config,
    /// SHA-256 of the Verilog estimated: estimates of the same Verilog compare.
    pub verilog_sha256: String,
    pub lut: Figure<u64>,
    pub ff: Figure<u64>,
    pub dsp48e1: Figure<u64>,
    pub bram36: Figure<f64>,
    pub lutram: Figure<u64>,
    pub carry4: Figure<u64>,
    pub method: EstimateMethod,
    /// Every cell type and its count.
    pub cells: BTreeMap<String, u64>,
    pub tool: String,
    /// Most LUTs first; empty from a flat estimate.
    pub by_module: Vec<ModuleResources>,
    /// The longest path's logic delay and the clocks it allows on the part
    /// ([`ecrt_contract::clock`]).
    pub logic_delay_ns: Option<Figure<f64>>,
    pub plausible_clock_mhz: Option<Figure<f64>>,
    pub conservative_clock_mhz: Option<f64>,
    /// The hard block that caps the clocks, when one does.
    pub clock_capped_by: Option<String>,
    pub critical_path: Option<Vec<PathStep>>,
    pub critical_path_summary: Option<String>,
    /// The register- and DSP-driven nets with the most loads in one full-width core (Yosys; the
    /// logic-driven ones apart), and the highest of them; null with `--no-fanout`.
    #[serde(default)]
    pub fanout: Option<FanoutReport>,
    #[serde(default)]
    pub max_fanout: Option<u64>,
    /// The design the timing comes from: [`TIMING_KEY_BITS`], one core.
    pub timing_config: Option<TimingConfig>,
    pub timing_tool: Option<String>,
}

/// The key size and cores of the design a timing figure comes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimingConfig {
    pub key_bits: usize,
    pub cores: usize,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Method {
    Hierarchical,
    Flat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.config.config()?;
    let emitted = ecrt_hdl::emit::emit(&config)?;
    let method = match args.method {
        Method::Hierarchical => EstimateMethod::Hierarchical,
        Method::Flat => EstimateMethod::Flat,
    };
    let opts = EstimateOptions { progress: true, method, ..Default::default() };
    let DesignEstimates { resources, timing, fanout } =
        design_estimates(&config, &emitted, &opts, !args.no_timing, !args.no_fanout)?;
    let part = Part::by_name(&config.part).unwrap_or(PROJECTION_PART);
    let clocks = timing.as_ref().map(|t| ClockEstimate::new(t.logic_delay_ns, &part));
    let report = EstimateReport {
        config: Config::Written(config.clone()),
        verilog_sha256: emitted.manifest.sha256.clone(),
        lut: resources.lut.into(),
        ff: resources.ff.into(),
        dsp48e1: resources.dsp48e1.into(),
        bram36: resources.bram36.into(),
        lutram: resources.lutram.into(),
        carry4: resources.carry4.into(),
        method,
        cells: resources.cells.clone(),
        tool: resources.tool.clone(),
        by_module: resources.by_module.clone(),
        logic_delay_ns: timing.as_ref().map(|t| t.logic_delay_ns.into()),
        plausible_clock_mhz: clocks.as_ref().map(|c| c.plausible_clock_mhz.into()),
        conservative_clock_mhz: clocks.as_ref().map(|c| c.conservative_clock_mhz),
        clock_capped_by: clocks.as_ref().and_then(|c| c.clock_capped_by.clone()),
        critical_path: timing.as_ref().map(|t| t.critical_path.clone()),
        critical_path_summary: timing.as_ref().map(|t| t.path_summary()),
        max_fanout: fanout.as_ref().map(FanoutReport::max_fanout),
        fanout: fanout.clone(),
        timing_config: timing.as_ref().map(|_| TimingConfig { key_bits: TIMING_KEY_BITS, cores: 1 }),
        timing_tool: timing.as_ref().map(|t| t.tool.clone()),
    };
    crate::report::emit_report(&report, args.json, args.out.as_ref(), |report| {
        println!(
            "Yosys estimate for the {}-bit accelerator, {} core(s) (not a Vivado result):",
            config.key_bits, config.cores
        );
        for name in ["lut", "ff", "dsp48e1", "bram36", "lutram", "carry4"] {
            println!("  {name:<8} {}", report[name]);
        }
        if !resources.by_module.is_empty() {
            println!("Where they go (distinct modules, one copy's own cells × copies; `--json` lists all):");
            println!("  {:<44} {:>6} {:>8} {:>8} {:>5}", "module (its first instance)", "copies", "LUT", "FF", "DSP");
            for m in resources.by_module.iter().take(BY_MODULE_ROWS) {
                println!(
                    "  {:<44} {:>6} {:>8} {:>8} {:>5}",
                    m.module,
                    m.instances,
                    m.lut * m.instances,
                    m.ff * m.instances,
                    m.dsp48e1 * m.instances
                );
            }
        }
        if let Some(t) = &timing {
            println!(
                "Longest register-to-register path, logic only (no routing; {TIMING_KEY_BITS}-bit core, flattened):"
            );
            println!("  {t}");
        }
        if let Some(f) = &fanout {
            let print = |nets: &[ecrt_sim::NetFanout], n: usize| {
                for net in nets.iter().take(n) {
                    println!("  {:>6}  {:<7} {}", net.loads, net.driver_type, net.net);
                }
            };
            println!("Highest fanout of a register or DSP, one {}-bit core (Yosys):", config.key_bits);
            print(&f.nets, FANOUT_ROWS);
            println!("Highest fanout of logic (LUT, MUXF7/F8) driven nets, not bounded by copies:");
            print(&f.logic_nets, 3);
        }
        if let Some(c) = &clocks {
            println!(
                "Clocks it allows: {:.1} MHz conservative (1000 / (4 × {:.2} ns)), {:.1} MHz plausible (1000 / (2 × {:.2} ns)); limit: {}",
                c.conservative_clock_mhz, c.logic_delay_ns, c.plausible_clock_mhz, c.logic_delay_ns, c.limit()
            );
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// What Yosys says of one design: its resources, and on request the logic delay of its longest
/// path ([`timing_of`]) and its highest-fanout nets ([`fanout_of`]).
pub struct DesignEstimates {
    pub resources: ResourceEstimate,
    pub timing: Option<TimingEstimate>,
    pub fanout: Option<FanoutReport>,
}

/// Yosys's resources of `emitted` (the RTL of `config`) and, when asked, its timing (beside them)
/// and fanout (from the same units when the design has one core, else from the one-core design's
/// units, most of them the same: see [`fanout_of`]).
pub fn design_estimates(
    config: &AcceleratorConfig,
    emitted: &ecrt_hdl::emit::Emitted,
    opts: &EstimateOptions,
    timed: bool,
    with_fanout: bool,
) -> anyhow::Result<DesignEstimates> {
    fn joined<T>(r: std::thread::Result<anyhow::Result<T>>) -> anyhow::Result<T> {
        r.unwrap_or_else(|_| Err(anyhow::anyhow!("a Yosys run panicked")))
    }
    let top = &emitted.manifest.top;
    let (resources, timing, fanout) = std::thread::scope(|s| {
        let timing = timed.then(|| s.spawn(|| timing_of(config, opts.progress)));
        let (resources, fanout): (anyhow::Result<_>, Option<anyhow::Result<_>>) = if with_fanout && config.cores == 1 {
            match estimate_with_fanout(&emitted.verilog, top, opts) {
                Ok((r, f)) => (Ok(r), Some(Ok(f))),
                Err(e) => (Err(e.into()), None),
            }
        } else if opts.method == EstimateMethod::Flat {
            let fanout = with_fanout.then(|| s.spawn(|| fanout_of(config, opts)));
            (estimate(&emitted.verilog, top, opts).map_err(Into::into), fanout.map(|f| joined(f.join())))
        } else {
            // After the resources, so that the units both designs share are synthesized once.
            let resources = estimate(&emitted.verilog, top, opts);
            let fanout = (with_fanout && resources.is_ok()).then(|| fanout_of(config, opts));
            (resources.map_err(Into::into), fanout)
        };
        (resources, timing.map(|t| joined(t.join())), fanout)
    });
    Ok(DesignEstimates { resources: resources?, timing: timing.transpose()?, fanout: fanout.transpose()? })
}

/// Rows of the per-module table in the text output.
const BY_MODULE_ROWS: usize = 8;
/// Rows of the fanout table in the text output.
const FANOUT_ROWS: usize = 8;

/// The highest-fanout nets of a one-core accelerator of `config`'s key width (fanout grows with
/// the width: a control register reaches every limb), by `opts.method`, cached by content.
pub(crate) fn fanout_of(config: &AcceleratorConfig, opts: &EstimateOptions) -> anyhow::Result<FanoutReport> {
    let unit = AcceleratorConfig { cores: 1, ..config.clone() };
    let emitted = ecrt_hdl::emit::emit(&unit)?;
    Ok(fanout(&emitted.verilog, &emitted.manifest.top, opts)?)
}

/// The key width of the flattened design the timing figure comes from: no path of the accelerator
/// depends on the key width or the number of cores, and a flat synthesis of 512 bits takes minutes.
pub(crate) const TIMING_KEY_BITS: usize = 512;

/// The logic delay of `config`'s longest register-to-register path, from a flattened one-core
/// accelerator of [`TIMING_KEY_BITS`] with `config`'s other parameters (cached by content).
pub(crate) fn timing_of(config: &AcceleratorConfig, progress: bool) -> anyhow::Result<TimingEstimate> {
    let mut unit = config.clone();
    unit.key_bits = TIMING_KEY_BITS;
    unit.cores = 1;
    let emitted = ecrt_hdl::emit::emit(&unit)?;
    Ok(logic_delay(&emitted.verilog, &emitted.manifest.top, &EstimateOptions { progress, ..Default::default() })?)
}
