//! The exponentiation in the deep loop's lanes at full width in Verilator against the golden
//! model: 2048-bit moduli (p² and q² of a 2048-bit key), two keys, every lane exponentiating its
//! own base, each result limb for limb, in the schedule's multiplications times (m + 2)·(k + 3)
//! cycles. A 128-bit exponent keeps it short; the schedule is the same for any.

use ecrt_golden::hw::{exp_in_domain, schedule_cost, FoldContext, FoldShape, FoldValue, Schedule};
use ecrt_golden::prime::random_odd;
use ecrt_sim::lane_exp::{LaneExpSim, LaneKey};
use ecrt_sim::BuildOptions;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;

#[test]
fn full_width_lanes_exponentiate_as_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    let (modulus_bits, k, exponent_bits, window_bits) = (2048, 3, 128, 5);
    let shape = FoldShape::new(modulus_bits, k).unwrap();
    let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
    let multiplications = schedule_cost(schedule, exponent_bits).unwrap().0;
    let mut sim = LaneExpSim::build(
        &shape,
        exponent_bits,
        window_bits,
        multiplications,
        &BuildOptions { progress: true, ..Default::default() },
    )
    .unwrap();
    let windows = exponent_bits.div_ceil(window_bits);
    let keys: Vec<(FoldContext, BigUint)> = (0..2)
        .map(|_| {
            let ctx = FoldContext::with_width(&random_odd(modulus_bits as u64, &mut rng), modulus_bits, k).unwrap();
            (ctx, rng.gen_biguint_below(&(BigUint::from(1u32) << exponent_bits)))
        })
        .collect();
    for (select, (ctx, exponent)) in keys.iter().enumerate() {
        let values: Vec<u64> = (0..windows)
            .map(|i| ((exponent >> ((windows - 1 - i) * window_bits)) % (1u64 << window_bits)).try_into().unwrap())
            .collect();
        let one = ecrt_golden::hw::DomainMultiplier::one(ctx);
        sim.load_key(select, &LaneKey { m_hat: ctx.m_hat(), one: one.limbs(), windows: &values }).unwrap();
    }
    let bases: Vec<(usize, FoldValue)> = (0..shape.deep_lanes())
        .map(|lane| {
            let ctx = &keys[lane % 2].0;
            (lane % 2, ctx.exact(&rng.gen_biguint_below(ctx.bound())))
        })
        .collect();
    let jobs: Vec<Option<(usize, &[u64])>> = bases.iter().map(|(key, base)| Some((*key, base.limbs()))).collect();
    let results = sim.exponentiate(&jobs).unwrap();
    for (lane, (result, (key, base))) in results.into_iter().zip(&bases).enumerate() {
        let (ctx, exponent) = &keys[*key];
        let expected = exp_in_domain(ctx, base, exponent, exponent_bits, schedule).unwrap().result;
        let result = result.unwrap();
        assert_eq!(result.limbs, expected.limbs(), "lane {lane}");
        assert_eq!(result.cycles, (multiplications * shape.deep_cycles()) as u64, "lane {lane}: cycles");
    }
}
