//! The emulated XDMA device (`ecrt emulate`, `ecrt_driver::emulate`): its nodes behave as the
//! XDMA driver's do in AXI4-Stream mode, with the instant responder (fast) and, in one test,
//! the accelerator's Verilator model. Needs FUSE (/dev/fuse; root or fusermount3).

use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::interface::{self as itf, FrameLayout, ResultFrame};
use ecrt_emulate::{Emulator, EmulatorOptions, Fault, ResponderKind};
use num_bigint::BigUint;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KEY_ID: u8 = 3;

/// A mounted emulator and its directory (fields drop in order: unmount, then remove the dir).
struct Rig {
    emulator: Emulator,
    layout: FrameLayout,
    _dir: tempfile::TempDir,
}

fn instant_options(faults: &[Fault], timeout: Duration) -> EmulatorOptions {
    let config = AcceleratorConfig { key_bits: 1024, stream_bits: 128, ..Default::default() };
    let mut options = EmulatorOptions::new(config).with_timeout(timeout);
    options.responder = ResponderKind::Instant;
    options.faults = faults.to_vec();
    options
}

fn mount(options: EmulatorOptions) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let layout = options.config.frame_layout().unwrap();
    let emulator = Emulator::mount(dir.path().join("dev"), options).unwrap();
    Rig { emulator, layout, _dir: dir }
}

fn instant() -> Rig {
    mount(instant_options(&[], Duration::from_secs(10)))
}

fn node(prefix: &Path, suffix: &str) -> PathBuf {
    let mut path = prefix.as_os_str().to_owned();
    path.push(suffix);
    path.into()
}

impl Rig {
    fn user(&self) -> File {
        OpenOptions::new().read(true).write(true).open(node(&self.emulator.device_prefix(), "_user")).unwrap()
    }
    fn h2c(&self) -> File {
        OpenOptions::new().write(true).open(node(&self.emulator.device_prefix(), "_h2c_0")).unwrap()
    }
    fn c2h(&self) -> File {
        File::open(node(&self.emulator.device_prefix(), "_c2h_0")).unwrap()
    }
    fn request(&self, tag: u16, key_id: u8, ciphertext: &BigUint) -> Vec<u8> {
        itf::encode_request(tag, key_id, ciphertext, self.layout.digits, self.layout.stream_bits).unwrap()
    }
    /// Reads the result of the one request in flight with a buffer of several frames: a lone
    /// result ends its packet (TLAST), so the read returns exactly its frame.
    fn read_result(&self, c2h: &mut File) -> ResultFrame {
        let mut buffer = vec![0u8; 3 * self.layout.result_bytes];
        let n = c2h.read(&mut buffer).unwrap();
        assert_eq!(n, self.layout.result_bytes, "a read ends with its packet");
        itf::decode_result(&buffer[..n], self.layout.digits, self.layout.stream_bits).unwrap()
    }
}

/// Reads `count` result frames' words, split by size: results ready together leave in one packet
/// (TLAST ends a burst), so a read may return several, but always whole frames.
fn read_frames(c2h: &mut File, layout: &FrameLayout, count: usize) -> Vec<Vec<u32>> {
    let mut frames = Vec::new();
    while frames.len() < count {
        frames.extend(read_some_frames(c2h, layout, count - frames.len()));
    }
    frames
}

/// One read of at most `max` result frames.
fn read_some_frames(c2h: &mut File, layout: &FrameLayout, max: usize) -> Vec<Vec<u32>> {
    let mut buffer = vec![0u8; max * layout.result_bytes];
    let n = c2h.read(&mut buffer).unwrap();
    assert!(n > 0 && n % layout.result_bytes == 0, "{n} bytes are not whole frames");
    buffer[..n].chunks(layout.result_bytes).map(itf::bytes_to_words).collect()
}

fn read_register(user: &File, offset: u32) -> u32 {
    let mut bytes = [0u8; 4];
    assert_eq!(user.read_at(&mut bytes, offset.into()).unwrap(), 4);
    u32::from_le_bytes(bytes)
}

fn write_register(user: &File, offset: u32, value: u32) {
    assert_eq!(user.write_at(&value.to_le_bytes(), offset.into()).unwrap(), 4);
}

fn errno<T: std::fmt::Debug>(result: std::io::Result<T>) -> i32 {
    result.expect_err("the call fails").raw_os_error().expect("an errno")
}

#[test]
fn registers_read_through_the_user_node() {
    let rig = instant();
    let user = rig.user();
    assert_eq!(read_register(&user, itf::REG_ID), 0x4543_5254);
    assert_eq!(read_register(&user, itf::REG_VERSION), itf::VERSION_VALUE);
    assert_eq!(read_register(&user, itf::REG_KEY_BITS), 1024);
    assert_eq!(read_register(&user, itf::REG_STREAM_BITS), 128);
    assert_eq!(read_register(&user, itf::REG_DIGITS) as usize, rig.layout.digits);
    assert_eq!(read_register(&user, itf::REG_LIMB_BITS), 17);
    write_register(&user, itf::REG_KEY_SELECT, itf::key_select(true, 5));
    assert_eq!(read_register(&user, itf::REG_KEY_SELECT), itf::key_select(true, 5));
    assert_eq!(user.metadata().unwrap().len(), 4096, "stat gives the BAR size");
    let names: Vec<String> = std::fs::read_dir(rig.emulator.mount_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in ["xdma0_user", "xdma0_h2c_0", "xdma0_c2h_0"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
}

#[test]
fn anything_but_an_aligned_4_byte_register_access_is_einval() {
    let rig = instant();
    let user = rig.user();
    let mut bytes = [0u8; 8];
    assert_eq!(errno(user.read_at(&mut bytes[..2], 0)), libc::EINVAL, "short read");
    assert_eq!(errno(user.read_at(&mut bytes, 0)), libc::EINVAL, "long read");
    assert_eq!(errno(user.read_at(&mut bytes[..4], 2)), libc::EINVAL, "misaligned read");
    assert_eq!(errno(user.read_at(&mut bytes[..4], 4096)), libc::EINVAL, "past the BAR");
    assert_eq!(errno(user.write_at(&bytes[..3], 0)), libc::EINVAL, "short write");
    assert_eq!(errno(user.write_at(&bytes[..4], 6)), libc::EINVAL, "misaligned write");
    let h2c = OpenOptions::new().read(true).write(true).open(node(&rig.emulator.device_prefix(), "_h2c_0")).unwrap();
    assert_eq!(errno((&h2c).read(&mut bytes)), libc::EINVAL, "reading H2C");
    let c2h = OpenOptions::new().read(true).write(true).open(node(&rig.emulator.device_prefix(), "_c2h_0")).unwrap();
    assert_eq!(errno((&c2h).write(&bytes)), libc::EINVAL, "writing C2H");
    assert_eq!(read_register(&user, itf::REG_ID), itf::ID_VALUE, "still serving");
}

#[test]
fn a_request_gets_its_result_once_a_key_is_committed() {
    let rig = instant();
    let (user, mut h2c, mut c2h) = (rig.user(), rig.h2c(), rig.c2h());
    let ciphertext = (BigUint::from(1u8) << 1500) + 777u32;
    let request = rig.request(41, KEY_ID, &ciphertext);
    assert_eq!(h2c.write(&request).unwrap(), request.len(), "one write, one packet");
    let result = rig.read_result(&mut c2h);
    assert_eq!((result.tag, result.status), (41, itf::RESULT_KEY_NOT_LOADED));

    for (offset, value) in itf::key_load_writes(&[], KEY_ID) {
        write_register(&user, offset, value);
    }
    assert_eq!(read_register(&user, itf::REG_STATUS) & itf::STATUS_KEY_VALID, itf::STATUS_KEY_VALID);
    assert_eq!(read_register(&user, itf::REG_KEY_ID), KEY_ID as u32);
    h2c.write_all(&request).unwrap();
    let result = rig.read_result(&mut c2h);
    assert_eq!((result.tag, result.status, result.plaintext), (41, itf::RESULT_OK, BigUint::from(777u32)));
    // Another key id is refused.
    h2c.write_all(&rig.request(42, KEY_ID + 1, &ciphertext)).unwrap();
    assert_eq!(rig.read_result(&mut c2h).status, itf::RESULT_KEY_NOT_LOADED);
    // A packet of just a header is padded to one beat and answered MALFORMED with its tag.
    h2c.write_all(&itf::request_header(43, KEY_ID).to_le_bytes()).unwrap();
    let result = rig.read_result(&mut c2h);
    assert_eq!((result.tag, result.status), (43, itf::RESULT_MALFORMED));
    assert_eq!(read_register(&user, itf::REG_JOBS_IN), 4);
    assert_eq!(read_register(&user, itf::REG_JOBS_OUT), 4);
    assert_eq!(read_register(&user, itf::REG_JOBS_FAILED), 3);
}

#[test]
fn reads_end_at_tlast_and_leave_the_rest_for_the_next() {
    let rig = instant();
    let (mut h2c, mut c2h) = (rig.h2c(), rig.c2h());
    // A read of three frames' size returns the lone result's frame (a short read at TLAST).
    h2c.write_all(&rig.request(1, 0, &BigUint::from(1u8))).unwrap();
    assert_eq!(rig.read_result(&mut c2h).tag, 1);
    // A read smaller than a frame takes part of it; the next read returns the rest (TLAST).
    h2c.write_all(&rig.request(2, 0, &BigUint::from(2u8))).unwrap();
    let mut head = [0u8; 8];
    assert_eq!(c2h.read(&mut head).unwrap(), 8);
    assert_eq!(u32::from_le_bytes(head[..4].try_into().unwrap()) as u16, 2);
    let mut rest = vec![0u8; 4 * rig.layout.result_bytes];
    assert_eq!(c2h.read(&mut rest).unwrap(), rig.layout.result_bytes - 8);
}

#[test]
fn one_packet_may_carry_several_frames() {
    let rig = instant();
    let (mut h2c, mut c2h) = (rig.h2c(), rig.c2h());
    let packet: Vec<u8> = (1..=3).flat_map(|tag| rig.request(tag, 0, &BigUint::from(tag))).collect();
    assert_eq!(h2c.write(&packet).unwrap(), packet.len(), "one write, one packet");
    let tags: Vec<u16> = read_frames(&mut c2h, &rig.layout, 3).iter().map(|words| words[0] as u16).collect();
    assert_eq!(tags, [1, 2, 3]);
    assert_eq!(read_register(&rig.user(), itf::REG_JOBS_OUT), 3);
}

#[test]
fn many_requests_under_back_pressure_lose_nothing() {
    let rig = instant();
    let count = 40u16;
    let requests: Vec<Vec<u8>> = (0..count).map(|tag| rig.request(tag, 0, &BigUint::from(tag))).collect();
    let mut c2h = rig.c2h();
    // The writer blocks while the C2H buffer is full and the card holds a result.
    let writer = {
        let mut h2c = rig.h2c();
        std::thread::spawn(move || requests.iter().for_each(|r| h2c.write_all(r).unwrap()))
    };
    let mut tags = Vec::new();
    while tags.len() < count as usize {
        std::thread::sleep(Duration::from_millis(2));
        let frames = read_some_frames(&mut c2h, &rig.layout, count as usize - tags.len());
        tags.extend(frames.iter().map(|words| words[0] as u16));
    }
    writer.join().unwrap();
    assert_eq!(tags, (0..count).collect::<Vec<_>>());
}

#[test]
fn c2h_opens_once() {
    let rig = instant();
    let first = rig.c2h();
    let second = File::open(node(&rig.emulator.device_prefix(), "_c2h_0"));
    assert_eq!(errno(second), libc::EBUSY);
    drop(first);
    // Free again once the first is closed (FUSE releases after close returns: no race here).
    let _third = rig.c2h();
    // The other nodes open any number of times.
    let _users = (rig.user(), rig.user(), rig.h2c(), rig.h2c());
}

#[test]
fn dropping_the_emulator_unmounts() {
    let rig = instant();
    let dir = rig.emulator.mount_dir().to_path_buf();
    assert!(node(&rig.emulator.device_prefix(), "_user").exists());
    drop(rig.emulator);
    assert!(dir.is_dir(), "the directory stays");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the nodes are gone");
}

#[test]
fn a_stalled_device_times_out_but_answers_registers() {
    let options = instant_options(&[Fault::StallAfter(1)], Duration::from_millis(300));
    let room = options.config.cores * options.config.jobs_per_core();
    let rig = mount(options);
    let (user, mut h2c, mut c2h) = (rig.user(), rig.h2c(), rig.c2h());
    h2c.write_all(&rig.request(1, 0, &BigUint::from(9u8))).unwrap();
    assert_eq!(rig.read_result(&mut c2h).tag, 1, "the first result still comes");
    let started = Instant::now();
    let mut buffer = vec![0u8; rig.layout.result_bytes];
    assert_eq!(errno(c2h.read(&mut buffer)), libc::ETIMEDOUT);
    assert!(started.elapsed() >= Duration::from_millis(250), "after the timeout");
    // The cores take the jobs they have room for, whose results never leave; then no more.
    for tag in 2..2 + room as u16 {
        h2c.write_all(&rig.request(tag, 0, &BigUint::from(9u8))).unwrap();
    }
    assert_eq!(errno(h2c.write(&rig.request(9, 0, &BigUint::from(9u8)))), libc::ETIMEDOUT);
    assert_eq!(read_register(&user, itf::REG_ID), itf::ID_VALUE);
    assert_eq!(read_register(&user, itf::REG_JOBS_OUT), 1);
}

#[test]
fn a_corrupted_result_has_bit_31_of_word_1_set() {
    let rig = mount(instant_options(&[Fault::CorruptResult(1)], Duration::from_secs(10)));
    let (mut h2c, mut c2h) = (rig.h2c(), rig.c2h());
    for tag in [7, 8, 9] {
        h2c.write_all(&rig.request(tag, 0, &BigUint::from(1u8))).unwrap();
    }
    let frames = read_frames(&mut c2h, &rig.layout, 3);
    let (digits, stream_bits) = (rig.layout.digits, rig.layout.stream_bits);
    assert_eq!(frames[1][0] as u16, 8, "the tag is intact");
    assert_ne!(frames[1][1] & 1 << 31, 0, "bit 31 of word 1");
    let decoded = itf::decode_result(&itf::words_to_bytes(&frames[1]), digits, stream_bits);
    assert!(matches!(decoded, Err(itf::FrameError::LimbHighBits { word: 1, .. })), "{decoded:?}");
    for k in [0, 2] {
        assert_eq!(frames[k][1] & 1 << 31, 0);
        assert!(itf::decode_result(&itf::words_to_bytes(&frames[k]), digits, stream_bits).is_ok());
    }
}

/// An `ecrt emulate` child, killed (and its mount detached) if a test fails before it exits.
struct Server {
    child: Option<Child>,
    dir: PathBuf,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let child = Command::new(env!("CARGO_BIN_EXE_ecrt"))
            .args(["emulate", "--mount"])
            .arg(dir)
            .args(["--key-bits", "1024", "--cores", "2", "--responder", "instant"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut server = Server { child: Some(child), dir: dir.to_path_buf() };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !dir.join("xdma0_user").exists() {
            let status = server.child.as_mut().unwrap().try_wait().unwrap();
            assert!(status.is_none(), "ecrt emulate exited early: {status:?}: {}", server.stderr());
            assert!(Instant::now() < deadline, "the nodes did not appear");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(stderr) = self.child.as_mut().and_then(|c| c.stderr.as_mut()) {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }

    /// Sends SIGTERM and waits (bounded) for the exit status.
    fn terminate(&mut self) -> std::process::ExitStatus {
        let child = self.child.as_mut().unwrap();
        // SAFETY: kill has no memory effects; the pid is our child's, not yet reaped.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "ecrt emulate did not exit on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the server cannot unmount, and leaves the mount point dead.
    fn kill(&mut self) {
        let child = self.child.as_mut().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            if child.try_wait().ok().flatten().is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        // A server that died mounted leaves a dead mount (ENOTCONN): detach it.
        if std::fs::read_dir(&self.dir).err().and_then(|e| e.raw_os_error()) == Some(libc::ENOTCONN) {
            let _ = Command::new("fusermount3").args(["-u", "-z"]).arg(&self.dir).status();
        }
    }
}

#[test]
fn ecrt_emulate_serves_until_sigterm_and_unmounts() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("xdma");
    let mut server = Server::start(&mount, &["--fault", "stall-after=0", "--timeout-ms", "200"]);
    {
        let user = OpenOptions::new().read(true).write(true).open(mount.join("xdma0_user")).unwrap();
        assert_eq!(read_register(&user, itf::REG_ID), itf::ID_VALUE);
        assert_eq!(read_register(&user, itf::REG_CORES), 2);
        // Stalled from the start: a read times out after --timeout-ms.
        let mut c2h = File::open(mount.join("xdma0_c2h_0")).unwrap();
        assert_eq!(errno(c2h.read(&mut [0u8; 64])), libc::ETIMEDOUT);
    }
    let status = server.terminate();
    let stderr = server.stderr();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("xdma0 mounted at") && stderr.contains("(1024-bit, 2 cores, instant"), "{stderr}");
    assert!(!mount.join("xdma0_user").exists(), "unmounted");
    assert!(mount.is_dir());
}

#[test]
fn a_dead_mount_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("xdma");
    let mut server = Server::start(&mount, &[]);
    server.kill();
    assert_eq!(errno(std::fs::read_dir(&mount)), libc::ENOTCONN);
    let emulator = Emulator::mount(&mount, instant_options(&[], Duration::from_secs(10))).unwrap();
    let user = OpenOptions::new().read(true).write(true).open(node(&emulator.device_prefix(), "_user")).unwrap();
    assert_eq!(read_register(&user, itf::REG_ID), itf::ID_VALUE);
}

#[test]
fn ecrt_emulate_reports_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ecrt"))
        .args(["emulate", "--responder", "instant", "--mount"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a directory") && !stderr.contains("panicked"), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_ecrt"))
        .args(["emulate", "--responder", "instant", "--mount"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not empty"), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_ecrt"))
        .args(["emulate", "--mount", "x", "--fault", "drop=1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown fault"));
}

/// The RTL tests' configuration (one model for them all, the one the accelerator's constant-time
/// test builds): 512 bits, one two-slot core, 64-bit streams.
fn rtl_config() -> AcceleratorConfig {
    AcceleratorConfig {
        key_bits: 512,
        cores: 1,
        stream_bits: 64,
        engine: ecrt_contract::config::Engine::Slots,
        ..Default::default()
    }
}

/// The Verilator model behind the nodes: a 512-bit key loaded through the user node as
/// `AcceleratorSim::load_key` does, two ciphertexts decrypted through H2C and C2H, checked
/// against the golden model.
#[test]
fn the_rtl_model_decrypts_through_the_nodes() {
    use rand::SeedableRng;

    let mut rng = rand::rngs::StdRng::seed_from_u64(512);
    let key = ecrt_golden::PrivateKey::generate(512, &mut rng).unwrap();
    let config = rtl_config();
    let hw = ecrt_contract::host::hardware_key(&key, &config).unwrap();
    let mut options = EmulatorOptions::new(config.clone()).with_timeout(Duration::from_secs(120));
    options.build.progress = true;
    let started = Instant::now();
    let rig = mount(options);
    eprintln!("model built and mounted in {:.1} s", started.elapsed().as_secs_f64());

    let (user, mut h2c, mut c2h) = (rig.user(), rig.h2c(), rig.c2h());
    assert_eq!(read_register(&user, itf::REG_KEY_BITS), 512);
    let loads = hw.loads(config.window_bits);
    for (offset, value) in itf::key_load_writes(&loads, KEY_ID) {
        write_register(&user, offset, value);
    }
    assert_eq!(read_register(&user, itf::REG_ERRORS), 0);
    assert_eq!(read_register(&user, itf::REG_STATUS) & itf::STATUS_KEY_VALID, itf::STATUS_KEY_VALID);

    let started = Instant::now();
    let messages = [BigUint::from(123_456_789u32), key.public().n() - 1u32];
    for (tag, m) in messages.iter().enumerate() {
        let c = ecrt_golden::paillier::encrypt(key.public(), m, &mut rng).unwrap();
        h2c.write_all(&rig.request(tag as u16, KEY_ID, &c)).unwrap();
        let result = rig.read_result(&mut c2h);
        assert_eq!((result.tag, result.status), (tag as u16, itf::RESULT_OK));
        assert_eq!(&result.plaintext, m);
        assert_eq!(result.plaintext, hw.decrypt(&c).unwrap(), "the golden model agrees");
    }
    eprintln!("2 decryptions in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(read_register(&user, itf::REG_JOBS_OUT), 2);
}

/// The instant responder (the contract's register model) and the RTL's register block answer the
/// same register sequences with the same reads: the probe, a key load, a soft reset, refused
/// writes, clears and random accesses over the whole map (CONTROL included).
#[test]
fn the_instant_responder_and_the_rtl_share_one_register_model() {
    use ecrt_contract::session::{self, RegisterBus};
    use ecrt_emulate::{InstantResponder, Responder, RtlResponder};
    use rand::{Rng, SeedableRng};

    struct Bus<'a>(&'a mut dyn Responder, Vec<u32>);
    impl RegisterBus for Bus<'_> {
        type Error = std::io::Error;
        fn read(&mut self, offset: u32) -> std::io::Result<u32> {
            let value = self.0.read_register(offset).map_err(std::io::Error::other)?;
            self.1.push(value);
            Ok(value)
        }
        fn write(&mut self, offset: u32, value: u32) -> std::io::Result<()> {
            self.0.write_register(offset, value).map_err(std::io::Error::other)
        }
    }

    let config = rtl_config();
    let mut rng = rand::rngs::StdRng::seed_from_u64(77);
    let key = ecrt_golden::PrivateKey::generate(512, &mut rng).unwrap();
    let hw = ecrt_contract::host::hardware_key(&key, &config).unwrap();
    let offsets: Vec<u32> = itf::REGISTERS.iter().map(|r| r.offset).chain([0x3FC, 0x046, 0x1000]).collect();
    let script: Vec<(u32, Option<u32>)> = (0..300)
        .map(|_| {
            let offset = offsets[rng.gen_range(0..offsets.len())];
            let value = match rng.gen_range(0..4) {
                0 => itf::KEY_CONTROL_BEGIN,
                1 => itf::key_control_commit(rng.gen()),
                _ => rng.gen(),
            };
            (offset, rng.gen_bool(0.5).then_some(value))
        })
        .collect();
    let run = |responder: &mut dyn Responder| -> Vec<u32> {
        let mut bus = Bus(responder, Vec::new());
        let info = session::DeviceInfo::probe(&mut bus).unwrap();
        assert_eq!(info.config(), config);
        session::load_key(&mut bus, &hw, config.window_bits, KEY_ID).unwrap();
        // A soft reset, never refused, keeps the key (the script below writes CONTROL too).
        bus.write(itf::REG_CONTROL, itf::CONTROL_SOFT_RESET).unwrap();
        let status = bus.read(itf::REG_STATUS).unwrap();
        assert_eq!(status & itf::STATUS_KEY_VALID, itf::STATUS_KEY_VALID, "the key stays");
        // Refused: KEY_DATA and COMMIT with no load open; then cleared.
        bus.write(itf::REG_KEY_DATA, 5).unwrap();
        bus.write(itf::REG_KEY_CONTROL, itf::key_control_commit(9)).unwrap();
        for r in itf::REGISTERS {
            bus.read(r.offset).unwrap();
        }
        bus.write(itf::REG_ERRORS, u32::MAX).unwrap();
        for &(offset, write) in &script {
            match write {
                Some(value) => bus.write(offset, value).unwrap(),
                None => drop(bus.read(offset).unwrap()),
            }
        }
        bus.1
    };
    let instant = run(&mut InstantResponder::new(&config).unwrap());
    let rtl = run(&mut RtlResponder::build(&config, &Default::default()).unwrap());
    assert_eq!(rtl.len(), instant.len());
    for (k, (r, i)) in rtl.iter().zip(&instant).enumerate() {
        assert_eq!(r, i, "read {k}: the RTL reads {r:#x}, the instant responder {i:#x}");
    }
}

/// Taking over a card an earlier process left out of step (docs/interface.md, "Taking over a
/// card"): the 1024-bit phe key and vectors through a new `Decryptor`, on the instant responder
/// and on the RTL (two two-slot cores, the model of ecrt-sim's `phe_vectors`, so it is built once).
mod takeover {
    use super::*;
    use ecrt_driver::api::{BackendSpec, Decryptor, Options};
    use ecrt_driver::backends::xdma::nodes::DeviceNodes;
    use ecrt_driver::backends::xdma::probe;
    use ecrt_golden::PrivateKey;

    fn rig(responder: ResponderKind) -> Rig {
        let config = match responder {
            ResponderKind::Instant => AcceleratorConfig { key_bits: 1024, stream_bits: 128, ..Default::default() },
            ResponderKind::Rtl => AcceleratorConfig {
                key_bits: 1024,
                cores: 2,
                engine: ecrt_contract::config::Engine::Slots,
                ..Default::default()
            },
        };
        let mut options = EmulatorOptions::new(config).with_timeout(Duration::from_secs(10));
        options.responder = responder;
        options.build.progress = true;
        mount(options)
    }

    /// The phe key and its ciphertexts with the plaintexts `responder` gives: phe's, or the
    /// instant responder's stand-in (the ciphertext's low 1023 bits).
    fn vectors(responder: ResponderKind) -> (PrivateKey, Vec<BigUint>, Vec<BigUint>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/vectors/phe-1024.json");
        let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let key = ecrt_golden::phe_format::read_private_key(&file["private_key"].to_string()).unwrap();
        let number = |value: &serde_json::Value| value.as_str().unwrap().parse::<BigUint>().unwrap();
        let cases = file["cases"].as_array().unwrap();
        // The RTL takes about a second per decryption, and every vector goes through it in
        // every_1024_bit_phe_vector_decrypts_through_the_emulated_device: the three the dead
        // processes below use are enough here.
        let count = if responder == ResponderKind::Rtl { 3 } else { cases.len() };
        let ciphertexts: Vec<BigUint> = cases[..count].iter().map(|c| number(&c["ciphertext"]["v"])).collect();
        let plaintexts = match responder {
            ResponderKind::Rtl => cases[..count].iter().map(|c| number(&c["raw_plaintext"])).collect(),
            ResponderKind::Instant => {
                let mask = (BigUint::from(1u8) << 1023) - 1u8;
                ciphertexts.iter().map(|c| c & &mask).collect()
            }
        };
        (key, ciphertexts, plaintexts)
    }

    /// Waits until the card has sent `count` result frames in all (into C2H, where nobody reads them).
    fn wait_jobs_out(user: &File, count: u32) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while read_register(user, itf::REG_JOBS_OUT) < count {
            assert!(Instant::now() < deadline, "the card sent no result");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A new session on the card decrypts every vector, and says what it dropped.
    fn new_session_decrypts(rig: &Rig, responder: ResponderKind, dropped: usize) {
        let (key, ciphertexts, plaintexts) = vectors(responder);
        let spec = BackendSpec::Xdma { device: rig.emulator.device_prefix() };
        let options = Options { timeout: Some(Duration::from_secs(120)), ..Default::default() };
        let mut decryptor = Decryptor::open(&spec, &key, options).unwrap();
        assert_eq!(decryptor.open_report().dropped_results, dropped, "{}", decryptor.description());
        let took_over = format!("took over: dropped {dropped} result");
        assert_eq!(decryptor.description().contains(&took_over), dropped > 0, "{}", decryptor.description());
        let results = decryptor.decrypt_all(ciphertexts);
        let expected: Vec<_> = plaintexts.into_iter().map(Ok).collect();
        assert_eq!(results, expected);
        assert!(decryptor.close().is_empty());
        // The session after it finds nothing to drop.
        let (key, ciphertexts, _) = vectors(responder);
        let mut decryptor = Decryptor::open(&spec, &key, options).unwrap();
        assert_eq!(decryptor.open_report().dropped_results, 0);
        assert!(decryptor.decrypt_all(ciphertexts.into_iter().take(1)).iter().all(Result::is_ok));
    }

    /// (a) A process wrote 100 bytes of a request frame and exited: the card answered the packet
    /// (TLAST after 100 bytes) MALFORMED, and nobody read that result.
    fn a_partial_request_is_dropped(responder: ResponderKind) {
        let rig = rig(responder);
        let (key, ciphertexts, _) = vectors(responder);
        {
            let (user, mut h2c, _c2h) = (rig.user(), rig.h2c(), rig.c2h());
            let request = rig.request(5, probe::key_id(key.public().n()), &ciphertexts[0]);
            assert_eq!(h2c.write(&request[..100]).unwrap(), 100);
            wait_jobs_out(&user, 1);
        }
        new_session_decrypts(&rig, responder, 1);
    }

    /// (b) A process loaded its key, wrote two whole request frames and exited without reading
    /// their results.
    fn unread_results_are_dropped(responder: ResponderKind, wait_for_results: bool) {
        let rig = rig(responder);
        let (key, ciphertexts, _) = vectors(responder);
        {
            let mut user = DeviceNodes::new(&rig.emulator.device_prefix()).open_user().unwrap();
            let info = probe::DeviceInfo::probe(&mut user).unwrap();
            let hw = ecrt_contract::host::hardware_key(&key, &info.config()).unwrap();
            let key_id = probe::key_id(key.public().n());
            probe::load_key(&mut user, &hw, info.window_bits, key_id).unwrap();
            let (mut h2c, _c2h) = (rig.h2c(), rig.c2h());
            let packet: Vec<u8> =
                (1..=2).flat_map(|tag| rig.request(tag, key_id, &ciphertexts[tag as usize])).collect();
            h2c.write_all(&packet).unwrap();
            if wait_for_results {
                wait_jobs_out(&rig.user(), 2);
            }
        }
        new_session_decrypts(&rig, responder, if wait_for_results { 2 } else { 0 });
    }

    #[test]
    fn a_partial_request_left_by_a_dead_process_is_dropped_instant() {
        a_partial_request_is_dropped(ResponderKind::Instant);
    }

    #[test]
    fn results_left_unread_by_a_dead_process_are_dropped_instant() {
        unread_results_are_dropped(ResponderKind::Instant, true);
    }

    #[test]
    fn a_partial_request_left_by_a_dead_process_is_dropped_rtl() {
        a_partial_request_is_dropped(ResponderKind::Rtl);
    }

    #[test]
    fn results_left_unread_by_a_dead_process_are_dropped_rtl() {
        unread_results_are_dropped(ResponderKind::Rtl, true);
    }

    /// The RTL's jobs still running when their process exited: they run out after the soft
    /// reset, their results thrown away, before the new key loads.
    #[test]
    fn jobs_left_running_by_a_dead_process_run_out_rtl() {
        unread_results_are_dropped(ResponderKind::Rtl, false);
    }
}
