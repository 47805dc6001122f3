//! A design's times and chip throughput at its two clocks ([`ecrt_contract::clock`]): the
//! conservative one (cells a quarter of every path) and the plausible one (routing as much again
//! as the cells), both from the logic delay of its longest path and capped by the part; and what
//! a measured design projects for one chip ([`ChipProjection`]). `ecrt bench --backend sim`,
//! `ecrt explore` and `ecrt demo` report them alike.

use crate::chip::{cores_that_fit, Fit, Part, Usage, PROJECTION_PART, REFERENCE_MHZ};
use ecrt_contract::clock::ClockEstimate;
use ecrt_contract::config::AcceleratorConfig;
use ecrt_hdl::board::clocking::{fastest_clock_at_most, AcceleratorClock};
use ecrt_hdl::board::Board;

/// Latency and chip throughput at the conservative and the plausible clock. The reports carry
/// these fields under these names, beside their own (not nested: `#[serde(flatten)]` cannot read
/// numbers back with serde_json's arbitrary_precision, on in this workspace).
#[derive(Debug, Clone, PartialEq)]
pub struct ClockedFigures {
    /// The clocks, and the logic delay they come from.
    pub clocks: ClockEstimate,
    /// An idle core's latency at the conservative clock, µs.
    pub latency_us_conservative_clock: f64,
    /// An idle core's latency at the plausible clock, µs.
    pub latency_us_plausible_clock: f64,
    /// Decryptions/s of one chip filled with cores, at the conservative clock.
    pub chip_decryptions_per_s_conservative_clock: f64,
    /// The same at the plausible clock.
    pub chip_decryptions_per_s_plausible_clock: f64,
}

impl ClockedFigures {
    /// The figures of a design with `logic_delay_ns` of logic on the projection part, whose idle
    /// latency is `latency_cycles` and whose chip finishes a decryption every `chip_cycles` cycles
    /// (`None` when no core fits: throughput 0).
    pub fn new(logic_delay_ns: f64, latency_cycles: f64, chip_cycles: Option<f64>) -> ClockedFigures {
        let clocks = ClockEstimate::new(logic_delay_ns, &PROJECTION_PART);
        let per_s = |mhz: f64| chip_cycles.map_or(0.0, |cycles| mhz * 1e6 / cycles);
        ClockedFigures {
            latency_us_conservative_clock: latency_cycles / clocks.conservative_clock_mhz,
            latency_us_plausible_clock: latency_cycles / clocks.plausible_clock_mhz,
            chip_decryptions_per_s_conservative_clock: per_s(clocks.conservative_clock_mhz),
            chip_decryptions_per_s_plausible_clock: per_s(clocks.plausible_clock_mhz),
            clocks,
        }
    }
}

/// What a measured design projects for one chip: the cores that fit, and their decryptions/s at
/// 100 MHz and at the design's clocks. `ecrt bench --backend sim` and `ecrt demo` report it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipProjection {
    /// The cores that fit, `None` without a resource estimate (or when the design uses nothing).
    pub fit: Option<Fit>,
    /// The chip's decryptions/s at [`REFERENCE_MHZ`].
    pub decryptions_per_s_100mhz: Option<f64>,
    /// Latency and the chip's pace at the design's clocks, `None` without a timing run.
    pub clocked: Option<ClockedFigures>,
}

impl ChipProjection {
    /// The projection of a design of `cores` cores with these estimates, whose idle latency is
    /// `latency_cycles` and whose busy core finishes a decryption every `core_cycles` cycles.
    pub fn new(
        resources: Option<&ecrt_sim::ResourceEstimate>,
        cores: usize,
        timing: Option<&ecrt_sim::TimingEstimate>,
        latency_cycles: f64,
        core_cycles: f64,
    ) -> ChipProjection {
        let fit = resources.and_then(|r| cores_that_fit(&Usage::of_estimate(r, cores), &PROJECTION_PART));
        let chip_cycles = fit.filter(|f| f.cores > 0).map(|f| core_cycles / f.cores as f64);
        ChipProjection {
            fit,
            decryptions_per_s_100mhz: fit.map(|f| f.cores as f64 * REFERENCE_MHZ * 1e6 / core_cycles),
            clocked: timing.map(|t| ClockedFigures::new(t.logic_delay_ns, latency_cycles, chip_cycles)),
        }
    }
}

/// `config`'s clocks on its part, from the logic delay of its longest path (a timing run of
/// minutes, cached by content: [`crate::estimate`]).
pub fn design_clocks(config: &AcceleratorConfig) -> anyhow::Result<ClockEstimate> {
    let timing = crate::estimate::timing_of(config, true)?;
    let part = Part::by_name(&config.part).unwrap_or(PROJECTION_PART);
    Ok(ClockEstimate::new(timing.logic_delay_ns, &part))
}

/// The clock a board design gets unless told otherwise: the design's conservative clock, rounded
/// down to one the board makes from its XDMA clock.
pub fn default_board_clock(clocks: &ClockEstimate, board: Board) -> anyhow::Result<AcceleratorClock> {
    Ok(fastest_clock_at_most(board.facts().user_clock_mhz, clocks.conservative_clock_mhz)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_runs_at_the_conservative_clock_rounded_down() {
        // 4.98 ns of logic: 50.2 MHz conservative, 50 MHz from the VC709's MMCM.
        let clocks = ClockEstimate::new(4.98, &PROJECTION_PART);
        let clock = default_board_clock(&clocks, Board::Vc709).unwrap();
        assert_eq!(clock.mhz(), 50.0);
        // 1 ns: 250 MHz, XDMA's own clock.
        let fast = default_board_clock(&ClockEstimate::new(1.0, &PROJECTION_PART), Board::Vc707).unwrap();
        assert!(fast.is_shared(), "{fast:?}");
    }

    #[test]
    fn times_and_rates_follow_the_two_clocks() {
        // 5 ns of logic: 50 and 100 MHz.
        let f = ClockedFigures::new(5.0, 100_000.0, Some(25_000.0));
        assert_eq!((f.clocks.conservative_clock_mhz, f.clocks.plausible_clock_mhz), (50.0, 100.0));
        assert_eq!((f.latency_us_conservative_clock, f.latency_us_plausible_clock), (2_000.0, 1_000.0));
        assert_eq!(f.chip_decryptions_per_s_conservative_clock, 2_000.0);
        assert_eq!(f.chip_decryptions_per_s_plausible_clock, 4_000.0);
        assert_eq!(ClockedFigures::new(5.0, 1.0, None).chip_decryptions_per_s_plausible_clock, 0.0);
    }
}
