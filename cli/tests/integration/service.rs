//! `ecrt serve` and its clients, on this machine's Unix sockets: a load test over emulated cards
//! and the RTL, each fault the service must survive, each access rule, the metrics, and the
//! command's clients. Every result is checked; every wait is bounded.

use ecrt_contract::config::AcceleratorConfig;
use ecrt_driver::api::{BackendSpec, Decryptor, ItemError, Options};
use ecrt_driver::backends::service::{key_id, ServiceClient};
use ecrt_emulate::{Emulator, EmulatorOptions, Fault, ResponderKind};
use ecrt_golden::PrivateKey;
use ecrt_service::access::Access;
use ecrt_service::device::{Device, DevicePacing};
use ecrt_service::{ClientLimits, MetricsEndpoint, Service, ServiceConfig, ServiceKey};
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub(crate) const ECRT: &str = env!("CARGO_BIN_EXE_ecrt");
/// The unprivileged user the access tests connect as.
pub(crate) const NOBODY: u32 = 65534;

/// The phe fixture's 1024-bit key, and a second 1024-bit key.
pub(crate) fn keys() -> &'static [PrivateKey; 2] {
    static KEYS: OnceLock<[PrivateKey; 2]> = OnceLock::new();
    KEYS.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/vectors/phe-1024.json");
        let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let phe = ecrt_golden::phe_format::read_private_key(&file["private_key"].to_string()).unwrap();
        let other = PrivateKey::generate(1024, &mut rand::rngs::StdRng::seed_from_u64(2026)).unwrap();
        [phe, other]
    })
}

/// Ciphertexts of known plaintexts, cheaply: c = (1 + m·n)·rⁿ mod n² with a few random rⁿ.
pub(crate) struct Workload {
    pub(crate) plaintexts: Vec<BigUint>,
    pub(crate) ciphertexts: Vec<BigUint>,
}

pub(crate) fn workload(key: &PrivateKey, tag: u64, count: usize) -> Workload {
    let (n, n2) = (key.public().n(), key.public().n_squared());
    let mut rng = rand::rngs::StdRng::seed_from_u64(tag);
    let masks: Vec<BigUint> = (0..16).map(|_| rng.gen_biguint_below(n).modpow(n, n2)).collect();
    let plaintexts: Vec<BigUint> = (0..count as u64).map(|i| BigUint::from(tag << 32 | i)).collect();
    let ciphertexts =
        plaintexts.iter().enumerate().map(|(i, m)| (BigUint::from(1u8) + m * n) * &masks[i % 16] % n2).collect();
    Workload { plaintexts, ciphertexts }
}

/// The instant responder's stand-in plaintext: the ciphertext's low key_bits − 1 bits.
fn stand_in(c: &BigUint, key_bits: u64) -> BigUint {
    c & ((BigUint::from(1u8) << (key_bits - 1)) - 1u8)
}

pub(crate) fn service_key(key: &PrivateKey) -> ServiceKey {
    ServiceKey { key: key.clone(), access: Access::default() }
}

pub(crate) fn cpu_device() -> Device {
    Device { name: "cpu".into(), spec: Arc::new(|_| Ok(BackendSpec::Cpu { threads: 2 })) }
}

fn xdma_device(name: &str, emulator: &Emulator) -> Device {
    let prefix = emulator.device_prefix();
    Device { name: name.into(), spec: Arc::new(move |_| Ok(BackendSpec::Xdma { device: prefix.clone() })) }
}

pub(crate) fn config(dir: &Path, keys: Vec<ServiceKey>, devices: Vec<Device>) -> ServiceConfig {
    ServiceConfig {
        socket: dir.join("ecrt.sock"),
        socket_mode: 0o600,
        socket_group: None,
        keys,
        devices,
        pacing: DevicePacing {
            max_in_flight: 256,
            timeout: Some(Duration::from_secs(60)),
            retry_after: Duration::from_secs(1),
        },
        client_credit: 1024,
        limits: ClientLimits { max_clients: 64, ..Default::default() },
        status_uids: Vec::new(),
        key_switch_wait: Duration::from_millis(20),
        metrics: None,
    }
}

fn instant_emulator(dir: &Path, name: &str, faults: Vec<Fault>) -> Emulator {
    let config = AcceleratorConfig { key_bits: 1024, stream_bits: 128, ..Default::default() };
    let mut options = EmulatorOptions::new(config).with_timeout(Duration::from_secs(10));
    options.responder = ResponderKind::Instant;
    options.faults = faults;
    Emulator::mount(dir.join(name), options).unwrap()
}

/// The RTL behind the emulated card (the configuration of the other 1024-bit RTL tests: one model).
fn rtl_emulator(dir: &Path) -> Emulator {
    let config = AcceleratorConfig {
        key_bits: 1024,
        cores: 2,
        engine: ecrt_contract::config::Engine::Slots,
        ..Default::default()
    };
    let mut options = EmulatorOptions::new(config).with_timeout(Duration::from_secs(60));
    options.responder = ResponderKind::Rtl;
    options.build.progress = true;
    Emulator::mount(dir.join("rtl"), options).unwrap()
}

/// One client's batch: each item's result and its latency (submission to result).
pub(crate) fn run_client(
    socket: &Path,
    key: &PrivateKey,
    ciphertexts: &[BigUint],
) -> Vec<(Result<BigUint, ItemError>, Duration)> {
    let options = Options { queue_depth: 256, timeout: Some(Duration::from_secs(120)) };
    let mut decryptor = Decryptor::connect(socket, key.public(), options).unwrap();
    let mut submitted = Vec::with_capacity(ciphertexts.len());
    let mut results = vec![None; ciphertexts.len()];
    let mut take = |done: ecrt_driver::api::Completion, submitted: &[Instant]| {
        let t = done.ticket as usize;
        results[t] = Some((done.result, submitted[t].elapsed()));
    };
    for c in ciphertexts {
        submitted.push(Instant::now());
        decryptor.submit(c.clone());
        while let Some(done) = decryptor.try_next() {
            take(done, &submitted);
        }
    }
    while let Some(done) = decryptor.wait_next() {
        take(done, &submitted);
    }
    results.into_iter().map(|r| r.expect("one result per submission")).collect()
}

pub(crate) fn status(socket: &Path) -> Value {
    serde_json::to_value(ServiceClient::connect(socket).unwrap().status().unwrap()).unwrap()
}

/// Waits (bounded) until `done` holds of the service's status.
pub(crate) fn wait_for_status(socket: &Path, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = status(socket);
        if done(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: {s:#}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// 8 clients × 2,000 ciphertexts under two keys, over two instant cards and the RTL card: every
/// result is the right one for the card that made it, and the service accounts for each.
#[test]
fn eight_clients_two_keys_three_cards() {
    const CLIENTS: usize = 8;
    const PER_CLIENT: usize = 2000;
    let dir = tempfile::tempdir().unwrap();
    let (a, b, rtl) = (
        instant_emulator(dir.path(), "a", vec![]),
        instant_emulator(dir.path(), "b", vec![]),
        rtl_emulator(dir.path()),
    );
    let devices = vec![xdma_device("instant-a", &a), xdma_device("instant-b", &b), xdma_device("rtl", &rtl)];
    let service = Service::start(config(dir.path(), keys().iter().map(service_key).collect(), devices)).unwrap();
    let socket = service.socket().to_path_buf();
    let workloads: Vec<(usize, Workload)> =
        (0..CLIENTS).map(|i| (i % 2, workload(&keys()[i % 2], i as u64 + 1, PER_CLIENT))).collect();
    let start = Instant::now();
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let clients: Vec<_> = workloads
            .iter()
            .map(|(k, w)| {
                let socket = &socket;
                scope.spawn(move || run_client(socket, &keys()[*k], &w.ciphertexts))
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let wall = start.elapsed();
    let mut latencies = Vec::new();
    let mut by_rtl = 0;
    for ((_, w), results) in workloads.iter().zip(&outcomes) {
        assert_eq!(results.len(), PER_CLIENT);
        for (i, (result, latency)) in results.iter().enumerate() {
            let value = result.as_ref().unwrap_or_else(|e| panic!("item {i} failed: {e}"));
            if *value == w.plaintexts[i] {
                by_rtl += 1;
            } else {
                assert_eq!(
                    *value,
                    stand_in(&w.ciphertexts[i], 1024),
                    "item {i}: neither the plaintext nor the stand-in"
                );
            }
            latencies.push(*latency);
        }
    }
    let s = wait_for_status(&socket, "every client to leave", |s| s["clients"].as_array().unwrap().is_empty());
    let total = (CLIENTS * PER_CLIENT) as u64;
    assert_eq!(s["counters"]["decryptions"], total, "{s:#}");
    assert_eq!(s["counters"]["errors"], serde_json::json!({}), "{s:#}");
    let completed = |name: &str| {
        s["devices"].as_array().unwrap().iter().find(|d| d["name"] == name).unwrap()["completed"].as_u64().unwrap()
    };
    assert_eq!(completed("rtl"), by_rtl, "the RTL card's count is the number of true plaintexts: {s:#}");
    assert_eq!(completed("instant-a") + completed("instant-b") + completed("rtl"), total, "{s:#}");
    assert!(completed("instant-a") > 0 && completed("instant-b") > 0, "both instant cards worked: {s:#}");
    for key in s["keys"].as_array().unwrap() {
        assert_eq!(key["decryptions"], total / 2, "{s:#}");
    }
    latencies.sort();
    eprintln!(
        "load: {total} decryptions by {CLIENTS} clients in {:.2} s = {:.0}/s; latency per request p50 {:.2} ms, p99 {:.2} ms; \
         by card: instant-a {}, instant-b {}, rtl {}",
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        completed("instant-a"),
        completed("instant-b"),
        by_rtl,
    );
    service.stop();
    assert!(!socket.exists(), "the socket file is removed on stop");
}

/// A card that stalls has its items retried on the other; a card that vanishes mid-batch too.
#[test]
fn a_stalled_or_vanished_card_has_its_items_retried_on_another() {
    let dir = tempfile::tempdir().unwrap();
    let healthy = instant_emulator(dir.path(), "healthy", vec![]);
    let stalling = instant_emulator(dir.path(), "stalling", vec![Fault::StallAfter(40)]);
    let vanishing = instant_emulator(dir.path(), "vanishing", vec![]);
    let devices = vec![
        xdma_device("healthy", &healthy),
        xdma_device("stalling", &stalling),
        xdma_device("vanishing", &vanishing),
    ];
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], devices);
    config.pacing.timeout = Some(Duration::from_secs(1));
    config.pacing.retry_after = Duration::from_secs(600); // stays failed: the status shows it
    let service = Service::start(config).unwrap();
    let w = workload(&keys()[0], 9, 3000);
    let socket = service.socket().to_path_buf();
    let results = std::thread::scope(|scope| {
        let client = scope.spawn(|| run_client(&socket, &keys()[0], &w.ciphertexts));
        wait_for_status(&socket, "the vanishing card to work", |s| s["devices"][2]["completed"].as_u64() > Some(50));
        vanishing.unmount().unwrap();
        client.join().unwrap()
    });
    for (i, (result, _)) in results.iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &stand_in(&w.ciphertexts[i], 1024), "item {i}");
    }
    let s = status(&socket);
    let devices = s["devices"].as_array().unwrap();
    assert_eq!(devices[0]["state"], "up", "{s:#}");
    for failed in &devices[1..] {
        assert_eq!(failed["state"], "failed", "{s:#}");
        assert!(failed["error"].as_str().is_some_and(|e| !e.is_empty()), "{s:#}");
    }
    assert!(s["counters"]["retries"].as_u64() > Some(0), "{s:#}");
    assert_eq!(s["counters"]["decryptions"], 3000, "{s:#}");
    service.stop();
}

/// With its only card stalled, after it has run fast long enough for the device thread to pause
/// between looks, every item left fails with a clear error (none is lost, none hangs).
#[test]
fn with_no_card_left_every_item_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let stalling = instant_emulator(dir.path(), "stalling", vec![Fault::StallAfter(1500)]);
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], vec![xdma_device("only", &stalling)]);
    config.pacing.timeout = Some(Duration::from_millis(500));
    config.pacing.retry_after = Duration::from_secs(600);
    let service = Service::start(config).unwrap();
    let w = workload(&keys()[0], 10, 3000);
    let results = run_client(service.socket(), &keys()[0], &w.ciphertexts);
    assert_eq!(results.len(), 3000);
    let failed: Vec<_> = results.iter().filter_map(|(r, _)| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1500, "the card answered 1,500 before it stalled");
    for error in failed {
        let text = error.to_string();
        let clear = ["device only failed", "no working device", "no result within"];
        assert!(clear.iter().any(|c| text.contains(c)), "{text}");
    }
    for (i, (result, _)) in results.iter().enumerate() {
        if let Ok(value) = result {
            assert_eq!(value, &stand_in(&w.ciphertexts[i], 1024));
        }
    }
    service.stop();
}

/// One connection more than `max_clients` is told why and closed; the others are untouched,
/// and a slot freed by a client that leaves is taken by the next.
#[test]
fn connections_beyond_the_most_clients_are_turned_away_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]);
    config.limits.max_clients = 2;
    let service = Service::start(config).unwrap();
    let socket = service.socket().to_path_buf();
    let first = ServiceClient::connect(&socket).unwrap();
    let mut second = ServiceClient::connect(&socket).unwrap();
    let turned_away = ServiceClient::connect(&socket).err().expect("a third client is turned away").to_string();
    assert!(turned_away.contains("serves 2 clients at once"), "{turned_away}");
    assert_eq!(second.keys().unwrap().len(), 1, "a connected client is untouched");
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut third = loop {
        match ServiceClient::connect(&socket) {
            Ok(client) => break client,
            Err(e) if Instant::now() < deadline => assert!(e.to_string().contains("serves 2"), "{e}"),
            Err(e) => panic!("the slot was never freed: {e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = third.status().unwrap();
    assert!(status.counters.turned_away >= 1, "{status:?}");
    assert!(status.counters.connections >= 3, "{status:?}");
    drop((second, third));
    service.stop();
}

/// The private key file and the ciphertext lines of a workload, for the command's clients.
pub(crate) fn write_files(dir: &Path, key: &PrivateKey, w: &Workload) -> (PathBuf, PathBuf, PathBuf) {
    let private = dir.join("key.jwk");
    std::fs::write(&private, ecrt_golden::phe_format::write_private_key(key, "test")).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let public = dir.join("key.pub.jwk");
    std::fs::write(&public, ecrt_golden::phe_format::write_public_key(key.public(), "test")).unwrap();
    std::fs::set_permissions(&public, std::fs::Permissions::from_mode(0o644)).unwrap();
    let lines = dir.join("cts.txt");
    std::fs::write(&lines, w.ciphertexts.iter().map(|c| format!("{c}\n")).collect::<String>()).unwrap();
    std::fs::set_permissions(&lines, std::fs::Permissions::from_mode(0o644)).unwrap();
    (private, public, lines)
}

/// A client process killed mid-batch: its work is dropped, and another client is untouched.
#[test]
fn a_client_killed_mid_batch_leaves_the_others_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]);
    config.pacing.max_in_flight = 8; // the CPU holds little: most of the victim's work stays queued
    let service = Service::start(config).unwrap();
    let socket = service.socket().to_path_buf();
    let big = workload(&keys()[0], 11, 20_000);
    let (_, public, lines) = write_files(dir.path(), &keys()[0], &big);
    let mut victim = Command::new(ECRT)
        .args(["decrypt", "--raw", "--service"])
        .arg(&socket)
        .arg("--public-key")
        .arg(&public)
        .arg("--in")
        .arg(&lines)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_status(&socket, "the victim's work to queue", |s| s["keys"][0]["queued"].as_u64() > Some(100));
    let small = workload(&keys()[0], 12, 200);
    let results = std::thread::scope(|scope| {
        let other = scope.spawn(|| run_client(&socket, &keys()[0], &small.ciphertexts));
        victim.kill().unwrap();
        victim.wait().unwrap();
        other.join().unwrap()
    });
    for (i, (result, _)) in results.iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &small.plaintexts[i], "item {i}");
    }
    let s = wait_for_status(&socket, "the victim's work to be dropped", |s| {
        s["clients"].as_array().unwrap().is_empty() && s["keys"][0]["queued"] == 0
    });
    assert!(s["keys"][0]["decryptions"].as_u64() < Some(20_000 + 200), "{s:#}");
    service.stop();
}

/// `ecrt serve` in a child process.
pub(crate) struct ServeProcess {
    pub(crate) child: Child,
    pub(crate) socket: PathBuf,
}

impl ServeProcess {
    pub(crate) fn start(dir: &Path, key: &Path, extra: &[&str]) -> ServeProcess {
        let socket = dir.join("serve.sock");
        let child = Command::new(ECRT)
            .args(["serve", "--backend", "cpu", "--threads", "1", "--queue-depth", "8", "--socket"])
            .arg(&socket)
            .arg("--key")
            .arg(key)
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut serve = ServeProcess { child, socket };
        let deadline = Instant::now() + Duration::from_secs(30);
        while ServiceClient::connect(&serve.socket).is_err() {
            assert!(serve.child.try_wait().unwrap().is_none(), "ecrt serve exited: {}", serve.stderr());
            assert!(Instant::now() < deadline, "ecrt serve did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        serve
    }

    pub(crate) fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }

    /// SIGTERM, then the exit status (bounded wait).
    pub(crate) fn terminate(&mut self) -> std::process::ExitStatus {
        // SAFETY: kill(2) on our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "ecrt serve did not exit on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGTERM drains the work in flight and exits; clients then see a clear error, and connect
/// again once the service is back.
#[test]
fn sigterm_drains_and_clients_reconnect_when_the_service_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(&keys()[0], 13, 3000);
    let (private, _, _) = write_files(dir.path(), &keys()[0], &w);
    let mut serve = ServeProcess::start(dir.path(), &private, &[]);
    let socket = serve.socket.clone();
    let options = Options { queue_depth: 256, timeout: Some(Duration::from_secs(60)) };
    let mut decryptor = Decryptor::connect(&socket, keys()[0].public(), options).unwrap();
    let mut results = Vec::new();
    for c in &w.ciphertexts {
        decryptor.submit(c.clone());
        results.extend(std::iter::from_fn(|| decryptor.try_next()));
        if results.len() >= 100 && serve.child.try_wait().unwrap().is_none() && results.len() < 200 {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(serve.child.id() as libc::pid_t, libc::SIGTERM) };
        }
    }
    results.extend(std::iter::from_fn(|| decryptor.wait_next()));
    assert_eq!(results.len(), 3000, "every submission is answered");
    let mut decrypted = 0;
    for done in &results {
        match &done.result {
            Ok(m) => {
                assert_eq!(m, &w.plaintexts[done.ticket as usize]);
                decrypted += 1;
            }
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("shutting down") || text.contains("closed the connection"), "{text}");
            }
        }
    }
    assert!(decrypted >= 100, "the work accepted before SIGTERM is answered");
    assert!(serve.terminate().success());
    let log = serve.stderr();
    assert!(log.contains("draining") && log.contains("stopped"), "{log}");
    assert!(!socket.exists(), "the socket file is removed");
    let gone = Decryptor::connect(&socket, keys()[0].public(), options).err().unwrap().to_string();
    assert!(gone.contains("no ecrt service at") && gone.contains("ecrt serve"), "{gone}");
    let _back = ServeProcess::start(dir.path(), &private, &[]);
    let again = run_client(&socket, &keys()[0], &w.ciphertexts[..50]);
    for (i, (result, _)) in again.iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &w.plaintexts[i]);
    }
}

/// A copy of the `ecrt` binary that an unprivileged user can run, in a directory it can enter.
pub(crate) fn runnable_ecrt(dir: &Path) -> PathBuf {
    let exe = dir.join("ecrt");
    std::fs::copy(ECRT, &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    exe
}

/// `ecrt ARGS` as the user `uid`.
pub(crate) fn ecrt_as(exe: &Path, uid: u32, args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(exe).args(args).uid(uid).gid(uid).stdin(Stdio::null()).output().unwrap()
}

/// The socket's mode decides who connects; a key's allow-list decides who decrypts under it; a
/// refusal is a clear error and is logged with the peer's UID.
#[test]
fn the_socket_mode_and_the_allow_lists_decide_who_decrypts() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the access tests run clients as another user, which needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = runnable_ecrt(dir.path());
    let w = workload(&keys()[0], 14, 5);
    let (_, public, lines) = write_files(dir.path(), &keys()[0], &w);
    let restricted = ServiceKey { key: keys()[0].clone(), access: Access { uids: vec![0], gids: vec![] } };
    let by_group = ServiceKey { key: keys()[1].clone(), access: Access { uids: vec![], gids: vec![NOBODY] } };
    let mut config = config(dir.path(), vec![restricted, by_group], vec![cpu_device()]);
    config.socket_mode = 0o600;
    let service = Service::start(config).unwrap();
    let socket = service.socket().as_os_str();
    let status_args = [std::ffi::OsStr::new("status"), "--service".as_ref(), socket];

    let out = ecrt_as(&exe, NOBODY, &status_args);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no ecrt service at") && err.contains("Permission denied"), "{err}");

    std::fs::set_permissions(service.socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(ecrt_as(&exe, NOBODY, &status_args).status.success());
    let decrypt = |uid: u32| {
        let args = ["decrypt", "--raw", "--service"].map(std::ffi::OsStr::new);
        let rest = [socket, "--public-key".as_ref(), public.as_os_str(), "--in".as_ref(), lines.as_os_str()];
        ecrt_as(&exe, uid, &args.iter().copied().chain(rest).collect::<Vec<_>>())
    };
    let refused = decrypt(NOBODY);
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains(&format!("UID {NOBODY}")) && err.contains("may not decrypt under key"), "{err}");
    assert!(!err.contains(&keys()[0].p().to_string()));
    let allowed = decrypt(0);
    assert!(allowed.status.success(), "{}", String::from_utf8_lossy(&allowed.stderr));
    let expected: String = w.plaintexts.iter().map(|m| format!("\"{m}\"\n")).collect();
    assert_eq!(String::from_utf8_lossy(&allowed.stdout), expected);

    // The second key admits the group `nobody` (the client's primary group here).
    let options = Options::default();
    assert!(Decryptor::connect(service.socket(), keys()[1].public(), options).is_err(), "root is not in the group");
    let second = workload(&keys()[1], 15, 3);
    let (_, public2, lines2) = {
        let sub = dir.path().join("second");
        std::fs::create_dir(&sub).unwrap();
        std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_files(&sub, &keys()[1], &second)
    };
    let args = ["decrypt", "--raw", "--service"].map(std::ffi::OsStr::new);
    let rest = [socket, "--public-key".as_ref(), public2.as_os_str(), "--in".as_ref(), lines2.as_os_str()];
    let by_gid = ecrt_as(&exe, NOBODY, &args.iter().copied().chain(rest).collect::<Vec<_>>());
    assert!(by_gid.status.success(), "{}", String::from_utf8_lossy(&by_gid.stderr));
    assert_eq!(
        String::from_utf8_lossy(&by_gid.stdout),
        second.plaintexts.iter().map(|m| format!("\"{m}\"\n")).collect::<String>()
    );
    assert_eq!(status(service.socket())["counters"]["refusals"], 2);
    service.stop();
}

/// `ecrt serve` refuses a key file others can read, as ssh does, and logs a refusal's UID.
#[test]
fn the_command_refuses_a_readable_key_and_logs_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(&keys()[0], 16, 3);
    let (private, public, lines) = write_files(dir.path(), &keys()[0], &w);
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = Command::new(ECRT)
        .args(["serve", "--socket"])
        .arg(dir.path().join("s.sock"))
        .arg("--key")
        .arg(&private)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mode 0644") && err.contains("chmod 600"), "{err}");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();

    let me = unsafe { libc::geteuid() };
    let mut serve = ServeProcess::start(dir.path(), &private, &["--allow-uid", &(me + 1).to_string()]);
    let out = Command::new(ECRT)
        .args(["decrypt", "--service"])
        .arg(&serve.socket)
        .arg("--public-key")
        .arg(&public)
        .arg("--in")
        .arg(&lines)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("may not decrypt"));
    assert!(serve.terminate().success());
    let log = serve.stderr();
    assert!(log.contains("refused") && log.contains(&format!("uid={me}")), "{log}");
}

/// The command's clients: `ecrt decrypt --service` gives what `--key` gives (by public key file
/// or key id), and `ecrt status` shows the service, as a table, JSON or Prometheus's format; the
/// metrics are also served over HTTP.
#[test]
fn the_command_line_clients_and_the_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/vectors/phe-1024.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let private = dir.path().join("key.jwk");
    std::fs::write(&private, file["private_key"].to_string()).unwrap();
    let public = dir.path().join("key.pub.jwk");
    std::fs::write(&public, ecrt_golden::phe_format::write_public_key(keys()[0].public(), "test")).unwrap();
    let lines = dir.path().join("cts.jsonl");
    let cases = file["cases"].as_array().unwrap();
    std::fs::write(&lines, cases.iter().map(|c| c["ciphertext"].to_string() + "\n").collect::<String>()).unwrap();
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]);
    config.metrics = Some(MetricsEndpoint::Tcp("127.0.0.1:0".parse().unwrap()));
    let service = Service::start(config).unwrap();
    let socket = service.socket();
    let run = |args: &[&std::ffi::OsStr]| Command::new(ECRT).args(args).output().unwrap();
    let direct = run(&["decrypt".as_ref(), "--key".as_ref(), private.as_os_str(), "--in".as_ref(), lines.as_os_str()]);
    assert!(direct.status.success());
    let id = key_id(keys()[0].public().n());
    for key_args in [["--public-key".as_ref(), public.as_os_str()], ["--key-id".as_ref(), id.as_ref()]] {
        let mut args =
            vec!["decrypt".as_ref(), "--service".as_ref(), socket.as_os_str(), "--in".as_ref(), lines.as_os_str()];
        args.extend(key_args);
        let served = run(&args);
        assert!(served.status.success(), "{}", String::from_utf8_lossy(&served.stderr));
        assert_eq!(served.stdout, direct.stdout);
    }
    let table = run(&["status".as_ref(), "--service".as_ref(), socket.as_os_str()]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains(&id) && table.contains("cpu") && table.contains("up"), "{table}");
    let decrypted = 2 * cases.len();
    let json: Value = serde_json::from_slice(
        &run(&["status".as_ref(), "--json".as_ref(), "--service".as_ref(), socket.as_os_str()]).stdout,
    )
    .unwrap();
    assert_eq!(json["counters"]["decryptions"], decrypted as u64);
    let expected = format!("ecrt_decryptions_total{{key=\"{id}\"}} {decrypted}");
    let prometheus = run(&["status".as_ref(), "--prometheus".as_ref(), "--service".as_ref(), socket.as_os_str()]);
    assert!(String::from_utf8_lossy(&prometheus.stdout).contains(&expected));
    let mut http = std::net::TcpStream::connect(service.metrics_address().unwrap()).unwrap();
    http.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut response = String::new();
    http.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK") && response.contains(&expected), "{response}");
    assert!(
        response.contains("ecrt_device_busy_seconds_total{device=\"cpu\"}")
            && response.contains("ecrt_key_switches_total")
    );
    let unknown =
        run(&["decrypt".as_ref(), "--service".as_ref(), socket.as_os_str(), "--key-id".as_ref(), "0000".as_ref()]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("has no key 0000"));
    service.stop();
}
