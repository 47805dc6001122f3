//! Batches of JSON lines, as `ecrt decrypt` reads and writes them: one pheutil ciphertext object or
//! one bare decimal integer per input line; one JSON value per output line, in the same order.
//! A line that cannot be decrypted yields `null` in its place and an error naming its line number.
//! Lines stream: [`LineReader`] holds one line at a time, at most [`MAX_LINE_BYTES`] of it, and
//! [`decrypt_stream`] only what is in flight.

use crate::api::{Decryptor, ItemError};
use ecrt_golden::encoding::{decode, DecodeError, Encoded, Value, PY_INT_MAX_STR_DIGITS};
use ecrt_golden::paillier::{check_ciphertext, decrypt_ecrt, CiphertextError};
use ecrt_golden::phe_format::{parse_ciphertext, CiphertextFormatError, PheCiphertext};
use ecrt_golden::{PrivateKey, PublicKey};
use num_bigint::BigUint;
use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::sync::OnceLock;

/// The longest input line taken, without its newline: a ciphertext under an 8192-bit key is
/// about 4.9 KB of JSON, a number to encrypt under it at most about 2.5 KB.
pub const MAX_LINE_BYTES: usize = 64 << 10;
/// Lines answered and waiting behind an unanswered one before reading pauses: bounds what a
/// slow item holds back, beyond the decryptor's own queue.
const MAX_HELD_LINES: usize = 1024;

/// What a decrypted line becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// The value phe's `decrypt` returns (int or float), as JSON.
    Decoded,
    /// The raw plaintext integer, as a JSON string of decimal digits.
    Raw,
}

/// Why one line was not decrypted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LineError {
    #[error("empty line")]
    Empty,
    #[error("the line is longer than {limit} bytes (skipped)")]
    TooLong { limit: usize },
    #[error("the line is not UTF-8 text (invalid byte at column {column})")]
    NotUtf8 { column: usize },
    #[error("{0}")]
    Format(#[from] CiphertextFormatError),
    #[error("{0}")]
    Ciphertext(#[from] CiphertextError),
    #[error("{0}")]
    Decode(#[from] DecodeError),
    #[error("{0}")]
    Item(#[from] ItemError),
    #[error("the {0} backend disagrees with the golden model")]
    Disagrees(&'static str),
    /// An exponent e > 0 makes the value mantissa·16^e: e = 1000000 gives 1.2 million digits.
    #[error(
        "the value is an integer of more than {PY_INT_MAX_STR_DIGITS} digits (exponent {exponent}), \
         more than Python reads from JSON; not written"
    )]
    TooManyDigits { exponent: i64 },
}

/// Reads lines of at most `limit` bytes from a byte stream, one at a time: a longer line, or one
/// that is not UTF-8, is that line's error, and reading goes on at the next line. A line ends at
/// `\n` (a `\r` before it is dropped) or at the end of the input, as [`str::lines`] splits.
pub struct LineReader<R> {
    inner: R,
    limit: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, limit: usize) -> Self {
        LineReader { inner, limit }
    }

    /// The next line, `None` at the end of the input; `Err` if the input itself failed.
    pub fn next_line(&mut self) -> io::Result<Option<Result<String, LineError>>> {
        let mut line = Vec::new();
        let (mut any, mut too_long) = (false, false);
        loop {
            let available = match self.inner.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            any = true;
            let newline = available.iter().position(|&b| b == b'\n');
            let part = &available[..newline.unwrap_or(available.len())];
            // An over-long line is skipped to its end, never held.
            if !too_long && line.len() + part.len() > self.limit {
                too_long = true;
                line = Vec::new();
            }
            if !too_long {
                line.extend_from_slice(part);
            }
            let used = newline.map_or(available.len(), |i| i + 1);
            self.inner.consume(used);
            if newline.is_some() {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if too_long {
            return Ok(Some(Err(LineError::TooLong { limit: self.limit })));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Some(String::from_utf8(line).map_err(|e| LineError::NotUtf8 { column: e.utf8_error().valid_up_to() + 1 })))
    }
}

/// Reads and checks one ciphertext line: pheutil's object or a bare decimal, 0 < c < n², c a
/// unit mod n.
pub fn parse_line(public: &PublicKey, line: &str) -> Result<PheCiphertext, LineError> {
    if line.trim().is_empty() {
        return Err(LineError::Empty);
    }
    let c = parse_ciphertext(line)?;
    check_ciphertext(public, &c.ciphertext)?;
    Ok(c)
}

/// 10^4300: Python refuses to read (or print) an int of more digits.
fn python_int_bound() -> &'static BigUint {
    static BOUND: OnceLock<BigUint> = OnceLock::new();
    BOUND.get_or_init(|| BigUint::from(10u32).pow(PY_INT_MAX_STR_DIGITS as u32))
}

/// The outcome of a batch: one entry per input line.
pub struct BatchOutcome {
    pub lines: Vec<Result<String, LineError>>,
}

impl BatchOutcome {
    /// The failed lines, numbered from 1.
    pub fn errors(&self) -> impl Iterator<Item = (usize, &LineError)> {
        self.lines.iter().enumerate().filter_map(|(i, r)| r.as_ref().err().map(|e| (i + 1, e)))
    }

    /// The output text: one JSON value (or `null`) per line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            out.push_str(line.as_deref().unwrap_or("null"));
            out.push('\n');
        }
        out
    }
}

/// Parses, validates, decrypts and decodes every line; bad lines never stop the good ones, and a
/// backend failure fails only the lines it held. With `verify_with`, each backend result is also
/// recomputed by the golden model, and a disagreement is that line's error.
pub fn decrypt_lines(
    decryptor: &mut Decryptor,
    public: &PublicKey,
    lines: &[&str],
    mode: OutputMode,
    verify_with: Option<&PrivateKey>,
) -> BatchOutcome {
    let mut out = Vec::with_capacity(lines.len());
    let input = lines.iter().map(|line| Ok(line.to_string()));
    let done = decrypt_stream(decryptor, public, input, mode, verify_with, |result| {
        out.push(result);
        Ok::<_, std::convert::Infallible>(())
    });
    let Ok(()) = done;
    BatchOutcome { lines: out }
}

/// A line on its way: answered, or waiting for the decryptor's answer.
enum Slot {
    Done(Result<String, LineError>),
    /// The exponent, and the ciphertext when the result is to be verified.
    Waiting(i64, Option<BigUint>),
}

/// [`decrypt_lines`] as the lines come: `emit` takes one result per input line, in input order,
/// as soon as it and every line before it are answered; an error from `emit` stops the stream.
/// Holds only the lines in flight (the decryptor's queue depth, and at most [`MAX_HELD_LINES`]
/// answered ones behind an unanswered line). The decryptor must have nothing pending.
pub fn decrypt_stream<E>(
    decryptor: &mut Decryptor,
    public: &PublicKey,
    lines: impl IntoIterator<Item = Result<String, LineError>>,
    mode: OutputMode,
    verify_with: Option<&PrivateKey>,
    mut emit: impl FnMut(Result<String, LineError>) -> Result<(), E>,
) -> Result<(), E> {
    debug_assert_eq!(decryptor.pending(), 0, "completions would be matched with the wrong lines");
    let mut slots: VecDeque<Slot> = VecDeque::new();
    let mut waiting = 0usize;
    let backend = decryptor.backend_name();
    let finish = |exponent: i64, c: Option<BigUint>, m: Result<BigUint, ItemError>| -> Result<String, LineError> {
        let m = m?;
        if let (Some(key), Some(c)) = (verify_with, &c) {
            if decrypt_ecrt(key, c)? != m {
                return Err(LineError::Disagrees(backend));
            }
        }
        Ok(match mode {
            OutputMode::Raw => format!("\"{m}\""),
            OutputMode::Decoded => {
                let value = decode(public.n(), &Encoded { encoding: m, exponent })?;
                if matches!(&value, Value::Int(i) if i.magnitude() >= python_int_bound()) {
                    return Err(LineError::TooManyDigits { exponent });
                }
                value.to_json_string()
            }
        })
    };
    // Completions come in submission order: each answers the first waiting slot.
    let complete = |slots: &mut VecDeque<Slot>, waiting: &mut usize, m: Result<BigUint, ItemError>| {
        let slot = slots.iter_mut().find(|s| matches!(s, Slot::Waiting(..))).expect("a line waits for each result");
        if let Slot::Waiting(exponent, c) = slot {
            *slot = Slot::Done(finish(*exponent, c.take(), m));
        }
        *waiting -= 1;
    };
    let mut flush = |slots: &mut VecDeque<Slot>| -> Result<(), E> {
        while let Some(Slot::Done(_)) = slots.front() {
            if let Some(Slot::Done(result)) = slots.pop_front() {
                emit(result)?;
            }
        }
        Ok(())
    };
    for line in lines {
        let slot = match line.and_then(|line| parse_line(public, &line)) {
            Ok(c) => {
                let keep = verify_with.map(|_| c.ciphertext.clone());
                decryptor.submit(c.ciphertext);
                waiting += 1;
                Slot::Waiting(c.exponent, keep)
            }
            Err(e) => Slot::Done(Err(e)),
        };
        slots.push_back(slot);
        while let Some(done) = decryptor.try_next() {
            complete(&mut slots, &mut waiting, done.result);
        }
        while waiting > 0 && slots.len() > MAX_HELD_LINES {
            let done = decryptor.wait_next().expect("a submission is pending");
            complete(&mut slots, &mut waiting, done.result);
        }
        flush(&mut slots)?;
    }
    while let Some(done) = decryptor.wait_next() {
        complete(&mut slots, &mut waiting, done.result);
        flush(&mut slots)?;
    }
    flush(&mut slots)?;
    debug_assert!(slots.is_empty() && waiting == 0);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{BackendSpec, Options};
    use rand::SeedableRng;
    use std::cell::Cell;

    /// Results come out in input order while the input is still being read, holding no more than
    /// the queue and [`MAX_HELD_LINES`] lines, whatever mix of good and bad lines comes.
    #[test]
    fn lines_stream_in_order_with_bounded_holding() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        let key = PrivateKey::generate(512, &mut rng).unwrap();
        let queue_depth = 8;
        let options = Options { queue_depth, timeout: None };
        let mut decryptor = Decryptor::open(&BackendSpec::Cpu { threads: 2 }, &key, options).unwrap();
        let count = 3 * MAX_HELD_LINES;
        // Every 500th line is good (its value is its number); the rest are empty.
        let lines: Vec<String> = (0..count)
            .map(|i| match i % 500 {
                0 => ecrt_golden::paillier::encrypt(key.public(), &BigUint::from(i), &mut rng).unwrap().to_string(),
                _ => String::new(),
            })
            .collect();
        let pulled = Cell::new(0usize);
        let input = lines.iter().map(|line| {
            pulled.set(pulled.get() + 1);
            Ok(line.clone())
        });
        let mut emitted = Vec::new();
        let done = decrypt_stream(&mut decryptor, key.public(), input, OutputMode::Raw, None, |result| {
            assert!(pulled.get() - emitted.len() <= queue_depth + MAX_HELD_LINES + 1, "held too many lines");
            emitted.push(result);
            Ok::<_, ()>(())
        });
        done.unwrap();
        assert_eq!(emitted.len(), count);
        for (i, result) in emitted.iter().enumerate() {
            match result {
                Ok(value) => assert!(i % 500 == 0 && *value == format!("\"{i}\""), "line {i}: {value}"),
                Err(e) => assert!(i % 500 != 0 && *e == LineError::Empty, "line {i}: {e}"),
            }
        }
    }

    #[test]
    fn an_output_error_stops_the_stream() {
        let key = PrivateKey::generate(512, &mut rand::rngs::StdRng::seed_from_u64(5)).unwrap();
        let mut decryptor = Decryptor::open(&BackendSpec::Cpu { threads: 1 }, &key, Options::default()).unwrap();
        let input = (0..10).map(|_| Ok("x".to_string()));
        let mut calls = 0;
        let done = decrypt_stream(&mut decryptor, key.public(), input, OutputMode::Raw, None, |_| {
            calls += 1;
            (calls < 3).then_some(()).ok_or("closed")
        });
        assert_eq!((done, calls), (Err("closed"), 3));
    }
}
