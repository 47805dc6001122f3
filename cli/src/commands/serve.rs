//! `ecrt serve`: the service that owns the devices and the private keys (docs/service.md).

use ecrt_driver::backends::{BackendKind, BackendSettings};
use ecrt_lab::args::backend_parser;
use ecrt_lab::args::{ScheduleArgs, TopArgs};

/// The backends a service drives (not itself).
const SERVED: &[BackendKind] = &[BackendKind::Cpu, BackendKind::Sim, BackendKind::Xdma];
use anyhow::{bail, ensure, Context};
use ecrt_driver::api::{timeout_from_seconds, MAX_QUEUE_DEPTH};
use ecrt_driver::key_file::{read_private_key_file, read_small_file};
use ecrt_driver::redact::redacted;
use ecrt_service::access::{check_key_file_private, group_id, Access};
use ecrt_service::device::{Device, DevicePacing};
use ecrt_service::hardening;
use ecrt_service::{ClientLimits, MetricsEndpoint, Service, ServiceConfig, ServiceKey};
use serde::Deserialize;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Serve decryptions to local applications over a Unix socket: this process owns the devices
/// and the private keys; applications need only the public key (`ecrt decrypt --service`, the
/// Python package's `backend="service"`, `ecrt status`).
///
/// Settings come from `--config FILE` (TOML: the flags' names with underscores, `devices = [...]`,
/// and a `[[key]]` table per key with its allow-lists; deploy/ecrt.toml shows them all) and from
/// the flags, which win. SIGTERM or SIGINT drains the work accepted so far, answers it, and
/// exits. Logs go to stderr, filtered by RUST_LOG (default `info`).
#[derive(clap::Args)]
pub struct Args {
    /// A TOML file with the settings below (keys as `[[key]]` tables, with allow-lists).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The Unix socket to listen at.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// A private key to serve (pheutil JWK, readable by its owner alone); repeatable. Clients
    /// ask for it by its id (`ecrt status` lists them).
    #[arg(long = "key", value_name = "FILE")]
    keys: Vec<PathBuf>,
    /// UIDs allowed to decrypt under the `--key` keys (repeatable; default: whoever can connect).
    #[arg(long = "allow-uid", value_name = "UID")]
    allow_uids: Vec<u32>,
    /// GIDs (primary or supplementary) allowed to decrypt under the `--key` keys (repeatable).
    #[arg(long = "allow-gid", value_name = "GID")]
    allow_gids: Vec<u32>,
    /// Where decryptions run.
    #[arg(long, value_parser = backend_parser(SERVED))]
    backend: Option<BackendKind>,
    /// An XDMA device to drive (`--backend xdma`), repeatable: `/dev/xdma0`, `/dev/xdma1`.
    #[arg(long = "device", value_name = "PATH")]
    devices: Vec<PathBuf>,
    /// Worker threads of the CPU backend (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// The socket file's mode, in octal: who may connect (default 0600, the service's user).
    #[arg(long, value_name = "OCTAL")]
    socket_mode: Option<String>,
    /// The socket file's group, by name or number (with `--socket-mode 0660`: the group's members connect).
    #[arg(long, value_name = "GROUP")]
    socket_group: Option<String>,
    /// Most ciphertexts at one device.
    #[arg(long)]
    queue_depth: Option<usize>,
    /// Most ciphertexts the service holds per client before it stops reading from it.
    #[arg(long)]
    client_queue: Option<usize>,
    /// Most clients connected at once; one more is told so and closed [default: 256].
    #[arg(long)]
    max_clients: Option<usize>,
    /// Most connections one UID may hold at once [default: 64].
    #[arg(long, value_name = "N")]
    max_clients_per_uid: Option<usize>,
    /// Seconds a new connection has to say Hello [default: 5].
    #[arg(long, value_name = "S")]
    handshake_timeout: Option<f64>,
    /// Seconds a connection with no key open may go without a request (0: no limit) [default: 60].
    #[arg(long, value_name = "S")]
    idle_timeout: Option<f64>,
    /// Seconds a request frame may take from its first byte to its last [default: 10].
    #[arg(long, value_name = "S")]
    frame_timeout: Option<f64>,
    /// Seconds a write to a client may block before the client is dropped [default: 60].
    #[arg(long, value_name = "S")]
    write_timeout: Option<f64>,
    /// UIDs that may see the status and metrics without being on a key's allow-list
    /// (repeatable; root and the service's own user always may).
    #[arg(long = "status-allow-uid", value_name = "UID")]
    status_allow_uids: Vec<u32>,
    /// Longest a key's work waits, in ms, while every device holds another key.
    #[arg(long, value_name = "MS")]
    key_switch_wait_ms: Option<u64>,
    /// Seconds a device may take to answer, with work in flight, before it is failed and its
    /// work retried elsewhere (0: wait forever).
    #[arg(long)]
    timeout: Option<f64>,
    /// Seconds a failed device rests before it is opened again.
    #[arg(long)]
    retry_after: Option<f64>,
    /// Serve Prometheus metrics over HTTP at HOST:PORT (anyone who reaches it reads them), or
    /// at unix:PATH (a socket with the service socket's mode and group, for admitted users only).
    #[arg(long, value_name = "ENDPOINT")]
    metrics: Option<MetricsEndpoint>,
    /// The simulated accelerator (`--backend sim`).
    #[command(flatten)]
    top: TopArgs,
    #[command(flatten)]
    schedule: ScheduleArgs,
}

/// The TOML configuration: the flags' settings, and keys with their allow-lists.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    socket: Option<PathBuf>,
    socket_mode: Option<String>,
    socket_group: Option<String>,
    backend: Option<String>,
    #[serde(default)]
    devices: Vec<PathBuf>,
    threads: Option<usize>,
    queue_depth: Option<usize>,
    client_queue: Option<usize>,
    max_clients: Option<usize>,
    max_clients_per_uid: Option<usize>,
    handshake_timeout: Option<f64>,
    idle_timeout: Option<f64>,
    frame_timeout: Option<f64>,
    write_timeout: Option<f64>,
    #[serde(default)]
    status_allow_uids: Vec<u32>,
    key_switch_wait_ms: Option<u64>,
    timeout: Option<f64>,
    retry_after: Option<f64>,
    metrics: Option<String>,
    #[serde(default, rename = "key")]
    keys: Vec<FileKey>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileKey {
    file: PathBuf,
    #[serde(default)]
    allow_uids: Vec<u32>,
    #[serde(default)]
    allow_gids: Vec<u32>,
}

/// The settings a configuration file may hold (top level and `[[key]]`): an error about the file
/// quotes these names in full, and any other text of the file as a short prefix at most.
const SETTING_NAMES: &[&str] = &[
    "socket",
    "socket_mode",
    "socket_group",
    "backend",
    "devices",
    "threads",
    "queue_depth",
    "client_queue",
    "max_clients",
    "max_clients_per_uid",
    "handshake_timeout",
    "idle_timeout",
    "frame_timeout",
    "write_timeout",
    "status_allow_uids",
    "key_switch_wait_ms",
    "timeout",
    "retry_after",
    "metrics",
    "key",
    "file",
    "allow_uids",
    "allow_gids",
];

/// The configuration file, read with a key file's limits (a small regular file, never waited
/// on, wiped when dropped): a key file given as `--config` by mistake must be neither waited on
/// nor quoted in an error.
fn read_config(path: &Path) -> anyhow::Result<FileConfig> {
    let text = read_small_file(path, "a configuration file")?;
    // A TOML document cannot start with `{`; a JWK does.
    ensure!(
        !text.trim_start().starts_with('{'),
        "{} is JSON, not a TOML configuration: is it a key file? (keys go in [[key]] tables, or --key)",
        path.display()
    );
    let mut config: FileConfig = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{} is not a valid configuration: {}", path.display(), toml_error(&text, &e)))?;
    // Checked here rather than with the flags: an error quotes a value of the file redacted.
    if let Some(backend) = config.backend.as_deref().filter(|b| !b.parse().is_ok_and(|k| SERVED.contains(&k))) {
        bail!("{}: backend must be cpu, sim or xdma, not `{}`", path.display(), redacted(backend));
    }
    if let Some(mode) = config.socket_mode.as_deref().filter(|m| parse_mode(m).is_err()) {
        bail!(
            "{}: socket_mode must be octal, 0600 to 0777 with the owner's bits (0600), not `{}`",
            path.display(),
            redacted(mode)
        );
    }
    if let Some(metrics) = config.metrics.as_deref().filter(|m| m.parse::<MetricsEndpoint>().is_err()) {
        bail!(
            "{}: metrics is HOST:PORT (e.g. 127.0.0.1:9464) or unix:PATH, not `{}`",
            path.display(),
            redacted(metrics)
        );
    }
    // Relative paths in the file are relative to the file.
    let base = path.parent().unwrap_or(Path::new("."));
    for key in &mut config.keys {
        key.file = base.join(&key.file);
    }
    config.socket = config.socket.map(|s| base.join(s));
    Ok(config)
}

/// A TOML error as the message and the position only: the `toml` crate's own text quotes the
/// offending line. Whatever the message quotes (a key, a value) is redacted, except the names of
/// the settings.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let mut message = String::new();
    let mut rest = error.message();
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().expect("found");
        message.push_str(&rest[..=open]);
        let quoted = &rest[open + 1..];
        // serde quotes strings with Rust's escapes: \" does not close them.
        let close = quoted.char_indices().find(|&(i, c)| c == quote && (quote == '`' || !quoted[..i].ends_with('\\')));
        let Some((close, _)) = close else {
            message.push_str(&redacted(quoted));
            rest = "";
            break;
        };
        let inner = &quoted[..close];
        message.push_str(&if SETTING_NAMES.contains(&inner) { inner.to_string() } else { redacted(inner) });
        message.push(quote);
        rest = &quoted[close + 1..];
    }
    message.push_str(rest);
    if let Some(span) = error.span() {
        let start = (0..=span.start.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        message.push_str(&format!(" (line {line}, column {column})"));
    }
    message
}

fn parse_mode(text: &str) -> anyhow::Result<u32> {
    let mode = u32::from_str_radix(text.trim_start_matches("0o"), 8)
        .ok()
        .filter(|m| *m <= 0o777)
        .with_context(|| format!("the socket mode is octal, 0 to 0777, not {text:?}"))?;
    ensure!(mode & 0o600 == 0o600, "a socket mode of {mode:04o} would shut out the service's own user");
    Ok(mode)
}

/// A private key file for the service: private to its owner, then read and checked.
fn load_key(path: &Path, access: Access) -> anyhow::Result<ServiceKey> {
    check_key_file_private(path)?;
    Ok(ServiceKey { key: read_private_key_file(path)?, access })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(std::io::stderr).try_init();
    // Before any key is read: no core dump or ptrace, and no page of a key in swap.
    hardening::forbid_dumps()?;
    match hardening::lock_memory() {
        Ok(()) => tracing::info!("memory locked in RAM"),
        Err(why) => tracing::warn!(
            "memory is not locked ({why}): keys may reach swap; LimitMEMLOCK=infinity in deploy/ecrt.service allows it"
        ),
    }
    let file = match &args.config {
        Some(path) => read_config(path)?,
        None => FileConfig::default(),
    };
    let socket = args.socket.clone().or(file.socket).context("give the socket to listen at: --socket PATH")?;
    // read_config has checked the file's backend.
    let backend = args.backend.or(file.backend.and_then(|b| b.parse().ok())).unwrap_or(BackendKind::Cpu);
    let mut keys = Vec::new();
    for key in file.keys {
        keys.push(load_key(&key.file, Access { uids: key.allow_uids, gids: key.allow_gids })?);
    }
    let flag_access = Access { uids: args.allow_uids.clone(), gids: args.allow_gids.clone() };
    for path in &args.keys {
        keys.push(load_key(path, flag_access.clone())?);
    }
    ensure!(!keys.is_empty(), "give at least one private key: --key FILE (or [[key]] in --config)");
    let threads = ecrt_driver::batch::thread_count(args.threads.or(file.threads));
    let device_paths = if args.devices.is_empty() { file.devices } else { args.devices.clone() };
    ensure!(backend != BackendKind::Service, "the service cannot serve through a service: choose cpu, sim or xdma");
    ensure!(
        backend != BackendKind::Xdma || !device_paths.is_empty(),
        "give the devices to drive: --device /dev/xdma0 (repeatable)"
    );
    let settings = BackendSettings { threads: Some(threads), sim: args.top.base(&args.schedule), ..Default::default() };
    // A device per --device (the cards); the other backends are one device each.
    let instances: Vec<(String, BackendSettings)> = if backend == BackendKind::Xdma {
        let with = |device: PathBuf| BackendSettings { device: Some(device), ..settings.clone() };
        device_paths.into_iter().map(|device| (device.display().to_string(), with(device))).collect()
    } else {
        vec![(backend.name().to_string(), settings)]
    };
    let devices: Vec<Device> = instances
        .into_iter()
        .map(|(name, settings)| Device { name, spec: Arc::new(move |key| backend.spec(&settings, key)) })
        .collect();
    let seconds = |value: Option<f64>, default: f64, what: &str| {
        timeout_from_seconds(value.unwrap_or(default)).map_err(|e| anyhow::anyhow!("{what}: {e}"))
    };
    let max_in_flight = args.queue_depth.or(file.queue_depth).unwrap_or(256);
    ensure!((1..=MAX_QUEUE_DEPTH).contains(&max_in_flight), "the queue depth must be 1 to {MAX_QUEUE_DEPTH}");
    let pacing = DevicePacing {
        max_in_flight,
        timeout: seconds(args.timeout.or(file.timeout), 30.0, "--timeout")?,
        retry_after: seconds(args.retry_after.or(file.retry_after), 5.0, "--retry-after")?.unwrap_or(Duration::ZERO),
    };
    let defaults = ClientLimits::default();
    let deadline = |value: Option<f64>, default: Duration, what: &str| -> anyhow::Result<Duration> {
        seconds(value, default.as_secs_f64(), what)?.with_context(|| format!("{what} must be positive"))
    };
    let limits = ClientLimits {
        max_clients: args.max_clients.or(file.max_clients).unwrap_or(defaults.max_clients),
        max_clients_per_uid: args
            .max_clients_per_uid
            .or(file.max_clients_per_uid)
            .unwrap_or(defaults.max_clients_per_uid),
        handshake: deadline(
            args.handshake_timeout.or(file.handshake_timeout),
            defaults.handshake,
            "--handshake-timeout",
        )?,
        idle: seconds(
            args.idle_timeout.or(file.idle_timeout),
            defaults.idle.map_or(0.0, |d| d.as_secs_f64()),
            "--idle-timeout",
        )?,
        frame: deadline(args.frame_timeout.or(file.frame_timeout), defaults.frame, "--frame-timeout")?,
        write: deadline(args.write_timeout.or(file.write_timeout), defaults.write, "--write-timeout")?,
    };
    if let Some(per_uid) = args.max_clients_per_uid.or(file.max_clients_per_uid) {
        ensure!(
            per_uid <= limits.max_clients,
            "--max-clients-per-uid must be 1 to --max-clients ({}), not {per_uid}",
            limits.max_clients
        );
    }
    let metrics = match args.metrics.clone() {
        Some(endpoint) => Some(endpoint),
        None => {
            file.metrics.as_deref().map(str::parse).transpose().map_err(|e: String| anyhow::anyhow!("metrics: {e}"))?
        }
    };
    let socket_group = args.socket_group.as_deref().or(file.socket_group.as_deref()).map(group_id).transpose()?;
    let mut status_uids = file.status_allow_uids;
    status_uids.extend(&args.status_allow_uids);
    let config = ServiceConfig {
        socket,
        socket_mode: parse_mode(args.socket_mode.as_deref().or(file.socket_mode.as_deref()).unwrap_or("0600"))?,
        socket_group,
        keys,
        devices,
        pacing,
        client_credit: args.client_queue.or(file.client_queue).unwrap_or(4096),
        limits,
        status_uids,
        key_switch_wait: Duration::from_millis(args.key_switch_wait_ms.or(file.key_switch_wait_ms).unwrap_or(20)),
        metrics,
    };
    let mut signals = Signals::new([SIGINT, SIGTERM]).context("cannot install the signal handlers")?;
    let service = Service::start(config)?;
    if let Some(signal) = signals.forever().next() {
        tracing::info!("{}: stopping", if signal == SIGINT { "SIGINT" } else { "SIGTERM" });
    }
    service.stop();
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_modes_are_octal_and_keep_the_owner() {
        assert_eq!(parse_mode("0660").unwrap(), 0o660);
        assert_eq!(parse_mode("600").unwrap(), 0o600);
        assert!(parse_mode("0400").is_err(), "the owner must be able to connect");
        assert!(parse_mode("0999").is_err());
        assert!(parse_mode("1777").is_err());
    }

    #[test]
    fn the_example_configuration_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/ecrt.toml");
        let config = read_config(&path).unwrap();
        assert_eq!(config.backend.as_deref(), Some("xdma"));
        assert_eq!(config.keys.len(), 2);
        assert!(config.keys.iter().any(|k| !k.allow_gids.is_empty()));
        assert!(toml::from_str::<FileConfig>("sockets = 1").is_err(), "unknown settings are refused");
    }

    #[test]
    fn configuration_errors_name_the_settings_and_quote_the_file_redacted() {
        let error = |text: &str| toml_error(text, &toml::from_str::<FileConfig>(text).err().unwrap());
        // The settings are named in full in the list an unknown one gets.
        let message = error("sockets = 1");
        assert!(message.starts_with("unknown field `sockets`, expected one of `socket`, "), "{message}");
        assert!(!message.contains('…'), "a setting's name is cut short: {message}");
        let message = error("[[key]]\nfiles = 1");
        assert!(message.contains("expected one of `file`, `allow_uids`, `allow_gids`"), "{message}");
        let secret = "sYbBdlQe6tiB-etEJ2SGVvHsuzbl2eGxIRb2lMihBr6SAP6xqrgsR2jsxEnTJHF65Do_ax27TPXadgwz6lFEqQ";
        for (text, expected) in [
            (format!("{secret} = 1"), "unknown field `sYbBdlQe6t…`, expected one of `socket`, "),
            (
                format!("x = 1\nthreads = \"{secret}\""),
                "invalid type: string \"sYbBdlQe6t…\", expected usize (line 2, column 11)",
            ),
            (format!("threads = \"a\\\"{secret}\""), "invalid type: string \"a\\\"sYbBdlQ…\""),
            (format!("socket = \"{secret}"), "invalid basic string, expected `\"` (line 1, column 97)"),
            (
                format!("[[key]]\nfile = \"k\"\nallow_uids = [\"{secret}\"]"),
                "string \"sYbBdlQe6t…\", expected u32 (line 3, column 15)",
            ),
        ] {
            let message = error(&text);
            assert!(message.contains(expected), "{message}");
            assert!(!message.contains(&secret[..11]), "{message}");
        }
    }
}
