//! `ecrt encrypt`: numbers to pheutil ciphertext lines.

use crate::commands::ItemErrors;
use anyhow::Context;
use ecrt_driver::backends::cpu::{encrypt, Scratch};
use ecrt_driver::batch::{parallel_map_on, progress_bar};
use ecrt_driver::files::{open_input, open_output};
use ecrt_driver::jsonl::{LineError, LineReader, MAX_LINE_BYTES};
use ecrt_driver::key_file::read_public_key_file;
use ecrt_driver::redact::redacted;
use ecrt_golden::encoding::{decrease_exponent_to, encode_float, encode_int, max_int, Encoded};
use ecrt_golden::phe_format::{format_ciphertext, PheCiphertext};
use num_bigint::{BigInt, BigUint};
use std::io::Write;
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
/// Input lines encrypted per round of the worker threads: what an input holds in memory at once.
const CHUNK_LINES: usize = 256;

/// A number as the user wrote it: integers stay exact, anything else is a float. Errors quote a
/// short prefix of the text at most: a private key file given as `--in` is one line holding p and q.
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
                format!("`{}` is not a finite number", redacted(text))
            }
        })?;
        (encode_float(n, value)?, Some(PHEUTIL_EXPONENT))
    };
    match exponent.or(default_target) {
        Some(target) if encoded.exponent > target => lower_exponent(n, &encoded, target)
            .with_context(|| format!("`{}` does not fit under this key at exponent {target}", redacted(text))),
        _ => Ok(encoded),
    }
}

/// phe's `decrease_exponent_to`, refusing (where phe silently wraps mod n) a mantissa that the
/// rescaling pushes beyond max_int: such a ciphertext would decrypt to another number.
fn lower_exponent(n: &BigUint, encoded: &Encoded, target: i64) -> anyhow::Result<Encoded> {
    let max_int = max_int(n);
    let magnitude = if encoded.encoding <= max_int { encoded.encoding.clone() } else { n - &encoded.encoding };
    // In u128: with `--exponent` near i64::MIN the shift overflows 64 bits.
    let shift = 4 * u128::try_from(i128::from(encoded.exponent) - i128::from(target))?;
    anyhow::ensure!(
        u128::from(magnitude.bits()) + shift <= u128::from(max_int.bits()) && (magnitude << shift) <= max_int,
        "|mantissa| · 16^k exceeds max_int"
    );
    Ok(decrease_exponent_to(n, encoded, target)?)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let public = read_public_key_file(&args.key)?;
    let n = public.n();
    let threads = ecrt_driver::batch::thread_count(args.threads);
    let mut out = open_output(args.out.as_deref(), args.input.as_deref())?;
    let (mut errors, mut number) = (ItemErrors::new("value"), 0usize);
    let bar = progress_bar(0, "encrypt");
    let mut encrypt_chunk = |values: Vec<Result<String, LineError>>| -> anyhow::Result<()> {
        bar.inc_length(values.len() as u64);
        let results = parallel_map_on(&bar, &values, threads, Scratch::new, |scratch, text| {
            let text = text.as_ref().map_err(|e| e.to_string())?;
            let encoded = encode_text(n, text, args.exponent).map_err(|e| format!("{e:#}"))?;
            let ciphertext = encrypt(n, &encoded.encoding, scratch).map_err(|e| format!("OpenSSL failed: {e}"))?;
            Ok::<_, String>(format_ciphertext(&PheCiphertext { ciphertext, exponent: encoded.exponent }))
        })?;
        for result in results {
            number += 1;
            match result {
                Ok(line) => writeln!(out, "{line}"),
                Err(error) => {
                    errors.report(number, error);
                    writeln!(out, "null")
                }
            }
            .context("cannot write the output")?;
        }
        Ok(())
    };
    if args.values.is_empty() {
        // Streamed in chunks: the input may be larger than memory.
        let mut lines = LineReader::new(open_input(args.input.as_deref())?, MAX_LINE_BYTES);
        let mut read = 0usize;
        loop {
            let mut chunk = Vec::with_capacity(CHUNK_LINES);
            while chunk.len() < CHUNK_LINES {
                match lines.next_line().with_context(|| format!("cannot read the input after line {read}"))? {
                    Some(line) => chunk.push(line),
                    None => break,
                }
                read += 1;
            }
            let last = chunk.len() < CHUNK_LINES;
            encrypt_chunk(chunk)?;
            if last {
                break;
            }
        }
    } else {
        encrypt_chunk(args.values.iter().cloned().map(Ok).collect())?;
    }
    bar.finish_and_clear();
    out.flush().context("cannot write the output")?;
    Ok(errors.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecrt_golden::encoding::{decode, Value};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use std::sync::OnceLock;

    fn n() -> &'static BigUint {
        static KEY: OnceLock<ecrt_golden::PrivateKey> = OnceLock::new();
        KEY.get_or_init(|| ecrt_golden::PrivateKey::generate(512, &mut rand::rngs::StdRng::seed_from_u64(3)).unwrap())
            .public()
            .n()
    }

    /// Numbers as people write them, and not quite.
    fn number_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[+-]?[0-9]{0,200}",
            "[+-]?[0-9]{0,30}\\.[0-9]{0,30}([eE][+-]?[0-9]{1,5})?",
            "[+-]?(inf|infinity|nan|NaN|Infinity)",
            " *[+-]?[0-9]{1,20} *",
            ".{0,40}",
        ]
    }

    fn exponent() -> impl Strategy<Value = Option<i64>> {
        prop::option::of(prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), -2000i64..2000])
    }

    #[test]
    fn extreme_exponents_are_refused_without_overflow() {
        for (text, exponent) in [("1e30", i64::MIN), ("12", i64::MIN), ("-3.5", i64::MIN + 1), ("7", -1_000_000)] {
            let message = format!("{:#}", encode_text(n(), text, Some(exponent)).unwrap_err());
            assert!(message.contains(&format!("does not fit under this key at exponent {exponent}")), "{message}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_number_encoder_takes_any_text(bytes in prop::collection::vec(any::<u8>(), 0..300), exponent in exponent()) {
            let _ = encode_text(n(), &String::from_utf8_lossy(&bytes), exponent);
        }

        #[test]
        fn the_number_encoder_keeps_what_it_takes(text in number_text(), exponent in exponent()) {
            let Ok(encoded) = encode_text(n(), &text, exponent) else { return Ok(()) };
            prop_assert!(&encoded.encoding < n());
            prop_assert!(exponent.is_none_or(|e| encoded.exponent <= e));
            let value = decode(n(), &encoded);
            prop_assert!(value.is_ok(), "{text:?} at {exponent:?} decodes: {value:?}");
            let trimmed = text.trim();
            if let (Ok(Value::Int(got)), Ok(wanted)) = (&value, trimmed.trim_start_matches('+').parse::<BigInt>()) {
                prop_assert_eq!(got, &wanted);
            }
        }
    }
}
