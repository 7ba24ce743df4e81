//! `neurorater grade` (docs/formats.md §6) as a real process against a local OpenAI-compatible server
//! with scripted faults: 429 with Retry-After, 500, a timeout, a dropped connection, unparsable
//! replies, a reply cut off short, a refused key, a refused request, a server echoing the key;
//! a SIGKILL in the middle of a run and the resume; the spec binding; the API key never written
//! or shown.

mod support;

use neurorater_tests::write_small_bundle;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{digest, neurorater};

/// Sent as the API key; must never appear in anything NeuroRater writes or prints.
const KEY: &str = "sk-MARKER-7f3a9c-never-stored";
const KEY_ENV: &str = "NEURORATER_TEST_GRADER_KEY";

/// What the server does with one request.
#[derive(Clone)]
enum Action {
    Reply {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Answer only after this long (a slow server).
    Slow(Duration, Box<Action>),
    /// Never answer within the client's timeout, then close.
    Hang,
    /// Close the connection without a word.
    Drop,
    /// Send only the first half of this reply's body and close: with its whole length announced
    /// in Content-Length, or (`announced` false) with none, the body framed by the close.
    CutOff { reply: Box<Action>, announced: bool },
    /// The action made from the request's Authorization header (a server echoing it).
    WithAuth(fn(Option<&str>) -> Action),
}

fn chat(content: &str) -> Action {
    Action::Reply {
        status: 200,
        headers: vec![],
        body: json!({
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}
        })
        .to_string(),
    }
}

fn status(code: u16, message: &str) -> Action {
    Action::Reply {
        status: code,
        headers: vec![],
        body: json!({"error": {"message": message}}).to_string(),
    }
}

/// Decides an action from the request body and how many requests carried this answer before.
type Script = dyn Fn(&Value, &str, usize) -> Action + Send + Sync;

/// Every request the server received: its body and its Authorization header.
type Seen = Mutex<Vec<(Value, Option<String>)>>;

struct Server {
    endpoint: String,
    seen: Arc<Seen>,
}

impl Server {
    fn start(script: Box<Script>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let counts = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
        let script: Arc<Script> = Arc::from(script);
        let shared = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, counts, script) = (shared.clone(), counts.clone(), script.clone());
                std::thread::spawn(move || serve(stream, &seen, &counts, &*script));
            }
        });
        Server { endpoint, seen }
    }

    fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

/// The graded answer a request is about: the text after "ANSWER: " in the first message.
fn answer_of(body: &Value) -> String {
    let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
    prompt
        .split("ANSWER: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_default()
        .to_owned()
}

fn serve(stream: TcpStream, seen: &Seen, counts: &Mutex<HashMap<String, usize>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut length = 0;
        let mut auth = None;
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
            let (name, value) = header.split_once(':').unwrap_or((header, ""));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap_or(0),
                "authorization" => auth = Some(value.trim().to_owned()),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let answer = answer_of(&body);
        let before = {
            let mut counts = counts.lock().unwrap();
            let count = counts.entry(answer.clone()).or_default();
            *count += 1;
            *count - 1
        };
        let action = script(&body, &answer, before);
        seen.lock().unwrap().push((body, auth.clone()));
        let mut action = action;
        loop {
            match action {
                Action::WithAuth(make) => action = make(auth.as_deref()),
                Action::CutOff { reply, announced } => {
                    let Action::Reply { status, body, .. } = *reply else {
                        panic!("only a reply is cut off")
                    };
                    let framing = if announced {
                        format!("content-length: {}", body.len())
                    } else {
                        "connection: close".to_owned()
                    };
                    let head = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{framing}\r\n\r\n"
                    );
                    let _ = stream.write_all(head.as_bytes());
                    let _ = stream.write_all(&body.as_bytes()[..body.len() / 2]);
                    let _ = stream.flush();
                    return;
                }
                Action::Slow(wait, then) => {
                    std::thread::sleep(wait);
                    action = *then;
                }
                Action::Hang => {
                    std::thread::sleep(Duration::from_secs(3));
                    return;
                }
                Action::Drop => return,
                Action::Reply {
                    status,
                    headers,
                    body,
                } => {
                    let mut head = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\n",
                        body.len()
                    );
                    for (name, value) in headers {
                        head.push_str(&format!("{name}: {value}\r\n"));
                    }
                    head.push_str("\r\n");
                    if stream.write_all(head.as_bytes()).is_err()
                        || stream.write_all(body.as_bytes()).is_err()
                    {
                        return;
                    }
                    break;
                }
            }
        }
    }
}

/// The small bundle plus `extra` responses answered `answer-1`, `answer-2`, … imported into a
/// fresh database; returns (temp dir, database path).
fn study(extra: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bundle = write_small_bundle(&dir.path().join("bundle"), false);
    let mut lines = std::fs::read_to_string(bundle.join("responses.jsonl")).unwrap();
    for k in 1..=extra {
        lines.push_str(
            &json!({"case_id": "ms-01", "task_id": "dx", "model": "vlm-c", "sample": k,
                    "answer": format!("answer-{k}")})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(bundle.join("responses.jsonl"), lines).unwrap();
    let db = dir.path().join("study.sqlite");
    let out = neurorater(&[
        "import",
        bundle.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, db)
}

fn write_spec(dir: &Path, server: &Server, name: &str, concurrency: u32, prompt: &str) -> PathBuf {
    write_spec_with(dir, server, name, concurrency, prompt, "")
}

/// A grader spec with `extra` lines (e.g. `max_retries = 2`).
fn write_spec_with(
    dir: &Path,
    server: &Server,
    name: &str,
    concurrency: u32,
    prompt: &str,
    extra: &str,
) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\nendpoint = \"{}\"\nmodel = \"judge\"\napi_key_env = \"{KEY_ENV}\"\n\
             temperature = 0.0\nseed = 42\nmax_tokens = 200\nconcurrency = {concurrency}\n\
             timeout_seconds = 0.5\n{extra}prompt = \"\"\"{prompt}\"\"\"\n",
            server.endpoint
        ),
    )
    .unwrap();
    path
}

/// A model spec for `respond` named `name`, without a prompt (the default one).
fn write_model_spec(dir: &Path, server: &Server, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\nendpoint = \"{}\"\nmodel = \"vlm\"\ntemperature = 0.7\n\
             seed = 3\nmax_tokens = 100\nconcurrency = 2\n",
            server.endpoint
        ),
    )
    .unwrap();
    path
}

const PROMPT: &str = "Grade on {{rubric}}\nTASK: {{task}}\nANSWER: {{answer}}\nCodes: {{taxonomy}}";

fn grade_command(db: &Path, spec: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_neurorater"));
    command
        .args([
            "grade",
            "--db",
            db.to_str().unwrap(),
            "--spec",
            spec.to_str().unwrap(),
        ])
        .env_remove("NEURORATER_DB")
        .env(KEY_ENV, KEY);
    command
}

fn grade(db: &Path, spec: &Path) -> Output {
    grade_command(db, spec).output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `neurorater export --what grader` into `dir/grader.jsonl`: the file, its text and what the
/// command printed.
fn export_grader_lines(db: &Path, dir: &Path) -> (PathBuf, String, Output) {
    let export = dir.join("grader.jsonl");
    let out = neurorater(&[
        "export",
        "--db",
        db.to_str().unwrap(),
        "--what",
        "grader",
        "--format",
        "jsonl",
        "--out",
        export.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let lines = std::fs::read_to_string(&export).unwrap();
    (export, lines, out)
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn assert_key_absent(paths: &[&Path], outputs: &[&Output]) {
    for path in paths {
        if let Ok(bytes) = std::fs::read(path) {
            let found = bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes());
            assert!(!found, "the API key is in {}", path.display());
        }
    }
    for output in outputs {
        assert!(
            !text(output).contains(KEY),
            "the API key was shown: {}",
            text(output)
        );
    }
}

const GOOD: &str = r#"{"score": 4, "dimensions": {"diagnosis": 4, "reasoning": 1.5}, "errors": [{"category": "P4", "quote": "left"}], "rationale": "close"}"#;

#[test]
fn faults_are_retried_results_stored_once_and_the_key_never_written() {
    let started = Instant::now();
    let (dir, db) = study(2);
    let server = Server::start(Box::new(|_, answer, before| match (answer, before) {
        ("Multiple sclerosis", 0) => Action::Reply {
            status: 429,
            headers: vec![("Retry-After".into(), "1".into())],
            body: "{}".into(),
        },
        ("Small vessel disease", 0 | 1) => status(500, "overloaded"),
        ("MS", 0) => Action::Hang,
        ("answer-1", 0) => Action::Drop,
        ("Three lesions", 0) => chat("I would give it a 4."),
        ("Three lesions", _) => chat(&format!("```json\n{GOOD}\n```")),
        ("answer-2", _) => status(400, "this model cannot read such a long prompt"),
        _ => Action::Slow(Duration::from_millis(50), Box::new(chat(GOOD))),
    }));
    // Priced, so each stored result keeps what its tokens cost (the report sums them below).
    let spec = write_spec_with(
        dir.path(),
        &server,
        "judge-v1",
        4,
        PROMPT,
        "price_per_input_token = 0.000001\nprice_per_output_token = 0.000004\n",
    );
    let first = grade(&db, &spec);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    let said = text(&first);
    assert!(
        said.contains("failed: ms-01/dx/vlm-c/2: the server refused the request (400): this model cannot read such a long prompt"),
        "{said}"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-v1'"
        ),
        5
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM run_results WHERE spec_name = 'judge-v1'"
        ),
        5
    );
    // Five stored items, each asked once more for each fault (a 429, two 500s, a timeout, a
    // dropped connection, one re-ask), and the refused one.
    assert_eq!(server.requests(), 5 + 6 + 1);
    let seen = server.seen.lock().unwrap().clone();
    assert!(seen
        .iter()
        .all(|(_, auth)| auth.as_deref() == Some(&*format!("Bearer {KEY}"))));
    let first_body = &seen[0].0;
    assert_eq!(first_body["seed"], 42);
    assert_eq!(first_body["response_format"]["type"], "json_schema");
    // The re-ask carries the unusable reply and says what was wrong with it.
    let reask = seen
        .iter()
        .find(|(body, _)| body["messages"].as_array().is_some_and(|m| m.len() == 3))
        .expect("a re-ask");
    assert_eq!(reask.0["messages"][1]["content"], "I would give it a 4.");
    assert!(reask.0["messages"][2]["content"]
        .as_str()
        .unwrap()
        .contains("not a JSON object"));
    let stored: (f64, String, String) = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT s.score, s.errors_json, x.raw_replies_json FROM grader_scores s
             JOIN run_results x ON x.grader_score = s.id JOIN responses r ON s.response = r.id
             WHERE r.answer = 'Three lesions'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(stored.0, 4.0);
    assert_eq!(stored.1, r#"[{"category":"P4","quote":"left"}]"#);
    assert_eq!(
        serde_json::from_str::<Value>(&stored.2)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // The next run sends only what is missing: the one refused item.
    let second = grade(&db, &spec);
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    assert_eq!(server.requests(), 13);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-v1'"
        ),
        5
    );

    // Exported as §2 lines; the key nowhere.
    let (export, exported, out) = export_grader_lines(&db, dir.path());
    let lines: Vec<Value> = exported
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ours: Vec<&Value> = lines.iter().filter(|l| l["grader"] == "judge-v1").collect();
    assert_eq!(ours.len(), 5);
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    assert_key_absent(&[&db, &wal, &export], &[&first, &second, &out]);

    // The calibration report's model reliability reads these run records: five stored items,
    // six requests (one re-ask after an unusable reply), the tokens the server reported, and the
    // latency percentiles of the stored latencies.
    let ratings = dir.path().join("ratings.csv");
    std::fs::write(
        &ratings,
        "item,rater,score\n\
         ms-01/dx/vlm-a/0,dr-a,2\nms-01/dx/vlm-a/0,dr-b,3\n\
         ms-01/dx/vlm-a/1,dr-a,4\nms-01/dx/vlm-a/1,dr-b,4\n\
         ms-01/dx/vlm-b/0,dr-a,1\nms-01/dx/vlm-b/0,dr-b,2\n",
    )
    .unwrap();
    let rated = neurorater(&[
        "import-ratings",
        ratings.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(rated.status.success(), "{}", text(&rated));
    let report_path = dir.path().join("report.json");
    let built = neurorater(&[
        "calibrate",
        "--db",
        db.to_str().unwrap(),
        "--grader",
        "judge-v1",
        "--resamples",
        "200",
        "--format",
        "json",
        "--out",
        report_path.to_str().unwrap(),
    ]);
    assert!(built.status.success(), "{}", text(&built));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let rows = report["model_reliability"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        1,
        "imported results have no run records: {rows:?}"
    );
    let row = &rows[0];
    assert_eq!(
        (&row["name"], &row["kind"], &row["items"], &row["requests"]),
        (&json!("judge-v1"), &json!("grader"), &json!(5), &json!(6))
    );
    assert_eq!(
        (&row["prompt_tokens"], &row["completion_tokens"]),
        (&json!(600), &json!(120))
    );
    assert_eq!(row["mean_tokens_per_item"], json!(144.0));
    // 600 prompt tokens at 1e-6 and 120 completion tokens at 4e-6.
    let cost = row["cost"].as_f64().expect("a cost: the run named prices");
    assert!(
        (cost - (600.0 * 1e-6 + 120.0 * 4e-6)).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(row["malformed_output_rate"].as_f64().unwrap(), 1.0 / 6.0);
    let mut latencies: Vec<f64> = rusqlite::Connection::open(&db)
        .unwrap()
        .prepare("SELECT latency_ms FROM run_results WHERE spec_name = 'judge-v1'")
        .unwrap()
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|l| l.unwrap() as f64)
        .collect();
    latencies.sort_by(f64::total_cmp);
    // Five values: the median is the third; the 95th percentile 0.8 of the way from the fourth
    // to the fifth (position 0.95 × 4 = 3.8).
    assert_eq!(row["latency_ms_p50"].as_f64().unwrap(), latencies[2]);
    let p95 = latencies[3] + 0.8 * (latencies[4] - latencies[3]);
    assert!((row["latency_ms_p95"].as_f64().unwrap() - p95).abs() < 1e-9);
    eprintln!("took {:?}", started.elapsed());
}

#[test]
fn a_sigkilled_run_resumes_without_grading_anything_twice() {
    let (dir, db) = study(26);
    let server = Server::start(Box::new(|_, _, _| {
        Action::Slow(Duration::from_millis(120), Box::new(chat(GOOD)))
    }));
    let spec = write_spec(dir.path(), &server, "judge-kill", 2, PROMPT);
    let mut child = grade_command(&db, &spec)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let graded = || {
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-kill'",
        )
    };
    while graded() < 6 {
        assert!(Instant::now() < deadline, "the run made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let before = graded();
    assert!(before < 30, "the run finished before the kill");
    let sent_before = server.requests();

    let resumed = grade(&db, &spec);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_eq!(graded(), 30);
    assert_eq!(
        count(
            &db,
            "SELECT count(DISTINCT response) FROM grader_scores WHERE grader = 'judge-kill'"
        ),
        30
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM run_results WHERE spec_name = 'judge-kill'"
        ),
        30
    );
    // Only what was missing went out again: at most the 2 requests in flight were lost.
    let resent = server.requests() - sent_before;
    assert_eq!(resent as i64, 30 - before);
    assert!(
        sent_before as i64 <= before + 2,
        "{sent_before} sent, {before} stored"
    );
    let audit = neurorater(&["audit", "verify", "--db", db.to_str().unwrap()]);
    assert!(audit.status.success(), "{}", text(&audit));
}

#[test]
fn a_changed_spec_under_a_used_name_is_refused() {
    let (dir, db) = study(0);
    let server = Server::start(Box::new(|_, _, _| chat(GOOD)));
    let spec = write_spec(dir.path(), &server, "judge-bound", 2, PROMPT);
    let first = grade(&db, &spec);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    // Concurrency does not change what the grader says: same spec.
    write_spec(dir.path(), &server, "judge-bound", 3, PROMPT);
    assert_eq!(grade(&db, &spec).status.code(), Some(0));
    write_spec(
        dir.path(),
        &server,
        "judge-bound",
        2,
        &format!("Be strict. {PROMPT}"),
    );
    let changed = grade(&db, &spec);
    assert_eq!(changed.status.code(), Some(2), "{}", text(&changed));
    assert!(
        text(&changed).contains("is bound to another spec"),
        "{}",
        text(&changed)
    );
    // A name imported scores carry has no known spec.
    let imported = write_spec(dir.path(), &server, "g-v1", 2, PROMPT);
    let refused = grade(&db, &imported);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("imported grader score(s) carry it"));
    // A model name imported responses carry: a run would add samples of an unknown spec to them.
    let model_spec = write_model_spec(dir.path(), &server, "vlm-a");
    let sent_before = server.requests();
    let respond = neurorater(&[
        "respond",
        "--db",
        db.to_str().unwrap(),
        "--spec",
        model_spec.to_str().unwrap(),
        "--samples",
        "3",
    ]);
    assert_eq!(respond.status.code(), Some(2), "{}", text(&respond));
    assert!(
        text(&respond).contains("imported model response(s) carry it"),
        "{}",
        text(&respond)
    );
    assert_eq!(server.requests(), sent_before, "nothing was sent");
}

#[test]
fn a_refused_key_stops_the_run_at_once() {
    let (dir, db) = study(10);
    let server = Server::start(Box::new(|_, _, _| {
        status(401, &format!("Incorrect API key provided: {KEY}"))
    }));
    let spec = write_spec(dir.path(), &server, "judge-401", 1, PROMPT);
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // The variable is named, the key is not (the server's echo of it is redacted).
    assert!(
        text(&out).contains(&format!(
            "the server refused the key in {KEY_ENV} (401: Incorrect API key provided: [API key]): \
             check that variable"
        )),
        "{}",
        text(&out)
    );
    assert_eq!(server.requests(), 1);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-401'"
        ),
        0
    );
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    assert_key_absent(&[&db, &wal], &[&out]);

    // Without the variable, nothing is sent at all.
    let unset = grade_command(&db, &spec)
        .env_remove(KEY_ENV)
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    assert!(text(&unset).contains(KEY_ENV), "{}", text(&unset));
    assert_eq!(server.requests(), 1);
}

#[test]
fn a_forbidden_key_names_its_variable_too() {
    let (dir, db) = study(0);
    let server = Server::start(Box::new(|_, _, _| {
        Action::WithAuth(|auth| status(403, &format!("{} may not use judge", auth.unwrap())))
    }));
    let spec = write_spec(dir.path(), &server, "judge-403", 1, PROMPT);
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "the server refused the key in {KEY_ENV} (403: Bearer [API key] may not use judge)"
        )),
        "{}",
        text(&out)
    );
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    assert_key_absent(&[&db, &wal], &[&out]);
}

/// A 200 reply echoing what it was sent as the key, in every place a reply can carry it: the
/// id, an object's key and value, the key with a JSON escape, base64 of a Basic credential, and
/// the grade's own rationale (stored in `grader_scores`).
fn echoing_grade(auth: Option<&str>) -> Action {
    use base64::Engine;
    let auth = auth.unwrap_or_default();
    let key = auth.strip_prefix("Bearer ").unwrap_or(auth);
    let grade = json!({"score": 4, "dimensions": {"diagnosis": 4, "reasoning": 1.5},
                       "errors": [], "rationale": format!("close; you sent {auth}")});
    let body = json!({
        "id": format!("chatcmpl-{key}"),
        "echo": {"authorization": auth, key: "as a key",
                 "basic": base64::engine::general_purpose::STANDARD.encode(format!("user:{key}"))},
        "choices": [{"message": {"role": "assistant", "content": grade.to_string()}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20}
    })
    .to_string();
    // `"sk-…"` as `"\u0073k-…"`: the same string once decoded.
    let escaped = format!("\\u{:04x}{}", key.as_bytes()[0], &key[1..]);
    let body = format!("{}, \"escaped\": \"{escaped}\"}}", &body[..body.len() - 1]);
    Action::Reply {
        status: 200,
        headers: vec![],
        body,
    }
}

#[test]
fn a_key_the_server_echoes_is_written_and_shown_nowhere() {
    let (dir, db) = study(1);
    let server = Server::start(Box::new(|_, answer, _| match answer {
        "answer-1" => Action::WithAuth(|auth| {
            status(400, &format!("cannot serve {}", auth.unwrap_or_default()))
        }),
        _ => Action::WithAuth(echoing_grade),
    }));
    let spec = write_spec(dir.path(), &server, "judge-echo", 2, PROMPT);
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // The key went out, and came back in every reply.
    assert_eq!(server.requests(), 5);
    assert!(server
        .seen
        .lock()
        .unwrap()
        .iter()
        .all(|(_, auth)| auth.as_deref() == Some(&*format!("Bearer {KEY}"))));
    // The failure is shown with the server's words, the key blotted out.
    assert!(
        text(&out).contains(
            "failed: ms-01/dx/vlm-c/1: the server refused the request (400): cannot serve Bearer \
             [API key]"
        ),
        "{}",
        text(&out)
    );
    // Stored: the grade, its rationale and the raw reply, each with the key redacted.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: Vec<(String, String)> = conn
        .prepare(
            "SELECT s.rationale, x.raw_replies_json FROM grader_scores s
             JOIN run_results x ON x.grader_score = s.id WHERE s.grader = 'judge-echo'",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored.len(), 4);
    for (rationale, raw) in &stored {
        assert_eq!(rationale, "close; you sent Bearer [API key]");
        let raw: Value = serde_json::from_str(raw).unwrap();
        let reply = &raw[0];
        assert_eq!(reply["id"], "chatcmpl-[API key]");
        assert_eq!(reply["echo"]["authorization"], "Bearer [API key]");
        assert_eq!(reply["echo"]["[API key]"], "as a key");
        assert_eq!(reply["escaped"], "[API key]");
        assert!(
            reply["echo"]["basic"]
                .as_str()
                .unwrap()
                .contains("[API key]"),
            "{reply}"
        );
    }
    drop(conn);
    let (export, _, exported) = export_grader_lines(&db, dir.path());
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    assert_key_absent(&[&db, &wal, &export], &[&out, &exported]);
}

/// A good grade's reply, cut off half-way: with its length announced, or framed by the close.
fn cut_off(announced: bool) -> Action {
    Action::CutOff {
        reply: Box::new(chat(GOOD)),
        announced,
    }
}

#[test]
fn a_reply_cut_off_once_is_asked_again_and_stored_once() {
    let (dir, db) = study(0);
    let server = Server::start(Box::new(|_, answer, before| match (answer, before) {
        ("Multiple sclerosis", 0) => cut_off(true),
        ("MS", 0) => cut_off(false),
        _ => chat(GOOD),
    }));
    let spec = write_spec(dir.path(), &server, "judge-cut-once", 2, PROMPT);
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(server.requests(), 4 + 2);
    let Action::Reply { body, .. } = chat(GOOD) else {
        unreachable!()
    };
    let proper: Value = serde_json::from_str(&body).unwrap();
    for answer in ["Multiple sclerosis", "MS"] {
        let (score, raw, requests): (f64, String, i64) = rusqlite::Connection::open(&db)
            .unwrap()
            .query_row(
                "SELECT s.score, x.raw_replies_json, x.requests FROM grader_scores s
                 JOIN run_results x ON x.grader_score = s.id JOIN responses r ON s.response = r.id
                 WHERE s.grader = 'judge-cut-once' AND r.answer = ?1",
                [answer],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(score, 4.0, "{answer}");
        // The whole reply, once: the cut-off one left no trace.
        assert_eq!(
            serde_json::from_str::<Value>(&raw).unwrap(),
            json!([proper]),
            "{answer}"
        );
        assert_eq!(
            requests, 1,
            "{answer}: retries are not requests of the conversation"
        );
    }
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-cut-once'"
        ),
        4
    );
}

#[test]
fn a_reply_always_cut_off_fails_its_item_saying_so_after_the_retries() {
    let (dir, db) = study(0);
    let server = Server::start(Box::new(|_, answer, _| match answer {
        "Multiple sclerosis" => cut_off(true),
        "MS" => cut_off(false),
        _ => chat(GOOD),
    }));
    let spec = write_spec_with(
        dir.path(),
        &server,
        "judge-cut",
        2,
        PROMPT,
        "max_retries = 2\n",
    );
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    for item in ["ms-01/dx/vlm-a/0", "ms-01/dx/vlm-b/0"] {
        assert!(
            said.contains(&format!(
                "failed: {item}: gave up after 3 attempts; last: the reply was cut off"
            )),
            "{said}"
        );
    }
    assert!(!said.contains("refused"), "{said}");
    for answer in ["Multiple sclerosis", "MS"] {
        let asked = server
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(body, _)| answer_of(body) == answer)
            .count();
        assert_eq!(asked, 3, "{answer}: the first request and max_retries = 2");
    }
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-cut'"
        ),
        2
    );
}

#[test]
fn an_endpoint_nobody_answers_at_stops_the_run_with_what_to_do() {
    let (dir, db) = study(10);
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}/v1");
    let spec = dir.path().join("nobody.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"judge-nobody\"\nendpoint = \"{endpoint}\"\nmodel = \"judge\"\n\
             api_key_env = \"{KEY_ENV}\"\ntemperature = 0.0\nseed = 42\nmax_tokens = 200\n\
             concurrency = 2\nmax_retries = 2\nprompt = \"\"\"{PROMPT}\"\"\"\n"
        ),
    )
    .unwrap();
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("no server answers at {endpoint}/chat/completions")),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("correct `endpoint`"), "{}", text(&out));
    // One line says it, not one line per item.
    assert_eq!(
        text(&out).matches("no server answers").count(),
        1,
        "{}",
        text(&out)
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-nobody'"
        ),
        0
    );
}

#[test]
fn a_broken_spec_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let (_keep, db) = study(0);
    let spec = dir.path().join("bad.toml");
    std::fs::write(
        &spec,
        "name = \"x\"\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\ntemperature = 0.0\n\
         seed = \"seven\"\nmax_tokens = 10\nconcurrency = 1\nprompt = \"{{answer}}\"\n",
    )
    .unwrap();
    let before = digest(&db);
    let out = grade_command(&db, &spec).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(digest(&db), before, "a refused spec touched the database");
    let expected = format!("{}:5: seed: ", spec.display());
    assert!(text(&out).starts_with(&expected), "{}", text(&out));
}

/// Numbers compared as numbers (an imported `5` comes back as `5.0`).
fn normalised(value: Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.into_iter().map(normalised).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, normalised(v))).collect())
        }
        other => other,
    }
}

#[test]
fn exported_responses_and_grader_lines_are_the_lines_imported() {
    let (dir, db) = study(0);
    for (what, imported) in [
        ("responses", neurorater_tests::RESPONSES_JSONL),
        ("grader", neurorater_tests::GRADER_JSONL),
    ] {
        let out_path = dir.path().join(format!("{what}.jsonl"));
        let out = neurorater(&[
            "export",
            "--db",
            db.to_str().unwrap(),
            "--what",
            what,
            "--format",
            "jsonl",
            "--out",
            out_path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        let parse = |text: &str| -> Vec<Value> {
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| normalised(serde_json::from_str(l).unwrap()))
                .collect()
        };
        assert_eq!(
            parse(&std::fs::read_to_string(&out_path).unwrap()),
            parse(imported),
            "{what}"
        );
    }
}

/// What `neurorater render` makes of the bundle's DICOM file `file` (with the file's own window):
/// the PNG a model must have been sent for that slice, computed by another command.
fn rendered_png(dir: &Path, bundle: &Path, file: &str) -> Vec<u8> {
    let png = dir.join(format!("{file}.png"));
    let rendered = neurorater(&[
        "render",
        bundle
            .join("cases/ms-01/flair")
            .join(file)
            .to_str()
            .unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(rendered.status.success(), "{}", text(&rendered));
    std::fs::read(&png).unwrap()
}

/// The PNG bytes of an `image_url` part's `data:` URL.
fn sent_png(part: &Value) -> Vec<u8> {
    use base64::Engine;
    let url = part["image_url"]["url"].as_str().unwrap();
    base64::engine::general_purpose::STANDARD
        .decode(url.strip_prefix("data:image/png;base64,").unwrap())
        .unwrap()
}

/// A follow-up that brings another image (issue 17, "turns may carry images"): it is sent as
/// text and the rendered slice, as the first message is, and the turn records the slice.
#[test]
fn a_follow_up_with_key_images_sends_them_and_records_them_on_its_turn() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = write_small_bundle(&dir.path().join("bundle"), false);
    let case_json = bundle.join("cases/ms-01/case.json");
    let follow_up = r#""level": 3, "follow_up": [{"text": "And this slice?", "key_images": [{"series": "flair", "slice": 0}]}],
     "prompt": "Describe the lesions.","#;
    let original = std::fs::read_to_string(&case_json).unwrap();
    let scripted = original.replace(
        r#""level": 2,
     "prompt": "Describe the lesions.","#,
        follow_up,
    );
    assert!(scripted.contains("And this slice?"));

    // A slice the series does not have is refused at import, naming the field and the line.
    std::fs::write(
        &case_json,
        scripted.replace(r#""slice": 0}]}]"#, r#""slice": 9}]}]"#),
    )
    .unwrap();
    let db = dir.path().join("study.sqlite");
    let import = || {
        neurorater(&[
            "import",
            bundle.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ])
    };
    let refused = import();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let line = scripted
        .lines()
        .position(|l| l.contains("And this slice?"))
        .unwrap()
        + 1;
    assert!(
        text(&refused).contains(&format!(
            "cases/ms-01/case.json:{line}: tasks[1].follow_up[0].key_images[0].slice: slice 9 does not exist"
        )),
        "{}",
        text(&refused)
    );

    std::fs::write(&case_json, &scripted).unwrap();
    let imported = import();
    assert!(imported.status.success(), "{}", text(&imported));
    let server = Server::start(Box::new(|body, _, _| {
        if body["messages"].as_array().map_or(0, Vec::len) == 1 {
            chat("Two lesions.")
        } else {
            chat("The same two.")
        }
    }));
    let spec = write_model_spec(dir.path(), &server, "vlm-local");
    let out = neurorater(&[
        "respond",
        "--db",
        db.to_str().unwrap(),
        "--spec",
        spec.to_str().unwrap(),
        "--samples",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // FLAIR slice 0 in display order (d c b a) is d.dcm.
    let d_png = rendered_png(dir.path(), &bundle, "d.dcm");
    let seen = server.seen.lock().unwrap().clone();
    let with_follow_up = seen
        .iter()
        .find(|(body, _)| body["messages"].as_array().map_or(0, Vec::len) == 3)
        .expect("the follow-up request");
    let follow = &with_follow_up.0["messages"][2];
    assert_eq!(follow["role"], "user");
    assert_eq!(follow["content"][0]["text"], "And this slice?");
    assert_eq!(follow["content"].as_array().unwrap().len(), 2);
    assert_eq!(sent_png(&follow["content"][1]), d_png);

    let conn = rusqlite::Connection::open(&db).unwrap();
    let turns: String = conn
        .query_row(
            "SELECT r.turns_json FROM responses r JOIN tasks t ON r.task = t.id
             WHERE r.model = 'vlm-local' AND t.task_id = 'lesions'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let turns: Vec<Value> = serde_json::from_str(&turns).unwrap();
    assert_eq!(
        turns[2]["key_images"],
        json!([{"series": "flair", "slice": 0}])
    );
    assert!(
        turns[0].get("key_images").is_none(),
        "a turn without images has none"
    );
}

#[test]
fn respond_sends_rendered_key_images_plays_follow_ups_and_adds_samples() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = write_small_bundle(&dir.path().join("bundle"), false);
    // The lesions task becomes a level-3 consultation with a follow-up script.
    let case_json = bundle.join("cases/ms-01/case.json");
    let consultation = std::fs::read_to_string(&case_json).unwrap().replace(
        r#""level": 2,
     "prompt": "Describe the lesions.","#,
        r#""level": 3, "follow_up": ["Which one is the largest?"],
     "prompt": "Describe the lesions.","#,
    );
    assert!(consultation.contains("follow_up"));
    std::fs::write(&case_json, consultation).unwrap();
    let db = dir.path().join("study.sqlite");
    let out = neurorater(&[
        "import",
        bundle.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));

    let server = Server::start(Box::new(|body, _, _| {
        let turns = body["messages"].as_array().map_or(0, Vec::len);
        if turns == 1 {
            chat(r#"{"answer": "Demyelination", "rationale": "Ovoid lesions."}"#)
        } else {
            chat("The periventricular one.")
        }
    }));
    let spec = write_model_spec(dir.path(), &server, "vlm-local");
    let respond = |samples: &str| {
        neurorater(&[
            "respond",
            "--db",
            db.to_str().unwrap(),
            "--spec",
            spec.to_str().unwrap(),
            "--samples",
            samples,
        ])
    };
    let first = respond("2");
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    // dx: 2 samples × 1 request; lesions: 2 samples × (question + follow-up).
    assert_eq!(server.requests(), 2 + 4);

    // The dx task's key image is FLAIR slice 2 in display order (d c b a): file b.dcm.
    let b_png = rendered_png(dir.path(), &bundle, "b.dcm");
    let seen = server.seen.lock().unwrap().clone();
    let dx = seen
        .iter()
        .find(|(body, _)| {
            body["messages"][0]["content"][0]["text"]
                .as_str()
                .unwrap()
                .ends_with("Most likely diagnosis?")
        })
        .expect("a dx request");
    assert_eq!(sent_png(&dx.0["messages"][0]["content"][1]), b_png);
    assert_eq!(dx.0["messages"][0]["content"].as_array().unwrap().len(), 2);
    assert!(dx.0["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Painful loss of vision"));

    let conn = rusqlite::Connection::open(&db).unwrap();
    let (answer, rationale, turns): (String, Option<String>, Option<String>) = conn
        .query_row(
            "SELECT r.answer, r.rationale, r.turns_json FROM responses r JOIN tasks t ON r.task = t.id
             WHERE r.model = 'vlm-local' AND t.task_id = 'dx' AND r.sample = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (answer.as_str(), rationale.as_deref(), turns),
        ("Demyelination", Some("Ovoid lesions."), None)
    );
    let (answer, turns): (String, String) = conn
        .query_row(
            "SELECT r.answer, r.turns_json FROM responses r JOIN tasks t ON r.task = t.id
             WHERE r.model = 'vlm-local' AND t.task_id = 'lesions' AND r.sample = 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(answer, "The periventricular one.");
    let turns: Vec<Value> = serde_json::from_str(&turns).unwrap();
    let roles: Vec<&str> = turns.iter().map(|t| t["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(turns[2]["content"], "Which one is the largest?");

    // --samples 3 adds sample 2 of each task and nothing else.
    let more = respond("3");
    assert_eq!(more.status.code(), Some(0), "{}", text(&more));
    assert_eq!(server.requests(), 6 + 1 + 2);
    let samples: i64 = conn
        .query_row(
            "SELECT count(*) FROM responses WHERE model = 'vlm-local'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(samples, 6);
}

#[test]
fn ctrl_c_stops_cleanly_and_the_next_run_completes() {
    let (dir, db) = study(16);
    let server = Server::start(Box::new(|_, _, _| {
        Action::Slow(Duration::from_millis(150), Box::new(chat(GOOD)))
    }));
    let spec = write_spec(dir.path(), &server, "judge-int", 2, PROMPT);
    let child = grade_command(&db, &spec)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let graded = || {
        count(
            &db,
            "SELECT count(*) FROM grader_scores WHERE grader = 'judge-int'",
        )
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while graded() < 3 {
        assert!(Instant::now() < deadline, "the run made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let stopped = child.wait_with_output().unwrap();
    assert_eq!(stopped.status.code(), Some(1), "{}", text(&stopped));
    assert!(text(&stopped).contains("stopped"), "{}", text(&stopped));
    let before = graded();
    assert!(before < 20, "the run finished before Ctrl-C");
    // Every stored score has its run record: nothing half-written.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM run_results WHERE spec_name = 'judge-int'"
        ),
        before
    );
    let resumed = grade(&db, &spec);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_eq!(graded(), 20);
}

#[test]
fn human_baseline_answers_are_graded_like_model_answers() {
    let (dir, db) = study(0);
    // A clinician's blind answer, stored as the app's Answer mode stores it (docs/curation.md).
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO responses (task, model, sample, answer, rationale, extra_json,
                 respondent_kind)
             SELECT t.id, 'human:resident', 0, 'Demyelination, resident', 'Ovoid lesions.', '{}',
                 'human'
             FROM tasks t JOIN cases c ON t.case_ref = c.id
             WHERE c.case_id = 'ms-01' AND t.task_id = 'dx'",
            [],
        )
        .unwrap();
    }
    let server = Server::start(Box::new(|_, _, _| chat(GOOD)));
    let spec = write_spec(dir.path(), &server, "judge-humans", 2, PROMPT);
    let out = grade(&db, &spec);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM grader_scores s JOIN responses r ON s.response = r.id
             WHERE s.grader = 'judge-humans' AND r.respondent_kind = 'human'"
        ),
        1
    );
    let answers: Vec<String> = server
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|(body, _)| answer_of(body))
        .collect();
    assert!(
        answers.iter().any(|a| a == "Demyelination, resident"),
        "{answers:?}"
    );
    // Exported like any grader line, keyed by the human row's model label.
    let (_, lines, _) = export_grader_lines(&db, dir.path());
    assert!(
        lines
            .lines()
            .any(|l| l.contains("\"human:resident\"") && l.contains("\"judge-humans\"")),
        "{lines}"
    );
}

/// A run covers the study chosen and nothing else: with two studies in the database it asks
/// which; `--study` sends only that study's tasks. A task of a case with images that names no
/// key image is listed before any request and never sent (it would reach the model as text).
#[test]
fn respond_covers_the_chosen_study_and_lists_a_task_without_key_images_instead_of_sending_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("two.sqlite");
    // The pilot study, its lesions task without key images; and a second study of the same case.
    let pilot = write_small_bundle(&dir.path().join("pilot"), false);
    let case_json = pilot.join("cases/ms-01/case.json");
    let keyless = std::fs::read_to_string(&case_json).unwrap().replace(
        r#""prompt": "Describe the lesions.", "key_images": [{"series": "keys", "slice": 1}]"#,
        r#""prompt": "Describe the lesions.", "key_images": []"#,
    );
    assert!(keyless.contains(r#""key_images": []"#));
    std::fs::write(&case_json, keyless).unwrap();
    let other = write_small_bundle(&dir.path().join("other"), false);
    let study_json = other.join("study.json");
    let renamed = std::fs::read_to_string(&study_json)
        .unwrap()
        .replace(r#""id": "pilot""#, r#""id": "second""#);
    std::fs::write(&study_json, renamed).unwrap();
    for bundle in [&pilot, &other] {
        let out = neurorater(&[
            "import",
            bundle.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
    }

    let server = Server::start(Box::new(|_, _, _| {
        chat(r#"{"answer": "Demyelination", "rationale": "Ovoid lesions."}"#)
    }));
    let spec = write_model_spec(dir.path(), &server, "vlm-scoped");
    let respond = |study: Option<&str>| {
        let mut args = vec![
            "respond",
            "--db",
            db.to_str().unwrap(),
            "--spec",
            spec.to_str().unwrap(),
        ];
        if let Some(study) = study {
            args.extend(["--study", study]);
        }
        neurorater(&args)
    };

    let unnamed = respond(None);
    assert_eq!(unnamed.status.code(), Some(2), "{}", text(&unnamed));
    assert!(
        text(&unnamed).contains("holds 2 studies (pilot, second); name one with --study"),
        "{}",
        text(&unnamed)
    );
    assert_eq!(server.requests(), 0);

    let pilot_run = respond(Some("pilot"));
    assert_eq!(pilot_run.status.code(), Some(0), "{}", text(&pilot_run));
    let said = text(&pilot_run);
    assert!(
        said.contains("skipped: ms-01/lesions: the task names no key image"),
        "{said}"
    );
    assert!(said.contains("1 task(s) skipped"), "{said}");
    // The pilot's dx task only: one request, one response stored, in the pilot study alone.
    assert_eq!(server.requests(), 1);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let stored: Vec<(String, String)> = conn
        .prepare(
            "SELECT st.study_id, t.task_id FROM responses r JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id JOIN studies st ON c.study = st.id
             WHERE r.model = 'vlm-scoped'",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored, [("pilot".to_owned(), "dx".to_owned())]);

    let unknown = respond(Some("third"));
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(
        text(&unknown).contains("holds no study \"third\" (it holds pilot, second)"),
        "{}",
        text(&unknown)
    );
}
