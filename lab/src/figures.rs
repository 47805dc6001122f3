//! `docs/figures.md`, rendered from the measurement records in `docs/figures/`.
//!
//! Every measured figure the README and docs/architecture.md refer to lives in `docs/figures/`,
//! as the tools wrote it; this module turns those records into one page, so that no figure is
//! copied by hand. What the records are:
//!
//! - `NAME.json`: a report exactly as a tool writes it with `--out` (or `target/bench/cpu.json`
//!   from `scripts/bench`): `ecrt bench --backend sim|xdma|cpu`, `ecrt estimate`,
//!   `ecrt bench-modexp`. The kind is read from the report itself.
//! - `NAME.meta.json` (optional): how that record was made: `{"command": "…", "date":
//!   "YYYY-MM-DD", "machine": "…", "note": "…", "in_summary": false}`, every field optional;
//!   `in_summary: false` keeps a superseded design's or an alternative configuration's figures out
//!   of the summary (they still get their own table).
//! - `recorded.json`: figures of earlier runs that were not regenerated, each with its command
//!   and date: `{"note": "…", "records": [{"name": "…", "kind": "bench-sim" | "estimate" |
//!   "bench-modexp" | "bench-xdma" | "bench-cpu", "command": "…", "date": "…", "report": {…},
//!   "extra": [["figure", "value"], …]}]}`. A report here holds the fields the tool would have
//!   written (a number, or an array of the numbers of several runs, shown as a range); `extra`
//!   rows carry figures no tool writes. They are rendered as recorded, not as measured.
//!
//! The definitions behind each figure (cycles, the Yosys estimate, cores per chip, the
//! schoolbook bound) are in docs/background.md, "Measures and targets".
//!
//! Regenerate the page after adding or replacing a record:
//! `ECRT_UPDATE_DOCS=1 cargo test -p ecrt-lab --test figures`.

use anyhow::{bail, Context};
use serde_json::Value;
use std::path::Path;

use crate::chip::{
    schoolbook_bound_per_decryption, MESA_CYCLES, PROJECTION_PART, REFERENCE_MHZ, TARGET_THROUGHPUT, UTILISATION,
};

/// Driver CPU µs per decryption.
const TARGET_HOST_US: f64 = 5.0;
/// The direct XDMA path's CPU time per decryption, as a share of one CPU thread's decryption.
const TARGET_DIRECT_SHARE: f64 = 0.0015;
/// The same through `ecrt serve`, client and service together.
const TARGET_SERVICE_SHARE: f64 = 0.003;
/// Wall seconds per 2048-bit decryption in Verilator.
const TARGET_SIM_S: f64 = 2.0;
/// Longest register-to-register logic path (Yosys sta, no routing), ns.
const TARGET_LOGIC_NS: f64 = 5.0;
/// The Python package on one thread, as a share of phe's time on the same ciphertexts.
const TARGET_PYTHON_RATIO: f64 = 0.8;
/// Throughput on two threads over one.
const TARGET_TWO_THREAD_SCALING: f64 = 1.8;
/// Opening a key, its checks included, ms.
const TARGET_KEY_OPEN_MS: f64 = 20.0;

/// What made a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ecrt bench --backend sim`: the accelerator in Verilator.
    Accelerator,
    /// `ecrt estimate`: Yosys resources of the accelerator.
    Estimate,
    /// `ecrt bench-modexp`: the exponentiation unit in Verilator.
    ModExp,
    /// `ecrt bench-multiplier`: the multipliers alone, side by side.
    Multiplier,
    /// `ecrt explore`: a sweep of configurations, projected for one chip.
    Explore,
    /// `ecrt bench --backend xdma`: the host's overhead.
    Host,
    /// `ecrt bench` (`scripts/bench`): the CPU backend against phe.
    Cpu,
    /// `python -m ecrt.bench`: the Python package against phe, in one Python process.
    Python,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Accelerator,
        Kind::Explore,
        Kind::Estimate,
        Kind::ModExp,
        Kind::Multiplier,
        Kind::Host,
        Kind::Cpu,
        Kind::Python,
    ];

    /// The name recorded.json uses.
    fn name(self) -> &'static str {
        match self {
            Kind::Accelerator => "bench-sim",
            Kind::Estimate => "estimate",
            Kind::ModExp => "bench-modexp",
            Kind::Multiplier => "bench-multiplier",
            Kind::Explore => "explore",
            Kind::Host => "bench-xdma",
            Kind::Cpu => "bench-cpu",
            Kind::Python => "bench-python",
        }
    }

    fn from_name(name: &str) -> anyhow::Result<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .with_context(|| format!("unknown record kind `{}`", ecrt_driver::redact::redacted(name)))
    }

    /// The kind of a report as a tool wrote it.
    fn of_report(report: &Value) -> Option<Kind> {
        match report["backend"].as_str() {
            Some("sim") => Some(Kind::Accelerator),
            Some("xdma") => Some(Kind::Host),
            Some("cpu") => Some(Kind::Cpu),
            _ if report.get("multiplications_per_exponentiation").is_some() => Some(Kind::ModExp),
            _ if report.get("multipliers").is_some() => Some(Kind::Multiplier),
            _ if report["tool"] == "ecrt explore" => Some(Kind::Explore),
            _ if report["tool"] == "python -m ecrt.bench" => Some(Kind::Python),
            _ if report.get("verilog_sha256").is_some() => Some(Kind::Estimate),
            _ => None,
        }
    }

    fn heading(self) -> &'static str {
        match self {
            Kind::Accelerator => "The accelerator",
            Kind::Estimate => "Resources",
            Kind::ModExp => "The exponentiation unit",
            Kind::Multiplier => "The Montgomery multipliers",
            Kind::Explore => "The configuration space",
            Kind::Host => "Host overhead",
            Kind::Cpu => "The CPU backend against phe",
            Kind::Python => "The Python package against phe",
        }
    }

    fn blurb(self) -> &'static str {
        match self {
            Kind::Accelerator => {
                "`ecrt bench --backend sim`: the accelerator's Verilator model (cycle counts, exact), its Yosys \
                 resource estimate, and what they project for one xc7vx690t at 100 MHz."
            }
            Kind::Estimate => {
                "`ecrt estimate`: Yosys's resource estimate of the whole accelerator (not a Vivado result)."
            }
            Kind::ModExp => {
                "`ecrt bench-modexp`: the two-slot exponentiation unit alone in Verilator, random moduli and \
                 exponents of the configuration's sizes, every result checked."
            }
            Kind::Multiplier => {
                "`ecrt bench-multiplier`: the multiplier alone, sized for a key's p², for each number of limbs \
                 per step k (cycles from Verilator, every product checked against the golden model); Yosys \
                 resources and the logic delay of each (flattened at 512 bits); DSP-cycles of one multiplication \
                 (two are in flight) against the schoolbook bound. Records made while a separate classic \
                 digit-serial multiplier ran the exact-quotient operations (2·S + 2 cycles) show it too."
            }
            Kind::Explore => {
                "`ecrt explore`: each configuration's cycles from its exact formulas (checked against Verilator), \
                 the Yosys estimate of a one-core accelerator, the cores that fit one xc7vx690t within 80 % of \
                 every resource, and that chip's throughput at 100 MHz and at the plausible clock; the Pareto \
                 front of latency against chip throughput is marked, and drawn beside the record."
            }
            Kind::Host => {
                "`ecrt bench --backend xdma`: the driver's own CPU time per decryption on the XDMA path, \
                 against an emulated device that answers at once (median of the rounds); in the same run, the \
                 path through `ecrt serve` (the client's and the service's CPU time) and one CPU thread's \
                 decryption, to which both paths are compared as shares."
            }
            Kind::Cpu => {
                "`scripts/bench` (`ecrt bench --backend cpu`): median passes over the same ciphertexts, \
                 interleaved, in one run; ratios below 1 mean ecrt is faster."
            }
            Kind::Python => {
                "`python -m ecrt.bench`: in one Python process, on the same ciphertexts, interleaved passes of \
                 phe's `[private_key.decrypt(x) for x in xs]` and of `ecrt.Decryptor(...).decrypt(xs)` on one \
                 thread and on all (the cpu backend), every pass's values checked against phe's; ratios below 1 \
                 mean ecrt is faster. Opening a key includes its checks (p·q = n, p ≠ q, both prime)."
            }
        }
    }
}

/// One measurement record.
#[derive(Debug, Clone)]
pub struct Record {
    /// Its name: the file's stem, or the name given in recorded.json; the heading of its table.
    pub name: String,
    /// Where it is, relative to the repository's root.
    pub path: String,
    /// What made it.
    pub kind: Kind,
    /// The report, as the tool wrote it (or the recorded part of one).
    pub report: Value,
    /// How it was made, as its metadata says.
    pub command: Option<String>,
    /// When (YYYY-MM-DD).
    pub date: Option<String>,
    /// On what.
    pub machine: Option<String>,
    /// Anything else to know.
    pub note: Option<String>,
    /// An earlier run's figures, not regenerated (recorded.json).
    pub recorded: bool,
    /// Rows no tool writes: (figure, value).
    pub extra: Vec<(String, String)>,
    /// Whether the summary may take figures from it (not a superseded design or an alternative
    /// configuration: `"in_summary": false` in its metadata).
    pub in_summary: bool,
    /// A picture the tool drew with it, `NAME.svg` beside the report, relative to docs/.
    pub picture: Option<String>,
}

fn opt_string(value: &Value, key: &str) -> Option<String> {
    value[key].as_str().map(str::to_string)
}

/// Every record in `dir`: the reports first (newest first), then the recorded ones.
pub fn load(dir: &Path) -> anyhow::Result<Vec<Record>> {
    let read = |path: &Path| -> anyhow::Result<Value> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect::<anyhow::Result<_>>()?;
    names.sort();
    let mut fresh = Vec::new();
    let mut recorded = Vec::new();
    for file in &names {
        let Some(stem) = file.strip_suffix(".json") else { continue };
        if stem.ends_with(".meta") {
            let report = format!("{}.json", stem.trim_end_matches(".meta"));
            anyhow::ensure!(names.contains(&report), "docs/figures/{file} describes {report}, which is missing");
            continue;
        }
        let value = read(&dir.join(file))?;
        if stem == "recorded" {
            let note = opt_string(&value, "note");
            for entry in value["records"].as_array().context("recorded.json: no \"records\" array")? {
                let name = entry["name"].as_str().context("recorded.json: a record without a name")?;
                let extra = match entry.get("extra") {
                    None => Vec::new(),
                    Some(rows) => rows
                        .as_array()
                        .context("recorded.json: \"extra\" is not an array")?
                        .iter()
                        .map(|row| match (row[0].as_str(), row[1].as_str()) {
                            (Some(a), Some(b)) => Ok((a.to_string(), b.to_string())),
                            _ => bail!("recorded.json, {name}: an extra row is not [figure, value]"),
                        })
                        .collect::<anyhow::Result<_>>()?,
                };
                recorded.push(Record {
                    name: name.to_string(),
                    path: format!("docs/figures/{file}"),
                    kind: Kind::from_name(entry["kind"].as_str().unwrap_or_default())
                        .with_context(|| format!("recorded.json, {name}"))?,
                    report: entry["report"].clone(),
                    command: opt_string(entry, "command"),
                    date: opt_string(entry, "date"),
                    machine: opt_string(entry, "machine"),
                    note: opt_string(entry, "note").or_else(|| note.clone()),
                    recorded: true,
                    extra,
                    in_summary: entry["in_summary"].as_bool().unwrap_or(true),
                    picture: None,
                });
            }
            continue;
        }
        let kind =
            Kind::of_report(&value).with_context(|| format!("docs/figures/{file}: not a report of a known tool"))?;
        let meta_path = dir.join(format!("{stem}.meta.json"));
        let meta = if meta_path.exists() { read(&meta_path)? } else { Value::Null };
        fresh.push(Record {
            name: stem.to_string(),
            path: format!("docs/figures/{file}"),
            kind,
            report: value,
            command: opt_string(&meta, "command"),
            date: opt_string(&meta, "date"),
            machine: opt_string(&meta, "machine"),
            note: opt_string(&meta, "note"),
            recorded: false,
            extra: Vec::new(),
            in_summary: meta["in_summary"].as_bool().unwrap_or(true),
            picture: names.contains(&format!("{stem}.svg")).then(|| format!("figures/{stem}.svg")),
        });
    }
    // Newest first; the order of names breaks ties.
    fresh.sort_by(|a, b| b.date.cmp(&a.date));
    let mut records = fresh;
    records.extend(recorded);
    for (i, r) in records.iter().enumerate() {
        anyhow::ensure!(
            r.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "record name `{}`: use letters, digits, '-' and '_' (it becomes an anchor)",
            ecrt_driver::redact::redacted(&r.name)
        );
        anyhow::ensure!(records[..i].iter().all(|s| s.name != r.name), "two records are named {:?}", r.name);
    }
    Ok(records)
}

/// docs/figures.md from the records in `dir` (docs/figures/).
pub fn render(dir: &Path) -> anyhow::Result<String> {
    Ok(render_records(&load(dir)?))
}

/// A figure: one value, or the range of several runs' values.
#[derive(Debug, Clone, Copy)]
struct Val {
    lo: f64,
    hi: f64,
}

impl Val {
    fn one(x: f64) -> Val {
        Val { lo: x, hi: x }
    }

    /// f on both ends (f monotone).
    fn map(self, f: impl Fn(f64) -> f64) -> Val {
        let (a, b) = (f(self.lo), f(self.hi));
        Val { lo: a.min(b), hi: a.max(b) }
    }

    fn show(self, f: impl Fn(f64) -> String) -> String {
        let (a, b) = (f(self.lo), f(self.hi));
        if a == b {
            a
        } else {
            format!("{a}–{b}")
        }
    }
}

/// A number or an array of numbers at a dotted path.
fn get(report: &Value, path: &str) -> Option<Val> {
    let value = path.split('.').try_fold(report, |v, key| v.get(key))?;
    if let Some(x) = value.as_f64() {
        return Some(Val::one(x));
    }
    let xs: Vec<f64> = value.as_array()?.iter().map(Value::as_f64).collect::<Option<_>>()?;
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (!xs.is_empty()).then_some(Val { lo, hi })
}

/// x with `decimals` decimals and thousands separated by commas.
fn num(x: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = text.split_once('.').map_or((text.as_str(), None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

fn int(v: Val) -> String {
    v.show(|x| num(x, 0))
}

fn dec(v: Val, decimals: usize) -> String {
    v.show(|x| num(x, decimals))
}

/// Without decimals when every end is whole, else with `decimals`.
fn whole_or(v: Val, decimals: usize) -> String {
    if v.lo.fract() == 0.0 && v.hi.fract() == 0.0 {
        int(v)
    } else {
        dec(v, decimals)
    }
}

/// A bit width, without thousands separators.
fn bits(v: Val) -> String {
    v.show(|x| format!("{x:.0}"))
}

fn mega(v: Val) -> String {
    format!("{} M", v.show(|x| num(x / 1e6, 1)))
}

/// The key size a record is about.
fn key_bits(r: &Record) -> Option<u64> {
    get(&r.report, "key_bits")
        .or_else(|| get(&r.report, "config.key_bits"))
        .or_else(|| get(&r.report["points"][0], "config.key_bits"))
        .map(|v| v.lo as u64)
}

/// One line of a record's table.
struct Row {
    figure: String,
    value: String,
    target: String,
}

fn row(figure: &str, value: String) -> Row {
    Row { figure: figure.into(), value, target: String::new() }
}

fn with_target(figure: &str, value: String, target: String) -> Row {
    Row { figure: figure.into(), value, target }
}

/// "ratio× over" or "ratio× under" a bound, with "met" or "missed".
fn against(v: Val, target: f64, at_most: bool) -> String {
    let (met, ratio) =
        if at_most { (v.hi <= target, v.map(|x| x / target)) } else { (v.lo >= target, v.map(|x| target / x)) };
    if met {
        "met".into()
    } else {
        format!("missed, {}×", dec(ratio, 1))
    }
}

fn configuration(config: &Value) -> Option<String> {
    let key = get(config, "key_bits")?;
    let mut parts = vec![format!("{}-bit key", bits(key))];
    if let Some(cores) = get(config, "cores") {
        parts.push(format!("{} core{}", int(cores), if cores.hi > 1.0 { "s" } else { "" }));
    }
    if let Some(stream) = get(config, "stream_bits") {
        parts.push(format!("{}-bit streams", bits(stream)));
    }
    match (config["schedule"].as_str(), get(config, "window_bits")) {
        (Some("segmented"), _) => parts.push("segmented schedule".into()),
        (_, Some(w)) => parts.push(format!("windows of {} bits", int(w))),
        _ => {}
    }
    // Records made before the folding multiplier have no such field: one digit per step.
    match get(config, "digits_per_step") {
        Some(k) => parts.push(format!("{} digits per step (folding multiplier)", int(k))),
        None => parts.push("one digit per step (classic multiplier only)".into()),
    }
    Some(parts.join(", "))
}

fn accelerator_rows(r: &Value) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(c) = configuration(&r["config"]) {
        rows.push(row("configuration", c));
    }
    if let Some(v) = get(r, "verified") {
        rows.push(row("decryptions checked against the golden model", int(v)));
    }
    if let Some(v) = get(r, "latency_cycles") {
        let ms = v.map(|c| c / (REFERENCE_MHZ * 1e3));
        rows.push(with_target(
            "latency, idle pipeline, first input beat to last output beat",
            format!("{} cycles ({} ms at 100 MHz)", int(v), dec(ms, 2)),
            format!("≤ 57,700 (MESA): {}", against(v, MESA_CYCLES, true)),
        ));
    }
    let cores = get(r, "cores").or_else(|| get(r, "config.cores")).map_or(1.0, |c| c.lo);
    if cores > 1.0 {
        if let Some(v) = get(r, "cycles_per_decryption") {
            rows.push(row("cycles per decryption, steady state, whole accelerator", whole_or(v, 1)));
        }
    }
    if let Some(v) = get(r, "cycles_per_decryption_per_core") {
        rows.push(row("cycles per decryption, steady state, per core", whole_or(v, 1)));
    }
    let resources: Option<Vec<Val>> = ["dsp48e1", "lut", "ff", "lutram", "bram36"].iter().map(|k| get(r, k)).collect();
    if let Some(res) = &resources {
        rows.push(row(
            "DSP48E1 / LUT / FF / LUTRAM / BRAM36 (Yosys estimate)",
            res.iter().map(|v| int(*v)).collect::<Vec<_>>().join(" / "),
        ));
    }
    if let Some(v) = get(r, "dsp_cycles_per_decryption") {
        let bound = get(r, "key_bits").map(|k| schoolbook_bound_per_decryption(k.lo as usize));
        let value = match bound {
            Some(b) => {
                format!("{} ({}× the schoolbook bound, {})", mega(v), dec(v.map(|x| x / b), 2), mega(Val::one(b)))
            }
            None => mega(v),
        };
        rows.push(row("DSP-cycles per decryption", value));
    }
    if let Some(v) = get(r, "cores_per_xc7vx690t") {
        let limit = r["xc7vx690t_limiting_resource"].as_str().unwrap_or("?");
        let label = PROJECTION_PART.resources().into_iter().find(|(k, ..)| *k == limit).map_or(limit, |(_, l, _)| l);
        let per_resource: Vec<String> = PROJECTION_PART
            .resources()
            .into_iter()
            .filter_map(|(key, name, cap)| {
                let used = get(r, key)?;
                (used.lo > 0.0)
                    .then(|| format!("{name} {}", int(used.map(|u| (cap * UTILISATION / (u / cores)).floor()))))
            })
            .collect();
        rows.push(row(
            "cores per xc7vx690t within 80 % of every resource",
            format!("{} ({label} the limit; per resource: {})", int(v), per_resource.join(", ")),
        ));
    }
    if let Some(v) = get(r, "projected_decryptions_per_s_100mhz") {
        rows.push(with_target(
            "projected decryptions/s, one xc7vx690t at 100 MHz",
            int(v),
            format!("≥ 3,466: {}", against(v, TARGET_THROUGHPUT, false)),
        ));
    }
    if let Some(v) = get(r, "logic_delay_ns") {
        let clock =
            get(r, "plausible_clock_mhz").map(|c| format!(" (plausible clock {} MHz)", dec(c, 0))).unwrap_or_default();
        rows.push(with_target(
            "longest register-to-register path, logic only",
            format!("{} ns{clock}", dec(v, 2)),
            format!("≤ 5 ns: {}", against(v, TARGET_LOGIC_NS, true)),
        ));
    }
    if let Some(v) = get(r, "simulated_cycles_per_s") {
        rows.push(row("simulated cycles per second (Verilator)", int(v.map(|x| (x / 1000.0).round() * 1000.0))));
    }
    if let Some(v) = get(r, "wall_s_per_decryption") {
        let target = if get(r, "key_bits").is_some_and(|k| k.lo == 2048.0) {
            format!("< 2 s: {}", against(v, TARGET_SIM_S, true))
        } else {
            String::new()
        };
        rows.push(with_target("wall time per decryption in simulation", format!("{} s", dec(v, 2)), target));
    }
    rows
}

fn estimate_rows(r: &Value) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(c) = configuration(&r["config"]) {
        rows.push(row("configuration", c));
    }
    if let Some(method) = r["method"].as_str() {
        rows.push(row("method", method.to_string()));
    }
    for (key, label) in [
        ("dsp48e1", "DSP48E1"),
        ("lut", "LUT"),
        ("ff", "FF"),
        ("lutram", "LUTRAM"),
        ("bram36", "BRAM36"),
        ("carry4", "CARRY4"),
    ] {
        if let Some(v) = get(r, key) {
            rows.push(row(label, int(v)));
        }
    }
    if let Some(modules) = r["by_module"].as_array() {
        let total = |m: &Value| m["lut"].as_f64().unwrap_or(0.0) * m["instances"].as_f64().unwrap_or(0.0);
        let largest: Vec<String> = modules
            .iter()
            .take(LARGEST_MODULES)
            .map(|m| {
                format!("`{}` ×{}: {}", m["module"].as_str().unwrap_or("?"), m["instances"], int(Val::one(total(m))))
            })
            .collect();
        if !largest.is_empty() {
            rows.push(row("most LUTs (module, copies: LUT)", largest.join("; ")));
        }
    }
    if let Some(v) = get(r, "logic_delay_ns") {
        let clock =
            get(r, "plausible_clock_mhz").map(|c| format!(" (plausible clock {} MHz)", dec(c, 0))).unwrap_or_default();
        rows.push(row("longest register-to-register path, logic only", format!("{} ns{clock}", dec(v, 2))));
    }
    if let Some(path) = r["critical_path_summary"].as_str() {
        rows.push(row("its cells", path.to_string()));
    }
    if let Some(tool) = r["tool"].as_str() {
        rows.push(row("tool", tool.to_string()));
    }
    if let Some(sha) = r["verilog_sha256"].as_str() {
        rows.push(row("SHA-256 of the Verilog", format!("`{}…`", &sha[..sha.len().min(16)])));
    }
    rows
}

/// Modules named in an estimate's "most LUTs" row.
const LARGEST_MODULES: usize = 3;

/// The table of hierarchical estimates against flat ones of the same Verilog, if any.
fn methods_table(records: &[&Record]) -> Vec<String> {
    fn of<'a>(records: &'a [&'a Record], method: &'a str) -> impl Iterator<Item = &'a &'a Record> {
        records.iter().filter(move |r| r.report["method"].as_str() == Some(method))
    }
    let mut hierarchical: Vec<&&Record> = of(records, "hierarchical").collect();
    hierarchical.sort_by_key(|r| key_bits(r));
    let mut lines = Vec::new();
    for hier in hierarchical {
        let sha = &hier.report["verilog_sha256"];
        let Some(flat) = of(records, "flat").find(|f| &f.report["verilog_sha256"] == sha) else { continue };
        if lines.is_empty() {
            lines.push("| key bits | records (hierarchical / flat) | LUT | FF | DSP48E1 | LUTRAM |".to_string());
            lines.push("|---|---|---|---|---|---|".to_string());
        }
        let cmp = |key: &str| match (get(&hier.report, key), get(&flat.report, key)) {
            (Some(h), Some(f)) if f.lo > 0.0 => {
                format!("{} / {} ({:+.1} %)", int(h), int(f), 100.0 * (h.lo / f.lo - 1.0))
            }
            (Some(h), Some(f)) => format!("{} / {}", int(h), int(f)),
            _ => "–".to_string(),
        };
        lines.push(format!(
            "| {} | [{}](#{}) / [{}](#{}) | {} | {} | {} | {} |",
            get(&hier.report, "config.key_bits").map(bits).unwrap_or_default(),
            hier.name,
            hier.name.to_lowercase(),
            flat.name,
            flat.name.to_lowercase(),
            cmp("lut"),
            cmp("ff"),
            cmp("dsp48e1"),
            cmp("lutram"),
        ));
    }
    lines
}

fn modexp_rows(r: &Value) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(key) = get(r, "config.key_bits") {
        rows.push(row("moduli / exponents", format!("{} / {} bits", bits(key), bits(key.map(|b| (b / 2.0).floor())))));
    }
    let ints = [
        ("config.digits_per_step", "digits per step of the folding multiplier, k"),
        ("digits", "digits S of a classic multiplication"),
        ("cycles_per_multiplication", "cycles per classic multiplication (either slot)"),
        ("cycles_per_fold_multiplication", "cycles per folding multiplication (either slot)"),
        ("multiplications_per_exponentiation", "multiplications per exponentiation"),
        ("fold_multiplications_per_exponentiation", "of them on the folding multiplier"),
        ("latency_cycles_per_exponentiation", "cycles per exponentiation, both slots busy (latency of each)"),
    ];
    for (key, label) in ints {
        if let Some(v) = get(r, key) {
            rows.push(row(label, int(v)));
        }
    }
    if let Some(v) = get(r, "cycles_per_exponentiation_steady_state") {
        rows.push(row("cycles per exponentiation, steady state (two in flight)", whole_or(v, 1)));
    }
    if let Some(v) = get(r, "exponentiations_checked") {
        rows.push(row("exponentiations checked", int(v)));
    }
    if let Some(v) = get(r, "dsp48e1") {
        rows.push(row("DSP48E1 (Yosys estimate)", int(v)));
    }
    if let (Some(d), Some(b)) = (get(r, "dsp_cycles_per_exponentiation"), get(r, "schoolbook_bound_dsp_cycles")) {
        rows.push(row(
            "DSP-cycles per exponentiation",
            format!("{} ({}× the schoolbook bound, {})", mega(d), dec(d.map(|x| x / b.lo), 2), mega(b)),
        ));
    } else if let Some(b) = get(r, "schoolbook_bound_dsp_cycles") {
        rows.push(row("schoolbook bound per exponentiation (DSP-cycles)", mega(b)));
    }
    let resources: Option<Vec<Val>> =
        ["estimate.lut", "estimate.ff", "estimate.lutram", "estimate.bram36"].iter().map(|k| get(r, k)).collect();
    if let Some(res) = resources {
        rows.push(row(
            "LUT / FF / LUTRAM / BRAM36 (Yosys estimate)",
            res.iter().map(|v| int(*v)).collect::<Vec<_>>().join(" / "),
        ));
    }
    if let Some(v) = get(r, "simulated_cycles_per_s") {
        rows.push(row("simulated cycles per second (Verilator)", int(v.map(|x| (x / 1000.0).round() * 1000.0))));
    }
    if let Some(v) = get(r, "verilator_build_seconds") {
        let cached = if r["verilator_build_cached"].as_bool() == Some(true) { " (cached)" } else { "" };
        rows.push(row("Verilator build", format!("{} s{cached}", dec(v, 1))));
    }
    rows
}

fn multiplier_rows(r: &Value) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(bits) = get(r, "modulus_bits") {
        rows.push(row("modulus", format!("{} bits", self::bits(bits))));
    }
    for m in r["multipliers"].as_array().into_iter().flatten() {
        let (Some(k), Some(steps), Some(cycles)) =
            (get(m, "digits_per_step"), get(m, "steps"), get(m, "cycles_per_multiplication"))
        else {
            continue;
        };
        let name = match m["multiplier"].as_str() {
            Some("fold") => format!("folding, k = {} ({} steps)", int(k), int(steps)),
            _ => format!("classic, one digit per step ({} steps)", int(steps)),
        };
        let mut parts = vec![format!("{} cycles", int(cycles))];
        let resources: Option<Vec<Val>> = ["dsp48e1", "lut", "ff"].iter().map(|key| get(m, key)).collect();
        if let Some(res) = resources {
            parts.push(format!("{} DSP48E1 / {} LUT / {} FF", int(res[0]), int(res[1]), int(res[2])));
        }
        if let (Some(d), Some(x)) = (get(m, "dsp_cycles_per_multiplication"), get(m, "ratio_to_schoolbook_bound")) {
            parts.push(format!("{} DSP-cycles ({}× the bound)", int(d), dec(x, 2)));
        }
        if let Some(delay) = get(m, "logic_delay_ns") {
            parts.push(format!("{} ns of logic", dec(delay, 2)));
        }
        rows.push(row(&name, parts.join("; ")));
    }
    rows
}

/// The best point of an explore record by `key` (largest, or smallest when `lowest`), named.
fn best_point(points: &[Value], key: &str, lowest: bool) -> Option<(String, Val)> {
    let (best, v) = points.iter().filter_map(|p| Some((p, get(p, key)?))).min_by(|(_, a), (_, b)| {
        if lowest {
            a.lo.total_cmp(&b.lo)
        } else {
            b.lo.total_cmp(&a.lo)
        }
    })?;
    Some((point_name(best), v))
}

fn point_name(p: &Value) -> String {
    let part = |key: &str| get(p, key).map(int).unwrap_or_else(|| "?".into());
    let schedule = match p["config"]["schedule"].as_str() {
        Some("segmented") => "segmented".to_string(),
        _ => format!("{}-bit windows", part("config.window_bits")),
    };
    format!("k = {}, {schedule}", part("config.digits_per_step"))
}

fn explore_rows(r: &Value) -> Vec<Row> {
    let mut rows = Vec::new();
    let points = r["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let is_2048 = get(&r["points"][0], "config.key_bits").is_some_and(|b| b.lo == 2048.0);
    let target = |text: &str, v: Val, goal: f64, at_most: bool| {
        if is_2048 {
            format!("{text}: {}", against(v, goal, at_most))
        } else {
            String::new()
        }
    };
    if let Some((name, v)) = best_point(points, "latency_cycles", true) {
        rows.push(with_target(
            "lowest latency of the sweep",
            format!("{} cycles ({name})", int(v)),
            target("≤ 57,700 (MESA)", v, MESA_CYCLES, true),
        ));
    }
    if let Some((name, v)) = best_point(points, "decryptions_per_s_100mhz", false) {
        rows.push(with_target(
            "highest chip throughput of the sweep, 100 MHz",
            format!("{}/s ({name})", int(v)),
            target("≥ 3,466", v, TARGET_THROUGHPUT, false),
        ));
    }
    rows.extend(schedule_rows(points));
    for p in points {
        let mut parts = Vec::new();
        if let (Some(lat), Some(ms)) = (get(p, "latency_cycles"), get(p, "latency_ms_100mhz")) {
            parts.push(format!("latency {} cycles ({} ms)", int(lat), dec(ms, 3)));
        }
        let resources: Option<Vec<Val>> = ["dsp48e1", "lut", "ff"].iter().map(|key| get(p, key)).collect();
        if let Some(res) = resources {
            parts.push(format!("{} DSP48E1 / {} LUT / {} FF a core", int(res[0]), int(res[1]), int(res[2])));
        }
        if let (Some(cores), Some(rate)) = (get(p, "cores_per_xc7vx690t"), get(p, "decryptions_per_s_100mhz")) {
            let limit = p["xc7vx690t_limiting_resource"].as_str().unwrap_or("?");
            let label =
                PROJECTION_PART.resources().into_iter().find(|(k, ..)| *k == limit).map_or(limit, |(_, l, _)| l);
            let at_clock = match (get(p, "decryptions_per_s_plausible_clock"), get(p, "plausible_clock_mhz")) {
                (Some(d), Some(mhz)) => format!(", {}/s at {} MHz", int(d), int(mhz)),
                _ => String::new(),
            };
            let noun = if cores.lo == 1.0 { "core" } else { "cores" };
            parts.push(format!("{} {noun} ({label}): {}/s at 100 MHz{at_clock}", int(cores), int(rate)));
        }
        if let Some(x) = get(p, "ratio_to_schoolbook_bound") {
            parts.push(format!("{}× the bound", dec(x, 2)));
        }
        if p["pareto"] == true {
            parts.push("**Pareto**".into());
        }
        rows.push(row(&point_name(p), parts.join("; ")));
    }
    rows
}

/// For each k swept with both schedules: the windows point of lowest latency against the
/// segmented point, in latency and in DSP-cycles per decryption (throughput per DSP).
fn schedule_rows(points: &[Value]) -> Vec<Row> {
    let is = |p: &Value, schedule: &str| p["config"]["schedule"].as_str().unwrap_or("windows") == schedule;
    let mut ks: Vec<u64> = points.iter().filter_map(|p| p["config"]["digits_per_step"].as_u64()).collect();
    ks.sort_unstable();
    ks.dedup();
    let mut rows = Vec::new();
    for k in ks {
        let of_k = |schedule: &str| {
            let mut pts: Vec<&Value> = points
                .iter()
                .filter(|p| p["config"]["digits_per_step"].as_u64() == Some(k) && is(p, schedule))
                .collect();
            pts.sort_by_key(|p| p["latency_cycles"].as_u64());
            pts.first().copied()
        };
        let (Some(windows), Some(segmented)) = (of_k("windows"), of_k("segmented")) else { continue };
        let figures = |p: &Value| Some((get(p, "latency_cycles")?, get(p, "dsp_cycles_per_decryption")?));
        let (Some((wl, wd)), Some((sl, sd))) = (figures(windows), figures(segmented)) else { continue };
        let better = |w: f64, s: f64| if w <= s { "windows" } else { "segmented" };
        let window_bits = get(windows, "config.window_bits").map(int).unwrap_or_else(|| "?".into());
        rows.push(row(
            &format!("k = {k}: {window_bits}-bit windows against segmented"),
            format!(
                "latency {} against {} cycles (×{} for segmented); DSP-cycles per decryption {} M against {} M \
                 (×{}); lower latency: {}, more throughput per DSP: {}",
                int(wl),
                int(sl),
                dec(Val::one(sl.lo / wl.lo), 2),
                dec(Val::one(wd.lo / 1e6), 1),
                dec(Val::one(sd.lo / 1e6), 1),
                dec(Val::one(sd.lo / wd.lo), 2),
                better(wl.lo, sl.lo),
                better(wd.lo, sd.lo)
            ),
        ));
    }
    rows
}

fn host_rows(r: &Value) -> Vec<Row> {
    let mut rows = Vec::new();
    let setup: Vec<String> = [
        get(r, "key_bits").map(|v| format!("{}-bit key", bits(v))),
        get(r, "stream_bits").map(|v| format!("{}-bit streams", bits(v))),
        get(r, "count").zip(get(r, "rounds")).map(|(c, n)| format!("{} decryptions × {} rounds", int(c), int(n))),
        get(r, "runs").map(|v| format!("{} runs", int(v))),
        r["device"].as_str().map(|d| format!("on `{d}`")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !setup.is_empty() {
        rows.push(row("setup", setup.join(", ")));
    }
    if let Some(v) = get(r, "host_cpu_us_per_decryption") {
        rows.push(with_target(
            "driver CPU time per decryption (user + system)",
            format!("{} µs", dec(v, 1)),
            format!("≤ 5 µs: {}", against(v, TARGET_HOST_US, true)),
        ));
    }
    if let (Some(u), Some(s)) = (get(r, "user_us_per_decryption"), get(r, "system_us_per_decryption")) {
        rows.push(row("of which user / system", format!("{} / {} µs", dec(u, 1), dec(s, 1))));
    }
    if let Some(v) = get(r, "framing_us_per_decryption") {
        rows.push(row("framing alone (encode and decode in memory)", format!("{} µs", dec(v, 1))));
    }
    if let Some(v) = get(r, "context_switches_per_decryption") {
        rows.push(row("context switches per decryption (counted: they hold when the time swings)", dec(v, 3)));
    }
    if let Some(v) = get(r, "decryptions_per_second_per_core") {
        rows.push(row("decryptions/s one host core could feed", int(v.map(|x| (x / 1000.0).round() * 1000.0))));
    }
    if let Some(v) = get(r, "wall_decryptions_per_second") {
        rows.push(row("decryptions/s through the emulated device (wall)", int(v)));
    }
    if let Some(v) = get(r, "cpu_one_thread_us_per_decryption") {
        rows.push(row("one CPU thread's decryption, same run", format!("{} µs", dec(v, 0))));
    }
    if let Some(v) = get(r, "direct_share") {
        rows.push(with_target(
            "direct path, as a share of one CPU thread's decryption",
            format!("{} %", dec(v.map(|x| 100.0 * x), 3)),
            format!("≤ {} %: {}", 100.0 * TARGET_DIRECT_SHARE, against(v, TARGET_DIRECT_SHARE, true)),
        ));
    }
    if let (Some(total), Some(client), Some(service)) = (
        get(r, "service_total_us_per_decryption"),
        get(r, "service_client_us_per_decryption"),
        get(r, "service_us_per_decryption"),
    ) {
        rows.push(row(
            "through `ecrt serve`: client + service CPU time per decryption",
            format!("{} µs ({} + {})", dec(total, 1), dec(client, 1), dec(service, 1)),
        ));
    }
    if let Some(v) = get(r, "service_context_switches_per_decryption") {
        rows.push(row("through `ecrt serve`: context switches per decryption, client + service", dec(v, 3)));
    }
    if let Some(v) = get(r, "service_share") {
        rows.push(with_target(
            "through `ecrt serve`, as a share of one CPU thread's decryption",
            format!("{} %", dec(v.map(|x| 100.0 * x), 3)),
            format!("≤ {} %: {}", 100.0 * TARGET_SERVICE_SHARE, against(v, TARGET_SERVICE_SHARE, true)),
        ));
    }
    if let Some(v) = get(r, "service_wall_decryptions_per_second") {
        rows.push(row("decryptions/s through `ecrt serve` and the emulated device (wall)", int(v)));
    }
    rows
}

/// The setup of a bench against phe: key size, passes, threads, and whether phe had gmpy2 (the
/// report's `gmpy2_field`).
fn phe_bench_setup(r: &Value, gmpy2_field: &str) -> Vec<Row> {
    let setup: Vec<String> = [
        get(r, "key_bits").map(|v| format!("{}-bit key", bits(v))),
        get(r, "count").zip(get(r, "rounds")).map(|(c, n)| format!("{} ciphertexts × {} rounds", int(c), int(n))),
        get(r, "threads").map(|v| format!("{} threads", int(v))),
        r[gmpy2_field].as_bool().map(|g| if g { "phe with gmpy2".to_string() } else { "phe without gmpy2".into() }),
    ]
    .into_iter()
    .flatten()
    .collect();
    if setup.is_empty() {
        Vec::new()
    } else {
        vec![row("setup", setup.join(", "))]
    }
}

fn cpu_rows(r: &Value) -> Vec<Row> {
    let mut rows = phe_bench_setup(r, "phe_gmpy2");
    for (key, label) in [
        ("ecrt_cpu_ecrt_1_thread", "ecrt eCRT, one thread"),
        ("ecrt_cpu_crt_1_thread", "ecrt CRT, one thread"),
        ("golden_num_bigint_ecrt_1_thread", "golden model (num-bigint) eCRT, one thread"),
        ("phe_raw_decrypt", "phe raw_decrypt"),
        ("phe_decrypt", "phe decrypt"),
    ] {
        if let Some(v) = get(r, &format!("us_per_decryption.{key}")) {
            rows.push(row(&format!("{label}, µs per decryption"), dec(v, 1)));
        }
    }
    if let Some(v) = get(r, "ratio_ecrt_to_phe_decrypt") {
        rows.push(row("ecrt eCRT, one thread / phe decrypt", dec(v, 3)));
    }
    if let Some(v) = get(r, "ratio_ecrt_to_phe_raw_decrypt") {
        rows.push(row("ecrt eCRT, one thread / phe raw_decrypt", dec(v, 3)));
    }
    if let (Some(g), Some(e)) = (
        get(r, "us_per_decryption.golden_num_bigint_ecrt_1_thread"),
        get(r, "us_per_decryption.ecrt_cpu_ecrt_1_thread"),
    ) {
        rows.push(row("golden model (num-bigint) / ecrt eCRT, one thread", dec(Val::one(g.lo / e.lo), 2)));
    }
    if let Some(v) = get(r, "decryptions_per_s_all_threads") {
        rows.push(row("decryptions/s, all threads", int(v)));
    }
    if let Some(v) = get(r, "thread_scaling") {
        rows.push(row("thread scaling", format!("{}×", dec(v, 2))));
    }
    if let Some(v) = get(r, "key_open_ms") {
        rows.push(key_open_row("opening the key file (`ecrt decrypt`'s start)", v));
    }
    rows
}

/// A key's opening time in ms, against its target.
fn key_open_row(figure: &str, v: Val) -> Row {
    let target = format!("≤ {TARGET_KEY_OPEN_MS} ms: {}", against(v, TARGET_KEY_OPEN_MS, true));
    with_target(figure, format!("{} ms", dec(v, 1)), target)
}

fn python_rows(r: &Value) -> Vec<Row> {
    let mut rows = phe_bench_setup(r, "gmpy2");
    let threads = get(r, "threads");
    let all = threads.map(|t| format!("ecrt_{}_threads", int(t))).unwrap_or_default();
    for (key, label) in
        [("phe", "phe decrypt"), ("ecrt_1_thread", "ecrt.Decryptor, one thread"), (&all, "ecrt.Decryptor, all threads")]
    {
        if let Some(v) = get(r, &format!("per_decryption_us.{key}")) {
            rows.push(row(&format!("{label}, µs per decryption"), dec(v, 1)));
        }
    }
    if let Some(v) = get(r, "ratio_ecrt_1_thread_to_phe") {
        let target = format!("≤ {TARGET_PYTHON_RATIO}: {}", against(v, TARGET_PYTHON_RATIO, true));
        rows.push(with_target("ecrt.Decryptor, one thread / phe decrypt", dec(v, 3), target));
    }
    if let Some(v) = get(r, "ratio_ecrt_all_threads_to_phe") {
        rows.push(row("ecrt.Decryptor, all threads / phe decrypt", dec(v, 3)));
    }
    if let Some(v) = get(r, "thread_scaling") {
        let two = threads.is_some_and(|t| t.lo == 2.0);
        let target = if two {
            format!("≥ {TARGET_TWO_THREAD_SCALING}×: {}", against(v, TARGET_TWO_THREAD_SCALING, false))
        } else {
            String::new()
        };
        rows.push(with_target("throughput, all threads / one", format!("{}×", dec(v, 2)), target));
    }
    for (key, label) in [("phe_object", "from a phe PaillierPrivateKey"), ("jwk_file", "from a JWK file")] {
        if let Some(v) = get(r, &format!("key_open_ms.{key}")) {
            rows.push(key_open_row(&format!("opening a key {label}"), v));
        }
    }
    rows
}

fn rows(r: &Record) -> Vec<Row> {
    let mut rows = match r.kind {
        Kind::Accelerator => accelerator_rows(&r.report),
        Kind::Estimate => estimate_rows(&r.report),
        Kind::ModExp => modexp_rows(&r.report),
        Kind::Multiplier => multiplier_rows(&r.report),
        Kind::Explore => explore_rows(&r.report),
        Kind::Host => host_rows(&r.report),
        Kind::Cpu => cpu_rows(&r.report),
        Kind::Python => python_rows(&r.report),
    };
    rows.extend(r.extra.iter().map(|(figure, value)| row(figure, value.clone())));
    rows
}

/// Escapes a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The figures the README and docs/architecture.md point to: (kind, row), each taken from the
/// first 2048-bit record of its kind that has it.
const SUMMARY: [(Kind, &str); 18] = [
    (Kind::Accelerator, "latency, idle pipeline, first input beat to last output beat"),
    (Kind::Accelerator, "cycles per decryption, steady state, per core"),
    (Kind::Accelerator, "DSP48E1 / LUT / FF / LUTRAM / BRAM36 (Yosys estimate)"),
    (Kind::Accelerator, "DSP-cycles per decryption"),
    (Kind::Accelerator, "cores per xc7vx690t within 80 % of every resource"),
    (Kind::Accelerator, "projected decryptions/s, one xc7vx690t at 100 MHz"),
    (Kind::Accelerator, "longest register-to-register path, logic only"),
    (Kind::Accelerator, "simulated cycles per second (Verilator)"),
    (Kind::Accelerator, "wall time per decryption in simulation"),
    (Kind::Explore, "lowest latency of the sweep"),
    (Kind::Explore, "highest chip throughput of the sweep, 100 MHz"),
    (Kind::ModExp, "cycles per folding multiplication (either slot)"),
    (Kind::Host, "driver CPU time per decryption (user + system)"),
    (Kind::Host, "direct path, as a share of one CPU thread's decryption"),
    (Kind::Host, "through `ecrt serve`, as a share of one CPU thread's decryption"),
    (Kind::Cpu, "ecrt eCRT, one thread / phe decrypt"),
    (Kind::Python, "ecrt.Decryptor, one thread / phe decrypt"),
    (Kind::Python, "opening a key from a JWK file"),
];

/// Renders the page.
/// The summary: for each figure of [`SUMMARY`], the newest 2048-bit record that has it, as
/// table lines; a record's link is `link_base` followed by its anchor on the figures page.
fn summary_table(records: &[Record], link_base: &str) -> Vec<String> {
    let mut lines = vec!["| figure | value | target | record |".to_string(), "|---|---|---|---|".to_string()];
    for (kind, figure) in SUMMARY {
        let found = records
            .iter()
            .filter(|r| r.kind == kind && r.in_summary && key_bits(r) == Some(2048))
            .find_map(|r| rows(r).into_iter().find(|row| row.figure == figure).map(|row| (r, row)));
        if let Some((r, row)) = found {
            let recorded = if r.recorded { ", recorded" } else { "" };
            lines.push(format!(
                "| {} | {} | {} | [{}]({link_base}{}){recorded} |",
                cell(figure),
                cell(&row.value),
                cell(&row.target),
                r.name,
                r.name.to_lowercase()
            ));
        }
    }
    lines
}

/// README's table of the accelerator's figures: the summary of docs/figures.md, linked there.
pub fn render_readme_summary(dir: &Path) -> anyhow::Result<String> {
    let records = load(dir)?;
    Ok(summary_table(&records, "docs/figures.md#").join("\n") + "\n")
}

pub fn render_records(records: &[Record]) -> String {
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    line("# Measured figures");
    line("");
    line("<!-- Generated from docs/figures/ by lab/src/figures.rs: do not edit. Regenerate:");
    line("     ECRT_UPDATE_DOCS=1 cargo test -p ecrt-lab --test figures -->");
    line("");
    line(
        "Every measured figure of ecrt, rendered from the records in [figures/](figures/): each \
         report exactly as the tool wrote it, with how and when it was made. What each figure means \
         and the targets are in [background.md](background.md#measures-and-targets). Records marked \
         **Recorded** come from earlier runs whose reports were not kept \
         ([figures/recorded.json](figures/recorded.json)); they have not been regenerated.",
    );
    line("");
    line("To add a figure, run the tool with `--out docs/figures/NAME.json` (the CPU bench writes");
    line("`target/bench/cpu.json`: copy it), add `docs/figures/NAME.meta.json` with the command, the date");
    line("and a note on the machine, and regenerate this page.");
    line("");
    line("## Summary");
    line("");
    line("2048-bit keys; for each figure, the newest record that has it.");
    line("");
    for l in summary_table(records, "#") {
        line(&l);
    }
    for kind in Kind::ALL {
        let of_kind: Vec<&Record> = records.iter().filter(|r| r.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        line("");
        line(&format!("## {}", kind.heading()));
        line("");
        line(kind.blurb());
        if kind == Kind::Estimate {
            let methods = methods_table(&of_kind);
            if !methods.is_empty() {
                line("");
                line("The fast (hierarchical) estimate against the flat run of the same Verilog:");
                line("");
                for l in methods {
                    line(&l);
                }
            }
        }
        for r in of_kind {
            line("");
            line(&format!("### {}", r.name));
            line("");
            let mut about = Vec::new();
            let link = format!("[{}]({})", r.path, r.path.trim_start_matches("docs/"));
            about.push(if r.recorded { format!("**Recorded** in {link}") } else { link });
            if let Some(date) = &r.date {
                about.push(date.clone());
            }
            if let Some(machine) = &r.machine {
                about.push(machine.clone());
            }
            line(&format!("{}.", about.join(", ")));
            if let Some(command) = &r.command {
                line("");
                line(&format!("```sh\n{command}\n```"));
            }
            if let Some(note) = &r.note {
                line("");
                line(note);
            }
            if let Some(picture) = &r.picture {
                line("");
                line(&format!("![{}]({picture})", r.name));
            }
            line("");
            let rows = rows(r);
            let targets = rows.iter().any(|row| !row.target.is_empty());
            if targets {
                line("| figure | value | target |");
                line("|---|---|---|");
            } else {
                line("| figure | value |");
                line("|---|---|");
            }
            for row in rows {
                if targets {
                    line(&format!("| {} | {} | {} |", cell(&row.figure), cell(&row.value), cell(&row.target)));
                } else {
                    line(&format!("| {} | {} |", cell(&row.figure), cell(&row.value)));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(307_743.0, 0), "307,743");
        assert_eq!(num(153_232.5, 1), "153,232.5");
        assert_eq!(num(999.0, 0), "999");
        assert_eq!(num(1000.0, 0), "1,000");
        assert_eq!(num(0.556, 3), "0.556");
        assert_eq!(num(-1234.5, 1), "-1,234.5");
        assert_eq!(dec(Val { lo: 5.7, hi: 6.5 }, 1), "5.7–6.5");
        assert_eq!(dec(Val { lo: 5.71, hi: 5.74 }, 1), "5.7");
    }

    #[test]
    fn kinds_from_reports() {
        assert_eq!(Kind::of_report(&serde_json::json!({"backend": "sim"})), Some(Kind::Accelerator));
        assert_eq!(Kind::of_report(&serde_json::json!({"backend": "xdma"})), Some(Kind::Host));
        assert_eq!(Kind::of_report(&serde_json::json!({"backend": "cpu"})), Some(Kind::Cpu));
        assert_eq!(Kind::of_report(&serde_json::json!({"tool": "python -m ecrt.bench"})), Some(Kind::Python));
        assert_eq!(Kind::of_report(&serde_json::json!({"multiplications_per_exponentiation": 1})), Some(Kind::ModExp));
        assert_eq!(Kind::of_report(&serde_json::json!({"multipliers": []})), Some(Kind::Multiplier));
        assert_eq!(Kind::of_report(&serde_json::json!({"verilog_sha256": "ab"})), Some(Kind::Estimate));
        assert_eq!(Kind::of_report(&serde_json::json!({"tool": "ecrt explore", "points": []})), Some(Kind::Explore));
        assert_eq!(Kind::of_report(&serde_json::json!({"x": 1})), None);
    }

    #[test]
    fn targets() {
        assert_eq!(against(Val::one(307_743.0), MESA_CYCLES, true), "missed, 5.3×");
        assert_eq!(against(Val::one(1_950.0), TARGET_THROUGHPUT, false), "missed, 1.8×");
        assert_eq!(against(Val::one(4.0), TARGET_HOST_US, true), "met");
    }
}
