//! The client's pacing against a local HTTP server the test starts: a requests-per-minute limit
//! spaces request starts, and a 429 whose `Retry-After` is an HTTP-date waits until that date.

use runner::client::Client;
use runner::spec::Spec;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Arrival times of the requests, and the response for the n-th request.
struct Server {
    endpoint: String,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

async fn start(respond: fn(usize) -> String) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}/v1", listener.local_addr().unwrap());
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let seen = arrivals.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                // Headers, then the body its Content-Length announces.
                loop {
                    let Ok(n) = stream.read(&mut buffer).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buffer[..n]);
                    let text = String::from_utf8_lossy(&request);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let n = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(Instant::now());
                    seen.len() - 1
                };
                let _ = stream.write_all(respond(n).as_bytes()).await;
            });
        }
    });
    Server { endpoint, arrivals }
}

fn http(status: &str, extra_headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    )
}

fn ok(_: usize) -> String {
    http(
        "200 OK",
        "",
        &json!({"choices": [{"message": {"content": "fine"}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        .to_string(),
    )
}

fn spec(endpoint: &str, extra: &str) -> Spec {
    Spec::parse(
        &format!(
            "name = \"pace\"\nendpoint = \"{endpoint}\"\nmodel = \"m\"\ntemperature = 0.0\n\
             seed = 1\nmax_tokens = 10\nconcurrency = 8\n{extra}"
        ),
        "pace.toml",
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_spaces_request_starts() {
    let server = start(ok).await;
    // 600 a minute: one start every 100 ms, however many are asked for at once.
    let client = Arc::new(
        Client::new(&spec(&server.endpoint, "requests_per_minute = 600\n"), None).unwrap(),
    );
    let started = Instant::now();
    let calls: Vec<_> = (0..6)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.chat(&json!({"model": "m"})).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap().text, "fine");
    }
    let mut arrivals = server.arrivals.lock().unwrap().clone();
    arrivals.sort();
    assert_eq!(arrivals.len(), 6);
    // Start slots are exact; arrival adds network jitter of a few ms at most on loopback.
    for pair in arrivals.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(80), "requests {gap:?} apart");
    }
    assert!(started.elapsed() >= Duration::from_millis(500));
}

/// `Retry-After` as an IMF-fixdate two seconds ahead (whole seconds, so the wait is 1–2 s).
fn too_many_until_a_date(n: usize) -> String {
    if n > 0 {
        return ok(n);
    }
    let at = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 2;
    http(
        "429 Too Many Requests",
        &format!("Retry-After: {}\r\n", imf_fixdate(at)),
        r#"{"error": {"message": "slow down"}}"#,
    )
}

/// Formats Unix seconds as an IMF-fixdate (Howard Hinnant's civil_from_days).
fn imf_fixdate(unix: u64) -> String {
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, secs) = (unix / 86_400, unix % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[test]
fn the_date_formatter_of_this_test_is_right() {
    // `date -u -d @784111777 '+%a, %d %b %Y %T GMT'`.
    assert_eq!(imf_fixdate(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(imf_fixdate(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_date_is_waited_for() {
    let server = start(too_many_until_a_date).await;
    let client = Client::new(&spec(&server.endpoint, ""), None).unwrap();
    assert_eq!(
        client.chat(&json!({"model": "m"})).await.unwrap().text,
        "fine"
    );
    let arrivals = server.arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 2);
    // The first backoff without the header would be 125–250 ms.
    let waited = arrivals[1] - arrivals[0];
    assert!(
        waited >= Duration::from_millis(900),
        "retried after {waited:?}"
    );
    assert!(
        waited <= Duration::from_millis(2600),
        "retried after {waited:?}"
    );
}
