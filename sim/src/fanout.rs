//! The nets with the highest fanout that a register or a DSP drives, after Yosys' Xilinx
//! 7-series synthesis.
//!
//! Routing delay on a 7-series part grows with fanout, and a control register that fans out to
//! every limb of a wide datapath is the first thing placement stretches. [`fanout`] counts, for
//! every net a sequential cell drives (flip-flops `FD*`, latches `LD*`, shift registers `SRL*`,
//! LUT and block RAM `RAM*`, `DSP48E1`), the cell input pins it reaches: LUT inputs, flip-flop
//! D/CE/R/S pins, MUXF7/F8 selects, carry-chain and DSP inputs. Clock pins and nets that reach a
//! clock pin are left out, and so are constants and the top module's output ports (they are not
//! cell pins). The nets that logic drives (LUTs, MUXF7/F8, carry chains) are listed apart.
//!
//! Two ways, by [`EstimateOptions::method`]:
//! - **Composed** ([`EstimateMethod::Hierarchical`], the default): from the netlists of the
//!   hierarchical resource estimate's units, composed over the instance tree ([`compose`]): no
//!   Yosys run of its own, so with the resource estimate it costs seconds. What it loses against
//!   the flat run is in [`compose`]'s docs.
//! - **Flat** ([`EstimateMethod::Flat`]): the design flattened as the flat resource estimate does
//!   (`synth_xilinx -family xc7 -flatten -widemux 8`, plain ABC LUT mapping: `-abc9` is slower
//!   and changes only what timing needs), `write_json`, and the loads counted in the one netlist
//!   (about ten minutes and 2.4 GB for the one-core 2048-bit accelerator). The reference the
//!   composition is checked against.
//!
//! **One change to the flat synthesis, for the full-width core.** Unchanged, the flat synthesis
//! of the one-core 2048-bit accelerator had not finished after 13.5 minutes (1.65 GB): the fine
//! stage's `opt -full` was on its 23rd round, about 17 s each, every round finding a few more
//! flip-flop bits constant, one register stage further down a chain each time.
//! The script runs `synth_xilinx`'s stages itself and does that stage's `opt -full` without its
//! flip-flop pass (`-noff`), then one `opt_dff` round: the enables and resets that round folds
//! into flip-flops are folded as before; constant flip-flops further down such chains stay, with
//! their loads (Vivado removes them). The units of the composed figure are small enough for the
//! unchanged `synth_xilinx`.
//!
//! What Vivado would do differently, so the figures are **an estimate of the pressure, not of
//! Vivado's netlist**:
//! - Vivado replicates high-fanout registers during synthesis (`MAX_FANOUT`, `-fanout_limit`)
//!   and again in `phys_opt_design`; Yosys replicates nothing, so the copies counted are the
//!   design's own. A net of a few thousand loads here is one Vivado would most likely split, at
//!   the cost of registers and, for control registers, of the logic in front of them.
//! - LUTs are mapped by ABC, which may absorb a gate that a register feeds into each of the LUTs
//!   after it (a register behind an AND that feeds 2,048 bits then reaches 2,048 LUTs), or
//!   merge several of its loads into one LUT. Vivado's mapper makes its own choices; the count is
//!   of this mapping's LUT pins.
//! - Yosys folds some enables and resets into flip-flop CE/R pins (`xilinx_dffopt`) where
//!   Vivado might keep a LUT, or the other way round; both are loads here.
//! - Nothing is placed: loads in one slice still count one each, and the figure says nothing
//!   about the distance they span. Nor does Vivado's `opt_design` step in (it may put a very
//!   high-fanout non-clock net on a global buffer).
//! - Only nets a sequential cell drives are ranked: a control signal decoded in a LUT from a
//!   state register and then fanned out is that LUT's net (its register has the few loads of the
//!   decoder, unless ABC copies the decoder into every LUT after it). Those nets are listed
//!   apart, in `logic_nets`, unranked.
//! - The design replicates its own wide selects (`ecrt_hdl::fanout`, kept apart from merging);
//!   Yosys replicates nothing.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::cache::content_key;
use crate::error::{Result, SimError};
use crate::estimate::{hierarchical, SYNTH_XILINX};
use crate::progress::Spinner;
use crate::synth::{self, Job};
use crate::toolchain::yosys_version;
use crate::{EstimateMethod, EstimateOptions, ResourceEstimate};

pub(crate) mod compose;

/// Bump when the script or the parsing changes: part of the flat run's cache key, and named in
/// every report's `tool`.
const FANOUT_FORMAT: &str = "ecrt-sim fanout 4";

/// How many nets [`fanout`] reports, highest first.
pub const FANOUT_NETS: usize = 20;

/// One net, its driver, and how many cell inputs it reaches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetFanout {
    /// The net's name in the flattened netlist: the register's own output when it has one
    /// (rust-hdl's `….q`), else its shortest public alias, else the driving cell and pin.
    pub net: String,
    /// The driving cell's instance name (Yosys' `$auto$…` names for the flip-flops it made).
    pub driver: String,
    /// The driving cell's type: `FDRE`, `FDSE`, `DSP48E1`, `RAM64M`, …
    pub driver_type: String,
    /// Cell input pins the net reaches (clock pins not counted).
    pub loads: u64,
}

/// The nets with the most loads that registers and DSPs drive (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanoutReport {
    /// At most [`FANOUT_NETS`] nets with loads, most loads first (ties by name).
    pub nets: Vec<NetFanout>,
    /// How many nets with loads sequential cells drive in the design (the population `nets` is the
    /// top of). A net with none is left out: a flat run keeps some (a cascaded DSP's unused `P`
    /// under a public name) that a unit's run removes.
    pub driven_nets: u64,
    /// Which tool and script produced it.
    pub tool: String,
    /// The same for nets that logic drives (LUTs, MUXF7/F8, carry chains): a select decoded in a
    /// LUT and fanned out from there reaches its loads over that LUT's net, which replicating
    /// registers does not bound. Not the ranked figure (Vivado replicates such drivers in
    /// `phys_opt_design`), listed so that the routing pressure is in view. Empty in reports made
    /// before it was counted.
    #[serde(default)]
    pub logic_nets: Vec<NetFanout>,
}

impl FanoutReport {
    /// The highest fanout, 0 when no register drives any load.
    pub fn max_fanout(&self) -> u64 {
        self.nets.first().map_or(0, |n| n.loads)
    }
}

impl fmt::Display for FanoutReport {
    /// One line per net: loads, driver type, net name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "highest fanout of {} register/DSP-driven nets ({}):", self.driven_nets, self.tool)?;
        for n in &self.nets {
            writeln!(f, "  {:>7}  {:<8} {}", n.loads, n.driver_type, n.net)?;
        }
        if !self.logic_nets.is_empty() {
            writeln!(f, "highest fanout of logic-driven nets:")?;
            for n in &self.logic_nets {
                writeln!(f, "  {:>7}  {:<8} {}", n.loads, n.driver_type, n.net)?;
            }
        }
        Ok(())
    }
}

/// The Yosys script: `synth_xilinx` with [`SYNTH_XILINX`]'s options up to its fine stage, that
/// stage as `synth_xilinx -widemux 8` runs it in Yosys 0.23 (seen with `echo on`) but with a
/// single round of `opt_dff` (see the module docs), then the rest of `synth_xilinx`.
fn script(top: &str) -> String {
    let synth = format!("{SYNTH_XILINX} -top {top}");
    format!(
        "read_verilog top.v; {synth} -run :fine; \
         simplemap t:$mux; muxcover -nodecode -mux2=100 -mux8=699 -mux16=700; \
         opt -full -noff; opt_dff; opt_clean; \
         techmap -map +/techmap.v -D LUT_SIZE=6 -D MIN_MUX_INPUTS=8 -map +/xilinx/mux_map.v \
         -map +/xilinx/arith_map.v; opt -fast -noff; \
         {synth} -run map_cells:check; write_json netlist.json"
    )
}

/// The register- and DSP-driven nets of `top` in `verilog` with the most loads, and apart from
/// them the logic-driven ones (see the module docs): composed from the hierarchical estimate's
/// units, or by `opts.method` from a flat run, cached by content in `opts.cache_dir`.
pub fn fanout(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<FanoutReport> {
    if top.is_empty() || top.contains([';', ' ', '\n', '"']) {
        return Err(SimError::Spec(format!("unusable top module name {top:?}")));
    }
    match opts.method {
        EstimateMethod::Hierarchical => Ok(composed(&hierarchical::synthesize(verilog, top, opts)?)?),
        EstimateMethod::Flat => fanout_flat(verilog, top, opts),
    }
}

/// The composed fanout of units already synthesized.
pub(crate) fn composed(s: &hierarchical::Synthesized) -> Result<FanoutReport> {
    let units: Vec<(&str, &compose::UnitNets)> =
        s.units.iter().zip(&s.results).map(|(u, r)| (u.module.as_str(), &r.nets)).collect();
    let tool = format!(
        "{}: {SYNTH_XILINX} per distinct module ({} units), loads composed over the instance tree \
         ({FANOUT_FORMAT}; Yosys replicates nothing)",
        s.version,
        s.units.len()
    );
    compose::compose(&s.dedup, &units, FANOUT_NETS, &tool)
}

/// [`EstimateMethod::Flat`]: one flat synthesis, its netlist counted.
fn fanout_flat(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<FanoutReport> {
    let version = yosys_version()?;
    let script = script(top);
    let key = content_key(&[FANOUT_FORMAT.as_bytes(), version.as_bytes(), script.as_bytes(), verilog.as_bytes()]);
    let cache = opts.cache_dir.as_deref();
    let spinner =
        Spinner::new(opts.progress && !synth::is_cached(cache, "fanout", &key), &format!("ecrt-sim: yosys `{top}`"));
    spinner.step("synth_xilinx -flatten; write_json; counting loads");
    let tool = format!(
        "{version}: {SYNTH_XILINX}, one opt_dff round in the fine stage; loads of sequential cells' nets \
         in the flat netlist ({FANOUT_FORMAT}; Yosys replicates nothing)"
    );
    let job = Job { files: vec![("top.v", verilog)], script };
    let r = synth::cached(cache, "fanout", &key, &job, |dir| {
        let path = dir.join("netlist.json");
        let file = std::fs::File::open(&path).map_err(|e| SimError::io(format!("reading {}", path.display()), e))?;
        parse_netlist(std::io::BufReader::with_capacity(1 << 20, file), top, FANOUT_NETS, &tool)
    });
    match &r {
        Ok(_) => spinner.done(&format!("ecrt-sim: Yosys fanout of `{top}`")),
        Err(_) => spinner.clear(),
    }
    r
}

/// Whether a cell type holds state: its outputs start register-to-register paths.
fn is_sequential(cell_type: &str) -> bool {
    ["FD", "LD", "SRL", "RAM", "DSP48", "FIFO"].iter().any(|p| cell_type.starts_with(p))
}

/// Whether a pin of a 7-series primitive is a clock input.
fn is_clock_pin(pin: &str) -> bool {
    matches!(pin, "C" | "CLK" | "WCLK" | "CLKARDCLK" | "CLKBWRCLK" | "RDCLK" | "WRCLK" | "CLKA" | "CLKB")
}

/// Reads `write_json`'s netlist of `top` (as a stream: the other modules are skipped unread, and
/// of the top only cell types, pin directions, connections and public net names are kept) and
/// ranks the nets sequential cells drive by their loads, keeping the first `n`.
pub(crate) fn parse_netlist(reader: impl std::io::Read, top: &str, n: usize, tool: &str) -> Result<FanoutReport> {
    let err = |m: String| SimError::Report { tool: "yosys write_json", message: m };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let design = DesignSeed { top }.deserialize(&mut de).map_err(|e| err(e.to_string()))?;
    let module = design.ok_or_else(|| err(format!("no module `{top}` in the netlist")))?;
    Ok(module.report(n, tool))
}

/// What is kept of the top module.
#[derive(Default)]
struct Counts {
    /// Input pins per net bit (index: Yosys' bit number).
    loads: Vec<u64>,
    /// Bits that reach a clock pin.
    clocks: Vec<u64>,
    /// Bits a sequential cell drives: bit → (instance, type, pin with its index).
    drivers: HashMap<u64, (String, String, String)>,
    /// Bits other cells drive, as `drivers`.
    logic_drivers: HashMap<u64, (String, String, String)>,
    /// The best public name of each bit seen so far.
    names: HashMap<u64, String>,
}

impl Counts {
    fn add_load(&mut self, bit: u64) {
        let i = bit as usize;
        if self.loads.len() <= i {
            self.loads.resize(i + 1, 0);
        }
        self.loads[i] += 1;
    }

    fn report(mut self, n: usize, tool: &str) -> FanoutReport {
        self.clocks.sort_unstable();
        let nets = self.ranked(&self.drivers, n);
        let logic_nets = self.ranked(&self.logic_drivers, n);
        let load = |b: u64| self.loads.get(b as usize).copied().unwrap_or(0);
        let driven_nets =
            self.drivers.keys().filter(|&&b| load(b) > 0 && self.clocks.binary_search(&b).is_err()).count() as u64;
        FanoutReport { nets, driven_nets, tool: tool.to_owned(), logic_nets }
    }

    /// The `n` bits of `drivers` with the most loads (clock nets left out), most first.
    fn ranked(&self, drivers: &HashMap<u64, (String, String, String)>, n: usize) -> Vec<NetFanout> {
        let load = |b: u64| self.loads.get(b as usize).copied().unwrap_or(0);
        let mut nets: Vec<NetFanout> = drivers
            .iter()
            .filter(|&(&b, _)| load(b) > 0 && self.clocks.binary_search(&b).is_err())
            .map(|(&b, (cell, ty, pin))| NetFanout {
                net: self.names.get(&b).cloned().unwrap_or_else(|| format!("{cell}.{pin}")),
                driver: cell.clone(),
                driver_type: ty.clone(),
                loads: load(b),
            })
            .collect();
        nets.sort_by(|a, b| b.loads.cmp(&a.loads).then_with(|| a.net.cmp(&b.net)));
        nets.truncate(n);
        nets
    }
}

/// Ranks aliases of one net: rust-hdl's register outputs (`….q`) first, then shorter names.
fn better_name(new: &str, old: &str) -> bool {
    let rank = |s: &str| (!s.split('[').next().unwrap_or(s).ends_with(".q"), s.len(), s.to_owned());
    rank(new) < rank(old)
}

/// `{ "modules": { name: module, … } }`: only `top` is read.
struct DesignSeed<'a> {
    top: &'a str,
}

impl<'de> DeserializeSeed<'de> for DesignSeed<'_> {
    type Value = Option<Counts>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DesignSeed<'_> {
    type Value = Option<Counts>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Yosys JSON netlist")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "modules" {
                found = map.next_value_seed(ModulesSeed { top: self.top })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

struct ModulesSeed<'a> {
    top: &'a str,
}

impl<'de> DeserializeSeed<'de> for ModulesSeed<'_> {
    type Value = Option<Counts>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ModulesSeed<'_> {
    type Value = Option<Counts>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of modules")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.top {
                let mut counts = Counts::default();
                map.next_value_seed(ModuleSeed(&mut counts))?;
                found = Some(counts);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// One module: its `cells` and `netnames`, folded into [`Counts`] as they stream by.
struct ModuleSeed<'c>(&'c mut Counts);

impl<'de> DeserializeSeed<'de> for ModuleSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ModuleSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a module")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "cells" => map.next_value_seed(EachSeed(&mut *self.0, add_cell))?,
                "netnames" => map.next_value_seed(EachSeed(&mut *self.0, add_netname))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A map whose entries are deserialized as `T` one at a time and handed to `f`.
struct EachSeed<'c, T>(&'c mut Counts, fn(&mut Counts, String, T));

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for EachSeed<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for EachSeed<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of cells or net names")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        while let Some(name) = map.next_key::<String>()? {
            let value: T = map.next_value()?;
            (self.1)(self.0, name, value);
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct Cell {
    #[serde(rename = "type")]
    cell_type: String,
    #[serde(default)]
    port_directions: HashMap<String, String>,
    #[serde(default)]
    connections: HashMap<String, Vec<Bit>>,
}

#[derive(Deserialize)]
struct NetName {
    #[serde(default)]
    hide_name: u8,
    bits: Vec<Bit>,
    #[serde(default)]
    offset: i64,
    #[serde(default)]
    upto: u8,
}

fn add_cell(c: &mut Counts, name: String, cell: Cell) {
    let sequential = is_sequential(&cell.cell_type);
    for (pin, bits) in &cell.connections {
        match cell.port_directions.get(pin).map(String::as_str) {
            Some("input") => {
                for b in bits.iter().filter_map(|b| b.0) {
                    if is_clock_pin(pin) {
                        c.clocks.push(b);
                    } else {
                        c.add_load(b);
                    }
                }
            }
            Some("output") => {
                let drivers = if sequential { &mut c.drivers } else { &mut c.logic_drivers };
                for (i, b) in bits.iter().enumerate() {
                    if let Some(b) = b.0 {
                        let pin = if bits.len() > 1 { format!("{pin}[{i}]") } else { pin.clone() };
                        drivers.insert(b, (name.clone(), cell.cell_type.clone(), pin));
                    }
                }
            }
            _ => {}
        }
    }
}

fn add_netname(c: &mut Counts, name: String, net: NetName) {
    if net.hide_name != 0 {
        return;
    }
    let width = net.bits.len();
    for (i, b) in net.bits.iter().enumerate() {
        let Some(b) = b.0 else { continue };
        let index = if net.upto != 0 { net.offset + (width - 1 - i) as i64 } else { net.offset + i as i64 };
        let full = if width > 1 || net.offset != 0 { format!("{name}[{index}]") } else { name.clone() };
        match c.names.get(&b) {
            Some(old) if !better_name(&full, old) => {}
            _ => {
                c.names.insert(b, full);
            }
        }
    }
}

/// One bit of a connection: a net number, or a constant (`"0"`, `"1"`, `"x"`, `"z"`) as `None`.
struct Bit(Option<u64>);

impl<'de> Deserialize<'de> for Bit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Bit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a bit number or a constant")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Bit, E> {
                Ok(Bit(Some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Bit, E> {
                Ok(Bit(u64::try_from(v).ok()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<Bit, E> {
                Ok(Bit(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> std::result::Result<Bit, A::Error> {
                Err(de::Error::custom("a list where a bit was expected"))
            }
        }
        d.deserialize_any(V)
    }
}

/// The resources of `top` in `verilog` and its highest-fanout nets ([`crate::fanout()`]), both by
/// `opts.method`: hierarchically, the fanout is composed from the same units' runs; flat, the two
/// flat runs go side by side.
pub fn estimate_with_fanout(
    verilog: &str,
    top: &str,
    opts: &EstimateOptions,
) -> Result<(ResourceEstimate, FanoutReport)> {
    if top.is_empty() || top.contains([';', ' ', '\n', '"']) {
        return Err(SimError::Spec(format!("unusable top module name {top:?}")));
    }
    match opts.method {
        EstimateMethod::Hierarchical => {
            let units = hierarchical::synthesize(verilog, top, opts)?;
            Ok((units.resources(), composed(&units)?))
        }
        EstimateMethod::Flat => std::thread::scope(|s| {
            let fanout = s.spawn(|| crate::fanout(verilog, top, opts));
            let resources = crate::estimate::estimate_flat(verilog, top, opts);
            let fanout = fanout
                .join()
                .unwrap_or_else(|_| Err(SimError::Report { tool: "yosys", message: "the fanout run panicked".into() }));
            Ok((resources?, fanout?))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register `ctl` (its wrapper's `.q` alias and a longer one) driving two LUTs and a
    /// flip-flop's CE, a DSP's P[0] driving one LUT, a register driving only a top-level output,
    /// a flip-flop clocked by a register (a derived clock: left out), and a library module that
    /// must be skipped.
    const NETLIST: &str = r#"{
      "creator": "Yosys 0.23",
      "modules": {
        "LUT2": { "attributes": { "blackbox": "1" }, "ports": { "O": { "direction": "output", "bits": [2] } },
                  "cells": {}, "netnames": {} },
        "top": {
          "attributes": { "top": "1" },
          "ports": { "clock": { "direction": "input", "bits": [2] }, "o": { "direction": "output", "bits": [7] } },
          "cells": {
            "$auto$ff.cc:266:slice$1": { "hide_name": 1, "type": "FDRE", "parameters": { "INIT": "0" },
              "attributes": { "src": "x" },
              "port_directions": { "C": "input", "CE": "input", "D": "input", "Q": "output", "R": "input" },
              "connections": { "C": [2], "CE": ["1"], "D": [3], "Q": [4], "R": ["0"] } },
            "lut_a": { "hide_name": 0, "type": "LUT2",
              "port_directions": { "I0": "input", "I1": "input", "O": "output" },
              "connections": { "I0": [4], "I1": [5], "O": [6] } },
            "lut_b": { "hide_name": 0, "type": "LUT3",
              "port_directions": { "I0": "input", "I1": "input", "I2": "input", "O": "output" },
              "connections": { "I0": [4], "I1": [8], "I2": [4], "O": [9] } },
            "ff_b": { "hide_name": 0, "type": "FDSE",
              "port_directions": { "C": "input", "CE": "input", "D": "input", "Q": "output", "S": "input" },
              "connections": { "C": [2], "CE": [4], "D": [9], "Q": [7], "S": ["0"] } },
            "dsp": { "hide_name": 0, "type": "DSP48E1",
              "port_directions": { "CLK": "input", "A": "input", "P": "output" },
              "connections": { "CLK": [2], "A": [6, "0"], "P": [8, 10] } },
            "ff_clk": { "hide_name": 0, "type": "FDRE",
              "port_directions": { "C": "input", "D": "input", "Q": "output" },
              "connections": { "C": [7], "D": [10], "Q": [11] } }
          },
          "netnames": {
            "clock": { "hide_name": 0, "bits": [2], "attributes": {} },
            "$auto$ff.cc:266:slice$1.Q": { "hide_name": 1, "bits": [4], "attributes": {} },
            "cores$0.engine.some_longer_alias": { "hide_name": 0, "bits": [4], "attributes": {} },
            "cores$0.ctl$3.q": { "hide_name": 0, "bits": [4], "attributes": {} },
            "ctl": { "hide_name": 0, "bits": [4], "attributes": {} },
            "p": { "hide_name": 0, "bits": [8, 10], "offset": 4, "attributes": {} },
            "o": { "hide_name": 0, "bits": [7], "attributes": {} }
          }
        }
      }
    }"#;

    #[test]
    fn counts_loads_of_register_and_dsp_nets() {
        let r = parse_netlist(NETLIST.as_bytes(), "top", 20, "t").unwrap();
        let rows: Vec<(&str, &str, u64)> =
            r.nets.iter().map(|n| (n.net.as_str(), n.driver_type.as_str(), n.loads)).collect();
        // ctl: lut_a.I0, lut_b.I0, lut_b.I2, ff_b.CE; p[4]: lut_b.I1; o (ff_b.Q) only clocks ff_clk:
        // left out; p[5] reaches ff_clk.D; ff_clk.Q nothing (not a driven net either).
        assert_eq!(rows, [("cores$0.ctl$3.q", "FDRE", 4), ("p[4]", "DSP48E1", 1), ("p[5]", "DSP48E1", 1)]);
        assert_eq!(r.nets[0].driver, "$auto$ff.cc:266:slice$1");
        assert_eq!(r.driven_nets, 3);
        assert_eq!(r.max_fanout(), 4);
        // The LUTs' outputs: lut_a.O reaches the DSP's A[0], lut_b.O ff_b's D.
        let logic: Vec<(&str, &str, u64)> =
            r.logic_nets.iter().map(|n| (n.net.as_str(), n.driver_type.as_str(), n.loads)).collect();
        assert_eq!(logic, [("lut_a.O", "LUT2", 1), ("lut_b.O", "LUT3", 1)]);
        let top2 = parse_netlist(NETLIST.as_bytes(), "top", 2, "t").unwrap();
        assert_eq!(top2.nets.len(), 2);
        assert!(r.to_string().contains("      4  FDRE     cores$0.ctl$3.q"), "{r}");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["nets"][1]["driver_type"], "DSP48E1");
    }

    #[test]
    fn rejects_a_missing_top_or_a_broken_file() {
        assert!(parse_netlist(NETLIST.as_bytes(), "other", 20, "t").is_err());
        assert!(parse_netlist(&b"{ \"modules\": { \"top\": { \"cells\": [1] } } }"[..], "top", 20, "t").is_err());
        assert!(parse_netlist(&b"not json"[..], "top", 20, "t").is_err());
    }

    #[test]
    fn prefers_register_outputs_then_short_names() {
        assert!(better_name("a.b.q", "x"));
        assert!(better_name("a.q[3]", "b"));
        assert!(better_name("ab", "abc"));
        assert!(!better_name("abc", "ab"));
    }
}
