//! Paillier keys with g = n + 1: validated construction from (p, q), key generation, and the
//! constants that every decryption method needs, derived once on load.
//!
//! As in rust-paillier, only (p, q) are ever serialised; everything else is derived here and the
//! derivation validates p·q = n, p ≠ q, primality, |p| = |q| and gcd(n, (p−1)(q−1)) = 1.

use crate::prime::{is_probable_prime, mod_inverse, random_prime, random_prime_rounds};
use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::One;
use rand::{CryptoRng, RngCore};
use std::fmt;
use zeroize::{Zeroize, ZeroizeOnDrop};

/// Smallest modulus accepted at all. Below 512 bits a key is insecure: such keys exist for tests.
pub const MIN_KEY_BITS: u64 = 64;
/// Largest modulus accepted.
pub const MAX_KEY_BITS: u64 = 8192;

/// Why a key was refused. The texts name the failed check, never a secret value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("p·q does not equal the public modulus n")]
    ModulusMismatch,
    #[error("p and q are equal")]
    EqualPrimes,
    #[error("{0} is not prime")]
    NotPrime(&'static str),
    #[error("p and q differ in bit length ({p_bits} and {q_bits} bits); ecrt needs |p| = |q|")]
    UnequalLengths { p_bits: u64, q_bits: u64 },
    #[error("gcd(n, (p−1)(q−1)) is not 1")]
    NotCoprime,
    #[error("the modulus must have an even number of bits between {MIN_KEY_BITS} and {MAX_KEY_BITS}, not {0}")]
    UnsupportedSize(u64),
    #[error("the public modulus n must be odd and at least {MIN_KEY_BITS} bits long")]
    BadModulus,
}

/// Overwrites `x` with zeros in place, leaving it 0.
///
/// Best effort: num-bigint gives no access to its buffer, so each bit is cleared, low bits first:
/// every digit is zeroed in place before the top one clears and num-bigint frees the buffer.
/// Spare capacity that earlier arithmetic left in the allocation is out of reach (a [`Secret`]
/// holds a copy without any), and so are the copies num-bigint's arithmetic made and freed.
pub fn wipe(x: &mut BigUint) {
    let bits = x.bits();
    if bits == 0 {
        return;
    }
    for bit in 0..bits - 1 {
        x.set_bit(bit, false);
    }
    // Clearing the top bit frees the buffer; a store just before a free is one the optimiser may
    // drop, unless something it cannot see through may read the buffer first.
    std::hint::black_box(&*x);
    x.set_bit(bits - 1, false);
}

/// A secret big integer, overwritten with zeros when dropped (see [`wipe`]).
pub(crate) struct Secret(BigUint);

impl Secret {
    /// Keeps an exact-size copy of `value` (num-bigint's clone allocates no spare capacity, which
    /// the wipe could not reach) and wipes `value`.
    pub(crate) fn new(mut value: BigUint) -> Self {
        let tight = value.clone();
        wipe(&mut value);
        Secret(tight)
    }

    pub(crate) fn expose(&self) -> &BigUint {
        &self.0
    }
}

impl Zeroize for Secret {
    fn zeroize(&mut self) {
        wipe(&mut self.0);
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.zeroize();
    }
}

impl ZeroizeOnDrop for Secret {}

impl Clone for Secret {
    fn clone(&self) -> Self {
        Secret(self.0.clone())
    }
}

/// A Paillier public key (g = n + 1).
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    n: BigUint,
    n_squared: BigUint,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({} bits)", self.n.bits())
    }
}

impl PublicKey {
    /// A public key from its modulus; n must be odd and at least [`MIN_KEY_BITS`] long.
    pub fn new(n: BigUint) -> Result<Self, KeyError> {
        if n.is_even() || n.bits() < MIN_KEY_BITS {
            return Err(KeyError::BadModulus);
        }
        let n_squared = &n * &n;
        Ok(PublicKey { n, n_squared })
    }
    /// The modulus n = p·q.
    pub fn n(&self) -> &BigUint {
        &self.n
    }
    /// n², the ciphertext modulus.
    pub fn n_squared(&self) -> &BigUint {
        &self.n_squared
    }
    /// The bit length of n: the key size.
    pub fn bits(&self) -> u64 {
        self.n.bits()
    }
}

/// A Paillier private key: the primes and every constant derived from them.
///
/// p < q after construction (as in phe), so that both orders of input give the same key.
/// `Debug` shows the key size only.
#[derive(Clone)]
pub struct PrivateKey {
    public: PublicKey,
    p: Secret,
    q: Secret,
    p_squared: Secret,
    q_squared: Secret,
    /// h_p = L_p(g^(p−1) mod p²)^(−1) mod p = (−q)^(−1) mod p (Paillier 1999, §7).
    h_p: Secret,
    h_q: Secret,
    /// p^(−1) mod q, for the CRT recombination.
    p_inv_q: Secret,
    /// t_p = h_p · q · (q^(−1) mod p) mod n: the eCRT constant (docs/background.md#ecrt).
    t_p: Secret,
    t_q: Secret,
    /// λ = lcm(p−1, q−1) and μ = L(g^λ mod n²)^(−1) mod n, for textbook decryption.
    lambda: Secret,
    mu: Secret,
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrivateKey({} bits)", self.public.bits())
    }
}

impl PrivateKey {
    /// A private key from its primes, validated.
    pub fn from_primes(p: BigUint, q: BigUint) -> Result<Self, KeyError> {
        let n = &p * &q;
        Self::from_primes_and_modulus(p, q, &n)
    }

    /// A private key from its primes and the public modulus they must multiply to (a JWK carries
    /// both), validated. The primality test takes the rounds for primes a key generator drew
    /// ([`random_prime_rounds`]: four for 1024-bit primes) rather than the 64 for adversarial
    /// inputs.
    pub fn from_primes_and_modulus(p: BigUint, q: BigUint, n: &BigUint) -> Result<Self, KeyError> {
        let mut rng = rand::thread_rng();
        Self::from_primes_and_modulus_tested(p, q, n, |x, rounds| is_probable_prime(x, rounds, &mut rng))
    }

    /// [`from_primes_and_modulus`](Self::from_primes_and_modulus) with another Miller–Rabin
    /// implementation: `is_probable_prime(x, rounds)` (the driver's runs on OpenSSL's arithmetic).
    pub fn from_primes_and_modulus_tested(
        p: BigUint,
        q: BigUint,
        n: &BigUint,
        is_probable_prime: impl FnMut(&BigUint, usize) -> bool,
    ) -> Result<Self, KeyError> {
        Self::from_secret_primes(Secret::new(p), Secret::new(q), n, is_probable_prime)
    }

    /// [`from_primes_and_modulus_tested`](Self::from_primes_and_modulus_tested) with the primes
    /// already held as secrets (a key file's, wiped however this ends).
    pub(crate) fn from_secret_primes(
        p: Secret,
        q: Secret,
        n: &BigUint,
        mut is_probable_prime: impl FnMut(&BigUint, usize) -> bool,
    ) -> Result<Self, KeyError> {
        if &(p.expose() * q.expose()) != n {
            return Err(KeyError::ModulusMismatch);
        }
        if p.expose() == q.expose() {
            return Err(KeyError::EqualPrimes);
        }
        let (p_bits, q_bits) = (p.expose().bits(), q.expose().bits());
        if p_bits != q_bits {
            return Err(KeyError::UnequalLengths { p_bits, q_bits });
        }
        for (name, factor) in [("p", &p), ("q", &q)] {
            if !is_probable_prime(factor.expose(), random_prime_rounds(p_bits)) {
                return Err(KeyError::NotPrime(name));
            }
        }
        let public = PublicKey::new(n.clone())?;
        let (p, q) = if p.expose() < q.expose() { (p, q) } else { (q, p) };
        let one = BigUint::one();
        let p_minus_1 = Secret::new(p.expose() - &one);
        let q_minus_1 = Secret::new(q.expose() - &one);
        let phi = Secret::new(p_minus_1.expose() * q_minus_1.expose());
        // Cannot fail when |p| = |q| (p | q − 1 would need q ≥ 2p + 1), kept as the definition asks.
        if !n.gcd(phi.expose()).is_one() {
            return Err(KeyError::NotCoprime);
        }
        Ok(Self::derive(public, p, q))
    }

    fn derive(public: PublicKey, p: Secret, q: Secret) -> Self {
        let (pp, qq, n) = (p.expose(), q.expose(), public.n());
        // Every value derived from p and q is held as a secret, so that it is wiped when dropped.
        let inverse =
            |a: &Secret, m: &BigUint| Secret::new(mod_inverse(a.expose(), m).expect("distinct primes are coprime"));
        // With g = n + 1, L_p(g^(p−1) mod p²) = (p−1)·q mod p = −q mod p.
        let h_p = inverse(&Secret::new(pp - qq % pp), pp);
        let h_q = inverse(&Secret::new(qq - pp % qq), qq);
        let p_inv_q = inverse(&p, qq);
        let q_inv_p = inverse(&q, pp);
        let t_p = Secret::new((h_p.expose() * qq * q_inv_p.expose()) % n);
        let t_q = Secret::new((h_q.expose() * pp * p_inv_q.expose()) % n);
        let (p_minus_1, q_minus_1) = (Secret::new(pp - 1u32), Secret::new(qq - 1u32));
        let lambda = Secret::new(p_minus_1.expose().lcm(q_minus_1.expose()));
        // g^λ = (1 + n)^λ ≡ 1 + λ·n (mod n²) by the binomial theorem, so L(g^λ mod n²) = λ mod n:
        // no exponentiation.
        let mu = inverse(&Secret::new(lambda.expose() % n), n);
        PrivateKey {
            p_squared: Secret::new(pp * pp),
            q_squared: Secret::new(qq * qq),
            h_p,
            h_q,
            p_inv_q,
            t_p,
            t_q,
            lambda,
            mu,
            public,
            p,
            q,
        }
    }

    /// A new key whose modulus has exactly `bits` bits (even, [`MIN_KEY_BITS`]..=[`MAX_KEY_BITS`]),
    /// from two primes of `bits`/2 bits each drawn with `rng`, which must be a CSPRNG.
    pub fn generate<R: RngCore + CryptoRng + ?Sized>(bits: u64, rng: &mut R) -> Result<Self, KeyError> {
        if bits % 2 != 0 || !(MIN_KEY_BITS..=MAX_KEY_BITS).contains(&bits) {
            return Err(KeyError::UnsupportedSize(bits));
        }
        loop {
            let p = random_prime(bits / 2, rng);
            let q = random_prime(bits / 2, rng);
            // Top two bits set in both primes make n exactly `bits` long; the rest can still fail.
            match Self::from_primes(p, q) {
                Ok(key) => return Ok(key),
                Err(KeyError::EqualPrimes | KeyError::NotCoprime) => continue,
                Err(other) => unreachable!("generated primes failed validation: {other}"),
            }
        }
    }

    /// The public half.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }
    /// The smaller prime.
    pub fn p(&self) -> &BigUint {
        self.p.expose()
    }
    /// The larger prime.
    pub fn q(&self) -> &BigUint {
        self.q.expose()
    }
    /// p².
    pub fn p_squared(&self) -> &BigUint {
        self.p_squared.expose()
    }
    /// q².
    pub fn q_squared(&self) -> &BigUint {
        self.q_squared.expose()
    }
    /// h_p = (−q)^(−1) mod p.
    pub fn h_p(&self) -> &BigUint {
        self.h_p.expose()
    }
    /// h_q = (−p)^(−1) mod q.
    pub fn h_q(&self) -> &BigUint {
        self.h_q.expose()
    }
    /// p^(−1) mod q.
    pub fn p_inv_q(&self) -> &BigUint {
        self.p_inv_q.expose()
    }
    /// t_p = h_p·q·(q^(−1) mod p) mod n.
    pub fn t_p(&self) -> &BigUint {
        self.t_p.expose()
    }
    /// t_q = h_q·p·(p^(−1) mod q) mod n.
    pub fn t_q(&self) -> &BigUint {
        self.t_q.expose()
    }
    /// λ = lcm(p−1, q−1).
    pub fn lambda(&self) -> &BigUint {
        self.lambda.expose()
    }
    /// μ = L(g^λ mod n²)^(−1) mod n.
    pub fn mu(&self) -> &BigUint {
        self.mu.expose()
    }
    /// The hardware's constants for this key (Montgomery contexts for p², q² and n, the exact
    /// division constants, t_p·R and t_q·R), for a datapath of `digit_bits`-bit digits.
    pub fn hardware(
        &self,
        digit_bits: u32,
        schedule: crate::hw::Schedule,
    ) -> Result<crate::hw::EcrtHwKey, crate::hw::HwError> {
        crate::hw::EcrtHwKey::new(self.p(), self.q(), digit_bits, schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> rand::rngs::StdRng {
        rand::rngs::StdRng::seed_from_u64(7)
    }

    #[test]
    fn generated_keys_have_exact_size() {
        let mut rng = rng();
        for bits in [64u64, 128, 256, 512] {
            let key = PrivateKey::generate(bits, &mut rng).unwrap();
            assert_eq!(key.public().bits(), bits);
            assert!(key.p() < key.q());
            assert_eq!(key.p().bits(), key.q().bits());
        }
        assert_eq!(PrivateKey::generate(127, &mut rng).unwrap_err(), KeyError::UnsupportedSize(127));
        assert_eq!(PrivateKey::generate(32, &mut rng).unwrap_err(), KeyError::UnsupportedSize(32));
    }

    #[test]
    fn validation_refuses_bad_primes_without_naming_them() {
        let mut rng = rng();
        let key = PrivateKey::generate(128, &mut rng).unwrap();
        let (p, q) = (key.p().clone(), key.q().clone());
        let n = key.public().n().clone();
        let cases = [
            (PrivateKey::from_primes_and_modulus(p.clone(), q.clone(), &(&n + 2u32)), KeyError::ModulusMismatch),
            (PrivateKey::from_primes(p.clone(), p.clone()), KeyError::EqualPrimes),
            (PrivateKey::from_primes(p.clone(), &q + 1u32), KeyError::NotPrime("q")),
            (
                PrivateKey::from_primes(&p * 3u32, q.clone()),
                KeyError::UnequalLengths { p_bits: (&p * 3u32).bits(), q_bits: q.bits() },
            ),
            (PrivateKey::from_primes(11u32.into(), 13u32.into()), KeyError::BadModulus),
        ];
        for (result, expected) in cases {
            let text = result.unwrap_err().to_string();
            assert_eq!(text, expected.to_string());
            for secret in [p.to_string(), q.to_string(), p.to_str_radix(16), q.to_str_radix(16)] {
                assert!(!text.contains(&secret), "{text}");
            }
        }
    }

    #[test]
    fn derived_constants_satisfy_their_definitions() {
        let key = PrivateKey::generate(256, &mut rng()).unwrap();
        let (p, q, n) = (key.p(), key.q(), key.public().n());
        assert_eq!((key.h_p() * ((n + 1u32).modpow(&(p - 1u32), key.p_squared()) - 1u32) / p) % p, BigUint::one());
        assert_eq!(key.t_p() % p, key.h_p() % p);
        assert_eq!(key.t_p() % q, BigUint::from(0u32));
        assert_eq!(key.t_q() % q, key.h_q() % q);
        assert_eq!(key.t_q() % p, BigUint::from(0u32));
        assert_eq!((key.p() * key.p_inv_q()) % q, BigUint::one());
        // μ = L(g^λ mod n²)^(−1) mod n, computed here the long way.
        let g_lambda = (n + 1u32).modpow(key.lambda(), key.public().n_squared());
        assert_eq!((((g_lambda - 1u32) / n) * key.mu()) % n, BigUint::one());
        assert_eq!(format!("{key:?}"), "PrivateKey(256 bits)");
    }

    #[test]
    fn secret_is_wiped_in_place() {
        let mut s = Secret::new(BigUint::from(0xdead_beef_u64) << 100u32);
        s.zeroize();
        assert_eq!(s.0, BigUint::from(0u32));
    }
}
