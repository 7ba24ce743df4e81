//! One Chat Completions call, with the retry and rate rules of docs/formats.md §6: 429 (honouring
//! `Retry-After`), 5xx, timeouts, dropped connections and replies cut off short are retried with
//! exponential backoff and jitter; 401/403 stop the run; any other 4xx fails the item with the
//! server's message.
//!
//! The API key lives only in this struct and the `Authorization` header. Everything the server
//! sends (the body of every reply, whatever its status, and the text of a transport error) passes
//! through the one redaction rule, [`Redactor`], as it arrives and before anything here reads it,
//! so a server echoing the key cannot make the runner store, print or send it on
//! (docs/runs.md, "What is redacted").

use crate::spec::Spec;
use rand::Rng;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::Mutex;

/// The first retry waits about this long; each further one twice as long.
const BACKOFF_BASE: Duration = Duration::from_millis(250);
/// No single wait is longer, whatever the server asks.
const BACKOFF_CAP: Duration = Duration::from_secs(60);

pub struct Client {
    http: reqwest::Client,
    url: String,
    key: Option<String>,
    /// The variable the spec's `api_key_env` names, for the message after a 401/403.
    key_env: Option<String>,
    redactor: Redactor,
    timeout: Duration,
    max_retries: u32,
    /// The earliest moment the next request may start, when a requests-per-minute limit is set.
    next_slot: Option<(Mutex<Instant>, Duration)>,
    /// Set by the first 401/403, or by a server that never answered: requests already waiting
    /// for their turn are not sent.
    stop_reason: Mutex<Option<CallError>>,
    /// Whether any HTTP answer came back in this run: until one does, a refused connection means
    /// no server is listening there (wrong endpoint, server not started), not a passing fault.
    answered: AtomicBool,
}

/// A successful reply: the assistant's text, the whole JSON body, and the token usage.
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub body: Value,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// 401 or 403: every further request would be refused too. `key_env` is the variable the
    /// spec's `api_key_env` names (none: no key was sent).
    KeyRefused {
        status: u16,
        message: String,
        key_env: Option<String>,
    },
    /// Another 4xx, or a reply without a message: this item fails, the run goes on.
    Rejected {
        status: Option<u16>,
        message: String,
    },
    /// Retryable failures that outlasted the retries.
    GaveUp { attempts: u32, last: String },
    /// No connection could be made to the endpoint and nothing there has ever answered: every
    /// further request would fail the same way.
    Unreachable { url: String, last: String },
}

impl CallError {
    /// Whether this error stops the whole run rather than failing one item.
    pub fn stops_run(&self) -> bool {
        matches!(
            self,
            CallError::KeyRefused { .. } | CallError::Unreachable { .. }
        )
    }
}

impl Client {
    pub fn new(spec: &Spec, key: Option<String>) -> Result<Client, String> {
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("cannot set up HTTP: {e}"))?;
        let next_slot = spec.requests_per_minute.map(|rpm| {
            (
                Mutex::new(Instant::now()),
                Duration::from_secs_f64(60.0 / f64::from(rpm)),
            )
        });
        let key = key.filter(|k| !k.is_empty());
        Ok(Client {
            http,
            url: format!("{}/chat/completions", spec.endpoint.trim_end_matches('/')),
            redactor: Redactor::new(key.as_deref()),
            key,
            key_env: spec.api_key_env.clone(),
            timeout: Duration::from_secs_f64(spec.timeout_seconds),
            max_retries: spec.max_retries,
            next_slot,
            stop_reason: Mutex::new(None),
            answered: AtomicBool::new(false),
        })
    }

    async fn wait_for_slot(&self) {
        let Some((next, interval)) = &self.next_slot else {
            return;
        };
        let start = {
            let mut next = next.lock().await;
            let start = (*next).max(Instant::now());
            *next = start + *interval;
            start
        };
        tokio::time::sleep_until(start.into()).await;
    }

    /// Posts one request body, retrying what §6 says to retry.
    pub async fn chat(&self, body: &Value) -> Result<Reply, CallError> {
        let mut attempt = 0;
        loop {
            self.wait_for_slot().await;
            if let Some(stop) = self.stop_reason.lock().await.clone() {
                return Err(stop);
            }
            let retry_after = match self.send_once(body).await {
                Ok(reply) => return Ok(reply),
                Err(Attempt::Final(error)) => return Err(self.remember_stop(error).await),
                Err(Attempt::Retry {
                    reason,
                    after,
                    no_connection,
                }) => {
                    if attempt >= self.max_retries {
                        let error = if no_connection && !self.answered.load(Ordering::Relaxed) {
                            CallError::Unreachable {
                                url: self.url.clone(),
                                last: reason,
                            }
                        } else {
                            CallError::GaveUp {
                                attempts: attempt + 1,
                                last: reason,
                            }
                        };
                        return Err(self.remember_stop(error).await);
                    }
                    after
                }
            };
            let wait = retry_after
                .unwrap_or_else(|| backoff(attempt))
                .min(BACKOFF_CAP);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// Keeps an error that stops the run, so that requests still waiting are not sent.
    async fn remember_stop(&self, error: CallError) -> CallError {
        if error.stops_run() {
            *self.stop_reason.lock().await = Some(error.clone());
        }
        error
    }

    async fn send_once(&self, body: &Value) -> Result<Reply, Attempt> {
        let mut request = self.http.post(&self.url).timeout(self.timeout).json(body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| self.transport(e))?;
        self.answered.store(true, Ordering::Relaxed);
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, SystemTime::now()));
        let announced = response.content_length();
        let bytes = match response.bytes().await {
            Ok(bytes) => bytes,
            Err(e) if e.is_timeout() => return Err(self.transport(e)),
            Err(e) => return Err(cut_off(announced, &self.error_text(&e))),
        };
        // Some stacks hand over what arrived without an error when the connection closes early:
        // a body shorter than its Content-Length is cut off all the same.
        if announced.is_some_and(|n| (bytes.len() as u64) < n) {
            return Err(cut_off(
                announced,
                &format!("{} bytes arrived", bytes.len()),
            ));
        }
        // The one place the server's bytes enter: redacted before anything reads them.
        let (text, parsed) = self.redactor.received(&bytes);
        let message = || server_message(&text, parsed.as_ref());
        match status.as_u16() {
            200..=299 => {}
            401 | 403 => {
                return Err(Attempt::Final(CallError::KeyRefused {
                    status: status.as_u16(),
                    message: message(),
                    key_env: self.key_env.clone(),
                }))
            }
            429 => {
                return Err(Attempt::Retry {
                    reason: format!("429 too many requests: {}", message()),
                    after: retry_after,
                    no_connection: false,
                })
            }
            500..=599 => {
                return Err(Attempt::Retry {
                    reason: format!("{status}: {}", message()),
                    after: retry_after,
                    no_connection: false,
                })
            }
            code => {
                return Err(Attempt::Final(CallError::Rejected {
                    status: Some(code),
                    message: message(),
                }))
            }
        }
        let body = match parsed {
            Some(body) => body,
            None => {
                let error = serde_json::from_str::<Value>(&text).err();
                if error.as_ref().is_some_and(serde_json::Error::is_eof) {
                    // JSON that stops mid-way: a body framed by the connection's end (no
                    // Content-Length) that closed early, which no header could tell.
                    return Err(cut_off(
                        announced,
                        &format!("{} bytes arrived, the JSON unfinished", bytes.len()),
                    ));
                }
                let error = error.map_or_else(|| "not UTF-8".to_owned(), |e| e.to_string());
                return Err(Attempt::Final(CallError::Rejected {
                    status: Some(status.as_u16()),
                    message: format!("the server's reply is not JSON: {error}"),
                }));
            }
        };
        let Some(content) = body["choices"][0]["message"]["content"].as_str() else {
            return Err(Attempt::Final(CallError::Rejected {
                status: Some(status.as_u16()),
                message: "the server's reply has no choices[0].message.content".into(),
            }));
        };
        Ok(Reply {
            text: content.to_owned(),
            prompt_tokens: body["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
            completion_tokens: body["usage"]["completion_tokens"].as_u64().unwrap_or(0),
            body,
        })
    }

    fn transport(&self, error: reqwest::Error) -> Attempt {
        let no_connection = error.is_connect();
        let reason = if error.is_timeout() {
            format!("no answer within {:.1} s", self.timeout.as_secs_f64())
        } else {
            self.error_text(&error)
        };
        Attempt::Retry {
            reason,
            after: None,
            no_connection,
        }
    }

    /// A transport error with its source chain (without it, "error sending request", a user
    /// cannot tell a refused connection from a reset one), redacted: its text may quote what the
    /// server sent.
    fn error_text(&self, error: &reqwest::Error) -> String {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            text.push_str(&format!(": {inner}"));
            source = inner.source();
        }
        self.redactor.text(&text)
    }
}

/// A reply whose body stopped short of what its headers announced: retried like a dropped
/// connection, and said to be cut off (never "refused": the server said yes).
fn cut_off(announced: Option<u64>, detail: &str) -> Attempt {
    let announced = announced.map_or_else(String::new, |n| format!(" ({n} bytes announced)"));
    Attempt::Retry {
        reason: format!(
            "the reply was cut off: the connection closed before its body was complete{announced}: \
             {detail}"
        ),
        after: None,
        no_connection: false,
    }
}

enum Attempt {
    Final(CallError),
    Retry {
        reason: String,
        after: Option<Duration>,
        /// The connection could not even be made (refused, no route, DNS).
        no_connection: bool,
    },
}

/// Full-range exponential backoff with jitter: between half and all of base × 2^attempt, so that
/// requests that failed together do not come back together.
fn backoff(attempt: u32) -> Duration {
    let ceiling = BACKOFF_BASE.saturating_mul(1 << attempt.min(16));
    ceiling.mul_f64(rand::rng().random_range(0.5..=1.0))
}

/// How long `Retry-After` asks to wait: delay-seconds, or an HTTP-date (RFC 9110 §10.2.3; the
/// IMF-fixdate form `Sun, 06 Nov 1994 08:49:37 GMT` every current server sends). A date already
/// past means at once; anything else unreadable is ignored (the usual backoff applies).
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(imf_fixdate_seconds(value)?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Seconds since the Unix epoch of an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
fn imf_fixdate_seconds(text: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut words = text.split_ascii_whitespace();
    let _weekday = words.next()?.strip_suffix(',')?;
    let day: u64 = words.next()?.parse().ok()?;
    let month_name = words.next()?;
    let month = MONTHS.iter().position(|m| *m == month_name)? as u64 + 1;
    let year: u64 = words.next()?.parse().ok()?;
    let mut clock = words.next()?.split(':').map(|n| n.parse::<u64>().ok());
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if words.next()? != "GMT"
        || words.next().is_some()
        || year < 1970
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = (era * 146_097 + day_of_era).checked_sub(719_468)?;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// The server's own words: OpenAI-style `{"error": {"message"}}`, else the body's start. Both
/// arguments are already redacted ([`Redactor::received`]).
fn server_message(text: &str, parsed: Option<&Value>) -> String {
    let from_json = parsed.and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .or_else(|| v["message"].as_str())
            .map(str::to_owned)
    });
    from_json.unwrap_or_else(|| text.chars().take(300).collect::<String>().trim().to_owned())
}

/// What the API key is replaced with wherever the server sent it back.
pub const REDACTED: &str = "[API key]";

/// The one redaction rule: the forms of the API key a server may send back, each replaced by
/// [`REDACTED`]. Applied to everything the server sends as it arrives ([`Redactor::received`],
/// and the text of a transport error), so nothing downstream (stored replies, answers, scores,
/// messages, progress events, logs) ever holds it.
///
/// Forms: the key verbatim (so `Bearer <key>` too), in raw bytes and again in every JSON string
/// after decoding (a key written with `\u` escapes), and base64 of it at each of the three byte
/// alignments (an echoed Basic credential or encoded header), for keys of 12 bytes or more.
/// A key cut into pieces, or otherwise re-encoded, is not recognised.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    forms: Vec<String>,
}

impl Redactor {
    pub fn new(key: Option<&str>) -> Redactor {
        let Some(key) = key.filter(|k| !k.is_empty()) else {
            return Redactor::default();
        };
        let mut forms = vec![key.to_owned()];
        if key.len() >= 12 {
            use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
            use base64::Engine;
            for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
                for skip in 0..3usize {
                    // The key after `skip` bytes of something else: keep only the characters that
                    // depend on the key's bytes alone (whole 3-byte groups of it).
                    let mut bytes = vec![0u8; (3 - skip) % 3];
                    bytes.extend_from_slice(key.as_bytes());
                    let first_group = bytes.len() - key.len();
                    let start = first_group.div_ceil(3) * 4;
                    let whole = bytes.len() / 3 * 4;
                    let encoded = engine.encode(&bytes);
                    if whole > start + 8 {
                        forms.push(encoded[start..whole].to_owned());
                    }
                }
            }
        }
        // The longest first, so that a longer form is never half replaced by a shorter one.
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        Redactor { forms }
    }

    /// `text` with every form of the key replaced.
    pub fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), REDACTED);
            }
        }
        out
    }

    /// A body as it arrived: its text redacted, and, when it is JSON, the value parsed from that
    /// text with every string and object key redacted again after decoding.
    pub fn received(&self, bytes: &[u8]) -> (String, Option<Value>) {
        let text = self.text(&String::from_utf8_lossy(bytes));
        let parsed = serde_json::from_str::<Value>(&text)
            .ok()
            .map(|value| self.json(value));
        (text, parsed)
    }

    fn json(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.json(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.json(v)))
                    .collect(),
            ),
            other => other,
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::KeyRefused {
                status,
                message,
                key_env: Some(var),
            } => write!(
                f,
                "the server refused the key in {var} ({status}: {message}): check that variable \
                 (the spec's api_key_env) holds a valid key with access to this model"
            ),
            CallError::KeyRefused {
                status,
                message,
                key_env: None,
            } => write!(
                f,
                "the server refused the request without a key ({status}: {message}): set \
                 api_key_env in the spec to the name of the variable holding the key"
            ),
            CallError::Rejected {
                status: Some(status),
                message,
            } if (200..300).contains(status) => {
                write!(f, "the server's reply ({status}) cannot be used: {message}")
            }
            CallError::Rejected {
                status: Some(status),
                message,
            } => write!(f, "the server refused the request ({status}): {message}"),
            CallError::Rejected {
                status: None,
                message,
            } => write!(f, "{message}"),
            CallError::GaveUp { attempts, last } => {
                write!(f, "gave up after {attempts} attempts; last: {last}")
            }
            CallError::Unreachable { url, last } => write!(
                f,
                "no server answers at {url} ({last}): start the model server, or correct \
                 `endpoint` in the spec"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_its_jitter() {
        for attempt in 0..5 {
            let wait = backoff(attempt);
            let ceiling = BACKOFF_BASE * (1 << attempt);
            assert!(
                wait >= ceiling / 2 && wait <= ceiling,
                "{attempt}: {wait:?}"
            );
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        // 1994-11-06T08:49:37Z is 784111777 s after the epoch (RFC 9110's own example; `date
        // -u -d @784111777` prints it back).
        let example = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        for (value, now, expected) in [
            ("120", example, Some(Duration::from_secs(120))),
            (" 1.5 ", example, Some(Duration::from_millis(1500))),
            (
                "Sun, 06 Nov 1994 08:49:37 GMT",
                example - Duration::from_secs(90),
                Some(Duration::from_secs(90)),
            ),
            (
                "Sun, 06 Nov 1994 08:49:37 GMT",
                example,
                Some(Duration::ZERO),
            ),
            (
                "Sun, 06 Nov 1994 08:49:37 GMT",
                example + Duration::from_secs(5),
                Some(Duration::ZERO),
            ),
            // 2000 was a leap year: 1 Mar is a day after 29 Feb (951782400, `date -u -d`).
            (
                "Wed, 01 Mar 2000 00:00:00 GMT",
                SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400),
                Some(Duration::from_secs(86_400)),
            ),
            ("-3", example, None),
            ("Sunday, 06-Nov-94 08:49:37 GMT", example, None),
            ("Sun, 06 Nov 1994 08:49:37 CET", example, None),
            ("Sun, 06 Nov 1994 25:49:37 GMT", example, None),
            ("soon", example, None),
        ] {
            assert_eq!(retry_after(value, now), expected, "{value:?}");
        }
    }

    #[test]
    fn server_messages_come_from_the_error_object() {
        let (text, parsed) =
            Redactor::new(None).received(br#"{"error": {"message": "model not found"}}"#);
        assert_eq!(server_message(&text, parsed.as_ref()), "model not found");
        assert_eq!(server_message("plain words", None), "plain words");
    }

    #[test]
    fn the_key_is_redacted_verbatim_as_bearer_json_escaped_and_base64() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE};
        use base64::Engine;
        let key = "sk-MARKER-7f3a9c-never-stored";
        let redactor = Redactor::new(Some(key));
        // Verbatim and as the header it was sent in.
        assert_eq!(
            redactor.text(&format!("Bearer {key}, again {key}")),
            "Bearer [API key], again [API key]"
        );
        // Written with JSON escapes: the raw text hides it, the decoded strings do not.
        let escaped = format!(r#"{{"echo": "\u0073{}", "{key}": 1}}"#, &key[1..]);
        let (_, parsed) = redactor.received(escaped.as_bytes());
        let parsed = parsed.unwrap();
        assert_eq!(parsed["echo"], "[API key]");
        assert_eq!(parsed["[API key]"], 1);
        assert!(!parsed.to_string().contains(key));
        // Base64 at every alignment, standard and URL-safe (a Basic credential, say).
        for prefix in ["", "u:", "us:", "use:"] {
            for encoded in [
                STANDARD.encode(format!("{prefix}{key}")),
                URL_SAFE.encode(format!("Bearer {prefix}{key}")),
            ] {
                let shown = redactor.text(&encoded);
                assert!(shown.contains(REDACTED), "{prefix:?}: {encoded} -> {shown}");
                // All but a few characters at either end of the key's encoding are gone.
                let removed = encoded.len() + REDACTED.len() - shown.len();
                assert!(removed + 8 >= key.len() * 4 / 3, "{encoded} -> {shown}");
            }
        }
        // Without a key nothing changes.
        assert_eq!(Redactor::new(None).text(key), key);
        assert_eq!(Redactor::new(Some("")).text("abc"), "abc");
    }
}
