//! `neurorater login`, `pull`, `team-progress`, `logout` and `calibrate --server` against the
//! real team server (in this process, on a PostgreSQL cluster of the test's own: teamclient's
//! test support), as a study lead at a terminal would use them.

// Shared with teamclient's tests, which use the parts (the relay, psql) this file does not.
#[allow(dead_code)]
#[path = "../../teamclient/tests/support/team.rs"]
mod team;

use serde_json::{json, Value};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use team::{password, post, TeamServer, STUDY};

/// The CLI with its config folder (where sessions are kept) inside the test's folder.
fn neurorater(config: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env("HOME", config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn ok(output: Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The rater saves and submits a complete rating of each of their first `count` items.
async fn rate(base: &str, username: &str, count: usize) {
    let login = post(
        base,
        "/api/login",
        None,
        json!({ "username": username, "password": password(username) }),
    )
    .await;
    let token = login["token"].as_str().unwrap();
    let client = reqwest::Client::new();
    let get = |path: String| {
        let request = client.get(format!("{base}{path}")).bearer_auth(token);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let queue = get(format!("/api/studies/{STUDY}/queue")).await;
    for (index, entry) in queue.as_array().unwrap().iter().take(count).enumerate() {
        let assignment = entry["assignment"].as_i64().unwrap();
        let item = get(format!("/api/studies/{STUDY}/items/{assignment}")).await;
        let rubric = &item["rubric"];
        let dimensions: serde_json::Map<String, Value> = rubric["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["id"].as_str().unwrap().to_owned(), d["max"].clone()))
            .collect();
        let edits = format!("/api/studies/{STUDY}/items/{assignment}/edits");
        let saved = post(
            base,
            &edits,
            Some(token),
            json!({
                "edit_id": format!("cli-{username}-{index}-save"), "base_version": 0,
                "edit": { "kind": "save", "rating": { "scores": {
                    "overall": rubric["overall"]["min"].as_f64().unwrap() + index as f64,
                    "correctness": "correct", "confidence": 3, "comment": "",
                    "seconds_on_task": 20.0, "dimensions": dimensions }, "labels": [] } }
            }),
        )
        .await;
        post(
            base,
            &edits,
            Some(token),
            json!({
                "edit_id": format!("cli-{username}-{index}-submit"),
                "base_version": saved["version"], "edit": { "kind": "submit" }
            }),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_logs_in_pulls_the_ratings_reports_and_logs_out() {
    let work = tempfile::tempdir().unwrap();
    let server = TeamServer::start(work.path()).await;
    server.enrol_rater("rater-a", "Hospital B", 3).await;
    rate(&server.base, "rater-a", 2).await;
    let (config, local) = (work.path().join("config"), work.path().join("local.sqlite"));
    let (config, db) = (config.as_path(), local.to_str().unwrap());
    let base = server.base.as_str();
    let remote = ["--server", base, "--study", STUDY];

    let refused = neurorater(
        config,
        &["login", "--server", base, "--user", "lead"],
        "wrong password\n",
    );
    assert_eq!(refused.status.code(), Some(2));

    let login = ok(neurorater(
        config,
        &["login", "--server", base, "--user", "lead"],
        &format!("{}\n", password("lead")),
    ));
    let session_file = Path::new(login["session_file"].as_str().unwrap());
    let mode = std::fs::metadata(session_file)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the session file is the user's alone");
    let kept = std::fs::read_to_string(session_file).unwrap();
    assert!(
        !kept.contains(&password("lead")),
        "the password is never kept"
    );

    // The lead's database does not know rater-a: the pull adds them, with the clinical role
    // the lead gave them on the server (`enrol_rater` invites a neuroradiologist), so the lead
    // never types a server's raters in again.
    let pulled = ok(neurorater(
        config,
        &[&["pull", "--db", db][..], &remote].concat(),
        "",
    ));
    assert_eq!(
        (pulled["added"].as_u64(), pulled["unchanged"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(pulled["raters_added"], json!(["rater-a"]));
    let role: String = rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT role FROM raters WHERE name = 'rater-a'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(role, "neuroradiologist");
    let again = ok(neurorater(
        config,
        &[&["pull", "--db", db][..], &remote].concat(),
        "",
    ));
    assert_eq!(
        (again["added"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(again["raters_added"], json!([]));

    let report = ok(neurorater(
        config,
        &[
            &["calibrate", "--db", db, "--grader", "demo-grader-v1"][..],
            &remote,
        ]
        .concat(),
        "",
    ));
    assert_eq!(report["summary"]["human_raters"], json!(["rater-a"]));

    let progress = ok(neurorater(
        config,
        &[&["team-progress"][..], &remote].concat(),
        "",
    ));
    assert_eq!(progress["raters"][0]["username"], "rater-a");
    assert_eq!(progress["raters"][0]["submitted"], 2);

    ok_empty(neurorater(config, &["logout", "--server", base], ""));
    assert!(!session_file.exists(), "logout deletes the session file");
    let after = neurorater(config, &[&["team-progress"][..], &remote].concat(), "");
    assert_eq!(after.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&after.stderr).contains("not logged in"));
}

fn ok_empty(output: Output) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_with_no_connection_gets_its_package_from_the_server_and_its_results_go_back() {
    let work = tempfile::tempdir().unwrap();
    let server = TeamServer::start(work.path()).await;
    server.enrol_rater("rater-b", "Hospital C", 3).await;
    let config = work.path().join("config");
    let config = config.as_path();
    let base = server.base.as_str();
    let (package, site_db, results) = (
        work.path().join("rater-b.nrpkg.tar"),
        work.path().join("site.sqlite"),
        work.path().join("rater-b.results.tar"),
    );
    let path = |p: &Path| p.to_str().unwrap().to_owned();
    ok(neurorater(
        config,
        &["login", "--server", base, "--user", "lead"],
        &format!("{}\n", password("lead")),
    ));

    // The lead builds rater-b's package on the server and sends it.
    let exported = ok(neurorater(
        config,
        &[
            "package",
            "export-rater",
            "--server",
            base,
            "--study",
            STUDY,
            "--rater",
            "rater-b",
            "--out",
            &path(&package),
            "--json",
        ],
        "",
    ));
    assert!(exported["bytes"].as_u64().unwrap() > 0);

    // At the site: imported, one item rated and submitted offline, results written.
    ok(neurorater(
        config,
        &[
            "package",
            "import",
            "--db",
            &path(&site_db),
            &path(&package),
            "--json",
        ],
        "",
    ));
    {
        let mut store = cases::store::Store::open(&site_db).unwrap();
        let rater = store
            .raters()
            .unwrap()
            .into_iter()
            .find(|r| r.name == "rater-b")
            .unwrap()
            .id;
        let queue = store.reading_queue(rater, STUDY).unwrap();
        assert_eq!(queue.len(), 3, "the server's three items");
        let item = store.reading_item(rater, queue[0].assignment).unwrap();
        let complete = cases::rating::RatingEdit {
            overall: Some(item.rubric.overall.max),
            not_applicable: Default::default(),
            dimensions: item
                .rubric
                .dimensions
                .iter()
                .map(|d| (d.id.clone(), d.scale.max))
                .collect(),
            correctness: Some(cases::rating::Correctness::Correct),
            confidence: Some(5),
            comment: "read at a site with no connection".into(),
            seconds_on_task: 75.0,
        };
        store
            .save_rating(rater, queue[0].assignment, &complete)
            .unwrap();
        store.submit_rating(rater, queue[0].assignment).unwrap();
    }
    ok(neurorater(
        config,
        &[
            "package",
            "export-results",
            "--db",
            &path(&site_db),
            "--out",
            &path(&results),
            "--json",
        ],
        "",
    ));

    // Back at the lead: uploaded once, stored once; the server's progress shows it.
    let merge = [
        "package",
        "merge",
        "--server",
        base,
        "--study",
        STUDY,
        &path(&results),
        "--json",
    ];
    let first = ok(neurorater(config, &merge, ""));
    assert_eq!(
        (first["applied"].as_u64(), first["unchanged"].as_u64()),
        (Some(1), Some(0)),
        "{first}"
    );
    let again = ok(neurorater(config, &merge, ""));
    assert_eq!(
        (again["applied"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(1)),
        "{again}"
    );
    let progress = ok(neurorater(
        config,
        &["team-progress", "--server", base, "--study", STUDY],
        "",
    ));
    assert_eq!(progress["raters"][0]["username"], "rater-b");
    assert_eq!(progress["raters"][0]["submitted"], 1);
    assert_eq!(progress["raters"][0]["seconds_on_task"], 75.0);
}

/// A GET that must succeed; its JSON.
async fn get(base: &str, path: &str, token: &str) -> Value {
    let response = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "GET {path}");
    response.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_brings_the_servers_curation_into_the_leads_database_for_the_export() {
    const FINAL_DIAGNOSIS: &str = "finalised on the team server";
    let work = tempfile::tempdir().unwrap();
    let server = TeamServer::start(work.path()).await;
    server.enrol_curator("curator", "Hospital A").await;
    let base = server.base.as_str();
    let curator = post(
        base,
        "/api/login",
        None,
        json!({ "username": "curator", "password": password("curator") }),
    )
    .await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let lead = server.lead_token.as_str();

    // The lead saves and submits a version of a case, the curator finalises it.
    let cases = get(base, &format!("/api/studies/{STUDY}/curation"), lead).await;
    let case_id = cases[0]["case_id"].as_str().unwrap().to_owned();
    let history = get(
        base,
        &format!("/api/studies/{STUDY}/cases/{case_id}/curation"),
        lead,
    )
    .await;
    let mut truth = history[0]["truth"].clone();
    truth["diagnosis"] = json!(FINAL_DIAGNOSIS);
    let versions = format!("/api/studies/{STUDY}/cases/{case_id}/curation/versions");
    let saved = post(
        base,
        &versions,
        Some(lead),
        json!({ "edit_id": "cli-save", "branch": "main", "based_on": 1, "truth": truth }),
    )
    .await;
    assert_eq!(saved["version"], 2);
    post(
        base,
        &format!("{versions}/2/submit"),
        Some(lead),
        json!({ "edit_id": "cli-submit" }),
    )
    .await;
    post(
        base,
        &format!("{versions}/2/review"),
        Some(curator.as_str()),
        json!({ "edit_id": "cli-review", "decision": "finalised", "comment": "agreed" }),
    )
    .await;

    let (config, local) = (work.path().join("config"), work.path().join("local.sqlite"));
    let (config, db) = (config.as_path(), local.to_str().unwrap());
    let remote = ["--server", base, "--study", STUDY];
    ok(neurorater(
        config,
        &["login", "--server", base, "--user", "lead"],
        &format!("{}\n", password("lead")),
    ));
    let pulled = ok(neurorater(
        config,
        &[&["pull", "--db", db][..], &remote].concat(),
        "",
    ));
    let curation = &pulled["curation"];
    assert_eq!(curation["versions_added"], 1, "{pulled}");
    assert_eq!(curation["reviews_added"], 2, "{pulled}");
    assert_eq!(curation["curators_added"], json!(["lead", "curator"]));
    assert_eq!(curation["conflicts"], json!([]));
    let again = ok(neurorater(
        config,
        &[&["pull", "--db", db][..], &remote].concat(),
        "",
    ));
    assert_eq!(
        (
            &again["curation"]["versions_added"],
            &again["curation"]["reviews_added"]
        ),
        (&json!(0), &json!(0)),
        "a second pull writes nothing: {again}"
    );

    let out = work.path().join("ground-truth.jsonl");
    ok_empty(neurorater(
        config,
        &[
            "export",
            "--db",
            db,
            "--what",
            "ground-truth",
            "--format",
            "jsonl",
            "--out",
            out.to_str().unwrap(),
        ],
        "",
    ));
    let exported = std::fs::read_to_string(&out).unwrap();
    let line = exported
        .lines()
        .find(|line| line.contains(&format!("\"{case_id}\"")))
        .expect("the case is exported");
    assert!(line.contains(FINAL_DIAGNOSIS), "{line}");
}

/// The code of a `team invite` or `team reset-password` reply.
fn code_of(reply: &Value) -> String {
    reply["code"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_invites_resets_tops_up_and_locks_and_a_rater_sets_their_password_without_curl() {
    let work = tempfile::tempdir().unwrap();
    let server = TeamServer::start(work.path()).await;
    let config = work.path().join("config");
    let config = config.as_path();
    let base = server.base.as_str();
    let remote = ["--server", base, "--study", STUDY];
    ok(neurorater(
        config,
        &["login", "--server", base, "--user", "lead"],
        &format!("{}\n", password("lead")),
    ));
    fn as_lead<'a>(args: &[&'a str], remote: &[&'a str]) -> Vec<&'a str> {
        [args, remote, &["--user", "lead"][..]].concat()
    }

    let wrong_role = neurorater(
        config,
        &as_lead(
            &[
                "team",
                "invite",
                "--username",
                "rater-z",
                "--role",
                "reader",
            ],
            &remote,
        ),
        "",
    );
    assert_eq!(wrong_role.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong_role.stderr).contains("--role"));
    let invitation = ok(neurorater(
        config,
        &as_lead(
            &[
                "team",
                "invite",
                "--username",
                "rater-z",
                "--role",
                "rater",
                "--site",
                "Hospital Z",
                "--clinical-role",
                "neurologist",
            ],
            &remote,
        ),
        "",
    ));
    let first = "rater z's first long password";
    let joined = ok(neurorater(
        config,
        &["team", "accept", "--server", base],
        &format!("{}\n{first}\n", code_of(&invitation)),
    ));
    assert_eq!(joined["study_id"], STUDY);
    assert_eq!(joined["role"], "rater");
    ok(neurorater(
        config,
        &["login", "--server", base, "--user", "rater-z"],
        &format!("{first}\n"),
    ));
    let sessions = ok(neurorater(
        config,
        &["team", "sessions", "--server", base, "--user", "rater-z"],
        "",
    ));
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["current"], true);
    assert!(sessions[0]["client"]
        .as_str()
        .unwrap()
        .starts_with("neurorater/"));
    let own = sessions[0]["id"].as_i64().unwrap().to_string();
    let ending_own = neurorater(
        config,
        &[
            "team", "sessions", "--server", base, "--user", "rater-z", "--end", &own,
        ],
        "",
    );
    assert_eq!(ending_own.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&ending_own.stderr).contains("logout"));

    let second = "rater z's second long password";
    let wrong = neurorater(
        config,
        &["team", "password", "--server", base, "--user", "rater-z"],
        &format!("not my password\n{second}\n"),
    );
    assert_eq!(wrong.status.code(), Some(2));
    ok_empty(neurorater(
        config,
        &["team", "password", "--server", base, "--user", "rater-z"],
        &format!("{first}\n{second}\n"),
    ));
    let old = neurorater(
        config,
        &["login", "--server", base, "--user", "rater-z"],
        &format!("{first}\n"),
    );
    assert_eq!(old.status.code(), Some(2), "the old password is refused");

    let invitations = ok(neurorater(
        config,
        &as_lead(&["team", "invitations"], &remote),
        "",
    ));
    let row = invitations
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["username"] == "rater-z")
        .unwrap();
    assert_eq!(row["state"], "accepted", "{invitations}");
    let reset = ok(neurorater(
        config,
        &as_lead(&["team", "reset-password", "--member", "rater-z"], &remote),
        "",
    ));
    let third = "rater z's third long password";
    ok_empty(neurorater(
        config,
        &["team", "set-password", "--server", base],
        &format!("{}\n{third}\n", code_of(&reset)),
    ));
    ok(neurorater(
        config,
        &["login", "--server", base, "--user", "rater-z"],
        &format!("{third}\n"),
    ));

    let topped = ok(neurorater(
        config,
        &as_lead(
            &["team", "top-up", "--rater", "rater-z", "--per-rater", "2"],
            &remote,
        ),
        "",
    ));
    assert_eq!(topped["raters"][0]["added"], 2, "{topped}");
    ok_empty(neurorater(
        config,
        &as_lead(&["team", "lock", "--member", "rater-z"], &remote),
        "",
    ));
    let progress = ok(neurorater(
        config,
        &[&["team-progress", "--user", "lead"][..], &remote].concat(),
        "",
    ));
    let rater = progress["raters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["username"] == "rater-z")
        .unwrap();
    assert_eq!(
        (rater["assigned"].as_i64(), rater["reveal_locked"].as_bool()),
        (Some(2), Some(true)),
        "{progress}"
    );
    // A revoked invitation admits nobody.
    let late = ok(neurorater(
        config,
        &as_lead(
            &["team", "invite", "--username", "late", "--role", "curator"],
            &remote,
        ),
        "",
    ));
    let invitations = ok(neurorater(
        config,
        &as_lead(&["team", "invitations"], &remote),
        "",
    ));
    let late_id = invitations[0]["id"].as_i64().unwrap().to_string();
    assert_eq!(invitations[0]["username"], "late");
    ok_empty(neurorater(
        config,
        &as_lead(&["team", "revoke", "--invitation", &late_id], &remote),
        "",
    ));
    let refused = neurorater(
        config,
        &["team", "accept", "--server", base],
        &format!("{}\nthe late curator's password\n", code_of(&late)),
    );
    assert_eq!(refused.status.code(), Some(2));
}
