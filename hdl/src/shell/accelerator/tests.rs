use super::*;
use crate::host::HardwareKey;
use crate::interface::*;
use crate::testing::simulate;
use ecrt_golden::prime::random_prime_pair;
use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::One;
use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex};

/// A tiny configuration: 64-bit key, 2 digits per step (S = 6), 3-bit windows, 2 cores, 64-bit
/// TDATA (2 lanes).
fn tiny() -> AcceleratorConfig {
    AcceleratorConfig {
        key_bits: 64,
        window_bits: 3,
        cores: 2,
        stream_bits: 64,
        digits_per_step: 2,
        engine: crate::config::Engine::Slots,
        ..Default::default()
    }
}

#[test]
fn accelerator_is_synthesizable() {
    let mut uut = Accelerator::new(&tiny());
    uut.connect_all();
    yosys_validate("ecrt_accelerator", &generate_verilog(&uut)).unwrap();
}

/// The index → target chain in `update` lists the enum's variants in their encoding order.
#[test]
fn accelerator_decodes_every_load_target() {
    let decoded = [
        "Modulus",
        "NPrime",
        "ModulusDiv",
        "NPrimeDiv",
        "ModulusN",
        "NPrimeN",
        "R3",
        "One",
        "TMont",
        "Base",
        "Exponent",
        "MHat",
    ];
    assert_eq!(decoded.len(), DECODED_TARGETS);
    assert_eq!(load_target_names(), decoded, "update Accelerator::update's target chain to LoadTarget");
    let rtl: Vec<String> = match crate::exponentiation::slot_control::LoadTarget::descriptor().kind {
        TypeKind::Enum(names) => names.iter().map(|n| n.trim_start_matches("LoadTarget::").to_string()).collect(),
        _ => Vec::new(),
    };
    assert_eq!(rtl, load_target_names(), "the RTL's LoadTarget keeps the contract's order");
}

/// A 64-bit key of two random 32-bit primes, for `config`'s windows.
fn tiny_key(config: &AcceleratorConfig, rng: &mut rand::rngs::StdRng) -> HardwareKey {
    let (p, q) = random_prime_pair(32, rng);
    HardwareKey::new(&p, &q, config).unwrap()
}

/// One phase of the host's script.
enum Phase {
    /// AXI4-Lite writes (Some(data)) and reads (None), in order.
    Registers(Vec<(u32, Option<u32>)>),
    /// Request frames (words), offered back to back; the phase ends when as many results came.
    Stream(Vec<Vec<u32>>),
    /// Request frames, offered back to back; the phase ends when the last beat is taken.
    Send(Vec<Vec<u32>>),
}

#[derive(Default)]
struct Host {
    phase: usize,
    step: usize,
    in_beat: usize,
    results_wanted: usize,
    out_words: Vec<u32>,
}

#[derive(Default, Debug, Clone)]
struct Seen {
    reads: Vec<u32>,
    results: Vec<ResultFrame>,
    /// The cycle every phase ended.
    phase_ends: Vec<usize>,
    /// Result packets: beats taken with TLAST.
    packets: usize,
}

/// Runs the script on the accelerator of `config`, the host taking result beats with
/// probability `ready`.
fn run(config: &AcceleratorConfig, phases: Vec<Phase>, cycles: usize, ready: f64, seed: u64) -> Seen {
    let (digits, stream_bits, lanes) = (config.digits(), config.stream_bits, config.lanes());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    let mut host = Host::default();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    simulate(Accelerator::new(config), cycles, move |uut, cycle| {
        let mut seen = record.lock().unwrap();
        let h = &mut host;
        uut.s_axil_bready.next = true;
        uut.s_axil_rready.next = true;
        uut.s_axil_wstrb.next = 0xF.into();
        // Results: TVALID is a register, so a beat shown now leaves at the coming edge if TREADY.
        let tready = rng.gen_bool(ready);
        uut.m_axis_tready.next = tready;
        if tready && uut.m_axis_tvalid.val() {
            // Frames by size: a packet (up to TLAST) holds one or more whole frames.
            h.out_words.extend(uut.m_axis_tdata.iter().map(|d| d.val().to_u64() as u32));
            if h.out_words.len() == crate::interface::result_words(digits).div_ceil(lanes) * lanes {
                let bytes = words_to_bytes(&std::mem::take(&mut h.out_words));
                seen.results.push(decode_result(&bytes, digits, stream_bits).expect("a well-formed result frame"));
            }
            assert!(!uut.m_axis_tlast.val() || h.out_words.is_empty(), "TLAST only at a frame's end");
            seen.packets += usize::from(uut.m_axis_tlast.val());
        }
        uut.s_axis_tvalid.next = false;
        let Some(phase) = phases.get(h.phase) else { return };
        let done = match phase {
            Phase::Registers(ops) => {
                let (addr, data) = ops[h.step];
                match data {
                    Some(data) => {
                        if uut.s_axil_bvalid.val() {
                            uut.s_axil_awvalid.next = false;
                            uut.s_axil_wvalid.next = false;
                            h.step += 1;
                        } else {
                            uut.s_axil_awvalid.next = true;
                            uut.s_axil_wvalid.next = true;
                            uut.s_axil_awaddr.next = (addr as u64).into();
                            uut.s_axil_wdata.next = (data as u64).into();
                        }
                    }
                    None => {
                        if uut.s_axil_rvalid.val() {
                            uut.s_axil_arvalid.next = false;
                            seen.reads.push(uut.s_axil_rdata.val().to_u64() as u32);
                            h.step += 1;
                        } else {
                            uut.s_axil_arvalid.next = true;
                            uut.s_axil_araddr.next = (addr as u64).into();
                        }
                    }
                }
                h.step == ops.len()
            }
            Phase::Stream(frames) | Phase::Send(frames) => {
                let wait = matches!(phase, Phase::Stream(_));
                if h.in_beat == 0 && h.step == 0 {
                    h.results_wanted = seen.results.len() + frames.len();
                }
                // Requests: TREADY is a register, so a beat offered now is taken at the coming
                // edge if it is high now.
                if h.step < frames.len() {
                    let words = &frames[h.step];
                    let beats = words.len() / lanes;
                    for i in 0..lanes {
                        uut.s_axis_tdata[i].next = (words[h.in_beat * lanes + i] as u64).into();
                    }
                    uut.s_axis_tlast.next = h.in_beat + 1 == beats;
                    uut.s_axis_tvalid.next = true;
                    if uut.s_axis_tready.val() {
                        h.in_beat += 1;
                        if h.in_beat == beats {
                            h.in_beat = 0;
                            h.step += 1;
                        }
                    }
                }
                h.step == frames.len() && (!wait || seen.results.len() == h.results_wanted)
            }
        };
        if done {
            seen.phase_ends.push(cycle);
            h.phase += 1;
            h.step = 0;
            h.in_beat = 0;
        }
    });
    let seen = seen.lock().unwrap().clone();
    seen
}

/// End to end in rust-hdl's simulator with a 64-bit key: configuration read-back, a request
/// before the key (KEY_NOT_LOADED), the key loaded through KEY_SELECT/KEY_DATA, good requests on
/// two cores (plaintexts equal to the golden model's), a wrong key id and a malformed frame among
/// them, back-pressure on the results, and the counters and error flags at the end.
#[test]
fn accelerator_decrypts_end_to_end_through_its_registers_and_streams() {
    let config = tiny();
    let mut rng = rand::rngs::StdRng::seed_from_u64(404);
    let hw = tiny_key(&config, &mut rng);
    let (digits, stream_bits) = (config.digits(), config.stream_bits);
    assert_eq!((hw.classic().digits(), hw.classic().exp_bits()), (digits, config.exponent_bits()));
    let ciphertext = |rng: &mut rand::rngs::StdRng| loop {
        let c = rng.gen_biguint_below(hw.classic().n_squared());
        if c.gcd(hw.classic().n()).is_one() {
            break c;
        }
    };
    let request =
        |tag: u16, key_id: u8, c: &BigUint| encode_request_words(tag, key_id, c, digits, stream_bits).unwrap();

    let mut phases = vec![Phase::Registers(
        [REG_ID, REG_CORES, REG_DIGITS, REG_STREAM_BITS, REG_KEY_BITS, REG_STATUS].iter().map(|&a| (a, None)).collect(),
    )];
    // A request before any key.
    let early = ciphertext(&mut rng);
    phases.push(Phase::Stream(vec![request(1, 5, &early)]));
    // The key, through the registers.
    let loads = hw.loads(config.window_bits);
    let mut writes: Vec<(u32, Option<u32>)> =
        key_load_writes(&loads, 5).into_iter().map(|(a, v)| (a, Some(v))).collect();
    writes.push((REG_STATUS, None));
    writes.push((REG_KEY_ID, None));
    phases.push(Phase::Registers(writes));
    // Good requests with a wrong key id and a malformed one among them; the edge case n² − 1.
    let mut cs: Vec<BigUint> = (0..3).map(|_| ciphertext(&mut rng)).collect();
    cs.push(hw.classic().n_squared() - 1u32);
    let mut frames: Vec<Vec<u32>> = cs.iter().enumerate().map(|(k, c)| request(100 + k as u16, 5, c)).collect();
    frames.insert(2, request(200, 6, &cs[0]));
    let mut bad = request(201, 5, &cs[1]);
    bad[3] |= 1 << 20;
    frames.insert(4, bad);
    phases.push(Phase::Stream(frames));
    phases.push(Phase::Registers(
        [REG_JOBS_IN, REG_JOBS_OUT, REG_JOBS_FAILED, REG_ERRORS, REG_STATUS].iter().map(|&a| (a, None)).collect(),
    ));

    let seen = run(&config, phases, 3600, 0.6, 9);
    assert_eq!(seen.phase_ends.len(), 5, "every phase finished: {seen:?}");
    assert_eq!(&seen.reads[..6], &[ID_VALUE, 2, digits as u32, 64, 64, 0]);
    assert_eq!(&seen.reads[6..8], &[STATUS_KEY_VALID, 5]);
    assert_eq!(&seen.reads[8..], &[7, 7, 3, ERROR_KEY_NOT_LOADED | ERROR_MALFORMED, STATUS_KEY_VALID]);

    let zero = BigUint::from(0u32);
    let by_tag =
        |tag: u16| seen.results.iter().find(|r| r.tag == tag).unwrap_or_else(|| panic!("a result for tag {tag}"));
    assert_eq!(seen.results.len(), 7);
    assert_eq!(by_tag(1), &ResultFrame { tag: 1, status: RESULT_KEY_NOT_LOADED, plaintext: zero.clone() });
    assert_eq!(by_tag(200), &ResultFrame { tag: 200, status: RESULT_KEY_NOT_LOADED, plaintext: zero.clone() });
    assert_eq!(by_tag(201), &ResultFrame { tag: 201, status: RESULT_MALFORMED, plaintext: zero });
    for (k, c) in cs.iter().enumerate() {
        let want = hw.decrypt(c).unwrap();
        assert_eq!(by_tag(100 + k as u16), &ResultFrame { tag: 100 + k as u16, status: 0, plaintext: want });
    }
}

/// A host leaves two jobs in the cores and goes; a soft reset, then the resynchronisation frame:
/// its answer and the next job's plaintext are all that come out, and the key stayed. On two
/// two-slot cores, on one lanes-engine core, which holds both jobs, and on two delay-engine cores
/// (one job each: a second on one core would wait in the dispatcher, which the reset clears).
#[test]
fn accelerator_soft_reset_drops_what_a_gone_host_left() {
    check_soft_reset(&tiny(), 4000);
    let lanes = AcceleratorConfig { cores: 1, engine: Engine::Lanes, ..tiny() };
    check_soft_reset(&lanes, 3 * lanes.cycles_per_decryption_path());
    let delay = AcceleratorConfig { engine: Engine::Delay, ..tiny() };
    check_soft_reset(&delay, 3 * delay.cycles_per_decryption_path());
}

fn check_soft_reset(config: &AcceleratorConfig, cycles: usize) {
    let config = config.clone();
    let mut rng = rand::rngs::StdRng::seed_from_u64(505);
    let hw = tiny_key(&config, &mut rng);
    let (digits, stream_bits) = (config.digits(), config.stream_bits);
    let layout = FrameLayout::new(digits, stream_bits).unwrap();
    let c = |rng: &mut rand::rngs::StdRng| rng.gen_biguint_below(hw.classic().n_squared());
    let request = |tag: u16, c: &BigUint| encode_request_words(tag, 5, c, digits, stream_bits).unwrap();
    let loads = hw.loads(config.window_bits);
    let writes = key_load_writes(&loads, 5).into_iter().map(|(a, v)| (a, Some(v))).collect();
    let live = c(&mut rng);
    let phases = vec![
        Phase::Registers(writes),
        // The gone host's two jobs.
        Phase::Send(vec![request(1, &c(&mut rng)), request(2, &c(&mut rng))]),
        Phase::Registers(vec![(REG_STATUS, None), (REG_CONTROL, Some(CONTROL_SOFT_RESET)), (REG_STATUS, None)]),
        Phase::Stream(vec![bytes_to_words(&resync_request(&layout)), request(3, &live)]),
        Phase::Registers(vec![(REG_STATUS, None), (REG_KEY_ID, None), (REG_JOBS_OUT, None)]),
    ];
    let seen = run(&config, phases, cycles, 1.0, 10);
    assert_eq!(seen.phase_ends.len(), 5, "every phase finished: {seen:?}");
    let tags: Vec<u16> = seen.results.iter().map(|r| r.tag).collect();
    assert_eq!(tags, vec![RESYNC_TAG, 3], "nothing of the gone host's comes out");
    assert!(is_resync_answer(&seen.results[0]));
    assert_eq!(seen.results[1].plaintext, hw.decrypt(&live).unwrap());
    assert_eq!(seen.reads[0], STATUS_KEY_VALID | STATUS_BUSY, "the gone host's jobs were under way");
    assert_eq!(seen.reads[1] & STATUS_KEY_VALID, STATUS_KEY_VALID, "the key stays");
    assert_eq!(&seen.reads[3..], &[5, 2], "the key id stays; two frames went out");
}

/// PACKET_HOLD reaches the collector: requests sent together start the two cores a request frame
/// apart, and with the hold a host sets (FrameLayout::packet_hold_cycles) each pair of results
/// leaves as one packet; without it, each result alone. The register reads back.
#[test]
fn accelerator_packet_hold_joins_the_results_of_requests_sent_together() {
    let config = tiny();
    let mut rng = rand::rngs::StdRng::seed_from_u64(606);
    let hw = tiny_key(&config, &mut rng);
    let (digits, stream_bits) = (config.digits(), config.stream_bits);
    let hold = FrameLayout::new(digits, stream_bits).unwrap().packet_hold_cycles();
    let cs: Vec<BigUint> = (0..4).map(|_| rng.gen_biguint_below(hw.classic().n_squared())).collect();
    let frames: Vec<Vec<u32>> = cs
        .iter()
        .enumerate()
        .map(|(k, c)| encode_request_words(k as u16, 5, c, digits, stream_bits).unwrap())
        .collect();
    let loads = hw.loads(config.window_bits);
    let run_with = |hold: u32| {
        let mut writes: Vec<(u32, Option<u32>)> =
            key_load_writes(&loads, 5).into_iter().map(|(a, v)| (a, Some(v))).collect();
        writes.extend([(REG_PACKET_HOLD, Some(hold)), (REG_PACKET_HOLD, None)]);
        let seen = run(&config, vec![Phase::Registers(writes), Phase::Stream(frames.clone())], 3000, 1.0, 12);
        assert_eq!(seen.phase_ends.len(), 2, "every phase finished: {seen:?}");
        assert_eq!(seen.reads, vec![hold]);
        for (k, c) in cs.iter().enumerate() {
            let result = seen.results.iter().find(|r| r.tag == k as u16).expect("every result");
            assert_eq!(result.plaintext, hw.decrypt(c).unwrap());
        }
        seen.packets
    };
    assert_eq!(run_with(0), 4, "without a hold, each result alone");
    assert_eq!(run_with(hold), 2, "with PACKET_HOLD {hold}, a packet per pair of cores");
}
