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
//! Each report is read through the struct its tool writes it with ([`Report`]; [`records`] loads
//! them), and each kind becomes a table's rows ([`rows`], [`text`] for how a figure is written).
//!
//! Regenerate the page after adding or replacing a record:
//! `ECRT_UPDATE_DOCS=1 cargo test -p ecrt-lab --test figures`.

mod records;
mod rows;
mod text;

pub use records::{load, Record, Report};

use anyhow::Context;
use rows::{methods_table, rows};
use serde_json::Value;
use std::path::Path;
use text::cell;

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
    /// `ecrt bench-lanes`: the decryption paths in the deep loop's lanes.
    Lanes,
    /// `ecrt explore`: a sweep of configurations, projected for one chip.
    Explore,
    /// `ecrt bench --backend xdma`: the host's overhead.
    Host,
    /// `ecrt bench` (`scripts/bench`): the CPU backend against phe.
    Cpu,
    /// `python -m ecrt.bench`: the Python package against phe, in one Python process.
    Python,
    /// `python -m ecrt.bench --fate`: `ecrt.fate` against FATE's fate_utils, in one Python process.
    Fate,
}

impl Kind {
    const ALL: [Kind; 10] = [
        Kind::Accelerator,
        Kind::Explore,
        Kind::Estimate,
        Kind::ModExp,
        Kind::Multiplier,
        Kind::Lanes,
        Kind::Host,
        Kind::Cpu,
        Kind::Python,
        Kind::Fate,
    ];

    /// The name recorded.json uses.
    fn name(self) -> &'static str {
        match self {
            Kind::Accelerator => "bench-sim",
            Kind::Estimate => "estimate",
            Kind::ModExp => "bench-modexp",
            Kind::Multiplier => "bench-multiplier",
            Kind::Lanes => "bench-lanes",
            Kind::Explore => "explore",
            Kind::Host => "bench-xdma",
            Kind::Cpu => "bench-cpu",
            Kind::Python => "bench-python",
            Kind::Fate => "bench-fate",
        }
    }

    /// The kind recorded.json names.
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
            _ if report.get("cycles_per_path").is_some() => Some(Kind::Lanes),
            _ if report["tool"] == crate::explore::TOOL => Some(Kind::Explore),
            _ if report["tool"] == crate::python_bench::TOOL => Some(Kind::Python),
            _ if report["tool"] == crate::python_bench::FATE_TOOL => Some(Kind::Fate),
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
            Kind::Lanes => "Decryption paths in the deep loop's lanes",
            Kind::Explore => "The configuration space",
            Kind::Host => "Host overhead",
            Kind::Cpu => "The CPU backend against phe",
            Kind::Python => "The Python package against phe",
            Kind::Fate => "The Python package against FATE's fate_utils",
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
            Kind::Lanes => {
                "`ecrt bench-lanes`: the deep-loop multiplier with k + 3 lanes, each running one prime's \
                 decryption path of a ciphertext, in Verilator: every lane's eCRT term checked against the \
                 golden model and the two terms' sum against the plaintext, cycles exact; Yosys resources and \
                 fanout at full width, the logic delay flattened at 512 bits; and what one xc7vx690t filled with \
                 such engines would give at the design's clocks. These are the paths alone: the lanes engine's \
                 core (`DeepCore`) adds the ciphertext's intake, the terms' memory and the final correction \
                 (`ecrt bench --engine lanes` measures the whole accelerator)."
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
            Kind::Fate => {
                "`python -m ecrt.bench --fate`: in one Python process, on one `CiphertextVector` of floats \
                 encoded by fate_utils' `Coder`, interleaved passes of fate_utils' `sk.decrypt_to_encoded` on \
                 one thread (it holds the GIL) and in a pool of one process per thread (one slice each, the key \
                 opened in each beforehand), and of `ecrt.fate.Decryptor(sk).decrypt_to_encoded` on one thread \
                 and on all (the cpu backend), every pass's result checked against fate_utils' bit for bit; \
                 ratios below 1 mean ecrt is faster."
            }
        }
    }
}

/// docs/figures.md from the records in `dir` (docs/figures/).
pub fn render(dir: &Path) -> anyhow::Result<String> {
    Ok(render_records(&load(dir)?))
}

/// The figures the README and docs/architecture.md point to: (kind, row), each taken from the
/// first 2048-bit record of its kind that has it.
const SUMMARY: [(Kind, &str); 25] = [
    (Kind::Accelerator, "latency, idle pipeline, first input beat to last output beat"),
    (Kind::Accelerator, "cycles per decryption, steady state, per core"),
    (Kind::Accelerator, "DSP48E1 / LUT / FF / LUTRAM / BRAM36 (Yosys estimate)"),
    (Kind::Accelerator, "DSP-cycles per decryption"),
    (Kind::Accelerator, "cores per xc7vx690t within 80 % of every resource"),
    (Kind::Accelerator, "projected decryptions/s, one xc7vx690t at 100 MHz"),
    (Kind::Accelerator, "longest register-to-register path, logic only"),
    (Kind::Accelerator, "at the design's clocks: conservative (1000 / 4L), plausible (1000 / 2L)"),
    (Kind::Accelerator, "highest fanout of a register or DSP, one core (Yosys)"),
    (Kind::Accelerator, "simulated cycles per second (Verilator)"),
    (Kind::Accelerator, "wall time per decryption in simulation"),
    (Kind::Explore, "longest logic path of the sweep"),
    (Kind::Explore, "lowest latency of the sweep at its plausible clock"),
    (Kind::Explore, "highest chip throughput of the sweep at its plausible clock"),
    (Kind::Explore, "points meeting the latency and chip targets together at their plausible clock"),
    (Kind::ModExp, "cycles per folding multiplication (either slot)"),
    (Kind::Host, "driver CPU time per decryption (user + system)"),
    (Kind::Host, "direct path, as a share of one CPU thread's decryption"),
    (Kind::Host, "through `ecrt serve`, as a share of one CPU thread's decryption"),
    (Kind::Cpu, "ecrt eCRT, one thread / phe decrypt"),
    (Kind::Python, "ecrt.Decryptor, one thread / phe decrypt"),
    (Kind::Python, "opening a key from a JWK file"),
    (Kind::Fate, "ecrt.fate.Decryptor, one thread / fate_utils, one thread"),
    (Kind::Fate, "ecrt.fate.Decryptor, all threads / fate_utils, one thread"),
    (Kind::Fate, "ecrt.fate.Decryptor, all threads / fate_utils, all processes"),
];

/// The summary: for each figure of [`SUMMARY`], the newest 2048-bit record that has it, as
/// table lines; a record's link is `link_base` followed by its anchor on the figures page.
fn summary_table(records: &[Record], link_base: &str) -> Vec<String> {
    let mut lines = vec!["| figure | value | target | record |".to_string(), "|---|---|---|---|".to_string()];
    for (kind, figure) in SUMMARY {
        let found = records
            .iter()
            .filter(|r| r.kind() == kind && r.in_summary && r.report.key_bits() == Some(2048))
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

/// docs/figures.md from loaded records.
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
        let of_kind: Vec<&Record> = records.iter().filter(|r| r.kind() == kind).collect();
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
    fn kinds_from_reports() {
        assert_eq!(Kind::of_report(&serde_json::json!({"backend": "sim"})), Some(Kind::Accelerator));
        assert_eq!(Kind::of_report(&serde_json::json!({"backend": "xdma"})), Some(Kind::Host));
        assert_eq!(Kind::of_report(&serde_json::json!({"backend": "cpu"})), Some(Kind::Cpu));
        assert_eq!(Kind::of_report(&serde_json::json!({"tool": "python -m ecrt.bench"})), Some(Kind::Python));
        assert_eq!(Kind::of_report(&serde_json::json!({"tool": "python -m ecrt.bench --fate"})), Some(Kind::Fate));
        assert_eq!(Kind::of_report(&serde_json::json!({"multiplications_per_exponentiation": 1})), Some(Kind::ModExp));
        assert_eq!(Kind::of_report(&serde_json::json!({"multipliers": []})), Some(Kind::Multiplier));
        assert_eq!(Kind::of_report(&serde_json::json!({"cycles_per_path": 1})), Some(Kind::Lanes));
        assert_eq!(Kind::of_report(&serde_json::json!({"verilog_sha256": "ab"})), Some(Kind::Estimate));
        assert_eq!(Kind::of_report(&serde_json::json!({"tool": "ecrt explore", "points": []})), Some(Kind::Explore));
        assert_eq!(Kind::of_report(&serde_json::json!({"x": 1})), None);
        // The kind sniffed is the struct the report reads through.
        let cpu = serde_json::json!({"backend": "cpu", "key_bits": 2048, "ratio_ecrt_to_phe_decrypt": [0.5, 0.6]});
        let kind = Kind::of_report(&cpu).unwrap();
        assert_eq!(Report::read(kind, cpu).unwrap().kind(), Kind::Cpu);
        assert!(Report::read(Kind::Host, serde_json::json!({"backend": "cpu", "key_bits": 2048})).is_err());
    }

    #[test]
    fn targets() {
        use crate::chip::{MESA_CYCLES, TARGET_THROUGHPUT};
        use text::{against, Val};
        assert_eq!(against(Val::one(307_743.0), MESA_CYCLES, true), "missed, 5.3×");
        assert_eq!(against(Val::one(1_950.0), TARGET_THROUGHPUT, false), "missed, 1.8×");
        assert_eq!(against(Val::one(591.0), MESA_CYCLES / 100.0, true), "missed, 1.02×");
        assert_eq!(against(Val::one(4.0), rows::TARGET_HOST_US, true), "met");
    }
}
