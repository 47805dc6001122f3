//! `ecrt bench-multiplier`: the Montgomery multipliers alone, side by side for each number of
//! limbs per step, the accelerator's two-cycle loop, the deep loop and the delayed-quotient loop
//! (not yet in an exponentiation unit): cycles per multiplication
//! in Verilator (every product checked against the golden model), Yosys's resources and logic
//! delay, and DSP-cycles per multiplication against the schoolbook bound.

use crate::chip::schoolbook_partial_products;
use crate::report::Figure;
use ecrt_golden::hw::{DelayedFoldContext, DelayedShape, FoldContext, FoldShape, FoldValue, Multiplicand};
use ecrt_golden::prime::random_odd;
use ecrt_hdl::emit::{emit_deep_mul, emit_delay_mul, emit_fold_mul};
use ecrt_hdl::multiplier::delay_mul::DelayTiming;
use ecrt_sim::deep_mul::DeepMulSim;
use ecrt_sim::delay_mul::DelayMulSim;
use ecrt_sim::fold_mul::{FoldMulSim, Product};
use ecrt_sim::lane_mul::LaneJob;
use ecrt_sim::{estimate_with_fanout, logic_delay, BuildOptions, EstimateOptions, FanoutReport};
use num_bigint::RandBigInt;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::process::ExitCode;

/// Measure the Montgomery multipliers, both loops, for each number of limbs per step.
#[derive(clap::Args)]
pub struct Args {
    /// Key size: the multipliers are sized for its p² (a modulus of this many bits).
    #[arg(long, default_value_t = 2048)]
    key_bits: usize,
    /// Limbs of the multiplier consumed per step, one folding multiplier of each loop each.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4, 8])]
    digits_per_step: Vec<usize>,
    /// The loops to measure: `fold` (the accelerator's, two slots on a two-cycle loop) and
    /// `deep` (k + 3 lanes on a loop of k + 3 cycles, every stage registered) and `delay` (two
    /// lanes on a two-cycle loop with the quotient delayed by d steps).
    #[arg(long, value_delimiter = ',', default_values_t = vec![Loop::Fold, Loop::Deep])]
    loops: Vec<Loop>,
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

/// A multiplier's loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Loop {
    /// The accelerator's folding multiplier: two slots on a two-cycle loop.
    Fold,
    /// The deep-loop multiplier: k + 3 lanes on a loop of k + 3 cycles.
    Deep,
    /// The delayed-quotient multiplier: two lanes on a two-cycle loop.
    Delay,
}

impl Loop {
    /// Independent multiplications it interleaves: two slots, or k + 3 lanes.
    fn in_flight(self, shape: &FoldShape) -> usize {
        match self {
            Loop::Fold | Loop::Delay => 2,
            Loop::Deep => shape.deep_lanes(),
        }
    }
}

impl std::fmt::Display for Loop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Loop::Fold => "fold",
            Loop::Deep => "deep",
            Loop::Delay => "delay",
        })
    }
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

/// One multiplier's figures. Several multiplications are in flight (`in_flight`), so one
/// multiplication costs that share of the DSPs' cycles over its latency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MultiplierRow {
    /// `"fold"`, `"deep"` or `"delay"`; records made while a separate classic multiplier ran also hold
    /// `"classic"`.
    pub multiplier: String,
    /// Independent multiplications the multiplier interleaves (records without it: 2).
    #[serde(default = "two")]
    pub in_flight: usize,
    pub digits_per_step: Figure<usize>,
    pub steps: Figure<usize>,
    pub cycles_per_multiplication: Figure<u64>,
    /// The folding multiplier's sizes (null for the classic one and the delayed-quotient one).
    pub shape: Option<FoldShape>,
    /// The delayed-quotient multiplier's sizes (absent for the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_shape: Option<DelayedShape>,
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
    /// The most loads a register- or DSP-driven net reaches, at full width (absent in records
    /// made before it was counted).
    #[serde(default)]
    pub max_fanout: Option<u64>,
    /// The most loads a logic-driven net reaches (a select decoded in a LUT, say).
    #[serde(default)]
    pub max_logic_fanout: Option<u64>,
}

fn two() -> usize {
    2
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
    let bar = ecrt_driver::batch::progress_bar(args.digits_per_step.len() * args.loops.len(), "multipliers");
    for &k in &args.digits_per_step {
        for &kind in &args.loops {
            let measured = measure(kind, modulus_bits, k, &mut rng)?;
            let (resources, fanout) = estimate_with_fanout(&emit(kind, modulus_bits, k)?, "top", &quiet)?;
            let timing = match args.no_timing {
                true => None,
                false => Some(logic_delay(&emit(kind, TIMING_MODULUS_BITS, k)?, "top", &quiet)?),
            };
            rows.push(row(kind, k, &measured, &resources, &fanout, timing.as_ref(), bound));
            bar.inc(1);
        }
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
            "  {:<8} {:>3} {:>6} {:>7} {:>6} {:>8} {:>8} {:>9} {:>6} {:>9} {:>11}",
            "kind", "k", "steps", "cycles", "DSP", "LUT", "FF", "DSP-cyc", "×bound", "delay ns", "fanout r/l"
        );
        for r in report["multipliers"].as_array().into_iter().flatten() {
            let delay = r["logic_delay_ns"].as_f64().map_or("-".into(), |d| format!("{d:.2}"));
            let fanout = format!("{}/{}", r["max_fanout"], r["max_logic_fanout"]);
            println!(
                "  {:<8} {:>3} {:>6} {:>7} {:>6} {:>8} {:>8} {:>9.0} {:>6.2} {:>9} {:>11}",
                r["multiplier"].as_str().unwrap_or("?"),
                r["digits_per_step"],
                r["steps"],
                r["cycles_per_multiplication"],
                r["dsp48e1"],
                r["lut"],
                r["ff"],
                r["dsp_cycles_per_multiplication"].as_f64().unwrap_or(0.0),
                r["ratio_to_schoolbook_bound"].as_f64().unwrap_or(0.0),
                delay,
                fanout
            );
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// One multiplier run in Verilator: its cycles a multiplication, the multiplications it
/// interleaves, its steps and its sizes.
struct Measured {
    cycles: u64,
    in_flight: usize,
    steps: usize,
    shape: Option<FoldShape>,
    delayed_shape: Option<DelayedShape>,
}

/// The Verilog of `kind`'s multiplier for `bits`-bit moduli and k limbs a step.
fn emit(kind: Loop, bits: usize, k: usize) -> anyhow::Result<String> {
    Ok(match kind {
        Loop::Fold => emit_fold_mul(&FoldShape::new(bits, k)?),
        Loop::Deep => emit_deep_mul(&FoldShape::new(bits, k)?),
        Loop::Delay => emit_delay_mul(&DelayTiming::shape(bits, k)?),
    })
}

/// Runs `kind`'s multiplier for `bits`-bit moduli and k limbs a step in Verilator, every
/// multiplication it interleaves with its own modulus and random operands, and checks each product
/// against the golden model.
fn measure(kind: Loop, bits: usize, k: usize, rng: &mut rand::rngs::StdRng) -> anyhow::Result<Measured> {
    if kind == Loop::Delay {
        let shape = DelayTiming::shape(bits, k)?;
        let cycles = delayed_cycles(&shape, bits, rng)?;
        return Ok(Measured {
            cycles,
            in_flight: 2,
            steps: shape.total_steps(),
            shape: None,
            delayed_shape: Some(shape),
        });
    }
    let shape = FoldShape::new(bits, k)?;
    let in_flight = kind.in_flight(&shape);
    let contexts: Vec<FoldContext> = (0..in_flight)
        .map(|_| FoldContext::with_width(&random_odd(bits as u64, rng), bits, k))
        .collect::<Result<_, _>>()?;
    let operands: Vec<_> = contexts
        .iter()
        .map(|c| (c.exact(&rng.gen_biguint_below(c.bound())), c.exact(&rng.gen_biguint_below(c.bound()))))
        .collect();
    let products = if kind == Loop::Fold {
        let mut sim = FoldMulSim::build(&shape, &BuildOptions::default())?;
        for (slot, c) in contexts.iter().enumerate() {
            sim.set_m_hat(slot, c.m_hat())?;
        }
        sim.multiply([
            Some((operands[0].0.limbs(), operands[0].1.limbs())),
            Some((operands[1].0.limbs(), operands[1].1.limbs())),
        ])?
        .to_vec()
    } else {
        let mut sim = DeepMulSim::build(&shape, &BuildOptions::default())?;
        let jobs: Vec<Option<LaneJob>> = operands
            .iter()
            .zip(&contexts)
            .map(|((a, b), c)| Some(LaneJob { a: a.limbs(), b: b.limbs(), m_hat: c.m_hat(), classic: None }))
            .collect();
        sim.multiply(&jobs)?
    };
    let expected: Vec<FoldValue> = contexts.iter().zip(&operands).map(|(c, (a, b))| c.mul(a, b)).collect();
    let cycles = checked_cycles(&products, &expected, k, kind)?;
    Ok(Measured { cycles, in_flight, steps: shape.steps, shape: Some(shape), delayed_shape: None })
}

/// The delayed-quotient multiplier's two lanes, each with its own `bits`-bit modulus and random
/// operands, in Verilator: their cycles, once both products equal the golden model's.
fn delayed_cycles(shape: &DelayedShape, bits: usize, rng: &mut rand::rngs::StdRng) -> anyhow::Result<u64> {
    let contexts: Vec<DelayedFoldContext> = (0..2)
        .map(|_| {
            let n = random_odd(bits as u64, rng);
            Ok(DelayedFoldContext::new(&n, bits, shape.limbs_per_step, shape.quotient_delay)?
                .with_multiplicand(Multiplicand::Windows))
        })
        .collect::<anyhow::Result<_>>()?;
    let operands: Vec<_> = contexts
        .iter()
        .map(|c| (c.exact(&rng.gen_biguint_below(c.bound())), c.exact(&rng.gen_biguint_below(c.bound()))))
        .collect();
    let mut sim = DelayMulSim::build(shape, &BuildOptions::default())?;
    let jobs: Vec<Option<LaneJob>> = operands
        .iter()
        .zip(&contexts)
        .map(|((a, b), c)| Some(LaneJob { a: a.limbs(), b: b.limbs(), m_hat: c.h(), classic: None }))
        .collect();
    let products = sim.multiply(&jobs)?;
    let expected: Vec<FoldValue> = contexts.iter().zip(&operands).map(|(c, (a, b))| c.mul(a, b)).collect();
    checked_cycles(&products, &expected, shape.limbs_per_step, Loop::Delay)
}

/// Every product equals the golden model's and all took the same cycles: those cycles.
fn checked_cycles(products: &[Option<Product>], expected: &[FoldValue], k: usize, kind: Loop) -> anyhow::Result<u64> {
    let mut cycles = None;
    for (slot, product) in products.iter().enumerate() {
        let product =
            product.as_ref().ok_or_else(|| anyhow::anyhow!("{kind}, k = {k}: slot {slot} gave no product"))?;
        anyhow::ensure!(product.limbs == expected[slot].limbs(), "{kind}, k = {k}, slot {slot}: wrong product");
        anyhow::ensure!(
            *cycles.get_or_insert(product.cycles) == product.cycles,
            "{kind}, k = {k}: the slots took different cycles"
        );
    }
    cycles.ok_or_else(|| anyhow::anyhow!("{kind}, k = {k}: no product"))
}

/// One multiplier's row.
fn row(
    kind: Loop,
    k: usize,
    m: &Measured,
    resources: &ecrt_sim::ResourceEstimate,
    fanout: &FanoutReport,
    timing: Option<&ecrt_sim::TimingEstimate>,
    bound: f64,
) -> MultiplierRow {
    let dsp_cycles = resources.dsp48e1 as f64 * m.cycles as f64 / m.in_flight as f64;
    MultiplierRow {
        multiplier: kind.to_string(),
        in_flight: m.in_flight,
        digits_per_step: k.into(),
        steps: m.steps.into(),
        cycles_per_multiplication: m.cycles.into(),
        shape: m.shape,
        delayed_shape: m.delayed_shape,
        dsp48e1: resources.dsp48e1.into(),
        lut: resources.lut.into(),
        ff: resources.ff.into(),
        carry4: resources.carry4,
        lutram: resources.lutram,
        dsp_cycles_per_multiplication: dsp_cycles.into(),
        ratio_to_schoolbook_bound: (dsp_cycles / bound).into(),
        logic_delay_ns: timing.map(|t| t.logic_delay_ns.into()),
        critical_path_summary: timing.map(|t| t.path_summary()),
        max_fanout: fanout.nets.first().map(|n| n.loads),
        max_logic_fanout: fanout.logic_nets.first().map(|n| n.loads),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bench's delayed-quotient run: its products checked against a golden model of the same
    /// width, its cycles the formula's.
    #[test]
    fn delayed_lanes_are_checked_and_counted() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let shape = DelayTiming::shape(100, 2).unwrap();
        let cycles = delayed_cycles(&shape, 100, &mut rng).unwrap();
        assert_eq!(cycles, DelayTiming::new(2).cycles(&shape) as u64);
    }
}
