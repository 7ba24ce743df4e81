//! The terminal side of `cases::progress::Progress`: a progress bar on stderr.

use indicatif::{ProgressBar, ProgressStyle};

pub struct Bar(ProgressBar);

impl Bar {
    pub fn new() -> Bar {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{msg:>18} [{bar:40}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        Bar(bar)
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl cases::progress::Progress for Bar {
    fn phase(&self, name: &str, total: u64) {
        self.0.set_message(name.to_owned());
        self.0.set_length(total);
        self.0.set_position(0);
    }

    fn advance(&self, done: u64) {
        self.0.set_position(done);
    }
}
