//! python-paillier's `EncodedNumber`, bit for bit: how ints and floats become plaintexts mod n and back.
//!
//! This reproduces `phe/encoding.py` of python-paillier (`phe`) 1.5.0
//! (<https://github.com/data61/python-paillier/blob/master/phe/encoding.py>), including its error
//! messages, so that a value decrypted by ecrt renders exactly as `pheutil decrypt` prints it:
//!
//! * a number is `mantissa · 16^exponent`; the mantissa is stored as `encoding = mantissa mod n`,
//!   with `0 ..= max_int` positive, `n − max_int .. n` negative and the band in between reserved for
//!   overflow detection, where `max_int = n // 3 − 1`;
//! * [`encode_float`] picks the exponent from the float's least significant bit (`EncodedNumber.encode`
//!   with `precision=None`), so the encoding is exact;
//! * [`decode`] returns an int for `exponent ≥ 0` and otherwise Python's `int / int`: the exactly
//!   rounded (round-half-even) double, subnormals and signed zeros included.
//!
//! Where phe would only run out of memory (absurd exponents), this module answers without computing
//! the huge intermediate (see [`decrease_exponent_to`], [`encode_float_with_max_exponent`]) or returns
//! [`DecodeError::IntTooLarge`] (see [`MAX_DECODED_INT_BITS`]). Error texts are those of Python ≥ 3.11,
//! whose `'%d'` formatting refuses ints of more than 4,300 digits ([`EncodeError::IntStrDigitsLimit`]).
//!
//! Checked against the real phe by `fixtures/encoding/phe-encoding.json` (made by
//! `scripts/gen-encoding-fixture.py`).

use std::fmt::Write as _;
use std::sync::OnceLock;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{Pow, Zero};

/// phe's `EncodedNumber.BASE`: the exponent counts powers of 16.
pub const BASE: u32 = 16;

/// log2 of [`BASE`]; phe computes `math.log(16, 2)`, which is exactly 4.0.
const LOG2_BASE: i64 = 4;

/// `sys.float_info.mant_dig`.
const FLOAT_MANTISSA_BITS: i64 = 53;

/// Python's default `sys.int_info.default_max_str_digits` (Python ≥ 3.11 and the 3.7–3.10 security
/// releases): `str()`/`'%d'` of an int with more decimal digits raises `ValueError`.
pub const PY_INT_MAX_STR_DIGITS: usize = 4300;

/// Largest integer (in bits) that [`decode`] builds for a non-negative exponent. phe would compute
/// `mantissa * 16**exponent` whatever its size (and run out of memory for absurd exponents); this model
/// refuses results longer than 2^22 bits (4 Mibit, ~1.26 million decimal digits) with
/// [`DecodeError::IntTooLarge`]. No honest ciphertext comes near: phe's encoders produce exponent 0
/// for ints.
pub const MAX_DECODED_INT_BITS: u64 = 1 << 22;

/// phe's `PaillierPublicKey.max_int = n // 3 - 1`: the largest magnitude an encoding may carry.
///
/// For the degenerate n < 3, phe's value is −1, which a `BigUint` cannot hold: this returns 0 then,
/// while [`encode_int`], [`encode_float`] and [`decode`] use phe's exact (negative) value internally.
pub fn max_int(n: &BigUint) -> BigUint {
    let third = n / 3u32;
    if third.is_zero() {
        BigUint::zero()
    } else {
        third - 1u32
    }
}

/// `n // 3 - 1` as phe has it, negative (−1) for n < 3.
fn max_int_signed(n: &BigUint) -> BigInt {
    BigInt::from(n / 3u32) - 1
}

/// What phe's `decrypt`/`decode` returns: a Python `int` or a Python `float`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A Python int (`exponent ≥ 0`), of any size.
    Int(BigInt),
    /// A Python float (`exponent < 0`).
    Float(f64),
}

impl Value {
    /// JSON text of the value as Python's `json.dumps` writes it, which is also what `print` shows:
    /// an int as its decimal digits (`str(int)`; Python ≥ 3.11 would refuse beyond 4,300 digits, this
    /// does not), a float as Python's `repr` (see [`python_float_repr`]), e.g. `3.0`, `-0.0`, `1e-07`,
    /// `1.5e+16`. Non-finite floats, which [`decode`] never returns, are written `NaN`, `Infinity`,
    /// `-Infinity` like `json.dumps`.
    pub fn to_json_string(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Float(x) if x.is_nan() => "NaN".to_owned(),
            Value::Float(x) if x.is_infinite() => if *x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned(),
            Value::Float(x) => python_float_repr(*x),
        }
    }
}

/// Python's `repr(float)`: the shortest decimal string that reads back as the same double, in
/// positional notation when the decimal exponent is in −4..16 (always with a `.`: `3.0`, `0.0001`),
/// otherwise as `d[.ddd]e±XX` with at least two exponent digits (`1e-07`, `1.5e+16`, `1e+22`).
pub fn python_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, exp10) = shortest_digits(x.abs());
    // Python's format_float_short: value = 0.DIGITS × 10^decpt; exponent notation iff decpt ∉ (-4, 16].
    let decpt = exp10 + 1;
    let ndigits = digits.len() as i32;
    let mut out = String::from(sign);
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if ndigits > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp10 < 0 { '-' } else { '+' }, exp10.unsigned_abs());
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else if decpt < ndigits {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    } else {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (decpt - ndigits) as usize));
        out.push_str(".0");
    }
    out
}

/// The shortest decimal digits that read back as `x` (> 0), and the decimal exponent of the first:
/// x ≈ d.ddd × 10^exp10, exactly as Python's `repr` (David Gay's dtoa, mode 0) chooses them.
fn shortest_digits(x: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-trip digits, the closest to x when several are that
    // short, like Python. Only an exact tie between two such candidates differs: Rust takes the upper,
    // Python the even one (e.g. 233891771783429.625 → Rust "…429.63", Python "…429.62").
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp10: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    if digits.ends_with(['1', '3', '5', '7', '9']) {
        let d: BigUint = digits.parse().expect("decimal digits");
        let p = exp10 + 1 - digits.len() as i32; // x ≈ d · 10^p
        for up in [false, true] {
            let twice_mid = if up { (&d << 1u32) + 1u32 } else { (&d << 1u32) - 1u32 };
            if !is_exactly_half(x, &twice_mid, p) {
                continue;
            }
            let alt = if up { &d + 1u32 } else { &d - 1u32 };
            // The even neighbour is as close as d; it is Python's choice if it also reads back as x
            // (not always so next to a power of two, where the rounding interval is lopsided).
            if format!("{alt}e{p}").parse::<f64>() == Ok(x) {
                let alt = alt.to_string();
                let exp10 = p + alt.len() as i32 - 1;
                return (alt.trim_end_matches('0').to_owned(), exp10);
            }
        }
    }
    (digits, exp10)
}

/// Whether x = (twice_mid / 2) · 10^p exactly, in integers: 2·m·2^e2 = twice_mid · 10^p.
fn is_exactly_half(x: f64, twice_mid: &BigUint, p: i32) -> bool {
    let (_, m, e2) = decompose(x);
    let mut lhs = BigUint::from(m) << 1u32;
    let mut rhs = twice_mid.clone();
    if e2 >= 0 {
        lhs <<= e2 as u64;
    } else {
        rhs <<= e2.unsigned_abs();
    }
    let ten_pow = BigUint::from(10u32).pow(p.unsigned_abs());
    if p >= 0 {
        rhs *= ten_pow;
    } else {
        lhs *= ten_pow;
    }
    lhs == rhs
}

/// An encoded number: the plaintext `encoding` (normally `< n`) and the base-16 `exponent`, as phe's
/// `EncodedNumber(public_key, encoding, exponent)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Encoded {
    /// `mantissa mod n`, the value that is Paillier-encrypted.
    pub encoding: BigUint,
    /// The value is `mantissa · 16^exponent`; sent in clear next to the ciphertext.
    pub exponent: i64,
}

/// Which Python exception phe raises for an error (or that phe raises none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Python's `ValueError`.
    ValueError,
    /// Python's `OverflowError`.
    OverflowError,
    /// Python's `ZeroDivisionError` (only for the degenerate modulus n = 0).
    ZeroDivisionError,
    /// Not a phe error: a limit of this model where phe would exhaust memory.
    LimitExceeded,
}

impl ErrorKind {
    /// The Python exception class name, `None` for [`ErrorKind::LimitExceeded`].
    pub fn python_name(self) -> Option<&'static str> {
        match self {
            ErrorKind::ValueError => Some("ValueError"),
            ErrorKind::OverflowError => Some("OverflowError"),
            ErrorKind::ZeroDivisionError => Some("ZeroDivisionError"),
            ErrorKind::LimitExceeded => None,
        }
    }
}

/// Why [`encode_int`], [`encode_float`] or [`decrease_exponent_to`] failed; `Display` is phe's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// `|int_rep| > max_int` (`ValueError`).
    #[error("Integer needs to be within +/- {max_int} but got {int_rep}")]
    OutOfRange {
        /// phe's `max_int` (−1 for n < 3).
        max_int: BigInt,
        /// The integer representation that did not fit.
        int_rep: BigInt,
    },
    /// `|int_rep| > max_int` and `max_int` or `int_rep` has more than 4,300 decimal digits: Python
    /// ≥ 3.11 fails while formatting the message above (`ValueError`).
    #[error(
        "Exceeds the limit (4300 digits) for integer string conversion; \
         use sys.set_int_max_str_digits() to increase the limit"
    )]
    IntStrDigitsLimit,
    /// Encoding ±inf: `fractions.Fraction(inf)` raises (`OverflowError`).
    #[error("cannot convert Infinity to integer ratio")]
    Infinite,
    /// Encoding NaN: `fractions.Fraction(nan)` raises (`ValueError`).
    #[error("cannot convert NaN to integer ratio")]
    NaN,
    /// `decrease_exponent_to` asked to raise the exponent (`ValueError`). The missing space in
    /// "thanold" is phe's (two adjacent string literals).
    #[error("New exponent {new_exponent} should be more negative thanold exponent {old_exponent}")]
    ExponentIncrease {
        /// The requested exponent.
        new_exponent: i64,
        /// The current, smaller exponent.
        old_exponent: i64,
    },
    /// `decrease_exponent_to` with n = 0: `x % 0` (`ZeroDivisionError`).
    #[error("integer modulo by zero")]
    ZeroModulus,
}

impl EncodeError {
    /// The Python exception phe raises.
    pub fn kind(&self) -> ErrorKind {
        match self {
            EncodeError::Infinite => ErrorKind::OverflowError,
            EncodeError::ZeroModulus => ErrorKind::ZeroDivisionError,
            EncodeError::OutOfRange { .. }
            | EncodeError::IntStrDigitsLimit
            | EncodeError::NaN
            | EncodeError::ExponentIncrease { .. } => ErrorKind::ValueError,
        }
    }
}

/// Why [`decode`] failed; `Display` is phe's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// `encoding ≥ n` (`ValueError`).
    #[error("Attempted to decode corrupted number")]
    Corrupted,
    /// `max_int < encoding < n − max_int`: the overflow band (`OverflowError`).
    #[error("Overflow detected in decrypted number")]
    Overflow,
    /// Negative exponent and `|mantissa| / 16^-exponent` rounds to 2^1024 or more (`OverflowError`).
    #[error("decoded result too large for a float")]
    FloatOverflow,
    /// Not a phe error: the int result would exceed [`MAX_DECODED_INT_BITS`].
    #[error("decoded integer would have {bits} bits, more than this model's limit of 2^22")]
    IntTooLarge {
        /// Bit length of the result phe would compute.
        bits: u128,
    },
}

impl DecodeError {
    /// The Python exception phe raises ([`ErrorKind::LimitExceeded`] for [`DecodeError::IntTooLarge`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            DecodeError::Corrupted => ErrorKind::ValueError,
            DecodeError::Overflow | DecodeError::FloatOverflow => ErrorKind::OverflowError,
            DecodeError::IntTooLarge { .. } => ErrorKind::LimitExceeded,
        }
    }
}

/// 10^4300: Python refuses to format ints at least this large in magnitude.
fn str_digits_bound() -> &'static BigUint {
    static BOUND: OnceLock<BigUint> = OnceLock::new();
    BOUND.get_or_init(|| BigUint::from(10u32).pow(PY_INT_MAX_STR_DIGITS as u32))
}

/// phe's range check `abs(int_rep) > max_int`, with the error Python ≥ 3.11 actually raises.
fn check_range(max_int: &BigInt, int_rep: &BigInt) -> Result<(), EncodeError> {
    if BigInt::from(int_rep.magnitude().clone()) > *max_int {
        // '%d' % (max_int, int_rep) refuses either operand beyond 4300 digits (the sign is not counted).
        let bound = str_digits_bound();
        if max_int.magnitude() >= bound || int_rep.magnitude() >= bound {
            return Err(EncodeError::IntStrDigitsLimit);
        }
        return Err(EncodeError::OutOfRange { max_int: max_int.clone(), int_rep: int_rep.clone() });
    }
    Ok(())
}

/// `int_rep % n` with Python's sign convention (n > 0: non-negative), after [`check_range`].
fn wrap(n: &BigUint, int_rep: &BigInt, exponent: i64) -> Encoded {
    // check_range passed, so max_int ≥ 0 and n ≥ 3: the modulus is never zero here.
    let encoding = int_rep.mod_floor(&BigInt::from(n.clone())).into_parts().1;
    Encoded { encoding, exponent }
}

/// phe's `EncodedNumber.encode(public_key, value)` for a Python int: exponent 0, `encoding = value mod n`.
///
/// Fails with phe's `ValueError` when `|value| > max_int(n)`.
pub fn encode_int(n: &BigUint, value: &BigInt) -> Result<Encoded, EncodeError> {
    check_range(&max_int_signed(n), value)?;
    Ok(wrap(n, value, 0))
}

/// phe's `EncodedNumber.encode(public_key, value)` for a Python float (`precision=None`).
///
/// The exponent is `floor((frexp(x).1 − 53) / 4)`, fine enough for the float's last bit, so the
/// encoding is exact: `int_rep = x · 16^-exponent`, `encoding = int_rep mod n`. Note that −0.0
/// encodes like 0.0 (`Fraction(-0.0) == 0`) and so decodes to +0.0. Fails for ±inf / NaN like
/// `fractions.Fraction`, and with phe's `ValueError` if `|int_rep| > max_int(n)` (only for n < 2^58).
/// Floats with |x| ≥ 2^52 get an exponent ≥ 0 and therefore [`decode`] to a Python int, as in phe.
pub fn encode_float(n: &BigUint, value: f64) -> Result<Encoded, EncodeError> {
    encode_float_impl(n, value, None)
}

/// phe's `EncodedNumber.encode(public_key, value, max_exponent=max_exponent)` for a float: as
/// [`encode_float`] with exponent `min(max_exponent, floor((frexp(x).1 − 53) / 4))`.
///
/// A small `max_exponent` makes `int_rep` large and may exceed `max_int`. For absurd values (an
/// `int_rep` beyond 4,300 digits) the error is computed without building `int_rep`, where phe would
/// first build it.
pub fn encode_float_with_max_exponent(n: &BigUint, value: f64, max_exponent: i64) -> Result<Encoded, EncodeError> {
    encode_float_impl(n, value, Some(max_exponent))
}

/// `math.frexp(x)[1]`: the e with x = m·2^e, 0.5 ≤ |m| < 1 (0 for zero, inf and NaN).
fn frexp_exponent(x: f64) -> i64 {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    match biased {
        0x7ff => 0,
        0 if fraction == 0 => 0,
        0 => i64::from(64 - fraction.leading_zeros()) - 1074,
        _ => biased - 1022,
    }
}

/// A finite double as (negative, m, e) with |x| = m·2^e exactly, m < 2^53.
fn decompose(x: f64) -> (bool, u64, i64) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    let negative = bits >> 63 == 1;
    if biased == 0 {
        (negative, fraction, -1074)
    } else {
        (negative, fraction | (1 << 52), biased - 1075)
    }
}

/// `round(m / 2^shift)` with Python's `round` of a `Fraction`: to nearest, ties to even.
fn round_half_even_shr(m: &BigUint, shift: u128) -> BigUint {
    if shift == 0 {
        return m.clone();
    }
    let len = u128::from(m.bits());
    if shift > len {
        // m < 2^len ≤ 2^(shift-1): below one half.
        return BigUint::zero();
    }
    let shift = shift as u64;
    let quotient = m >> shift;
    let half = m.bit(shift - 1);
    // Sticky: any bit below the half bit (m ≠ 0 here since shift ≤ len).
    let sticky = m.trailing_zeros().is_some_and(|tz| tz < shift - 1);
    if half && (sticky || quotient.bit(0)) {
        quotient + 1u32
    } else {
        quotient
    }
}

fn encode_float_impl(n: &BigUint, x: f64, max_exponent: Option<i64>) -> Result<Encoded, EncodeError> {
    let prec_exponent = (frexp_exponent(x) - FLOAT_MANTISSA_BITS).div_euclid(LOG2_BASE);
    let exponent = max_exponent.map_or(prec_exponent, |m| m.min(prec_exponent));
    // fractions.Fraction(x) is evaluated before anything can fail.
    if x.is_nan() {
        return Err(EncodeError::NaN);
    }
    if x.is_infinite() {
        return Err(EncodeError::Infinite);
    }
    let max_int = max_int_signed(n);
    let (negative, m, e2) = decompose(x);
    // int_rep = round(m · 2^e2 · 16^-exponent) = round(m · 2^shift).
    let shift = i128::from(e2) - i128::from(LOG2_BASE) * i128::from(exponent);
    let magnitude = if m == 0 {
        BigUint::zero()
    } else if shift >= 0 {
        let bits = i128::from(64 - m.leading_zeros()) + shift;
        // A result of 14,300+ bits has more than 4,300 digits and necessarily exceeds max_int
        // (or max_int itself is too long to format): the error is known without the number.
        if bits > 14_300 && bits > max_int.bits() as i128 {
            return Err(EncodeError::IntStrDigitsLimit);
        }
        BigUint::from(m) << (shift as u64)
    } else {
        // Unreachable with phe's exponent choice (exponent ≤ prec_exponent keeps 4·exponent ≤ e2),
        // kept for fidelity to `round(Fraction)`.
        round_half_even_shr(&BigUint::from(m), shift.unsigned_abs())
    };
    let int_rep = BigInt::from_biguint(if negative { Sign::Minus } else { Sign::Plus }, magnitude);
    check_range(&max_int, &int_rep)?;
    Ok(wrap(n, &int_rep, exponent))
}

/// phe's `EncodedNumber.decrease_exponent_to(new_exp)`: the same value with a smaller exponent,
/// `encoding · 16^(exponent − new_exp) mod n`.
///
/// Like phe, nothing checks that the result still decodes: `|mantissa| · 16^k > max_int` silently
/// wraps (typically into the overflow band). Errors: `new_exp > exponent` (phe's `ValueError`) and
/// n = 0 (`ZeroDivisionError`). The factor is reduced mod n first, which gives phe's result without
/// phe's `16**k` for huge k.
pub fn decrease_exponent_to(n: &BigUint, enc: &Encoded, new_exp: i64) -> Result<Encoded, EncodeError> {
    if new_exp > enc.exponent {
        return Err(EncodeError::ExponentIncrease { new_exponent: new_exp, old_exponent: enc.exponent });
    }
    if n.is_zero() {
        return Err(EncodeError::ZeroModulus);
    }
    let k = (i128::from(enc.exponent) - i128::from(new_exp)) as u128;
    let factor = BigUint::from(BASE).modpow(&BigUint::from(k), n);
    Ok(Encoded { encoding: (&enc.encoding * factor) % n, exponent: new_exp })
}

/// phe's `EncodedNumber.decode()`: the signed mantissa times 16^exponent, as a Python int
/// (`exponent ≥ 0`) or the correctly rounded Python float (`exponent < 0`).
///
/// Errors as phe: `encoding ≥ n` → [`DecodeError::Corrupted`]; encoding in the overflow band
/// `(max_int, n − max_int)` → [`DecodeError::Overflow`]; a float result that rounds to ≥ 2^1024 →
/// [`DecodeError::FloatOverflow`]. Beyond phe: an int result longer than [`MAX_DECODED_INT_BITS`]
/// → [`DecodeError::IntTooLarge`]. A float result too small underflows to ±0.0 like Python (−0.0
/// for a negative mantissa); a zero mantissa gives +0.0.
pub fn decode(n: &BigUint, enc: &Encoded) -> Result<Value, DecodeError> {
    if enc.encoding >= *n {
        return Err(DecodeError::Corrupted);
    }
    // For n < 3, phe's max_int is −1: no encoding below n is positive or negative.
    let max_int = max_int(n);
    let (negative, magnitude) = if n < &BigUint::from(3u32) {
        return Err(DecodeError::Overflow);
    } else if enc.encoding <= max_int {
        (false, enc.encoding.clone())
    } else if enc.encoding >= n - &max_int {
        (true, n - &enc.encoding)
    } else {
        return Err(DecodeError::Overflow);
    };

    if enc.exponent >= 0 {
        // Integer multiplication, exact.
        if magnitude.is_zero() {
            return Ok(Value::Int(BigInt::zero()));
        }
        let shift = u128::from(LOG2_BASE as u64) * enc.exponent as u128;
        let bits = u128::from(magnitude.bits()) + shift;
        if bits > u128::from(MAX_DECODED_INT_BITS) {
            return Err(DecodeError::IntTooLarge { bits });
        }
        let sign = if negative { Sign::Minus } else { Sign::Plus };
        Ok(Value::Int(BigInt::from_biguint(sign, magnitude << (shift as u64))))
    } else {
        let shift = u128::from(LOG2_BASE as u64) * u128::from(enc.exponent.unsigned_abs());
        ratio_to_f64(negative, &magnitude, shift).map(Value::Float)
    }
}

/// Python's `int / 2**shift` for the int ±`magnitude`: correctly rounded to nearest-even, with
/// gradual underflow to subnormals and ±0.0, and `OverflowError` when the rounded result is ≥ 2^1024.
/// Pure integer arithmetic: one rounding step, so no double rounding.
fn ratio_to_f64(negative: bool, magnitude: &BigUint, shift: u128) -> Result<f64, DecodeError> {
    const SIGNIFICAND_BITS: i128 = 53;
    const MIN_ULP_EXPONENT: i128 = -1074; // ulp of the subnormals
    let sign_bit = u64::from(negative) << 63;
    if magnitude.is_zero() {
        // Python: 0 / d is +0.0 (a zero int has no sign).
        return Ok(0.0);
    }
    // 2^e ≤ value < 2^(e+1).
    let e = i128::from(magnitude.bits()) - 1 - shift as i128;
    if e >= 1024 {
        return Err(DecodeError::FloatOverflow);
    }
    // value ≈ r · 2^q with r the rounded significand: q is the exponent of the result's ulp.
    let mut q = (e - (SIGNIFICAND_BITS - 1)).max(MIN_ULP_EXPONENT);
    let drop = shift as i128 + q; // value / 2^q = magnitude / 2^drop
    let r = if drop <= 0 {
        magnitude << (drop.unsigned_abs() as u64) // exact, fewer than 54 bits
    } else {
        round_half_even_shr(magnitude, drop as u128)
    };
    let mut r = u64::try_from(r).expect("rounded significand has at most 54 bits");
    if r == 0 {
        return Ok(f64::from_bits(sign_bit)); // underflow to ±0.0
    }
    if r == 1 << 53 {
        // Rounding carried into a new binade.
        r = 1 << 52;
        q += 1;
    }
    let bits = if r < 1 << 52 {
        // Subnormal: q is −1074 and the fraction field is r itself.
        r
    } else {
        let biased = q + 1075; // q = biased − 1023 − 52
        if biased >= 0x7ff {
            return Err(DecodeError::FloatOverflow);
        }
        ((biased as u64) << 52) | (r & ((1 << 52) - 1))
    };
    Ok(f64::from_bits(sign_bit | bits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::{Num, One};
    use proptest::prelude::*;
    use std::path::Path;

    /// The fixture's 128-bit modulus: (2^64 − 59)(2^64 − 83).
    fn n128() -> BigUint {
        (BigUint::from(u64::MAX - 58)) * BigUint::from(u64::MAX - 82)
    }

    fn big(s: &str) -> BigInt {
        BigInt::from_str_radix(s, 10).unwrap()
    }

    fn enc(encoding: BigUint, exponent: i64) -> Encoded {
        Encoded { encoding, exponent }
    }

    fn dec_float(n: &BigUint, e: &Encoded) -> f64 {
        match decode(n, e).unwrap() {
            Value::Float(x) => x,
            v => panic!("expected a float, got {v:?}"),
        }
    }

    /// What phe's `decode(encode(x))` returns: ints for |x| ≥ 2^52 (their exponent is ≥ 0), +0.0 for −0.0.
    fn round_trip_value(x: f64) -> Value {
        if x.abs() >= 2f64.powi(52) {
            Value::Int(num_traits::FromPrimitive::from_f64(x).unwrap())
        } else {
            Value::Float(if x == 0.0 { 0.0 } else { x })
        }
    }

    /// Equality with floats compared bit for bit (so −0.0 ≠ 0.0).
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }

    /// The encoding of the signed mantissa `m` (assumed within ±max_int).
    fn wrap_signed(n: &BigUint, m: &BigInt) -> BigUint {
        m.mod_floor(&BigInt::from(n.clone())).to_biguint().unwrap()
    }

    #[test]
    fn max_int_is_n_over_3_minus_1() {
        assert_eq!(max_int(&BigUint::from(100u32)), BigUint::from(32u32));
        assert_eq!(max_int(&BigUint::from(3u32)), BigUint::zero());
        assert_eq!(max_int(&BigUint::from(2u32)), BigUint::zero()); // phe: −1
        assert_eq!(max_int(&n128()), n128() / 3u32 - 1u32);
    }

    #[test]
    fn int_edges() {
        let n = n128();
        let m = BigInt::from(max_int(&n));
        let nn = BigInt::from(n.clone());
        for v in [BigInt::zero(), BigInt::one(), -BigInt::one(), m.clone(), -m.clone()] {
            let e = encode_int(&n, &v).unwrap();
            assert_eq!(e.exponent, 0);
            assert_eq!(BigInt::from(e.encoding.clone()), v.mod_floor(&nn));
            assert_eq!(decode(&n, &e).unwrap(), Value::Int(v.clone()));
        }
        let too_big = &m + 1;
        let err = encode_int(&n, &too_big).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueError);
        assert_eq!(err.to_string(), format!("Integer needs to be within +/- {m} but got {too_big}"));
        let err = encode_int(&n, &-&too_big).unwrap_err();
        assert_eq!(err.to_string(), format!("Integer needs to be within +/- {m} but got -{too_big}"));
        // Python ≥ 3.11 cannot even format the message for a 4,301-digit int.
        let huge = BigInt::from(10u32).pow(4300u32);
        assert_eq!(encode_int(&n, &huge).unwrap_err(), EncodeError::IntStrDigitsLimit);
        let long = BigInt::from(10u32).pow(4299u32);
        assert!(matches!(encode_int(&n, &-long).unwrap_err(), EncodeError::OutOfRange { .. }));
    }

    #[test]
    fn decode_bands() {
        let n = n128();
        let m = max_int(&n);
        let ok = |v: &BigUint| decode(&n, &enc(v.clone(), 0));
        assert_eq!(ok(&m).unwrap(), Value::Int(BigInt::from(m.clone())));
        let over = ok(&(&m + 1u32)).unwrap_err();
        assert_eq!(
            (over.kind(), over.to_string().as_str()),
            (ErrorKind::OverflowError, "Overflow detected in decrypted number")
        );
        assert_eq!(ok(&(&n - &m - 1u32)).unwrap_err(), DecodeError::Overflow);
        assert_eq!(ok(&(&n - &m)).unwrap(), Value::Int(-BigInt::from(m.clone())));
        assert_eq!(ok(&(&n - 1u32)).unwrap(), Value::Int(-BigInt::one()));
        let bad = ok(&n).unwrap_err();
        assert_eq!(
            (bad.kind(), bad.to_string().as_str()),
            (ErrorKind::ValueError, "Attempted to decode corrupted number")
        );
        assert_eq!(decode(&n, &enc(BigUint::from(3u32), 2)).unwrap(), Value::Int(BigInt::from(768)));
        // n < 3: phe's max_int is −1, nothing decodes.
        assert_eq!(decode(&BigUint::from(2u32), &enc(BigUint::zero(), 0)).unwrap_err(), DecodeError::Overflow);
        assert_eq!(decode(&BigUint::zero(), &enc(BigUint::zero(), 0)).unwrap_err(), DecodeError::Corrupted);
    }

    #[test]
    fn decode_int_limit() {
        let n = n128();
        let largest = enc(BigUint::from(15u32), (1 << 20) - 1); // 4 + 2^22 − 4 bits
        assert!(matches!(decode(&n, &largest).unwrap(), Value::Int(v) if v.bits() == 1 << 22));
        let too_far = enc(BigUint::from(2u32), 1 << 20);
        let err = decode(&n, &too_far).unwrap_err();
        assert_eq!((err.kind(), err), (ErrorKind::LimitExceeded, DecodeError::IntTooLarge { bits: (1 << 22) + 2 }));
        assert_eq!(decode(&n, &enc(BigUint::zero(), i64::MAX)).unwrap(), Value::Int(BigInt::zero()));
    }

    #[test]
    fn float_encodings() {
        let n = n128();
        let nn = BigInt::from(n.clone());
        // (x, exponent, int_rep), worked out by hand from frexp.
        let cases: [(f64, i64, BigInt); 9] = [
            (3.5, -13, BigInt::from(7u64 << 51)),     // frexp 2 → floor(-51/4)
            (-0.125, -14, -BigInt::from(1u64 << 53)), // frexp −2 → floor(-55/4)
            (0.0, -14, BigInt::zero()),               // frexp 0
            (-0.0, -14, BigInt::zero()),              // Fraction(-0.0) == 0
            (1.0, -13, BigInt::from(1u64 << 52)),
            (5e-324, -282, BigInt::from(1u64 << 54)), // frexp −1073 → floor(-1126/4)
            (2.2250738585072014e-308, -269, BigInt::from(1u64 << 54)), // 2^-1022
            (1.7976931348623157e+308, 242, BigInt::from(((1u64 << 53) - 1) << 3)),
            (0.1, -14, BigInt::from(0x0019_9999_9999_999a_u64)), // 0x1.999999999999ap-4
        ];
        for (x, exponent, int_rep) in cases {
            let e = encode_float(&n, x).unwrap();
            assert_eq!((e.exponent, BigInt::from(e.encoding.clone())), (exponent, int_rep.mod_floor(&nn)), "{x}");
            let back = decode(&n, &e).unwrap();
            assert!(same(&back, &round_trip_value(x)), "{x}: {back:?}");
        }
        // Floats from 2^52 up have exponent ≥ 0 and come back as Python ints.
        assert_eq!(decode(&n, &encode_float(&n, 1e300).unwrap()).unwrap().to_json_string(),
                   "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160");
        assert_eq!(
            decode(&n, &encode_float(&n, 4503599627370496.0).unwrap()).unwrap(),
            Value::Int(BigInt::from(1u64 << 52))
        );
        assert_eq!(
            decode(&n, &encode_float(&n, 4503599627370495.5).unwrap()).unwrap(),
            Value::Float(4503599627370495.5)
        );
        assert_eq!(dec_float(&n, &encode_float(&n, -0.0).unwrap()).to_bits(), 0); // −0.0 → +0.0
        for x in [1e-07, 123456.789, -2.5e-300, 1e15] {
            assert_eq!(dec_float(&n, &encode_float(&n, x).unwrap()).to_bits(), x.to_bits());
        }
        assert_eq!(encode_float(&n, f64::NAN).unwrap_err().to_string(), "cannot convert NaN to integer ratio");
        let inf = encode_float(&n, f64::NEG_INFINITY).unwrap_err();
        assert_eq!(
            (inf.kind(), inf.to_string().as_str()),
            (ErrorKind::OverflowError, "cannot convert Infinity to integer ratio")
        );
    }

    #[test]
    fn max_exponent_and_decrease() {
        let n = n128();
        // 0.25 · 16^32 = 2^126 ≤ max_int ≈ 2^126.4 < 0.5 · 16^32.
        let e = encode_float_with_max_exponent(&n, 0.25, -32).unwrap();
        assert_eq!(e, enc(BigUint::one() << 126u32, -32));
        assert_eq!(dec_float(&n, &e), 0.25);
        assert_eq!(encode_float_with_max_exponent(&n, 0.25, 5).unwrap().exponent, -14);
        let err = encode_float_with_max_exponent(&n, -0.5, -32).unwrap_err();
        assert!(matches!(err, EncodeError::OutOfRange { .. }), "{err}");
        assert!(err.to_string().ends_with(" but got -170141183460469231731687303715884105728"), "{err}");
        // Absurd max_exponent: the error without the 2^(2^65)-sized number.
        assert_eq!(encode_float_with_max_exponent(&n, 1.0, i64::MIN).unwrap_err(), EncodeError::IntStrDigitsLimit);
        assert_eq!(encode_float_with_max_exponent(&n, 0.0, i64::MIN).unwrap(), enc(BigUint::zero(), i64::MIN));

        let n = n1024();
        let e = encode_float(&n, -2.5).unwrap(); // exponent −13
        let d = decrease_exponent_to(&n, &e, -32).unwrap();
        assert_eq!(d.exponent, -32);
        assert_eq!(dec_float(&n, &d), -2.5);
        let err = decrease_exponent_to(&n, &d, -31).unwrap_err();
        assert_eq!(err.to_string(), "New exponent -31 should be more negative thanold exponent -32");
        assert_eq!(err.kind(), ErrorKind::ValueError);
        assert_eq!(decrease_exponent_to(&BigUint::zero(), &d, -40).unwrap_err().kind(), ErrorKind::ZeroDivisionError);
        // Huge k: phe's 16**k mod n, via modpow.
        let far = decrease_exponent_to(&n, &enc(BigUint::one(), i64::MAX), i64::MIN).unwrap();
        let k = BigUint::from(u64::MAX);
        assert_eq!(far.encoding, BigUint::from(16u32).modpow(&k, &n));
    }

    #[test]
    fn rounding_helper_ties_to_even() {
        let r = |m: u32, s: u128| round_half_even_shr(&BigUint::from(m), s);
        assert_eq!(r(0b1010, 2), BigUint::from(2u32)); // 2.5 → 2
        assert_eq!(r(0b1110, 2), BigUint::from(4u32)); // 3.5 → 4
        assert_eq!(r(0b1011, 2), BigUint::from(3u32)); // 2.75 → 3
        assert_eq!(r(0b1001, 2), BigUint::from(2u32)); // 2.25 → 2
        assert_eq!(r(1, 1), BigUint::zero()); // 0.5 → 0
        assert_eq!(r(3, 2), BigUint::one()); // 0.75 → 1
        assert_eq!(r(u32::MAX, 100), BigUint::zero());
    }

    #[test]
    fn decode_rounding() {
        let n = n128();
        let d = |m: i128, e: i64| dec_float(&n, &enc(wrap_signed(&n, &BigInt::from(m)), e));
        let two53 = 1i128 << 53;
        // Ties go to even, just above a tie goes up.
        assert_eq!(d(two53 + 1, -1), (two53 as f64) / 16.0);
        assert_eq!(d(two53 + 3, -1), ((two53 + 4) as f64) / 16.0);
        assert_eq!(d(-(two53 + 3), -1), -((two53 + 4) as f64) / 16.0);
        assert_eq!(d((two53 + 1) << 20 | 1, -6), ((two53 + 2) << 20) as f64 / 2f64.powi(24));
        // Subnormals: 2^-1076 · m.
        assert_eq!(d(1, -269).to_bits(), 0); // 0.25 ulp → 0
        assert_eq!(d(2, -269).to_bits(), 0); // tie → even 0
        assert_eq!(d(-2, -269).to_bits(), (-0.0f64).to_bits()); // sign kept
        assert_eq!(d(3, -269), 5e-324); // 0.75 ulp → 1 ulp
        assert_eq!(d(6, -269), 1e-323); // 1.5 ulp → 2 ulp (even)
        assert_eq!(d(10, -269), 1e-323); // 2.5 ulp → 2 ulp
        assert_eq!(d(4, -269), 5e-324);
        assert_eq!(d(1, -268), 1e-323 * 2.0);
        assert_eq!(d(1 << 54, -269), 2.2250738585072014e-308); // 2^-1022
        assert_eq!(d((1 << 54) - 1, -269), 2.2250738585072014e-308); // rounds up into the normals
        assert_eq!(d((1 << 54) - 2, -269), 2.2250738585072014e-308); // tie → even
        assert_eq!(d((1 << 54) - 3, -269), 2.225073858507201e-308); // largest subnormal
        assert_eq!(d(0, -10).to_bits(), 0);
        assert_eq!(dec_float(&n, &enc(BigUint::from(7u32), i64::MIN)).to_bits(), 0);
        assert_eq!(d(123456789, -4), 123456789.0 / 65536.0);
        assert_eq!(d(7, -1), 0.4375);
    }

    #[test]
    fn decode_float_overflow() {
        let n = (BigUint::one() << 1100u32) + 1u32; // any n: encoding depends only on n
        let top = BigUint::from((1u64 << 53) - 1) << 971u32; // f64::MAX
        let half = BigUint::one() << 970u32;
        let d = |m: BigUint, neg: bool| {
            let m = BigInt::from_biguint(if neg { Sign::Minus } else { Sign::Plus }, m << 4u32);
            decode(&n, &enc(wrap_signed(&n, &m), -1))
        };
        assert_eq!(d(top.clone(), false).unwrap(), Value::Float(f64::MAX));
        assert_eq!(d(top.clone(), true).unwrap(), Value::Float(f64::MIN));
        assert_eq!(d(&top + &half - 1u32, false).unwrap(), Value::Float(f64::MAX));
        let err = d(&top + &half, true).unwrap_err(); // tie → even → 2^1024
        assert_eq!(
            (err.kind(), err.to_string().as_str()),
            (ErrorKind::OverflowError, "decoded result too large for a float")
        );
        assert_eq!(d(BigUint::one() << 1024u32, false).unwrap_err(), DecodeError::FloatOverflow);
        assert_eq!(d(BigUint::one() << 1090u32, false).unwrap_err(), DecodeError::FloatOverflow);
    }

    #[test]
    fn repr_matches_python() {
        for (x, s) in [
            (3.0, "3.0"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1e-07, "1e-07"),
            (1.5e16, "1.5e+16"),
            (123456.789, "123456.789"),
            (0.0001, "0.0001"),
            (1e22, "1e+22"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.1, "0.1"),
            (5e-324, "5e-324"),
            (1.7976931348623157e+308, "1.7976931348623157e+308"),
            (-2.5e-5, "-2.5e-05"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (100.0, "100.0"),
            // Exact ties between two 17-digit candidates: Python takes the even digit. (Written as
            // exact sums: the literals would need more than 17 digits.)
            (233891771783429.0 + 0.625, "233891771783429.62"),
            (-(2056329632651247.0 + 0.25), "-2056329632651247.2"),
            (21346066203752.0 + 0.5625, "21346066203752.562"),
            (1043953963362149.0 + 0.25, "1043953963362149.2"),
        ] {
            assert_eq!(Value::Float(x).to_json_string(), s);
        }
        assert_eq!(
            Value::Int(big("-123456789012345678901234567890")).to_json_string(),
            "-123456789012345678901234567890"
        );
        assert_eq!(Value::Float(f64::NAN).to_json_string(), "NaN");
        assert_eq!(python_float_repr(f64::NEG_INFINITY), "-inf");
    }

    // ---- the fixture made with the real phe ----

    fn hex_int(v: &serde_json::Value) -> BigInt {
        let s = v.as_str().expect("hex string");
        let (neg, digits) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let m = BigInt::from_str_radix(digits.strip_prefix("0x").expect("0x prefix"), 16).unwrap();
        if neg {
            -m
        } else {
            m
        }
    }

    fn hex_uint(v: &serde_json::Value) -> BigUint {
        hex_int(v).to_biguint().expect("non-negative")
    }

    fn float_bits(v: &serde_json::Value) -> f64 {
        f64::from_bits(u64::from_str_radix(v.as_str().unwrap(), 16).unwrap())
    }

    fn check_error(kind: ErrorKind, message: String, expect: &serde_json::Value, what: &str) {
        assert_eq!(kind.python_name(), expect["error"].as_str(), "{what}");
        assert_eq!(Some(message.as_str()), expect["message"].as_str(), "{what}");
    }

    fn check_encoded(got: Result<Encoded, EncodeError>, expect: &serde_json::Value, what: &str) {
        match got {
            Ok(e) => {
                assert!(expect.get("error").is_none(), "{what}: phe raised {expect}, we gave {e:?}");
                assert_eq!(e.encoding, hex_uint(&expect["encoding"]), "{what}");
                assert_eq!(Some(e.exponent), expect["exponent"].as_i64(), "{what}");
            }
            Err(err) => check_error(err.kind(), err.to_string(), expect, what),
        }
    }

    #[test]
    fn phe_fixture() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/encoding/phe-encoding.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut checked = 0;
        for group in doc["moduli"].as_array().unwrap() {
            let name = group["name"].as_str().unwrap();
            let n = hex_uint(&group["n"]);
            let phe_max_int = hex_int(&group["max_int"]);
            assert_eq!(max_int_signed(&n), phe_max_int, "{name}");
            for (i, case) in group["cases"].as_array().unwrap().iter().enumerate() {
                let what = format!("{name} case {i}: {case}");
                let expect = &case["expect"];
                match case["op"].as_str().unwrap() {
                    "encode_int" => check_encoded(encode_int(&n, &hex_int(&case["value"])), expect, &what),
                    "encode_float" => {
                        let x = float_bits(&case["bits"]);
                        if x.is_finite() {
                            assert_eq!(Some(python_float_repr(x).as_str()), case["repr"].as_str(), "{what}");
                        }
                        let got = match case["max_exponent"].as_i64() {
                            None => encode_float(&n, x),
                            Some(me) => encode_float_with_max_exponent(&n, x, me),
                        };
                        check_encoded(got, expect, &what);
                    }
                    "decrease" => {
                        let e = enc(hex_uint(&case["encoding"]), case["exponent"].as_i64().unwrap());
                        let new = case["new_exponent"].as_i64().unwrap();
                        check_encoded(decrease_exponent_to(&n, &e, new), expect, &what);
                    }
                    "decode" => {
                        let e = enc(hex_uint(&case["encoding"]), case["exponent"].as_i64().unwrap());
                        match decode(&n, &e) {
                            Ok(v) => {
                                let json = v.to_json_string();
                                match v {
                                    Value::Int(_) => {
                                        assert_eq!(Some(json.as_str()), expect["int"].as_str(), "{what}")
                                    }
                                    Value::Float(x) => {
                                        assert_eq!(x.to_bits(), float_bits(&expect["float"]).to_bits(), "{what}");
                                        assert_eq!(Some(json.as_str()), expect["repr"].as_str(), "{what}");
                                    }
                                }
                            }
                            Err(err) => check_error(err.kind(), err.to_string(), expect, &what),
                        }
                    }
                    op => panic!("unknown op {op}"),
                }
                checked += 1;
            }
        }
        assert!(checked > 1000, "only {checked} cases");
        for pair in doc["repr"].as_array().unwrap() {
            let x = float_bits(&pair[0]);
            assert_eq!(Some(Value::Float(x).to_json_string().as_str()), pair[1].as_str(), "{pair}");
        }
    }

    // ---- round trips ----

    fn n1024() -> BigUint {
        // Any odd 1024-bit number serves: encoding depends only on n.
        (BigUint::one() << 1023u32) + BigUint::from(0x1234_5678_9abc_def1u64)
    }

    proptest! {
        #[test]
        fn float_round_trip(bits in any::<u64>(), k in 0i64..200) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            for n in [n128(), n1024()] {
                let e = encode_float(&n, x).unwrap();
                let back = decode(&n, &e).unwrap();
                prop_assert!(same(&back, &round_trip_value(x)), "{} → {:?}", x, back);
            }
            // Lowering the exponent keeps the value (a float once the exponent is negative).
            let n = n1024();
            let e = encode_float(&n, x).unwrap();
            let lower = decrease_exponent_to(&n, &e, e.exponent - k).unwrap();
            let want = if lower.exponent < 0 { Value::Float(if x == 0.0 { 0.0 } else { x }) } else { round_trip_value(x) };
            prop_assert!(same(&decode(&n, &lower).unwrap(), &want));
        }

        #[test]
        fn int_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..140), negative in any::<bool>()) {
            for n in [n128(), n1024()] {
                let m = BigUint::from_bytes_le(&bytes) % (max_int(&n) + 1u32);
                let v = BigInt::from_biguint(if negative { Sign::Minus } else { Sign::Plus }, m);
                let e = encode_int(&n, &v).unwrap();
                prop_assert_eq!(decode(&n, &e).unwrap(), Value::Int(v));
            }
        }
    }
}
