use super::*;
use crate::host::SlotKey;
use crate::limbs::from_limbs;
use crate::testing::{schedule_products, simulate};
use ecrt_golden::hw::{exp_in_domain, FoldShape, Schedule};
use ecrt_golden::prime::random_odd;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;

#[test]
fn modexp_is_synthesizable() {
    let mut uut = ModExp::new(&FoldShape::new(34, 2).unwrap(), 12, Schedule::FixedWindow { window_bits: 3 }, true);
    uut.connect_all();
    yosys_validate("ecrt_modexp", &generate_verilog(&uut)).unwrap();
}

/// Every Montgomery multiplication's result, in the order the hardware performs them, from the
/// golden model: the classic wide REDC, the folding ×R³ and the schedule's trace, the classic way
/// out.
fn golden_sequence(
    key: &SlotKey,
    base: &BigUint,
    exponent: &BigUint,
    exponent_bits: usize,
    schedule: Schedule,
) -> Vec<BigUint> {
    let (ctx, fold) = (key.context(), key.fold());
    let c_redc = ctx.redc_wide(base);
    let x_mont = fold.mul(&fold.exact(&c_redc), &fold.exact(ctx.r3_mod_n()));
    let trace = exp_in_domain(fold, &x_mont, exponent, exponent_bits, schedule).unwrap();
    let mut sequence = vec![c_redc, x_mont.value()];
    sequence.extend(schedule_products(&trace.states));
    sequence.push(ctx.redc_wide(&trace.result.value()));
    sequence
}

/// Both slots exponentiate at once (different moduli, exponents and bases) in rust-hdl's
/// simulator; every multiplication of each slot equals the golden model's, and so does the result.
#[test]
fn two_slots_match_the_golden_model_multiplication_by_multiplication() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let (windows, segmented) = (|w| Schedule::FixedWindow { window_bits: w }, Schedule::RightToLeft { segments: 1 });
    for (modulus_bits, exponent_bits, schedule, k) in
        [(40u64, 13usize, windows(1), 2usize), (45, 20, windows(3), 3), (64, 11, windows(4), 1), (45, 9, segmented, 2)]
            .into_iter()
            // A single window, and a single bit: the operands of the schedule's first and last
            // multiplications at once.
            .chain([(40, 3, windows(3), 2), (45, 1, segmented, 2)])
    {
        let w = crate::exponentiation::slot_control::exponent_window_bits(schedule);
        let shape = FoldShape::new(modulus_bits as usize, k).unwrap();
        let digits = shape.classic_digits();
        let mut slots = Vec::new();
        for slot in 0..2 {
            let n = random_odd(modulus_bits, &mut rng);
            // Slot 1 gets the all-ones exponent and base N − 1; slot 0 random ones.
            let exponent = if slot == 1 {
                (BigUint::from(1u32) << exponent_bits) - 1u32
            } else {
                rng.gen_biguint(exponent_bits as u64)
            };
            // Slot 0's base is ciphertext-sized: reduced by the wide REDC.
            let base = if slot == 1 { &n - 1u32 } else { rng.gen_biguint_below(&(&n * &n)) };
            let key = SlotKey::new(&n, &exponent, modulus_bits as usize, k, exponent_bits, w).unwrap();
            let expected = golden_sequence(&key, &base, &exponent, exponent_bits, schedule);
            assert_eq!(expected.last().unwrap() % &n, base.modpow(&exponent, &n));
            let mut loads = key.key_loads();
            loads.extend(key.base_loads(&base));
            slots.push((loads, expected));
        }
        let loads: Vec<(bool, crate::exponentiation::slot_control::LoadTarget, u64)> =
            (0..2).flat_map(|s| slots[s].0.iter().map(move |&(t, d)| (s == 1, t.into(), d))).collect();
        let ops = slots[0].1.len();
        let cycles = loads.len() + 4 + (ops + 1) * (4 * digits.max(shape.steps) + 2);
        let load_count = loads.len();
        let trace = simulate(ModExp::new(&shape, exponent_bits, schedule, false), cycles, move |uut, cycle| {
            uut.load.next = false;
            uut.start0.next = false;
            uut.start1.next = false;
            if let Some(&(slot, t, d)) = loads.get(cycle) {
                uut.load.next = true;
                uut.load_slot.next = slot;
                uut.load_target.next = t;
                uut.load_data.next = d.into();
            } else if cycle == load_count {
                uut.start0.next = true;
                uut.start1.next = true;
            }
            let result = from_limbs(uut.result.iter().map(|r| r.val().to_u64()));
            let announced = (uut.done_next.val(), uut.done_slot_next.val() as usize);
            (
                uut.mul_done.val(),
                uut.phase.val() as usize,
                uut.done.val(),
                uut.done_slot.val() as usize,
                result,
                announced,
            )
        });
        for (cycle, pair) in trace.windows(2).enumerate() {
            assert_eq!(pair[0].5 .0, pair[1].2, "{modulus_bits}-bit modulus, {schedule:?}: done announced at {cycle}");
            if pair[1].2 {
                assert_eq!(pair[0].5 .1, pair[1].3, "the slot announced finishes");
            }
        }
        for (slot, (_, expected)) in slots.iter().enumerate() {
            let products: Vec<&BigUint> = trace.iter().filter(|c| c.0 && c.1 == slot).map(|c| &c.4).collect();
            assert_eq!(
                products.len(),
                expected.len(),
                "{modulus_bits}-bit modulus, {schedule:?}: slot {slot} multiplications"
            );
            for (k, (got, want)) in products.iter().zip(expected).enumerate() {
                assert_eq!(*got, want, "{modulus_bits}-bit modulus, {schedule:?}: slot {slot}, multiplication {k}");
            }
            let finished: Vec<_> = trace.iter().filter(|c| c.2 && c.3 == slot).collect();
            assert_eq!(finished.len(), 1, "slot {slot} finishes once");
            assert_eq!(&finished[0].4, expected.last().unwrap());
        }
    }
}
