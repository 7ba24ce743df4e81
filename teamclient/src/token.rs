//! The session token and the file that keeps it between runs.
//!
//! One file per server URL and user in the user's config folder (`team-sessions/` under
//! `~/.config/neurorater/` on Linux), mode 0600 in a folder of mode 0700, written whole and
//! renamed into place; deleted at logout. The password is never stored; the token is never
//! printed (its `Debug` is redacted) and never logged.

use crate::error::{ClientError, Result};
use crate::url::ServerUrl;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};

/// A session token: sent as `Authorization: Bearer`, never shown.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Token(String);

impl Token {
    pub(crate) fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(redacted)")
    }
}

/// A logged-in session on one server: what the session file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub server: ServerUrl,
    pub username: String,
    pub token: Token,
    /// When the server ends the session (it is valid 12 hours).
    pub expires_at: String,
}

/// The folder of session files.
#[derive(Debug, Clone)]
pub struct SessionFiles {
    dir: PathBuf,
}

impl SessionFiles {
    /// `team-sessions/` in the platform's config folder.
    pub fn in_config_dir() -> Result<SessionFiles> {
        let dirs =
            directories::ProjectDirs::from("org", "NeuroRater", "neurorater").ok_or_else(|| {
                ClientError::SessionFile {
                    path: PathBuf::from("~"),
                    source: std::io::Error::other("no home folder to keep the session in"),
                }
            })?;
        Ok(SessionFiles::at(dirs.config_dir().join("team-sessions")))
    }

    pub fn at(dir: impl Into<PathBuf>) -> SessionFiles {
        SessionFiles { dir: dir.into() }
    }

    /// The file of `username` on `server`: named by a digest of both, so neither a URL nor a
    /// name becomes a path.
    pub fn path(&self, server: &ServerUrl, username: &str) -> PathBuf {
        let digest = Sha256::digest(format!("{server}\n{username}").as_bytes());
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    pub fn save(&self, session: &Session) -> Result<PathBuf> {
        let path = self.path(&session.server, &session.username);
        let failed = |source| ClientError::SessionFile {
            path: path.clone(),
            source,
        };
        create_private_dir(&self.dir).map_err(failed)?;
        let text = serde_json::to_vec(session).expect("a session serialises");
        let partial = path.with_extension("json.partial");
        write_private(&partial, &text).map_err(failed)?;
        std::fs::rename(&partial, &path).map_err(failed)?;
        Ok(path)
    }

    pub fn load(&self, server: &ServerUrl, username: &str) -> Result<Option<Session>> {
        read_session(&self.path(server, username))
    }

    /// Every saved session on `server` (a person may have logged in under several names).
    pub fn for_server(&self, server: &ServerUrl) -> Result<Vec<Session>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(ClientError::SessionFile {
                    path: self.dir.clone(),
                    source,
                })
            }
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                if let Some(session) = read_session(&path)? {
                    if &session.server == server {
                        found.push(session);
                    }
                }
            }
        }
        found.sort_by(|a, b| a.username.cmp(&b.username));
        Ok(found)
    }

    /// Deletes the file; a file already gone is no error.
    pub fn delete(&self, server: &ServerUrl, username: &str) -> Result<()> {
        let path = self.path(server, username);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(ClientError::SessionFile { path, source }),
        }
    }
}

fn read_session(path: &Path) -> Result<Option<Session>> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ClientError::SessionFile {
                path: path.to_owned(),
                source,
            })
        }
    };
    // A file this build cannot read is a session to log in again for, not an error to stop on.
    Ok(serde_json::from_slice(&text).ok())
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Created with mode 0600 from the first byte (never written wider and narrowed after).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    #[cfg(unix)]
    {
        // A leftover partial file of another mode keeps its mode on open: set it.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(server: &str, username: &str) -> Session {
        Session {
            server: ServerUrl::parse(server).unwrap(),
            username: username.to_owned(),
            token: Token("tok-secret-123".to_owned()),
            expires_at: "2026-11-28T00:00:00Z".to_owned(),
        }
    }

    #[test]
    fn a_token_never_shows_in_debug() {
        let session = session("http://127.0.0.1:1", "rater");
        let shown = format!("{session:?} {:?}", session.token);
        assert!(!shown.contains("tok-secret-123"), "{shown}");
        assert!(shown.contains("redacted"), "{shown}");
    }

    #[test]
    fn one_file_per_server_and_user_mode_0600_deleted_at_logout() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::at(dir.path().join("team-sessions"));
        let a = session("http://127.0.0.1:1", "rater-a");
        let b = session("http://127.0.0.1:1", "rater-b");
        let elsewhere = session("https://other.example.org", "rater-a");
        let path = files.save(&a).unwrap();
        files.save(&b).unwrap();
        files.save(&elsewhere).unwrap();
        assert_eq!(files.load(&a.server, "rater-a").unwrap(), Some(a.clone()));
        assert_eq!(
            files.for_server(&a.server).unwrap(),
            vec![a.clone(), b.clone()]
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let dir_mode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dir_mode, 0o700);
        }
        files.delete(&a.server, "rater-a").unwrap();
        assert!(!path.exists());
        assert_eq!(files.load(&a.server, "rater-a").unwrap(), None);
        files.delete(&a.server, "rater-a").unwrap();
        assert_eq!(files.for_server(&a.server).unwrap(), vec![b]);
    }
}
