//! The AXI4-Lite register map: offsets, fields, values, and the table `docs/interface.md` lists.

use crate::limbs::LIMB_BITS;

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
/// `ENGINE`: what each core is built around (0 on cards before 5.2: two slots).
pub const REG_ENGINE: u32 = 0x054;
/// `JOBS_PER_CORE`: decryptions a core holds in flight (0 on cards before 5.2: one).
pub const REG_JOBS_PER_CORE: u32 = 0x058;
/// Bits of a register address the slave decodes (a 4 KiB window).
pub const ADDRESS_BITS: usize = 12;

/// `ID`'s value: "ECRT".
pub const ID_VALUE: u32 = 0x4543_5254;
/// Interface major version: bumped when a frame or a register changes incompatibly.
pub const VERSION_MAJOR: u16 = 5;
/// Interface minor version: bumped for compatible additions.
pub const VERSION_MINOR: u16 = 3;
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
pub const KEY_DATA_MASK: u32 = (1 << LIMB_BITS) - 1;

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
    register(
        "ENGINE",
        REG_ENGINE,
        ReadOnly,
        "What each core is built around (since 5.2; earlier cards read 0): 0 two slots on the folding \
         multiplier, one decryption in flight; 1 the deep-loop multiplier's k + 3 lanes, a decryption \
         per pair of lanes; 2 (since 5.3) the delayed-quotient multiplier's two lanes, one decryption \
         in flight.",
        &[],
    ),
    register(
        "JOBS_PER_CORE",
        REG_JOBS_PER_CORE,
        ReadOnly,
        "Decryptions a core holds in flight (since 5.2; earlier cards read 0, meaning 1). A host keeps \
         CORES × JOBS_PER_CORE requests in flight to keep every core busy.",
        &[],
    ),
];

/// The register called `name`.
pub fn register_named(name: &str) -> Option<&'static Register> {
    REGISTERS.iter().find(|r| r.name == name)
}
