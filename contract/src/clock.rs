//! The clocks a design may run at, from the logic delay of its longest register-to-register path
//! (Yosys `sta`: cells only, no routing) and what the part's hard blocks allow.
//!
//! On a 7-series part routing is usually most of a path: AMD's UltraFast guide (UG949) calls a
//! path logic-dominated only when its cells are above about a quarter of it. So a design with L ns
//! of logic gets two clocks:
//! - **conservative**, 1000 / (4·L) MHz: the cells a quarter of the path;
//! - **plausible**, 1000 / (2·L) MHz: routing as much again as the cells, the usual case.
//!
//! Either is capped by the part's [`crate::part::ClockCap`]s: however short the logic, the DSP48E1s, the block
//! RAMs and the global clock buffer that carries the accelerator's clock (an MMCM output, across
//! the FIFOs from XDMA's clock) have a maximum frequency of their own.

use serde::{Deserialize, Serialize};

use crate::part::Part;

/// A design's two clocks (see the module docs), capped by its part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockEstimate {
    /// The longest register-to-register path's logic delay, ns (cells only, no routing).
    pub logic_delay_ns: f64,
    /// 1000 / (4 × logic delay), capped: MHz.
    pub conservative_clock_mhz: f64,
    /// 1000 / (2 × logic delay), capped: MHz.
    pub plausible_clock_mhz: f64,
    /// The hard block whose maximum lowered the plausible clock, if one did: "RAMB36E1 (543.77 MHz)".
    pub clock_capped_by: Option<String>,
}

impl ClockEstimate {
    /// The clocks of a design with `logic_delay_ns` of logic on `part`.
    pub fn new(logic_delay_ns: f64, part: &Part) -> ClockEstimate {
        let lowest = part.clock_caps.iter().copied().min_by(|a, b| a.mhz.total_cmp(&b.mhz));
        let capped = |mhz: f64| lowest.map_or(mhz, |cap| mhz.min(cap.mhz));
        let plausible = 1000.0 / (2.0 * logic_delay_ns);
        ClockEstimate {
            logic_delay_ns,
            conservative_clock_mhz: capped(1000.0 / (4.0 * logic_delay_ns)),
            plausible_clock_mhz: capped(plausible),
            clock_capped_by: lowest
                .filter(|cap| cap.mhz < plausible)
                .map(|cap| format!("{} ({} MHz)", cap.block, cap.mhz)),
        }
    }

    /// `cycles` in µs at the plausible clock.
    pub fn plausible_us(&self, cycles: f64) -> f64 {
        cycles / self.plausible_clock_mhz
    }

    /// What limits the plausible clock: "logic delay", or the hard block that caps it.
    pub fn limit(&self) -> &str {
        self.clock_capped_by.as_deref().unwrap_or("logic delay")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::XC7VX690T;

    #[test]
    fn logic_delay_sets_both_clocks_until_a_hard_block_caps_them() {
        let c = ClockEstimate::new(5.0, &XC7VX690T);
        assert_eq!(
            (c.conservative_clock_mhz, c.plausible_clock_mhz, c.clock_capped_by.as_deref()),
            (50.0, 100.0, None)
        );
        assert_eq!(c.plausible_us(100_000.0), 1_000.0);
        assert_eq!(c.limit(), "logic delay");

        let lowest = XC7VX690T.clock_caps.iter().map(|c| c.mhz).fold(f64::INFINITY, f64::min);
        let fast = ClockEstimate::new(0.5, &XC7VX690T);
        assert_eq!(fast.conservative_clock_mhz, 500.0);
        assert_eq!(fast.plausible_clock_mhz, lowest);
        assert_eq!(fast.limit(), "RAMB36E1 (543.77 MHz)");
    }
}
