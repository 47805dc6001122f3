//! The XDMA driver's device nodes, as dma_ip_drivers' XDMA/linux-kernel creates them: the
//! AXI4-Lite BAR (`_user`, 4-byte `pread`/`pwrite`) and one AXI4-Stream channel each way
//! (`_h2c_0` writes packets, `_c2h_0` reads them; it opens once). Transfers use 4 KiB-aligned
//! buffers, as the driver pins user pages for DMA, and loop over short reads and writes.

use crate::files::file_kind;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// DMA buffers start on a page.
pub const BUFFER_ALIGN: usize = 4096;
/// The XDMA driver moves at most this many bytes per call.
pub const MAX_TRANSFER: usize = 0x7fff_f000;
/// statfs's `f_type` of a FUSE file system (linux/magic.h), where `ecrt emulate` serves the nodes.
const FUSE_SUPER_MAGIC: u64 = 0x6573_5546;

/// The nodes of one XDMA device, from their common prefix (`/dev/xdma0`).
#[derive(Debug, Clone)]
pub struct DeviceNodes {
    pub user: PathBuf,
    pub h2c: PathBuf,
    pub c2h: PathBuf,
}

impl DeviceNodes {
    pub fn new(prefix: &Path) -> Self {
        let node = |suffix: &str| {
            let mut name = prefix.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        DeviceNodes { user: node("_user"), h2c: node("_h2c_0"), c2h: node("_c2h_0") }
    }

    /// Checks that each node is the XDMA driver's character device or a node of a FUSE file
    /// system (the emulated device): anything else (a regular file, a FIFO) would take the key
    /// load's register writes, or block.
    pub fn check(&self) -> anyhow::Result<()> {
        [&self.user, &self.h2c, &self.c2h].into_iter().try_for_each(|path| check_node(path))
    }

    /// Opens the register node, once [`DeviceNodes::check`] has passed.
    pub fn open_user(&self) -> anyhow::Result<UserRegisters> {
        self.check()?;
        let file = OpenOptions::new().read(true).write(true).open(&self.user).map_err(|e| open_error(&self.user, e))?;
        Ok(UserRegisters { file, path: self.user.clone() })
    }

    /// Opens the card-to-host stream (first: its reader must run before anything is written).
    pub fn open_c2h(&self) -> anyhow::Result<File> {
        File::open(&self.c2h).map_err(|e| open_error(&self.c2h, e))
    }

    /// Opens the host-to-card stream.
    pub fn open_h2c(&self) -> anyhow::Result<File> {
        OpenOptions::new().write(true).open(&self.h2c).map_err(|e| open_error(&self.h2c, e))
    }
}

fn on_fuse(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: statfs writes into the zeroed struct it is given; the path is NUL-terminated.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } == 0) && stat.f_type as u64 == FUSE_SUPER_MAGIC
}

/// One node of [`DeviceNodes::check`].
pub fn check_node(path: &Path) -> anyhow::Result<()> {
    let metadata = std::fs::metadata(path).map_err(|e| open_error(path, e))?;
    if metadata.file_type().is_char_device() || on_fuse(path) {
        return Ok(());
    }
    anyhow::bail!(
        "{} is {}, not the XDMA driver's character device (nor a node of `ecrt emulate`); nothing was written to it",
        path.display(),
        file_kind(&metadata)
    )
}

fn open_error(path: &Path, e: io::Error) -> anyhow::Error {
    let hint = match e.raw_os_error() {
        Some(libc::ENOENT) => {
            " (is the XDMA driver loaded and the bitstream programmed? see docs/bitstream.md; \
             for the emulated device run `ecrt emulate --mount DIR` and pass --device DIR/xdma0)"
        }
        Some(libc::EBUSY) => " (a C2H stream opens once: another process has it open)",
        Some(libc::EACCES) => " (permission denied: run as root or add a udev rule for the XDMA nodes)",
        Some(libc::ENOTCONN) => " (the emulated device's FUSE server is gone: unmount with fusermount3 -u)",
        _ => "",
    };
    anyhow::anyhow!("cannot open {}: {e}{hint}", path.display())
}

/// 32-bit registers of the AXI4-Lite BAR: the contract's register bus.
pub use ecrt_contract::session::RegisterBus as Registers;

/// The `_user` node: each register access is one 4-byte `pread` or `pwrite` at its offset.
pub struct UserRegisters {
    file: File,
    path: PathBuf,
}

impl UserRegisters {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Registers for UserRegisters {
    type Error = io::Error;

    fn read(&mut self, offset: u32) -> io::Result<u32> {
        let mut bytes = [0u8; 4];
        self.file.read_exact_at(&mut bytes, u64::from(offset))?;
        Ok(u32::from_le_bytes(bytes))
    }

    fn write(&mut self, offset: u32, value: u32) -> io::Result<()> {
        self.file.write_all_at(&value.to_le_bytes(), u64::from(offset))
    }
}

/// A zeroed, page-aligned byte buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    len: usize,
}

// The buffer owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1).next_multiple_of(BUFFER_ALIGN), BUFFER_ALIGN)
            .expect("buffer size fits the address space");
        // SAFETY: the layout has a nonzero size.
        let ptr =
            NonNull::new(unsafe { alloc_zeroed(layout) }).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout, len }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to layout.size() ≥ len initialised bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// Writes all of `bytes` to an H2C stream, at most [`MAX_TRANSFER`] bytes per call, resuming
/// after short writes and interruptions.
pub fn write_packet(h2c: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let mut sent = 0;
    while sent < bytes.len() {
        let end = bytes.len().min(sent + MAX_TRANSFER);
        match h2c.write(&bytes[sent..end]) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "the stream took no bytes")),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads what a C2H stream has, at most `buf.len()` (capped at [`MAX_TRANSFER`]) bytes; a
/// stream read returns early at the end of a packet. Interruptions are retried.
pub fn read_some(c2h: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let end = buf.len().min(MAX_TRANSFER);
    loop {
        match c2h.read(&mut buf[..end]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_zeroed() {
        for len in [0, 1, 972, 4096, 5000] {
            let buf = AlignedBuf::new(len);
            assert_eq!(buf.as_ptr() as usize % BUFFER_ALIGN, 0);
            assert_eq!(buf.len(), len);
            assert!(buf.iter().all(|&b| b == 0));
        }
    }

    /// Takes at most `step` bytes per call, failing with EINTR every other call.
    struct Trickle {
        got: Vec<u8>,
        step: usize,
        calls: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls % 2 == 0 {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let n = buf.len().min(self.step);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn short_writes_are_resumed() {
        let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let mut sink = Trickle { got: vec![], step: 300, calls: 0 };
        write_packet(&mut sink, &data).unwrap();
        assert_eq!(sink.got, data);
        let mut stuck = Trickle { got: vec![], step: 0, calls: 0 };
        assert_eq!(write_packet(&mut stuck, &data).unwrap_err().kind(), io::ErrorKind::WriteZero);
    }

    #[test]
    fn node_names_follow_the_xdma_driver() {
        let nodes = DeviceNodes::new(Path::new("/dev/xdma1"));
        assert_eq!(nodes.user, Path::new("/dev/xdma1_user"));
        assert_eq!(nodes.h2c, Path::new("/dev/xdma1_h2c_0"));
        assert_eq!(nodes.c2h, Path::new("/dev/xdma1_c2h_0"));
    }

    #[test]
    fn only_character_devices_and_fuse_nodes_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("xdma0");
        let nodes = DeviceNodes::new(&prefix);
        for node in [&nodes.user, &nodes.h2c, &nodes.c2h] {
            std::fs::write(node, b"").unwrap();
        }
        let message = format!("{:#}", nodes.open_user().err().unwrap());
        assert!(message.contains("is a regular file, not the XDMA driver's character device"), "{message}");
        assert!(message.contains("xdma0_user"), "{message}");
        assert_eq!(std::fs::metadata(&nodes.user).unwrap().len(), 0, "nothing was written");
        // A FIFO would block the C2H open: refused too, even behind a good register node.
        std::fs::remove_file(&nodes.c2h).unwrap();
        let c_path = std::ffi::CString::new(nodes.c2h.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let message = format!("{:#}", check_node(&nodes.c2h).unwrap_err());
        assert!(message.contains("is a FIFO, not the XDMA driver's character device"), "{message}");
        // A character device passes (the check does not open it).
        check_node(Path::new("/dev/null")).unwrap();
        let message = format!("{:#}", check_node(dir.path()).unwrap_err());
        assert!(message.contains("is a directory"), "{message}");
    }

    #[test]
    fn a_missing_device_says_what_to_do() {
        let nodes = DeviceNodes::new(Path::new("/nonexistent/xdma9"));
        let message = nodes.open_user().err().unwrap().to_string();
        assert!(message.contains("/nonexistent/xdma9_user") && message.contains("XDMA driver"), "{message}");
    }
}
