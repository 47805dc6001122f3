use super::*;
use crate::limbs::{from_limbs, to_limbs};
use crate::testing::simulate;
use ecrt_golden::hw::MontgomeryContext;
use ecrt_golden::prime::random_odd;
use num_bigint::RandBigInt;
use rand::{Rng, SeedableRng};

#[test]
fn montmul_is_synthesizable() {
    let mut uut = MontMul::new(3);
    uut.connect_all();
    yosys_validate("ecrt_montmul", &generate_verilog(&uut)).unwrap();
}

/// Moves part of some limbs' value into the limb below (limb_j += 2^17, limb_(j+1) −= 1): the same
/// number in the redundant form the multiplier produces.
fn redundant(mut limbs: Vec<u64>, rng: &mut impl Rng) -> Vec<u64> {
    for j in 0..limbs.len() - 1 {
        if limbs[j + 1] > 0 && rng.gen_bool(0.5) {
            limbs[j + 1] -= 1;
            limbs[j] += 1 << 17;
        }
    }
    limbs
}

/// Both slots' moduli and N′ on the multiplier's inputs.
fn drive_moduli(uut: &mut MontMul, n_limbs: &[Vec<u64>], n_primes: &[u64]) {
    for (port, &limb) in uut.n0.iter_mut().zip(&n_limbs[0]) {
        port.next = limb.into();
    }
    for (port, &limb) in uut.n1.iter_mut().zip(&n_limbs[1]) {
        port.next = limb.into();
    }
    uut.n_prime0.next = n_primes[0].into();
    uut.n_prime1.next = n_primes[1].into();
}

struct Op {
    ctx: MontgomeryContext,
    a: Vec<u64>,
    b: Vec<u64>,
}

/// Both slots multiply at once (different moduli), then square their results back to back; every
/// step's redundant T and every result equal the golden model's.
#[test]
fn interleaved_slots_match_the_golden_model_step_by_step() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    for modulus_bits in [30u64, 49, 66] {
        let digits = (modulus_bits as usize + 2).div_ceil(17);
        let ops: Vec<Op> = (0..2)
            .map(|_| {
                let n = random_odd(modulus_bits, &mut rng);
                let ctx = MontgomeryContext::new(&n, 17).unwrap();
                assert_eq!(ctx.digits(), digits);
                let two_n = &n * 2u32;
                let a = redundant(to_limbs(&rng.gen_biguint_below(&two_n), digits), &mut rng);
                let b = redundant(to_limbs(&(&two_n - 1u32), digits), &mut rng);
                Op { ctx, a, b }
            })
            .collect();
        let n_limbs: Vec<Vec<u64>> = ops.iter().map(|op| to_limbs(op.ctx.modulus(), digits)).collect();
        let n_primes: Vec<u64> = ops.iter().map(|op| op.ctx.n_prime() as u64).collect();
        let first_ops: Vec<(Vec<u64>, Vec<u64>)> = ops.iter().map(|op| (op.a.clone(), op.b.clone())).collect();
        let period = 2 * digits + 2;
        let cycles = 2 * period + 6;
        // Per cycle: phase, done, result value, T value.
        let trace = simulate(MontMul::new(digits), cycles, move |uut, cycle| {
            drive_moduli(uut, &n_limbs, &n_primes);
            let phase = uut.phase.val() as usize;
            let done = uut.done.val();
            let result: Vec<u64> = uut.result.iter().map(|r| r.val().to_u64()).collect();
            uut.start.next = false;
            if cycle < 2 || done {
                // First the given operands; after a result, its square.
                let (a, b) = if cycle < 2 { first_ops[phase].clone() } else { (result.clone(), result.clone()) };
                uut.start.next = cycle < 2 || done;
                for j in 0..digits {
                    if phase == 0 {
                        uut.a_in0[j].next = a[j].into();
                        uut.b_in0[j].next = b[j].into();
                    } else {
                        uut.a_in1[j].next = a[j].into();
                        uut.b_in1[j].next = b[j].into();
                    }
                }
            }
            (phase, done, from_limbs(result), from_limbs(uut.t.iter().map(|t| t.val().to_u64())))
        });

        for (slot, op) in ops.iter().enumerate() {
            let a = from_limbs(op.a.iter().copied());
            let b = from_limbs(op.b.iter().copied());
            let first = op.ctx.mont_mul_trace(&a, &b);
            let square = op.ctx.mont_mul_trace(&first.result, &first.result);
            // Slot `slot` starts in cycle `slot`; its step i is in stage 1 at start + 2 + 2i.
            for (k, golden) in [first, square].iter().enumerate() {
                let start = slot + k * period;
                for i in 1..digits {
                    let (phase, _, _, t) = &trace[start + 2 + 2 * i];
                    assert_eq!(*phase, slot);
                    assert_eq!(t, &golden.steps[i - 1].t_after, "{modulus_bits} bits, slot {slot}, op {k}, step {i}");
                }
                let (phase, done, result, _) = &trace[start + period];
                assert!(
                    *done && *phase == slot,
                    "{modulus_bits} bits, slot {slot}, op {k}: done after {period} cycles"
                );
                assert_eq!(result, &golden.result, "{modulus_bits} bits, slot {slot}, op {k}: result");
            }
        }
        // No other done pulses than the four expected.
        assert_eq!(trace.iter().filter(|c| c.1).count(), 4);
    }
}

/// Slot 0 runs a wide REDC of a ciphertext-sized C = C_hi·R + C_lo, slot 1 a multiplication of
/// A − 1 (the exact division's operand): every step's T (plus the digits of C not yet entered) and
/// both results equal the golden model's.
#[test]
fn wide_redc_and_decrement_match_the_golden_model() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(18);
    for modulus_bits in [30u64, 66] {
        let digits = (modulus_bits as usize + 2).div_ceil(17);
        let moduli: Vec<_> = (0..2)
            .map(|_| {
                let n = random_odd(modulus_bits, &mut rng);
                MontgomeryContext::new(&n, 17).unwrap()
            })
            .collect();
        let c = rng.gen_biguint_below(&(moduli[0].modulus() * moduli[0].modulus()));
        let c_limbs = to_limbs(&c, 2 * digits);
        let a = rng.gen_biguint_below(&(moduli[1].modulus() * 2u32)) + 1u32;
        let b = rng.gen_biguint_below(&(moduli[1].modulus() * 2u32));
        let ops = [
            (c_limbs[digits..].to_vec(), c_limbs[..digits].to_vec(), true, false),
            (redundant(to_limbs(&a, digits), &mut rng), to_limbs(&b, digits), false, true),
        ];
        let n_limbs: Vec<Vec<u64>> = moduli.iter().map(|m| to_limbs(m.modulus(), digits)).collect();
        let n_primes: Vec<u64> = moduli.iter().map(|m| m.n_prime() as u64).collect();
        let period = 2 * digits + 2;
        let trace = simulate(MontMul::new(digits), period + 4, move |uut, cycle| {
            drive_moduli(uut, &n_limbs, &n_primes);
            let phase = uut.phase.val() as usize;
            uut.start.next = cycle < 2;
            if cycle < 2 {
                let (a, b, redc, decrement) = &ops[phase];
                uut.redc.next = *redc;
                uut.decrement.next = *decrement;
                for j in 0..digits {
                    if phase == 0 {
                        uut.a_in0[j].next = a[j].into();
                        uut.b_in0[j].next = b[j].into();
                    } else {
                        uut.a_in1[j].next = a[j].into();
                        uut.b_in1[j].next = b[j].into();
                    }
                }
            }
            let result: Vec<u64> = uut.result.iter().map(|r| r.val().to_u64()).collect();
            (uut.done.val(), from_limbs(result), from_limbs(uut.t.iter().map(|t| t.val().to_u64())))
        });
        let redc = moduli[0].redc_wide_trace(&c);
        for i in 1..digits {
            // The columns hold T without the digits of C that have not entered yet.
            let pending = (&c >> (17 * (digits + i))) << (17 * digits);
            assert_eq!(&trace[2 + 2 * i].2 + pending, redc.steps[i - 1].t_after, "{modulus_bits} bits, REDC step {i}");
        }
        assert!(trace[period].0);
        assert_eq!(trace[period].1, redc.result, "{modulus_bits} bits: REDC result");
        assert!(trace[period + 1].0);
        assert_eq!(trace[period + 1].1, moduli[1].mont_mul(&(&a - 1u32), &b), "{modulus_bits} bits: (A − 1)·B");
    }
}
