use super::*;
use crate::testing::{schedule_products, simulate};
use ecrt_golden::hw::{exp_in_domain, DomainMultiplier, FoldContext, FoldValue, Schedule};
use ecrt_golden::prime::random_odd;
use num_bigint::{BigUint, RandBigInt};
use rand::rngs::StdRng;
use rand::SeedableRng;

#[test]
fn lane_exp_is_synthesizable() {
    let mut uut = LaneExp::new(&FoldShape::new(34, 2).unwrap(), 12, 3);
    uut.connect_all();
    yosys_validate("ecrt_lane_exp", &generate_verilog(&uut)).unwrap();
}

fn drive<const N: usize>(ports: &mut [Signal<In, Bits<N>>], limbs: &[u64]) {
    for (port, &limb) in ports.iter_mut().zip(limbs) {
        port.next = limb.into();
    }
}

/// What a cycle shows.
struct Cycle {
    lane: usize,
    loaded: bool,
    mul_done: bool,
    done: bool,
    result: Vec<u64>,
}

/// Every lane exponentiates (two keys, alternating), twice in a row: each lane's every product
/// equals the golden model's schedule in order, its result too, limb for limb, and it is done
/// exactly one multiplication's cycles per multiplication of the schedule after its start.
#[test]
fn every_lane_matches_the_golden_schedule() {
    let mut rng = StdRng::seed_from_u64(41);
    for (modulus_bits, k, exponent_bits, window_bits) in
        [(30usize, 1usize, 12usize, 3usize), (40, 2, 11, 2), (45, 3, 14, 4)]
    {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let lanes = shape.deep_lanes();
        let schedule = Schedule::FixedWindow { window_bits: window_bits as u32 };
        let windows = exponent_bits.div_ceil(window_bits);
        let top_shift = (windows - 1) * window_bits;
        let top_ones = (BigUint::from(1u32) << exponent_bits) - (BigUint::from(1u32) << top_shift);
        // Key 0's top window is all ones (acc = the table's last entry, bypassed as it is
        // written when the window is full), key 1's is 0 (acc = the key's 1).
        let keys: Vec<(FoldContext, BigUint)> = (0..2)
            .map(|key| {
                let ctx = FoldContext::with_width(&random_odd(modulus_bits as u64, &mut rng), modulus_bits, k).unwrap();
                let low = rng.gen_biguint_below(&(BigUint::from(1u32) << top_shift));
                (ctx, if key == 0 { low | &top_ones } else { low })
            })
            .collect();
        let window_values: Vec<Vec<u64>> = keys
            .iter()
            .map(|(_, e)| {
                (0..windows)
                    .map(|i| ((e >> ((windows - 1 - i) * window_bits)) % (1u64 << window_bits)).try_into().unwrap())
                    .collect()
            })
            .collect();
        // Two rounds of one exponentiation a lane.
        let jobs: Vec<Vec<(usize, FoldValue)>> = (0..2)
            .map(|round| {
                (0..lanes)
                    .map(|lane| {
                        let key = (lane + round) % 2;
                        let ctx = &keys[key].0;
                        (key, ctx.exact(&rng.gen_biguint_below(ctx.bound())))
                    })
                    .collect()
            })
            .collect();
        let expected: Vec<Vec<(Vec<BigUint>, FoldValue)>> = jobs
            .iter()
            .map(|round| {
                round
                    .iter()
                    .map(|(key, base)| {
                        let (ctx, e) = &keys[*key];
                        let trace = exp_in_domain(ctx, base, e, exponent_bits, schedule).unwrap();
                        (schedule_products(&trace.states), trace.result)
                    })
                    .collect()
            })
            .collect();
        let multiplications = expected[0][0].0.len();
        let period = multiplications * shape.deep_cycles();
        let loading = 2 + 2 * windows;
        let cycles = loading + 2 * period + 4 * lanes;

        let (key_data, jobs_in) = (
            keys.iter().map(|(c, _)| (c.m_hat().to_vec(), c.one().limbs().to_vec())).collect::<Vec<_>>(),
            jobs.clone(),
        );
        let mut started = vec![0usize; lanes];
        let mut pending: Vec<Option<(usize, usize)>> = vec![None; 4];
        let trace: Vec<Cycle> =
            simulate(LaneExp::new(&shape, exponent_bits, window_bits), cycles, move |uut, cycle| {
                let lane = uut.lane.val().to_u64() as usize;
                uut.key_write.next = false;
                uut.window_write.next = false;
                uut.start.next = false;
                if cycle < 2 {
                    uut.key_write.next = true;
                    uut.key_select.next = cycle == 1;
                    drive(&mut uut.key_m_hat, &key_data[cycle].0);
                    drive(&mut uut.key_one, &key_data[cycle].1);
                } else if cycle < loading {
                    let (key, index) = ((cycle - 2) / windows, (cycle - 2) % windows);
                    uut.window_write.next = true;
                    uut.key_select.next = key == 1;
                    uut.window_index.next = (index as u64).into();
                    uut.window_value.next = window_values[key][index].into();
                } else {
                    // The lane deciding now loads three cycles later.
                    let deciding = (lane + 3) % lanes;
                    if uut.can_start.val() && started[deciding] < jobs_in.len() {
                        let (key, _) = jobs_in[started[deciding]][deciding];
                        uut.start.next = true;
                        uut.start_key.next = key == 1;
                        pending[cycle % 4] = Some((deciding, started[deciding]));
                        started[deciding] += 1;
                    }
                }
                // A start three cycles ago: its base now.
                let loaded = pending[(cycle + 1) % 4].take().map(|(l, round)| {
                    assert_eq!(l, lane, "the started lane loads three cycles later");
                    drive(&mut uut.base_in, jobs_in[round][l].1.limbs());
                });
                Cycle {
                    lane,
                    loaded: loaded.is_some(),
                    mul_done: uut.mul_done.val(),
                    done: uut.done.val(),
                    result: uut.result.iter().map(|r| r.val().to_u64()).collect(),
                }
            });

        for lane in 0..lanes {
            let products: Vec<(usize, &Cycle)> =
                trace.iter().enumerate().filter(|(_, c)| c.lane == lane && c.mul_done).collect();
            let dones: Vec<usize> =
                trace.iter().enumerate().filter(|(_, c)| c.lane == lane && c.done).map(|(i, _)| i).collect();
            let loads: Vec<usize> =
                trace.iter().enumerate().filter(|(_, c)| c.lane == lane && c.loaded).map(|(i, _)| i).collect();
            assert_eq!(dones.len(), 2, "k = {k}, lane {lane}: two exponentiations done");
            for (round, round_expected) in expected.iter().enumerate() {
                let (golden, result) = &round_expected[lane];
                let got = &products[round * golden.len()..(round + 1) * golden.len()];
                for (i, ((_, cycle), want)) in got.iter().zip(golden).enumerate() {
                    let value = cycle.result.iter().rev().fold(BigUint::default(), |acc, &l| (acc << 17) + l);
                    assert_eq!(&value, want, "k = {k}, lane {lane}, round {round}: product {i}");
                }
                let (at, last) = got.last().unwrap();
                assert_eq!(*at, dones[round], "k = {k}, lane {lane}, round {round}: done with the last product");
                assert_eq!(last.result, result.limbs(), "k = {k}, lane {lane}, round {round}: result");
                assert_eq!(*at - loads[round], period, "k = {k}, lane {lane}, round {round}: cycles");
            }
        }
    }
}
