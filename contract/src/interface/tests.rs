use super::*;
use crate::limbs::LIMB_BITS;
use num_bigint::BigUint;
use num_bigint::RandBigInt;
use rand::{Rng, SeedableRng};

#[test]
fn layout_of_the_default_configuration() {
    let l = FrameLayout::new(121, 256).unwrap();
    assert_eq!((l.lanes, l.request_words, l.request_beats, l.request_bytes), (8, 243, 31, 992));
    assert_eq!((l.result_words, l.result_beats, l.result_bytes), (122, 16, 512));
    assert_eq!(FrameLayout::new(121, 96), Err(FrameError::StreamBits(96)));
    assert_eq!(FrameLayout::new(0, 64), Err(FrameError::Digits(0)));
    assert_eq!(FrameLayout::new(usize::MAX, 64), Err(FrameError::Digits(usize::MAX)));
}

#[test]
fn request_words_follow_the_spec_layout() {
    // c = limbs 1, 2, 3, 4 (S = 2), 64-bit TDATA: 5 words, padded to 6.
    let c = crate::limbs::from_limbs([1, 2, 3, 4]);
    let words = encode_request_words(0xBEEF, 0x42, &c, 2, 64).unwrap();
    assert_eq!(words, vec![0xDC42_BEEF, 1, 2, 3, 4, 0]);
    let bytes = encode_request(0xBEEF, 0x42, &c, 2, 64).unwrap();
    assert_eq!(&bytes[..8], &[0xEF, 0xBE, 0x42, 0xDC, 1, 0, 0, 0]);
    assert_eq!(bytes.len(), FrameLayout::new(2, 64).unwrap().request_bytes);
    let too_big = BigUint::from(1u32) << (4 * LIMB_BITS);
    assert_eq!(encode_request(1, 1, &too_big, 2, 64), Err(FrameError::CiphertextTooLarge { bits: 69, max_bits: 68 }));
    assert_eq!(encode_request(1, 1, &c, 2, 32), Err(FrameError::StreamBits(32)));
}

#[test]
fn frames_round_trip_at_every_width() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    for stream_bits in STREAM_BITS_CHOICES {
        for digits in [1, 2, 3, 7, 121] {
            let c = rng.gen_biguint((2 * digits * LIMB_BITS) as u64);
            let bytes = encode_request(7, 9, &c, digits, stream_bits).unwrap();
            let request = decode_request(&bytes, digits, stream_bits).unwrap();
            assert_eq!(request, RequestFrame { tag: 7, key_id: 9, ciphertext: c });
            let frame = ResultFrame { tag: 0xFFFF, status: 0, plaintext: rng.gen_biguint((digits * LIMB_BITS) as u64) };
            let bytes = words_to_bytes(&encode_result_words(&frame, digits, stream_bits).unwrap());
            assert_eq!(bytes.len(), FrameLayout::new(digits, stream_bits).unwrap().result_bytes);
            assert_eq!(decode_result(&bytes, digits, stream_bits).unwrap(), frame);
            let twice = [bytes.clone(), bytes].concat();
            assert_eq!(decode_results(&twice, digits, stream_bits).unwrap(), vec![frame.clone(), frame]);
        }
    }
}

#[test]
fn bad_results_are_errors() {
    let good = |status: u8| {
        let frame = ResultFrame { tag: 3, status, plaintext: BigUint::from(5u32) };
        encode_result_words(&frame, 2, 64).unwrap()
    };
    let decode = |words: &[u32]| decode_result(&words_to_bytes(words), 2, 64);
    assert!(decode(&good(0)).unwrap().is_ok());
    let error = ResultFrame { tag: 3, status: RESULT_MALFORMED, plaintext: BigUint::from(0u32) };
    assert_eq!(decode(&encode_result_words(&error, 2, 64).unwrap()).unwrap(), error);
    let mut w = good(0);
    w[0] = 0x1100_0003;
    assert_eq!(decode(&w), Err(FrameError::Magic { found: 0x11, expected: RESULT_MAGIC }));
    let mut w = good(0);
    w[2] = 1 << 17;
    assert_eq!(decode(&w), Err(FrameError::LimbHighBits { word: 2, value: 1 << 17 }));
    let mut w = good(0);
    w[3] = 9;
    assert_eq!(decode(&w), Err(FrameError::Padding { word: 3, value: 9 }));
    let mut w = good(0);
    w[0] = result_header(3, RESULT_KEY_NOT_LOADED);
    assert_eq!(decode(&w), Err(FrameError::ErrorWithPlaintext { status: 1, word: 1 }));
    assert_eq!(decode(&good(0)[..2]), Err(FrameError::Length { expected: 16, got: 8 }));
    assert_eq!(
        decode_results(&words_to_bytes(&good(0))[..12], 2, 64),
        Err(FrameError::Frames { got: 12, frame_bytes: 16 })
    );
}

/// Random bytes of random lengths and random layouts never panic.
#[test]
fn decoding_garbage_never_panics() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for _ in 0..2000 {
        let len = rng.gen_range(0..80);
        let bytes: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
        let digits = rng.gen_range(0..6);
        let stream_bits = [0, 32, 64, 128, 256, 512, 1024][rng.gen_range(0..7)];
        let _ = decode_result(&bytes, digits, stream_bits);
        let _ = decode_results(&bytes, digits, stream_bits);
        let _ = decode_request(&bytes, digits, stream_bits);
    }
}

#[test]
fn register_table_is_consistent() {
    let offsets: Vec<u32> = REGISTERS.iter().map(|r| r.offset).collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
    for r in REGISTERS {
        assert_eq!(r.offset % 4, 0, "{}", r.name);
        assert!(r.offset < 1 << ADDRESS_BITS, "{}", r.name);
        let mut used = 0u32;
        for f in r.fields {
            assert!(f.lsb <= f.msb && f.msb < 32, "{}.{}", r.name, f.name);
            let mask = ((1u64 << (f.msb + 1)) - (1u64 << f.lsb)) as u32;
            assert_eq!(used & mask, 0, "{}.{} overlaps", r.name, f.name);
            used |= mask;
        }
    }
    let named = |n: &str| register_named(n).unwrap().offset;
    assert_eq!(named("ID"), REG_ID);
    assert_eq!(named("STATUS"), REG_STATUS);
    assert_eq!(named("ERRORS"), REG_ERRORS);
    assert_eq!(named("JOBS_FAILED"), REG_JOBS_FAILED);
    assert_eq!(named("KEY_CONTROL"), REG_KEY_CONTROL);
    assert_eq!(named("KEY_DATA"), REG_KEY_DATA);
    assert_eq!(named("CONTROL"), REG_CONTROL);
    assert_eq!(named("DIGITS_PER_STEP"), REG_DIGITS_PER_STEP);
    assert_eq!(named("SCHEDULE"), REG_SCHEDULE);
    assert_eq!(named("PACKET_HOLD"), REG_PACKET_HOLD);
    assert_eq!(named("ENGINE"), REG_ENGINE);
    assert_eq!(named("JOBS_PER_CORE"), REG_JOBS_PER_CORE);
    assert_eq!(VERSION_VALUE, 0x0005_0003);
    assert_eq!(key_control_commit(0xA5), 0xA502);
    assert_eq!(key_select(true, 9), 0x109);
}

/// The field table and the constants the RTL and the hosts use describe the same bits.
#[test]
fn field_table_matches_the_constants() {
    let mask = |register: &str, field: &str| {
        let f = register_named(register).unwrap().fields.iter().find(|f| f.name == field).unwrap();
        ((1u64 << (f.msb + 1)) - (1u64 << f.lsb)) as u32
    };
    assert_eq!(mask("CONTROL", "SOFT_RESET"), CONTROL_SOFT_RESET);
    assert_eq!(mask("STATUS", "KEY_VALID"), STATUS_KEY_VALID);
    assert_eq!(mask("STATUS", "BUSY"), STATUS_BUSY);
    assert_eq!(mask("STATUS", "KEY_LOADING"), STATUS_KEY_LOADING);
    assert_eq!(mask("ERRORS", "KEY_NOT_LOADED"), ERROR_KEY_NOT_LOADED);
    assert_eq!(mask("ERRORS", "MALFORMED"), ERROR_MALFORMED);
    assert_eq!(mask("ERRORS", "KEY_LOAD_REFUSED"), ERROR_KEY_LOAD_REFUSED);
    assert_eq!((ERROR_KEY_NOT_LOADED | ERROR_MALFORMED | ERROR_KEY_LOAD_REFUSED) >> ERROR_BITS, 0);
    assert_eq!(mask("KEY_CONTROL", "BEGIN"), KEY_CONTROL_BEGIN);
    assert_eq!(mask("KEY_CONTROL", "COMMIT"), KEY_CONTROL_COMMIT);
    assert_eq!(mask("KEY_CONTROL", "KEY_ID"), 0xFF << KEY_CONTROL_ID_SHIFT);
    assert_eq!(mask("KEY_SELECT", "TARGET"), KEY_SELECT_TARGET_MASK);
    assert_eq!(mask("KEY_SELECT", "PATH"), KEY_SELECT_Q_PATH);
    assert_eq!(mask("KEY_DATA", "DATA"), KEY_DATA_MASK);
    assert_eq!(mask("PACKET_HOLD", "CYCLES"), PACKET_HOLD_MASK);
}

#[test]
fn key_load_writes_select_once_per_register() {
    let loads =
        [(false, LoadTarget::Modulus, 1), (false, LoadTarget::Modulus, 2), (true, LoadTarget::Exponent, 0x3_0005)];
    let q_exponent = key_select(true, LoadTarget::Exponent as u8);
    assert_eq!(
        key_load_writes(&loads, 9),
        vec![
            (REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
            (REG_KEY_SELECT, 0),
            (REG_KEY_DATA, 1),
            (REG_KEY_DATA, 2),
            (REG_KEY_SELECT, q_exponent),
            (REG_KEY_DATA, 0x1_0005),
            (REG_KEY_CONTROL, 0x902),
        ]
    );
    let names = load_target_names();
    assert_eq!(names[LoadTarget::Exponent as usize], "Exponent");
    assert!(names.len() <= 16, "KEY_SELECT.TARGET has 4 bits");
}

/// docs/interface.md is `markdown()`; `ECRT_UPDATE_DOCS=1` rewrites it.
#[test]
fn interface_docs_are_current() {
    let path = docs_path();
    let text = markdown();
    if std::env::var_os("ECRT_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{} is not what interface::markdown() renders: regenerate it with \
         `ECRT_UPDATE_DOCS=1 cargo test -p ecrt-contract interface`",
        path.display()
    );
}

/// The resynchronisation frame is a whole request the card answers MALFORMED, by its opcode, under
/// the tag no job uses.
#[test]
fn resync_frame_is_a_malformed_request() {
    let layout = FrameLayout::new(61, 128).unwrap();
    let frame = resync_request(&layout);
    assert_eq!(frame.len(), layout.request_bytes);
    assert_eq!(decode_request(&frame, 61, 128), Err(FrameError::Magic { found: 0, expected: OPCODE_DECRYPT }));
    assert_eq!(u32::from_le_bytes(frame[..4].try_into().unwrap()), u32::from(RESYNC_TAG));
    let answer = ResultFrame { tag: RESYNC_TAG, status: RESULT_MALFORMED, plaintext: Default::default() };
    assert!(is_resync_answer(&answer));
    assert!(!is_resync_answer(&ResultFrame { status: RESULT_OK, ..answer.clone() }));
    assert!(!is_resync_answer(&ResultFrame { tag: 7, ..answer }));
}
