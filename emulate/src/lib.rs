//! An emulated Xilinx XDMA device: the device nodes that the XDMA Linux driver
//! (dma_ip_drivers/XDMA/linux-kernel) creates, served by a FUSE file system and backed by the
//! accelerator's Verilator model, so that the host driver's real XDMA code path can run against
//! the real RTL without a board (`ecrt emulate`, or [`Emulator::mount`] in tests).
//!
//! # What is modelled
//!
//! One device (`xdma0`) in AXI4-Stream mode, with three nodes in the mount directory:
//!
//! - `xdma0_user`, the AXI4-Lite BAR: a `pread`/`pwrite` of exactly 4 bytes at a 4-byte-aligned
//!   offset inside the BAR is one register access (little-endian u32); any other size or offset
//!   fails with EINVAL. `stat` gives the BAR size.
//! - `xdma0_h2c_0`: each `write()` is one AXI4-Stream packet (one or more whole request frames);
//!   its bytes become beats (word k in lane k mod L, the last beat zero-padded, TLAST on it). The
//!   write returns once the card has taken every beat, or fails with ETIMEDOUT after the H2C
//!   timeout. Reads fail with EINVAL.
//! - `xdma0_c2h_0`: opens once (EBUSY while open). A `read(size)` returns when `size` bytes have
//!   arrived, or early at the end of a packet (TLAST, which ends a burst of one or more result
//!   frames) with the bytes so far; what does not fit stays for the next read. It fails with
//!   ETIMEDOUT when nothing completes within the C2H timeout. The card's results wait in a
//!   bounded buffer (a few result frames, like XDMA's limited buffering, or as much as a pending
//!   read takes); when it is full the card's TREADY falls, and nothing is dropped. A read still
//!   pending when the node is released (its process died in it) fails, and takes nothing.
//! - A soft reset (CONTROL) is the responder's; the bridge then stops owing the results the card
//!   dropped and clocks the model until its cores have run out.
//!
//! File offsets on the stream nodes are ignored, as in stream mode. The responder behind the
//! nodes is the Verilator model ([`RtlResponder`]) or a stand-in that answers at once
//! ([`InstantResponder`]); [`Fault`]s make the device stall or corrupt a result on purpose.
//!
//! # What is not
//!
//! - No `_control`, `_events_*` or `_bypass` nodes and no interrupts: the host polls. One H2C and
//!   one C2H channel only.
//! - No AXI-MM mode, no `mmap` of the BAR, no TKEEP (every byte of a beat is valid).
//! - The nodes are regular files, not character devices (those would open a real driver).
//! - A `write()` larger than the kernel's largest FUSE request (1 MiB unless
//!   `fs.fuse.max_pages_limit` is raised) reaches the device as several packets.
//! - No timing model of PCIe or of the DMA engines: the model runs as fast as it simulates.

mod bridge;
mod device;
mod faults;
mod fs;
pub mod process;
mod responder;

pub use faults::Fault;
pub use responder::{InstantResponder, Responder, ResponderKind, RtlResponder};

use anyhow::{anyhow, bail, Context};
use device::{DeviceHandle, DeviceOptions};
use ecrt_contract::config::AcceleratorConfig;
use ecrt_contract::interface::{FrameLayout, ADDRESS_BITS};
use ecrt_sim::BuildOptions;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The emulated device's name: its nodes are `<mount>/xdma0_user`, `…_h2c_0` and `…_c2h_0`.
pub const DEVICE_NAME: &str = "xdma0";
/// The XDMA driver's default transfer timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How to emulate the device.
#[derive(Debug, Clone)]
pub struct EmulatorOptions {
    /// The accelerator configuration: the registers report it, and the RTL model is built from it.
    pub config: AcceleratorConfig,
    /// What answers the requests.
    pub responder: ResponderKind,
    /// Faults to inject.
    pub faults: Vec<Fault>,
    /// How long an H2C write may wait for the card to take its beats.
    pub h2c_timeout: Duration,
    /// How long a C2H read may wait for data.
    pub c2h_timeout: Duration,
    /// Result frames the C2H buffer holds before the card's stream is stopped.
    pub c2h_buffer_frames: usize,
    /// Bytes of the user BAR (`stat` size of the user node; at least 4 KiB, a multiple of 4).
    pub bar_size: u64,
    /// Where the RTL model is built and cached, and whether a spinner shows meanwhile.
    pub build: BuildOptions,
}

impl EmulatorOptions {
    /// The defaults for `config`: the RTL responder, no faults, the XDMA driver's 10 s timeouts,
    /// four result frames of C2H buffering and a 4 KiB BAR.
    pub fn new(config: AcceleratorConfig) -> Self {
        EmulatorOptions {
            config,
            responder: ResponderKind::Rtl,
            faults: Vec::new(),
            h2c_timeout: DEFAULT_TIMEOUT,
            c2h_timeout: DEFAULT_TIMEOUT,
            c2h_buffer_frames: 4,
            bar_size: 1 << ADDRESS_BITS,
            build: BuildOptions::default(),
        }
    }

    /// One timeout for both stream directions.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        (self.h2c_timeout, self.c2h_timeout) = (timeout, timeout);
        self
    }
}

/// Builds the responder `options` ask for: for [`ResponderKind::Rtl`] this builds the Verilator
/// model (minutes the first time at 2048 bits; cached after).
pub fn build_responder(options: &EmulatorOptions) -> anyhow::Result<Box<dyn Responder>> {
    Ok(match options.responder {
        ResponderKind::Rtl => Box::new(RtlResponder::build(&options.config, &options.build)?),
        ResponderKind::Instant => Box::new(InstantResponder::new(&options.config)?),
    })
}

/// A mounted emulated device. Dropping it unmounts it (see [`Emulator::unmount`]).
pub struct Emulator {
    mount_dir: PathBuf,
    session: Option<fuser::BackgroundSession>,
    device: DeviceHandle,
    summary: String,
}

impl Emulator {
    /// Builds the responder and mounts the device nodes in `dir`, which must be empty (it is
    /// created if missing; a stale dead FUSE mount there is lazily unmounted first). The nodes
    /// exist when this returns.
    pub fn mount(dir: impl AsRef<Path>, options: EmulatorOptions) -> anyhow::Result<Self> {
        let responder = build_responder(&options)?;
        Self::mount_responder(dir, &options, responder)
    }

    /// Mounts the device nodes in `dir`, served by `responder` (`options.responder` is not used).
    pub fn mount_responder(
        dir: impl AsRef<Path>,
        options: &EmulatorOptions,
        responder: Box<dyn Responder>,
    ) -> anyhow::Result<Self> {
        let dir = dir.as_ref();
        let config = &options.config;
        config.validate()?;
        let layout = FrameLayout::new(config.digits(), config.stream_bits)?;
        if options.bar_size < 1 << ADDRESS_BITS || options.bar_size % 4 != 0 || options.bar_size > u64::from(u32::MAX) {
            bail!("a BAR of {} bytes: at least 4096, a multiple of 4, below 4 GiB", options.bar_size);
        }
        check_fuse()?;
        let mount_dir = prepare_mount_dir(dir)?;
        let cores = if config.cores == 1 { "1 core".to_string() } else { format!("{} cores", config.cores) };
        let mut summary = format!("{}-bit, {cores}, {}", config.key_bits, responder.name());
        if !options.faults.is_empty() {
            let faults: Vec<String> = options.faults.iter().map(Fault::to_string).collect();
            summary += &format!(", faults {}", faults.join(" "));
        }
        let device = DeviceHandle::spawn(
            responder,
            DeviceOptions {
                lanes: layout.lanes,
                request_beats: layout.request_beats,
                result_beats: layout.result_beats,
                h2c_timeout: options.h2c_timeout,
                c2h_timeout: options.c2h_timeout,
                c2h_capacity: options.c2h_buffer_frames.max(1) * layout.result_bytes,
                faults: faults::Faults::new(&options.faults),
            },
        )
        .context("cannot start the device thread")?;
        let fs = fs::XdmaFs::new(device.sender(), DEVICE_NAME, options.bar_size);
        let mut fuse = fuser::Config::default();
        fuse.mount_options = vec![
            fuser::MountOption::FSName("ecrt-xdma".into()),
            fuser::MountOption::Subtype("ecrt-xdma".into()),
            fuser::MountOption::DefaultPermissions,
            fuser::MountOption::NoAtime,
        ];
        // Mounting includes FUSE's INIT handshake: the nodes are there once this returns.
        let session = fuser::spawn_mount(fs, &mount_dir, &fuse).map_err(|error| mount_error(&mount_dir, error))?;
        Ok(Emulator { mount_dir, session: Some(session), device, summary })
    }

    /// The path prefix of the device nodes, `<mount>/xdma0`: a driver opens `<prefix>_user`,
    /// `<prefix>_h2c_0` and `<prefix>_c2h_0`.
    pub fn device_prefix(&self) -> PathBuf {
        self.mount_dir.join(DEVICE_NAME)
    }

    /// The mount directory (canonical).
    pub fn mount_dir(&self) -> &Path {
        &self.mount_dir
    }

    /// What is emulated, e.g. `2048-bit, 1 core, rtl`.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// Fails the transfers still pending (EIO) and unmounts. A mount still in use (a node is
    /// open) is detached lazily: it disappears from the directory now and ends when the last
    /// node is closed.
    pub fn unmount(mut self) -> anyhow::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> anyhow::Result<()> {
        // Fail the pending transfers first, so that no process is left blocked in the mount.
        self.device.shutdown();
        let Some(session) = self.session.take() else { return Ok(()) };
        match session.umount_and_join() {
            Ok(()) => Ok(()),
            Err(error) => lazy_unmount(&self.mount_dir)
                .with_context(|| format!("cannot unmount {} ({error})", self.mount_dir.display())),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Err(error) = self.shutdown() {
            eprintln!("ecrt emulate: {error:#}");
        }
    }
}

/// Fails early, with a clear message, where FUSE cannot work.
fn check_fuse() -> anyhow::Result<()> {
    if !Path::new("/dev/fuse").exists() {
        bail!("/dev/fuse does not exist: FUSE is not available here (load the fuse kernel module, or give the container /dev/fuse)");
    }
    // SAFETY: geteuid cannot fail and touches no memory.
    let root = unsafe { libc::geteuid() } == 0;
    if !root && find_program("fusermount3").is_none() && find_program("fusermount").is_none() {
        bail!("fusermount3 is not installed (the fuse3 package): only root can mount FUSE without it");
    }
    Ok(())
}

fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// Makes `dir` a usable mount point and returns its canonical path.
fn prepare_mount_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    let shown = dir.display();
    let user_node = format!("{DEVICE_NAME}_user");
    // Listing asks the file system itself (a stat may be answered from the kernel's cache).
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            let names: Vec<_> = entries.filter_map(Result::ok).map(|entry| entry.file_name()).collect();
            if names.iter().any(|name| name.to_str() == Some(&user_node)) {
                bail!("{shown} already holds an emulated device (another `ecrt emulate` serves it)");
            }
            // The mount would hide what is there.
            if !names.is_empty() {
                bail!("{shown} is not empty: mount the device on an empty or new directory");
            }
        }
        // A FUSE mount whose server died fails with ENOTCONN until it is unmounted.
        Err(error) if error.raw_os_error() == Some(libc::ENOTCONN) => {
            lazy_unmount(dir).with_context(|| format!("{shown} is a dead FUSE mount and cannot be unmounted"))?
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {shown}"))?
        }
        Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => bail!("{shown} is not a directory"),
        Err(error) => return Err(error).with_context(|| format!("cannot use {shown} as a mount point")),
    }
    dir.canonicalize().with_context(|| format!("cannot resolve {shown}"))
}

/// Detaches the mount at `dir` now (`fusermount3 -u -z`, or umount2(MNT_DETACH) as root).
fn lazy_unmount(dir: &Path) -> anyhow::Result<()> {
    let fusermount = Command::new("fusermount3")
        .args(["-u", "-z", "--"])
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let why = match fusermount {
        Ok(output) if output.status.success() => return Ok(()),
        Ok(output) => String::from_utf8_lossy(&output.stderr).trim().to_string(),
        Err(error) => format!("fusermount3: {error}"),
    };
    let path = CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) } == 0 {
        return Ok(());
    }
    Err(anyhow!("{why}; umount2: {}", std::io::Error::last_os_error()))
}

fn mount_error(dir: &Path, error: std::io::Error) -> anyhow::Error {
    let hint = match error.kind() {
        std::io::ErrorKind::NotFound => {
            " (FUSE needs /dev/fuse, and fusermount3 from the fuse3 package when not run as root)"
        }
        std::io::ErrorKind::PermissionDenied => " (mounting FUSE needs root, or fusermount3 allowed to do it)",
        _ => "",
    };
    anyhow!("cannot mount the emulated device at {}: {error}{hint}", dir.display())
}
