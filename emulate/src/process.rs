//! `ecrt emulate` as a child process, the way the bench and the demo use the emulated device: in
//! its own process, as the kernel driver would be, so the host's CPU time is the driver's alone.

use anyhow::{bail, Context};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `ecrt emulate`; dropping it sends SIGTERM (the emulator unmounts) and waits.
pub struct EmulatorProcess {
    child: Child,
    prefix: PathBuf,
}

impl EmulatorProcess {
    /// Starts `ecrt emulate --mount DIR ARGS…` and waits until it reports the mount (a first
    /// Verilator build can take minutes; its progress goes to stderr). `echo` forwards the
    /// emulator's messages to stderr.
    fn start(mount: &Path, args: &[String], echo: bool) -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("cannot find the ecrt executable")?;
        let mut child = Command::new(exe)
            .arg("emulate")
            .arg("--mount")
            .arg(mount)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start `ecrt emulate`")?;
        let stderr = child.stderr.take().expect("piped");
        let (mounted_tx, mounted) = mpsc::channel();
        std::thread::spawn(move || {
            let mut last = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if echo {
                    eprintln!("{line}");
                }
                if line.contains(" mounted at ") {
                    let _ = mounted_tx.send(Ok(()));
                }
                last = line;
            }
            let _ = mounted_tx.send(Err(last));
        });
        let prefix = mount.join(crate::DEVICE_NAME);
        let mut process = EmulatorProcess { child, prefix };
        let last = match mounted.recv() {
            Ok(Ok(())) => return Ok(process),
            Ok(Err(last)) => last,
            Err(_) => String::new(),
        };
        let status = process.child.wait()?;
        bail!("`ecrt emulate` stopped before mounting ({status}): {last}")
    }

    /// Starts the emulated device of `config`, with `cores` cores and the given responder.
    pub fn start_for(
        mount: &Path,
        config: &ecrt_contract::config::AcceleratorConfig,
        cores: usize,
        responder: &str,
        echo: bool,
    ) -> anyhow::Result<Self> {
        let args = [
            ("--key-bits", config.key_bits.to_string()),
            ("--cores", cores.to_string()),
            ("--stream-bits", config.stream_bits.to_string()),
            ("--schedule", config.schedule.to_string()),
            ("--window-bits", config.window_bits.to_string()),
            ("--digits-per-step", config.digits_per_step.to_string()),
            ("--engine", config.engine.to_string()),
            ("--responder", responder.to_string()),
        ];
        let args: Vec<String> = args.into_iter().flat_map(|(flag, value)| [flag.to_string(), value]).collect();
        Self::start(mount, &args, echo)
    }

    /// The device prefix to pass as `--device`.
    pub fn device_prefix(&self) -> &Path {
        &self.prefix
    }

    /// Stops the emulator (SIGTERM: it unmounts), waiting up to a few seconds.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        if self.child.try_wait()?.is_some() {
            return Ok(());
        }
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait()? {
                if !status.success() {
                    bail!("`ecrt emulate` exited with {status}");
                }
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill()?;
        self.child.wait()?;
        bail!("`ecrt emulate` did not stop on SIGTERM and was killed")
    }
}

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
