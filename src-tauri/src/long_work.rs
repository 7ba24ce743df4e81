//! Long work the window starts, follows and may stop: a calibration report, a package in or out,
//! a grader or model run, the automatic metrics, a new study's scan. One mechanism for all:
//!
//! - [`LongWork`] is one kind of work (a managed state each): at most one under way, and a
//!   [`Stop`] for it that a cancel command sets. What a second start does is the kind's
//!   [`Overlap`] policy, chosen where the kind is declared.
//! - [`EventProgress`] is `calibration::progress::Progress` (the domain's one progress trait) as
//!   events carrying the window's number for the work, its phase, counts and time so far; its
//!   `cancelled()` answers from the work's [`Stop`], so the domain stops at its next step.

use crate::error::{CommandError, ErrorCode};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::Notify;

/// What starting work of a kind does while one is under way.
#[derive(Debug, Clone, Copy)]
pub enum Overlap {
    /// The newer work stops the one under way, whose result is no longer wanted (a report for
    /// options since changed). Only for work that writes nothing before it finishes, or writes
    /// in one transaction at its end, so the stopped one leaves nothing behind.
    Replace,
    /// The newer work is refused with this message: the work writes as it goes (results stored as
    /// they arrive, files scanned into a draft folder), and two at once would race for the same
    /// rows or folder. The user waits, or stops the one under way.
    Refuse(&'static str),
}

/// The request to stop one piece of work: a flag the synchronous domain asks between steps, and
/// a wake-up for async work waiting on it.
#[derive(Default)]
pub struct Stop {
    requested: AtomicBool,
    wake: Notify,
}

impl Stop {
    fn request(&self) {
        self.requested.store(true, Ordering::Relaxed);
        // A stored permit: work that starts waiting after the request still wakes.
        self.wake.notify_one();
    }

    /// The flag, for a domain function that takes one.
    pub fn flag(&self) -> &AtomicBool {
        &self.requested
    }

    /// Resolves once a stop is requested (for one waiter: the work itself).
    pub async fn requested(&self) {
        self.wake.notified().await
    }
}

/// One kind of long work: the piece under way, if any, and what a second start does.
pub struct LongWork {
    overlap: Overlap,
    running: Mutex<Option<Arc<Stop>>>,
}

impl LongWork {
    pub const fn new(overlap: Overlap) -> LongWork {
        LongWork {
            overlap,
            running: Mutex::new(None),
        }
    }

    /// Registers work starting now, applying the kind's [`Overlap`]. The work is under way until
    /// the returned [`Started`] is dropped, however the command ends (returned, failed, or its
    /// future dropped), so a slot is never left taken.
    pub fn start(&self) -> Result<Started<'_>, CommandError> {
        let stop = Arc::new(Stop::default());
        let mut running = self.lock();
        match (self.overlap, running.as_ref()) {
            (Overlap::Refuse(message), Some(_)) => {
                return Err(CommandError::new(ErrorCode::Refused, message))
            }
            (Overlap::Replace, Some(previous)) => previous.request(),
            (_, None) => {}
        }
        *running = Some(Arc::clone(&stop));
        Ok(Started { work: self, stop })
    }

    /// Stops the work under way; whether there was any that had not been stopped already.
    pub fn cancel(&self) -> bool {
        match self.lock().as_ref() {
            Some(stop) if !stop.requested.load(Ordering::Relaxed) => {
                stop.request();
                true
            }
            _ => false,
        }
    }

    /// A panic while holding the lock leaves a plain slot behind: still safe to use.
    fn lock(&self) -> MutexGuard<'_, Option<Arc<Stop>>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Work under way; dropping it ends it (a newer piece that replaced it stays registered).
pub struct Started<'a> {
    work: &'a LongWork,
    stop: Arc<Stop>,
}

impl Started<'_> {
    /// The work's stop request, to hand to the thread or domain function doing it.
    pub fn stop(&self) -> Arc<Stop> {
        Arc::clone(&self.stop)
    }
}

impl Drop for Started<'_> {
    fn drop(&mut self) {
        let mut running = self.work.lock();
        if running.as_ref().is_some_and(|r| Arc::ptr_eq(r, &self.stop)) {
            *running = None;
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressPayload<'a> {
    /// The window's number for the work, so it ignores events of work it replaced (0 when the
    /// window sends none).
    request: u32,
    phase: &'a str,
    done: u64,
    total: u64,
    /// Since the work started: the window derives a rate and the time left from it.
    elapsed_ms: u64,
}

/// `calibration::progress::Progress` as `event`s: each phase's start, then at most one per
/// percent of the phase and its last step, from whichever worker thread gets there first.
/// Cancelled once its work's [`Stop`] is requested.
pub struct EventProgress<R: Runtime> {
    app: AppHandle<R>,
    event: &'static str,
    request: u32,
    stop: Option<Arc<Stop>>,
    started: Instant,
    phase: Mutex<(String, u64)>,
    last_percent: AtomicU64,
}

impl<R: Runtime> EventProgress<R> {
    /// Progress of the work `started`, reported as `event` with the window's `request` number.
    pub fn new(app: AppHandle<R>, event: &'static str, request: u32, started: &Started) -> Self {
        Self::reporting(app, event, request, Some(started.stop()))
    }

    /// Progress of work that cannot be stopped once begun (an import's single transaction).
    pub fn unstoppable(app: AppHandle<R>, event: &'static str) -> Self {
        Self::reporting(app, event, 0, None)
    }

    fn reporting(
        app: AppHandle<R>,
        event: &'static str,
        request: u32,
        stop: Option<Arc<Stop>>,
    ) -> Self {
        EventProgress {
            app,
            event,
            request,
            stop,
            started: Instant::now(),
            phase: Mutex::new((String::new(), 0)),
            last_percent: AtomicU64::new(0),
        }
    }

    fn emit(&self, phase: &str, done: u64, total: u64) {
        // A closed window cannot listen; the work carries on and its outcome is returned.
        let _ = self.app.emit(
            self.event,
            ProgressPayload {
                request: self.request,
                phase,
                done,
                total,
                elapsed_ms: self.started.elapsed().as_millis() as u64,
            },
        );
    }
}

/// Whether `done` of `total` is worth an event after `last_percent` was reported: a new percent,
/// or the phase's last step.
fn newly_reached(last_percent: &AtomicU64, done: u64, total: u64) -> bool {
    let percent = (done * 100).checked_div(total).unwrap_or(100);
    let previous = last_percent.fetch_max(percent, Ordering::Relaxed);
    percent > previous || done == total
}

impl<R: Runtime> calibration::progress::Progress for EventProgress<R> {
    fn phase(&self, name: &str, total: u64) {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner()) = (name.to_owned(), total);
        self.last_percent.store(0, Ordering::Relaxed);
        self.emit(name, 0, total);
    }

    fn advance(&self, done: u64) {
        let (name, total) = self.phase.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if newly_reached(&self.last_percent, done, total) {
            self.emit(&name, done, total);
        }
    }

    fn cancelled(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|stop| stop.requested.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stopped(started: &Started) -> bool {
        started.stop().flag().load(Ordering::Relaxed)
    }

    #[test]
    fn newer_work_cancels_the_work_before_it_and_a_cancel_stops_the_newest() {
        let work = LongWork::new(Overlap::Replace);
        let first = work.start().unwrap();
        let second = work.start().unwrap();
        assert!(stopped(&first), "the newer work stopped the first");
        assert!(!stopped(&second));
        // The first finishing late does not unregister the second.
        drop(first);
        assert!(work.cancel());
        assert!(stopped(&second));
        assert!(!work.cancel(), "nothing is running any more");
        drop(second);
        let third = work.start().unwrap();
        drop(third);
        assert!(!work.cancel(), "finished work is not cancelled");
    }

    #[test]
    fn one_at_a_time_work_refuses_a_second_start_until_the_first_ends() {
        let work = LongWork::new(Overlap::Refuse("a run is already going"));
        let first = work.start().unwrap();
        let refused = work.start().err().expect("a second start is refused");
        assert_eq!(
            (refused.code, refused.message.as_str()),
            (ErrorCode::Refused, "a run is already going")
        );
        assert!(!stopped(&first), "the refused start left the first alone");
        assert!(work.cancel());
        assert!(stopped(&first));
        assert!(
            work.start().is_err(),
            "stopping is not ending: the work winds down first"
        );
        drop(first);
        assert!(work.start().is_ok(), "ended work frees its slot");
    }

    #[test]
    fn async_work_wakes_on_a_stop_requested_before_it_waits() {
        let work = LongWork::new(Overlap::Refuse("busy"));
        let started = work.start().unwrap();
        let stop = started.stop();
        work.cancel();
        // Waited on only now: the stored wake-up must not be lost.
        tauri::async_runtime::block_on(stop.requested());
        assert!(stop.flag().load(Ordering::Relaxed));
    }

    #[test]
    fn progress_reports_each_new_percent_and_the_last_step() {
        let last = AtomicU64::new(0);
        let reported: Vec<u64> = (1..=400)
            .filter(|&done| newly_reached(&last, done, 400))
            .collect();
        assert_eq!(reported.len(), 100);
        assert_eq!(reported.first(), Some(&4));
        assert_eq!(reported.last(), Some(&400));
        let empty = AtomicU64::new(0);
        assert!(
            newly_reached(&empty, 0, 0),
            "an empty phase is done at once"
        );
    }
}
