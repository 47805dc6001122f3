use super::*;
use crate::host::{base_loads, decryption_key_loads, KeyLoad};
use crate::limbs::from_limbs;
use crate::testing::{schedule_products, simulate};
use ecrt_golden::hw::{FoldEcrtKey, FoldShape, FoldValue, PrimePathTrace, Schedule};
use ecrt_golden::prime::random_prime_pair;
use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::One;
use rand::SeedableRng;

#[test]
fn decrypt_core_is_synthesizable() {
    let mut uut = DecryptCore::new(&FoldShape::new(34, 2).unwrap(), 8, Schedule::FixedWindow { window_bits: 2 });
    uut.connect_all();
    yosys_validate("ecrt_decrypt_core", &generate_verilog(&uut)).unwrap();
}

/// Every multiplication of one prime's path in the order the slot performs them.
fn path_products(path: &PrimePathTrace<FoldValue>) -> Vec<BigUint> {
    let mut products = vec![path.c_redc.clone(), path.c_mont.value()];
    products.extend(schedule_products(&path.exp.states));
    products.extend([path.x.clone(), path.l.clone(), path.term.clone()]);
    products
}

#[test]
fn decrypts_like_the_golden_model_step_by_step() {
    decrypts_like_the_golden_model(Schedule::FixedWindow { window_bits: 3 }, 3);
}

#[test]
fn decrypts_like_the_golden_model_step_by_step_segmented() {
    decrypts_like_the_golden_model(Schedule::RightToLeft { segments: 1 }, 2);
}

/// A small key in rust-hdl's simulator: two ciphertexts back to back (one an edge case), every
/// multiplication of both paths equal to the golden model's trace, the plaintexts and tags right,
/// and both decryptions the same number of cycles.
fn decrypts_like_the_golden_model(schedule: Schedule, k: usize) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(44);
    let key_bits = 64usize;
    let w = crate::exponentiation::slot_control::exponent_window_bits(schedule);
    let (p, q) = random_prime_pair(key_bits as u64 / 2, &mut rng);
    let hw = FoldEcrtKey::new(&p, &q, k, schedule).unwrap();
    let shape = *hw.fold_p().shape();
    let digits = hw.classic().digits();
    let n2 = hw.classic().n_squared().clone();
    let random = loop {
        let c = rng.gen_biguint_below(&n2);
        if c.gcd(hw.classic().n()).is_one() {
            break c;
        }
    };
    let ciphertexts = [random, &n2 - 1u32];
    let traces: Vec<_> = ciphertexts.iter().map(|c| hw.decrypt_trace(c).unwrap()).collect();

    let key_loads: Vec<KeyLoad> = decryption_key_loads(&hw, w);
    let limbs: Vec<Vec<u64>> =
        ciphertexts.iter().map(|c| base_loads(c, digits).iter().map(|l| l.1).collect()).collect();
    let per_job = (traces[0].p.exp.multiplications + 5) * (4 * digits + 2) + 4 * digits + 16;
    let cycles = key_loads.len() + 2 * per_job;
    // The test bench: load the key, then for each job shift its limbs in and start it when
    // ready; take result limbs whenever offered.
    let (mut job, mut limb, mut started) = (0usize, 0usize, Vec::new());
    let trace = simulate(DecryptCore::new(&shape, hw.classic().exp_bits(), schedule), cycles, move |uut, cycle| {
        uut.key_load.next = false;
        uut.limb_in_valid.next = false;
        uut.start.next = false;
        if let Some(&(slot, target, data)) = key_loads.get(cycle) {
            uut.key_load.next = true;
            uut.key_load_slot.next = slot;
            uut.key_load_target.next = target.into();
            uut.key_load_data.next = data.into();
        } else if job < limbs.len() && uut.ready.val() {
            if limb < limbs[job].len() {
                uut.limb_in_valid.next = true;
                uut.limb_in.next = limbs[job][limb].into();
                limb += 1;
            } else {
                uut.start.next = true;
                uut.tag_in.next = (0xA000 + job as u64).into();
                started.push(cycle);
                job += 1;
                limb = 0;
            }
        }
        let valid = uut.result_valid.val();
        uut.result_take.next = valid;
        let engine = &uut.engine;
        let product = from_limbs(engine.result.iter().map(|r| r.val().to_u64()));
        (
            engine.mul_done.val().then(|| (engine.phase.val() as usize, product)),
            valid.then(|| (uut.result_tag.val().to_u64(), uut.result_limb.val().to_u64())),
            started.clone(),
        )
    });

    let products: Vec<(usize, BigUint)> = trace.iter().filter_map(|c| c.0.clone()).collect();
    for (slot, paths) in [(0, [&traces[0].p, &traces[1].p]), (1, [&traces[0].q, &traces[1].q])] {
        let got: Vec<&BigUint> = products.iter().filter(|p| p.0 == slot).map(|p| &p.1).collect();
        let want: Vec<BigUint> = paths.iter().flat_map(|path| path_products(path)).collect();
        assert_eq!(got.len(), want.len(), "slot {slot}: multiplications");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(*g, w, "slot {slot}: multiplication {k}");
        }
    }
    let out: Vec<(u64, u64)> = trace.iter().filter_map(|c| c.1).collect();
    assert_eq!(out.len(), 2 * digits, "two results of S limbs each");
    for (job, chunk) in out.chunks(digits).enumerate() {
        assert!(chunk.iter().all(|l| l.0 == 0xA000 + job as u64), "job {job}: tag");
        assert_eq!(from_limbs(chunk.iter().map(|l| l.1)), traces[job].result, "job {job}: plaintext");
    }
    // Constant time: the same number of cycles from start to the first result limb.
    let starts = &trace.last().unwrap().2;
    let firsts: Vec<usize> = (0..trace.len()).filter(|&c| trace[c].1.is_some()).collect();
    assert_eq!(firsts[0] - starts[0], firsts[digits] - starts[1], "both decryptions take the same cycles");
}
