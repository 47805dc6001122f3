use super::*;
use crate::testing::simulate;
use ecrt_golden::hw::{FoldContext, FoldValue};
use ecrt_golden::prime::random_odd;
use num_bigint::RandBigInt;
use rand::SeedableRng;

#[test]
fn fold_mul_is_synthesizable() {
    let shape = FoldShape::new(20, 2).unwrap();
    let mut uut = FoldMul::new(&shape);
    uut.connect_all();
    yosys_validate("ecrt_fold_mul", &generate_verilog(&uut)).unwrap();
}

fn drive(ports: &mut [Signal<In, Bits<X_BITS>>], limbs: &[u64]) {
    for (port, &limb) in ports.iter_mut().zip(limbs) {
        port.next = limb.into();
    }
}

/// Both slots multiply at once (different moduli), then square their results back to back:
/// every step's T equals the golden model's limb for limb, and so does every result.
#[test]
fn interleaved_slots_match_the_golden_model_step_by_step() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(19);
    for (modulus_bits, k) in [(30usize, 1usize), (40, 2), (60, 3), (45, 4)] {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let contexts: Vec<FoldContext> = (0..2)
            .map(|_| {
                let n = random_odd(modulus_bits as u64, &mut rng);
                FoldContext::with_width(&n, modulus_bits, k).unwrap()
            })
            .collect();
        // Slot 0 starts from X − 1 twice (the widest operands); slot 1 from random values.
        let firsts: Vec<(FoldValue, FoldValue)> = contexts
            .iter()
            .enumerate()
            .map(|(slot, ctx)| {
                let pick = |rng: &mut rand::rngs::StdRng| {
                    if slot == 0 {
                        ctx.bound() - 1u32
                    } else {
                        rng.gen_biguint_below(ctx.bound())
                    }
                };
                (ctx.exact(&pick(&mut rng)), ctx.exact(&pick(&mut rng)))
            })
            .collect();
        let m_hats: Vec<Vec<u64>> = contexts.iter().map(|c| c.m_hat().to_vec()).collect();
        let inputs: Vec<(Vec<u64>, Vec<u64>)> =
            firsts.iter().map(|(a, b)| (a.limbs().to_vec(), b.limbs().to_vec())).collect();
        let period = 2 * shape.steps + 2;
        let cycles = 2 * period + 4;
        // Per cycle: phase, done, result limbs, T limbs.
        type Cycle = (usize, bool, Vec<u64>, Vec<u64>);
        let trace: Vec<Cycle> = simulate(FoldMul::new(&shape), cycles, move |uut, cycle| {
            for (port, &limb) in uut.m_hat0.iter_mut().zip(&m_hats[0]) {
                port.next = limb.into();
            }
            for (port, &limb) in uut.m_hat1.iter_mut().zip(&m_hats[1]) {
                port.next = limb.into();
            }
            let phase = uut.phase.val() as usize;
            let done = uut.done.val();
            let result: Vec<u64> = uut.result.iter().map(|r| r.val().to_u64()).collect();
            uut.start.next = cycle < 2 || done;
            if cycle < 2 || done {
                // First the given operands; after a result, its square.
                let (a, b) = if cycle < 2 { inputs[phase].clone() } else { (result.clone(), result.clone()) };
                if phase == 0 {
                    drive(&mut uut.a_in0, &a);
                    drive(&mut uut.b_in0, &b);
                } else {
                    drive(&mut uut.a_in1, &a);
                    drive(&mut uut.b_in1, &b);
                }
            }
            (phase, done, result, uut.t.iter().map(|t| t.val().to_u64()).collect())
        });

        for (slot, (ctx, (a, b))) in contexts.iter().zip(&firsts).enumerate() {
            let first = ctx.mul_trace(a, b);
            let square = ctx.mul_trace(&first.result, &first.result);
            // Slot `slot` starts in cycle `slot`; its step i is in stage 1 at start + 2 + 2i.
            for (op, golden) in [first, square].iter().enumerate() {
                let start = slot + op * period;
                for i in 1..shape.steps {
                    let (phase, _, _, t) = &trace[start + 2 + 2 * i];
                    assert_eq!(*phase, slot);
                    assert_eq!(t, &golden.steps[i - 1].t, "{modulus_bits} bits, k {k}, slot {slot}, op {op}, step {i}");
                }
                let (phase, done, result, _) = &trace[start + period];
                assert!(
                    *done && *phase == slot,
                    "{modulus_bits} bits, k {k}, slot {slot}, op {op}: done after {period} cycles"
                );
                assert_eq!(
                    result[..],
                    golden.result.limbs()[..],
                    "{modulus_bits} bits, k {k}, slot {slot}, op {op}: result"
                );
            }
        }
        assert_eq!(trace.iter().filter(|c| c.1).count(), 4, "no other done pulses");
    }
}
