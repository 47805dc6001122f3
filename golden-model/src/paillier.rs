//! Paillier encryption (g = n + 1), its homomorphisms, and decryption three ways: textbook,
//! CRT (Paillier 1999, §7, as phe and rust-paillier do it) and eCRT (MESA, arXiv 2506.17935; the
//! formulas are in docs/background.md#ecrt). All three give the same plaintext for every valid ciphertext.

use crate::key::{PrivateKey, PublicKey};
use num_bigint::{BigInt, BigUint, RandBigInt, Sign};
use num_integer::Integer;
use num_traits::{One, Zero};
use rand::{CryptoRng, RngCore};

/// Why a ciphertext cannot be decrypted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CiphertextError {
    #[error("the ciphertext is 0")]
    Zero,
    #[error("the ciphertext is not below n² (it has {bits} bits; n² has {n_squared_bits})")]
    TooLarge { bits: u64, n_squared_bits: u64 },
    #[error("the ciphertext shares a factor with n: it was not made with this key")]
    NotUnit,
}

/// Why a plaintext cannot be encrypted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the plaintext must be below n")]
pub struct PlaintextTooLarge;

/// Checks 0 < c < n² and gcd(c, n) = 1: the ciphertexts that Paillier encryption can produce.
pub fn check_ciphertext(key: &PublicKey, c: &BigUint) -> Result<(), CiphertextError> {
    if c.is_zero() {
        return Err(CiphertextError::Zero);
    }
    if c >= key.n_squared() {
        return Err(CiphertextError::TooLarge { bits: c.bits(), n_squared_bits: key.n_squared().bits() });
    }
    if !c.gcd(key.n()).is_one() {
        return Err(CiphertextError::NotUnit);
    }
    Ok(())
}

/// Encrypts m < n with a given obfuscator r (a unit mod n): c = (1 + m·n)·r^n mod n².
pub fn encrypt_with_r(key: &PublicKey, m: &BigUint, r: &BigUint) -> Result<BigUint, PlaintextTooLarge> {
    if m >= key.n() {
        return Err(PlaintextTooLarge);
    }
    let nsq = key.n_squared();
    // g^m = (1 + n)^m = 1 + m·n mod n²: no exponentiation needed for g = n + 1.
    let g_m = (BigUint::one() + m * key.n()) % nsq;
    Ok(g_m * r.modpow(key.n(), nsq) % nsq)
}

/// Encrypts m < n with a fresh random obfuscator from `rng` (a CSPRNG).
pub fn encrypt<R: RngCore + CryptoRng + ?Sized>(
    key: &PublicKey,
    m: &BigUint,
    rng: &mut R,
) -> Result<BigUint, PlaintextTooLarge> {
    let r = loop {
        let r = rng.gen_biguint_below(key.n());
        if !r.is_zero() && r.gcd(key.n()).is_one() {
            break r;
        }
    };
    encrypt_with_r(key, m, &r)
}

/// E(a)·E(b) = E(a + b mod n).
pub fn add(key: &PublicKey, a: &BigUint, b: &BigUint) -> BigUint {
    a * b % key.n_squared()
}

/// E(a)^k = E(k·a mod n), for any integer k (a negative k inverts the ciphertext first).
pub fn mul_scalar(key: &PublicKey, c: &BigUint, k: &BigInt) -> Result<BigUint, CiphertextError> {
    check_ciphertext(key, c)?;
    let nsq = key.n_squared();
    let base = if k.sign() == Sign::Minus {
        crate::prime::mod_inverse(c, nsq).ok_or(CiphertextError::NotUnit)?
    } else {
        c.clone()
    };
    Ok(base.modpow(k.magnitude(), nsq))
}

/// L_d(x) = (x − 1)/d, an exact division when x ≡ 1 mod d.
fn l_function(x: &BigUint, d: &BigUint) -> BigUint {
    (x - 1u32) / d
}

/// Textbook decryption: m = L(c^λ mod n²)·μ mod n.
pub fn decrypt_textbook(key: &PrivateKey, c: &BigUint) -> Result<BigUint, CiphertextError> {
    let public = key.public();
    check_ciphertext(public, c)?;
    let u = c.modpow(key.lambda(), public.n_squared());
    Ok(l_function(&u, public.n()) * key.mu() % public.n())
}

/// m_p = L_p(c^(p−1) mod p²): the half-decryption mod p before its constant.
fn half_decryption(c: &BigUint, prime: &BigUint, prime_squared: &BigUint) -> BigUint {
    l_function(&c.modpow(&(prime - 1u32), prime_squared), prime)
}

/// CRT decryption (Paillier 1999, §7): m_p = L_p(c^(p−1) mod p²)·h_p mod p, m_q likewise, then
/// m = m_p + ((m_q − m_p)·p^(−1) mod q)·p (Garner's recombination, as phe does it).
pub fn decrypt_crt(key: &PrivateKey, c: &BigUint) -> Result<BigUint, CiphertextError> {
    check_ciphertext(key.public(), c)?;
    let (p, q) = (key.p(), key.q());
    let m_p = half_decryption(c, p, key.p_squared()) * key.h_p() % p;
    let m_q = half_decryption(c, q, key.q_squared()) * key.h_q() % q;
    let diff = (&m_q + q - &m_p % q) % q;
    Ok(m_p + (diff * key.p_inv_q() % q) * p)
}

/// eCRT decryption (MESA): m = (L_p(c^(p−1) mod p²)·t_p + L_q(c^(q−1) mod q²)·t_q) mod n; the
/// per-prime constants and the CRT recombination are merged into t_p and t_q.
pub fn decrypt_ecrt(key: &PrivateKey, c: &BigUint) -> Result<BigUint, CiphertextError> {
    check_ciphertext(key.public(), c)?;
    let l_p = half_decryption(c, key.p(), key.p_squared());
    let l_q = half_decryption(c, key.q(), key.q_squared());
    Ok((l_p * key.t_p() + l_q * key.t_q()) % key.public().n())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn three_decryptions_agree_with_encryption() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for bits in [64u64, 128, 512] {
            let key = PrivateKey::generate(bits, &mut rng).unwrap();
            let n = key.public().n().clone();
            for m in [BigUint::zero(), BigUint::one(), &n - 1u32, rng.gen_biguint_below(&n)] {
                let c = encrypt(key.public(), &m, &mut rng).unwrap();
                assert_eq!(decrypt_textbook(&key, &c).unwrap(), m);
                assert_eq!(decrypt_crt(&key, &c).unwrap(), m);
                assert_eq!(decrypt_ecrt(&key, &c).unwrap(), m);
            }
        }
    }

    #[test]
    fn homomorphisms() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(12);
        let key = PrivateKey::generate(128, &mut rng).unwrap();
        let public = key.public();
        let n = public.n();
        let (a, b) = (rng.gen_biguint_below(n), rng.gen_biguint_below(n));
        let (ca, cb) = (encrypt(public, &a, &mut rng).unwrap(), encrypt(public, &b, &mut rng).unwrap());
        assert_eq!(decrypt_ecrt(&key, &add(public, &ca, &cb)).unwrap(), (&a + &b) % n);
        for k in [BigInt::from(0), BigInt::from(5), BigInt::from(-3)] {
            let ck = mul_scalar(public, &ca, &k).unwrap();
            let expected = (BigInt::from(a.clone()) * &k).mod_floor(&BigInt::from(n.clone()));
            assert_eq!(BigInt::from(decrypt_ecrt(&key, &ck).unwrap()), expected);
        }
    }

    #[test]
    fn refuses_invalid_ciphertexts() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(13);
        let key = PrivateKey::generate(64, &mut rng).unwrap();
        let public = key.public();
        assert_eq!(decrypt_ecrt(&key, &BigUint::zero()), Err(CiphertextError::Zero));
        assert!(matches!(decrypt_crt(&key, public.n_squared()), Err(CiphertextError::TooLarge { .. })));
        assert_eq!(decrypt_textbook(&key, key.p()), Err(CiphertextError::NotUnit));
        assert_eq!(encrypt(public, public.n(), &mut rng), Err(PlaintextTooLarge));
    }
}
