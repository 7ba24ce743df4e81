//! Simulated raters against a running team server (docs/performance.md "Team server under
//! load", docs/reliability.md "Team server under faults"). Run by scripts/bench/team_load.sh,
//! which starts PostgreSQL and the server and, with `--faults`, kills and restarts them.
//!
//! The lead invites RATERS accounts through the real invitation flow (invite, accept, log in),
//! tops each up with a queue, and then every rater saves its first item's whole state (the body
//! the app's save queue sends) every INTERVAL_MS for SECONDS: a fresh edit id per edit, its
//! `base_version` the version of the last acknowledgement. Edits wait in the rater's local queue
//! and are sent in order, each retried with its own edit id until acknowledged, as the app does
//! when the network or the server is gone. With `--cut-off AT:FOR`, rater 0 reaches the server
//! through a relay of this program that drops its connections from AT seconds for FOR seconds.
//!
//! Prints acknowledgements, errors by kind, acknowledgement latency percentiles (one request,
//! sent to answered), the server's peak resident memory (VmHWM of `--server-pid`) and the load
//! average before and after. With `--database`, counts from PostgreSQL directly that every
//! acknowledged edit is stored with its version (0 lost) and that no edit was applied twice.
//! Exits 1 when an edit is lost or duplicated, a rater did not finish, or (without `--faults`)
//! any request failed. Comments and times come from a fixed seed (`--seed`).

use seeded::SplitMix64;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

const USAGE: &str = "usage: team_load --base URL --study ID --lead-token TOKEN [--raters N] \
    [--seconds S] [--interval-ms MS] [--prefix NAME] [--seed N] [--server-pid PID] \
    [--database URL] [--faults] [--cut-off AT:FOR] [--started FILE] [--drain S]";

/// How long one request may take before the client gives up on it and resends it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause before a resend: short, so a restarted server is found quickly; growing to
/// `RETRY_MAX` so that clients do not hammer a server that is down.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);
/// Enrolment runs a few at a time: accepting and logging in each hash a password (argon2).
const ENROL_AT_ONCE: usize = 4;

struct Options {
    base: String,
    study: String,
    lead_token: String,
    raters: usize,
    seconds: f64,
    interval: Duration,
    prefix: String,
    seed: u64,
    server_pid: Option<u32>,
    database: Option<String>,
    faults: bool,
    cut_off: Option<(f64, f64)>,
    started: Option<String>,
    drain: Duration,
}

fn parse_options() -> Result<Options, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut named: HashMap<&str, &str> = HashMap::new();
    let mut faults = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let name = arg
            .strip_prefix("--")
            .ok_or_else(|| format!("{arg:?} is not an option"))?;
        if name == "faults" {
            faults = true;
            continue;
        }
        let value = rest.next().ok_or_else(|| format!("{arg} needs a value"))?;
        named.insert(name, value);
    }
    let required = |name: &str| {
        named
            .get(name)
            .map(|v| v.to_string())
            .ok_or_else(|| format!("--{name} is required"))
    };
    fn number<T: std::str::FromStr>(
        name: &str,
        value: Option<&&str>,
        default: T,
    ) -> Result<T, String> {
        value.map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| format!("--{name}: {v:?} is not a number"))
        })
    }
    let cut_off = match named.get("cut-off") {
        None => None,
        Some(v) => {
            let (at, length) = v.split_once(':').ok_or("--cut-off is AT:FOR, in seconds")?;
            Some((
                at.parse().map_err(|_| "--cut-off: AT is not a number")?,
                length
                    .parse()
                    .map_err(|_| "--cut-off: FOR is not a number")?,
            ))
        }
    };
    Ok(Options {
        base: required("base")?,
        study: required("study")?,
        lead_token: required("lead-token")?,
        raters: number("raters", named.get("raters"), 50)?,
        seconds: number("seconds", named.get("seconds"), 120.0)?,
        interval: Duration::from_millis(number("interval-ms", named.get("interval-ms"), 500)?),
        prefix: named.get("prefix").map_or("load", |v| v).to_owned(),
        seed: number("seed", named.get("seed"), 16)?,
        server_pid: named
            .get("server-pid")
            .map(|v| v.parse())
            .transpose()
            .map_err(|_| "--server-pid is not a number")?,
        database: named.get("database").map(|v| v.to_string()),
        faults,
        cut_off,
        started: named.get("started").map(|v| v.to_string()),
        drain: Duration::from_secs_f64(number("drain", named.get("drain"), 180.0)?),
    })
}

const WORDS: &[&str] = &[
    "lesion",
    "enhancing",
    "periventricular",
    "hyperintensity",
    "mass",
    "effect",
    "midline",
    "shift",
    "oedema",
    "restricted",
    "diffusion",
    "answer",
    "misses",
    "the",
    "finding",
    "correct",
    "but",
    "overstates",
    "confidence",
    "left",
    "right",
    "frontal",
    "temporal",
    "lobe",
];

/// The rating's whole state after a rater's `n`th change: what the app's save queue sends.
fn whole_state(seeded: &mut SplitMix64, n: u64) -> Value {
    let words = 5 + seeded.below(60);
    let comment: Vec<&str> = (0..words)
        .map(|_| WORDS[seeded.below(WORDS.len())])
        .collect();
    json!({
        "kind": "save",
        "rating": {
            "scores": { "comment": comment.join(" "), "seconds_on_task": n as f64 * 0.5 },
            "labels": []
        }
    })
}

/// Answers to the lead's setup calls: the body of a 200, or the reason to stop.
async fn must(request: reqwest::RequestBuilder, what: &str) -> Result<Value, String> {
    let response = request.send().await.map_err(|e| format!("{what}: {e}"))?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if status.is_success() {
        Ok(body)
    } else {
        Err(format!("{what}: {status} {body}"))
    }
}

struct Rater {
    username: String,
    token: String,
    assignment: i64,
    version: i64,
}

/// Invited by the lead, the invitation accepted with a password, logged in: the username and
/// the session token.
async fn enrol(
    http: reqwest::Client,
    base: Arc<str>,
    study: Arc<str>,
    lead_token: Arc<str>,
    username: String,
    site: String,
) -> Result<(String, String), String> {
    let password = format!("{username} load password");
    let invitation = must(
        http.post(format!("{base}/api/studies/{study}/invitations"))
            .bearer_auth(&lead_token)
            .json(&json!({
                "username": username, "role": "rater", "site": site,
                "clinical_role": "neuroradiologist",
            })),
        "invite",
    )
    .await?;
    must(
        http.post(format!("{base}/api/invitations/accept"))
            .json(&json!({ "code": invitation["code"], "password": password })),
        "accept the invitation",
    )
    .await?;
    let login = must(
        http.post(format!("{base}/api/login"))
            .json(&json!({ "username": username, "password": password })),
        "log in",
    )
    .await?;
    let token = login["token"].as_str().ok_or("the login has no token")?;
    Ok((username, token.to_owned()))
}

/// Every rater enrolled, then one top-up for all of them; each rater's first assignment.
async fn enrol_everyone(o: &Options) -> Result<Vec<Rater>, String> {
    let http = reqwest::Client::new();
    let (base, study, lead_token): (Arc<str>, Arc<str>, Arc<str>) = (
        o.base.as_str().into(),
        o.study.as_str().into(),
        o.lead_token.as_str().into(),
    );
    let mut accounts = Vec::with_capacity(o.raters);
    for first in (0..o.raters).step_by(ENROL_AT_ONCE) {
        let batch: Vec<_> = (first..(first + ENROL_AT_ONCE).min(o.raters))
            .map(|i| {
                tokio::spawn(enrol(
                    http.clone(),
                    Arc::clone(&base),
                    Arc::clone(&study),
                    Arc::clone(&lead_token),
                    format!("{}-{i}", o.prefix),
                    format!("site-{}", i % 3),
                ))
            })
            .collect();
        for task in batch {
            accounts.push(task.await.map_err(|e| e.to_string())??);
        }
    }
    let names: Vec<&str> = accounts.iter().map(|(name, _)| name.as_str()).collect();
    must(
        http.post(format!("{base}/api/studies/{study}/top-up"))
            .bearer_auth(&*lead_token)
            .json(&json!({ "raters": names, "per_rater": 3 })),
        "top up",
    )
    .await?;
    let mut raters = Vec::with_capacity(accounts.len());
    for (username, token) in accounts {
        let queue = must(
            http.get(format!("{base}/api/studies/{study}/queue"))
                .bearer_auth(&token),
            "the queue",
        )
        .await?;
        let first = queue.get(0).ok_or(format!("{username}'s queue is empty"))?;
        raters.push(Rater {
            username,
            token,
            assignment: first["assignment"].as_i64().ok_or("no assignment")?,
            version: first["version"].as_i64().ok_or("no version")?,
        });
    }
    Ok(raters)
}

/// One edit in a rater's local queue. `base_version` is fixed when it is first sent, so that a
/// resend is the same request and the server answers it from the first acknowledgement.
struct QueuedEdit {
    edit_id: String,
    edit: Value,
    base_version: Option<i64>,
}

#[derive(Default)]
struct Tally {
    /// Milliseconds from sending a request to its acknowledgement.
    latencies_ms: Vec<f64>,
    /// Failed requests by kind (`timeout`, `connect`, `HTTP 500`, ...), each resent.
    errors: BTreeMap<String, u64>,
    /// Every acknowledgement: rater, edit id, version.
    acks: Vec<(String, String, i64)>,
    /// Raters whose queue was empty at the end.
    finished: usize,
    /// The longest an edit waited in a local queue before its acknowledgement.
    longest_wait: Duration,
}

fn error_kind(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timeout".into()
    } else if error.is_connect() {
        "connect".into()
    } else {
        "connection lost".into()
    }
}

/// One simulated rater's sending side: its connection, rating and local queue.
struct Sender {
    http: reqwest::Client,
    url: String,
    token: String,
    username: String,
    /// The version of the last acknowledgement: the next edit's `base_version`.
    version: i64,
    queue: Arc<Mutex<VecDeque<(QueuedEdit, Instant)>>>,
    /// True while the rater is still making edits.
    making: watch::Receiver<bool>,
    give_up: Instant,
    tally: Arc<Mutex<Tally>>,
}

/// Sends the queue's edits in order, each until acknowledged. Returns once `making` has stopped
/// and the queue is empty, or at `give_up`.
async fn send_queue(sender: Sender) {
    let Sender {
        http,
        url,
        token,
        username,
        mut version,
        queue,
        mut making,
        give_up,
        tally,
    } = sender;
    let mut pause = RETRY_FIRST;
    loop {
        let next = queue.lock().unwrap().front_mut().map(|(edit, queued_at)| {
            let base = *edit.base_version.get_or_insert(version);
            (
                json!({ "edit_id": edit.edit_id, "base_version": base, "edit": edit.edit }),
                edit.edit_id.clone(),
                *queued_at,
            )
        });
        let Some((body, edit_id, queued_at)) = next else {
            if !*making.borrow() {
                tally.lock().unwrap().finished += 1;
                return;
            }
            // Wait for the next edit (or the end of editing).
            if making.changed().await.is_err() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            continue;
        };
        if Instant::now() > give_up {
            return;
        }
        let sent = Instant::now();
        let outcome = http.post(&url).bearer_auth(&token).json(&body).send().await;
        let failure = match outcome {
            Ok(response) if response.status().is_success() => {
                match response.json::<Value>().await {
                    Ok(ack) => {
                        let took = sent.elapsed();
                        version = ack["version"]
                            .as_i64()
                            .expect("an acknowledgement has a version");
                        queue.lock().unwrap().pop_front();
                        let mut tally = tally.lock().unwrap();
                        tally.latencies_ms.push(took.as_secs_f64() * 1e3);
                        tally.acks.push((username.clone(), edit_id, version));
                        tally.longest_wait = tally.longest_wait.max(queued_at.elapsed());
                        pause = RETRY_FIRST;
                        continue;
                    }
                    Err(e) => error_kind(&e),
                }
            }
            Ok(response) => {
                let status = response.status();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                if status.is_client_error() {
                    // A 4xx is the server refusing this edit for good: resending it cannot
                    // help, and the client's state is wrong. Counted, and the rater stops.
                    let mut tally = tally.lock().unwrap();
                    *tally
                        .errors
                        .entry(format!(
                            "HTTP {} {}",
                            status.as_u16(),
                            body["code"].as_str().unwrap_or("")
                        ))
                        .or_default() += 1;
                    eprintln!("{username}: {edit_id} refused: {status} {body}");
                    return;
                }
                format!("HTTP {}", status.as_u16())
            }
            Err(e) => error_kind(&e),
        };
        *tally.lock().unwrap().errors.entry(failure).or_default() += 1;
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(RETRY_MAX);
    }
}

/// Makes one edit every `interval` into the rater's local queue, from `start` for `seconds`.
async fn make_edits(
    username: String,
    seed: u64,
    start: tokio::time::Instant,
    o: (Duration, f64),
    queue: Arc<Mutex<VecDeque<(QueuedEdit, Instant)>>>,
    making: watch::Sender<bool>,
) {
    let (interval, seconds) = o;
    let end = start + Duration::from_secs_f64(seconds);
    let mut seeded = SplitMix64::new(seed);
    let mut ticks = tokio::time::interval_at(start, interval);
    for n in 0.. {
        let at = ticks.tick().await;
        if at >= end {
            break;
        }
        let edit = QueuedEdit {
            edit_id: format!("{username}-e{n}"),
            edit: whole_state(&mut seeded, n),
            base_version: None,
        };
        queue.lock().unwrap().push_back((edit, Instant::now()));
        making.send_replace(true);
    }
    making.send_replace(false);
}

/// A TCP relay to the server whose connections all drop, and new ones are refused, while
/// `down` holds true: a client's network gone, from its side of the wire.
async fn relay(to: SocketAddr, down: watch::Receiver<bool>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port for the relay");
    let address = listener.local_addr().expect("the relay's address");
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            if *down.borrow() {
                continue; // dropped: the connection is reset
            }
            let mut down = down.clone();
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                let cut = async {
                    // Once the cut-off's sender is gone no cut can come: the connection lives on.
                    if down.wait_for(|d| *d).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                };
                tokio::select! {
                    _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                    _ = cut => {}
                }
            });
        }
    });
    address
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A memory figure of process `pid` in MB: `VmHWM` (peak resident) or `VmRSS` (resident now).
fn memory_mb(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| {
        l.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    // Nearest rank.
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// From PostgreSQL directly: acknowledged edits missing or stored with another version, edits
/// applied more than once (two audit entries for one edit id), and raters whose rating's
/// version is not the number of edits they had acknowledged.
async fn count_in_database(
    database: &str,
    prefix: &str,
    acks: &[(String, String, i64)],
) -> Result<(usize, i64, usize), String> {
    let (client, connection) = tokio_postgres::connect(database, tokio_postgres::NoTls)
        .await
        .map_err(|e| format!("PostgreSQL: {e}"))?;
    tokio::spawn(connection);
    let pattern = format!("{prefix}-%");
    let stored: HashMap<(String, String), i64> = client
        .query(
            "SELECT a.username, e.edit_id, (e.ack->>'version')::bigint FROM applied_edits e
             JOIN accounts a ON a.id = e.account WHERE a.username LIKE $1",
            &[&pattern],
        )
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|row| ((row.get(0), row.get(1)), row.get(2)))
        .collect();
    let lost = acks
        .iter()
        .filter(|(user, id, version)| stored.get(&(user.clone(), id.clone())) != Some(version))
        .count();
    let duplicates: i64 = client
        .query_one(
            "SELECT count(*) FROM (SELECT after->>'edit_id' FROM audit_log
             WHERE actor LIKE $1 AND action = 'save rating' GROUP BY 1 HAVING count(*) > 1) twice",
            &[&pattern],
        )
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    let mut acked_per_rater: HashMap<&str, i64> = HashMap::new();
    for (user, _, _) in acks {
        *acked_per_rater.entry(user).or_default() += 1;
    }
    let versions = client
        .query(
            "SELECT a.username, max(r.version) FROM ratings r
             JOIN assignments s ON s.id = r.assignment JOIN accounts a ON a.id = s.account
             WHERE a.username LIKE $1 GROUP BY 1",
            &[&pattern],
        )
        .await
        .map_err(|e| e.to_string())?;
    let mismatched = versions
        .iter()
        .filter(|row| {
            let user: String = row.get(0);
            acked_per_rater.get(user.as_str()).copied() != Some(row.get::<_, i64>(1))
        })
        .count();
    Ok((lost, duplicates, mismatched))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let o = match parse_options() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("{message}\n{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    match run(o).await {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(1),
        Err(message) => {
            eprintln!("team_load: {message}");
            std::process::ExitCode::from(1)
        }
    }
}

async fn run(o: Options) -> Result<bool, String> {
    let set_up = Instant::now();
    let raters = enrol_everyone(&o).await?;
    println!(
        "{} raters enrolled (invited, accepted, logged in, topped up) in {:.1} s",
        raters.len(),
        set_up.elapsed().as_secs_f64()
    );
    let server: SocketAddr = o
        .base
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .ok_or("--base is http://IP:PORT")?;
    let (cut, cut_watch) = watch::channel(false);
    let relayed = match o.cut_off {
        Some(_) => Some(relay(server, cut_watch).await),
        None => None,
    };

    let load_before = load_average();
    let enrolled_rss = o.server_pid.and_then(|pid| memory_mb(pid, "VmRSS"));
    if let Some(file) = &o.started {
        std::fs::write(file, "started\n").map_err(|e| format!("{file}: {e}"))?;
    }
    let tally = Arc::new(Mutex::new(Tally::default()));
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    let give_up = Instant::now() + Duration::from_secs_f64(o.seconds) + o.drain;
    let mut senders = Vec::new();
    for (index, rater) in raters.iter().enumerate() {
        let base = match (index, relayed) {
            (0, Some(address)) => format!("http://{address}"),
            _ => o.base.clone(),
        };
        // One keep-alive connection per rater, as one app per rater.
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .pool_max_idle_per_host(1)
            .build()
            .map_err(|e| e.to_string())?;
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let (making, making_watch) = watch::channel(true);
        // Staggered, so that the raters do not all save in the same millisecond.
        let offset = o.interval.mul_f64(index as f64 / o.raters.max(1) as f64);
        tokio::spawn(make_edits(
            rater.username.clone(),
            o.seed.wrapping_add(index as u64),
            start + offset,
            (o.interval, o.seconds),
            Arc::clone(&queue),
            making,
        ));
        senders.push(tokio::spawn(send_queue(Sender {
            http,
            url: format!(
                "{base}/api/studies/{}/items/{}/edits",
                o.study, rater.assignment
            ),
            token: rater.token.clone(),
            username: rater.username.clone(),
            version: rater.version,
            queue,
            making: making_watch,
            give_up,
            tally: Arc::clone(&tally),
        })));
    }
    if let Some((at, length)) = o.cut_off {
        tokio::spawn(async move {
            tokio::time::sleep_until(start + Duration::from_secs_f64(at)).await;
            println!("rater 0 cut off for {length} s");
            cut.send_replace(true);
            tokio::time::sleep(Duration::from_secs_f64(length)).await;
            println!("rater 0 back");
            cut.send_replace(false);
        });
    }
    for sender in senders {
        sender.await.map_err(|e| e.to_string())?;
    }
    let load_after = load_average();

    let tally = std::mem::take(&mut *tally.lock().unwrap());
    let mut latencies = tally.latencies_ms.clone();
    latencies.sort_by(f64::total_cmp);
    let errors: u64 = tally.errors.values().sum();
    let peak_rss = o.server_pid.and_then(|pid| memory_mb(pid, "VmHWM"));
    let end_rss = o.server_pid.and_then(|pid| memory_mb(pid, "VmRSS"));
    println!(
        "{} raters x {} s, one edit each per {} ms: {} acknowledged, {} failed requests {:?}",
        o.raters,
        o.seconds,
        o.interval.as_millis(),
        tally.acks.len(),
        errors,
        tally.errors
    );
    println!(
        "acknowledgement latency ms: p50 {:.1}, p95 {:.1}, p99 {:.1}, max {:.1}; longest an edit waited in a local queue: {:.1} s",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(f64::NAN),
        tally.longest_wait.as_secs_f64()
    );
    match (enrolled_rss, peak_rss, end_rss) {
        (Some(enrolled), Some(peak), Some(end)) => println!(
            "server resident memory: {enrolled:.1} MB after enrolment, {end:.1} MB at the end, \
             peak (VmHWM) {peak:.1} MB"
        ),
        _ => println!("server memory: not measured (no --server-pid, or it was restarted)"),
    }
    println!("load average (1, 5, 15 min): before {load_before}, after {load_after}");
    println!(
        "raters finished with an empty queue: {} of {}",
        tally.finished, o.raters
    );
    let mut ok = tally.finished == o.raters && (o.faults || errors == 0);
    let mut counted = json!(null);
    if let Some(database) = &o.database {
        let (lost, duplicates, mismatched) =
            count_in_database(database, &o.prefix, &tally.acks).await?;
        println!(
            "counted in PostgreSQL: {lost} acknowledged edits lost, {duplicates} stored twice, \
             {mismatched} ratings whose version is not their acknowledged edits"
        );
        ok &= lost == 0 && duplicates == 0 && mismatched == 0;
        counted =
            json!({ "lost": lost, "duplicates": duplicates, "version_mismatches": mismatched });
    }
    println!(
        "{}",
        json!({
            "raters": o.raters, "seconds": o.seconds, "interval_ms": o.interval.as_millis() as u64,
            "faults": o.faults, "acknowledged": tally.acks.len(), "failed_requests": errors,
            "failed_by_kind": tally.errors, "finished": tally.finished,
            "p50_ms": percentile(&latencies, 0.50), "p95_ms": percentile(&latencies, 0.95),
            "p99_ms": percentile(&latencies, 0.99), "max_ms": latencies.last(),
            "longest_queue_wait_s": tally.longest_wait.as_secs_f64(),
            "server_peak_rss_mb": peak_rss, "server_rss_after_enrolment_mb": enrolled_rss,
            "server_rss_at_end_mb": end_rss, "load_before": load_before, "load_after": load_after,
            "database": counted, "ok": ok,
        })
    );
    Ok(ok)
}
