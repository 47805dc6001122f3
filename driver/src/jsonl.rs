//! Batches of JSON lines, as `ecrt decrypt` reads and writes them: one pheutil ciphertext object or
//! one bare decimal integer per input line; one JSON value per output line, in the same order.
//! A line that cannot be decrypted yields `null` in its place and an error naming its line number.

use crate::api::{Decryptor, ItemError};
use ecrt_golden::encoding::{decode, DecodeError, Encoded};
use ecrt_golden::paillier::{check_ciphertext, decrypt_ecrt, CiphertextError};
use ecrt_golden::phe_format::{parse_ciphertext, CiphertextFormatError};
use ecrt_golden::{PrivateKey, PublicKey};

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
    let parsed: Vec<Result<_, LineError>> = lines
        .iter()
        .map(|line| {
            if line.trim().is_empty() {
                return Err(LineError::Empty);
            }
            let c = parse_ciphertext(line)?;
            check_ciphertext(public, &c.ciphertext)?;
            Ok(c)
        })
        .collect();
    let valid: Vec<_> = parsed.iter().filter_map(|p| p.as_ref().ok().map(|c| c.ciphertext.clone())).collect();
    let mut plaintexts = decryptor.decrypt_all(valid).into_iter();
    let lines = parsed
        .into_iter()
        .map(|p| {
            let c = p?;
            let m = plaintexts.next().expect("one result per valid line")?;
            if let Some(key) = verify_with {
                if decrypt_ecrt(key, &c.ciphertext)? != m {
                    return Err(LineError::Disagrees(decryptor.backend_name()));
                }
            }
            Ok(match mode {
                OutputMode::Raw => format!("\"{m}\""),
                OutputMode::Decoded => {
                    decode(public.n(), &Encoded { encoding: m, exponent: c.exponent })?.to_json_string()
                }
            })
        })
        .collect();
    BatchOutcome { lines }
}
