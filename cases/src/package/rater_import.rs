//! Importing a rater package at the rater's site: unpack into a staging folder, check the
//! manifest, the bundle and the queue against each other and against this database, then write
//! everything in one transaction. Nothing is written unless every check passes.
//!
//! A package the team server built may also **top up** a queue already read here: the server
//! added work after the rater's first download (docs/team-server.md). Its items name their
//! server assignments; those already here must be the same case, task and sample (the server
//! never moves a queue), and only the others are added, after the existing ones. Every other
//! package of a study already held is refused: a local lead's package is read in a database of
//! its own.

use super::rater::{
    read_jsonl, PackageItem, PackagePlan, BLINDED_MODEL, BUNDLE_PREFIX, ITEMS, PLANS,
};
use super::unpack::{refuse_held_study, unpack};
use super::{Manifest, PackageKind, MANIFEST};
use crate::bundle::{Bundle, Problem};
use crate::progress::Progress;
use crate::rating::{Rater, RaterRole};
use crate::store::audit::Entry;
use crate::store::{enum_text, Store, Write};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RaterPackageImport {
    pub package_id: String,
    pub study_id: String,
    pub rater: String,
    pub site: String,
    /// The items added to the queue: every item of a new study's package; in a top-up, those the
    /// queue did not hold yet.
    pub items: u32,
    /// The package was imported before; nothing changed.
    pub already_imported: bool,
    /// The study was read here already and the package (built by the team server) topped up its
    /// queue.
    pub top_up: bool,
    /// Where the package's images are kept (referenced by the database, like a bundle's).
    pub images_dir: PathBuf,
}

/// What a package's members say once read: the blinded bundle and the queue.
struct PackageQueue {
    bundle: Bundle,
    plans: Vec<(usize, PackagePlan)>,
    items: Vec<(usize, PackageItem)>,
}

/// Where the package goes in this database.
enum Destination {
    /// The study is not here: the package brings it.
    NewStudy,
    /// The study is here, read from packages the team server built for this rater: the package
    /// adds what the queue lacks.
    TopUp(HeldQueue),
}

/// A queue read here from packages the team server built.
struct HeldQueue {
    rater: i64,
    /// Each server assignment already here, with its (case, task, sample).
    items: BTreeMap<i64, (String, String, u32)>,
    /// Cases held here under another name than the package's ([`case_renames`]), old → new.
    renames: BTreeMap<String, String>,
}

/// Imports a rater package into the remote rater's database: the blinded bundle (images kept in
/// `rater-packages/<package id>/` beside the database), the rater, their plans and queue, all in
/// one transaction. Importing the same package again changes nothing; a package the team server
/// built tops up the queue of a study already read here from the server.
pub fn import_rater_package(
    store: &mut Store,
    file: &Path,
    progress: &dyn Progress,
) -> Result<RaterPackageImport> {
    let mut unpacked = unpack(
        store,
        file,
        progress,
        PackageKind::RaterPackage,
        ("a rater package", "bundle/…, plans.jsonl, items.jsonl"),
        |name| name.starts_with(BUNDLE_PREFIX) || name == PLANS || name == ITEMS,
    )?;
    let manifest = unpacked.manifest.clone();
    let package_id = unpacked.package_id.clone();
    let final_dir = unpacked.images_dir();
    let mut imported = RaterPackageImport {
        package_id: package_id.clone(),
        study_id: manifest.study_id.clone(),
        rater: manifest.rater.name.clone(),
        site: manifest.site.clone(),
        items: 0,
        already_imported: false,
        top_up: false,
        images_dir: final_dir.clone(),
    };
    if let Some(items) = items_imported_before(store, &package_id)? {
        imported.items = items;
        imported.already_imported = true;
        return Ok(imported);
    }
    let destination = destination(store, file, &manifest)?;
    let bundle = unpacked.load_bundle(file, progress)?;
    let queue = PackageQueue {
        bundle,
        plans: read_jsonl(file, &final_dir, PLANS)?,
        items: read_jsonl(file, &final_dir, ITEMS)?,
    };
    let existing_rater = store
        .raters()?
        .into_iter()
        .find(|r| r.name == manifest.rater.name);
    let mut problems = check_queue(&queue);
    problems.extend(check_rater(&manifest, existing_rater.as_ref()));
    let mut destination = destination;
    if let Destination::TopUp(held) = &mut destination {
        held.renames = case_renames(&held.items, &queue.items);
        problems.extend(check_continues(held, &queue.items));
    }
    if !problems.is_empty() {
        return Err(Error::Package {
            package: file.to_path_buf(),
            problems,
        });
    }

    crate::progress::stop_if_cancelled(progress, "importing the rater package")?;
    // A top-up's package carries the whole queue's images, and the study's `bundle_dir` moves to
    // them: the earlier packages' folders are referenced by nothing here once it is imported.
    // Left, every top-up (the app fetches them while the rater reads) would keep another whole
    // copy of the queue's images.
    let earlier = match &destination {
        Destination::TopUp(_) => imported_packages(store, &manifest.study_id)?,
        Destination::NewStudy => Vec::new(),
    };
    progress.phase("writing", 1);
    let added = store.write(|w| {
        write_queue(
            w,
            &manifest,
            &package_id,
            &queue,
            &destination,
            existing_rater.as_ref(),
        )
    })?;
    progress.advance(1);
    // Only folders named as this import names them (a package id, a UUID) are removed.
    let earlier: Vec<PathBuf> = earlier
        .iter()
        .filter(|id| **id != package_id && uuid::Uuid::parse_str(id).is_ok())
        .map(|id| unpacked.images_dir_of(id))
        .collect();
    unpacked.keep();
    // Best effort: a folder left behind is only space.
    for dir in earlier {
        let _ = std::fs::remove_dir_all(dir);
    }
    imported.items = added;
    imported.top_up = matches!(destination, Destination::TopUp(_));
    Ok(imported)
}

/// The ids of the rater packages of `study_id` imported here.
fn imported_packages(store: &Store, study_id: &str) -> Result<Vec<String>> {
    let fail = super::db_fail(store.path(), "listing the study's imported packages");
    let conn = store.read();
    let mut stmt = conn
        .prepare(
            "SELECT p.package_id FROM rater_packages p JOIN studies s ON p.study = s.id
             WHERE s.study_id = ?1 AND p.direction = 'imported'",
        )
        .map_err(&fail)?;
    let ids = stmt
        .query_map([study_id], |r| r.get(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
        .map_err(&fail)?;
    Ok(ids)
}

/// How many items the package brought, if it was imported before.
fn items_imported_before(store: &Store, package_id: &str) -> Result<Option<u32>> {
    let fail = super::db_fail(store.path(), "looking for the package");
    let items: i64 = store
        .read()
        .query_row(
            "SELECT count(*) FROM rater_package_items i JOIN rater_packages p ON i.package = p.id
             WHERE p.package_id = ?1 AND p.direction = 'imported'",
            [package_id],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let package_known: bool = store
        .read()
        .query_row(
            "SELECT count(*) > 0 FROM rater_packages
             WHERE package_id = ?1 AND direction = 'imported'",
            [package_id],
            |r| r.get(0),
        )
        .map_err(super::db_fail(store.path(), "looking for the package"))?;
    Ok(package_known.then_some(items as u32))
}

/// A new study, or a top-up of the queue read here from the team server; anything else is
/// refused before a file is moved.
fn destination(store: &Store, file: &Path, manifest: &Manifest) -> Result<Destination> {
    let conn = store.read();
    let fail = |doing: &'static str| super::db_fail(store.path(), doing);
    let rater: Option<i64> = conn
        .query_row(
            "SELECT DISTINCT p.rater FROM rater_packages p JOIN studies s ON p.study = s.id
             JOIN raters r ON p.rater = r.id
             WHERE s.study_id = ?1 AND p.direction = 'imported' AND r.name = ?2
               AND EXISTS (SELECT 1 FROM rater_package_items i
                           WHERE i.package = p.id AND i.server_assignment IS NOT NULL)",
            params![manifest.study_id, manifest.rater.name],
            |r| r.get(0),
        )
        .optional()
        .map_err(fail("looking for the study's queue from the team server"))?;
    let Some(rater) = rater else {
        // Not a queue read here from the server: a new study, or refused.
        refuse_held_study(store, file, manifest, "a rater package")?;
        return Ok(Destination::NewStudy);
    };
    let mut stmt = conn
        .prepare(
            "SELECT i.server_assignment, c.case_id, t.task_id, r.sample
             FROM rater_package_items i JOIN rater_packages p ON i.package = p.id
             JOIN studies s ON p.study = s.id JOIN assignments a ON i.assignment = a.id
             JOIN responses r ON a.response = r.id JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id
             WHERE s.study_id = ?1 AND p.direction = 'imported'
               AND i.server_assignment IS NOT NULL",
        )
        .map_err(fail("reading the queue held here"))?;
    let items = stmt
        .query_map([&manifest.study_id], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?)))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<BTreeMap<_, _>>>())
        .map_err(fail("reading the queue held here"))?;
    Ok(Destination::TopUp(HeldQueue {
        rater,
        items,
        renames: BTreeMap::new(),
    }))
}

/// The queue against itself and the bundle: items numbered 1, 2, …, each in a plan of the
/// package, answering a blinded response of the bundle, and naming their server assignment all
/// or none, once each.
fn check_queue(queue: &PackageQueue) -> Vec<Problem> {
    let mut problems = Vec::new();
    let plan_numbers: BTreeSet<u32> = queue.plans.iter().map(|(_, p)| p.plan).collect();
    let responses: BTreeSet<(&str, &str, u32)> = queue
        .bundle
        .responses
        .iter()
        .filter(|r| r.value.model == BLINDED_MODEL)
        .map(|r| {
            (
                r.value.case_id.as_str(),
                r.value.task_id.as_str(),
                r.value.sample,
            )
        })
        .collect();
    // Every item of a package the team server built names its server assignment, once.
    let server_built = server_built(&queue.items);
    let mut server_assignments = BTreeSet::new();
    for (expected, (line, item)) in queue.items.iter().enumerate() {
        let mut problem = |field: &str, message: String| {
            problems.push(item_problem(*line, field, message));
        };
        if item.item != expected as u32 + 1 {
            problem(
                "item",
                format!("items are numbered 1, 2, …; expected {}", expected + 1),
            );
        }
        if !plan_numbers.contains(&item.plan) {
            problem("plan", format!("no plan {} in {PLANS}", item.plan));
        }
        if !responses.contains(&(item.case_id.as_str(), item.task_id.as_str(), item.sample)) {
            problem(
                "sample",
                format!(
                    "no response {}/{}/{} in bundle/responses.jsonl",
                    item.case_id, item.task_id, item.sample
                ),
            );
        }
        if item.read_no == 0 || item.position == 0 {
            problem("read_no", "read_no and position count from 1".to_owned());
        }
        match item.server_assignment {
            Some(id) if id < 1 => problem(
                "server_assignment",
                format!("{id}: the team server's assignment ids count from 1"),
            ),
            Some(id) if !server_assignments.insert(id) => problem(
                "server_assignment",
                format!("{id} names an earlier item's assignment too"),
            ),
            _ => {}
        }
        if item.server_assignment.is_some() != server_built {
            problem(
                "server_assignment",
                "either every item names its team server assignment (a package the server \
                 built) or none does (a package a local lead built)"
                    .to_owned(),
            );
        }
    }
    if queue.items.is_empty() {
        problems.push(Problem {
            file: ITEMS.to_owned(),
            line: None,
            field: "-".into(),
            message: "the package holds no assignment".into(),
        });
    }
    problems
}

fn server_built(items: &[(usize, PackageItem)]) -> bool {
    items
        .first()
        .is_some_and(|(_, item)| item.server_assignment.is_some())
}

fn item_problem(line: usize, field: &str, message: String) -> Problem {
    Problem {
        file: ITEMS.to_owned(),
        line: Some(line),
        field: field.to_owned(),
        message,
    }
}

/// The package's rater against the one this database knows by that name; a curator reads
/// nothing blinded.
fn check_rater(manifest: &Manifest, existing: Option<&Rater>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut problem = |message: String| {
        problems.push(Problem {
            file: MANIFEST.to_owned(),
            line: None,
            field: "rater.role".into(),
            message,
        })
    };
    if let Some(rater) = existing.filter(|r| r.role != manifest.rater.role) {
        problem(format!(
            "this database knows {} as a {}, the package as a {}",
            rater.name,
            enum_text(&rater.role),
            enum_text(&manifest.rater.role)
        ));
    }
    if manifest.rater.role == RaterRole::Curator {
        problem("a curator reads nothing blinded".into());
    }
    problems
}

/// The held cases a top-up names otherwise: a server that now names cases by their codes
/// (`case_codes`) sends a rater who holds its older package, with the cases under their ids, the
/// same assignments under new case names. Where every held assignment the package names is the
/// same task and sample, and the old names map one to one onto new ones, the held cases take the
/// package's names ([`write_queue`]), so the rater's queue goes on instead of being refused.
/// Anything less consistent renames nothing, and `check_continues` says what differs.
fn case_renames(
    held: &BTreeMap<i64, (String, String, u32)>,
    items: &[(usize, PackageItem)],
) -> BTreeMap<String, String> {
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    for (_, item) in items {
        let Some((case, task, sample)) = item.server_assignment.and_then(|a| held.get(&a)) else {
            continue;
        };
        if (task, *sample) != (&item.task_id, item.sample) {
            return BTreeMap::new();
        }
        match renames.get(case) {
            Some(new) if *new != item.case_id => return BTreeMap::new(),
            Some(_) => {}
            None => {
                renames.insert(case.clone(), item.case_id.clone());
            }
        }
    }
    renames.retain(|old, new| old != new);
    let targets: BTreeSet<&String> = renames.values().collect();
    let held_cases: BTreeSet<&String> = held.values().map(|(case, _, _)| case).collect();
    let one_to_one =
        targets.len() == renames.len() && targets.iter().all(|new| !held_cases.contains(new));
    if one_to_one {
        renames
    } else {
        BTreeMap::new()
    }
}

/// A top-up continues the queue held here: built by the team server, and every server
/// assignment already here the same case, task and sample as before.
fn check_continues(held: &HeldQueue, items: &[(usize, PackageItem)]) -> Vec<Problem> {
    if !server_built(items) {
        return vec![Problem {
            file: ITEMS.to_owned(),
            line: None,
            field: "server_assignment".into(),
            message: "this database reads the study from the team server: only a package the \
                      server built adds to its queue"
                .into(),
        }];
    }
    items
        .iter()
        .filter_map(|(line, item)| {
            let (case, task, sample) = held.items.get(&item.server_assignment?)?;
            let case = held.renames.get(case).unwrap_or(case);
            let held = (case.clone(), task.clone(), *sample);
            let here = (item.case_id.clone(), item.task_id.clone(), item.sample);
            (held != here).then(|| {
                item_problem(
                    *line,
                    "server_assignment",
                    format!(
                        "assignment {} is {}/{}/{} here and {}/{}/{} in this package: it does \
                         not continue the queue read here",
                        item.server_assignment.unwrap_or_default(),
                        held.0,
                        held.1,
                        held.2,
                        item.case_id,
                        item.task_id,
                        item.sample
                    ),
                )
            })
        })
        .collect()
}

/// Writes the bundle, the rater, the plans and the items the queue lacks, with the package's
/// record and its audit entry; the number of items added.
/// Gives the held cases the package's names ([`case_renames`]), audited, in the import's
/// transaction: the bundle written next then finds each case under its name and moves its series
/// to the new package's folder.
fn rename_held_cases(
    w: &Write<'_>,
    study_id: &str,
    renames: &BTreeMap<String, String>,
) -> Result<()> {
    for (old, new) in renames {
        w.tx()
            .execute(
                "UPDATE cases SET case_id = ?3
                 WHERE study = (SELECT id FROM studies WHERE study_id = ?1) AND case_id = ?2",
                params![study_id, old, new],
            )
            .map_err(|e| w.fail("renaming a case as the team server names it", e))?;
        w.audit(&Entry {
            actor: "team server",
            action: "rename case",
            entity: &format!("study:{study_id}"),
            before: Some(&serde_json::json!({ "case_id": old })),
            after: Some(&serde_json::json!({ "case_id": new })),
        })?;
    }
    Ok(())
}

fn write_queue(
    w: &mut Write<'_>,
    manifest: &Manifest,
    package_id: &str,
    queue: &PackageQueue,
    destination: &Destination,
    existing_rater: Option<&Rater>,
) -> Result<u32> {
    if let Destination::TopUp(held) = destination {
        rename_held_cases(w, &manifest.study_id, &held.renames)?;
    }
    crate::import::write_bundle(w, &queue.bundle)?;
    let tx = w.tx();
    let rater = match (destination, existing_rater) {
        (Destination::TopUp(held), _) => held.rater,
        (Destination::NewStudy, Some(rater)) => rater.id,
        (Destination::NewStudy, None) => crate::rating::insert_rater(
            w,
            &manifest.rater.name,
            manifest.rater.role,
            manifest.rater.years_experience,
        )?,
    };
    let study: i64 = tx
        .query_row(
            "SELECT id FROM studies WHERE study_id = ?1",
            [&manifest.study_id],
            |r| r.get(0),
        )
        .map_err(|e| w.fail("finding the study", e))?;
    let plan_keys = write_plans(w, study, rater, &queue.plans)?;
    let tx = w.tx();
    tx.execute(
        "INSERT INTO rater_packages (package_id, direction, study, rater, site, study_sha256,
             created_at) VALUES (?1, 'imported', ?2, ?3, ?4, ?5, ?6)",
        params![
            package_id,
            study,
            rater,
            manifest.site,
            manifest.study_sha256,
            manifest.created_at
        ],
    )
    .map_err(|e| w.fail("recording the package", e))?;
    let package = tx.last_insert_rowid();
    let held = match destination {
        Destination::TopUp(held) => Some(&held.items),
        Destination::NewStudy => None,
    };
    let new_items: Vec<&PackageItem> = queue
        .items
        .iter()
        .map(|(_, item)| item)
        .filter(|item| {
            held.is_none_or(|held| {
                item.server_assignment
                    .is_none_or(|id| !held.contains_key(&id))
            })
        })
        .collect();
    for item in &new_items {
        let response: i64 = tx
            .query_row(
                "SELECT r.id FROM responses r JOIN tasks t ON r.task = t.id
                 JOIN cases c ON t.case_ref = c.id
                 WHERE c.study = ?1 AND c.case_id = ?2 AND t.task_id = ?3 AND r.model = ?4
                   AND r.sample = ?5",
                params![
                    study,
                    item.case_id,
                    item.task_id,
                    BLINDED_MODEL,
                    item.sample
                ],
                |r| r.get(0),
            )
            .map_err(|e| w.fail("finding an item's response", e))?;
        tx.execute(
            "INSERT INTO assignments (plan, rater, response, read_no, position, overlap,
                 not_before) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                plan_keys[&item.plan],
                rater,
                response,
                item.read_no,
                item.position,
                item.overlap,
                item.not_before
            ],
        )
        .map_err(|e| w.fail("writing the queue", e))?;
        let assignment = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO rater_package_items (package, item, assignment, server_assignment)
             VALUES (?1, ?2, ?3, ?4)",
            params![package, item.item, assignment, item.server_assignment],
        )
        .map_err(|e| w.fail("recording the package", e))?;
    }
    let added = new_items.len() as u32;
    w.audit(&Entry {
        actor: &manifest.rater.name,
        action: match destination {
            Destination::NewStudy => "import rater package",
            Destination::TopUp(_) => "top up from rater package",
        },
        entity: &format!("rater_package:{package_id}"),
        before: None,
        after: Some(&serde_json::json!({
            "study_id": manifest.study_id, "site": manifest.site, "items": added,
            "created_at": manifest.created_at,
        })),
    })?;
    Ok(added)
}

/// The package's plans by number: a plan of the study with the same name (a top-up's) or a new
/// one.
fn write_plans(
    w: &Write<'_>,
    study: i64,
    rater: i64,
    plans: &[(usize, PackagePlan)],
) -> Result<BTreeMap<u32, i64>> {
    let tx = w.tx();
    let mut keys = BTreeMap::new();
    for (_, plan) in plans {
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM assignment_plans WHERE study = ?1 AND name = ?2",
                params![study, plan.name],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| w.fail("reading the study's plans", e))?;
        let key = match existing {
            Some(key) => key,
            None => {
                tx.execute(
                    "INSERT INTO assignment_plans (study, name, seed, overlap_share,
                         repeat_share, repeat_after_days, created_by, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        study,
                        plan.name,
                        plan.seed as i64,
                        plan.overlap_share,
                        plan.repeat_share,
                        plan.repeat_after_days,
                        rater,
                        plan.created_at
                    ],
                )
                .map_err(|e| w.fail("writing the package's plans", e))?;
                tx.last_insert_rowid()
            }
        };
        keys.insert(plan.plan, key);
    }
    Ok(keys)
}
