//! Level 4: the XDMA backend's real code path (`ecrt decrypt --backend xdma`) against the emulated
//! device (`ecrt emulate`, FUSE): every phe vector through the Verilator model of the accelerator,
//! compared with the CPU backend; then the faults: the emulator killed mid-batch, a stalled device,
//! a corrupted result frame, a C2H node already open. Each fault must give a clear error, account
//! for every line, and never hang. Needs FUSE (root, /dev/fuse, the fuse3 package: scripts/setup).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const ECRT: &str = env!("CARGO_BIN_EXE_ecrt");

fn fixture(bits: u32) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/vectors/phe-{bits}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The key and the ciphertext lines of a phe vector file, written into `dir`.
fn vector_files(dir: &Path, bits: u32) -> (String, String, Vec<Value>) {
    let file = fixture(bits);
    let key = dir.join(format!("key-{bits}.jwk"));
    std::fs::write(&key, file["private_key"].to_string()).unwrap();
    let cases = file["cases"].as_array().unwrap().clone();
    let cts = dir.join(format!("cts-{bits}.jsonl"));
    std::fs::write(&cts, cases.iter().map(|c| c["ciphertext"].to_string() + "\n").collect::<String>()).unwrap();
    (key.to_str().unwrap().into(), cts.to_str().unwrap().into(), cases)
}

/// `ecrt emulate` in a child process, stopped (SIGTERM) on drop.
struct Emulator {
    child: Child,
    mount: tempfile::TempDir,
}

impl Emulator {
    /// Starts the emulator and waits for its mount (a first Verilator build may take minutes).
    fn start(args: &[&str]) -> Emulator {
        let mount = tempfile::tempdir().unwrap();
        let mut child = Command::new(ECRT)
            .args(["emulate", "--mount", mount.path().to_str().unwrap()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[emulator] {line}");
                if line.contains(" mounted at ") {
                    let _ = tx.send(());
                }
            }
        });
        if rx.recv_timeout(Duration::from_secs(40 * 60)).is_err() {
            let _ = child.kill();
            panic!("the emulator did not mount (see its messages above)");
        }
        Emulator { child, mount }
    }

    fn device(&self) -> String {
        self.mount.path().join("xdma0").to_str().unwrap().into()
    }

    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        // A killed FUSE server leaves a dead mount behind: detach it.
        detach(self.mount.path());
    }
}

/// Detaches a mount the server may have left (quietly: a server that exited cleanly left none,
/// and fusermount3 would say so).
fn detach(mount: &Path) {
    let _ =
        Command::new("fusermount3").args(["-u", "-z"]).arg(mount).stdout(Stdio::null()).stderr(Stdio::null()).status();
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(20);
            while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
        }
        detach(self.mount.path());
    }
}

/// Runs `ecrt ARGS`, failing the test if it takes longer than `limit` (never hang).
fn ecrt(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(ECRT).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("`ecrt {}` hung", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The phe vectors of one size through the emulated device (the RTL behind FUSE), against the
/// CPU backend and phe's plaintexts; at 1024 bits, the decoded values too.
fn phe_vectors_through_the_emulated_device(bits: u32, cores: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (key, cts, cases) = vector_files(dir.path(), bits);
    let emulator = Emulator::start(&["--key-bits", &bits.to_string(), "--cores", &cores.to_string()]);
    let device = emulator.device();
    let xdma = ecrt(
        &["decrypt", "--key", &key, "--in", &cts, "--backend", "xdma", "--device", &device, "--raw"],
        Duration::from_secs(30 * 60),
    );
    assert!(xdma.status.success(), "{bits}-bit: {}", stderr(&xdma));
    let cpu = ecrt(&["decrypt", "--key", &key, "--in", &cts, "--raw"], Duration::from_secs(300));
    assert!(cpu.status.success());
    assert_eq!(lines(&xdma), lines(&cpu), "{bits}-bit: the XDMA backend and the CPU agree");
    let raw: Vec<String> = cases.iter().map(|c| c["raw_plaintext"].to_string()).collect();
    assert_eq!(lines(&xdma), raw, "{bits}-bit: phe's plaintexts");
    // The decoded values too, as phe's decrypt gives them (one size: decoding is the host's).
    if bits != 1024 {
        return;
    }
    let decoded = ecrt(
        &["decrypt", "--key", &key, "--in", &cts, "--backend", "xdma", "--device", &device],
        Duration::from_secs(30 * 60),
    );
    let values: Vec<String> = cases.iter().map(|c| c["value"].to_string()).collect();
    assert_eq!(lines(&decoded), values, "{bits}-bit: phe's values");
}

/// The transport at 1024 bits, on the default configuration's one-core model (the one the sim
/// backend's test and ecrt-sim's lanes tests build, so it is built once).
#[test]
fn every_1024_bit_phe_vector_decrypts_through_the_emulated_device() {
    phe_vectors_through_the_emulated_device(1024, 1);
}

/// 2048 and 3072 bits through the emulated device (minutes: `scripts/test --full`).
#[test]
#[ignore = "slow: the 2048- and 3072-bit vectors through FUSE and Verilator; scripts/test --full runs it"]
fn every_phe_vector_decrypts_through_the_emulated_device() {
    phe_vectors_through_the_emulated_device(2048, 2);
    phe_vectors_through_the_emulated_device(3072, 1);
}

/// A fault test's batch: the 1024-bit vectors, on an emulated device that answers at once.
struct Faulty {
    emulator: Emulator,
    key: String,
    cts: String,
    count: usize,
    _dir: tempfile::TempDir,
}

fn faulty(faults: &[&str]) -> Faulty {
    let dir = tempfile::tempdir().unwrap();
    let (key, cts, cases) = vector_files(dir.path(), 1024);
    let mut args = vec!["--key-bits", "1024", "--responder", "instant"];
    for fault in faults {
        args.extend(["--fault", fault]);
    }
    Faulty { emulator: Emulator::start(&args), key, cts, count: cases.len(), _dir: dir }
}

fn decrypt_on(emulator: &Emulator, key: &str, cts: &str, extra: &[&str], limit: Duration) -> Output {
    let device = emulator.device();
    let mut args = vec!["decrypt", "--key", key, "--in", cts, "--backend", "xdma", "--device", &device, "--raw"];
    args.extend(extra);
    ecrt(&args, limit)
}

#[test]
fn a_stalled_device_times_out_and_every_line_is_accounted_for() {
    let f = faulty(&["stall-after=5"]);
    let (emulator, key, cts, count) = (&f.emulator, &f.key, &f.cts, f.count);
    let out = decrypt_on(emulator, key, cts, &["--timeout", "1", "--queue-depth", "8"], Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines.len(), count, "one output line per input line");
    assert!(lines[..5].iter().all(|l| l != "null"), "{lines:?}");
    assert!(lines[5..].iter().all(|l| l == "null"), "{lines:?}");
    let err = stderr(&out);
    assert!(err.contains("line 6: no result within 1 s"), "{err}");
    assert!(!err.contains("stalled"), "a slow device is not said to have stalled: {err}");
    assert!(err.contains(&format!("{} line(s) failed", count - 5)), "{err}");
}

#[test]
fn a_corrupted_result_fails_its_line_alone() {
    let f = faulty(&["corrupt-result=2"]);
    let (emulator, key, cts, count) = (&f.emulator, &f.key, &f.cts, f.count);
    let out = decrypt_on(emulator, key, cts, &[], Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines.len(), count);
    let nulls: Vec<usize> = (0..count).filter(|&i| lines[i] == "null").collect();
    assert_eq!(nulls, vec![2]);
    assert!(stderr(&out).contains("line 3: corrupted result"), "{}", stderr(&out));
}

#[test]
fn a_killed_emulator_fails_what_it_held_and_nothing_hangs() {
    // The device answers 3 requests, then sits on the rest until it is killed.
    let mut f = faulty(&["stall-after=3"]);
    let (key, cts, count) = (f.key.clone(), f.cts.clone(), f.count);
    let emulator = &mut f.emulator;
    let device = emulator.device();
    let child = Command::new(ECRT)
        .args(["decrypt", "--key", &key, "--in", &cts, "--backend", "xdma", "--device", &device, "--raw"])
        .args(["--timeout", "120"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    emulator.kill();
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30), "the driver noticed the lost device late");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines.len(), count);
    assert!(lines[..3].iter().all(|l| l != "null") && lines[3..].iter().all(|l| l == "null"), "{lines:?}");
    let err = stderr(&out);
    assert!(err.contains("the xdma backend failed") && err.contains("line 4: not decrypted"), "{err}");
}

#[test]
fn a_c2h_node_already_open_is_refused_clearly() {
    let f = faulty(&[]);
    let (emulator, key, cts) = (&f.emulator, &f.key, &f.cts);
    let held = std::fs::File::open(emulator.mount.path().join("xdma0_c2h_0")).unwrap();
    let out = decrypt_on(emulator, key, cts, &[], Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2), "nothing decrypted: {}", stderr(&out));
    assert!(stderr(&out).contains("xdma0_c2h_0") && stderr(&out).contains("another process"), "{}", stderr(&out));
    drop(held);
    // Once it is closed, the same batch goes through.
    let out = decrypt_on(emulator, key, cts, &[], Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A result an earlier process left unread is dropped when the next one takes the card over,
/// which says so once on stderr; the batch goes through.
#[test]
fn a_result_left_unread_is_dropped_and_reported() {
    use ecrt_contract::interface as itf;
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    let f = faulty(&[]);
    let (emulator, key, cts, count) = (&f.emulator, &f.key, &f.cts, f.count);
    let node = |suffix: &str| emulator.mount.path().join(format!("xdma0_{suffix}"));
    {
        let user = std::fs::OpenOptions::new().read(true).write(true).open(node("user")).unwrap();
        let mut h2c = std::fs::OpenOptions::new().write(true).open(node("h2c_0")).unwrap();
        // A bare header: answered MALFORMED, and nobody reads it.
        h2c.write_all(&itf::request_header(9, 0).to_le_bytes()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut jobs_out = [0u8; 4];
        while {
            user.read_exact_at(&mut jobs_out, itf::REG_JOBS_OUT.into()).unwrap();
            u32::from_le_bytes(jobs_out) == 0
        } {
            assert!(Instant::now() < deadline, "no result");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let out = decrypt_on(emulator, key, cts, &[], Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(lines(&out).len(), count);
    let message = format!("ecrt: took over {}: dropped 1 result an earlier process left\n", emulator.device());
    assert_eq!(stderr(&out), message);
    let out = decrypt_on(emulator, key, cts, &[], Duration::from_secs(60));
    assert!(out.status.success() && stderr(&out).is_empty(), "nothing left: {}", stderr(&out));
}

#[test]
fn a_bitstream_for_another_key_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (key, cts, _) = vector_files(dir.path(), 2048);
    let emulator = Emulator::start(&["--key-bits", "1024", "--responder", "instant"]);
    let device = emulator.device();
    let out = ecrt(
        &["decrypt", "--key", &key, "--in", &cts, "--backend", "xdma", "--device", &device],
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("1024") && err.contains("2048"), "{err}");
}

#[test]
fn a_missing_device_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let (key, cts, _) = vector_files(dir.path(), 1024);
    let out = ecrt(
        &["decrypt", "--key", &key, "--in", &cts, "--backend", "xdma", "--device", "/nonexistent/xdma7"],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("/nonexistent/xdma7_user") && err.contains("XDMA driver") && err.contains("ecrt emulate"),
        "{err}"
    );
}

/// The host-overhead bench runs against its own emulated device and reports its figures.
#[test]
fn the_host_overhead_bench_reports_its_figures() {
    let out = ecrt(
        &["bench", "--backend", "xdma", "--key-bits", "1024", "--count", "300", "--rounds", "2", "--json"],
        Duration::from_secs(300),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    // CPU time is accounted coarsely: each part may read 0 on a short run, their sum may not.
    let field = |name: &str| report[name].as_f64().unwrap_or_else(|| panic!("bench JSON lacks {name}"));
    for name in ["user_us_per_decryption", "system_us_per_decryption", "framing_us_per_decryption"] {
        assert!(field(name) >= 0.0, "{name}");
    }
    assert!(field("host_cpu_us_per_decryption") > 0.0);
    assert_eq!(report["count"], 300);
}

/// Level 5, on a board (ignored unless /dev/xdma* exists when the tests are built): the phe
/// vectors of the bitstream's key size through /dev/xdma0 (or $ECRT_XDMA_DEVICE), against the CPU.
#[test]
#[cfg_attr(not(xdma_board), ignore = "needs an XDMA device (/dev/xdma*)")]
fn the_phe_vectors_decrypt_on_the_board() {
    let device = std::env::var("ECRT_XDMA_DEVICE").unwrap_or_else(|_| "/dev/xdma0".into());
    let mut user = ecrt_driver::backends::xdma::nodes::DeviceNodes::new(Path::new(&device)).open_user().unwrap();
    let info = ecrt_driver::backends::xdma::probe::DeviceInfo::probe(&mut user).unwrap();
    let bits = info.key_bits as u32;
    assert!([1024, 2048, 3072].contains(&bits), "no phe vectors for the board's {bits}-bit keys");
    let dir = tempfile::tempdir().unwrap();
    let (key, cts, cases) = vector_files(dir.path(), bits);
    let out = ecrt(
        &["decrypt", "--key", &key, "--in", &cts, "--backend", "xdma", "--device", &device, "--raw"],
        Duration::from_secs(600),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let raw: Vec<String> = cases.iter().map(|c| c["raw_plaintext"].to_string()).collect();
    assert_eq!(lines(&out), raw);
}
