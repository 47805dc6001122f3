//! `ecrt bench --backend sim`: cycle counts of the accelerator's Verilator model (exact), its Yosys
//! resource estimate, and what they project for one xc7vx690t at 100 MHz and at the clocks its
//! logic delay allows.

use super::args::Args;
use crate::chip::REFERENCE_MHZ;
use crate::clocked::ChipProjection;
use crate::report::{Config, Figure};
use ecrt_contract::config::AcceleratorConfig;
use ecrt_driver::backends::cpu::{encrypt, Scratch};
use ecrt_driver::backends::sim::SimBackend;
use ecrt_golden::paillier::decrypt_ecrt;
use ecrt_golden::PrivateKey;
use ecrt_sim::accelerator::{OutputPacing, RunReport};
use ecrt_sim::{BuildOptions, EstimateOptions, ResourceEstimate, TimingEstimate};
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::process::ExitCode;

/// What `ecrt bench --backend sim` reports. Resource fields and what comes of them are null with
/// `--no-estimate`; records made before the segmented schedule lack `digits_per_step`,
/// `window_bits` and `schedule`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SimReport {
    /// `"sim"`.
    pub backend: String,
    pub config: Config,
    pub key_bits: Figure<usize>,
    pub cores: Figure<usize>,
    pub digits_per_step: Option<usize>,
    pub window_bits: Option<usize>,
    /// The schedule's label: `"5-bit windows"`, `"segmented"`.
    pub schedule: Option<String>,
    /// What each core is built around (`slots` or `lanes`).
    #[serde(default)]
    pub engine: Option<String>,
    /// Decryptions in the batch.
    pub count: usize,
    /// An idle pipeline's latency, first input beat to last output beat.
    pub latency_cycles: Figure<u64>,
    /// The batch's latencies.
    pub latency_cycles_min: Option<u64>,
    pub latency_cycles_max: Option<u64>,
    /// Steady state, the whole accelerator; `cycles_per_decryption_method` says how it was taken.
    pub cycles_per_decryption: Figure<f64>,
    pub cycles_per_decryption_method: String,
    pub cycles_per_decryption_per_core: Figure<f64>,
    pub batch_cycles: u64,
    pub dsp48e1: Option<Figure<u64>>,
    pub lut: Option<Figure<u64>>,
    pub ff: Option<Figure<u64>>,
    pub bram36: Option<Figure<f64>>,
    pub lutram: Option<Figure<u64>>,
    pub resource_tool: Option<String>,
    pub dsp_cycles_per_decryption: Option<Figure<f64>>,
    pub cores_per_xc7vx690t: Option<Figure<u64>>,
    /// The report field of the resource that stops one more core (`"dsp48e1"`, …).
    pub xc7vx690t_limiting_resource: Option<String>,
    pub projected_decryptions_per_s_100mhz: Option<Figure<f64>>,
    pub latency_ms_100mhz: f64,
    pub simulated_cycles_per_s: Figure<f64>,
    pub wall_s_per_decryption: Figure<f64>,
    /// Decryptions checked against the golden model.
    pub verified: Figure<usize>,
    /// The logic delay of the longest path (no routing) and the clocks it allows once routed
    /// ([`crate::clocked::ClockedFigures`]: conservative, cells a quarter of the path; plausible, half), with the
    /// latency and the chip's throughput at each.
    pub logic_delay_ns: Option<Figure<f64>>,
    pub plausible_clock_mhz: Option<Figure<f64>>,
    pub conservative_clock_mhz: Option<f64>,
    /// The hard block that caps the clocks, when one does.
    pub clock_capped_by: Option<String>,
    pub latency_us_conservative_clock: Option<f64>,
    pub latency_us_plausible_clock: Option<f64>,
    pub chip_decryptions_per_s_conservative_clock: Option<f64>,
    pub chip_decryptions_per_s_plausible_clock: Option<f64>,
    /// The most loads a register or DSP output drives in one full-width core (Yosys, nothing
    /// replicated: `ecrt estimate` lists the nets).
    #[serde(default)]
    pub max_fanout: Option<u64>,
    /// The longest path's cells, in short.
    pub critical_path: Option<String>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let count = args.count.unwrap_or(64);
    anyhow::ensure!(count > 0, "--count must be positive");
    let mut rng = rand::rngs::StdRng::from_rng(rand::rngs::OsRng)?;
    eprintln!("ecrt bench: generating a {}-bit key and {} ciphertexts", args.key_bits, count);
    let key = PrivateKey::generate(args.key_bits, &mut rng)?;
    let config = args.top.config_for_key(&key, &args.schedule);
    let n = key.public().n();
    let mut scratch = Scratch::new()?;
    let plaintexts: Vec<BigUint> = (0..count).map(|_| rng.gen_biguint_below(n)).collect();
    let ciphertexts: Vec<BigUint> = plaintexts.iter().map(|m| encrypt(n, m, &mut scratch)).collect::<Result<_, _>>()?;

    let build = BuildOptions { progress: true, ..Default::default() };
    let backend = SimBackend::new(&key, &config, &build, true, args.vcd.is_some())?;
    // Idle pipeline: one decryption alone (the waveform, if asked for, covers it).
    if let Some(path) = &args.vcd {
        backend.model().model_mut().open_vcd(path)?;
    }
    let idle = backend.run(&ciphertexts[..1], OutputPacing::Always)?;
    backend.model().model_mut().close_vcd();
    let batch = backend.run(&ciphertexts, OutputPacing::Always)?;
    let mut verified = 0;
    for (job, (c, m)) in batch.jobs.iter().zip(ciphertexts.iter().zip(&plaintexts)) {
        anyhow::ensure!(job.result.is_ok(), "the model answered with an error status {:#04x}", job.result.status);
        anyhow::ensure!(&job.result.plaintext == m, "the model's plaintext is wrong");
        anyhow::ensure!(decrypt_ecrt(&key, c)? == job.result.plaintext, "the golden model disagrees");
        verified += 1;
    }
    let (resources, timing, fanout) = if args.no_estimate {
        (None, None, None)
    } else {
        let emitted = ecrt_hdl::emit::emit(&config)?;
        let opts = EstimateOptions { progress: true, ..Default::default() };
        let e = crate::estimate::design_estimates(&config, &emitted, &opts, true, true)?;
        (Some(e.resources), e.timing, e.fanout)
    };
    let max_fanout = fanout.as_ref().map(|f: &ecrt_sim::FanoutReport| f.max_fanout());
    let report =
        SimReport { max_fanout, ..report(&config, &idle, &batch, resources.as_ref(), timing.as_ref(), verified) };
    crate::report::emit_report(&report, args.json, args.out.as_ref(), print_table)?;
    Ok(ExitCode::SUCCESS)
}

/// Cycles per decryption in steady state: after the first round (as many jobs as the cores hold),
/// the pace at which whole rounds of the rest leave; a batch with no second round gives its
/// average.
pub fn steady_cycles(batch: &RunReport, round: usize) -> (f64, &'static str) {
    let mut ends: Vec<u64> = batch.jobs.iter().map(|j| j.last_out).collect();
    ends.sort_unstable();
    let rounds = (ends.len() / round).saturating_sub(1);
    if rounds > 0 {
        let after = rounds * round;
        ((ends[round - 1 + after] - ends[round - 1]) as f64 / after as f64, "whole rounds after the first")
    } else {
        (batch.cycles as f64 / ends.len() as f64, "batch average (one round)")
    }
}

fn report(
    config: &AcceleratorConfig,
    idle: &RunReport,
    batch: &RunReport,
    resources: Option<&ResourceEstimate>,
    timing: Option<&TimingEstimate>,
    verified: usize,
) -> SimReport {
    let latencies: Vec<u64> = batch.jobs.iter().map(|j| j.latency()).collect();
    let (cycles_per_decryption, method) = steady_cycles(batch, config.cores * config.jobs_per_core());
    let per_core_cycles = cycles_per_decryption * config.cores as f64;
    let latency = idle.jobs[0].latency();
    let chip = ChipProjection::new(resources, config.cores, timing, latency as f64, per_core_cycles);
    let (fit, clocked) = (chip.fit, chip.clocked);
    SimReport {
        backend: "sim".into(),
        config: Config::Written(config.clone()),
        key_bits: config.key_bits.into(),
        cores: config.cores.into(),
        digits_per_step: Some(config.digits_per_step),
        window_bits: Some(config.window_bits),
        schedule: Some(config.schedule_label()),
        engine: Some(config.engine.name().into()),
        count: batch.jobs.len(),
        latency_cycles: latency.into(),
        latency_cycles_min: latencies.iter().copied().min(),
        latency_cycles_max: latencies.iter().copied().max(),
        cycles_per_decryption: cycles_per_decryption.into(),
        cycles_per_decryption_method: method.into(),
        cycles_per_decryption_per_core: per_core_cycles.into(),
        batch_cycles: batch.cycles,
        dsp48e1: resources.map(|r| r.dsp48e1.into()),
        lut: resources.map(|r| r.lut.into()),
        ff: resources.map(|r| r.ff.into()),
        bram36: resources.map(|r| r.bram36.into()),
        lutram: resources.map(|r| r.lutram.into()),
        resource_tool: resources.map(|r| r.tool.clone()),
        dsp_cycles_per_decryption: resources.map(|r| (r.dsp48e1 as f64 * cycles_per_decryption).into()),
        cores_per_xc7vx690t: fit.map(|f| f.cores.into()),
        xc7vx690t_limiting_resource: fit.map(|f| f.limit.into()),
        projected_decryptions_per_s_100mhz: chip.decryptions_per_s_100mhz.map(Figure::from),
        latency_ms_100mhz: latency as f64 / (REFERENCE_MHZ * 1e3),
        simulated_cycles_per_s: batch.cycles_per_second().into(),
        wall_s_per_decryption: (batch.elapsed.as_secs_f64() / batch.jobs.len() as f64).into(),
        verified: verified.into(),
        logic_delay_ns: clocked.as_ref().map(|c| c.clocks.logic_delay_ns.into()),
        plausible_clock_mhz: clocked.as_ref().map(|c| c.clocks.plausible_clock_mhz.into()),
        conservative_clock_mhz: clocked.as_ref().map(|c| c.clocks.conservative_clock_mhz),
        clock_capped_by: clocked.as_ref().and_then(|c| c.clocks.clock_capped_by.clone()),
        latency_us_conservative_clock: clocked.as_ref().map(|c| c.latency_us_conservative_clock),
        latency_us_plausible_clock: clocked.as_ref().map(|c| c.latency_us_plausible_clock),
        chip_decryptions_per_s_conservative_clock: clocked
            .as_ref()
            .map(|c| c.chip_decryptions_per_s_conservative_clock),
        chip_decryptions_per_s_plausible_clock: clocked.as_ref().map(|c| c.chip_decryptions_per_s_plausible_clock),
        max_fanout: None,
        critical_path: timing.map(|t| t.path_summary()),
    }
}

fn print_table(report: &serde_json::Value) {
    println!(
        "ecrt bench (Verilator model, {}-bit key, {} core(s) on {}, {} digits per step, {} schedule, {} \
         decryptions, all verified: {})",
        report["key_bits"],
        report["cores"],
        report["engine"].as_str().unwrap_or("slots"),
        report["digits_per_step"],
        report["schedule"].as_str().unwrap_or("?"),
        report["count"],
        report["verified"]
    );
    let rows = [
        ("latency, idle pipeline (cycles)", "latency_cycles"),
        ("latency in the batch, min (cycles)", "latency_cycles_min"),
        ("latency in the batch, max (cycles)", "latency_cycles_max"),
        ("cycles per decryption, steady state", "cycles_per_decryption"),
        ("DSP48E1 (Yosys estimate)", "dsp48e1"),
        ("LUT (Yosys estimate)", "lut"),
        ("FF (Yosys estimate)", "ff"),
        ("BRAM36 (Yosys estimate)", "bram36"),
        ("DSP-cycles per decryption", "dsp_cycles_per_decryption"),
        ("cores per xc7vx690t (80 % of each resource)", "cores_per_xc7vx690t"),
        ("projected decryptions/s, xc7vx690t at 100 MHz", "projected_decryptions_per_s_100mhz"),
        ("latency at 100 MHz (ms)", "latency_ms_100mhz"),
        ("logic delay, longest path, no routing (ns)", "logic_delay_ns"),
        ("conservative clock, 1000 / (4 × logic delay) (MHz)", "conservative_clock_mhz"),
        ("plausible clock, 1000 / (2 × logic delay) (MHz)", "plausible_clock_mhz"),
        ("latency at the conservative clock (µs)", "latency_us_conservative_clock"),
        ("latency at the plausible clock (µs)", "latency_us_plausible_clock"),
        ("decryptions/s, xc7vx690t, conservative clock", "chip_decryptions_per_s_conservative_clock"),
        ("decryptions/s, xc7vx690t, plausible clock", "chip_decryptions_per_s_plausible_clock"),
        ("highest fanout of a register or DSP, one core", "max_fanout"),
        ("simulated cycles per second", "simulated_cycles_per_s"),
        ("wall time per decryption in simulation (s)", "wall_s_per_decryption"),
    ];
    for (label, key) in rows {
        let value = &report[key];
        let text = match value.as_f64() {
            Some(x) if x.fract() != 0.0 => format!("{x:.2}"),
            Some(x) => format!("{x:.0}"),
            None if value.is_null() => "—".into(),
            None => value.to_string(),
        };
        println!("{label:<48} {text:>16}");
    }
}
