//! `ecrt serve` against clients that should not matter: users on no allow-list, connections that
//! say nothing or trickle, refusals repeated at will, a process out of threads, a hostile service
//! seen by `ecrt status`, a stopped service, a successor started while it drains. Every wait is
//! bounded.

use crate::service::{
    config, cpu_device, keys, run_client, runnable_ecrt, service_key, status, wait_for_status, workload, write_files,
    ServeProcess, ECRT, NOBODY,
};
use ecrt_driver::api::{Decryptor, Options};
use ecrt_driver::backends::service::protocol::{Request, Response, VERSION};
use ecrt_driver::backends::service::ServiceClient;
use ecrt_service::access::Access;
use ecrt_service::{MetricsEndpoint, Service, ServiceKey};
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Python's standard library, as user `uid`: the hostile clients below are a few lines of it.
fn python_as(uid: u32, script: &str, args: &[&str]) -> Child {
    Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .uid(uid)
        .gid(uid)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 (scripts/setup installs it)")
}

/// Opens `count` connections to the socket, prints a line, and holds them, silent, for 30 s.
const HOLD_CONNECTIONS: &str = "
import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
print('connected', flush=True)
time.sleep(30)
";

/// Waits (bounded) for the child's first line of output.
fn first_line(child: &mut Child) -> String {
    let mut out = child.stdout.take().unwrap();
    let mut line = Vec::new();
    let mut byte = [0u8];
    while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    String::from_utf8_lossy(&line).into_owned()
}

/// A raw connection's Hello and the answer.
fn hello(stream: &mut UnixStream) -> Response {
    stream.write_all(&Request::Hello { version: VERSION }.encode()).unwrap();
    Response::read(stream).unwrap().expect("an answer")
}

/// What a raw connection reads until the service closes it: its frames, then the end (bounded).
fn read_until_closed(stream: &mut UnixStream, within: Duration) -> Vec<Response> {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut frames = Vec::new();
    loop {
        match Response::read(stream) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return frames,
            Err(e) => panic!("the service did not close the connection within {within:?} ({e}); read {frames:?}"),
        }
    }
}

fn error_text(frames: &[Response]) -> String {
    match frames.last() {
        Some(Response::Error(error)) => error.to_string(),
        other => panic!("expected an error frame, got {other:?}"),
    }
}

/// A user that no allow-list admits gets no slot: its silent connections are answered and closed
/// at once, counted, and logged a line a second at most, and an allowed user still decrypts
/// when they are more than the service serves.
#[test]
fn users_on_no_allow_list_hold_no_slot() {
    if !is_root() {
        eprintln!("skipped: the test connects as another user, which needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let restricted = ServiceKey { key: keys()[0].clone(), access: Access { uids: vec![0], gids: vec![] } };
    let mut config = config(dir.path(), vec![restricted], vec![cpu_device()]);
    config.socket_mode = 0o666;
    config.limits.max_clients = 4;
    let service = Service::start(config).unwrap();
    let socket = service.socket().to_path_buf();
    let mut nobody = python_as(NOBODY, HOLD_CONNECTIONS, &[socket.to_str().unwrap(), "40"]);
    assert_eq!(first_line(&mut nobody), "connected");
    let s = wait_for_status(&socket, "the refusals", |s| s["counters"]["refused_connections"] == 40);
    assert_eq!(s["counters"]["turned_away"], 0, "{s:#}");
    assert!(s["clients"].as_array().unwrap().is_empty(), "{s:#}");
    let w = workload(&keys()[0], 30, 5);
    for (i, (result, _)) in run_client(&socket, &keys()[0], &w.ciphertexts).iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &w.plaintexts[i]);
    }
    let _ = nobody.kill();
    let _ = nobody.wait();
    // And through the command: nobody is told why.
    let exe = runnable_ecrt(dir.path());
    let out = Command::new(&exe).args(["status", "--service"]).arg(&socket).uid(NOBODY).gid(NOBODY).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("UID {NOBODY}")) && err.contains("may not use this ecrt service"), "{err}");
    assert!(out.stdout.is_empty(), "no status for a refused user");
    service.stop();
}

/// A connection that never says Hello, or says nothing more without a key open, loses its slot
/// at its deadline; an application with a key open keeps its slot while it idles; one UID holds
/// at most its share of the slots.
#[test]
fn silent_and_idle_connections_lose_their_slots() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]);
    config.limits.max_clients = 3;
    config.limits.max_clients_per_uid = 3;
    config.limits.handshake = Duration::from_millis(500);
    config.limits.idle = Some(Duration::from_secs(1));
    let service = Service::start(config).unwrap();
    let socket = service.socket().to_path_buf();
    let mut application = Decryptor::connect(&socket, keys()[0].public(), Options::default()).unwrap();
    let mut silent: Vec<UnixStream> = (0..2).map(|_| UnixStream::connect(&socket).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(100));
    let full = ServiceClient::connect(&socket).err().expect("every slot is held").to_string();
    assert!(full.contains("serves 3 clients at once"), "{full}");
    for stream in &mut silent {
        let frames = read_until_closed(stream, Duration::from_secs(5));
        assert!(error_text(&frames).contains("no request came"), "{frames:?}");
    }
    let mut idle = ServiceClient::connect(&socket).expect("the silent connections' slots are free again");
    std::thread::sleep(Duration::from_millis(1500));
    let closed = idle.keys().expect_err("an idle connection without a key is closed").to_string();
    assert!(closed.contains("no request came for 1 s"), "{closed}");
    let w = workload(&keys()[0], 31, 3);
    for c in &w.ciphertexts {
        application.submit(c.clone());
    }
    let results: Vec<_> = std::iter::from_fn(|| application.wait_next()).collect();
    assert_eq!(results.len(), 3);
    for done in results {
        assert_eq!(done.result.unwrap(), w.plaintexts[done.ticket as usize], "the idle application still decrypts");
    }
    assert!(status(&socket)["counters"]["timed_out"].as_u64() >= Some(3));
    drop(application);
    service.stop();

    // A UID's share: two connections of this user, and a third is told why.
    let mut config = crate::service::config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]);
    config.limits.max_clients_per_uid = 2;
    let service = Service::start(config).unwrap();
    let held: Vec<_> = (0..2).map(|_| ServiceClient::connect(service.socket()).unwrap()).collect();
    let error = ServiceClient::connect(service.socket()).err().unwrap().to_string();
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    assert!(error.contains(&format!("UID {me} has 2 connections open")), "{error}");
    drop(held);
    service.stop();
}

/// A frame's bytes trickling in do not extend its deadline, and connections the service turns
/// away cost it no thread.
#[test]
fn tricklers_are_cut_off_and_turned_away_connections_cost_no_thread() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(&keys()[0], 32, 1);
    let (private, _, _) = write_files(dir.path(), &keys()[0], &w);
    let serve = ServeProcess::start(dir.path(), &private, &["--max-clients", "2", "--frame-timeout", "1"]);
    let threads = || -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", serve.child.id())).unwrap();
        status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
    };
    let before = threads();
    let _first = ServiceClient::connect(&serve.socket).unwrap();
    // A Keys request whose frame claims 1 MiB and comes a byte at a time.
    let mut trickler = UnixStream::connect(&serve.socket).unwrap();
    assert!(matches!(hello(&mut trickler), Response::Welcome { .. }));
    let started = Instant::now();
    let mut frame: std::collections::VecDeque<u8> = (1u32 << 20).to_le_bytes().into_iter().collect();
    frame.push_back(0x02);
    let cut_off = loop {
        let byte = frame.pop_front().unwrap_or(0);
        if trickler.write_all(&[byte]).is_err() || started.elapsed() > Duration::from_secs(10) {
            break started.elapsed();
        }
        trickler.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        match Response::read(&mut trickler) {
            Ok(Some(Response::Error(error))) => {
                assert!(error.to_string().contains("took longer than 1 s"), "{error}");
                break started.elapsed();
            }
            Ok(other) => panic!("{other:?}"),
            Err(_) => {} // nothing yet
        }
    };
    assert!(cut_off < Duration::from_secs(4), "the trickler was served for {cut_off:?}");
    // The slots are full now (one client, and one that may still be closing): every other
    // connection is answered and closed by the acceptor itself.
    let deadline = Instant::now() + Duration::from_secs(10);
    let _second = loop {
        match ServiceClient::connect(&serve.socket) {
            Ok(client) => break client,
            Err(e) => assert!(Instant::now() < deadline, "the trickler's slot was never freed: {e}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut turned_away: Vec<UnixStream> = (0..100).map(|_| UnixStream::connect(&serve.socket).unwrap()).collect();
    for stream in &mut turned_away {
        let frames = read_until_closed(stream, Duration::from_secs(10));
        assert!(error_text(&frames).contains("serves 2 clients at once"), "{frames:?}");
    }
    assert!(threads() <= before + 4, "{} threads with 2 clients, {before} before", threads());
}

/// A refused Open closes the connection; refusals repeated at will are all counted, and logged
/// a line a second at most.
#[test]
fn refusals_close_the_connection_and_are_logged_sparingly() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(&keys()[0], 33, 1);
    let (private, _, _) = write_files(dir.path(), &keys()[0], &w);
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut serve = ServeProcess::start(dir.path(), &private, &["--allow-uid", &(me + 1).to_string()]);
    let key_id = ecrt_driver::backends::service::key_id(keys()[0].public().n());
    let started = Instant::now();
    for _ in 0..300 {
        let mut stream = UnixStream::connect(&serve.socket).unwrap();
        assert!(matches!(hello(&mut stream), Response::Welcome { .. }));
        stream.write_all(&Request::Open { key_id: key_id.clone() }.encode()).unwrap();
        let frames = read_until_closed(&mut stream, Duration::from_secs(10));
        assert!(error_text(&frames).contains("may not decrypt"), "{frames:?}");
    }
    let seconds = started.elapsed().as_secs();
    assert_eq!(status(&serve.socket)["counters"]["refusals"], 300);
    assert!(serve.terminate().success());
    let log = serve.stderr();
    let lines = log.lines().filter(|l| l.contains("refused")).count();
    assert!((1..=seconds as usize + 2).contains(&lines), "{lines} refusal lines in {seconds} s:\n{log}");
    assert!(log.contains("left_out"), "the lines left out are counted: {log}");
}

/// The process's threads run out (RLIMIT_NPROC of the service's user): the client that needed
/// one is told so, the CPU backend decrypts on the threads it has, no ghost client stays, and
/// the service goes on serving.
#[test]
fn a_thread_that_cannot_be_started_is_a_clear_error() {
    const USER: u32 = 4242;
    if !is_root() {
        eprintln!("skipped: the test runs the service as another user, which needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = runnable_ecrt(dir.path());
    let w = workload(&keys()[0], 34, 20);
    let (private, _, _) = write_files(dir.path(), &keys()[0], &w);
    std::os::unix::fs::chown(&private, Some(USER), Some(USER)).unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::os::unix::fs::chown(&run, Some(USER), Some(USER)).unwrap();
    let socket = run.join("s.sock");
    /// Killed however the test ends: a service left running would count against the next run's limit.
    struct KillOnDrop(Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Command::new(&exe)
        .args(["serve", "--backend", "cpu", "--threads", "2", "--socket"])
        .arg(&socket)
        .arg("--key")
        .arg(&private)
        .uid(USER)
        .gid(USER)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map(KillOnDrop)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while ServiceClient::connect(&socket).is_err() {
        assert!(child.0.try_wait().unwrap().is_none() && Instant::now() < deadline, "ecrt serve did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.0.id() as libc::pid_t;
    let threads = || -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
    };
    let settle = |expected: u64| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while threads() > expected && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // The device opened (its backend's thread started), then the service at rest.
    run_client(&socket, &keys()[0], &w.ciphertexts[..1]);
    std::thread::sleep(Duration::from_millis(300));
    let base = threads();
    // Only the service's own user may change its limits (root would need CAP_SYS_RESOURCE).
    let limit = |n: u64| {
        let script = "
import resource, sys
pid, n = int(sys.argv[1]), int(sys.argv[2])
hard = resource.prlimit(pid, resource.RLIMIT_NPROC)[1]
resource.prlimit(pid, resource.RLIMIT_NPROC, (n if hard < 0 else min(n, hard), hard))
";
        let out = python_as(USER, script, &[&pid.to_string(), &n.to_string()]).wait_with_output().unwrap();
        assert!(out.status.success(), "prlimit: {}", String::from_utf8_lossy(&out.stderr));
    };
    let unlimited = u32::MAX as u64; // or the hard limit
    limit(base);
    let error = ServiceClient::connect(&socket).err().expect("no thread for the connection").to_string();
    assert!(error.contains("cannot start a thread for this connection"), "{error}");
    settle(base);
    limit(base + 1);
    let error = Decryptor::connect(&socket, keys()[0].public(), Options::default()).err().unwrap().to_string();
    assert!(error.contains("cannot start a thread for this client"), "{error}");
    settle(base);
    // A connection and its writer, and no thread to spare for the CPU backend's batch.
    limit(base + 2);
    for (i, (result, _)) in run_client(&socket, &keys()[0], &w.ciphertexts).iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &w.plaintexts[i], "item {i}");
    }
    settle(base);
    limit(unlimited);
    let s = status(&socket);
    assert!(s["clients"].as_array().unwrap().is_empty(), "no ghost client: {s:#}");
    for (i, (result, _)) in run_client(&socket, &keys()[0], &w.ciphertexts).iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &w.plaintexts[i], "item {i}");
    }
    assert!(child.0.try_wait().unwrap().is_none(), "the service is still up");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = child.0.wait().unwrap();
    let mut log = String::new();
    child.0.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(status.success() && !log.contains("panicked"), "{status}: {log}");
}

/// The status and the metrics are for users the service admits; the metrics on a Unix socket
/// check the peer too, and a slow client does not hold a scrape up.
#[test]
fn status_and_metrics_are_for_admitted_users_and_never_stalled() {
    if !is_root() {
        eprintln!("skipped: the test connects as another user, which needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = runnable_ecrt(dir.path());
    let restricted = ServiceKey { key: keys()[0].clone(), access: Access { uids: vec![0], gids: vec![] } };
    let metrics_socket = dir.path().join("metrics.sock");
    let mut config = config(dir.path(), vec![restricted], vec![cpu_device()]);
    config.socket_mode = 0o666;
    config.metrics = Some(MetricsEndpoint::Unix(metrics_socket.clone()));
    let service = Service::start(config).unwrap();
    let get = "
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
# The status line may come in more than one piece.
data = b''
while b'\\r\\n' not in data:
    chunk = s.recv(100)
    if not chunk:
        break
    data += chunk
print(data.decode().splitlines()[0] if data else '(closed)', flush=True)
";
    let mut as_nobody = python_as(NOBODY, get, &[metrics_socket.to_str().unwrap()]);
    assert_eq!(first_line(&mut as_nobody), "HTTP/1.1 403 Forbidden");
    let mut as_root = python_as(0, get, &[metrics_socket.to_str().unwrap()]);
    assert_eq!(first_line(&mut as_root), "HTTP/1.1 200 OK");
    let _ = (as_nobody.wait(), as_root.wait());
    service.stop();
    assert!(!metrics_socket.exists(), "the metrics socket goes with the service");

    // --status-allow-uid admits a user for the status alone.
    let restricted = ServiceKey { key: keys()[0].clone(), access: Access { uids: vec![0], gids: vec![] } };
    let mut config = crate::service::config(dir.path(), vec![restricted], vec![cpu_device()]);
    config.socket_mode = 0o666;
    config.status_uids = vec![NOBODY];
    config.metrics = Some(MetricsEndpoint::Tcp("127.0.0.1:0".parse().unwrap()));
    let service = Service::start(config).unwrap();
    let out = Command::new(&exe)
        .args(["status", "--json", "--service"])
        .arg(service.socket())
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(Decryptor::connect(service.socket(), keys()[0].public(), Options::default()).is_ok());
    // A client that trickles its request does not hold up a scrape.
    let address = service.metrics_address().unwrap();
    let mut slow = std::net::TcpStream::connect(address).unwrap();
    slow.write_all(b"GET /met").unwrap();
    let started = Instant::now();
    let mut scrape = std::net::TcpStream::connect(address).unwrap();
    scrape.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut response = String::new();
    scrape.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    assert!(started.elapsed() < Duration::from_millis(1500), "the scrape waited {:?}", started.elapsed());
    drop(slow);
    service.stop();
}

/// `ecrt status` prints what a hostile service sends with its control characters escaped.
#[test]
fn the_status_of_a_hostile_service_cannot_drive_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let real = Service::start(config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()])).unwrap();
    let mut status: Value = status(real.socket());
    real.stop();
    const EVIL: &str = "\u{1b}[2J\u{1b}]0;owned\u{7}\r";
    status["service"] = Value::from(format!("ecrt{EVIL}"));
    status["devices"][0]["name"] = Value::from(format!("card{EVIL}"));
    status["devices"][0]["error"] = Value::from(format!("oops{EVIL}"));
    let socket = dir.path().join("hostile.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let answer = std::thread::spawn(move || {
        for _ in 0..2 {
            let (mut stream, _) = listener.accept().unwrap();
            while let Ok(Some(request)) = Request::read(&mut stream) {
                let response = match request {
                    Request::Hello { .. } => Response::Welcome { version: VERSION, service: format!("x{EVIL}") },
                    Request::Status => Response::Status(status.to_string()),
                    Request::Metrics => Response::Metrics(format!("ecrt_clients{EVIL} 1\n")),
                    _ => break,
                };
                stream.write_all(&response.encode()).unwrap();
            }
        }
    });
    for extra in [&[][..], &["--prometheus"][..]] {
        let out = Command::new(ECRT).arg("status").args(extra).arg("--service").arg(&socket).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'), "{text:?}");
        assert!(text.contains("\\u{1b}[2J"), "{text}");
    }
    answer.join().unwrap();
}

/// A service still draining after SIGTERM leaves alone the socket of the service that replaced it.
#[test]
fn a_draining_service_leaves_its_successors_socket() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]);
    config.pacing.max_in_flight = 4;
    config.client_credit = 4096;
    let old = Service::start(config).unwrap();
    let socket = old.socket().to_path_buf();
    let w = workload(&keys()[0], 35, 3000);
    let options = Options { queue_depth: 4096, timeout: Some(Duration::from_secs(60)) };
    let mut decryptor = Decryptor::connect(&socket, keys()[0].public(), options).unwrap();
    for c in &w.ciphertexts {
        decryptor.submit(c.clone());
    }
    decryptor.flush();
    wait_for_status(&socket, "the work to queue", |s| s["keys"][0]["queued"].as_u64() > Some(1000));
    let draining = std::thread::spawn(move || old.stop());
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(&socket).is_ok() {
        assert!(Instant::now() < deadline, "the old service kept listening");
        std::thread::sleep(Duration::from_millis(5));
    }
    let new = Service::start(crate::service::config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()]))
        .expect("a successor starts while the old service drains");
    let results: Vec<_> = std::iter::from_fn(|| decryptor.wait_next()).collect();
    assert_eq!(results.len(), 3000, "the old service answers every submission");
    for done in &results {
        match &done.result {
            Ok(m) => assert_eq!(m, &w.plaintexts[done.ticket as usize]),
            Err(e) => assert!(e.to_string().contains("shutting down"), "{e}"),
        }
    }
    draining.join().unwrap();
    assert!(socket.exists(), "the successor's socket is still there");
    for (i, (result, _)) in run_client(&socket, &keys()[0], &w.ciphertexts[..5]).iter().enumerate() {
        assert_eq!(result.as_ref().unwrap(), &w.plaintexts[i]);
    }
    new.stop();
}

/// Under umask 000, nobody can reach a service's 0600 socket while it starts: the socket
/// appears with its mode already set.
#[test]
fn the_socket_is_never_reachable_before_its_mode_is_set() {
    if !is_root() {
        eprintln!("skipped: the test connects as another user, which needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let w = workload(&keys()[0], 36, 1);
    let (private, _, _) = write_files(dir.path(), &keys()[0], &w);
    let socket = dir.path().join("serve.sock");
    let probe = "
import socket, sys, time
end = time.time() + 20
while time.time() < end:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[1])
        print('connected', flush=True)
        break
    except OSError:
        pass
    finally:
        s.close()
print('never', flush=True)
";
    for _ in 0..5 {
        let mut prober = python_as(NOBODY, probe, &[socket.to_str().unwrap()]);
        std::thread::sleep(Duration::from_millis(100));
        let mut serve = Command::new(ECRT);
        serve.args(["serve", "--backend", "cpu", "--threads", "1", "--socket"]).arg(&socket).arg("--key").arg(&private);
        // SAFETY: umask(2) between fork and exec only touches the child.
        unsafe {
            serve.pre_exec(|| {
                libc::umask(0);
                Ok(())
            });
        }
        let mut child = serve.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while ServiceClient::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "ecrt serve did not listen");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(200));
        let _ = prober.kill();
        let mut out = String::new();
        prober.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        let _ = prober.wait();
        assert!(!out.contains("connected"), "nobody reached the 0600 socket while it started");
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        assert!(child.wait().unwrap().success());
    }
}

/// A stopped service (SIGSTOP): `ecrt status` and `ecrt decrypt --service` give up at their
/// timeout and say what did not answer.
#[test]
fn the_clients_handshake_is_bounded_by_their_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(&keys()[0], 37, 2);
    let (private, public, lines) = write_files(dir.path(), &keys()[0], &w);
    let serve = ServeProcess::start(dir.path(), &private, &[]);
    let pid = serve.child.id() as libc::pid_t;
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let timed = |args: &[&std::ffi::OsStr]| {
        let started = Instant::now();
        let out = Command::new(ECRT).args(args).stdin(Stdio::null()).output().unwrap();
        (out, started.elapsed())
    };
    let socket = serve.socket.as_os_str();
    let (out, took) = timed(&["status".as_ref(), "--timeout".as_ref(), "1".as_ref(), "--service".as_ref(), socket]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not answer Hello within 1 s"), "{err}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    let (out, took) = timed(&[
        "decrypt".as_ref(),
        "--service".as_ref(),
        socket,
        "--public-key".as_ref(),
        public.as_os_str(),
        "--in".as_ref(),
        lines.as_os_str(),
        "--timeout".as_ref(),
        "1".as_ref(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not answer Hello within 1 s"), "{err}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
}

/// Settings that would be truncated are refused, with the range in the message.
#[test]
fn out_of_range_client_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(&keys()[0], 38, 1);
    let (private, _, _) = write_files(dir.path(), &keys()[0], &w);
    for (flag, value, expected) in [
        ("--client-queue", "4294967296", "must hold 1 to 1048576 items, not 4294967296"),
        ("--client-queue", "0", "must hold 1 to 1048576"),
        ("--max-clients-per-uid", "300", "1 to --max-clients (256), not 300"),
        ("--frame-timeout", "0", "--frame-timeout must be positive"),
    ] {
        let out = Command::new(ECRT)
            .args(["serve", "--socket"])
            .arg(dir.path().join("s.sock"))
            .arg("--key")
            .arg(&private)
            .args([flag, value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(expected), "{flag} {value}: {err}");
        assert!(!dir.path().join("s.sock").exists());
    }
}

/// On an idle service whose device's rate is known, a small batch costs its decryptions, not a
/// wait for the device thread's timeout (100 ms each).
#[test]
fn small_batches_on_an_idle_service_do_not_wait() {
    let dir = tempfile::tempdir().unwrap();
    let service = Service::start(config(dir.path(), vec![service_key(&keys()[0])], vec![cpu_device()])).unwrap();
    let w = workload(&keys()[0], 39, 100);
    for chunk in w.ciphertexts.chunks(50) {
        run_client(service.socket(), &keys()[0], chunk); // the device's rate becomes known
    }
    let options = Options { queue_depth: 64, timeout: Some(Duration::from_secs(30)) };
    let mut decryptor = Decryptor::connect(service.socket(), keys()[0].public(), options).unwrap();
    let started = Instant::now();
    for batch in w.ciphertexts.chunks(2).take(20) {
        for c in batch {
            decryptor.submit(c.clone());
        }
        for _ in batch {
            let done = decryptor.wait_next().unwrap();
            assert_eq!(done.result.unwrap(), w.plaintexts[done.ticket as usize]);
        }
    }
    let took = started.elapsed();
    // Waiting out the timeout costs at least 2 s; the decryptions, a few ms each.
    assert!(took < Duration::from_millis(1500), "20 batches of 2 took {took:?}");
    service.stop();
}
