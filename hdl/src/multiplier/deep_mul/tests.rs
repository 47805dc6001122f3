use super::*;
use crate::testing::simulate;
use ecrt_golden::hw::{FoldContext, FoldTrace, FoldValue};
use ecrt_golden::prime::random_odd;
use num_bigint::RandBigInt;
use rand::SeedableRng;

#[test]
fn deep_mul_is_synthesizable() {
    let shape = FoldShape::new(20, 2).unwrap();
    let mut uut = DeepMul::new(&shape);
    uut.connect_all();
    yosys_validate("ecrt_deep_mul", &generate_verilog(&uut)).unwrap();
}

fn drive<const N: usize>(ports: &mut [Signal<In, Bits<N>>], limbs: &[u64]) {
    for (port, &limb) in ports.iter_mut().zip(limbs) {
        port.next = limb.into();
    }
}

/// What one cycle shows: the lane at its load phase, its done and result, and T.
struct Cycle {
    lane: usize,
    done: bool,
    result: Vec<u64>,
    t: Vec<u64>,
}

/// Every lane multiplies (each its own modulus), then squares its result as soon as it shows:
/// every step's T equals the golden model's limb for limb at the lane's turn, every result too,
/// and each takes exactly `deep_cycles` from its start.
#[test]
fn every_lane_matches_the_golden_model_step_by_step() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    for (modulus_bits, k) in [(30usize, 1usize), (40, 2), (60, 3), (45, 4)] {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let lanes = shape.deep_lanes();
        let contexts: Vec<FoldContext> = (0..lanes)
            .map(|_| FoldContext::with_width(&random_odd(modulus_bits as u64, &mut rng), modulus_bits, k).unwrap())
            .collect();
        // Lane 0 starts from X − 1 twice (the widest operands), the others from random values;
        // the squarings take the results as the hardware hands them over.
        let firsts: Vec<(FoldValue, FoldValue)> = contexts
            .iter()
            .enumerate()
            .map(|(lane, ctx)| {
                let mut pick = || if lane == 0 { ctx.bound() - 1u32 } else { rng.gen_biguint_below(ctx.bound()) };
                (ctx.exact(&pick()), ctx.exact(&pick()))
            })
            .collect();
        let traces: Vec<[FoldTrace; 2]> = contexts
            .iter()
            .zip(&firsts)
            .map(|(ctx, (a, b))| {
                let first = ctx.mul_trace(a, b);
                let square = ctx.mul_trace(&first.result, &first.result);
                [first, square]
            })
            .collect();
        let m_hats: Vec<Vec<u64>> = contexts.iter().map(|c| c.m_hat().to_vec()).collect();
        let operands: Vec<Vec<u64>> =
            firsts.iter().flat_map(|(a, b)| [a.limbs().to_vec(), b.limbs().to_vec()]).collect();
        let period = shape.deep_cycles();
        let cycles = 2 * period + 2 * lanes + 2;
        let mut started = vec![0usize; lanes];
        let trace: Vec<Cycle> = simulate(DeepMul::new(&shape), cycles, move |uut, _| {
            let lane = uut.lane.val().to_u64() as usize;
            let done = uut.done.val();
            let result: Vec<u64> = uut.result.iter().map(|r| r.val().to_u64()).collect();
            drive(&mut uut.m_hat_in, &m_hats[lane]);
            uut.start.next = false;
            if started[lane] == 0 {
                drive(&mut uut.a_in, &operands[2 * lane]);
                drive(&mut uut.b_in, &operands[2 * lane + 1]);
                uut.start.next = true;
                started[lane] = 1;
            } else if done && started[lane] == 1 {
                drive(&mut uut.a_in, &result);
                drive(&mut uut.b_in, &result);
                uut.start.next = true;
                started[lane] = 2;
            }
            Cycle { lane, done, result, t: uut.t.iter().map(|t| t.val().to_u64()).collect() }
        });

        for (lane, golden_traces) in traces.iter().enumerate() {
            let first_start = trace.iter().position(|c| c.lane == lane).unwrap();
            for (n, golden) in golden_traces.iter().enumerate() {
                let start = first_start + n * period;
                for (s, step) in golden.steps.iter().enumerate() {
                    let turn = &trace[start + (s + 3) * lanes - 1];
                    assert_eq!((turn.lane + 1) % lanes, lane, "k {k}: the turn is lane {lane}'s");
                    assert_eq!(turn.t, step.t, "k {k}, lane {lane}, multiplication {n}, step {s}: T");
                }
                let done_at = start + period;
                for (c, cycle) in trace.iter().enumerate().take(done_at).skip(start + 1) {
                    assert!(!(cycle.done && cycle.lane == lane), "k {k}, lane {lane}: done early, cycle {c}");
                }
                let shown = &trace[done_at];
                assert!(
                    shown.done && shown.lane == lane,
                    "k {k}, lane {lane}, multiplication {n}: done after {period} cycles"
                );
                assert_eq!(shown.result, golden.result.limbs(), "k {k}, lane {lane}, multiplication {n}: result");
            }
        }
    }
}
