//! The delayed-quotient multiplier at full width in Verilator against the golden model: a
//! 2048-bit modulus (p² of a 2048-bit key) in each lane, folding multiplications and classic
//! passes of every kind, limb for limb, each in exactly its cycles.

use ecrt_golden::hw::{exact_limbs, ClassicOp, ClassicPass, DelayedFoldContext, FoldValue, Multiplicand};
use ecrt_golden::prime::random_odd;
use ecrt_hdl::multiplier::delay_mul::DelayTiming;
use ecrt_sim::delay_mul::DelayMulSim;
use ecrt_sim::lane_mul::LaneJob;
use ecrt_sim::BuildOptions;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;

/// A lane's job and what the golden model says of it.
struct Expected {
    a: Vec<u64>,
    b: Vec<u64>,
    m_hat: Vec<u64>,
    classic: Option<(ClassicOp, u64)>,
    result: Vec<u64>,
    cycles: usize,
}

impl Expected {
    fn fold(ctx: &DelayedFoldContext, a: &FoldValue, b: &FoldValue) -> Expected {
        let timing = DelayTiming::new(ctx.shape().limbs_per_step);
        Expected {
            a: a.limbs().to_vec(),
            b: b.limbs().to_vec(),
            m_hat: ctx.h().to_vec(),
            classic: None,
            result: ctx.mul(a, b).limbs().to_vec(),
            cycles: timing.cycles(ctx.shape()),
        }
    }

    fn classic(ctx: &DelayedFoldContext, op: ClassicOp, a: Vec<u64>, b: Vec<u64>) -> Expected {
        let shape = ctx.shape();
        let pass = ClassicPass::new(shape, ctx.modulus()).unwrap().with_multiplicand(Multiplicand::Windows);
        let result = pass.delayed_trace(op, &a, &b).result.limbs().to_vec();
        Expected {
            a,
            b,
            m_hat: exact_limbs(shape, ctx.modulus())[..shape.modulus_limbs].to_vec(),
            classic: Some((op, pass.n_prime())),
            result,
            cycles: DelayTiming::new(shape.limbs_per_step).classic_cycles(shape, op),
        }
    }

    fn result(&self) -> FoldValue {
        FoldValue::from_limbs(self.result.clone())
    }
}

/// Round 0 folds in both lanes (the widest operands in lane 0, random ones in lane 1); round 1
/// takes lane 0's product out of the domain (×1) and reduces a wide C in lane 1; round 2 divides
/// A − 1 in lane 0 for an A whose three low limbs are 0 (the borrow runs through them) and
/// squares lane 1's reduction in the folding mode.
#[test]
#[ignore = "slow: a 2048-bit model of its own (the delay engine's constant-time test runs it at 512 bits); scripts/test --full runs it"]
fn full_width_lanes_match_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    let (modulus_bits, k) = (2048, 3);
    let shape = DelayTiming::shape(modulus_bits, k).unwrap();
    let l = shape.operand_limbs;
    let mut sim = DelayMulSim::build(&shape, &BuildOptions { progress: true, ..Default::default() }).unwrap();
    let contexts: Vec<DelayedFoldContext> = (0..2)
        .map(|_| {
            let n = random_odd(modulus_bits as u64, &mut rng);
            DelayedFoldContext::new(&n, modulus_bits, k, shape.quotient_delay)
                .unwrap()
                .with_multiplicand(Multiplicand::Windows)
        })
        .collect();
    let (c0, c1) = (&contexts[0], &contexts[1]);
    let widest = c0.exact(&(c0.bound() - 1u32));
    let folded = [
        Expected::fold(c0, &widest, &widest),
        Expected::fold(
            c1,
            &c1.exact(&rng.gen_biguint_below(c1.bound())),
            &c1.exact(&rng.gen_biguint_below(c1.bound())),
        ),
    ];
    let c = rng.gen_biguint_below(&(c1.modulus() << (17 * l)));
    let classic = [
        Expected::classic(c0, ClassicOp::Multiply, folded[0].result.clone(), exact_limbs(&shape, &BigUint::from(1u32))),
        Expected::classic(c1, ClassicOp::WideRedc, exact_limbs(&shape, &(&c >> (17 * l))), exact_limbs(&shape, &c)),
    ];
    let mut borrowing = exact_limbs(&shape, &rng.gen_biguint_below(c0.modulus()));
    borrowing[..3].fill(0);
    let last = [
        Expected::classic(
            c0,
            ClassicOp::Decremented,
            borrowing,
            exact_limbs(&shape, &rng.gen_biguint_below(c0.modulus())),
        ),
        Expected::fold(c1, &classic[1].result(), &classic[1].result()),
    ];
    for (round, expected) in [folded, classic, last].iter().enumerate() {
        let jobs: Vec<Option<LaneJob>> =
            expected.iter().map(|e| Some(LaneJob { a: &e.a, b: &e.b, m_hat: &e.m_hat, classic: e.classic })).collect();
        let products = sim.multiply(&jobs).unwrap();
        for (lane, (product, e)) in products.into_iter().zip(expected).enumerate() {
            let product = product.unwrap();
            assert_eq!(product.limbs, e.result, "round {round}, lane {lane} ({:?})", e.classic);
            assert_eq!(product.cycles, e.cycles as u64, "round {round}, lane {lane} ({:?}): cycles", e.classic);
        }
    }
}
