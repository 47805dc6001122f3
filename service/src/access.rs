//! Who may use the service. The socket file's mode and group decide who connects; a key's
//! allow-list decides, from the peer's credentials as the kernel reports them (SO_PEERCRED), who
//! decrypts under it. Key files must be private to their owner, as ssh requires.

use anyhow::{ensure, Context};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

/// The process at the other end of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub pid: i32,
    pub uid: u32,
    pub gid: u32,
    /// Its supplementary groups (from /proc; empty if the process is already gone).
    pub groups: Vec<u32>,
}

impl Peer {
    /// The peer's credentials, from the kernel.
    pub fn of(stream: &UnixStream) -> std::io::Result<Peer> {
        // SAFETY: getsockopt writes at most `len` bytes into the ucred it is given.
        let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        let rc = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Peer { pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: supplementary_groups(cred.pid) })
    }
}

/// The `Groups:` line of /proc/PID/status.
fn supplementary_groups(pid: i32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Groups:"))
        .map(|groups| groups.split_whitespace().filter_map(|g| g.parse().ok()).collect())
        .unwrap_or_default()
}

/// A key's allow-list: with neither list, anyone who can connect may decrypt under the key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    pub uids: Vec<u32>,
    pub gids: Vec<u32>,
}

impl Access {
    pub fn is_open(&self) -> bool {
        self.uids.is_empty() && self.gids.is_empty()
    }

    /// Whether `peer` may decrypt: its UID is listed, or its primary or a supplementary group is.
    pub fn allows(&self, peer: &Peer) -> bool {
        self.is_open()
            || self.uids.contains(&peer.uid)
            || self.gids.contains(&peer.gid)
            || peer.groups.iter().any(|g| self.gids.contains(g))
    }
}

/// Refuses a key file that its group or others can read or write, or that another user owns
/// (root's files excepted): the service would otherwise spread a key that was meant to be private.
pub fn check_key_file_private(path: &Path) -> anyhow::Result<()> {
    let metadata = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mode = metadata.permissions().mode() & 0o777;
    ensure!(
        mode & 0o077 == 0,
        "{} is accessible to its group or others (mode {mode:04o}): a private key file must be \
         readable by its owner alone (chmod 600 {})",
        path.display(),
        path.display()
    );
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    ensure!(
        metadata.uid() == me || metadata.uid() == 0,
        "{} belongs to UID {}, not to the service's user (UID {me}) or root",
        path.display(),
        metadata.uid()
    );
    Ok(())
}

/// A group by name or number.
pub fn group_id(group: &str) -> anyhow::Result<u32> {
    if let Ok(gid) = group.parse() {
        return Ok(gid);
    }
    let groups = std::fs::read_to_string("/etc/group").context("cannot read /etc/group")?;
    groups
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let gid = fields.nth(1)?.parse().ok()?;
            Some((name, gid))
        })
        .find(|(name, _)| *name == group)
        .map(|(_, gid)| gid)
        .with_context(|| format!("no group {group:?} in /etc/group"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_lists_match_uids_and_any_of_the_peers_groups() {
        let peer = Peer { pid: 1, uid: 1000, gid: 100, groups: vec![100, 27] };
        assert!(Access::default().allows(&peer));
        assert!(Access { uids: vec![1000], gids: vec![] }.allows(&peer));
        assert!(Access { uids: vec![], gids: vec![100] }.allows(&peer));
        assert!(Access { uids: vec![], gids: vec![27] }.allows(&peer));
        assert!(!Access { uids: vec![0], gids: vec![5] }.allows(&peer));
    }

    #[test]
    fn a_key_file_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        check_key_file_private(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let error = check_key_file_private(&path).unwrap_err().to_string();
        assert!(error.contains("mode 0640") && error.contains("chmod 600"), "{error}");
    }

    #[test]
    fn the_peer_of_a_socket_pair_is_this_process() {
        let (a, _b) = UnixStream::pair().unwrap();
        let peer = Peer::of(&a).unwrap();
        assert_eq!(peer.pid as u32, std::process::id());
        assert_eq!(peer.uid, unsafe { libc::geteuid() });
        assert_eq!(group_id("0").unwrap(), 0);
        assert_eq!(group_id("root").unwrap(), 0);
        assert!(group_id("no-such-group-here").is_err());
    }
}
