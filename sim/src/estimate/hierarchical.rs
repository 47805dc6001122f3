//! [`EstimateMethod::Hierarchical`](super::EstimateMethod::Hierarchical): each distinct module
//! synthesized once and summed over its instances.
//!
//! rust-hdl writes one module per instance, so a flat run synthesizes every copy of a column, a
//! slot or a register file again. Here the design is deduplicated by content (each module renamed,
//! bottom-up, to a hash of its body with its children renamed: see `hierarchy`), and every
//! distinct module that has children becomes a *unit*: its leaf children (flip-flop and memory
//! wrappers) inlined, as flattening would, so that clock enables, DSP pipeline registers and
//! LUT RAMs are inferred as in the flat run; its other children black boxes. Each unit is
//! synthesized out of context with the flat run's [`SYNTH_XILINX`] and its own
//! cells (the black boxes left out) count once per instance of it in the design.
//!
//! What that loses against the flat run: optimisation across unit boundaries. Constants an
//! instance receives are not propagated into it, logic behind outputs its parent leaves unused is
//! kept, and logic on either side of a boundary is not merged or mapped together (the operand
//! multiplexers of a slot and the multiplier's phase multiplexer after them, for instance, are
//! mapped separately). DSP48E1, LUT RAM and carry chains come out as in the flat run and flip-flops
//! within 3 %; the LUT count lands within the flat run's own movement, about a tenth either way,
//! as Yosys' LUT mapping of the wide operand multiplexers in one big run depends on everything
//! around them (measured on the accelerator, see docs/architecture.md; the `estimate_methods`
//! test holds the bounds).
//!
//! Each unit's result is cached by its own content, black boxes named by their interface, so a
//! change inside one block re-synthesizes that block only. Units run in parallel, largest first;
//! like every Yosys run of the process (a timing run beside them too), each takes a slot, one a
//! core (`ECRT_SIM_JOBS` overrides).
//!
//! Each unit's run also writes its netlist (`write_json`), of which the cache entry keeps the
//! nets' loads and connections: the fanout is composed from them over the instance tree
//! ([`crate::fanout`], `EstimateMethod::Hierarchical`), with no Yosys run of its own.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{EstimateOptions, ModuleResources, ResourceEstimate, StatJson, SYNTH_XILINX};
use crate::cache::content_key;
use crate::error::{Result, SimError};
use crate::fanout::compose::{parse_unit_netlist, UnitNets};
use crate::hierarchy::{Cut, Dedup, Design, Unit, UNIT_TOP};
use crate::progress::Spinner;
use crate::synth::{self, Job};
use crate::toolchain::yosys_version;

/// Bump when the script or the parsing changes: part of every unit's cache key.
const UNIT_FORMAT: &str = "ecrt-sim estimate unit 3";

/// The Yosys script of a unit: its cells, and its netlist for the fanout.
fn script(has_blackboxes: bool) -> String {
    format!(
        "{}read_verilog unit.v; {SYNTH_XILINX} -top {UNIT_TOP}; \
         tee -q -o report.json stat -json -tech xilinx; write_json netlist.json",
        if has_blackboxes { "read_verilog -lib blackboxes.v; " } else { "" }
    )
}

/// What a unit's run leaves in the cache: its own cells, and its nets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct UnitResult {
    pub resources: ResourceEstimate,
    pub nets: UnitNets,
}

/// Every unit of a design, synthesized or from the cache.
pub(crate) struct Synthesized {
    pub version: String,
    pub dedup: Dedup,
    pub units: Vec<Unit>,
    /// One per unit, in the same order.
    pub results: Vec<UnitResult>,
}

/// The unit's cache key.
fn key(version: &str, unit: &Unit) -> String {
    let script = script(!unit.blackboxes.is_empty());
    content_key(&[
        UNIT_FORMAT.as_bytes(),
        version.as_bytes(),
        script.as_bytes(),
        unit.verilog.as_bytes(),
        unit.blackboxes.as_bytes(),
    ])
}

/// Estimates `top` of `verilog` unit by unit (see the module docs).
pub(crate) fn estimate(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<ResourceEstimate> {
    Ok(synthesize(verilog, top, opts)?.resources())
}

/// Synthesizes (or finds in the cache) every unit of `top` in `verilog`.
pub(crate) fn synthesize(verilog: &str, top: &str, opts: &EstimateOptions) -> Result<Synthesized> {
    let version = yosys_version()?;
    let dedup = Design::parse(verilog)?.dedup(top)?;
    let units = dedup.units(Cut::EveryParent);
    let cache = opts.cache_dir.as_deref();
    let keys: Vec<String> = units.iter().map(|u| key(version, u)).collect();
    // The units to synthesize, largest first so that the longest run starts at once, then the
    // cached ones.
    let cached: Vec<bool> = keys.iter().map(|k| synth::is_cached(cache, "unit", k)).collect();
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&i| (cached[i], std::cmp::Reverse(units[i].verilog.len())));
    let todo = cached.iter().filter(|&&c| !c).count();
    let spinner = Spinner::new(opts.progress && todo > 0, &format!("ecrt-sim: yosys `{top}`"));
    let jobs = synth::jobs().min(units.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<UnitResult>>>> = Mutex::new((0..units.len()).map(|_| None).collect());
    let total = units.len();
    spinner.step(format!("{total} distinct modules, {todo} to synthesize (synth_xilinx -family xc7)"));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                // A Yosys slot first, then the largest unit left, so that a run beside the units
                // (a timing run) never holds the largest back; the cached units need no slot.
                let _slot = (next.load(Ordering::SeqCst) < todo).then(synth::yosys_slot);
                let n = next.fetch_add(1, Ordering::SeqCst);
                let Some(&i) = order.get(n) else { break };
                let unit = &units[i];
                let r = synth_unit(cache, &keys[i], unit);
                let failed = r.is_err();
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                let d = done.fetch_add(1, Ordering::SeqCst) + 1;
                spinner.step(format!("{d}/{total} distinct modules synthesized or cached"));
                if failed {
                    // Let the other workers finish their current unit, then stop.
                    next.store(order.len(), Ordering::SeqCst);
                }
            });
        }
    });
    let mut done_results = Vec::with_capacity(units.len());
    for r in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        match r {
            Some(Ok(r)) => done_results.push(r),
            Some(Err(e)) => {
                spinner.clear();
                return Err(e);
            }
            // Skipped after another unit failed: that failure is in the list too.
            None => {}
        }
    }
    if done_results.len() != units.len() {
        spinner.clear();
        return Err(SimError::Report { tool: "yosys", message: "a unit was not synthesized".into() });
    }
    spinner.done(&format!("ecrt-sim: Yosys estimate of `{top}` ({} units)", units.len()));
    Ok(Synthesized { version: version.to_owned(), dedup, units, results: done_results })
}

impl Synthesized {
    /// The units' cells summed over their instances, and where they go.
    pub fn resources(&self) -> ResourceEstimate {
        let mut total_est = ResourceEstimate::default();
        let mut by_module = Vec::with_capacity(self.units.len());
        for (unit, r) in self.units.iter().zip(&self.results) {
            let own = &r.resources;
            by_module.push(ModuleResources {
                module: self.dedup.modules[&unit.module]
                    .originals
                    .first()
                    .cloned()
                    .unwrap_or_else(|| unit.module.clone()),
                instances: unit.count,
                lut: own.lut,
                ff: own.ff,
                dsp48e1: own.dsp48e1,
                lutram: own.lutram,
                bram36: own.bram36,
            });
            total_est = total_est.add(&own.scaled(unit.count));
        }
        by_module.sort_by_key(|m| std::cmp::Reverse(m.lut * m.instances));
        total_est.by_module = by_module;
        let instances: u64 = self.dedup.counts.values().sum();
        total_est.tool = format!(
            "{}: {SYNTH_XILINX} per distinct module ({} of {} modules, {} units), summed over \
             instances; stat -tech xilinx (estimate, not Vivado)",
            self.version,
            self.dedup.modules.len(),
            instances,
            self.units.len()
        );
        total_est
    }
}

/// One unit's own cells and nets: synthesized, or from the cache.
fn synth_unit(cache: Option<&std::path::Path>, key: &str, unit: &Unit) -> Result<UnitResult> {
    let mut files = vec![("unit.v", unit.verilog.as_str())];
    if !unit.blackboxes.is_empty() {
        files.push(("blackboxes.v", unit.blackboxes.as_str()));
    }
    let job = Job { files, script: script(!unit.blackboxes.is_empty()) };
    synth::cached(cache, "unit", key, &job, |dir| {
        let resources = parse_unit_stat(&synth::read(dir, "report.json")?, &unit.blackbox_names)?;
        let path = dir.join("netlist.json");
        let file = std::fs::File::open(&path).map_err(|e| SimError::io(format!("reading {}", path.display()), e))?;
        let reader = std::io::BufReader::with_capacity(1 << 20, file);
        let nets = parse_unit_netlist(reader, UNIT_TOP, &unit.blackbox_names)?;
        Ok(UnitResult { resources, nets })
    })
}

/// The unit's own cells from `stat -json`: its module's cell table without the black boxes.
fn parse_unit_stat(json: &str, blackboxes: &std::collections::BTreeSet<String>) -> Result<ResourceEstimate> {
    let err = |m: String| SimError::Report { tool: "yosys", message: m };
    let stat: StatJson = serde_json::from_str(json).map_err(|e| err(e.to_string()))?;
    let mut modules = stat.modules;
    let module = modules
        .remove(&format!("\\{UNIT_TOP}"))
        .or_else(|| modules.remove(UNIT_TOP))
        .ok_or_else(|| err(format!("no statistics for module `{UNIT_TOP}`")))?;
    let cells: BTreeMap<String, u64> = module
        .num_cells_by_type
        .into_iter()
        .filter(|(name, _)| !blackboxes.contains(name.trim_start_matches('\\')))
        .collect();
    let mut e = ResourceEstimate::from_cells(cells, "");
    e.estimated_lcs = module.estimated_num_lc.unwrap_or(0);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_black_boxes_out() {
        let json = r#"{ "modules": { "\\ecrt_unit": { "num_cells_by_type": { "LUT3": 7, "FDRE": 2,
            "\\bb_0123": 4, "DSP48E1": 1 }, "estimated_num_lc": 7 }, "\\bb_0123": {} } }"#;
        let bbs = ["bb_0123".to_owned()].into_iter().collect();
        let e = parse_unit_stat(json, &bbs).unwrap();
        assert_eq!((e.lut, e.ff, e.dsp48e1, e.estimated_lcs), (7, 2, 1, 7));
        assert!(!e.cells.contains_key("\\bb_0123"));
        assert!(parse_unit_stat(r#"{ "modules": {} }"#, &bbs).is_err());
    }
}
