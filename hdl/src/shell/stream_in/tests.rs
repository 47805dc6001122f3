use super::*;
use crate::interface::{encode_request_words, RESULT_OK};
use crate::testing::simulate;
use num_bigint::{BigUint, RandBigInt};
use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex};

#[test]
fn stream_in_is_synthesizable() {
    let mut uut = StreamIn::new(3, 4, 3, 1000);
    uut.connect_all();
    yosys_validate("ecrt_stream_in", &generate_verilog(&uut)).unwrap();
}

/// A frame as beats: (lanes, TLAST).
pub(crate) type Beats = Vec<(Vec<u32>, bool)>;

/// `words` (a whole number of beats) as beats with TLAST on the last.
pub(crate) fn beats(words: &[u32], lanes: usize) -> Beats {
    let n = words.len() / lanes;
    words.chunks(lanes).enumerate().map(|(b, w)| (w.to_vec(), b + 1 == n)).collect()
}

/// What the dispatcher did.
#[derive(Debug, Default, Clone)]
struct Record {
    /// Each start: (core, tag, the last 2·S limbs shifted into that core).
    starts: Vec<(usize, u16, Vec<u32>)>,
    /// Each error result taken: (tag, status).
    errors: Vec<(u16, u8)>,
    /// Each frame's status at its end.
    done: Vec<u8>,
    /// TREADY in the last cycle.
    tready: bool,
}

/// The dispatcher's sizes and surroundings.
struct Setup {
    digits: usize,
    lanes: usize,
    cores: usize,
    /// The committed key's id, if any.
    key: Option<u8>,
    /// Cycles a core is busy after a start (None: never ready).
    hold: Option<usize>,
    /// A pause in the stream, if any.
    stall: Option<Stall>,
}

/// The bench offers no beat for `cycles` cycles once beat `after` (counted from 0 over all
/// frames) is taken; with `reset`, it pulses `soft_reset` in the middle of the pause.
#[derive(Clone, Copy)]
struct Stall {
    after: usize,
    cycles: usize,
    reset: bool,
}

/// The frame timeout of the benches, in cycles.
const TIMEOUT: u32 = 30;

/// The bench: `frames` offered back to back with random TVALID gaps; `cores` fake cores that are
/// busy `hold` cycles after a start (never ready again if `hold` is None), whose `ready` reaches
/// the dispatcher one cycle late (as the accelerator registers it); error results taken after
/// random delays.
fn run(setup: Setup, frames: Vec<Beats>, cycles: usize, seed: u64) -> Record {
    let Setup { digits, lanes, cores, key, hold, stall } = setup;
    let mut paused = 0;
    let record = Arc::new(Mutex::new(Record::default()));
    let out = record.clone();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let all: Vec<(Vec<u32>, bool)> = frames.into_iter().flatten().collect();
    let mut next_beat = 0;
    // Per core: cycles until ready (0: ready; usize::MAX: never), limbs shifted in.
    let mut busy_left = vec![if hold.is_none() { usize::MAX } else { 0 }; cores];
    let mut limbs: Vec<Vec<u32>> = vec![Vec::new(); cores];
    let mut was_ready = vec![false; cores];
    simulate(StreamIn::new(digits, lanes, cores, TIMEOUT), cycles, move |uut, _| {
        let mut r = out.lock().unwrap();
        uut.key_valid.next = key.is_some();
        uut.key_id.next = (key.unwrap_or(0) as u64).into();
        // Inputs from the cores' state a cycle before this edge; their reaction shows after it.
        for c in 0..cores {
            uut.core_ready[c].next = was_ready[c];
            was_ready[c] = busy_left[c] == 0;
        }
        for c in 0..cores {
            let ready = busy_left[c] == 0;
            if uut.core_limb_valid[c].val() {
                assert!(ready, "a limb for a core that is not ready");
                limbs[c].push(uut.core_limb.val().to_u64() as u32);
            }
            if uut.core_start[c].val() {
                assert!(ready, "a start for a core that is not ready");
                let l = &limbs[c];
                r.starts.push((
                    c,
                    uut.core_tag.val().to_u64() as u16,
                    l[l.len().saturating_sub(2 * digits)..].to_vec(),
                ));
                limbs[c].clear();
                busy_left[c] = hold.unwrap_or(usize::MAX);
            } else if busy_left[c] != usize::MAX && busy_left[c] > 0 {
                busy_left[c] -= 1;
            }
        }
        if uut.frame_done.val() {
            let status = u8::from(uut.frame_key_not_loaded.val()) * RESULT_KEY_NOT_LOADED
                + u8::from(uut.frame_malformed.val()) * RESULT_MALFORMED;
            r.done.push(status);
        }
        uut.error_take.next = false;
        if uut.error_valid.val() && rng.gen_bool(0.5) {
            uut.error_take.next = true;
            r.errors.push((uut.error_tag.val().to_u64() as u16, uut.error_status.val().to_u64() as u8));
        }
        // The stream: TREADY is a register, so the value read now is the one at the coming edge,
        // where a beat offered now handshakes.
        r.tready = uut.s_axis_tready.val();
        uut.s_axis_tvalid.next = false;
        uut.soft_reset.next = false;
        if let Some(stall) = stall.filter(|s| next_beat == s.after + 1 && paused < s.cycles) {
            paused += 1;
            uut.soft_reset.next = stall.reset && paused == stall.cycles / 2;
            return;
        }
        if next_beat < all.len() && rng.gen_bool(0.7) {
            let (lanes_data, last) = &all[next_beat];
            for (i, &w) in lanes_data.iter().enumerate() {
                uut.s_axis_tdata[i].next = (w as u64).into();
            }
            uut.s_axis_tlast.next = *last;
            uut.s_axis_tvalid.next = true;
            if uut.s_axis_tready.val() {
                next_beat += 1;
            }
        }
    });
    let r = record.lock().unwrap().clone();
    r
}

/// Good and bad frames in every variety, at two stream widths: each frame ends once with the
/// right status; good ones start a core with their tag and exact limbs, bad ones post an error.
#[test]
fn stream_in_dispatches_good_frames_and_reports_bad_ones() {
    let digits = 2;
    for lanes in [2, 4] {
        let mut rng = rand::rngs::StdRng::seed_from_u64(lanes as u64);
        let mut frames = Vec::new();
        // (status, tag, ciphertext limbs if good)
        let mut expected: Vec<(u8, u16, Vec<u32>)> = Vec::new();
        let c = |rng: &mut rand::rngs::StdRng| rng.gen_biguint((2 * digits * 17) as u64);
        let limbs =
            |c: &BigUint| crate::limbs::to_limbs(c, 2 * digits).into_iter().map(|l| l as u32).collect::<Vec<_>>();
        for round in 0..3u16 {
            let tag = |k: u16| round * 100 + k;
            // A good frame.
            let x = c(&mut rng);
            frames.push(beats(&encode_request_words(tag(0), 0x42, &x, digits, lanes * 32).unwrap(), lanes));
            expected.push((RESULT_OK, tag(0), limbs(&x)));
            // The wrong key id.
            let w = encode_request_words(tag(1), 0x41, &c(&mut rng), digits, lanes * 32).unwrap();
            frames.push(beats(&w, lanes));
            expected.push((RESULT_KEY_NOT_LOADED, tag(1), vec![]));
            // A bad opcode.
            let mut w = encode_request_words(tag(2), 0x42, &c(&mut rng), digits, lanes * 32).unwrap();
            w[0] ^= 0x0100_0000;
            frames.push(beats(&w, lanes));
            expected.push((RESULT_MALFORMED, tag(2), vec![]));
            // A high bit in the last limb, and the wrong key too.
            let mut w = encode_request_words(tag(3), 0x43, &c(&mut rng), digits, lanes * 32).unwrap();
            w[2 * digits] |= 1 << 31;
            frames.push(beats(&w, lanes));
            expected.push((RESULT_MALFORMED | RESULT_KEY_NOT_LOADED, tag(3), vec![]));
            // A high bit in the first limb.
            let mut w = encode_request_words(tag(4), 0x42, &c(&mut rng), digits, lanes * 32).unwrap();
            w[1] |= 1 << 17;
            frames.push(beats(&w, lanes));
            expected.push((RESULT_MALFORMED, tag(4), vec![]));
            // Nonzero padding (5 words: there is padding at both widths).
            let mut w = encode_request_words(tag(5), 0x42, &c(&mut rng), digits, lanes * 32).unwrap();
            *w.last_mut().unwrap() = 1;
            frames.push(beats(&w, lanes));
            expected.push((RESULT_MALFORMED, tag(5), vec![]));
            // TLAST early: the last beat is missing.
            let w = encode_request_words(tag(6), 0x42, &c(&mut rng), digits, lanes * 32).unwrap();
            frames.push(beats(&w[..w.len() - lanes], lanes));
            expected.push((RESULT_MALFORMED, tag(6), vec![]));
            // Two good frames in one packet: TLAST only on the second one's last beat.
            let (x, y) = (c(&mut rng), c(&mut rng));
            let mut w = encode_request_words(tag(7), 0x42, &x, digits, lanes * 32).unwrap();
            w.extend(encode_request_words(tag(9), 0x42, &y, digits, lanes * 32).unwrap());
            frames.push(beats(&w, lanes));
            expected.push((RESULT_OK, tag(7), limbs(&x)));
            expected.push((RESULT_OK, tag(9), limbs(&y)));
            // Another good frame right after a bad one.
            let x = c(&mut rng);
            frames.push(beats(&encode_request_words(tag(8), 0x42, &x, digits, lanes * 32).unwrap(), lanes));
            expected.push((RESULT_OK, tag(8), limbs(&x)));
        }
        let record = run(
            Setup { digits, lanes, cores: 2, key: Some(0x42), hold: Some(40), stall: None },
            frames,
            2500,
            7 + lanes as u64,
        );
        let statuses: Vec<u8> = expected.iter().map(|e| e.0).collect();
        assert_eq!(record.done, statuses, "{lanes} lanes: every frame ends once, with its status");
        let starts: Vec<(u16, Vec<u32>)> = record.starts.iter().map(|s| (s.1, s.2.clone())).collect();
        let good: Vec<(u16, Vec<u32>)> = expected.iter().filter(|e| e.0 == 0).map(|e| (e.1, e.2.clone())).collect();
        assert_eq!(starts, good, "{lanes} lanes: good frames start a core with their tag and limbs");
        let bad: Vec<(u16, u8)> = expected.iter().filter(|e| e.0 != 0).map(|e| (e.1, e.0)).collect();
        assert_eq!(record.errors, bad, "{lanes} lanes: bad frames post an error");
        let cores_used: std::collections::BTreeSet<usize> = record.starts.iter().map(|s| s.0).collect();
        assert_eq!(cores_used.len(), 2, "both cores serve");
    }
}

/// With no key committed, every frame is answered KEY_NOT_LOADED, also while no core is ever
/// ready; a good frame with no ready core waits (TREADY low), it is neither dropped nor failed.
#[test]
fn stream_in_answers_without_a_key_and_waits_for_a_core() {
    let (digits, lanes) = (3, 4);
    let x = BigUint::from(12345u32);
    let frame = |tag| beats(&encode_request_words(tag, 1, &x, digits, 128).unwrap(), lanes);
    let record =
        run(Setup { digits, lanes, cores: 1, key: None, hold: None, stall: None }, vec![frame(1), frame(2)], 100, 1);
    assert_eq!(record.done, vec![RESULT_KEY_NOT_LOADED; 2]);
    assert_eq!(record.errors, vec![(1, RESULT_KEY_NOT_LOADED), (2, RESULT_KEY_NOT_LOADED)]);
    // With the key but no ready core: the first frame's header waits, the rest stays in the stream.
    let record =
        run(Setup { digits, lanes, cores: 1, key: Some(1), hold: None, stall: None }, vec![frame(3), frame(4)], 100, 2);
    assert!(record.done.is_empty() && record.errors.is_empty() && record.starts.is_empty());
    assert!(!record.tready, "back-pressure while no core is ready");
}

/// Many good frames with random tags and one busy core: each starts once, in order, no overlap.
#[test]
fn stream_in_keeps_order_under_back_pressure() {
    let (digits, lanes) = (2, 2);
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut frames = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..12 {
        let tag: u16 = rng.r#gen();
        let x = rng.gen_biguint(68);
        frames.push(beats(&encode_request_words(tag, 7, &x, digits, 64).unwrap(), lanes));
        expected.push((0usize, tag, crate::limbs::to_limbs(&x, 4).into_iter().map(|l| l as u32).collect::<Vec<_>>()));
    }
    let record = run(Setup { digits, lanes, cores: 1, key: Some(7), hold: Some(25), stall: None }, frames, 900, 3);
    assert_eq!(record.starts, expected);
    assert_eq!(record.done, vec![0; 12]);
}

/// A frame whose beats stop without TLAST ends MALFORMED after the timeout, with its tag, and the
/// next frame is parsed from its header; waiting for a core does not count as starving.
#[test]
fn stream_in_ends_a_starved_frame() {
    let (digits, lanes) = (3, 2);
    let x = BigUint::from(777u32);
    let frame = |tag| beats(&encode_request_words(tag, 5, &x, digits, 64).unwrap(), lanes);
    // Frame 1 (beats 4 and 5), under another key, is cut after two of its four beats; frame 2
    // follows whole.
    let mut cut = beats(&encode_request_words(1, 6, &x, digits, 64).unwrap(), lanes);
    cut.truncate(2);
    cut[1].1 = false;
    let stall = Stall { after: 5, cycles: 3 * TIMEOUT as usize, reset: false };
    let setup = Setup { digits, lanes, cores: 1, key: Some(5), hold: Some(8 * TIMEOUT as usize), stall: Some(stall) };
    let record = run(setup, vec![frame(9), cut, frame(2)], 600, 4);
    let both = RESULT_MALFORMED | RESULT_KEY_NOT_LOADED;
    assert_eq!(record.errors, vec![(1, both)], "the cut frame times out, with its header's fault");
    assert_eq!(record.done, vec![RESULT_OK, both, RESULT_OK]);
    let tags: Vec<u16> = record.starts.iter().map(|s| s.1).collect();
    assert_eq!(tags, vec![9, 2], "frame 2 waited for the busy core longer than the timeout and still started");
}

/// A soft reset in the middle of a frame drops it without a result; the next frame is parsed from
/// its header and starts.
#[test]
fn stream_in_soft_reset_drops_the_frame_in_progress() {
    let (digits, lanes) = (3, 2);
    let x = BigUint::from(4242u32);
    let frame = |tag| beats(&encode_request_words(tag, 5, &x, digits, 64).unwrap(), lanes);
    let mut cut = frame(1);
    cut.truncate(3);
    cut[2].1 = false;
    let stall = Stall { after: 2, cycles: TIMEOUT as usize / 2, reset: true };
    let setup = Setup { digits, lanes, cores: 2, key: Some(5), hold: Some(10), stall: Some(stall) };
    let record = run(setup, vec![cut, frame(2)], 300, 5);
    assert!(record.errors.is_empty(), "no result for the dropped frame: {:?}", record.errors);
    assert_eq!(record.done, vec![RESULT_OK]);
    let starts: Vec<(u16, Vec<u32>)> = record.starts.iter().map(|s| (s.1, s.2.clone())).collect();
    let limbs = crate::limbs::to_limbs(&x, 2 * digits).into_iter().map(|l| l as u32).collect();
    assert_eq!(starts, vec![(2, limbs)]);
}
