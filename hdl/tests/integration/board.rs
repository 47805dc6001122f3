//! The bitstream flow, checked without Vivado (docs/bitstream.md, "What was verified"): the board
//! top and a small accelerator elaborate and lint clean in Verilator and Yosys against black-box
//! stand-ins of the Xilinx IP (tests/board/xilinx_stubs.v); they move registers and frames in an
//! Icarus simulation with behavioural models of that IP (xilinx_sim_models.v, tb_board.v);
//! vivado/build.tcl and program.tcl run in tclsh against stand-ins of the Vivado commands
//! (vivado_stubs.tcl) that check the files and netlist objects they name; and the generated files
//! agree with the manifest.
//!
//! Two designs cover both clocking modes: a VC709 at 100 MHz (MMCM and asynchronous FIFOs) and a
//! VC707 at 250 MHz (the XDMA clock itself, no crossing). Outputs stay under the target directory
//! (`board/<name>/` of CARGO_TARGET_TMPDIR). `ECRT_UPDATE_SNAPSHOTS=1` rewrites the snapshot of the
//! VC709 top.

use ecrt_hdl::board::{self, Board, BoardDesign};
use ecrt_hdl::config::AcceleratorConfig;
use ecrt_hdl::emit::{emit, Emitted, Manifest, MANIFEST_FILE};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Where the test assets live.
fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("board")
}

struct Built {
    manifest: Manifest,
    design: BoardDesign,
    dir: PathBuf,
}

/// The smallest accelerator the configuration accepts (512-bit keys, one core) on `board` at
/// `clock_mhz`, written with its board design into a fresh directory `name`.
/// The design is emitted once per board (rust-hdl's emission takes seconds) and written afresh
/// for each test.
fn build(board: Board, clock_mhz: f64, name: &str, emitted: &'static OnceLock<Emitted>) -> Built {
    let emitted = emitted.get_or_init(|| {
        let base = AcceleratorConfig { key_bits: 512, window_bits: 3, cores: 1, clock_mhz, ..Default::default() };
        emit(&board::configure(&base, board, None).unwrap()).unwrap()
    });
    let design = board::generate(&emitted.manifest, board).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("board").join(name);
    let _ = fs::remove_dir_all(&dir);
    board::write(emitted, &design, &dir).unwrap();
    Built { manifest: emitted.manifest.clone(), design, dir }
}

fn vc709_mmcm(name: &str) -> Built {
    static EMITTED: OnceLock<Emitted> = OnceLock::new();
    build(Board::Vc709, 100.0, name, &EMITTED)
}

fn vc707_shared(name: &str) -> Built {
    static EMITTED: OnceLock<Emitted> = OnceLock::new();
    build(Board::Vc707, 250.0, name, &EMITTED)
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr)
}

/// Verilog macros that size the XDMA stand-in like the real IP of this design.
fn xdma_defines(built: &Built) -> [String; 2] {
    let facts = built.design.board.facts();
    [format!("-DECRT_XDMA_DATA_BITS={}", built.manifest.stream_bits), format!("-DECRT_XDMA_LANES={}", facts.link_lanes)]
}

#[test]
fn board_tops_lint_clean_in_verilator() {
    for built in [vc709_mmcm("lint-vc709"), vc707_shared("lint-vc707")] {
        // The accelerator's own warnings are lint.rs's business (docs/lint.md): here, none of
        // the board's files may warn.
        let waivers = built.dir.join("accelerator_waivers.vlt");
        let accelerator = &built.manifest.verilog;
        fs::write(
            &waivers,
            format!(
                "`verilator_config\n{}",
                ["WIDTH", "UNUSEDSIGNAL", "UNUSEDPARAM"]
                    .map(|rule| format!("lint_off -rule {rule} -file \"*{accelerator}\"\n"))
                    .concat()
            ),
        )
        .unwrap();
        let out = Command::new("verilator")
            .args(["--lint-only", "-Wall", "-Wno-DECLFILENAME", "--top-module", board::TOP_MODULE])
            .args(xdma_defines(&built))
            .arg(&waivers)
            .arg(assets().join("xilinx_stubs.v"))
            .args([accelerator.as_str(), board::TOP_FILE])
            .current_dir(&built.dir)
            .output()
            .expect("verilator is installed (scripts/setup)");
        let log = text(&out);
        assert!(out.status.success(), "{}: verilator failed:\n{log}", built.dir.display());
        assert!(!log.contains("%Warning") && !log.contains("%Error"), "{}:\n{log}", built.dir.display());
    }
}

#[test]
fn board_tops_elaborate_in_yosys() {
    for built in [vc709_mmcm("yosys-vc709"), vc707_shared("yosys-vc707")] {
        let [data, lanes] = xdma_defines(&built);
        let script = format!(
            "read_verilog {data} {lanes} {stubs}; read_verilog {acc}; read_verilog {top}; \
             hierarchy -check -top {module}; proc; opt_clean; check -assert",
            stubs = assets().join("xilinx_stubs.v").display(),
            acc = built.manifest.verilog,
            top = board::TOP_FILE,
            module = board::TOP_MODULE,
        );
        let out = Command::new("yosys")
            .args(["-p", &script])
            .current_dir(&built.dir)
            .output()
            .expect("yosys is installed (scripts/setup)");
        let log = text(&out);
        assert!(out.status.success(), "{}: yosys failed:\n{log}", built.dir.display());
        // A port connected with the wrong width is only a warning to Yosys.
        let resized: Vec<_> = log.lines().filter(|l| l.contains("Resizing cell port")).collect();
        assert!(resized.is_empty(), "{}: width mismatches:\n{}", built.dir.display(), resized.join("\n"));
    }
}

#[test]
fn board_tops_move_registers_and_frames_in_simulation() {
    use ecrt_hdl::interface::*;
    for built in [vc709_mmcm("sim-vc709"), vc707_shared("sim-vc707")] {
        let m = &built.manifest;
        let tag = 0x1234;
        let defines = [
            ("REG_ID", REG_ID),
            ("ID_VALUE", ID_VALUE),
            ("REG_KEY_BITS", REG_KEY_BITS),
            ("KEY_BITS", m.config.key_bits as u32),
            ("REG_CORES", REG_CORES),
            ("CORES", m.cores as u32),
            ("REG_STREAM_BITS", REG_STREAM_BITS),
            ("REG_KEY_SELECT", REG_KEY_SELECT),
            ("KEY_SELECT_VALUE", key_select(true, 5)),
            ("REG_JOBS_IN", REG_JOBS_IN),
            ("REG_JOBS_OUT", REG_JOBS_OUT),
            ("REG_JOBS_FAILED", REG_JOBS_FAILED),
            ("REQUEST_BEATS", m.request_beats as u32),
            ("REQUEST_HEADER", request_header(tag, 0)),
            ("RESULT_BEATS", m.result_beats as u32),
            ("RESULT_HEADER", result_header(tag, RESULT_KEY_NOT_LOADED)),
            ("TIMEOUT_NS", 200_000),
        ];
        let simulation = built.dir.join("tb_board.vvp");
        let out = Command::new("iverilog")
            .args(["-g2005", "-s", "tb_board", "-o"])
            .arg(&simulation)
            .args(xdma_defines(&built))
            .args(defines.map(|(name, value)| format!("-D{name}=32'h{value:x}")))
            .arg(assets().join("xilinx_sim_models.v"))
            .arg(assets().join("tb_board.v"))
            .args([m.verilog.as_str(), board::TOP_FILE])
            .current_dir(&built.dir)
            .output()
            .expect("iverilog is installed (scripts/setup)");
        assert!(out.status.success(), "{}: iverilog failed:\n{}", built.dir.display(), text(&out));
        let out = Command::new("vvp").arg(&simulation).current_dir(&built.dir).output().expect("vvp");
        let log = text(&out);
        assert!(log.contains("PASS") && !log.contains("FAIL"), "{}:\n{log}", built.dir.display());
    }
}

/// The values of `ecrt(...)` that `dir`/params.tcl sets, as tclsh reads them.
fn params(dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let out = Command::new("tclsh")
        .arg(assets().join("print_params.tcl"))
        .arg(dir.join(board::PARAMS_FILE))
        .output()
        .expect("tclsh is installed (scripts/setup)");
    if !out.status.success() {
        return Err(format!("params.tcl does not source: {}", text(&out)));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The first number after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> Option<f64> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let number: String =
        rest.chars().skip_while(|c| c.is_whitespace()).take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    number.parse().ok()
}

/// Every way the generated files in `dir` disagree with its manifest.json.
fn disagreements(dir: &Path) -> Vec<String> {
    let manifest: Manifest = serde_json::from_str(&fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap()).unwrap();
    let read = |name: &str| fs::read_to_string(dir.join(name)).unwrap_or_default();
    let mut bad = Vec::new();
    let mut expect = |what: &str, ok: bool| {
        if !ok {
            bad.push(what.to_string());
        }
    };
    let c = &manifest.config;
    let params = match params(dir) {
        Ok(p) => p,
        Err(e) => return vec![e],
    };
    let param = |key: &str| params.get(key).cloned().unwrap_or_default();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * b.abs();
    let verilog = fs::read(dir.join(&manifest.verilog)).unwrap();

    // params.tcl.
    expect("params part", param("part") == c.part);
    expect("params accelerator_top", param("accelerator_top") == manifest.top);
    expect("params verilog", param("verilog").split(' ').any(|f| f == manifest.verilog));
    expect("params verilog_sha256", param("verilog_sha256") == format!("{:x}", Sha256::digest(&verilog)));
    expect("manifest sha256", manifest.sha256 == format!("{:x}", Sha256::digest(&verilog)));
    expect("params key_bits", param("key_bits") == c.key_bits.to_string());
    expect("params window_bits", param("window_bits") == c.window_bits.to_string());
    expect("params schedule", param("schedule") == c.schedule.name());
    expect("params engine", param("engine") == c.engine.name());
    expect("params cores", param("cores") == manifest.cores.to_string());
    expect("params stream_bits", param("stream_bits") == manifest.stream_bits.to_string());
    expect("params axi_data_width", param("axi_data_width") == format!("{}_bit", manifest.stream_bits));
    expect("params interface_version", param("interface_version") == manifest.interface_version);
    let clock_mhz: f64 = param("accel_clock_mhz").parse().unwrap_or(0.0);
    let period_ns: f64 = param("accel_period_ns").parse().unwrap_or(0.0);
    let user_mhz: f64 = param("user_clock_mhz").parse().unwrap_or(0.0);
    expect("params clock_mhz", param("clock_mhz").parse::<f64>().is_ok_and(|m| close(m, c.clock_mhz)));
    expect("params accel_clock_mhz", close(clock_mhz, c.clock_mhz));
    expect("params accel_period_ns", close(period_ns, 1000.0 / c.clock_mhz));

    // The board top.
    let top = read(board::TOP_FILE);
    let bits = manifest.stream_bits;
    for wire in ["h2c_xdma_tdata", "c2h_xdma_tdata", "h2c_acc_tdata", "c2h_acc_tdata"] {
        expect(&format!("top {wire} width"), top.contains(&format!("wire [{}:0] {wire};", bits - 1)));
    }
    expect("top c2h tkeep", top.contains(&format!(".s_axis_c2h_tkeep_0({{{}{{1'b1}}}})", bits / 8)));
    let instance = format!("    {} accelerator (", manifest.top);
    expect("top accelerator instance", top.contains(&instance));
    let start = top.find(&instance).unwrap_or(0);
    let accelerator = &top[start..start + top[start..].find(");").unwrap_or(0)];
    for port in &manifest.ports {
        expect(&format!("top connects {}", port.name), accelerator.matches(&format!(".{}(", port.name)).count() == 1);
    }
    expect("top connects only the manifest's ports", accelerator.matches("        .").count() == manifest.ports.len());
    let mmcm = number_after(&top, ".CLKIN1_PERIOD(").map(|input_period| {
        let get = |p: &str| number_after(&top, &format!(".{p}(")).unwrap_or(f64::NAN);
        1000.0 * get("CLKFBOUT_MULT_F") / (input_period * get("DIVCLK_DIVIDE") * get("CLKOUT0_DIVIDE_F"))
    });
    match mmcm {
        Some(mhz) => {
            expect("top MMCM frequency", close(mhz, c.clock_mhz));
            expect("params accel_clock mmcm", param("accel_clock") == "mmcm");
        }
        None => {
            expect("top shares axi_aclk", top.contains("assign accel_clk = axi_aclk;"));
            expect("shared clock frequency", close(user_mhz, c.clock_mhz) && param("accel_clock") == "shared");
        }
    }

    // The constraints.
    let timing = read(board::TIMING_XDC_FILE);
    if mmcm.is_some() {
        expect("timing xdc period", number_after(&timing, "period").is_some_and(|p| close(p, 1000.0 / c.clock_mhz)));
        let bound = (1000.0 / c.clock_mhz).min(1000.0 / user_mhz);
        expect(
            "timing xdc max delay",
            number_after(&timing, "[get_clocks accel_clk]").is_some_and(|d| close(d, bound)),
        );
    }
    let board_xdc = read(&format!("{}.xdc", param("board")));
    let refclk_mhz: f64 = param("refclk_mhz").parse().unwrap_or(0.0);
    expect(
        "board xdc refclk period",
        number_after(&board_xdc, "create_clock -name sys_clk -period").is_some_and(|p| close(p, 1000.0 / refclk_mhz)),
    );
    bad
}

#[test]
fn generated_files_agree_with_the_manifest_and_a_disagreement_is_found() {
    for built in [vc709_mmcm("agree-vc709"), vc707_shared("agree-vc707")] {
        assert_eq!(disagreements(&built.dir), Vec::<String>::new(), "{}", built.dir.display());
    }
    let built = vc709_mmcm("disagree-vc709");
    let edit = |name: &str, from: &str, to: &str| {
        let path = built.dir.join(name);
        let original = fs::read_to_string(&path).unwrap();
        assert!(original.contains(from), "{name}: {from}");
        fs::write(&path, original.replacen(from, to, 1)).unwrap();
        let found = disagreements(&built.dir);
        fs::write(&path, original).unwrap();
        found
    };
    assert!(
        edit(board::PARAMS_FILE, "stream_bits) 256", "stream_bits) 128").contains(&"params stream_bits".to_string())
    );
    assert!(edit(board::PARAMS_FILE, "accel_period_ns) 10.000", "accel_period_ns) 8.000")
        .contains(&"params accel_period_ns".to_string()));
    assert!(edit(board::TOP_FILE, "wire [255:0] h2c_xdma_tdata;", "wire [127:0] h2c_xdma_tdata;")
        .contains(&"top h2c_xdma_tdata width".to_string()));
    assert!(edit(board::TOP_FILE, ".CLKOUT0_DIVIDE_F(10.000)", ".CLKOUT0_DIVIDE_F(8.000)")
        .contains(&"top MMCM frequency".to_string()));
    assert!(
        edit(board::TIMING_XDC_FILE, "period 10.000 ns", "period 8.000 ns").contains(&"timing xdc period".to_string())
    );
    assert!(edit("vc709.xdc", "-period 10.000", "-period 8.000").contains(&"board xdc refclk period".to_string()));
    assert_eq!(disagreements(&built.dir), Vec::<String>::new(), "restored");
}

/// Runs `script` (build.tcl or program.tcl in `built.dir`) in tclsh against the Vivado stand-ins.
fn stub_vivado(built: &Built, script: &str, args: &[&str], env: &[(&str, &str)]) -> (Output, String) {
    let log = built.dir.join(format!("{script}.stub.log"));
    let _ = fs::remove_file(&log);
    let mut command = Command::new("tclsh");
    command.arg(assets().join("vivado_stubs.tcl")).arg(built.dir.join(script)).args(args).env("ECRT_STUB_LOG", &log);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().expect("tclsh is installed (scripts/setup)");
    (out, fs::read_to_string(&log).unwrap_or_default())
}

#[test]
fn build_tcl_runs_through_stub_vivado_and_fails_when_it_should() {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for built in [vc709_mmcm("build-vc709"), vc707_shared("build-vc707")] {
        let dir = built.dir.to_str().unwrap();
        for (name, copied) in board::vivado::static_files(built.design.board) {
            let source = if name.ends_with(".xdc") { "constraints" } else { "vivado" };
            assert_eq!(fs::read_to_string(repository.join(source).join(&name)).unwrap(), copied, "{name}");
        }
        let (out, log) = stub_vivado(&built, "build.tcl", &[dir], &[]);
        assert!(out.status.success(), "{dir}: build.tcl failed:\n{}\n{log}", text(&out));
        let bitstream = built.dir.join("vivado").join(board::vivado::bitstream_file(built.design.board));
        assert!(bitstream.exists(), "{}", bitstream.display());
        let steps: Vec<&str> = log.lines().map(|l| l.split(' ').next().unwrap()).collect();
        let order = [
            "create_project",
            "create_ip",
            "synth_ip",
            "read_verilog",
            "read_xdc",
            "synth_design",
            "opt_design",
            "place_design",
            "phys_opt_design",
            "route_design",
            "report_timing_summary",
            "write_bitstream",
        ];
        let positions: Vec<_> = order.iter().map(|s| steps.iter().position(|t| t == s)).collect();
        assert!(
            positions.iter().all(Option::is_some) && positions.windows(2).all(|w| w[0] < w[1]),
            "{order:?} in\n{log}"
        );
        assert!(log.contains("clock sys_clk 10.000"), "{log}");
        let mmcm = !built.design.clock.is_shared();
        assert_eq!(log.contains(&format!("clock accel_clk {:.3}", built.design.clock.period_ns())), mmcm, "{log}");
        assert_eq!(log.contains("max_delay"), mmcm, "{log}");
    }

    let built = vc709_mmcm("build-fail-vc709");
    let dir = built.dir.to_str().unwrap();
    let fails = |env: &[(&str, &str)], message: &str| {
        let (out, log) = stub_vivado(&built, "build.tcl", &[dir], env);
        assert_eq!(out.status.code(), Some(1), "{env:?} should fail:\n{}\n{log}", text(&out));
        assert!(text(&out).contains(message), "{env:?}: '{message}' in\n{}", text(&out));
        assert!(!log.contains("write_bitstream"), "{env:?}: no bitstream after a failure");
    };
    fails(&[("ECRT_STUB_WNS", "-0.012")], "timing not met after routing: WNS -0.012");
    fails(&[("ECRT_STUB_WHS", "-0.001")], "WHS -0.001");
    fails(&[("ECRT_STUB_FAIL", "synth_design")], "synth_design failed");
    fails(&[("ECRT_STUB_FAIL", "route_design")], "route_design failed");
    fails(&[("ECRT_STUB_FAIL", "synth_ip")], "XDMA IP xdma_0");

    // A disagreeing clock, a constraint on a port the top lacks, a missing file, a missing directory.
    let edit_and_fail = |name: &str, from: &str, to: &str, message: &str| {
        let path = built.dir.join(name);
        let original = fs::read_to_string(&path).unwrap();
        fs::write(&path, original.replacen(from, to, 1)).unwrap();
        fails(&[], message);
        fs::write(&path, original).unwrap();
    };
    edit_and_fail(board::PARAMS_FILE, "accel_period_ns) 10.000", "accel_period_ns) 8.000", "params.tcl says 8.000 ns");
    edit_and_fail("vc709.xdc", "[get_ports sys_rst_n]", "[get_ports sys_reset_n]", "no such port");
    edit_and_fail(board::TIMING_XDC_FILE, "accel_clocking/mmcm/CLKOUT0", "accel_clocking/pll/CLKOUT0", "no cell");
    edit_and_fail(board::PARAMS_FILE, "ecrt_board_top.v}", "ecrt_board.v}", "does not exist");
    edit_and_fail(board::PARAMS_FILE, "axi_data_width) 256_bit", "axi_data_width) 200_bit", "axi_data_width 200_bit");
    let (out, _) = stub_vivado(&built, "build.tcl", &["/nonexistent"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("params.tcl is missing"), "{}", text(&out));
    let (out, _) = stub_vivado(&built, "build.tcl", &[], &[]);
    assert!(out.status.code() == Some(1) && text(&out).contains("usage"), "{}", text(&out));
}

#[test]
fn program_tcl_runs_through_stub_vivado() {
    let built = vc709_mmcm("program-vc709");
    let dir = built.dir.to_str().unwrap();
    let (out, _) = stub_vivado(&built, "program.tcl", &[dir], &[]);
    assert!(out.status.code() == Some(1) && text(&out).contains("build it with vivado/build.tcl"), "{}", text(&out));
    let bitstream = built.dir.join("vivado").join("ecrt_vc709.bit");
    fs::create_dir_all(bitstream.parent().unwrap()).unwrap();
    fs::write(&bitstream, "stub").unwrap();
    let (out, log) = stub_vivado(&built, "program.tcl", &[dir, "remote:3121"], &[]);
    assert!(out.status.success(), "{}\n{log}", text(&out));
    assert!(
        log.contains("connect_hw_server -url remote:3121") && log.contains("program_hw_devices xc7vx690t_0"),
        "{log}"
    );
    let (out, _) = stub_vivado(&built, "program.tcl", &[dir], &[("ECRT_STUB_JTAG", "xc7vx485t_0")]);
    assert!(out.status.code() == Some(1) && text(&out).contains("no xc7vx690t on the JTAG chain"), "{}", text(&out));
}

/// The generated VC709 top, but for the lines that name versions and hashes.
fn normalized_top(built: &Built) -> String {
    built
        .design
        .file(board::TOP_FILE)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("// Generated by") && !l.contains("sha256"))
        .map(|l| l.to_string() + "\n")
        .collect()
}

#[test]
fn board_top_matches_its_snapshot() {
    let built = vc709_mmcm("snapshot-vc709");
    let snapshot = assets().join("ecrt_board_top_vc709.snapshot.v");
    let top = normalized_top(&built);
    if std::env::var_os("ECRT_UPDATE_SNAPSHOTS").is_some() {
        fs::write(&snapshot, &top).unwrap();
    }
    let expected = fs::read_to_string(&snapshot).unwrap_or_default();
    assert!(
        top == expected,
        "the VC709 board top changed: review {} against {}, then `ECRT_UPDATE_SNAPSHOTS=1 cargo test -p ecrt-hdl --test integration board::`",
        built.dir.join(board::TOP_FILE).display(),
        snapshot.display()
    );
}
