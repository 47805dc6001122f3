//! The primes' decryption paths in the deep loop's lanes at full width in Verilator: a 2048-bit
//! phe key loaded as the decryption core takes it, six lanes running both primes' paths of three
//! phe vectors, each term equal to the golden model's limb for limb and the terms' sum mod n to
//! phe's plaintext, each path in exactly `deep_path_cycles`.

use ecrt_contract::host::{base_loads, decryption_key_loads};
use ecrt_contract::limbs::from_limbs;
use ecrt_golden::hw::{schedule_cost, FoldEcrtKey, Schedule};
use ecrt_golden::phe_format::read_private_key;
use ecrt_sim::lane_exp::{LaneExpSim, LanePath};
use ecrt_sim::BuildOptions;
use num_bigint::BigUint;

#[test]
#[ignore = "slow: deep_core's full-width test runs these paths end to end; scripts/test --full runs it"]
fn full_width_lanes_decrypt_phe_vectors() {
    let (k, window_bits) = (3, 5);
    let file = crate::common::vectors(2048);
    let key = read_private_key(&file["private_key"].to_string()).unwrap();
    let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
    let hw = FoldEcrtKey::new(key.p(), key.q(), k, schedule).unwrap();
    let shape = *hw.fold_p().shape();
    let (lanes, l, digits) = (shape.deep_lanes(), shape.operand_limbs, hw.classic().digits());
    let exponent_bits = hw.classic().exp_bits();
    let mut sim =
        LaneExpSim::build(&shape, exponent_bits, window_bits, &BuildOptions { progress: true, ..Default::default() })
            .unwrap();
    sim.load_key(&decryption_key_loads(&hw, window_bits)).unwrap();

    let cases: Vec<&serde_json::Value> = file["cases"].as_array().unwrap().iter().take(lanes / 2).collect();
    let ciphertexts: Vec<BigUint> =
        cases.iter().map(|c| c["ciphertext"]["v"].as_str().unwrap().parse().unwrap()).collect();
    let limbs: Vec<Vec<u64>> =
        ciphertexts.iter().map(|c| base_loads(c, digits).iter().map(|load| load.1).collect()).collect();
    let paths: Vec<Option<LanePath>> = (0..lanes)
        .map(|lane| {
            let c = &limbs[lane / 2];
            Some(LanePath { prime_q: lane % 2 == 1, low: &c[..l], high: &c[l..2 * l] })
        })
        .collect();
    let period = shape.deep_path_cycles(schedule_cost(schedule, exponent_bits).unwrap().0) as u64;
    let terms = sim.run(&paths, period + 8 * lanes as u64).unwrap();
    for (i, (case, c)) in cases.iter().zip(&ciphertexts).enumerate() {
        let trace = hw.decrypt_trace(c).unwrap();
        let (p, q) = (terms[2 * i].as_ref().unwrap(), terms[2 * i + 1].as_ref().unwrap());
        let (term_p, term_q) = (from_limbs(p.limbs.iter().copied()), from_limbs(q.limbs.iter().copied()));
        assert_eq!((&term_p, &term_q), (&trace.p.term, &trace.q.term), "case {i}: the terms");
        let want: BigUint = case["raw_plaintext"].as_str().unwrap().parse().unwrap();
        assert_eq!((term_p + term_q) % hw.classic().n(), want, "case {i}: the plaintext");
        assert_eq!((p.cycles, q.cycles), (period, period), "case {i}: cycles");
    }
}
