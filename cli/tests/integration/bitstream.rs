//! `ecrt rtl --board`: the board design next to the accelerator, the board's stream width and part,
//! and the refusals (a conflicting --stream-bits, a clock the MMCM cannot make, an unknown board).
//! The design itself is checked in hdl/tests/integration/board.rs (lint, elaboration, simulation, TCL).

use ecrt_hdl::board::{self, Board};
use ecrt_hdl::emit::{Manifest, MANIFEST_FILE};
use std::path::Path;
use std::process::{Command, Output};

fn ecrt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ecrt")).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn manifest(dir: &Path) -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap()).unwrap()
}

#[test]
fn rtl_with_a_board_writes_the_board_design_for_its_link() {
    let tmp = tempfile::tempdir().unwrap();
    for (board, stream_bits) in [(Board::Vc709, 256), (Board::Vc707, 128)] {
        let dir = tmp.path().join(board.to_string());
        let out = ecrt(&[
            "rtl",
            "--board",
            &board.to_string(),
            "--key-bits",
            "512",
            "--clock-mhz",
            "100",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let m = manifest(&dir);
        assert_eq!((m.stream_bits, m.config.part.as_str()), (stream_bits, board.facts().part.name));
        // The files are the library's board design of that manifest, byte for byte.
        let design = board::generate(&m, board).unwrap();
        for (name, text) in &design.files {
            assert_eq!(&std::fs::read_to_string(dir.join(name)).unwrap(), text, "{name}");
        }
        let params = std::fs::read_to_string(dir.join(board::PARAMS_FILE)).unwrap();
        assert!(params.contains(&format!("set ecrt(stream_bits) {stream_bits}\n")), "{params}");
        assert!(stderr(&out).contains("build.tcl"), "says how to build: {}", stderr(&out));
    }
    // The width the board needs may be given; without --board nothing but the RTL is written.
    let dir = tmp.path().join("explicit");
    let explicit = ["--board", "vc707", "--stream-bits", "128", "--clock-mhz", "100"];
    let out = ecrt(&[&["rtl", "--key-bits", "512", "--out", dir.to_str().unwrap()], &explicit[..]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = tmp.path().join("plain");
    let out = ecrt(&["rtl", "--key-bits", "512", "--stream-bits", "128", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dir.join(board::PARAMS_FILE).exists() && !dir.join(board::TOP_FILE).exists());
}

#[test]
fn rtl_with_a_board_refuses_what_the_board_cannot_build() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let out_arg = out_dir.to_str().unwrap();
    let refused = |args: &[&str], message: &str| {
        let out = ecrt(&[&["rtl", "--key-bits", "512", "--out", out_arg], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: '{message}' in {}", stderr(&out));
        assert!(!out_dir.exists(), "{args:?}: nothing written");
    };
    // The default width (256) is the VC709's, but asking for it on the VC707 is a conflict.
    refused(&["--board", "vc707", "--stream-bits", "256"], "--stream-bits 256 conflicts with --board vc707");
    refused(&["--board", "vc709", "--stream-bits", "128"], "its XDMA streams are 256 bits wide");
    refused(&["--board", "vc709", "--clock-mhz", "4"], "pass --clock-mhz 4.688");
    refused(&["--board", "kc705"], "unknown board");
}

/// Without --clock-mhz a board design runs at the design's conservative clock, rounded down to a
/// clock the MMCM makes: what the timing run says, not the flag's default of 100 MHz.
#[test]
#[ignore = "slow: a flat Yosys timing run of the 512-bit accelerator (minutes, then cached)"]
fn a_board_design_runs_at_the_conservative_clock_by_default() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("vc709");
    let out = ecrt(&["rtl", "--board", "vc709", "--key-bits", "512", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let m = manifest(&dir);
    let config = ecrt_contract::config::AcceleratorConfig { key_bits: 512, ..m.config.clone() };
    let clocks = ecrt_lab::clocked::design_clocks(&config).unwrap();
    let expected = ecrt_lab::clocked::default_board_clock(&clocks, Board::Vc709).unwrap();
    assert_eq!(m.config.clock_mhz, expected.mhz());
    assert!(m.config.clock_mhz <= clocks.conservative_clock_mhz);
    assert!(stderr(&out).contains("conservative clock"), "{}", stderr(&out));
}
