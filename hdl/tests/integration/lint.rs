//! The emitted Verilog lints clean under `verilator --lint-only -Wall`, but for the warnings that
//! docs/lint.md lists and justifies. `ECRT_LINT_KEEP=DIR` also writes the linted Verilog to DIR.

use ecrt_hdl::config::AcceleratorConfig;
use ecrt_hdl::emit::{emit, emit_modexp, write, Emitted};
use std::process::Command;

/// The justified warnings: (category, pattern of the signal name with digits replaced by N).
const JUSTIFIED: &[(&str, &str)] = &[
    ("UNUSEDPARAM", "LoadTarget$"),
    ("UNUSEDPARAM", "Operand$"),
    ("UNUSEDPARAM", "SlotState$"),
    ("UNUSEDPARAM", "CoreState$"),
    ("UNUSEDPARAM", "CorrectionState$"),
    ("UNUSEDPARAM", "limbs_per_step"),
    ("UNUSEDPARAM", "redc_column"),
    ("UNUSEDSIGNAL", "pre_dbn$p"),
    ("UNUSEDSIGNAL", "quotient$p"),
    ("UNUSEDSIGNAL", "bN_n_primeN$p"),
    ("UNUSEDSIGNAL", "write_data"),
    ("UNUSEDSIGNAL", "engine$busyN"),
    ("UNUSEDSIGNAL", "engine$mul_done"),
    ("UNUSEDSIGNAL", "engine$phase"),
    ("UNUSEDSIGNAL", "slotN$n_public$N"),
    ("UNUSEDSIGNAL", "fold$t$N"),
    ("UNUSEDSIGNAL", "sum_N"),
    ("UNUSEDSIGNAL", "lows$N"),
    ("UNUSEDSIGNAL", "tops$N"),
    ("UNUSEDSIGNAL", "t$N"),
    // The lanes engine's.
    ("UNUSEDPARAM", "LanePhase$"),
    ("UNUSEDPARAM", "Collecting$"),
    ("UNUSEDPARAM", "rows"),
    ("UNUSEDPARAM", "levels"),
    ("UNUSEDPARAM", "base_with_pieces"),
    ("UNUSEDPARAM", "no_a_register"),
    ("UNUSEDSIGNAL", "mul$t$"),
    ("UNUSEDSIGNAL", "mul$next_free"),
    ("UNUSEDSIGNAL", "mul$busy"),
    ("UNUSEDSIGNAL", "base_fold$q$"),
    ("UNUSEDSIGNAL", "base_down$q$"),
    ("UNUSEDSIGNAL", "row_delay$N$q"),
    ("UNUSEDSIGNAL", "row_in$N"),
    ("UNUSEDSIGNAL", "products$N"),
    ("UNUSEDSIGNAL", "sums$N"),
    ("UNUSEDSIGNAL", "m"),
    ("UNUSEDSIGNAL", "regs$N"),
];

#[test]
fn emitted_accelerator_lints_clean_but_for_the_justified_warnings() {
    let config = AcceleratorConfig {
        key_bits: 512,
        window_bits: 3,
        cores: 2,
        stream_bits: 128,
        engine: ecrt_contract::config::Engine::Slots,
        ..Default::default()
    };
    lint(&emit(&config).unwrap());
}

#[test]
fn emitted_segmented_accelerator_lints_clean_but_for_the_justified_warnings() {
    let config = AcceleratorConfig {
        key_bits: 512,
        window_bits: 1,
        schedule: ecrt_contract::config::ExponentSchedule::Segmented,
        engine: ecrt_contract::config::Engine::Slots,
        ..Default::default()
    };
    lint(&emit(&config).unwrap());
}

#[test]
fn emitted_lanes_accelerator_lints_clean_but_for_the_justified_warnings() {
    let config =
        AcceleratorConfig { key_bits: 512, engine: ecrt_contract::config::Engine::Lanes, ..Default::default() };
    lint(&emit(&config).unwrap());
}

#[test]
fn emitted_delay_accelerator_lints_clean_but_for_the_justified_warnings() {
    let config = AcceleratorConfig {
        key_bits: 512,
        engine: ecrt_contract::config::Engine::Delay,
        digits_per_step: 4,
        window_bits: 6,
        ..Default::default()
    };
    lint(&emit(&config).unwrap());
}

#[test]
fn emitted_modexp_lints_clean_but_for_the_justified_warnings() {
    let config = AcceleratorConfig {
        key_bits: 512,
        window_bits: 3,
        engine: ecrt_contract::config::Engine::Slots,
        ..Default::default()
    };
    lint(&emit_modexp(&config).unwrap());
}

fn lint(emitted: &Emitted) {
    let dir = tempfile::tempdir().unwrap();
    write(emitted, dir.path()).unwrap();
    if let Some(keep) = std::env::var_os("ECRT_LINT_KEEP") {
        write(emitted, std::path::Path::new(&keep)).unwrap();
    }
    let file = emitted.manifest.verilog.as_str();
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall", "-Wno-WIDTH", "-Wno-DECLFILENAME", "--top-module", "top", file])
        .current_dir(dir.path())
        .output()
        .expect("verilator is installed (scripts/setup)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut warnings = 0;
    for line in stderr.lines().filter(|l| l.starts_with("%Warning-")) {
        warnings += 1;
        let category = line.trim_start_matches("%Warning-").split(':').next().unwrap();
        let name = line.rsplit('\'').nth(1).unwrap_or("");
        let shape: String =
            name.split(|c: char| c.is_ascii_digit()).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("N");
        let shape = if name.ends_with(|c: char| c.is_ascii_digit()) { shape + "N" } else { shape };
        assert!(
            JUSTIFIED.iter().any(|(c, pattern)| *c == category
                && (shape == *pattern || shape.starts_with(pattern) && pattern.ends_with('$'))),
            "unexpected lint warning in {file}: {line}"
        );
    }
    assert!(warnings > 0, "the lint ran: the known warnings are expected ({stderr})");
    assert!(!stderr.lines().any(|l| l.starts_with("%Error") && !l.contains("Exiting due to")), "{stderr}");
}
