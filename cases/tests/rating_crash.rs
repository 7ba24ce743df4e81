//! Crash safety of rating edits, with a real file and a real process kill: a child process (this
//! test binary, re-run on its ignored `crash_child_writer` entry) saves ratings and labels through
//! the Store API and prints an acknowledgement after each commit; the parent SIGKILLs it at
//! seeded random moments, then checks the file's integrity and that every acknowledged edit is
//! there. Thirty rounds on the same file.

#[path = "support/rating.rs"]
mod rating_support;

use cases::rating::{LabelEdit, RaterRole, RatingEdit, SpanText, DEMO_STUDY_ID};
use cases::store::audit::{self, Verdict};
use cases::store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const DB_ENV: &str = "NEURORATER_CRASH_DB";
const RATER_ENV: &str = "NEURORATER_CRASH_RATER";
const ASSIGNMENTS_ENV: &str = "NEURORATER_CRASH_ASSIGNMENTS";
const START_ENV: &str = "NEURORATER_CRASH_START";
const ROUNDS: u64 = 30;
/// Edit numbers of round r start at r · ROUND_SPAN, so they only grow across rounds.
const ROUND_SPAN: u64 = 10_000;
/// Every LABEL_EVERY-th edit also adds an error label.
const LABEL_EVERY: u64 = 3;

/// Edit `n` sets seconds_on_task = n (and a matching comment) on assignment n mod K.
fn edit(n: u64) -> RatingEdit {
    RatingEdit {
        overall: Some((n % 5 + 1) as f64),
        not_applicable: Default::default(),
        dimensions: BTreeMap::new(),
        correctness: None,
        confidence: Some((n % 5 + 1) as u8),
        comment: format!("edit {n}"),
        seconds_on_task: n as f64,
    }
}

fn label(n: u64) -> LabelEdit {
    LabelEdit {
        category: "R1".into(),
        severity: 2,
        span: Some([0, 5]),
        text: SpanText::Rationale,
        turn: None,
        mark: None,
        comment: format!("label {n}"),
    }
}

/// The writer. Run only as the child of the crash test; it edits until it is killed.
#[test]
#[ignore = "the child process of kill_the_writer_at_random_moments_and_lose_nothing_acknowledged"]
fn crash_child_writer() {
    let var = |name| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let mut store = Store::open(Path::new(&var(DB_ENV))).unwrap();
    let rater: i64 = var(RATER_ENV).parse().unwrap();
    let assignments: Vec<i64> = var(ASSIGNMENTS_ENV)
        .split(',')
        .map(|a| a.parse().unwrap())
        .collect();
    let start: u64 = var(START_ENV).parse().unwrap();
    let mut out = std::io::stdout().lock();
    for n in start..start + ROUND_SPAN {
        let assignment = assignments[(n % assignments.len() as u64) as usize];
        store.save_rating(rater, assignment, &edit(n)).unwrap();
        writeln!(out, "ack edit {n}").unwrap();
        if n % LABEL_EVERY == 0 {
            store.add_error_label(rater, assignment, &label(n)).unwrap();
            writeln!(out, "ack label {n}").unwrap();
        }
        out.flush().unwrap();
    }
}

/// xorshift64*: the kill moments are reproducible from the seed.
struct Moments(u64);

impl Moments {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

#[test]
fn kill_the_writer_at_random_moments_and_lose_nothing_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let db = rating_support::demo_file(dir.path());
    let (rater, assignments) = {
        let mut store = Store::open(&db).unwrap();
        let rater = store
            .create_rater("Dr Crash", RaterRole::Neurologist, Some(3))
            .unwrap()
            .id;
        store.ensure_demo_queue(rater).unwrap();
        let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
        let assignments: Vec<i64> = queue.iter().take(7).map(|q| q.assignment).collect();
        (rater, assignments)
    };
    let mut moments = Moments(0x5EED_0FC0_FFEE);
    let mut acked_labels: BTreeSet<u64> = BTreeSet::new();
    let mut total_acks = 0;
    for round in 0..ROUNDS {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash_child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DB_ENV, &db)
            .env(RATER_ENV, rater.to_string())
            .env(
                ASSIGNMENTS_ENV,
                assignments
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            )
            .env(START_ENV, (round * ROUND_SPAN).to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines_tx, lines) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Let the writer get going (at least a few acknowledged edits), then kill it after a
        // further random delay, mid-transaction as often as not.
        let wait_for = 1 + moments.below(25);
        let mut acks = Vec::new();
        while (acks.len() as u64) < wait_for {
            let line = lines
                .recv_timeout(Duration::from_secs(60))
                .expect("the writer acknowledges edits");
            if line.starts_with("ack ") {
                acks.push(line);
            }
        }
        std::thread::sleep(Duration::from_micros(moments.below(20_000)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        acks.extend(lines.try_iter().filter(|l| l.starts_with("ack ")));
        total_acks += acks.len();

        let mut last_edit: BTreeMap<i64, u64> = BTreeMap::new();
        for ack in &acks {
            let mut words = ack.split(' ').skip(1);
            let (kind, n) = (
                words.next().unwrap(),
                words.next().unwrap().parse::<u64>().unwrap(),
            );
            match kind {
                "edit" => {
                    let assignment = assignments[(n % assignments.len() as u64) as usize];
                    let entry = last_edit.entry(assignment).or_default();
                    *entry = (*entry).max(n);
                }
                "label" => {
                    acked_labels.insert(n);
                }
                other => panic!("unexpected acknowledgement {other}"),
            }
        }

        let mut store = Store::open(&db).unwrap();
        let integrity: String = store
            .read()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok", "round {round}");
        assert!(
            matches!(audit::verify(store.read()).unwrap(), Verdict::Intact { .. }),
            "round {round}: the audit chain broke"
        );
        for (&assignment, &acked) in &last_edit {
            let rating = store
                .reading_item(rater, assignment)
                .unwrap()
                .rating
                .expect("an acknowledged rating");
            // The edit after the last acknowledged one may have committed before the kill.
            let stored = rating.seconds_on_task as u64;
            assert!(
                stored >= acked && stored < (round + 1) * ROUND_SPAN,
                "round {round}: assignment {assignment} holds edit {stored}, acknowledged {acked}"
            );
            assert_eq!(rating.comment, format!("edit {stored}"), "round {round}");
        }
        let stored_labels: BTreeSet<u64> = store
            .read()
            .prepare("SELECT comment FROM error_labels")
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|c| c.unwrap().trim_start_matches("label ").parse().unwrap())
            .collect();
        let lost: Vec<&u64> = acked_labels.difference(&stored_labels).collect();
        assert!(
            lost.is_empty(),
            "round {round}: acknowledged labels lost: {lost:?}"
        );
    }
    assert!(
        total_acks as u64 >= ROUNDS,
        "only {total_acks} acknowledgements in {ROUNDS} rounds"
    );
    eprintln!("{ROUNDS} kills, {total_acks} acknowledged edits, none lost");
}
