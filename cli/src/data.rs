//! Subcommands over the study database: import, cases, export, demo, audit, backup, restore.

use crate::progress::Bar;
use crate::Failure;
use cases::export::{Format, What};
use cases::import::import_bundle;
use cases::store::audit::Head;
use cases::store::Store;
use cases::ImportError;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

pub fn db_path(db: Option<PathBuf>) -> Result<PathBuf, Failure> {
    match db {
        Some(path) => Ok(path),
        None => Ok(Store::default_path()?),
    }
}

pub fn import(dir: &Path, db: Option<PathBuf>) -> Result<(), Failure> {
    let db = db_path(db)?;
    // Validate before opening the database, so a broken bundle never creates or touches it.
    let bar = Bar::new();
    let bundle = cases::bundle::load(dir, &bar);
    bar.finish();
    let bundle = bundle
        .map_err(|problems| Failure::Input(problems.iter().map(ToString::to_string).collect()))?;
    let mut store = Store::open(&db)?;
    let bar = Bar::new();
    let outcome = import_bundle(&mut store, &bundle, &bar);
    bar.finish();
    match outcome {
        Ok(summary) => {
            say!(
                "imported study {} into {}: {} cases, {} series, {} images, {} tasks; \
                 {} responses added ({} already stored), {} grader scores added ({} already \
                 stored); {} identifying DICOM attributes found and not stored",
                summary.study_id,
                db.display(),
                summary.cases,
                summary.series,
                summary.images,
                summary.tasks,
                summary.responses_added,
                summary.responses_already_stored,
                summary.grader_scores_added,
                summary.grader_scores_already_stored,
                summary.identifying_attributes_dropped,
            );
            Ok(())
        }
        Err(ImportError::Invalid(problems)) => Err(Failure::Input(
            problems.iter().map(ToString::to_string).collect(),
        )),
        Err(ImportError::Store(e)) => Err(e.into()),
    }
}

pub fn list_cases(db: Option<PathBuf>) -> Result<(), Failure> {
    let store = Store::open(&db_path(db)?)?;
    let mut listing = Vec::new();
    for study in store.studies()? {
        let mut cases = Vec::new();
        for summary in store.cases(&study.id)? {
            // FORMATS §4: each case with its series, each with how many images it holds.
            let series: Vec<serde_json::Value> = store
                .case(&study.id, &summary.id)?
                .series
                .into_iter()
                .map(|s| {
                    serde_json::json!({
                        "id": s.id, "label": s.label, "kind": s.kind, "images": s.n_images,
                    })
                })
                .collect();
            let mut case = serde_json::to_value(&summary).map_err(|e| {
                Failure::Internal(format!("cannot write the case list as JSON: {e}"))
            })?;
            case["series"] = serde_json::Value::Array(series);
            cases.push(case);
        }
        listing.push(serde_json::json!({ "study": study, "cases": cases }));
    }
    say!("{}", to_json(&listing)?);
    Ok(())
}

#[derive(Args)]
pub struct ExportArgs {
    #[arg(long)]
    db: Option<PathBuf>,
    #[arg(long, value_enum)]
    what: ExportWhat,
    /// csv or jsonl for the raw annotations, bundle for ground truth; none for `sr` (§9).
    #[arg(long, value_enum)]
    format: Option<ExportFormat>,
    /// A file for csv and jsonl; a folder for bundle and sr.
    #[arg(long)]
    out: PathBuf,
    /// The study a ground-truth bundle is written for (needed when the database holds several).
    #[arg(long)]
    study: Option<String>,
    /// A team server the study runs on: its ratings are pulled into the database first
    /// (neurorater pull), then the export runs there. Needs --study.
    #[arg(long, requires = "study")]
    server: Option<String>,
    /// The session to use on --server, when you are logged in there under several names.
    #[arg(long, requires = "server")]
    user: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportWhat {
    Ratings,
    Errors,
    GroundTruth,
    /// Model responses as `responses.jsonl` lines (docs/formats.md §1).
    Responses,
    /// Grader scores as `grader.jsonl` lines (docs/formats.md §2).
    Grader,
    /// One DICOM SR per case: lesion marks and image-anchored error labels (docs/formats.md §9,
    /// docs/dicom-sr.md), beside de-identified copies of the series they lie on.
    Sr,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    Csv,
    Jsonl,
    /// Ground truth only: JSON per case and PNG key images (docs/curation.md).
    Bundle,
}

pub fn export(args: &ExportArgs) -> Result<(), Failure> {
    if let (Some(server), Some(study)) = (&args.server, &args.study) {
        let remote = crate::remote::Remote {
            server: server.clone(),
            study: study.clone(),
            user: args.user.clone(),
        };
        remote.pull_into(args.db.clone())?;
    }
    let store = Store::open(&db_path(args.db.clone())?)?;
    let what = match args.what {
        ExportWhat::Ratings => What::Ratings,
        ExportWhat::Errors => What::Errors,
        ExportWhat::GroundTruth => What::GroundTruth,
        ExportWhat::Responses => What::Responses,
        ExportWhat::Grader => What::Grader,
        ExportWhat::Sr => return export_sr(&store, args),
    };
    let Some(format) = args.format else {
        return Err(Failure::Input(vec![
            "--format csv|jsonl|bundle is needed for this export".into(),
        ]));
    };
    let format = match (format, args.what) {
        (ExportFormat::Csv, _) => Format::Csv,
        (ExportFormat::Jsonl, _) => Format::Jsonl,
        (ExportFormat::Bundle, ExportWhat::GroundTruth) => {
            return crate::curation::export_bundle(&store, args.study.as_deref(), &args.out)
        }
        (ExportFormat::Bundle, _) => {
            return Err(Failure::Input(vec![
                "--format bundle is for --what ground-truth; ratings and errors export as csv \
                 or jsonl"
                    .into(),
            ]))
        }
    };
    let text = cases::export::export(&store, what, format)?;
    write_file(&args.out, text.as_bytes())
}

/// `--what sr`: the study's marks as DICOM SR, through the application layer as the study lead.
fn export_sr(store: &Store, args: &ExportArgs) -> Result<(), Failure> {
    if args.format.is_some() {
        return Err(Failure::Input(vec![
            "--what sr writes DICOM files: leave out --format".into(),
        ]));
    }
    let study = crate::calibrate::pick_study(store, args.study.as_deref())?;
    let lead = cases::app::Session::command_line();
    let summary = cases::app::exports::dicom_sr(store, &lead, &study, &args.out)?;
    for skipped in &summary.skipped {
        eprintln!("skipped: {skipped}");
    }
    say!(
        "wrote {} DICOM SR report(s) of study {study} to {}: {} ground-truth lesion mark(s), {} \
         error label mark(s), {} de-identified image(s) beside them{}",
        summary.reports,
        args.out.display(),
        summary.lesion_marks,
        summary.label_marks,
        summary.images,
        if summary.skipped.is_empty() {
            String::new()
        } else {
            format!("; {} mark(s) skipped (listed above)", summary.skipped.len())
        }
    );
    Ok(())
}

pub fn demo(out: &Path) -> Result<(), Failure> {
    let bar = Bar::new();
    let summary = demo::write_demo_bundle(out, &bar)?;
    bar.finish();
    say!(
        "wrote the demo study to {}: {} cases, {} series, {} images, {} responses, {} grader scores",
        out.display(),
        summary.cases,
        summary.series,
        summary.images,
        summary.responses,
        summary.grader_scores
    );
    Ok(())
}

pub fn audit_verify(db: Option<PathBuf>, expect_head: Option<&Head>) -> Result<(), Failure> {
    let store = Store::open_existing(&db_path(db)?)?;
    let verdict = cases::store::audit::verify_anchored(store.read(), expect_head)
        .map_err(|e| Failure::Internal(format!("reading the audit log failed: {e}")))?;
    match verdict {
        cases::store::audit::Verdict::Intact { entries } => {
            let fold = cases::rating::ratings_against_audit(&store)?;
            if !fold.unaccounted.is_empty() {
                return Err(Failure::Input(
                    fold.unaccounted
                        .iter()
                        .map(|u| {
                            format!(
                                "{}: rating {}: {}",
                                store.path().display(),
                                u.rating,
                                u.reason
                            )
                        })
                        .collect(),
                ));
            }
            match expect_head {
                Some(head) => say!(
                    "audit log intact: {entries} entries, hash chain verified, entry {} \
                     unchanged since head {head}",
                    head.entry
                ),
                None => say!("audit log intact: {entries} entries, hash chain verified"),
            }
            say!(
                "ratings: {} match their audit entries{}",
                fold.checked,
                match fold.unprovable {
                    0 => String::new(),
                    n => format!(
                        "; {n} imported by an older import-ratings have no entry of their own to \
                         compare with"
                    ),
                }
            );
            Ok(())
        }
        cases::store::audit::Verdict::Broken { entry_id, reason } => {
            Err(Failure::Input(vec![format!(
                "{}: audit log entry {entry_id} is broken: {reason}",
                store.path().display()
            )]))
        }
    }
}

pub fn audit_head(db: Option<PathBuf>) -> Result<(), Failure> {
    let store = Store::open_existing(&db_path(db)?)?;
    let head = cases::store::audit::head(store.read())
        .map_err(|e| Failure::Internal(format!("reading the audit log failed: {e}")))?;
    say!("{head}");
    Ok(())
}

pub fn backup(db: Option<PathBuf>, out: &Path) -> Result<(), Failure> {
    let store = Store::open_existing(&db_path(db)?)?;
    let head = store.backup_to(out)?;
    say!(
        "backed up {} to {}; audit head {head}",
        store.path().display(),
        out.display()
    );
    Ok(())
}

pub fn rotate_backup(db: Option<PathBuf>, dir: &Path, keep: usize) -> Result<(), Failure> {
    let store = Store::open_existing(&db_path(db)?)?;
    let (taken, head) = store.rotate_backup(dir, keep)?;
    say!(
        "backed up {} to {} (keeping the newest {keep} in {}); audit head {head}",
        store.path().display(),
        taken.path.display(),
        dir.display()
    );
    Ok(())
}

pub fn restore(backup: &Path, db: Option<PathBuf>) -> Result<(), Failure> {
    let db = db_path(db)?;
    let saved = cases::store::restore(backup, &db)?;
    say!(
        "restored {} from {}; the replaced content is kept in {}",
        db.display(),
        backup.display(),
        saved.display()
    );
    Ok(())
}

pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map_err(|e| Failure::Internal(format!("could not write JSON: {e}")))
}

pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Internal(format!("{}: cannot write: {e}", path.display())))
}
