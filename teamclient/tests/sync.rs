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
use teamclient::sync::{Outbox, SyncControl, SyncState, SyncStatus};
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
    let outbox: Arc<dyn Outbox> = store.clone();
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
