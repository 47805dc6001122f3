use super::*;
use crate::interface::{decode_result, words_to_bytes, ResultFrame, RESULT_KEY_NOT_LOADED, RESULT_MALFORMED};
use crate::testing::simulate;
use num_bigint::RandBigInt;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

#[test]
fn stream_out_is_synthesizable() {
    let mut uut = StreamOut::new(3, 4, 3);
    uut.connect_all();
    yosys_validate("ecrt_stream_out", &generate_verilog(&uut)).unwrap();
}

/// Jobs a bench core holds at a time (a lanes-engine core holds several).
const JOBS_HELD: usize = 2;

/// What left the master: beats (lanes, TLAST) and the cycles they left in, the
/// frame_sent/frame_failed pulses seen, and the soft resets that came during a hold.
#[derive(Debug, Default, Clone)]
struct Sent {
    beats: Vec<(Vec<u32>, bool)>,
    cycles: Vec<usize>,
    sent: usize,
    failed: usize,
    resets_in_hold: usize,
}

/// A bench: `cores` cores with `per_core` results each and `errors` error results, for a
/// collector of `digits`-limb results over `lanes` lanes; the host takes beats with probability
/// `ready`; a soft reset in cycle `reset_at`, if any; PACKET_HOLD = `hold`.
#[derive(Clone, Copy)]
struct Bench {
    digits: usize,
    lanes: usize,
    cores: usize,
    per_core: usize,
    errors: usize,
    ready: f64,
    seed: u64,
    reset_at: Option<usize>,
    hold: usize,
}

fn bench(digits: usize, lanes: usize, cores: usize, per_core: usize, errors: usize, ready: f64, seed: u64) -> Bench {
    Bench { digits, lanes, cores, per_core, errors, ready, seed, reset_at: None, hold: 0 }
}

/// A random (tag, plaintext) per result, per core; random error results. Cores hand out their
/// results one after another, each after a random delay. Returns what was sent and the expected
/// frames.
fn run(bench: Bench) -> (Sent, Vec<ResultFrame>) {
    let Bench { digits, lanes, cores, per_core, errors, ready, seed, reset_at, hold } = bench;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut expected = Vec::new();
    let mut queues: Vec<VecDeque<(u16, Vec<u32>)>> = Vec::new();
    for c in 0..cores {
        let mut q = VecDeque::new();
        for j in 0..per_core {
            let tag = (c * 1000 + j) as u16;
            let m = rng.gen_biguint((17 * digits) as u64);
            expected.push(ResultFrame { tag, status: 0, plaintext: m.clone() });
            q.push_back((tag, crate::limbs::to_limbs(&m, digits).into_iter().map(|l| l as u32).collect()));
        }
        queues.push(q);
    }
    let mut error_queue: VecDeque<(u16, u8)> = VecDeque::new();
    for j in 0..errors {
        let status = [RESULT_KEY_NOT_LOADED, RESULT_MALFORMED, 3][j % 3];
        let tag = 50_000 + j as u16;
        expected.push(ResultFrame { tag, status, plaintext: 0u32.into() });
        error_queue.push_back((tag, status));
    }
    // Per core: cycles until its front result shows; limbs of it already taken.
    let mut delay: Vec<usize> = (0..cores).map(|_| rng.gen_range(0..30)).collect();
    let mut taken = vec![0usize; cores];
    let mut error_delay = rng.gen_range(0..40);
    let mut prev_ready = false;
    let mut held: Option<Vec<u32>> = None;
    let record = Arc::new(Mutex::new(Sent::default()));
    let out = record.clone();
    let dropped = Arc::new(Mutex::new(Vec::<u16>::new()));
    let dropped_out = dropped.clone();
    let mut cycle = 0;
    let words = crate::interface::result_words(digits).div_ceil(lanes) * lanes;
    let total_words = (cores * per_core + errors) * words;
    let cycles = (total_words as f64 * 2.0 / ready) as usize + (40 + hold) * (per_core + errors) + hold + 200;
    // Cycles the current hold has lasted; the last cycle brought a soft reset during a hold.
    let mut held_for = 0;
    let mut reset_in_hold = false;
    let (mut held_at_reset, mut under_way): (Vec<Vec<u16>>, Vec<u16>) = Default::default();
    simulate(StreamOut::new(digits, lanes, cores), cycles, move |uut, _| {
        let mut r = out.lock().unwrap();
        uut.packet_hold.next = (hold as u64).into();
        // A hold lasts at most PACKET_HOLD cycles, and none without it; a soft reset during one
        // presents the held beat at once, ending its packet.
        held_for = if uut.holding.q.val() { held_for + 1 } else { 0 };
        assert!(held_for <= hold, "a hold of {held_for} cycles with PACKET_HOLD {hold}");
        if reset_in_hold {
            assert!(uut.m_axis_tvalid.val() && uut.m_axis_tlast.val(), "a soft reset ends the held packet at once");
        }
        // A soft reset: every core with a result coming is busy. Right after it, a stale core's
        // next result is dropped unless it is the one leaving.
        cycle += 1;
        uut.soft_reset.next = reset_at == Some(cycle);
        reset_in_hold = reset_at == Some(cycle) && uut.holding.q.val();
        r.resets_in_hold += usize::from(reset_in_hold);
        // A core holds the jobs of its next JOBS_HELD results; the ones after start later, a new
        // host's. A reset drops the results of the jobs held as it comes, but for a frame under
        // way then, which goes out whole.
        for (jobs, queue) in uut.core_jobs.iter_mut().zip(&queues) {
            jobs.next = (queue.len().min(JOBS_HELD) as u64).into();
        }
        let building = (uut.active.q.val() && !uut.from_error.q.val() && !uut.dropping.q.val())
            .then(|| uut.tag.q.val().to_u64() as u16);
        if reset_at == Some(cycle) {
            held_at_reset = queues.iter().map(|q| q.iter().take(JOBS_HELD).map(|r| r.0).collect()).collect();
            under_way.extend(building);
        }
        if reset_at.is_some_and(|r| cycle == r + 1) {
            // The frame being built as the reset came, or starting then.
            under_way.extend(building);
            for (c, held) in held_at_reset.iter().enumerate() {
                let gone: Vec<u16> = held.iter().copied().filter(|t| !under_way.contains(t)).collect();
                assert_eq!(uut.stale[c].q.val().to_u64().count_ones() as usize, gone.len(), "core {c}'s stale results");
                dropped_out.lock().unwrap().extend(gone);
            }
        }
        // The master: a presented beat is held until taken; the pulses follow the last TREADY.
        let tdata: Vec<u32> = uut.m_axis_tdata.iter().map(|d| d.val().to_u64() as u32).collect();
        if uut.m_axis_tvalid.val() {
            if let Some(h) = &held {
                assert_eq!(h, &tdata, "a presented beat changed before it was taken");
            }
            held = Some(tdata.clone());
        }
        // frame_sent is combinational in TREADY: it shows the last TREADY given.
        let frame_end = uut.beat_end.q.val();
        assert!(!uut.m_axis_tvalid.val() || !uut.m_axis_tlast.val() || frame_end, "TLAST only on a frame's last beat");
        let sent = uut.m_axis_tvalid.val() && prev_ready && frame_end;
        assert_eq!(uut.frame_sent.val(), sent);
        let tready = rng.gen_bool(ready);
        uut.m_axis_tready.next = tready;
        prev_ready = tready;
        if uut.m_axis_tvalid.val() && tready {
            r.beats.push((tdata, uut.m_axis_tlast.val()));
            r.cycles.push(cycle);
            held = None;
            if frame_end {
                r.sent += 1;
                r.failed += usize::from(uut.frame_failed.val());
            }
        }
        // The cores: inputs for the coming edge from their state; takes (a function of the
        // collector's state only) act at that edge.
        for c in 0..cores {
            let showing = delay[c] == 0 && !queues[c].is_empty();
            uut.core_result_valid[c].next = showing;
            uut.core_result_tag[c].next = (queues[c].front().map_or(0, |f| f.0) as u64).into();
            uut.core_result_limb[c].next =
                (queues[c].front().map_or(0, |f| f.1.get(taken[c]).copied().unwrap_or(0)) as u64).into();
            if uut.core_result_take[c].val() {
                assert!(showing, "a take from a core without a result");
                taken[c] += 1;
                if taken[c] == digits {
                    queues[c].pop_front();
                    taken[c] = 0;
                    delay[c] = rng.gen_range(1..30);
                }
            } else if delay[c] > 0 {
                delay[c] -= 1;
            }
        }
        // The dispatcher's error post: taken at the coming edge when the collector is idle.
        let posting = error_delay == 0 && !error_queue.is_empty();
        uut.error_valid.next = posting;
        let (tag, status) = error_queue.front().copied().unwrap_or((0, 0));
        uut.error_tag.next = (tag as u64).into();
        uut.error_status.next = (status as u64).into();
        if posting && !uut.active.q.val() {
            error_queue.pop_front();
            error_delay = rng.gen_range(1..60);
        } else if error_delay > 0 {
            error_delay -= 1;
        }
    });
    let sent = record.lock().unwrap().clone();
    let dropped = dropped.lock().unwrap().clone();
    let expected = expected.into_iter().filter(|f| !dropped.contains(&f.tag)).collect();
    (sent, expected)
}

/// Splits beats into frames by their size and decodes each.
fn frames(sent: &Sent, digits: usize, lanes: usize) -> Vec<ResultFrame> {
    let frame_words = crate::interface::result_words(digits).div_ceil(lanes) * lanes;
    let words: Vec<u32> = sent.beats.iter().flat_map(|(beat, _)| beat.clone()).collect();
    assert_eq!(words.len() % frame_words, 0, "no partial frame at the end");
    words
        .chunks(frame_words)
        .map(|w| decode_result(&words_to_bytes(w), digits, lanes * 32).expect("a well-formed result frame"))
        .collect()
}

/// Frames per packet (beats up to TLAST).
fn packet_sizes(sent: &Sent, digits: usize, lanes: usize) -> Vec<usize> {
    let frame_beats = crate::interface::result_words(digits).div_ceil(lanes);
    let mut sizes = vec![];
    let mut beats = 0;
    for (_, last) in &sent.beats {
        beats += 1;
        if *last {
            sizes.push(beats / frame_beats);
            beats = 0;
        }
    }
    sizes
}

/// Runs `bench` and checks that every expected result left once, whole and in its source's order;
/// returns what was sent.
fn check(bench: Bench) -> Sent {
    let Bench { digits, lanes, cores, .. } = bench;
    let (sent, expected) = run(bench);
    let got = frames(&sent, digits, lanes);
    // The last result ends a packet; after a soft reset it may not: a beat presented before the
    // reset keeps the TLAST it was built with (AXI4-Stream holds a presented beat), and if the
    // result that was to follow it is dropped, the next host's first result ends the packet.
    if bench.reset_at.is_none() {
        assert!(sent.beats.last().is_none_or(|(_, last)| *last), "the last result ends a packet");
    }
    assert_eq!(
        got.len(),
        expected.len(),
        "every result leaves once: {:?}",
        got.iter().map(|f| f.tag).collect::<Vec<_>>()
    );
    assert_eq!(sent.sent, expected.len());
    assert_eq!(sent.failed, bench.errors);
    // Each source's results leave in its order; all of them, exactly.
    let mut sorted_got = got.clone();
    let mut sorted_expected = expected.clone();
    sorted_got.sort_by_key(|f| f.tag);
    sorted_expected.sort_by_key(|f| f.tag);
    assert_eq!(sorted_got, sorted_expected);
    for source in 0..=cores {
        let of = |frames: &[ResultFrame]| -> Vec<u16> {
            frames
                .iter()
                .map(|f| f.tag)
                .filter(|&t| if source == cores { t >= 50_000 } else { t as usize / 1000 == source && t < 50_000 })
                .collect()
        };
        assert_eq!(of(&got), of(&expected), "source {source} in order");
    }
    sent
}

#[test]
fn stream_out_sends_every_result_and_error_as_a_frame() {
    // 3 limbs: 4 words, exactly one beat of 4 lanes or two of 2; 5 limbs: padding at both widths.
    check(bench(3, 4, 2, 4, 3, 1.0, 1));
    check(bench(3, 2, 3, 3, 4, 0.8, 2));
    check(bench(5, 4, 2, 3, 3, 0.9, 3));
    check(bench(5, 2, 1, 4, 2, 1.0, 4));
}

/// Results ready together leave as one packet; a lone one ends its packet.
#[test]
fn stream_out_coalesces_waiting_results_into_packets() {
    // Slow host, three busy cores: results queue up behind the one leaving.
    let (sent, expected) = run(bench(3, 2, 3, 4, 3, 0.2, 8));
    let sizes = packet_sizes(&sent, 3, 2);
    assert_eq!(sizes.iter().sum::<usize>(), expected.len());
    assert!(sizes.iter().any(|&s| s > 1), "some results share a packet: {sizes:?}");
    // Fast host, one core: every result is alone.
    let (sent, expected) = run(bench(3, 2, 1, 4, 0, 1.0, 9));
    assert_eq!(packet_sizes(&sent, 3, 2), vec![1; expected.len()]);
}

#[test]
fn stream_out_holds_beats_under_back_pressure() {
    check(bench(5, 4, 3, 3, 4, 0.25, 5));
    check(bench(2, 2, 2, 4, 2, 0.1, 6));
}

/// A soft reset drops the results of every job the cores hold at the time, except a frame already
/// leaving, which goes out whole: the stream stays in whole frames and nothing else is lost.
#[test]
fn stream_out_soft_reset_drops_the_busy_cores_results() {
    let mut dropped_several = false;
    for (seed, reset_at) in [(21, 5), (22, 40), (23, 90), (24, 17), (25, 60)] {
        let kept = check(Bench { reset_at: Some(reset_at), ..bench(3, 2, 3, 3, 2, 0.6, seed) }).sent;
        dropped_several |= kept + 1 < 3 * 3 + 2;
    }
    assert!(dropped_several, "some reset found jobs held and dropped their results");
}

/// With a hold longer than the gaps between results, results that finish apart share a packet;
/// without one, the same runs send each alone.
#[test]
fn stream_out_packet_hold_joins_results_that_finish_apart() {
    // Results (of one core, then of two) follow one another less than 30 cycles apart (the
    // bench's delays), and a fast host takes each at once: lone packets without a hold, one
    // packet with a 40-cycle hold.
    for lone in [bench(3, 2, 1, 4, 0, 1.0, 9), bench(3, 2, 2, 3, 0, 1.0, 57)] {
        let results = lone.cores * lone.per_core;
        assert_eq!(packet_sizes(&check(lone), lone.digits, lone.lanes), vec![1; results]);
        let held = check(Bench { hold: 40, ..lone });
        assert_eq!(packet_sizes(&held, lone.digits, lone.lanes), vec![results]);
    }
    // A shorter hold joins those that come within it: fewer packets, not necessarily one. (Error
    // results come up to 60 cycles apart.)
    let some = bench(3, 2, 3, 4, 3, 1.0, 43);
    let packets = |hold| packet_sizes(&check(Bench { hold, ..some }), 3, 2).len();
    let (none, short, long) = (packets(0), packets(8), packets(70));
    assert!(none > short && short > long && long == 1, "packets with holds 0, 8, 70: {none}, {short}, {long}");
}

/// A lone result, or a lone error, waits out the hold, exactly PACKET_HOLD cycles, then ends its
/// packet (`frames` checks the TLAST).
#[test]
fn stream_out_lone_result_ends_its_packet_after_the_hold() {
    for lone in [bench(3, 2, 1, 1, 0, 1.0, 41), bench(5, 4, 1, 0, 1, 1.0, 42)] {
        let left = |hold| *check(Bench { hold, ..lone }).cycles.last().unwrap();
        let at_once = left(0);
        for hold in [1, 17, 300] {
            assert_eq!(left(hold), at_once + hold, "PACKET_HOLD {hold}");
        }
    }
}

/// A soft reset during a hold presents the held beat at once with TLAST (the run checks it), and
/// the stream still carries every result not dropped, whole.
#[test]
fn stream_out_soft_reset_ends_a_held_packet() {
    let mut resets_in_hold = 0;
    for (seed, reset_at) in [(21, 5), (22, 40), (23, 90), (24, 17), (25, 60), (26, 33), (27, 75), (28, 110)] {
        resets_in_hold +=
            check(Bench { reset_at: Some(reset_at), hold: 25, ..bench(3, 2, 3, 3, 2, 0.6, seed) }).resets_in_hold;
    }
    assert!(resets_in_hold > 0, "some reset came during a hold");
}

/// Under back-pressure, with a hold: TLAST only on a frame's last beat, presented beats stable
/// until taken (the run checks both), every result whole.
#[test]
fn stream_out_holds_beats_under_back_pressure_with_a_packet_hold() {
    check(Bench { hold: 12, ..bench(5, 4, 3, 3, 4, 0.25, 5) });
    check(Bench { hold: 3, ..bench(2, 2, 2, 4, 2, 0.1, 6) });
    check(Bench { hold: 1, ..bench(3, 2, 3, 3, 4, 0.8, 2) });
    check(Bench { hold: 20, ..bench(5, 2, 1, 4, 2, 0.5, 4) });
}
