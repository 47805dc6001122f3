//! What a design's resources and cycles project for one chip: the cores that fit a part (the
//! contract's part table; the projections count on its default, the xc7vx690t), and the
//! schoolbook bound DSP-cycles are held against (docs/background.md, "Measures and targets").
//! `ecrt bench --backend sim`, `ecrt explore` and docs/figures.md all count this way.

pub use ecrt_contract::part::{Part, DEFAULT as PROJECTION_PART};
/// The share of each resource a design may use and still place and route comfortably.
pub const UTILISATION: f64 = 0.8;
/// The reference clock of cycle-to-time conversions and projections (MESA's), MHz.
pub const REFERENCE_MHZ: f64 = 100.0;
/// MESA's 2048-bit decryption, cycles at 100 MHz.
pub const MESA_CYCLES: f64 = 57_700.0;
/// Projected 2048-bit decryptions/s on one xc7vx690t at 100 MHz: twice MESA's one-core pace.
pub const TARGET_THROUGHPUT: f64 = 3_466.0;
/// 2048-bit decryptions/s on one xc7vx690t at the design's plausible clock.
pub const TARGET_THROUGHPUT_PLAUSIBLE_CLOCK: f64 = 7_000.0;
/// The same at its conservative clock: no fewer than 4 two-slot cores gave at 100 MHz.
pub const TARGET_THROUGHPUT_CONSERVATIVE_CLOCK: f64 = 3_540.0;

/// Resources of a design with `cores` cores, as the Yosys estimate counts them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    pub lut: f64,
    pub ff: f64,
    pub dsp48e1: f64,
    pub bram36: f64,
    pub cores: usize,
}

impl Usage {
    /// What a Yosys estimate of a design with `cores` cores counts.
    pub fn of_estimate(r: &ecrt_sim::ResourceEstimate, cores: usize) -> Usage {
        Usage { lut: r.lut as f64, ff: r.ff as f64, dsp48e1: r.dsp48e1 as f64, bram36: r.bram36, cores }
    }
}

/// How many cores of a design fit the chip, and the resource that stops one more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    pub cores: u64,
    /// The report field of the scarcest resource (`"dsp48e1"`, …).
    pub limit: &'static str,
}

/// Per resource of `part`, the cores that fit in [`UTILISATION`] of it: the design's use divided
/// by its cores (the shared top counted in each core, which errs on the side of fewer), the
/// scarcest resource deciding. `None` when the design uses nothing.
pub fn cores_that_fit(usage: &Usage, part: &Part) -> Option<Fit> {
    let used = [usage.lut, usage.ff, usage.dsp48e1, usage.bram36];
    part.resources()
        .into_iter()
        .zip(used)
        .filter(|(_, u)| *u > 0.0)
        .map(|((name, _, cap), u)| Fit {
            cores: (cap * UTILISATION / (u / usage.cores as f64)).floor() as u64,
            limit: name,
        })
        .min_by_key(|fit| fit.cores)
}

/// 24×17-bit partial products of one schoolbook Montgomery multiplication modulo an m-bit
/// modulus (docs/background.md#the-schoolbook-dsp-cycle-bound): 2 · ⌈m/24⌉ · ⌈m/17⌉, for the
/// product and the reduction.
pub fn schoolbook_partial_products(modulus_bits: usize) -> f64 {
    2.0 * modulus_bits.div_ceil(24) as f64 * modulus_bits.div_ceil(17) as f64
}

/// The schoolbook bound of one exponentiation mod p² for a `key_bits`-bit n: 1.2 multiplications
/// per exponent bit (a sliding window's share), |p − 1| = key_bits/2 bits.
pub fn schoolbook_bound_per_exponentiation(key_bits: usize) -> f64 {
    1.2 * (key_bits / 2) as f64 * schoolbook_partial_products(key_bits)
}

/// The schoolbook bound of one decryption: both primes' exponentiations.
pub fn schoolbook_bound_per_decryption(key_bits: usize) -> f64 {
    2.0 * schoolbook_bound_per_exponentiation(key_bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_fits() {
        assert!((schoolbook_bound_per_exponentiation(2048) - 25_573_785.6).abs() < 1e-3);
        assert!((schoolbook_bound_per_decryption(2048) - 51_147_571.2).abs() < 1e-3);
        // The k = 4 accelerator as measured: DSPs limit it to 2 cores.
        let usage = Usage { lut: 96_298.0, ff: 82_820.0, dsp48e1: 1_242.0, bram36: 0.0, cores: 1 };
        assert_eq!(cores_that_fit(&usage, &PROJECTION_PART), Some(Fit { cores: 2, limit: "dsp48e1" }));
        // A 4-core design's use counts per core.
        let four = Usage { lut: 4.0 * 96_298.0, ff: 4.0 * 82_820.0, dsp48e1: 4.0 * 1_242.0, ..usage };
        assert_eq!(
            cores_that_fit(&Usage { cores: 4, ..four }, &PROJECTION_PART),
            cores_that_fit(&usage, &PROJECTION_PART)
        );
        let nothing = Usage { lut: 0.0, ff: 0.0, dsp48e1: 0.0, bram36: 0.0, cores: 1 };
        assert_eq!(cores_that_fit(&nothing, &PROJECTION_PART), None);
    }
}
