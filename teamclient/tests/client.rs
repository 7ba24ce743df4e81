//! The team client against the real server (in this process) on a real PostgreSQL cluster:
//! login and the session file, the queue and an item, an edit, a resend stored once, a stale
//! edit refused without overwriting, the lead's progress, logout; curation versions saved,
//! submitted and reviewed, a stale save refused naming who moved on; and each failure as the
//! error its caller acts on.

// Each test file uses its part of the shared support.
#[allow(dead_code)]
#[path = "support/team.rs"]
mod team;

use cases::app::permissions::StudyRole;
use cases::app::team::{CurationReview, CurationSave, TeamEdit, TeamRatingState};
use cases::curation::{CuratedTruth, Decision, Source, Status, MAIN_BRANCH};
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
    assert_eq!(me.studies[0].role, StudyRole::Rater);

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curators_save_submit_and_review_versions_once_and_a_stale_save_names_who_moved_on() {
    let work = tempfile::tempdir().unwrap();
    let team = TeamServer::start(work.path()).await;
    team.enrol_curator("curator", "Hospital A").await;
    let server = ServerUrl::parse(&team.base).unwrap();
    let mut lead = TeamClient::new(server.clone()).unwrap();
    lead.login("lead", &password("lead")).await.unwrap();
    let mut curator = TeamClient::new(server).unwrap();
    curator
        .login("curator", &password("curator"))
        .await
        .unwrap();

    // Import copied each case's bundle version as version 1 of main, final.
    let cases = curator.curation_cases(STUDY).await.unwrap();
    assert!(!cases.is_empty());
    let case = cases
        .iter()
        .find(|c| c.current == Some(1))
        .expect("a case with the bundle's ground truth");
    assert_eq!(case.latest_main_status, Some(Status::Final));
    let case_id = case.case_id.as_str();
    let history = curator.curation_history(STUDY, case_id).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].source, Source::Bundle);
    assert!(history[0].imported_final);

    let mut truth = history[0].truth.clone();
    truth.diagnosis = "curated on the server".to_owned();
    let save = |edit_id: &str, based_on: Option<i64>, truth: &CuratedTruth| CurationSave {
        edit_id: edit_id.to_owned(),
        branch: MAIN_BRANCH.to_owned(),
        based_on,
        truth: truth.clone(),
        consensus: false,
    };
    let first = save("lead-save-1", Some(1), &truth);
    let saved = lead.curation_save(STUDY, case_id, &first).await.unwrap();
    assert_eq!(saved.version, 2);
    // A resend is answered as the first and stored once; the same id for other content is not.
    assert_eq!(
        lead.curation_save(STUDY, case_id, &first).await.unwrap(),
        saved
    );
    let mut other = first.clone();
    other.truth.diagnosis = "something else".to_owned();
    let reused = lead.curation_save(STUDY, case_id, &other).await;
    assert!(
        matches!(&reused, Err(ClientError::Conflict { message, .. }) if message.contains("edit id")),
        "{reused:?}"
    );

    // The curator started from version 1 too: refused, naming the lead's version 2.
    let stale = curator
        .curation_save(STUDY, case_id, &save("curator-save-1", Some(1), &truth))
        .await;
    match stale {
        Err(ClientError::Conflict {
            current_version,
            message,
        }) => {
            assert_eq!(current_version, Some(2));
            assert!(message.contains("version 2 was saved by lead"), "{message}");
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(
        curator
            .curation_history(STUDY, case_id)
            .await
            .unwrap()
            .len(),
        2,
        "stored once, nothing from the stale save"
    );

    let submitted = lead
        .curation_submit(STUDY, case_id, 2, "lead-submit-2")
        .await
        .unwrap();
    assert_eq!(submitted.status, Status::InReview);
    let review = |edit_id: &str, decision: Decision, comment: &str| CurationReview {
        edit_id: edit_id.to_owned(),
        decision,
        comment: comment.to_owned(),
    };
    let own = lead
        .curation_review(
            STUDY,
            case_id,
            2,
            &review("lead-review-2", Decision::Finalised, ""),
        )
        .await;
    assert!(
        matches!(&own, Err(ClientError::Refused { code, message, .. })
            if code == "refused" && message.contains("second curator")),
        "{own:?}"
    );
    let final_version = curator
        .curation_review(
            STUDY,
            case_id,
            2,
            &review("curator-review-2", Decision::Finalised, "agreed"),
        )
        .await
        .unwrap();
    assert_eq!(final_version.status, Status::Final);
    assert_eq!(final_version.author.as_deref(), Some("lead"));
    let decisions: Vec<&str> = final_version
        .reviews
        .iter()
        .map(|r| r.decision.as_str())
        .collect();
    assert_eq!(decisions, ["submitted", "finalised"]);
    let summary = curator.curation_cases(STUDY).await.unwrap();
    let now = summary.iter().find(|c| c.case_id == case_id).unwrap();
    assert_eq!((now.current, now.versions), (Some(2), 2));
    let gt = team.psql(&format!(
        "SELECT ground_truth->>'diagnosis' FROM cases WHERE case_id = '{case_id}'"
    ));
    assert_eq!(gt.trim(), "curated on the server");
}
