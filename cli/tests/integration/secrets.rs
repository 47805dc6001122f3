//! A private key's secrets stay secret: a key file given by mistake to any option that reads a
//! file is never quoted, and `ecrt serve` can be read neither by its own user nor, once the key is
//! loaded, for the key file's text (even by root, who can read its memory). Every wait is bounded.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ecrt_driver::backends::service::ServiceClient;
use ecrt_golden::PrivateKey;
use num_bigint::BigUint;
use serde_json::Value;
use std::io::Read;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const ECRT: &str = env!("CARGO_BIN_EXE_ecrt");
/// The unprivileged user the service runs as, where the test is root.
const NOBODY: u32 = 65534;
/// The longest run of a secret's characters that output may hold by chance: an error may quote
/// ten characters of an input, and sixteen digits of a secret in a row is beyond chance.
const WINDOW: usize = 16;

/// The phe fixture's private key: its JWK text and the key.
fn fixture_key() -> (String, PrivateKey) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/vectors/phe-1024.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let jwk = file["private_key"].to_string();
    let key = ecrt_golden::phe_format::read_private_key(&jwk).unwrap();
    (jwk, key)
}

/// Every secret of `key` (name, form, text): decimal, hex in both cases and base64url of the
/// big-endian bytes, as pheutil's JWK holds p and q.
fn secret_texts(key: &PrivateKey) -> Vec<(&'static str, &'static str, String)> {
    let secrets: [(&str, &BigUint); 11] = [
        ("p", key.p()),
        ("q", key.q()),
        ("λ", key.lambda()),
        ("μ", key.mu()),
        ("h_p", key.h_p()),
        ("h_q", key.h_q()),
        ("p^-1 mod q", key.p_inv_q()),
        ("t_p", key.t_p()),
        ("t_q", key.t_q()),
        ("p²", key.p_squared()),
        ("q²", key.q_squared()),
    ];
    let mut texts = Vec::new();
    for (name, value) in secrets {
        texts.push((name, "decimal", value.to_string()));
        texts.push((name, "hex", value.to_str_radix(16)));
        texts.push((name, "HEX", value.to_str_radix(16).to_uppercase()));
        texts.push((name, "base64url", URL_SAFE_NO_PAD.encode(value.to_bytes_be())));
    }
    texts
}

/// Fails if `output` holds [`WINDOW`] characters in a row of any secret's text.
fn assert_quotes_no_secret(what: &str, output: &[u8], secrets: &[(&str, &str, String)]) {
    let output = String::from_utf8_lossy(output);
    for (name, form, text) in secrets {
        for start in 0..=text.len().saturating_sub(WINDOW) {
            let window = &text[start..(start + WINDOW).min(text.len())];
            if let Some(at) = output.find(window) {
                panic!("{what} prints {WINDOW} characters of {name} in {form} at byte {at}");
            }
        }
    }
}

/// `ecrt ARGS`, given `limit` to exit by itself before SIGTERM (then 10 s more before SIGKILL).
fn ecrt_for(args: &[&str], limit: Duration) -> Output {
    let child = Command::new(ECRT)
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    finish(child, limit)
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

/// A private key file given by mistake to each command's every option that reads a file (and
/// to the options that name a socket or a device, and keygen's outputs): whatever the command
/// says, on stdout or stderr, holds no sixteen characters in a row of any secret of the key, in
/// decimal, hex or base64url, and it never panics. So does a configuration file quoting p.
#[test]
fn a_private_key_file_given_by_mistake_is_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let (jwk, key) = fixture_key();
    let secrets = secret_texts(&key);
    let key_file = write(dir.path(), "key.jwk", &jwk, 0o600);
    let public = ecrt_golden::phe_format::write_public_key(key.public(), "test");
    let public_file = write(dir.path(), "key.pub.jwk", &public, 0o644);
    let c = ecrt_golden::paillier::encrypt(key.public(), &BigUint::from(7u32), &mut rand::thread_rng()).unwrap();
    let lines = write(dir.path(), "cts.txt", &format!("{c}\n"), 0o644);
    let socket = dir.path().join("s.sock");
    let p_b64 = URL_SAFE_NO_PAD.encode(key.p().to_bytes_be());
    let mut configs = Vec::new();
    for (i, line) in [
        format!("{p_b64} = 1"),
        format!("backend = \"{p_b64}\""),
        format!("socket_mode = \"{p_b64}\""),
        format!("threads = \"{p_b64}\""),
        format!("metrics = \"{p_b64}\""),
        format!("socket = \"{p_b64}"),
        format!("[[key]]\nfile = \"key.jwk\"\nallow_uids = [\"{p_b64}\"]"),
    ]
    .iter()
    .enumerate()
    {
        configs.push(write(dir.path(), &format!("quoting-p-{i}.toml"), line, 0o600));
    }
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (k, pk, l, s) = (path(&key_file), path(&public_file), path(&lines), path(&socket));
    let (k, pk, l, s) = (k.as_str(), pk.as_str(), l.as_str(), s.as_str());
    let new = path(&dir.path().join("new.jwk"));
    let mut runs: Vec<(Vec<&str>, bool)> = vec![
        (vec!["encrypt", "--key", pk, "--in", k], false),
        (vec!["encrypt", "--key", k, "--in", k], false),
        (vec!["encrypt", "--key", k, "--", "1"], true),
        (vec!["decrypt", "--key", k, "--in", k], false),
        (vec!["decrypt", "--key", k, "--in", l, "--verify"], true),
        (vec!["decrypt", "--key", pk, "--in", l], false),
        (vec!["decrypt", "--key", k, "--backend", "xdma", "--device", k, "--in", l], false),
        (vec!["decrypt", "--service", k, "--public-key", k, "--in", l], false),
        (vec!["status", "--service", k], false),
        (vec!["serve", "--config", k], false),
        (vec!["serve", "--config", k, "--key", k, "--socket", s], false),
        (vec!["serve", "--key", pk, "--socket", s], false),
        (vec!["serve", "--key", k, "--socket", k], false),
        (vec!["keygen", "--bits", "512", "--out", k], false),
        (vec!["keygen", "--bits", "512", "--out", &new, "--public-out", k], false),
        (vec!["bench", "--key-bits", "512", "--count", "1", "--rounds", "1", "--phe-python", k], false),
    ];
    let configs: Vec<String> = configs.iter().map(|c| path(c)).collect();
    for config in &configs {
        runs.push((vec!["serve", "--config", config, "--socket", s], false));
    }
    for (args, succeeds) in &runs {
        let what = format!("`ecrt {}`", args.join(" "));
        let out = ecrt_for(args, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{what} panicked");
        assert_eq!(out.status.success(), *succeeds, "{what}: {}", out.status);
        assert_quotes_no_secret(&what, &out.stdout, &secrets);
        assert_quotes_no_secret(&what, &out.stderr, &secrets);
    }
    assert_eq!(std::fs::read_to_string(&key_file).unwrap(), jwk, "the key file is untouched");

    // The service with the key, as meant, and more of it by mistake: on the device option, and to
    // its clients as ciphertexts.
    let xdma =
        ecrt_for(&["serve", "--key", k, "--socket", s, "--backend", "xdma", "--device", k], Duration::from_secs(3));
    assert_quotes_no_secret("`ecrt serve --backend xdma --device KEY`", &xdma.stderr, &secrets);
    let serve = Serve::start(Path::new(ECRT), dir.path(), &key_file, None);
    let sock = path(&serve.socket);
    let sock = sock.as_str();
    for (args, succeeds) in [
        (vec!["decrypt", "--service", sock, "--public-key", k, "--in", k], false),
        (vec!["decrypt", "--service", sock, "--public-key", k, "--in", l], true),
        (vec!["status", "--service", sock], true),
        (vec!["status", "--service", sock, "--json"], true),
        (vec!["status", "--service", sock, "--prometheus"], true),
    ] {
        let what = format!("`ecrt {}`", args.join(" "));
        let out = ecrt_for(&args, Duration::from_secs(60));
        assert_eq!(out.status.success(), succeeds, "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert_quotes_no_secret(&what, &out.stdout, &secrets);
        assert_quotes_no_secret(&what, &out.stderr, &secrets);
    }
    let out = serve.stop();
    assert!(out.status.success(), "ecrt serve: {}", out.status);
    assert_quotes_no_secret("`ecrt serve --key KEY`", &out.stderr, &secrets);
}

/// Whether the test runs as root; the tests below need it, and say so when skipped.
fn is_root(test: &str) -> bool {
    // SAFETY: geteuid has no memory effects.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("skipped {test}: it needs root");
    }
    root
}

/// `ecrt serve` run by an unprivileged user: another process of that user can read neither its
/// memory nor its environment (PR_SET_DUMPABLE 0), though it can read its own.
#[test]
fn the_service_cannot_be_read_by_its_own_user() {
    if !is_root("the_service_cannot_be_read_by_its_own_user") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let chown = |path: &Path| std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    chown(dir.path());
    let exe = dir.path().join("ecrt");
    std::fs::copy(ECRT, &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let key_file = write(dir.path(), "key.jwk", &fixture_key().0, 0o600);
    chown(&key_file);
    let mut serve = Serve::start(&exe, dir.path(), &key_file, Some(NOBODY));
    let read_as_nobody =
        |path: String| Command::new("cat").arg(path).uid(NOBODY).gid(NOBODY).stdin(Stdio::null()).output().unwrap();
    let own = read_as_nobody("/proc/self/environ".into());
    assert!(own.status.success(), "{}", String::from_utf8_lossy(&own.stderr));
    for file in ["environ", "mem"] {
        let out = read_as_nobody(format!("/proc/{}/{file}", serve.pid()));
        assert!(!out.status.success(), "the service's user can read its /proc/PID/{file}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("Permission denied"), "/proc/PID/{file}: {stderr}");
    }
    assert!(serve.stop().status.success());
}

/// Once `ecrt serve` listens, nothing of its memory holds the key file's text (the base64url of
/// p and q) or p, q, λ or μ as text (root reads it through /proc/PID/mem), and its memory is
/// locked (root may lock without limit, unless a container took CAP_IPC_LOCK away).
#[test]
fn the_services_memory_holds_no_key_text_and_is_locked() {
    if !is_root("the_services_memory_holds_no_key_text_and_is_locked") {
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
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let locked = status.lines().find_map(|l| l.strip_prefix("VmLck:")).unwrap().trim().trim_end_matches(" kB");
    let locked: u64 = locked.trim().parse().unwrap();
    let out = serve.stop();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    // Root in a container may lack CAP_IPC_LOCK: then the service says why it is not locked.
    if may_lock_without_limit() {
        assert!(locked > 0 && log.contains("memory locked"), "not locked: VmLck {locked} kB; {log}");
    } else {
        assert!(locked == 0 && log.contains("memory is not locked (RLIMIT_MEMLOCK is"), "VmLck {locked} kB; {log}");
    }
}

/// Whether this process (and so a service it starts) may lock memory without limit.
fn may_lock_without_limit() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let effective = status.lines().find_map(|l| l.strip_prefix("CapEff:")).unwrap();
    let cap_ipc_lock = u64::from_str_radix(effective.trim(), 16).unwrap() & (1 << 14) != 0;
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) }, 0);
    cap_ipc_lock || limit.rlim_cur == libc::RLIM_INFINITY
}
