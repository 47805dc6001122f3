//! The files a host application writes and streams, with the limits a careless or hostile input
//! needs: private keys are written 0600 and replace nothing without `force`, inputs stream. Key
//! files are read by [`crate::key_file`].

use anyhow::{bail, ensure, Context};
use std::fs::{File, Metadata};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Whether two paths name the same file: the same inode when both exist, else the same place.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        (Err(_), Err(_)) => absolute_destination(a) == absolute_destination(b),
        _ => false,
    }
}

/// A path with its directory resolved (the file itself need not exist).
fn absolute_destination(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(dir.canonicalize().ok()?.join(name))
}

/// Refuses an output that exists unless `force`, and one path named twice.
pub fn check_new_outputs(outputs: &[(&str, &Path)], force: bool) -> anyhow::Result<()> {
    for (i, (option, path)) in outputs.iter().enumerate() {
        for (other, earlier) in &outputs[..i] {
            ensure!(!same_file(path, earlier), "{other} and {option} name the same file ({})", path.display());
        }
        if !force && std::fs::symlink_metadata(path).is_ok() {
            bail!("{} exists; pass --force to replace it", path.display());
        }
    }
    Ok(())
}

/// Writes `text` to a new file of mode `mode` beside `path`, then renames it into place, so that
/// the file never exists with other permissions or half written. Without `force`, an existing
/// `path` is refused, even one created meanwhile.
pub fn write_file_atomically(path: &Path, text: &str, mode: u32, force: bool) -> anyhow::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().with_context(|| format!("{} is not a file name", path.display()))?;
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    temp.write_all(text.as_bytes())
        .and_then(|_| temp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", temp.path().display()))?;
    let placed = if force { temp.persist(path).map(drop) } else { temp.persist_noclobber(path).map(drop) };
    placed.map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("{} exists; pass --force to replace it", path.display())
        } else {
            anyhow::anyhow!("cannot write {}: {}", path.display(), e.error)
        }
    })?;
    // The rename is durable once the directory is.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// Ciphertext or number lines from a file, or from stdin for none or `-`; read as they come.
pub fn open_input(path: Option<&Path>) -> anyhow::Result<Box<dyn BufRead>> {
    match path.filter(|p| p.as_os_str() != "-") {
        Some(path) => {
            let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
            let metadata = file.metadata().with_context(|| format!("cannot read {}", path.display()))?;
            ensure!(!metadata.is_dir(), "cannot read {}: it is a directory", path.display());
            Ok(Box::new(BufReader::with_capacity(1 << 16, file)))
        }
        None => Ok(Box::new(BufReader::with_capacity(1 << 16, std::io::stdin()))),
    }
}

/// Output lines to a file, or to stdout for none; refuses the input file, which the output would
/// truncate before it is read.
pub fn open_output(path: Option<&Path>, input: Option<&Path>) -> anyhow::Result<Box<dyn Write>> {
    match path {
        Some(path) => {
            if let Some(input) = input.filter(|p| p.as_os_str() != "-") {
                ensure!(!same_file(path, input), "--out and --in name the same file ({})", path.display());
            }
            let file = File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
            Ok(Box::new(BufWriter::new(file)))
        }
        None => Ok(Box::new(std::io::LineWriter::new(std::io::stdout()))),
    }
}

/// What a file system object is, for messages.
pub fn file_kind(metadata: &Metadata) -> &'static str {
    let t = metadata.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_set_the_mode_and_refuse_to_replace_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jwk");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let message = write_file_atomically(&path, "new", 0o600, false).unwrap_err().to_string();
        assert!(message.contains("exists; pass --force"), "{message}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        write_file_atomically(&path, "new", 0o600, true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        // Nothing else is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_same_destination_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("k.jwk");
        let also_a = dir.path().join(".").join("k.jwk");
        let b = dir.path().join("k.pub");
        let message = check_new_outputs(&[("--out", &a), ("--public-out", &also_a)], true).unwrap_err().to_string();
        assert!(message.contains("--out and --public-out name the same file"), "{message}");
        assert!(check_new_outputs(&[("--out", &a), ("--public-out", &b)], false).is_ok());
        std::fs::write(&a, "").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        assert!(check_new_outputs(&[("--out", &a), ("--public-out", &b)], true).is_err());
    }
}
