//! Yosys runs whose parsed results are cached by content: one staging directory per run, the
//! result stored as `<cache_dir>/estimate/<kind>-<key>.json`.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Condvar, Mutex};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::cache::{ensure_dir, keep_failed_log, key_lock, staging_dir};
use crate::error::{Result, SimError};
use crate::toolchain::Log;

/// One Yosys run: the files it reads (written into its working directory) and its script.
pub(crate) struct Job<'a> {
    /// (file name, contents).
    pub files: Vec<(&'a str, &'a str)>,
    /// The script, run with `yosys -q -p`.
    pub script: String,
}

/// The cached result for `kind`/`key`, or else the result of running `job` and reading its
/// working directory with `parse`, stored under that key when `cache_dir` is set.
pub(crate) fn cached<T: Serialize + DeserializeOwned>(
    cache_dir: Option<&Path>,
    kind: &str,
    key: &str,
    job: &Job,
    parse: impl FnOnce(&Path) -> Result<T>,
) -> Result<T> {
    let path = cache_dir.map(|d| d.join("estimate").join(format!("{kind}-{key}.json")));
    let lock = key_lock(&format!("{kind}-{key}"));
    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = path.as_ref().and_then(|p| lookup(p)) {
        return Ok(found);
    }
    let work_parent: PathBuf = match cache_dir {
        Some(d) => {
            ensure_dir(d)?;
            d.to_path_buf()
        }
        None => std::env::temp_dir(),
    };
    let staging = staging_dir(&work_parent, "yosys")?;
    let dir = staging.path();
    let run = || -> Result<T> {
        for (name, text) in &job.files {
            std::fs::write(dir.join(name), text)
                .map_err(|e| SimError::io(format!("writing {}", dir.join(name).display()), e))?;
        }
        Log::create(dir.join("yosys.log"))?;
        yosys(dir, &job.script)?;
        parse(dir)
    };
    let failed_dir = cache_dir.map(Path::to_path_buf).unwrap_or_else(|| std::env::temp_dir().join("ecrt-sim"));
    let value = run().map_err(|e| keep_failed_log(e, &failed_dir, &format!("yosys-{kind}-{key}")))?;
    if let Some(path) = &path {
        store(path, &value, dir)?;
    }
    Ok(value)
}

/// Yosys runs at once in this process: one a CPU, or `ECRT_SIM_JOBS`.
pub(crate) fn jobs() -> usize {
    std::env::var("ECRT_SIM_JOBS")
        .ok()
        .and_then(|j| j.parse::<usize>().ok())
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Yosys runs going now, at most [`jobs`]: runs started side by side (a design's units beside its
/// timing run, for one) would otherwise share the CPUs, and the longest of them, started first,
/// would finish later than it has to.
static RUNNING: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

thread_local! {
    /// This thread holds a slot (a unit worker holds one across its run): it takes no second one.
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// A slot for one Yosys run, held until dropped.
pub(crate) struct YosysSlot {
    owned: bool,
}

/// Waits for a slot, unless this thread holds one already.
pub(crate) fn yosys_slot() -> YosysSlot {
    if HOLDING.get() {
        return YosysSlot { owned: false };
    }
    let limit = jobs();
    let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    while *running >= limit {
        running = FREED.wait(running).unwrap_or_else(|e| e.into_inner());
    }
    *running += 1;
    HOLDING.set(true);
    YosysSlot { owned: true }
}

impl Drop for YosysSlot {
    fn drop(&mut self) {
        if self.owned {
            HOLDING.set(false);
            *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            FREED.notify_one();
        }
    }
}

/// Runs `yosys -q -p script` in `dir`, its output appended to the run's `yosys.log`, in a slot
/// ([`yosys_slot`]).
pub(crate) fn yosys(dir: &Path, script: &str) -> Result<()> {
    let _slot = yosys_slot();
    let mut cmd = Command::new("yosys");
    cmd.arg("-q").arg("-p").arg(script).current_dir(dir);
    Log { path: dir.join("yosys.log") }.run(&mut cmd, "yosys")
}

/// Whether a result is cached (without running anything).
pub(crate) fn is_cached(cache_dir: Option<&Path>, kind: &str, key: &str) -> bool {
    cache_dir.is_some_and(|d| d.join("estimate").join(format!("{kind}-{key}.json")).is_file())
}

fn lookup<T: DeserializeOwned>(path: &Path) -> Option<T> {
    std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok())
}

/// Writes the cache file atomically (through a file in the staging directory, then a rename).
fn store<T: Serialize>(path: &Path, value: &T, staging: &Path) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| SimError::io(format!("creating {}", parent.display()), e))?;
    let tmp = staging.join("result.json");
    // Compact: a unit's nets run to tens of megabytes at 2048 bits, three times that indented.
    let text = serde_json::to_string(value).map_err(|e| SimError::Report { tool: "yosys", message: e.to_string() })?;
    std::fs::write(&tmp, text).map_err(|e| SimError::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path).map_err(|e| SimError::io(format!("moving {} to {}", tmp.display(), path.display()), e))
}

/// Reads a file of the working directory.
pub(crate) fn read(dir: &Path, name: &str) -> Result<String> {
    std::fs::read_to_string(dir.join(name))
        .map_err(|e| SimError::io(format!("reading {}", dir.join(name).display()), e))
}
