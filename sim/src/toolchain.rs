//! The external tools: finding them, asking their versions, and running them with a log file.
//!
//! Tools are taken from `PATH` (`verilator`, `yosys`); the C++ compiler is `$CXX` or `g++`. Versions
//! are asked once per process and become part of every cache key, so an upgraded tool never reuses
//! stale objects.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::error::{Result, SimError};

/// Lines of a failed step's log that go into the error message.
pub(crate) const TAIL_LINES: usize = 40;

/// The C++ compiler: `$CXX`, else `g++`.
pub(crate) fn cxx() -> String {
    std::env::var("CXX").ok().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "g++".to_owned())
}

fn capture(tool: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SimError::ToolMissing { tool: tool.to_owned(), source: e })?;
    if !out.status.success() {
        return Err(SimError::ToolMissing {
            tool: tool.to_owned(),
            source: std::io::Error::other(format!(
                "`{tool} {}` exited with {}: {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn cached(cell: &'static OnceLock<String>, tool: &str, args: &[&str]) -> Result<&'static str> {
    if let Some(v) = cell.get() {
        return Ok(v);
    }
    let v = capture(tool, args)?;
    Ok(cell.get_or_init(|| v))
}

/// `verilator --version`, e.g. `Verilator 5.006 2023-01-22 rev (Debian 5.006-3)`.
pub fn verilator_version() -> Result<&'static str> {
    static V: OnceLock<String> = OnceLock::new();
    cached(&V, "verilator", &["--version"])
}

/// `verilator --getenv VERILATOR_ROOT`: the directory whose `include/` holds the runtime sources.
pub(crate) fn verilator_root() -> Result<PathBuf> {
    static V: OnceLock<String> = OnceLock::new();
    Ok(PathBuf::from(cached(&V, "verilator", &["--getenv", "VERILATOR_ROOT"])?))
}

/// The C++ compiler's `--version` first line.
pub(crate) fn cxx_version() -> Result<&'static str> {
    static V: OnceLock<String> = OnceLock::new();
    if let Some(v) = V.get() {
        return Ok(v);
    }
    let full = capture(&cxx(), &["--version"])?;
    let first = full.lines().next().unwrap_or_default().to_owned();
    Ok(V.get_or_init(|| first))
}

/// `yosys -V`, e.g. `Yosys 0.23 (git sha1 7ce5011c24b)`.
pub fn yosys_version() -> Result<&'static str> {
    static V: OnceLock<String> = OnceLock::new();
    cached(&V, "yosys", &["-V"])
}

/// An append-only build log shared by the steps of one build.
#[derive(Debug, Clone)]
pub(crate) struct Log {
    pub(crate) path: PathBuf,
}

impl Log {
    pub(crate) fn create(path: PathBuf) -> Result<Self> {
        File::create(&path).map_err(|e| SimError::io(format!("creating {}", path.display()), e))?;
        Ok(Log { path })
    }

    fn open(&self) -> Result<File> {
        OpenOptions::new()
            .append(true)
            .open(&self.path)
            .map_err(|e| SimError::io(format!("opening {}", self.path.display()), e))
    }

    /// Appends a line to the log.
    pub(crate) fn note(&self, line: &str) -> Result<()> {
        let mut f = self.open()?;
        writeln!(f, "{line}").map_err(|e| SimError::io(format!("writing {}", self.path.display()), e))
    }

    /// Starts `cmd` with stdout and stderr appended to the log (after the command line itself).
    pub(crate) fn spawn(&self, cmd: &mut Command) -> Result<std::process::Child> {
        self.note(&format!("$ {}", display_command(cmd)))?;
        let out = self.open()?;
        let err = out.try_clone().map_err(|e| SimError::io("duplicating a log handle", e))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        let program = cmd.get_program().to_string_lossy().into_owned();
        cmd.spawn().map_err(|e| SimError::ToolMissing { tool: program, source: e })
    }

    /// Waits for a child started by [`Log::spawn`]; a failure becomes [`SimError::Build`].
    pub(crate) fn wait(&self, mut child: std::process::Child, stage: &str) -> Result<()> {
        let status = child.wait().map_err(|e| SimError::io(format!("waiting for {stage}"), e))?;
        if status.success() {
            Ok(())
        } else {
            self.note(&format!("# {stage} failed: {status}"))?;
            Err(self.failure(stage))
        }
    }

    /// Runs `cmd` to completion with its output in the log.
    pub(crate) fn run(&self, cmd: &mut Command, stage: &str) -> Result<()> {
        let start = std::time::Instant::now();
        let child = self.spawn(cmd)?;
        self.wait(child, stage)?;
        self.note(&format!("# {stage}: {:.2} s", start.elapsed().as_secs_f64()))
    }

    /// A [`SimError::Build`] for `stage` carrying the log's tail.
    pub(crate) fn failure(&self, stage: &str) -> SimError {
        SimError::Build { stage: stage.to_owned(), log: self.path.clone(), tail: tail(&self.path, TAIL_LINES) }
    }
}

/// The shell-like rendering of a command, for logs.
pub(crate) fn display_command(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains([' ', '"', '\'', ';', '$']) {
            s.push_str(&format!(" '{}'", a.replace('\'', r"'\''")));
        } else {
            s.push(' ');
            s.push_str(&a);
        }
    }
    s
}

/// The last `n` lines of a text file (at most the last 64 KiB are read).
pub(crate) fn tail(path: &Path, n: usize) -> String {
    let Ok(mut f) = File::open(path) else { return String::from("(log unavailable)") };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(64 * 1024);
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(start)).is_err() || f.read_to_end(&mut buf).is_err() {
        return String::from("(log unreadable)");
    }
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
