//! `ecrt explore`: the configuration space at a glance. For every point of a sweep (key bits ×
//! digits per step × exponent schedule and window bits × engine) it takes the cycles from the configuration's exact formulas
//! (checked against Verilator in the accelerator's tests), the resources of a one-core
//! accelerator from the fast Yosys estimates, and the logic delay of its longest path; it fills an
//! xc7vx690t with as many cores as fit and projects the chip's throughput. It prints a table and
//! writes `explore.json` and `pareto.svg` (latency against chip throughput) to `--out`.

use crate::chip::{MESA_CYCLES, TARGET_THROUGHPUT};
use crate::estimate::{timing_of, TIMING_KEY_BITS};
use crate::pareto_plot;
use crate::point::{mark_pareto, Point};
use ecrt_contract::config::{AcceleratorConfig, ConfigError, Engine, ExponentSchedule};
use ecrt_driver::batch::parallel_map;
use ecrt_sim::{estimate, EstimateOptions, ResourceEstimate, TimingEstimate};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;

/// The `tool` of an explore report, by which a record is known as one.
pub const TOOL: &str = "ecrt explore";

/// What `ecrt explore` writes to explore.json.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExploreReport {
    /// [`TOOL`].
    pub tool: String,
    /// The exponent schedules built in RTL.
    pub schedules_built: Vec<ExponentSchedule>,
    pub resource_tool: String,
    /// Null with `--no-timing`.
    pub timing_tool: Option<String>,
    pub targets_2048: Targets,
    /// In the sweep's order: key bits, digits per step, schedule, window bits.
    pub points: Vec<Point>,
}

/// The 2048-bit targets a point is held against.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Targets {
    /// MESA's latency.
    pub latency_cycles: f64,
    /// One chip's projected throughput at 100 MHz.
    pub decryptions_per_s_100mhz: f64,
}

/// Sweep accelerator configurations: exact cycles, Yosys resources and logic delay, cores per
/// xc7vx690t and the chip's projected throughput; a table, explore.json and a Pareto plot
/// (an hour or more on a cold cache at 2048 bits; repeated, the time to generate each point's
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
    /// Engines to sweep: `slots`, `lanes` and `delay`. The default sweeps the two deep-pipeline
    /// engines, whose every path is within 2.5 ns of logic; the two-slot engine (4.5 to 5.6 ns)
    /// is the one that runs the segmented schedule. The lanes and delay engines run windows of 2
    /// to 6 bits only: they skip the points they cannot build.
    #[arg(long, value_delimiter = ',', default_value = "lanes,delay")]
    engine: Vec<Engine>,
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

/// The logic delay of each configuration of the sweep, from a flattened 512-bit one-core
/// accelerator with its engine, k, schedule and windows ([`timing_of`], cached with `ecrt
/// estimate`'s): configurations that differ only in their key size share a run. The window width
/// matters as well as k: it sets the exponent control's counters, whose compare was the delay
/// engine's longest path at k = 4 with 5-bit windows and not with 6. Two runs at a time.
fn timings(configs: &[AcceleratorConfig]) -> anyhow::Result<Vec<TimingEstimate>> {
    let timed = |c: &AcceleratorConfig| AcceleratorConfig { key_bits: TIMING_KEY_BITS, cores: 1, ..c.clone() };
    let mut distinct: Vec<AcceleratorConfig> = Vec::new();
    let mut run_of = Vec::with_capacity(configs.len());
    for config in configs {
        let t = timed(config);
        run_of.push(distinct.iter().position(|d| *d == t).unwrap_or_else(|| {
            distinct.push(t);
            distinct.len() - 1
        }));
    }
    let results = parallel_map(&distinct, 2, "timing", || Ok::<_, anyhow::Error>(()), |_, c| timing_of(c, false))?;
    let results: Vec<TimingEstimate> = results.into_iter().collect::<anyhow::Result<_>>()?;
    Ok(run_of.into_iter().map(|r| results[r].clone()).collect())
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
                for (&window_bits, &engine) in
                    window_widths.iter().flat_map(|w| args.engine.iter().map(move |e| (w, e)))
                {
                    let config = AcceleratorConfig {
                        key_bits,
                        window_bits,
                        schedule,
                        digits_per_step,
                        stream_bits: args.stream_bits,
                        engine,
                        ..Default::default()
                    };
                    match config.validate() {
                        Err(ConfigError::LanesSchedule(..) | ConfigError::DelaySchedule(..)) => continue,
                        Err(e) => anyhow::bail!(
                            "--key-bits {key_bits}, --digits-per-step {digits_per_step}, {}: {e}",
                            config.schedule_label()
                        ),
                        Ok(()) => configs.push(config),
                    }
                }
            }
        }
    }
    anyhow::ensure!(!configs.is_empty(), "nothing to sweep");
    pareto_plot::register_font()?;
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
        .enumerate()
        .map(|(i, (config, r))| Point::new(config, r, timings.get(i)))
        .collect();
    mark_pareto(&mut points);

    let report = ExploreReport {
        tool: TOOL.into(),
        schedules_built: ExponentSchedule::ALL.into(),
        resource_tool: "Yosys synth_xilinx per distinct module of a one-core accelerator (fast estimate, not Vivado)"
            .into(),
        timing_tool: (!args.no_timing).then(|| {
            "Yosys sta with the 7-series cell delays, no routing: a flattened 512-bit one-core accelerator per \
             engine, k, schedule and window width"
                .into()
        }),
        targets_2048: Targets { latency_cycles: MESA_CYCLES, decryptions_per_s_100mhz: TARGET_THROUGHPUT },
        points,
    };
    // Through a Value: its fields in the order of their names, as every report writes them.
    let json = serde_json::to_value(&report)?;
    let json_path = args.out.join("explore.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&json)? + "\n")
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", json_path.display()))?;
    if args.json {
        println!("{json}");
    } else {
        print_table(&report.points);
    }
    let svg_path = args.out.join("pareto.svg");
    pareto_plot::draw(&report.points, &svg_path)?;
    eprintln!("ecrt explore: wrote {} and {}", json_path.display(), svg_path.display());
    Ok(ExitCode::SUCCESS)
}

fn print_table(points: &[Point]) {
    println!(
        "{:>5} {:>5} {:>2} {:>5} {:>8} {:>6} {:>8} {:>5} {:>7} {:>7} {:>5} {:>5} {:>8} {:>8} {:>6} {:>9} {:>6}  ",
        "bits",
        "eng",
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
            "{:>5} {:>5} {:>2} {:>5} {:>8} {:>6.3} {:>8} {:>5} {:>7} {:>7} {:>5.1} {:>5} {:>8.0} {:>8} {:>6} {:>9} {:>6.2}{}",
            p.config.key_bits,
            p.config.engine.name(),
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
            opt(p.chip_decryptions_per_s_plausible_clock, 0),
            p.ratio_to_schoolbook_bound,
            if p.pareto { "  *" } else { "" }
        );
    }
    println!(
        "eng: the engine, two slots, the deep loop's lanes or the delayed-quotient multiplier's; sched: the exponent schedule, w-bit windows or segmented; latency: idle core, cycles and ms at 100 MHz; cyc/core: a busy core's pace; resources: one-core accelerator \
         (Yosys); cores: per xc7vx690t within 80 % of every resource; dec/s: that chip at 100 MHz (at the plausible \
         clock, 1000 / (2 × logic delay), capped by the part, in dec/s@clk); ×bound: DSP-cycles per decryption over the 24×17 \
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
        let k4 = AcceleratorConfig { digits_per_step: 4, engine: Engine::Slots, ..Default::default() };
        // The k = 4 two-slot accelerator's measured estimate: DSPs allow 2 cores.
        let p4 = Point::new(&k4, &resources(1_242, 96_298), None);
        assert_eq!((p4.cores_per_xc7vx690t, p4.xc7vx690t_limiting_resource.as_str()), (2, "dsp48e1"));
        assert_eq!(p4.latency_cycles, 90_468);
        assert!((p4.decryptions_per_s_100mhz - 2.0 * 1e8 / 90_462.0).abs() < 1e-6);
        assert!((p4.ratio_to_schoolbook_bound - 1_242.0 * 90_462.0 / 51_147_571.2).abs() < 1e-9);
        assert_eq!((p4.meets_latency_target, p4.meets_throughput_target), (Some(false), Some(false)));
        assert_eq!(p4.chip_decryptions_per_s_plausible_clock, None);
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
    fn a_timed_point_has_both_clocks_and_its_front_is_drawn_at_the_plausible_one() {
        let timing = |ns: f64| TimingEstimate {
            logic_delay_ns: ns,
            critical_path: Vec::new(),
            tool: "t".into(),
            packed_block_rams: 0,
        };
        let config = AcceleratorConfig { digits_per_step: 4, ..Default::default() };
        let p = Point::new(&config, &resources(1_242, 96_298), Some(&timing(5.0)));
        assert_eq!((p.conservative_clock_mhz, p.plausible_clock_mhz), (Some(50.0), Some(100.0)));
        assert_eq!(p.latency_us_plausible_clock, Some(p.latency_cycles as f64 / 100.0));
        assert_eq!(p.chip_decryptions_per_s_plausible_clock, Some(p.decryptions_per_s_100mhz));
        assert_eq!(p.chip_decryptions_per_s_conservative_clock, Some(p.decryptions_per_s_100mhz / 2.0));
        assert_eq!(p.plotted(), (p.latency_cycles as f64 / 100.0, p.decryptions_per_s_100mhz));
        // The same design with half the logic delay is twice as fast at its clock: it alone is on the front.
        let fast = Point::new(&config, &resources(1_242, 96_298), Some(&timing(2.5)));
        let mut points = vec![p, fast];
        mark_pareto(&mut points);
        assert_eq!(points.iter().map(|p| p.pareto).collect::<Vec<_>>(), [false, true]);
        // Records written before the conservative clock name the plausible rate as they did.
        let mut old = serde_json::to_value(&points[0]).unwrap();
        let rate = old["chip_decryptions_per_s_plausible_clock"].take();
        let old = old.as_object_mut().unwrap();
        old.remove("chip_decryptions_per_s_plausible_clock");
        old.remove("conservative_clock_mhz");
        old.insert("decryptions_per_s_plausible_clock".into(), rate);
        let read: Point = serde_json::from_value(serde_json::Value::Object(old.clone())).unwrap();
        assert_eq!(read.chip_decryptions_per_s_plausible_clock, points[0].chip_decryptions_per_s_plausible_clock);
        assert_eq!(read.conservative_clock_mhz, None);
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
