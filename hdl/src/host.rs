//! What a host writes to load a [`crate::modexp::ModExp`] slot: the load sequence for a modulus,
//! its exponent and a base, derived from the golden model's constants.

use crate::limbs::{to_limbs, LIMB_BITS};
use crate::slot_control::LoadTarget;
use ecrt_golden::hw::{HwError, MontgomeryContext};
use num_bigint::BigUint;

/// One load cycle: (target, data).
pub type Load = (LoadTarget, u64);

/// A modulus and a fixed exponent, as one slot holds them.
pub struct SlotKey {
    ctx: MontgomeryContext,
    exponent: BigUint,
    exponent_bits: usize,
    window_bits: usize,
}

impl SlotKey {
    /// The constants for an odd `modulus`, an `exponent` of at most `exponent_bits` bits and
    /// `window_bits`-bit windows.
    pub fn new(
        modulus: &BigUint,
        exponent: &BigUint,
        exponent_bits: usize,
        window_bits: usize,
    ) -> Result<Self, HwError> {
        if exponent.bits() > exponent_bits as u64 {
            return Err(HwError::ExponentTooLong { exponent_bits: exponent.bits(), exp_bits: exponent_bits });
        }
        Ok(SlotKey {
            ctx: MontgomeryContext::new(modulus, LIMB_BITS as u32)?,
            exponent: exponent.clone(),
            exponent_bits,
            window_bits,
        })
    }

    /// The Montgomery context (digits, constants).
    pub fn context(&self) -> &MontgomeryContext {
        &self.ctx
    }

    /// The loads of the key: modulus, N', R² mod N, R mod N, and the exponent's windows (most
    /// significant first, the exponent zero-padded to a whole number of windows).
    pub fn key_loads(&self) -> Vec<Load> {
        let digits = self.ctx.digits();
        let mut loads = Vec::new();
        let mut limbs = |t: LoadTarget, x: &BigUint| loads.extend(to_limbs(x, digits).into_iter().map(|l| (t, l)));
        limbs(LoadTarget::Modulus, self.ctx.modulus());
        limbs(LoadTarget::R2, self.ctx.r2_mod_n());
        limbs(LoadTarget::One, self.ctx.r_mod_n());
        loads.push((LoadTarget::NPrime, self.ctx.n_prime() as u64));
        let w = self.window_bits;
        let windows = self.exponent_bits.div_ceil(w);
        for k in (0..windows).rev() {
            let window = (0..w).fold(0u64, |v, b| v | (u64::from(self.exponent.bit((k * w + b) as u64)) << b));
            loads.push((LoadTarget::Exponent, window));
        }
        loads
    }

    /// The loads of a base x < N.
    pub fn base_loads(&self, base: &BigUint) -> Vec<Load> {
        to_limbs(base, self.ctx.digits()).into_iter().map(|l| (LoadTarget::Base, l)).collect()
    }
}
