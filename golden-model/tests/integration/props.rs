//! Property tests: the three decryptions agree with encryption and with each other across key sizes,
//! for random and edge plaintexts and ciphertexts.

use ecrt_golden::paillier::{check_ciphertext, decrypt_crt, decrypt_ecrt, decrypt_textbook, encrypt};
use ecrt_golden::{CiphertextError, PrivateKey};
use num_bigint::{BigUint, RandBigInt};
use num_traits::{One, Zero};
use proptest::prelude::*;
use rand::SeedableRng;

fn key_and_rng(bits: u64, seed: u64) -> (PrivateKey, rand::rngs::StdRng) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (PrivateKey::generate(bits, &mut rng).unwrap(), rng)
}

fn all_decryptions(key: &PrivateKey, c: &BigUint) -> Result<BigUint, CiphertextError> {
    let textbook = decrypt_textbook(key, c);
    assert_eq!(decrypt_crt(key, c), textbook);
    assert_eq!(decrypt_ecrt(key, c), textbook);
    textbook
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn decryption_inverts_encryption(half_bits in 32u64..=512, seed in any::<u64>()) {
        let (key, mut rng) = key_and_rng(half_bits * 2, seed);
        let n = key.public().n().clone();
        for m in [BigUint::zero(), BigUint::one(), &n - 1u32, rng.gen_biguint_below(&n)] {
            let c = encrypt(key.public(), &m, &mut rng).unwrap();
            prop_assert_eq!(all_decryptions(&key, &c).unwrap(), m);
        }
    }

    #[test]
    fn random_and_edge_ciphertexts_agree(half_bits in 32u64..=256, seed in any::<u64>()) {
        let (key, mut rng) = key_and_rng(half_bits * 2, seed);
        let public = key.public();
        let n = public.n();
        let n2 = public.n_squared();
        for c in [BigUint::zero(), BigUint::one(), n - 1u32, n2 - 1u32, n2.clone(), n.clone(), rng.gen_biguint_below(n2)] {
            let outcome = all_decryptions(&key, &c);
            prop_assert_eq!(outcome.is_ok(), check_ciphertext(public, &c).is_ok());
        }
        // c = 1 is the encryption of 0 with r = 1.
        prop_assert_eq!(all_decryptions(&key, &BigUint::one()).unwrap(), BigUint::zero());
    }
}
