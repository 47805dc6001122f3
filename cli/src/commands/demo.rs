//! `ecrt demo`: the whole path on one machine. A key and a batch of encrypted values; the
//! accelerator's RTL and its Verilator model; the emulated XDMA device mounted (`ecrt emulate`,
//! backed by that model); the batch decrypted through the real XDMA backend and every result
//! checked; then the figures: cycles (Verilator), what one chip of these cores does at 100 MHz and
//! at the clocks the design's logic delay allows (Yosys), the host's overhead.

use crate::commands::encrypt::encode_text;
use anyhow::{ensure, Context};
use ecrt_driver::api::{BackendSpec, Decryptor, Options};
use ecrt_driver::backends::cpu::{encrypt, Scratch};
use ecrt_driver::backends::sim::SimBackend;
use ecrt_driver::jsonl::{decrypt_lines, OutputMode};
use ecrt_emulate::process::EmulatorProcess;
use ecrt_golden::phe_format::{format_ciphertext, write_private_key, PheCiphertext};
use ecrt_golden::PrivateKey;
use ecrt_lab::args::TopArgs;
use ecrt_lab::bench::host::measure_host_overhead;
use ecrt_lab::bench::sim::steady_cycles;
use ecrt_lab::clocked::ChipProjection;
use ecrt_lab::estimate::design_estimates;
use ecrt_sim::accelerator::OutputPacing;
use ecrt_sim::BuildOptions;
use ecrt_sim::EstimateOptions;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Run the whole path: keys, RTL, Verilator, the emulated device, decryption through the XDMA
/// backend, checks, figures.
#[derive(clap::Args)]
pub struct Args {
    /// Where the key, the values, the ciphertexts, the RTL and the report go.
    #[arg(long, default_value = "target/demo")]
    out: PathBuf,
    /// Bits of the modulus n.
    #[arg(long, default_value_t = 2048)]
    key_bits: u64,
    /// Values to encrypt and decrypt (integers and floats, alternately).
    #[arg(long, default_value_t = 8)]
    count: usize,
    #[command(flatten)]
    top: TopArgs,
    /// The accelerator's exponent schedule.
    #[command(flatten)]
    schedule: ecrt_lab::args::ScheduleArgs,
    /// Decryptions per pass of the host-overhead measure (against an instant responder).
    #[arg(long, default_value_t = 5_000)]
    overhead_count: usize,
    /// Replace a private key left in --out by an earlier run (`key.jwk`).
    #[arg(long)]
    force: bool,
    /// Skip the chip figures (a Yosys resource estimate and timing run, minutes the first time).
    #[arg(long)]
    no_estimate: bool,
}

fn step(text: &str) {
    eprintln!("== {text}");
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    ensure!(args.count > 0, "--count must be positive");
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let out = args.out.canonicalize()?;
    let key_path = out.join("key.jwk");
    ecrt_driver::files::check_new_outputs(&[("the demo's key", &key_path)], args.force)?;
    let started = Instant::now();

    step(&format!("key generation ({} bits) and encryption of {} values", args.key_bits, args.count));
    let mut rng = rand::rngs::StdRng::from_rng(rand::rngs::OsRng)?;
    let key = PrivateKey::generate(args.key_bits, &mut rng)?;
    ecrt_driver::files::write_file_atomically(&key_path, &write_private_key(&key, "ecrt demo"), 0o600, args.force)?;
    let values: Vec<String> = (0..args.count)
        .map(|i| {
            if i % 2 == 0 {
                rng.gen_range(-10i128.pow(30)..10i128.pow(30)).to_string()
            } else {
                format!("{:?}", rng.gen_range(-1e6..1e6f64))
            }
        })
        .collect();
    let n = key.public().n();
    let mut scratch = Scratch::new()?;
    let (mut lines, mut ciphertexts) = (String::new(), Vec::new());
    for value in &values {
        let encoded = encode_text(n, value, None)?;
        let ciphertext = encrypt(n, &encoded.encoding, &mut scratch)?;
        lines +=
            &(format_ciphertext(&PheCiphertext { ciphertext: ciphertext.clone(), exponent: encoded.exponent }) + "\n");
        ciphertexts.push(ciphertext);
    }
    std::fs::write(out.join("values.txt"), values.join("\n") + "\n")?;
    std::fs::write(out.join("ciphertexts.jsonl"), &lines)?;

    let config = args.top.config_for_key(&key, &args.schedule);
    config.validate()?;
    step(&format!(
        "the accelerator's RTL ({}-bit keys, {} core(s), {} digits per step, {}-bit streams) in {}",
        config.key_bits,
        config.cores,
        config.digits_per_step,
        config.stream_bits,
        out.join("rtl").display()
    ));
    let emitted = ecrt_hdl::emit::emit(&config)?;
    ecrt_hdl::emit::write(&emitted, &out.join("rtl"))?;
    // The chip figures need Yosys (minutes the first time, then cached): it runs beside the
    // simulation, which keeps one core busy.
    let estimate = (!args.no_estimate).then(|| {
        let config = config.clone();
        std::thread::spawn(move || {
            let quiet = EstimateOptions { progress: false, ..Default::default() };
            design_estimates(&config, &emitted, &quiet, true, false)
        })
    });

    step("the Verilator model (built on first use, then cached), and its cycle counts");
    let build = BuildOptions { progress: true, ..Default::default() };
    let sim = SimBackend::new(&key, &config, &build, false, false)?;
    // Two rounds of as many jobs as the cores hold: the first meets idle cores (latency), the
    // second is steady.
    let round = config.cores * config.jobs_per_core();
    let probe: Vec<_> = ciphertexts.iter().cycle().take(2 * round).cloned().collect();
    let report = sim.run(&probe, OutputPacing::Always)?;
    drop(sim);
    let latency = report.jobs[0].latency();
    let cores = config.cores;
    let (steady, _) = steady_cycles(&report, round);
    let projected = config.clock_mhz * 1e6 / steady;

    step("the emulated XDMA device (ecrt emulate), backed by the Verilator model");
    let mount = tempfile::Builder::new().prefix("ecrt-demo-xdma").tempdir()?;
    let mut emulator = EmulatorProcess::start_for(mount.path(), &config, config.cores, "rtl", true)?;

    step(&format!("{} decryptions offloaded through the XDMA backend, each checked", args.count));
    let device = emulator.device_prefix().to_path_buf();
    let options = Options { timeout: Some(Duration::from_secs(120)), ..Default::default() };
    let mut decryptor = Decryptor::open(&BackendSpec::Xdma { device: device.clone() }, &key, options)?;
    eprintln!("ecrt demo: {}", decryptor.description());
    let offload_started = Instant::now();
    let batch: Vec<&str> = lines.lines().collect();
    let outcome = decrypt_lines(&mut decryptor, key.public(), &batch, OutputMode::Decoded, Some(&key));
    let offload_seconds = offload_started.elapsed().as_secs_f64();
    drop(decryptor);
    emulator.stop()?;
    std::fs::write(out.join("plaintexts.jsonl"), outcome.render())?;
    let mut checked = 0;
    for (i, (line, value)) in outcome.lines.iter().zip(&values).enumerate() {
        let decrypted = line.as_ref().map_err(|e| anyhow::anyhow!("value {}: {e}", i + 1))?;
        ensure!(same_number(decrypted, value), "value {}: {value} decrypted to {decrypted}", i + 1);
        checked += 1;
    }
    eprintln!("ecrt demo: all {checked} decryptions equal the golden model's and the values encrypted");

    step("the host's overhead per decryption, against an emulated device that answers at once");
    let overhead = measure_host_overhead(&key, &config, None, args.overhead_count, 3, false)?;

    let chip = match estimate {
        Some(estimate) => {
            step("the chip: the Yosys resource estimate and the logic delay of the longest path (cached)");
            let e = estimate.join().map_err(|_| anyhow::anyhow!("the Yosys estimate panicked"))??;
            Some(ChipProjection::new(
                Some(&e.resources),
                cores,
                e.timing.as_ref(),
                latency as f64,
                steady * cores as f64,
            ))
        }
        None => None,
    };
    let fit = chip.as_ref().and_then(|c| c.fit);
    let clocked = chip.as_ref().and_then(|c| c.clocked.as_ref());
    let summary = DemoSummary {
        key_bits: config.key_bits,
        engine: config.engine,
        cores,
        digits_per_step: config.digits_per_step,
        stream_bits: config.stream_bits,
        decryptions_checked: checked,
        latency_cycles: latency,
        cycles_per_decryption_steady: steady,
        clock_mhz: config.clock_mhz,
        projected_decryptions_per_s: projected,
        cores_per_xc7vx690t: fit.map(|f| f.cores),
        chip_decryptions_per_s_100mhz: chip.as_ref().and_then(|c| c.decryptions_per_s_100mhz),
        logic_delay_ns: clocked.map(|c| c.clocks.logic_delay_ns),
        conservative_clock_mhz: clocked.map(|c| c.clocks.conservative_clock_mhz),
        plausible_clock_mhz: clocked.map(|c| c.clocks.plausible_clock_mhz),
        latency_us_plausible_clock: clocked.map(|c| c.latency_us_plausible_clock),
        chip_decryptions_per_s_conservative_clock: clocked.map(|c| c.chip_decryptions_per_s_conservative_clock),
        chip_decryptions_per_s_plausible_clock: clocked.map(|c| c.chip_decryptions_per_s_plausible_clock),
        offload_seconds_emulated: offload_seconds,
        host_cpu_us_per_decryption: overhead.cpu_us,
        host_overhead: overhead.report,
        total_seconds: started.elapsed().as_secs_f64(),
    };
    std::fs::write(out.join("demo.json"), serde_json::to_string_pretty(&summary)? + "\n")?;
    print_summary(&summary, &out);
    Ok(ExitCode::SUCCESS)
}

/// `demo.json`: what the demo checked and measured. The chip fields are null with `--no-estimate`.
#[derive(serde::Serialize)]
struct DemoSummary {
    key_bits: usize,
    engine: ecrt_contract::config::Engine,
    cores: usize,
    digits_per_step: usize,
    stream_bits: usize,
    decryptions_checked: usize,
    /// Verilator, an idle pipeline.
    latency_cycles: u64,
    /// Verilator, the whole accelerator.
    cycles_per_decryption_steady: f64,
    clock_mhz: f64,
    /// The simulated accelerator at `clock_mhz`.
    projected_decryptions_per_s: f64,
    /// One xc7vx690t filled with cores (80 % of each resource, Yosys's estimate).
    cores_per_xc7vx690t: Option<u64>,
    chip_decryptions_per_s_100mhz: Option<f64>,
    logic_delay_ns: Option<f64>,
    conservative_clock_mhz: Option<f64>,
    plausible_clock_mhz: Option<f64>,
    latency_us_plausible_clock: Option<f64>,
    chip_decryptions_per_s_conservative_clock: Option<f64>,
    chip_decryptions_per_s_plausible_clock: Option<f64>,
    offload_seconds_emulated: f64,
    host_cpu_us_per_decryption: f64,
    host_overhead: ecrt_lab::bench::host::HostReport,
    total_seconds: f64,
}

/// The decrypted JSON value is the value encrypted: the same integer, or the same float.
fn same_number(decrypted: &str, value: &str) -> bool {
    match (decrypted.parse::<i128>(), value.parse::<i128>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => matches!((decrypted.parse::<f64>(), value.parse::<f64>()), (Ok(a), Ok(b)) if a == b),
    }
}

fn print_summary(s: &DemoSummary, out: &Path) {
    println!();
    println!(
        "ecrt demo: {}-bit keys, {} core(s) on the {} engine, {} digits per step, {}-bit streams",
        s.key_bits, s.cores, s.engine, s.digits_per_step, s.stream_bits
    );
    println!("| measure | value |");
    println!("|---|---|");
    println!("| decryptions through the XDMA backend, checked | {} |", s.decryptions_checked);
    println!("| latency (Verilator, idle pipeline) | {} cycles |", s.latency_cycles);
    println!("| steady state (Verilator) | {:.0} cycles per decryption |", s.cycles_per_decryption_steady);
    println!(
        "| these {} core(s) at {} MHz | {:.0} decryptions/s ({:.3} ms latency) |",
        s.cores,
        s.clock_mhz,
        s.projected_decryptions_per_s,
        s.latency_cycles as f64 / (s.clock_mhz * 1e3)
    );
    if let (Some(cores), Some(rate)) = (s.cores_per_xc7vx690t, s.chip_decryptions_per_s_100mhz) {
        println!("| one xc7vx690t (Yosys estimate, 80 % of each resource) | {cores} cores: {rate:.0} decryptions/s at 100 MHz |");
    }
    if let (Some(ns), Some(conservative), Some(plausible)) =
        (s.logic_delay_ns, s.conservative_clock_mhz, s.plausible_clock_mhz)
    {
        println!(
            "| clocks from {ns:.2} ns of logic (no routing) | conservative {conservative:.0} MHz (1000 / 4L), plausible {plausible:.0} MHz (1000 / 2L) |"
        );
    }
    if let (Some(low), Some(high), Some(us)) = (
        s.chip_decryptions_per_s_conservative_clock,
        s.chip_decryptions_per_s_plausible_clock,
        s.latency_us_plausible_clock,
    ) {
        println!(
            "| that chip at its clocks | {low:.0} decryptions/s conservative, {high:.0}/s plausible ({us:.0} µs latency) |"
        );
    }
    println!("| host CPU per decryption (driver, instant device) | {:.2} µs |", s.host_cpu_us_per_decryption);
    println!("| emulated offload of the batch (wall) | {:.1} s |", s.offload_seconds_emulated);
    println!("Report: {}", out.join("demo.json").display());
}
