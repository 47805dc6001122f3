//! The AXI4-Stream framing of requests and results: layouts, headers, encoders and decoders.

use super::registers::PACKET_HOLD_MASK;
use crate::limbs::LIMB_BITS;
use num_bigint::BigUint;

/// Bits of a stream lane (one frame word).
pub const LANE_BITS: usize = 32;
/// Bytes of a stream lane.
pub const LANE_BYTES: usize = LANE_BITS / 8;
/// The supported TDATA widths.
pub const STREAM_BITS_CHOICES: [usize; 4] = [64, 128, 256, 512];
/// The most limbs S a frame layout accepts (the multiplier's limit).
pub const MAX_DIGITS: usize = (1 << crate::limbs::STEP_BITS) - 1;
/// Mask of a limb in its word ([16:0]); bits [31:17] must be 0.
pub const LIMB_MASK: u32 = (1 << LIMB_BITS) - 1;

/// Request header [31:24]: decrypt.
pub const OPCODE_DECRYPT: u8 = 0xDC;
/// Result header [31:24]: the result magic.
pub const RESULT_MAGIC: u8 = 0x5A;
/// Bit position of the tag in a header ([15:0]).
pub const HEADER_TAG_SHIFT: u32 = 0;
/// Bit position of the key id (request) or the status (result) in a header ([23:16]).
pub const HEADER_KEY_ID_SHIFT: u32 = 16;
/// Bit position of the status in a result header ([23:16]).
pub const HEADER_STATUS_SHIFT: u32 = 16;
/// Bit position of the opcode (request) or the magic (result) in a header ([31:24]).
pub const HEADER_OPCODE_SHIFT: u32 = 24;

/// Result status: the plaintext follows.
pub const RESULT_OK: u8 = 0x00;
/// Result status bit: no key committed, or the request's key id is not the committed one.
pub const RESULT_KEY_NOT_LOADED: u8 = 0x01;
/// Result status bit: bad opcode, TLAST before the frame's last beat, no beat for
/// [`FRAME_TIMEOUT_CYCLES`] in the middle of a frame, a nonzero limb bit [31:17] or nonzero
/// padding.
pub const RESULT_MALFORMED: u8 = 0x02;

// Register byte offsets.
/// Cycles a request frame may wait for its next beat before it ends as MALFORMED (about 10 ms
/// at 100 MHz): the H2C stream of a host that died mid-transfer without TLAST ends there. Within a
/// transfer, beats follow one another at once; waiting for a free core does not count.
pub const FRAME_TIMEOUT_CYCLES: u32 = 1 << 20;
/// The tag hosts keep for a resynchronisation frame (see [`resync_request`]): never a job's.
pub const RESYNC_TAG: u16 = 0xFFFF;

/// Why a frame could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("TDATA widths of 64, 128, 256 or 512 bits are supported, not {0}")]
    StreamBits(usize),
    #[error("frames of 1 to {MAX_DIGITS} limbs are supported, not {0}")]
    Digits(usize),
    #[error("a ciphertext of {bits} bits does not fit in {max_bits} bits (2·S limbs)")]
    CiphertextTooLarge { bits: u64, max_bits: usize },
    #[error("a frame of {expected} bytes was expected, {got} bytes came")]
    Length { expected: usize, got: usize },
    #[error("{got} bytes are not a whole number of {frame_bytes}-byte result frames")]
    Frames { got: usize, frame_bytes: usize },
    #[error("header [31:24] is {found:#04x}, not {expected:#04x}")]
    Magic { found: u8, expected: u8 },
    #[error("word {word} ({value:#010x}) has nonzero bits above the 17-bit limb")]
    LimbHighBits { word: usize, value: u32 },
    #[error("padding word {word} is {value:#010x}, not 0")]
    Padding { word: usize, value: u32 },
    #[error("error result (status {status:#04x}) carries a nonzero limb in word {word}")]
    ErrorWithPlaintext { status: u8, word: usize },
}

/// Sizes of the frames of one configuration (S limbs, L lanes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLayout {
    /// S: limbs of a plaintext; a ciphertext has 2·S.
    pub digits: usize,
    pub stream_bits: usize,
    /// L = stream_bits / 32.
    pub lanes: usize,
    /// 1 + 2·S.
    pub request_words: usize,
    /// ⌈request_words / L⌉.
    pub request_beats: usize,
    /// request_beats · L · 4.
    pub request_bytes: usize,
    /// 1 + S.
    pub result_words: usize,
    /// ⌈result_words / L⌉.
    pub result_beats: usize,
    /// result_beats · L · 4.
    pub result_bytes: usize,
}

/// Lanes of a `stream_bits`-bit TDATA.
pub fn lanes(stream_bits: usize) -> Result<usize, FrameError> {
    if STREAM_BITS_CHOICES.contains(&stream_bits) {
        Ok(stream_bits / LANE_BITS)
    } else {
        Err(FrameError::StreamBits(stream_bits))
    }
}

/// Words of a request frame before padding: the header and 2·S limbs.
pub fn request_words(digits: usize) -> usize {
    1 + 2 * digits
}

/// Words of a result frame before padding: the header and S limbs.
pub fn result_words(digits: usize) -> usize {
    1 + digits
}

impl FrameLayout {
    /// The layout for S = `digits` and a `stream_bits`-bit TDATA.
    pub fn new(digits: usize, stream_bits: usize) -> Result<Self, FrameError> {
        let lanes = lanes(stream_bits)?;
        if !(1..=MAX_DIGITS).contains(&digits) {
            return Err(FrameError::Digits(digits));
        }
        let (request_words, result_words) = (request_words(digits), result_words(digits));
        let (request_beats, result_beats) = (request_words.div_ceil(lanes), result_words.div_ceil(lanes));
        Ok(FrameLayout {
            digits,
            stream_bits,
            lanes,
            request_words,
            request_beats,
            request_bytes: request_beats * lanes * LANE_BYTES,
            result_words,
            result_beats,
            result_bytes: result_beats * lanes * LANE_BYTES,
        })
    }

    /// The `PACKET_HOLD` a host sets: the cycles one request frame takes to come in (its beats,
    /// L + 1 cycles each), within the register's range. Requests written together then start
    /// their cores that far apart and finish as far apart, so each result finds the next one
    /// waiting within the hold and a burst leaves as one packet; a lone result waits that long
    /// (about 0.3 % of a 2048-bit decryption's latency).
    pub fn packet_hold_cycles(&self) -> u32 {
        ((self.request_beats * (self.lanes + 1)) as u32).min(PACKET_HOLD_MASK)
    }
}

/// A request (host to card): decrypt `ciphertext` under key `key_id`; the result carries `tag`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame {
    pub tag: u16,
    pub key_id: u8,
    pub ciphertext: BigUint,
}

/// A result (card to host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultFrame {
    /// The request's tag.
    pub tag: u16,
    /// [`RESULT_OK`], or a combination of [`RESULT_KEY_NOT_LOADED`] and [`RESULT_MALFORMED`].
    pub status: u8,
    /// The plaintext (0 for an error result).
    pub plaintext: BigUint,
}

impl ResultFrame {
    /// The status is [`RESULT_OK`].
    pub fn is_ok(&self) -> bool {
        self.status == RESULT_OK
    }
}

/// A beat that left the result stream (m_axis) in one cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputBeat {
    /// TDATA as `lanes` 32-bit words, lane 0 first.
    pub words: Vec<u32>,
    /// TLAST: the beat ends a burst of result frames.
    pub last: bool,
}

/// What moved on the streams in one clock cycle (one cycle of a model of the accelerator).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CycleIo {
    /// The offered request beat was accepted (TVALID and TREADY high on the edge).
    pub input_taken: bool,
    /// The result beat that left (TVALID and TREADY high on the edge), if any.
    pub output: Option<OutputBeat>,
}

/// A request header word.
pub fn request_header(tag: u16, key_id: u8) -> u32 {
    (OPCODE_DECRYPT as u32) << HEADER_OPCODE_SHIFT | (key_id as u32) << HEADER_KEY_ID_SHIFT | tag as u32
}

/// A result header word.
pub fn result_header(tag: u16, status: u8) -> u32 {
    (RESULT_MAGIC as u32) << HEADER_OPCODE_SHIFT | (status as u32) << HEADER_STATUS_SHIFT | tag as u32
}

/// The exact 17-bit limbs of `x`, least significant first, `count` of them (x must fit).
fn limbs_of(x: &BigUint, count: usize) -> Vec<u32> {
    let mut limbs = vec![0; count];
    crate::limbs::write_limbs(x, &mut limbs);
    limbs
}

/// `words` padded with zero words to a whole number of beats.
fn pad(mut words: Vec<u32>, lanes: usize) -> Vec<u32> {
    words.resize(words.len().div_ceil(lanes) * lanes, 0);
    words
}

/// Words as bytes, each little-endian (the order XDMA moves them in).
pub fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Bytes as little-endian words (a trailing partial word is dropped: check the length first).
pub fn bytes_to_words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(LANE_BYTES).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The words of a request frame, padded to whole beats.
pub fn encode_request_words(
    tag: u16,
    key_id: u8,
    ciphertext: &BigUint,
    digits: usize,
    stream_bits: usize,
) -> Result<Vec<u32>, FrameError> {
    Ok(bytes_to_words(&encode_request(tag, key_id, ciphertext, digits, stream_bits)?))
}

/// Writes a request frame into `out` (exactly [`FrameLayout::request_bytes`] bytes): what
/// [`encode_request`] returns, without allocating, for the host's hot path.
pub fn encode_request_into(
    tag: u16,
    key_id: u8,
    ciphertext: &BigUint,
    layout: &FrameLayout,
    out: &mut [u8],
) -> Result<(), FrameError> {
    let max_bits = 2 * layout.digits * LIMB_BITS;
    if ciphertext.bits() > max_bits as u64 {
        return Err(FrameError::CiphertextTooLarge { bits: ciphertext.bits(), max_bits });
    }
    if out.len() != layout.request_bytes {
        return Err(FrameError::Length { expected: layout.request_bytes, got: out.len() });
    }
    let mut limbs = [0u32; 2 * MAX_DIGITS];
    let limbs = &mut limbs[..2 * layout.digits];
    crate::limbs::write_limbs(ciphertext, limbs);
    let (header, rest) = out.split_at_mut(LANE_BYTES);
    header.copy_from_slice(&request_header(tag, key_id).to_le_bytes());
    let (limb_bytes, padding) = rest.split_at_mut(limbs.len() * LANE_BYTES);
    for (bytes, limb) in limb_bytes.chunks_exact_mut(LANE_BYTES).zip(limbs.iter()) {
        bytes.copy_from_slice(&limb.to_le_bytes());
    }
    padding.fill(0);
    Ok(())
}

/// The bytes of a request frame: little-endian words, padded to whole beats
/// ([`FrameLayout::request_bytes`] of them).
pub fn encode_request(
    tag: u16,
    key_id: u8,
    ciphertext: &BigUint,
    digits: usize,
    stream_bits: usize,
) -> Result<Vec<u8>, FrameError> {
    let layout = FrameLayout::new(digits, stream_bits)?;
    let mut bytes = vec![0; layout.request_bytes];
    encode_request_into(tag, key_id, ciphertext, &layout, &mut bytes)?;
    Ok(bytes)
}

/// The resynchronisation frame: a request with opcode 0 and tag [`RESYNC_TAG`], so the card
/// answers it MALFORMED. After a soft reset, every result the host reads before that answer was
/// left by an earlier host.
pub fn resync_request(layout: &FrameLayout) -> Vec<u8> {
    let mut bytes = vec![0; layout.request_bytes];
    bytes[..LANE_BYTES].copy_from_slice(&u32::from(RESYNC_TAG).to_le_bytes());
    bytes
}

/// Whether `frame` answers [`resync_request`].
pub fn is_resync_answer(frame: &ResultFrame) -> bool {
    frame.tag == RESYNC_TAG && frame.status & RESULT_MALFORMED != 0
}

/// The words of a result frame, padded to whole beats (what the card sends; for models and tests).
pub fn encode_result_words(frame: &ResultFrame, digits: usize, stream_bits: usize) -> Result<Vec<u32>, FrameError> {
    let layout = FrameLayout::new(digits, stream_bits)?;
    let max_bits = digits * LIMB_BITS;
    if frame.plaintext.bits() > max_bits as u64 {
        return Err(FrameError::CiphertextTooLarge { bits: frame.plaintext.bits(), max_bits });
    }
    let mut words = vec![result_header(frame.tag, frame.status)];
    words.extend(limbs_of(&frame.plaintext, digits));
    Ok(pad(words, layout.lanes))
}

/// The little-endian words of `bytes` (a whole number of words).
fn words_of(bytes: &[u8]) -> impl ExactSizeIterator<Item = u32> + '_ {
    bytes.chunks_exact(LANE_BYTES).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Checks a frame's length, limbs and padding and returns its header.
fn check_frame(bytes: &[u8], expected_bytes: usize, limbs: usize) -> Result<u32, FrameError> {
    if bytes.len() != expected_bytes {
        return Err(FrameError::Length { expected: expected_bytes, got: bytes.len() });
    }
    // One OR over each part first (the host decodes every result): a bad word is then looked for.
    let (limb_bytes, padding_bytes) = bytes[LANE_BYTES..].split_at(limbs * LANE_BYTES);
    let (limb_words, padding) =
        (words_of(limb_bytes).fold(0, |a, w| a | w), words_of(padding_bytes).fold(0, |a, w| a | w));
    if limb_words & !LIMB_MASK != 0 || padding != 0 {
        for (k, w) in words_of(bytes).enumerate().skip(1) {
            if k <= limbs && w & !LIMB_MASK != 0 {
                return Err(FrameError::LimbHighBits { word: k, value: w });
            }
            if k > limbs && w != 0 {
                return Err(FrameError::Padding { word: k, value: w });
            }
        }
    }
    Ok(words_of(bytes).next().expect("a frame has a header"))
}

/// The integer of a checked frame's `limbs` limb words.
fn frame_integer(bytes: &[u8], limbs: usize) -> BigUint {
    crate::limbs::from_exact_limbs(words_of(&bytes[LANE_BYTES..LANE_BYTES * (1 + limbs)]))
}

/// Reads one result frame of exactly [`FrameLayout::result_bytes`] bytes.
pub fn decode_result(bytes: &[u8], digits: usize, stream_bits: usize) -> Result<ResultFrame, FrameError> {
    let layout = FrameLayout::new(digits, stream_bits)?;
    let header = check_frame(bytes, layout.result_bytes, digits)?;
    let magic = (header >> HEADER_OPCODE_SHIFT) as u8;
    if magic != RESULT_MAGIC {
        return Err(FrameError::Magic { found: magic, expected: RESULT_MAGIC });
    }
    let status = (header >> HEADER_STATUS_SHIFT) as u8;
    if status != RESULT_OK {
        if let Some(k) = words_of(bytes).skip(1).take(digits).position(|l| l != 0) {
            return Err(FrameError::ErrorWithPlaintext { status, word: k + 1 });
        }
    }
    Ok(ResultFrame { tag: header as u16, status, plaintext: frame_integer(bytes, digits) })
}

/// Reads consecutive result frames (a C2H transfer holding whole frames).
pub fn decode_results(bytes: &[u8], digits: usize, stream_bits: usize) -> Result<Vec<ResultFrame>, FrameError> {
    let frame_bytes = FrameLayout::new(digits, stream_bits)?.result_bytes;
    if bytes.len() % frame_bytes != 0 {
        return Err(FrameError::Frames { got: bytes.len(), frame_bytes });
    }
    bytes.chunks(frame_bytes).map(|f| decode_result(f, digits, stream_bits)).collect()
}

/// Reads one well-formed request frame (for models and tests; the card itself answers a bad
/// request with an error result instead).
pub fn decode_request(bytes: &[u8], digits: usize, stream_bits: usize) -> Result<RequestFrame, FrameError> {
    let layout = FrameLayout::new(digits, stream_bits)?;
    let header = check_frame(bytes, layout.request_bytes, 2 * digits)?;
    let opcode = (header >> HEADER_OPCODE_SHIFT) as u8;
    if opcode != OPCODE_DECRYPT {
        return Err(FrameError::Magic { found: opcode, expected: OPCODE_DECRYPT });
    }
    Ok(RequestFrame {
        tag: header as u16,
        key_id: (header >> HEADER_KEY_ID_SHIFT) as u8,
        ciphertext: frame_integer(bytes, 2 * digits),
    })
}
