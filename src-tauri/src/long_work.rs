//! Long work the window starts, follows and may cancel (a calibration report, a package in or
//! out): progress as events carrying the window's number for the work, and a cancel flag the
//! domain's `Progress::cancelled` answers from. The domain stops at its next step and writes
//! nothing; the command then fails with the `cancelled` code.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tauri::{AppHandle, Emitter, Runtime};

/// The work under way of one kind, which a cancel or newer work of the same kind stops.
#[derive(Default)]
pub struct Cancellable {
    running: Mutex<Option<Arc<AtomicBool>>>,
}

impl Cancellable {
    /// Stops the work under way, if any, and registers the one starting; its flag.
    pub fn start(&self) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        if let Some(previous) = self.lock().replace(Arc::clone(&flag)) {
            previous.store(true, Ordering::Relaxed);
        }
        flag
    }

    /// Stops the work under way; whether there was any.
    pub fn cancel(&self) -> bool {
        let running = self.lock().take();
        running.is_some_and(|flag| !flag.swap(true, Ordering::Relaxed))
    }

    /// The work that started with `flag` is over (a newer one may be running).
    pub fn finish(&self, flag: &Arc<AtomicBool>) {
        let mut running = self.lock();
        if running.as_ref().is_some_and(|r| Arc::ptr_eq(r, flag)) {
            *running = None;
        }
    }

    /// A panic while holding the lock leaves a plain flag behind: still safe to use.
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<AtomicBool>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressPayload<'a> {
    /// The window's number for the work, so it ignores events of work it replaced.
    request: u32,
    phase: &'a str,
    done: u64,
    total: u64,
}

/// `calibration::progress::Progress` as `event`s, at most one per percent of each phase, from
/// whichever worker thread gets there first; cancelled when `cancel` is set.
pub struct EventProgress<R: Runtime> {
    app: AppHandle<R>,
    event: &'static str,
    request: u32,
    cancel: Arc<AtomicBool>,
    phase: Mutex<(String, u64)>,
    last_percent: AtomicU64,
}

impl<R: Runtime> EventProgress<R> {
    pub fn new(
        app: AppHandle<R>,
        event: &'static str,
        request: u32,
        cancel: Arc<AtomicBool>,
    ) -> Self {
        EventProgress {
            app,
            event,
            request,
            cancel,
            phase: Mutex::new((String::new(), 0)),
            last_percent: AtomicU64::new(0),
        }
    }

    fn emit(&self, phase: &str, done: u64, total: u64) {
        // A closed window cannot listen; the work carries on.
        let _ = self.app.emit(
            self.event,
            ProgressPayload {
                request: self.request,
                phase,
                done,
                total,
            },
        );
    }
}

impl<R: Runtime> calibration::progress::Progress for EventProgress<R> {
    fn phase(&self, name: &str, total: u64) {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner()) = (name.to_owned(), total);
        self.last_percent.store(0, Ordering::Relaxed);
        self.emit(name, 0, total);
    }

    fn advance(&self, done: u64) {
        let (name, total) = self.phase.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let percent = (done * 100).checked_div(total).unwrap_or(100);
        let previous = self.last_percent.fetch_max(percent, Ordering::Relaxed);
        if percent > previous || done == total {
            self.emit(&name, done, total);
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_work_cancels_the_work_before_it_and_a_cancel_stops_the_newest() {
        let work = Cancellable::default();
        let first = work.start();
        let second = work.start();
        assert!(
            first.load(Ordering::Relaxed),
            "the newer work stopped the first"
        );
        assert!(!second.load(Ordering::Relaxed));
        // The first finishing late does not unregister the second.
        work.finish(&first);
        assert!(work.cancel());
        assert!(second.load(Ordering::Relaxed));
        assert!(!work.cancel(), "nothing is running any more");
        let third = work.start();
        work.finish(&third);
        assert!(!work.cancel(), "finished work is not cancelled");
        assert!(!third.load(Ordering::Relaxed));
    }
}
