//! Multi-site rater packages on the real demo study: a lead's database and a remote rater's, two
//! SQLite files, with the package files between them.

use cases::app::permissions::{Action, StudyRole};
use cases::app::team::wire::{Membership, QueueEntry};
use cases::app::team::{TeamEdit, TeamRating, TeamRatingState};
use cases::import::import_bundle_dir;
use cases::marks::{Mark, MarkKind, Plane};
use cases::package::{
    export_rater_package, export_results_package, import_rater_package, imported_rater_packages,
    merge_results_package, Conflict, MergeReport, RaterPackageExport,
};
use cases::progress::NoProgress;
use cases::rating::outbox::{self, Resolution, RevealDelivery};
use cases::rating::{LabelEdit, PlanSpec, RaterRole, RatingEdit, SpanText, DEMO_STUDY_ID};
use cases::rating::{RatingStatus, ReopenLock};
use cases::store::Store;
use cases::Error;
use rusqlite::types::ValueRef;
use rusqlite::OptionalExtension;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

#[path = "support/demo_study.rs"]
mod support;

const RATER: &str = "Dr Remote";
const OTHER: &str = "Dr Other OTHER-NAME";
const OTHER_COMMENT: &str = "OTHER-PRIVATE comment";

struct Lead {
    dir: TempDir,
    store: Store,
    rater: i64,
}

/// The demo bundle imported into `lead.sqlite`, a remote rater and another rater sharing part of
/// the queue (with a rating of their own), each with a plan.
fn lead() -> Lead {
    let dir = tempfile::tempdir().unwrap();
    let lead_db = dir.path().join("lead.sqlite");
    support::demo_database_at(&lead_db);
    let mut store = Store::open(&lead_db).unwrap();
    let rater = store
        .create_rater(RATER, RaterRole::Neuroradiologist, Some(12))
        .unwrap()
        .id;
    let other = store
        .create_rater(OTHER, RaterRole::Neurologist, Some(3))
        .unwrap()
        .id;
    store
        .create_assignment_plan(
            rater,
            &PlanSpec {
                study_id: DEMO_STUDY_ID.into(),
                name: "multi-site".into(),
                seed: 42,
                raters: vec![rater, other],
                overlap_share: 0.02,
                responses_per_rater: Some(12),
                repeat_share: 0.25,
                repeat_after_days: 0,
                stratify_by: Vec::new(),
            },
        )
        .unwrap();
    let other_first = store.reading_queue(other, DEMO_STUDY_ID).unwrap()[0].assignment;
    store
        .save_rating(
            other,
            other_first,
            &RatingEdit {
                overall: Some(2.0),
                not_applicable: Default::default(),
                dimensions: BTreeMap::new(),
                correctness: None,
                confidence: None,
                comment: OTHER_COMMENT.into(),
                seconds_on_task: 5.0,
            },
        )
        .unwrap();
    Lead { dir, store, rater }
}

/// [`lead`], with `RATER`'s queue exported for "Site B" as `rater.tar` in its folder: the file
/// and what the export said of it.
fn lead_with_rater_package() -> (Lead, PathBuf, RaterPackageExport) {
    let mut lead = lead();
    let (package, exported) = export_for_site_b(&mut lead);
    (lead, package, exported)
}

/// `RATER`'s queue exported for "Site B" as `rater.tar` in the lead's folder.
fn export_for_site_b(lead: &mut Lead) -> (PathBuf, RaterPackageExport) {
    let package = lead.dir.path().join("rater.tar");
    let exported = export_rater_package(
        &mut lead.store,
        DEMO_STUDY_ID,
        RATER,
        "Site B",
        &package,
        &NoProgress,
    )
    .unwrap();
    (package, exported)
}

fn rater_id(store: &Store, name: &str) -> i64 {
    store
        .raters()
        .unwrap()
        .into_iter()
        .find(|r| r.name == name)
        .unwrap()
        .id
}

/// A digest of every row of every table, audit log included.
fn tables_digest(store: &Store) -> String {
    let conn = store.read();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut hasher = Sha256::new();
    for table in tables {
        hasher.update(table.as_bytes());
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))
            .unwrap();
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for index in 0..columns {
                let cell = match row.get_ref(index).unwrap() {
                    ValueRef::Null => "NULL".to_owned(),
                    ValueRef::Integer(i) => i.to_string(),
                    ValueRef::Real(f) => f.to_string(),
                    ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    ValueRef::Blob(b) => format!("{b:?}"),
                };
                hasher.update((cell.len() as u64).to_le_bytes());
                hasher.update(cell.as_bytes());
            }
        }
    }
    format!("{:x}", hasher.finalize())
}

/// Every member of a package file: name → bytes.
fn members(package: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut archive = tar::Archive::new(std::fs::File::open(package).unwrap());
    let mut out = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        out.insert(name, bytes);
    }
    out
}

/// A remote rater's database with the package imported.
fn remote(dir: &Path, package: &Path) -> Store {
    let mut store = Store::open(&dir.join("remote").join("remote.sqlite")).unwrap();
    let imported = import_rater_package(&mut store, package, &NoProgress).unwrap();
    assert!(!imported.already_imported);
    store
}

/// Rates the first two items at the remote site: the first submitted with a text label and an
/// image label (a mark), the second a draft.
fn rate_remotely(remote: &mut Store) -> Vec<i64> {
    let rater = rater_id(remote, RATER);
    let queue = remote.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    let first = queue[0].assignment;
    let item = remote.reading_item(rater, first).unwrap();
    let dimensions = item
        .rubric
        .dimensions
        .iter()
        .map(|d| (d.id.clone(), d.scale.min))
        .collect();
    remote
        .save_rating(
            rater,
            first,
            &RatingEdit {
                overall: Some(item.rubric.overall.max),
                not_applicable: Default::default(),
                dimensions,
                correctness: Some(cases::rating::Correctness::Partly),
                confidence: Some(4),
                comment: "read offline".into(),
                seconds_on_task: 61.5,
            },
        )
        .unwrap();
    let rationale_units = item
        .response
        .rationale
        .as_deref()
        .map(|r| r.encode_utf16().count() as u32)
        .unwrap_or(0);
    if rationale_units >= 4 {
        remote
            .add_error_label(
                rater,
                first,
                &LabelEdit {
                    category: "P3".into(),
                    severity: 2,
                    span: Some([0, 4]),
                    text: SpanText::Rationale,
                    turn: None,
                    mark: None,
                    comment: "not there".into(),
                },
            )
            .unwrap();
    }
    remote
        .add_error_label(
            rater,
            first,
            &LabelEdit {
                category: "P1".into(),
                severity: 3,
                span: None,
                text: SpanText::Rationale,
                turn: None,
                mark: Some(Mark {
                    series_id: item.series[0].series_id.clone(),
                    kind: MarkKind::Point,
                    plane: Plane::Axial,
                    points_lps_mm: vec![[1.0, -2.0, 3.0]],
                }),
                comment: "missed lesion".into(),
            },
        )
        .unwrap();
    remote.submit_rating(rater, first).unwrap();
    let second = queue[1].assignment;
    remote
        .save_rating(
            rater,
            second,
            &RatingEdit {
                overall: Some(item.rubric.overall.min),
                not_applicable: Default::default(),
                dimensions: BTreeMap::new(),
                correctness: None,
                confidence: None,
                comment: "to finish".into(),
                seconds_on_task: 10.0,
            },
        )
        .unwrap();
    vec![first, second]
}

/// The lead's rating of the remote rater's n-th queue item: (overall, comment, status, labels).
fn lead_rating(lead: &Lead, position: usize) -> Option<(Option<f64>, String, String, i64)> {
    let assignment =
        lead.store.reading_queue(lead.rater, DEMO_STUDY_ID).unwrap()[position].assignment;
    lead.store
        .read()
        .query_row(
            "SELECT g.overall, g.comment, g.status,
                    (SELECT count(*) FROM error_labels e WHERE e.rating = g.id)
             FROM ratings g JOIN assignments a ON a.response = g.response AND a.rater = g.rater
                 AND a.read_no = g.read_no WHERE a.id = ?1",
            [assignment],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .ok()
}

fn export_results(remote: &Store, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    export_results_package(remote, None, &out, &NoProgress).unwrap();
    out
}

fn merge(lead: &mut Lead, file: &Path) -> MergeReport {
    merge_results_package(&mut lead.store, file, &NoProgress).unwrap()
}

#[test]
fn round_trip_lead_remote_lead_and_merging_twice_changes_nothing() {
    let (mut lead, package, exported) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let lead_queue = lead.store.reading_queue(lead.rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(exported.items as usize, lead_queue.len());

    let mut remote = remote(&dir, &package);
    let remote_rater = rater_id(&remote, RATER);
    let remote_queue = remote.reading_queue(remote_rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(remote_queue.len(), lead_queue.len());
    // The rater's database lists the package it answers, as the app's menu offers it; the
    // lead's lists none (its package went out, none came in).
    let listed = imported_rater_packages(&remote).unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|p| (&*p.package_id, &*p.study_id, &*p.rater, &*p.site, p.items))
            .collect::<Vec<_>>(),
        [(
            &*exported.package_id,
            DEMO_STUDY_ID,
            RATER,
            &*exported.site,
            exported.items
        )]
    );
    assert!(imported_rater_packages(&lead.store).unwrap().is_empty());
    // The same responses in the same order, read for read.
    for (here, there) in lead_queue.iter().zip(&remote_queue) {
        let a = lead.store.reading_item(lead.rater, here.assignment);
        let b = remote.reading_item(remote_rater, there.assignment);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.response, b.response);
                assert_eq!(a.case, b.case);
                assert_eq!(a.task, b.task);
                assert_eq!(a.rubric, b.rubric);
                assert_eq!(
                    a.series
                        .iter()
                        .map(|s| (&s.series_id, s.n_images))
                        .collect::<Vec<_>>(),
                    b.series
                        .iter()
                        .map(|s| (&s.series_id, s.n_images))
                        .collect::<Vec<_>>()
                );
            }
            (Err(_), Err(_)) => {} // a repeat read not open yet on either side
            (a, b) => panic!("differ: {a:?} / {b:?}"),
        }
    }
    // The images at the remote site open, de-identified, and decode to the same pixels.
    let series = remote
        .reading_item(remote_rater, remote_queue[0].assignment)
        .unwrap()
        .series[0]
        .key;
    let files = remote.series_files(series).unwrap();
    files.verify().unwrap();
    let there = imaging::load_dicom_series(&files.paths()).unwrap();
    let lead_series = lead
        .store
        .reading_item(lead.rater, lead_queue[0].assignment)
        .unwrap()
        .series[0]
        .key;
    let here =
        imaging::load_dicom_series(&lead.store.series_files(lead_series).unwrap().paths()).unwrap();
    assert_eq!(here.dims, there.dims);
    assert_eq!(here.voxel_to_patient, there.voxel_to_patient);
    assert!(
        here.samples == there.samples,
        "the pixels changed on the way"
    );

    // Importing the same package again changes nothing.
    let before = tables_digest(&remote);
    let again = import_rater_package(&mut remote, &package, &NoProgress).unwrap();
    assert!(again.already_imported);
    assert_eq!(tables_digest(&remote), before);

    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");
    assert!(members(&results).contains_key("audit.jsonl"));

    assert_eq!(lead_rating(&lead, 0), None);
    let report = merge(&mut lead, &results);
    assert_eq!((report.added, report.updated, report.unchanged), (2, 0, 0));
    assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
    let (overall, comment, status, labels) = lead_rating(&lead, 0).unwrap();
    assert_eq!(comment, "read offline");
    assert_eq!(status, "submitted");
    assert!(overall.is_some() && labels >= 1);
    assert_eq!(lead_rating(&lead, 1).unwrap().2, "draft");
    // The merge is audited with the remote trail, and the lead's chain still verifies.
    let trail: String = lead
        .store
        .read()
        .query_row(
            "SELECT after_json FROM audit_log WHERE action = 'merge rating (added)' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(trail.contains("remote_audit") && trail.contains("submit rating"));
    assert!(matches!(
        cases::store::audit::verify(lead.store.read()).unwrap(),
        cases::store::audit::Verdict::Intact { .. }
    ));

    let digest = tables_digest(&lead.store);
    let second = merge(&mut lead, &results);
    assert_eq!((second.added, second.updated, second.unchanged), (0, 0, 2));
    assert!(second.conflicts.is_empty());
    assert_eq!(
        tables_digest(&lead.store),
        digest,
        "a second merge wrote something"
    );
}

#[test]
fn a_rating_edited_at_the_lead_is_listed_not_overwritten_and_an_untouched_one_is_updated() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    let remote_items = rate_remotely(&mut remote);
    let first = export_results(&remote, &dir, "results-1.tar");
    assert_eq!(merge(&mut lead, &first).added, 2);

    // At the lead's site someone changes the draft (item 2); at the remote site the rater
    // changes it too, differently, and also reopens and edits item 1.
    let lead_second = lead.store.reading_queue(lead.rater, DEMO_STUDY_ID).unwrap()[1].assignment;
    let edit = |comment: &str| RatingEdit {
        overall: Some(1.0),
        not_applicable: Default::default(),
        dimensions: BTreeMap::new(),
        correctness: None,
        confidence: None,
        comment: comment.into(),
        seconds_on_task: 20.0,
    };
    lead.store
        .save_rating(lead.rater, lead_second, &edit("edited at the lead"))
        .unwrap();
    let remote_rater = rater_id(&remote, RATER);
    remote
        .save_rating(remote_rater, remote_items[1], &edit("edited remotely"))
        .unwrap();
    remote.reopen_rating(remote_rater, remote_items[0]).unwrap();
    remote
        .submit_rating(remote_rater, remote_items[0])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut changed = remote
        .reading_item(remote_rater, remote_items[0])
        .unwrap()
        .rating
        .unwrap();
    changed.comment.clear();
    remote.reopen_rating(remote_rater, remote_items[0]).unwrap();
    remote
        .save_rating(
            remote_rater,
            remote_items[0],
            &RatingEdit {
                overall: changed.overall,
                not_applicable: Default::default(),
                dimensions: changed.dimensions.clone(),
                correctness: changed.correctness,
                confidence: Some(2),
                comment: "second thoughts".into(),
                seconds_on_task: 90.0,
            },
        )
        .unwrap();
    let second = export_results(&remote, &dir, "results-2.tar");
    let report = merge(&mut lead, &second);
    assert_eq!((report.added, report.updated, report.unchanged), (0, 1, 0));
    assert_eq!(report.conflicts.len(), 1, "{:?}", report.conflicts);
    assert!(matches!(
        report.conflicts[0],
        Conflict::EditedAtLead { item: 2, .. }
    ));
    assert_eq!(lead_rating(&lead, 1).unwrap().1, "edited at the lead");
    let (_, comment, status, _) = lead_rating(&lead, 0).unwrap();
    assert_eq!(
        (comment.as_str(), status.as_str()),
        ("second thoughts", "draft")
    );

    // The first package is now older than what was merged: a conflict, nothing written.
    let digest = tables_digest(&lead.store);
    let stale = merge(&mut lead, &first);
    assert!(stale
        .conflicts
        .iter()
        .any(|c| matches!(c, Conflict::OlderThanMerged { item: 1, .. })));
    assert_eq!(tables_digest(&lead.store), digest);
}

/// Flips one byte inside `member`'s data.
fn corrupt(package: &Path, member: &str) {
    let offset = {
        let mut archive = tar::Archive::new(std::fs::File::open(package).unwrap());
        let entry = archive
            .entries()
            .unwrap()
            .map(Result::unwrap)
            .find(|e| e.path().unwrap().to_string_lossy() == member)
            .unwrap();
        entry.raw_file_position() + entry.size() / 2
    };
    let mut bytes = std::fs::read(package).unwrap();
    bytes[offset as usize] ^= 0x01;
    std::fs::write(package, bytes).unwrap();
}

fn refused_members(error: Error) -> Vec<(String, String)> {
    match error {
        Error::Package { problems, .. } => {
            problems.into_iter().map(|p| (p.file, p.field)).collect()
        }
        other => panic!("expected a refused package, got {other}"),
    }
}

#[test]
fn a_changed_byte_is_refused_naming_the_member_and_nothing_is_written() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let good = std::fs::read(&package).unwrap();
    let image = members(&package)
        .into_keys()
        .find(|name| name.ends_with(".dcm"))
        .unwrap();
    corrupt(&package, &image);
    let remote_db = dir.join("remote").join("remote.sqlite");
    let mut remote = Store::open(&remote_db).unwrap();
    let digest = tables_digest(&remote);
    let error = import_rater_package(&mut remote, &package, &NoProgress).unwrap_err();
    assert!(error.to_string().contains(&image), "{error}");
    assert_eq!(refused_members(error), vec![(image, "sha256".to_owned())]);
    assert_eq!(tables_digest(&remote), digest);
    // Nothing of the refused package stays on disk.
    let kept: Vec<_> = std::fs::read_dir(dir.join("remote").join("rater-packages"))
        .unwrap()
        .collect();
    assert!(kept.is_empty(), "{kept:?}");

    std::fs::write(&package, good).unwrap();
    import_rater_package(&mut remote, &package, &NoProgress).unwrap();
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");
    corrupt(&results, "ratings.jsonl");
    let digest = tables_digest(&lead.store);
    let error = merge_results_package(&mut lead.store, &results, &NoProgress).unwrap_err();
    assert_eq!(
        refused_members(error),
        vec![("ratings.jsonl".to_owned(), "sha256".to_owned())]
    );
    assert_eq!(tables_digest(&lead.store), digest);
}

#[test]
fn packages_for_another_study_or_database_are_refused_or_listed() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    // The lead's own database already holds the study: a rater package goes into a database of
    // its own.
    let error = import_rater_package(&mut lead.store, &package, &NoProgress).unwrap_err();
    assert_eq!(
        refused_members(error),
        vec![("manifest.json".to_owned(), "study_id".to_owned())]
    );

    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");

    // A database without the study refuses the package whole.
    let mut empty = Store::open(&dir.join("empty.sqlite")).unwrap();
    let error = merge_results_package(&mut empty, &results, &NoProgress).unwrap_err();
    assert_eq!(
        refused_members(error),
        vec![("manifest.json".to_owned(), "study_id".to_owned())]
    );

    // Another lead database with the same study never exported this package: listed, nothing
    // written.
    let mut other = self::lead();
    let digest = tables_digest(&other.store);
    let report = merge(&mut other, &results);
    assert!(matches!(
        report.conflicts.as_slice(),
        [Conflict::UnknownPackage { .. }]
    ));
    assert_eq!(tables_digest(&other.store), digest);

    // A rater package is not a results package.
    let error = merge_results_package(&mut lead.store, &package, &NoProgress).unwrap_err();
    assert!(matches!(error, Error::Package { .. }), "{error}");
}

#[test]
fn the_rater_package_carries_nothing_that_unblinds_or_identifies() {
    let (lead, package, _) = lead_with_rater_package();
    let conn = lead.store.read();
    let column = |sql: &str| -> Vec<String> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let mut forbidden: Vec<String> = Vec::new();
    let models = column("SELECT DISTINCT model FROM responses");
    assert_eq!(models.len(), 3);
    forbidden.extend(models);
    forbidden.extend(column("SELECT DISTINCT grader FROM grader_scores"));
    forbidden.extend(column(
        "SELECT rationale FROM grader_scores WHERE rationale IS NOT NULL",
    ));
    forbidden.extend(column(
        "SELECT json_extract(body_json, '$.expected_reasoning') FROM ground_truth",
    ));
    forbidden.extend([
        "demo_planted_errors".to_owned(),
        "ground_truth".to_owned(),
        "DEMO^CASE".to_owned(),
        "DEMO-".to_owned(),
        OTHER.to_owned(),
        OTHER_COMMENT.to_owned(),
    ]);
    // Every UID of the original DICOM files (study, series, instance, frame of reference).
    let bundle_dir: String = conn
        .query_row("SELECT bundle_dir FROM studies", [], |r| r.get(0))
        .unwrap();
    let paths = column("SELECT path FROM images");
    assert!(!paths.is_empty());
    let mut uids = std::collections::BTreeSet::new();
    for path in &paths {
        let object = dicom_object::open_file(Path::new(&bundle_dir).join(path)).unwrap();
        for tag in imaging::uid_tags_to_replace() {
            if let Ok(element) = object.element(*tag) {
                uids.insert(element.to_str().unwrap().trim_end_matches('\0').to_owned());
            }
        }
    }
    assert!(
        uids.len() > paths.len(),
        "each file has its own SOP UID, plus shared ones"
    );

    let members = members(&package);
    assert!(members.keys().filter(|n| n.ends_with(".dcm")).count() > 0);
    for (name, bytes) in &members {
        // The needles are text; a lossy view keeps every ASCII byte where it was.
        let text = String::from_utf8_lossy(bytes);
        for needle in &forbidden {
            assert!(
                !text.contains(needle.as_str()),
                "{needle:?} found in member {name}"
            );
        }
        // A UID is a run of digits and dots wherever it is stored.
        for run in text.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
            assert!(
                !uids.contains(run),
                "original UID {run} found in member {name}"
            );
        }
        if name.ends_with("case.json") {
            let case: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            assert_eq!(case["disease_group"], "other_abnormality", "{name}");
        }
    }
}

/// Rewrites the first rating of a results package that has error labels with `change`, and
/// re-seals the package (the manifest lists the new digests), so that only the merge's own
/// checks can refuse it. Returns the field `change` says it broke.
fn forge_labelled_rating(
    package: &Path,
    change: impl Fn(&mut serde_json::Value) -> String,
) -> String {
    let mut members = members(package);
    let ratings = String::from_utf8(members["ratings.jsonl"].clone()).unwrap();
    let mut lines: Vec<serde_json::Value> = ratings
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let labelled = lines
        .iter_mut()
        .find(|r| !r["labels"].as_array().unwrap().is_empty())
        .expect("a rating with error labels");
    let broken = change(labelled);
    let ratings: String = lines.iter().map(|r| format!("{r}\n")).collect();
    members.insert("ratings.jsonl".into(), ratings.into_bytes());
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&members.remove("manifest.json").unwrap()).unwrap();
    for member in manifest["members"].as_array_mut().unwrap() {
        let bytes = &members[member["path"].as_str().unwrap()];
        member["bytes"] = bytes.len().into();
        member["sha256"] = format!("{:x}", Sha256::digest(bytes)).into();
    }
    let mut builder = tar::Builder::new(std::fs::File::create(package).unwrap());
    let mut append = |name: &str, bytes: &[u8]| {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, name, bytes).unwrap();
    };
    for (name, bytes) in &members {
        append(name, bytes);
    }
    append("manifest.json", &serde_json::to_vec(&manifest).unwrap());
    builder.finish().unwrap();
    broken
}

#[test]
fn a_merge_refuses_a_split_character_a_long_comment_a_week_on_task_and_a_mark_off_the_images_as_the_app_does(
) {
    let mut lead = lead();
    // Every rationale starts with a character outside the BMP (two UTF-16 code units), so a span
    // starting at 1 cuts it in two.
    lead.store
        .read()
        .execute(
            "UPDATE responses SET rationale = '\u{1F9E0}' || rationale
             WHERE rationale IS NOT NULL",
            [],
        )
        .unwrap();
    let (package, _) = export_for_site_b(&mut lead);
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let digest = tables_digest(&lead.store);

    let split_character = |rating: &mut serde_json::Value| {
        let labels = rating["labels"].as_array_mut().unwrap();
        let index = labels
            .iter()
            .position(|l| !l["span"].is_null())
            .expect("a label with a span");
        labels[index]["span"] = serde_json::json!([1, 4]);
        format!("labels[{index}].span")
    };
    let long_comment = |rating: &mut serde_json::Value| {
        rating["comment"] = "x".repeat(20_001).into();
        "comment".to_owned()
    };
    let over_a_week = |rating: &mut serde_json::Value| {
        rating["seconds_on_task"] = (8.0 * 24.0 * 3600.0).into();
        "seconds_on_task".to_owned()
    };
    // Half a metre above the head: the app refuses such a mark against the series' geometry.
    let mark_off_the_volume = |rating: &mut serde_json::Value| {
        let labels = rating["labels"].as_array_mut().unwrap();
        let index = labels
            .iter()
            .position(|l| !l["mark"].is_null())
            .expect("a label with a mark");
        labels[index]["mark"]["points_lps_mm"] = serde_json::json!([[1.0, -2.0, 500.0]]);
        format!("labels[{index}].mark.points_lps_mm")
    };
    /// Breaks one rule in a rating's JSON and names the field it broke.
    type Forgery<'a> = &'a dyn Fn(&mut serde_json::Value) -> String;
    let forgeries: [(&str, Forgery); 4] = [
        ("split-character.tar", &split_character),
        ("long-comment.tar", &long_comment),
        ("over-a-week.tar", &over_a_week),
        ("mark-off-the-volume.tar", &mark_off_the_volume),
    ];
    for (name, forgery) in forgeries {
        let results = export_results(&remote, &dir, name);
        let field = forge_labelled_rating(&results, forgery);
        let error = merge_results_package(&mut lead.store, &results, &NoProgress).unwrap_err();
        assert_eq!(
            refused_members(error),
            vec![("ratings.jsonl".to_owned(), field)],
            "{name}"
        );
        assert_eq!(tables_digest(&lead.store), digest, "{name}");
    }
    // The same ratings unforged merge: what was refused was the forgery alone.
    let results = export_results(&remote, &dir, "results.tar");
    assert_eq!(merge(&mut lead, &results).added, 2);
}

/// Follows nothing and asks to stop from the first step: what the app's Cancel button sets.
struct Cancelled;

impl cases::progress::Progress for Cancelled {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self, _done: u64) {}
    fn cancelled(&self) -> bool {
        true
    }
}

#[test]
fn a_cancelled_import_export_or_merge_writes_nothing() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let remote_db = dir.join("remote").join("remote.sqlite");
    let mut remote = Store::open(&remote_db).unwrap();
    let digest = tables_digest(&remote);
    let error = import_rater_package(&mut remote, &package, &Cancelled).unwrap_err();
    assert!(matches!(error, Error::Cancelled { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "importing the rater package was cancelled; nothing was written"
    );
    assert_eq!(tables_digest(&remote), digest);
    let kept: Vec<_> = std::fs::read_dir(dir.join("remote").join("rater-packages"))
        .unwrap()
        .collect();
    assert!(kept.is_empty(), "nothing of the package stays: {kept:?}");

    import_rater_package(&mut remote, &package, &NoProgress).unwrap();
    rate_remotely(&mut remote);
    let out = dir.join("cancelled-results.tar");
    let error = export_results_package(&remote, None, &out, &Cancelled).unwrap_err();
    assert!(matches!(error, Error::Cancelled { .. }), "{error}");
    assert!(!out.exists(), "a cancelled export leaves no file");

    let results = export_results(&remote, &dir, "results.tar");
    let digest = tables_digest(&lead.store);
    let error = merge_results_package(&mut lead.store, &results, &Cancelled).unwrap_err();
    assert!(matches!(error, Error::Cancelled { .. }), "{error}");
    assert_eq!(tables_digest(&lead.store), digest);
    assert!(
        merge(&mut lead, &results).added > 0,
        "the same merge, not cancelled, adds"
    );
}

/// A label in a turn of a consultation and one in the answer, made at the remote site, reach the
/// lead with the text and turn they lie in; a package naming a turn the response lacks is refused
/// as the app refuses it, and nothing is written.
#[test]
fn labels_in_a_turn_and_in_the_answer_travel_with_their_text_and_a_missing_turn_is_refused() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    let rater = rater_id(&remote, RATER);
    let queue = remote.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    let (assignment, item) = queue
        .iter()
        .find_map(|q| {
            let item = remote.reading_item(rater, q.assignment).ok()?;
            item.response
                .turns
                .is_some()
                .then_some((q.assignment, item))
        })
        .expect("a consultation (level 3) in the remote rater's queue");
    let turns = item.response.turns.clone().unwrap();
    let last = turns.iter().rposition(|t| t.role == "assistant").unwrap();
    remote
        .save_rating(
            rater,
            assignment,
            &RatingEdit {
                overall: Some(item.rubric.overall.min),
                not_applicable: Default::default(),
                dimensions: BTreeMap::new(),
                correctness: None,
                confidence: None,
                comment: "anchored".into(),
                seconds_on_task: 12.0,
            },
        )
        .unwrap();
    let labels = [
        LabelEdit {
            category: "R4".into(),
            severity: 3,
            span: Some([2, 9]),
            text: SpanText::Turn,
            turn: Some(last as u32),
            mark: None,
            comment: "kept the first impression".into(),
        },
        LabelEdit {
            category: "P3".into(),
            severity: 1,
            span: Some([0, 3]),
            text: SpanText::Answer,
            turn: None,
            mark: None,
            comment: String::new(),
        },
        // Travels without `text` and `turn`, as rationale labels always did.
        LabelEdit {
            category: "R1".into(),
            severity: 2,
            span: Some([0, 3]),
            text: SpanText::Rationale,
            turn: None,
            mark: None,
            comment: String::new(),
        },
    ];
    for label in &labels {
        remote.add_error_label(rater, assignment, label).unwrap();
    }
    let digest = tables_digest(&lead.store);

    let results = export_results(&remote, &dir, "beyond-the-turns.tar");
    let field = forge_labelled_rating(&results, |rating| {
        rating["labels"][0]["turn"] = turns.len().into();
        "labels[0].turn".to_owned()
    });
    let error = merge_results_package(&mut lead.store, &results, &NoProgress).unwrap_err();
    assert_eq!(
        refused_members(error),
        vec![("ratings.jsonl".to_owned(), field)]
    );
    assert_eq!(tables_digest(&lead.store), digest);

    let results = export_results(&remote, &dir, "turns.tar");
    let ratings = String::from_utf8(members(&results)["ratings.jsonl"].clone()).unwrap();
    assert!(
        ratings.contains(&format!(r#""text":"turn","turn":{last}"#)),
        "{ratings}"
    );
    assert_eq!(merge(&mut lead, &results).added, 1);
    /// A stored label: category, the text and turn its span lies in, and the span.
    type Placed = (String, Option<String>, Option<u32>, [u32; 2]);
    let stored: Vec<Placed> = lead
        .store
        .read()
        .prepare(
            "SELECT e.category, e.span_text, e.span_turn, e.span_start, e.span_end
             FROM error_labels e JOIN ratings g ON e.rating = g.id JOIN raters ra ON g.rater = ra.id
             WHERE ra.name = ?1 ORDER BY e.id",
        )
        .unwrap()
        .query_map([RATER], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, [r.get(3)?, r.get(4)?]))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(
        stored,
        vec![
            (
                "R4".to_owned(),
                Some("turn".to_owned()),
                Some(last as u32),
                [2, 9]
            ),
            ("P3".to_owned(), Some("answer".to_owned()), None, [0, 3]),
            ("R1".to_owned(), Some("rationale".to_owned()), None, [0, 3]),
        ]
    );
    // The merged rating is what its audit entry (the rating as it travelled) says.
    let fold = cases::rating::ratings_against_audit(&lead.store).unwrap();
    assert!(fold.unaccounted.is_empty(), "{:?}", fold.unaccounted);
}

/// `package` rewritten as the team server would send it: each item of `items.jsonl` given
/// `server_assignment(item)` (or left without one where that is `None`), the manifest's digest of
/// the member updated.
fn with_server_assignments(
    package: &Path,
    out: &Path,
    server_assignment: impl Fn(u64) -> Option<i64>,
) {
    with_items(package, out, None, |items| {
        for item in items {
            if let Some(id) = server_assignment(item["item"].as_u64().unwrap()) {
                item["server_assignment"] = id.into();
            }
        }
    });
}

/// `package` with its `items.jsonl` lines edited by `edit` (and, given `package_id`, renamed),
/// the manifest's digest of the member updated.
fn with_items(
    package: &Path,
    out: &Path,
    package_id: Option<&str>,
    edit: impl FnOnce(&mut Vec<serde_json::Value>),
) {
    let mut files = members(package);
    let mut lines: Vec<serde_json::Value> = std::str::from_utf8(&files["items.jsonl"])
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    edit(&mut lines);
    let items: String = lines.iter().map(|item| item.to_string() + "\n").collect();
    let mut manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
    if let Some(id) = package_id {
        manifest["package_id"] = id.into();
    }
    for member in manifest["members"].as_array_mut().unwrap() {
        if member["path"] == "items.jsonl" {
            member["bytes"] = items.len().into();
            member["sha256"] = format!("{:x}", Sha256::digest(items.as_bytes())).into();
        }
    }
    files.insert("items.jsonl".into(), items.into_bytes());
    files.insert(
        "manifest.json".into(),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    );
    let order: Vec<String> = manifest["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap().to_owned())
        .chain(["manifest.json".to_owned()])
        .collect();
    let mut builder = tar::Builder::new(std::fs::File::create(out).unwrap());
    for name in order {
        let bytes = &files[&name];
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, &name, bytes.as_slice())
            .unwrap();
    }
    builder.finish().unwrap();
}

#[test]
fn a_server_built_package_links_each_item_to_its_server_assignment_and_a_local_one_links_none() {
    let (lead, package, exported) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    // A local lead's package names no server assignment (and stays readable by older builds).
    let text = String::from_utf8(members(&package)["items.jsonl"].clone()).unwrap();
    assert!(!text.contains("server_assignment"), "{text}");
    let local = remote(&dir, &package);
    let queue = local
        .reading_queue(rater_id(&local, RATER), DEMO_STUDY_ID)
        .unwrap();
    assert_eq!(queue.len() as u32, exported.items);
    assert_eq!(
        cases::package::server_link(&local, queue[0].assignment).unwrap(),
        None
    );
    assert!(cases::package::server_links(&local, DEMO_STUDY_ID)
        .unwrap()
        .is_empty());

    // The same package as the server would send it: item n is server assignment 700 + 3n.
    let from_server = dir.join("from-server.tar");
    with_server_assignments(&package, &from_server, |item| Some(700 + 3 * item as i64));
    let items: Vec<serde_json::Value> = std::str::from_utf8(&members(&from_server)["items.jsonl"])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut store = Store::open(&dir.join("server-mode").join("rater.sqlite")).unwrap();
    let imported = import_rater_package(&mut store, &from_server, &NoProgress).unwrap();
    let rater = rater_id(&store, RATER);
    let queue = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(queue.len(), items.len());
    let links = cases::package::server_links(&store, DEMO_STUDY_ID).unwrap();
    assert_eq!(links.len(), items.len());
    for (entry, item) in queue.iter().zip(&items) {
        // Each queue entry is the package item it came from (same case and task) ...
        let (case_id, task_id): (String, String) = store
            .read()
            .query_row(
                "SELECT c.case_id, t.task_id FROM assignments a JOIN responses r
                 ON a.response = r.id JOIN tasks t ON r.task = t.id JOIN cases c
                 ON t.case_ref = c.id WHERE a.id = ?1",
                [entry.assignment],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(case_id, item["case_id"].as_str().unwrap());
        assert_eq!(task_id, item["task_id"].as_str().unwrap());
        // ... and is linked to that item's server assignment.
        let expected = 700 + 3 * item["item"].as_i64().unwrap();
        assert_eq!(
            cases::package::server_link(&store, entry.assignment).unwrap(),
            Some(cases::package::ServerLink {
                study_id: DEMO_STUDY_ID.to_owned(),
                server_assignment: expected,
                package_id: imported.package_id.clone(),
            })
        );
        assert!(links
            .iter()
            .any(|l| l.assignment == entry.assignment && l.server_assignment == expected));
    }
    assert!(cases::package::server_links(&store, "another-study")
        .unwrap()
        .is_empty());
}

#[test]
fn a_later_server_package_tops_up_the_queue_read_here_and_one_that_does_not_continue_it_is_refused()
{
    let (lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let on_server = |item: &serde_json::Value| 700 + 3 * item["item"].as_i64().unwrap();
    let link_all = |items: &mut Vec<serde_json::Value>| {
        for item in items.iter_mut() {
            item["server_assignment"] = on_server(item).into();
        }
    };
    // The first download: the queue before the lead topped it up (without its last item).
    let first = dir.join("first.tar");
    with_items(
        &package,
        &first,
        Some("00000000-0000-4000-8000-000000000001"),
        |items| {
            link_all(items);
            items.pop();
        },
    );
    let mut store = Store::open(&dir.join("server-mode").join("rater.sqlite")).unwrap();
    let imported = import_rater_package(&mut store, &first, &NoProgress).unwrap();
    assert!(!imported.top_up);
    let rater = rater_id(&store, RATER);
    let before = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(before.len() as u32, imported.items);

    // The next download holds the whole queue: only the item the queue lacks is added, after
    // the others, which keep their assignments and positions.
    let second = dir.join("second.tar");
    with_items(
        &package,
        &second,
        Some("00000000-0000-4000-8000-000000000002"),
        link_all,
    );
    let last_item: serde_json::Value = serde_json::from_str(
        std::str::from_utf8(&members(&second)["items.jsonl"])
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    let topped = import_rater_package(&mut store, &second, &NoProgress).unwrap();
    assert!(topped.top_up && !topped.already_imported);
    assert_eq!(topped.items, 1);
    // The study's images are the new package's: every image file it names is there, and the
    // first download's folder, referenced by nothing now, is gone.
    let (bundle_dir, paths): (String, String) = store
        .read()
        .query_row(
            "SELECT s.bundle_dir, group_concat(i.path, '|') FROM studies s
             JOIN cases c ON c.study = s.id JOIN series e ON e.case_ref = c.id
             JOIN images i ON i.series = e.id GROUP BY s.id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let bundle_dir = Path::new(&bundle_dir);
    assert!(bundle_dir.starts_with(&topped.images_dir), "{bundle_dir:?}");
    for path in paths.split('|') {
        assert!(bundle_dir.join(path).is_file(), "{path} is missing");
    }
    assert!(
        !imported.images_dir.exists(),
        "{} is left behind",
        imported.images_dir.display()
    );
    let after = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(after.len(), before.len() + 1);
    for (was, is) in before.iter().zip(&after) {
        assert_eq!((was.assignment, was.position), (is.assignment, is.position));
    }
    let added = after.last().unwrap();
    assert_eq!(
        cases::package::server_link(&store, added.assignment)
            .unwrap()
            .map(|link| (link.server_assignment, link.package_id)),
        Some((on_server(&last_item), topped.package_id.clone()))
    );
    assert_eq!(
        cases::package::server_links(&store, DEMO_STUDY_ID)
            .unwrap()
            .len(),
        after.len()
    );
    let again = import_rater_package(&mut store, &second, &NoProgress).unwrap();
    assert!(again.already_imported);
    assert_eq!(again.items, 1);

    // A package in which a server assignment read here is another response does not continue
    // this queue; nor does a local lead's package of the study. Nothing is written.
    let swapped = dir.join("swapped.tar");
    with_items(
        &package,
        &swapped,
        Some("00000000-0000-4000-8000-000000000003"),
        |items| {
            link_all(items);
            let first = items[0]["server_assignment"].clone();
            items[0]["server_assignment"] = items[1]["server_assignment"].clone();
            items[1]["server_assignment"] = first;
        },
    );
    let digest = tables_digest(&store);
    let error = import_rater_package(&mut store, &swapped, &NoProgress).unwrap_err();
    let Error::Package { problems, .. } = error else {
        panic!("expected a refused package, got {error}");
    };
    let refused: Vec<(&str, Option<usize>, &str)> = problems
        .iter()
        .map(|p| (p.file.as_str(), p.line, p.field.as_str()))
        .collect();
    assert_eq!(
        refused,
        [
            ("items.jsonl", Some(1), "server_assignment"),
            ("items.jsonl", Some(2), "server_assignment")
        ],
        "{problems:?}"
    );
    assert!(problems[0].message.contains("does not continue the queue"));
    let error = import_rater_package(&mut store, &package, &NoProgress).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("only a package the server built adds to its queue"),
        "{error}"
    );
    assert_eq!(tables_digest(&store), digest);
}

#[test]
fn a_top_up_naming_the_held_cases_by_their_codes_renames_them_and_continues_the_queue() {
    let (lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let link_all = |items: &mut Vec<serde_json::Value>| {
        for item in items.iter_mut() {
            item["server_assignment"] = (700 + 3 * item["item"].as_i64().unwrap()).into();
        }
    };
    let first = dir.join("first.tar");
    with_items(
        &package,
        &first,
        Some("00000000-0000-4000-8000-000000000001"),
        |items| {
            link_all(items);
            items.pop();
        },
    );
    let mut store = Store::open(&dir.join("older-server").join("rater.sqlite")).unwrap();
    import_rater_package(&mut store, &first, &NoProgress).unwrap();
    let rater = rater_id(&store, RATER);
    // As an older server's package left them: the cases under other names than the codes the
    // server now sends (there, the ids).
    let held = |store: &Store| -> Vec<String> {
        let conn = store.read();
        let mut stmt = conn
            .prepare("SELECT case_id FROM cases ORDER BY id")
            .unwrap();
        let names = stmt.query_map([], |r| r.get(0)).unwrap();
        names.collect::<Result<_, _>>().unwrap()
    };
    let codes = held(&store);
    store
        .read()
        .execute("UPDATE cases SET case_id = 'older-' || case_id", [])
        .unwrap();
    let before = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();

    let second = dir.join("second.tar");
    with_items(
        &package,
        &second,
        Some("00000000-0000-4000-8000-000000000002"),
        link_all,
    );
    let topped = import_rater_package(&mut store, &second, &NoProgress).unwrap();
    assert!(topped.top_up);
    assert_eq!(topped.items, 1);
    // Each held case took the package's name, kept its row (so everything recorded against it
    // stays), and the queue went on after the items held.
    assert_eq!(held(&store), codes);
    let after = store.reading_queue(rater, DEMO_STUDY_ID).unwrap();
    assert_eq!(after.len(), before.len() + 1);
    for (was, is) in before.iter().zip(&after) {
        assert_eq!((was.assignment, was.position), (is.assignment, is.position));
    }
    let renamed: i64 = store
        .read()
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action = 'rename case' AND actor = 'team server'
               AND json_extract(before_json, '$.case_id') LIKE 'older-%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(renamed as usize, codes.len());
    assert!(store.reading_item(rater, after[0].assignment).is_ok());
    assert!(matches!(
        cases::store::audit::verify(store.read()).unwrap(),
        cases::store::audit::Verdict::Intact { .. }
    ));
}

#[test]
fn server_assignments_repeated_missing_on_some_items_or_below_one_are_refused_and_nothing_is_written(
) {
    let (lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    // (name, each item's server assignment, the items.jsonl lines refused)
    type Forgery = (&'static str, Box<dyn Fn(u64) -> Option<i64>>, Vec<usize>);
    let cases: [Forgery; 3] = [
        // Items 1 and 2 both claim server assignment 10.
        (
            "repeated",
            Box::new(|item| Some(if item <= 2 { 10 } else { 10 + item as i64 })),
            vec![2],
        ),
        // Item 3 names none while the others do.
        (
            "missing",
            Box::new(|item| (item != 3).then_some(item as i64)),
            vec![3],
        ),
        ("zero", Box::new(|item| Some(item as i64 - 1)), vec![1]),
    ];
    for (name, server_assignment, lines) in cases {
        let forged = dir.join(format!("{name}.tar"));
        with_server_assignments(&package, &forged, server_assignment);
        let mut store = Store::open(&dir.join(name).join("rater.sqlite")).unwrap();
        let digest = tables_digest(&store);
        let error = import_rater_package(&mut store, &forged, &NoProgress).unwrap_err();
        let Error::Package { problems, .. } = error else {
            panic!("{name}: expected a refused package, got {error}");
        };
        let found: Vec<(String, Option<usize>, String)> = problems
            .into_iter()
            .map(|p| (p.file, p.line, p.field))
            .collect();
        let expected: Vec<(String, Option<usize>, String)> = lines
            .into_iter()
            .map(|line| {
                (
                    "items.jsonl".to_owned(),
                    Some(line),
                    "server_assignment".to_owned(),
                )
            })
            .collect();
        assert_eq!(found, expected, "{name}");
        assert_eq!(tables_digest(&store), digest, "{name}");
    }
}

// --- A study read from the team server: the reveal (docs/team-server.md) ----------------------

/// `RATER`'s queue as the team server would send it (item n is server assignment 700 + 3n),
/// imported into a database of its own: the lead, that store, the rater and their queue.
fn server_mode() -> (Lead, Store, i64, Vec<i64>) {
    let (lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let from_server = dir.join("from-server.tar");
    with_server_assignments(&package, &from_server, |item| Some(700 + 3 * item as i64));
    let mut store = Store::open(&dir.join("server-mode").join("rater.sqlite")).unwrap();
    import_rater_package(&mut store, &from_server, &NoProgress).unwrap();
    let rater = rater_id(&store, RATER);
    let queue = store
        .reading_queue(rater, DEMO_STUDY_ID)
        .unwrap()
        .iter()
        .map(|entry| entry.assignment)
        .collect();
    (lead, store, rater, queue)
}

/// A complete rating of `assignment` (every field its task's family asks for), saved with
/// `comment`.
fn complete_rating(store: &mut Store, rater: i64, assignment: i64, comment: &str) -> RatingEdit {
    let item = store.reading_item(rater, assignment).unwrap();
    RatingEdit {
        overall: Some(item.rubric.overall.max),
        not_applicable: Default::default(),
        dimensions: item
            .rubric
            .dimensions
            .iter()
            .filter(|d| d.applies_to(item.task.family))
            .map(|d| (d.id.clone(), d.scale.min))
            .collect(),
        correctness: Some(cases::rating::Correctness::Partly),
        confidence: Some(4),
        comment: comment.into(),
        seconds_on_task: 30.0,
    }
}

/// Every assignment of `rater` on the case of `assignment`, itself included.
fn on_same_case(store: &Store, rater: i64, assignment: i64) -> Vec<i64> {
    store
        .read()
        .prepare(
            "SELECT a.id FROM assignments a JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id
             WHERE a.rater = ?1 AND t.case_ref = (
                 SELECT t2.case_ref FROM assignments a2 JOIN responses r2 ON a2.response = r2.id
                 JOIN tasks t2 ON r2.task = t2.id WHERE a2.id = ?2)
             ORDER BY a.position",
        )
        .unwrap()
        .query_map([rater, assignment], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Records every sendable row of the outbox as the server would acknowledge it: each link's
/// version one higher than its last.
fn acknowledge_all(store: &mut Store) {
    while let Some(edit) = outbox::next_to_send(store).unwrap() {
        outbox::mark_sent(store, edit.row, edit.base_version + 1).unwrap();
    }
}

#[test]
fn a_server_items_reveal_waits_for_its_submit_and_is_then_recorded_as_a_local_reveal() {
    let (lead, mut store, rater, queue) = server_mode();
    let first = queue[0];
    assert!(matches!(
        cases::curation::reveal::may_reveal(&store, rater, first),
        Err(Error::CurationRefused(_))
    ));
    let case = on_same_case(&store, rater, first);
    for &assignment in &case {
        let rating = complete_rating(&mut store, rater, assignment, "read here");
        store.save_rating(rater, assignment, &rating).unwrap();
        store.submit_rating(rater, assignment).unwrap();
    }
    cases::curation::reveal::may_reveal(&store, rater, first).unwrap();

    // The save and the submit are still on this computer: the reveal waits for them.
    assert_eq!(
        outbox::reveal_delivery(&store, first).unwrap(),
        Some(RevealDelivery::Waiting { waiting: 2 })
    );
    acknowledge_all(&mut store);
    let Some(RevealDelivery::Ready(edit)) = outbox::reveal_delivery(&store, first).unwrap() else {
        panic!("the reveal is not ready once everything was acknowledged");
    };
    let link = cases::package::server_link(&store, first).unwrap().unwrap();
    assert_eq!(
        (
            edit.study_id.as_str(),
            edit.server_assignment,
            edit.base_version
        ),
        (DEMO_STUDY_ID, link.server_assignment, 2)
    );
    // Asked again (a resend after a lost answer), it is the same edit.
    assert_eq!(
        outbox::reveal_delivery(&store, first).unwrap(),
        Some(RevealDelivery::Ready(edit.clone()))
    );
    outbox::record_reveal(&mut store, first, &edit, 3).unwrap();
    outbox::record_reveal(&mut store, first, &edit, 3).unwrap();
    let Some(RevealDelivery::Ready(after)) = outbox::reveal_delivery(&store, first).unwrap() else {
        panic!("a recorded reveal leaves nothing waiting");
    };
    assert_eq!(
        after.base_version, 3,
        "the next edit starts from the reveal"
    );
    assert_ne!(after.edit_id, edit.edit_id);
    assert_eq!(outbox::status(&store).unwrap().waiting, 0);

    // The server's ground truth, as the lead's database holds it for the case.
    let (case_id, body): (String, String) = lead
        .store
        .read()
        .query_row(
            "SELECT c.case_id, g.body_json FROM ground_truth g JOIN cases c ON g.case_ref = c.id
             WHERE c.case_id = (SELECT c2.case_id FROM assignments a JOIN responses r
                                ON a.response = r.id JOIN tasks t ON r.task = t.id
                                JOIN cases c2 ON t.case_ref = c2.id WHERE a.id = ?1)",
            [first],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let truth: cases::model::GroundTruth = serde_json::from_str(&body).unwrap();
    assert!(
        store
            .reading_item(rater, first)
            .unwrap()
            .ground_truth_seen_at
            .is_none(),
        "nothing is recorded before the server answered"
    );
    let revealed =
        cases::curation::reveal::ground_truth_from_server(&mut store, rater, first, &truth, 4)
            .unwrap();
    // The rater's copy knows the case by the lead's code for it, never by its id.
    let code = lead.store.case_codes(DEMO_STUDY_ID).unwrap().code(&case_id);
    assert_eq!(
        (revealed.study_id.as_str(), revealed.case_id.as_str()),
        (DEMO_STUDY_ID, code.as_str())
    );
    assert_eq!(revealed.version.version, 4);
    assert_eq!(revealed.version.truth.to_bundle_form(), truth);

    // Recorded as a local reveal is: the rating is locked, as on the server.
    assert!(store
        .reading_item(rater, first)
        .unwrap()
        .ground_truth_seen_at
        .is_some());
    let refused = store.reopen_rating(rater, first).unwrap_err().to_string();
    assert!(refused.contains("saw the case's ground truth"), "{refused}");
    // The item says so before anything is tried: the reason is the refusal's own.
    let offered = store.reading_item(rater, first).unwrap().reopen_refused;
    assert!(
        matches!(&offered, Some(lock @ ReopenLock::GroundTruthSeen { .. }) if refused.contains(&lock.to_string())),
        "{offered:?} against {refused}"
    );
}

#[test]
fn keeping_the_servers_rating_keeps_a_reveal_the_server_recorded_and_so_its_lock() {
    let (_lead, mut store, rater, queue) = server_mode();
    // Two items of different cases: a reveal locks every rating of its case.
    let revealed_elsewhere = queue[0];
    let same_case = on_same_case(&store, rater, revealed_elsewhere);
    let not_revealed = *queue
        .iter()
        .find(|a| !same_case.contains(a))
        .expect("the queue spans two cases");
    for assignment in [revealed_elsewhere, not_revealed] {
        store
            .save_rating(rater, assignment, &comment_only("first, on the server"))
            .unwrap();
    }
    acknowledge_all(&mut store);
    let submitted_elsewhere = |revealed_at: Option<&str>| TeamRating {
        state: TeamRatingState {
            scores: comment_only("submitted on the other computer"),
            labels: Vec::new(),
        },
        status: RatingStatus::Submitted,
        version: 4,
        updated_at: "2026-11-27T10:00:00.000Z".into(),
        revealed_at: revealed_at.map(Into::into),
        rubric_version: Some(1),
    };
    let revealed_count = |store: &Store| -> i64 {
        store
            .read()
            .query_row(
                "SELECT count(*) FROM audit_log WHERE action = 'ground_truth.revealed'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };

    // Submitted and revealed on the other computer: kept here, the reveal with it.
    stopped_by_a_conflict(&mut store, rater, revealed_elsewhere, "mine, refused");
    assert!(store
        .reading_item(rater, revealed_elsewhere)
        .unwrap()
        .reopen_refused
        .is_none());
    let theirs = submitted_elsewhere(Some("2026-11-27T10:00:00.000Z"));
    outbox::resolve(
        &mut store,
        rater,
        revealed_elsewhere,
        Resolution::KeepServer,
        &theirs,
        Some(2),
    )
    .unwrap();
    let item = store.reading_item(rater, revealed_elsewhere).unwrap();
    assert_eq!(item.rating.unwrap().status, RatingStatus::Submitted);
    assert!(
        item.ground_truth_seen_at.is_some(),
        "the reveal is recorded"
    );
    let refused = store
        .reopen_rating(rater, revealed_elsewhere)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("saw the case's ground truth"), "{refused}");
    assert!(
        matches!(&item.reopen_refused, Some(lock @ ReopenLock::GroundTruthSeen { .. }) if refused.contains(&lock.to_string())),
        "the item offers no reopen, for the refusal's reason: {:?}",
        item.reopen_refused
    );
    // Recorded as a reveal here is: its actor, entity and the server's version of the truth.
    let (actor, entity, after): (String, String, String) = store
        .read()
        .query_row(
            "SELECT actor, entity, after_json FROM audit_log
             WHERE action = 'ground_truth.revealed'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(actor, RATER);
    assert!(
        entity.starts_with(&format!("ground_truth:{DEMO_STUDY_ID}/")),
        "{entity}"
    );
    let after: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        after,
        serde_json::json!({ "assignment": revealed_elsewhere, "version": 2 })
    );
    let fold = cases::rating::ratings_against_audit(&store).unwrap();
    assert!(fold.unaccounted.is_empty(), "{:?}", fold.unaccounted);

    // Submitted elsewhere with no reveal: kept, and reopening stays open.
    stopped_by_a_conflict(&mut store, rater, not_revealed, "mine, refused too");
    outbox::resolve(
        &mut store,
        rater,
        not_revealed,
        Resolution::KeepServer,
        &submitted_elsewhere(None),
        None,
    )
    .unwrap();
    assert_eq!(revealed_count(&store), 1, "no reveal is made up");
    let item = store.reading_item(rater, not_revealed).unwrap();
    assert_eq!(
        (item.ground_truth_seen_at, item.reopen_refused),
        (None, None)
    );
    store.reopen_rating(rater, not_revealed).unwrap();
}

/// A rater's database read from the server with every response of their first case submitted,
/// the rater the session's reader: the first assignment and the reader.
fn first_case_submitted_in_server_mode() -> (Lead, Store, i64, i64, cases::app::ReaderSession) {
    let (lead, mut store, rater, queue) = server_mode();
    let assignment = queue[0];
    for on_case in on_same_case(&store, rater, assignment) {
        let rating = complete_rating(&mut store, rater, on_case, "read here");
        store.save_rating(rater, on_case, &rating).unwrap();
        store.submit_rating(rater, on_case).unwrap();
    }
    store.set_current_rater(rater).unwrap();
    let reader = cases::app::Session::current(&store)
        .unwrap()
        .reader()
        .unwrap();
    (lead, store, rater, assignment, reader)
}

#[test]
fn what_the_server_says_of_a_study_locks_its_items_here_offline_too() {
    // (revealed on the server at, locked by the lead, the reopen refused for)
    let table = [
        (false, false, None),
        (false, true, Some("lead")),
        (true, false, Some("seen")),
        (true, true, Some("lead")),
    ];
    for (revealed_elsewhere, locked, expected) in table {
        let (_lead, mut store, rater, assignment, reader) = first_case_submitted_in_server_mode();
        let server_assignment = cases::package::server_link(&store, assignment)
            .unwrap()
            .unwrap()
            .server_assignment;
        let membership = Membership {
            study_id: DEMO_STUDY_ID.into(),
            title: "t".into(),
            role: StudyRole::Rater,
            reveal_locked: locked,
            rubric_version: None,
        };
        let entry = QueueEntry {
            assignment: server_assignment,
            position: 1,
            total: 1,
            status: "submitted".into(),
            version: 2,
            due_on: None,
            revealed_at: revealed_elsewhere.then(|| "2026-11-27T11:00:00.000Z".into()),
        };
        let news = cases::app::team::learn_from_server(
            &mut store,
            &reader,
            DEMO_STUDY_ID,
            &membership,
            std::slice::from_ref(&entry),
        )
        .unwrap();
        let case = format!("{revealed_elsewhere} {locked}");
        assert_eq!(news.lock_changed, locked.then_some(true), "{case}");
        assert_eq!(
            news.reveals_recorded,
            u32::from(revealed_elsewhere),
            "{case}"
        );
        let seen_at: Option<String> = store
            .read()
            .query_row(
                "SELECT at FROM audit_log WHERE action = 'ground_truth.revealed'",
                [],
                |r| r.get(0),
            )
            .optional()
            .unwrap();
        let expected = expected.map(|kind| match kind {
            "seen" => ReopenLock::GroundTruthSeen {
                at: seen_at.clone().expect("the reveal recorded"),
            },
            _ => ReopenLock::LockedByLead,
        });
        // Every item of the case reads the lock from what was learned, with no server asked.
        for on_case in on_same_case(&store, rater, assignment) {
            let item = store.reading_item(rater, on_case).unwrap();
            assert_eq!(item.reopen_refused, expected, "{case}");
        }
        // The local reopen applies the same rule, and a reveal here is refused while locked.
        let reopened = store.reopen_rating(rater, assignment);
        assert_eq!(reopened.is_err(), expected.is_some(), "{case}");
        let reveal = cases::curation::reveal::may_reveal(&store, rater, assignment);
        if locked {
            let refusal = reveal.unwrap_err().to_string();
            assert!(
                refusal.contains("closed the ground truth to you"),
                "{refusal}"
            );
        }
        // Told again, nothing changes.
        let again = cases::app::team::learn_from_server(
            &mut store,
            &reader,
            DEMO_STUDY_ID,
            &membership,
            &[entry],
        )
        .unwrap();
        assert_eq!(again, cases::app::team::ServerNews::default(), "{case}");
    }
}

#[test]
fn the_lead_opening_the_lock_again_lets_a_reopen_through_and_items_missing_are_counted() {
    let (_lead, mut store, rater, assignment, reader) = first_case_submitted_in_server_mode();
    let membership = |locked| Membership {
        study_id: DEMO_STUDY_ID.into(),
        title: "t".into(),
        role: StudyRole::Rater,
        reveal_locked: locked,
        rubric_version: Some(3),
    };
    let topped_up = [QueueEntry {
        assignment: 99_999,
        position: 99,
        total: 99,
        status: "not_started".into(),
        version: 0,
        due_on: None,
        revealed_at: None,
    }];
    let learn = |store: &mut Store, locked| {
        cases::app::team::learn_from_server(
            store,
            &reader,
            DEMO_STUDY_ID,
            &membership(locked),
            &topped_up,
        )
        .unwrap()
    };
    let first = learn(&mut store, true);
    assert_eq!(
        (first.lock_changed, first.items_missing, first.rubric_behind),
        (Some(true), 1, Some(3))
    );
    assert!(store.reopen_rating(rater, assignment).is_err());
    let opened = learn(&mut store, false);
    assert_eq!(opened.lock_changed, Some(false));
    store.reopen_rating(rater, assignment).unwrap();
    let audited: Vec<String> = store
        .read()
        .prepare("SELECT after_json FROM audit_log WHERE action = 'team.reveal_lock' ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        audited,
        [r#"{"reveal_locked":true}"#, r#"{"reveal_locked":false}"#]
    );
}

/// The rating of `comment` alone, as another computer would have saved it.
fn comment_only(comment: &str) -> RatingEdit {
    RatingEdit {
        overall: None,
        not_applicable: Default::default(),
        dimensions: BTreeMap::new(),
        correctness: None,
        confidence: None,
        comment: comment.into(),
        seconds_on_task: 12.0,
    }
}

/// A label of the answer's first character.
fn answer_label(category: &str, comment: &str) -> LabelEdit {
    LabelEdit {
        category: category.into(),
        severity: 2,
        span: Some([0, 1]),
        text: SpanText::Answer,
        turn: None,
        mark: None,
        comment: comment.into(),
    }
}

/// Saves `comment` on `assignment` and has the server refuse it as a conflict: the item's queue
/// stops with that edit and everything after it kept.
fn stopped_by_a_conflict(store: &mut Store, rater: i64, assignment: i64, comment: &str) {
    store
        .save_rating(rater, assignment, &comment_only(comment))
        .unwrap();
    let refused = outbox::next_to_send(store).unwrap().unwrap();
    outbox::mark_stopped(store, refused.row, "changed on the server since").unwrap();
}

fn resolutions(store: &Store) -> Vec<(i64, String, i64, String)> {
    store
        .read()
        .prepare(
            "SELECT assignment, resolution, server_version, discarded_json
             FROM team_resolutions ORDER BY id",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_stopped_item_takes_the_servers_rating_or_sends_its_own_over_it_and_no_edit_is_lost_untraced() {
    let (_lead, mut store, rater, queue) = server_mode();
    let (kept, sent) = (queue[0], queue[1]);
    for assignment in [kept, sent] {
        store
            .save_rating(rater, assignment, &comment_only("first, on the server"))
            .unwrap();
    }
    acknowledge_all(&mut store);

    // Item 1: a label and two saves made here after the other computer's save, the first refused.
    store
        .add_error_label(rater, kept, &answer_label("P3", "mine"))
        .unwrap();
    let stopped_row = outbox::next_to_send(&store).unwrap().unwrap();
    outbox::mark_stopped(&mut store, stopped_row.row, "changed on the server since").unwrap();
    store
        .save_rating(rater, kept, &comment_only("mine, made later"))
        .unwrap();
    let status = outbox::status(&store).unwrap();
    assert_eq!(status.stopped.len(), 1);
    assert_eq!(
        (status.stopped[0].assignment, status.stopped[0].kept),
        (kept, 2)
    );
    assert!(matches!(
        outbox::reveal_delivery(&store, kept).unwrap(),
        Some(RevealDelivery::Stopped { .. })
    ));

    let server = |comment: &str, status, version, labels| TeamRating {
        state: TeamRatingState {
            scores: comment_only(comment),
            labels,
        },
        status,
        version,
        updated_at: "2026-11-27T10:00:00.000Z".into(),
        revealed_at: None,
        rubric_version: Some(1),
    };
    let theirs = server(
        "from the other computer",
        RatingStatus::Draft,
        3,
        vec![answer_label("R1", "theirs")],
    );
    outbox::resolve(
        &mut store,
        rater,
        kept,
        Resolution::KeepServer,
        &theirs,
        None,
    )
    .unwrap();
    let item = store.reading_item(rater, kept).unwrap();
    let rating = item.rating.unwrap();
    assert_eq!(rating.comment, "from the other computer");
    assert_eq!(
        rating
            .labels
            .iter()
            .map(|l| (l.category.as_str(), l.comment.as_str()))
            .collect::<Vec<_>>(),
        [("R1", "theirs")]
    );
    let status = outbox::status(&store).unwrap();
    assert!(status.stopped.is_empty(), "{status:?}");
    assert_eq!(status.waiting, 0, "the discarded edits are not sent");
    // What was discarded is kept, whole, with the resolution and in the audit log.
    let recorded = resolutions(&store);
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        (recorded[0].0, recorded[0].1.as_str(), recorded[0].2),
        (kept, "keep_server", 3)
    );
    assert!(
        recorded[0].3.contains("mine, made later"),
        "{}",
        recorded[0].3
    );
    assert!(recorded[0].3.contains("changed on the server since"));
    let audited: String = store
        .read()
        .query_row(
            "SELECT after_json FROM audit_log WHERE action = 'keep the team server''s rating'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(audited.contains("mine, made later"), "{audited}");
    let fold = cases::rating::ratings_against_audit(&store).unwrap();
    assert!(fold.unaccounted.is_empty(), "{:?}", fold.unaccounted);
    // Nothing is left to resolve; the item's next edit starts from the server's version.
    let again = outbox::resolve(
        &mut store,
        rater,
        kept,
        Resolution::KeepServer,
        &theirs,
        None,
    );
    assert!(again
        .unwrap_err()
        .to_string()
        .contains("nothing to resolve"));
    store
        .save_rating(rater, kept, &comment_only("after keeping theirs"))
        .unwrap();
    let next = outbox::next_to_send(&store).unwrap().unwrap();
    assert_eq!(
        (next.server_assignment, next.base_version),
        (stopped_row.server_assignment, 3)
    );
    acknowledge_all(&mut store);

    // Item 2: the other computer submitted it; this one's draft is sent over it.
    stopped_by_a_conflict(&mut store, rater, sent, "mine, sent over theirs");
    let submitted = server(
        "submitted elsewhere",
        RatingStatus::Submitted,
        2,
        Vec::new(),
    );
    outbox::resolve(
        &mut store,
        rater,
        sent,
        Resolution::SendMine,
        &submitted,
        None,
    )
    .unwrap();
    assert_eq!(
        store
            .reading_item(rater, sent)
            .unwrap()
            .rating
            .unwrap()
            .comment,
        "mine, sent over theirs",
        "the local rating is what is sent, unchanged"
    );
    let reopen = outbox::next_to_send(&store).unwrap().unwrap();
    assert_eq!((reopen.base_version, &reopen.edit), (2, &TeamEdit::Reopen));
    outbox::mark_sent(&mut store, reopen.row, 3).unwrap();
    let save = outbox::next_to_send(&store).unwrap().unwrap();
    assert_eq!(save.base_version, 3);
    let TeamEdit::Save { rating } = &save.edit else {
        panic!("a save follows the reopen: {:?}", save.edit);
    };
    assert_eq!(rating.scores.comment, "mine, sent over theirs");
    assert_ne!(save.edit_id, reopen.edit_id);
    outbox::mark_sent(&mut store, save.row, 4).unwrap();
    assert_eq!(
        outbox::next_to_send(&store).unwrap(),
        None,
        "the draft is not submitted"
    );
    let recorded = resolutions(&store);
    assert_eq!(
        (recorded[1].0, recorded[1].1.as_str(), recorded[1].2),
        (sent, "send_mine", 2)
    );
    assert!(recorded[1].3.contains("mine, sent over theirs"));
}

#[test]
fn a_rubric_the_server_moved_on_to_is_taken_here_and_a_rating_made_before_keeps_its_own() {
    // The lead's folder holds the rater's database: kept until the test ends.
    let (_lead, mut store, rater, queue) = server_mode();
    store.set_current_rater(rater).unwrap();
    let reader = cases::app::Session::current(&store)
        .unwrap()
        .reader()
        .unwrap();
    let held = store.reading_item(rater, queue[0]).unwrap().rubric;
    let made = complete_rating(&mut store, rater, queue[0], "under the first rubric");
    store.save_rating(rater, queue[0], &made).unwrap();

    // Unchanged: nothing written.
    assert_eq!(
        cases::app::team::follow_server_rubric(&mut store, &reader, DEMO_STUDY_ID, &held, None)
            .unwrap(),
        None
    );
    // The lead dropped a dimension on the server: taken here as a new version (a rating was made
    // under the one held), and the local rules are the server's from now on.
    let mut moved_on = held.clone();
    let dropped = moved_on.dimensions.pop().unwrap().id;
    let saved = cases::app::team::follow_server_rubric(
        &mut store,
        &reader,
        DEMO_STUDY_ID,
        &moved_on,
        Some(2),
    )
    .unwrap()
    .expect("a change");
    // The server's number is kept beside the local one: told it again, nothing is behind.
    let news = cases::app::team::learn_from_server(
        &mut store,
        &reader,
        DEMO_STUDY_ID,
        &Membership {
            study_id: DEMO_STUDY_ID.into(),
            title: "t".into(),
            role: StudyRole::Rater,
            reveal_locked: false,
            rubric_version: Some(2),
        },
        &[],
    )
    .unwrap();
    assert_eq!(news.rubric_behind, None);
    assert_eq!(
        (saved.version, saved.reason),
        (2, Some(cases::rubric::NewVersionReason::Ratings))
    );
    assert_eq!(
        store.reading_item(rater, queue[1]).unwrap().rubric,
        moved_on
    );
    let mut old_scores = complete_rating(&mut store, rater, queue[1], "");
    old_scores.dimensions.insert(dropped.clone(), 1.0);
    let refused = store
        .save_rating(rater, queue[1], &old_scores)
        .unwrap_err()
        .to_string();
    assert!(refused.contains(&dropped), "{refused}");
    let versions: Vec<(String, i64)> = store
        .read()
        .prepare("SELECT comment, rubric_version FROM ratings ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(versions, [("under the first rubric".to_owned(), 1)]);

    // A study read from a local lead's package keeps its own rubric.
    let (local_lead, local_package, _) = lead_with_rater_package();
    let mut local = remote(local_lead.dir.path(), &local_package);
    let local_rater = rater_id(&local, RATER);
    local.set_current_rater(local_rater).unwrap();
    let reader = cases::app::Session::current(&local)
        .unwrap()
        .reader()
        .unwrap();
    let refused =
        cases::app::team::follow_server_rubric(&mut local, &reader, DEMO_STUDY_ID, &moved_on, None)
            .unwrap_err()
            .to_string();
    assert!(
        refused.contains("not read here from the team server"),
        "{refused}"
    );
}

/// The lead "runs k samples": the demo bundle imported again with `n` new samples of answered
/// tasks (new responses of the same tasks, as a model run adds them). Returns how many were added.
fn lead_adds_samples(lead: &mut Lead, n: usize) -> usize {
    // The process's bundle is shared: the lead's own copy takes the new samples.
    let bundle = lead.dir.path().join("demo");
    support::copy_tree(&support::demo_bundle(), &bundle);
    let file = bundle.join("responses.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for line in text.lines().take(n) {
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        let sample = value["sample"].as_u64().unwrap();
        value["sample"] = (sample + 1000).into();
        value["answer"] = "a new sample, run after the rater package was built".into();
        lines.push(value.to_string());
    }
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    import_bundle_dir(&mut lead.store, &bundle, &NoProgress)
        .unwrap()
        .responses_added
}

/// The lead changes the rubric (the overall scale loses its top level) after the rater package
/// carried the current version: a new version. Returns its number.
fn lead_lowers_the_overall_scale(lead: &mut Lead) -> u32 {
    lead_changes_the_rubric(lead).version
}

fn lead_session(lead: &Lead) -> cases::app::LeadSession {
    cases::app::Session::current(&lead.store)
        .unwrap()
        .study_lead(Action::EditRubric)
        .unwrap()
}

fn lead_changes_the_rubric(lead: &mut Lead) -> cases::rubric::SavedRubric {
    let session = lead_session(lead);
    let mut edited = cases::app::rubric::current(&lead.store, &session, DEMO_STUDY_ID)
        .unwrap()
        .rubric;
    edited.overall.max -= 1.0;
    edited.overall.levels.pop();
    match cases::app::rubric::save(&mut lead.store, &session, DEMO_STUDY_ID, &edited).unwrap() {
        cases::app::rubric::RubricSave::Saved(saved) => {
            assert!(saved.new_version, "{saved:?}");
            saved
        }
        other => panic!("the rubric was not saved: {other:?}"),
    }
}

/// The remote rater's ratings at the lead's: (comment, rubric version), by rating id.
fn merged_versions(lead: &Lead) -> Vec<(String, u32)> {
    let conn = rusqlite::Connection::open(lead.store.path()).unwrap();
    let mut stmt = conn
        .prepare("SELECT comment, rubric_version FROM ratings WHERE rater = ?1 ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([lead.rater], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    rows
}

#[test]
fn results_merge_after_new_samples_and_a_new_rubric_version_under_the_version_the_rater_saw() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");

    // While the rater read, the lead ran new samples and changed the rubric: the first item's
    // overall score (the old scale's top) is one the new version no longer admits.
    assert_eq!(lead_adds_samples(&mut lead, 3), 3);
    assert_eq!(lead_lowers_the_overall_scale(&mut lead), 2);

    let report = merge(&mut lead, &results);
    assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
    assert_eq!((report.added, report.updated, report.unchanged), (2, 0, 0));
    // Recorded under the version the package carried, not the lead's current one.
    assert_eq!(
        merged_versions(&lead),
        [("read offline".to_owned(), 1), ("to finish".to_owned(), 1)]
    );
    let audit: String = lead
        .store
        .read()
        .query_row(
            "SELECT after_json FROM audit_log WHERE action = 'merge rating (added)' LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(audit.contains("\"rubric_version\":1"), "{audit}");

    // A second merge stores nothing: each result once.
    let digest = tables_digest(&lead.store);
    let again = merge(&mut lead, &results);
    assert!(again.conflicts.is_empty(), "{:?}", again.conflicts);
    assert_eq!((again.added, again.updated, again.unchanged), (0, 0, 2));
    assert_eq!(tables_digest(&lead.store), digest, "a second merge wrote");
    assert_eq!(merged_versions(&lead).len(), 2);
}

#[test]
fn a_results_package_whose_item_changed_at_the_lead_is_refused_naming_it_and_nothing_is_written() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");
    // New samples do not matter; a changed item does.
    assert_eq!(lead_adds_samples(&mut lead, 2), 2);

    let first = lead.store.reading_queue(lead.rater, DEMO_STUDY_ID).unwrap()[0].assignment;
    let conn = rusqlite::Connection::open(lead.store.path()).unwrap();
    let (response, case): (i64, i64) = conn
        .query_row(
            "SELECT r.id, t.case_ref FROM assignments a JOIN responses r ON a.response = r.id
             JOIN tasks t ON r.task = t.id WHERE a.id = ?1",
            [first],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let answer: String = conn
        .query_row(
            "SELECT answer FROM responses WHERE id = ?1",
            [response],
            |r| r.get(0),
        )
        .unwrap();

    let refused = |lead: &mut Lead| -> Vec<cases::bundle::Problem> {
        let digest = tables_digest(&lead.store);
        let error = merge_results_package(&mut lead.store, &results, &NoProgress).unwrap_err();
        assert!(
            error.to_string().contains(&results.display().to_string()),
            "{error}"
        );
        assert_eq!(tables_digest(&lead.store), digest, "a refused merge wrote");
        assert!(merged_versions(lead).is_empty());
        match error {
            Error::Package { problems, .. } => problems,
            other => panic!("expected a refused package, got {other}"),
        }
    };

    // The response's text changed (stored responses never change in the app: this is the
    // database edited behind its back).
    conn.execute(
        "UPDATE responses SET answer = answer || ' (edited)' WHERE id = ?1",
        [response],
    )
    .unwrap();
    let problems = refused(&mut lead);
    assert_eq!(problems.len(), 1, "{problems:?}");
    let message = problems[0].to_string();
    assert!(
        message.starts_with("ratings.jsonl:1: item: item 1 (")
            && message.contains("the response's text changed")
            && !message.contains("images"),
        "{message}"
    );

    // The response as it was, one image of the case not: the images are named.
    conn.execute(
        "UPDATE responses SET answer = ?2 WHERE id = ?1",
        rusqlite::params![response, answer],
    )
    .unwrap();
    conn.execute(
        "UPDATE images SET sha256 = 'aa' || substr(sha256, 3) WHERE id = (SELECT min(i.id)
             FROM images i JOIN series s ON i.series = s.id WHERE s.case_ref = ?1)",
        [case],
    )
    .unwrap();
    let problems = refused(&mut lead);
    let message = problems[0].to_string();
    assert!(
        message.contains("item 1 (")
            && message.contains("the case's images changed")
            && !message.contains("response's text"),
        "{problems:?}"
    );
}

/// Makes the lead's record of `exported` what an older build recorded: no rubric version, no
/// digests of what its items carried.
fn forget_what_was_carried(lead: &Lead, exported: &RaterPackageExport) {
    let conn = rusqlite::Connection::open(lead.store.path()).unwrap();
    let changed = conn
        .execute(
            "UPDATE rater_packages SET rubric_version = NULL, rubric_sha256 = NULL,
                 taxonomy_sha256 = NULL WHERE package_id = ?1 AND rubric_version IS NOT NULL",
            [&exported.package_id],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let changed = conn
        .execute(
            "UPDATE rater_package_items SET response_sha256 = NULL, task_sha256 = NULL,
                 case_sha256 = NULL, images_sha256 = NULL
             WHERE package = (SELECT id FROM rater_packages WHERE package_id = ?1)",
            [&exported.package_id],
        )
        .unwrap();
    assert_eq!(changed, exported.items as usize);
}

#[test]
fn a_package_exported_by_an_older_build_merges_as_before() {
    let (mut lead, package, exported) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    forget_what_was_carried(&lead, &exported);
    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");
    let report = merge(&mut lead, &results);
    assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
    assert_eq!((report.added, report.updated, report.unchanged), (2, 0, 0));
    assert_eq!(merged_versions(&lead).len(), 2);
    let digest = tables_digest(&lead.store);
    assert_eq!(merge(&mut lead, &results).unchanged, 2);
    assert_eq!(tables_digest(&lead.store), digest);

    // Such a package is still pinned to the whole study: a new sample refuses it, as before.
    let (mut older, package, exported) = lead_with_rater_package();
    forget_what_was_carried(&older, &exported);
    let dir = older.dir.path().to_path_buf();
    let mut remote = self::remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");
    assert_eq!(lead_adds_samples(&mut older, 1), 1);
    let digest = tables_digest(&older.store);
    let report = merge(&mut older, &results);
    assert!(
        matches!(report.conflicts.as_slice(), [Conflict::StudyChanged { .. }]),
        "{:?}",
        report.conflicts
    );
    assert_eq!(tables_digest(&older.store), digest);
}

#[test]
fn a_rubric_version_a_rater_package_carried_is_never_edited_in_place_so_its_results_still_merge() {
    let mut lead = lead();
    // A study nobody has rated at the lead's site yet: a rubric change would edit the current
    // version in place.
    rusqlite::Connection::open(lead.store.path())
        .unwrap()
        .execute("DELETE FROM ratings", [])
        .unwrap();
    let session = lead_session(&lead);
    let before = cases::app::rubric::current(&lead.store, &session, DEMO_STUDY_ID).unwrap();
    assert_eq!((before.version, before.ratings), (1, 0));
    assert_eq!(before.rater_package_at, None);

    let (package, _) = export_for_site_b(&mut lead);
    let carried = cases::app::rubric::current(&lead.store, &session, DEMO_STUDY_ID).unwrap();
    assert!(carried.rater_package_at.is_some(), "{carried:?}");
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");

    let saved = lead_changes_the_rubric(&mut lead);
    assert_eq!(
        (saved.version, saved.reason),
        (2, Some(cases::rubric::NewVersionReason::RaterPackage))
    );
    let report = merge(&mut lead, &results);
    assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
    assert_eq!(report.added, 2);
    assert_eq!(
        merged_versions(&lead),
        [("read offline".to_owned(), 1), ("to finish".to_owned(), 1)]
    );
}

#[test]
fn a_results_package_whose_rubric_version_was_redefined_is_refused_whole_naming_it() {
    let (mut lead, package, _) = lead_with_rater_package();
    let dir = lead.dir.path().to_path_buf();
    let mut remote = remote(&dir, &package);
    rate_remotely(&mut remote);
    let results = export_results(&remote, &dir, "results.tar");
    // The carried version's definition changed behind the app's back (the app makes a new
    // version instead).
    let changed = rusqlite::Connection::open(lead.store.path())
        .unwrap()
        .execute(
            "UPDATE rubric_versions SET rubric_json = replace(rubric_json, 'Overall quality',
                 'Overall quality, redefined') WHERE version = 1",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let digest = tables_digest(&lead.store);
    let error = merge_results_package(&mut lead.store, &results, &NoProgress).unwrap_err();
    let text = error.to_string();
    assert!(text.contains(&results.display().to_string()), "{text}");
    assert!(
        text.contains("manifest.json: answers_package: rubric version 1,")
            && text.contains("was edited at this site"),
        "{text}"
    );
    assert_eq!(tables_digest(&lead.store), digest);
    assert!(merged_versions(&lead).is_empty());
}
