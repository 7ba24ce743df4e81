//! The server's address and the path segments the client puts into it, checked before anything
//! is sent.

use crate::error::{ClientError, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A team server's base URL: `http` or `https`, a host, no credentials, query or fragment. A
/// path is kept (a server behind a reverse proxy at `/neurorater/`) and always ends with `/`, so
/// the API's paths join below it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ServerUrl(url::Url);

impl ServerUrl {
    pub fn parse(text: &str) -> Result<ServerUrl> {
        let refuse = |reason: &str| ClientError::InvalidUrl {
            // The text is echoed only when it holds no credentials.
            url: if text.contains('@') {
                "(hidden: it holds credentials)".to_owned()
            } else {
                text.to_owned()
            },
            reason: reason.to_owned(),
        };
        let mut url = url::Url::parse(text.trim())
            .map_err(|e| refuse(&format!("not a URL ({e}); e.g. https://team.example.org")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refuse("only http:// and https:// are supported"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(refuse("names no host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refuse(
                "must not hold a user name or password: log in with the form instead",
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(refuse("must not have a query (?…) or fragment (#…)"));
        }
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(ServerUrl(url))
    }

    /// `path` (relative, e.g. `api/me`) below the base.
    pub(crate) fn join(&self, path: &str) -> url::Url {
        self.0
            .join(path)
            .expect("a relative path of checked segments joins any http(s) base")
    }
}

impl fmt::Display for ServerUrl {
    /// Without the trailing slash of a bare host, as a person types it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str().strip_suffix('/').unwrap_or(self.0.as_str()))
    }
}

impl TryFrom<String> for ServerUrl {
    type Error = ClientError;
    fn try_from(text: String) -> Result<ServerUrl> {
        ServerUrl::parse(&text)
    }
}

impl From<ServerUrl> for String {
    fn from(url: ServerUrl) -> String {
        url.to_string()
    }
}

/// A study id or username as a path segment, by the server's rule (`cases::ids`, which its API's
/// `check_segment` asks too), checked here so nothing malformed is ever sent: `.` and `..` too,
/// which a URL would resolve into another path.
pub fn check_segment(field: &str, value: &str) -> Result<()> {
    match cases::ids::username_problem(value) {
        None => Ok(()),
        Some(problem) => Err(ClientError::Invalid {
            field: field.to_owned(),
            message: problem.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_http_or_https_without_credentials() {
        for (text, display) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("https://team.example.org/", "https://team.example.org"),
            (
                "https://example.org/neurorater",
                "https://example.org/neurorater",
            ),
        ] {
            assert_eq!(ServerUrl::parse(text).unwrap().to_string(), display);
        }
        for (text, reason) in [
            ("ftp://example.org", "only http"),
            ("file:///etc/passwd", "only http"),
            ("https://user:secret@example.org", "user name or password"),
            ("https://user@example.org", "user name or password"),
            ("https://example.org/?token=1", "query"),
            ("example.org", "not a URL"),
            ("", "not a URL"),
        ] {
            let error = ServerUrl::parse(text).unwrap_err().to_string();
            assert!(error.contains(reason), "{text}: {error}");
            assert!(!error.contains("secret"), "{error}");
        }
    }

    #[test]
    fn the_api_joins_below_a_proxied_path() {
        let url = ServerUrl::parse("https://example.org/neurorater").unwrap();
        assert_eq!(
            url.join("api/me").as_str(),
            "https://example.org/neurorater/api/me"
        );
    }

    #[test]
    fn segments_are_the_servers_shape() {
        assert!(check_segment("study", "demo-neuro.v1_@x").is_ok());
        for bad in ["", ".", "..", "a/b", "..%2f", "a b", &"x".repeat(129)] {
            assert!(check_segment("study", bad).is_err(), "{bad:?}");
        }
    }
}
