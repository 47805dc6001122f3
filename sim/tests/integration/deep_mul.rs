//! The deep-loop multiplier at full width in Verilator against the golden model: a 2048-bit
//! modulus (p² of a 2048-bit key), every lane at once, each with its own modulus, limb for limb,
//! in (m + 2)·(k + 3) cycles; then the three classic passes beside folding lanes, in
//! (2·s + 3)·(k + 3).

use ecrt_golden::hw::{exact_limbs, ClassicOp, ClassicPass, FoldContext, FoldShape, FoldValue, Multiplicand};
use ecrt_golden::prime::random_odd;
use ecrt_sim::deep_mul::DeepMulSim;
use ecrt_sim::lane_mul::LaneJob;
use ecrt_sim::BuildOptions;
use num_bigint::RandBigInt;
use rand::SeedableRng;

#[test]
#[ignore = "slow: deep_core's full-width test runs these lanes end to end; scripts/test --full runs it"]
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
            .map(|((a, b), ctx)| Some(LaneJob { a: a.limbs(), b: b.limbs(), m_hat: ctx.m_hat(), classic: None }))
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

/// Each lane a classic pass (multiplication, wide REDC, the decremented pass) or a folding
/// multiplication, at full width: every result limb for limb `ClassicPass::deep_trace`'s, in
/// exactly `deep_classic_cycles`.
#[test]
#[ignore = "slow: deep_core's full-width test runs these passes end to end; scripts/test --full runs it"]
fn full_width_classic_passes_match_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(59);
    let (modulus_bits, k) = (2048, 3);
    let shape = FoldShape::new(modulus_bits, k).unwrap();
    let l = shape.operand_limbs;
    let mut sim = DeepMulSim::build(&shape, &BuildOptions { progress: true, ..Default::default() }).unwrap();
    let kinds = [Some(ClassicOp::Multiply), Some(ClassicOp::WideRedc), Some(ClassicOp::Decremented), None];
    struct Expected {
        a: Vec<u64>,
        b: Vec<u64>,
        m_hat: Vec<u64>,
        classic: Option<(ClassicOp, u64)>,
        result: Vec<u64>,
        cycles: usize,
    }
    let expected: Vec<Expected> = (0..shape.deep_lanes())
        .map(|lane| {
            let n = random_odd(modulus_bits as u64, &mut rng);
            let ctx = FoldContext::with_width(&n, modulus_bits, k).unwrap();
            let pass = ClassicPass::new(&shape, &n).unwrap().with_multiplicand(Multiplicand::Windows);
            let kind = kinds[lane % kinds.len()];
            let (a, b) = match kind {
                None | Some(ClassicOp::Multiply) => (
                    ctx.exact(&(ctx.bound() - 1u32)).limbs().to_vec(),
                    ctx.exact(&rng.gen_biguint_below(&n)).limbs().to_vec(),
                ),
                Some(ClassicOp::WideRedc) => {
                    let c = rng.gen_biguint_below(&(&n << (17 * l)));
                    (
                        exact_limbs(&shape, &(&c >> (17 * l))),
                        exact_limbs(&shape, &(&c % (num_bigint::BigUint::from(1u32) << (17 * l)))),
                    )
                }
                Some(ClassicOp::Decremented) => (
                    exact_limbs(&shape, &(rng.gen_biguint_below(&n) + 1u32)),
                    exact_limbs(&shape, &rng.gen_biguint_below(&n)),
                ),
            };
            match kind {
                None => {
                    let result = ctx.mul(&FoldValue::from_limbs(a.clone()), &FoldValue::from_limbs(b.clone()));
                    Expected {
                        a,
                        b,
                        m_hat: ctx.m_hat().to_vec(),
                        classic: None,
                        result: result.limbs().to_vec(),
                        cycles: shape.deep_cycles(),
                    }
                }
                Some(op) => {
                    let result = pass.deep_trace(op, &a, &b).result.limbs().to_vec();
                    let mut m_hat = exact_limbs(&shape, &n);
                    m_hat.truncate(shape.modulus_limbs);
                    Expected {
                        a,
                        b,
                        m_hat,
                        classic: Some((op, pass.n_prime())),
                        result,
                        cycles: shape.deep_classic_cycles(op),
                    }
                }
            }
        })
        .collect();
    let jobs: Vec<Option<LaneJob>> =
        expected.iter().map(|e| Some(LaneJob { a: &e.a, b: &e.b, m_hat: &e.m_hat, classic: e.classic })).collect();
    let products = sim.multiply(&jobs).unwrap();
    for (lane, (product, e)) in products.into_iter().zip(&expected).enumerate() {
        let product = product.unwrap();
        assert_eq!(product.limbs, e.result, "lane {lane} ({:?})", e.classic);
        assert_eq!(product.cycles, e.cycles as u64, "lane {lane} ({:?}): cycles", e.classic);
    }
}
