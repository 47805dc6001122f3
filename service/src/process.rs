//! `ecrt serve` as a child process, for the bench that measures the service's overhead: its CPU
//! time is read from /proc, apart from the client's.

use anyhow::{bail, Context};
use ecrt_driver::backends::service::ServiceClient;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `ecrt serve`; dropping it sends SIGTERM (it drains and exits) and waits.
pub struct ServeProcess {
    child: Child,
    socket: PathBuf,
}

impl ServeProcess {
    /// Starts `ecrt serve --socket DIR/ecrt.sock ARGS…` and waits until it answers.
    pub fn start(dir: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("cannot find the ecrt executable")?;
        let socket = dir.join("ecrt.sock");
        let child = Command::new(exe)
            .arg("serve")
            .arg("--socket")
            .arg(&socket)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start `ecrt serve`")?;
        let mut process = ServeProcess { child, socket };
        let deadline = Instant::now() + Duration::from_secs(60);
        while ServiceClient::connect(&process.socket).is_err() {
            if let Some(status) = process.child.try_wait()? {
                bail!("`ecrt serve` exited with {status} before listening");
            }
            if Instant::now() > deadline {
                bail!("`ecrt serve` did not listen at {} within a minute", process.socket.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(process)
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The service's CPU time so far (user + system, all its threads, from /proc).
    pub fn cpu_time(&self) -> anyhow::Result<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))?;
        // The fields after the command name (which may hold spaces) in parentheses.
        let fields: Vec<&str> = stat.rsplit_once(')').context("a /proc stat line")?.1.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
        // SAFETY: sysconf has no memory effects.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        Ok(Duration::from_secs_f64(ticks as f64 / per_second))
    }

    /// Context switches of the service's threads so far, voluntary and not (threads that ended
    /// are not counted: the service's threads live as long as their connection or device).
    pub fn context_switches(&self) -> anyhow::Result<u64> {
        let mut total = 0;
        for task in std::fs::read_dir(format!("/proc/{}/task", self.child.id()))? {
            // A thread may end between the listing and the read.
            let Ok(status) = std::fs::read_to_string(task?.path().join("status")) else { continue };
            total += status
                .lines()
                .filter(|line| line.contains("ctxt_switches:"))
                .filter_map(|line| line.split_whitespace().last()?.parse::<u64>().ok())
                .sum::<u64>();
        }
        Ok(total)
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
