//! `ecrt explore`: the configuration space at a glance. For every point of a sweep (key bits ×
//! digits per step × window bits) it takes the cycles from the configuration's exact formulas
//! (checked against Verilator in the accelerator's tests), the resources of a one-core
//! accelerator from the fast Yosys estimates, and the logic delay of its longest path; it fills an
//! xc7vx690t with as many cores as fit and projects the chip's throughput. It prints a table and
//! writes `explore.json` and `pareto.svg` (latency against chip throughput) to `--out`.
//!
//! Only the fixed-window exponent schedule is built in RTL, so it is the only schedule swept.

use crate::cli::estimate::timing_of;
use crate::cli::pareto_plot;
use ecrt_contract::config::{AcceleratorConfig, ExponentSchedule};
use ecrt_driver::batch::parallel_map;
use ecrt_driver::chip::{
    cores_that_fit, schoolbook_bound_per_decryption, Usage, MESA_CYCLES, PROJECTION_PART, REFERENCE_MHZ,
    TARGET_THROUGHPUT,
};
use ecrt_sim::{estimate, EstimateOptions, ResourceEstimate, TimingEstimate};
use serde::Serialize;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// Sweep accelerator configurations: exact cycles, Yosys resources and logic delay, cores per
/// xc7vx690t and the chip's projected throughput; a table, explore.json and a Pareto plot
/// (tens of minutes on a cold cache at 2048 bits; repeated, the time to generate each point's
/// Verilog).
#[derive(clap::Args)]
pub struct Args {
    /// Bits of the modulus n; a comma-separated list sweeps several.
    #[arg(long, value_delimiter = ',', default_value = "2048")]
    key_bits: Vec<usize>,
    /// Limbs per step of the folding multiplier (k) to sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,8")]
    digits_per_step: Vec<usize>,
    /// Exponent schedules to sweep: `windows` (each window width of --window-bits) and `segmented`.
    #[arg(long, value_delimiter = ',', default_value = "windows,segmented")]
    schedule: Vec<ExponentSchedule>,
    /// Window widths of the windows schedule to sweep.
    #[arg(long, value_delimiter = ',', default_value = "4,5,6")]
    window_bits: Vec<usize>,
    /// TDATA width of the stream ports.
    #[arg(long, default_value_t = AcceleratorConfig::default().stream_bits)]
    stream_bits: usize,
    /// Where to write explore.json and pareto.svg.
    #[arg(long, default_value = "target/explore")]
    out: PathBuf,
    /// Skip the logic-delay runs (a flattened 512-bit core each); the plausible-clock figures are
    /// then null.
    #[arg(long)]
    no_timing: bool,
    /// Print the JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// One configuration's figures. Resources are of a one-core accelerator (the shared top
/// included); the chip figures fill an xc7vx690t with as many of it as fit.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub config: AcceleratorConfig,
    pub schedule: &'static str,
    /// An idle core, first request beat in to last result beat out.
    pub latency_cycles: usize,
    pub latency_ms_100mhz: f64,
    /// The pace of one busy core.
    pub cycles_per_decryption_per_core: usize,
    /// What the stream ports need per decryption; with many cores they set the pace.
    pub stream_cycles_per_decryption: usize,
    pub dsp48e1: u64,
    pub lut: u64,
    pub ff: u64,
    pub bram36: f64,
    pub lutram: u64,
    pub cores_per_xc7vx690t: u64,
    pub xc7vx690t_limiting_resource: &'static str,
    /// The chip's pace: a core's pace over the cores, or the stream's, whichever is slower.
    pub cycles_per_decryption_chip: f64,
    pub decryptions_per_s_100mhz: f64,
    pub logic_delay_ns: Option<f64>,
    pub plausible_clock_mhz: Option<f64>,
    pub decryptions_per_s_plausible_clock: Option<f64>,
    /// One core's DSP48E1s times its pace.
    pub dsp_cycles_per_decryption: f64,
    pub ratio_to_schoolbook_bound: f64,
    /// Whether 2048-bit targets hold (null for other key sizes): MESA's latency, the chip's pace.
    pub meets_latency_target: Option<bool>,
    pub meets_throughput_target: Option<bool>,
    /// On the Pareto front of its key size: no other point has both a lower latency and a higher
    /// chip throughput at 100 MHz (nor one better and one equal).
    pub pareto: bool,
}

impl Point {
    /// The figures of `config` with these estimates; `pareto` is set by [`mark_pareto`].
    pub fn new(config: &AcceleratorConfig, resources: &ResourceEstimate, timing: Option<&TimingEstimate>) -> Point {
        let fit = cores_that_fit(&Usage::of_estimate(resources, config.cores), &PROJECTION_PART);
        let (cores, limit) = fit.map_or((0, "none"), |f| (f.cores, f.limit));
        let (latency, period) = (config.latency_cycles(), config.cycles_per_decryption_per_core());
        let dsp_cycles = resources.dsp48e1 as f64 / config.cores as f64 * period as f64;
        let chip_cycles = (period as f64 / cores.max(1) as f64).max(config.stream_cycles_per_decryption() as f64);
        let per_s = |mhz: f64| if cores == 0 { 0.0 } else { mhz * 1e6 / chip_cycles };
        let clock = timing.map(TimingEstimate::plausible_clock_mhz);
        let is_2048 = config.key_bits == 2048;
        Point {
            config: config.clone(),
            schedule: config.schedule.name(),
            latency_cycles: latency,
            latency_ms_100mhz: latency as f64 / (REFERENCE_MHZ * 1e3),
            cycles_per_decryption_per_core: period,
            stream_cycles_per_decryption: config.stream_cycles_per_decryption(),
            dsp48e1: resources.dsp48e1,
            lut: resources.lut,
            ff: resources.ff,
            bram36: resources.bram36,
            lutram: resources.lutram,
            cores_per_xc7vx690t: cores,
            xc7vx690t_limiting_resource: limit,
            cycles_per_decryption_chip: chip_cycles,
            decryptions_per_s_100mhz: per_s(REFERENCE_MHZ),
            logic_delay_ns: timing.map(|t| t.logic_delay_ns),
            plausible_clock_mhz: clock,
            decryptions_per_s_plausible_clock: clock.map(per_s),
            dsp_cycles_per_decryption: dsp_cycles,
            ratio_to_schoolbook_bound: dsp_cycles / schoolbook_bound_per_decryption(config.key_bits),
            meets_latency_target: is_2048.then_some(latency as f64 <= MESA_CYCLES),
            meets_throughput_target: is_2048.then(|| per_s(REFERENCE_MHZ) >= TARGET_THROUGHPUT),
            pareto: false,
        }
    }

    fn dominates(&self, other: &Point) -> bool {
        let (lat, tp) = (self.latency_cycles, self.decryptions_per_s_100mhz);
        let (olat, otp) = (other.latency_cycles, other.decryptions_per_s_100mhz);
        lat <= olat && tp >= otp && (lat < olat || tp > otp)
    }
}

/// Marks the points no other point of the same key size dominates.
pub fn mark_pareto(points: &mut [Point]) {
    let front: Vec<bool> = points
        .iter()
        .map(|p| !points.iter().any(|q| q.config.key_bits == p.config.key_bits && q.dominates(p)))
        .collect();
    for (p, on) in points.iter_mut().zip(front) {
        p.pareto = on;
    }
}

/// The logic delay for each k of the sweep, from a flattened 512-bit one-core accelerator with
/// the default window width ([`timing_of`], cached with `ecrt estimate`'s): the window width sets
/// only the exponent control's counters and the key size only the number of limbs, while k sets
/// the multiplier's adder trees, where the long paths are. Two runs at a time.
fn timings(configs: &[AcceleratorConfig]) -> anyhow::Result<Vec<(usize, TimingEstimate)>> {
    let mut ks: Vec<usize> = configs.iter().map(|c| c.digits_per_step).collect();
    ks.sort_unstable();
    ks.dedup();
    let per_k: Vec<AcceleratorConfig> = ks
        .iter()
        .map(|&k| AcceleratorConfig { digits_per_step: k, stream_bits: configs[0].stream_bits, ..Default::default() })
        .collect();
    let results = parallel_map(&per_k, 2, "timing", || Ok::<_, anyhow::Error>(()), |_, c| timing_of(c, false))?;
    ks.into_iter().zip(results).map(|(k, t)| Ok((k, t?))).collect()
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut configs = Vec::new();
    for &key_bits in &args.key_bits {
        for &digits_per_step in &args.digits_per_step {
            for &schedule in &args.schedule {
                let window_widths = match schedule {
                    ExponentSchedule::Windows => args.window_bits.as_slice(),
                    ExponentSchedule::Segmented => &[1],
                };
                for &window_bits in window_widths {
                    let config = AcceleratorConfig {
                        key_bits,
                        window_bits,
                        schedule,
                        digits_per_step,
                        stream_bits: args.stream_bits,
                        ..Default::default()
                    };
                    config.validate().map_err(|e| {
                        anyhow::anyhow!(
                            "--key-bits {key_bits}, --digits-per-step {digits_per_step}, {}: {e}",
                            config.schedule_label()
                        )
                    })?;
                    configs.push(config);
                }
            }
        }
    }
    anyhow::ensure!(!configs.is_empty(), "nothing to sweep");
    std::fs::create_dir_all(&args.out).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", args.out.display()))?;

    // Two points at a time: generating a point's Verilog keeps one core busy, and its Yosys runs
    // (two at a time themselves) are cached, so a repeated sweep is mostly generation.
    let resources: Vec<ResourceEstimate> = parallel_map(
        &configs,
        2,
        "estimates",
        || Ok::<_, anyhow::Error>(()),
        |_, c| {
            let emitted = ecrt_hdl::emit::emit(c)?;
            Ok::<_, anyhow::Error>(estimate(&emitted.verilog, &emitted.manifest.top, &EstimateOptions::default())?)
        },
    )?
    .into_iter()
    .collect::<anyhow::Result<_>>()?;
    let timings = if args.no_timing { Vec::new() } else { timings(&configs)? };
    let mut points: Vec<Point> = configs
        .iter()
        .zip(&resources)
        .map(|(config, r)| {
            let timing = timings.iter().find(|(k, _)| *k == config.digits_per_step).map(|(_, t)| t);
            Point::new(config, r, timing)
        })
        .collect();
    mark_pareto(&mut points);

    let report = json!({
        "tool": "ecrt explore",
        "schedules_built": ExponentSchedule::ALL.map(ExponentSchedule::name),
        "resource_tool": "Yosys synth_xilinx per distinct module of a one-core accelerator (fast estimate, not Vivado)",
        "timing_tool": (!args.no_timing).then_some(
            "Yosys sta with the 7-series cell delays, no routing: a flattened 512-bit one-core accelerator per k, \
             default window width"
        ),
        "targets_2048": { "latency_cycles": MESA_CYCLES, "decryptions_per_s_100mhz": TARGET_THROUGHPUT },
        "points": points,
    });
    let json_path = args.out.join("explore.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&report)? + "\n")
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", json_path.display()))?;
    if args.json {
        println!("{report}");
    } else {
        print_table(&points);
    }
    let svg_path = args.out.join("pareto.svg");
    pareto_plot::draw(&points, &svg_path)?;
    eprintln!("ecrt explore: wrote {} and {}", json_path.display(), svg_path.display());
    Ok(ExitCode::SUCCESS)
}

fn print_table(points: &[Point]) {
    println!(
        "{:>5} {:>2} {:>5} {:>8} {:>6} {:>8} {:>5} {:>7} {:>7} {:>5} {:>5} {:>8} {:>8} {:>6} {:>9} {:>6}  ",
        "bits",
        "k",
        "sched",
        "latency",
        "ms",
        "cyc/core",
        "DSP",
        "LUT",
        "FF",
        "BRAM",
        "cores",
        "dec/s",
        "limit",
        "ns",
        "dec/s@clk",
        "×bound"
    );
    for p in points {
        let opt = |x: Option<f64>, d: usize| x.map_or("—".to_string(), |v| format!("{v:.d$}"));
        println!(
            "{:>5} {:>2} {:>5} {:>8} {:>6.3} {:>8} {:>5} {:>7} {:>7} {:>5.1} {:>5} {:>8.0} {:>8} {:>6} {:>9} {:>6.2}{}",
            p.config.key_bits,
            p.config.digits_per_step,
            match p.config.schedule {
                ExponentSchedule::Windows => format!("w={}", p.config.window_bits),
                ExponentSchedule::Segmented => "seg".into(),
            },
            p.latency_cycles,
            p.latency_ms_100mhz,
            p.cycles_per_decryption_per_core,
            p.dsp48e1,
            p.lut,
            p.ff,
            p.bram36,
            p.cores_per_xc7vx690t,
            p.decryptions_per_s_100mhz,
            p.xc7vx690t_limiting_resource,
            opt(p.logic_delay_ns, 2),
            opt(p.decryptions_per_s_plausible_clock, 0),
            p.ratio_to_schoolbook_bound,
            if p.pareto { "  *" } else { "" }
        );
    }
    println!(
        "sched: the exponent schedule, w-bit windows or segmented; latency: idle core, cycles and ms at 100 MHz; cyc/core: a busy core's pace; resources: one-core accelerator \
         (Yosys); cores: per xc7vx690t within 80 % of every resource; dec/s: that chip at 100 MHz (at the plausible \
         clock, 1000 / (2 × logic delay), in dec/s@clk); ×bound: DSP-cycles per decryption over the 24×17 \
         schoolbook bound; *: on the Pareto front of latency against chip throughput"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources(dsp: u64, lut: u64) -> ResourceEstimate {
        ResourceEstimate { dsp48e1: dsp, lut, ff: lut, ..Default::default() }
    }

    #[test]
    fn a_point_projects_the_chip_and_the_front_is_pareto() {
        let k4 = AcceleratorConfig { digits_per_step: 4, ..Default::default() };
        // The k = 4 accelerator's measured estimate: DSPs allow 2 cores.
        let p4 = Point::new(&k4, &resources(1_242, 96_298), None);
        assert_eq!((p4.cores_per_xc7vx690t, p4.xc7vx690t_limiting_resource), (2, "dsp48e1"));
        assert_eq!(p4.latency_cycles, 87_949);
        assert!((p4.decryptions_per_s_100mhz - 2.0 * 1e8 / 87_943.0).abs() < 1e-6);
        assert!((p4.ratio_to_schoolbook_bound - 1_242.0 * 87_943.0 / 51_147_571.2).abs() < 1e-9);
        assert_eq!((p4.meets_latency_target, p4.meets_throughput_target), (Some(false), Some(false)));
        assert_eq!(p4.decryptions_per_s_plausible_clock, None);
        // Lower latency, lower throughput: both on the front; a point worse in both is not.
        let k8 = AcceleratorConfig { digits_per_step: 8, ..k4.clone() };
        let p8 = Point::new(&k8, &resources(2_274, 152_774), None);
        assert_eq!(p8.meets_latency_target, Some(true));
        let worse = Point::new(&AcceleratorConfig { window_bits: 2, ..k8.clone() }, &resources(2_274, 152_774), None);
        assert!(worse.latency_cycles > p8.latency_cycles);
        let mut points = vec![p4, p8, worse];
        mark_pareto(&mut points);
        assert_eq!(points.iter().map(|p| p.pareto).collect::<Vec<_>>(), [true, true, false]);
    }

    #[test]
    fn many_small_cores_wait_on_the_stream() {
        // 512-bit keys on a 64-bit stream, cores far smaller than the chip: the stream sets the pace.
        let config = AcceleratorConfig { key_bits: 512, stream_bits: 64, digits_per_step: 1, ..Default::default() };
        let p = Point::new(&config, &resources(4, 100), None);
        assert!(
            p.cores_per_xc7vx690t as f64 * p.stream_cycles_per_decryption as f64
                > p.cycles_per_decryption_per_core as f64
        );
        assert_eq!(p.cycles_per_decryption_chip, p.stream_cycles_per_decryption as f64);
        assert_eq!(p.meets_latency_target, None);
    }
}
