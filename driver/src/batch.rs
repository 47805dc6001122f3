//! Runs a batch on a pool of worker threads, with a progress bar on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Items a worker takes at a time: large enough to keep the shared counter cold, small enough to
/// balance the tail of a batch.
const CHUNK: usize = 4;

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub fn progress_bar(len: usize, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label.to_string());
    bar
}

/// Worker threads: the requested count, or one per available core.
pub fn thread_count(requested: Option<usize>) -> usize {
    requested.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
}

/// A spinner on stderr for work of unknown length, drawn only on a terminal.
pub fn progress_spinner(message: &str) -> indicatif::ProgressBar {
    let spinner = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    spinner.set_message(message.to_string());
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}

/// Maps `work` over `items` on `threads` threads, each with its own state from `init`; the results
/// come back in the order of the items. `init` failing on a thread fails the whole batch.
pub fn parallel_map<T, S, R, E>(
    items: &[T],
    threads: usize,
    label: &str,
    init: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    let bar = progress_bar(items.len(), label);
    let results = parallel_map_on(&bar, items, threads, init, work);
    bar.finish_and_clear();
    results
}

/// [`parallel_map`] advancing a bar the caller owns (one bar over several batches of a stream).
pub fn parallel_map_on<T, S, R, E>(
    bar: &ProgressBar,
    items: &[T],
    threads: usize,
    init: impl Fn() -> Result<S, E> + Sync,
    work: impl Fn(&mut S, &T) -> R + Sync,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    let threads = threads.clamp(1, items.len().max(1));
    let worker = || -> Result<(), E> {
        let mut state = init()?;
        loop {
            let start = next.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= items.len() {
                return Ok(());
            }
            let end = (start + CHUNK).min(items.len());
            let done: Vec<(usize, R)> = (start..end).map(|i| (i, work(&mut state, &items[i]))).collect();
            results.lock().expect("no worker panics while holding the lock").extend(done);
            bar.inc((end - start) as u64);
        }
    };
    let outcomes: Vec<Result<(), E>> = std::thread::scope(|scope| {
        // As many threads as can be had: at the process's limit, fewer, or none and the caller's.
        let workers: Vec<_> =
            (0..threads).map_while(|_| std::thread::Builder::new().spawn_scoped(scope, worker).ok()).collect();
        let here = workers.is_empty().then(&worker);
        workers.into_iter().map(|w| w.join().expect("worker thread panicked")).chain(here).collect()
    });
    outcomes.into_iter().collect::<Result<(), E>>()?;
    let mut results = results.into_inner().expect("workers finished");
    results.sort_unstable_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_across_threads() {
        let items: Vec<u64> = (0..1000).collect();
        let out = parallel_map(
            &items,
            3,
            "test",
            || Ok::<_, ()>(0u64),
            |calls, x| {
                *calls += 1;
                x * 2
            },
        )
        .unwrap();
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
    }

    #[test]
    fn init_failure_fails_the_batch_and_empty_batches_work() {
        assert_eq!(parallel_map(&[1, 2, 3], 2, "t", || Err::<(), _>("no"), |_, x| *x), Err("no"));
        assert_eq!(parallel_map(&[] as &[u8], 4, "t", || Ok::<_, ()>(()), |_, x| *x), Ok(vec![]));
    }
}
