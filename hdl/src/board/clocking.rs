//! The accelerator's clock on the board: `clock_mhz` of the configuration, made by an MMCME2 from
//! the XDMA user clock `axi_aclk` (250 MHz), or `axi_aclk` itself when they are equal.
//!
//! Why `axi_aclk` and not a board oscillator (the VC709's and VC707's 200 MHz SYSCLK, UG887 and
//! UG885 "System Clock Source"): it needs no pins beyond PCIe, and it runs whenever the host can
//! talk to the card. The MMCM is held in reset while XDMA holds `axi_aresetn` low, so it locks only
//! on a stable input (UG472: reset the MMCM after its input clock changes).
//!
//! The MMCM settings are searched over the ranges of a -2 speed grade Virtex-7 (DS183: VCO
//! 600–1440 MHz, phase-detector input 10–500 MHz, BUFG up to 628 MHz; values as recalled, not
//! re-read here: Vivado's DRC checks them) with integer multiply and divides, which keeps the
//! settings valid on every output and the duty cycle exact.

/// MMCM VCO range of a -2 speed grade Virtex-7 (DS183), MHz.
pub const VCO_MHZ: (f64, f64) = (600.0, 1440.0);
/// MMCM phase-frequency-detector input range (DS183), MHz.
pub const PFD_MHZ: (f64, f64) = (10.0, 500.0);
/// The fastest clock a BUFG of a -2 speed grade Virtex-7 carries (DS183), MHz.
pub const BUFG_MAX_MHZ: f64 = ecrt_contract::part::VIRTEX7_SPEED_2_BUFG_MHZ;
/// How far from the requested frequency a setting may land (relative).
pub const TOLERANCE: f64 = 1e-3;

/// Integer MMCME2 settings: f_out = f_in × `multiply` / (`divide` × `output_divide`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmcmSettings {
    /// CLKIN1 frequency, MHz.
    pub input_mhz: f64,
    /// DIVCLK_DIVIDE (1–106).
    pub divide: u32,
    /// CLKFBOUT_MULT_F (2–64).
    pub multiply: u32,
    /// CLKOUT0_DIVIDE_F (1–128).
    pub output_divide: u32,
}

impl MmcmSettings {
    /// The VCO frequency, MHz.
    pub fn vco_mhz(&self) -> f64 {
        self.input_mhz * f64::from(self.multiply) / f64::from(self.divide)
    }
    /// CLKOUT0's frequency, MHz.
    pub fn output_mhz(&self) -> f64 {
        self.vco_mhz() / f64::from(self.output_divide)
    }
}

/// Where the accelerator's clock comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AcceleratorClock {
    /// The accelerator runs on `axi_aclk` of this frequency: no MMCM, no clock-domain crossing.
    Shared { mhz: f64 },
    /// An MMCM makes it from `axi_aclk`; every signal between the domains crosses in a FIFO.
    Mmcm(MmcmSettings),
}

impl AcceleratorClock {
    /// The accelerator clock's frequency, MHz.
    pub fn mhz(&self) -> f64 {
        match self {
            AcceleratorClock::Shared { mhz } => *mhz,
            AcceleratorClock::Mmcm(m) => m.output_mhz(),
        }
    }
    /// Its period, ns.
    pub fn period_ns(&self) -> f64 {
        1000.0 / self.mhz()
    }
    /// Whether it is `axi_aclk` itself.
    pub fn is_shared(&self) -> bool {
        matches!(self, AcceleratorClock::Shared { .. })
    }
}

/// Why no clock was found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClockError {
    #[error("an accelerator clock of {0} MHz is out of range (above 0, at most {BUFG_MAX_MHZ} MHz)")]
    OutOfRange(f64),
    #[error(
        "an MMCM cannot make {requested} MHz from the {input} MHz XDMA clock (nearest: {nearest:.3} MHz); \
         pass --clock-mhz {nearest:.3}"
    )]
    Unreachable { requested: f64, input: f64, nearest: f64 },
}

/// The clock for an accelerator of `target_mhz` on a board whose XDMA clock is `input_mhz`.
pub fn accelerator_clock(input_mhz: f64, target_mhz: f64) -> Result<AcceleratorClock, ClockError> {
    if !(target_mhz > 0.0 && target_mhz <= BUFG_MAX_MHZ) {
        return Err(ClockError::OutOfRange(target_mhz));
    }
    if (target_mhz - input_mhz).abs() <= f64::EPSILON * input_mhz {
        return Ok(AcceleratorClock::Shared { mhz: input_mhz });
    }
    let best = mmcm_settings(input_mhz)
        .min_by(|a, b| {
            let error = |m: &MmcmSettings| (m.output_mhz() - target_mhz).abs();
            // Nearest first; then, for less jitter, the faster phase detector (smaller divide), then
            // the faster VCO (the Clocking Wizard's preferences).
            error(a).total_cmp(&error(b)).then(a.divide.cmp(&b.divide)).then(b.vco_mhz().total_cmp(&a.vco_mhz()))
        })
        .expect("some setting exists for a 10–800 MHz input");
    if (best.output_mhz() - target_mhz).abs() > TOLERANCE * target_mhz {
        return Err(ClockError::Unreachable { requested: target_mhz, input: input_mhz, nearest: best.output_mhz() });
    }
    Ok(AcceleratorClock::Mmcm(best))
}

/// The fastest clock at most `max_mhz` (first rounded down to whole MHz) that the board makes from
/// an XDMA clock of `input_mhz`: `axi_aclk` itself, or an MMCM output.
pub fn fastest_clock_at_most(input_mhz: f64, max_mhz: f64) -> Result<AcceleratorClock, ClockError> {
    let limit = max_mhz.floor().min(BUFG_MAX_MHZ);
    let shared = (input_mhz <= limit).then_some(AcceleratorClock::Shared { mhz: input_mhz });
    let mmcm = mmcm_settings(input_mhz)
        .filter(|m| m.output_mhz() <= limit)
        // Fastest first; then the Clocking Wizard's preferences, as in `accelerator_clock`.
        .min_by(|a, b| {
            b.output_mhz()
                .total_cmp(&a.output_mhz())
                .then(a.divide.cmp(&b.divide))
                .then(b.vco_mhz().total_cmp(&a.vco_mhz()))
        })
        .map(AcceleratorClock::Mmcm);
    match (shared, mmcm) {
        (Some(s), Some(m)) => Ok(if m.mhz() > s.mhz() { m } else { s }),
        (s, m) => s.or(m).ok_or(ClockError::OutOfRange(max_mhz)),
    }
}

/// Every valid integer setting for an input of `input_mhz`.
fn mmcm_settings(input_mhz: f64) -> impl Iterator<Item = MmcmSettings> {
    (1..=106u32)
        .filter(move |&d| (PFD_MHZ.0..=PFD_MHZ.1).contains(&(input_mhz / f64::from(d))))
        .flat_map(move |divide| {
            (2..=64u32).flat_map(move |multiply| {
                (1..=128u32).map(move |output_divide| MmcmSettings { input_mhz, divide, multiply, output_divide })
            })
        })
        .filter(|m| (VCO_MHZ.0..=VCO_MHZ.1).contains(&m.vco_mhz()) && m.output_mhz() <= BUFG_MAX_MHZ)
}

/// The Verilog module `ecrt_accel_clocking`: the accelerator clock from `axi_aclk`, whether it is
/// running (`accel_locked`), and an active-low reset released synchronously to it for the
/// accelerator side of the crossings.
pub fn clocking_module(clock: &AcceleratorClock) -> String {
    let ports = "module ecrt_accel_clocking (
    input  wire axi_aclk,       // XDMA user clock
    input  wire axi_aresetn,    // XDMA user reset, active low
    output wire accel_clk,      // the accelerator's clock
    output wire accel_locked,   // accel_clk runs at its frequency
    output wire accel_aresetn   // active low; released synchronously to accel_clk
);
";
    match clock {
        AcceleratorClock::Shared { mhz } => format!(
            "// The accelerator runs on axi_aclk itself ({mhz:.3} MHz): no MMCM, no clock-domain crossing.
{ports}    assign accel_clk = axi_aclk;
    assign accel_locked = 1'b1;
    assign accel_aresetn = axi_aresetn;
endmodule
"
        ),
        AcceleratorClock::Mmcm(m) => format!(
            "// The accelerator clock: {out:.3} MHz = {input:.3} MHz × {mul} / ({div} × {odiv}) (VCO {vco:.3} MHz), an
// MMCME2 from axi_aclk; feedback through a BUFG keeps it phase-aligned with its input. The MMCM
// restarts while XDMA holds its reset (its input may change then: UG472).
{ports}    wire clkfbout, clkfbin, clkout0;
    wire unused_clkfboutb, unused_clkout0b, unused_clkout1, unused_clkout1b, unused_clkout2, unused_clkout2b;
    wire unused_clkout3, unused_clkout3b, unused_clkout4, unused_clkout5, unused_clkout6;
    MMCME2_BASE #(
        .BANDWIDTH(\"OPTIMIZED\"),
        .CLKIN1_PERIOD({in_period:.3}),
        .DIVCLK_DIVIDE({div}),
        .CLKFBOUT_MULT_F({mul}.000),
        .CLKOUT0_DIVIDE_F({odiv}.000),
        .STARTUP_WAIT(\"FALSE\")
    ) mmcm (
        .CLKIN1(axi_aclk),
        .CLKFBIN(clkfbin),
        .RST(!axi_aresetn),
        .PWRDWN(1'b0),
        .CLKFBOUT(clkfbout),
        .CLKFBOUTB(unused_clkfboutb),
        .CLKOUT0(clkout0),
        .CLKOUT0B(unused_clkout0b),
        .CLKOUT1(unused_clkout1),
        .CLKOUT1B(unused_clkout1b),
        .CLKOUT2(unused_clkout2),
        .CLKOUT2B(unused_clkout2b),
        .CLKOUT3(unused_clkout3),
        .CLKOUT3B(unused_clkout3b),
        .CLKOUT4(unused_clkout4),
        .CLKOUT5(unused_clkout5),
        .CLKOUT6(unused_clkout6),
        .LOCKED(accel_locked)
    );
    BUFG feedback_bufg (.I(clkfbout), .O(clkfbin));
    BUFG accel_bufg (.I(clkout0), .O(accel_clk));
    // Asserted asynchronously (XDMA reset or MMCM unlocked), released after 4 accel_clk edges.
    xpm_cdc_async_rst #(
        .DEST_SYNC_FF(4),
        .INIT_SYNC_FF(0),
        .RST_ACTIVE_HIGH(0)
    ) accel_reset_sync (
        .src_arst(axi_aresetn & accel_locked),
        .dest_clk(accel_clk),
        .dest_arst(accel_aresetn)
    );
endmodule
",
            out = m.output_mhz(),
            input = m.input_mhz,
            mul = m.multiply,
            div = m.divide,
            odiv = m.output_divide,
            vco = m.vco_mhz(),
            in_period = 1000.0 / m.input_mhz,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_clocks_are_exact_and_within_the_mmcm_ranges() {
        for target in [50.0, 100.0, 125.0, 150.0, 175.0, 200.0, 225.0, 300.0] {
            let AcceleratorClock::Mmcm(m) = accelerator_clock(250.0, target).unwrap() else { panic!("{target}") };
            assert!((m.output_mhz() - target).abs() < 1e-9, "{target}: {m:?}");
            assert!((VCO_MHZ.0..=VCO_MHZ.1).contains(&m.vco_mhz()), "{m:?}");
            assert!((PFD_MHZ.0..=PFD_MHZ.1).contains(&(m.input_mhz / f64::from(m.divide))), "{m:?}");
        }
        let AcceleratorClock::Mmcm(m) = accelerator_clock(250.0, 100.0).unwrap() else { panic!() };
        assert_eq!((m.divide, m.multiply, m.output_divide), (1, 4, 10), "PFD 250 MHz, VCO 1000 MHz");
    }

    #[test]
    fn the_xdma_clock_is_shared_and_impossible_clocks_are_refused() {
        assert_eq!(accelerator_clock(250.0, 250.0), Ok(AcceleratorClock::Shared { mhz: 250.0 }));
        assert!(accelerator_clock(250.0, 250.0).unwrap().is_shared());
        assert_eq!(accelerator_clock(250.0, 0.0), Err(ClockError::OutOfRange(0.0)));
        assert_eq!(accelerator_clock(250.0, 700.0), Err(ClockError::OutOfRange(700.0)));
        // 333.333 MHz has no exact setting (1000/3 MHz is near enough).
        assert!((accelerator_clock(250.0, 333.333).unwrap().mhz() - 333.333).abs() <= TOLERANCE * 333.333);
        // 4.6875 MHz steps near the bottom: 600/128 is the slowest, so 4 MHz is unreachable.
        let err = accelerator_clock(250.0, 4.0).unwrap_err();
        assert!(matches!(err, ClockError::Unreachable { .. }), "{err}");
        assert!(err.to_string().contains("--clock-mhz"), "{err}");
    }

    #[test]
    fn a_clock_limit_rounds_down_to_a_clock_the_board_makes() {
        let clock = fastest_clock_at_most(250.0, 103.9).unwrap();
        assert!(!clock.is_shared() && (clock.mhz() - 103.0).abs() <= TOLERANCE * 103.0, "{clock:?}");
        assert!(clock.mhz() <= 103.0);
        assert_eq!(fastest_clock_at_most(250.0, 100.0).unwrap().mhz(), 100.0);
        assert_eq!(fastest_clock_at_most(250.0, 251.5).unwrap(), AcceleratorClock::Shared { mhz: 250.0 });
        assert!(fastest_clock_at_most(250.0, 1000.0).unwrap().mhz() <= BUFG_MAX_MHZ);
        assert!(matches!(fastest_clock_at_most(250.0, 3.0), Err(ClockError::OutOfRange(_))));
    }

    #[test]
    fn the_clocking_module_names_what_the_timing_constraints_use() {
        let mmcm = clocking_module(&accelerator_clock(250.0, 100.0).unwrap());
        for needle in
            ["MMCME2_BASE", ") mmcm (", ".CLKFBOUT_MULT_F(4.000)", ".CLKOUT0_DIVIDE_F(10.000)", "xpm_cdc_async_rst"]
        {
            assert!(mmcm.contains(needle), "{needle}");
        }
        let shared = clocking_module(&accelerator_clock(250.0, 250.0).unwrap());
        assert!(shared.contains("assign accel_clk = axi_aclk;") && !shared.contains("MMCME2_BASE"));
    }
}
