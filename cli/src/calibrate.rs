//! `calibrate`: the calibration report from the database or from a long ratings CSV.

use crate::data::write_file;
use crate::Failure;
use calibration::input::{CalibrationInput, RaterScale, ReportOptions, ScaleSpec};
use cases::app::calibration::StudyReport;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct CalibrateArgs {
    /// Ratings and grader scores from this database (default: the app's).
    #[arg(long, conflicts_with = "ratings")]
    db: Option<PathBuf>,
    /// Ratings from a long CSV (docs/formats.md §3: item,rater,score[,dimension][,groups...]).
    #[arg(long)]
    ratings: Option<PathBuf>,
    /// The study to report on, when the database holds several.
    #[arg(long)]
    study: Option<String>,
    /// A team server the study runs on: its ratings are pulled into the database first
    /// (neurorater pull), then the report is built there. Needs --study.
    #[arg(long, requires = "study", conflicts_with = "ratings")]
    server: Option<String>,
    /// The session to use on --server, when you are logged in there under several names.
    #[arg(long, requires = "server")]
    user: Option<String>,
    /// The LLM grader's rater name; without it the report holds human-human agreement only.
    #[arg(long)]
    grader: Option<String>,
    /// Further grader versions that scored the same items (grader drift). From a database,
    /// every other grader that scored the study is added: a grader is never counted as a
    /// clinician, with or without --grader.
    #[arg(long = "other-grader")]
    other_graders: Vec<String>,
    /// A clinician to leave out of the report (a pilot reader, a trainee); repeatable. The
    /// report names them.
    #[arg(long = "exclude-rater")]
    exclude_raters: Vec<String>,
    #[arg(long, value_enum, default_value = "json")]
    format: ReportFormat,
    /// The report file (json, html), or the folder for the CSV tables; stdout when absent
    /// (json, html).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed of the cluster bootstrap: the same seed gives the same intervals.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 2000)]
    resamples: usize,
    /// The verdict's bar on Pearson r.
    #[arg(long, default_value_t = 0.90)]
    bar: f64,
    /// The non-inferiority margin on r: the grader may fall this far below a held-out clinician
    /// (like for like) and still be non-inferior.
    #[arg(long, default_value_t = 0.05)]
    margin: f64,
    /// The rating scale as MIN,MAX,STEP for a CSV (the database knows its rubric).
    #[arg(long)]
    scale: Option<String>,
    /// One rater's own scale on every dimension, as NAME=MIN,MAX,STEP (e.g. a grader that
    /// scored 0–10 beside clinicians on 1–5); repeatable. A CSV can say it in its
    /// scale_min/scale_max/scale_step columns instead.
    #[arg(long = "rater-scale")]
    rater_scales: Vec<String>,
    /// Map this rater's scores linearly from their scale onto the clinicians' (min to min, max
    /// to max) before comparing them; repeatable. Without it, raters on different scales are
    /// compared by correlation only.
    #[arg(long = "map-scale")]
    map_scales: Vec<String>,
    /// Give the prediction-powered estimates (the report's `ppi`) per task family and level
    /// within each model too, not only per model.
    #[arg(long)]
    ppi_by_task: bool,
    /// A claim of the verdict the grader must meet (a gate for pipelines): `bar` (r ≥ the bar),
    /// `lower-bound` (the interval's lower bound ≥ the bar), `non-inferior` (no worse than one
    /// more of these clinicians, within --margin), `non-inferior-random` (no worse than a
    /// clinician, with clinicians and cases random, within --margin); repeatable. The report is written first; then the run
    /// exits 3 when a claim does not hold, naming it and why.
    #[arg(long = "require", value_enum)]
    require: Vec<Claim>,
}

/// A claim of the verdict (`--require`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Claim {
    Bar,
    LowerBound,
    NonInferior,
    NonInferiorRandom,
}

impl Claim {
    fn name(self) -> &'static str {
        match self {
            Claim::Bar => "bar",
            Claim::LowerBound => "lower-bound",
            Claim::NonInferior => "non-inferior",
            Claim::NonInferiorRandom => "non-inferior-random",
        }
    }

    /// Why the claim does not hold in `verdict`, or `None` when it does. A verdict that could
    /// not be made (no grader, nothing estimable) holds no claim.
    fn failure(
        self,
        verdict: Option<&calibration::report::Verdict>,
        margin: f64,
    ) -> Option<String> {
        let Some(verdict) = verdict else {
            return Some("the report has no verdict (no grader, or nothing to compare)".into());
        };
        let r = verdict.pearson.value().map(|p| p.r);
        let bar = verdict.bar_pearson_r;
        match self {
            Claim::Bar if verdict.meets_bar => None,
            Claim::Bar => Some(match r {
                Some(r) => format!("r = {r:.3} is below the bar {bar}"),
                None => "r is not estimable".into(),
            }),
            Claim::LowerBound if verdict.lower_bound_meets_bar => None,
            Claim::LowerBound => Some(match (verdict.low, bar_test(verdict)) {
                // The interval clears the bar but the bootstrap-t test does not (issue 33).
                (Some(low), Some(test)) if low >= bar => format!(
                    "the lower bound {low:.3} ({}) reaches the bar {bar}, but the case \
                     bootstrap-t test of r ≤ {bar} does not reject it (one-sided p = {:.3})",
                    verdict.method, test.p
                ),
                (Some(low), _) => format!(
                    "the lower bound {low:.3} ({}) is below the bar {bar}",
                    verdict.method
                ),
                (None, _) => "the interval is not estimable (fewer than two cases)".into(),
            }),
            Claim::NonInferior => match verdict.ceiling.value() {
                Some(ceiling) if ceiling.non_inferior => None,
                Some(ceiling) => Some(format!(
                    "the grader's difference from a held-out clinician, {:.3} ({:.3} to {:.3}), \
                     is not above −{} (the margin)",
                    ceiling.difference.estimate,
                    ceiling.difference.low,
                    ceiling.difference.high,
                    ceiling.margin
                )),
                None => Some("the like-for-like comparison is not estimable".into()),
            },
            Claim::NonInferiorRandom => match &verdict.readers_random {
                calibration::Estimate::Value(random) if random.non_inferior => {
                    // The null-imposed test must confirm the interval (issue 33, item 2).
                    ni_test(verdict).filter(|t| !t.claimed).map(|t| {
                        format!(
                            "the interval's lower end {:.3} is above −{margin}, but the \
                             null-imposed test at −{margin} does not confirm it (one-sided p = \
                             {:.3} on t, {} from studies simulated at the margin)",
                            random.low,
                            t.p_t_cases,
                            t.p_null.map_or("none".to_string(), |p| format!("{p:.3}"))
                        )
                    })
                }
                calibration::Estimate::Value(random) => Some(format!(
                    "the grader's difference from a clinician (clinicians and cases random), \
                     {:.3} ({:.3} to {:.3}), is not above −{} (the margin)",
                    random.estimate, random.low, random.high, margin
                )),
                calibration::Estimate::NotEstimable { not_estimable, .. } => Some(format!(
                    "the comparison with clinicians random is not estimable: it {not_estimable}"
                )),
            },
        }
    }
}

fn bar_test(verdict: &calibration::report::Verdict) -> Option<&calibration::error_rates::BarTest> {
    match verdict.error_rates.as_ref()?.bar.test.as_ref()? {
        calibration::error_rates::ClaimTest::Bar(t) => Some(t),
        _ => None,
    }
}

fn ni_test(
    verdict: &calibration::report::Verdict,
) -> Option<&calibration::error_rates::NonInferiorityTest> {
    match verdict
        .error_rates
        .as_ref()?
        .non_inferiority
        .test
        .as_ref()?
    {
        calibration::error_rates::ClaimTest::NonInferior(t) => Some(t),
        _ => None,
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    Json,
    Html,
    Csv,
}

struct Bar(ProgressBar);

impl calibration::progress::Progress for Bar {
    fn phase(&self, _name: &str, total: u64) {
        self.0.set_length(total);
    }

    fn advance(&self, done: u64) {
        self.0.set_position(done);
    }
}

pub fn run(args: &CalibrateArgs) -> Result<(), Failure> {
    if !(args.bar > -1.0 && args.bar < 1.0) {
        return Err(Failure::Input(vec![format!(
            "--bar: {} is not a correlation between -1 and 1",
            args.bar
        )]));
    }
    if let (Some(server), Some(study)) = (&args.server, &args.study) {
        let remote = crate::remote::Remote {
            server: server.clone(),
            study: study.clone(),
            user: args.user.clone(),
        };
        let pulled = remote.pull_into(args.db.clone())?;
        eprintln!(
            "neurorater: pulled from {server}: {} added, {} updated, {} unchanged, {} left alone",
            pulled.added,
            pulled.updated,
            pulled.unchanged,
            pulled.conflicts.len()
        );
    }
    let options = ReportOptions {
        grader: args.grader.clone(),
        other_grader_versions: args.other_graders.clone(),
        excluded_raters: args.exclude_raters.clone(),
        seed: args.seed,
        bootstrap_resamples: args.resamples,
        bar_pearson_r: args.bar,
        non_inferiority_margin: args.margin,
        rater_scales: args
            .rater_scales
            .iter()
            .map(String::as_str)
            .map(parse_rater_scale)
            .collect::<Result<_, _>>()?,
        linear_rescale: args.map_scales.clone(),
        ppi_by_task_family_and_level: args.ppi_by_task,
        ..ReportOptions::default()
    };
    let bar = ProgressBar::new(args.resamples as u64);
    bar.set_style(
        ProgressStyle::with_template("bootstrapping [{bar:40}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let report = match &args.ratings {
        Some(csv) => {
            let (input, scale) = from_csv(csv, args.scale.as_deref())?;
            let options = ReportOptions { scale, ..options };
            calibration::report::build_report(&input, &options, &Bar(bar.clone()))
        }
        None => from_db(args, options)?.build(&Bar(bar.clone())),
    }
    .map_err(|e| Failure::Input(vec![e.to_string()]));
    bar.finish_and_clear();
    let report = report?;
    write_report(args, &report)?;
    let failed: Vec<String> = args
        .require
        .iter()
        .filter_map(|claim| {
            claim
                .failure(
                    report.verdict.as_ref(),
                    report.options.non_inferiority_margin,
                )
                .map(|why| format!("--require {}: does not hold: {why}", claim.name()))
        })
        .collect();
    match failed.is_empty() {
        true => Ok(()),
        false => Err(Failure::Gate(failed)),
    }
}

fn write_report(args: &CalibrateArgs, report: &calibration::report::Report) -> Result<(), Failure> {
    match (args.format, &args.out) {
        (ReportFormat::Json, out) => emit(out.as_deref(), &calibration::tables::to_json(report)),
        (ReportFormat::Html, out) => emit(out.as_deref(), &calibration::html::to_html(report)),
        (ReportFormat::Csv, Some(dir)) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::Internal(format!("{}: cannot create: {e}", dir.display())))?;
            for (name, text) in calibration::tables::to_csv_tables(report) {
                write_file(&dir.join(name), text.as_bytes())?;
            }
            Ok(())
        }
        (ReportFormat::Csv, None) => Err(Failure::Input(vec![
            "--format csv writes several tables: give --out DIR".into(),
        ])),
    }
}

fn emit(out: Option<&Path>, text: &str) -> Result<(), Failure> {
    match out {
        Some(path) => write_file(path, text.as_bytes()),
        None => {
            say!("{text}");
            Ok(())
        }
    }
}

fn from_csv(
    path: &Path,
    scale: Option<&str>,
) -> Result<(CalibrationInput, Option<ScaleSpec>), Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Input(vec![format!("{}: cannot be read: {e}", path.display())]))?;
    let table = calibration::csv_input::parse_long_csv(&text, &path.display().to_string())
        .map_err(|e| Failure::Input(e.to_string().lines().map(str::to_owned).collect()))?;
    let scale = scale.map(parse_scale).transpose()?;
    Ok((
        CalibrationInput {
            table,
            ..CalibrationInput::default()
        },
        scale,
    ))
}

fn parse_rater_scale(text: &str) -> Result<RaterScale, Failure> {
    let wrong = || {
        Failure::Input(vec![format!(
            "--rater-scale: {text:?} is not NAME=MIN,MAX,STEP"
        )])
    };
    let (name, scale) = text.rsplit_once('=').ok_or_else(wrong)?;
    if name.trim().is_empty() {
        return Err(wrong());
    }
    Ok(RaterScale {
        rater: Some(name.trim().to_owned()),
        dimension: None,
        scale: parse_scale(scale).map_err(|_| wrong())?,
    })
}

fn parse_scale(text: &str) -> Result<ScaleSpec, Failure> {
    let parts: Vec<f64> = text
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| Failure::Input(vec![format!("--scale: {text:?} is not MIN,MAX,STEP")]))?;
    match parts[..] {
        [min, max, step] => Ok(ScaleSpec { min, max, step }),
        _ => Err(Failure::Input(vec![format!(
            "--scale: {text:?} is not MIN,MAX,STEP"
        )])),
    }
}

/// The study in the database, read as the app reads it (`cases::app::calibration`).
fn from_db(args: &CalibrateArgs, options: ReportOptions) -> Result<StudyReport, Failure> {
    let path = match &args.db {
        Some(path) => path.clone(),
        None => cases::store::Store::default_path()?,
    };
    let store = cases::store::Store::open_existing(&path)?;
    let study = pick_study(&store, args.study.as_deref())?;
    let lead = cases::app::Session::command_line();
    Ok(cases::app::calibration::study_report(
        &store, &lead, &study, options,
    )?)
}

/// The study `requested` names (refused unless the database holds it), else the database's only
/// one; a database holding several is refused, naming them, so nothing runs on a study nobody
/// chose.
pub(crate) fn pick_study(
    store: &cases::store::Store,
    requested: Option<&str>,
) -> Result<String, Failure> {
    let path = store.path();
    let studies = store.studies()?;
    let names = || {
        studies
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let study = match (requested, studies.as_slice()) {
        (Some(id), _) if studies.iter().any(|s| s.id == id) => id.to_owned(),
        (Some(id), _) => {
            return Err(Failure::Input(vec![format!(
                "--study: {} holds no study {id:?} (it holds {})",
                path.display(),
                names()
            )]))
        }
        (None, [only]) => only.id.clone(),
        (None, []) => {
            return Err(Failure::Input(vec![format!(
                "{}: holds no study; import a bundle first",
                path.display()
            )]))
        }
        (None, several) => {
            return Err(Failure::Input(vec![format!(
                "{}: holds {} studies ({}); name one with --study",
                path.display(),
                several.len(),
                names()
            )]))
        }
    };
    Ok(study)
}
