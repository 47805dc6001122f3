//! Loading the records of docs/figures/: each report through its kind's struct, with what its
//! metadata (or recorded.json) says of how it was made.

use super::Kind;
use crate::bench::cpu::CpuReport;
use crate::bench::host::HostReport;
use crate::bench::sim::SimReport;
use crate::estimate::EstimateReport;
use crate::explore::ExploreReport;
use crate::lanes_bench::LanesReport;
use crate::modexp_bench::ModExpReport;
use crate::multiplier_bench::MultiplierReport;
use crate::python_bench::{FateReport, PythonReport};
use crate::report::Figure;
use anyhow::Context;
use num_traits::ToPrimitive;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

/// A record's report, read through its kind's struct. (A few dozen records are read once per
/// page: the variants' sizes do not matter.)
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Report {
    Accelerator(SimReport),
    Estimate(EstimateReport),
    ModExp(ModExpReport),
    Multiplier(MultiplierReport),
    Lanes(LanesReport),
    Explore(ExploreReport),
    Host(HostReport),
    Cpu(CpuReport),
    Python(PythonReport),
    Fate(FateReport),
}

impl Report {
    /// `value` read as a report of `kind`.
    pub fn read(kind: Kind, value: Value) -> serde_json::Result<Report> {
        fn as_<T: DeserializeOwned>(value: Value, report: fn(T) -> Report) -> serde_json::Result<Report> {
            serde_json::from_value(value).map(report)
        }
        match kind {
            Kind::Accelerator => as_(value, Report::Accelerator),
            Kind::Estimate => as_(value, Report::Estimate),
            Kind::ModExp => as_(value, Report::ModExp),
            Kind::Multiplier => as_(value, Report::Multiplier),
            Kind::Lanes => as_(value, Report::Lanes),
            Kind::Explore => as_(value, Report::Explore),
            Kind::Host => as_(value, Report::Host),
            Kind::Cpu => as_(value, Report::Cpu),
            Kind::Python => as_(value, Report::Python),
            Kind::Fate => as_(value, Report::Fate),
        }
    }

    /// What made it.
    pub fn kind(&self) -> Kind {
        match self {
            Report::Accelerator(_) => Kind::Accelerator,
            Report::Estimate(_) => Kind::Estimate,
            Report::ModExp(_) => Kind::ModExp,
            Report::Multiplier(_) => Kind::Multiplier,
            Report::Lanes(_) => Kind::Lanes,
            Report::Explore(_) => Kind::Explore,
            Report::Host(_) => Kind::Host,
            Report::Cpu(_) => Kind::Cpu,
            Report::Python(_) => Kind::Python,
            Report::Fate(_) => Kind::Fate,
        }
    }

    /// The key size it is about (an explore record's: its first point's).
    pub fn key_bits(&self) -> Option<u64> {
        fn lo<T: ToPrimitive>(bits: &Figure<T>) -> Option<u64> {
            bits.bounds().0.to_u64()
        }
        match self {
            Report::Accelerator(r) => lo(&r.key_bits),
            Report::Estimate(r) => lo(&r.config.read().key_bits),
            Report::ModExp(r) => lo(&r.config.read().key_bits),
            Report::Multiplier(r) => Some(r.key_bits as u64),
            Report::Lanes(r) => Some(r.key_bits as u64),
            Report::Explore(r) => r.points.first().map(|p| p.config.key_bits as u64),
            Report::Host(r) => lo(&r.key_bits),
            Report::Cpu(r) => lo(&r.key_bits),
            Report::Python(r) => lo(&r.key_bits),
            Report::Fate(r) => lo(&r.key_bits),
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
    /// The report, as the tool wrote it (or the recorded part of one).
    pub report: Report,
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

impl Record {
    /// What made it.
    pub fn kind(&self) -> Kind {
        self.report.kind()
    }
}

/// `NAME.meta.json`: how a report was made, every field optional.
#[derive(Debug, Default, Deserialize)]
struct Meta {
    command: Option<String>,
    date: Option<String>,
    machine: Option<String>,
    note: Option<String>,
    in_summary: Option<bool>,
}

/// recorded.json: earlier runs' figures, not regenerated.
#[derive(Debug, Deserialize)]
struct RecordedFile {
    /// The note of every entry that has none of its own.
    note: Option<String>,
    records: Vec<RecordedEntry>,
}

/// One entry of recorded.json.
#[derive(Debug, Deserialize)]
struct RecordedEntry {
    name: String,
    /// [`Kind::name`].
    kind: String,
    command: Option<String>,
    date: Option<String>,
    machine: Option<String>,
    note: Option<String>,
    in_summary: Option<bool>,
    /// Read as `kind` says, once the entry is known.
    report: Value,
    #[serde(default)]
    extra: Vec<(String, String)>,
}

fn read<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
}

/// Every record in `dir`: the reports first (newest first), then the recorded ones.
pub fn load(dir: &Path) -> anyhow::Result<Vec<Record>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
        .collect::<anyhow::Result<_>>()?;
    names.sort();
    let mut fresh = Vec::new();
    let mut recorded = Vec::new();
    for file in &names {
        let Some(stem) = file.strip_suffix(".json") else { continue };
        let path = format!("docs/figures/{file}");
        if stem.ends_with(".meta") {
            let report = format!("{}.json", stem.trim_end_matches(".meta"));
            anyhow::ensure!(names.contains(&report), "{path} describes {report}, which is missing");
            continue;
        }
        if stem == "recorded" {
            let all: RecordedFile = read(&dir.join(file))?;
            for entry in all.records {
                let name = entry.name;
                let kind = Kind::from_name(&entry.kind).with_context(|| format!("{path}, {name}"))?;
                let report = Report::read(kind, entry.report)
                    .with_context(|| format!("{path}, {name}: not a valid {} report", kind.name()))?;
                recorded.push(Record {
                    name,
                    path: path.clone(),
                    report,
                    command: entry.command,
                    date: entry.date,
                    machine: entry.machine,
                    note: entry.note.or_else(|| all.note.clone()),
                    recorded: true,
                    extra: entry.extra,
                    in_summary: entry.in_summary.unwrap_or(true),
                    picture: None,
                });
            }
            continue;
        }
        let value: Value = read(&dir.join(file))?;
        let kind = Kind::of_report(&value).with_context(|| format!("{path}: not a report of a known tool"))?;
        let report =
            Report::read(kind, value).with_context(|| format!("{path}: not a valid {} report", kind.name()))?;
        let meta_path = dir.join(format!("{stem}.meta.json"));
        let meta: Meta = if meta_path.exists() { read(&meta_path)? } else { Meta::default() };
        fresh.push(Record {
            name: stem.to_string(),
            path,
            report,
            command: meta.command,
            date: meta.date,
            machine: meta.machine,
            note: meta.note,
            recorded: false,
            extra: Vec::new(),
            in_summary: meta.in_summary.unwrap_or(true),
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
