use super::*;
use crate::testing::simulate;
use ecrt_golden::hw::{exact_limbs, ClassicOp, ClassicPass, ClassicTrace, FoldContext, FoldValue};
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

/// Slot `slot`'s operands A and B.
fn drive_slot(uut: &mut FoldMul, slot: usize, a: &[u64], b: &[u64]) {
    if slot == 0 {
        drive(&mut uut.a_in0, a);
        drive(&mut uut.b_in0, b);
    } else {
        drive(&mut uut.a_in1, a);
        drive(&mut uut.b_in1, b);
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
        let period = shape.fold_cycles();
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
            // Each result is squared: every multiplication continues when it is done.
            uut.continues0.next = true;
            uut.continues1.next = true;
            if cycle < 2 || done {
                // First the given operands; after a result, its square.
                let (a, b) = if cycle < 2 { inputs[phase].clone() } else { (result.clone(), result.clone()) };
                drive_slot(uut, phase, &a, &b);
            }
            (phase, done, result, uut.t.iter().map(|t| t.val().to_u64()).collect())
        });

        for (slot, (ctx, (a, b))) in contexts.iter().zip(&firsts).enumerate() {
            let first = ctx.mul_trace(a, b);
            let square = ctx.mul_trace(&first.result, &first.result);
            // Slot `slot` starts in cycle `slot`; its step i is in stage 1 at start + 4 + 2i.
            for (op, golden) in [first, square].iter().enumerate() {
                let start = slot + op * period;
                for i in 1..shape.steps {
                    let (phase, _, _, t) = &trace[start + 4 + 2 * i];
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

/// One slot's classic pass: its kind, modulus and operands.
#[derive(Clone)]
struct ClassicJob {
    op: ClassicOp,
    pass: ClassicPass,
    a: Vec<u64>,
    b: Vec<u64>,
}

/// Both slots run classic passes side by side (a multiplication and a wide REDC, then a
/// decremented pass and a multiplication, different moduli), each followed by a folding
/// multiplication of its result: every classic step's T equals the golden model's limb for limb,
/// each pass takes 4·s + 4 cycles, and the folding mode is unchanged after it.
#[test]
fn classic_passes_match_the_golden_model_step_by_step() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(20);
    for (modulus_bits, k) in [(34usize, 1usize), (40, 2), (64, 3)] {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let l = shape.operand_limbs;
        let fold = FoldContext::with_width(&random_odd(modulus_bits as u64, &mut rng), modulus_bits, k).unwrap();
        let n = random_odd(modulus_bits as u64, &mut rng);
        let p = ecrt_golden::prime::random_prime(modulus_bits as u64 / 2, &mut rng);
        let divider = ecrt_golden::hw::ExactDivider::new(&p, 17, shape.modulus_limbs).unwrap();
        let c = rng.gen_biguint_below(&(&n << (17 * l)));
        let x = rng.gen_biguint_below(&p) * &p + 1u32; // ≤ p², as the way out leaves it
        let limbs = |v: &num_bigint::BigUint| exact_limbs(&shape, v);
        let job = |op, modulus: &num_bigint::BigUint, a, b| ClassicJob {
            op,
            pass: ClassicPass::new(&shape, modulus).unwrap(),
            a,
            b,
        };
        // Per slot, two passes in a row.
        let jobs = [
            [
                job(
                    ClassicOp::Multiply,
                    &n,
                    limbs(&rng.gen_biguint_below(fold.bound())),
                    limbs(&rng.gen_biguint_below(&n)),
                ),
                job(ClassicOp::Decremented, divider.ctx().modulus(), limbs(&x), limbs(&1u32.into())),
            ],
            [
                job(
                    ClassicOp::WideRedc,
                    &n,
                    limbs(&(&c >> (17 * l))),
                    limbs(&(&c % (num_bigint::BigUint::from(1u32) << (17 * l)))),
                ),
                job(ClassicOp::Multiply, &n, limbs(&(&n - 1u32)), limbs(&(&n - 2u32))),
            ],
        ];
        let traces: Vec<Vec<ClassicTrace>> =
            jobs.iter().map(|slot| slot.iter().map(|j| j.pass.trace(j.op, &j.a, &j.b)).collect()).collect();
        let periods: Vec<Vec<usize>> =
            jobs.iter().map(|slot| slot.iter().map(|j| shape.classic_cycles(j.op)).collect()).collect();
        // Each slot's start cycles: its two passes back to back, then a folding square.
        let starts: Vec<[usize; 3]> =
            (0..2).map(|s| [s, s + periods[s][0], s + periods[s][0] + periods[s][1]]).collect();
        let cycles = starts.iter().map(|s| s[2]).max().unwrap() + shape.fold_cycles() + 2;
        let m_hat = fold.m_hat().to_vec();
        let drive_jobs = jobs.clone();
        let starts_tb = starts.clone();
        type Cycle = (usize, bool, Vec<u64>, Vec<u64>);
        let trace: Vec<Cycle> = simulate(FoldMul::new(&shape), cycles, move |uut, cycle| {
            for (port, &limb) in uut.m_hat0.iter_mut().zip(&m_hat).chain(uut.m_hat1.iter_mut().zip(&m_hat)) {
                port.next = limb.into();
            }
            let phase = uut.phase.val() as usize;
            let done = uut.done.val();
            let result: Vec<u64> = uut.result.iter().map(|r| r.val().to_u64()).collect();
            uut.start.next = false;
            // A slot continues until its last start.
            uut.continues0.next = cycle < starts_tb[0][2];
            uut.continues1.next = cycle < starts_tb[1][2];
            if let Some(which) = starts_tb[phase].iter().position(|&s| s == cycle) {
                uut.start.next = true;
                let (a, b) = if which < 2 {
                    let job = &drive_jobs[phase][which];
                    uut.classic.next = true;
                    uut.redc.next = job.op == ClassicOp::WideRedc;
                    uut.decrement.next = job.op == ClassicOp::Decremented;
                    let ports = if phase == 0 { &mut uut.n0 } else { &mut uut.n1 };
                    for (port, limb) in ports.iter_mut().zip(exact_limbs(&shape, job.pass.modulus())) {
                        port.next = limb.into();
                    }
                    if phase == 0 {
                        uut.n_prime0.next = job.pass.n_prime().into();
                    } else {
                        uut.n_prime1.next = job.pass.n_prime().into();
                    }
                    (job.a.clone(), job.b.clone())
                } else {
                    uut.classic.next = false;
                    (result.clone(), result.clone())
                };
                drive_slot(uut, phase, &a, &b);
            }
            (phase, done, result, uut.t.iter().map(|t| t.val().to_u64()).collect())
        });

        for slot in 0..2 {
            for (pass, golden) in traces[slot].iter().enumerate() {
                let start = starts[slot][pass];
                let what = format!("{modulus_bits} bits, k {k}, slot {slot}, pass {pass} ({:?})", jobs[slot][pass].op);
                for (i, step) in golden.steps.iter().enumerate().take(golden.steps.len() - 1) {
                    let (phase, _, _, t) = &trace[start + 8 + 4 * i];
                    assert_eq!(*phase, slot);
                    assert_eq!(t, &step.t, "{what}: step {i}");
                }
                let (phase, done, result, _) = &trace[start + periods[slot][pass]];
                assert!(*done && *phase == slot, "{what}: done after {} cycles", periods[slot][pass]);
                assert_eq!(result[..], golden.result.limbs()[..], "{what}: result");
            }
            // The folding square of the second pass's result.
            let second = &traces[slot][1].result;
            let square = fold.mul(second, second);
            let (_, done, result, _) = &trace[starts[slot][2] + shape.fold_cycles()];
            assert!(*done, "slot {slot}: folding square done");
            assert_eq!(result[..], square.limbs()[..], "{modulus_bits} bits, k {k}, slot {slot}: folding square");
        }
    }
}
