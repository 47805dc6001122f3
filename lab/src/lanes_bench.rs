//! `ecrt bench-lanes`: the primes' decryption paths in the deep loop's lanes
//! ([`ecrt_hdl::exponentiation::lane_exp::LaneExp`], the lanes engine's paths) for one key size:
//! cycles per path in Verilator (every lane's eCRT term checked against the golden model, and the
//! terms' sums against the plaintexts), Yosys's resources and highest fanout at full width, its
//! logic delay, and what one chip filled with such engines would give at the design's clocks. The
//! figures are the engine's: the core around it ([`ecrt_hdl::decryption::deep_core::DeepCore`])
//! adds the ciphertext's intake, the terms' memory and the final correction, and is not yet an
//! accelerator's.

use crate::chip::schoolbook_bound_per_decryption;
use crate::clocked::ChipProjection;
use crate::report::Figure;
use ecrt_contract::host::{base_loads, decryption_key_loads};
use ecrt_golden::hw::{schedule_cost, FoldEcrtKey, FoldShape, Schedule};
use ecrt_golden::prime::random_prime_pair;
use ecrt_hdl::emit::emit_lane_exp;
use ecrt_sim::lane_exp::{LaneExpSim, LanePath};
use ecrt_sim::{estimate_with_fanout, logic_delay, BuildOptions, EstimateOptions};
use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::One;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Measure the decryption paths in the deep-loop multiplier's lanes for one configuration.
#[derive(clap::Args)]
pub struct Args {
    /// Bits of the Paillier modulus n (a random key of two primes of half as many bits).
    #[arg(long, default_value_t = 2048)]
    key_bits: usize,
    /// Limbs of the multiplier consumed per step (k + 3 lanes).
    #[arg(long, default_value_t = 3)]
    digits_per_step: usize,
    /// Width of the exponent's windows, 2 to 6 bits.
    #[arg(long, default_value_t = 5)]
    window_bits: usize,
    /// Skip the Yosys estimates (minutes at full width).
    #[arg(long)]
    no_estimate: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON object to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What `ecrt bench-lanes` reports. Cycles are exact (every lane agrees to a cycle with the
/// golden model's formula); the estimates and what comes of them null with `--no-estimate`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LanesReport {
    pub key_bits: usize,
    pub digits_per_step: usize,
    pub window_bits: usize,
    pub shape: FoldShape,
    /// Lanes: independent paths in flight.
    pub lanes: usize,
    /// Decryptions in flight: a lane a prime.
    pub decryptions_in_flight: usize,
    pub cycles_per_fold_multiplication: Figure<usize>,
    pub multiplications_per_path: Figure<usize>,
    /// One path, from the load of its ciphertext to its term: a decryption's latency but the
    /// final correction.
    pub cycles_per_path: Figure<u64>,
    /// A decryption every this many cycles with every lane busy.
    pub cycles_per_decryption_steady_state: Figure<f64>,
    pub decryptions_checked: usize,
    pub simulated_cycles_per_s: Figure<f64>,
    pub dsp48e1: Option<Figure<u64>>,
    pub lut: Option<Figure<u64>>,
    pub ff: Option<Figure<u64>>,
    pub lutram: Option<u64>,
    pub bram36: Option<Figure<f64>>,
    pub dsp_cycles_per_decryption: Option<Figure<f64>>,
    pub ratio_to_schoolbook_bound: Option<Figure<f64>>,
    pub max_fanout: Option<u64>,
    pub max_logic_fanout: Option<u64>,
    /// The modulus width of the timing run.
    pub timing_modulus_bits: Option<usize>,
    pub logic_delay_ns: Option<Figure<f64>>,
    pub critical_path_summary: Option<String>,
    /// Engines that fit one xc7vx690t in 80 % of every resource, and the one that stops more.
    pub engines_per_chip: Option<u64>,
    pub chip_limited_by: Option<String>,
    pub chip_decryptions_per_s_100mhz: Option<Figure<f64>>,
    pub conservative_clock_mhz: Option<Figure<f64>>,
    pub plausible_clock_mhz: Option<Figure<f64>>,
    pub clock_capped_by: Option<String>,
    pub latency_us_plausible_clock: Option<Figure<f64>>,
    pub chip_decryptions_per_s_conservative_clock: Option<Figure<f64>>,
    pub chip_decryptions_per_s_plausible_clock: Option<Figure<f64>>,
}

/// The modulus width of the timing run (no path depends on the width but the RAMs' depth).
const TIMING_MODULUS_BITS: usize = 512;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.key_bits >= 64 && args.key_bits % 64 == 0, "--key-bits must be a multiple of 64");
    let schedule = Schedule::FixedWindow { window_bits: args.window_bits as u32 };
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x1a4e);
    let (p, q) = random_prime_pair(args.key_bits as u64 / 2, &mut rng);
    let hw = FoldEcrtKey::new(&p, &q, args.digits_per_step, schedule)?;
    let shape = *hw.fold_p().shape();
    let (lanes, l, digits, exponent_bits) =
        (shape.deep_lanes(), shape.operand_limbs, hw.classic().digits(), hw.classic().exp_bits());
    let in_flight = lanes / 2;

    let mut sim = LaneExpSim::build(&shape, exponent_bits, args.window_bits, &BuildOptions::default())?;
    sim.load_key(&decryption_key_loads(&hw, args.window_bits))?;
    let ciphertexts: Vec<BigUint> = (0..in_flight)
        .map(|_| loop {
            let c = rng.gen_biguint_below(hw.classic().n_squared());
            if c.gcd(hw.classic().n()).is_one() {
                break c;
            }
        })
        .collect();
    let limbs: Vec<Vec<u64>> =
        ciphertexts.iter().map(|c| base_loads(c, digits).iter().map(|load| load.1).collect()).collect();
    let paths: Vec<Option<LanePath>> = (0..2 * in_flight)
        .map(|lane| {
            Some(LanePath { prime_q: lane % 2 == 1, low: &limbs[lane / 2][..l], high: &limbs[lane / 2][l..2 * l] })
        })
        .collect();
    let exp_multiplications = schedule_cost(schedule, exponent_bits)?.0;
    let period = shape.deep_path_cycles(exp_multiplications) as u64;
    let started = Instant::now();
    let terms = sim.run(&paths, period + 8 * lanes as u64)?;
    let seconds = started.elapsed().as_secs_f64();
    for (i, c) in ciphertexts.iter().enumerate() {
        let trace = hw.decrypt_trace(c)?;
        let got = |lane: usize| -> anyhow::Result<(BigUint, u64)> {
            let term = terms[lane].as_ref().ok_or_else(|| anyhow::anyhow!("lane {lane} gave no term"))?;
            Ok((ecrt_contract::limbs::from_limbs(term.limbs.iter().copied()), term.cycles))
        };
        let ((term_p, cycles_p), (term_q, cycles_q)) = (got(2 * i)?, got(2 * i + 1)?);
        anyhow::ensure!(term_p == trace.p.term && term_q == trace.q.term, "ciphertext {i}: wrong terms");
        anyhow::ensure!((term_p + term_q) % hw.classic().n() == trace.result, "ciphertext {i}: wrong plaintext");
        anyhow::ensure!(cycles_p == period && cycles_q == period, "ciphertext {i}: {cycles_p}, {cycles_q} cycles");
    }

    let steady = period as f64 / in_flight as f64;
    let quiet = EstimateOptions { progress: false, ..Default::default() };
    let (resources, fanout, timing) = if args.no_estimate {
        (None, None, None)
    } else {
        let (resources, fanout) =
            estimate_with_fanout(&emit_lane_exp(&shape, exponent_bits, args.window_bits), "top", &quiet)?;
        let timing_shape = FoldShape::new(TIMING_MODULUS_BITS, args.digits_per_step)?;
        let timing =
            logic_delay(&emit_lane_exp(&timing_shape, TIMING_MODULUS_BITS / 2, args.window_bits), "top", &quiet)?;
        (Some(resources), Some(fanout), Some(timing))
    };
    let projection = ChipProjection::new(resources.as_ref(), 1, timing.as_ref(), period as f64, steady);
    let dsp_cycles = resources.as_ref().map(|r| r.dsp48e1 as f64 * steady);
    let bound = schoolbook_bound_per_decryption(args.key_bits);
    let clocked = projection.clocked.as_ref();
    let report = LanesReport {
        key_bits: args.key_bits,
        digits_per_step: args.digits_per_step,
        window_bits: args.window_bits,
        shape,
        lanes,
        decryptions_in_flight: in_flight,
        cycles_per_fold_multiplication: shape.deep_cycles().into(),
        multiplications_per_path: (exp_multiplications + 5).into(),
        cycles_per_path: period.into(),
        cycles_per_decryption_steady_state: steady.into(),
        decryptions_checked: in_flight,
        simulated_cycles_per_s: (period as f64 / seconds).into(),
        dsp48e1: resources.as_ref().map(|r| r.dsp48e1.into()),
        lut: resources.as_ref().map(|r| r.lut.into()),
        ff: resources.as_ref().map(|r| r.ff.into()),
        lutram: resources.as_ref().map(|r| r.lutram),
        bram36: resources.as_ref().map(|r| r.bram36.into()),
        dsp_cycles_per_decryption: dsp_cycles.map(Figure::from),
        ratio_to_schoolbook_bound: dsp_cycles.map(|d| (d / bound).into()),
        max_fanout: fanout.as_ref().and_then(|f| f.nets.first().map(|n| n.loads)),
        max_logic_fanout: fanout.as_ref().and_then(|f| f.logic_nets.first().map(|n| n.loads)),
        timing_modulus_bits: timing.as_ref().map(|_| TIMING_MODULUS_BITS),
        logic_delay_ns: timing.as_ref().map(|t| t.logic_delay_ns.into()),
        critical_path_summary: timing.as_ref().map(|t| t.path_summary()),
        engines_per_chip: projection.fit.map(|f| f.cores),
        chip_limited_by: projection.fit.map(|f| f.limit.to_string()),
        chip_decryptions_per_s_100mhz: projection.decryptions_per_s_100mhz.map(Figure::from),
        conservative_clock_mhz: clocked.map(|c| c.clocks.conservative_clock_mhz.into()),
        plausible_clock_mhz: clocked.map(|c| c.clocks.plausible_clock_mhz.into()),
        clock_capped_by: clocked.and_then(|c| c.clocks.clock_capped_by.clone()),
        latency_us_plausible_clock: clocked.map(|c| c.latency_us_plausible_clock.into()),
        chip_decryptions_per_s_conservative_clock: clocked.map(|c| c.chip_decryptions_per_s_conservative_clock.into()),
        chip_decryptions_per_s_plausible_clock: clocked.map(|c| c.chip_decryptions_per_s_plausible_clock.into()),
    };
    crate::report::emit_report(&report, args.json, args.out.as_ref(), |report| {
        println!(
            "Decryption paths in the deep loop's lanes, {}-bit keys (cycles from Verilator; resources and delay from \
             Yosys, not Vivado; the engine, without its core's intake, terms and correction):",
            args.key_bits
        );
        for (name, value) in report.as_object().expect("object") {
            if name != "shape" {
                println!("  {name:<42} {value}");
            }
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
