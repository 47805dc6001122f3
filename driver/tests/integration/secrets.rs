//! A private key's secrets stay secret: once `ecrt serve` has loaded a key, its memory holds
//! nothing of the key file's text (even to root, who can read it). Every wait is bounded.

use ecrt_driver::service::ServiceClient;
use ecrt_golden::PrivateKey;
use serde_json::Value;
use std::io::Read;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const ECRT: &str = env!("CARGO_BIN_EXE_ecrt");
/// The phe fixture's private key: its JWK text and the key.
fn fixture_key() -> (String, PrivateKey) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/vectors/phe-1024.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let jwk = file["private_key"].to_string();
    let key = ecrt_golden::phe_format::read_private_key(&jwk).unwrap();
    (jwk, key)
}

/// The output of `child`, stopped with SIGTERM after `limit` (and killed 10 s later).
fn finish(mut child: Child, limit: Duration) -> Output {
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes).unwrap_or_default()
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stderr.read_to_end(&mut bytes).map(|_| bytes).unwrap_or_default()
    });
    let started = Instant::now();
    let mut signalled = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !signalled && started.elapsed() > limit {
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            signalled = true;
        }
        if started.elapsed() > limit + Duration::from_secs(10) {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: out_reader.join().unwrap(), stderr: err_reader.join().unwrap() }
}

/// Writes `text` to `dir/name` with `mode`.
fn write(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// A running `ecrt serve`, as `uid` if given; killed when dropped.
struct Serve {
    child: Option<Child>,
    socket: PathBuf,
}

impl Serve {
    fn start(exe: &Path, dir: &Path, key: &Path, uid: Option<u32>) -> Serve {
        let socket = dir.join("serve.sock");
        let mut command = Command::new(exe);
        command
            .args(["serve", "--backend", "cpu", "--threads", "1", "--socket"])
            .arg(&socket)
            .arg("--key")
            .arg(key)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(uid) = uid {
            command.uid(uid).gid(uid);
        }
        let mut serve = Serve { child: Some(command.spawn().unwrap()), socket };
        let deadline = Instant::now() + Duration::from_secs(30);
        while ServiceClient::connect(&serve.socket).is_err() {
            if let Some(status) = serve.child().try_wait().unwrap() {
                let out = finish(serve.child.take().unwrap(), Duration::ZERO);
                panic!("ecrt serve exited ({status}): {}", String::from_utf8_lossy(&out.stderr));
            }
            assert!(Instant::now() < deadline, "ecrt serve did not listen within 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        serve
    }

    fn child(&mut self) -> &mut Child {
        self.child.as_mut().unwrap()
    }

    fn pid(&mut self) -> u32 {
        self.child().id()
    }

    /// SIGTERM, and the output (bounded waits).
    fn stop(mut self) -> Output {
        finish(self.child.take().unwrap(), Duration::ZERO)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether the test runs as root; the test below needs it, and say so when skipped.
fn is_root(test: &str) -> bool {
    // SAFETY: geteuid has no memory effects.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("skipped {test}: it needs root");
    }
    root
}

/// Once `ecrt serve` listens, nothing of its memory holds the key file's text (the base64url of
/// p and q) or p, q, λ or μ as text (root reads it through /proc/PID/mem).
#[test]
fn the_services_memory_holds_no_key_text() {
    if !is_root("the_services_memory_holds_no_key_text") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (jwk, key) = fixture_key();
    let key_file = write(dir.path(), "key.jwk", &jwk, 0o600);
    let mut serve = Serve::start(Path::new(ECRT), dir.path(), &key_file, None);
    let jwk: Value = serde_json::from_str(&jwk).unwrap();
    let mut needles: Vec<(String, String)> =
        ["p", "q"].iter().map(|f| (format!("{f} (base64url)"), jwk[*f].as_str().unwrap().to_string())).collect();
    for (name, value) in [("p", key.p()), ("q", key.q()), ("λ", key.lambda()), ("μ", key.mu())] {
        needles.push((format!("{name} (decimal)"), value.to_string()));
        needles.push((format!("{name} (hex)"), value.to_str_radix(16)));
        needles.push((format!("{name} (HEX)"), value.to_str_radix(16).to_uppercase()));
    }
    let pid = serve.pid();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).unwrap();
    let (mut scanned, mut found) = (0usize, Vec::new());
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (range, perms) = (fields.next().unwrap(), fields.next().unwrap());
        // The heap, stacks and every other writable mapping: where a copy of the key file's text
        // could be. The read-only ones are the program and libraries.
        if !perms.starts_with("rw") {
            continue;
        }
        let (start, end) = range.split_once('-').unwrap();
        let (start, end) = (u64::from_str_radix(start, 16).unwrap(), u64::from_str_radix(end, 16).unwrap());
        let mut region = vec![0u8; (end - start) as usize];
        if mem.read_exact_at(&mut region, start).is_err() {
            continue;
        }
        scanned += region.len();
        for (name, needle) in &needles {
            // SAFETY: both pointers and lengths describe live slices.
            let at =
                unsafe { libc::memmem(region.as_ptr().cast(), region.len(), needle.as_ptr().cast(), needle.len()) };
            if !at.is_null() {
                found.push(format!("{name} in {line}"));
            }
        }
    }
    assert!(scanned > 1 << 20, "read only {scanned} bytes of the service's memory");
    assert!(found.is_empty(), "the service's memory holds key text: {found:#?}");
    assert!(serve.stop().status.success());
}
