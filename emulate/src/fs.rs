//! The FUSE file system: a root directory with the device nodes of one XDMA device in AXI4-Stream
//! mode. Each node operation becomes a [`Command`] for the device thread; replies to reads and
//! writes are sent from there when the transfer completes, so the FUSE loop never blocks.

use super::device::{Command, Completion, IoError};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, KernelConfig, LockOwner, OpenFlags,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};
use std::collections::VecDeque;
use std::ffi::OsStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long the kernel may cache names and attributes (they never change).
const TTL: Duration = Duration::from_secs(1);
/// The largest write the kernel may pass in one request (it caps this at its own limit, 1 MiB by
/// default): a larger write() reaches the device as several packets.
const MAX_WRITE: u32 = 16 << 20;
/// A C2H open that finds the node open waits this long for the previous release: the kernel
/// sends RELEASE after close() has returned, so a close followed at once by an open would
/// otherwise see EBUSY.
const RELEASE_GRACE: Duration = Duration::from_millis(200);

/// A node of the mounted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Root,
    /// `<device>_user`: the AXI4-Lite BAR.
    User,
    /// `<device>_h2c_0`: host-to-card stream, one packet per write.
    H2c,
    /// `<device>_c2h_0`: card-to-host stream.
    C2h,
}

impl Node {
    const FILES: [Node; 3] = [Node::User, Node::H2c, Node::C2h];

    fn ino(self) -> INodeNo {
        INodeNo(match self {
            Node::Root => INodeNo::ROOT.0,
            Node::User => 2,
            Node::H2c => 3,
            Node::C2h => 4,
        })
    }

    fn from_ino(ino: INodeNo) -> Option<Node> {
        [Node::Root, Node::User, Node::H2c, Node::C2h].into_iter().find(|n| n.ino() == ino)
    }

    fn suffix(self) -> &'static str {
        match self {
            Node::Root => "",
            Node::User => "_user",
            Node::H2c => "_h2c_0",
            Node::C2h => "_c2h_0",
        }
    }
}

/// Who holds the C2H node, and the opens waiting for its release.
#[derive(Default)]
struct C2hOwner {
    open: bool,
    waiting: VecDeque<(u64, ReplyOpen)>,
}

/// The emulated device's file system.
pub(crate) struct XdmaFs {
    device: Sender<Command>,
    /// The nodes' name prefix (`xdma0`).
    prefix: String,
    bar_size: u64,
    uid: u32,
    gid: u32,
    c2h: Arc<Mutex<C2hOwner>>,
    next_handle: AtomicU64,
}

fn errno(error: IoError) -> Errno {
    match error {
        IoError::TimedOut => Errno::ETIMEDOUT,
        IoError::Failed => Errno::EIO,
    }
}

fn lock(owner: &Mutex<C2hOwner>) -> std::sync::MutexGuard<'_, C2hOwner> {
    // The state stays consistent even if a holder panicked: every change is one assignment.
    owner.lock().unwrap_or_else(|e| e.into_inner())
}

impl XdmaFs {
    pub(crate) fn new(device: Sender<Command>, prefix: &str, bar_size: u64) -> Self {
        // SAFETY: getuid and getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        XdmaFs {
            device,
            prefix: prefix.to_string(),
            bar_size,
            uid,
            gid,
            c2h: Arc::default(),
            next_handle: AtomicU64::new(1),
        }
    }

    fn name(&self, node: Node) -> String {
        format!("{}{}", self.prefix, node.suffix())
    }

    fn attr(&self, node: Node) -> FileAttr {
        let (kind, perm, size, nlink) = match node {
            Node::Root => (FileType::Directory, 0o755, 0, 2),
            Node::User => (FileType::RegularFile, 0o666, self.bar_size, 1),
            // Regular files, not device nodes: the kernel would open a real driver for those.
            Node::H2c | Node::C2h => (FileType::RegularFile, 0o666, 0, 1),
        };
        let epoch = SystemTime::UNIX_EPOCH;
        FileAttr {
            ino: node.ino(),
            size,
            blocks: 0,
            atime: epoch,
            mtime: epoch,
            ctime: epoch,
            crtime: epoch,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        }
    }

    /// Hands a command to the device thread; if the thread is gone, fails it at once.
    fn submit(&self, command: Command) {
        if let Err(unsent) = self.device.send(command) {
            unsent.0.fail(IoError::Failed);
        }
    }

    /// The register offset of a BAR access, if it is one 32-bit register access.
    fn register_offset(&self, offset: u64, len: usize) -> Option<u32> {
        let in_bar = offset.checked_add(4).is_some_and(|end| end <= self.bar_size);
        (len == 4 && offset % 4 == 0 && in_bar).then_some(offset as u32)
    }

    fn handle(&self) -> FileHandle {
        FileHandle(self.next_handle.fetch_add(1, Ordering::Relaxed))
    }

    /// Opens the C2H node, or parks the open until the holder releases it (EBUSY after
    /// [`RELEASE_GRACE`]).
    fn open_c2h(&self, reply: ReplyOpen) {
        let mut owner = lock(&self.c2h);
        if !owner.open {
            owner.open = true;
            return reply.opened(self.handle(), FopenFlags::FOPEN_DIRECT_IO);
        }
        let ticket = self.next_handle.fetch_add(1, Ordering::Relaxed);
        owner.waiting.push_back((ticket, reply));
        drop(owner);
        let c2h = Arc::clone(&self.c2h);
        let timer = std::thread::Builder::new().name("ecrt-emulate-c2h-open".into()).spawn(move || {
            std::thread::sleep(RELEASE_GRACE);
            let mut owner = lock(&c2h);
            if let Some(k) = owner.waiting.iter().position(|(t, _)| *t == ticket) {
                if let Some((_, reply)) = owner.waiting.remove(k) {
                    reply.error(Errno::EBUSY);
                }
            }
        });
        if timer.is_err() {
            let mut owner = lock(&self.c2h);
            if let Some((_, reply)) = owner.waiting.pop_back() {
                reply.error(Errno::EBUSY);
            }
        }
    }

    fn release_c2h(&self) {
        // Before the next holder's reads: what is still pending is a dead process's.
        self.submit(Command::C2hReleased);
        let mut owner = lock(&self.c2h);
        owner.open = false;
        if let Some((ticket, reply)) = owner.waiting.pop_front() {
            owner.open = true;
            reply.opened(FileHandle(ticket), FopenFlags::FOPEN_DIRECT_IO);
        }
    }
}

impl Filesystem for XdmaFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        if let Err(largest) = config.set_max_write(MAX_WRITE) {
            let _ = config.set_max_write(largest);
        }
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = Node::FILES.into_iter().find(|&n| parent == INodeNo::ROOT && name.to_str() == Some(&self.name(n)));
        match found {
            Some(node) => reply.entry(&TTL, &self.attr(node), fuser::Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match Node::from_ino(ino) {
            Some(node) => reply.attr(&TTL, &self.attr(node)),
            None => reply.error(Errno::ENOENT),
        }
    }

    /// Nothing can be changed; O_TRUNC and the like succeed without effect, as on a device.
    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        self.getattr(req, ino, None, reply)
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match Node::from_ino(ino) {
            Some(Node::C2h) => self.open_c2h(reply),
            // Direct I/O: every read() and write() reaches us with its own size, uncached.
            Some(Node::User | Node::H2c) => reply.opened(self.handle(), FopenFlags::FOPEN_DIRECT_IO),
            Some(Node::Root) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        if Node::from_ino(ino) == Some(Node::C2h) {
            self.release_c2h();
        }
        reply.ok();
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        reply.ok();
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match Node::from_ino(ino) {
            Some(Node::User) => match self.register_offset(offset, size as usize) {
                Some(offset) => {
                    let done: Completion<u32> = Box::new(move |result| match result {
                        Ok(value) => reply.data(&value.to_le_bytes()),
                        Err(error) => reply.error(errno(error)),
                    });
                    self.submit(Command::ReadRegister { offset, done });
                }
                None => reply.error(Errno::EINVAL),
            },
            // Stream mode: the file offset means nothing.
            Some(Node::C2h) => {
                let done: Completion<Vec<u8>> = Box::new(move |result| match result {
                    Ok(bytes) => reply.data(&bytes),
                    Err(error) => reply.error(errno(error)),
                });
                self.submit(Command::C2hRead { size: size as usize, done });
            }
            Some(Node::H2c) => reply.error(Errno::EINVAL),
            Some(Node::Root) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match Node::from_ino(ino) {
            Some(Node::User) => match self.register_offset(offset, data.len()) {
                Some(offset) => {
                    let value = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
                    let done: Completion<()> = Box::new(move |result| match result {
                        Ok(()) => reply.written(4),
                        Err(error) => reply.error(errno(error)),
                    });
                    self.submit(Command::WriteRegister { offset, value, done });
                }
                None => reply.error(Errno::EINVAL),
            },
            Some(Node::H2c) => {
                let done: Completion<usize> = Box::new(move |result| match result {
                    Ok(len) => reply.written(len as u32),
                    Err(error) => reply.error(errno(error)),
                });
                self.submit(Command::H2cWrite { data: data.to_vec(), done });
            }
            Some(Node::C2h) => reply.error(Errno::EINVAL),
            Some(Node::Root) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let mut entries = vec![(Node::Root, ".".to_string()), (Node::Root, "..".to_string())];
        entries.extend(Node::FILES.map(|n| (n, self.name(n))));
        for (k, (node, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            let kind = if node == Node::Root { FileType::Directory } else { FileType::RegularFile };
            // The offset given with an entry is where the next readdir resumes.
            if reply.add(node.ino(), k as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
