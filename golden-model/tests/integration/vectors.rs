//! Level 1 of verification: every python-paillier vector (fixtures/vectors, made by phe 1.5.0)
//! decrypts to phe's raw plaintext with all three decryptions and with the hardware's bit-exact
//! model, and decodes to phe's value.

use ecrt_golden::encoding::{decode, Encoded, Value};
use ecrt_golden::hw::{FoldEcrtKey, Multiplicand, Schedule};
use ecrt_golden::paillier::{decrypt_crt, decrypt_ecrt, decrypt_textbook};
use ecrt_golden::phe_format::read_private_key;
use num_bigint::{BigInt, BigUint};
use std::path::PathBuf;

fn vector_file(bits: u32) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/vectors/phe-{bits}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn expected_value(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Number(x) if x.is_f64() => Value::Float(x.as_f64().unwrap()),
        serde_json::Value::Number(x) => Value::Int(x.to_string().parse::<BigInt>().unwrap()),
        other => panic!("unexpected value {other}"),
    }
}

/// Checks every case of one vector file; the hardware model (slow in software) runs on the first
/// `hw_cases` cases.
fn check_vectors(bits: u32, hw_cases: usize) {
    let file = vector_file(bits);
    let key = read_private_key(&file["private_key"].to_string()).unwrap();
    assert_eq!(key.public().bits(), bits as u64);
    let cases = file["cases"].as_array().unwrap();
    assert!(cases.len() >= 9, "{bits}: {} cases", cases.len());
    // The hardware's bit-exact model, with both exponent schedules.
    let hw_keys = [
        key.hardware(64, Schedule::RightToLeft { segments: 4 }).unwrap(),
        key.hardware(68, Schedule::FixedWindow { window_bits: 4 }).unwrap(),
    ];
    // The model of the high-radix core: k limbs per step, Orup's folding; B in 23-bit windows
    // (24×17 products, the accelerator's), and in the earlier 17-bit limbs.
    let fold_keys = [
        FoldEcrtKey::new(key.p(), key.q(), 4, Schedule::FixedWindow { window_bits: 5 }).unwrap(),
        FoldEcrtKey::new(key.p(), key.q(), 3, Schedule::FixedWindow { window_bits: 6 }).unwrap(),
        FoldEcrtKey::new(key.p(), key.q(), 7, Schedule::RightToLeft { segments: 3 })
            .unwrap()
            .with_multiplicand(Multiplicand::Limbs),
    ];
    for (i, case) in cases.iter().enumerate() {
        let c: BigUint = case["ciphertext"]["v"].as_str().unwrap().parse().unwrap();
        let exponent = case["ciphertext"]["e"].as_i64().unwrap();
        let raw: BigUint = case["raw_plaintext"].as_str().unwrap().parse().unwrap();
        assert_eq!(decrypt_ecrt(&key, &c).unwrap(), raw, "{bits}-bit case {i} (eCRT)");
        assert_eq!(decrypt_crt(&key, &c).unwrap(), raw, "{bits}-bit case {i} (CRT)");
        for hw in hw_keys.iter().filter(|_| i < hw_cases) {
            assert_eq!(hw.decrypt(&c).unwrap(), raw, "{bits}-bit case {i} (hardware model, {:?})", hw.schedule());
        }
        // The earlier layout (B in limbs), no longer built, on the first cases only.
        let earlier = |fold: &FoldEcrtKey| fold.fold_p().multiplicand() == Multiplicand::Limbs;
        for fold in fold_keys.iter().filter(|f| i < hw_cases && (i < 3 || !earlier(f))) {
            let (k, b) = (fold.fold_p().limbs_per_step(), fold.fold_p().multiplicand());
            assert_eq!(fold.decrypt(&c).unwrap(), raw, "{bits}-bit case {i} (folding model, k = {k}, B in {b:?})");
        }
        if bits <= 2048 {
            assert_eq!(decrypt_textbook(&key, &c).unwrap(), raw, "{bits}-bit case {i} (textbook)");
        }
        let decoded = decode(key.public().n(), &Encoded { encoding: raw, exponent }).unwrap();
        assert_eq!(decoded, expected_value(&case["value"]), "{bits}-bit case {i} value");
    }
}

#[test]
fn phe_1024_vectors() {
    check_vectors(1024, usize::MAX);
}

#[test]
fn phe_2048_vectors() {
    check_vectors(2048, usize::MAX);
}

#[test]
fn phe_3072_vectors() {
    check_vectors(3072, 3);
}
