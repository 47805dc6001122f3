//! python-paillier's file formats, as pheutil reads and writes them: the JWK private and public
//! keys (`kty` "DAJ", base64url big-endian integers) and the ciphertext object
//! `{"v": "<decimal>", "e": <exponent>}`.
//!
//! Key errors never quote the input: a private key file holds p and q. What reading a key copies
//! of it (the parsed JSON's strings, the decoded bytes, the primes) is wiped when dropped.

use crate::key::{KeyError, PrivateKey, PublicKey, Secret, MAX_KEY_BITS};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use num_bigint::BigUint;
use serde_json::{json, Map, Value};
use std::ops::Deref;
use zeroize::{Zeroize, Zeroizing};

/// Why a key file was refused. No variant carries any part of the file's content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFileError {
    #[error("the key file is not valid JSON (line {line}, column {column})")]
    NotJson { line: usize, column: usize },
    #[error("the key file is not a python-paillier JWK: {0}")]
    NotPheJwk(&'static str),
    #[error("the field `{0}` is not a base64url-encoded integer")]
    BadInteger(&'static str),
    #[error("invalid key: {0}")]
    Invalid(KeyError),
    #[error("the modulus n has {bits} bits; keys of at most {MAX_KEY_BITS} bits are supported")]
    TooLarge { bits: u64 },
}

// By hand rather than `#[from]`, which would also make the key error a `source` and print it twice.
impl From<KeyError> for KeyFileError {
    fn from(error: KeyError) -> Self {
        KeyFileError::Invalid(error)
    }
}

/// Why a ciphertext line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CiphertextFormatError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("expected a ciphertext object {{\"v\": \"<decimal>\", \"e\": <integer>}} or a decimal integer")]
    WrongShape,
    #[error("`v` must be a non-negative decimal integer (as a string)")]
    BadValue,
    #[error("`e` must be an integer exponent")]
    BadExponent,
}

/// A ciphertext as pheutil writes it: the raw Paillier ciphertext and the exponent of its encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PheCiphertext {
    pub ciphertext: BigUint,
    pub exponent: i64,
}

fn int_to_base64url(x: &BigUint) -> String {
    URL_SAFE_NO_PAD.encode(Zeroizing::new(x.to_bytes_be()))
}

fn base64url_to_int(s: &str, field: &'static str) -> Result<BigUint, KeyFileError> {
    // phe strips the '=' padding; accept it either way.
    let mut bytes =
        Zeroizing::new(URL_SAFE_NO_PAD.decode(s.trim_end_matches('=')).map_err(|_| KeyFileError::BadInteger(field))?);
    // Reversed here, in the buffer that is wiped: `from_bytes_be` would reverse a copy it frees.
    bytes.reverse();
    Ok(BigUint::from_bytes_le(&bytes))
}

/// A parsed JSON document whose strings are wiped when it is dropped: a key file's hold p and q.
/// (Numbers, and the keys of objects, cannot be reached to be wiped; a JWK's secrets are strings.)
struct WipedJson(Value);

impl Deref for WipedJson {
    type Target = Value;
    fn deref(&self) -> &Value {
        &self.0
    }
}

impl Drop for WipedJson {
    fn drop(&mut self) {
        fn wipe(value: &mut Value) {
            match value {
                Value::String(text) => text.zeroize(),
                Value::Array(items) => items.iter_mut().for_each(wipe),
                Value::Object(fields) => fields.values_mut().for_each(wipe),
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        wipe(&mut self.0);
    }
}

fn field<'a>(obj: &'a Value, name: &'static str, what: &'static str) -> Result<&'a Value, KeyFileError> {
    obj.get(name).ok_or(KeyFileError::NotPheJwk(what))
}

fn parse_json(text: &str) -> Result<WipedJson, KeyFileError> {
    // serde_json's syntax errors name a position, not content; its type errors could quote the
    // content, which is why fields are read from a `Value` by hand below.
    serde_json::from_str(text).map(WipedJson).map_err(|e| KeyFileError::NotJson { line: e.line(), column: e.column() })
}

fn public_from_value(public: &Value) -> Result<PublicKey, KeyFileError> {
    if field(public, "kty", "the public key has no `kty`")? != "DAJ" {
        return Err(KeyFileError::NotPheJwk("the public key's `kty` is not \"DAJ\""));
    }
    if field(public, "alg", "the public key has no `alg`")? != "PAI-GN1" {
        return Err(KeyFileError::NotPheJwk("the public key's `alg` is not \"PAI-GN1\""));
    }
    let n = field(public, "n", "the public key has no `n`")?.as_str().ok_or(KeyFileError::BadInteger("n"))?;
    let n = base64url_to_int(n, "n")?;
    // Before n² here and the primality tests later, whose cost grows with the key's size.
    if n.bits() > MAX_KEY_BITS {
        return Err(KeyFileError::TooLarge { bits: n.bits() });
    }
    Ok(PublicKey::new(n)?)
}

/// Reads pheutil's public JWK (`pheutil extract`), or the public half of its private JWK.
pub fn read_public_key(text: &str) -> Result<PublicKey, KeyFileError> {
    let value = parse_json(text)?;
    match value.get("pub") {
        Some(public) => public_from_value(public),
        None => public_from_value(&value),
    }
}

/// Reads pheutil's private JWK (`pheutil genpkey`): checks what pheutil checks, then that
/// pub.n = p·q and every other key property (see [`PrivateKey::from_primes_and_modulus`]).
pub fn read_private_key(text: &str) -> Result<PrivateKey, KeyFileError> {
    let mut rng = rand::thread_rng();
    read_private_key_tested(text, |x, rounds| crate::prime::is_probable_prime(x, rounds, &mut rng))
}

/// [`read_private_key`] with another Miller–Rabin implementation (see
/// [`PrivateKey::from_primes_and_modulus_tested`]).
pub fn read_private_key_tested(
    text: &str,
    is_probable_prime: impl FnMut(&BigUint, usize) -> bool,
) -> Result<PrivateKey, KeyFileError> {
    let value = parse_json(text)?;
    if !value.is_object() {
        return Err(KeyFileError::NotPheJwk("it is not a JSON object"));
    }
    if field(&value, "kty", "it has no `kty`")? != "DAJ" {
        return Err(KeyFileError::NotPheJwk("`kty` is not \"DAJ\""));
    }
    let ops = field(&value, "key_ops", "it has no `key_ops`: is this a public key?")?;
    if !ops.as_array().is_some_and(|ops| ops.iter().any(|op| op == "decrypt")) {
        return Err(KeyFileError::NotPheJwk("`key_ops` does not include \"decrypt\": is this a public key?"));
    }
    let public = public_from_value(field(&value, "pub", "it has no `pub` public key")?)?;
    let prime = |name: &'static str| -> Result<Secret, KeyFileError> {
        let text =
            field(&value, name, "a prime (`p` or `q`) is missing")?.as_str().ok_or(KeyFileError::BadInteger(name))?;
        base64url_to_int(text, name).map(Secret::new)
    };
    let (p, q) = (prime("p")?, prime("q")?);
    // p·q = n needs both no longer than n: refused here without multiplying huge numbers.
    if p.expose().bits() > public.bits() || q.expose().bits() > public.bits() {
        return Err(KeyError::ModulusMismatch.into());
    }
    Ok(PrivateKey::from_secret_primes(p, q, public.n(), is_probable_prime)?)
}

fn public_jwk(key: &PublicKey, kid: &str) -> Value {
    json!({
        "kty": "DAJ",
        "alg": "PAI-GN1",
        "key_ops": ["encrypt"],
        "n": int_to_base64url(key.n()),
        "kid": format!("Paillier public key {kid}"),
    })
}

/// pheutil's public JWK, one line of JSON; `kid` completes "Paillier public key …".
pub fn write_public_key(key: &PublicKey, kid: &str) -> String {
    public_jwk(key, kid).to_string()
}

/// pheutil's private JWK, one line of JSON; `kid` completes "Paillier private key …".
pub fn write_private_key(key: &PrivateKey, kid: &str) -> String {
    let mut obj = Map::new();
    obj.insert("kty".into(), "DAJ".into());
    obj.insert("key_ops".into(), json!(["decrypt"]));
    obj.insert("p".into(), int_to_base64url(key.p()).into());
    obj.insert("q".into(), int_to_base64url(key.q()).into());
    obj.insert("pub".into(), public_jwk(key.public(), kid));
    obj.insert("kid".into(), format!("Paillier private key {kid}").into());
    WipedJson(Value::Object(obj)).to_string()
}

fn decimal(s: &str) -> Option<BigUint> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    BigUint::parse_bytes(s.as_bytes(), 10)
}

/// Reads one ciphertext: pheutil's object `{"v": "<decimal>", "e": <integer>}` (v may also be a
/// JSON integer), or a bare decimal integer, which is a raw ciphertext with exponent 0.
pub fn parse_ciphertext(line: &str) -> Result<PheCiphertext, CiphertextFormatError> {
    let line = line.trim();
    if let Some(ciphertext) = decimal(line) {
        return Ok(PheCiphertext { ciphertext, exponent: 0 });
    }
    let value: Value = serde_json::from_str(line).map_err(|e| CiphertextFormatError::NotJson(e.to_string()))?;
    let obj = value.as_object().ok_or(CiphertextFormatError::WrongShape)?;
    let v = obj.get("v").ok_or(CiphertextFormatError::WrongShape)?;
    let e = obj.get("e").ok_or(CiphertextFormatError::WrongShape)?;
    let ciphertext = match v {
        Value::String(s) => decimal(s.trim()),
        // Numbers keep their digits (serde_json's arbitrary_precision).
        Value::Number(num) => decimal(&num.to_string()),
        _ => None,
    }
    .ok_or(CiphertextFormatError::BadValue)?;
    let exponent = e.as_i64().ok_or(CiphertextFormatError::BadExponent)?;
    Ok(PheCiphertext { ciphertext, exponent })
}

/// Writes a ciphertext as pheutil does: `{"v": "<decimal>", "e": <exponent>}`.
pub fn format_ciphertext(c: &PheCiphertext) -> String {
    format!("{{\"v\": \"{}\", \"e\": {}}}", c.ciphertext, c.exponent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn private_key_round_trips_and_phe_check_order_is_kept() {
        let key = PrivateKey::generate(128, &mut rand::rngs::StdRng::seed_from_u64(5)).unwrap();
        let text = write_private_key(&key, "test");
        let back = read_private_key(&text).unwrap();
        assert_eq!(back.public(), key.public());
        assert_eq!(back.p(), key.p());
        assert_eq!(read_public_key(&text).unwrap(), *key.public());
        assert_eq!(read_public_key(&write_public_key(key.public(), "t")).unwrap(), *key.public());
        assert_eq!(
            read_private_key(&write_public_key(key.public(), "t")).unwrap_err(),
            KeyFileError::NotPheJwk("`key_ops` does not include \"decrypt\": is this a public key?")
        );
    }

    #[test]
    fn key_errors_never_quote_the_file() {
        let key = PrivateKey::generate(128, &mut rand::rngs::StdRng::seed_from_u64(6)).unwrap();
        let good: Value = serde_json::from_str(&write_private_key(&key, "t")).unwrap();
        let p_b64 = good["p"].as_str().unwrap().to_string();
        let mut swapped = good.clone();
        swapped["q"] = swapped["p"].clone();
        let mut numeric = good.clone();
        numeric["p"] = json!(12345678901234567u64);
        let mut wrong_n = good.clone();
        wrong_n["pub"]["n"] = json!(int_to_base64url(&(key.public().n() + 2u32)));
        let mut bad_b64 = good.clone();
        bad_b64["q"] = json!(format!("{p_b64}!!"));
        let cases = [
            (swapped.to_string(), "invalid key: p·q does not equal the public modulus n"),
            (numeric.to_string(), "the field `p` is not a base64url-encoded integer"),
            (wrong_n.to_string(), "invalid key: p·q does not equal the public modulus n"),
            (bad_b64.to_string(), "the field `q` is not a base64url-encoded integer"),
            (good.to_string()[..40].to_string(), "the key file is not valid JSON (line 1, column 40)"),
        ];
        for (text, expected) in cases {
            let message = read_private_key(&text).unwrap_err().to_string();
            assert_eq!(message, expected);
            assert!(!message.contains(&p_b64[..8]));
        }
    }

    #[test]
    fn oversized_keys_are_refused_before_any_arithmetic() {
        let key = PrivateKey::generate(128, &mut rand::rngs::StdRng::seed_from_u64(8)).unwrap();
        let mut jwk: Value = serde_json::from_str(&write_private_key(&key, "t")).unwrap();
        // A 332,200-bit odd n (and primes to match its length): refused on its size at once.
        let huge = (BigUint::from(1u32) << 332_199u32) + 1u32;
        jwk["pub"]["n"] = json!(int_to_base64url(&huge));
        let started = std::time::Instant::now();
        assert_eq!(read_public_key(&jwk.to_string()), Err(KeyFileError::TooLarge { bits: 332_200 }));
        assert_eq!(read_private_key(&jwk.to_string()).unwrap_err(), KeyFileError::TooLarge { bits: 332_200 });
        // Primes longer than n cannot multiply to it: refused without the product.
        let mut long_p: Value = serde_json::from_str(&write_private_key(&key, "t")).unwrap();
        long_p["p"] = json!(int_to_base64url(&huge));
        assert_eq!(
            read_private_key(&long_p.to_string()).unwrap_err(),
            KeyFileError::Invalid(KeyError::ModulusMismatch)
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn ciphertext_lines() {
        let c = parse_ciphertext(r#"{"v": "123456789012345678901234567890", "e": -32}"#).unwrap();
        assert_eq!(c.exponent, -32);
        assert_eq!(c.ciphertext.to_string(), "123456789012345678901234567890");
        assert_eq!(parse_ciphertext(&format_ciphertext(&c)).unwrap(), c);
        assert_eq!(parse_ciphertext(" 42 ").unwrap(), PheCiphertext { ciphertext: 42u32.into(), exponent: 0 });
        let big = "123456789012345678901234567890123456789";
        assert_eq!(parse_ciphertext(&format!(r#"{{"v": {big}, "e": 0}}"#)).unwrap().ciphertext.to_string(), big);
        assert_eq!(parse_ciphertext(r#"{"v": "12", "e": 1.5}"#), Err(CiphertextFormatError::BadExponent));
        assert_eq!(parse_ciphertext(r#"{"v": "12", "e": "3"}"#), Err(CiphertextFormatError::BadExponent));
        assert_eq!(parse_ciphertext(r#"{"v": "-12", "e": 0}"#), Err(CiphertextFormatError::BadValue));
        assert_eq!(parse_ciphertext(r#"{"v": "12"}"#), Err(CiphertextFormatError::WrongShape));
        assert_eq!(parse_ciphertext("[1, 2]"), Err(CiphertextFormatError::WrongShape));
        assert!(matches!(parse_ciphertext("{v: 1"), Err(CiphertextFormatError::NotJson(_))));
        assert!(matches!(parse_ciphertext(""), Err(CiphertextFormatError::NotJson(_))));
    }
}
