//! The service's listening sockets: created with their final mode and group, and removed only by
//! the service that created them.
//!
//! A socket bound at its path is reachable at once, under the process's umask, before a chmod
//! could narrow it. So it is bound in a fresh directory only the service can enter, given its
//! mode and group there, and renamed into place: it appears at its path already as it should be
//! (the rename also replaces a stale socket file atomically). Its inode is remembered, so that a
//! service that is still draining never removes the socket of the service that replaced it.

use anyhow::{bail, ensure, Context};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The file of a listening socket, as this service created it.
pub struct SocketFile {
    path: PathBuf,
    /// (device, inode) of the socket file this service created.
    identity: (u64, u64),
}

/// Who may connect to a socket: its file's mode and, optionally, its group.
#[derive(Clone, Copy, Debug)]
pub struct SocketAccess {
    pub mode: u32,
    pub group: Option<u32>,
}

impl SocketFile {
    /// Listens at `path` with `access`, replacing a stale socket file and refusing a live one
    /// or another kind of file.
    pub fn bind(path: &Path, access: SocketAccess) -> anyhow::Result<(UnixListener, SocketFile)> {
        if let Ok(metadata) = std::fs::symlink_metadata(path) {
            ensure!(metadata.file_type().is_socket(), "{} exists and is not a socket", path.display());
            if UnixStream::connect(path).is_ok() {
                bail!("another service is listening at {}", path.display());
            }
        }
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let name = path.file_name().with_context(|| format!("{} names no socket file", path.display()))?;
        let private = private_dir(parent, name)?;
        let bound = bind_in(&private, path, access);
        let _ = std::fs::remove_dir_all(&private);
        bound
    }

    /// Removes the socket file, unless it is no longer the one this service created.
    pub fn remove(&self) {
        match std::fs::symlink_metadata(&self.path) {
            Ok(metadata) if (metadata.dev(), metadata.ino()) == self.identity => {
                let _ = std::fs::remove_file(&self.path);
            }
            Ok(_) => {
                tracing::info!(socket = %self.path.display(), "the socket file is another service's now: left in place")
            }
            Err(_) => {}
        }
    }
}

/// A new directory beside the socket that only this process's user can enter.
fn private_dir(parent: &Path, name: &std::ffi::OsStr) -> anyhow::Result<PathBuf> {
    for attempt in 0..100u32 {
        let mut dir_name = std::ffi::OsString::from(".");
        dir_name.push(name);
        dir_name.push(format!(".{}.{attempt}", std::process::id()));
        let dir = parent.join(dir_name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create a directory in {}", parent.display())),
        }
    }
    bail!("cannot create a private directory in {}", parent.display())
}

fn bind_in(private: &Path, path: &Path, access: SocketAccess) -> anyhow::Result<(UnixListener, SocketFile)> {
    let staged = private.join("socket");
    let listener = UnixListener::bind(&staged).with_context(|| format!("cannot listen at {}", path.display()))?;
    if let Some(gid) = access.group {
        std::os::unix::fs::chown(&staged, None, Some(gid))
            .with_context(|| format!("cannot give {} to group {gid}", path.display()))?;
    }
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(access.mode))
        .with_context(|| format!("cannot set the mode of {} to {:04o}", path.display(), access.mode))?;
    std::fs::rename(&staged, path).with_context(|| format!("cannot listen at {}", path.display()))?;
    let metadata = std::fs::symlink_metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok((listener, SocketFile { path: path.to_path_buf(), identity: (metadata.dev(), metadata.ino()) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_appears_with_its_mode_and_only_its_creator_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let (listener, first) = SocketFile::bind(&path, SocketAccess { mode: 0o640, group: None }).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no staging directory is left behind");
        let refused = SocketFile::bind(&path, SocketAccess { mode: 0o600, group: None }).err().unwrap();
        assert!(refused.to_string().contains("another service is listening"), "{refused}");
        drop(listener);
        // A successor replaces the stale file; the first service then removes nothing.
        let (_listener, second) = SocketFile::bind(&path, SocketAccess { mode: 0o600, group: None }).unwrap();
        first.remove();
        assert!(UnixStream::connect(&path).is_ok(), "the successor's socket is still there");
        second.remove();
        assert!(!path.exists());
    }
}
