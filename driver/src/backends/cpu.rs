//! The CPU backend: eCRT (and CRT, for comparison) decryption on OpenSSL's bignum arithmetic.
//!
//! Why not num-bigint, which the golden model uses for clarity: `ecrt bench` measures a 2048-bit
//! eCRT decryption on num-bigint at about 1.8× the time of this backend, and slower than phe +
//! gmpy2 (GMP). OpenSSL is also constant-time for secret exponents (BN_FLG_CONSTTIME), which
//! GMP's `mpz_powm` (what phe uses) is not. `ecrt bench --backend cpu` measures all of them.

use crate::batch::parallel_map;
use crate::engine::Backend;
use ecrt_golden::PrivateKey;
use num_bigint::BigUint;
use openssl::bn::{BigNum, BigNumContext, BigNumRef};
use openssl::error::ErrorStack;
use std::ops::{Deref, DerefMut};
use zeroize::Zeroizing;

/// A private key's decryption constants as OpenSSL bignums, flagged constant-time, cleared when
/// dropped.
pub struct CpuKey {
    n: BigNum,
    primes: [PrimeHalf; 2],
    /// p^(−1) mod q, for CRT.
    p_inv_q: SecretBn,
}

/// What one prime's half-decryption needs.
struct PrimeHalf {
    prime: SecretBn,
    prime_squared: SecretBn,
    exponent: SecretBn,
    /// h = (−other)^(−1) mod prime, for CRT.
    h: SecretBn,
    /// t = h·other·(other^(−1) mod prime) mod n, for eCRT.
    t: SecretBn,
}

/// A bignum holding a key's secret or a value derived from one, cleared (`BN_clear`) when
/// dropped, which the openssl crate's `BN_free` does not do.
struct SecretBn(BigNum);

impl SecretBn {
    /// A zero, for an intermediate result.
    fn new() -> Result<Self, ErrorStack> {
        Ok(SecretBn(BigNum::new()?))
    }

    /// A constant of the key, flagged constant-time.
    fn from_biguint(x: &BigUint) -> Result<Self, ErrorStack> {
        let mut bn = BigNum::from_slice(&Zeroizing::new(x.to_bytes_be()))?;
        bn.set_const_time();
        Ok(SecretBn(bn))
    }
}

impl Deref for SecretBn {
    type Target = BigNum;
    fn deref(&self) -> &BigNum {
        &self.0
    }
}

impl DerefMut for SecretBn {
    fn deref_mut(&mut self) -> &mut BigNum {
        &mut self.0
    }
}

impl Drop for SecretBn {
    fn drop(&mut self) {
        self.0.clear();
    }
}

/// Per-thread scratch space for OpenSSL.
pub struct Scratch(BigNumContext);

impl Scratch {
    pub fn new() -> Result<Self, ErrorStack> {
        Ok(Scratch(BigNumContext::new_secure()?))
    }
}

pub(crate) fn to_bn(x: &BigUint) -> Result<BigNum, ErrorStack> {
    BigNum::from_slice(&x.to_bytes_be())
}

pub(crate) fn to_biguint(x: &BigNumRef) -> BigUint {
    BigUint::from_bytes_be(&x.to_vec())
}

impl CpuKey {
    pub fn new(key: &PrivateKey) -> Result<Self, ErrorStack> {
        let secret = SecretBn::from_biguint;
        let half = |prime: &BigUint, prime_squared: &BigUint, h: &BigUint, t: &BigUint| {
            let mut exponent = prime - 1u32;
            let exponent_bn = secret(&exponent);
            ecrt_golden::key::wipe(&mut exponent);
            Ok::<_, ErrorStack>(PrimeHalf {
                prime: secret(prime)?,
                prime_squared: secret(prime_squared)?,
                exponent: exponent_bn?,
                h: secret(h)?,
                t: secret(t)?,
            })
        };
        Ok(CpuKey {
            n: to_bn(key.public().n())?,
            primes: [
                half(key.p(), key.p_squared(), key.h_p(), key.t_p())?,
                half(key.q(), key.q_squared(), key.h_q(), key.t_q())?,
            ],
            p_inv_q: secret(key.p_inv_q())?,
        })
    }

    /// L_p(c^(p−1) mod p²) = (c^(p−1) mod p² − 1)/p. Every intermediate follows from p, and is
    /// cleared when dropped.
    fn half_decryption(half: &PrimeHalf, c: &BigNumRef, ctx: &mut BigNumContext) -> Result<SecretBn, ErrorStack> {
        let mut reduced = SecretBn::new()?;
        reduced.nnmod(c, &half.prime_squared, ctx)?;
        let mut x = SecretBn::new()?;
        // With BN_FLG_CONSTTIME on the exponent and modulus, BN_mod_exp takes OpenSSL's
        // constant-time Montgomery path.
        x.mod_exp(&reduced, &half.exponent, &half.prime_squared, ctx)?;
        x.sub_word(1)?;
        let mut l = SecretBn::new()?;
        l.checked_div(&x, &half.prime, ctx)?;
        Ok(l)
    }

    /// eCRT decryption: m = (L_p·t_p + L_q·t_q) mod n. The ciphertext must have been validated.
    pub fn decrypt_ecrt(&self, c: &BigUint, scratch: &mut Scratch) -> Result<BigUint, ErrorStack> {
        let ctx = &mut scratch.0;
        let c = to_bn(c)?;
        let mut sum = SecretBn::new()?;
        for half in &self.primes {
            let l = Self::half_decryption(half, &c, ctx)?;
            let mut term = SecretBn::new()?;
            term.checked_mul(&l, &half.t, ctx)?;
            let previous = sum;
            sum = SecretBn::new()?;
            sum.checked_add(&previous, &term)?;
        }
        let mut m = BigNum::new()?;
        m.nnmod(&sum, &self.n, ctx)?;
        Ok(to_biguint(&m))
    }

    /// CRT decryption as phe does it: m_p = L_p·h_p mod p, m_q likewise, Garner recombination.
    /// (m mod p and m give p away: the residues are cleared like the key.)
    pub fn decrypt_crt(&self, c: &BigUint, scratch: &mut Scratch) -> Result<BigUint, ErrorStack> {
        let ctx = &mut scratch.0;
        let c = to_bn(c)?;
        let mut residues = Vec::with_capacity(2);
        for half in &self.primes {
            let l = Self::half_decryption(half, &c, ctx)?;
            let mut m = SecretBn::new()?;
            m.mod_mul(&l, &half.h, &half.prime, ctx)?;
            residues.push(m);
        }
        let (m_p, m_q) = (&residues[0], &residues[1]);
        let (p, q) = (&self.primes[0].prime, &self.primes[1].prime);
        let mut diff = SecretBn::new()?;
        diff.mod_sub(m_q, m_p, q, ctx)?;
        let mut u = SecretBn::new()?;
        u.mod_mul(&diff, &self.p_inv_q, q, ctx)?;
        let mut up = SecretBn::new()?;
        up.checked_mul(&u, p, ctx)?;
        let mut m = BigNum::new()?;
        m.checked_add(m_p, &up)?;
        Ok(to_biguint(&m))
    }
}

/// Paillier encryption c = (1 + m·n)·r^n mod n² with a fresh random r, on OpenSSL (the public
/// exponentiation r^n dominates; nothing secret is involved). m must be below n.
pub fn encrypt(n: &BigUint, m: &BigUint, scratch: &mut Scratch) -> Result<BigUint, ErrorStack> {
    use num_integer::Integer;
    use num_traits::One;
    let n_bn = to_bn(n)?;
    let n_squared = n * n;
    let nsq_bn = to_bn(&n_squared)?;
    let r = loop {
        let mut r = BigNum::new()?;
        n_bn.rand_range(&mut r)?;
        let r_big = to_biguint(&r);
        if r_big > BigUint::from(1u32) && r_big.gcd(n).is_one() {
            break r;
        }
    };
    let mut r_n = BigNum::new()?;
    r_n.mod_exp(&r, &n_bn, &nsq_bn, &mut scratch.0)?;
    let g_m = to_bn(&((BigUint::one() + m * n) % &n_squared))?;
    let mut c = BigNum::new()?;
    c.mod_mul(&g_m, &r_n, &nsq_bn, &mut scratch.0)?;
    Ok(to_biguint(&c))
}

/// eCRT on the host CPU, one OpenSSL context per worker thread.
pub struct CpuBackend {
    key: CpuKey,
    threads: usize,
}

impl CpuBackend {
    pub fn new(key: &PrivateKey, threads: usize) -> anyhow::Result<Self> {
        Ok(CpuBackend { key: CpuKey::new(key)?, threads })
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn decrypt_batch(&self, ciphertexts: &[BigUint]) -> anyhow::Result<Vec<Result<BigUint, String>>> {
        Ok(parallel_map(ciphertexts, self.threads, "decrypt", Scratch::new, |scratch, c| {
            self.key.decrypt_ecrt(c, scratch).map_err(|e| format!("OpenSSL failed: {e}"))
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecrt_golden::paillier;
    use num_bigint::RandBigInt;
    use rand::SeedableRng;

    #[test]
    fn matches_the_golden_model() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        let mut scratch = Scratch::new().unwrap();
        for bits in [64u64, 256, 1024] {
            let key = PrivateKey::generate(bits, &mut rng).unwrap();
            let cpu = CpuKey::new(&key).unwrap();
            let n = key.public().n();
            for m in [BigUint::from(0u32), BigUint::from(1u32), n - 1u32, rng.gen_biguint_below(n)] {
                let c = encrypt(n, &m, &mut scratch).unwrap();
                assert_eq!(paillier::decrypt_ecrt(&key, &c).unwrap(), m);
                assert_eq!(cpu.decrypt_ecrt(&c, &mut scratch).unwrap(), m);
                assert_eq!(cpu.decrypt_crt(&c, &mut scratch).unwrap(), m);
            }
            let c = key.public().n_squared() - 1u32;
            assert_eq!(cpu.decrypt_ecrt(&c, &mut scratch).unwrap(), paillier::decrypt_ecrt(&key, &c).unwrap());
        }
    }
}
