//! Level 3: the whole accelerator (register block, dispatcher, cores, collector) at full width in
//! Verilator, driven through its AXI4-Lite and AXI4-Stream ports as the XDMA IP drives them, against
//! the golden model and the phe vectors.

use ecrt_contract::config::{AcceleratorConfig, Engine, ExponentSchedule};
use ecrt_contract::host::HardwareKey;
use ecrt_contract::interface::{self as itf, encode_request_words};
use ecrt_golden::phe_format::read_private_key;
use ecrt_golden::prime::random_prime_pair;
use ecrt_sim::accelerator::{AcceleratorSim, OutputPacing, RunReport};
use ecrt_sim::BuildOptions;
use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::One;
use rand::SeedableRng;

const KEY_ID: u8 = 7;

/// The default configuration on the two-slot engine (the shell's tests run on it: its latency is
/// the shorter; the lanes engine's tests name theirs).
fn slots(key_bits: usize, cores: usize, stream_bits: usize) -> AcceleratorConfig {
    AcceleratorConfig { key_bits, cores, stream_bits, engine: Engine::Slots, ..Default::default() }
}

fn build(key_bits: usize, cores: usize, stream_bits: usize) -> AcceleratorSim {
    build_config(&slots(key_bits, cores, stream_bits))
}

fn build_config(config: &AcceleratorConfig) -> AcceleratorSim {
    AcceleratorSim::build(config, &BuildOptions { progress: true, ..Default::default() }, false).unwrap()
}

/// The two-slot engine on the segmented schedule (1-bit exponent windows).
fn segmented(key_bits: usize) -> AcceleratorConfig {
    AcceleratorConfig { schedule: ExponentSchedule::Segmented, window_bits: 1, ..slots(key_bits, 1, 256) }
}

fn hw_key(p: &BigUint, q: &BigUint, sim: &AcceleratorSim) -> HardwareKey {
    HardwareKey::new(p, q, &sim.manifest().config).unwrap()
}

fn random_key(key_bits: u64, rng: &mut rand::rngs::StdRng) -> (BigUint, BigUint) {
    random_prime_pair(key_bits / 2, rng)
}

fn random_units(hw: &HardwareKey, count: usize, rng: &mut rand::rngs::StdRng) -> Vec<BigUint> {
    let hw = hw.classic();
    let mut out = Vec::new();
    while out.len() < count {
        let c = rng.gen_biguint_below(hw.n_squared());
        if c.gcd(hw.n()).is_one() {
            out.push(c);
        }
    }
    out
}

fn requests(sim: &AcceleratorSim, ciphertexts: &[BigUint], key_id: u8) -> Vec<Vec<u32>> {
    let layout = sim.layout();
    ciphertexts
        .iter()
        .enumerate()
        .map(|(i, c)| encode_request_words(i as u16, key_id, c, layout.digits, layout.stream_bits).unwrap())
        .collect()
}

/// Runs requests with a generous hang guard.
fn run(sim: &mut AcceleratorSim, requests: &[Vec<u32>], pacing: OutputPacing) -> RunReport {
    let config = &sim.manifest().config;
    let guard = 4 * config.cycles_per_decryption_path() as u64;
    sim.run(requests, pacing, guard, |_| {}).unwrap()
}

/// The phe vectors of one size decrypt to phe's raw plaintexts on `cores` two-slot cores (`take`
/// of them: all, or a few for the quick suite).
fn check_phe_vectors(bits: u32, cores: usize, take: usize) {
    check_phe_vectors_on(&slots(bits as usize, cores, 256), take);
}

fn check_phe_vectors_on(config: &AcceleratorConfig, take: usize) {
    let (bits, cores) = (config.key_bits, config.cores);
    let file = crate::common::vectors(bits as u32);
    let key = read_private_key(&file["private_key"].to_string()).unwrap();
    let mut sim = build_config(config);
    let hw = hw_key(key.p(), key.q(), &sim);
    sim.load_key(&hw, KEY_ID).unwrap();
    let cases: Vec<&serde_json::Value> = file["cases"].as_array().unwrap().iter().take(take).collect();
    let ciphertexts: Vec<BigUint> =
        cases.iter().map(|c| c["ciphertext"]["v"].as_str().unwrap().parse().unwrap()).collect();
    let frames = requests(&sim, &ciphertexts, KEY_ID);
    let report = run(&mut sim, &frames, OutputPacing::Always);
    for (k, (job, case)) in report.jobs.iter().zip(&cases).enumerate() {
        assert!(job.result.is_ok(), "{bits} bits, case {k}: status {:#x}", job.result.status);
        let want: BigUint = case["raw_plaintext"].as_str().unwrap().parse().unwrap();
        assert_eq!(job.result.plaintext, want, "{bits} bits, case {k}");
    }
    // The first round of jobs (one per core) met idle cores: the first takes the formula's
    // latency (on the lanes, up to the wait for a pair's first lane more), and on the two slots
    // each one after it a cycle more, its header held while the dispatcher settles after the
    // start before it (the cores' ready is registered).
    let first: Vec<u64> = report.jobs.iter().take(cores).map(|j| j.latency()).collect();
    eprintln!("{bits} bits: {:?} cycles, {:.0} cycles/s", first, report.cycles_per_second());
    let config = &sim.manifest().config;
    let idle = config.latency_cycles() as u64;
    if config.engine == Engine::Slots {
        let want: Vec<u64> = (0..first.len()).map(|i| idle + u64::from(i > 0)).collect();
        assert_eq!(first, want, "{bits} bits: the first round against the latency formula");
    } else {
        let most = idle + config.lane_wait_cycles() as u64;
        assert!((idle..=most).contains(&first[0]), "{bits} bits: {} cycles, the formula's {idle} to {most}", first[0]);
    }
    assert_eq!(sim.read_register(itf::REG_JOBS_OUT).unwrap() as usize, ciphertexts.len());
    assert_eq!(sim.read_register(itf::REG_ERRORS).unwrap(), 0);
}

/// Every phe vector at 1024 bits on two cores (the configuration the driver's tests use, built
/// once and shared with them). 2048 and 3072 bits: `every_phe_vector`.
#[test]
fn phe_vectors() {
    check_phe_vectors(1024, 2, usize::MAX);
}

/// Every phe vector at 2048 bits on two cores and on one (the configuration `ecrt bench` and
/// `ecrt demo` build), and at 3072 bits (minutes of simulation: `scripts/test --full`); and on
/// the lanes engine at 2048 bits.
#[test]
#[ignore = "slow: every 2048- and 3072-bit vector; scripts/test --full runs it"]
fn every_phe_vector() {
    check_phe_vectors(2048, 2, usize::MAX);
    check_phe_vectors(2048, 1, usize::MAX);
    check_phe_vectors(3072, 1, usize::MAX);
    check_phe_vectors_on(&lanes(2048), usize::MAX);
}

/// The default configuration (the lanes engine), one core.
fn lanes(key_bits: usize) -> AcceleratorConfig {
    AcceleratorConfig { key_bits, ..Default::default() }
}

/// The lanes engine: phe's 1024-bit vectors, one more than its pairs so that one waits for a
/// pair, each to phe's plaintext.
#[test]
fn lanes_engine_phe_vectors() {
    let config = lanes(1024);
    check_phe_vectors_on(&config, config.jobs_per_core() + 1);
}

/// The lanes engine in constant time (512 bits, one core): every idle latency the formula's up to
/// the wait for a pair's first lane, whatever the key and the ciphertext; back to back, each pair
/// takes its next job at the round formula's pace; the card says what it runs.
#[test]
fn lanes_engine_constant_time() {
    check_lanes_constant_time(&AcceleratorConfig { stream_bits: 64, ..lanes(512) });
}

/// The delay engine: phe's 1024-bit vectors, three one after the other on its one pair.
#[test]
#[ignore = "slow: a 1024-bit model of its own; the constant-time test runs the engine; scripts/test --full runs it"]
fn delay_engine_phe_vectors() {
    check_phe_vectors_on(&AcceleratorConfig { engine: Engine::Delay, ..lanes(1024) }, 3);
}

/// The delay engine in constant time, as the lanes engine's test.
#[test]
fn delay_engine_constant_time() {
    check_lanes_constant_time(&AcceleratorConfig { stream_bits: 64, engine: Engine::Delay, ..lanes(512) });
}

fn check_lanes_constant_time(config: &AcceleratorConfig) {
    let mut sim = build_config(config);
    assert_eq!(sim.read_register(itf::REG_ENGINE).unwrap(), config.engine.register_value());
    assert_eq!(sim.read_register(itf::REG_JOBS_PER_CORE).unwrap() as usize, config.jobs_per_core());
    let mut rng = rand::rngs::StdRng::seed_from_u64(14);
    let (idle, wait) = (config.latency_cycles() as u64, config.lane_wait_cycles() as u64);
    for _ in 0..2 {
        let (p, q) = random_key(512, &mut rng);
        let hw = hw_key(&p, &q, &sim);
        sim.load_key(&hw, KEY_ID).unwrap();
        let mut ciphertexts = random_units(&hw, 2, &mut rng);
        ciphertexts.extend([BigUint::one(), hw.classic().n_squared() - 1u32]);
        for c in &ciphertexts {
            let frames = requests(&sim, std::slice::from_ref(c), KEY_ID);
            let report = run(&mut sim, &frames, OutputPacing::Always);
            assert_eq!(report.jobs[0].result.plaintext, hw.decrypt(c).unwrap());
            let latency = report.jobs[0].latency();
            assert!(
                (idle..=idle + wait).contains(&latency),
                "{latency} cycles, the formula's {idle} to {}",
                idle + wait
            );
        }
    }
    let (p, q) = random_key(512, &mut rng);
    let hw = hw_key(&p, &q, &sim);
    sim.load_key(&hw, KEY_ID).unwrap();
    let pairs = config.jobs_per_core();
    let ciphertexts = random_units(&hw, 3 * pairs, &mut rng);
    let frames = requests(&sim, &ciphertexts, KEY_ID);
    let report = run(&mut sim, &frames, OutputPacing::Always);
    for (job, c) in report.jobs.iter().zip(&ciphertexts) {
        assert_eq!(job.result.plaintext, hw.decrypt(c).unwrap());
    }
    let ends: Vec<u64> = report.jobs.iter().map(|j| j.last_out).collect();
    for (i, round) in ends.windows(pairs + 1).map(|w| w[pairs] - w[0]).enumerate() {
        assert_eq!(round, config.cycles_per_round() as u64, "job {i} and the next on its pair: ends {ends:?}");
    }
}

/// Every 1024-bit phe vector on the segmented schedule (a model of its own: `scripts/test --full`).
#[test]
#[ignore = "slow: a 1024-bit segmented model of its own; scripts/test --full runs it"]
fn every_phe_vector_segmented() {
    check_phe_vectors_on(&segmented(1024), usize::MAX);
}

/// Random batches with the result stream stalled two cycles in three, on a 256-bit stream (the
/// model the other tests build): nothing lost, every plaintext right.
#[test]
fn random_batches_under_back_pressure() {
    random_batches(&[256]);
}

/// The same on the narrowest and the widest streams, 64 and 512 bits (models of their own:
/// `scripts/test --full`; the emulated device's tests run 64-bit streams at 512 bits).
#[test]
#[ignore = "slow: two models of their own; scripts/test --full runs it"]
fn random_batches_on_the_narrowest_and_widest_streams() {
    random_batches(&[64, 512]);
}

fn random_batches(stream_widths: &[usize]) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for &stream_bits in stream_widths {
        let mut sim = build(1024, 2, stream_bits);
        let (p, q) = random_key(1024, &mut rng);
        let hw = hw_key(&p, &q, &sim);
        sim.load_key(&hw, KEY_ID).unwrap();
        let ciphertexts = random_units(&hw, 5, &mut rng);
        let frames = requests(&sim, &ciphertexts, KEY_ID);
        let report = run(&mut sim, &frames, OutputPacing::Duty { ready: 1, period: 3 });
        for (job, c) in report.jobs.iter().zip(&ciphertexts) {
            assert_eq!(job.result.plaintext, hw.decrypt(c).unwrap(), "{stream_bits}-bit stream");
        }
    }
}

/// A decryption takes the same cycles for different ciphertexts (edge cases included) and for
/// different keys of the same size.
///
/// One core, so that the pace shows; on the 512-bit model the emulator's RTL tests build (every
/// 1024-bit phe vector runs on the two-core model in `phe_vectors`).
#[test]
fn constant_time() {
    check_constant_time(&mut build(512, 1, 64), 10);
}

/// The segmented schedule (512 bits, the default k): right plaintexts, in constant time, at the
/// formulas' latency and pace; the card says which schedule it runs.
#[test]
fn segmented_schedule() {
    let mut sim = build_config(&segmented(512));
    assert_eq!(sim.read_register(itf::REG_SCHEDULE).unwrap(), ExponentSchedule::Segmented.register_value());
    assert_eq!(sim.read_register(itf::REG_WINDOW_BITS).unwrap(), 1);
    check_constant_time(&mut sim, 12);
}

/// Decrypts edge-case and random ciphertexts one at a time under two random keys, then three back
/// to back: every plaintext right, every idle latency the same and the formula's, every gap
/// between back-to-back results the pace formula's.
fn check_constant_time(sim: &mut AcceleratorSim, seed: u64) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let key_bits = sim.manifest().config.key_bits as u64;
    let mut latencies = Vec::new();
    for _ in 0..2 {
        let (p, q) = random_key(key_bits, &mut rng);
        let hw = hw_key(&p, &q, sim);
        sim.load_key(&hw, KEY_ID).unwrap();
        let mut ciphertexts = random_units(&hw, 2, &mut rng);
        ciphertexts.extend([BigUint::one(), hw.classic().n_squared() - 1u32]);
        for c in &ciphertexts {
            // One at a time: an idle pipeline for each.
            let frames = requests(sim, std::slice::from_ref(c), KEY_ID);
            let report = run(sim, &frames, OutputPacing::Always);
            assert_eq!(report.jobs[0].result.plaintext, hw.decrypt(c).unwrap());
            latencies.push(report.jobs[0].latency());
        }
    }
    assert!(latencies.windows(2).all(|w| w[0] == w[1]), "latencies differ: {latencies:?}");
    let config = sim.manifest().config.clone();
    assert_eq!(latencies[0], config.latency_cycles() as u64, "the latency formula");
    // Back to back, one core: results leave at the formula's pace (every gap, not an average).
    let (p, q) = random_key(key_bits, &mut rng);
    let hw = hw_key(&p, &q, sim);
    sim.load_key(&hw, KEY_ID).unwrap();
    let ciphertexts = random_units(&hw, 3, &mut rng);
    let frames = requests(sim, &ciphertexts, KEY_ID);
    let report = run(sim, &frames, OutputPacing::Always);
    for (job, c) in report.jobs.iter().zip(&ciphertexts) {
        assert_eq!(job.result.plaintext, hw.decrypt(c).unwrap());
    }
    let ends: Vec<u64> = report.jobs.iter().map(|j| j.last_out).collect();
    for gap in ends.windows(2).map(|w| w[1] - w[0]) {
        assert_eq!(gap, config.cycles_per_decryption_per_core() as u64, "the pace formula: ends {ends:?}");
    }
}

/// Bad requests get error results with their tags, set the sticky error flags, and never stop the
/// good requests around them.
#[test]
fn bad_requests_get_error_results() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    // The one-core model of `constant_time`.
    let mut sim = build(512, 1, 64);
    let (p, q) = random_key(512, &mut rng);
    let hw = hw_key(&p, &q, &sim);
    let ciphertexts = random_units(&hw, 2, &mut rng);
    let layout = *sim.layout();
    let encode = |tag: u16, key_id: u8, c: &BigUint| {
        encode_request_words(tag, key_id, c, layout.digits, layout.stream_bits).unwrap()
    };
    let good = |tag: u16, key_id: u8| encode(tag, key_id, &ciphertexts[0]);

    // Before any key is loaded.
    let report = run(&mut sim, &[good(1, KEY_ID)], OutputPacing::Always);
    assert_eq!((report.jobs[0].result.tag, report.jobs[0].result.status), (1, itf::RESULT_KEY_NOT_LOADED));
    assert_eq!(sim.read_register(itf::REG_ERRORS).unwrap() & itf::ERROR_KEY_NOT_LOADED, itf::ERROR_KEY_NOT_LOADED);
    sim.write_register(itf::REG_ERRORS, u32::MAX).unwrap();
    assert_eq!(sim.read_register(itf::REG_ERRORS).unwrap(), 0, "write 1 to clear");

    sim.load_key(&hw, KEY_ID).unwrap();
    let mut bad_opcode = good(3, KEY_ID);
    bad_opcode[0] ^= 0x0100_0000;
    let mut high_bits = good(4, KEY_ID);
    high_bits[5] |= 1 << 20;
    let mut short = good(5, KEY_ID);
    short.truncate(short.len() - layout.lanes);
    let mut nonzero_padding = good(8, KEY_ID);
    if layout.request_words < nonzero_padding.len() {
        *nonzero_padding.last_mut().unwrap() = 1;
    } else {
        nonzero_padding[1] |= 1 << 31;
    }
    let frames =
        vec![good(2, KEY_ID + 1), bad_opcode, high_bits, short, nonzero_padding, encode(9, KEY_ID, &ciphertexts[1])];
    let report = run(&mut sim, &frames, OutputPacing::Always);
    let statuses: Vec<(u16, u8)> = report.jobs.iter().map(|j| (j.result.tag, j.result.status)).collect();
    let m = itf::RESULT_MALFORMED;
    assert_eq!(statuses, [(2, itf::RESULT_KEY_NOT_LOADED), (3, m), (4, m), (5, m), (8, m), (9, itf::RESULT_OK)]);
    assert_eq!(report.jobs[5].result.plaintext, hw.decrypt(&ciphertexts[1]).unwrap());
    let errors = sim.read_register(itf::REG_ERRORS).unwrap();
    assert_eq!(
        errors & (itf::ERROR_KEY_NOT_LOADED | itf::ERROR_MALFORMED),
        itf::ERROR_KEY_NOT_LOADED | itf::ERROR_MALFORMED
    );
    assert_eq!(sim.read_register(itf::REG_JOBS_FAILED).unwrap(), 6, "one error before the key, five after");
}

/// The register block reports the configuration the RTL was generated for: a non-default one,
/// the segmented test's model.
#[test]
fn registers_report_the_configuration() {
    let mut sim = build_config(&segmented(512));
    let config = sim.manifest().config.clone();
    let read = |sim: &mut AcceleratorSim, r| sim.read_register(r).unwrap();
    assert_eq!(read(&mut sim, itf::REG_ID), itf::ID_VALUE);
    assert_eq!(read(&mut sim, itf::REG_VERSION), itf::VERSION_VALUE);
    assert_eq!(read(&mut sim, itf::REG_KEY_BITS) as usize, config.key_bits);
    assert_eq!(read(&mut sim, itf::REG_CORES) as usize, config.cores);
    assert_eq!(read(&mut sim, itf::REG_DIGITS) as usize, config.digits());
    assert_eq!(read(&mut sim, itf::REG_WINDOW_BITS) as usize, config.window_bits);
    assert_eq!(read(&mut sim, itf::REG_STREAM_BITS) as usize, config.stream_bits);
    assert_eq!(read(&mut sim, itf::REG_DIGITS_PER_STEP) as usize, config.digits_per_step);
    assert_eq!(read(&mut sim, itf::REG_SCHEDULE), config.schedule.register_value());
    assert_eq!(read(&mut sim, itf::REG_ENGINE), Engine::Slots.register_value());
    assert_eq!(read(&mut sim, itf::REG_JOBS_PER_CORE), 1);
    assert_eq!(read(&mut sim, itf::REG_STATUS) & itf::STATUS_KEY_VALID, 0);
}

/// Offers `requests` as one H2C packet (TLAST on its last beat only) with the result stream always
/// ready, until a result per request has come back; returns the results and how many result
/// packets (TLASTs) carried them.
fn send_as_one_packet(sim: &mut AcceleratorSim, requests: &[Vec<u32>]) -> (Vec<itf::ResultFrame>, usize) {
    let layout = *sim.layout();
    let words = requests.concat();
    let beats: Vec<&[u32]> = words.chunks(layout.lanes).collect();
    let frame_words = layout.result_beats * layout.lanes;
    let guard = 4 * sim.manifest().config.cycles_per_decryption_path() * requests.len();
    let (mut offered, mut frame, mut results, mut packets) = (0, Vec::new(), Vec::new(), 0);
    let mut last_ends_packet = false;
    for _ in 0..guard {
        if results.len() == requests.len() {
            break;
        }
        let io = sim.cycle(beats.get(offered).map(|&beat| (beat, offered + 1 == beats.len())), true).unwrap();
        offered += usize::from(io.input_taken);
        if let Some(beat) = io.output {
            frame.extend(beat.words);
            assert!(!beat.last || frame.len() == frame_words, "TLAST only on a frame's last beat");
            packets += usize::from(beat.last);
            last_ends_packet = beat.last;
            if frame.len() == frame_words {
                let bytes = itf::words_to_bytes(&std::mem::take(&mut frame));
                results.push(itf::decode_result(&bytes, layout.digits, layout.stream_bits).unwrap());
            }
        }
    }
    assert_eq!(results.len(), requests.len(), "a result per request within {guard} cycles");
    assert!(last_ends_packet, "the last result ends its packet");
    (results, packets)
}

/// PACKET_HOLD (interface 5.1), on the two-core 1024-bit model the other tests build: requests
/// written as one packet start the cores a request frame apart, so their results finish as far
/// apart. With the hold a host sets
/// (session::set_packet_hold) they share result packets; with 0 each leaves alone. Every
/// plaintext is right either way, and the register reads back what was written.
#[test]
fn packet_hold_joins_results_into_fewer_packets() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    let mut sim = build(1024, 2, 256);
    let (p, q) = random_key(1024, &mut rng);
    let hw = hw_key(&p, &q, &sim);
    sim.load_key(&hw, KEY_ID).unwrap();
    let ciphertexts = random_units(&hw, 4, &mut rng);
    let frames = requests(&sim, &ciphertexts, KEY_ID);
    let layout = *sim.layout();
    let mut packets = |hold: u32| {
        if hold == 0 {
            sim.write_register(itf::REG_PACKET_HOLD, 0).unwrap();
        } else {
            ecrt_contract::session::set_packet_hold(&mut sim, &layout).unwrap();
        }
        assert_eq!(sim.read_register(itf::REG_PACKET_HOLD).unwrap(), hold, "PACKET_HOLD reads back");
        let (results, packets) = send_as_one_packet(&mut sim, &frames);
        for (k, c) in ciphertexts.iter().enumerate() {
            let result = results.iter().find(|r| usize::from(r.tag) == k).expect("a result per tag");
            assert!(result.is_ok(), "tag {k}: status {:#x}", result.status);
            assert_eq!(result.plaintext, hw.decrypt(c).unwrap(), "tag {k}, PACKET_HOLD {hold}");
        }
        packets
    };
    let hold = layout.packet_hold_cycles();
    let (without, with) = (packets(0), packets(hold));
    eprintln!("{} results: {without} packets without a hold, {with} with PACKET_HOLD {hold}", ciphertexts.len());
    assert_eq!(without, ciphertexts.len(), "without a hold, each result alone");
    assert!(with < without, "PACKET_HOLD {hold}: {with} packets, {without} without");
}
