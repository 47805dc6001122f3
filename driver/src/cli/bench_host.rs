//! `ecrt bench --backend xdma`: the driver's own CPU cost per decryption (framing, copies,
//! system calls) on the XDMA path. Without `--device`, the device is `ecrt emulate --responder
//! instant` in a child process: it answers every request at once, so what is measured is the host
//! side alone. CPU time is this process's (user + system, from getrusage), so the emulator's own
//! work is not counted; the framing alone (encode + decode, no I/O) is measured side by side.

use crate::cli::bench::Args;
use crate::cli::emulator_process::EmulatorProcess;
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::interface as itf;
use ecrt_driver::api::{BackendSpec, Decryptor, Options};
use ecrt_golden::PrivateKey;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The target (docs/background.md#targets): one core feeds well over 100,000 decryptions/s.
const TARGET_US: f64 = 5.0;
/// Decryptions per pass when `--count` is not given.
pub const DEFAULT_COUNT: usize = 20_000;

/// CPU time of this process so far: (user, system).
fn cpu_time() -> (Duration, Duration) {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let duration = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (duration(usage.ru_utime), duration(usage.ru_stime))
}

/// One measured pass: CPU µs per item (user, system) and wall seconds.
struct Pass {
    user_us: f64,
    system_us: f64,
    wall: f64,
}

fn measure(count: usize, work: impl FnOnce()) -> Pass {
    let ((user0, system0), start) = (cpu_time(), Instant::now());
    work();
    let wall = start.elapsed().as_secs_f64();
    let (user1, system1) = cpu_time();
    let per_item = |d: Duration| d.as_secs_f64() * 1e6 / count as f64;
    Pass { user_us: per_item(user1 - user0), system_us: per_item(system1 - system0), wall }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// What one host-overhead measurement found.
pub struct HostOverhead {
    /// A JSON report (the fields `ecrt bench --backend xdma --json` prints).
    pub report: serde_json::Value,
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
    let measured = measure_host_overhead(&key, &config, args.device.as_deref(), count, args.rounds)?;
    crate::cli::emit_report(&measured.report, args.json, args.out.as_ref(), print_table)?;
    Ok(ExitCode::SUCCESS)
}

/// Measures the driver's CPU time per decryption over `rounds` passes of `count` decryptions on
/// `device`, or on an emulated device of `config` that answers at once.
pub fn measure_host_overhead(
    key: &PrivateKey,
    config: &AcceleratorConfig,
    device: Option<&Path>,
    count: usize,
    rounds: usize,
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
    let bar = ecrt_driver::batch::progress_bar(rounds, "rounds");
    let (mut driver_passes, mut framing_passes, mut failures) = (Vec::new(), Vec::new(), 0usize);
    for _ in 0..rounds {
        driver_passes.push(measure(count, || {
            failures += decryptor.decrypt_all(ciphertexts.iter().cloned()).iter().filter(|r| r.is_err()).count();
        }));
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
    bar.finish_and_clear();
    drop(decryptor);
    anyhow::ensure!(failures == 0, "{failures} decryptions failed on {}", device.display());

    let driver_us = median(driver_passes.iter().map(|p| p.user_us + p.system_us).collect());
    let framing_us = median(framing_passes.iter().map(|p| p.user_us + p.system_us).collect());
    let report = json!({
        "backend": "xdma",
        "device": if device_given { device.display().to_string() } else { "ecrt emulate --responder instant".into() },
        "key_bits": config.key_bits,
        "stream_bits": config.stream_bits,
        "count": count,
        "rounds": rounds,
        "host_cpu_us_per_decryption": driver_us,
        "user_us_per_decryption": median(driver_passes.iter().map(|p| p.user_us).collect()),
        "system_us_per_decryption": median(driver_passes.iter().map(|p| p.system_us).collect()),
        "framing_us_per_decryption": framing_us,
        "framing_share": framing_us / driver_us,
        "wall_decryptions_per_second": median(driver_passes.iter().map(|p| count as f64 / p.wall).collect()),
        "decryptions_per_second_per_core": 1e6 / driver_us,
        "target_us": TARGET_US,
        "meets_target": driver_us <= TARGET_US,
    });
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
    println!("  one core could feed            {:>8.0} decryptions/s", f("decryptions_per_second_per_core"));
    println!("  through the emulator (wall)    {:>8.0} decryptions/s", f("wall_decryptions_per_second"));
}
