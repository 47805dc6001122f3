//! A spinner with elapsed time on stderr for the slow steps (Verilator, g++, Yosys).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A spinner that shows the current step and the elapsed time, or nothing when disabled (and
/// nothing when stderr is not a terminal: indicatif hides itself there).
#[derive(Clone)]
pub(crate) struct Spinner {
    bar: Option<ProgressBar>,
    start: Instant,
}

impl Spinner {
    pub(crate) fn new(enabled: bool, prefix: &str) -> Self {
        let bar = enabled.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner:.cyan} {prefix:.bold} {wide_msg} [{elapsed_precise}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_prefix(prefix.to_owned());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Spinner { bar, start: Instant::now() }
    }

    /// Shows what is being done now.
    pub(crate) fn step(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
        }
    }

    /// Replaces the spinner with a final line: `msg` and the elapsed time ("… in 5.2 s").
    pub(crate) fn done(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
            if !b.is_hidden() {
                eprintln!("{msg} in {:.1} s", self.start.elapsed().as_secs_f64());
            }
        }
    }

    /// Removes the spinner without a message (on errors: the error says enough).
    pub(crate) fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
