//! FPGA resource estimates from Yosys (`synth_xilinx -family xc7`).
//!
//! [`estimate`] synthesizes a design for 7-series (Virtex-7) with
//! [`SYNTH_XILINX`] and reads `stat -tech xilinx`.
//! **These are Yosys estimates, not Vivado results**: Yosys' mapping, packing and optimisation differ
//! from Vivado's, and nothing is placed or routed, so use them to compare variants and to size
//! blocks until a Vivado report is on record.
//!
//! Synthesizing wide flat logic is slow (tens of minutes for the 2048-bit accelerator), so by default
//! ([`EstimateMethod::Hierarchical`], module [`hierarchical`]) each distinct module body is
//! synthesized once and the results are summed over its instances with [`ResourceEstimate::scaled`]
//! and [`ResourceEstimate::add`]; [`EstimateMethod::Flat`] keeps the single flat run. Results are
//! cached by content (`<cache_dir>/estimate/`: per distinct module, or per design for a flat run).
//! [`crate::estimate_with_fanout`] also gives the highest-fanout nets ([`crate::fanout()`]), from the
//! same units' netlists.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::cache::content_key;
use crate::error::{Result, SimError};
use crate::progress::Spinner;
use crate::synth::{self, Job};
use crate::toolchain::yosys_version;

pub mod hierarchical;

/// Bump when the script or the parsing changes: part of the cache key.
const ESTIMATE_FORMAT: &str = "ecrt-sim estimate 2";

/// Cell counts of a design after Yosys' Xilinx 7-series synthesis.
///
/// A Yosys estimate, not a Vivado result (see the module docs). `cells` keeps every cell type Yosys
/// reported; the other fields summarize it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceEstimate {
    /// Look-up tables used as logic: LUT1 … LUT6.
    pub lut: u64,
    /// Flip-flops: FDRE, FDSE, FDCE, FDPE.
    pub ff: u64,
    /// DSP48E1 slices.
    pub dsp48e1: u64,
    /// Block RAM in 36 Kb units: RAMB36E1 count 1, RAMB18E1 count ½.
    pub bram36: f64,
    /// CARRY4 carry-chain cells.
    pub carry4: u64,
    /// LUT-based memory cells (RAM32M, RAM64X1D, …, SRL16E, SRLC32E), counted as cells.
    pub lutram: u64,
    /// Yosys' "estimated number of LCs" (LUTs after packing), when reported.
    pub estimated_lcs: u64,
    /// Every cell type and its count, as Yosys reported them.
    pub cells: BTreeMap<String, u64>,
    /// Which tool and script produced the numbers.
    pub tool: String,
    /// Where the resources go, by distinct module, most LUTs first: from a hierarchical estimate
    /// only (empty from a flat one, and from [`scaled`](Self::scaled) and [`add`](Self::add)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_module: Vec<ModuleResources>,
}

/// One distinct module's own resources: its cells and its inlined flip-flop and memory leaves,
/// not its other children.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModuleResources {
    /// The name rust-hdl gave its first instance, e.g. `top$cores$0$engine$slot0`.
    pub module: String,
    /// Copies of it in the design.
    pub instances: u64,
    /// LUTs of one copy.
    pub lut: u64,
    /// Flip-flops of one copy.
    pub ff: u64,
    /// DSP48E1 of one copy.
    pub dsp48e1: u64,
    /// LUT memory cells of one copy.
    pub lutram: u64,
    /// BRAM36 of one copy.
    pub bram36: f64,
}

impl ResourceEstimate {
    /// Summarizes a cell table.
    pub fn from_cells(cells: BTreeMap<String, u64>, tool: impl Into<String>) -> Self {
        let mut e = ResourceEstimate { tool: tool.into(), ..Default::default() };
        for (name, &n) in &cells {
            let c = name.as_str();
            if c.starts_with("LUT") && c[3..].chars().next().is_some_and(|d| d.is_ascii_digit()) {
                e.lut += n;
            } else if matches!(c, "FDRE" | "FDSE" | "FDCE" | "FDPE") {
                e.ff += n;
            } else if c == "DSP48E1" {
                e.dsp48e1 += n;
            } else if c.starts_with("RAMB36") {
                e.bram36 += n as f64;
            } else if c.starts_with("RAMB18") {
                e.bram36 += n as f64 / 2.0;
            } else if c.starts_with("CARRY4") {
                e.carry4 += n;
            } else if (c.starts_with("RAM") && !c.starts_with("RAMB")) || c.starts_with("SRL") {
                e.lutram += n;
            }
        }
        e.cells = cells;
        e
    }

    /// The resources of `n` copies (e.g. one block's estimate times the number of instances).
    pub fn scaled(&self, n: u64) -> Self {
        ResourceEstimate {
            lut: self.lut * n,
            ff: self.ff * n,
            dsp48e1: self.dsp48e1 * n,
            bram36: self.bram36 * n as f64,
            carry4: self.carry4 * n,
            lutram: self.lutram * n,
            estimated_lcs: self.estimated_lcs * n,
            cells: self.cells.iter().map(|(k, v)| (k.clone(), v * n)).collect(),
            tool: self.tool.clone(),
            by_module: Vec::new(),
        }
    }

    /// The sum of two estimates (e.g. of two blocks). The `tool` strings are kept, joined if they
    /// differ.
    pub fn add(&self, other: &ResourceEstimate) -> Self {
        let mut cells = self.cells.clone();
        for (k, v) in &other.cells {
            *cells.entry(k.clone()).or_default() += v;
        }
        let tool = match (self.tool.as_str(), other.tool.as_str()) {
            (a, "") => a.to_owned(),
            ("", b) => b.to_owned(),
            (a, b) if a == b || a.split(" | ").any(|x| x == b) => a.to_owned(),
            (a, b) => format!("{a} | {b}"),
        };
        ResourceEstimate {
            lut: self.lut + other.lut,
            ff: self.ff + other.ff,
            dsp48e1: self.dsp48e1 + other.dsp48e1,
            bram36: self.bram36 + other.bram36,
            carry4: self.carry4 + other.carry4,
            lutram: self.lutram + other.lutram,
            estimated_lcs: self.estimated_lcs + other.estimated_lcs,
            cells,
            tool,
            by_module: Vec::new(),
        }
    }
}

impl std::iter::Sum for ResourceEstimate {
    fn sum<I: Iterator<Item = ResourceEstimate>>(iter: I) -> Self {
        iter.fold(ResourceEstimate::default(), |a, b| ResourceEstimate::add(&a, &b))
    }
}

impl std::fmt::Display for ResourceEstimate {
    /// One line: `LUT 123, FF 45, DSP48E1 1, BRAM36 0.5, CARRY4 7, LUTRAM 0 (Yosys estimate)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LUT {}, FF {}, DSP48E1 {}, BRAM36 {}, CARRY4 {}, LUTRAM {} (Yosys estimate)",
            self.lut, self.ff, self.dsp48e1, self.bram36, self.carry4, self.lutram
        )
    }
}

/// How [`estimate`] synthesizes a design.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EstimateMethod {
    /// The whole design flattened in one Yosys run: every copy of a block is synthesized again
    /// (tens of minutes at 2048 bits), and optimisation crosses every module boundary.
    Flat,
    /// Each distinct module body synthesized once, out of context, and the results summed over
    /// its instances (see [`hierarchical`]): minutes at 2048 bits, each module cached on its own.
    #[default]
    Hierarchical,
}

/// Options of [`estimate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstimateOptions {
    /// Where to cache results (`<cache_dir>/estimate/<key>.json`); `None` always runs Yosys.
    pub cache_dir: Option<PathBuf>,
    /// Show a spinner with elapsed time on stderr while Yosys runs.
    pub progress: bool,
    /// Flat or per distinct module.
    pub method: EstimateMethod,
}

impl Default for EstimateOptions {
    /// Caching in [`default_cache_dir`](crate::default_cache_dir), no progress display,
    /// [`EstimateMethod::Hierarchical`].
    fn default() -> Self {
        EstimateOptions {
            cache_dir: Some(crate::cache::default_cache_dir()),
            progress: false,
            method: EstimateMethod::default(),
        }
    }
}

/// The synthesis both methods run: Virtex-7 cells, the design flattened (or, per unit, the unit's
/// leaves inlined), no I/O or clock buffers.
///
/// `-widemux 8` maps multiplexers of 8 or more inputs onto MUXF7/MUXF8 by covering, as Vivado
/// does, before ABC's LUT mapping. Without it ABC maps the operand multiplexers with ties between
/// 7- and 8-input LUTs and two LUT6: two identical copies of one operand slot in one flat run came
/// out at 3,969 and 5,694 LUTs (512 bits). With it, copies in one run agree; across runs a flat
/// figure still moves by up to a tenth with changes elsewhere in the design, while the sum over
/// distinct modules moves by what changed (docs/architecture.md, "How the estimates are made").
///
/// `-nosrl` keeps chains of registers as flip-flops. The design is short of LUTs, not of
/// flip-flops, and Yosys takes a chain's last register into the SRL16E, whose clock-to-output
/// (1.47 ns) then starts the path to the logic the chain feeds.
pub(crate) const SYNTH_XILINX: &str = "synth_xilinx -family xc7 -flatten -widemux 8 -nosrl -noiopad -noclkbuf";

/// The Yosys script for a top module.
fn script(top: &str) -> String {
    format!(
        "read_verilog top.v; {SYNTH_XILINX} -top {top}; \
         tee -q -o report.json stat -json -tech xilinx; tee -q -o report.txt stat -tech xilinx"
    )
}

/// Estimates the Virtex-7 resources of module `top` of `verilog` with Yosys (see the module docs),
/// by `opts.method`.
pub fn estimate(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<ResourceEstimate> {
    if top.is_empty() || top.contains([';', ' ', '\n', '"']) {
        return Err(SimError::Spec(format!("unusable top module name {top:?}")));
    }
    match opts.method {
        EstimateMethod::Flat => estimate_flat(verilog, top, opts),
        EstimateMethod::Hierarchical => hierarchical::estimate(verilog, top, opts),
    }
}

/// [`EstimateMethod::Flat`].
pub(crate) fn estimate_flat(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<ResourceEstimate> {
    let version = yosys_version()?;
    let script = script(top);
    let key = content_key(&[ESTIMATE_FORMAT.as_bytes(), version.as_bytes(), script.as_bytes(), verilog.as_bytes()]);
    let tool = format!("{version}: {SYNTH_XILINX}; stat -tech xilinx (estimate, not Vivado)");
    let cache = opts.cache_dir.as_deref();
    let spinner =
        Spinner::new(opts.progress && !synth::is_cached(cache, "flat", &key), &format!("ecrt-sim: yosys `{top}`"));
    spinner.step("synth_xilinx -family xc7 -flatten");
    let job = Job { files: vec![("top.v", verilog)], script };
    let est =
        synth::cached(cache, "flat", &key, &job, |dir| parse_stat_json(&synth::read(dir, "report.json")?, top, &tool));
    match &est {
        Ok(_) => spinner.done(&format!("ecrt-sim: Yosys estimate of `{top}`")),
        Err(_) => spinner.clear(),
    }
    est
}

#[derive(Deserialize)]
struct StatModule {
    #[serde(default)]
    num_cells_by_type: BTreeMap<String, u64>,
    #[serde(default)]
    estimated_num_lc: Option<u64>,
}

#[derive(Deserialize)]
struct StatJson {
    #[serde(default)]
    modules: BTreeMap<String, StatModule>,
    design: Option<StatModule>,
}

/// Reads the output of `stat -json -tech xilinx`: the whole design's totals if present, else the
/// top module's.
fn parse_stat_json(json: &str, top: &str, tool: &str) -> Result<ResourceEstimate> {
    let err = |m: String| SimError::Report { tool: "yosys", message: m };
    let stat: StatJson = serde_json::from_str(json).map_err(|e| err(e.to_string()))?;
    let module = match stat.design {
        Some(d) => d,
        None => {
            let mut modules = stat.modules;
            modules
                .remove(&format!("\\{top}"))
                .or_else(|| modules.remove(top))
                .ok_or_else(|| err(format!("no statistics for module `{top}`")))?
        }
    };
    let mut e = ResourceEstimate::from_cells(module.num_cells_by_type, tool);
    e.estimated_lcs = module.estimated_num_lc.unwrap_or(0);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarizes_cells() {
        let json = r#"{ "creator": "Yosys 0.23", "modules": { "\\top": { "num_cells": 9,
            "num_cells_by_type": { "LUT2": 3, "LUT6": 2 } } },
            "design": { "num_cells": 20, "num_cells_by_type": { "CARRY4": 2, "DSP48E1": 1, "FDRE": 4, "FDSE": 1,
            "LUT2": 3, "LUT6": 2, "MUXF7": 1, "RAM64M": 2, "SRLC32E": 1, "RAMB18E1": 1, "RAMB36E1": 2 },
            "estimated_num_lc": 5 } }"#;
        let e = parse_stat_json(json, "top", "t").unwrap();
        assert_eq!((e.lut, e.ff, e.dsp48e1, e.carry4, e.lutram, e.estimated_lcs), (5, 5, 1, 2, 3, 5));
        assert_eq!(e.bram36, 2.5);
        assert_eq!(e.cells["MUXF7"], 1);
        let s = e.scaled(4);
        assert_eq!((s.lut, s.bram36, s.cells["MUXF7"]), (20, 10.0, 4));
        let sum = e.add(&s);
        assert_eq!((sum.lut, sum.dsp48e1, sum.bram36, sum.tool.as_str()), (25, 5, 12.5, "t"));
        let total: ResourceEstimate = vec![e.clone(), e.clone()].into_iter().sum();
        assert_eq!(total.ff, 10);
        assert!(e.to_string().contains("DSP48E1 1"));
    }

    #[test]
    fn falls_back_to_the_top_module() {
        let json = r#"{ "modules": { "\\top": { "num_cells_by_type": { "LUT3": 7 } } } }"#;
        assert_eq!(parse_stat_json(json, "top", "t").unwrap().lut, 7);
        assert!(parse_stat_json(json, "other", "t").is_err());
    }
}
