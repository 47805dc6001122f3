//! Each kind of report as the rows of its table on the figures page.

use super::records::{Record, Report};
use super::text::{against, bits, dec, int, mega, row, val, whole_or, with_target, Row, Val};
use crate::bench::cpu::CpuReport;
use crate::bench::host::HostReport;
use crate::bench::sim::SimReport;
use crate::chip::{
    schoolbook_bound_per_decryption, MESA_CYCLES, PROJECTION_PART, REFERENCE_MHZ, TARGET_THROUGHPUT,
    TARGET_THROUGHPUT_CONSERVATIVE_CLOCK, TARGET_THROUGHPUT_PLAUSIBLE_CLOCK, UTILISATION,
};
use crate::estimate::EstimateReport;
use crate::explore::ExploreReport;
use crate::lanes_bench::LanesReport;
use crate::modexp_bench::ModExpReport;
use crate::multiplier_bench::MultiplierReport;
use crate::point::Point;
use crate::python_bench::{FateReport, PythonReport};
use crate::report::{ConfigFigures, Figure};
use ecrt_contract::config::{Engine, ExponentSchedule};
use ecrt_sim::EstimateMethod;

/// Driver CPU µs per decryption.
pub(super) const TARGET_HOST_US: f64 = 5.0;
/// The direct XDMA path's CPU time per decryption, as a share of one CPU thread's decryption.
const TARGET_DIRECT_SHARE: f64 = 0.0015;
/// The same through `ecrt serve`, client and service together.
const TARGET_SERVICE_SHARE: f64 = 0.003;
/// Wall seconds per 2048-bit decryption in Verilator.
const TARGET_SIM_S: f64 = 2.0;
/// Longest register-to-register logic path (Yosys sta, no routing), ns: 100 MHz at a 25 % cell
/// share of the path, 200 MHz at 50 %.
const TARGET_LOGIC_NS: f64 = 2.5;
/// Loads a register or DSP output drives, at most, in a full-width core.
const TARGET_MAX_FANOUT: f64 = ecrt_contract::part::MAX_REGISTER_FANOUT as f64;
/// The Python package on one thread, as a share of phe's time on the same ciphertexts.
const TARGET_PYTHON_RATIO: f64 = 0.8;
/// Throughput on two threads over one.
const TARGET_TWO_THREAD_SCALING: f64 = 1.8;
/// Opening a key, its checks included, ms.
const TARGET_KEY_OPEN_MS: f64 = 20.0;

/// A record's table: its report's rows, then the rows no tool writes.
pub(super) fn rows(r: &Record) -> Vec<Row> {
    let mut rows = match &r.report {
        Report::Accelerator(r) => accelerator_rows(r),
        Report::Estimate(r) => estimate_rows(r),
        Report::ModExp(r) => modexp_rows(r),
        Report::Multiplier(r) => multiplier_rows(r),
        Report::Lanes(r) => lanes_rows(r),
        Report::Explore(r) => explore_rows(r),
        Report::Host(r) => host_rows(r),
        Report::Cpu(r) => cpu_rows(r),
        Report::Python(r) => python_rows(r),
        Report::Fate(r) => fate_rows(r),
    };
    rows.extend(r.extra.iter().map(|(figure, value)| row(figure, value.clone())));
    rows
}

fn configuration(config: &ConfigFigures) -> String {
    let mut parts = vec![format!("{}-bit key", bits(Val::of(&config.key_bits)))];
    if let Some(cores) = val(&config.cores) {
        parts.push(format!("{} core{}", int(cores), if cores.hi > 1.0 { "s" } else { "" }));
    }
    if let Some(stream) = val(&config.stream_bits) {
        parts.push(format!("{}-bit streams", bits(stream)));
    }
    match (config.schedule, val(&config.window_bits)) {
        (Some(ExponentSchedule::Segmented), _) => parts.push("segmented schedule".into()),
        (_, Some(w)) => parts.push(format!("windows of {} bits", int(w))),
        _ => {}
    }
    // Records made before the folding multiplier have no such field: one digit per step.
    match (val(&config.digits_per_step), config.engine) {
        (Some(k), Some(Engine::Lanes)) => {
            parts.push(format!("{} digits per step, the lanes engine (deep-loop multiplier)", int(k)))
        }
        (Some(k), Some(Engine::Delay)) => {
            parts.push(format!("{} digits per step, the delay engine (delayed-quotient multiplier)", int(k)))
        }
        (Some(k), _) => parts.push(format!("{} digits per step (folding multiplier)", int(k))),
        (None, _) => parts.push("one digit per step (classic multiplier only)".into()),
    }
    parts.join(", ")
}

/// The label of a resource by its report field (`"dsp48e1"`: `"DSP48E1"`).
fn resource_label(field: &str) -> &str {
    PROJECTION_PART.resources().into_iter().find(|(k, ..)| *k == field).map_or(field, |(_, label, _)| label)
}

/// An accelerator report's amount of a resource, by the part's name for it.
fn resource(r: &SimReport, field: &str) -> Option<Val> {
    match field {
        "lut" => val(&r.lut),
        "ff" => val(&r.ff),
        "dsp48e1" => val(&r.dsp48e1),
        "bram36" => val(&r.bram36),
        _ => None,
    }
}

/// The logic delay, with the plausible clock when known.
fn logic_delay(delay: Val, clock: Option<Val>) -> String {
    let clock = clock.map(|c| format!(" (plausible clock {} MHz)", dec(c, 0))).unwrap_or_default();
    format!("{} ns{clock}", dec(delay, 2))
}

fn accelerator_rows(r: &SimReport) -> Vec<Row> {
    let mut rows = vec![
        row("configuration", configuration(&r.config.read())),
        row("decryptions checked against the golden model", int(Val::of(&r.verified))),
    ];
    let latency = Val::of(&r.latency_cycles);
    let ms = latency.map(|c| c / (REFERENCE_MHZ * 1e3));
    rows.push(with_target(
        "latency, idle pipeline, first input beat to last output beat",
        format!("{} cycles ({} ms at 100 MHz)", int(latency), dec(ms, 2)),
        format!("≤ 57,700 (MESA): {}", against(latency, MESA_CYCLES, true)),
    ));
    let cores = Val::of(&r.cores).lo;
    if cores > 1.0 {
        let v = Val::of(&r.cycles_per_decryption);
        rows.push(row("cycles per decryption, steady state, whole accelerator", whole_or(v, 1)));
    }
    rows.push(row(
        "cycles per decryption, steady state, per core",
        whole_or(Val::of(&r.cycles_per_decryption_per_core), 1),
    ));
    let resources: Option<Vec<Val>> =
        [val(&r.dsp48e1), val(&r.lut), val(&r.ff), val(&r.lutram), val(&r.bram36)].into_iter().collect();
    if let Some(res) = &resources {
        rows.push(row(
            "DSP48E1 / LUT / FF / LUTRAM / BRAM36 (Yosys estimate)",
            res.iter().map(|v| int(*v)).collect::<Vec<_>>().join(" / "),
        ));
    }
    if let Some(v) = val(&r.dsp_cycles_per_decryption) {
        let b = schoolbook_bound_per_decryption(Val::of(&r.key_bits).lo as usize);
        let value = format!("{} ({}× the schoolbook bound, {})", mega(v), dec(v.map(|x| x / b), 2), mega(Val::one(b)));
        rows.push(row("DSP-cycles per decryption", value));
    }
    if let Some(v) = val(&r.cores_per_xc7vx690t) {
        let label = resource_label(r.xc7vx690t_limiting_resource.as_deref().unwrap_or("?"));
        let per_resource: Vec<String> = PROJECTION_PART
            .resources()
            .into_iter()
            .filter_map(|(key, name, cap)| {
                let used = resource(r, key)?;
                (used.lo > 0.0)
                    .then(|| format!("{name} {}", int(used.map(|u| (cap * UTILISATION / (u / cores)).floor()))))
            })
            .collect();
        rows.push(row(
            "cores per xc7vx690t within 80 % of every resource",
            format!("{} ({label} the limit; per resource: {})", int(v), per_resource.join(", ")),
        ));
    }
    if let Some(v) = val(&r.projected_decryptions_per_s_100mhz) {
        rows.push(with_target(
            "projected decryptions/s, one xc7vx690t at 100 MHz",
            int(v),
            format!("≥ 3,466: {}", against(v, TARGET_THROUGHPUT, false)),
        ));
    }
    if let Some(v) = val(&r.logic_delay_ns) {
        rows.push(with_target(
            "longest register-to-register path, logic only",
            logic_delay(v, val(&r.plausible_clock_mhz)),
            format!("≤ 2.5 ns: {}", against(v, TARGET_LOGIC_NS, true)),
        ));
    }
    if let (Some(mhz), Some(low), Some(high), Some(us)) = (
        r.conservative_clock_mhz,
        r.chip_decryptions_per_s_conservative_clock,
        r.chip_decryptions_per_s_plausible_clock,
        r.latency_us_plausible_clock,
    ) {
        let one = |x: f64| int(Val::one(x));
        rows.push(with_target(
            "at the design's clocks: conservative (1000 / 4L), plausible (1000 / 2L)",
            format!(
                "{} MHz: {}/s a chip; {} MHz: {}/s a chip, {} µs latency",
                one(mhz),
                one(low),
                val(&r.plausible_clock_mhz).map_or("?".into(), |c| dec(c, 0)),
                one(high),
                one(us)
            ),
            format!(
                "≥ 3,540/s: {}; ≥ 7,000/s: {}; ≤ 577 µs (MESA): {}",
                against(Val::one(low), TARGET_THROUGHPUT_CONSERVATIVE_CLOCK, false),
                against(Val::one(high), TARGET_THROUGHPUT_PLAUSIBLE_CLOCK, false),
                against(Val::one(us), MESA_CYCLES / REFERENCE_MHZ, true)
            ),
        ));
    }
    if let Some(f) = r.max_fanout {
        rows.push(with_target(
            "highest fanout of a register or DSP, one core (Yosys)",
            int(Val::one(f as f64)),
            format!("≤ {TARGET_MAX_FANOUT}: {}", against(Val::one(f as f64), TARGET_MAX_FANOUT, true)),
        ));
    }
    let v = Val::of(&r.simulated_cycles_per_s);
    rows.push(row("simulated cycles per second (Verilator)", int(v.map(|x| (x / 1000.0).round() * 1000.0))));
    let v = Val::of(&r.wall_s_per_decryption);
    let target = if Val::of(&r.key_bits).lo == 2048.0 {
        format!("< 2 s: {}", against(v, TARGET_SIM_S, true))
    } else {
        String::new()
    };
    rows.push(with_target("wall time per decryption in simulation", format!("{} s", dec(v, 2)), target));
    rows
}

/// The name of an estimate's method, as reports write it.
pub(super) fn method_name(method: EstimateMethod) -> &'static str {
    match method {
        EstimateMethod::Flat => "flat",
        EstimateMethod::Hierarchical => "hierarchical",
    }
}

/// Modules named in an estimate's "most LUTs" row.
const LARGEST_MODULES: usize = 3;

/// The first `n` of a fanout list: net, loads, driver type.
fn net_list(nets: &[ecrt_sim::NetFanout], n: usize) -> String {
    let nets: Vec<String> = nets
        .iter()
        .take(n)
        .map(|n| format!("`{}` {} ({})", n.net, int(Val::one(n.loads as f64)), n.driver_type))
        .collect();
    nets.join(", ")
}

fn estimate_rows(r: &EstimateReport) -> Vec<Row> {
    let mut rows =
        vec![row("configuration", configuration(&r.config.read())), row("method", method_name(r.method).into())];
    let resources = [
        (Val::of(&r.dsp48e1), "DSP48E1"),
        (Val::of(&r.lut), "LUT"),
        (Val::of(&r.ff), "FF"),
        (Val::of(&r.lutram), "LUTRAM"),
        (Val::of(&r.bram36), "BRAM36"),
        (Val::of(&r.carry4), "CARRY4"),
    ];
    rows.extend(resources.into_iter().map(|(v, label)| row(label, int(v))));
    let largest: Vec<String> = r
        .by_module
        .iter()
        .take(LARGEST_MODULES)
        .map(|m| format!("`{}` ×{}: {}", m.module, m.instances, int(Val::one((m.lut * m.instances) as f64))))
        .collect();
    if !largest.is_empty() {
        rows.push(row("most LUTs (module, copies: LUT)", largest.join("; ")));
    }
    if let Some(v) = val(&r.logic_delay_ns) {
        rows.push(row("longest register-to-register path, logic only", logic_delay(v, val(&r.plausible_clock_mhz))));
    }
    if let Some(path) = &r.critical_path_summary {
        rows.push(row("its cells", path.clone()));
    }
    if let Some(mhz) = r.conservative_clock_mhz {
        rows.push(row("conservative clock, 1000 / (4 × logic delay)", format!("{} MHz", int(Val::one(mhz)))));
    }
    if let Some(f) = &r.fanout {
        rows.push(row("highest fanout, one full-width core (Yosys)", net_list(&f.nets, 5)));
        if !f.logic_nets.is_empty() {
            rows.push(row("highest fanout of logic-driven nets (not bounded by copies)", net_list(&f.logic_nets, 3)));
        }
    }
    rows.push(row("tool", r.tool.clone()));
    let sha = &r.verilog_sha256;
    rows.push(row("SHA-256 of the Verilog", format!("`{}…`", &sha[..sha.len().min(16)])));
    rows
}

/// The table of hierarchical estimates against flat ones of the same Verilog, if any.
pub(super) fn methods_table(records: &[&Record]) -> Vec<String> {
    let estimates: Vec<(&Record, &EstimateReport)> = records
        .iter()
        .filter_map(|r| match &r.report {
            Report::Estimate(e) => Some((*r, e)),
            _ => None,
        })
        .collect();
    let of = |method: EstimateMethod| estimates.iter().filter(move |(_, e)| e.method == method);
    let mut hierarchical: Vec<_> = of(EstimateMethod::Hierarchical).collect();
    hierarchical.sort_by_key(|(r, _)| r.report.key_bits());
    let mut lines = Vec::new();
    for (hier_record, hier) in hierarchical {
        let Some((flat_record, flat)) = of(EstimateMethod::Flat).find(|(_, f)| f.verilog_sha256 == hier.verilog_sha256)
        else {
            continue;
        };
        if lines.is_empty() {
            lines.push("| key bits | records (hierarchical / flat) | LUT | FF | DSP48E1 | LUTRAM |".to_string());
            lines.push("|---|---|---|---|---|---|".to_string());
        }
        let cmp = |h: &Figure<u64>, f: &Figure<u64>| {
            let (h, f) = (Val::of(h), Val::of(f));
            if f.lo > 0.0 {
                format!("{} / {} ({:+.1} %)", int(h), int(f), 100.0 * (h.lo / f.lo - 1.0))
            } else {
                format!("{} / {}", int(h), int(f))
            }
        };
        lines.push(format!(
            "| {} | [{}](#{}) / [{}](#{}) | {} | {} | {} | {} |",
            bits(Val::of(&hier.config.read().key_bits)),
            hier_record.name,
            hier_record.name.to_lowercase(),
            flat_record.name,
            flat_record.name.to_lowercase(),
            cmp(&hier.lut, &flat.lut),
            cmp(&hier.ff, &flat.ff),
            cmp(&hier.dsp48e1, &flat.dsp48e1),
            cmp(&hier.lutram, &flat.lutram),
        ));
    }
    lines
}

fn modexp_rows(r: &ModExpReport) -> Vec<Row> {
    let config = r.config.read();
    let key = Val::of(&config.key_bits);
    let mut rows =
        vec![row("moduli / exponents", format!("{} / {} bits", bits(key), bits(key.map(|b| (b / 2.0).floor()))))];
    let ints = [
        (val(&config.digits_per_step), "digits per step of the folding multiplier, k"),
        (Some(Val::of(&r.digits)), "digits S of a classic multiplication"),
        (Some(Val::of(&r.cycles_per_multiplication)), "cycles per classic multiplication (either slot)"),
        (val(&r.cycles_per_fold_multiplication), "cycles per folding multiplication (either slot)"),
        (Some(Val::of(&r.multiplications_per_exponentiation)), "multiplications per exponentiation"),
        (val(&r.fold_multiplications_per_exponentiation), "of them on the folding multiplier"),
        (
            Some(Val::of(&r.latency_cycles_per_exponentiation)),
            "cycles per exponentiation, both slots busy (latency of each)",
        ),
    ];
    rows.extend(ints.into_iter().filter_map(|(v, label)| Some(row(label, int(v?)))));
    let steady = Val::of(&r.cycles_per_exponentiation_steady_state);
    rows.push(row("cycles per exponentiation, steady state (two in flight)", whole_or(steady, 1)));
    if let Some(v) = val(&r.exponentiations_checked) {
        rows.push(row("exponentiations checked", int(v)));
    }
    if let Some(v) = val(&r.dsp48e1) {
        rows.push(row("DSP48E1 (Yosys estimate)", int(v)));
    }
    let b = Val::of(&r.schoolbook_bound_dsp_cycles);
    match val(&r.dsp_cycles_per_exponentiation) {
        Some(d) => rows.push(row(
            "DSP-cycles per exponentiation",
            format!("{} ({}× the schoolbook bound, {})", mega(d), dec(d.map(|x| x / b.lo), 2), mega(b)),
        )),
        None => rows.push(row("schoolbook bound per exponentiation (DSP-cycles)", mega(b))),
    }
    if let Some(e) = r.estimate.as_ref().map(|e| e.read()) {
        let res = [Val::of(&e.lut), Val::of(&e.ff), Val::of(&e.lutram), Val::of(&e.bram36)];
        rows.push(row(
            "LUT / FF / LUTRAM / BRAM36 (Yosys estimate)",
            res.iter().map(|v| int(*v)).collect::<Vec<_>>().join(" / "),
        ));
    }
    if let Some(v) = val(&r.simulated_cycles_per_s) {
        rows.push(row("simulated cycles per second (Verilator)", int(v.map(|x| (x / 1000.0).round() * 1000.0))));
    }
    if let Some(v) = val(&r.verilator_build_seconds) {
        let cached = if r.verilator_build_cached == Some(true) { " (cached)" } else { "" };
        rows.push(row("Verilator build", format!("{} s{cached}", dec(v, 1))));
    }
    rows
}

fn multiplier_rows(r: &MultiplierReport) -> Vec<Row> {
    let mut rows = vec![row("modulus", format!("{} bits", bits(Val::of(&r.modulus_bits))))];
    for m in &r.multipliers {
        let (k, steps) = (Val::of(&m.digits_per_step), Val::of(&m.steps));
        let name = match m.multiplier.as_str() {
            "fold" => format!("folding, k = {} ({} steps)", int(k), int(steps)),
            "deep" => format!("deep loop, k = {} ({} steps, {} lanes)", int(k), int(steps), m.in_flight),
            "delay" => match &m.delayed_shape {
                Some(shape) => format!(
                    "delayed quotient, k = {} ({} steps with d = {}, 2 lanes)",
                    int(k),
                    int(steps),
                    shape.quotient_delay
                ),
                None => format!("delayed quotient, k = {} ({} steps, 2 lanes)", int(k), int(steps)),
            },
            _ => format!("classic, one digit per step ({} steps)", int(steps)),
        };
        let mut parts = vec![
            format!("{} cycles", int(Val::of(&m.cycles_per_multiplication))),
            format!("{} DSP48E1 / {} LUT / {} FF", int(Val::of(&m.dsp48e1)), int(Val::of(&m.lut)), int(Val::of(&m.ff))),
            format!(
                "{} DSP-cycles ({}× the bound)",
                int(Val::of(&m.dsp_cycles_per_multiplication)),
                dec(Val::of(&m.ratio_to_schoolbook_bound), 2)
            ),
        ];
        if let Some(delay) = val(&m.logic_delay_ns) {
            parts.push(format!("{} ns of logic", dec(delay, 2)));
        }
        if let (Some(register), Some(logic)) = (m.max_fanout, m.max_logic_fanout) {
            parts.push(format!("nets of at most {register} loads from a register, {logic} from logic"));
        }
        rows.push(row(&name, parts.join("; ")));
    }
    rows
}

fn lanes_rows(r: &LanesReport) -> Vec<Row> {
    // Targets only for 2048-bit keys: "≤ goal" or "≥ goal", met or by how much missed.
    let target = |figure: &str, value: String, v: Val, goal: f64, at_most: bool| {
        let text = if r.key_bits != 2048 {
            String::new()
        } else {
            format!("{} {}: {}", if at_most { "≤" } else { "≥" }, int(Val::one(goal)), against(v, goal, at_most))
        };
        with_target(figure, value, text)
    };
    let mut rows = vec![
        row(
            "configuration",
            format!(
                "{}-bit key, k = {} ({} steps), windows of {} bits",
                r.key_bits, r.digits_per_step, r.shape.steps, r.window_bits
            ),
        ),
        row("lanes; decryptions in flight", format!("{}; {}", r.lanes, r.decryptions_in_flight)),
        row("cycles per folding multiplication", int(Val::of(&r.cycles_per_fold_multiplication))),
        row("multiplications per path", int(Val::of(&r.multiplications_per_path))),
        row("cycles per path (a decryption's latency but the correction)", int(Val::of(&r.cycles_per_path))),
        row("cycles per decryption, every lane busy", int(Val::of(&r.cycles_per_decryption_steady_state))),
        row("decryptions checked", r.decryptions_checked.to_string()),
        row("simulated cycles per second (Verilator)", int(Val::of(&r.simulated_cycles_per_s))),
    ];
    if let (Some(dsp), Some(lut), Some(ff), Some(bram)) = (val(&r.dsp48e1), val(&r.lut), val(&r.ff), val(&r.bram36)) {
        rows.push(row(
            "DSP48E1 / LUT / FF / LUTRAM / BRAM36 (Yosys estimate)",
            format!("{} / {} / {} / {} / {}", int(dsp), int(lut), int(ff), r.lutram.unwrap_or(0), dec(bram, 1)),
        ));
    }
    if let (Some(dsp_cycles), Some(ratio)) = (val(&r.dsp_cycles_per_decryption), val(&r.ratio_to_schoolbook_bound)) {
        rows.push(row("DSP-cycles per decryption", format!("{} ({}× the bound)", int(dsp_cycles), dec(ratio, 2))));
    }
    if let (Some(register), Some(logic)) = (r.max_fanout, r.max_logic_fanout) {
        let v = Val::one(register as f64);
        rows.push(target(
            "highest fanout of a register or DSP, full width",
            format!("{register} loads (from logic: {logic})"),
            v,
            TARGET_MAX_FANOUT,
            true,
        ));
    }
    if let (Some(delay), Some(path)) = (val(&r.logic_delay_ns), &r.critical_path_summary) {
        rows.push(row("longest register-to-register path, logic only", format!("{} ns: {path}", dec(delay, 2))));
    }
    if let (Some(engines), Some(limit)) = (r.engines_per_chip, &r.chip_limited_by) {
        rows.push(row("engines per xc7vx690t within 80 % of every resource", format!("{engines} ({limit})")));
    }
    if let (Some(conservative), Some(plausible)) = (val(&r.conservative_clock_mhz), val(&r.plausible_clock_mhz)) {
        let capped = r.clock_capped_by.as_ref().map_or(String::new(), |c| format!(", capped by {c}"));
        rows.push(row(
            "clocks: conservative, plausible",
            format!("{} MHz, {} MHz{capped}", dec(conservative, 0), dec(plausible, 0)),
        ));
    }
    if let Some(v) = val(&r.latency_us_plausible_clock) {
        rows.push(target("latency at the plausible clock, µs", dec(v, 0), v, MESA_CYCLES / REFERENCE_MHZ, true));
    }
    if let Some(v) = val(&r.chip_decryptions_per_s_plausible_clock) {
        rows.push(target(
            "one chip at the plausible clock, decryptions/s",
            int(v),
            v,
            TARGET_THROUGHPUT_PLAUSIBLE_CLOCK,
            false,
        ));
    }
    if let Some(v) = val(&r.chip_decryptions_per_s_conservative_clock) {
        rows.push(row("one chip at the conservative clock, decryptions/s", int(v)));
    }
    rows
}

/// The best point of an explore record by `figure` (largest, or smallest when `lowest`), among
/// the points that have it.
fn best_point(points: &[Point], figure: impl Fn(&Point) -> Option<f64>, lowest: bool) -> Option<(&Point, Val)> {
    let (best, v) = points.iter().filter_map(|p| figure(p).map(|v| (p, v))).min_by(|(_, a), (_, b)| {
        if lowest {
            a.total_cmp(b)
        } else {
            b.total_cmp(a)
        }
    })?;
    Some((best, Val::one(v)))
}

fn point_name(p: &Point) -> String {
    let schedule = match p.config.schedule {
        ExponentSchedule::Segmented => "segmented".to_string(),
        ExponentSchedule::Windows => format!("{}-bit windows", p.config.window_bits),
    };
    let engine = match p.config.engine {
        Engine::Slots => ", two slots",
        Engine::Lanes => ", lanes",
        Engine::Delay => ", delay",
    };
    format!("k = {}, {schedule}{engine}", p.config.digits_per_step)
}

fn explore_rows(r: &ExploreReport) -> Vec<Row> {
    let mut rows = Vec::new();
    let points = r.points.as_slice();
    let is_2048 = points.first().is_some_and(|p| p.config.key_bits == 2048);
    let target = |text: &str, v: Val, goal: f64, at_most: bool| {
        if is_2048 {
            format!("{text}: {}", against(v, goal, at_most))
        } else {
            String::new()
        }
    };
    if let Some((p, v)) = best_point(points, |p| Some(p.latency_cycles as f64), true) {
        rows.push(with_target(
            "lowest latency of the sweep",
            format!("{} cycles ({})", int(v), point_name(p)),
            target("≤ 57,700 (MESA)", v, MESA_CYCLES, true),
        ));
    }
    if let Some((p, v)) = best_point(points, |p| Some(p.decryptions_per_s_100mhz), false) {
        rows.push(with_target(
            "highest chip throughput of the sweep, 100 MHz",
            format!("{}/s ({})", int(v), point_name(p)),
            target("≥ 3,466", v, TARGET_THROUGHPUT, false),
        ));
    }
    // Against the clock-aware targets, for a timed sweep: at each point's plausible clock.
    let timed = points.iter().filter(|p| p.logic_delay_ns.is_some()).count();
    let mesa_us = MESA_CYCLES / REFERENCE_MHZ;
    if let Some((p, v)) = best_point(points, |p| p.logic_delay_ns, false) {
        let within = points.iter().filter(|p| p.logic_delay_ns.is_some_and(|d| d <= TARGET_LOGIC_NS)).count();
        rows.push(with_target(
            "longest logic path of the sweep",
            format!("{} ns ({}); {within} of {timed} points within 2.5 ns", dec(v, 2), point_name(p)),
            target("≤ 2.5 ns", v, TARGET_LOGIC_NS, true),
        ));
    }
    if let Some((p, v)) = best_point(points, |p| p.latency_us_plausible_clock, true) {
        rows.push(with_target(
            "lowest latency of the sweep at its plausible clock",
            format!("{} µs ({}, {})", int(v), point_name(p), clock_of(p)),
            target("≤ 577 µs (MESA)", v, mesa_us, true),
        ));
    }
    if let Some((p, v)) = best_point(points, |p| p.chip_decryptions_per_s_plausible_clock, false) {
        rows.push(with_target(
            "highest chip throughput of the sweep at its plausible clock",
            format!("{}/s ({}, {})", int(v), point_name(p), clock_of(p)),
            target("≥ 7,000/s", v, TARGET_THROUGHPUT_PLAUSIBLE_CLOCK, false),
        ));
    }
    if is_2048 && timed > 0 {
        let both = points
            .iter()
            .filter(|p| {
                p.latency_us_plausible_clock.is_some_and(|us| us <= mesa_us)
                    && p.chip_decryptions_per_s_plausible_clock.is_some_and(|r| r >= TARGET_THROUGHPUT_PLAUSIBLE_CLOCK)
            })
            .count();
        rows.push(with_target(
            "points meeting the latency and chip targets together at their plausible clock",
            format!("{both} of {timed}"),
            format!("≥ 1: {}", if both > 0 { "met" } else { "missed" }),
        ));
    }
    rows.extend(schedule_rows(points));
    for p in points {
        let one = |x: f64| int(Val::one(x));
        let plausible = match (p.chip_decryptions_per_s_plausible_clock, p.plausible_clock_mhz) {
            (Some(d), Some(mhz)) => format!(", {}/s at {} MHz", one(d), one(mhz)),
            _ => String::new(),
        };
        let conservative = match (p.chip_decryptions_per_s_conservative_clock, p.conservative_clock_mhz) {
            (Some(d), Some(mhz)) => format!(" (plausible clock), {}/s at {} MHz (conservative)", one(d), one(mhz)),
            _ => String::new(),
        };
        let at_clock = plausible + &conservative;
        let noun = if p.cores_per_xc7vx690t == 1 { "core" } else { "cores" };
        let mut parts = vec![
            format!("latency {} cycles ({} ms)", one(p.latency_cycles as f64), dec(Val::one(p.latency_ms_100mhz), 3)),
            format!("{} DSP48E1 / {} LUT / {} FF a core", one(p.dsp48e1 as f64), one(p.lut as f64), one(p.ff as f64)),
            format!(
                "{} {noun} ({}): {}/s at 100 MHz{at_clock}",
                one(p.cores_per_xc7vx690t as f64),
                resource_label(&p.xc7vx690t_limiting_resource),
                one(p.decryptions_per_s_100mhz)
            ),
            format!("{}× the bound", dec(Val::one(p.ratio_to_schoolbook_bound), 2)),
        ];
        if p.pareto {
            parts.push("**Pareto**".into());
        }
        rows.push(row(&point_name(p), parts.join("; ")));
    }
    rows
}

/// "k cores at f MHz": the chip a point's figures at its plausible clock are of.
fn clock_of(p: &Point) -> String {
    let noun = if p.cores_per_xc7vx690t == 1 { "core" } else { "cores" };
    let mhz = p.plausible_clock_mhz.map_or("?".into(), |c| int(Val::one(c)));
    format!("{} {noun} at {mhz} MHz", p.cores_per_xc7vx690t)
}

/// For each k swept with both schedules: the windows point of lowest latency against the
/// segmented point, in latency and in DSP-cycles per decryption (throughput per DSP).
fn schedule_rows(points: &[Point]) -> Vec<Row> {
    let mut ks: Vec<usize> = points.iter().map(|p| p.config.digits_per_step).collect();
    ks.sort_unstable();
    ks.dedup();
    let mut rows = Vec::new();
    for k in ks {
        let of_k = |schedule: ExponentSchedule| {
            points
                .iter()
                .filter(|p| {
                    p.config.digits_per_step == k && p.config.schedule == schedule && p.config.engine == Engine::Slots
                })
                .min_by_key(|p| p.latency_cycles)
        };
        let (Some(w), Some(s)) = (of_k(ExponentSchedule::Windows), of_k(ExponentSchedule::Segmented)) else {
            continue;
        };
        let (wl, sl) = (w.latency_cycles as f64, s.latency_cycles as f64);
        let (wd, sd) = (w.dsp_cycles_per_decryption, s.dsp_cycles_per_decryption);
        let better = |w: f64, s: f64| if w <= s { "windows" } else { "segmented" };
        rows.push(row(
            &format!("k = {k}: {}-bit windows against segmented", w.config.window_bits),
            format!(
                "latency {} against {} cycles (×{} for segmented); DSP-cycles per decryption {} M against {} M \
                 (×{}); lower latency: {}, more throughput per DSP: {}",
                int(Val::one(wl)),
                int(Val::one(sl)),
                dec(Val::one(sl / wl), 2),
                dec(Val::one(wd / 1e6), 1),
                dec(Val::one(sd / 1e6), 1),
                dec(Val::one(sd / wd), 2),
                better(wl, sl),
                better(wd, sd)
            ),
        ));
    }
    rows
}

fn host_rows(r: &HostReport) -> Vec<Row> {
    let mut setup = vec![
        format!("{}-bit key", bits(Val::of(&r.key_bits))),
        format!("{}-bit streams", bits(Val::of(&r.stream_bits))),
        format!("{} decryptions × {} rounds", int(Val::of(&r.count)), int(Val::of(&r.rounds))),
    ];
    setup.extend(val(&r.runs).map(|v| format!("{} runs", int(v))));
    setup.push(format!("on `{}`", r.device));
    let v = Val::of(&r.host_cpu_us_per_decryption);
    let mut rows = vec![
        row("setup", setup.join(", ")),
        with_target(
            "driver CPU time per decryption (user + system)",
            format!("{} µs", dec(v, 1)),
            format!("≤ 5 µs: {}", against(v, TARGET_HOST_US, true)),
        ),
    ];
    if let (Some(u), Some(s)) = (val(&r.user_us_per_decryption), val(&r.system_us_per_decryption)) {
        rows.push(row("of which user / system", format!("{} / {} µs", dec(u, 1), dec(s, 1))));
    }
    if let Some(v) = val(&r.framing_us_per_decryption) {
        rows.push(row("framing alone (encode and decode in memory)", format!("{} µs", dec(v, 1))));
    }
    if let Some(v) = val(&r.context_switches_per_decryption) {
        rows.push(row("context switches per decryption (counted: they hold when the time swings)", dec(v, 3)));
    }
    if let Some(v) = val(&r.decryptions_per_second_per_core) {
        rows.push(row("decryptions/s one host core could feed", int(v.map(|x| (x / 1000.0).round() * 1000.0))));
    }
    if let Some(v) = val(&r.wall_decryptions_per_second) {
        rows.push(row("decryptions/s through the emulated device (wall)", int(v)));
    }
    if let Some(v) = val(&r.cpu_one_thread_us_per_decryption) {
        rows.push(row("one CPU thread's decryption, same run", format!("{} µs", dec(v, 0))));
    }
    if let Some(v) = val(&r.direct_share) {
        rows.push(with_target(
            "direct path, as a share of one CPU thread's decryption",
            format!("{} %", dec(v.map(|x| 100.0 * x), 3)),
            format!("≤ {} %: {}", 100.0 * TARGET_DIRECT_SHARE, against(v, TARGET_DIRECT_SHARE, true)),
        ));
    }
    if let (Some(total), Some(client), Some(service)) = (
        val(&r.service_total_us_per_decryption),
        val(&r.service_client_us_per_decryption),
        val(&r.service_us_per_decryption),
    ) {
        rows.push(row(
            "through `ecrt serve`: client + service CPU time per decryption",
            format!("{} µs ({} + {})", dec(total, 1), dec(client, 1), dec(service, 1)),
        ));
    }
    if let Some(v) = val(&r.service_context_switches_per_decryption) {
        rows.push(row("through `ecrt serve`: context switches per decryption, client + service", dec(v, 3)));
    }
    if let Some(v) = val(&r.service_share) {
        rows.push(with_target(
            "through `ecrt serve`, as a share of one CPU thread's decryption",
            format!("{} %", dec(v.map(|x| 100.0 * x), 3)),
            format!("≤ {} %: {}", 100.0 * TARGET_SERVICE_SHARE, against(v, TARGET_SERVICE_SHARE, true)),
        ));
    }
    if let Some(v) = val(&r.service_wall_decryptions_per_second) {
        rows.push(row("decryptions/s through `ecrt serve` and the emulated device (wall)", int(v)));
    }
    rows
}

/// Whether phe had gmpy2, as a bench's setup says it.
fn phe_gmpy2(gmpy2: bool) -> String {
    if gmpy2 { "phe with gmpy2" } else { "phe without gmpy2" }.into()
}

/// The setup of a bench against another library: key size, passes, threads, and the library
/// (which phe: whether it had gmpy2).
fn bench_setup(key_bits: Val, count_rounds: Option<(Val, Val)>, threads: Option<Val>, library: Option<String>) -> Row {
    let setup: Vec<String> = [
        Some(format!("{}-bit key", bits(key_bits))),
        count_rounds.map(|(c, n)| format!("{} ciphertexts × {} rounds", int(c), int(n))),
        threads.map(|v| format!("{} threads", int(v))),
        library,
    ]
    .into_iter()
    .flatten()
    .collect();
    row("setup", setup.join(", "))
}

fn cpu_rows(r: &CpuReport) -> Vec<Row> {
    let count_rounds = val(&r.count).zip(val(&r.rounds));
    let mut rows = vec![bench_setup(Val::of(&r.key_bits), count_rounds, val(&r.threads), r.phe_gmpy2.map(phe_gmpy2))];
    let times = r.us_per_decryption.as_ref();
    let time = |f: fn(&crate::bench::cpu::CpuTimes) -> &Option<Figure<f64>>| times.and_then(|t| val(f(t)));
    let (ecrt, golden) = (time(|t| &t.ecrt_cpu_ecrt_1_thread), time(|t| &t.golden_num_bigint_ecrt_1_thread));
    for (v, label) in [
        (ecrt, "ecrt eCRT, one thread"),
        (time(|t| &t.ecrt_cpu_crt_1_thread), "ecrt CRT, one thread"),
        (golden, "golden model (num-bigint) eCRT, one thread"),
        (time(|t| &t.phe_raw_decrypt), "phe raw_decrypt"),
        (time(|t| &t.phe_decrypt), "phe decrypt"),
    ] {
        if let Some(v) = v {
            rows.push(row(&format!("{label}, µs per decryption"), dec(v, 1)));
        }
    }
    if let Some(v) = val(&r.ratio_ecrt_to_phe_decrypt) {
        rows.push(row("ecrt eCRT, one thread / phe decrypt", dec(v, 3)));
    }
    if let Some(v) = val(&r.ratio_ecrt_to_phe_raw_decrypt) {
        rows.push(row("ecrt eCRT, one thread / phe raw_decrypt", dec(v, 3)));
    }
    if let (Some(g), Some(e)) = (golden, ecrt) {
        rows.push(row("golden model (num-bigint) / ecrt eCRT, one thread", dec(Val::one(g.lo / e.lo), 2)));
    }
    if let Some(v) = val(&r.decryptions_per_s_all_threads) {
        rows.push(row("decryptions/s, all threads", int(v)));
    }
    if let Some(v) = val(&r.thread_scaling) {
        rows.push(row("thread scaling", format!("{}×", dec(v, 2))));
    }
    if let Some(v) = val(&r.key_open_ms) {
        rows.push(key_open_row("opening the key file (`ecrt decrypt`'s start)", v));
    }
    rows
}

/// A key's opening time in ms, against its target.
fn key_open_row(figure: &str, v: Val) -> Row {
    let target = format!("≤ {TARGET_KEY_OPEN_MS} ms: {}", against(v, TARGET_KEY_OPEN_MS, true));
    with_target(figure, format!("{} ms", dec(v, 1)), target)
}

fn python_rows(r: &PythonReport) -> Vec<Row> {
    let threads = Val::of(&r.threads);
    let count_rounds = Some((Val::of(&r.count), Val::of(&r.rounds)));
    let mut rows = vec![bench_setup(Val::of(&r.key_bits), count_rounds, Some(threads), Some(phe_gmpy2(r.gmpy2)))];
    let all = format!("ecrt_{}_threads", int(threads));
    for (pass, label) in
        [("phe", "phe decrypt"), ("ecrt_1_thread", "ecrt.Decryptor, one thread"), (&all, "ecrt.Decryptor, all threads")]
    {
        if let Some(v) = r.per_decryption_us.get(pass) {
            rows.push(row(&format!("{label}, µs per decryption"), dec(Val::of(v), 1)));
        }
    }
    let v = Val::of(&r.ratio_ecrt_1_thread_to_phe);
    let target = format!("≤ {TARGET_PYTHON_RATIO}: {}", against(v, TARGET_PYTHON_RATIO, true));
    rows.push(with_target("ecrt.Decryptor, one thread / phe decrypt", dec(v, 3), target));
    rows.push(row("ecrt.Decryptor, all threads / phe decrypt", dec(Val::of(&r.ratio_ecrt_all_threads_to_phe), 3)));
    rows.push(thread_scaling_row("throughput, all threads / one", Val::of(&r.thread_scaling), threads));
    for (v, label) in
        [(&r.key_open_ms.phe_object, "from a phe PaillierPrivateKey"), (&r.key_open_ms.jwk_file, "from a JWK file")]
    {
        rows.push(key_open_row(&format!("opening a key {label}"), Val::of(v)));
    }
    rows
}

/// The Python package's throughput on all threads over one, against its target on two threads.
fn thread_scaling_row(figure: &str, v: Val, threads: Val) -> Row {
    let target = if threads.lo == 2.0 {
        format!("≥ {TARGET_TWO_THREAD_SCALING}×: {}", against(v, TARGET_TWO_THREAD_SCALING, false))
    } else {
        String::new()
    };
    with_target(figure, format!("{}×", dec(v, 2)), target)
}

fn fate_rows(r: &FateReport) -> Vec<Row> {
    let threads = Val::of(&r.threads);
    let count_rounds = Some((Val::of(&r.count), Val::of(&r.rounds)));
    let library = format!("fate_utils {}", r.fate_utils_version);
    let mut rows = vec![bench_setup(Val::of(&r.key_bits), count_rounds, Some(threads), Some(library))];
    let us = &r.per_decryption_us;
    for (v, label) in [
        (&us.fate_utils_1_thread, "fate_utils `sk.decrypt_to_encoded`, one thread"),
        (&us.fate_utils_all_processes, "fate_utils, all processes (one slice each)"),
        (&us.ecrt_1_thread, "ecrt.fate.Decryptor, one thread"),
        (&us.ecrt_all_threads, "ecrt.fate.Decryptor, all threads"),
    ] {
        rows.push(row(&format!("{label}, µs per decryption"), dec(Val::of(v), 1)));
    }
    for (v, label) in [
        (&r.ratio_ecrt_1_thread_to_fate_utils_1_thread, "ecrt.fate.Decryptor, one thread / fate_utils, one thread"),
        (&r.ratio_ecrt_all_threads_to_fate_utils_1_thread, "ecrt.fate.Decryptor, all threads / fate_utils, one thread"),
        (
            &r.ratio_ecrt_all_threads_to_fate_utils_all_processes,
            "ecrt.fate.Decryptor, all threads / fate_utils, all processes",
        ),
    ] {
        rows.push(row(label, dec(Val::of(v), 3)));
    }
    rows.push(thread_scaling_row(
        "throughput, ecrt.fate.Decryptor, all threads / one",
        Val::of(&r.thread_scaling),
        threads,
    ));
    let v = Val::of(&r.process_scaling_fate_utils);
    rows.push(row("throughput, fate_utils, all processes / one thread", format!("{}×", dec(v, 2))));
    rows.push(key_open_row("opening a key from a fate_utils SK", Val::of(&r.key_open_ms)));
    rows.push(row("decryptions checked against fate_utils', bit for bit", int(Val::one(r.verified as f64))));
    rows
}
