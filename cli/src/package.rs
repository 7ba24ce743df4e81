//! `package`: multi-site studies (docs/multisite.md). The lead exports a rater package for a
//! rater elsewhere, the rater imports it into their own database and exports a results package,
//! the lead merges it. A merge with conflicts exits 2 and lists them; nothing conflicting is
//! written.

use crate::data::db_path;
use crate::progress::Bar;
use crate::remote::Remote;
use crate::Failure;
use cases::package::{self, MergeReport};
use cases::store::Store;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum PackageCommand {
    /// Lead: write one rater's queue, its images (de-identified) and the blinded responses and
    /// rubric to a single .tar file to send them.
    ExportRater {
        #[arg(long)]
        db: Option<PathBuf>,
        #[arg(long)]
        study: String,
        /// The rater's name, as `neurorater rater list` shows it.
        #[arg(long)]
        rater: String,
        /// Where the rater works; recorded in both packages and every merged rating's audit entry.
        #[arg(long, default_value = "remote")]
        site: String,
        /// The package file to write (conventionally NAME.nrpkg.tar).
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        json: bool,
        /// Build it on this team server instead, from the rater's queue there (the site is the
        /// rater's account's); its results then go back with `package merge --server`.
        #[arg(long, conflicts_with = "db")]
        server: Option<String>,
        /// The session to use on --server, when you are logged in there under several names.
        #[arg(long, requires = "server")]
        user: Option<String>,
    },
    /// Remote rater: import a rater package into your own database (a new file is best).
    Import {
        #[arg(long)]
        db: Option<PathBuf>,
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Remote rater: write your ratings, error labels and marks, with their audit trail.
    ExportResults {
        #[arg(long)]
        db: Option<PathBuf>,
        /// The rater package to answer, when the database holds more than one.
        #[arg(long)]
        package: Option<String>,
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Lead: merge a results package; conflicts are listed (exit 2), never overwritten.
    Merge {
        #[arg(long)]
        db: Option<PathBuf>,
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Upload it to this team server instead (results of a package the server built).
        #[arg(long, conflicts_with = "db", requires = "study")]
        server: Option<String>,
        /// The study on --server.
        #[arg(long, requires = "server")]
        study: Option<String>,
        /// The session to use on --server, when you are logged in there under several names.
        #[arg(long, requires = "server")]
        user: Option<String>,
    },
}

pub fn run(command: &PackageCommand) -> Result<(), Failure> {
    match command {
        PackageCommand::ExportRater {
            server: Some(server),
            user,
            study,
            rater,
            out,
            json,
            ..
        } => {
            let remote = Remote {
                server: server.clone(),
                study: study.clone(),
                user: user.clone(),
            };
            let bar = Bar::new();
            let outcome = remote.download_package(rater, out, &bar);
            bar.finish();
            let bytes = outcome?;
            if *json {
                crate::print_json(&serde_json::json!({
                    "server": server, "study_id": study, "rater": rater, "out": out, "bytes": bytes,
                }));
            } else {
                say!(
                    "wrote {rater}'s rater package from {server} to {} ({bytes} bytes)",
                    out.display()
                );
            }
            Ok(())
        }
        PackageCommand::ExportRater {
            db,
            study,
            rater,
            site,
            out,
            json,
            ..
        } => {
            let mut store = Store::open_existing(&db_path(db.clone())?)?;
            let lead = cases::app::Session::command_line();
            let bar = Bar::new();
            let outcome =
                cases::app::export_rater_package(&mut store, &lead, study, rater, site, out, &bar);
            bar.finish();
            let summary = outcome?;
            if *json {
                crate::print_json(&summary);
            } else {
                say!(
                    "wrote rater package {} for {} at {} to {}: {} items, {} cases, {} images",
                    summary.package_id,
                    summary.rater,
                    summary.site,
                    summary.out.display(),
                    summary.items,
                    summary.cases,
                    summary.images
                );
            }
            Ok(())
        }
        PackageCommand::Import { db, file, json } => {
            let db = db_path(db.clone())?;
            let created = !db.exists();
            let mut store = Store::open(&db)?;
            let bar = Bar::new();
            let outcome = package::import_rater_package(&mut store, file, &bar);
            bar.finish();
            drop(store);
            if outcome.is_err() && created {
                // A refused package leaves no empty database behind for the rater to wonder at.
                for suffix in ["", "-wal", "-shm"] {
                    let mut path = db.clone().into_os_string();
                    path.push(suffix);
                    let _ = std::fs::remove_file(path);
                }
            }
            let summary = outcome?;
            if *json {
                crate::print_json(&summary);
            } else if summary.already_imported {
                say!(
                    "rater package {} was imported before; nothing changed",
                    summary.package_id
                );
            } else if summary.top_up {
                say!(
                    "rater package {} added {} items to the queue of study {} for {}; images in {}",
                    summary.package_id,
                    summary.items,
                    summary.study_id,
                    summary.rater,
                    summary.images_dir.display()
                );
            } else {
                say!(
                    "imported rater package {} of study {} for {} ({} items); images in {}",
                    summary.package_id,
                    summary.study_id,
                    summary.rater,
                    summary.items,
                    summary.images_dir.display()
                );
            }
            Ok(())
        }
        PackageCommand::ExportResults {
            db,
            package: answers,
            out,
            json,
        } => {
            let store = Store::open_existing(&db_path(db.clone())?)?;
            let bar = Bar::new();
            let outcome = package::export_results_package(&store, answers.as_deref(), out, &bar);
            bar.finish();
            let summary = outcome?;
            if *json {
                crate::print_json(&summary);
            } else {
                say!(
                    "wrote results package {} to {}: {} of {} items rated ({} submitted)",
                    summary.package_id,
                    summary.out.display(),
                    summary.rated,
                    summary.items,
                    summary.submitted
                );
            }
            Ok(())
        }
        PackageCommand::Merge {
            server: Some(server),
            study: Some(study),
            user,
            file,
            json,
            ..
        } => {
            let remote = Remote {
                server: server.clone(),
                study: study.clone(),
                user: user.clone(),
            };
            let report = remote.upload_results(file)?;
            if *json {
                crate::print_json(&report);
            } else {
                say!(
                    "uploaded to {server}: {} applied, {} unchanged",
                    report["applied"],
                    report["unchanged"]
                );
            }
            let left: Vec<String> = ["conflicts", "refused"]
                .iter()
                .flat_map(|kind| report[kind].as_array().cloned().unwrap_or_default())
                .map(|item| {
                    format!(
                        "item {} (line {}): {}",
                        item["item"],
                        item["line"],
                        item["message"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            if left.is_empty() {
                Ok(())
            } else {
                Err(Failure::Input(left))
            }
        }
        PackageCommand::Merge { db, file, json, .. } => {
            let mut store = Store::open_existing(&db_path(db.clone())?)?;
            let bar = Bar::new();
            let outcome = package::merge_results_package(&mut store, file, &bar);
            bar.finish();
            let report = outcome?;
            if *json {
                crate::print_json(&report);
            } else {
                print_report(&report);
            }
            if report.conflicts.is_empty() {
                Ok(())
            } else {
                Err(Failure::Input(
                    report.conflicts.iter().map(ToString::to_string).collect(),
                ))
            }
        }
    }
}

fn print_report(report: &MergeReport) {
    say!(
        "merged results package {} from {} at {}: {} added, {} updated, {} unchanged, {} \
         conflict(s)",
        report.package_id,
        report.rater,
        report.site,
        report.added,
        report.updated,
        report.unchanged,
        report.conflicts.len()
    );
}
