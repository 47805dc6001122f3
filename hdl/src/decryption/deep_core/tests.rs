use super::*;
use crate::host::{base_loads, decryption_key_loads, KeyLoad};
use crate::limbs::from_limbs;
use crate::multiplier::delay_mul::DelayTiming;
use crate::testing::simulate;
use ecrt_golden::hw::{DelayedEcrtKey, FoldEcrtKey, Schedule};
use ecrt_golden::prime::random_prime_pair;
use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::One;
use rand::SeedableRng;

#[test]
fn deep_core_is_synthesizable() {
    let mut uut = DeepCore::new(&FoldShape::new(34, 2).unwrap(), 8, 2);
    uut.connect_all();
    yosys_validate("ecrt_deep_core", &generate_verilog(&uut)).unwrap();
}

#[test]
fn delay_core_is_synthesizable() {
    let mut uut = DelayCore::new(&DelayTiming::shape(34, 2).unwrap(), 8, 2);
    uut.connect_all();
    yosys_validate("ecrt_delay_core", &generate_verilog(&uut)).unwrap();
}

/// A test that a small key runs in `$core`'s simulation: more jobs than pairs, shifted in and
/// started whenever the core is ready (several in flight), results taken as they come: every
/// plaintext and tag right (one job an edge case, n² − 1), results in the order their jobs
/// started, and every job the same cycles from its start to its first result limb
/// (`$path(shape, exponentiation's multiplications)`) but for the wait for its pair's first lane
/// to decide (fewer than its lanes' cycles); the core counts the jobs it holds, every cycle.
/// `$key(p, q, k, schedule)` is the golden model's key, `$lanes(shape)` the core's lanes.
macro_rules! decrypts_several_jobs {
    ($test:ident, $core:ident, $key:expr, $lanes:expr, $path:expr) => {
        #[test]
        fn $test() {
            let mut rng = rand::rngs::StdRng::seed_from_u64(45);
            for (k, window_bits) in [(1usize, 3usize), (2, 2), (3, 4)] {
                let key_bits = 64usize;
                let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
                let (p, q) = random_prime_pair(key_bits as u64 / 2, &mut rng);
                let hw = ($key)(&p, &q, k, schedule);
                let shape = *hw.fold_p().shape();
                let (digits, lanes) = (hw.classic().digits(), ($lanes)(&shape));
                let jobs = lanes / 2 + 2;
                let n2 = hw.classic().n_squared().clone();
                let ciphertexts: Vec<BigUint> = (0..jobs)
                    .map(|i| {
                        if i == 1 {
                            return &n2 - 1u32;
                        }
                        loop {
                            let c = rng.gen_biguint_below(&n2);
                            if c.gcd(hw.classic().n()).is_one() {
                                break c;
                            }
                        }
                    })
                    .collect();
                let plaintexts: Vec<BigUint> = ciphertexts.iter().map(|c| hw.decrypt(c).unwrap()).collect();
                let key_loads: Vec<KeyLoad> = decryption_key_loads(&hw, window_bits);
                let limbs: Vec<Vec<u64>> =
                    ciphertexts.iter().map(|c| base_loads(c, digits).iter().map(|l| l.1).collect()).collect();
                let exp_multiplications = ecrt_golden::hw::schedule_cost(schedule, hw.classic().exp_bits()).unwrap().0;
                let path = ($path)(&shape, exp_multiplications);
                let cycles =
                    key_loads.len() + (jobs.div_ceil(lanes / 2) + 1) * path + jobs * (2 * digits + 4 * lanes + 16);
                let (mut job, mut limb, mut started) = (0usize, 0usize, Vec::new());
                let trace =
                    simulate($core::new(&shape, hw.classic().exp_bits(), window_bits), cycles, move |uut, cycle| {
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
                        let limb = valid.then(|| (uut.result_tag.val().to_u64(), uut.result_limb.val().to_u64()));
                        (limb, started.clone(), uut.jobs.val().to_u64() as usize)
                    });

                let out: Vec<(usize, (u64, u64))> =
                    trace.iter().enumerate().filter_map(|(c, t)| t.0.map(|l| (c, l))).collect();
                assert_eq!(out.len(), jobs * digits, "k = {k}: {jobs} results of S limbs each");
                let starts = &trace.last().unwrap().1;
                for (i, chunk) in out.chunks(digits).enumerate() {
                    let tag = chunk[0].1 .0;
                    assert!(chunk.iter().all(|l| l.1 .0 == tag), "k = {k}: one tag a result");
                    assert_eq!(tag, 0xA000 + i as u64, "k = {k}: results in the order jobs started");
                    assert_eq!(from_limbs(chunk.iter().map(|l| l.1 .1)), plaintexts[i], "k = {k}, job {i}: plaintext");
                    // From its start: the wait for a pair's first lane, the pair's paths, the correction.
                    let latency = chunk[0].0 - starts[i];
                    assert!(
                        latency >= path && latency < path + 2 * digits + 4 * lanes + 16,
                        "k = {k}, job {i}: {latency} cycles"
                    );
                }
                // With more than one pair, more than one decryption was in flight: a job started
                // before the one before it had its result.
                if lanes / 2 > 1 {
                    assert!(starts[1] < out[0].0, "k = {k}: jobs overlap");
                }
                // Jobs held: started (as of the cycle after), less those whose last limb was taken.
                let finished: Vec<usize> = out.chunks(digits).map(|chunk| chunk[digits - 1].0).collect();
                for (cycle, t) in trace.iter().enumerate() {
                    let held =
                        starts.iter().filter(|&&c| c < cycle).count() - finished.iter().filter(|&&c| c < cycle).count();
                    assert_eq!(t.2, held, "k = {k}, cycle {cycle}: jobs held");
                }
                assert!(trace.iter().any(|t| t.2 >= lanes / 2), "k = {k}: every pair busy at once");
            }
        }
    };
}

decrypts_several_jobs!(
    decrypts_several_jobs_at_once_like_the_golden_model,
    DeepCore,
    |p, q, k, schedule| FoldEcrtKey::new(p, q, k, schedule).unwrap(),
    FoldShape::deep_lanes,
    FoldShape::deep_path_cycles
);

decrypts_several_jobs!(
    the_delay_core_decrypts_job_after_job_like_the_golden_model,
    DelayCore,
    |p, q, k, schedule| DelayedEcrtKey::delayed(p, q, k, DelayTiming::new(k).quotient_delay, schedule).unwrap(),
    DelayMul::lanes,
    |shape: &DelayedShape, multiplications| DelayTiming::new(shape.limbs_per_step).path_cycles(shape, multiplications)
);
