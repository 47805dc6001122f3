use super::*;
use crate::config::AcceleratorConfig;
use crate::testing::simulate;

/// The configuration the tests' register block reports: 1024-bit keys, 2 cores, w = 4, 128-bit
/// streams, 3 digits per step (S = 63 digits).
pub(crate) fn test_config() -> AcceleratorConfig {
    AcceleratorConfig {
        key_bits: 1024,
        cores: 2,
        window_bits: 4,
        stream_bits: 128,
        digits_per_step: 3,
        engine: crate::config::Engine::Slots,
        ..Default::default()
    }
}

#[test]
fn registers_is_synthesizable() {
    let mut uut = Registers::new(&test_config());
    uut.connect_all();
    yosys_validate("ecrt_registers", &generate_verilog(&uut)).unwrap();
}

/// One step of a test bench script.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// An AXI4-Lite write (address, data).
    Write(u32, u32),
    /// An AXI4-Lite read; its data is recorded.
    Read(u32),
    /// Set the `busy` input.
    Busy(bool),
    /// Set WSTRB for the writes that follow (0xF at first).
    Strobes(u64),
    /// One cycle of event inputs: job_in, job_out, job_failed, saw_key_not_loaded, saw_malformed.
    Events(bool, bool, bool, bool, bool),
}

/// What a script produced.
#[derive(Debug, Default)]
struct Outcome {
    /// The data of every read, in order.
    reads: Vec<u32>,
    /// Every key load pulse: (q path, target, data).
    loads: Vec<(bool, u64, u64)>,
    /// Soft reset pulses.
    resets: usize,
    /// The `packet_hold` output when each read's data was recorded.
    holds: Vec<u32>,
}

/// Runs `ops` against a register block ([`test_config`]: key_bits 1024, 2 cores, w = 4, 128-bit
/// stream). The master waits `k % 3` cycles before accepting the k-th response, so responses are
/// held under back-pressure.
fn run(ops: Vec<Op>) -> Outcome {
    // Each op takes at most 6 cycles.
    let cycles = 6 * ops.len() + 4;
    #[derive(Default)]
    struct Bench {
        op: usize,
        // Cycles the current transaction has waited with its response visible.
        held: usize,
        accepting: bool,
    }
    let mut bench = Bench::default();
    let mut ops = ops;
    ops.insert(0, Op::Strobes(0xF));
    let outcome = std::sync::Arc::new(std::sync::Mutex::new(Outcome::default()));
    let record = outcome.clone();
    simulate(Registers::new(&test_config()), cycles, move |uut, _| {
        let b = &mut bench;
        let mut out = record.lock().unwrap();
        out.resets += usize::from(uut.soft_reset.val());
        if uut.key_load.val() {
            out.loads.push((
                uut.key_load_slot.val(),
                uut.key_load_target.val().to_u64(),
                uut.key_load_data.val().to_u64(),
            ));
        }
        uut.job_in.next = false;
        uut.job_out.next = false;
        uut.job_failed.next = false;
        uut.saw_key_not_loaded.next = false;
        uut.saw_malformed.next = false;
        uut.s_axil_bready.next = false;
        uut.s_axil_rready.next = false;
        let Some(&op) = ops.get(b.op) else {
            uut.s_axil_awvalid.next = false;
            uut.s_axil_wvalid.next = false;
            uut.s_axil_arvalid.next = false;
            return;
        };
        let delay = b.op % 3;
        match op {
            Op::Write(addr, data) => {
                if b.accepting && !uut.s_axil_bvalid.val() {
                    b.op += 1;
                    b.accepting = false;
                    b.held = 0;
                } else if uut.s_axil_bvalid.val() {
                    // The write was taken; accept its response after `delay` cycles.
                    assert_eq!(uut.s_axil_bresp.val(), 0, "OKAY");
                    uut.s_axil_awvalid.next = false;
                    uut.s_axil_wvalid.next = false;
                    b.accepting = b.held >= delay;
                    uut.s_axil_bready.next = b.accepting;
                    b.held += 1;
                } else {
                    uut.s_axil_awvalid.next = true;
                    uut.s_axil_wvalid.next = true;
                    uut.s_axil_awaddr.next = (addr as u64).into();
                    uut.s_axil_wdata.next = (data as u64).into();
                }
            }
            Op::Read(addr) => {
                if b.accepting && !uut.s_axil_rvalid.val() {
                    b.op += 1;
                    b.accepting = false;
                    b.held = 0;
                } else if uut.s_axil_rvalid.val() {
                    assert_eq!(uut.s_axil_rresp.val(), 0, "OKAY");
                    uut.s_axil_arvalid.next = false;
                    if !b.accepting && b.held >= delay {
                        out.reads.push(uut.s_axil_rdata.val().to_u64() as u32);
                        out.holds.push(uut.packet_hold.val().to_u64() as u32);
                        b.accepting = true;
                    }
                    uut.s_axil_rready.next = b.accepting;
                    b.held += 1;
                } else {
                    uut.s_axil_arvalid.next = true;
                    uut.s_axil_araddr.next = (addr as u64).into();
                }
            }
            Op::Busy(busy) => {
                uut.busy.next = busy;
                b.op += 1;
            }
            Op::Strobes(strobes) => {
                uut.s_axil_wstrb.next = strobes.into();
                b.op += 1;
            }
            Op::Events(job_in, job_out, failed, key, malformed) => {
                uut.job_in.next = job_in;
                uut.job_out.next = job_out;
                uut.job_failed.next = failed;
                uut.saw_key_not_loaded.next = key;
                uut.saw_malformed.next = malformed;
                b.op += 1;
            }
        }
    });
    let outcome = std::mem::take(&mut *outcome.lock().unwrap());
    outcome
}

#[test]
fn registers_read_only_values_and_unknown_addresses() {
    let ro = [
        (REG_ID, ID_VALUE),
        (REG_VERSION, VERSION_VALUE),
        (REG_KEY_BITS, 1024),
        (REG_CORES, 2),
        (REG_DIGITS, test_config().digits() as u32),
        (REG_DIGITS_PER_STEP, 3),
        (REG_SCHEDULE, 0),
        (REG_ENGINE, 0),
        (REG_JOBS_PER_CORE, 1),
        (REG_WINDOW_BITS, 4),
        (REG_STREAM_BITS, 128),
        (REG_LIMB_BITS, 17),
        (REG_STATUS, 0),
        (REG_ERRORS, 0),
        (REG_JOBS_IN, 0),
        (REG_JOBS_OUT, 0),
        (REG_JOBS_FAILED, 0),
        (REG_KEY_CONTROL, 0),
        (REG_KEY_ID, 0),
        (REG_KEY_SELECT, 0),
        (REG_KEY_DATA, 0),
        (REG_PACKET_HOLD, 0),
        (0x034, 0),
        (0x100, 0),
        (0xFFC, 0),
        // A misaligned address is no register.
        (REG_ID + 3, 0),
    ];
    let mut ops: Vec<Op> = ro.iter().map(|&(a, _)| Op::Read(a)).collect();
    // Writes to read-only registers and unknown addresses change nothing; a write with no strobe
    // writes nothing; a write with some strobes writes the whole register.
    ops.extend([
        Op::Write(REG_ID, 0),
        Op::Write(REG_CORES, 9),
        Op::Write(0x100, 5),
        Op::Read(REG_ID),
        Op::Read(REG_CORES),
        Op::Strobes(0),
        Op::Write(REG_KEY_SELECT, 0x105),
        Op::Read(REG_KEY_SELECT),
        Op::Strobes(1),
        Op::Write(REG_KEY_SELECT, 0x105),
        Op::Read(REG_KEY_SELECT),
    ]);
    let out = run(ops);
    let expected: Vec<u32> = ro.iter().map(|&(_, v)| v).chain([ID_VALUE, 2, 0, 0x105]).collect();
    assert_eq!(out.reads, expected);
    assert!(out.loads.is_empty());
}

#[test]
fn registers_count_jobs_and_keep_sticky_errors_until_cleared() {
    let out = run(vec![
        Op::Events(true, false, false, false, false),
        Op::Events(true, true, false, true, false),
        Op::Events(true, true, true, false, false),
        Op::Events(false, false, false, false, true),
        Op::Busy(true),
        Op::Read(REG_JOBS_IN),
        Op::Read(REG_JOBS_OUT),
        Op::Read(REG_JOBS_FAILED),
        Op::Read(REG_STATUS),
        Op::Read(REG_ERRORS),
        Op::Write(REG_ERRORS, ERROR_KEY_NOT_LOADED),
        Op::Read(REG_ERRORS),
        Op::Write(REG_ERRORS, 0xFFFF_FFFF),
        Op::Read(REG_ERRORS),
    ]);
    assert_eq!(out.reads, vec![3, 2, 1, STATUS_BUSY, 3, ERROR_MALFORMED, 0]);
}

#[test]
fn registers_load_a_key_with_pulses_and_commit_it() {
    let out = run(vec![
        // No load open: KEY_DATA and COMMIT are refused.
        Op::Write(REG_KEY_DATA, 5),
        Op::Write(REG_KEY_CONTROL, key_control_commit(3)),
        Op::Read(REG_ERRORS),
        Op::Read(REG_STATUS),
        Op::Write(REG_ERRORS, ERROR_KEY_LOAD_REFUSED),
        Op::Write(REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
        Op::Read(REG_STATUS),
        Op::Write(REG_KEY_SELECT, key_select(true, 5)),
        Op::Write(REG_KEY_DATA, 0xFFFE_ABCD),
        Op::Write(REG_KEY_DATA, 1),
        Op::Write(REG_KEY_SELECT, key_select(false, 10)),
        Op::Write(REG_KEY_DATA, 0x1FFFF),
        Op::Read(REG_KEY_SELECT),
        Op::Write(REG_KEY_CONTROL, key_control_commit(0x7E)),
        Op::Read(REG_STATUS),
        Op::Read(REG_KEY_ID),
        Op::Read(REG_ERRORS),
    ]);
    assert_eq!(
        out.reads,
        vec![ERROR_KEY_LOAD_REFUSED, 0, STATUS_KEY_LOADING, key_select(false, 10), STATUS_KEY_VALID, 0x7E, 0]
    );
    assert_eq!(out.loads, vec![(true, 5, 0xABCD), (true, 5, 1), (false, 10, 0x1FFFF)]);
}

#[test]
fn registers_soft_reset_is_one_pulse_and_keeps_the_key() {
    let out = run(vec![
        Op::Write(REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
        Op::Write(REG_KEY_DATA, 1),
        Op::Write(REG_KEY_CONTROL, key_control_commit(6)),
        Op::Busy(true),
        Op::Write(REG_CONTROL, CONTROL_SOFT_RESET),
        Op::Write(REG_CONTROL, 0),
        Op::Write(REG_CONTROL, 0xFFFF_FFFF),
        Op::Read(REG_CONTROL),
        Op::Read(REG_STATUS),
        Op::Read(REG_KEY_ID),
        Op::Read(REG_ERRORS),
    ]);
    assert_eq!(out.resets, 2, "one pulse per write with the bit set, busy or not");
    assert_eq!(out.reads, vec![0, STATUS_KEY_VALID | STATUS_BUSY, 6, 0]);
}

#[test]
fn registers_refuse_key_writes_while_busy() {
    let out = run(vec![
        Op::Write(REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
        Op::Write(REG_KEY_DATA, 1),
        Op::Write(REG_KEY_CONTROL, key_control_commit(1)),
        Op::Busy(true),
        // A begin while busy leaves the valid key alone.
        Op::Write(REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
        Op::Read(REG_STATUS),
        Op::Read(REG_ERRORS),
        Op::Busy(false),
        Op::Write(REG_ERRORS, ERROR_KEY_LOAD_REFUSED),
        Op::Write(REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
        Op::Write(REG_KEY_DATA, 2),
        Op::Busy(true),
        // A refused KEY_DATA write spoils the load: its commit is refused, the key stays invalid.
        Op::Write(REG_KEY_DATA, 3),
        Op::Busy(false),
        Op::Write(REG_KEY_CONTROL, key_control_commit(2)),
        Op::Read(REG_STATUS),
        Op::Read(REG_ERRORS),
        Op::Read(REG_KEY_ID),
        // A fresh load commits.
        Op::Write(REG_KEY_CONTROL, KEY_CONTROL_BEGIN),
        Op::Write(REG_KEY_DATA, 4),
        Op::Write(REG_KEY_CONTROL, key_control_commit(2)),
        Op::Read(REG_STATUS),
        Op::Read(REG_KEY_ID),
    ]);
    assert_eq!(
        out.reads,
        vec![
            STATUS_KEY_VALID | STATUS_BUSY,
            ERROR_KEY_LOAD_REFUSED,
            STATUS_KEY_LOADING,
            ERROR_KEY_LOAD_REFUSED,
            1,
            STATUS_KEY_VALID,
            2
        ]
    );
    let data: Vec<u64> = out.loads.iter().map(|l| l.2).collect();
    assert_eq!(data, vec![1, 2, 4]);
}

/// PACKET_HOLD keeps its 12 bits, drives the collector's hold, and outlives a soft reset (a new
/// host finds the stream as it was configured).
#[test]
fn registers_keep_packet_hold_through_a_soft_reset() {
    let out = run(vec![
        Op::Write(REG_PACKET_HOLD, 0xFFFF_F123),
        Op::Read(REG_PACKET_HOLD),
        Op::Write(REG_CONTROL, CONTROL_SOFT_RESET),
        Op::Read(REG_PACKET_HOLD),
        Op::Strobes(0),
        Op::Write(REG_PACKET_HOLD, 7),
        Op::Read(REG_PACKET_HOLD),
        Op::Strobes(0xF),
        Op::Write(REG_PACKET_HOLD, 0),
        Op::Read(REG_PACKET_HOLD),
    ]);
    assert_eq!(out.resets, 1);
    assert_eq!(out.reads, vec![0x123, 0x123, 0x123, 0]);
    assert_eq!(out.holds, out.reads, "the output is the register");
}

/// The register block and the contract's register model (what the emulator answers with) give the
/// same reads and the same key shifts for the same random register sequences.
#[test]
fn registers_behave_as_the_contract_model() {
    use ecrt_contract::register_model::{RegisterModel, WriteEffect};
    use rand::{Rng, SeedableRng};
    let config = test_config();
    let offsets: Vec<u32> = REGISTERS.iter().map(|r| r.offset).chain([0x3FC, 0x042, 0x800]).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for _ in 0..6 {
        let mut ops = Vec::new();
        for _ in 0..80 {
            let offset = match rng.gen_range(0..10) {
                0..=3 => [REG_KEY_CONTROL, REG_KEY_DATA, REG_KEY_SELECT, REG_ERRORS, REG_CONTROL, REG_PACKET_HOLD]
                    [rng.gen_range(0..6)],
                _ => offsets[rng.gen_range(0..offsets.len())],
            };
            let value = match rng.gen_range(0..4) {
                0 => KEY_CONTROL_BEGIN,
                1 => key_control_commit(rng.gen()),
                _ => rng.gen(),
            };
            ops.push(match rng.gen_range(0..12) {
                0..=4 => Op::Write(offset, value),
                5..=8 => Op::Read(offset),
                9 => Op::Busy(rng.gen_bool(0.3)),
                10 => Op::Strobes(if rng.gen_bool(0.8) { 0xF } else { 0 }),
                _ => Op::Events(rng.gen(), rng.gen(), rng.gen(), rng.gen(), rng.gen()),
            });
        }
        let mut model = RegisterModel::new(&config);
        let (mut busy, mut strobes) = (false, true);
        let mut expected = Outcome::default();
        for &op in &ops {
            match op {
                Op::Write(offset, value) if strobes => match model.write(offset, value, busy) {
                    Some(WriteEffect::KeyShift(shift)) => {
                        expected.loads.push((shift.q_path, u64::from(shift.target), u64::from(shift.data)))
                    }
                    Some(WriteEffect::SoftReset) => expected.resets += 1,
                    None => {}
                },
                Op::Write(..) => {}
                Op::Read(offset) => {
                    expected.reads.push(model.read(offset, busy));
                    expected.holds.push(model.packet_hold());
                }
                Op::Busy(b) => busy = b,
                Op::Strobes(s) => strobes = s != 0,
                Op::Events(job_in, job_out, failed, key, malformed) => {
                    if job_in {
                        model.job_in();
                    }
                    if job_out {
                        model.job_out(if failed { RESULT_MALFORMED } else { RESULT_OK });
                    }
                    let status =
                        if key { RESULT_KEY_NOT_LOADED } else { 0 } | if malformed { RESULT_MALFORMED } else { 0 };
                    model.refused(status);
                }
            }
        }
        let rtl = run(ops.clone());
        assert_eq!(rtl.reads, expected.reads, "reads of {ops:?}");
        assert_eq!(rtl.loads, expected.loads, "key shifts of {ops:?}");
        assert_eq!(rtl.resets, expected.resets, "soft resets of {ops:?}");
        assert_eq!(rtl.holds, expected.holds, "the packet_hold output along {ops:?}");
    }
}
