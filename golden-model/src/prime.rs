//! Probable primes: trial division by small primes, then Miller–Rabin with random bases.

use num_bigint::{BigUint, RandBigInt};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use rand::{CryptoRng, Rng, RngCore};

/// Miller–Rabin rounds: an error probability below 4^-64 for any input, adversarial or not.
pub const MILLER_RABIN_ROUNDS: usize = 64;

/// Miller–Rabin rounds that bound by 2^-100 the chance that a composite of `bits` bits passes, when
/// the number was drawn at random as a key generator draws its primes: the smallest t with
/// Damgård, Landrock and Pomerance's bound k^(3/2) · 2^t · t^(−1/2) · 4^(2 − √(tk)) ≤ 2^-100
/// ("Average case error estimates for the strong probable prime test", Math. Comp. 61, 1993,
/// Theorem 2; it holds for 3 ≤ t ≤ k/9). Four rounds at 1024 bits, eight at 512.
///
/// This is the test for a key file its owner made: the check catches a wrong or damaged file, and
/// whoever could craft a composite p into it holds the key anyway. [`MILLER_RABIN_ROUNDS`] is for
/// numbers an adversary may have chosen; below 100 bits, where the bound does not reach 2^-100,
/// it is used too.
pub fn random_prime_rounds(bits: u64) -> usize {
    let k = bits as f64;
    let log2_bound = |t: f64| 1.5 * k.log2() + t - 0.5 * t.log2() + 2.0 * (2.0 - (t * k).sqrt());
    (3..=MILLER_RABIN_ROUNDS)
        .find(|&t| t as f64 <= k / 9.0 && log2_bound(t as f64) <= -100.0)
        .unwrap_or(MILLER_RABIN_ROUNDS)
}

/// Odd primes below 2,000, for trial division before the expensive test.
fn small_primes() -> &'static [u32] {
    static PRIMES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    PRIMES.get_or_init(|| {
        let limit = 2000usize;
        let mut composite = vec![false; limit];
        let mut primes = Vec::new();
        for i in 3..limit {
            if i % 2 == 1 && !composite[i] {
                primes.push(i as u32);
                let mut j = i * i;
                while j < limit {
                    composite[j] = true;
                    j += i;
                }
            }
        }
        primes
    })
}

/// What trial division by the primes below 2,000 settles: `Some(answer)` for n < 4,000,000 and
/// for a multiple of a small prime, `None` when a Miller–Rabin test must decide (n is then odd and
/// above 4,000,000).
pub fn trial_division(n: &BigUint) -> Option<bool> {
    let two = BigUint::from(2u32);
    if n < &two {
        return Some(false);
    }
    if n.is_even() {
        return Some(n == &two);
    }
    for &sp in small_primes() {
        if n == &BigUint::from(sp) {
            return Some(true);
        }
        if (n % sp).is_zero() {
            return Some(false);
        }
    }
    // No prime factor below its square root.
    n.to_u64().is_some_and(|v| v < 2000 * 2000).then_some(true)
}

/// True when `n` is prime with probability at least 1 − 4^−`rounds` (certain for n < 4,000,000).
pub fn is_probable_prime<R: RngCore + ?Sized>(n: &BigUint, rounds: usize, rng: &mut R) -> bool {
    if let Some(settled) = trial_division(n) {
        return settled;
    }
    let two = BigUint::from(2u32);
    let n_minus_1 = n - 1u32;
    let s = n_minus_1.trailing_zeros().expect("n > 2");
    let d = &n_minus_1 >> s;
    'witness: for _ in 0..rounds {
        let a = rng.gen_biguint_range(&two, &n_minus_1);
        let mut x = a.modpow(&d, n);
        if x.is_one() || x == n_minus_1 {
            continue;
        }
        for _ in 1..s {
            x = (&x * &x) % n;
            if x == n_minus_1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// A uniformly chosen prime of exactly `bits` bits whose two top bits are set, so that the product
/// of two such primes has exactly 2·`bits` bits.
pub fn random_prime<R: RngCore + CryptoRng + ?Sized>(bits: u64, rng: &mut R) -> BigUint {
    assert!(bits >= 16, "primes of fewer than 16 bits are not supported");
    loop {
        let mut candidate = rng.gen_biguint(bits);
        candidate.set_bit(bits - 1, true);
        candidate.set_bit(bits - 2, true);
        candidate.set_bit(0, true);
        if is_probable_prime(&candidate, MILLER_RABIN_ROUNDS, rng) {
            return candidate;
        }
    }
}

/// Two distinct primes of `bits` bits each, as [`random_prime`] chooses them: a key's p and q.
pub fn random_prime_pair<R: RngCore + CryptoRng + ?Sized>(bits: u64, rng: &mut R) -> (BigUint, BigUint) {
    let p = random_prime(bits, rng);
    loop {
        let q = random_prime(bits, rng);
        if q != p {
            return (p, q);
        }
    }
}

/// A uniformly chosen odd number of exactly `bits` bits (≥ 2): a Montgomery modulus for tests and
/// benchmarks.
pub fn random_odd<R: Rng + ?Sized>(bits: u64, rng: &mut R) -> BigUint {
    let mut n = rng.gen_biguint(bits);
    n.set_bit(bits - 1, true);
    n.set_bit(0, true);
    n
}

/// Modular inverse of `a` mod `m`, if gcd(a, m) = 1.
pub fn mod_inverse(a: &BigUint, m: &BigUint) -> Option<BigUint> {
    use num_bigint::BigInt;
    let (a, m) = (BigInt::from(a.clone()), BigInt::from(m.clone()));
    let e = a.extended_gcd(&m);
    if !e.gcd.is_one() {
        return None;
    }
    e.x.mod_floor(&m).to_biguint()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn classifies_small_numbers_exactly() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let sieve: Vec<u32> =
            (0..5000u32).filter(|&k| k >= 2 && (2..k).take_while(|d| d * d <= k).all(|d| k % d != 0)).collect();
        for k in 0..5000u32 {
            assert_eq!(is_probable_prime(&BigUint::from(k), 8, &mut rng), sieve.contains(&k), "{k}");
        }
    }

    #[test]
    fn rejects_carmichael_numbers_and_strong_pseudoprimes() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        // 3215031751 is a strong pseudoprime to bases 2, 3, 5 and 7; the others are Carmichael numbers.
        for n in [561u64, 41041, 825265, 321197185, 3215031751, 3825123056546413051] {
            assert!(!is_probable_prime(&BigUint::from(n), 16, &mut rng), "{n}");
        }
        // 2^127 − 1 is a Mersenne prime.
        let m127 = (BigUint::one() << 127u32) - 1u32;
        assert!(is_probable_prime(&m127, 16, &mut rng));
    }

    #[test]
    fn random_prime_rounds_follow_the_average_case_bound() {
        // Values of the bound worked by hand: the rounds fall as the primes grow.
        assert_eq!(random_prime_rounds(1024), 4);
        assert_eq!(random_prime_rounds(512), 8);
        assert_eq!(random_prime_rounds(1536), 3);
        assert_eq!(random_prime_rounds(32), MILLER_RABIN_ROUNDS);
        let rounds: Vec<usize> = (6..=13).map(|e| random_prime_rounds(1 << e)).collect();
        assert!(rounds.windows(2).all(|w| w[1] <= w[0]), "{rounds:?}");
    }

    #[test]
    fn random_primes_have_exact_length_and_top_bits() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for bits in [32u64, 64, 100, 256] {
            let p = random_prime(bits, &mut rng);
            assert_eq!(p.bits(), bits);
            assert!(p.bit(bits - 2));
        }
    }

    #[test]
    fn inverse() {
        let inv = mod_inverse(&BigUint::from(3u32), &BigUint::from(7u32)).unwrap();
        assert_eq!(inv, BigUint::from(5u32));
        assert!(mod_inverse(&BigUint::from(6u32), &BigUint::from(9u32)).is_none());
    }
}
