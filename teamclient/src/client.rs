//! The HTTP calls. Each maps the server's answer onto [`ClientError`] in one place
//! ([`TeamClient::send`]): a network failure or 5xx is "unreachable" (send again later), 401 is
//! "log in again", 409 `conflict` carries the server's current version, anything else the
//! server's own `{code, message}`.

use crate::error::{ClientError, Result};
use crate::token::{Session, Token};
use crate::url::{check_segment, ServerUrl};
use crate::wire::{
    AccountSession, EditAck, EditRequest, ErrorBody, Invitation, InvitationSummary, InviteRequest,
    LoginReply, Me, Membership, Progress, QueueEntry, TopUpReport, TopUpRequest,
};
use cases::app::team::{
    CurationCaseSummary, CurationReview, CurationSave, CurationSubmit, RaterItem, SavedVersion,
    ServerResults, TeamStudyRating,
};
use cases::curation::Version;
use cases::progress::Progress as ProgressSink;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Longer than the server ever takes to answer a JSON call (an edit is one transaction), short
/// enough that a connection that hangs is given up and retried.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A download is as long as the package; only a stall between two reads gives it up.
const DOWNLOAD_STALL: Duration = Duration::from_secs(60);

/// A client of one team server, with or without a session. Cheap to clone (one connection pool).
#[derive(Debug, Clone)]
pub struct TeamClient {
    http: reqwest::Client,
    server: ServerUrl,
    token: Option<Token>,
}

impl TeamClient {
    pub fn new(server: ServerUrl) -> Result<TeamClient> {
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(DOWNLOAD_STALL)
            .user_agent(concat!("neurorater/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ClientError::Unexpected {
                what: "the HTTP client".to_owned(),
                reason: e.to_string(),
            })?;
        Ok(TeamClient {
            http,
            server,
            token: None,
        })
    }

    /// A client acting in a saved session.
    pub fn resume(session: &Session) -> Result<TeamClient> {
        let mut client = TeamClient::new(session.server.clone())?;
        client.token = Some(session.token.clone());
        Ok(client)
    }

    pub fn server(&self) -> &ServerUrl {
        &self.server
    }

    /// Logs in; the client acts in the new session from now on. The password is sent once and
    /// kept nowhere; save the returned session with `SessionFiles::save` to stay logged in.
    pub async fn login(&mut self, username: &str, password: &str) -> Result<Session> {
        check_segment("username", username)?;
        let request = self
            .http
            .post(self.server.join("api/login"))
            .json(&serde_json::json!({ "username": username, "password": password }));
        let reply: LoginReply = match self.json(request, "login").await {
            // Unknown user or wrong password: say which thing to check, not which one was wrong.
            Err(ClientError::Unauthorised) => {
                return Err(ClientError::Refused {
                    status: 401,
                    code: "wrong_credentials".to_owned(),
                    field: None,
                    message: "the username or the password is not right".to_owned(),
                })
            }
            other => other?,
        };
        self.token = Some(reply.token.clone());
        Ok(Session {
            server: self.server.clone(),
            username: username.to_owned(),
            token: reply.token,
            expires_at: reply.expires_at,
        })
    }

    /// Ends the session on the server. An expired session is already ended: no error.
    pub async fn logout(&mut self) -> Result<()> {
        let request = self.authorised(self.http.post(self.server.join("api/logout")))?;
        match self.send(request).await {
            Ok(_) | Err(ClientError::Unauthorised) => {
                self.token = None;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    pub async fn me(&self) -> Result<Me> {
        let request = self.authorised(self.http.get(self.server.join("api/me")))?;
        self.json(request, "/api/me").await
    }

    /// Accepts a lead's invitation: creates the account with `password` (an existing account
    /// gives its current one) and adds the invited role. Needs no session; log in after.
    pub async fn accept_invitation(&self, code: &str, password: &str) -> Result<Membership> {
        let request = self
            .http
            .post(self.server.join("api/invitations/accept"))
            .json(&serde_json::json!({ "code": code, "password": password }));
        self.json(request, "the invitation").await
    }

    /// Sets a new password with the one-time code of a lead's reset. Needs no session; log in
    /// after.
    pub async fn accept_password_reset(&self, code: &str, password: &str) -> Result<()> {
        let request = self
            .http
            .post(self.server.join("api/password-resets/accept"))
            .json(&serde_json::json!({ "code": code, "password": password }));
        self.send(request.timeout(REQUEST_TIMEOUT)).await?;
        Ok(())
    }

    /// Changes the session's own password; every other session of the account ends.
    pub async fn change_password(&self, current: &str, new: &str) -> Result<()> {
        let request = self.authorised(self.http.post(self.server.join("api/password")))?;
        let request =
            request.json(&serde_json::json!({ "current_password": current, "new_password": new }));
        self.send(request.timeout(REQUEST_TIMEOUT)).await?;
        Ok(())
    }

    /// The account's own sessions that have not expired, newest first.
    pub async fn sessions(&self) -> Result<Vec<AccountSession>> {
        let request = self.authorised(self.http.get(self.server.join("api/sessions")))?;
        self.json(request, "the sessions").await
    }

    /// Ends one of the account's own sessions (this one included: log in again after).
    pub async fn end_session(&self, id: i64) -> Result<()> {
        let url = self.server.join(&format!("api/sessions/{id}"));
        let request = self.authorised(self.http.delete(url))?;
        self.send(request.timeout(REQUEST_TIMEOUT)).await?;
        Ok(())
    }

    /// The lead invites someone into the study: the one-time code to pass on.
    pub async fn invite(&self, study: &str, invitation: &InviteRequest) -> Result<Invitation> {
        let url = self.study_url(study, "invitations")?;
        self.json(
            self.authorised(self.http.post(url).json(invitation))?,
            "the invitation",
        )
        .await
    }

    /// The lead's list of the study's invitations, newest first.
    pub async fn invitations(&self, study: &str) -> Result<Vec<InvitationSummary>> {
        let url = self.study_url(study, "invitations")?;
        self.json(self.authorised(self.http.get(url))?, "the invitations")
            .await
    }

    /// The lead revokes an open invitation: its code no longer works.
    pub async fn revoke_invitation(&self, study: &str, id: i64) -> Result<()> {
        let url = self.study_url(study, &format!("invitations/{id}"))?;
        let request = self.authorised(self.http.delete(url))?;
        self.send(request.timeout(REQUEST_TIMEOUT)).await?;
        Ok(())
    }

    /// The lead resets a member's password: their sessions end, and the returned one-time code
    /// lets them set a new one.
    pub async fn reset_password(&self, study: &str, username: &str) -> Result<Invitation> {
        check_segment("username", username)?;
        let url = self.study_url(study, &format!("members/{username}/password-reset"))?;
        self.json(self.authorised(self.http.post(url))?, "the password reset")
            .await
    }

    /// The lead gives raters more work: responses they do not have yet, after their queue.
    pub async fn top_up(&self, study: &str, request: &TopUpRequest) -> Result<TopUpReport> {
        let url = self.study_url(study, "top-up")?;
        self.json(
            self.authorised(self.http.post(url).json(request))?,
            "the top-up",
        )
        .await
    }

    /// The lead locks a rater out of the ground truth and of reopening, or lets them back.
    pub async fn set_reveal_lock(&self, study: &str, username: &str, locked: bool) -> Result<()> {
        check_segment("username", username)?;
        let url = self.study_url(study, &format!("raters/{username}/reveal-lock"))?;
        let request = self.authorised(
            self.http
                .put(url)
                .json(&serde_json::json!({ "locked": locked })),
        )?;
        self.send(request.timeout(REQUEST_TIMEOUT)).await?;
        Ok(())
    }

    /// The rater's own queue.
    pub async fn queue(&self, study: &str) -> Result<Vec<QueueEntry>> {
        let request = self.authorised(self.http.get(self.study_url(study, "queue")?))?;
        self.json(request, "the queue").await
    }

    /// One item of the rater's queue, blinded by the server (`cases::app::team::rater_item`).
    pub async fn item(&self, study: &str, assignment: i64) -> Result<RaterItem> {
        let url = self.study_url(study, &format!("items/{assignment}"))?;
        self.json(self.authorised(self.http.get(url))?, "an item")
            .await
    }

    /// Sends one edit of the rater's own rating. A resend of the same `edit_id` is answered with
    /// the first acknowledgement; a stale `base_version` is [`ClientError::Conflict`].
    pub async fn edit(
        &self,
        study: &str,
        assignment: i64,
        request: &EditRequest,
    ) -> Result<EditAck> {
        let url = self.study_url(study, &format!("items/{assignment}/edits"))?;
        self.json(
            self.authorised(self.http.post(url).json(request))?,
            "an edit",
        )
        .await
    }

    /// The lead's view of the study's progress, per rater and per site.
    pub async fn progress(&self, study: &str) -> Result<Progress> {
        let url = self.study_url(study, "progress")?;
        self.json(self.authorised(self.http.get(url))?, "the progress")
            .await
    }

    /// Every rating of the study, whole (the lead's): what `cases::app::team::pull_ratings`
    /// writes into the lead's own database.
    pub async fn study_ratings(&self, study: &str) -> Result<Vec<TeamStudyRating>> {
        let url = self.study_url(study, "ratings")?;
        self.json(self.authorised(self.http.get(url))?, "the study's ratings")
            .await
    }

    /// Everything of the study its lead's own database takes in (`cases::app::team::pull`):
    /// every rating, and every case's curation versions with their reviews.
    pub async fn study_results(&self, study: &str) -> Result<ServerResults> {
        let ratings = self.study_ratings(study).await?;
        let mut curation = BTreeMap::new();
        for case in self.curation_cases(study).await? {
            let versions = self.curation_history(study, &case.case_id).await?;
            curation.insert(case.case_id, versions);
        }
        Ok(ServerResults { ratings, curation })
    }

    /// Per case of the study: its versions, the latest of main and its status, the current final
    /// version (a lead's or curator's).
    pub async fn curation_cases(&self, study: &str) -> Result<Vec<CurationCaseSummary>> {
        let url = self.study_url(study, "curation")?;
        self.json(self.authorised(self.http.get(url))?, "the curation list")
            .await
    }

    /// Every version of a case's ground truth, oldest first.
    pub async fn curation_history(&self, study: &str, case_id: &str) -> Result<Vec<Version>> {
        let url = self.case_url(study, case_id, "curation")?;
        self.json(self.authorised(self.http.get(url))?, "the curation history")
            .await
    }

    /// Saves a new draft of a case's ground truth. A resend of the same `edit_id` is stored once;
    /// a branch that moved on since `based_on` is [`ClientError::Conflict`] naming who saved which
    /// version when (`current_version` is that version); a version contradicting the case is
    /// `Refused` with code `invalid`, the message naming each field.
    pub async fn curation_save(
        &self,
        study: &str,
        case_id: &str,
        save: &CurationSave,
    ) -> Result<SavedVersion> {
        let url = self.case_url(study, case_id, "curation/versions")?;
        self.json(
            self.authorised(self.http.post(url).json(save))?,
            "a curation save",
        )
        .await
    }

    /// Hands the latest draft of main to review.
    pub async fn curation_submit(
        &self,
        study: &str,
        case_id: &str,
        version: i64,
        edit_id: &str,
    ) -> Result<Version> {
        let url = self.case_url(
            study,
            case_id,
            &format!("curation/versions/{version}/submit"),
        )?;
        let body = CurationSubmit {
            edit_id: edit_id.to_owned(),
        };
        self.json(
            self.authorised(self.http.post(url).json(&body))?,
            "a curation submit",
        )
        .await
    }

    /// Reviews a version in review (a curator other than its author); finalising a version of
    /// main makes it the case's ground truth.
    pub async fn curation_review(
        &self,
        study: &str,
        case_id: &str,
        version: i64,
        review: &CurationReview,
    ) -> Result<Version> {
        let url = self.case_url(
            study,
            case_id,
            &format!("curation/versions/{version}/review"),
        )?;
        self.json(
            self.authorised(self.http.post(url).json(review))?,
            "a curation review",
        )
        .await
    }

    /// Downloads the rater package the server builds (the rater's own queue; the lead names a
    /// rater for a site with no connection) to `destination`, written whole or not at all: the
    /// bytes go to a `.partial` file renamed into place once complete. `progress` hears the bytes
    /// received; its `cancelled()` stops the download between two reads. Returns the size.
    pub async fn download_package(
        &self,
        study: &str,
        rater: Option<&str>,
        destination: &Path,
        progress: &dyn ProgressSink,
    ) -> Result<u64> {
        let mut url = self.study_url(study, "package")?;
        if let Some(rater) = rater {
            check_segment("rater", rater)?;
            url.query_pairs_mut().append_pair("rater", rater);
        }
        self.download(url, destination, progress).await
    }

    /// Downloads the curator's copy of the study the server builds (its cases, images and
    /// current ground truth; docs/team-server.md "A curator") to `destination`, written whole or
    /// not at all, as [`TeamClient::download_package`] does. Returns the size.
    pub async fn download_curation_package(
        &self,
        study: &str,
        destination: &Path,
        progress: &dyn ProgressSink,
    ) -> Result<u64> {
        let url = self.study_url(study, "curation-package")?;
        self.download(url, destination, progress).await
    }

    /// The body of a GET of `url` to `destination`: to a `.partial` file renamed into place once
    /// complete, removed otherwise.
    async fn download(
        &self,
        url: url::Url,
        destination: &Path,
        progress: &dyn ProgressSink,
    ) -> Result<u64> {
        let response = self.send(self.authorised(self.http.get(url))?).await?;
        let partial = destination.with_extension("partial");
        let written = self
            .write_body(response, &partial, progress)
            .await
            .and_then(|size| {
                std::fs::rename(&partial, destination).map_err(|source| ClientError::Download {
                    path: destination.to_owned(),
                    source,
                })?;
                Ok(size)
            });
        if written.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        written
    }

    async fn write_body(
        &self,
        mut response: reqwest::Response,
        path: &Path,
        progress: &dyn ProgressSink,
    ) -> Result<u64> {
        let failed = |source| ClientError::Download {
            path: path.to_owned(),
            source,
        };
        // Plain writes of one chunk each (a few KiB): not worth a blocking-pool hop apiece.
        let mut file = std::fs::File::create(path).map_err(failed)?;
        progress.phase("downloading", response.content_length().unwrap_or(0));
        let mut size = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| self.unreachable(&e))? {
            if progress.cancelled() {
                return Err(ClientError::Cancelled);
            }
            file.write_all(&chunk).map_err(failed)?;
            size += chunk.len() as u64;
            progress.advance(size);
        }
        file.sync_all().map_err(failed)?;
        Ok(size)
    }

    /// Uploads a results package (docs/multisite.md) made from a server-built rater package; the
    /// server answers with what it did per item (its JSON as it is).
    pub async fn upload_results(&self, study: &str, package: &Path) -> Result<serde_json::Value> {
        let bytes = std::fs::read(package).map_err(|source| ClientError::Download {
            path: package.to_owned(),
            source,
        })?;
        let url = self.study_url(study, "results")?;
        let request = self
            .http
            .post(url)
            .body(bytes)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream");
        self.json(self.authorised(request)?, "the results upload")
            .await
    }

    fn study_url(&self, study: &str, rest: &str) -> Result<url::Url> {
        check_segment("study", study)?;
        Ok(self.server.join(&format!("api/studies/{study}/{rest}")))
    }

    fn case_url(&self, study: &str, case_id: &str, rest: &str) -> Result<url::Url> {
        check_segment("case_id", case_id)?;
        self.study_url(study, &format!("cases/{case_id}/{rest}"))
    }

    fn authorised(&self, request: reqwest::RequestBuilder) -> Result<reqwest::RequestBuilder> {
        let token = self.token.as_ref().ok_or(ClientError::Unauthorised)?;
        Ok(request.bearer_auth(token.secret()))
    }

    async fn json<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
    ) -> Result<T> {
        let response = self.send(request.timeout(REQUEST_TIMEOUT)).await?;
        let bytes = response.bytes().await.map_err(|e| self.unreachable(&e))?;
        serde_json::from_slice(&bytes).map_err(|e| ClientError::Unexpected {
            what: what.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Sends `request`; a success status is returned, everything else is a [`ClientError`].
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let response = request.send().await.map_err(|e| self.unreachable(&e))?;
        let status = response.status();
        let path = response.url().path().to_owned();
        if status.is_success() {
            return Ok(response);
        }
        // A reverse proxy's 502/504 page is not JSON: the status alone decides then.
        let body: Option<ErrorBody> = response
            .bytes()
            .await
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let (code, message, field, current_version) = match body {
            Some(b) => (b.code, b.message, b.field, b.current_version),
            // A proxy's page, or a server too old for this request: the status says enough.
            None => (
                String::new(),
                format!(
                    "the team server answered {status} to {path}; is it this version of NeuroRater?"
                ),
                None,
                None,
            ),
        };
        Err(match status.as_u16() {
            401 => ClientError::Unauthorised,
            409 if code == "conflict" => ClientError::Conflict {
                current_version,
                message,
            },
            s if status.is_server_error() => ClientError::Unreachable {
                server: self.server.to_string(),
                reason: format!("the server failed ({s}): {message}"),
            },
            s => ClientError::Refused {
                status: s,
                code: if code.is_empty() {
                    "refused".to_owned()
                } else {
                    code
                },
                field,
                message,
            },
        })
    }

    fn unreachable(&self, error: &reqwest::Error) -> ClientError {
        // In plain words first, the operating system's own last (for the IT person); reqwest's
        // chain in between names its internals. No part holds a secret: tokens travel in a header.
        let mut innermost = None;
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            innermost = Some(cause.to_string());
            source = cause.source();
        }
        let what = if error.is_timeout() {
            "no answer in time"
        } else if error.is_body() || error.is_decode() {
            "the answer was cut off"
        } else {
            "the connection failed or was cut"
        };
        ClientError::Unreachable {
            server: self.server.to_string(),
            reason: match innermost {
                Some(cause) => format!("{what} ({cause})"),
                None => what.to_owned(),
            },
        }
    }
}
