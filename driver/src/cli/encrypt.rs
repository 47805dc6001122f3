//! `ecrt encrypt`: numbers to pheutil ciphertext lines.

use crate::cli::{batch_lines, read_input, report_item_errors, write_output};
use anyhow::Context;
use ecrt_driver::batch::parallel_map;
use ecrt_driver::cpu::{encrypt, Scratch};
use ecrt_golden::encoding::{decrease_exponent_to, encode_float, encode_int, max_int, Encoded};
use ecrt_golden::phe_format::{format_ciphertext, read_public_key, PheCiphertext};
use num_bigint::{BigInt, BigUint};
use std::path::PathBuf;
use std::process::ExitCode;

/// Encrypt numbers with a public key, writing one pheutil ciphertext per line.
///
/// Integers are encoded exactly (exponent 0); floats as phe encodes them, then lowered to
/// exponent −32 as pheutil does, so that their ciphertexts add without rescaling.
#[derive(clap::Args)]
pub struct Args {
    /// A pheutil JWK: the public key, or a private key (its public half is used).
    #[arg(long)]
    key: PathBuf,
    /// Numbers to encrypt (integers or floats). Put `--` before negative numbers.
    #[arg(conflicts_with = "input", allow_negative_numbers = true)]
    values: Vec<String>,
    /// Read numbers from this file instead, one per line (JSON numbers); `-` for stdin.
    #[arg(long = "in", value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the ciphertexts here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Lower every encoding's exponent to at most this (default: −32 for floats, 0 for integers).
    #[arg(long, allow_negative_numbers = true)]
    exponent: Option<i64>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
}

/// pheutil's fixed exponent for floats.
const PHEUTIL_EXPONENT: i64 = -32;

/// A number as the user wrote it: integers stay exact, anything else is a float.
pub(crate) fn encode_text(n: &BigUint, text: &str, exponent: Option<i64>) -> anyhow::Result<Encoded> {
    let text = text.trim();
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (encoded, default_target) = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let value: BigInt = text.trim_start_matches('+').parse().expect("decimal digits");
        (encode_int(n, &value)?, None)
    } else {
        let value: f64 = text.parse().ok().filter(|v: &f64| v.is_finite()).with_context(|| {
            if text.is_empty() {
                "empty value".to_string()
            } else {
                format!("`{text}` is not a finite number")
            }
        })?;
        (encode_float(n, value)?, Some(PHEUTIL_EXPONENT))
    };
    match exponent.or(default_target) {
        Some(target) if encoded.exponent > target => lower_exponent(n, &encoded, target)
            .with_context(|| format!("`{text}` does not fit under this key at exponent {target}")),
        _ => Ok(encoded),
    }
}

/// phe's `decrease_exponent_to`, refusing (where phe silently wraps mod n) a mantissa that the
/// rescaling pushes beyond max_int: such a ciphertext would decrypt to another number.
fn lower_exponent(n: &BigUint, encoded: &Encoded, target: i64) -> anyhow::Result<Encoded> {
    let max_int = max_int(n);
    let magnitude = if encoded.encoding <= max_int { encoded.encoding.clone() } else { n - &encoded.encoding };
    let shift = 4 * u64::try_from(encoded.exponent - target)?;
    anyhow::ensure!(
        magnitude.bits() + shift <= max_int.bits() && (magnitude << shift) <= max_int,
        "|mantissa| · 16^k exceeds max_int"
    );
    Ok(decrease_exponent_to(n, encoded, target)?)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let key_text = std::fs::read_to_string(&args.key).with_context(|| format!("cannot read {}", args.key.display()))?;
    let public = read_public_key(&key_text).with_context(|| format!("cannot use key file {}", args.key.display()))?;
    let input_text;
    let values: Vec<&str> = if args.values.is_empty() {
        let path = args.input.as_deref().filter(|p| p.as_os_str() != "-");
        input_text = read_input(path)?;
        batch_lines(&input_text)
    } else {
        args.values.iter().map(String::as_str).collect()
    };
    let n = public.n();
    let threads = crate::cli::thread_count(args.threads);
    let results = parallel_map(&values, threads, "encrypt", Scratch::new, |scratch, text| {
        let encoded = encode_text(n, text, args.exponent).map_err(|e| format!("{e:#}"))?;
        let ciphertext = encrypt(n, &encoded.encoding, scratch).map_err(|e| format!("OpenSSL failed: {e}"))?;
        Ok::<_, String>(format_ciphertext(&PheCiphertext { ciphertext, exponent: encoded.exponent }))
    })?;
    let mut out = String::new();
    for result in &results {
        out.push_str(result.as_deref().unwrap_or("null"));
        out.push('\n');
    }
    write_output(args.out.as_ref(), &out)?;
    let errors = results.iter().enumerate().filter_map(|(i, r)| r.as_ref().err().map(|e| (i + 1, e)));
    Ok(report_item_errors("value", errors))
}
