//! The board-level design for a Vivado bitstream: the accelerator of a [`Manifest`] behind the
//! Xilinx XDMA IP (PCIe, AXI4-Stream H2C/C2H and the AXI4-Lite master) on a VC709 or VC707.
//!
//! Everything board-specific that depends on the configuration is generated here from the
//! manifest, so that it cannot disagree with the RTL: the board top ([`top`]), its clocking
//! ([`clocking`]) and clock-domain crossings ([`cdc`]), and the Vivado parameters and timing
//! constraints ([`vivado`]). The static files (the board's pin constraints under `constraints/`,
//! the batch flow under `vivado/`) are embedded and copied next to them by [`write`].
//!
//! The board facts (part, PCIe link, stream width, pins) are cited in the XDC files and in
//! docs/bitstream.md; nothing here has been run through Vivado on this machine.

pub mod cdc;
pub mod clocking;
pub mod top;
pub mod vivado;

use crate::config::{AcceleratorConfig, ConfigError};
use crate::emit::{self, Emitted, Manifest};
use crate::part::{Part, XC7VX485T, XC7VX690T};
use clocking::{AcceleratorClock, ClockError};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A supported evaluation board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Board {
    /// Xilinx VC709: xc7vx690t-ffg1761-2, PCIe Gen3 x8 (UG887).
    Vc709,
    /// Xilinx VC707: xc7vx485t-ffg1761-2, PCIe Gen2 x8 (UG885).
    Vc707,
}

/// What the flow needs to know about a board. The PCIe link fixes the XDMA's AXI4-Stream width at
/// its 250 MHz user clock: 8 lanes × 8 GT/s (128b/130b) ≈ 7.9 GB/s fit 256 bits × 250 MHz = 8 GB/s;
/// 8 lanes × 5 GT/s (8b/10b) = 4 GB/s fit 128 bits × 250 MHz.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoardFacts {
    /// The name on the command line and in file names: "vc709".
    pub name: &'static str,
    /// The FPGA part.
    pub part: Part,
    /// The board user guide the pin facts come from.
    pub user_guide: &'static str,
    /// PCIe generation of the link the board's edge connector and the part support.
    pub pcie_generation: u8,
    /// XDMA `pl_link_cap_max_link_speed`.
    pub link_speed: &'static str,
    /// PCIe lanes.
    pub link_lanes: usize,
    /// XDMA AXI4-Stream TDATA width: the accelerator's `stream_bits` must equal it.
    pub stream_bits: usize,
    /// XDMA user clock (`axi_aclk`, `axisten_freq`), MHz.
    pub user_clock_mhz: f64,
    /// The PCIe reference clock on the edge connector, MHz.
    pub refclk_mhz: f64,
    /// XDMA `pcie_blk_locn`: the integrated PCIe block wired to the edge connector's lanes.
    pub pcie_block: &'static str,
    /// PCI device id (vendor 0x10EE); the XDMA Linux driver's table lists it.
    pub device_id: u16,
}

impl Board {
    /// Every supported board.
    pub const ALL: [Board; 2] = [Board::Vc709, Board::Vc707];

    /// The board's facts.
    pub fn facts(self) -> BoardFacts {
        match self {
            Board::Vc709 => BoardFacts {
                name: "vc709",
                part: XC7VX690T,
                user_guide: "UG887",
                pcie_generation: 3,
                link_speed: "8.0_GT/s",
                link_lanes: 8,
                stream_bits: 256,
                user_clock_mhz: 250.0,
                refclk_mhz: 100.0,
                pcie_block: "X0Y1",
                device_id: 0x7038,
            },
            Board::Vc707 => BoardFacts {
                name: "vc707",
                part: XC7VX485T,
                user_guide: "UG885",
                pcie_generation: 2,
                link_speed: "5.0_GT/s",
                link_lanes: 8,
                stream_bits: 128,
                user_clock_mhz: 250.0,
                refclk_mhz: 100.0,
                pcie_block: "X1Y0",
                device_id: 0x7028,
            },
        }
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.facts().name)
    }
}

impl FromStr for Board {
    type Err = BoardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Board::ALL
            .into_iter()
            .find(|b| b.facts().name.eq_ignore_ascii_case(s))
            .ok_or_else(|| BoardError::UnknownBoard(s.to_string()))
    }
}

/// Why a board design was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BoardError {
    #[error("unknown board {0:?}: vc709 or vc707")]
    UnknownBoard(String),
    #[error(
        "--stream-bits {requested} conflicts with --board {board}: its XDMA streams are {required} bits wide \
         (PCIe Gen{generation} x{lanes} at 250 MHz); leave --stream-bits out or set it to {required}"
    )]
    StreamBits { board: Board, generation: u8, lanes: usize, required: usize, requested: usize },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Clock(#[from] ClockError),
    #[error("the manifest does not describe an accelerator the board top can wire: {0}")]
    Manifest(String),
}

/// `config` made to fit `board`: its part, and its stream width unless `requested_stream_bits`
/// (an explicit `--stream-bits`) asks for another, which is refused, as is a clock the board cannot
/// make.
pub fn configure(
    config: &AcceleratorConfig,
    board: Board,
    requested_stream_bits: Option<usize>,
) -> Result<AcceleratorConfig, BoardError> {
    let facts = board.facts();
    if let Some(requested) = requested_stream_bits.filter(|&bits| bits != facts.stream_bits) {
        return Err(BoardError::StreamBits {
            board,
            generation: facts.pcie_generation,
            lanes: facts.link_lanes,
            required: facts.stream_bits,
            requested,
        });
    }
    let config =
        AcceleratorConfig { part: facts.part.name.to_string(), stream_bits: facts.stream_bits, ..config.clone() };
    config.validate()?;
    // A clock the board cannot make is refused now, before the RTL is generated.
    clocking::accelerator_clock(facts.user_clock_mhz, config.clock_mhz)?;
    Ok(config)
}

/// Name of the generated board top's Verilog file.
pub const TOP_FILE: &str = "ecrt_board_top.v";
/// The board top module.
pub const TOP_MODULE: &str = "ecrt_board_top";
/// Name of the generated Vivado parameters, which `build.tcl` sources.
pub const PARAMS_FILE: &str = "params.tcl";
/// Name of the generated timing constraints (the accelerator clock and its crossings).
pub const TIMING_XDC_FILE: &str = "ecrt_timing.xdc";

/// The generated and copied files of a board design, by name.
pub struct BoardDesign {
    pub board: Board,
    pub clock: AcceleratorClock,
    /// (file name, contents), in the order [`write`] writes them.
    pub files: Vec<(String, String)>,
}

impl BoardDesign {
    /// The contents of file `name`.
    pub fn file(&self, name: &str) -> Option<&str> {
        self.files.iter().find(|(n, _)| n == name).map(|(_, text)| text.as_str())
    }

    /// Writes the board design's files into `dir` (which holds, or will hold, the accelerator's).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (name, text) in &self.files {
            std::fs::write(dir.join(name), text)?;
        }
        Ok(())
    }
}

/// The board design around the accelerator of `manifest` (emitted for `board`: see
/// [`configure`]): the board top, params.tcl, the timing XDC, the board's XDC and the Vivado TCL.
pub fn generate(manifest: &Manifest, board: Board) -> Result<BoardDesign, BoardError> {
    let facts = board.facts();
    if manifest.stream_bits != facts.stream_bits || manifest.config.part != facts.part.name {
        return Err(BoardError::Manifest(format!(
            "it is for {} with {}-bit streams, the {board} needs {} with {}-bit streams",
            manifest.config.part, manifest.stream_bits, facts.part.name, facts.stream_bits
        )));
    }
    let clock = clocking::accelerator_clock(facts.user_clock_mhz, manifest.config.clock_mhz)?;
    let fifo_depth = cdc::stream_fifo_depth(manifest.request_beats.max(manifest.result_beats));
    let verilog = top::board_top(manifest, board, &clock, fifo_depth)?;
    let mut files = vec![
        (TOP_FILE.to_string(), verilog),
        (PARAMS_FILE.to_string(), vivado::params_tcl(manifest, board, &clock)),
        (TIMING_XDC_FILE.to_string(), vivado::timing_xdc(board, &clock)),
    ];
    files.extend(vivado::static_files(board).map(|(name, text)| (name.to_string(), text.to_string())));
    Ok(BoardDesign { board, clock, files })
}

/// Writes the accelerator (Verilog and manifest) and its board design into `dir`.
pub fn write(emitted: &Emitted, design: &BoardDesign, dir: &Path) -> std::io::Result<()> {
    emit::write(emitted, dir)?;
    design.write(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_parse_and_configure_their_stream_width_and_part() {
        assert_eq!("VC709".parse::<Board>(), Ok(Board::Vc709));
        assert_eq!("vc707".parse::<Board>(), Ok(Board::Vc707));
        assert!(matches!("kc705".parse::<Board>(), Err(BoardError::UnknownBoard(_))));
        let base = AcceleratorConfig { key_bits: 1024, ..Default::default() };
        let c = configure(&base, Board::Vc707, None).unwrap();
        assert_eq!((c.stream_bits, c.part.as_str(), c.key_bits), (128, "xc7vx485t-ffg1761-2", 1024));
        assert_eq!(configure(&base, Board::Vc709, Some(256)).unwrap().stream_bits, 256);
        let err = configure(&base, Board::Vc709, Some(128)).unwrap_err();
        assert!(matches!(err, BoardError::StreamBits { required: 256, requested: 128, .. }));
        assert!(err.to_string().contains("--board vc709") && err.to_string().contains("Gen3 x8"), "{err}");
        let bad = AcceleratorConfig { key_bits: 100, ..base };
        assert!(matches!(configure(&bad, Board::Vc709, None), Err(BoardError::Config(ConfigError::KeyBits(100)))));
    }

    #[test]
    fn link_bandwidth_fits_the_stream_width() {
        for board in Board::ALL {
            let f = board.facts();
            let gbit_per_lane = match f.pcie_generation {
                3 => 8.0 * 128.0 / 130.0,
                2 => 5.0 * 8.0 / 10.0,
                g => panic!("generation {g}"),
            };
            let link = gbit_per_lane * f.link_lanes as f64;
            let stream = f.stream_bits as f64 * f.user_clock_mhz / 1000.0;
            assert!(link <= stream && stream < 2.0 * link, "{board}: link {link} Gb/s, stream {stream} Gb/s");
        }
    }
}
