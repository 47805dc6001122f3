//! The deep-loop multiplier at full width in Verilator against the golden model: a 2048-bit
//! modulus (p² of a 2048-bit key), every lane at once, each with its own modulus, limb for limb,
//! in (m + 2)·(k + 3) cycles.

use ecrt_golden::hw::{FoldContext, FoldShape, FoldValue};
use ecrt_golden::prime::random_odd;
use ecrt_sim::deep_mul::{DeepMulSim, LaneJob};
use ecrt_sim::BuildOptions;
use num_bigint::RandBigInt;
use rand::SeedableRng;

#[test]
fn full_width_lanes_match_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(53);
    let (modulus_bits, k) = (2048, 3);
    let shape = FoldShape::new(modulus_bits, k).unwrap();
    let mut sim = DeepMulSim::build(&shape, &BuildOptions { progress: true, ..Default::default() }).unwrap();
    let contexts: Vec<FoldContext> = (0..shape.deep_lanes())
        .map(|_| FoldContext::with_width(&random_odd(modulus_bits as u64, &mut rng), modulus_bits, k).unwrap())
        .collect();
    // The widest operands in lane 0, random ones in the others; then each result squared.
    let mut operands: Vec<(FoldValue, FoldValue)> = contexts
        .iter()
        .enumerate()
        .map(|(lane, ctx)| {
            let mut pick = || if lane == 0 { ctx.bound() - 1u32 } else { rng.gen_biguint_below(ctx.bound()) };
            (ctx.exact(&pick()), ctx.exact(&pick()))
        })
        .collect();
    for round in 0..2 {
        let jobs: Vec<Option<LaneJob>> = operands
            .iter()
            .zip(&contexts)
            .map(|((a, b), ctx)| Some(LaneJob { a: a.limbs(), b: b.limbs(), m_hat: ctx.m_hat() }))
            .collect();
        let products = sim.multiply(&jobs).unwrap();
        for (lane, product) in products.into_iter().enumerate() {
            let product = product.unwrap();
            let expected = contexts[lane].mul(&operands[lane].0, &operands[lane].1);
            assert_eq!(product.limbs, expected.limbs(), "lane {lane}, round {round}");
            assert_eq!(product.cycles, shape.deep_cycles() as u64, "cycles per multiplication");
            operands[lane] = (expected.clone(), expected);
        }
    }
}
