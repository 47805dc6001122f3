//! `ecrt bench --backend cpu`: decryption speed of the CPU backend, side by side with python-paillier (phe + gmpy2) on
//! the same key and ciphertexts, in one run. Machines here are shared and noisy, so the passes are
//! interleaved and ratios of medians are reported, not absolute times alone.

use super::args::Args;
use crate::report::Figure;
use anyhow::{bail, Context};
use ecrt_driver::backends::cpu::{encrypt, CpuKey, Scratch};
use ecrt_driver::batch::parallel_map;
use ecrt_golden::paillier::decrypt_ecrt;
use ecrt_golden::phe_format::{format_ciphertext, write_private_key, PheCiphertext};
use ecrt_golden::PrivateKey;
use num_bigint::{BigUint, RandBigInt};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::Instant;

/// What `ecrt bench --backend cpu` reports: medians of the passes. phe's figures are null without
/// `--phe-python`; a recorded report may have little more than a ratio.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuReport {
    /// `"cpu"`.
    pub backend: String,
    pub key_bits: Figure<u64>,
    pub count: Option<Figure<usize>>,
    pub rounds: Option<Figure<usize>>,
    pub threads: Option<Figure<usize>>,
    /// Decryptions checked against the golden model.
    pub verified: Option<usize>,
    pub us_per_decryption: Option<CpuTimes>,
    /// Whether phe had gmpy2.
    pub phe_gmpy2: Option<bool>,
    pub ratio_ecrt_to_phe_raw_decrypt: Option<Figure<f64>>,
    pub ratio_ecrt_to_phe_decrypt: Option<Figure<f64>>,
    pub decryptions_per_s_1_thread: Option<f64>,
    pub decryptions_per_s_all_threads: Option<Figure<f64>>,
    /// Throughput on all threads over one.
    pub thread_scaling: Option<Figure<f64>>,
    /// Opening the key file as `ecrt decrypt` does.
    pub key_open_ms: Option<Figure<f64>>,
}

/// µs per decryption of each measure, one thread each.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuTimes {
    pub ecrt_cpu_ecrt_1_thread: Option<Figure<f64>>,
    pub ecrt_cpu_crt_1_thread: Option<Figure<f64>>,
    pub golden_num_bigint_ecrt_1_thread: Option<Figure<f64>>,
    pub phe_raw_decrypt: Option<Figure<f64>>,
    pub phe_decrypt: Option<Figure<f64>>,
}

const PHE_BENCH_SCRIPT: &str = include_str!("../../../scripts/phe_bench.py");

/// A Python process that times phe on request.
struct PheRunner {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    child: std::process::Child,
    gmpy2: bool,
    _dir: TempDir,
}

/// A private temporary directory, removed on drop (it holds a key).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> anyhow::Result<Self> {
        let path = std::env::temp_dir().join(format!("ecrt-bench-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        #[cfg(unix)]
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl PheRunner {
    fn start(
        python: &PathBuf,
        key: &PrivateKey,
        ciphertexts: &[BigUint],
        expected: &[BigUint],
    ) -> anyhow::Result<Self> {
        let dir = TempDir::new()?;
        let (script, key_path, cts_path) = (dir.0.join("phe_bench.py"), dir.0.join("key.jwk"), dir.0.join("cts.jsonl"));
        std::fs::write(&script, PHE_BENCH_SCRIPT)?;
        std::fs::write(&key_path, write_private_key(key, "for ecrt bench"))?;
        let lines: String = ciphertexts
            .iter()
            .map(|c| format_ciphertext(&PheCiphertext { ciphertext: c.clone(), exponent: 0 }) + "\n")
            .collect();
        std::fs::write(&cts_path, lines)?;
        let mut child = Command::new(python)
            .arg(&script)
            .arg(&key_path)
            .arg(&cts_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", python.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let hello = read_json_line(&mut stdout).context("phe did not start: is phe installed in that Python?")?;
        let plaintexts: Vec<BigUint> = hello["plaintexts"]
            .as_array()
            .context("phe sent no plaintexts")?
            .iter()
            .map(|m| m.as_str().and_then(|m| m.parse().ok()).context("bad plaintext from phe"))
            .collect::<anyhow::Result<_>>()?;
        if plaintexts != expected {
            bail!("phe decrypted the benchmark's ciphertexts differently from ecrt");
        }
        let gmpy2 = hello["gmpy2"].as_bool().unwrap_or(false);
        Ok(PheRunner { stdin, stdout, child, gmpy2, _dir: dir })
    }

    /// Seconds for one pass of phe's `raw_decrypt` ("raw") or `decrypt` ("decrypt").
    fn pass(&mut self, command: &str) -> anyhow::Result<f64> {
        writeln!(self.stdin, "{command}")?;
        self.stdin.flush()?;
        read_json_line(&mut self.stdout)?["seconds"].as_f64().context("phe sent no time")
    }
}

impl Drop for PheRunner {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.wait();
    }
}

fn read_json_line(reader: &mut impl BufRead) -> anyhow::Result<serde_json::Value> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        bail!("the Python process ended early");
    }
    Ok(serde_json::from_str(&line)?)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Seconds for one single-threaded pass of `f` over `items`.
fn time_pass<T>(items: &[T], mut f: impl FnMut(&T)) -> f64 {
    let start = Instant::now();
    items.iter().for_each(&mut f);
    start.elapsed().as_secs_f64()
}

/// The CPU bench: ecrt's CPU backend against the golden model and phe.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let count = args.count.unwrap_or(64);
    anyhow::ensure!(count > 0 && args.rounds > 0, "--count and --rounds must be positive");
    let threads = ecrt_driver::batch::thread_count(args.threads);
    let mut rng = rand::rngs::StdRng::from_rng(rand::rngs::OsRng)?;
    eprintln!("ecrt bench: generating a {}-bit key and {} ciphertexts", args.key_bits, count);
    let key = PrivateKey::generate(args.key_bits, &mut rng)?;
    let cpu = CpuKey::new(&key)?;
    let mut scratch = Scratch::new()?;
    let n = key.public().n();
    // Plaintexts that phe's decode accepts (positive integers up to max_int), so that its
    // `decrypt` can be timed on them too.
    let max_int = ecrt_golden::encoding::max_int(n);
    let plaintexts: Vec<BigUint> = (0..count).map(|_| rng.gen_biguint_below(&max_int)).collect();
    let ciphertexts: Vec<BigUint> = plaintexts.iter().map(|m| encrypt(n, m, &mut scratch)).collect::<Result<_, _>>()?;

    // Every backend result is checked against the golden model before anything is timed.
    for (c, m) in ciphertexts.iter().zip(&plaintexts) {
        let golden = decrypt_ecrt(&key, c)?;
        anyhow::ensure!(&golden == m, "the golden model failed to decrypt");
        anyhow::ensure!(
            cpu.decrypt_ecrt(c, &mut scratch)? == golden,
            "the CPU backend (eCRT) disagrees with the golden model"
        );
        anyhow::ensure!(
            cpu.decrypt_crt(c, &mut scratch)? == golden,
            "the CPU backend (CRT) disagrees with the golden model"
        );
    }
    let mut phe = match &args.phe_python {
        Some(python) => Some(PheRunner::start(python, &key, &ciphertexts, &plaintexts)?),
        None => None,
    };

    // Opening the key as `ecrt decrypt` does: its file read and validated, OpenSSL's constants made.
    let key_dir = tempfile::tempdir()?;
    let key_file = key_dir.path().join("key.jwk");
    std::fs::write(&key_file, write_private_key(&key, "for ecrt bench"))?;
    let open_key = || -> anyhow::Result<f64> {
        let start = Instant::now();
        CpuKey::new(&ecrt_driver::key_file::read_private_key_file(&key_file)?)?;
        Ok(start.elapsed().as_secs_f64())
    };

    let mut passes: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    let bar = ecrt_driver::batch::progress_bar(args.rounds, "bench");
    for _ in 0..args.rounds {
        let opened = open_key()?;
        let mut record = |name, seconds| passes.entry(name).or_default().push(seconds);
        record("key_open", opened);
        record("ecrt_cpu_ecrt", time_pass(&ciphertexts, |c| drop(cpu.decrypt_ecrt(c, &mut scratch))));
        record("ecrt_cpu_crt", time_pass(&ciphertexts, |c| drop(cpu.decrypt_crt(c, &mut scratch))));
        record("golden_num_bigint_ecrt", time_pass(&ciphertexts, |c| drop(decrypt_ecrt(&key, c))));
        let start = Instant::now();
        parallel_map(&ciphertexts, threads, "", Scratch::new, |s, c| drop(cpu.decrypt_ecrt(c, s)))?;
        record("ecrt_cpu_ecrt_threads", start.elapsed().as_secs_f64());
        if let Some(phe) = phe.as_mut() {
            record("phe_raw_decrypt", phe.pass("raw")?);
            record("phe_decrypt", phe.pass("decrypt")?);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();

    let per_item_us = |name: &str| passes.get(name).map(|p| median(p.clone()) / count as f64 * 1e6);
    let ecrt_us = per_item_us("ecrt_cpu_ecrt").expect("measured");
    let threaded_us = per_item_us("ecrt_cpu_ecrt_threads").expect("measured");
    let phe_raw_us = per_item_us("phe_raw_decrypt");
    let phe_us = per_item_us("phe_decrypt");
    let report = CpuReport {
        backend: "cpu".into(),
        key_bits: args.key_bits.into(),
        count: Some(count.into()),
        rounds: Some(args.rounds.into()),
        threads: Some(threads.into()),
        verified: Some(count),
        us_per_decryption: Some(CpuTimes {
            ecrt_cpu_ecrt_1_thread: Some(ecrt_us.into()),
            ecrt_cpu_crt_1_thread: per_item_us("ecrt_cpu_crt").map(Figure::from),
            golden_num_bigint_ecrt_1_thread: per_item_us("golden_num_bigint_ecrt").map(Figure::from),
            phe_raw_decrypt: phe_raw_us.map(Figure::from),
            phe_decrypt: phe_us.map(Figure::from),
        }),
        phe_gmpy2: phe.as_ref().map(|p| p.gmpy2),
        ratio_ecrt_to_phe_raw_decrypt: phe_raw_us.map(|phe| (ecrt_us / phe).into()),
        ratio_ecrt_to_phe_decrypt: phe_us.map(|phe| (ecrt_us / phe).into()),
        decryptions_per_s_1_thread: Some(1e6 / ecrt_us),
        decryptions_per_s_all_threads: Some((1e6 / threaded_us).into()),
        thread_scaling: Some((ecrt_us / threaded_us).into()),
        key_open_ms: Some((median(passes["key_open"].clone()) * 1e3).into()),
    };
    drop(phe);
    crate::report::emit_report(&report, args.json, args.out.as_ref(), print_table)?;
    Ok(ExitCode::SUCCESS)
}

fn print_table(report: &serde_json::Value) {
    println!(
        "ecrt bench: {}-bit keys, {} ciphertexts × {} rounds (median pass)",
        report["key_bits"], report["count"], report["rounds"]
    );
    println!("{:<40} {:>14}", "measure", "µs/decryption");
    for (name, value) in report["us_per_decryption"].as_object().expect("object") {
        if let Some(us) = value.as_f64() {
            println!("{name:<40} {us:>14.1}");
        }
    }
    for name in ["ratio_ecrt_to_phe_raw_decrypt", "ratio_ecrt_to_phe_decrypt", "thread_scaling", "key_open_ms"] {
        if let Some(x) = report[name].as_f64() {
            println!("{name:<40} {x:>14.3}");
        }
    }
    println!(
        "{:<40} {:>14.0}",
        "decryptions/s, all threads",
        report["decryptions_per_s_all_threads"].as_f64().unwrap_or(0.0)
    );
}
