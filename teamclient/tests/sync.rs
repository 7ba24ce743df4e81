//! The sync worker against the real server (in this process) on a real PostgreSQL cluster, with
//! a TCP relay between them that the test cuts as a lost network would: edits made while the
//! server is unreachable are kept, sent once it is reachable again without anyone doing
//! anything, in their order, each stored once; a resend after a crash between sending and
//! recording is stored once; a conflict stops that item's queue and loses nothing.

// Each test file uses its part of the shared support.
#[allow(dead_code)]
#[path = "support/team.rs"]
mod team;

use cases::progress::NoProgress;
use cases::rating::{PlanSpec, RaterRole, RatingEdit};
use cases::store::Store;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use team::{password, Relay, TeamServer, STUDY};
use teamclient::sync::{LocalCopy, SyncControl, SyncState, SyncStatus};
use teamclient::{ServerUrl, TeamClient};

/// The rater's local database with their queue as a package the server built would give it:
/// a rater package exported from `lead_db` (the demo study the server was loaded from) for
/// `rater`, each item given the server's assignment id of the same position, imported into a
/// database of its own.
fn linked_store(work: &Path, lead_db: &Path, rater: &str, server_assignments: &[i64]) -> Store {
    let mut lead = Store::open(lead_db).unwrap();
    let id = lead
        .create_rater(rater, RaterRole::Neuroradiologist, Some(5))
        .unwrap()
        .id;
    lead.create_assignment_plan(
        id,
        &PlanSpec {
            study_id: STUDY.into(),
            name: format!("{rater} queue"),
            seed: 7,
            raters: vec![id],
            overlap_share: 0.0,
            responses_per_rater: Some(server_assignments.len() as u32),
            repeat_share: 0.0,
            repeat_after_days: 0,
            stratify_by: Vec::new(),
        },
    )
    .unwrap();
    let exported = work.join(format!("{rater}.tar"));
    cases::package::export_rater_package(
        &mut lead,
        STUDY,
        rater,
        "Hospital B",
        &exported,
        &NoProgress,
    )
    .unwrap();
    let linked = work.join(format!("{rater}-linked.tar"));
    link_items(&exported, &linked, server_assignments);
    let mut store = Store::open(&work.join(rater).join("rater.sqlite")).unwrap();
    cases::package::import_rater_package(&mut store, &linked, &NoProgress).unwrap();
    store
}

/// `package` rewritten with `server_assignment` on each item of `items.jsonl` (in item order),
/// the manifest's digest of that member updated.
fn link_items(package: &Path, out: &Path, server_assignments: &[i64]) {
    use sha2::{Digest, Sha256};
    let mut archive = tar::Archive::new(std::fs::File::open(package).unwrap());
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        members.push((name, bytes));
    }
    let items: String = {
        let (_, bytes) = members.iter().find(|(n, _)| n == "items.jsonl").unwrap();
        std::str::from_utf8(bytes)
            .unwrap()
            .lines()
            .zip(server_assignments)
            .map(|(line, id)| {
                let mut item: serde_json::Value = serde_json::from_str(line).unwrap();
                item["server_assignment"] = (*id).into();
                item.to_string() + "\n"
            })
            .collect()
    };
    for (name, bytes) in &mut members {
        if name == "items.jsonl" {
            *bytes = items.clone().into_bytes();
        }
    }
    for (name, bytes) in &mut members {
        if name == "manifest.json" {
            let mut manifest: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            for member in manifest["members"].as_array_mut().unwrap() {
                if member["path"] == "items.jsonl" {
                    member["bytes"] = items.len().into();
                    member["sha256"] = format!("{:x}", Sha256::digest(items.as_bytes())).into();
                }
            }
            *bytes = serde_json::to_vec(&manifest).unwrap();
        }
    }
    let mut builder = tar::Builder::new(std::fs::File::create(out).unwrap());
    for (name, bytes) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, &name, bytes.as_slice())
            .unwrap();
    }
    builder.finish().unwrap();
}

fn comment(text: &str) -> RatingEdit {
    RatingEdit {
        comment: text.to_owned(),
        seconds_on_task: 10.0,
        ..serde_json::from_str("{}").unwrap()
    }
}

/// The statuses the worker reported, for the checks on them.
#[derive(Default)]
struct Reports(Mutex<Vec<SyncStatus>>);

impl Reports {
    fn last(&self) -> Option<SyncStatus> {
        self.0.lock().unwrap().last().cloned()
    }
}

async fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..600 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edits_made_offline_are_sent_in_order_once_and_a_conflict_keeps_the_local_work() {
    let work = tempfile::tempdir().unwrap();
    let team = TeamServer::start(work.path()).await;
    team.enrol_rater("rater-a", "Hospital B", 3).await;
    let relay = Relay::start(team.address).await;
    let mut client = TeamClient::new(ServerUrl::parse(&relay.base()).unwrap()).unwrap();
    client.login("rater-a", &password("rater-a")).await.unwrap();
    let queue: Vec<i64> = client
        .queue(STUDY)
        .await
        .unwrap()
        .iter()
        .map(|e| e.assignment)
        .collect();
    let store = tokio::task::block_in_place(|| {
        linked_store(
            work.path(),
            &work.path().join("local.sqlite"),
            "rater-a",
            &queue,
        )
    });
    let rater = store
        .current_rater()
        .unwrap()
        .map(|r| r.id)
        .unwrap_or_else(|| {
            store
                .raters()
                .unwrap()
                .into_iter()
                .find(|r| r.name == "rater-a")
                .unwrap()
                .id
        });
    let local: Vec<i64> = store
        .reading_queue(rater, STUDY)
        .unwrap()
        .iter()
        .map(|i| i.assignment)
        .collect();
    let store = Arc::new(Mutex::new(store));

    // Item 1 saved while the server is reachable: on the server, once.
    let reports = Arc::new(Reports::default());
    let control = Arc::new(SyncControl::default());
    let outbox: Arc<dyn LocalCopy> = store.clone();
    let worker = tokio::spawn(teamclient::sync::run(
        client.clone(),
        outbox,
        Arc::clone(&control),
        {
            let reports = Arc::clone(&reports);
            move |status| reports.0.lock().unwrap().push(status)
        },
    ));
    store
        .lock()
        .unwrap()
        .save_rating(rater, local[0], &comment("item 1"))
        .unwrap();
    control.wake();
    wait_for("item 1 on the server", || {
        team.psql(&format!(
            "SELECT count(*) FROM ratings WHERE assignment = {}",
            queue[0]
        )) == "1"
    })
    .await;

    // The network goes: items 2 and 3 (two saves of item 2) are kept and counted as waiting.
    relay.block(true).await;
    for (item, text) in [(1, "item 2 first"), (1, "item 2 second"), (2, "item 3")] {
        store
            .lock()
            .unwrap()
            .save_rating(rater, local[item], &comment(text))
            .unwrap();
        control.wake();
    }
    wait_for("the worker to say three changes wait", || {
        reports
            .last()
            .is_some_and(|s| s.state == SyncState::Offline && s.waiting == 3)
    })
    .await;
    assert_eq!(
        team.psql(&format!(
            "SELECT count(*) FROM ratings WHERE assignment IN ({}, {})",
            queue[1], queue[2]
        )),
        "0",
        "nothing reached the server while the relay was cut"
    );

    // The network returns: everything is sent without anyone doing anything, in order, once.
    relay.block(false).await;
    wait_for("everything on the server", || {
        reports
            .last()
            .is_some_and(|s| s.state == SyncState::Synced && s.waiting == 0)
    })
    .await;
    assert_eq!(
        team.psql(&format!(
            "SELECT assignment, version, state->'scores'->>'comment' FROM ratings
             WHERE assignment IN ({}, {}, {}) ORDER BY assignment",
            queue[0], queue[1], queue[2]
        )),
        format!(
            "{}|1|item 1\n{}|2|item 2 second\n{}|1|item 3",
            queue[0], queue[1], queue[2]
        )
    );
    assert_eq!(
        team.psql("SELECT count(*), count(DISTINCT edit_id) FROM applied_edits"),
        "4|4",
        "each edit stored once"
    );
    let order = team.psql(&format!(
        "SELECT after->'state'->'scores'->>'comment' FROM audit_log
         WHERE entity = 'assignment:{}' ORDER BY id",
        queue[1]
    ));
    assert_eq!(
        order, "item 2 first\nitem 2 second",
        "sent in the order made"
    );

    // A crash between sending and recording: the row is sent again with the same edit id and
    // base version, and the server stores it once.
    let sent = {
        let store = store.lock().unwrap();
        store
            .read()
            .query_row(
                "SELECT id FROM team_outbox ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
    };
    store
        .lock()
        .unwrap()
        .write(|w| {
            w.tx()
                .execute(
                    "UPDATE team_outbox SET sent_at = NULL, server_version = NULL WHERE id = ?1",
                    [sent],
                )
                .unwrap();
            Ok(())
        })
        .unwrap();
    control.wake();
    wait_for("the resend recorded", || {
        store
            .lock()
            .unwrap()
            .read()
            .query_row(
                "SELECT sent_at IS NOT NULL FROM team_outbox WHERE id = ?1",
                [sent],
                |r| r.get::<_, bool>(0),
            )
            .unwrap()
    })
    .await;
    assert_eq!(
        team.psql("SELECT count(*) FROM applied_edits"),
        "4",
        "the resend is stored once"
    );

    // The rater on a second machine saved item 1 on the server: this machine's next save of it
    // is a conflict; the queue of item 1 stops with its work kept, the other items go on.
    let mut second = TeamClient::new(ServerUrl::parse(&team.base).unwrap()).unwrap();
    second.login("rater-a", &password("rater-a")).await.unwrap();
    second
        .edit(
            STUDY,
            queue[0],
            &teamclient::EditRequest {
                edit_id: "second-machine-1".into(),
                base_version: 1,
                edit: cases::app::team::TeamEdit::Save {
                    rating: cases::app::team::TeamRatingState {
                        scores: comment("from the second machine"),
                        labels: Vec::new(),
                    },
                },
            },
        )
        .await
        .unwrap();
    store
        .lock()
        .unwrap()
        .save_rating(rater, local[0], &comment("item 1 again here"))
        .unwrap();
    store
        .lock()
        .unwrap()
        .save_rating(rater, local[2], &comment("item 3 again"))
        .unwrap();
    control.wake();
    wait_for("the conflict reported", || {
        reports
            .last()
            .is_some_and(|s| s.state == SyncState::Synced && s.waiting == 0 && s.stopped.len() == 1)
    })
    .await;
    let status = reports.last().unwrap();
    assert_eq!(status.stopped[0].assignment, local[0]);
    assert_eq!(status.stopped[0].position, 1);
    assert!(status.stopped[0].reason.contains("kept here"), "{status:?}");
    assert_eq!(
        team.psql(&format!(
            "SELECT version, state->'scores'->>'comment' FROM ratings WHERE assignment = {}",
            queue[0]
        )),
        "2|from the second machine",
        "the server's newer version is not overwritten"
    );
    assert_eq!(
        team.psql(&format!(
            "SELECT state->'scores'->>'comment' FROM ratings WHERE assignment = {}",
            queue[2]
        )),
        "item 3 again",
        "the other items' queues go on"
    );
    let kept = store.lock().unwrap().reading_item(rater, local[0]).unwrap();
    assert_eq!(
        kept.rating.unwrap().comment,
        "item 1 again here",
        "the local work is kept"
    );

    control.stop();
    worker.await.unwrap();
}

/// The lead's lock of `username`'s ground truth on the server.
async fn set_reveal_lock(team: &TeamServer, username: &str, locked: bool) {
    let response = reqwest::Client::new()
        .put(format!(
            "{}/api/studies/{STUDY}/raters/{username}/reveal-lock",
            team.base
        ))
        .bearer_auth(&team.lead_token)
        .json(&serde_json::json!({ "locked": locked }))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_a_rater_reads_the_leads_lock_new_items_and_a_new_rubric_arrive_by_themselves() {
    let work = tempfile::tempdir().unwrap();
    let team = TeamServer::start(work.path()).await;
    team.enrol_rater("rater-r", "Hospital B", 2).await;
    let mut client = TeamClient::new(ServerUrl::parse(&team.base).unwrap()).unwrap();
    client.login("rater-r", &password("rater-r")).await.unwrap();
    // The rater's copy as the app makes it: the package the server builds, imported.
    let package = work.path().join("rater-r.tar");
    client
        .download_package(STUDY, None, &package, &NoProgress)
        .await
        .unwrap();
    let mut store = Store::open(&work.path().join("rater-r.sqlite")).unwrap();
    let rater = tokio::task::block_in_place(|| {
        let imported =
            cases::package::import_rater_package(&mut store, &package, &NoProgress).unwrap();
        let rater = store
            .raters()
            .unwrap()
            .into_iter()
            .find(|r| r.name == imported.rater)
            .unwrap();
        store.set_current_rater(rater.id).unwrap().id
    });
    let local_queue = |store: &Store| -> Vec<i64> {
        store
            .reading_queue(rater, STUDY)
            .unwrap()
            .iter()
            .map(|i| i.assignment)
            .collect()
    };
    let first = local_queue(&store);
    assert_eq!(first.len(), 2);
    let store = Arc::new(Mutex::new(store));
    let news: Arc<Mutex<Vec<String>>> = Arc::default();
    let copy: Arc<dyn LocalCopy> = Arc::new(Announcing {
        store: Arc::clone(&store),
        news: Arc::clone(&news),
    });
    let control = Arc::new(SyncControl::default());
    let reports = Arc::new(Reports::default());
    let worker = tokio::spawn(teamclient::sync::run(
        client.clone(),
        copy,
        Arc::clone(&control),
        {
            let reports = Arc::clone(&reports);
            move |status| reports.0.lock().unwrap().push(status)
        },
    ));
    wait_for("the first refresh", || {
        reports.last().is_some_and(|s| s.state == SyncState::Synced)
    })
    .await;

    // The rater rates the first item; the lead adds two items to the queue meanwhile: they
    // arrive without anyone reopening anything, after the ones held, the rating kept.
    {
        let mut store = store.lock().unwrap();
        store
            .save_rating(rater, first[0], &comment("read before the top-up"))
            .unwrap();
    }
    post_top_up(&team, "rater-r", 2).await;
    control.refresh();
    wait_for("the topped-up items here", || {
        local_queue(&store.lock().unwrap()).len() == 4
    })
    .await;
    let now = local_queue(&store.lock().unwrap());
    assert_eq!(&now[..2], &first[..], "the held items keep their place");
    let kept: String = store
        .lock()
        .unwrap()
        .read()
        .query_row(
            "SELECT comment FROM ratings g JOIN assignments a ON a.response = g.response
               AND a.rater = g.rater AND a.read_no = g.read_no WHERE a.id = ?1",
            [first[0]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, "read before the top-up");

    // The lead locks the rater: known here, so reopening a submitted rating is refused with no
    // server asked (the relay-free client is not even used by the refusal).
    set_reveal_lock(&team, "rater-r", true).await;
    control.refresh();
    wait_for("the lock here", || {
        news.lock()
            .unwrap()
            .iter()
            .any(|n| n.contains("lock Some(true)"))
    })
    .await;
    let item = store.lock().unwrap().reading_item(rater, first[1]).unwrap();
    assert_eq!(
        item.reopen_refused,
        Some(cases::rating::ReopenLock::LockedByLead)
    );

    // The lead drops a rubric dimension and re-imports: the server's rubric is taken here.
    let local = work.path().join("local.sqlite");
    let dropped = tokio::task::block_in_place(|| {
        let lead = cases::app::Session::command_line();
        let mut lead_store = Store::open(&local).unwrap();
        let mut moved = cases::app::rubric::current(&lead_store, &lead, STUDY)
            .unwrap()
            .rubric;
        let dropped = moved.dimensions.pop().unwrap().id;
        cases::app::rubric::save(&mut lead_store, &lead, STUDY, &moved).unwrap();
        drop(lead_store);
        server::import_local_study(&team.cluster.url(team.database), &local, STUDY, None).unwrap();
        dropped
    });
    control.refresh();
    wait_for("the server's rubric here", || {
        news.lock()
            .unwrap()
            .iter()
            .any(|n| n.contains("rubric Some(2)"))
    })
    .await;
    let rubric = store
        .lock()
        .unwrap()
        .reading_item(rater, first[0])
        .unwrap()
        .rubric;
    assert!(
        rubric.dimensions.iter().all(|d| d.id != dropped),
        "{dropped} is still in the rubric here"
    );
    let audited: String = store
        .lock()
        .unwrap()
        .read()
        .query_row(
            "SELECT group_concat(actor || ' ' || action, '; ') FROM audit_log
             WHERE actor = 'team server'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(audited.contains("team.reveal_lock"), "{audited}");

    control.stop();
    worker.await.unwrap();
}

async fn post_top_up(team: &TeamServer, username: &str, per_rater: u32) {
    let topped = team::post(
        &team.base,
        &format!("/api/studies/{STUDY}/top-up"),
        Some(&team.lead_token),
        serde_json::json!({ "raters": [username], "per_rater": per_rater }),
    )
    .await;
    assert_eq!(topped["raters"][0]["added"], per_rater, "{topped}");
}

/// The store as the worker's local copy, its news written down as the window would show them.
struct Announcing {
    store: Arc<Mutex<Store>>,
    news: Arc<Mutex<Vec<String>>>,
}

impl LocalCopy for Announcing {
    fn next_to_send(&self) -> Result<Option<cases::rating::outbox::OutboxEdit>, String> {
        self.store.next_to_send()
    }
    fn mark_sent(&self, row: i64, server_version: i64) -> Result<(), String> {
        self.store.mark_sent(row, server_version)
    }
    fn mark_stopped(&self, row: i64, reason: &str) -> Result<(), String> {
        self.store.mark_stopped(row, reason)
    }
    fn status(&self) -> Result<cases::rating::outbox::OutboxStatus, String> {
        self.store.status()
    }
    fn studies(&self) -> Result<Vec<String>, String> {
        self.store.studies()
    }
    fn learn(
        &self,
        study: &str,
        membership: &teamclient::Membership,
        queue: &[teamclient::QueueEntry],
    ) -> Result<cases::app::team::ServerNews, String> {
        self.store.learn(study, membership, queue)
    }
    fn follow_rubric(
        &self,
        study: &str,
        rubric: &cases::model::Rubric,
        version: u32,
    ) -> Result<bool, String> {
        self.store.follow_rubric(study, rubric, version)
    }
    fn top_up_file(&self, study: &str) -> Result<std::path::PathBuf, String> {
        self.store.top_up_file(study)
    }
    fn import_top_up(&self, study: &str, package: &Path) -> Result<u32, String> {
        self.store.import_top_up(study, package)
    }
    fn announce_news(&self, study: &str, news: &cases::app::team::ServerNews, added: u32) {
        self.news.lock().unwrap().push(format!(
            "{study}: lock {:?}, rubric {:?}, added {added}",
            news.lock_changed, news.rubric_behind
        ));
    }
}
