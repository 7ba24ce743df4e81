//! The terminal side of `cases::progress::Progress`: a progress bar on stderr.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Bar {
    bar: ProgressBar,
    /// Each phase's name and when it began, in order.
    phases: Mutex<Vec<(String, Instant)>>,
}

impl Bar {
    pub fn new() -> Bar {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{msg:>18} [{bar:40}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Bar {
            bar,
            phases: Mutex::new(Vec::new()),
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// How long each phase took, each until the next began and the last until now.
    pub fn phase_times(&self) -> Vec<(String, Duration)> {
        let phases = self.phases.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        phases
            .iter()
            .enumerate()
            .map(|(i, (name, began))| {
                let ended = phases.get(i + 1).map_or(now, |(_, next)| *next);
                (name.clone(), ended - *began)
            })
            .collect()
    }
}

impl cases::progress::Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        self.phases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((name.to_owned(), Instant::now()));
        self.bar.set_message(name.to_owned());
        self.bar.set_length(total);
        self.bar.set_position(0);
    }

    fn advance(&self, done: u64) {
        self.bar.set_position(done);
    }
}
