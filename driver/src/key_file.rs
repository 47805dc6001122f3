//! Key files: pheutil's JWK files read with the limits a careless or hostile input needs (small
//! regular files, never waited on), and keys of a supported size, checked before any primality
//! test or exponentiation. The command and the Python package open keys through here.

use crate::files::file_kind;
use anyhow::{ensure, Context};
use ecrt_golden::phe_format::{read_private_key_tested, read_public_key, KeyFileError};
use ecrt_golden::{PrivateKey, PublicKey};
use num_bigint::BigUint;
use std::io::Read;
use std::ops::RangeInclusive;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use zeroize::Zeroizing;

/// The largest key file read: an 8192-bit private JWK takes about 3 KB. `ecrt serve`'s
/// configuration has the same limit.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 20;
/// Bits of n that `decrypt` and `encrypt` take: phe's sizes (1024 to 3072) and room around them.
/// Checked before any primality test or exponentiation, whose cost grows with the size.
pub const SUPPORTED_KEY_BITS: RangeInclusive<u64> = 512..=ecrt_golden::key::MAX_KEY_BITS;

/// The text of a key file: a regular file of at most [`MAX_KEY_FILE_BYTES`]. Opened without
/// blocking, so that a FIFO with no writer is refused rather than waited on; wiped from memory
/// when dropped.
pub fn read_key_file(path: &Path) -> anyhow::Result<Zeroizing<String>> {
    read_small_file(path, "a key file")
}

/// The text of a small regular file (`what` it should be, for errors: "a key file"), read as
/// [`read_key_file`] reads a key file. Whatever it is meant to be, it may be a private key given
/// by mistake: its text is wiped when dropped, and no error quotes it.
pub fn read_small_file(path: &Path, what: &str) -> anyhow::Result<Zeroizing<String>> {
    let cannot_read = || format!("cannot read {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .with_context(cannot_read)?;
    let metadata = file.metadata().with_context(cannot_read)?;
    ensure!(metadata.is_file(), "{} is {}, not {what} (a regular file)", path.display(), file_kind(&metadata));
    // Read into a buffer of the file's size and one byte more (to see its end), grown by hand if
    // the file grows meanwhile: `read_to_end` would grow it by reallocating, leaving copies of the
    // text in freed memory.
    let limit = MAX_KEY_FILE_BYTES as usize + 1;
    let mut bytes = Zeroizing::new(vec![0u8; (metadata.len() as usize).min(limit - 1) + 1]);
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            if filled == limit {
                break;
            }
            let mut larger = Zeroizing::new(vec![0u8; (2 * filled).min(limit)]);
            larger[..filled].copy_from_slice(&bytes[..filled]);
            bytes = larger;
        }
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(cannot_read),
        }
    }
    ensure!(filled < limit, "{} is larger than {} KiB: not {what}", path.display(), MAX_KEY_FILE_BYTES >> 10);
    bytes.truncate(filled);
    // Never quote the bytes: a private key file holds p and q. The text keeps the buffer.
    match String::from_utf8(std::mem::take(&mut *bytes)) {
        Ok(text) => Ok(Zeroizing::new(text)),
        Err(e) => {
            drop(Zeroizing::new(e.into_bytes()));
            anyhow::bail!("{} is not UTF-8 text: not {what}", path.display())
        }
    }
}

/// Refuses a modulus outside [`SUPPORTED_KEY_BITS`], saying which sizes are supported.
pub fn check_key_size(bits: u64) -> anyhow::Result<()> {
    ensure!(SUPPORTED_KEY_BITS.contains(&bits), size_error(bits));
    Ok(())
}

fn size_error(bits: u64) -> anyhow::Error {
    let (low, high) = (SUPPORTED_KEY_BITS.start(), SUPPORTED_KEY_BITS.end());
    anyhow::anyhow!("the key's modulus n has {bits} bits; ecrt supports keys of {low} to {high} bits")
}

/// The public key of a key file (public or private), of a supported size.
fn public_key_of(text: &str) -> anyhow::Result<PublicKey> {
    match read_public_key(text) {
        Ok(public) => check_key_size(public.bits()).map(|_| public),
        Err(KeyFileError::TooLarge { bits }) => Err(size_error(bits)),
        Err(e) => Err(e.into()),
    }
}

/// A public key from a pheutil JWK file (the public half of a private key file also does).
pub fn read_public_key_file(path: &Path) -> anyhow::Result<PublicKey> {
    let text = read_key_file(path)?;
    public_key_of(&text).with_context(|| format!("cannot use key file {}", path.display()))
}

/// A private key from a pheutil JWK file; its size is checked before its primes are.
pub fn read_private_key_file(path: &Path) -> anyhow::Result<PrivateKey> {
    let text = read_key_file(path)?;
    let parse = || -> anyhow::Result<PrivateKey> {
        match read_public_key(&text) {
            Ok(public) => check_key_size(public.bits())?,
            Err(KeyFileError::TooLarge { bits }) => return Err(size_error(bits)),
            Err(_) => {} // read_private_key_tested names what is wrong
        }
        Ok(read_private_key_tested(&text, is_probable_prime)?)
    };
    parse().with_context(|| format!("cannot use key file {}", path.display()))
}

/// A private key from its primes and public modulus (phe's `PaillierPrivateKey` holds all three),
/// of a supported size, validated as a key file's are.
pub fn private_key_from_primes(n: &BigUint, p: BigUint, q: BigUint) -> anyhow::Result<PrivateKey> {
    check_key_size(n.bits())?;
    Ok(PrivateKey::from_primes_and_modulus_tested(p, q, n, is_probable_prime)?)
}

/// Miller–Rabin with `rounds` random bases on OpenSSL's arithmetic, after the golden model's trial
/// division (which settles small numbers exactly). OpenSSL's own test (`BN_check_prime`) takes at
/// least 64 rounds whatever it is asked: right for numbers an adversary chose, sixteen times the
/// rounds a key file its owner made needs (see `random_prime_rounds`).
pub fn is_probable_prime(n: &BigUint, rounds: usize) -> bool {
    ecrt_golden::prime::trial_division(n).unwrap_or_else(|| miller_rabin(n, rounds).unwrap_or(false))
}

fn miller_rabin(n: &BigUint, rounds: usize) -> Result<bool, openssl::error::ErrorStack> {
    use openssl::bn::{BigNum, BigNumContext};
    let mut ctx = BigNumContext::new()?;
    let n_bn = BigNum::from_slice(&n.to_bytes_be())?;
    let one = BigNum::from_u32(1)?;
    let n_minus_1 = &n_bn - &one;
    let n_minus_3 = &n_bn - &BigNum::from_u32(3)?;
    let s = (0..).find(|&i| n_minus_1.is_bit_set(i)).expect("n is odd and above 2");
    let mut d = BigNum::new()?;
    d.rshift(&n_minus_1, s)?;
    let (mut a, mut x, mut y) = (BigNum::new()?, BigNum::new()?, BigNum::new()?);
    'witness: for _ in 0..rounds {
        // a uniform in [2, n − 2].
        n_minus_3.rand_range(&mut a)?;
        a.add_word(2)?;
        x.mod_exp(&a, &d, &n_bn, &mut ctx)?;
        if x == one || x == n_minus_1 {
            continue;
        }
        for _ in 1..s {
            y.mod_sqr(&x, &n_bn, &mut ctx)?;
            std::mem::swap(&mut x, &mut y);
            if x == n_minus_1 {
                continue 'witness;
            }
        }
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_must_be_small_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b' '; MAX_KEY_FILE_BYTES as usize + 1]).unwrap();
        let message = format!("{:#}", read_key_file(&big).unwrap_err());
        assert!(message.contains("larger than 1024 KiB"), "{message}");
        let message = format!("{:#}", read_key_file(Path::new("/dev/zero")).unwrap_err());
        assert!(message.contains("a character device, not a key file"), "{message}");
        let message = format!("{:#}", read_key_file(dir.path()).unwrap_err());
        assert!(message.contains("a directory"), "{message}");
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let message = format!("{:#}", read_key_file(&fifo).unwrap_err());
        assert!(message.contains("a FIFO, not a key file"), "{message}");
        let binary = dir.path().join("binary");
        std::fs::write(&binary, [b'{', 0xff, b'}']).unwrap();
        assert!(format!("{:#}", read_key_file(&binary).unwrap_err()).contains("not UTF-8"));
        // A file larger than its size says (procfs says 0): read whole, in a buffer grown by hand.
        let status = read_small_file(Path::new("/proc/self/status"), "a status file").unwrap();
        assert!(status.len() > 100 && status.contains("\nPid:"), "{}", status.len());
    }

    #[test]
    fn openssls_miller_rabin_agrees_with_the_golden_model() {
        use num_traits::One;
        let mut rng = rand::thread_rng();
        for k in 0..3000u32 {
            let k = BigUint::from(k);
            assert_eq!(is_probable_prime(&k, 4), ecrt_golden::prime::is_probable_prime(&k, 8, &mut rng), "{k}");
        }
        // Strong pseudoprimes and Carmichael numbers above the trial division's reach.
        for n in [3215031751u128, 3825123056546413051, 318665857834031151167461] {
            assert!(!is_probable_prime(&BigUint::from(n), 8), "{n}");
        }
        let m127 = (BigUint::one() << 127u32) - 1u32;
        assert!(is_probable_prime(&m127, 4));
        assert!(!is_probable_prime(&(&m127 * &m127), 4));
        let key = ecrt_golden::PrivateKey::generate(1024, &mut rng).unwrap();
        assert!(is_probable_prime(key.p(), 4) && !is_probable_prime(&(key.p() + 2u32), 4));
        let n = key.public().n().clone();
        let bad = private_key_from_primes(&(&n + 2u32), key.p().clone(), key.q().clone()).unwrap_err();
        assert_eq!(bad.to_string(), "p·q does not equal the public modulus n");
    }

    #[test]
    fn key_sizes_are_checked_with_the_range_in_the_message() {
        for bits in [511, 8193, 332_200] {
            let message = check_key_size(bits).unwrap_err().to_string();
            assert!(message.contains(&format!("{bits} bits")) && message.contains("512 to 8192 bits"), "{message}");
        }
        assert!(check_key_size(512).is_ok() && check_key_size(8192).is_ok());
    }
}
