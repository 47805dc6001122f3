//! The longest register-to-register logic path, from Yosys' static timing analysis.
//!
//! [`logic_delay`] flattens a design with `synth_xilinx -family xc7 -flatten -abc9 -nosrl` (chains
//! of registers stay flip-flops, as the resource estimate keeps them), reads the
//! 7-series cell delays of Yosys' Xilinx cell library (`read_verilog -lib -specify
//! +/xilinx/cells_sim.v`) and runs `sta`. The figure is the latest arrival time in the design:
//! clock-to-output of the launching register, the cell delays along the path and the capturing
//! cell's setup time. **No routing and no clock skew are in it**: on a 7-series part routing
//! typically adds as much again or more, so treat the figure as a lower bound on the clock
//! period, useful to compare variants and to find the path to work on.
//!
//! `sta` only sees paths inside one module, so the design must be flattened; the paths of this
//! design do not depend on the key width, so the caller gives it a small configuration.
//!
//! **Paths through LUT RAM and shift registers.** Two things kept Yosys 0.23's `sta` from timing
//! them, both seen on small designs (RAM64M, RAM32M, SRL16E, FDCE; the `timing` integration
//! tests keep the RAM64M ones):
//! - `synth_xilinx -abc9` leaves behind, for every cell type ABC9 treats as a box and that has
//!   parameters (those four, and RAM32X1D, RAM64X1D, RAM128X1D, the other SRLs, FDPE), a derived
//!   module `$paramod…` with its ports only. `sta` looks each cell up by that derived name, finds no
//!   arcs ("Module 'RAM64M' has no timing arcs!") and ignores the cell: a path ended at its
//!   inputs without a setup time, and none started at its outputs. The script deletes the derived
//!   modules after reading the cell library again, so `sta` derives them afresh with their
//!   specify blocks.
//! - The library's RAM64M has no arc from ADDRx\[5\] to DOx: such a path ended at the RAM
//!   ("Critical-path does not terminate in a recognised endpoint"). `timing/lutram_arcs.v`
//!   replaces the library's RAM64M with its own arcs plus that one, 127 ps, the value
//!   `cells_sim.v` gives the same LUT input (A6) of RAM64X1D and LUT6.
//!
//! With both, a RAM64M is timed as the library describes it: ADDRx → DOx (asynchronous read),
//! setup of DIx, WE and the write address ADDRD before WCLK, and WCLK → DOx (1.15–1.16 ns),
//! whose condition (`if (WE)`) `sta` ignores, so every DOx starts a path at that time whether or
//! not the design ever reads what it just wrote, as Vivado times it too. The library's numbers are
//! prjxray-db's Artix-7 ones, not the Virtex-7 data sheet's. The default configuration's 512-bit
//! core had the same longest path (4.98 ns) before and after: its RAM64M paths are shorter.
//!
//! **Block RAM output registers.** A flip-flop that only takes a block RAM's read data is packed
//! into the RAM's output register before `sta`, as Vivado's synthesis packs it and Yosys does not
//! ([`bram_pack`]): the synthesized netlist is written out (`write_json`), packed, read back and
//! timed, the read at 0.88 ns instead of 2.45 ns and the paths after it from the RAM.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cache::content_key;
use crate::error::{Result, SimError};
use crate::progress::Spinner;
use crate::synth::{self, Job};
use crate::toolchain::yosys_version;
use crate::EstimateOptions;

/// Bump when the script or the parsing changes: part of the cache key.
const TIMING_FORMAT: &str = "ecrt-sim timing 4";

mod bram_pack;

/// One step of the critical path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathStep {
    /// The cell's instance name in the flattened netlist (Yosys' `$auto$…` names for cells it made).
    pub cell: String,
    /// Its type: `FDRE`, `LUT6`, `CARRY4`, `DSP48E1`, …
    #[serde(rename = "type")]
    pub cell_type: String,
    /// The timing arc through it (`C->Q`, `I0->O`, `A->P`), or the capturing input alone at the end.
    pub pins: String,
    /// Arrival time at the cell's output (at the end: including the setup time), in ns.
    pub arrival_ns: f64,
}

/// The longest register-to-register path of a design, in logic delay only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingEstimate {
    /// The latest arrival time, in ns: clock to output, cells and setup, without routing.
    pub logic_delay_ns: f64,
    /// The path, from the launching register to the capturing cell.
    pub critical_path: Vec<PathStep>,
    /// Which tool and script produced it.
    pub tool: String,
    /// How many block RAMs had a flip-flop packed into their output register.
    #[serde(default)]
    pub packed_block_rams: usize,
}

impl std::fmt::Display for TimingEstimate {
    /// `6.26 ns logic delay: FDRE → DSP48E1 → CARRY4 ×5 → … (Yosys sta, no routing)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2} ns logic delay: {} (Yosys sta, no routing)", self.logic_delay_ns, self.path_summary())
    }
}

impl TimingEstimate {
    /// The path's cell types, runs of the same type collapsed: `FDRE → DSP48E1 → CARRY4 ×5 → LUT6`.
    pub fn path_summary(&self) -> String {
        let mut parts: Vec<(String, usize)> = Vec::new();
        for step in &self.critical_path {
            match parts.last_mut() {
                Some((t, n)) if *t == step.cell_type => *n += 1,
                _ => parts.push((step.cell_type.clone(), 1)),
            }
        }
        parts.into_iter().map(|(t, n)| if n > 1 { format!("{t} ×{n}") } else { t }).collect::<Vec<_>>().join(" → ")
    }
}

/// Arcs the cell library lacks (see the module docs), read after it.
const LUTRAM_ARCS: &str = include_str!("timing/lutram_arcs.v");
/// The block RAMs with their output register in use ([`bram_pack`]).
const BRAM_ARCS: &str = include_str!("timing/bram_arcs.v");

/// The synthesis, its netlist written for [`bram_pack`].
fn synth_script(top: &str) -> String {
    format!(
        "read_verilog top.v; synth_xilinx -family xc7 -top {top} -flatten -abc9 -nosrl -noiopad -noclkbuf; \
         write_json synth.json"
    )
}

/// The packed netlist timed: the cell library with its specify blocks and the missing arcs, and no
/// derived cell modules left from ABC9 (they have no arcs).
const STA_SCRIPT: &str = "read_json packed.json; read_verilog -lib -specify +/xilinx/cells_sim.v; \
     read_verilog -lib -specify lutram_arcs.v; read_verilog -lib -specify bram_arcs.v; delete =$paramod*; \
     tee -q -o sta.txt sta";

/// The longest register-to-register logic delay of `top` in `verilog` (see the module docs),
/// cached by content in `opts.cache_dir` (`opts.method` does not apply: the run is always flat).
pub fn logic_delay(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<TimingEstimate> {
    if top.is_empty() || top.contains([';', ' ', '\n', '"']) {
        return Err(SimError::Spec(format!("unusable top module name {top:?}")));
    }
    let version = yosys_version()?;
    let script = synth_script(top);
    let key = content_key(&[
        TIMING_FORMAT.as_bytes(),
        version.as_bytes(),
        script.as_bytes(),
        STA_SCRIPT.as_bytes(),
        LUTRAM_ARCS.as_bytes(),
        BRAM_ARCS.as_bytes(),
        verilog.as_bytes(),
    ]);
    let cache = opts.cache_dir.as_deref();
    let spinner =
        Spinner::new(opts.progress && !synth::is_cached(cache, "timing", &key), &format!("ecrt-sim: yosys `{top}`"));
    spinner.step("synth_xilinx -flatten -abc9; block RAM output registers; sta");
    let tool = format!(
        "{version}: synth_xilinx -family xc7 -flatten -abc9 -nosrl; block RAM output registers packed; sta with \
         cells_sim.v delays and RAM64M's ADDR[5] arcs (no routing)"
    );
    let job =
        Job { files: vec![("top.v", verilog), ("lutram_arcs.v", LUTRAM_ARCS), ("bram_arcs.v", BRAM_ARCS)], script };
    let r = synth::cached(cache, "timing", &key, &job, |dir| {
        let packed_block_rams = pack_netlist(dir, top)?;
        synth::yosys(dir, STA_SCRIPT)?;
        Ok(TimingEstimate { packed_block_rams, ..parse_sta(&synth::read(dir, "sta.txt")?, &tool)? })
    });
    match &r {
        Ok(_) => spinner.done(&format!("ecrt-sim: Yosys timing of `{top}`")),
        Err(_) => spinner.clear(),
    }
    r
}

/// `synth.json` packed ([`bram_pack`]) into `packed.json`; how many block RAMs it packed.
fn pack_netlist(dir: &std::path::Path, top: &str) -> Result<usize> {
    let err = |m: String| SimError::Report { tool: "yosys write_json", message: m };
    let text = synth::read(dir, "synth.json")?;
    let mut netlist: Value = serde_json::from_str(&text).map_err(|e| err(format!("synth.json: {e}")))?;
    drop(text);
    let packed = bram_pack::pack(&mut netlist, top).map_err(err)?;
    let path = dir.join("packed.json");
    let file = std::fs::File::create(&path).map_err(|e| SimError::io(format!("creating {}", path.display()), e))?;
    serde_json::to_writer(std::io::BufWriter::new(file), &netlist).map_err(|e| err(format!("packed.json: {e}")))?;
    Ok(packed)
}

/// Reads `sta`'s report: `Latest arrival time in 'top' is 6262:`, then the path from its end back
/// to its start, one line per cell (`  6262 name (DSP48E1.B)`, `  303 name (FDRE.C->Q)`) each
/// followed by a line naming the net, the start a `(<primary input>)` line for the clock. Times are
/// in ps.
pub(crate) fn parse_sta(text: &str, tool: &str) -> Result<TimingEstimate> {
    let err = |m: String| SimError::Report { tool: "yosys sta", message: m };
    let mut lines = text.lines().skip_while(|l| !l.trim_start().starts_with("Latest arrival time in"));
    let head = lines.next().ok_or_else(|| err("no `Latest arrival time` line in its report".into()))?;
    let latest: f64 = head
        .trim_end()
        .trim_end_matches(':')
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| err(format!("cannot read the arrival time in {head:?}")))?;
    let mut path = Vec::new();
    for line in lines {
        let l = line.trim();
        if l.is_empty() || l.starts_with("Arrival histogram") {
            break;
        }
        let Some((time, rest)) = l.split_once(char::is_whitespace) else { continue };
        let Ok(ps) = time.parse::<f64>() else { continue }; // a net name
        let rest = rest.trim();
        if rest.ends_with("(<primary input>)") || rest.ends_with("(<unknown>)") {
            continue;
        }
        let (cell, arc) = rest
            .rsplit_once(" (")
            .and_then(|(c, a)| Some((c.trim(), a.strip_suffix(')')?)))
            .ok_or_else(|| err(format!("cannot read the path step {l:?}")))?;
        let (cell_type, pins) = arc.split_once('.').unwrap_or((arc, ""));
        path.push(PathStep {
            cell: cell.to_owned(),
            cell_type: cell_type.to_owned(),
            pins: pins.to_owned(),
            arrival_ns: ps / 1000.0,
        });
    }
    if path.is_empty() {
        return Err(err("the critical path lists no cells".into()));
    }
    path.reverse();
    Ok(TimingEstimate {
        logic_delay_ns: latest / 1000.0,
        critical_path: path,
        tool: tool.to_owned(),
        packed_block_rams: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STA: &str = r"
4. Executing STA pass (static timing analysis).
Latest arrival time in 'top' is 6262:
    6262 $auto$xilinx_dsp.cc:301:xilinx_dsp_pack$1234 (DSP48E1.B[3])
           $abc$5678$auto$blifparse.cc:386:parse_blif$9 [3]
    4916 $abc$5678$auto$blifparse.cc:386:parse_blif$10 (LUT6.I2->O)
           $abc$5678$new_n11_
    3300 $auto$alumacc.cc:485:replace_alu$12.slice[4].carry4 (CARRY4.CI->CO[3])
           $auto$alumacc.cc:485:replace_alu$12.O [19]
    3100 $auto$alumacc.cc:485:replace_alu$12.slice[0].carry4 (CARRY4.S[1]->CO[3])
           $auto$alumacc.cc:485:replace_alu$12.CO [3]
    2400 \top$cores$0$engine$multiplier$cols$0.stage1 (DSP48E1.CLK->P[18])
           \stage1$p [18]
       0   \clock (<primary input>)

Arrival histogram:
 legend: * represents 1 endpoint(s)
(  6262,   5900] |** 
";

    #[test]
    fn reads_the_critical_path() {
        let t = parse_sta(STA, "t").unwrap();
        assert_eq!(t.logic_delay_ns, 6.262);
        let types: Vec<&str> = t.critical_path.iter().map(|s| s.cell_type.as_str()).collect();
        assert_eq!(types, ["DSP48E1", "CARRY4", "CARRY4", "LUT6", "DSP48E1"]);
        assert_eq!(t.critical_path[0].cell, r"\top$cores$0$engine$multiplier$cols$0.stage1");
        assert_eq!(t.critical_path[0].pins, "CLK->P[18]");
        assert_eq!(t.critical_path[0].arrival_ns, 2.4);
        assert_eq!(t.critical_path[4].pins, "B[3]");
        assert_eq!(t.critical_path[2].cell, "$auto$alumacc.cc:485:replace_alu$12.slice[4].carry4");
        assert_eq!(t.path_summary(), "DSP48E1 → CARRY4 ×2 → LUT6 → DSP48E1");
        assert!(t.to_string().starts_with("6.26 ns logic delay: DSP48E1 → CARRY4 ×2"));
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["critical_path"][1]["type"], "CARRY4");
    }

    #[test]
    fn rejects_reports_without_a_path() {
        assert!(parse_sta("nothing here", "t").is_err());
        assert!(parse_sta("Latest arrival time in 'top' is x:\n", "t").is_err());
        assert!(parse_sta("Latest arrival time in 'top' is 0:\n\n", "t").is_err());
    }
}
