//! The accelerator's configuration: the one source of truth for every size and parameter that the
//! RTL, the simulator, the driver and the manifest use.

use crate::limbs::LIMB_BITS;
use serde::{Deserialize, Serialize};

/// Default target: the VC709's Virtex-7.
pub const DEFAULT_PART: &str = "xc7vx690t-ffg1761-2";

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("key sizes from 512 to 4096 bits, multiples of 64, are supported, not {0}")]
    KeyBits(usize),
    #[error("only 17-bit limbs are implemented (the DSP48E1's unsigned 17×24 multiplier), not {0}")]
    LimbBits(usize),
    #[error("window (segment) widths from 1 to 6 bits are supported, not {0}")]
    WindowBits(usize),
}

/// One accelerator configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceleratorConfig {
    /// Bits of the Paillier modulus n; the exponentiations run mod p² and q², |p²| = key_bits.
    pub key_bits: usize,
    /// Bits of a multiplier digit and of an exact limb.
    pub limb_bits: usize,
    /// The exponent is cut into segments of this many bits, one table multiplication each (the
    /// fixed-window schedule).
    pub window_bits: usize,
    /// The reference clock for reporting times and throughputs.
    pub clock_mhz: f64,
    /// The FPGA part.
    pub part: String,
}

impl Default for AcceleratorConfig {
    fn default() -> Self {
        AcceleratorConfig {
            key_bits: 2048,
            limb_bits: LIMB_BITS,
            window_bits: 5,
            clock_mhz: 100.0,
            part: DEFAULT_PART.into(),
        }
    }
}

impl AcceleratorConfig {
    /// Checks that the configuration can be built.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(512..=4096).contains(&self.key_bits) || self.key_bits % 64 != 0 {
            return Err(ConfigError::KeyBits(self.key_bits));
        }
        if self.limb_bits != LIMB_BITS {
            return Err(ConfigError::LimbBits(self.limb_bits));
        }
        if !(1..=crate::slot_control::WINDOW_BITS_MAX).contains(&self.window_bits) {
            return Err(ConfigError::WindowBits(self.window_bits));
        }
        Ok(())
    }
    /// Bits of the exponentiation moduli p² and q².
    pub fn modulus_bits(&self) -> usize {
        self.key_bits
    }
    /// Bits of the exponents p − 1 and q − 1.
    pub fn exponent_bits(&self) -> usize {
        self.key_bits / 2
    }
    /// Digits S of a multiplication: the least with R = 2^(17·S) > 4N for every modulus_bits-bit N.
    pub fn digits(&self) -> usize {
        (self.modulus_bits() + 2).div_ceil(self.limb_bits)
    }
    /// Windows per exponent.
    pub fn windows(&self) -> usize {
        self.exponent_bits().div_ceil(self.window_bits)
    }
    /// Montgomery multiplications per exponentiation: into the domain, the table, w squarings and
    /// one multiplication per window after the first, out of the domain.
    pub fn multiplications_per_exponentiation(&self) -> usize {
        let w = self.window_bits;
        1 + ((1 << w) - 2) + (self.windows() - 1) * (w + 1) + 1
    }
}
