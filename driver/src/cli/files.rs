//! The files the command reads and writes, with the limits a careless or hostile input needs: key
//! files are small regular files, keys are of a supported size, private keys are written 0600 and
//! replace nothing without `--force`, inputs stream.

use anyhow::{bail, ensure, Context};
use ecrt_driver::xdma::nodes::file_kind;
use ecrt_golden::phe_format::{read_private_key, read_public_key, KeyFileError};
use ecrt_golden::{PrivateKey, PublicKey};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::ops::RangeInclusive;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The largest key file read: an 8192-bit private JWK takes about 3 KB.
pub const MAX_KEY_FILE_BYTES: u64 = 1 << 20;
/// Bits of n that `decrypt` and `encrypt` take: phe's sizes (1024 to 3072) and room around them.
/// Checked before any primality test or exponentiation, whose cost grows with the size.
pub const SUPPORTED_KEY_BITS: RangeInclusive<u64> = 512..=ecrt_golden::key::MAX_KEY_BITS;

/// The text of a key file: a regular file of at most [`MAX_KEY_FILE_BYTES`]. Opened without
/// blocking, so that a FIFO with no writer is refused rather than waited on.
pub fn read_key_file(path: &Path) -> anyhow::Result<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let metadata = file.metadata().with_context(|| format!("cannot read {}", path.display()))?;
    ensure!(metadata.is_file(), "{} is {}, not a key file (a regular file)", path.display(), file_kind(&metadata));
    let mut bytes = Vec::new();
    file.take(MAX_KEY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    ensure!(
        bytes.len() as u64 <= MAX_KEY_FILE_BYTES,
        "{} is larger than {} KiB: not a key file",
        path.display(),
        MAX_KEY_FILE_BYTES >> 10
    );
    // Never quote the bytes: a private key file holds p and q.
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{} is not UTF-8 text: not a key file", path.display()))
}

/// Refuses a modulus outside [`SUPPORTED_KEY_BITS`], saying which sizes are supported.
pub fn check_key_size(bits: u64) -> anyhow::Result<()> {
    ensure!(SUPPORTED_KEY_BITS.contains(&bits), size_error(bits));
    Ok(())
}

fn size_error(bits: u64) -> anyhow::Error {
    let (low, high) = (SUPPORTED_KEY_BITS.start(), SUPPORTED_KEY_BITS.end());
    anyhow::anyhow!("the key's modulus n has {bits} bits; ecrt supports keys of {low} to {high} bits")
}

/// The public key of a key file (public or private), of a supported size.
fn public_key_of(text: &str) -> anyhow::Result<PublicKey> {
    match read_public_key(text) {
        Ok(public) => check_key_size(public.bits()).map(|_| public),
        Err(KeyFileError::TooLarge { bits }) => Err(size_error(bits)),
        Err(e) => Err(e.into()),
    }
}

/// A public key from a pheutil JWK file (the public half of a private key file also does).
pub fn read_public_key_file(path: &Path) -> anyhow::Result<PublicKey> {
    let text = read_key_file(path)?;
    public_key_of(&text).with_context(|| format!("cannot use key file {}", path.display()))
}

/// A private key from a pheutil JWK file; its size is checked before its primes are.
pub fn read_private_key_file(path: &Path) -> anyhow::Result<PrivateKey> {
    let text = read_key_file(path)?;
    let parse = || -> anyhow::Result<PrivateKey> {
        match read_public_key(&text) {
            Ok(public) => check_key_size(public.bits())?,
            Err(KeyFileError::TooLarge { bits }) => return Err(size_error(bits)),
            Err(_) => {} // read_private_key names what is wrong
        }
        Ok(read_private_key(&text)?)
    };
    parse().with_context(|| format!("cannot use key file {}", path.display()))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_must_be_small_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b' '; MAX_KEY_FILE_BYTES as usize + 1]).unwrap();
        let message = format!("{:#}", read_key_file(&big).unwrap_err());
        assert!(message.contains("larger than 1024 KiB"), "{message}");
        let message = format!("{:#}", read_key_file(Path::new("/dev/zero")).unwrap_err());
        assert!(message.contains("a character device, not a key file"), "{message}");
        let message = format!("{:#}", read_key_file(dir.path()).unwrap_err());
        assert!(message.contains("a directory"), "{message}");
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let message = format!("{:#}", read_key_file(&fifo).unwrap_err());
        assert!(message.contains("a FIFO, not a key file"), "{message}");
        let binary = dir.path().join("binary");
        std::fs::write(&binary, [b'{', 0xff, b'}']).unwrap();
        assert!(format!("{:#}", read_key_file(&binary).unwrap_err()).contains("not UTF-8"));
    }

    #[test]
    fn key_sizes_are_checked_with_the_range_in_the_message() {
        for bits in [511, 8193, 332_200] {
            let message = check_key_size(bits).unwrap_err().to_string();
            assert!(message.contains(&format!("{bits} bits")) && message.contains("512 to 8192 bits"), "{message}");
        }
        assert!(check_key_size(512).is_ok() && check_key_size(8192).is_ok());
    }

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
