//! `ecrt bench --backend xdma`: the driver's own CPU cost per decryption (framing, copies,
//! system calls) on the XDMA path. Without `--device`, the device is `ecrt emulate --responder
//! instant` in a child process: it answers every request at once, so what is measured is the host
//! side alone. CPU time is this process's (user + system, from getrusage), so the emulator's own
//! work is not counted; the framing alone (encode + decode, no I/O) is measured side by side. The
//! ciphertexts handed over and the plaintexts handed back are the application's: copied before a
//! pass and dropped after it, outside the time measured.
//!
//! With the emulated device, the same run also measures the path through `ecrt serve` (the
//! client's CPU time and the service's, from /proc) and one CPU thread's decryption time, each
//! interleaved with the CPU passes: the overheads are reported as shares of that time, which hold
//! across machines of different speeds where the microseconds do not.

use super::args::Args;
use crate::report::Figure;
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::interface as itf;
use ecrt_driver::api::{BackendSpec, Decryptor, Options};
use ecrt_driver::backends::cpu::{CpuKey, Scratch};
use ecrt_emulate::process::EmulatorProcess;
use ecrt_golden::PrivateKey;
use ecrt_service::process::ServeProcess;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The target (docs/background.md#targets): one core feeds well over 100,000 decryptions/s.
const TARGET_US: f64 = 5.0;
/// The direct XDMA path's CPU time per decryption, as a share of one CPU thread's decryption.
const TARGET_DIRECT_SHARE: f64 = 0.0015;
/// The same through the service, client and service together.
const TARGET_SERVICE_SHARE: f64 = 0.003;
/// Ciphertexts per CPU pass: about a second of one thread's work at 2048 bits.
const CPU_PASS: usize = 200;
/// Decryptions per pass when `--count` is not given.
pub const DEFAULT_COUNT: usize = 20_000;

/// What this process has used so far: CPU time (user, system) and context switches.
fn usage() -> (Duration, Duration, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let duration = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let switches = (usage.ru_nvcsw + usage.ru_nivcsw) as u64;
    (duration(usage.ru_utime), duration(usage.ru_stime), switches)
}

/// One measured pass: CPU µs per item (user, system), context switches per item and wall
/// seconds. The switches are counted, not timed: they hold on a busy machine, where the system
/// time each one costs swings widely.
struct Pass {
    user_us: f64,
    system_us: f64,
    switches: f64,
    wall: f64,
}

fn measure(count: usize, work: impl FnOnce()) -> Pass {
    let ((user0, system0, switches0), start) = (usage(), Instant::now());
    work();
    let wall = start.elapsed().as_secs_f64();
    let (user1, system1, switches1) = usage();
    let per_item = |d: Duration| d.as_secs_f64() * 1e6 / count as f64;
    let switches = (switches1 - switches0) as f64 / count as f64;
    Pass { user_us: per_item(user1 - user0), system_us: per_item(system1 - system0), switches, wall }
}

impl Pass {
    /// CPU µs per item, user and system.
    fn cpu_us(&self) -> f64 {
        self.user_us + self.system_us
    }
}

/// One measured pass of `decryptor` over `ciphertexts`, and how many failed. The copy handed over
/// is made before the time starts and the plaintexts are dropped after it ends: they are the
/// application's.
fn decrypt_pass(decryptor: &mut Decryptor, ciphertexts: &[BigUint]) -> (Pass, usize) {
    let (batch, mut results) = (ciphertexts.to_vec(), Vec::new());
    let pass = measure(ciphertexts.len(), || results = decryptor.decrypt_all(batch));
    (pass, results.iter().filter(|r| r.is_err()).count())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One pass through the service: the client's pass, and the service's CPU µs and context
/// switches per item over it.
struct ServicePass {
    client: Pass,
    service_us: f64,
    service_switches: f64,
}

/// What `ecrt bench --backend xdma` reports: CPU µs per decryption are medians of the rounds.
/// The service's fields come only with the emulated device and the
/// service measured (absent otherwise); a recorded report may lack those of later versions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostReport {
    /// `"xdma"`.
    pub backend: String,
    /// The device's path, or `"ecrt emulate --responder instant"`.
    pub device: String,
    pub key_bits: Figure<usize>,
    pub stream_bits: Figure<usize>,
    /// Decryptions per pass.
    pub count: Figure<usize>,
    pub rounds: Figure<usize>,
    /// Runs of the whole bench a recorded report's ranges span; no tool writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Figure<usize>>,
    /// The driver's CPU time per decryption, user + system.
    pub host_cpu_us_per_decryption: Figure<f64>,
    pub user_us_per_decryption: Option<Figure<f64>>,
    pub system_us_per_decryption: Option<Figure<f64>>,
    pub context_switches_per_decryption: Option<Figure<f64>>,
    /// Encoding and decoding the frames in memory, no I/O.
    pub framing_us_per_decryption: Option<Figure<f64>>,
    pub framing_share: Option<f64>,
    pub wall_decryptions_per_second: Option<Figure<f64>>,
    pub decryptions_per_second_per_core: Option<Figure<f64>>,
    pub target_us: Option<f64>,
    pub meets_target: Option<bool>,
    // The path through `ecrt serve` beside the direct one, both as shares of one CPU thread's
    // decryption in the same run: absent unless the service was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_one_thread_us_per_decryption: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct_share: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_direct_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_client_us_per_decryption: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_us_per_decryption: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_total_us_per_decryption: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_context_switches_per_decryption: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_share: Option<Figure<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_service_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_wall_decryptions_per_second: Option<Figure<f64>>,
}

/// What one host-overhead measurement found.
pub struct HostOverhead {
    /// The report (what `ecrt bench --backend xdma --json` prints).
    pub report: HostReport,
    /// Driver CPU µs per decryption (median pass).
    pub cpu_us: f64,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let count = args.count.unwrap_or(DEFAULT_COUNT);
    anyhow::ensure!(count > 0 && args.rounds > 0, "--count and --rounds must be positive");
    let mut rng = rand::rngs::StdRng::from_rng(rand::rngs::OsRng)?;
    eprintln!("ecrt bench: generating a {}-bit key and {count} ciphertexts", args.key_bits);
    let key = PrivateKey::generate(args.key_bits, &mut rng)?;
    let config = args.top.config_for_key(&key, &args.schedule);
    let measured = measure_host_overhead(&key, &config, args.device.as_deref(), count, args.rounds, true)?;
    crate::report::emit_report(&measured.report, args.json, args.out.as_ref(), print_table)?;
    Ok(ExitCode::SUCCESS)
}

/// One CPU thread's decryption of `ciphertexts` (eCRT, OpenSSL), CPU µs per item.
fn cpu_pass(key: &CpuKey, scratch: &mut Scratch, ciphertexts: &[BigUint]) -> anyhow::Result<f64> {
    let mut failed = None;
    let pass = measure(ciphertexts.len(), || {
        for c in ciphertexts {
            if let Err(e) = key.decrypt_ecrt(c, scratch) {
                failed = Some(e);
            }
        }
    });
    match failed {
        Some(e) => Err(anyhow::anyhow!("OpenSSL failed: {e}")),
        None => Ok(pass.cpu_us()),
    }
}

/// Measures the driver's CPU time per decryption over `rounds` passes of `count` decryptions on
/// `device`, or on an emulated device of `config` that answers at once; with the emulated device
/// and `with_service`, the path through `ecrt serve` and one CPU thread's decryption time too.
pub fn measure_host_overhead(
    key: &PrivateKey,
    config: &AcceleratorConfig,
    device: Option<&Path>,
    count: usize,
    rounds: usize,
    with_service: bool,
) -> anyhow::Result<HostOverhead> {
    let mut rng = rand::rngs::StdRng::from_rng(rand::rngs::OsRng)?;
    let n_squared = key.public().n() * key.public().n();
    // The instant responder does not decrypt: any unit mod n² serves.
    let ciphertexts: Vec<BigUint> = (0..count).map(|_| rng.gen_biguint_below(&n_squared)).collect();

    let mount = tempfile::Builder::new().prefix("ecrt-bench-xdma").tempdir()?;
    let device_given = device.is_some();
    let (_emulator, device) = match device {
        Some(device) => (None, device.to_path_buf()),
        None => {
            // It takes any number of requests at once: the driver's window (one frame per core)
            // then lets every transfer carry up to 64 frames.
            let emulator = EmulatorProcess::start_for(mount.path(), config, 64, "instant", false)?;
            let device = emulator.device_prefix().to_path_buf();
            (Some(emulator), device)
        }
    };
    let options = Options { queue_depth: 256, timeout: Some(Duration::from_secs(10)) };
    let mut decryptor = Decryptor::open(&BackendSpec::Xdma { device: device.clone() }, key, options)?;
    let layout = itf::FrameLayout::new(config.digits(), config.stream_bits)?;
    let result_frames: Vec<Vec<u8>> = ciphertexts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let frame = itf::ResultFrame { tag: i as u16, status: itf::RESULT_OK, plaintext: c % key.public().n() };
            itf::encode_result_words(&frame, layout.digits, layout.stream_bits).map(|w| itf::words_to_bytes(&w))
        })
        .collect::<Result<_, _>>()?;
    let with_service = with_service && !device_given;
    let cpu_key = CpuKey::new(key)?;
    let mut scratch = Scratch::new()?;
    let cpu_ciphertexts = &ciphertexts[..CPU_PASS.min(count)];
    let mut cpu_passes = Vec::new();
    let bar = ecrt_driver::batch::progress_bar(if with_service { 2 * rounds } else { rounds }, "rounds");
    let (mut driver_passes, mut framing_passes, mut failures) = (Vec::new(), Vec::new(), 0usize);
    for _ in 0..rounds {
        if with_service {
            cpu_passes.push(cpu_pass(&cpu_key, &mut scratch, cpu_ciphertexts)?);
        }
        let (pass, failed) = decrypt_pass(&mut decryptor, &ciphertexts);
        driver_passes.push(pass);
        failures += failed;
        // The same items framed and unframed in memory: the part of the cost that is not I/O.
        let mut request = vec![0u8; layout.request_bytes];
        framing_passes.push(measure(count, || {
            for (i, (c, result)) in ciphertexts.iter().zip(&result_frames).enumerate() {
                itf::encode_request_into(i as u16, 1, c, &layout, &mut request).expect("fits");
                std::hint::black_box(&request);
                std::hint::black_box(itf::decode_result(result, layout.digits, layout.stream_bits).ok());
            }
        }));
        bar.inc(1);
    }
    drop(decryptor);
    anyhow::ensure!(failures == 0, "{failures} decryptions failed on {}", device.display());
    // Through the service, which now owns the device: the client's CPU time and the service's.
    let mut service_passes = Vec::new();
    if with_service {
        let work = tempfile::Builder::new().prefix("ecrt-bench-service").tempdir()?;
        let key_file = work.path().join("key.jwk");
        // Never readable by others, not even for a moment (`ecrt serve` refuses it otherwise).
        let text = ecrt_golden::phe_format::write_private_key(key, "bench");
        ecrt_driver::files::write_file_atomically(&key_file, &text, 0o600, false)?;
        let args = ["--backend", "xdma", "--queue-depth", "256", "--timeout", "10", "--device"];
        let mut args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        args.extend([device.as_os_str(), "--key".as_ref(), key_file.as_os_str()]);
        let service = ServeProcess::start(work.path(), &args)?;
        let mut client_decryptor = Decryptor::connect(service.socket(), key.public(), options)?;
        for _ in 0..rounds {
            cpu_passes.push(cpu_pass(&cpu_key, &mut scratch, cpu_ciphertexts)?);
            let (before, switches_before) = (service.cpu_time()?, service.context_switches()?);
            let (client, failed) = decrypt_pass(&mut client_decryptor, &ciphertexts);
            failures += failed;
            let service_us = (service.cpu_time()? - before).as_secs_f64() * 1e6 / count as f64;
            let service_switches = (service.context_switches()? - switches_before) as f64 / count as f64;
            service_passes.push(ServicePass { client, service_us, service_switches });
            bar.inc(1);
        }
        anyhow::ensure!(failures == 0, "{failures} decryptions failed through the service");
    }
    bar.finish_and_clear();

    let driver_us = median(driver_passes.iter().map(Pass::cpu_us).collect());
    let framing_us = median(framing_passes.iter().map(Pass::cpu_us).collect());
    let mut report = HostReport {
        backend: "xdma".into(),
        device: if device_given { device.display().to_string() } else { "ecrt emulate --responder instant".into() },
        key_bits: config.key_bits.into(),
        stream_bits: config.stream_bits.into(),
        count: count.into(),
        rounds: rounds.into(),
        runs: None,
        host_cpu_us_per_decryption: driver_us.into(),
        user_us_per_decryption: Some(median(driver_passes.iter().map(|p| p.user_us).collect()).into()),
        system_us_per_decryption: Some(median(driver_passes.iter().map(|p| p.system_us).collect()).into()),
        context_switches_per_decryption: Some(median(driver_passes.iter().map(|p| p.switches).collect()).into()),
        framing_us_per_decryption: Some(framing_us.into()),
        framing_share: Some(framing_us / driver_us),
        wall_decryptions_per_second: Some(median(driver_passes.iter().map(|p| count as f64 / p.wall).collect()).into()),
        decryptions_per_second_per_core: Some((1e6 / driver_us).into()),
        target_us: Some(TARGET_US),
        meets_target: Some(driver_us <= TARGET_US),
        cpu_one_thread_us_per_decryption: None,
        direct_share: None,
        target_direct_share: None,
        service_client_us_per_decryption: None,
        service_us_per_decryption: None,
        service_total_us_per_decryption: None,
        service_context_switches_per_decryption: None,
        service_share: None,
        target_service_share: None,
        service_wall_decryptions_per_second: None,
    };
    if with_service {
        let cpu_us = median(cpu_passes);
        let total = median(service_passes.iter().map(|p| p.client.cpu_us() + p.service_us).collect());
        let switches = median(service_passes.iter().map(|p| p.client.switches + p.service_switches).collect());
        report = HostReport {
            cpu_one_thread_us_per_decryption: Some(cpu_us.into()),
            direct_share: Some((driver_us / cpu_us).into()),
            target_direct_share: Some(TARGET_DIRECT_SHARE),
            service_client_us_per_decryption: Some(
                median(service_passes.iter().map(|p| p.client.cpu_us()).collect()).into(),
            ),
            service_us_per_decryption: Some(median(service_passes.iter().map(|p| p.service_us).collect()).into()),
            service_total_us_per_decryption: Some(total.into()),
            service_context_switches_per_decryption: Some(switches.into()),
            service_share: Some((total / cpu_us).into()),
            target_service_share: Some(TARGET_SERVICE_SHARE),
            service_wall_decryptions_per_second: Some(
                median(service_passes.iter().map(|p| count as f64 / p.client.wall).collect()).into(),
            ),
            ..report
        };
    }
    Ok(HostOverhead { report, cpu_us: driver_us })
}

pub fn print_table(r: &serde_json::Value) {
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "host overhead, {}-bit, {} decryptions × {} rounds on {}",
        r["key_bits"],
        r["count"],
        r["rounds"],
        r["device"].as_str().unwrap_or("?")
    );
    println!(
        "  driver CPU per decryption      {:>8.2} µs  (user {:.2}, system {:.2}; target ≤ {:.0})",
        f("host_cpu_us_per_decryption"),
        f("user_us_per_decryption"),
        f("system_us_per_decryption"),
        f("target_us")
    );
    println!(
        "  of which framing (no I/O)      {:>8.2} µs  ({:.0} %)",
        f("framing_us_per_decryption"),
        100.0 * f("framing_share")
    );
    println!("  context switches per decryption {:>7.3}", f("context_switches_per_decryption"));
    println!("  one core could feed            {:>8.0} decryptions/s", f("decryptions_per_second_per_core"));
    println!("  through the emulator (wall)    {:>8.0} decryptions/s", f("wall_decryptions_per_second"));
    if r.get("service_share").is_some() {
        println!("  one CPU thread's decryption    {:>8.0} µs", f("cpu_one_thread_us_per_decryption"));
        println!(
            "  direct, as a share of it       {:>8.3} %   (target ≤ {:.2} %)",
            100.0 * f("direct_share"),
            100.0 * f("target_direct_share")
        );
        println!(
            "  through the service            {:>8.2} µs  (client {:.2}, service {:.2})",
            f("service_total_us_per_decryption"),
            f("service_client_us_per_decryption"),
            f("service_us_per_decryption")
        );
        println!(
            "  context switches, both sides    {:>7.3} per decryption",
            f("service_context_switches_per_decryption")
        );
        println!(
            "  through the service, share     {:>8.3} %   (target ≤ {:.2} %)",
            100.0 * f("service_share"),
            100.0 * f("target_service_share")
        );
        println!("  through the service (wall)     {:>8.0} decryptions/s", f("service_wall_decryptions_per_second"));
    }
}
