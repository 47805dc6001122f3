//! The FPGA parts ecrt targets, one row each: the name Vivado takes and the resources a design is
//! counted against (Xilinx DS180, the 7-series overview). Boards name their part from here, the
//! configuration defaults to [`DEFAULT`], and the projections of cores per chip divide by these.

/// An FPGA part and its resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// As Vivado spells it: device, package, speed grade.
    pub name: &'static str,
    pub lut: u32,
    pub ff: u32,
    pub dsp48e1: u32,
    /// 36 Kb block RAMs.
    pub bram36: u32,
}

/// The VC709's Virtex-7.
pub const XC7VX690T: Part =
    Part { name: "xc7vx690t-ffg1761-2", lut: 433_200, ff: 866_400, dsp48e1: 3_600, bram36: 1_470 };
/// The VC707's Virtex-7.
pub const XC7VX485T: Part =
    Part { name: "xc7vx485t-ffg1761-2", lut: 303_600, ff: 607_200, dsp48e1: 2_800, bram36: 1_030 };
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
