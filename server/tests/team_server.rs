//! The team server as it runs: a PostgreSQL cluster started here, the demo study copied onto it
//! with `neurorater-server import`, `neurorater-server serve` as child processes, and HTTP from
//! outside.
//! Every endpoint of `/openapi.json` is probed with every role and with none; a resent edit is
//! stored once, a stale one refused with 409; two processes on one database act as one; a server
//! killed with SIGKILL under load loses no acknowledged edit; no log holds a secret.

#[path = "../../cases/tests/support/demo_study.rs"]
mod demo_study;
#[path = "support/postgres.rs"]
mod postgres;

use cases::progress::NoProgress;
use cases::rating::DEMO_STUDY_ID;
use cases::store::Store;
use postgres::{path_str, Cluster, Http, Server};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// Planted in every case's ground truth on the server: found in the lead's view, never in a
/// rater's before their reveal.
const GROUND_TRUTH_MARKER: &str = "GT-MARKER-5c1e9a";

/// A person on the server: their password and current token.
struct Person {
    username: String,
    password: String,
    token: String,
}

/// The demo study on a fresh cluster and server: a lead, a curator and two raters at two sites,
/// six assignments each.
struct Team {
    cluster: Cluster,
    database: String,
    server: Server,
    http: Http,
    lead: Person,
    curator: Person,
    rater_a: Person,
    rater_b: Person,
    /// Every one-time code handed out, for the log check.
    codes: Vec<String>,
    models: Vec<String>,
    graders: Vec<String>,
    disease_groups: Vec<String>,
    /// The study's case ids, which may name the diagnosis (`ms-01`): never sent to a rater.
    case_ids: Vec<String>,
}

fn ok_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_neurorater-server"))
        .args(args)
        .output()
        .expect("run neurorater-server");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn distinct(db: &Path, sql: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

fn accept_and_login(http: &Http, username: &str, code: &str) -> Person {
    let password = format!("{username} long password 42");
    http.expect(
        200,
        "post",
        "/api/invitations/accept",
        None,
        Some(json!({ "code": code, "password": password })),
    );
    let login = http.expect(
        200,
        "post",
        "/api/login",
        None,
        Some(json!({ "username": username, "password": password })),
    );
    Person {
        username: username.to_owned(),
        token: login["token"].as_str().unwrap().to_owned(),
        password,
    }
}

fn study_path(rest: &str) -> String {
    format!("/api/studies/{DEMO_STUDY_ID}{rest}")
}

fn team(work: &Path) -> Team {
    let local = work.join("local.sqlite");
    demo_study::demo_database_at(&local);
    let models = distinct(&local, "SELECT DISTINCT model FROM responses");
    let graders = distinct(&local, "SELECT DISTINCT grader FROM grader_scores");
    let disease_groups = distinct(&local, "SELECT DISTINCT disease_group FROM cases");
    let case_ids = distinct(&local, "SELECT case_id FROM cases ORDER BY case_id");
    assert!(
        !models.is_empty() && !graders.is_empty(),
        "the demo has models and a grader"
    );

    let cluster = Cluster::start();
    let database = cluster.database("team");
    let imported = ok_json(&[
        "import",
        "--database",
        &database,
        "--db",
        path_str(&local),
        "--study",
        DEMO_STUDY_ID,
        "--lead",
        "lead",
        "--lead-site",
        "Hospital A",
    ]);
    assert!(
        imported["responses_added"].as_u64().unwrap() > 0,
        "{imported}"
    );
    let lead_code = imported["lead_invitation"]["code"]
        .as_str()
        .unwrap()
        .to_owned();
    // In the diagnosis, so that every case's ground truth stays one a curator's copy carries.
    cluster.psql(
        "team",
        &format!(
            "UPDATE cases SET ground_truth = jsonb_set(ground_truth, '{{diagnosis}}',
                 to_jsonb(ground_truth->>'diagnosis' || ' {GROUND_TRUTH_MARKER}'))"
        ),
    );
    assert_eq!(
        cluster.psql(
            "team",
            &format!("SELECT count(*) FILTER (WHERE ground_truth::text NOT LIKE '%{GROUND_TRUTH_MARKER}%') FROM cases"),
        ),
        "0",
        "every demo case has a ground truth to plant the marker in"
    );

    let server = Server::start(&database);
    let http = Http::new(&server.base);
    let lead = accept_and_login(&http, "lead", &lead_code);
    let mut codes = vec![lead_code];
    let mut invite = |username: &str, role: &str, site: &str| {
        let invitation = http.expect(
            200,
            "post",
            &study_path("/invitations"),
            Some(&lead.token),
            Some(match role {
                "rater" => json!({
                    "username": username, "role": role, "site": site,
                    "clinical_role": "neurologist", "years_experience": 9,
                }),
                _ => json!({ "username": username, "role": role, "site": site }),
            }),
        );
        let code = invitation["code"].as_str().unwrap().to_owned();
        codes.push(code.clone());
        accept_and_login(&http, username, &code)
    };
    let curator = invite("curator", "curator", "Hospital A");
    let rater_a = invite("rater-a", "rater", "Hospital A");
    let rater_b = invite("rater-b", "rater", "Hospital B");
    let top_up = http.expect(
        200,
        "post",
        &study_path("/top-up"),
        Some(&lead.token),
        Some(json!({ "raters": ["rater-a", "rater-b"], "per_rater": 6 })),
    );
    assert_eq!(top_up["raters"][0]["added"], 6, "{top_up}");
    Team {
        cluster,
        database,
        server,
        http,
        lead,
        curator,
        rater_a,
        rater_b,
        codes,
        models,
        graders,
        disease_groups,
        case_ids,
    }
}

fn queue(http: &Http, rater: &Person) -> Vec<Value> {
    let queue = http.expect(200, "get", &study_path("/queue"), Some(&rater.token), None);
    queue.as_array().unwrap().clone()
}

fn save(comment: &str, seconds: f64) -> Value {
    json!({ "kind": "save", "rating": { "scores": { "comment": comment, "seconds_on_task": seconds }, "labels": [] } })
}

/// A rating with every field submit needs, each dimension at its scale's minimum.
fn complete_save(rubric: &Value) -> Value {
    let dimensions: serde_json::Map<String, Value> = rubric["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["id"].as_str().unwrap().to_owned(), d["min"].clone()))
        .collect();
    json!({ "kind": "save", "rating": { "scores": {
        "overall": rubric["overall"]["max"], "correctness": "correct", "confidence": 4,
        "comment": "complete", "seconds_on_task": 40.0, "dimensions": dimensions
    }, "labels": [] } })
}

static EDIT_IDS: AtomicU64 = AtomicU64::new(1);

fn edit_id() -> String {
    format!("probe-{}", EDIT_IDS.fetch_add(1, Ordering::Relaxed))
}

/// The latest version of main of a case, as `who` reads the case's curation history.
fn latest_of_main(http: &Http, who: &Person, case_id: &str) -> Value {
    let history = http.expect(
        200,
        "get",
        &study_path(&format!("/cases/{case_id}/curation")),
        Some(&who.token),
        None,
    );
    history
        .as_array()
        .unwrap()
        .iter()
        .rfind(|v| v["branch"] == "main")
        .expect("main has a version")
        .clone()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Who {
    Nobody,
    Lead,
    Curator,
    RaterA,
    RaterB,
}

#[test]
fn every_endpoint_answers_each_role_only_what_it_may_see() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let http = &t.http;

    let document = http.expect(200, "get", "/openapi.json", None, None);
    assert!(document["openapi"].as_str().unwrap().starts_with("3."));

    // Rater A's first item: the one every item path names; rater B must not reach it.
    let first = queue(http, &t.rater_a)[0]["assignment"].as_i64().unwrap();
    let a_item = http.expect(
        200,
        "get",
        &study_path(&format!("/items/{first}")),
        Some(&t.rater_a.token),
        None,
    );
    // A rater is shown the case's code, never its id; the lead's and the curator's paths name the
    // case by its id.
    let coded = a_item["case"]["case_id"].as_str().unwrap();
    assert!(coded.starts_with("case-"), "{coded}");
    assert!(!t.case_ids.iter().any(|id| id == coded));
    let case_id = t.case_ids[0].clone();

    // The statuses expected of each operation: nobody, lead, curator, rater A, rater B.
    let expected: BTreeMap<(&str, &str), [u16; 5]> = BTreeMap::from([
        (("post", "/api/login"), [200; 5]),
        (("post", "/api/invitations/accept"), [404; 5]),
        (("post", "/api/logout"), [401, 204, 204, 204, 204]),
        (("get", "/api/me"), [401, 200, 200, 200, 200]),
        // A wrong current password: nobody's is changed by the probe.
        (("post", "/api/password"), [401, 403, 403, 403, 403]),
        (("get", "/api/sessions"), [401, 200, 200, 200, 200]),
        // A session number nobody has: the probe ends no one's session.
        (("delete", "/api/sessions/{id}"), [401, 404, 404, 404, 404]),
        (("post", "/api/password-resets/accept"), [404; 5]),
        (
            ("get", "/api/studies/{study}/invitations"),
            [401, 200, 403, 403, 403],
        ),
        (
            ("delete", "/api/studies/{study}/invitations/{id}"),
            [401, 404, 403, 403, 403],
        ),
        // For a username that is no member: the probe resets nobody's password.
        (
            (
                "post",
                "/api/studies/{study}/members/{username}/password-reset",
            ),
            [401, 404, 403, 403, 403],
        ),
        (
            ("get", "/api/studies/{study}/queue"),
            [401, 403, 403, 200, 200],
        ),
        (
            ("get", "/api/studies/{study}/items/{assignment}"),
            [401, 403, 403, 200, 404],
        ),
        (
            ("post", "/api/studies/{study}/items/{assignment}/edits"),
            [401, 403, 403, 200, 404],
        ),
        (
            ("get", "/api/studies/{study}/progress"),
            [401, 200, 403, 403, 403],
        ),
        (
            ("get", "/api/studies/{study}/ratings"),
            [401, 200, 403, 403, 403],
        ),
        (
            ("post", "/api/studies/{study}/invitations"),
            [401, 200, 403, 403, 403],
        ),
        (
            ("post", "/api/studies/{study}/top-up"),
            [401, 200, 403, 403, 403],
        ),
        (
            ("put", "/api/studies/{study}/raters/{username}/reveal-lock"),
            [401, 204, 403, 403, 403],
        ),
        (
            ("get", "/api/studies/{study}/cases/{case_id}/ground-truth"),
            [401, 200, 200, 403, 403],
        ),
        (
            ("get", "/api/studies/{study}/curation"),
            [401, 200, 200, 403, 403],
        ),
        (
            ("get", "/api/studies/{study}/cases/{case_id}/curation"),
            [401, 200, 200, 403, 403],
        ),
        // Each from main's latest as the lead reads it just before: both stored.
        (
            (
                "post",
                "/api/studies/{study}/cases/{case_id}/curation/versions",
            ),
            [401, 201, 201, 403, 403],
        ),
        // Version 1 is the bundle's, final: never submitted or reviewed again.
        (
            (
                "post",
                "/api/studies/{study}/cases/{case_id}/curation/versions/{version}/submit",
            ),
            [401, 409, 409, 403, 403],
        ),
        (
            (
                "post",
                "/api/studies/{study}/cases/{case_id}/curation/versions/{version}/review",
            ),
            [401, 409, 409, 403, 403],
        ),
        // The lead names the rater (`?rater=`); without, 422. An empty body is no results
        // package.
        (
            ("get", "/api/studies/{study}/package"),
            [401, 422, 403, 200, 200],
        ),
        (
            ("post", "/api/studies/{study}/results"),
            [401, 422, 403, 422, 422],
        ),
        (
            ("get", "/api/studies/{study}/curation-package"),
            [401, 200, 200, 403, 403],
        ),
    ]);
    let mut probed = 0;
    let mut bodies: Vec<(Who, &str, String)> = Vec::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            let statuses = expected
                .get(&(method.as_str(), path.as_str()))
                .unwrap_or_else(|| panic!("{method} {path} is new: add what each role may get"));
            let concrete = path
                .replace("/members/{username}/", "/members/no-such-member/")
                .replace("{id}", "987654321")
                .replace("{study}", DEMO_STUDY_ID)
                .replace("{assignment}", &first.to_string())
                .replace("{username}", &t.rater_a.username)
                .replace("{case_id}", &case_id)
                .replace("{version}", "1");
            let who_all = [
                Who::Nobody,
                Who::Lead,
                Who::Curator,
                Who::RaterA,
                Who::RaterB,
            ];
            for (who, status) in who_all.into_iter().zip(statuses) {
                let person = match who {
                    Who::Nobody => None,
                    Who::Lead => Some(&t.lead),
                    Who::Curator => Some(&t.curator),
                    Who::RaterA => Some(&t.rater_a),
                    Who::RaterB => Some(&t.rater_b),
                };
                let mut token = person.map(|p| p.token.clone());
                let body = match path.as_str() {
                    "/api/login" => Some(
                        json!({ "username": t.rater_a.username, "password": t.rater_a.password }),
                    ),
                    "/api/invitations/accept" | "/api/password-resets/accept" => Some(
                        json!({ "code": "no-such-code", "password": "a long enough password" }),
                    ),
                    "/api/password" => Some(json!({
                        "current_password": "not the password at all",
                        "new_password": "a new and long password",
                    })),
                    "/api/logout" => {
                        // A session of its own, so the probe does not end the one it uses.
                        token = person.map(|p| {
                            let login = http.expect(
                                200,
                                "post",
                                "/api/login",
                                None,
                                Some(json!({ "username": p.username, "password": p.password })),
                            );
                            login["token"].as_str().unwrap().to_owned()
                        });
                        None
                    }
                    p if p.ends_with("/edits") => {
                        let version = queue(http, &t.rater_a)[0]["version"].as_i64().unwrap();
                        Some(
                            json!({ "edit_id": edit_id(), "base_version": version, "edit": save("probe", 5.0) }),
                        )
                    }
                    p if p.ends_with("/invitations") => Some(json!({
                        "username": format!("probe-{probed}"), "role": "rater",
                        "site": "Hospital C", "clinical_role": "resident",
                    })),
                    p if p.ends_with("/top-up") => {
                        Some(json!({ "raters": ["rater-a"], "per_rater": 1 }))
                    }
                    p if p.ends_with("/reveal-lock") => Some(json!({ "locked": false })),
                    p if p.ends_with("/curation/versions") => {
                        let latest = latest_of_main(http, &t.lead, &case_id);
                        Some(json!({
                            "edit_id": edit_id(), "branch": "main",
                            "based_on": latest["version"], "truth": latest["truth"],
                        }))
                    }
                    p if p.ends_with("/submit") => Some(json!({ "edit_id": edit_id() })),
                    p if p.ends_with("/review") => Some(
                        json!({ "edit_id": edit_id(), "decision": "finalised", "comment": "" }),
                    ),
                    _ => None,
                };
                let (got, text) = http.call(method, &concrete, token.as_deref(), body.as_ref());
                assert_eq!(got, *status, "{method} {path} as {who:?}: {text}");
                bodies.push((who, path.as_str(), text));
                probed += 1;
            }
        }
    }
    assert_eq!(
        probed,
        expected.len() * 5,
        "every operation of the document was probed"
    );

    let lead_saw_marker = bodies
        .iter()
        .any(|(who, _, text)| *who == Who::Lead && text.contains(GROUND_TRUTH_MARKER));
    assert!(
        lead_saw_marker,
        "the lead's ground-truth view carries the planted marker"
    );
    for (who, path, text) in &bodies {
        if matches!(who, Who::RaterA | Who::RaterB | Who::Nobody) {
            assert!(
                !text.contains(GROUND_TRUTH_MARKER),
                "{who:?} got the ground truth: {text}"
            );
            if path.ends_with("/package") {
                // The bundle format needs the field; a package says `other_abnormality` for
                // every case ("not sent").
                for group in &t.disease_groups {
                    assert!(
                        group == "other_abnormality"
                            || !text.contains(&format!("\"disease_group\": \"{group}\"")),
                        "{who:?}'s package names the disease group {group}"
                    );
                }
            } else {
                assert!(
                    !text.contains("disease_group"),
                    "{who:?} got the disease group: {text}"
                );
            }
            for name in t.models.iter().chain(&t.graders) {
                assert!(
                    !text.contains(name.as_str()),
                    "{who:?} got {name:?}: {text}"
                );
            }
            // A path that names a case by its id may be answered naming it back; any other
            // answer to a rater names no case id, packages (every byte of every member) included.
            if !path.contains("{case_id}") {
                for id in &t.case_ids {
                    assert!(
                        !text.contains(id.as_str()),
                        "{who:?} got the case id {id}: {path}"
                    );
                }
            }
        }
        if *who == Who::RaterB {
            assert!(
                !text.contains("probe"),
                "rater B saw rater A's comment: {text}"
            );
        }
    }

    // The ground truth opens to a rater after they submit and ask, and closes when the lead
    // locks them; a locked rater cannot reopen.
    let item_path = study_path(&format!("/items/{first}"));
    let edits = format!("{item_path}/edits");
    let rater = Some(t.rater_a.token.as_str());
    let mut version = queue(http, &t.rater_a)[0]["version"].as_i64().unwrap();
    for edit in [
        complete_save(&a_item["rubric"]),
        json!({ "kind": "submit" }),
        json!({ "kind": "reveal" }),
    ] {
        let ack = http.expect(
            200,
            "post",
            &edits,
            rater,
            Some(json!({ "edit_id": edit_id(), "base_version": version, "edit": edit })),
        );
        version = ack["version"].as_i64().unwrap();
    }
    let revealed = http.expect(200, "get", &item_path, rater, None);
    assert!(revealed.to_string().contains(GROUND_TRUTH_MARKER));
    assert!(
        revealed["ground_truth_version"].as_i64() >= Some(1),
        "{revealed}"
    );
    assert_eq!(revealed["reveal_locked"], false, "{revealed}");
    http.expect(
        204,
        "put",
        &study_path("/raters/rater-a/reveal-lock"),
        Some(&t.lead.token),
        Some(json!({ "locked": true })),
    );
    let locked = http.expect(200, "get", &item_path, rater, None);
    assert!(!locked.to_string().contains(GROUND_TRUTH_MARKER));
    assert_eq!(locked["ground_truth_version"], Value::Null, "{locked}");
    // The item says so, for the app to offer no reopen the server refuses.
    assert_eq!(locked["reveal_locked"], true, "{locked}");
    let refused = http.expect(
        409,
        "post",
        &edits,
        rater,
        Some(
            json!({ "edit_id": edit_id(), "base_version": version, "edit": { "kind": "reopen" } }),
        ),
    );
    assert_eq!(refused["code"], "refused", "{refused}");

    // Progress per rater and per site reflects what was saved.
    let progress = http.expect(
        200,
        "get",
        &study_path("/progress"),
        Some(&t.lead.token),
        None,
    );
    let a = progress["raters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["username"] == "rater-a")
        .unwrap();
    assert_eq!(a["submitted"], 1, "{progress}");
    assert_eq!(a["reveal_locked"], true);
    let sites: Vec<&str> = progress["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["site"].as_str().unwrap())
        .collect();
    assert!(
        sites.contains(&"Hospital A") && sites.contains(&"Hospital B"),
        "{progress}"
    );

    // Logged out is logged out.
    http.expect(204, "post", "/api/logout", Some(&t.curator.token), None);
    http.expect(401, "get", "/api/me", Some(&t.curator.token), None);

    let log = t.server.log();
    assert!(
        log.contains("POST /api/login 200"),
        "the log records requests: {log}"
    );
    for person in [&t.lead, &t.curator, &t.rater_a, &t.rater_b] {
        assert!(!log.contains(&person.password), "a password in the log");
        assert!(!log.contains(&person.token), "a token in the log");
    }
    for code in &t.codes {
        assert!(
            !log.contains(code.as_str()),
            "an invitation code in the log"
        );
    }
    let stored = t.cluster.psql(
        "team",
        "SELECT string_agg(password_hash, ' ') FROM accounts",
    );
    for person in [&t.lead, &t.curator, &t.rater_a, &t.rater_b] {
        assert!(
            !stored.contains(&person.password),
            "a password stored in clear"
        );
    }
}

#[test]
fn edits_are_stored_once_never_overwrite_and_survive_a_killed_server() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let second = Server::start(&t.database);
    let (one, two) = (&t.http, &Http::new(&second.base));
    let rater = Some(t.rater_a.token.as_str());
    let assignments: Vec<i64> = queue(one, &t.rater_a)
        .iter()
        .map(|q| q["assignment"].as_i64().unwrap())
        .collect();
    let edits = |assignment: i64| study_path(&format!("/items/{assignment}/edits"));
    let count = |sql: &str| t.cluster.psql("team", sql).parse::<i64>().unwrap();

    // A resend, to the other process, is answered from the first and stored once.
    let first = json!({ "edit_id": "e-1", "base_version": 0, "edit": save("first", 10.0) });
    let ack = one.expect(
        200,
        "post",
        &edits(assignments[0]),
        rater,
        Some(first.clone()),
    );
    let resent = two.expect(200, "post", &edits(assignments[0]), rater, Some(first));
    assert_eq!(ack, resent);
    assert_eq!(ack["version"], 1);
    assert_eq!(
        count("SELECT count(*) FROM applied_edits WHERE edit_id = 'e-1'"),
        1
    );
    assert_eq!(
        count(&format!("SELECT count(*) FROM audit_log WHERE action = 'save rating' AND entity = 'assignment:{}'", assignments[0])),
        1
    );

    // An edit from a version that moved on is refused and overwrites nothing.
    let stale = two.expect(
        409,
        "post",
        &edits(assignments[0]),
        rater,
        Some(json!({ "edit_id": "e-2", "base_version": 0, "edit": save("stale", 11.0) })),
    );
    assert_eq!(
        (stale["code"].as_str(), stale["current_version"].as_i64()),
        (Some("conflict"), Some(1))
    );
    let item = one.expect(
        200,
        "get",
        &study_path(&format!("/items/{}", assignments[0])),
        rater,
        None,
    );
    assert_eq!(item["rating"]["state"]["scores"]["comment"], "first");

    // One process sees what the other stored.
    two.expect(
        200,
        "post",
        &edits(assignments[0]),
        rater,
        Some(json!({ "edit_id": "e-3", "base_version": 1, "edit": save("second", 12.0) })),
    );
    let item = one.expect(
        200,
        "get",
        &study_path(&format!("/items/{}", assignments[0])),
        rater,
        None,
    );
    assert_eq!(
        (
            item["rating"]["version"].as_i64(),
            item["rating"]["state"]["scores"]["comment"].as_str()
        ),
        (Some(2), Some("second"))
    );

    // An edit id reused for other content is refused, not confused with a resend.
    let reused = one.expect(
        409,
        "post",
        &edits(assignments[0]),
        rater,
        Some(json!({ "edit_id": "e-1", "base_version": 2, "edit": save("other", 13.0) })),
    );
    assert_eq!(reused["code"], "conflict");

    // Four clients save as fast as acknowledged; the server they use is killed mid-load.
    let base = t.server.base.clone();
    let workers: Vec<_> = assignments[1..5]
        .iter()
        .map(|&assignment| {
            let (base, token, path) = (base.clone(), t.rater_a.token.clone(), edits(assignment));
            std::thread::spawn(move || {
                let http = Http::new(&base);
                let mut acked: Vec<(String, i64)> = Vec::new();
                for n in 0.. {
                    let id = format!("load-{assignment}-{n}");
                    let body =
                        json!({ "edit_id": id, "base_version": n, "edit": save(&id, n as f64) });
                    match http.try_call("post", &path, Some(&token), Some(&body)) {
                        Ok((200, _)) => acked.push((id, n + 1)),
                        Ok((status, text)) => panic!("{id}: {status} {text}"),
                        // The server is gone: this edit's fate is unknown to the client.
                        Err(_) => return (acked, body),
                    }
                }
                unreachable!()
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed_log = t.server.kill();
    let outcomes: Vec<_> = workers.into_iter().map(|w| w.join().unwrap()).collect();

    let restarted = Server::start(&t.database);
    let again = Http::new(&restarted.base);
    for (acked, in_flight) in outcomes {
        assert!(!acked.is_empty(), "the load ran before the kill");
        for (id, _) in &acked {
            assert_eq!(
                count(&format!(
                    "SELECT count(*) FROM applied_edits WHERE edit_id = '{id}'"
                )),
                1,
                "{id} lost"
            );
        }
        // The client resends what it never saw acknowledged: stored once, whatever happened.
        let path = in_flight_path(&in_flight);
        let ack = again.expect(200, "post", &path, rater, Some(in_flight.clone()));
        let last_acked = acked.last().unwrap().1;
        assert_eq!(ack["version"].as_i64(), Some(last_acked + 1));
        let id = in_flight["edit_id"].as_str().unwrap();
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM applied_edits WHERE edit_id = '{id}'"
            )),
            1
        );
    }
    assert!(!killed_log.contains(&t.rater_a.token));
}

/// The edits path of the assignment a load worker's edit id names (`load-ASSIGNMENT-N`).
fn in_flight_path(in_flight: &Value) -> String {
    let id = in_flight["edit_id"].as_str().unwrap();
    let assignment = id.split('-').nth(1).unwrap();
    study_path(&format!("/items/{assignment}/edits"))
}

#[test]
fn two_servers_starting_at_once_migrate_the_schema_once() {
    let cluster = Cluster::start();
    let database = cluster.database("twin");
    let starting: Vec<_> = (0..2)
        .map(|_| {
            let database = database.clone();
            std::thread::spawn(move || Server::start(&database))
        })
        .collect();
    let servers: Vec<Server> = starting.into_iter().map(|s| s.join().unwrap()).collect();
    for server in &servers {
        let document = Http::new(&server.base).expect(200, "get", "/openapi.json", None, None);
        assert!(document["paths"].as_object().unwrap().len() >= 10);
        Http::new(&server.base).expect(401, "get", "/api/me", None, None);
    }
    // Each of the schema's migrations (server/src/schema.rs) recorded once.
    assert_eq!(
        cluster.psql(
            "twin",
            "SELECT count(*) || '/' || max(version) FROM schema_migrations"
        ),
        "7/7"
    );
}

/// What schemathesis found (scripts/test-schemathesis.sh): text PostgreSQL cannot store (the NUL
/// character) and dates it cannot read reached the database and came back as 500s. Each is now
/// a 422 naming the field, and nothing of the refused request is stored.
#[test]
fn text_and_dates_the_database_cannot_store_are_refused_naming_the_field() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let lead = Some(t.lead.token.as_str());
    let rater = Some(t.rater_a.token.as_str());
    let count = |sql: &str| t.cluster.psql("team", sql).parse::<i64>().unwrap();
    let assignments_before = count("SELECT count(*) FROM assignments");
    let refused = |path: &str, token: Option<&str>, body: Value| {
        let reply = t.http.expect(422, "post", path, token, Some(body));
        assert_eq!(reply["code"], "invalid", "{reply}");
        reply["field"].as_str().unwrap().to_owned()
    };

    assert_eq!(
        refused(
            &study_path("/top-up"),
            lead,
            json!({ "raters": ["rater-a", "ra\u{0}ter"], "per_rater": 1 })
        ),
        "raters[1]"
    );
    for impossible in ["2026-02-30", "2026-13-01", "0000-01-01"] {
        assert_eq!(
            refused(
                &study_path("/top-up"),
                lead,
                json!({ "raters": ["rater-a"], "per_rater": 1, "due_on": impossible })
            ),
            "due_on",
            "{impossible}"
        );
    }
    assert_eq!(
        count("SELECT count(*) FROM assignments"),
        assignments_before
    );
    // A real date at the end of a leap February is accepted.
    t.http.expect(
        200,
        "post",
        &study_path("/top-up"),
        lead,
        Some(json!({ "raters": ["rater-a"], "per_rater": 1, "due_on": "2028-02-29" })),
    );

    assert_eq!(
        refused(
            &study_path("/invitations"),
            lead,
            json!({ "username": "newcomer", "role": "rater", "site": "Site\u{0}C" })
        ),
        "site"
    );
    // A rater's invitation names how they read; a curator's does not.
    assert_eq!(
        refused(
            &study_path("/invitations"),
            lead,
            json!({ "username": "newcomer", "role": "rater", "site": "Site C" })
        ),
        "clinical_role"
    );
    assert_eq!(
        refused(
            &study_path("/invitations"),
            lead,
            json!({ "username": "newcomer", "role": "curator", "clinical_role": "neurologist" })
        ),
        "clinical_role"
    );
    assert_eq!(
        count("SELECT count(*) FROM invitations WHERE username = 'newcomer'"),
        0
    );

    let assignment = queue(&t.http, &t.rater_a)[0]["assignment"]
        .as_i64()
        .unwrap();
    assert_eq!(
        refused(
            &study_path(&format!("/items/{assignment}/edits")),
            rater,
            json!({ "edit_id": "nul-1", "base_version": 0, "edit": save("a\u{0}b", 5.0) })
        ),
        "edit.rating.scores.comment"
    );
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM ratings WHERE assignment = {assignment}"
        )),
        0
    );
    assert!(!t.server.log().contains("error: the database failed"));
}

/// Every rating of the study as `GET …/ratings` gives it to `lead` (what a pull reads).
fn study_ratings(http: &Http, lead: &Person) -> Vec<cases::app::team::TeamStudyRating> {
    serde_json::from_value(http.expect(
        200,
        "get",
        &study_path("/ratings"),
        Some(&lead.token),
        None,
    ))
    .unwrap()
}

/// Rates the first `count` items of `rater`'s queue on the server, each differently (overall,
/// dimensions, one error label on the answer), and submits them.
fn rate_on_server(http: &Http, rater: &Person, count: usize, offset: f64) {
    for (index, entry) in queue(http, rater).iter().take(count).enumerate() {
        let assignment = entry["assignment"].as_i64().unwrap();
        let path = study_path(&format!("/items/{assignment}"));
        let item = http.expect(200, "get", &path, Some(&rater.token), None);
        let rubric = &item["rubric"];
        let step = (index as f64 + offset) % 3.0;
        let dimensions: serde_json::Map<String, Value> = rubric["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let (min, max) = (d["min"].as_f64().unwrap(), d["max"].as_f64().unwrap());
                (
                    d["id"].as_str().unwrap().to_owned(),
                    json!(min + step.min(max - min)),
                )
            })
            .collect();
        let overall_min = rubric["overall"]["min"].as_f64().unwrap();
        let overall_max = rubric["overall"]["max"].as_f64().unwrap();
        let on_text: Vec<&str> = item["taxonomy"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["anchor"] != "image")
            .map(|c| c["code"].as_str().unwrap())
            .collect();
        let category = on_text[index % on_text.len()];
        let correctness = ["correct", "partly", "incorrect"][index % 3];
        let save = json!({ "kind": "save", "rating": { "scores": {
            "overall": (overall_min + step + index as f64).min(overall_max),
            "correctness": correctness,
            "confidence": 1 + index % 5, "comment": format!("read {index}"),
            "seconds_on_task": 30.0 + 7.0 * index as f64, "dimensions": dimensions
        }, "labels": [{ "category": category, "severity": 1 + index % 3, "span": [0, 4],
                        "text": "answer", "mark": null, "comment": "" }] } });
        let edits = study_path(&format!("/items/{assignment}/edits"));
        let saved = http.expect(
            200,
            "post",
            &edits,
            Some(&rater.token),
            Some(json!({ "edit_id": edit_id(), "base_version": 0, "edit": save })),
        );
        http.expect(
            200,
            "post",
            &edits,
            Some(&rater.token),
            Some(json!({
                "edit_id": edit_id(), "base_version": saved["version"], "edit": { "kind": "submit" }
            })),
        );
    }
}

/// The report as JSON without what names the database it was read from (its audit head, the
/// time it was built): the figures alone.
fn report_figures(db: &Path, grader: &str) -> Value {
    let store = Store::open(db).unwrap();
    let lead = cases::app::Session::command_line();
    let report = cases::app::calibration::study_report(
        &store,
        &lead,
        DEMO_STUDY_ID,
        calibration::input::ReportOptions {
            grader: Some(grader.to_owned()),
            ..Default::default()
        },
    )
    .unwrap()
    .build(&NoProgress)
    .unwrap();
    let mut figures = serde_json::to_value(&report).unwrap();
    strip_provenance(&mut figures);
    figures
}

fn strip_provenance(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !matches!(key.as_str(), "audit_head" | "generated_at"));
            map.values_mut().for_each(strip_provenance);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_provenance),
        _ => {}
    }
}

#[test]
fn the_leads_report_from_the_servers_ratings_equals_one_from_the_same_ratings_made_locally() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let http = &t.http;
    rate_on_server(http, &t.rater_a, 4, 0.0);
    rate_on_server(http, &t.rater_b, 4, 1.0);
    let pulled = study_ratings(http, &t.lead);
    assert_eq!(pulled.len(), 8, "{pulled:?}");
    assert!(pulled
        .iter()
        .all(|r| r.status == cases::rating::RatingStatus::Submitted));

    // The lead's database as it was copied onto the server, twice over.
    let local = work.path().join("local.sqlite");
    let (from_server, rated_here) = (
        work.path().join("pulled.sqlite"),
        work.path().join("here.sqlite"),
    );
    for db in [&from_server, &rated_here] {
        std::fs::copy(&local, db).unwrap();
        let mut store = Store::open(db).unwrap();
        for person in [&t.rater_a, &t.rater_b] {
            store
                .create_rater(
                    &person.username,
                    cases::rating::RaterRole::Neuroradiologist,
                    Some(9),
                )
                .unwrap();
        }
    }

    // One: the server's ratings pulled; a second pull writes nothing.
    let mut store = Store::open(&from_server).unwrap();
    let lead = cases::app::Session::command_line();
    let first = cases::app::team::pull_ratings(&mut store, &lead, DEMO_STUDY_ID, &pulled).unwrap();
    assert_eq!(
        (first.added, first.updated, first.conflicts.len()),
        (8, 0, 0),
        "{first:?}"
    );
    let again = cases::app::team::pull_ratings(&mut store, &lead, DEMO_STUDY_ID, &pulled).unwrap();
    assert_eq!((again.added, again.unchanged), (0, 8), "{again:?}");
    drop(store);

    // Two: the same ratings made at this workstation through the app's own edits.
    let mut store = Store::open(&rated_here).unwrap();
    for (position, rating) in pulled.iter().enumerate() {
        let rater = store
            .raters()
            .unwrap()
            .into_iter()
            .find(|r| r.name == rating.rater)
            .unwrap();
        let assignment = {
            let conn = store.read();
            let response: i64 = conn
                .query_row(
                    "SELECT r.id FROM responses r JOIN tasks t ON r.task = t.id
                     JOIN cases c ON t.case_ref = c.id
                     WHERE c.case_id = ?1 AND t.task_id = ?2 AND r.model = ?3 AND r.sample = ?4",
                    rusqlite::params![rating.case_id, rating.task_id, rating.model, rating.sample],
                    |r| r.get(0),
                )
                .unwrap();
            conn.execute(
                "INSERT OR IGNORE INTO assignment_plans (study, name, seed, overlap_share,
                     repeat_share, repeat_after_days, created_by, created_at)
                 SELECT id, 'here', 1, 0, 0, 0, ?1, '2026-11-27T00:00:00.000Z' FROM studies",
                [rater.id],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO assignments (plan, rater, response, position, overlap)
                 VALUES ((SELECT id FROM assignment_plans WHERE name = 'here'), ?1, ?2, ?3, 0)",
                rusqlite::params![rater.id, response, position as i64 + 1],
            )
            .unwrap();
            conn.last_insert_rowid()
        };
        store
            .save_rating(rater.id, assignment, &rating.state.scores)
            .unwrap();
        for label in &rating.state.labels {
            store.add_error_label(rater.id, assignment, label).unwrap();
        }
        store.submit_rating(rater.id, assignment).unwrap();
    }
    drop(store);

    let grader = &t.graders[0];
    let (pulled_figures, local_figures) = (
        report_figures(&from_server, grader),
        report_figures(&rated_here, grader),
    );
    assert_eq!(pulled_figures, local_figures);
    assert_eq!(
        pulled_figures["summary"]["human_raters"],
        json!([t.rater_a.username, t.rater_b.username])
    );
    // The verdict is computed on the eight ratings themselves.
    assert_eq!(pulled_figures["verdict"]["pearson"]["n"], 8);
}

/// The rubric version each rating of `db` was saved under, by rater: `[(rater, version)]`.
fn rating_versions(db: &Path) -> Vec<(String, u32)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT r.name, g.rubric_version FROM ratings g JOIN raters r ON g.rater = r.id
             ORDER BY r.name, g.id",
        )
        .unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn each_server_rating_keeps_the_rubric_version_it_was_made_under_into_the_leads_report() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let http = &t.http;
    let local = work.path().join("local.sqlite");
    let lead = cases::app::Session::command_line();
    let published = |db: &Path| {
        distinct(
            db,
            "SELECT group_concat(version) FROM rubric_versions WHERE published_at IS NOT NULL",
        )
    };
    // The first import froze version 1 in the lead's database.
    assert_eq!(published(&local), ["1"]);

    // Rater A rates under version 1.
    rate_on_server(http, &t.rater_a, 1, 0.0);
    let first = queue(http, &t.rater_a)[0]["assignment"].as_i64().unwrap();
    let item = http.expect(
        200,
        "get",
        &study_path(&format!("/items/{first}")),
        Some(&t.rater_a.token),
        None,
    );
    assert_eq!(
        (&item["rubric_version"], &item["rating"]["rubric_version"]),
        (&json!(1), &json!(1))
    );

    // The lead drops the rubric's last dimension. No rating is in the lead's database, but the
    // server has version 1: a new version, saying why.
    let mut store = Store::open(&local).unwrap();
    let mut v2 = cases::app::rubric::current(&store, &lead, DEMO_STUDY_ID)
        .unwrap()
        .rubric;
    let dropped = v2
        .dimensions
        .pop()
        .expect("the demo rubric has dimensions")
        .id;
    let saved = cases::app::rubric::save(&mut store, &lead, DEMO_STUDY_ID, &v2).unwrap();
    let cases::app::rubric::RubricSave::Saved(saved) = saved else {
        panic!("{saved:?}")
    };
    assert_eq!(
        (saved.version, saved.new_version, saved.reason),
        (2, true, Some(cases::rubric::NewVersionReason::Published))
    );
    drop(store);

    // A copy of the lead's database whose version 1 was rewritten behind the rule's back: its
    // import is refused naming the study and version, and nothing of it is imported.
    let rewritten = work.path().join("rewritten.sqlite");
    std::fs::copy(&local, &rewritten).unwrap();
    rusqlite::Connection::open(&rewritten)
        .unwrap()
        .execute(
            "UPDATE rubric_versions SET rubric_json = json_set(rubric_json, '$.overall.label',
                 'rewritten') WHERE version = 1",
            [],
        )
        .unwrap();
    let refused = Command::new(env!("CARGO_BIN_EXE_neurorater-server"))
        .args(["import", "--database", &t.database, "--db"])
        .arg(&rewritten)
        .args(["--study", DEMO_STUDY_ID])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "study {DEMO_STUDY_ID:?}: rubric version 1 in this database"
        )) && stderr.contains("Nothing was imported"),
        "{stderr}"
    );
    assert_eq!(
        t.cluster.psql(
            "team",
            "SELECT (SELECT count(*) FROM study_rubrics) || '/' || rubric_version FROM studies"
        ),
        "1/1"
    );

    // The lead's re-import copies version 2 and makes it the one raters score on.
    let imported = ok_json(&[
        "import",
        "--database",
        &t.database,
        "--db",
        path_str(&local),
        "--study",
        DEMO_STUDY_ID,
    ]);
    assert_eq!(
        (
            &imported["rubric_versions_added"],
            &imported["rubric_version"]
        ),
        (&json!(1), &json!(2)),
        "{imported}"
    );
    assert_eq!(published(&local), ["1,2"]);
    let again = ok_json(&[
        "import",
        "--database",
        &t.database,
        "--db",
        path_str(&local),
        "--study",
        DEMO_STUDY_ID,
    ]);
    assert_eq!(again["rubric_versions_added"], 0, "{again}");

    // Rater B scores on version 2: the item carries it, a score of the dropped dimension is
    // refused naming it, and the save is recorded under version 2.
    let second = queue(http, &t.rater_b)[0]["assignment"].as_i64().unwrap();
    let item = http.expect(
        200,
        "get",
        &study_path(&format!("/items/{second}")),
        Some(&t.rater_b.token),
        None,
    );
    assert_eq!(item["rubric_version"], 2);
    let ids: Vec<&str> = item["rubric"]["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&dropped.as_str()), "{ids:?}");
    let refused = http.expect(
        422,
        "post",
        &study_path(&format!("/items/{second}/edits")),
        Some(&t.rater_b.token),
        Some(
            json!({ "edit_id": edit_id(), "base_version": 0, "edit": { "kind": "save",
            "rating": { "scores": { "comment": "", "seconds_on_task": 3.0,
                                    "dimensions": { dropped.clone(): 1 } }, "labels": [] } } }),
        ),
    );
    assert!(
        refused["field"].as_str().unwrap().contains(&dropped),
        "{refused}"
    );
    rate_on_server(http, &t.rater_b, 1, 1.0);

    let pulled = study_ratings(http, &t.lead);
    let by_rater: Vec<(&str, Option<u32>)> = pulled
        .iter()
        .map(|r| (r.rater.as_str(), r.rubric_version))
        .collect();
    assert_eq!(by_rater, [("rater-a", Some(1)), ("rater-b", Some(2))]);

    // Pulled into a copy of the lead's database: each rating under the version the server
    // recorded (rater A's, with a score of the dimension version 2 dropped, checked against
    // version 1), and the report counts one rating per version.
    let from_server = work.path().join("pulled.sqlite");
    std::fs::copy(&local, &from_server).unwrap();
    let mut store = Store::open(&from_server).unwrap();
    for person in [&t.rater_a, &t.rater_b] {
        store
            .create_rater(
                &person.username,
                cases::rating::RaterRole::Neuroradiologist,
                Some(9),
            )
            .unwrap();
    }
    let report = cases::app::team::pull_ratings(&mut store, &lead, DEMO_STUDY_ID, &pulled).unwrap();
    assert_eq!((report.added, report.conflicts.len()), (2, 0), "{report:?}");
    drop(store);
    assert_eq!(
        rating_versions(&from_server),
        [("rater-a".to_owned(), 1), ("rater-b".to_owned(), 2)]
    );
    let figures = report_figures(&from_server, &t.graders[0]);
    assert_eq!(
        figures["rubric_versions"],
        json!([
            // Rater A's score of the dimension version 2 removed is left out, and said so.
            { "version": 1, "ratings": 1, "current": false, "left_out": [{
                "dimension": "safety", "scores": 1,
                "reason": "the current rubric has no dimension safety (version 1 had it)",
            }] },
            { "version": 2, "ratings": 1, "current": true, "left_out": [] },
        ])
    );

    // A rating the server recorded under a version this database lacks is refused, naming it.
    let mut unknown = pulled.clone();
    unknown[1].rubric_version = Some(7);
    let fresh = work.path().join("fresh.sqlite");
    std::fs::copy(&local, &fresh).unwrap();
    let mut store = Store::open(&fresh).unwrap();
    for person in [&t.rater_a, &t.rater_b] {
        store
            .create_rater(
                &person.username,
                cases::rating::RaterRole::Neurologist,
                None,
            )
            .unwrap();
    }
    let refused = cases::app::team::pull_ratings(&mut store, &lead, DEMO_STUDY_ID, &unknown)
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("rubric_version") && refused.contains("rubric version 7"),
        "{refused}"
    );
}

/// Every member of a package: name → bytes.
fn tar_members(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    use std::io::Read;
    let mut archive = tar::Archive::new(bytes);
    let mut out = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        out.insert(name, data);
    }
    out
}

/// The Python with pydicom and numpy that `scripts/setup.sh --with-test-tools` installs into a
/// venv of its own (at `$NEURORATER_TEST_PYTHON_VENV`, else in the user's cache folder).
fn test_python() -> PathBuf {
    let venv = std::env::var_os("NEURORATER_TEST_PYTHON_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache")
                })
                .join("neurorater/test-python-venv")
        });
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "no {}: bash scripts/setup.sh --with-test-tools installs pydicom and numpy there",
        python.display()
    );
    python
}

/// `who`'s rater package from the server (`?rater=` for the lead), written to `out`.
fn download_package(http: &Http, who: &Person, rater: Option<&str>, out: &Path) -> Vec<u8> {
    let query = rater.map(|r| format!("?rater={r}")).unwrap_or_default();
    let (status, bytes) = http
        .raw(
            "get",
            &study_path(&format!("/package{query}")),
            Some(&who.token),
            "",
            &[],
        )
        .unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    std::fs::write(out, &bytes).unwrap();
    bytes
}

fn upload_results(http: &Http, who: &Person, file: &Path) -> Value {
    let (status, reply) = http
        .raw(
            "post",
            &study_path("/results"),
            Some(&who.token),
            "application/octet-stream",
            &std::fs::read(file).unwrap(),
        )
        .unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    assert_eq!(status, 200, "{reply}");
    serde_json::from_str(&reply).unwrap()
}

/// A fresh SQLite database of its own with `package` imported, as the desktop app in server mode
/// keeps it.
fn import_package(dir: &Path, package: &Path) -> Store {
    let mut store = Store::open(&dir.join("rater.sqlite")).unwrap();
    cases::package::import_rater_package(&mut store, package, &NoProgress).unwrap();
    store
}

fn local_rater(store: &Store, name: &str) -> i64 {
    store
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == name)
        .unwrap()
        .id
}

/// Rates the first two items offline: the first complete and submitted, the second a draft.
fn rate_offline(store: &mut Store, rater: &str, comment: &str) {
    let rater = local_rater(store, rater);
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    let item = store.reading_item(rater, queue[0].assignment).unwrap();
    let complete = cases::rating::RatingEdit {
        overall: Some(item.rubric.overall.max),
        not_applicable: Default::default(),
        dimensions: item
            .rubric
            .dimensions
            .iter()
            .map(|d| (d.id.clone(), d.scale.min))
            .collect(),
        correctness: Some(cases::rating::Correctness::Partly),
        confidence: Some(4),
        comment: format!("{comment} first"),
        seconds_on_task: 61.5,
    };
    store
        .save_rating(rater, queue[0].assignment, &complete)
        .unwrap();
    store.submit_rating(rater, queue[0].assignment).unwrap();
    let draft = cases::rating::RatingEdit {
        overall: Some(item.rubric.overall.min),
        not_applicable: Default::default(),
        dimensions: BTreeMap::new(),
        correctness: None,
        confidence: None,
        comment: format!("{comment} second"),
        seconds_on_task: 10.0,
    };
    store
        .save_rating(rater, queue[1].assignment, &draft)
        .unwrap();
}

fn results_of(store: &Store, out: &Path) -> std::path::PathBuf {
    cases::package::export_results_package(store, None, out, &NoProgress).unwrap();
    out.to_path_buf()
}

/// (status, version, comment) of a server rating, read in PostgreSQL.
fn server_rating(t: &Team, assignment: i64) -> String {
    t.cluster
        .psql(
            "team",
            &format!(
                "SELECT status || '|' || version || '|' || (state->'scores'->>'comment')
                 FROM ratings WHERE assignment = {assignment}"
            ),
        )
        .trim()
        .to_owned()
}

#[test]
fn a_server_built_package_imports_blinded_with_the_lead_s_pixels_and_its_results_come_back_once() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let http = &t.http;

    // Rater A's package: every item names its server assignment, in queue order.
    let package = work.path().join("rater-a.tar");
    let bytes = download_package(http, &t.rater_a, None, &package);
    let members = tar_members(&bytes);
    let items: Vec<Value> = std::str::from_utf8(&members["items.jsonl"])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let a_queue: Vec<i64> = queue(http, &t.rater_a)
        .iter()
        .map(|q| q["assignment"].as_i64().unwrap())
        .collect();
    let linked: Vec<i64> = items
        .iter()
        .map(|i| i["server_assignment"].as_i64().unwrap())
        .collect();
    assert_eq!(linked, a_queue);

    // Blinded like a local package: no model or grader name, no ground truth (the marker is
    // planted in every case's on the server), no disease group, in any byte of any member.
    let text = String::from_utf8_lossy(&bytes);
    for hidden in t.models.iter().chain(&t.graders) {
        assert!(
            !text.contains(hidden.as_str()),
            "the package names {hidden}"
        );
    }
    assert!(!text.contains(GROUND_TRUTH_MARKER));
    assert!(!text.contains("ground_truth"));
    for id in &t.case_ids {
        assert!(
            !text.contains(id.as_str()),
            "the package names the case {id}"
        );
    }
    for (name, data) in &members {
        if name.ends_with("/case.json") {
            let case: Value = serde_json::from_slice(data).unwrap();
            assert_eq!(case["disease_group"], "other_abnormality", "{name}");
        }
    }
    let responses = String::from_utf8_lossy(&members["bundle/responses.jsonl"]).into_owned();
    assert!(responses
        .lines()
        .all(|l| l.contains("\"model\":\"blinded\"")));

    // The desktop app's import reads it into a database of its own, each assignment linked.
    let offline = work.path().join("offline");
    let mut store = import_package(&offline, &package);
    let links = cases::package::server_links(&store, DEMO_STUDY_ID).unwrap();
    let mut servers: Vec<i64> = links.iter().map(|l| l.server_assignment).collect();
    servers.sort();
    let mut expected = a_queue.clone();
    expected.sort();
    assert_eq!(servers, expected);

    // The images are the lead's pixels, de-identified: pydicom compares each DICOM file of the
    // package with the bundle file it came from.
    let local = work.path().join("local.sqlite");
    let bundle = demo_study::demo_bundle();
    let conn = rusqlite::Connection::open(&local).unwrap();
    let mut pairs = Vec::new();
    for (name, data) in &members {
        let Some(rest) = name.strip_prefix("bundle/cases/") else {
            continue;
        };
        let parts: Vec<&str> = rest.split('/').collect();
        if parts.len() != 3 || !parts[2].ends_with(".dcm") {
            continue;
        }
        // The package names the case by its code: the lead's case is the one of the same age
        // and sex (each demo case's pair is its own).
        let case: Value =
            serde_json::from_slice(&members[&format!("bundle/cases/{}/case.json", parts[0])])
                .unwrap();
        let position: i64 = parts[2].trim_end_matches(".dcm").parse().unwrap();
        let original: String = conn
            .query_row(
                "SELECT i.path FROM images i JOIN series s ON i.series = s.id
                 JOIN cases c ON s.case_ref = c.id
                 WHERE c.age = ?1 AND c.sex = ?2 AND s.series_id = ?3 ORDER BY i.position
                 LIMIT 1 OFFSET ?4",
                rusqlite::params![
                    case["age"].as_i64().unwrap(),
                    case["sex"].as_str().unwrap(),
                    parts[1],
                    position - 1
                ],
                |r| r.get(0),
            )
            .unwrap();
        let sent = work.path().join(format!("sent-{}", pairs.len()));
        std::fs::write(&sent, data).unwrap();
        pairs.push(json!([path_str(&sent), path_str(&bundle.join(original))]));
    }
    assert!(!pairs.is_empty(), "the package holds DICOM images");
    let mut python = Command::new(test_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/compare_dicom.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the test venv's python: bash scripts/setup.sh --with-test-tools");
    use std::io::Write;
    python
        .stdin
        .take()
        .unwrap()
        .write_all(Value::Array(pairs.clone()).to_string().as_bytes())
        .unwrap();
    let compared = python.wait_with_output().unwrap();
    assert!(
        compared.status.success(),
        "{}",
        String::from_utf8_lossy(&compared.stderr)
    );
    let compared: Value = serde_json::from_slice(&compared.stdout).unwrap();
    assert_eq!(compared["compared"], pairs.len());

    // Results back: the submitted rating and the draft are stored as the app's edits would be.
    rate_offline(&mut store, &t.rater_a.username, "offline");
    let results = results_of(&store, &work.path().join("results.tar"));
    let report = upload_results(http, &t.rater_a, &results);
    assert_eq!(report["applied"], 2, "{report}");
    assert_eq!(report["conflicts"], json!([]), "{report}");
    assert_eq!(report["refused"], json!([]), "{report}");
    let first = server_rating(&t, a_queue[0]);
    assert_eq!(first, "submitted|2|offline first");
    assert_eq!(server_rating(&t, a_queue[1]), "draft|1|offline second");
    let stored_edits = |t: &Team| {
        t.cluster
            .psql("team", "SELECT count(*) FROM applied_edits")
            .trim()
            .to_owned()
    };
    let edits_before = stored_edits(&t);

    // Sent again: stored once, nothing changes.
    let again = upload_results(http, &t.rater_a, &results);
    assert_eq!(again["applied"], 0, "{again}");
    assert_eq!(again["unchanged"], 2, "{again}");
    assert_eq!(stored_edits(&t), edits_before);
    assert_eq!(server_rating(&t, a_queue[0]), first);

    // Another rater cannot upload rater A's results: not found, nothing written.
    let (status, _) = http
        .raw(
            "post",
            &study_path("/results"),
            Some(&t.rater_b.token),
            "application/octet-stream",
            &std::fs::read(&results).unwrap(),
        )
        .unwrap();
    assert_eq!(status, 404);

    // A stale package: built before rater A saved the second item online again; its rating of
    // that item is listed as a conflict and the server's is kept.
    let second_package = work.path().join("rater-a-2.tar");
    download_package(http, &t.rater_a, None, &second_package);
    let version = queue(http, &t.rater_a)[1]["version"].as_i64().unwrap();
    http.expect(
        200,
        "post",
        &study_path(&format!("/items/{}/edits", a_queue[1])),
        Some(&t.rater_a.token),
        Some(json!({ "edit_id": edit_id(), "base_version": version, "edit": save("online", 3.0) })),
    );
    let online = server_rating(&t, a_queue[1]);
    let mut stale_store = import_package(&work.path().join("stale"), &second_package);
    rate_offline(&mut stale_store, &t.rater_a.username, "stale");
    let stale = results_of(&stale_store, &work.path().join("stale-results.tar"));
    let report = upload_results(http, &t.rater_a, &stale);
    let conflicts: Vec<i64> = report["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["assignment"].as_i64().unwrap())
        .collect();
    assert_eq!(conflicts, vec![a_queue[1]], "{report}");
    assert_eq!(server_rating(&t, a_queue[1]), online);
    // The first item had not moved since this package was built: its new rating is applied
    // (reopened, saved, submitted).
    assert_eq!(report["applied"], 1, "{report}");
    assert_eq!(server_rating(&t, a_queue[0]), "submitted|5|stale first");

    // The lead builds rater B's package for a site with no connection.
    let lead_built = work.path().join("rater-b.tar");
    let bytes = download_package(http, &t.lead, Some(&t.rater_b.username), &lead_built);
    let manifest: Value = serde_json::from_slice(&tar_members(&bytes)["manifest.json"]).unwrap();
    assert_eq!(manifest["rater"]["name"], t.rater_b.username);
    // The rater as the lead's invitation named them.
    assert_eq!(manifest["rater"]["role"], "neurologist");
    assert_eq!(manifest["rater"]["years_experience"], 9);
    let mut b_store = import_package(&work.path().join("site-b"), &lead_built);
    rate_offline(&mut b_store, &t.rater_b.username, "site b");
    let b_results = results_of(&b_store, &work.path().join("b-results.tar"));
    // A damaged upload is refused naming it as the client sent it, never the server's own file.
    let mut damaged = std::fs::read(&b_results).unwrap();
    damaged.truncate(damaged.len() / 2);
    let (status, reply) = http
        .raw(
            "post",
            &study_path("/results"),
            Some(&t.lead.token),
            "application/octet-stream",
            &damaged,
        )
        .unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    assert_eq!(status, 422, "{reply}");
    assert!(reply.contains("the uploaded results package"), "{reply}");
    assert!(
        !reply.contains(std::env::temp_dir().to_str().unwrap()),
        "{reply}"
    );
    let report = upload_results(http, &t.lead, &b_results);
    assert_eq!(report["applied"], 2, "{report}");
    let b_first = queue(http, &t.rater_b)[0]["assignment"].as_i64().unwrap();
    assert_eq!(server_rating(&t, b_first), "submitted|2|site b first");
}

#[test]
fn a_curators_copy_holds_every_case_with_its_ground_truth_and_geometry_and_no_model_answer() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let (status, bytes) = t
        .http
        .raw(
            "get",
            &study_path("/curation-package"),
            Some(&t.curator.token),
            "",
            &[],
        )
        .unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let package = work.path().join("curation.tar");
    std::fs::write(&package, &bytes).unwrap();

    // Every case with its disease group and the server's ground truth (the marker planted
    // there); no model answer, grader or rating in any byte.
    let local = work.path().join("local.sqlite");
    let conn = rusqlite::Connection::open(&local).unwrap();
    let local_cases: BTreeMap<String, String> = conn
        .prepare("SELECT case_id, disease_group FROM cases")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let members = tar_members(&bytes);
    let mut copied = BTreeMap::new();
    for (name, data) in &members {
        if name.ends_with("/case.json") {
            let case: Value = serde_json::from_slice(data).unwrap();
            assert!(
                case["ground_truth"]["diagnosis"]
                    .as_str()
                    .unwrap()
                    .contains(GROUND_TRUTH_MARKER),
                "{name}: {case}"
            );
            copied.insert(
                case["id"].as_str().unwrap().to_owned(),
                case["disease_group"].as_str().unwrap().to_owned(),
            );
        }
    }
    assert_eq!(copied, local_cases);
    assert!(members["bundle/responses.jsonl"].is_empty());
    let text = String::from_utf8_lossy(&bytes);
    for hidden in t.models.iter().chain(&t.graders) {
        assert!(!text.contains(hidden.as_str()), "the copy names {hidden}");
    }
    assert!(!members.keys().any(|m| m.contains("grader")));

    // The app's import: a database of its own with every case, each series' geometry, the
    // server's ground truth as version 1 and the curator acting; the local checks of a version
    // run there (a mark outside the volume is refused naming it).
    let copy = work.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    let mut store = Store::open(&copy.join("team.sqlite")).unwrap();
    let imported =
        cases::package::import_curation_package(&mut store, &package, &NoProgress).unwrap();
    assert_eq!(imported.cases as usize, local_cases.len());
    assert_eq!(imported.curator, "curator");
    let curator = store.raters().unwrap();
    assert_eq!(curator.len(), 1);
    assert_eq!(curator[0].role, cases::rating::RaterRole::Curator);
    let (series, geometry): (i64, i64) = store
        .read()
        .query_row(
            "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM series_geometry)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(series > 0);
    assert_eq!(geometry, series, "every series' geometry is stored");
    let case_id = local_cases.keys().next().unwrap();
    let history = cases::curation::history(&store, DEMO_STUDY_ID, case_id).unwrap();
    assert!(history[0].truth.diagnosis.contains(GROUND_TRUTH_MARKER));
    let mut truth = history[0].truth.clone();
    let series_id: String = store
        .read()
        .query_row(
            "SELECT s.series_id FROM series s JOIN cases c ON s.case_ref = c.id
             WHERE c.case_id = ?1 ORDER BY s.id LIMIT 1",
            [case_id],
            |r| r.get(0),
        )
        .unwrap();
    truth.lesions.push(
        serde_json::from_value(json!({
            "id": "far-away", "description": "outside the head",
            "marks": [{ "series_id": series_id, "kind": "point", "plane": "axial",
                        "points_lps_mm": [[9000.0, 9000.0, 9000.0]] }],
        }))
        .unwrap(),
    );
    let Err(refused) = cases::curation::check_edit(&store, DEMO_STUDY_ID, case_id, "main", &truth)
    else {
        panic!("a mark outside the volume passed the local checks");
    };
    assert!(
        refused.to_string().contains("lesions[") && refused.to_string().contains("marks[0]"),
        "{refused}"
    );

    // A copy is read in a database of its own: the lead's database, which holds the study but
    // not as a curator's copy, refuses it, writing nothing.
    let lead_copy = work.path().join("lead-copy");
    std::fs::create_dir_all(&lead_copy).unwrap();
    std::fs::copy(&local, lead_copy.join("lead.sqlite")).unwrap();
    let mut lead_store = Store::open(&lead_copy.join("lead.sqlite")).unwrap();
    let refused = cases::package::import_curation_package(&mut lead_store, &package, &NoProgress)
        .unwrap_err();
    assert!(
        refused.to_string().contains("already holds study"),
        "{refused}"
    );
    assert!(lead_store.raters().unwrap().is_empty());
    let audit: i64 = t
        .cluster
        .psql(
            "team",
            "SELECT count(*) FROM audit_log WHERE action = 'build curation package'
               AND actor = 'curator'",
        )
        .parse()
        .unwrap();
    assert_eq!(
        audit, 1,
        "who took a copy of the ground truth is in the audit log"
    );
}

/// The curator's copy of the study as the server builds it now, written to `out`.
fn download_curation_copy(http: &Http, who: &Person, out: &Path) {
    let (status, bytes) = http
        .raw(
            "get",
            &study_path("/curation-package"),
            Some(&who.token),
            "",
            &[],
        )
        .unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    std::fs::write(out, &bytes).unwrap();
}

/// Every case of the demo study in `store`: case id → row key.
fn case_keys(store: &Store) -> BTreeMap<String, i64> {
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let mut stmt = conn.prepare("SELECT case_id, id FROM cases").unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn a_curators_copy_takes_in_the_cases_the_lead_added_on_the_server_and_keeps_what_it_holds() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let copy = work.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    let first_package = work.path().join("curation-1.tar");
    download_curation_copy(&t.http, &t.curator, &first_package);
    let mut store = Store::open(&copy.join("team.sqlite")).unwrap();
    let first =
        cases::package::import_curation_package(&mut store, &first_package, &NoProgress).unwrap();
    assert_eq!(first.cases_added, first.cases);
    let curator = store.raters().unwrap()[0].id;
    store.set_current_rater(curator).unwrap();
    let held = case_keys(&store);

    // The same package again changes nothing.
    let again =
        cases::package::import_curation_package(&mut store, &first_package, &NoProgress).unwrap();
    assert_eq!((again.cases, again.cases_added), (first.cases, 0));

    // The lead adds a case (a copy of the bundle's first under a new id) to their database and
    // copies the study onto the server again (in a copy of the process's bundle, which is shared).
    let bundle = work.path().join("demo");
    demo_study::copy_tree(&demo_study::demo_bundle(), &bundle);
    let model_case = held.keys().next().unwrap();
    let added_case = "added-later-01";
    let added_dir = bundle.join("cases").join(added_case);
    demo_study::copy_tree(&bundle.join("cases").join(model_case), &added_dir);
    let case_file = added_dir.join("case.json");
    let mut case: Value = serde_json::from_slice(&std::fs::read(&case_file).unwrap()).unwrap();
    case["id"] = json!(added_case);
    std::fs::write(&case_file, serde_json::to_vec_pretty(&case).unwrap()).unwrap();
    let local = work.path().join("local.sqlite");
    let mut lead_store = Store::open(&local).unwrap();
    cases::import::import_bundle_dir(&mut lead_store, &bundle, &NoProgress).unwrap();
    drop(lead_store);
    let imported = ok_json(&[
        "import",
        "--database",
        &t.database,
        "--db",
        path_str(&local),
        "--study",
        DEMO_STUDY_ID,
    ]);
    assert_eq!(imported["cases_added"], 1, "{imported}");

    // The server's curation list, what the app compares its copy with when it opens it, names
    // the case the copy lacks.
    let listed = t.http.expect(
        200,
        "get",
        &study_path("/curation"),
        Some(&t.curator.token),
        None,
    );
    let missing: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case_id"].as_str().unwrap())
        .filter(|id| !held.contains_key(*id))
        .collect();
    assert_eq!(missing, [added_case]);

    // The copy downloaded again keeps the one here up: the new case with its series' geometry
    // and ground truth, every case held with the key it had, the curator still acting, every
    // image the one imported, read from the new download (the first one's folder is gone), and
    // the audit chain whole.
    let second_package = work.path().join("curation-2.tar");
    download_curation_copy(&t.http, &t.curator, &second_package);
    let second =
        cases::package::import_curation_package(&mut store, &second_package, &NoProgress).unwrap();
    assert_eq!(
        (second.cases, second.cases_added),
        (first.cases + 1, 1),
        "{second:?}"
    );
    assert!(second.images_dir.is_dir() && !first.images_dir.exists());
    let now = case_keys(&store);
    for (case_id, key) in &held {
        assert_eq!(now.get(case_id), Some(key), "{case_id} kept its key");
    }
    assert!(now.contains_key(added_case), "{now:?}");
    assert_eq!(store.current_rater().unwrap().map(|r| r.id), Some(curator));
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let (series, geometry): (i64, i64) = conn
        .query_row(
            "SELECT count(*), count(g.series) FROM series s JOIN cases c ON s.case_ref = c.id
             LEFT JOIN series_geometry g ON g.series = s.id WHERE c.case_id = ?1",
            [added_case],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(series > 0);
    assert_eq!(geometry, series, "the added case's geometry is stored");
    let series_keys: Vec<i64> = conn
        .prepare("SELECT id FROM series")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for key in series_keys {
        store.series_files(key).unwrap().verify().unwrap();
    }
    let history = cases::curation::history(&store, DEMO_STUDY_ID, added_case).unwrap();
    assert_eq!(
        history[0].truth.diagnosis,
        case["ground_truth"]["diagnosis"].as_str().unwrap()
    );
    assert!(matches!(
        cases::store::audit::verify(&conn).unwrap(),
        cases::store::audit::Verdict::Intact { .. }
    ));
    let imports: Vec<i64> = conn
        .prepare(
            "SELECT json_extract(after_json, '$.cases_added') FROM audit_log
             WHERE action = 'import curation package' ORDER BY id",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(imports, [first.cases as i64, 1]);
}

/// Planted in the diagnosis of the version the test finalises.
const FINAL_DIAGNOSIS: &str = "FINAL-DX-7f3a";

#[test]
fn curation_checks_marks_inside_the_volume_and_a_final_version_is_what_the_lead_and_a_rater_see() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let http = &t.http;
    let first = queue(http, &t.rater_a)[0]["assignment"].as_i64().unwrap();
    let item_path = study_path(&format!("/items/{first}"));
    let item = http.expect(200, "get", &item_path, Some(&t.rater_a.token), None);
    let series = item["series"][0]["series_id"].as_str().unwrap().to_owned();
    // The item names its case by its code; the curator's paths name a case by its id: one with
    // a series of the item's series id, so the same mark is outside a volume for both.
    let case_id = distinct(
        &work.path().join("local.sqlite"),
        &format!(
            "SELECT c.case_id FROM cases c JOIN series s ON s.case_ref = c.id
             WHERE s.series_id = '{series}' ORDER BY c.case_id LIMIT 1"
        ),
    )[0]
    .clone();
    let versions = study_path(&format!("/cases/{case_id}/curation/versions"));
    let far_off = json!({
        "series_id": series, "kind": "point", "plane": "axial",
        "points_lps_mm": [[5000.0, 5000.0, 5000.0]],
    });

    // A lesion marked far outside the series' volume: 422 naming the field, nothing stored.
    let latest = latest_of_main(http, &t.curator, &case_id);
    let mut truth = latest["truth"].clone();
    truth["lesions"] =
        json!([{ "id": "far", "description": "off the images", "marks": [far_off.clone()] }]);
    let refused = http.expect(
        422,
        "post",
        &versions,
        Some(&t.curator.token),
        Some(json!({ "edit_id": edit_id(), "branch": "main", "based_on": latest["version"], "truth": truth })),
    );
    assert_eq!(refused["code"], "invalid", "{refused}");
    assert_eq!(
        refused["field"], "lesions[0].marks[0].points_lps_mm",
        "{refused}"
    );
    assert_eq!(
        refused["problems"].as_array().unwrap().len(),
        1,
        "{refused}"
    );
    let audited = |action: &str| {
        t.cluster.psql(
            "team",
            &format!("SELECT count(*) FROM audit_log WHERE action = '{action}'"),
        )
    };
    assert_eq!(audited("ground_truth.version").trim(), "0");

    // Saved and submitted by the curator, finalised by the lead: the case's ground truth.
    let mut truth = latest["truth"].clone();
    truth["diagnosis"] = json!(FINAL_DIAGNOSIS);
    let saved = http.expect(
        201,
        "post",
        &versions,
        Some(&t.curator.token),
        Some(json!({ "edit_id": edit_id(), "branch": "main", "based_on": latest["version"], "truth": truth })),
    );
    let version = saved["version"].as_i64().unwrap();
    assert_eq!(version, latest["version"].as_i64().unwrap() + 1);
    let submitted = http.expect(
        200,
        "post",
        &format!("{versions}/{version}/submit"),
        Some(&t.curator.token),
        Some(json!({ "edit_id": edit_id() })),
    );
    assert_eq!(submitted["status"], "in_review", "{submitted}");
    let changes = http.expect(
        409,
        "post",
        &format!("{versions}/{version}/review"),
        Some(&t.lead.token),
        Some(json!({ "edit_id": edit_id(), "decision": "changes_requested", "comment": "" })),
    );
    assert_eq!(changes["code"], "refused", "{changes}");
    let finalised = http.expect(
        200,
        "post",
        &format!("{versions}/{version}/review"),
        Some(&t.lead.token),
        Some(json!({ "edit_id": edit_id(), "decision": "finalised", "comment": "" })),
    );
    assert_eq!(finalised["status"], "final", "{finalised}");
    assert_eq!(audited("ground_truth.version").trim(), "1");
    assert_eq!(audited("ground_truth.review").trim(), "2");
    let ground_truth = http.expect(
        200,
        "get",
        &study_path(&format!("/cases/{case_id}/ground-truth")),
        Some(&t.curator.token),
        None,
    );
    assert_eq!(
        ground_truth["ground_truth"]["diagnosis"], FINAL_DIAGNOSIS,
        "{ground_truth}"
    );

    // A rater's label marked outside the volume: 422 naming the field, as in the app.
    let category = item["taxonomy"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["anchor"] != "text")
        .expect("a category pointed at on the image")["code"]
        .clone();
    let mut labelled = complete_save(&item["rubric"]);
    labelled["rating"]["labels"] =
        json!([{ "category": category, "severity": 1, "mark": far_off }]);
    let edits = format!("{item_path}/edits");
    let rater = Some(t.rater_a.token.as_str());
    let refused = http.expect(
        422,
        "post",
        &edits,
        rater,
        Some(json!({ "edit_id": edit_id(), "base_version": 0, "edit": labelled })),
    );
    assert_eq!(
        refused["field"], "labels[0].mark.points_lps_mm",
        "{refused}"
    );

    // Rated, submitted and revealed: the rater sees the finalised version.
    let mut version = 0;
    for edit in [
        complete_save(&item["rubric"]),
        json!({ "kind": "submit" }),
        json!({ "kind": "reveal" }),
    ] {
        let ack = http.expect(
            200,
            "post",
            &edits,
            rater,
            Some(json!({ "edit_id": edit_id(), "base_version": version, "edit": edit })),
        );
        version = ack["version"].as_i64().unwrap();
    }
    let revealed = http.expect(200, "get", &item_path, rater, None);
    assert_eq!(
        revealed["ground_truth"]["diagnosis"], FINAL_DIAGNOSIS,
        "{revealed}"
    );
    assert_eq!(
        revealed["ground_truth_version"], finalised["version"],
        "the version the revealed ground truth is: {revealed}"
    );
}

/// The seconds of a reply's `Retry-After`, if it has one.
fn retry_after(head: &str) -> Option<u64> {
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if name.eq_ignore_ascii_case("retry-after") {
            value.trim().parse().ok()
        } else {
            None
        }
    })
}

fn login_body(username: &str, password: &str) -> Option<Value> {
    Some(json!({ "username": username, "password": password }))
}

fn audited(t: &Team, action: &str, entity: &str) -> i64 {
    t.cluster
        .psql(
            "team",
            &format!(
                "SELECT count(*) FROM audit_log WHERE action = '{action}' AND entity = '{entity}'"
            ),
        )
        .parse()
        .unwrap()
}

#[test]
fn a_lead_lists_revokes_and_resets_and_a_member_changes_their_password_and_ends_sessions() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    let http = &t.http;
    let lead = Some(t.lead.token.as_str());

    // Invitations, each with what became of it; an open one revoked no longer admits anyone.
    let late = http.expect(
        200,
        "post",
        &study_path("/invitations"),
        lead,
        Some(json!({
            "username": "late-rater", "role": "rater", "site": "Hospital C",
            "clinical_role": "resident",
        })),
    );
    let late_code = late["code"].as_str().unwrap().to_owned();
    let listed = http.expect(200, "get", &study_path("/invitations"), lead, None);
    assert!(
        !listed.to_string().contains(&late_code),
        "a code is shown once"
    );
    let invitation = |listed: &Value, username: &str| -> Value {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["username"] == username)
            .unwrap_or_else(|| panic!("{username} in {listed}"))
            .clone()
    };
    let open = invitation(&listed, "late-rater");
    assert_eq!(
        (open["state"].as_str(), open["clinical_role"].as_str()),
        (Some("open"), Some("resident")),
        "{open}"
    );
    assert_eq!(open["invited_by"], "lead");
    assert_eq!(invitation(&listed, "rater-a")["state"], "accepted");
    let late_id = open["id"].as_i64().unwrap();
    let revoke = study_path(&format!("/invitations/{late_id}"));
    http.expect(204, "delete", &revoke, lead, None);
    http.expect(204, "delete", &revoke, lead, None);
    assert_eq!(audited(&t, "revoke invitation", "invitation:late-rater"), 1);
    http.expect(
        404,
        "post",
        "/api/invitations/accept",
        None,
        Some(json!({ "code": late_code, "password": "the late rater's password" })),
    );
    let relisted = http.expect(200, "get", &study_path("/invitations"), lead, None);
    let revoked = invitation(&relisted, "late-rater");
    assert_eq!(revoked["state"], "revoked");
    assert!(revoked["closed_at"].is_string(), "{revoked}");
    let accepted_id = invitation(&relisted, "rater-a")["id"].as_i64().unwrap();
    let refused = http.expect(
        409,
        "delete",
        &study_path(&format!("/invitations/{accepted_id}")),
        lead,
        None,
    );
    assert!(
        refused["message"].as_str().unwrap().contains("accepted"),
        "{refused}"
    );

    // Each login is a session of its own, listed with its client; ending one ends only it.
    let browser = Http::with_headers(&t.server.base, &["User-Agent: Test browser/1.0"]);
    let second = browser.expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-a", &t.rater_a.password),
    )["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mine = http.expect(200, "get", "/api/sessions", Some(&t.rater_a.token), None);
    let mine = mine.as_array().unwrap();
    assert_eq!(mine.len(), 2, "{mine:?}");
    assert!(!serde_json::to_string(mine).unwrap().contains(&second));
    let current: Vec<bool> = mine
        .iter()
        .map(|s| s["current"].as_bool().unwrap())
        .collect();
    assert_eq!(current, [false, true], "newest first: {mine:?}");
    assert_eq!(mine[0]["client"], "Test browser/1.0");
    assert_eq!(mine[0]["address"], "127.0.0.1");
    let second_id = mine[0]["id"].as_i64().unwrap();
    let end = format!("/api/sessions/{second_id}");
    http.expect(404, "delete", &end, Some(&t.rater_b.token), None);
    http.expect(200, "get", "/api/me", Some(&second), None);
    http.expect(204, "delete", &end, Some(&t.rater_a.token), None);
    http.expect(401, "get", "/api/me", Some(&second), None);
    http.expect(200, "get", "/api/me", Some(&t.rater_a.token), None);

    // A password change checks the current one and ends every other session.
    let third = http.expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-a", &t.rater_a.password),
    )["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let change =
        |current: &str, new: &str| json!({ "current_password": current, "new_password": new });
    http.expect(
        403,
        "post",
        "/api/password",
        Some(&t.rater_a.token),
        Some(change("not the right one", "a new and long password")),
    );
    let short = http.expect(
        422,
        "post",
        "/api/password",
        Some(&t.rater_a.token),
        Some(change(&t.rater_a.password, "short")),
    );
    assert_eq!(short["field"], "new_password", "{short}");
    let new_a = "rater a's new long password";
    http.expect(
        204,
        "post",
        "/api/password",
        Some(&t.rater_a.token),
        Some(change(&t.rater_a.password, new_a)),
    );
    http.expect(401, "get", "/api/me", Some(&third), None);
    http.expect(200, "get", "/api/me", Some(&t.rater_a.token), None);
    http.expect(
        401,
        "post",
        "/api/login",
        None,
        login_body("rater-a", &t.rater_a.password),
    );
    http.expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-a", new_a),
    );
    assert_eq!(audited(&t, "change password", "account:rater-a"), 1);

    // A lead's reset ends the member's sessions and their old password at once; the code sets
    // a new one, once. Only a lead, never their own, never a stranger's.
    let reset_path = study_path("/members/rater-b/password-reset");
    http.expect(403, "post", &reset_path, Some(&t.rater_a.token), None);
    http.expect(403, "post", &reset_path, Some(&t.curator.token), None);
    let own = http.expect(
        422,
        "post",
        &study_path("/members/lead/password-reset"),
        lead,
        None,
    );
    assert!(own["message"].as_str().unwrap().contains("/api/password"));
    let reset = http.expect(200, "post", &reset_path, lead, None);
    let reset_code = reset["code"].as_str().unwrap().to_owned();
    http.expect(401, "get", "/api/me", Some(&t.rater_b.token), None);
    http.expect(
        401,
        "post",
        "/api/login",
        None,
        login_body("rater-b", &t.rater_b.password),
    );
    let new_b = "rater b's brand new password";
    let accept = json!({ "code": reset_code, "password": new_b });
    http.expect(
        204,
        "post",
        "/api/password-resets/accept",
        None,
        Some(accept.clone()),
    );
    http.expect(
        404,
        "post",
        "/api/password-resets/accept",
        None,
        Some(accept),
    );
    http.expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-b", new_b),
    );
    assert_eq!(audited(&t, "reset password", "account:rater-b"), 1);
    assert_eq!(
        audited(&t, "set password after reset", "account:rater-b"),
        1
    );

    // Someone with a role in a study this lead does not lead: their code would open it.
    t.cluster.psql(
        "team",
        "INSERT INTO studies (study_id, title, description, rubric, taxonomy)
             VALUES ('other-study', 'Another study', '', '{}', '{}');
         INSERT INTO memberships (account, study, role)
             SELECT a.id, s.id, 'rater' FROM accounts a, studies s
             WHERE a.username = 'curator' AND s.study_id = 'other-study'",
    );
    let elsewhere = http.expect(
        403,
        "post",
        &study_path("/members/curator/password-reset"),
        lead,
        None,
    );
    assert!(
        elsewhere["message"]
            .as_str()
            .unwrap()
            .contains("do not lead"),
        "{elsewhere}"
    );
    http.expect(200, "get", "/api/me", Some(&t.curator.token), None);

    // No password or code in the log or the audit trail.
    let log = t.server.log();
    let audit = t
        .cluster
        .psql("team", "SELECT string_agg(after::text, ' ') FROM audit_log");
    for secret in [
        late_code.as_str(),
        reset_code.as_str(),
        new_a,
        new_b,
        &t.rater_a.password,
        &second,
    ] {
        assert!(!log.contains(secret), "a secret in the log");
        assert!(!audit.contains(secret), "a secret in the audit log");
    }
}

#[test]
fn logins_are_throttled_per_account_and_per_address_and_a_restarting_database_is_a_503() {
    let work = tempfile::tempdir().unwrap();
    let t = team(work.path());
    // Behind a proxy the server trusts, each client's address is the one it forwards.
    let proxy = Server::start_with(
        &t.database,
        &["--listen", "127.0.0.1:0", "--trusted-proxy", "127.0.0.1"],
    );
    let from =
        |address: &str| Http::with_headers(&proxy.base, &[&format!("X-Forwarded-For: {address}")]);

    // Per account: five wrong passwords, then even the right one waits, from any address.
    let guesser = from("10.0.0.1");
    for n in 0..5 {
        guesser.expect(
            401,
            "post",
            "/api/login",
            None,
            login_body("rater-a", &format!("guess number {n} of five")),
        );
    }
    let (status, head, body) = guesser.call_with_head(
        "post",
        "/api/login",
        None,
        login_body("rater-a", &t.rater_a.password).as_ref(),
    );
    assert_eq!(status, 429, "{body}");
    let wait = retry_after(&head).expect("a Retry-After");
    assert!((1..=15 * 60).contains(&wait), "{head}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["code"], "too_many_attempts", "{body}");
    from("10.0.0.2").expect(
        429,
        "post",
        "/api/login",
        None,
        login_body("rater-a", &t.rater_a.password),
    );
    // Another account from the guesser's address is heard.
    guesser.expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-b", &t.rater_b.password),
    );
    assert_eq!(audited(&t, "throttle logins", "account:rater-a"), 1);
    // A session made before goes on.
    t.http
        .expect(200, "get", "/api/me", Some(&t.rater_a.token), None);

    // Per address: fifty wrong passwords for as many usernames, then nobody from it is heard,
    // while the same account from elsewhere is.
    let sprayer = from("10.0.0.66");
    for n in 0..50 {
        sprayer.expect(
            401,
            "post",
            "/api/login",
            None,
            login_body(&format!("guess-{n}"), "a password guessed"),
        );
    }
    sprayer.expect(
        429,
        "post",
        "/api/login",
        None,
        login_body("rater-b", &t.rater_b.password),
    );
    from("10.0.0.3").expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-b", &t.rater_b.password),
    );
    assert_eq!(audited(&t, "throttle logins", "address:10.0.0.66"), 1);
    // A server that trusts no proxy believes no X-Forwarded-For: its client is 127.0.0.1.
    Http::with_headers(&t.server.base, &["X-Forwarded-For: 10.0.0.66"]).expect(
        200,
        "post",
        "/api/login",
        None,
        login_body("rater-b", &t.rater_b.password),
    );

    // PostgreSQL restarting: a 503 with Retry-After, which a client sends again; then back.
    t.cluster.stop();
    for (method, path, token, body) in [
        ("get", "/api/me", Some(t.rater_b.token.as_str()), None),
        (
            "post",
            "/api/login",
            None,
            login_body("rater-b", &t.rater_b.password),
        ),
    ] {
        let (status, head, reply) = t.http.call_with_head(method, path, token, body.as_ref());
        assert_eq!(status, 503, "{method} {path}: {reply}");
        assert_eq!(retry_after(&head), Some(5), "{head}");
        assert!(reply.contains("\"unavailable\""), "{reply}");
    }
    t.cluster.start_again();
    let back = (0..100).find_map(|_| {
        let (status, _) = t.http.call("get", "/api/me", Some(&t.rater_b.token), None);
        if status == 200 {
            Some(status)
        } else {
            assert_eq!(status, 503, "while PostgreSQL comes back");
            std::thread::sleep(std::time::Duration::from_millis(100));
            None
        }
    });
    assert_eq!(back, Some(200), "the server is back with PostgreSQL");
}
