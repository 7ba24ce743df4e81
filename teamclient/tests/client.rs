//! The team client against the real server (in this process) on a real PostgreSQL cluster:
//! login and the session file, the queue and an item, an edit, a resend stored once, a stale
//! edit refused without overwriting, the lead's progress, logout; and each failure as the error
//! its caller acts on.

// Each test file uses its part of the shared support.
#[allow(dead_code)]
#[path = "support/team.rs"]
mod team;

use cases::app::team::{TeamEdit, TeamRatingState, TeamRole};
use cases::rating::RatingEdit;
use team::{password, TeamServer, STUDY};
use teamclient::{ClientError, EditRequest, ServerUrl, SessionFiles, TeamClient};

fn save(comment: &str, seconds: f64) -> TeamEdit {
    TeamEdit::Save {
        rating: TeamRatingState {
            scores: RatingEdit {
                comment: comment.to_owned(),
                seconds_on_task: seconds,
                ..serde_json::from_str("{}").unwrap()
            },
            labels: Vec::new(),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rater_logs_in_reads_edits_once_and_logs_out() {
    let work = tempfile::tempdir().unwrap();
    let team = TeamServer::start(work.path()).await;
    team.enrol_rater("rater-a", "Hospital B", 3).await;
    let server = ServerUrl::parse(&team.base).unwrap();
    let files = SessionFiles::at(work.path().join("config/team-sessions"));

    // A wrong password says so, and keeps nothing.
    let mut client = TeamClient::new(server.clone()).unwrap();
    let wrong = client.login("rater-a", "not the password at all").await;
    assert!(
        matches!(&wrong, Err(ClientError::Refused { code, .. }) if code == "wrong_credentials"),
        "{wrong:?}"
    );
    assert!(matches!(client.me().await, Err(ClientError::Unauthorised)));

    let session = client.login("rater-a", &password("rater-a")).await.unwrap();
    let token = serde_json::to_value(&session.token).unwrap();
    let token = token.as_str().unwrap();
    assert!(token.len() >= 32, "a real token came back");
    for shown in [format!("{session:?}"), format!("{client:?}")] {
        assert!(!shown.contains(token), "the token is shown: {shown}");
    }
    let file = files.save(&session).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains(&password("rater-a")),
        "the password is never stored"
    );

    // A client resumed from the file acts in the same session.
    let saved = files.load(&server, "rater-a").unwrap().expect("saved");
    let client = TeamClient::resume(&saved).unwrap();
    let me = client.me().await.unwrap();
    assert_eq!(me.username, "rater-a");
    assert_eq!(me.site, "Hospital B");
    assert_eq!(me.studies.len(), 1);
    assert_eq!(me.studies[0].study_id, STUDY);
    assert_eq!(me.studies[0].role, TeamRole::Rater);

    let queue = client.queue(STUDY).await.unwrap();
    assert_eq!(queue.len(), 3);
    assert!(queue
        .iter()
        .all(|e| e.version == 0 && e.status == "not_started"));
    let first = queue[0].assignment;
    let item = client.item(STUDY, first).await.unwrap();
    assert_eq!(item.assignment, first);
    assert_eq!(item.position, 1);
    assert!(item.rating.is_none());
    assert!(item.ground_truth.is_none());

    // An edit, then the same edit resent (a retry after a lost answer): one row, one audit
    // entry, the first acknowledgement.
    let request = EditRequest {
        edit_id: "3f9c7c4e-0d1e-4f7a-9a59-2b1f0e6c8d11".to_owned(),
        base_version: 0,
        edit: save("first save", 12.0),
    };
    let ack = client.edit(STUDY, first, &request).await.unwrap();
    assert_eq!((ack.assignment, ack.version), (first, 1));
    assert_eq!(ack.status, "draft");
    let again = client.edit(STUDY, first, &request).await.unwrap();
    assert_eq!(
        again, ack,
        "a resend is answered with the first acknowledgement"
    );
    assert_eq!(
        team.psql(&format!(
            "SELECT count(*) FROM applied_edits WHERE edit_id = '{}'",
            request.edit_id
        )),
        "1"
    );
    assert_eq!(
        team.psql(&format!(
            "SELECT count(*) FROM audit_log WHERE after->>'edit_id' = '{}'",
            request.edit_id
        )),
        "1"
    );

    // Someone else's newer version: a stale edit is a conflict naming the current version, and
    // nothing is overwritten.
    let stale = EditRequest {
        edit_id: "stale-1".to_owned(),
        base_version: 0,
        edit: save("from another machine", 3.0),
    };
    match client.edit(STUDY, first, &stale).await {
        Err(ClientError::Conflict {
            current_version, ..
        }) => assert_eq!(current_version, Some(1)),
        other => panic!("expected a conflict: {other:?}"),
    }
    assert_eq!(
        team.psql(&format!(
            "SELECT version, state->'scores'->>'comment' FROM ratings WHERE assignment = {first}"
        )),
        "1|first save"
    );

    // A rule broken: the server's field, refused.
    let invalid = EditRequest {
        edit_id: "invalid-1".to_owned(),
        base_version: 1,
        edit: save("negative time", -5.0),
    };
    match client.edit(STUDY, first, &invalid).await {
        Err(ClientError::Refused { code, field, .. }) => {
            assert_eq!(code, "invalid");
            assert!(field.is_some_and(|f| f.contains("seconds_on_task")));
        }
        other => panic!("expected invalid: {other:?}"),
    }

    // Progress is the lead's: the rater is refused, the lead sees the draft.
    match client.progress(STUDY).await {
        Err(ClientError::Refused { status: 403, .. }) => {}
        other => panic!("a rater must not see progress: {other:?}"),
    }
    let mut lead = TeamClient::new(server.clone()).unwrap();
    lead.login("lead", &password("lead")).await.unwrap();
    let progress = lead.progress(STUDY).await.unwrap();
    let rater = progress
        .raters
        .iter()
        .find(|r| r.username == "rater-a")
        .expect("rater-a in the progress");
    assert_eq!((rater.assigned, rater.drafts, rater.submitted), (3, 1, 0));
    assert_eq!(rater.seconds_on_task, 12.0);
    assert!(progress.sites.iter().any(|s| s.site == "Hospital B"));

    // Logout ends the session on the server; the file is deleted.
    let mut client = client;
    client.logout().await.unwrap();
    files.delete(&server, "rater-a").unwrap();
    assert!(!file.exists());
    let ended = TeamClient::resume(&saved).unwrap();
    assert!(matches!(ended.me().await, Err(ClientError::Unauthorised)));
    assert!(matches!(
        ended.queue("../etc").await,
        Err(ClientError::Invalid { .. })
    ));
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_is_worth_retrying() {
    // A port nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = ServerUrl::parse(&format!("http://127.0.0.1:{port}")).unwrap();
    let mut client = TeamClient::new(server).unwrap();
    let error = client
        .login("rater-a", "whatever password")
        .await
        .unwrap_err();
    assert!(error.is_retryable(), "{error:?}");
    assert_eq!(error.code(), "unreachable");
    assert!(!error.to_string().contains("whatever password"));
}
