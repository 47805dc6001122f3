//! Level 3: the exponentiation unit at full width in Verilator, against the golden model, on the
//! phe vectors' keys (c reduced mod p² and raised to p − 1, as decryption does) and on random and
//! edge cases.

use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::host::SlotKey;
use ecrt_golden::phe_format::read_private_key;
use ecrt_golden::prime::random_odd;
use ecrt_sim::modexp::ModExpSim;
use ecrt_sim::BuildOptions;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;
use std::path::PathBuf;

fn build(key_bits: usize, window_bits: usize) -> ModExpSim {
    let config = AcceleratorConfig { key_bits, window_bits, ..Default::default() };
    ModExpSim::build(&config, &BuildOptions { progress: true, ..Default::default() }, false).unwrap()
}

fn vectors(bits: u32) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/vectors/phe-{bits}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Runs (modulus, exponent, base) in both slots and checks results and multiplication counts;
/// returns the cycles until both finished. The slots take turns on the multiplier, so one of them
/// waits one cycle for its first turn.
fn check_pair(sim: &mut ModExpSim, jobs: [(&BigUint, &BigUint, &BigUint); 2], record: bool) -> u64 {
    let config = sim.manifest().config.clone();
    let mut keys = Vec::new();
    for (slot, (n, e, x)) in jobs.iter().enumerate() {
        let key = SlotKey::for_config(n, e, &config).unwrap();
        sim.load_key_and_base(slot, &key, x).unwrap();
        keys.push(key);
    }
    let finished = sim.run([true, true], record, 50_000_000).unwrap();
    let mut cycles = Vec::new();
    for (slot, (n, e, x)) in jobs.iter().enumerate() {
        let f = finished[slot].as_ref().unwrap();
        assert_eq!(f.result, x.modpow(e, n), "slot {slot}: {}-bit modulus", n.bits());
        assert_eq!(f.multiplications, config.multiplications_per_exponentiation());
        if record {
            let (ctx, fold) = (keys[slot].context(), keys[slot].fold());
            let c_redc = ctx.redc_wide(x);
            let c_mont = fold.mul(&fold.exact(&c_redc), &fold.exact(ctx.r3_mod_n()));
            assert_eq!(f.products[0], c_redc, "slot {slot}: the wide REDC");
            assert_eq!(f.products[1], c_mont.value(), "slot {slot}: into the domain");
        }
        cycles.push(f.cycles);
    }
    assert_eq!(cycles[0].abs_diff(cycles[1]), 1, "the slots finish one cycle apart");
    // Exactly the configuration's formula, plus the one cycle a slot waits for its turn.
    let total = cycles[0].max(cycles[1]);
    assert_eq!(total, config.cycles_per_exponentiation() as u64 + 1);
    total
}

/// Exponentiations on a phe vector's key: the whole ciphertext goes in (the unit reduces it by
/// the wide REDC first), the results are c^(p−1) mod p² and c^(q−1) mod q², and every pair takes
/// the formula's cycles.
fn phe_vector_key(bits: u32, cases: usize) {
    let file = vectors(bits);
    let key = read_private_key(&file["private_key"].to_string()).unwrap();
    let mut sim = build(bits as usize, 5);
    let (p2, q2) = (key.p_squared(), key.q_squared());
    let (ep, eq) = (key.p() - 1u32, key.q() - 1u32);
    let mut counts = Vec::new();
    for case in file["cases"].as_array().unwrap().iter().take(cases) {
        let c: BigUint = case["ciphertext"]["v"].as_str().unwrap().parse().unwrap();
        counts.push(check_pair(&mut sim, [(p2, &ep, &c), (q2, &eq, &c)], false));
    }
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "{bits}: cycle counts differ: {counts:?}");
    eprintln!("{bits}-bit key: {} cycles per pair of exponentiations", counts[0]);
}

#[test]
#[ignore = "slow: a 1024-bit unit of its own (the accelerator's tests decrypt these vectors); scripts/test --full runs it"]
fn phe_vector_key_1024() {
    phe_vector_key(1024, 4);
}

#[test]
#[ignore = "slow: a 2048-bit unit of its own (the accelerator's tests cover 2048 bits); scripts/test --full runs it"]
fn phe_vector_key_2048() {
    phe_vector_key(2048, 2);
}

/// Edge cases at 512 bits (the smallest unit), with every multiplication's first product
/// checked: exponents all ones and a single bit, bases 0, 1 and N − 1; and the count is the same
/// for all.
#[test]
fn edge_cases_take_the_same_cycles() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(512);
    let mut sim = build(512, 5);
    let exp_bits = sim.manifest().exponent_bits as u64;
    let (n0, n1) = (random_odd(512, &mut rng), random_odd(512, &mut rng));
    let all_ones = (BigUint::from(1u32) << exp_bits) - 1u32;
    let single = BigUint::from(1u32) << (exp_bits / 2);
    let zero = BigUint::from(0u32);
    let one = BigUint::from(1u32);
    let mut counts = Vec::new();
    for (e0, x0, e1, x1) in [
        (&all_ones, &zero, &single, &one),
        (&single, &(&n0 - 1u32), &all_ones, &(&n1 - 1u32)),
        (&zero, &(&n0 - 2u32), &one, &(&n1 / 3u32)),
    ] {
        counts.push(check_pair(&mut sim, [(&n0, e0, x0), (&n1, e1, x1)], true));
    }
    assert!(counts.windows(2).all(|w| w[0] == w[1]), "cycle counts differ: {counts:?}");
}

/// A 4096-bit modulus (a 4096-bit key's p²) with a 2048-bit exponent.
#[test]
#[ignore = "slow: the largest unit; scripts/test --full runs it"]
fn random_4096() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(4096);
    let mut sim = build(4096, 5);
    let n = random_odd(4096, &mut rng);
    let e = rng.gen_biguint(2048);
    let x = rng.gen_biguint_below(&n);
    check_pair(&mut sim, [(&n, &e, &x), (&n, &e, &x)], false);
}

/// Yosys maps every multiplier leaf, and nothing else, to a DSP48E1: k per window of B (the 24×17
/// a·b products), k per limb of M̂ (the loop products; the others multiply by 0 and go), and 4 for
/// the classic quotient digit. In the one-core accelerator at k = 1, the configuration the
/// command's `explore` test sweeps, so that whichever of the two runs second finds its units in
/// the estimate cache.
#[test]
fn every_dsp_is_a_multiplier_leaf() {
    let config = AcceleratorConfig {
        key_bits: 512,
        window_bits: 4,
        digits_per_step: 1,
        engine: ecrt_contract::config::Engine::Slots,
        ..Default::default()
    };
    let emitted = ecrt_hdl::emit::emit(&config).unwrap();
    let resources = ecrt_sim::estimate(&emitted.verilog, &emitted.manifest.top, &Default::default()).unwrap();
    let (k, l, modulus_limbs) = {
        let shape = config.fold_shape();
        (shape.limbs_per_step, shape.operand_limbs, shape.modulus_limbs)
    };
    // k·⌈17L/23⌉ a·b products; the loop's t·m̂ products, none where M̂ (and every classic modulus)
    // has no limbs; each slot's b_0·N', d·(b_0·N') and the classic quotient.
    let windows = ecrt_golden::hw::wide::window_count(l);
    assert!(windows < l);
    assert_eq!(resources.dsp48e1 as usize, k * (windows + modulus_limbs) + 4);
    assert_eq!(resources.bram36, 0.0, "the window tables fit in LUT RAM");
}
