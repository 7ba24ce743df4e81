//! 10,000 gradings by the real `neurorater grade` against a local stub server that answers every
//! request after 50 ms, at concurrency 16 (issue 12's goal): wall time within 1.3× of the ideal
//! (items × 50 ms / 16), peak memory at most 150 MB, and flat in the number of items (the same
//! run at 2,500 items for comparison).
//!
//! `cargo bench --bench grading` (release build of the CLI). Peak memory is the grading process's
//! VmHWM from /proc, read every 10 ms until it exits (Linux only). Figures: docs/performance.md.

use neurorater_tests::write_small_bundle;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const ANSWER_AFTER: Duration = Duration::from_millis(50);
const CONCURRENCY: u32 = 16;
const MAX_WALL_RATIO: f64 = 1.3;
const MAX_PEAK_MB: f64 = 150.0;
const GRADE: &str = r#"{"score": 4, "dimensions": {"diagnosis": 4, "reasoning": 1.5}, "errors": [], "rationale": "close"}"#;

/// Answers every chat request after [`ANSWER_AFTER`], one thread per connection (keep-alive).
fn start_stub() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
    let endpoint = format!("http://{}/v1", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    endpoint
}

fn serve(stream: TcpStream) {
    let body = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": GRADE}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40}
    })
    .to_string();
    let reply = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut reader = BufReader::new(stream.try_clone().expect("stream"));
    let mut stream = stream;
    loop {
        let mut length = 0;
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut request = vec![0; length];
        if reader.read_exact(&mut request).is_err() {
            return;
        }
        std::thread::sleep(ANSWER_AFTER);
        if stream.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// The small test bundle with `items` responses to grade, imported into a fresh database.
fn study(dir: &Path, items: usize) -> std::path::PathBuf {
    let bundle = write_small_bundle(&dir.join("bundle"), false);
    // The bundle's own responses count (their imported scores are another grader's); the rest
    // answer its ms-01/dx task as samples of one more model.
    let mut lines = std::fs::read_to_string(bundle.join("responses.jsonl")).expect("responses");
    let existing = lines.lines().filter(|l| !l.trim().is_empty()).count();
    for k in 1..=items.saturating_sub(existing) {
        lines.push_str(
            &serde_json::json!({"case_id": "ms-01", "task_id": "dx", "model": "vlm-bench",
                                "sample": k, "answer": format!("answer {k}"),
                                "rationale": "Ovoid periventricular lesions."})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(bundle.join("responses.jsonl"), lines).expect("responses");
    let db = dir.join("study.sqlite");
    let out = Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args([
            "import",
            bundle.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ])
        .output()
        .expect("neurorater import");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db
}

fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

struct Measured {
    items: usize,
    wall: Duration,
    ideal: Duration,
    peak_mb: f64,
}

fn measure(items: usize, endpoint: &str) -> Measured {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = study(dir.path(), items);
    let spec = dir.path().join("bench.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"bench-grader\"\nendpoint = \"{endpoint}\"\nmodel = \"judge\"\n\
             temperature = 0.0\nseed = 1\nmax_tokens = 100\nconcurrency = {CONCURRENCY}\n\
             timeout_seconds = 30\nprompt = \"Grade {{{{answer}}}} on {{{{rubric}}}}\"\n"
        ),
    )
    .expect("spec");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args([
            "grade",
            "--db",
            db.to_str().unwrap(),
            "--spec",
            spec.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("neurorater grade");
    let mut peak = 0;
    let status = loop {
        if let Some(kb) = peak_kb(child.id()) {
            peak = peak.max(kb);
        }
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = started.elapsed();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .map(|mut e| e.read_to_string(&mut stderr));
    assert!(status.success(), "grade failed: {stderr}");
    let stored: i64 = rusqlite::Connection::open(&db)
        .expect("database")
        .query_row(
            "SELECT count(*) FROM grader_scores WHERE grader = 'bench-grader'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(stored as usize, items, "every response graded once");
    Measured {
        items,
        wall,
        ideal: ANSWER_AFTER * items as u32 / CONCURRENCY,
        peak_mb: peak as f64 / 1024.0,
    }
}

fn main() {
    // `cargo test --benches` runs benches once as tests; the measurement is for `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("grading bench: run with `cargo bench --bench grading`");
        return;
    }
    let endpoint = start_stub();
    let mut within = true;
    let mut results = Vec::new();
    for items in [2_500, 10_000] {
        let m = measure(items, &endpoint);
        let ratio = m.wall.as_secs_f64() / m.ideal.as_secs_f64();
        println!(
            "{:>6} gradings: wall {:.2} s, ideal {:.2} s, ratio {ratio:.3} (goal ≤ {MAX_WALL_RATIO}); \
             peak memory {:.1} MB (goal ≤ {MAX_PEAK_MB})",
            m.items,
            m.wall.as_secs_f64(),
            m.ideal.as_secs_f64(),
            m.peak_mb
        );
        within &= ratio <= MAX_WALL_RATIO && m.peak_mb <= MAX_PEAK_MB;
        results.push(m);
    }
    let growth = results[1].peak_mb - results[0].peak_mb;
    println!("peak memory from 2,500 to 10,000 gradings: {growth:+.1} MB");
    if !within {
        eprintln!("grading bench: a goal was missed");
        std::process::exit(1);
    }
}
