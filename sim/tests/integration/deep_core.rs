//! The lanes decryption cores at full width in Verilator: a 2048-bit phe key, phe vectors started
//! whenever the core is ready, every plaintext phe's, every job the same cycles but for the wait
//! for its pair.

use ecrt_contract::host::{base_loads, decryption_key_loads};
use ecrt_contract::limbs::from_limbs;
use ecrt_golden::hw::{schedule_cost, DelayedEcrtKey, FoldEcrtKey, Schedule};
use ecrt_golden::phe_format::read_private_key;
use ecrt_hdl::multiplier::delay_mul::DelayTiming;
use ecrt_sim::deep_core::DeepCoreSim;
use ecrt_sim::BuildOptions;
use num_bigint::BigUint;

/// The deep loop's core: four vectors, three in flight at k = 3, the fourth waiting for a pair.
#[test]
fn full_width_deep_core_decrypts_phe_vectors() {
    let (k, window_bits) = (3, 5);
    let file = crate::common::vectors(2048);
    let key = read_private_key(&file["private_key"].to_string()).unwrap();
    let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
    let hw = FoldEcrtKey::new(key.p(), key.q(), k, schedule).unwrap();
    let shape = *hw.fold_p().shape();
    let (digits, lanes, exponent_bits) = (hw.classic().digits(), shape.deep_lanes(), hw.classic().exp_bits());
    let mut sim =
        DeepCoreSim::build(&shape, exponent_bits, window_bits, &BuildOptions { progress: true, ..Default::default() })
            .unwrap();
    sim.load_key(&decryption_key_loads(&hw, window_bits)).unwrap();
    let cases: Vec<&serde_json::Value> = file["cases"].as_array().unwrap().iter().take(lanes / 2 + 1).collect();
    let ciphertexts: Vec<Vec<u64>> = cases
        .iter()
        .map(|c| {
            let c: BigUint = c["ciphertext"]["v"].as_str().unwrap().parse().unwrap();
            base_loads(&c, digits).iter().map(|load| load.1).collect()
        })
        .collect();
    let path_cycles = shape.deep_path_cycles(schedule_cost(schedule, exponent_bits).unwrap().0) as u64;
    let results = sim.decrypt(&ciphertexts, 3 * path_cycles).unwrap();
    for r in &results {
        let want: BigUint = cases[r.tag as usize]["raw_plaintext"].as_str().unwrap().parse().unwrap();
        assert_eq!(from_limbs(r.limbs.iter().copied()), want, "job {}", r.tag);
    }
    // Every job: its pair's paths, the correction, and fewer than k + 3 cycles of wait for its
    // pair's first lane (the last started when a pair was free again).
    let latencies: Vec<u64> = results.iter().map(|r| r.latency).collect();
    let least = *latencies.iter().min().unwrap();
    assert!(least > path_cycles, "{latencies:?}");
    assert!(latencies.iter().all(|&l| l - least < lanes as u64), "{latencies:?}");
}

/// The delayed-quotient multiplier's core: two vectors, one after the other (one pair), each in
/// its paths' exact cycles, the correction and a lane's wait.
#[test]
#[ignore = "slow: a 2048-bit model of its own; the delay engine's accelerator test and its multiplier's full-width test cover it in parts; scripts/test --full runs it"]
fn full_width_delay_core_decrypts_phe_vectors() {
    let (k, window_bits) = (3, 5);
    let file = crate::common::vectors(2048);
    let key = read_private_key(&file["private_key"].to_string()).unwrap();
    let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
    let timing = DelayTiming::new(k);
    let hw = DelayedEcrtKey::delayed(key.p(), key.q(), k, timing.quotient_delay, schedule).unwrap();
    let shape = *hw.fold_p().shape();
    let (digits, exponent_bits) = (hw.classic().digits(), hw.classic().exp_bits());
    let options = BuildOptions { progress: true, ..Default::default() };
    let mut sim = DeepCoreSim::build_delay(&shape, exponent_bits, window_bits, &options).unwrap();
    sim.load_key(&decryption_key_loads(&hw, window_bits)).unwrap();
    let cases: Vec<&serde_json::Value> = file["cases"].as_array().unwrap().iter().take(2).collect();
    let ciphertexts: Vec<Vec<u64>> = cases
        .iter()
        .map(|c| {
            let c: BigUint = c["ciphertext"]["v"].as_str().unwrap().parse().unwrap();
            base_loads(&c, digits).iter().map(|load| load.1).collect()
        })
        .collect();
    let path_cycles = timing.path_cycles(&shape, schedule_cost(schedule, exponent_bits).unwrap().0) as u64;
    let results = sim.decrypt(&ciphertexts, 3 * path_cycles).unwrap();
    assert_eq!(results.len(), 2);
    for r in &results {
        let want: BigUint = cases[r.tag as usize]["raw_plaintext"].as_str().unwrap().parse().unwrap();
        assert_eq!(from_limbs(r.limbs.iter().copied()), want, "job {}", r.tag);
        assert!(r.latency > path_cycles && r.latency < path_cycles + digits as u64 + 16, "{}", r.latency);
    }
}
