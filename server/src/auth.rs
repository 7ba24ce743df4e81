//! Accounts, passwords, sessions and invitation codes.
//!
//! Passwords are stored as argon2id hashes (the `argon2` crate's defaults, OWASP's minimum);
//! session tokens and invitation codes are 256 random bits handed to the client once and stored
//! only as their SHA-256, so a copy of the database logs nobody in. None of them is ever logged:
//! the request log holds method, path and status only, and paths carry no secret.

use crate::error::{invalid, ServerError};
use crate::AppState;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use base64::Engine;
use sha2::{Digest, Sha256};

/// How long a login lasts: a working day with margin; a client logs in again after.
pub const SESSION_HOURS: i32 = 12;
/// How long an invitation code stays valid.
pub const INVITATION_DAYS: i32 = 14;
/// Shorter is guessable; NIST SP 800-63B asks for at least 8, we ask for more.
const MIN_PASSWORD_CHARS: usize = 12;
/// argon2 hashes any length, but a megabyte password is an attack on the CPU.
const MAX_PASSWORD_CHARS: usize = 1024;

/// The logged-in account of a request, from its `Authorization: Bearer` token.
#[derive(Debug, Clone)]
pub struct Caller {
    pub account: i64,
    pub username: String,
    pub token_sha256: String,
}

/// Where a request came from: the address the throttle counts by and a session records, and the
/// client's `User-Agent` (at most 200 characters, control characters dropped), for the list a
/// person sees of their own sessions.
#[derive(Debug, Clone)]
pub struct Peer {
    pub address: String,
    pub client: String,
}

/// The longest `User-Agent` kept: enough to tell the app, the CLI and a browser apart.
const MAX_CLIENT_CHARS: usize = 200;

impl FromRequestParts<AppState> for Peer {
    type Rejection = ServerError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let connected = parts
            .extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|info| info.0.ip());
        // Behind the site's reverse proxy every connection comes from the proxy: only when it is
        // the one named by `--trusted-proxy` does its `X-Forwarded-For` (last hop) name the
        // client; anyone else could write that header.
        let forwarded = || {
            parts
                .headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|value| value.to_str().ok())
                .flat_map(|value| value.split(','))
                .filter_map(|hop| hop.trim().parse::<std::net::IpAddr>().ok())
                .next_back()
        };
        let address = match connected {
            Some(ip) if state.trusted_proxy == Some(ip) => forwarded().unwrap_or(ip),
            Some(ip) => ip,
            None => std::net::Ipv4Addr::UNSPECIFIED.into(),
        };
        let client = parts
            .headers
            .get(axum::http::header::USER_AGENT)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_CLIENT_CHARS)
            .collect();
        Ok(Peer {
            address: address.to_string(),
            client,
        })
    }
}

/// 256 random bits, URL-safe base64: a session token or an invitation code.
pub(crate) fn new_secret() -> Result<String, ServerError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| ServerError::Config(format!("the system's random source failed: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

pub(crate) fn secret_sha256(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn check_password_shape(password: &str) -> Result<(), ServerError> {
    let chars = password.chars().count();
    if !(MIN_PASSWORD_CHARS..=MAX_PASSWORD_CHARS).contains(&chars) {
        return Err(invalid(
            "password",
            format!("{MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} characters, got {chars}"),
        ));
    }
    Ok(())
}

/// Runs argon2 on a blocking thread, one per core at a time. Each hash takes 19 MiB and tens of
/// milliseconds of CPU on purpose: a burst of logins or accepted invitations would otherwise
/// take 19 MiB each at once, and gain nothing, as the cores are busy anyway.
async fn password_work<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ServerError> {
    static AT_ONCE: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    let at_once = AT_ONCE.get_or_init(|| {
        tokio::sync::Semaphore::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    });
    let _turn = at_once
        .acquire()
        .await
        .map_err(|e| ServerError::Config(format!("password work stopped: {e}")))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServerError::Config(format!("password work stopped: {e}")))
}

pub(crate) async fn hash_password(password: String) -> Result<String, ServerError> {
    password_work(move || hash_blocking(&password)).await?
}

fn hash_blocking(password: &str) -> Result<String, ServerError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt)
        .map_err(|e| ServerError::Config(format!("the system's random source failed: {e}")))?;
    let salt = SaltString::encode_b64(&salt)
        .map_err(|e| ServerError::Config(format!("password salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| ServerError::Config(format!("password hashing failed: {e}")))
}

/// The hash of a random secret, verified when the username is unknown so that a wrong username
/// takes as long as a wrong password.
fn decoy_hash() -> Result<&'static str, ServerError> {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(hash) = DECOY.get() {
        return Ok(hash);
    }
    let hash = hash_blocking(&new_secret()?)?;
    Ok(DECOY.get_or_init(|| hash))
}

pub(crate) async fn verify_password(
    password: String,
    stored: Option<String>,
) -> Result<bool, ServerError> {
    password_work(move || {
        let known = stored.is_some();
        let stored = match stored {
            Some(stored) => stored,
            None => decoy_hash()?.to_owned(),
        };
        let hash = PasswordHash::new(&stored)
            .map_err(|e| ServerError::Config(format!("a stored password hash is damaged: {e}")))?;
        let matches = Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok();
        Ok(known && matches)
    })
    .await?
}

/// Usernames are what people type to log in and what audit entries name: short, printable.
/// `field` is where the request carried it (`username`, `raters[2]`).
pub(crate) fn check_username(field: &str, username: &str) -> Result<(), ServerError> {
    match cases::ids::username_problem(username) {
        None => Ok(()),
        Some(problem) => Err(invalid(field, problem)),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ServerError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or(ServerError::Unauthenticated("no Authorization header"))?;
        let token = header
            .to_str()
            .ok()
            .and_then(|h| h.strip_prefix("Bearer "))
            .filter(|t| !t.is_empty() && t.len() <= 128)
            .ok_or(ServerError::Unauthenticated(
                "the Authorization header is not `Bearer TOKEN`",
            ))?;
        let token_sha256 = secret_sha256(token);
        let client = state.pool.get().await?;
        let row = client
            .query_opt(
                "SELECT a.id, a.username FROM sessions s JOIN accounts a ON a.id = s.account
                 WHERE s.token_sha256 = $1 AND s.expires_at > now()",
                &[&token_sha256],
            )
            .await?
            .ok_or(ServerError::Unauthenticated(
                "the session expired or was logged out",
            ))?;
        Ok(Caller {
            account: row.get(0),
            username: row.get(1),
            token_sha256,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_password_verifies_against_its_hash_only() {
        let hash = hash_password("correct horse battery".into()).await.unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(!hash.contains("correct horse"));
        assert!(
            verify_password("correct horse battery".into(), Some(hash.clone()))
                .await
                .unwrap()
        );
        assert!(
            !verify_password("correct horse battery!".into(), Some(hash))
                .await
                .unwrap()
        );
        assert!(!verify_password("anything at all".into(), None)
            .await
            .unwrap());
    }

    #[test]
    fn secrets_are_random_and_stored_as_their_digest() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert_eq!(secret_sha256(&a).len(), 64);
        assert_ne!(secret_sha256(&a), secret_sha256(&b));
    }
}
