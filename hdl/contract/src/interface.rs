//! The accelerator's host interface, defined once: the AXI4-Stream framing of requests and
//! results, and the AXI4-Lite register map. The RTL (`ecrt-hdl`'s `shell`: `registers`,
//! `stream_in`, `stream_out`) takes its constants from here, the driver encodes and decodes frames
//! with the helpers here, and `docs/interface.md` is rendered by [`markdown`] (a test keeps it
//! current).
//!
//! A frame is a sequence of 32-bit words; word k travels in lane (k mod L) of beat ⌊k/L⌋, with
//! L = stream_bits/32 lanes and lane i = TDATA[32i+31:32i]. As bytes (what XDMA moves), word k is
//! bytes 4k…4k+3, little-endian.

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
/// `ID`: [`ID_VALUE`].
pub const REG_ID: u32 = 0x000;
/// `VERSION`: (major << 16) | minor.
pub const REG_VERSION: u32 = 0x004;
/// `KEY_BITS`: bits of the Paillier modulus n.
pub const REG_KEY_BITS: u32 = 0x008;
/// `CORES`: decryption cores.
pub const REG_CORES: u32 = 0x00C;
/// `DIGITS`: S, limbs of a plaintext.
pub const REG_DIGITS: u32 = 0x010;
/// `WINDOW_BITS`: the exponent's window width.
pub const REG_WINDOW_BITS: u32 = 0x014;
/// `STREAM_BITS`: TDATA width.
pub const REG_STREAM_BITS: u32 = 0x018;
/// `LIMB_BITS`: 17.
pub const REG_LIMB_BITS: u32 = 0x01C;
/// `STATUS`: [`STATUS_KEY_VALID`], [`STATUS_BUSY`], [`STATUS_KEY_LOADING`].
pub const REG_STATUS: u32 = 0x020;
/// `ERRORS`: sticky error flags, write 1 to clear.
pub const REG_ERRORS: u32 = 0x024;
/// `JOBS_IN`: request frames taken (wraps).
pub const REG_JOBS_IN: u32 = 0x028;
/// `JOBS_OUT`: result frames sent (wraps).
pub const REG_JOBS_OUT: u32 = 0x02C;
/// `JOBS_FAILED`: error result frames sent (wraps).
pub const REG_JOBS_FAILED: u32 = 0x030;
/// `CONTROL`: the soft reset.
pub const REG_CONTROL: u32 = 0x034;
/// `DIGITS_PER_STEP`: k, limbs the folding multiplier consumes per step.
pub const REG_DIGITS_PER_STEP: u32 = 0x038;
/// `SCHEDULE`: the exponent schedule: 0 fixed windows, 1 segmented.
pub const REG_SCHEDULE: u32 = 0x03C;
/// `KEY_CONTROL`: begin loading a key, or commit it.
pub const REG_KEY_CONTROL: u32 = 0x040;
/// `KEY_ID`: the committed key's id.
pub const REG_KEY_ID: u32 = 0x044;
/// `KEY_SELECT`: the register that `KEY_DATA` writes shift into.
pub const REG_KEY_SELECT: u32 = 0x048;
/// `KEY_DATA`: shift 17 bits into the selected key register of every core.
pub const REG_KEY_DATA: u32 = 0x04C;
/// `PACKET_HOLD`: cycles the result stream holds a burst's last beat for another result to join
/// its packet.
pub const REG_PACKET_HOLD: u32 = 0x050;
/// Bits of a register address the slave decodes (a 4 KiB window).
pub const ADDRESS_BITS: usize = 12;

/// `ID`'s value: "ECRT".
pub const ID_VALUE: u32 = 0x4543_5254;
/// Interface major version: bumped when a frame or a register changes incompatibly.
pub const VERSION_MAJOR: u16 = 5;
/// Interface minor version: bumped for compatible additions.
pub const VERSION_MINOR: u16 = 1;
/// `VERSION`'s value.
pub const VERSION_VALUE: u32 = (VERSION_MAJOR as u32) << 16 | VERSION_MINOR as u32;

/// `STATUS` bit 0: a key is committed.
pub const STATUS_KEY_VALID: u32 = 1 << 0;
/// `STATUS` bit 1: a core is busy, a frame is in progress or a result is pending.
pub const STATUS_BUSY: u32 = 1 << 1;
/// `STATUS` bit 2: a key load has begun and is not committed yet.
pub const STATUS_KEY_LOADING: u32 = 1 << 2;
/// `ERRORS` bit 0: a request was refused with KEY_NOT_LOADED.
pub const ERROR_KEY_NOT_LOADED: u32 = 1 << 0;
/// `ERRORS` bit 1: a request was refused as MALFORMED.
pub const ERROR_MALFORMED: u32 = 1 << 1;
/// `ERRORS` bit 2: a key write (`KEY_CONTROL` or `KEY_DATA`) was refused and had no effect.
pub const ERROR_KEY_LOAD_REFUSED: u32 = 1 << 2;
/// `CONTROL` bit 0: soft reset. Whatever a host left behind is dropped: a partial request frame,
/// the dispatcher's state, error results not yet sent; a core's job in progress runs out and its
/// result is thrown away. The key, the counters, PACKET_HOLD and a result frame already on the
/// stream stay.
pub const CONTROL_SOFT_RESET: u32 = 1 << 0;
/// Cycles a request frame may wait for its next beat before it ends as MALFORMED (about 10 ms
/// at 100 MHz): the H2C stream of a host that died mid-transfer without TLAST ends there. Within a
/// transfer, beats follow one another at once; waiting for a free core does not count.
pub const FRAME_TIMEOUT_CYCLES: u32 = 1 << 20;
/// The tag hosts keep for a resynchronisation frame (see [`resync_request`]): never a job's.
pub const RESYNC_TAG: u16 = 0xFFFF;
/// `KEY_CONTROL` bit 0: begin loading (the key becomes invalid).
pub const KEY_CONTROL_BEGIN: u32 = 1 << 0;
/// `KEY_CONTROL` bit 1: commit the loaded key under the id in bits [15:8].
pub const KEY_CONTROL_COMMIT: u32 = 1 << 1;
/// `KEY_CONTROL`: position of the key id.
pub const KEY_CONTROL_ID_SHIFT: u32 = 8;
/// Bits of `KEY_SELECT.TARGET`, the load target's index, at [3:0].
pub const KEY_SELECT_TARGET_BITS: usize = 4;
/// `KEY_SELECT` [3:0]: the load target's index.
pub const KEY_SELECT_TARGET_MASK: u32 = (1 << KEY_SELECT_TARGET_BITS) - 1;
/// Bits of `ERRORS` in use.
pub const ERROR_BITS: usize = 3;
/// `KEY_SELECT` bit 8: the q path (0: the p path).
pub const KEY_SELECT_Q_PATH: u32 = 1 << 8;
/// Bits of `PACKET_HOLD` in use, [11:0].
pub const PACKET_HOLD_BITS: usize = 12;
/// `PACKET_HOLD` [11:0]: the hold in cycles.
pub const PACKET_HOLD_MASK: u32 = (1 << PACKET_HOLD_BITS) - 1;
/// `KEY_DATA` [16:0].
pub const KEY_DATA_MASK: u32 = LIMB_MASK;

/// The register a load writes (KEY_SELECT.TARGET is the discriminant). The RTL's own enum keeps
/// this order; a test in `ecrt-hdl` checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LoadTarget {
    /// The exponentiation's modulus N (p²), M = ⌈key_bits/17⌉ exact limbs (S before 5.0).
    Modulus,
    /// −N^(−1) mod 2^17.
    NPrime,
    /// The exact division's modulus 2^(17M) − p, M exact limbs (R − p, S limbs, before 5.0).
    ModulusDiv,
    /// −(2^(17M) − p)^(−1) = p^(−1) mod 2^17.
    NPrimeDiv,
    /// The public modulus n, S exact limbs.
    ModulusN,
    /// −n^(−1) mod 2^17.
    NPrimeN,
    /// R³ mod N, A = ⌈(key_bits + 17k + 3)/17⌉ limbs, the multiplier's operand width (S before 5.0).
    R3,
    /// R mod N (the Montgomery form of 1, table entry 0), A limbs.
    One,
    /// t·R mod n (t_p or t_q, the eCRT constant), A limbs.
    TMont,
    /// The base c < 2^(17A)·N (the ciphertext, c < n²), 2·S limbs.
    Base,
    /// The exponent, one w-bit window per load, most significant first.
    Exponent,
    /// M̂ = 2^(−17k) mod N, the folding multiplier's constant, exact limbs (as many as N has).
    MHat,
}

impl LoadTarget {
    /// Every target, in discriminant order.
    pub const ALL: [LoadTarget; 12] = [
        LoadTarget::Modulus,
        LoadTarget::NPrime,
        LoadTarget::ModulusDiv,
        LoadTarget::NPrimeDiv,
        LoadTarget::ModulusN,
        LoadTarget::NPrimeN,
        LoadTarget::R3,
        LoadTarget::One,
        LoadTarget::TMont,
        LoadTarget::Base,
        LoadTarget::Exponent,
        LoadTarget::MHat,
    ];

    /// The target of KEY_SELECT.TARGET `index`, if any.
    pub fn from_index(index: u8) -> Option<Self> {
        Self::ALL.get(index as usize).copied()
    }
}

/// One load cycle of a slot: (target, data).
pub type Load = (LoadTarget, u64);

/// One load cycle of a decryption core: (path: false = p, true = q; target; data).
pub type KeyLoad = (bool, LoadTarget, u64);

/// `KEY_CONTROL`'s value that commits the loaded key as `key_id`.
pub fn key_control_commit(key_id: u8) -> u32 {
    KEY_CONTROL_COMMIT | (key_id as u32) << KEY_CONTROL_ID_SHIFT
}

/// `KEY_SELECT`'s value for load target `target_index` of the p path (`q_path` false) or the q
/// path.
pub fn key_select(q_path: bool, target_index: u8) -> u32 {
    (target_index as u32 & KEY_SELECT_TARGET_MASK) | if q_path { KEY_SELECT_Q_PATH } else { 0 }
}

/// The AXI4-Lite writes (offset, value) that load a key and commit it as `key_id`: BEGIN, then
/// for each load its KEY_SELECT (when it changes) and KEY_DATA, then COMMIT. `loads` come from
/// [`crate::host::decryption_key_loads`]; a load target's index is its [`LoadTarget`] discriminant.
pub fn key_load_writes(loads: &[KeyLoad], key_id: u8) -> Vec<(u32, u32)> {
    let mut writes = vec![(REG_KEY_CONTROL, KEY_CONTROL_BEGIN)];
    let mut selected = None;
    for &(q_path, target, data) in loads {
        let select = key_select(q_path, target as u8);
        if selected != Some(select) {
            writes.push((REG_KEY_SELECT, select));
            selected = Some(select);
        }
        writes.push((REG_KEY_DATA, data as u32 & KEY_DATA_MASK));
    }
    writes.push((REG_KEY_CONTROL, key_control_commit(key_id)));
    writes
}

/// The names of the load targets, by index (KEY_SELECT.TARGET).
pub fn load_target_names() -> Vec<String> {
    LoadTarget::ALL.iter().map(|t| format!("{t:?}")).collect()
}

/// How a register is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read only; writes are ignored.
    ReadOnly,
    /// Read and write.
    ReadWrite,
    /// Read; writing a 1 to a bit clears it.
    ReadWrite1Clear,
    /// Write only; reads return 0.
    WriteOnly,
}

impl Access {
    /// The short name in the register table.
    pub fn short(self) -> &'static str {
        match self {
            Access::ReadOnly => "RO",
            Access::ReadWrite => "RW",
            Access::ReadWrite1Clear => "RW1C",
            Access::WriteOnly => "WO",
        }
    }
}

/// A field of a register: bits [msb:lsb].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub msb: u8,
    pub lsb: u8,
    pub description: &'static str,
}

/// A 32-bit register of the AXI4-Lite slave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Register {
    pub name: &'static str,
    /// Byte offset.
    pub offset: u32,
    pub access: Access,
    pub description: &'static str,
    /// The fields, when the register is not one value.
    pub fields: &'static [Field],
}

const fn field(name: &'static str, msb: u8, lsb: u8, description: &'static str) -> Field {
    Field { name, msb, lsb, description }
}

const fn register(
    name: &'static str,
    offset: u32,
    access: Access,
    description: &'static str,
    fields: &'static [Field],
) -> Register {
    Register { name, offset, access, description, fields }
}

use Access::*;

/// The register map, by offset.
pub const REGISTERS: &[Register] = &[
    register("ID", REG_ID, ReadOnly, "0x45435254 (\"ECRT\").", &[]),
    register(
        "VERSION",
        REG_VERSION,
        ReadOnly,
        "Interface version.",
        &[field("MINOR", 15, 0, "Compatible additions."), field("MAJOR", 31, 16, "Incompatible changes.")],
    ),
    register("KEY_BITS", REG_KEY_BITS, ReadOnly, "Bits of the Paillier modulus n of the configuration.", &[]),
    register("CORES", REG_CORES, ReadOnly, "Decryption cores.", &[]),
    register(
        "DIGITS",
        REG_DIGITS,
        ReadOnly,
        "S = k·(m − 1), m = ⌈(KEY_BITS + 4)/(17k)⌉ + 2 for k = DIGITS_PER_STEP: limbs of a plaintext \
         (a ciphertext has 2·S).",
        &[],
    ),
    register("WINDOW_BITS", REG_WINDOW_BITS, ReadOnly, "Width of the exponent's windows.", &[]),
    register("STREAM_BITS", REG_STREAM_BITS, ReadOnly, "TDATA width of both streams (64, 128, 256 or 512).", &[]),
    register("LIMB_BITS", REG_LIMB_BITS, ReadOnly, "Bits of a limb: 17.", &[]),
    register(
        "STATUS",
        REG_STATUS,
        ReadOnly,
        "Current state.",
        &[
            field("KEY_VALID", 0, 0, "A key is committed."),
            field("BUSY", 1, 1, "A core is busy, a frame is in progress or a result is pending."),
            field("KEY_LOADING", 2, 2, "A key load has begun (KEY_CONTROL.BEGIN) and is not committed."),
        ],
    ),
    register(
        "ERRORS",
        REG_ERRORS,
        ReadWrite1Clear,
        "Sticky error flags; writing 1 to a bit clears it.",
        &[
            field("KEY_NOT_LOADED", 0, 0, "A request was answered with status KEY_NOT_LOADED."),
            field("MALFORMED", 1, 1, "A request was answered with status MALFORMED."),
            field("KEY_LOAD_REFUSED", 2, 2, "A KEY_CONTROL or KEY_DATA write was refused and had no effect."),
        ],
    ),
    register("JOBS_IN", REG_JOBS_IN, ReadOnly, "Request frames taken, good or bad (wraps).", &[]),
    register("JOBS_OUT", REG_JOBS_OUT, ReadOnly, "Result frames sent, plaintexts and errors (wraps).", &[]),
    register("JOBS_FAILED", REG_JOBS_FAILED, ReadOnly, "Error result frames sent (wraps).", &[]),
    register(
        "CONTROL",
        REG_CONTROL,
        WriteOnly,
        "Card control. Never refused.",
        &[field(
            "SOFT_RESET",
            0,
            0,
            "1: drop what a host left behind: a partial request frame, the dispatcher's state and \
             error results not yet sent; jobs in the cores run out and their results are thrown \
             away. The key, the counters, PACKET_HOLD and a result frame already started on the \
             stream stay.",
        )],
    ),
    register(
        "DIGITS_PER_STEP",
        REG_DIGITS_PER_STEP,
        ReadOnly,
        "k: limbs of the multiplier the folding multiplier consumes per step (1 to 16).",
        &[],
    ),
    register(
        "SCHEDULE",
        REG_SCHEDULE,
        ReadOnly,
        "The exponent schedule: 0 fixed windows of WINDOW_BITS bits, left to right; 1 segmented (right \
         to left, one bit at a time: WINDOW_BITS is 1). The exponent loads the same way for both.",
        &[],
    ),
    register(
        "KEY_CONTROL",
        REG_KEY_CONTROL,
        WriteOnly,
        "Key load control. Refused (ERRORS.KEY_LOAD_REFUSED) while STATUS.BUSY.",
        &[
            field("BEGIN", 0, 0, "1: begin loading a key; the key becomes invalid. Takes precedence over COMMIT."),
            field(
                "COMMIT",
                1,
                1,
                "1: commit the loaded key under KEY_ID; the key becomes valid. Refused unless loading \
                 and every KEY_DATA write since BEGIN was accepted.",
            ),
            field("KEY_ID", 15, 8, "The committed key's id (with COMMIT)."),
        ],
    ),
    register("KEY_ID", REG_KEY_ID, ReadOnly, "The committed key's id, bits [7:0].", &[]),
    register(
        "KEY_SELECT",
        REG_KEY_SELECT,
        ReadWrite,
        "Where KEY_DATA writes go.",
        &[
            field("TARGET", 3, 0, "The key register: a load target's index (see Loading a key)."),
            field("PATH", 8, 8, "0: the p path (mod p²), 1: the q path (mod q²)."),
        ],
    ),
    register(
        "KEY_DATA",
        REG_KEY_DATA,
        WriteOnly,
        "Each write shifts bits [16:0] into the selected key register of every core. Refused \
         (ERRORS.KEY_LOAD_REFUSED) while STATUS.BUSY or when no load has begun.",
        &[field("DATA", 16, 0, "A limb, constant or exponent window.")],
    ),
    register(
        "PACKET_HOLD",
        REG_PACKET_HOLD,
        ReadWrite,
        "Result packets (since 5.1). When a result frame's last beat would end its packet (no other \
         result waiting), the collector holds that beat up to CYCLES cycles for another result to \
         follow it in the same packet; it leaves with TLAST when none comes, or at once on a soft \
         reset. 0 after configuration: no hold. Hosts set about one request frame's time \
         (FrameLayout::packet_hold_cycles), so that requests sent together come back as one packet: \
         one DMA transfer, one interrupt.",
        &[field("CYCLES", 11, 0, "The hold, in cycles.")],
    ),
];

/// The register called `name`.
pub fn register_named(name: &str) -> Option<&'static Register> {
    REGISTERS.iter().find(|r| r.name == name)
}

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

/// `docs/interface.md`: the framing, the register map and the key load procedure.
pub fn markdown() -> String {
    let mut s = String::new();
    let hex = |b: u8| format!("0x{b:02X}");
    let mut line = |text: &str| {
        s.push_str(text);
        s.push('\n');
    };
    line("# The ecrt accelerator's host interface");
    line("");
    line("<!-- Generated by `ecrt_contract::interface::markdown()` (hdl/contract/src/interface.rs): do not edit. -->");
    line("<!-- Regenerate: ECRT_UPDATE_DOCS=1 cargo test -p ecrt-contract interface -->");
    line("");
    line(&format!(
        "Interface version {VERSION_MAJOR}.{VERSION_MINOR}. The framing and the register map are defined once, in \
         `hdl/contract/src/interface.rs`; the RTL, the simulator and the driver use those definitions, and this page is \
         rendered from them."
    ));
    line("");
    line("## Streams (XDMA in AXI4-Stream mode)");
    line("");
    line(&format!(
        "- H2C (host to card) carries requests into the slave `s_axis_*`, C2H (card to host) carries results \
         from the master `m_axis_*`. TDATA is `stream_bits` wide ({}); no TKEEP: every byte is valid.",
        STREAM_BITS_CHOICES.map(|b| b.to_string()).join(", ")
    ));
    line(&format!(
        "- A frame is a sequence of {LANE_BITS}-bit words. Word k travels in lane (k mod L) of beat ⌊k/L⌋, with \
         L = stream_bits/{LANE_BITS} lanes and lane i = TDATA[32i+31:32i]; in host memory word k is bytes \
         4k…4k+3, little-endian."
    ));
    line("- A frame is padded with zero words to a whole number of beats. Frames have fixed sizes, so a packet (the beats up to TLAST, one XDMA transfer) may carry several whole frames back to back.");
    line("- H2C: TLAST must fall on the last beat of a frame; the host may send one frame per packet or many.");
    line("- C2H: TLAST ends a burst. A result frame's last beat carries TLAST unless another result is already waiting to follow it, so results that are ready together leave in one packet. With PACKET_HOLD set, that last beat waits up to PACKET_HOLD cycles for another result before it ends the packet, so results that finish shortly after one another share a packet too; with 0, a lone result ends its packet at once. The host splits what it reads into frames by size.");
    line(&format!(
        "- S = k·(m − 1) with m = ⌈(key_bits + 4)/({LIMB_BITS}·k)⌉ + 2 for k digits per step (registers DIGITS \
         and DIGITS_PER_STEP): the digits of a classic pass, and the limbs of every value a core holds. A \
         limb is {LIMB_BITS} bits, in word bits [{}:0]; the bits above it are 0. Limbs go least significant \
         first.",
        LIMB_BITS - 1
    ));
    line("- Back-pressure is honoured on both streams: TREADY falls while no core can take a request, and a result is held while the host does not read.");
    line("- Every result carries its request's tag; results may leave in another order than the requests came (an error result overtakes plaintexts still being computed).");
    line("");
    line("### Request frame (H2C): 1 + 2·S words");
    line("");
    line("| word | bits | field | value |");
    line("|---|---|---|---|");
    line("| 0 | [15:0] | tag | any; returned in the result |");
    line("| 0 | [23:16] | key id | the committed key's id (KEY_ID) |");
    line(&format!("| 0 | [31:24] | opcode | {} (decrypt) |", hex(OPCODE_DECRYPT)));
    line(&format!(
        "| 1 … 2·S | [{}:0] | ciphertext limb k − 1 | c = Σ limb_j·2^({LIMB_BITS}j), c < n² |",
        LIMB_BITS - 1
    ));
    line(&format!("| 1 … 2·S | [31:{LIMB_BITS}] | — | 0 |"));
    line("| 2·S + 1 … | [31:0] | padding to a whole beat | 0 |");
    line("");
    line("### Result frame (C2H): 1 + S words, always");
    line("");
    line("| word | bits | field | value |");
    line("|---|---|---|---|");
    line("| 0 | [15:0] | tag | the request's tag |");
    line("| 0 | [23:16] | status | see below; 0: the plaintext follows |");
    line(&format!("| 0 | [31:24] | magic | {} |", hex(RESULT_MAGIC)));
    line(&format!(
        "| 1 … S | [{}:0] | plaintext limb k − 1 | m = Σ limb_j·2^({LIMB_BITS}j), m < n; all 0 if status ≠ 0 |",
        LIMB_BITS - 1
    ));
    line(&format!("| 1 … S | [31:{LIMB_BITS}] | — | 0 |"));
    line("| S + 1 … | [31:0] | padding to a whole beat | 0 |");
    line("");
    line("### Result status bits");
    line("");
    line("| bit | name | meaning |");
    line("|---|---|---|");
    line(&format!(
        "| {} | KEY_NOT_LOADED | no key is committed, or the request's key id is not the committed key's id |",
        hex(RESULT_KEY_NOT_LOADED)
    ));
    line(&format!(
        "| {} | MALFORMED | bad opcode, TLAST before the frame's last beat, no beat for {FRAME_TIMEOUT_CYCLES} cycles in the middle of a frame, a nonzero bit [31:{LIMB_BITS}] in a limb word, or nonzero padding |",
        hex(RESULT_MALFORMED)
    ));
    line("");
    line("A request with a nonzero status is answered by an error result with that request's header tag and no plaintext: never a hang, never a wrong plaintext. A frame whose TLAST comes before its last beat ends at that beat. Each request frame gets exactly one result frame.");
    line("");
    line("### Frame sizes");
    line("");
    line(&format!(
        "Beats per frame at TDATA widths of 64 / 128 / 256 / 512 bits, with the default {} digits per step:",
        crate::config::AcceleratorConfig::default().digits_per_step
    ));
    line("");
    line("| key bits | S | request words | request beats | result words | result beats |");
    line("|---|---|---|---|---|---|");
    for key_bits in [1024usize, 2048, 3072, 4096] {
        let digits = crate::config::AcceleratorConfig { key_bits, ..Default::default() }.digits();
        let beats = |f: fn(&FrameLayout) -> usize| {
            STREAM_BITS_CHOICES
                .iter()
                .map(|&b| FrameLayout::new(digits, b).map(|l| f(&l).to_string()).unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" / ")
        };
        line(&format!(
            "| {key_bits} | {digits} | {} | {} | {} | {} |",
            request_words(digits),
            beats(|l| l.request_beats),
            result_words(digits),
            beats(|l| l.result_beats)
        ));
    }
    line("");
    line("## Registers (AXI4-Lite slave `s_axil_*`)");
    line("");
    line(&format!(
        "32-bit registers at byte offsets; the slave decodes {ADDRESS_BITS} address bits. A write with any WSTRB \
         bit set writes the whole register, one with none writes nothing. Other addresses (misaligned ones too) \
         read 0 and ignore writes; every response is OKAY."
    ));
    line("");
    line("| offset | name | access | description |");
    line("|---|---|---|---|");
    for r in REGISTERS {
        line(&format!("| 0x{:03X} | {} | {} | {} |", r.offset, r.name, r.access.short(), r.description));
    }
    line("");
    line("### Fields");
    line("");
    line("| register | bits | field | description |");
    line("|---|---|---|---|");
    for r in REGISTERS {
        for f in r.fields {
            let bits = if f.msb == f.lsb { format!("[{}]", f.msb) } else { format!("[{}:{}]", f.msb, f.lsb) };
            line(&format!("| {} | {bits} | {} | {} |", r.name, f.name, f.description));
        }
    }
    line("");
    line("## Loading a key");
    line("");
    line("The host loads a key's precomputed constants once; the load sequence (path, target, 17-bit value) comes from `ecrt_contract::host`.");
    line("");
    line("The load targets (KEY_SELECT.TARGET; other indices load nothing):");
    line("");
    line("| index | target |");
    line("|---|---|");
    for (k, name) in load_target_names().iter().enumerate() {
        line(&format!("| {k} | {name} |"));
    }
    line("");
    line("`ecrt_contract::interface::key_load_writes` turns a load sequence into the register writes below.");
    line("");
    line("1. Wait until STATUS.BUSY is 0 (key writes are refused while it is 1).");
    line(&format!("2. Write KEY_CONTROL = 0x{KEY_CONTROL_BEGIN:X} (BEGIN): the key becomes invalid, requests are answered KEY_NOT_LOADED."));
    line("3. For each load (path, target, value): write KEY_SELECT = target | path << 8 when it changes, then KEY_DATA = value.");
    line(&format!(
        "4. Write KEY_CONTROL = 0x{KEY_CONTROL_COMMIT:X} | id << 8 (COMMIT): the key becomes valid under that id."
    ));
    line("5. Read ERRORS: if KEY_LOAD_REFUSED is set, a write had no effect (the key stays invalid): clear it (write 0x4) and start again.");
    line("");
    line("## Taking over a card");
    line("");
    line("A host that died may leave a card holding part of a request frame, jobs in its cores and results nobody reads. A host that opens the card brings it back to a clean state before it loads its key:");
    line("");
    line("1. Open the C2H node first: XDMA's driver lets one process at a time hold it, so no live host is disturbed.");
    line(&format!("2. Write CONTROL = 0x{CONTROL_SOFT_RESET:X} (SOFT_RESET)."));
    line(&format!(
        "3. Send the resynchronisation frame: a request with opcode 0 and tag 0x{RESYNC_TAG:04X} \
         (`ecrt_contract::interface::resync_request`). Read result frames and drop them until its MALFORMED answer \
         arrives: the frames before it were left by the earlier host (a frame that was already leaving when the \
         reset came is sent whole, so the stream stays in frames). Hosts never give a job tag 0x{RESYNC_TAG:04X}."
    ));
    line("4. Wait until STATUS.BUSY is 0 (the earlier host's jobs run out; their results are dropped), then load the key.");
    line("");
    line(&format!(
        "Without a host, a request frame whose beats stop coming (a transfer that died without TLAST) ends \
         MALFORMED after {FRAME_TIMEOUT_CYCLES} cycles without a beat."
    ));
    s
}

/// `docs/interface.md` of the workspace this crate is built in.
pub fn docs_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/interface.md")
}

#[cfg(test)]
mod tests;
