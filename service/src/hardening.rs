//! What keeps the service's keys out of reach of its own user and of the disk: no core dump, no
//! ptrace or /proc/PID/mem, and pages locked in RAM when the limits allow (docs/service.md).

use anyhow::ensure;
use std::io;

/// The capability that lets a process lock memory beyond RLIMIT_MEMLOCK (linux/capability.h).
const CAP_IPC_LOCK: u32 = 14;

/// Makes the process non-dumpable: no core dump, and a process of the same user can no longer
/// ptrace it or read its /proc/PID/mem or /proc/PID/environ (root still can). Call it before
/// any key is read.
pub fn forbid_dumps() -> anyhow::Result<()> {
    // SAFETY: prctl with integer arguments only.
    let done = unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    ensure!(done == 0, "cannot make the process non-dumpable: {}", io::Error::last_os_error());
    Ok(())
}

/// Locks the process's pages in RAM, now and to come (`mlockall`), so that no key reaches swap;
/// `Err` says why they are not locked. Only when the process may lock without limit
/// (RLIMIT_MEMLOCK infinite, or CAP_IPC_LOCK, as root has): under a finite limit, the first
/// allocation past it would fail. Pages lock as they are first touched (MCL_ONFAULT), so that
/// reserved but unused memory (thread stacks, heap arenas) costs nothing.
pub fn lock_memory() -> Result<(), String> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut limit) } != 0 {
        return Err(format!("cannot read RLIMIT_MEMLOCK: {}", io::Error::last_os_error()));
    }
    if limit.rlim_cur != libc::RLIM_INFINITY && !has_capability(CAP_IPC_LOCK) {
        return Err(format!("RLIMIT_MEMLOCK is {} KiB and the process lacks CAP_IPC_LOCK", limit.rlim_cur / 1024));
    }
    // SAFETY: mlockall takes flags only.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT) } != 0 {
        return Err(format!("mlockall failed: {}", io::Error::last_os_error()));
    }
    Ok(())
}

/// Whether the process's effective capabilities include `capability` (from /proc/self/status).
fn has_capability(capability: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << capability) != 0)
}
