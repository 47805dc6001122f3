//! The delayed-quotient multiplier at full width in Verilator against the golden model: a
//! 2048-bit modulus (p² of a 2048-bit key) in each lane, limb for limb, in exactly
//! `DelayTiming::cycles`.

use ecrt_golden::hw::{DelayedFoldContext, FoldValue, Multiplicand};
use ecrt_golden::prime::random_odd;
use ecrt_hdl::multiplier::delay_mul::DelayTiming;
use ecrt_sim::delay_mul::{DelayJob, DelayMulSim};
use ecrt_sim::BuildOptions;
use num_bigint::RandBigInt;
use rand::SeedableRng;

#[test]
fn full_width_lanes_match_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    let (modulus_bits, k) = (2048, 3);
    let shape = DelayTiming::shape(modulus_bits, k).unwrap();
    let cycles = DelayTiming::new(k).cycles(&shape) as u64;
    let mut sim = DelayMulSim::build(&shape, &BuildOptions { progress: true, ..Default::default() }).unwrap();
    let contexts: Vec<DelayedFoldContext> = (0..2)
        .map(|_| {
            let n = random_odd(modulus_bits as u64, &mut rng);
            DelayedFoldContext::new(&n, modulus_bits, k, shape.quotient_delay)
                .unwrap()
                .with_multiplicand(Multiplicand::Windows)
        })
        .collect();
    // The widest operands in lane 0, random ones in lane 1; then each result squared.
    let mut operands: Vec<(FoldValue, FoldValue)> = contexts
        .iter()
        .enumerate()
        .map(|(lane, ctx)| {
            let mut pick = || if lane == 0 { ctx.bound() - 1u32 } else { rng.gen_biguint_below(ctx.bound()) };
            (ctx.exact(&pick()), ctx.exact(&pick()))
        })
        .collect();
    for round in 0..2 {
        let jobs: Vec<Option<DelayJob>> = operands
            .iter()
            .zip(&contexts)
            .map(|((a, b), ctx)| Some(DelayJob { a: a.limbs(), b: b.limbs(), h: ctx.h() }))
            .collect();
        let products = sim.multiply(&jobs).unwrap();
        for (lane, product) in products.into_iter().enumerate() {
            let product = product.unwrap();
            let expected = contexts[lane].mul(&operands[lane].0, &operands[lane].1);
            assert_eq!(product.limbs, expected.limbs(), "lane {lane}, round {round}");
            assert_eq!(product.cycles, cycles, "cycles per multiplication");
            operands[lane] = (expected.clone(), expected);
        }
    }
}
