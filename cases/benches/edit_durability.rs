//! How long a rater waits for an edit to be durable: one `save_rating` (a transaction with its
//! audit entry, committed under WAL with `synchronous = FULL`, i.e. fsync'd) on a real file on
//! the same disk as the build, holding the demo study. Prints p50, p99 and max over measured
//! samples; the goal is p99 ≤ 20 ms.
//!
//! `cargo bench -p neurorater-cases --bench edit_durability` measures 2000 saves; run without
//! `--bench` (as `cargo test --benches` does) it takes 20, as a smoke test.

#[path = "../tests/support/rating.rs"]
mod rating_support;

use cases::rating::{RaterRole, RatingEdit, DEMO_STUDY_ID};
use cases::store::Store;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let samples = if full { 2000 } else { 20 };
    // Next to the build, not in a RAM-backed /tmp: fsync must reach a disk.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temporary directory");
    let path = rating_support::demo_file(dir.path());
    let mut store = Store::open(&path).expect("open the demo database");
    let synchronous: i64 = store
        .read()
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .expect("pragma");
    assert_eq!(synchronous, 2, "the store must run synchronous = FULL");
    let rater = store
        .create_rater("Dr Bench", RaterRole::Neuroradiologist, Some(10))
        .expect("rater")
        .id;
    store.ensure_demo_queue(rater).expect("queue");
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).expect("queue");

    let mut times = Vec::with_capacity(samples);
    for n in 0..samples {
        // Spread over items like a rater moving through the queue, each edit a real change.
        let assignment = queue[n % queue.len()].assignment;
        let edit = RatingEdit {
            overall: Some((n % 5 + 1) as f64),
            not_applicable: Default::default(),
            dimensions: BTreeMap::from([("diagnostic_accuracy".to_owned(), (n % 5 + 1) as f64)]),
            correctness: None,
            confidence: Some((n % 5 + 1) as u8),
            comment: format!("comment after {n} keystrokes"),
            seconds_on_task: n as f64,
        };
        let start = Instant::now();
        store.save_rating(rater, assignment, &edit).expect("save");
        times.push(start.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "edit_durability: {samples} save_rating commits (WAL, synchronous=FULL) on {}: \
         p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        path.display(),
        ms(percentile(&times, 50.0)),
        ms(percentile(&times, 99.0)),
        ms(*times.last().expect("samples")),
    );
}
