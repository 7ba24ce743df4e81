//! `neurorater scaffold`: a PACS export to a study bundle (FORMATS §7), with a progress bar and
//! Ctrl-C leaving nothing behind.

use crate::progress::Bar;
use crate::Failure;
use cases::harness::{add_to_bundle, read_responses, ColumnMap, Defaults};
use cases::scaffold::{scaffold, Dates, Outcome, ResponsesInput, ScaffoldOptions};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Args)]
pub struct ScaffoldArgs {
    /// Folders (any depth) or files exported by a PACS, a CD or a research archive.
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// The bundle folder to write (new or empty); the key goes beside it as BUNDLE.key.csv.
    #[arg(long)]
    out: PathBuf,
    /// The study id in study.json (default: the bundle folder's name).
    #[arg(long)]
    study_id: Option<String>,
    /// Move every date of a patient by one offset (a year to eleven years back, drawn per run and
    /// written nowhere) instead of removing dates: intervals between scans stay true.
    #[arg(long)]
    shift_dates: bool,
    #[command(flatten)]
    responses: ResponsesArgs,
}

/// A harness's output (CSV or JSONL) and how to read it (docs/bundle.md, "Responses from
/// evaluation harnesses").
#[derive(Args)]
pub struct ResponsesArgs {
    /// The harness's responses file: .csv (with a header) or JSONL.
    #[arg(long, requires = "map")]
    responses: Option<PathBuf>,
    /// Which column fills which field: answer=COL,case_id=COL[,task_id=COL,model=COL,sample=COL,
    /// rationale=COL,prompt=COL,key_images=COL]; JSONL columns may be dotted paths (doc.id).
    #[arg(long, requires = "responses")]
    map: Option<ColumnMap>,
    /// The model's name, when no column holds it (VLMEvalKit writes one file per model).
    #[arg(long, requires = "responses")]
    model: Option<String>,
    /// The task id, when no column holds it.
    #[arg(long, requires = "responses")]
    task: Option<String>,
}

impl ResponsesArgs {
    pub fn input(&self) -> Option<ResponsesInput> {
        Some(ResponsesInput {
            path: self.responses.clone()?,
            map: self.map.clone()?,
            defaults: Defaults {
                model: self.model.clone(),
                task_id: self.task.clone(),
            },
        })
    }
}

pub fn run(args: &ScaffoldArgs) -> Result<(), Failure> {
    let cancel = ctrl_c_flag()?;
    let options = ScaffoldOptions {
        study_id: args.study_id.clone(),
        responses: args.responses.input(),
        dates: if args.shift_dates {
            Dates::ShiftPerPatient
        } else {
            Dates::Remove
        },
    };
    let bar = Bar::new();
    let outcome = scaffold(&args.sources, &args.out, &options, &bar, &cancel);
    bar.finish();
    let report = match outcome? {
        Outcome::Cancelled => {
            return Err(Failure::Internal(
                "stopped: nothing was written; run the command again to scaffold".into(),
            ))
        }
        Outcome::Written(report) => report,
    };
    for skipped in &report.skipped {
        println!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
    for note in &report.notes {
        println!("note: {note}");
    }
    let mut series = 0;
    let mut files = 0;
    for case in &report.cases {
        let shown: Vec<String> = case
            .series
            .iter()
            .map(|s| {
                let basis = s
                    .label_basis
                    .map_or("no telling attribute".to_owned(), |b| format!("from {b}"));
                let files = if s.files == 1 { "1 file" } else { "files" };
                let count = if s.files == 1 {
                    String::new()
                } else {
                    format!("{} ", s.files)
                };
                format!("{} ({}?, {basis}; {count}{files})", s.id, s.label)
            })
            .collect();
        let to_complete: Vec<String> = case
            .to_complete
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok()?.as_str().map(String::from))
            .collect();
        println!(
            "{}: {}; to complete: {}",
            case.id,
            shown.join(", "),
            to_complete.join(", ")
        );
        series += case.series.len();
        files += case.series.iter().map(|s| s.files).sum::<usize>();
    }
    // The scan (finding files, reading headers, grouping) apart from the writing: the figures
    // docs/performance.md compares.
    let took: Vec<String> = bar
        .phase_times()
        .iter()
        .map(|(phase, time)| format!("{phase} {:.2} s", time.as_secs_f64()))
        .collect();
    println!("took: {}", took.join(", "));
    println!(
        "scaffolded {} files into {}: {} cases, {} series, {} image files, {} responses; {} \
         skipped. The key (original study → case id) is {}: keep it apart from the bundle",
        report.files_found,
        report.bundle.display(),
        report.cases.len(),
        series,
        files,
        report.responses,
        report.skipped.len(),
        report.key.display()
    );
    Ok(())
}

#[derive(Args)]
pub struct ImportResponsesArgs {
    /// The harness's responses file: .csv (with a header) or JSONL.
    file: PathBuf,
    /// The bundle whose responses.jsonl receives them (import the bundle again to store them).
    #[arg(long)]
    bundle: PathBuf,
    /// The scaffold's key, to name cases by original StudyInstanceUID, accession number or
    /// source (default: BUNDLE.key.csv beside the bundle, when it exists).
    #[arg(long)]
    key: Option<PathBuf>,
    /// Which column fills which field (as for `scaffold --map`).
    #[arg(long)]
    map: ColumnMap,
    /// The model's name, when no column holds it.
    #[arg(long)]
    model: Option<String>,
    /// The task id, when no column holds it.
    #[arg(long)]
    task: Option<String>,
}

pub fn import_responses(args: &ImportResponsesArgs) -> Result<(), Failure> {
    let defaults = Defaults {
        model: args.model.clone(),
        task_id: args.task.clone(),
    };
    let lines = |problems: Vec<cases::bundle::Problem>| {
        Failure::Input(problems.iter().map(ToString::to_string).collect())
    };
    let responses = read_responses(&args.file, &args.map, &defaults).map_err(lines)?;
    let beside = args.bundle.with_file_name(format!(
        "{}.key.csv",
        args.bundle
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
    ));
    let key = args
        .key
        .clone()
        .or_else(|| beside.is_file().then_some(beside));
    let bar = Bar::new();
    let outcome = add_to_bundle(&args.bundle, responses, &args.file, key.as_deref(), &bar);
    bar.finish();
    let added = outcome.map_err(lines)?;
    println!(
        "{} responses added to {} ({} already there); import the bundle again to store them",
        added.added,
        args.bundle.join("responses.jsonl").display(),
        added.already_there
    );
    Ok(())
}

/// A flag Ctrl-C sets, so the scan stops between files and removes what it wrote.
fn ctrl_c_flag() -> Result<Arc<AtomicBool>, Failure> {
    let flag = Arc::new(AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(format!("cannot watch for Ctrl-C: {e}")))?;
    let set = Arc::clone(&flag);
    std::thread::spawn(move || {
        runtime.block_on(crate::run::stop_signal());
        set.store(true, Ordering::Relaxed);
    });
    Ok(flag)
}
