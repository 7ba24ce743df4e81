//! A PostgreSQL cluster of the test's own (`cluster.rs`), and the team server (`neurorater-server
//! serve`) as a child process on it. Both are stopped when their guards drop, a failing test
//! included.

#[path = "cluster.rs"]
mod cluster;
pub use cluster::Cluster;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// `neurorater serve` on a database; its log (stderr) is collected for the checks on it.
pub struct Server {
    child: Child,
    pub base: String,
    log: Arc<Mutex<Vec<u8>>>,
}

impl Server {
    pub fn start(database: &str) -> Server {
        Server::start_on(database, "127.0.0.1:0")
    }

    pub fn start_on(database: &str, listen: &str) -> Server {
        Server::start_with(database, &["--listen", listen])
    }

    /// `serve --database DATABASE` and `options` (a `--listen` among them).
    pub fn start_with(database: &str, options: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_neurorater-server"))
            .args(["serve", "--database", database])
            .args(options)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start neurorater-server serve");
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the server's first line");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                panic!(
                    "the server did not start: {line:?}; log: {}",
                    String::from_utf8_lossy(&log.lock().unwrap())
                )
            })
            .to_owned();
        Server { child, base, log }
    }

    pub fn log(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().unwrap()).into_owned()
    }

    /// SIGKILL: no shutdown, no flush, as a crash or an OOM kill.
    pub fn kill(mut self) -> String {
        self.child.kill().expect("kill the server");
        self.child.wait().expect("reap the server");
        self.log()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// HTTP/1.1 over a plain socket, one connection per request: enough for tests, and no HTTP
/// client crate to build.
pub struct Http {
    address: String,
    /// Header lines sent with every request (`Name: value`).
    headers: Vec<String>,
}

impl Http {
    pub fn new(base: &str) -> Http {
        Http {
            address: base
                .strip_prefix("http://")
                .expect("an http:// base")
                .to_owned(),
            headers: Vec::new(),
        }
    }

    /// A client that sends `headers` (`Name: value`) with every request: a browser's
    /// `User-Agent`, a proxy's `X-Forwarded-For`.
    pub fn with_headers(base: &str, headers: &[&str]) -> Http {
        Http {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            ..Http::new(base)
        }
    }

    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&serde_json::Value>,
    ) -> (u16, String) {
        self.try_call(method, path, token, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    pub fn try_call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&serde_json::Value>,
    ) -> std::io::Result<(u16, String)> {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, reply) = self.raw(method, path, token, "application/json", body.as_bytes())?;
        Ok((status, String::from_utf8_lossy(&reply).into_owned()))
    }

    /// `method path` with `body` (none when empty) of `content_type`: the status and the body's
    /// bytes as sent (the server sets Content-Length; nothing is chunked).
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: &[u8],
    ) -> std::io::Result<(u16, Vec<u8>)> {
        self.exchange(method, path, token, content_type, body)
            .map(|(status, _, body)| (status, body))
    }

    /// `method path` with a JSON body: the status, the reply's header lines, and its body.
    pub fn call_with_head(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&serde_json::Value>,
    ) -> (u16, String, String) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let (status, head, reply) = self
            .exchange(method, path, token, "application/json", body.as_bytes())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        (status, head, String::from_utf8_lossy(&reply).into_owned())
    }

    fn exchange(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: &[u8],
    ) -> std::io::Result<(u16, String, Vec<u8>)> {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(&self.address)?;
        stream.set_read_timeout(Some(std::time::Duration::from_secs(120)))?;
        let mut request = format!(
            "{} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            method.to_uppercase(),
            self.address
        );
        if let Some(token) = token {
            request.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        for header in &self.headers {
            request.push_str(&format!("{header}\r\n"));
        }
        if !body.is_empty() {
            request.push_str(&format!(
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        stream.write_all(&bytes)?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply)?;
        let end = reply
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no complete reply")
            })?;
        let head = String::from_utf8_lossy(&reply[..end]).into_owned();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("no status in {head:?}")))?;
        Ok((status, head, reply[end + 4..].to_vec()))
    }

    /// `method path` expecting `status`; the body as JSON (null when empty).
    pub fn expect(
        &self,
        status: u16,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        let (got, text) = self.call(method, path, token, body.as_ref());
        assert_eq!(got, status, "{method} {path}: {text}");
        if text.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&text)
                .unwrap_or_else(|_| panic!("{method} {path}: not JSON: {text}"))
        }
    }
}
