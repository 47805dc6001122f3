//! The folding multiplier at full width in Verilator against the golden model: a 2048-bit
//! modulus (p² of a 2048-bit key), both slots at once, limb for limb, in 2·m + 4 cycles.

use ecrt_golden::hw::{FoldContext, FoldShape, FoldValue};
use ecrt_golden::prime::random_odd;
use ecrt_sim::fold_mul::FoldMulSim;
use ecrt_sim::BuildOptions;
use num_bigint::RandBigInt;
use rand::SeedableRng;

#[test]
#[ignore = "slow: the two-slot engine's multiplier, whose 2048-bit accelerator every_phe_vector runs; scripts/test --full runs it"]
fn full_width_products_match_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(51);
    let modulus_bits = 2048;
    for k in [4usize] {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let mut sim = FoldMulSim::build(&shape, &BuildOptions { progress: true, ..Default::default() }).unwrap();
        let contexts: Vec<FoldContext> = (0..2)
            .map(|_| {
                let n = random_odd(modulus_bits as u64, &mut rng);
                FoldContext::with_width(&n, modulus_bits, k).unwrap()
            })
            .collect();
        for (slot, ctx) in contexts.iter().enumerate() {
            sim.set_m_hat(slot, ctx.m_hat()).unwrap();
        }
        // The widest operands in slot 0, random ones in slot 1; then each result squared.
        let mut operands: Vec<(FoldValue, FoldValue)> = vec![
            (contexts[0].exact(&(contexts[0].bound() - 1u32)), contexts[0].exact(&(contexts[0].bound() - 1u32))),
            (
                contexts[1].exact(&rng.gen_biguint_below(contexts[1].bound())),
                contexts[1].exact(&rng.gen_biguint_below(contexts[1].bound())),
            ),
        ];
        for round in 0..2 {
            let products = sim
                .multiply([
                    Some((operands[0].0.limbs(), operands[0].1.limbs())),
                    Some((operands[1].0.limbs(), operands[1].1.limbs())),
                ])
                .unwrap();
            for (slot, product) in products.into_iter().enumerate() {
                let product = product.unwrap();
                let expected = contexts[slot].mul(&operands[slot].0, &operands[slot].1);
                assert_eq!(product.limbs, expected.limbs(), "k {k}, slot {slot}, round {round}");
                assert_eq!(product.cycles, shape.fold_cycles() as u64, "k {k}: cycles per multiplication");
                operands[slot] = (expected.clone(), expected);
            }
        }
    }
}
