//! `ecrt bench-multiplier`: the Montgomery multiplier alone, side by side for each number of
//! limbs per step: its cycles per multiplication in Verilator (every product checked against the
//! golden model), Yosys's resources and logic delay, and DSP-cycles per multiplication against
//! the schoolbook bound.

use crate::chip::schoolbook_partial_products;
use crate::report::Figure;
use ecrt_golden::hw::{FoldContext, FoldShape};
use ecrt_golden::prime::random_odd;
use ecrt_hdl::emit::emit_fold_mul;
use ecrt_sim::fold_mul::FoldMulSim;
use ecrt_sim::{estimate, logic_delay, BuildOptions, EstimateOptions};
use num_bigint::RandBigInt;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;

/// Measure the folding multiplier for each number of limbs per step.
#[derive(clap::Args)]
pub struct Args {
    /// Key size: the multipliers are sized for its p² (a modulus of this many bits).
    #[arg(long, default_value_t = 2048)]
    key_bits: usize,
    /// Limbs of the multiplier consumed per step, one folding multiplier each.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4, 8])]
    digits_per_step: Vec<usize>,
    /// Skip the logic delays (a flattened synthesis of each multiplier at 512 bits, minutes each).
    #[arg(long)]
    no_timing: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON object to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// What `ecrt bench-multiplier` reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MultiplierReport {
    pub key_bits: usize,
    /// The multipliers are sized for a modulus of this many bits (a key's p²).
    pub modulus_bits: Figure<usize>,
    /// 24×17 partial products of one schoolbook multiplication: the bound's unit.
    pub schoolbook_partial_products: f64,
    /// The modulus width of the logic delays; null with `--no-timing`.
    pub timing_modulus_bits: Option<usize>,
    pub multipliers: Vec<MultiplierRow>,
}

/// One multiplier's figures. Two multiplications are in flight, so one multiplication costs half
/// of the DSPs' cycles over its latency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MultiplierRow {
    /// `"fold"`; records made while a separate classic multiplier ran also hold `"classic"`.
    pub multiplier: String,
    pub digits_per_step: Figure<usize>,
    pub steps: Figure<usize>,
    pub cycles_per_multiplication: Figure<u64>,
    /// The folding multiplier's sizes (null for the classic one).
    pub shape: Option<FoldShape>,
    pub dsp48e1: Figure<u64>,
    pub lut: Figure<u64>,
    pub ff: Figure<u64>,
    pub carry4: u64,
    pub lutram: u64,
    pub dsp_cycles_per_multiplication: Figure<f64>,
    pub ratio_to_schoolbook_bound: Figure<f64>,
    /// Null with `--no-timing`.
    pub logic_delay_ns: Option<Figure<f64>>,
    pub critical_path_summary: Option<String>,
}

/// The modulus width of the timing figures: no path depends on the width.
const TIMING_MODULUS_BITS: usize = 512;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.key_bits >= 64 && args.key_bits % 2 == 0, "--key-bits must be even and at least 64");
    let modulus_bits = args.key_bits;
    let bound = schoolbook_partial_products(modulus_bits);
    let quiet = EstimateOptions { progress: false, ..Default::default() };
    let mut rows = Vec::new();

    let mut rng = rand::rngs::StdRng::seed_from_u64(0xf01d);
    let bar = ecrt_driver::batch::progress_bar(args.digits_per_step.len(), "multipliers");
    for &k in &args.digits_per_step {
        let shape = FoldShape::new(modulus_bits, k)?;
        let mut sim = FoldMulSim::build(&shape, &BuildOptions::default())?;
        let contexts: Vec<FoldContext> = (0..2)
            .map(|_| {
                let n = random_odd(modulus_bits as u64, &mut rng);
                FoldContext::with_width(&n, modulus_bits, k)
            })
            .collect::<Result<_, _>>()?;
        let operands: Vec<_> = contexts
            .iter()
            .map(|c| (c.exact(&rng.gen_biguint_below(c.bound())), c.exact(&rng.gen_biguint_below(c.bound()))))
            .collect();
        for (slot, c) in contexts.iter().enumerate() {
            sim.set_m_hat(slot, c.m_hat())?;
        }
        let products = sim.multiply([
            Some((operands[0].0.limbs(), operands[0].1.limbs())),
            Some((operands[1].0.limbs(), operands[1].1.limbs())),
        ])?;
        let mut cycles = 0;
        for (slot, product) in products.into_iter().enumerate() {
            let product = product.expect("both slots ran");
            let expected = contexts[slot].mul(&operands[slot].0, &operands[slot].1);
            anyhow::ensure!(product.limbs == expected.limbs(), "k = {k}, slot {slot}: wrong product");
            cycles = product.cycles;
        }
        let resources = estimate(&emit_fold_mul(&shape), "top", &quiet)?;
        let timing_shape = FoldShape::new(TIMING_MODULUS_BITS, k)?;
        let timing =
            (!args.no_timing).then(|| logic_delay(&emit_fold_mul(&timing_shape), "top", &quiet)).transpose()?;
        rows.push(row(k, shape.steps, cycles, &shape, &resources, timing.as_ref(), bound));
        bar.inc(1);
    }
    bar.finish_and_clear();

    let report = MultiplierReport {
        key_bits: args.key_bits,
        modulus_bits: modulus_bits.into(),
        schoolbook_partial_products: bound,
        timing_modulus_bits: (!args.no_timing).then_some(TIMING_MODULUS_BITS),
        multipliers: rows,
    };
    crate::report::emit_report(&report, args.json, args.out.as_ref(), |report| {
        println!(
            "Montgomery multipliers for a {modulus_bits}-bit modulus (cycles from Verilator; resources and delays \
             from Yosys, not Vivado):"
        );
        println!(
            "  {:<8} {:>3} {:>6} {:>7} {:>6} {:>8} {:>8} {:>9} {:>6} {:>9}",
            "kind", "k", "steps", "cycles", "DSP", "LUT", "FF", "DSP-cyc", "×bound", "delay ns"
        );
        for r in report["multipliers"].as_array().into_iter().flatten() {
            let delay = r["logic_delay_ns"].as_f64().map_or("-".into(), |d| format!("{d:.2}"));
            println!(
                "  {:<8} {:>3} {:>6} {:>7} {:>6} {:>8} {:>8} {:>9.0} {:>6.2} {:>9}",
                r["multiplier"].as_str().unwrap_or("?"),
                r["digits_per_step"],
                r["steps"],
                r["cycles_per_multiplication"],
                r["dsp48e1"],
                r["lut"],
                r["ff"],
                r["dsp_cycles_per_multiplication"].as_f64().unwrap_or(0.0),
                r["ratio_to_schoolbook_bound"].as_f64().unwrap_or(0.0),
                delay
            );
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// One folding multiplier's row.
fn row(
    digits_per_step: usize,
    steps: usize,
    cycles: u64,
    shape: &FoldShape,
    resources: &ecrt_sim::ResourceEstimate,
    timing: Option<&ecrt_sim::TimingEstimate>,
    bound: f64,
) -> MultiplierRow {
    let dsp_cycles = resources.dsp48e1 as f64 * cycles as f64 / 2.0;
    MultiplierRow {
        multiplier: "fold".into(),
        digits_per_step: digits_per_step.into(),
        steps: steps.into(),
        cycles_per_multiplication: cycles.into(),
        shape: Some(*shape),
        dsp48e1: resources.dsp48e1.into(),
        lut: resources.lut.into(),
        ff: resources.ff.into(),
        carry4: resources.carry4,
        lutram: resources.lutram,
        dsp_cycles_per_multiplication: dsp_cycles.into(),
        ratio_to_schoolbook_bound: (dsp_cycles / bound).into(),
        logic_delay_ns: timing.map(|t| t.logic_delay_ns.into()),
        critical_path_summary: timing.map(|t| t.path_summary()),
    }
}
