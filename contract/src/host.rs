//! What a host loads into an exponentiation slot or a decryption core: the load sequences for a
//! modulus, its exponent and a base, or for a whole private key, derived from the golden model's
//! constants; and the key's hardware form and id.

use crate::config::{AcceleratorConfig, Engine};
pub use crate::interface::{KeyLoad, Load, LoadTarget};
use crate::limbs::to_limbs;
use ecrt_golden::hw::{
    ClassicShape, DelayedEcrtKey, EcrtHwKey, FoldContext, FoldEcrtKey, FoldMultiplier, HwError, MontgomeryContext,
    PrimeConstants,
};
use ecrt_golden::PrivateKey;
use num_bigint::BigUint;

/// Why a key cannot go into an accelerator of some configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFitError {
    #[error("the key has a {key_bits}-bit modulus but the accelerator is configured for {config_bits} bits")]
    KeyBits { key_bits: usize, config_bits: usize },
    #[error("the key's primes do not have {0} bits each, as the accelerator needs")]
    PrimeBits(usize),
    #[error("the key does not suit the accelerator: {0}")]
    Hardware(#[from] HwError),
}

/// The golden model's hardware form of a key for an engine's multiplier: the folding one's (two
/// slots, lanes) or the delayed-quotient one's. Its values are wiped when it is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HardwareKey {
    /// For the folding multiplier of the two-slot and the lanes engines.
    Fold(FoldEcrtKey),
    /// For the delayed-quotient multiplier of the delay engine.
    Delayed(DelayedEcrtKey),
}

impl HardwareKey {
    /// The constants of primes p, q for `config`'s engine, k and schedule.
    pub fn new(p: &BigUint, q: &BigUint, config: &AcceleratorConfig) -> Result<Self, HwError> {
        let (k, schedule) = (config.digits_per_step, config.golden_schedule());
        Ok(match config.engine {
            Engine::Slots | Engine::Lanes => HardwareKey::Fold(FoldEcrtKey::new(p, q, k, schedule)?),
            Engine::Delay => {
                let d = config.delay_timing().quotient_delay;
                HardwareKey::Delayed(DelayedEcrtKey::delayed(p, q, k, d, schedule)?)
            }
        })
    }

    /// The classic parts: both paths' constants and n's.
    pub fn classic(&self) -> &EcrtHwKey {
        match self {
            HardwareKey::Fold(k) => k.classic(),
            HardwareKey::Delayed(k) => k.classic(),
        }
    }

    /// Every load of the key into a decryption core ([`decryption_key_loads`]).
    pub fn loads(&self, window_bits: usize) -> Vec<KeyLoad> {
        match self {
            HardwareKey::Fold(k) => decryption_key_loads(k, window_bits),
            HardwareKey::Delayed(k) => decryption_key_loads(k, window_bits),
        }
    }

    /// Decrypts c as the engine's datapath does. Errors: c out of range or not a unit.
    pub fn decrypt(&self, c: &BigUint) -> Result<BigUint, HwError> {
        match self {
            HardwareKey::Fold(k) => k.decrypt(c),
            HardwareKey::Delayed(k) => k.decrypt(c),
        }
    }
}

/// The golden model's hardware form of `key` for an accelerator of `config`: its constants are
/// what [`HardwareKey::loads`] loads. Its values are wiped when it is dropped.
pub fn hardware_key(key: &PrivateKey, config: &AcceleratorConfig) -> Result<HardwareKey, KeyFitError> {
    let key_bits = key.public().n().bits() as usize;
    if key_bits != config.key_bits {
        return Err(KeyFitError::KeyBits { key_bits, config_bits: config.key_bits });
    }
    if key.p().bits() as usize != config.exponent_bits() || key.q().bits() as usize != config.exponent_bits() {
        return Err(KeyFitError::PrimeBits(config.exponent_bits()));
    }
    let hw = HardwareKey::new(key.p(), key.q(), config)?;
    debug_assert_eq!(hw.classic().digits(), config.digits());
    Ok(hw)
}

/// The id a key is committed under: requests carry it, so a request meant for another process's
/// key gets KEY_NOT_LOADED instead of a wrong plaintext (1 to 255; 0 means none).
pub fn key_id(n: &BigUint) -> u8 {
    // FNV-1a over n's bytes: n is public, the id only needs to differ between keys.
    let hash = n.to_bytes_le().iter().fold(0x811c_9dc5u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    (hash % 255 + 1) as u8
}

/// A modulus and a fixed exponent, as one slot holds them.
pub struct SlotKey {
    fold: FoldContext,
    exponent: BigUint,
    exponent_bits: usize,
    window_bits: usize,
}

impl SlotKey {
    /// The constants for an odd `modulus` of at most `config.modulus_bits()` bits and an
    /// `exponent` of at most `config.exponent_bits()` bits, for `config`'s multipliers and windows.
    pub fn for_config(modulus: &BigUint, exponent: &BigUint, config: &AcceleratorConfig) -> Result<Self, HwError> {
        let (modulus_bits, exponent_bits) = (config.modulus_bits(), config.exponent_bits());
        Self::new(modulus, exponent, modulus_bits, config.digits_per_step, exponent_bits, config.window_bits)
    }

    /// The constants for an odd `modulus` of at most `modulus_bits` bits, a folding multiplier of
    /// `digits_per_step` limbs per step for that width, an `exponent` of at most `exponent_bits`
    /// bits and `window_bits`-bit windows.
    pub fn new(
        modulus: &BigUint,
        exponent: &BigUint,
        modulus_bits: usize,
        digits_per_step: usize,
        exponent_bits: usize,
        window_bits: usize,
    ) -> Result<Self, HwError> {
        if exponent.bits() > exponent_bits as u64 {
            return Err(HwError::ExponentTooLong { exponent_bits: exponent.bits(), exp_bits: exponent_bits });
        }
        Ok(SlotKey {
            fold: FoldContext::with_width(modulus, modulus_bits, digits_per_step)?,
            exponent: exponent.clone(),
            exponent_bits,
            window_bits,
        })
    }

    /// The classic passes' context (digits, constants); R is the folding mode's too.
    pub fn context(&self) -> &MontgomeryContext {
        self.fold.classic()
    }

    /// The folding multiplier's context.
    pub fn fold(&self) -> &FoldContext {
        &self.fold
    }

    /// The loads of the key: modulus, N', R³ mod N, R mod N, the exponent's windows and M̂.
    pub fn key_loads(&self) -> Vec<Load> {
        let (ctx, shape) = (self.context(), self.fold.shape());
        let mut loads = modulus_loads(ctx, LoadTarget::Modulus, LoadTarget::NPrime, shape.modulus_limbs);
        limb_loads(&mut loads, LoadTarget::R3, ctx.r3_mod_n(), shape.operand_limbs);
        limb_loads(&mut loads, LoadTarget::One, ctx.r_mod_n(), shape.operand_limbs);
        loads.extend(exponent_loads(&self.exponent, self.exponent_bits, self.window_bits));
        loads.extend(m_hat_loads(&self.fold));
        loads
    }

    /// The loads of a base x < 2^(17L)·N (2·S limbs; L the multiplier's operand limbs).
    pub fn base_loads(&self, base: &BigUint) -> Vec<Load> {
        base_loads(base, self.context().digits())
    }
}

/// M̂'s exact limbs (the delayed fold's H), as many as the modulus has.
fn m_hat_loads(fold: &impl FoldMultiplier) -> Vec<Load> {
    fold.m_hat_limbs().iter().map(|&l| (LoadTarget::MHat, l)).collect()
}

/// Every load of a private key into a decryption core: each path's three moduli and their
/// inverses, R³ and R mod p², t·R mod n, the exponent p − 1 in `window_bits`-bit windows, and
/// the folding multiplier's M̂ (the delayed fold's H).
pub fn decryption_key_loads<M: FoldMultiplier>(key: &FoldEcrtKey<M>, window_bits: usize) -> Vec<KeyLoad> {
    let classic = key.classic();
    let mut loads = Vec::new();
    for (path, prime, fold) in [(false, classic.prime_p(), key.fold_p()), (true, classic.prime_q(), key.fold_q())] {
        let mut path_loads = prime_path_loads(classic, &fold.classic_shape(), prime, window_bits);
        path_loads.extend(m_hat_loads(fold));
        loads.extend(path_loads.into_iter().map(|(t, d)| (path, t, d)));
    }
    loads
}

/// One path's loads, each register as wide as the RTL's: the moduli of the classic passes and the
/// constants as the multiplier's operands take them, n as the final correction does (S limbs).
fn prime_path_loads(key: &EcrtHwKey, shape: &ClassicShape, prime: &PrimeConstants, window_bits: usize) -> Vec<Load> {
    let (ctx, m, l) = (prime.ctx(), shape.modulus_limbs, shape.operand_limbs);
    let mut loads = modulus_loads(ctx, LoadTarget::Modulus, LoadTarget::NPrime, m);
    loads.extend(modulus_loads(prime.divider().ctx(), LoadTarget::ModulusDiv, LoadTarget::NPrimeDiv, m));
    loads.extend(modulus_loads(key.ctx_n(), LoadTarget::ModulusN, LoadTarget::NPrimeN, key.digits()));
    limb_loads(&mut loads, LoadTarget::R3, ctx.r3_mod_n(), l);
    limb_loads(&mut loads, LoadTarget::One, ctx.r_mod_n(), l);
    limb_loads(&mut loads, LoadTarget::TMont, prime.t_mont(), l);
    loads.extend(exponent_loads(prime.exponent(), key.exp_bits(), window_bits));
    loads
}

/// The loads of a ciphertext c < 2^(17L)·N (n² is): 2·S limbs, least significant first.
pub fn base_loads(base: &BigUint, digits: usize) -> Vec<Load> {
    to_limbs(base, 2 * digits).into_iter().map(|l| (LoadTarget::Base, l)).collect()
}

fn limb_loads(loads: &mut Vec<Load>, target: LoadTarget, x: &BigUint, digits: usize) {
    loads.extend(to_limbs(x, digits).into_iter().map(|l| (target, l)));
}

/// A modulus's limbs, `digits` of them, and its −N^(−1) mod 2^17.
fn modulus_loads(ctx: &MontgomeryContext, modulus: LoadTarget, n_prime: LoadTarget, digits: usize) -> Vec<Load> {
    let mut loads = Vec::new();
    limb_loads(&mut loads, modulus, ctx.modulus(), digits);
    loads.push((n_prime, ctx.n_prime() as u64));
    loads
}

/// The exponent's windows, most significant first, zero-padded to a whole number of windows.
fn exponent_loads(exponent: &BigUint, exponent_bits: usize, w: usize) -> Vec<Load> {
    (0..exponent_bits.div_ceil(w))
        .rev()
        .map(|k| {
            let window = (0..w).fold(0u64, |v, b| v | (u64::from(exponent.bit((k * w + b) as u64)) << b));
            (LoadTarget::Exponent, window)
        })
        .collect()
}
