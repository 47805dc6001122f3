//! `ecrt bench-modexp`: the exponentiation unit in Verilator: cycles per Montgomery multiplication
//! and per exponentiation, DSP efficiency against the schoolbook bound, simulation speed, and the
//! Yosys resource estimate, for one configuration.

use crate::args::ConfigArgs;
use crate::chip::schoolbook_partial_products;
use crate::report::{Config, Figure, Part};
use ecrt_contract::host::SlotKey;
use ecrt_golden::hw::schedule_cost;
use ecrt_golden::prime::random_odd;
use ecrt_sim::modexp::ModExpSim;
use ecrt_sim::{estimate, BuildOptions, EstimateOptions, ResourceEstimate};
use num_bigint::RandBigInt;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Measure the exponentiation unit of one configuration in Verilator (random moduli of the
/// configuration's size, exponents of its exponent size).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArgs,
    /// Pairs of exponentiations to run (both slots at once).
    #[arg(long, default_value_t = 2)]
    pairs: usize,
    /// Skip the Yosys estimate (slow for large configurations).
    #[arg(long)]
    no_estimate: bool,
    /// Write a VCD waveform of the first pair here.
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON object to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What `ecrt bench-modexp` reports: cycles are exact (every pair's slots agree to a cycle), the
/// estimate and what comes of it null with `--no-estimate`. Records made before the folding
/// multiplier lack its fields; a recorded report lacks the run's own (checks, simulation speed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModExpReport {
    pub config: Config,
    /// Digits S of a classic multiplication.
    pub digits: Figure<usize>,
    pub multiplications_per_exponentiation: Figure<usize>,
    pub fold_multiplications_per_exponentiation: Option<Figure<usize>>,
    pub cycles_per_multiplication: Figure<usize>,
    pub cycles_per_fold_multiplication: Option<Figure<usize>>,
    pub multiplications_in_flight: Option<usize>,
    /// Both slots busy: the latency of each.
    pub latency_cycles_per_exponentiation: Figure<u64>,
    pub cycles_per_exponentiation_steady_state: Figure<f64>,
    pub exponentiations_checked: Option<Figure<usize>>,
    /// The unit's Yosys estimate.
    pub estimate: Option<Part<ResourceEstimate, EstimateFigures>>,
    pub dsp48e1: Option<Figure<u64>>,
    /// Half of the pair's DSP-cycles: two exponentiations share the unit.
    pub dsp_cycles_per_exponentiation: Option<Figure<f64>>,
    pub schoolbook_bound_dsp_cycles: Figure<f64>,
    pub ratio_to_schoolbook_bound: Option<f64>,
    pub simulated_cycles_per_s: Option<Figure<f64>>,
    pub verilator_build_seconds: Option<Figure<f64>>,
    pub verilator_build_cached: Option<bool>,
}

/// The figures of a Yosys estimate the figures page shows beside the DSPs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimateFigures {
    pub lut: Figure<u64>,
    pub ff: Figure<u64>,
    pub lutram: Figure<u64>,
    pub bram36: Figure<f64>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = args.config.config()?;
    let build_start = Instant::now();
    let mut sim =
        ModExpSim::build(&config, &BuildOptions { progress: true, ..Default::default() }, args.vcd.is_some())?;
    let build = sim.model_mut().build_info().clone();
    let build_seconds = build_start.elapsed().as_secs_f64();
    if let Some(path) = &args.vcd {
        sim.model_mut().open_vcd(path)?;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xec57);
    let (m, exp_bits) = (config.modulus_bits(), config.exponent_bits());
    let mut latencies = Vec::new();
    let mut simulated_cycles = 0u64;
    let mut sim_seconds = 0.0;
    let bar = ecrt_driver::batch::progress_bar(args.pairs, "modexp");
    for pair in 0..args.pairs {
        let mut jobs = Vec::new();
        for slot in 0..2 {
            let n = random_odd(m as u64, &mut rng);
            let e = rng.gen_biguint(exp_bits as u64);
            let x = rng.gen_biguint_below(&n);
            let key = SlotKey::for_config(&n, &e, &config)?;
            sim.load_key_and_base(slot, &key, &x)?;
            jobs.push((n, e, x));
        }
        let start = Instant::now();
        let finished = sim.run([true, true], false, 100_000_000)?;
        sim_seconds += start.elapsed().as_secs_f64();
        for (slot, (n, e, x)) in jobs.iter().enumerate() {
            let f = finished[slot].as_ref().expect("both slots ran");
            anyhow::ensure!(f.result == x.modpow(e, n), "pair {pair}, slot {slot}: wrong result");
            latencies.push(f.cycles);
        }
        simulated_cycles += latencies[latencies.len() - 2..].iter().max().expect("two slots");
        if pair == 0 {
            sim.model_mut().close_vcd();
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    anyhow::ensure!(latencies.windows(2).all(|w| w[0].abs_diff(w[1]) <= 1), "cycle counts vary: {latencies:?}");
    let multiplications = config.multiplications_per_exponentiation();
    let (golden_mults, _) = schedule_cost(config.golden_schedule(), exp_bits)?;
    // Around the golden schedule: the wide REDC and ×R³ before it, the way out of the domain after.
    anyhow::ensure!(golden_mults + 3 == multiplications, "schedule disagrees with the golden model");
    let latency = *latencies.iter().max().expect("ran");
    let cycles_per_multiplication = config.cycles_per_multiplication();
    let estimate = if args.no_estimate {
        None
    } else {
        let emitted = ecrt_hdl::emit::emit_modexp(&config)?;
        Some(estimate(&emitted.verilog, "top", &EstimateOptions::default())?)
    };
    let dsp = estimate.as_ref().map(|e| e.dsp48e1);
    // Two exponentiations share the unit: per exponentiation, half of the pair's DSP-cycles.
    let dsp_cycles = dsp.map(|d| d as f64 * latency as f64 / 2.0);
    let bound = 1.2 * exp_bits as f64 * schoolbook_partial_products(m);
    let report = ModExpReport {
        config: Config::Written(config.clone()),
        digits: config.digits().into(),
        multiplications_per_exponentiation: multiplications.into(),
        fold_multiplications_per_exponentiation: Some(config.fold_multiplications_per_exponentiation().into()),
        cycles_per_multiplication: cycles_per_multiplication.into(),
        cycles_per_fold_multiplication: Some(config.cycles_per_fold_multiplication().into()),
        multiplications_in_flight: Some(2),
        latency_cycles_per_exponentiation: latency.into(),
        cycles_per_exponentiation_steady_state: (latency as f64 / 2.0).into(),
        exponentiations_checked: Some(latencies.len().into()),
        estimate: estimate.map(Part::Written),
        dsp48e1: dsp.map(Figure::from),
        dsp_cycles_per_exponentiation: dsp_cycles.map(Figure::from),
        schoolbook_bound_dsp_cycles: bound.into(),
        ratio_to_schoolbook_bound: dsp_cycles.map(|d| d / bound),
        simulated_cycles_per_s: Some((simulated_cycles as f64 / sim_seconds).into()),
        verilator_build_seconds: Some(build_seconds.into()),
        verilator_build_cached: Some(build.cached),
    };
    crate::report::emit_report(&report, args.json, args.out.as_ref(), |report| {
        for (name, value) in report.as_object().expect("object") {
            if name != "config" && name != "estimate" {
                println!("{name:<40} {value}");
            }
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
