//! The service's wire protocol: length-prefixed binary frames over a Unix stream socket
//! (docs/service.md has the full description, with the reasons for it).
//!
//! A frame is a little-endian `u32` length (of what follows it), a kind byte, and the kind's
//! body. Integers are little-endian; big integers are a `u32` byte count and their big-endian
//! bytes; strings are a `u32` byte count and UTF-8. A connection begins with `Hello`/`Welcome`,
//! which agree on [`VERSION`]; then a client may ask for the key list, a public key, the status or
//! the metrics, and may `Open` one key to decrypt under. After `Open`, `Submit` frames carry
//! ciphertexts and `Results` frames carry their outcomes, one per ciphertext, in submission order.
//! No frame carries a private key.

use crate::item::ItemError;
use num_bigint::BigUint;
use std::io::{self, Read};
use std::time::Duration;

/// The protocol version; a service answers only clients of its own version.
pub const VERSION: u16 = 1;
/// The largest frame either side accepts: a `Submit` of [`MAX_BATCH`] 8192-bit ciphertexts fits.
pub const MAX_FRAME_BYTES: usize = 4 << 20;
/// The most ciphertexts one `Submit` frame carries.
pub const MAX_BATCH: usize = 1024;

/// A client's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// The first frame: the client's protocol version.
    Hello { version: u16 },
    /// The service's keys.
    Keys,
    /// One key's modulus n.
    PublicKey { key_id: String },
    /// Decrypt under this key from now on (once per connection).
    Open { key_id: String },
    /// Ciphertexts to decrypt (after `Open`).
    Submit { ciphertexts: Vec<BigUint> },
    /// The service's state, as JSON.
    Status,
    /// The service's metrics, in Prometheus's text format.
    Metrics,
}

/// One of the service's keys, as the key list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    pub key_id: String,
    pub bits: u32,
}

/// The service's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    Welcome {
        version: u16,
        service: String,
    },
    Keys(Vec<KeyInfo>),
    PublicKey {
        n: BigUint,
    },
    /// The key is open: its modulus, and how many ciphertexts the service holds for this client
    /// at most (submitted and not yet answered); beyond it, the service stops reading.
    Opened {
        n: BigUint,
        credit: u32,
    },
    /// The outcomes of the next ciphertexts, in submission order.
    Results(Vec<Result<BigUint, ItemError>>),
    Status(String),
    Metrics(String),
    /// The request was refused (the connection stays usable unless the error says otherwise).
    Error(RequestError),
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("the service speaks protocol version {service}, this client {client}")]
    Version { service: u16, client: u16 },
    #[error("the service has no key {0}")]
    UnknownKey(String),
    #[error("{0}")]
    Denied(String),
    #[error("malformed request: {0}")]
    Malformed(String),
    #[error("{0}")]
    Unavailable(String),
}

mod kind {
    pub const HELLO: u8 = 0x01;
    pub const KEYS: u8 = 0x02;
    pub const PUBLIC_KEY: u8 = 0x03;
    pub const OPEN: u8 = 0x04;
    pub const SUBMIT: u8 = 0x05;
    pub const STATUS: u8 = 0x06;
    pub const METRICS: u8 = 0x07;
    pub const WELCOME: u8 = 0x81;
    pub const KEY_LIST: u8 = 0x82;
    pub const PUBLIC_KEY_REPLY: u8 = 0x83;
    pub const OPENED: u8 = 0x84;
    pub const RESULTS: u8 = 0x85;
    pub const STATUS_REPLY: u8 = 0x86;
    pub const METRICS_REPLY: u8 = 0x87;
    pub const ERROR: u8 = 0xff;
}

/// An item's outcome on the wire: a status byte, then the plaintext or the error's detail.
mod outcome {
    pub const OK: u8 = 0;
    pub const INVALID: u8 = 1;
    pub const STATUS: u8 = 2;
    pub const CORRUPTED: u8 = 3;
    pub const BACKEND: u8 = 4;
    pub const TIMEOUT: u8 = 5;
    pub const LOST: u8 = 6;
}

mod error_kind {
    pub const VERSION: u8 = 1;
    pub const UNKNOWN_KEY: u8 = 2;
    pub const DENIED: u8 = 3;
    pub const MALFORMED: u8 = 4;
    pub const UNAVAILABLE: u8 = 5;
}

/// A frame body under construction.
struct Writer(Vec<u8>);

impl Writer {
    fn new(kind: u8) -> Self {
        Writer(vec![0, 0, 0, 0, kind])
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend(v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend(v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend(v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend(b);
    }
    /// An integer as its big-endian bytes (`[0]` for zero), written straight from its digits.
    fn big(&mut self, v: &BigUint) {
        let len = v.bits().div_ceil(8).max(1) as usize;
        self.u32(len as u32);
        let start = self.0.len();
        self.0.resize(start + len, 0);
        let out = &mut self.0[start..];
        for (k, digit) in v.iter_u64_digits().enumerate() {
            let end = len - 8 * k;
            let take = end.min(8);
            out[end - take..end].copy_from_slice(&digit.to_be_bytes()[8 - take..]);
        }
    }
    /// An item's error outcome that carries a message.
    fn explained(&mut self, status: u8, why: &str) {
        self.u8(status);
        self.bytes(why.as_bytes());
    }
    fn finish(mut self) -> Vec<u8> {
        let len = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

/// A frame body being parsed; every read checks the length.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(malformed("a frame ends early"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> io::Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn bytes(&mut self) -> io::Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// An integer from its big-endian bytes, read straight into digits.
    fn big(&mut self) -> io::Result<BigUint> {
        let bytes = self.bytes()?;
        let digits = bytes.rchunks(4).map(|chunk| {
            let mut word = [0u8; 4];
            word[4 - chunk.len()..].copy_from_slice(chunk);
            u32::from_be_bytes(word)
        });
        Ok(BigUint::new(digits.collect()))
    }
    fn string(&mut self) -> io::Result<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| malformed("a string is not UTF-8"))
    }
    /// A count of items that each take at least `min_bytes`, checked against what is left.
    fn count(&mut self, min_bytes: usize) -> io::Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes) > self.0.len() {
            return Err(malformed("a count exceeds the frame"));
        }
        Ok(n)
    }
    fn end(self) -> io::Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(malformed("a frame has trailing bytes"))
        }
    }
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// Reads one frame: its kind and body. `Ok(None)` at a clean end of stream (between frames).
fn read_frame(r: &mut impl Read) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len == 0 || len > MAX_FRAME_BYTES {
        return Err(malformed(&format!("a frame of {len} bytes (the limit is {MAX_FRAME_BYTES})")));
    }
    let mut kind = [0u8];
    r.read_exact(&mut kind)?;
    // Grown as the bytes come, not allocated from the length: a frame that never arrives costs
    // only what it sent.
    let mut body = Vec::with_capacity((len - 1).min(64 << 10));
    r.take(len as u64 - 1).read_to_end(&mut body)?;
    if body.len() != len - 1 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(Some((kind[0], body)))
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Request::Hello { version } => {
                let mut w = Writer::new(kind::HELLO);
                w.u16(*version);
                w.finish()
            }
            Request::Keys => Writer::new(kind::KEYS).finish(),
            Request::PublicKey { key_id } => {
                let mut w = Writer::new(kind::PUBLIC_KEY);
                w.bytes(key_id.as_bytes());
                w.finish()
            }
            Request::Open { key_id } => {
                let mut w = Writer::new(kind::OPEN);
                w.bytes(key_id.as_bytes());
                w.finish()
            }
            Request::Submit { ciphertexts } => encode_submit(ciphertexts),
            Request::Status => Writer::new(kind::STATUS).finish(),
            Request::Metrics => Writer::new(kind::METRICS).finish(),
        }
    }

    /// The next request, `None` when the client closed the connection between frames.
    pub fn read(r: &mut impl Read) -> io::Result<Option<Request>> {
        let Some((kind, body)) = read_frame(r)? else { return Ok(None) };
        let mut b = Reader(&body);
        let request = match kind {
            kind::HELLO => Request::Hello { version: b.u16()? },
            kind::KEYS => Request::Keys,
            kind::PUBLIC_KEY => Request::PublicKey { key_id: b.string()? },
            kind::OPEN => Request::Open { key_id: b.string()? },
            kind::SUBMIT => {
                let n = b.count(4)?;
                if n > MAX_BATCH {
                    return Err(malformed(&format!("a batch of {n} ciphertexts (the limit is {MAX_BATCH})")));
                }
                Request::Submit { ciphertexts: (0..n).map(|_| b.big()).collect::<io::Result<_>>()? }
            }
            kind::STATUS => Request::Status,
            kind::METRICS => Request::Metrics,
            other => return Err(malformed(&format!("unknown request kind {other:#04x}"))),
        };
        b.end()?;
        Ok(Some(request))
    }
}

/// A `Submit` frame straight from the ciphertexts (the client's hot path: no intermediate copy).
pub fn encode_submit<'a>(ciphertexts: impl IntoIterator<Item = &'a BigUint>) -> Vec<u8> {
    let mut w = Writer::new(kind::SUBMIT);
    w.u32(0);
    let mut n = 0u32;
    for c in ciphertexts {
        w.big(c);
        n += 1;
    }
    w.0[5..9].copy_from_slice(&n.to_le_bytes());
    w.finish()
}

impl Response {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Response::Welcome { version, service } => {
                let mut w = Writer::new(kind::WELCOME);
                w.u16(*version);
                w.bytes(service.as_bytes());
                w.finish()
            }
            Response::Keys(keys) => {
                let mut w = Writer::new(kind::KEY_LIST);
                w.u32(keys.len() as u32);
                for key in keys {
                    w.bytes(key.key_id.as_bytes());
                    w.u32(key.bits);
                }
                w.finish()
            }
            Response::PublicKey { n } => {
                let mut w = Writer::new(kind::PUBLIC_KEY_REPLY);
                w.big(n);
                w.finish()
            }
            Response::Opened { n, credit } => {
                let mut w = Writer::new(kind::OPENED);
                w.big(n);
                w.u32(*credit);
                w.finish()
            }
            Response::Results(results) => encode_results(results.iter()),
            Response::Status(json) => {
                let mut w = Writer::new(kind::STATUS_REPLY);
                w.bytes(json.as_bytes());
                w.finish()
            }
            Response::Metrics(text) => {
                let mut w = Writer::new(kind::METRICS_REPLY);
                w.bytes(text.as_bytes());
                w.finish()
            }
            Response::Error(error) => {
                let mut w = Writer::new(kind::ERROR);
                let (code, detail) = match error {
                    RequestError::Version { service, client } => {
                        w.u8(error_kind::VERSION);
                        w.u16(*service);
                        w.u16(*client);
                        return w.finish();
                    }
                    RequestError::UnknownKey(id) => (error_kind::UNKNOWN_KEY, id),
                    RequestError::Denied(why) => (error_kind::DENIED, why),
                    RequestError::Malformed(why) => (error_kind::MALFORMED, why),
                    RequestError::Unavailable(why) => (error_kind::UNAVAILABLE, why),
                };
                w.u8(code);
                w.bytes(detail.as_bytes());
                w.finish()
            }
        }
    }

    /// The next response, `None` when the service closed the connection between frames.
    pub fn read(r: &mut impl Read) -> io::Result<Option<Response>> {
        let Some((kind, body)) = read_frame(r)? else { return Ok(None) };
        let mut b = Reader(&body);
        let response = match kind {
            kind::WELCOME => Response::Welcome { version: b.u16()?, service: b.string()? },
            kind::KEY_LIST => {
                let n = b.count(8)?;
                let keys = (0..n).map(|_| Ok(KeyInfo { key_id: b.string()?, bits: b.u32()? }));
                Response::Keys(keys.collect::<io::Result<_>>()?)
            }
            kind::PUBLIC_KEY_REPLY => Response::PublicKey { n: b.big()? },
            kind::OPENED => Response::Opened { n: b.big()?, credit: b.u32()? },
            kind::RESULTS => {
                let n = b.count(1)?;
                Response::Results((0..n).map(|_| read_outcome(&mut b)).collect::<io::Result<_>>()?)
            }
            kind::STATUS_REPLY => Response::Status(b.string()?),
            kind::METRICS_REPLY => Response::Metrics(b.string()?),
            kind::ERROR => Response::Error(match b.u8()? {
                error_kind::VERSION => RequestError::Version { service: b.u16()?, client: b.u16()? },
                error_kind::UNKNOWN_KEY => RequestError::UnknownKey(b.string()?),
                error_kind::DENIED => RequestError::Denied(b.string()?),
                error_kind::MALFORMED => RequestError::Malformed(b.string()?),
                error_kind::UNAVAILABLE => RequestError::Unavailable(b.string()?),
                other => return Err(malformed(&format!("unknown error kind {other}"))),
            }),
            other => return Err(malformed(&format!("unknown response kind {other:#04x}"))),
        };
        b.end()?;
        Ok(Some(response))
    }
}

/// A `Results` frame straight from the outcomes.
pub fn encode_results<'a>(results: impl ExactSizeIterator<Item = &'a Result<BigUint, ItemError>>) -> Vec<u8> {
    let mut w = Writer::new(kind::RESULTS);
    w.u32(results.len() as u32);
    for result in results {
        match result {
            Ok(m) => {
                w.u8(outcome::OK);
                w.big(m);
            }
            Err(ItemError::Status(code)) => {
                w.u8(outcome::STATUS);
                w.u8(*code);
            }
            Err(ItemError::Timeout(after)) => {
                w.u8(outcome::TIMEOUT);
                w.u64(after.as_millis() as u64);
            }
            Err(ItemError::Invalid(why)) => w.explained(outcome::INVALID, why),
            Err(ItemError::Corrupted(why)) => w.explained(outcome::CORRUPTED, why),
            Err(ItemError::Backend(why)) => w.explained(outcome::BACKEND, why),
            Err(ItemError::Lost(why)) => w.explained(outcome::LOST, why),
        }
    }
    w.finish()
}

fn read_outcome(b: &mut Reader) -> io::Result<Result<BigUint, ItemError>> {
    Ok(match b.u8()? {
        outcome::OK => Ok(b.big()?),
        outcome::STATUS => Err(ItemError::Status(b.u8()?)),
        outcome::TIMEOUT => Err(ItemError::Timeout(Duration::from_millis(b.u64()?))),
        outcome::INVALID => Err(ItemError::Invalid(b.string()?)),
        outcome::CORRUPTED => Err(ItemError::Corrupted(b.string()?)),
        outcome::BACKEND => Err(ItemError::Backend(b.string()?)),
        outcome::LOST => Err(ItemError::Lost(b.string()?)),
        other => return Err(malformed(&format!("unknown item outcome {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::RandBigInt;
    use rand::SeedableRng;

    fn round_trip_request(request: Request) {
        let bytes = request.encode();
        assert_eq!(Request::read(&mut bytes.as_slice()).unwrap(), Some(request));
    }

    fn round_trip_response(response: Response) {
        let bytes = response.encode();
        assert_eq!(Response::read(&mut bytes.as_slice()).unwrap(), Some(response));
    }

    #[test]
    fn every_frame_round_trips() {
        round_trip_request(Request::Hello { version: VERSION });
        round_trip_request(Request::Keys);
        round_trip_request(Request::PublicKey { key_id: "0123abcd".into() });
        round_trip_request(Request::Open { key_id: "k".into() });
        round_trip_request(Request::Submit { ciphertexts: vec![BigUint::from(0u8), BigUint::from(1u64 << 40)] });
        round_trip_request(Request::Status);
        round_trip_request(Request::Metrics);
        round_trip_response(Response::Welcome { version: VERSION, service: "ecrt 0.1".into() });
        round_trip_response(Response::Keys(vec![KeyInfo { key_id: "ab".into(), bits: 2048 }]));
        round_trip_response(Response::PublicKey { n: BigUint::from(77u8) });
        round_trip_response(Response::Opened { n: BigUint::from(77u8), credit: 1024 });
        round_trip_response(Response::Results(vec![
            Ok(BigUint::from(5u8)),
            Err(ItemError::Invalid("too large".into())),
            Err(ItemError::Status(3)),
            Err(ItemError::Corrupted("tag".into())),
            Err(ItemError::Backend("openssl".into())),
            Err(ItemError::Timeout(Duration::from_millis(1500))),
            Err(ItemError::Lost("card gone".into())),
        ]));
        round_trip_response(Response::Status("{}".into()));
        round_trip_response(Response::Metrics("# HELP".into()));
        for error in [
            RequestError::Version { service: 1, client: 2 },
            RequestError::UnknownKey("x".into()),
            RequestError::Denied("uid 5".into()),
            RequestError::Malformed("m".into()),
            RequestError::Unavailable("stopping".into()),
        ] {
            round_trip_response(Response::Error(error));
        }
    }

    #[test]
    fn integers_are_big_endian_bytes() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut values: Vec<BigUint> = (0..200u64).map(|bits| rng.gen_biguint(bits * 23)).collect();
        values.extend([BigUint::default(), BigUint::from(1u8), BigUint::from(u64::MAX), BigUint::from(1u8) << 64]);
        for v in values {
            let mut w = Writer::new(0);
            w.big(&v);
            let body = &w.0[5..];
            assert_eq!(&body[4..], v.to_bytes_be().as_slice(), "{v:x}");
            assert_eq!(Reader(body).big().unwrap(), v);
        }
        // Leading zero bytes are read as the same integer.
        let padded = [&5u32.to_le_bytes()[..], &[0, 0, 1, 2, 3]].concat();
        assert_eq!(Reader(&padded).big().unwrap(), BigUint::from(0x010203u32));
    }

    #[test]
    fn bad_frames_are_errors_not_panics() {
        let frames: [&[u8]; 6] = [
            &[0, 0, 0, 0],                                       // empty frame
            &[0xff, 0xff, 0xff, 0x7f, 1],                        // far too long
            &[1, 0, 0, 0, 0x42],                                 // unknown kind
            &[4, 0, 0, 0, kind::HELLO, 1, 0, 9],                 // a trailing byte
            &[5, 0, 0, 0, kind::SUBMIT, 0xff, 0xff, 0xff, 0xff], // count beyond the frame
            &[2, 0, 0, 0, kind::HELLO],                          // ends early
        ];
        for frame in frames {
            assert!(Request::read(&mut &frame[..]).is_err(), "{frame:?}");
        }
        assert_eq!(Request::read(&mut &[][..]).unwrap(), None, "a clean end of stream");
        let oversize = Request::Submit { ciphertexts: vec![BigUint::from(1u8); MAX_BATCH + 1] }.encode();
        assert!(Request::read(&mut oversize.as_slice()).is_err());
    }
}
