//! Reports: written to a file as pretty JSON, printed as one JSON line or as a table.

use anyhow::Context;
use std::path::PathBuf;

/// Writes a report to `out` as pretty JSON, and prints it as one JSON line (`json`) or as `table`
/// renders it.
pub fn emit_report(
    report: &serde_json::Value,
    json: bool,
    out: Option<&PathBuf>,
    table: impl FnOnce(&serde_json::Value),
) -> anyhow::Result<()> {
    if let Some(path) = out {
        std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json {
        println!("{report}");
    } else {
        table(report);
    }
    Ok(())
}
