//! Every parser of untrusted input, over arbitrary bytes and arbitrary structure: the JWK key
//! reader, the ciphertext-line reader, phe's decoder, the result-frame decoder and the register
//! probe. Each must answer (an error is fine) without panicking, hanging or allocating without
//! bound; the case counts keep the run to seconds.

use ecrt_contract::interface::{self as itf, ResultFrame};
use ecrt_driver::backends::xdma::nodes::Registers;
use ecrt_driver::backends::xdma::probe::DeviceInfo;
use ecrt_driver::jsonl::{parse_line, LineError, LineReader};
use ecrt_golden::encoding::{decode, Encoded};
use ecrt_golden::phe_format::{read_private_key, read_public_key};
use ecrt_golden::{PrivateKey, PublicKey};
use num_bigint::BigUint;
use proptest::prelude::*;
use rand::SeedableRng;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::BufReader;
use std::sync::OnceLock;

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A 256-bit key: big enough for every code path, small enough for many cases.
fn key() -> &'static PrivateKey {
    static KEY: OnceLock<PrivateKey> = OnceLock::new();
    KEY.get_or_init(|| PrivateKey::generate(256, &mut rand::rngs::StdRng::seed_from_u64(11)).unwrap())
}

fn public() -> &'static PublicKey {
    key().public()
}

/// Any JSON value, nested a little.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|x| json!(x)),
        "[0-9]{0,80}".prop_map(Value::from),
        "[A-Za-z0-9_=-]{0,60}".prop_map(Value::from),
        ".{0,20}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::hash_map("[a-z_]{1,8}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A field of a JWK: right, or any value.
fn jwk_field(right: Value) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![3 => Just(Some(right)), 1 => Just(None), 1 => any_json().prop_map(Some)]
}

/// A JWK of the right shape with each field possibly wrong; integers are arbitrary bytes.
fn structured_jwk() -> impl Strategy<Value = String> {
    let int = || {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..80).prop_map(|b| Value::from(b64(&b))),
            any_json(),
            // Odd numbers of 64 to 300 bits: some prime, most not.
            (64u32..300, any::<u64>()).prop_map(|(bits, seed)| {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                let x = num_bigint::RandBigInt::gen_biguint(&mut rng, u64::from(bits)) | BigUint::from(1u32);
                Value::from(b64(&x.to_bytes_be()))
            }),
        ]
    };
    (
        jwk_field(json!("DAJ")),
        jwk_field(json!(["decrypt"])),
        jwk_field(json!("PAI-GN1")),
        int(),
        int(),
        int(),
        any::<bool>(),
    )
        .prop_map(|(kty, ops, alg, n, p, q, n_is_pq)| {
            let n = if n_is_pq {
                let int = |v: &Value| {
                    use base64::Engine;
                    let text = v.as_str().unwrap_or("");
                    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap_or_default();
                    BigUint::from_bytes_be(&bytes)
                };
                Value::from(b64(&(int(&p) * int(&q)).to_bytes_be()))
            } else {
                n
            };
            let mut public = json!({"kty": "DAJ", "n": n});
            if let Some(alg) = alg {
                public["alg"] = alg;
            }
            let mut jwk = json!({"pub": public, "p": p, "q": q});
            if let Some(kty) = kty {
                jwk["kty"] = kty;
            }
            if let Some(ops) = ops {
                jwk["key_ops"] = ops;
            }
            jwk.to_string()
        })
}

/// A ciphertext line of the right shape with each part possibly wrong.
fn structured_line() -> impl Strategy<Value = String> {
    let v = prop_oneof![
        "[0-9]{1,160}".prop_map(Value::from),
        "-?[0-9]{1,40}".prop_map(|s| json!(s)),
        any::<u64>().prop_map(Value::from),
        any_json(),
    ];
    let e = prop_oneof![any::<i64>().prop_map(Value::from), (-40i64..40i64).prop_map(Value::from), any_json()];
    prop_oneof![
        (v, e).prop_map(|(v, e)| json!({"v": v, "e": e}).to_string()),
        "[0-9]{1,160}",
        " *[0-9]{1,80} *",
        any_json().prop_map(|v| v.to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn key_reader_takes_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = read_private_key(&text);
        let _ = read_public_key(&text);
    }

    #[test]
    fn key_reader_takes_any_structure(text in structured_jwk()) {
        if let Err(e) = read_private_key(&text) {
            let message = e.to_string();
            // Errors name a field or a check, never a value of the file.
            let value: Value = serde_json::from_str(&text).unwrap();
            for field in ["p", "q"] {
                if let Some(secret) = value[field].as_str().filter(|s| s.len() >= 12) {
                    prop_assert!(!message.contains(secret), "{message}");
                }
            }
        }
        let _ = read_public_key(&text);
    }

    #[test]
    fn line_reader_splits_as_str_lines_and_bounds_each_line(
        bytes in prop::collection::vec(prop_oneof![4 => any::<u8>(), 1 => Just(b'\n')], 0..400),
        limit in 0usize..40,
        capacity in 1usize..16,
    ) {
        // A tiny buffer: lines straddle its refills.
        let mut reader = LineReader::new(BufReader::with_capacity(capacity, &bytes[..]), limit);
        let mut got = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            got.push(line);
            prop_assert!(got.len() <= bytes.len() + 1, "the reader does not end");
        }
        let mut expected: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        if bytes.last().is_none_or(|&b| b == b'\n') {
            expected.pop(); // no line after a final newline, nor in empty input
        }
        prop_assert_eq!(got.len(), expected.len());
        for (line, whole) in got.iter().zip(expected) {
            // The limit counts the bytes before the newline, a `\r` among them.
            let raw = whole.strip_suffix(b"\r").unwrap_or(whole);
            match line {
                Ok(text) => prop_assert_eq!(text.as_bytes(), raw),
                Err(LineError::TooLong { limit: l }) => prop_assert!(whole.len() > *l && *l == limit),
                Err(LineError::NotUtf8 { column }) => {
                    prop_assert!(whole.len() <= limit && std::str::from_utf8(raw).is_err() && *column >= 1);
                }
                Err(other) => prop_assert!(false, "unexpected {other}"),
            }
        }
    }

    #[test]
    fn ciphertext_lines_take_any_text(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_line(public(), &text);
    }

    #[test]
    fn ciphertext_lines_take_any_structure(line in structured_line()) {
        if let Ok(c) = parse_line(public(), &line) {
            prop_assert!(&c.ciphertext < public().n_squared());
        }
    }

    #[test]
    fn phe_decoding_takes_any_exponent(encoding in prop::collection::vec(any::<u8>(), 0..40), exponent in any::<i64>()) {
        let encoded = Encoded { encoding: BigUint::from_bytes_le(&encoding), exponent };
        let _ = decode(public().n(), &encoded);
    }

    #[test]
    fn result_frames_take_any_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..700),
        digits in prop_oneof![0usize..=itf::MAX_DIGITS + 2, any::<usize>()],
        stream_bits in prop_oneof![prop::sample::select(itf::STREAM_BITS_CHOICES.to_vec()), any::<usize>()],
    ) {
        let _ = itf::decode_result(&bytes, digits, stream_bits);
        let _ = itf::decode_results(&bytes, digits, stream_bits);
    }

    #[test]
    fn result_frames_take_any_damage(
        digits in 1usize..40,
        stream_bits in prop::sample::select(itf::STREAM_BITS_CHOICES.to_vec()),
        tag in any::<u16>(),
        status in any::<u8>(),
        plaintext in prop::collection::vec(any::<u8>(), 0..85),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let plaintext = BigUint::from_bytes_le(&plaintext) >> 0u32;
        let frame = ResultFrame { tag, status, plaintext };
        let Ok(words) = itf::encode_result_words(&frame, digits, stream_bits) else { return Ok(()) };
        let mut bytes = itf::words_to_bytes(&words);
        for (at, mask) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= mask;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        let decoded = itf::decode_result(&bytes, digits, stream_bits);
        if flips.iter().all(|(_, mask)| *mask == 0) && cut.is_none() && (status == itf::RESULT_OK || frame.plaintext == BigUint::from(0u32)) {
            prop_assert_eq!(decoded, Ok(frame));
        }
        let doubled = [bytes.clone(), bytes].concat();
        let _ = itf::decode_results(&doubled, digits, stream_bits);
    }
}

/// A register block that answers each offset with a value of the test's choosing, or fails.
struct FakeBus {
    values: HashMap<u32, u32>,
    failing: Option<u32>,
    writes: usize,
}

impl Registers for FakeBus {
    type Error = std::io::Error;

    fn read(&mut self, offset: u32) -> std::io::Result<u32> {
        if self.failing == Some(offset) {
            return Err(std::io::Error::from_raw_os_error(libc::EIO));
        }
        Ok(self.values.get(&offset).copied().unwrap_or(0))
    }

    fn write(&mut self, _offset: u32, _value: u32) -> std::io::Result<()> {
        self.writes += 1;
        Ok(())
    }
}

const PROBED: [u32; 8] = [
    itf::REG_ID,
    itf::REG_VERSION,
    itf::REG_KEY_BITS,
    itf::REG_CORES,
    itf::REG_DIGITS,
    itf::REG_WINDOW_BITS,
    itf::REG_STREAM_BITS,
    itf::REG_LIMB_BITS,
];

/// Registers near a real configuration: each one right, near right, or anything.
fn near_registers() -> impl Strategy<Value = HashMap<u32, u32>> {
    let config = ecrt_contract::config::AcceleratorConfig { key_bits: 1024, cores: 2, ..Default::default() };
    let right = [
        itf::ID_VALUE,
        itf::VERSION_VALUE,
        1024,
        2,
        config.digits() as u32,
        config.window_bits as u32,
        config.stream_bits as u32,
        config.limb_bits as u32,
    ];
    let fields: Vec<_> = right
        .iter()
        .map(|&r| prop_oneof![4 => Just(r), 1 => (0u32..3).prop_map(move |d| r.wrapping_add(d).wrapping_sub(1)), 1 => any::<u32>()])
        .collect();
    fields.prop_map(|values| PROBED.iter().copied().zip(values).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_probe_takes_any_register_values(
        values in prop::collection::vec(any::<u32>(), PROBED.len()),
        failing in prop::option::of(prop::sample::select(PROBED.to_vec())),
    ) {
        let mut bus = FakeBus { values: PROBED.iter().copied().zip(values).collect(), failing, writes: 0 };
        let _ = DeviceInfo::probe(&mut bus);
        prop_assert_eq!(bus.writes, 0, "probing only reads");
    }

    #[test]
    fn the_probe_takes_registers_near_a_real_card(
        values in near_registers(),
        failing in prop::option::of(prop::sample::select(PROBED.to_vec())),
    ) {
        let mut bus = FakeBus { values, failing, writes: 0 };
        if let Ok(info) = DeviceInfo::probe(&mut bus) {
            // What the probe accepts, the driver can frame.
            prop_assert!(info.layout().is_ok());
            prop_assert!(info.config().validate().is_ok());
        }
        prop_assert_eq!(bus.writes, 0, "probing only reads");
    }
}
