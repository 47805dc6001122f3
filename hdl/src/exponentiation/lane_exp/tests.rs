use super::*;
use crate::host::{base_loads, decryption_key_loads, KeyLoad};
use crate::limbs::from_limbs;
use crate::multiplier::delay_mul::DelayTiming;
use crate::testing::{drive, schedule_products, simulate};
use ecrt_golden::hw::{DelayedEcrtKey, EcrtHwKey, FoldEcrtKey, FoldValue, PrimePathTrace, Schedule};
use ecrt_golden::prime::random_prime_pair;
use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::One;
use rand::rngs::StdRng;
use rand::SeedableRng;

#[test]
fn lane_exp_is_synthesizable() {
    let mut uut = LaneExp::new(&FoldShape::new(34, 2).unwrap(), 12, 3);
    uut.connect_all();
    yosys_validate("ecrt_lane_exp", &generate_verilog(&uut)).unwrap();
}

#[test]
fn delay_exp_is_synthesizable() {
    let mut uut = DelayExp::new(&DelayTiming::shape(34, 2).unwrap(), 12, 3);
    uut.connect_all();
    yosys_validate("ecrt_delay_exp", &generate_verilog(&uut)).unwrap();
}

/// Every multiplication of one prime's path in the order a lane performs them.
fn path_products(path: &PrimePathTrace<FoldValue>) -> Vec<BigUint> {
    let mut products = vec![path.c_redc.clone(), path.c_mont.value()];
    products.extend(schedule_products(&path.exp.states));
    products.extend([path.x.clone(), path.l.clone(), path.term.clone()]);
    products
}

/// What a cycle shows.
struct Cycle {
    lane: usize,
    loaded: bool,
    mul_done: bool,
    done: bool,
    done_next: Vec<bool>,
    result: Vec<u64>,
}

/// A random ciphertext coprime to n.
fn ciphertext(hw: &EcrtHwKey, rng: &mut StdRng) -> BigUint {
    loop {
        let c = rng.gen_biguint_below(hw.n_squared());
        if c.gcd(hw.n()).is_one() {
            break c;
        }
    }
}

/// A test that a small key's two primes run in every lane of `$unit` (lane l: prime l mod 2 of
/// ciphertext l / 2), twice in a row: each lane's every product equals the golden model's path
/// in order, its term too, in exactly `$period(shape, exponentiation's multiplications)` cycles.
/// `$key(p, q, k, schedule)` is the golden model's key, `$lanes(shape)` the unit's lanes.
macro_rules! every_lane_runs_its_primes_path {
    ($test:ident, $unit:ident, $key:expr, $lanes:expr, $period:expr) => {
        #[test]
        fn $test() {
            run_paths(&mut StdRng::seed_from_u64(43));
        }

        fn run_paths(rng: &mut StdRng) {
            for (key_bits, k, window_bits) in [(64usize, 1usize, 3usize), (64, 2, 2), (80, 3, 4)] {
                let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
                let (p, q) = random_prime_pair(key_bits as u64 / 2, rng);
                let hw = ($key)(&p, &q, k, schedule);
                let shape = *hw.fold_p().shape();
                let (lanes, digits, l) = (($lanes)(&shape), hw.classic().digits(), shape.operand_limbs);
                // Two rounds of a path a lane; the first round's first ciphertext is n² − 1.
                let ciphertexts: Vec<Vec<BigUint>> = (0..2)
                    .map(|round| {
                        (0..lanes.div_ceil(2))
                            .map(|i| {
                                if round + i == 0 {
                                    hw.classic().n_squared() - 1u32
                                } else {
                                    ciphertext(hw.classic(), rng)
                                }
                            })
                            .collect()
                    })
                    .collect();
                let expected: Vec<Vec<(Vec<BigUint>, BigUint)>> = ciphertexts
                    .iter()
                    .map(|round| {
                        (0..lanes)
                            .map(|lane| {
                                let trace = hw.decrypt_trace(&round[lane / 2]).unwrap();
                                let path = if lane % 2 == 0 { &trace.p } else { &trace.q };
                                (path_products(path), path.term.clone())
                            })
                            .collect()
                    })
                    .collect();
                let cipher_limbs: Vec<Vec<(Vec<u64>, Vec<u64>)>> = ciphertexts
                    .iter()
                    .map(|round| {
                        round
                            .iter()
                            .map(|c| {
                                let limbs: Vec<u64> = base_loads(c, digits).iter().map(|load| load.1).collect();
                                assert!(limbs[2 * l..].iter().all(|&limb| limb == 0));
                                (limbs[..l].to_vec(), limbs[l..2 * l].to_vec())
                            })
                            .collect()
                    })
                    .collect();
                let exp_multiplications = expected[0][0].0.len() - 5;
                let period = ($period)(&shape, exp_multiplications);
                let key_loads: Vec<KeyLoad> = decryption_key_loads(&hw, window_bits);
                let cycles = key_loads.len() + 2 * period + 4 * lanes;

                let mut started = vec![0usize; lanes];
                let mut pending: Vec<Option<(usize, usize)>> = vec![None; 4];
                let loading = key_loads.len();
                let trace: Vec<Cycle> =
                    simulate($unit::new(&shape, hw.classic().exp_bits(), window_bits), cycles, move |uut, cycle| {
                        let lane = uut.lane.val().to_u64() as usize;
                        uut.key_load.next = false;
                        uut.start.next = false;
                        if let Some(&(slot, target, data)) = key_loads.get(cycle) {
                            uut.key_load.next = true;
                            uut.key_load_slot.next = slot;
                            uut.key_load_target.next = target.into();
                            uut.key_load_data.next = data.into();
                        } else if cycle > loading {
                            // The lane deciding now loads three cycles later.
                            let deciding = (lane + 3) % lanes;
                            assert_eq!(uut.deciding_lane.val().to_u64() as usize, deciding);
                            if uut.can_start.val() && started[deciding] < cipher_limbs.len() {
                                uut.start.next = true;
                                uut.start_prime.next = deciding % 2 == 1;
                                pending[cycle % 4] = Some((deciding, started[deciding]));
                                started[deciding] += 1;
                            }
                        }
                        // A start three cycles ago: its ciphertext now.
                        let loaded = pending[(cycle + 1) % 4].take().map(|(l, round)| {
                            assert_eq!(l, lane, "the started lane loads three cycles later");
                            let (low, high) = &cipher_limbs[round][l / 2];
                            drive(&mut uut.cipher_low, low);
                            drive(&mut uut.cipher_high, high);
                        });
                        Cycle {
                            lane,
                            loaded: loaded.is_some(),
                            mul_done: uut.mul_done.val(),
                            done: uut.done.val(),
                            done_next: uut.done_next.iter().map(|d| d.val()).collect(),
                            result: uut.result.iter().map(|r| r.val().to_u64()).collect(),
                        }
                    });

                for (c, pair) in trace.windows(2).enumerate() {
                    for (set, &announced) in pair[0].done_next.iter().enumerate() {
                        assert_eq!(
                            announced, pair[1].done,
                            "k = {k}, cycle {c}, set {set}: done announced a cycle ahead"
                        );
                    }
                }
                for lane in 0..lanes {
                    let of_lane = |f: fn(&Cycle) -> bool| -> Vec<usize> {
                        trace.iter().enumerate().filter(|(_, c)| c.lane == lane && f(c)).map(|(i, _)| i).collect()
                    };
                    let (products, dones, loads) =
                        (of_lane(|c| c.mul_done), of_lane(|c| c.done), of_lane(|c| c.loaded));
                    assert_eq!(dones.len(), 2, "k = {k}, lane {lane}: two paths done");
                    for (round, round_expected) in expected.iter().enumerate() {
                        let (golden, term) = &round_expected[lane];
                        let got = &products[round * golden.len()..(round + 1) * golden.len()];
                        for (i, (&at, want)) in got.iter().zip(golden).enumerate() {
                            assert_eq!(
                                &from_limbs(trace[at].result.iter().copied()),
                                want,
                                "k = {k}, lane {lane}, round {round}: product {i}"
                            );
                        }
                        let at = *got.last().unwrap();
                        assert_eq!(at, dones[round], "k = {k}, lane {lane}, round {round}: done with the term");
                        assert_eq!(&from_limbs(trace[at].result.iter().copied()), term);
                        assert_eq!(at - loads[round], period, "k = {k}, lane {lane}, round {round}: cycles");
                    }
                }
            }
        }
    };
}

mod deep {
    use super::*;
    every_lane_runs_its_primes_path!(
        every_lane_runs_its_primes_path_as_the_golden_model,
        LaneExp,
        |p, q, k, schedule| FoldEcrtKey::new(p, q, k, schedule).unwrap(),
        FoldShape::deep_lanes,
        FoldShape::deep_path_cycles
    );
}

mod delay {
    use super::*;
    every_lane_runs_its_primes_path!(
        both_lanes_run_their_primes_paths_as_the_golden_model,
        DelayExp,
        |p, q, k, schedule| {
            let d = DelayTiming::new(k).quotient_delay;
            DelayedEcrtKey::delayed(p, q, k, d, schedule).unwrap()
        },
        DelayMul::lanes,
        |shape: &DelayedShape, multiplications| DelayTiming::new(shape.limbs_per_step)
            .path_cycles(shape, multiplications)
    );
}
