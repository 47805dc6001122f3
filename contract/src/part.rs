//! The FPGA parts ecrt targets, one row each: the name Vivado takes, the resources a design is
//! counted against (Xilinx DS180, the 7-series overview) and the clock its hard blocks allow.
//! Boards name their part from here, the configuration defaults to [`DEFAULT`], the projections of
//! cores per chip divide by these, and `crate::clock` caps its clock estimates by them.

/// A hard block's maximum clock on a part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockCap {
    /// What limits it: "DSP48E1", "RAMB36E1", "BUFG".
    pub block: &'static str,
    /// Its maximum frequency, MHz.
    pub mhz: f64,
}

/// An FPGA part and its resources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Part {
    /// As Vivado spells it: device, package, speed grade.
    pub name: &'static str,
    pub lut: u32,
    pub ff: u32,
    pub dsp48e1: u32,
    /// 36 Kb block RAMs.
    pub bram36: u32,
    /// The maximum clocks of its hard blocks at its speed grade.
    pub clock_caps: &'static [ClockCap],
}

/// The -2 speed grade's maximum clocks of a Virtex-7 (DS183, values as recalled, not re-read here):
/// a DSP48E1 with all its registers, a RAMB36E1 in write-first or no-change mode, and the BUFG
/// that carries the accelerator's clock from its MMCM.
const VIRTEX7_SPEED_2: &[ClockCap] = &[
    ClockCap { block: "DSP48E1", mhz: 650.20 },
    ClockCap { block: "RAMB36E1", mhz: 543.77 },
    ClockCap { block: "BUFG", mhz: VIRTEX7_SPEED_2_BUFG_MHZ },
];

/// The fastest clock a BUFG of a -2 speed grade Virtex-7 carries (DS183), MHz: the board's MMCM
/// search stays below it too.
pub const VIRTEX7_SPEED_2_BUFG_MHZ: f64 = 628.0;

/// The most loads a register or DSP48E1 of the accelerator may drive: the design's rule for routing
/// on these parts, where a net's delay grows with its loads and routing is most of a path. Wider
/// loads read copies of the register (`ecrt_hdl::fanout`).
pub const MAX_REGISTER_FANOUT: usize = 64;

/// The VC709's Virtex-7.
pub const XC7VX690T: Part = Part {
    name: "xc7vx690t-ffg1761-2",
    lut: 433_200,
    ff: 866_400,
    dsp48e1: 3_600,
    bram36: 1_470,
    clock_caps: VIRTEX7_SPEED_2,
};
/// The VC707's Virtex-7.
pub const XC7VX485T: Part = Part {
    name: "xc7vx485t-ffg1761-2",
    lut: 303_600,
    ff: 607_200,
    dsp48e1: 2_800,
    bram36: 1_030,
    clock_caps: VIRTEX7_SPEED_2,
};
/// Every part in the table.
pub const PARTS: [Part; 2] = [XC7VX690T, XC7VX485T];
/// The part a configuration targets unless told otherwise, and the chip projections count on.
pub const DEFAULT: Part = XC7VX690T;

impl Part {
    /// The part of that name, if it is in the table.
    pub fn by_name(name: &str) -> Option<Part> {
        PARTS.into_iter().find(|part| part.name == name)
    }

    /// The device alone, without package and speed grade: "xc7vx690t".
    pub fn device(&self) -> &'static str {
        self.name.split('-').next().unwrap_or(self.name)
    }

    /// (report field, label, amount) of each resource, in the order reports list them.
    pub fn resources(&self) -> [(&'static str, &'static str, f64); 4] {
        [
            ("lut", "LUT", self.lut as f64),
            ("ff", "FF", self.ff as f64),
            ("dsp48e1", "DSP48E1", self.dsp48e1 as f64),
            ("bram36", "BRAM36", self.bram36 as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_found_by_name() {
        assert_eq!(Part::by_name("xc7vx485t-ffg1761-2"), Some(XC7VX485T));
        assert_eq!(Part::by_name("xc7k325t"), None);
        assert_eq!(DEFAULT.device(), "xc7vx690t");
        assert_eq!(DEFAULT.resources()[2], ("dsp48e1", "DSP48E1", 3_600.0));
    }
}
