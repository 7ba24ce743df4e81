//! `neurorater`: the headless interface (docs/formats.md §4). Glue only: every subcommand parses its
//! arguments, calls the `cases` or `calibration` crate, and maps the outcome to an exit code —
//! 0 success, 2 invalid input (errors name file, line and field), 1 internal failure.

/// `println!` for everything the CLI prints to stdout. A reader that has gone away (`neurorater
/// cases --json | head`) ends the process quietly, as for any Unix filter, instead of the panic
/// `println!` raises on a closed pipe.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::write_stdout_line(format_args!($($arg)*))
    };
}

mod accounts;
mod assign;
mod calibrate;
mod curation;
mod data;
mod imaging;
mod metrics;
mod package;
mod progress;
mod ratings;
mod remote;
mod run;
mod scaffold;
mod team;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "neurorater",
    version,
    about = "NeuroRater without a display: import study \
    bundles, list cases, probe and render images, export annotations, calibrate an LLM grader"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import a study bundle (validated whole, then written in one transaction).
    Import {
        dir: PathBuf,
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Import clinicians' ratings from a long CSV (item,rater,score[,dimension][,...]) as
    /// submitted ratings (validated whole, then written in one transaction).
    ImportRatings {
        csv: PathBuf,
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// List the cases of every study.
    Cases {
        #[arg(long)]
        db: Option<PathBuf>,
        /// Print JSON (the only format for now, kept explicit for scripts).
        #[arg(long, required = true)]
        json: bool,
    },
    /// An image file's facts (DICOM or NIfTI).
    Probe {
        file: PathBuf,
        #[arg(long, required = true)]
        json: bool,
    },
    /// Render frames to 8-bit PNG by the rule of docs/formats.md §4.
    Render(imaging::RenderArgs),
    /// Export raw annotations for other tools.
    Export(data::ExportArgs),
    /// Add or list raters.
    Rater {
        #[command(subcommand)]
        command: assign::RaterCommand,
    },
    /// Create an assignment plan: which responses each rater reads, in an order reproducible from
    /// the seed, with an overlap read by all and optional repeat reads (docs/rating.md).
    Assign(assign::AssignArgs),
    /// Import a ground-truth bundle (validated against the stored cases, then written in one
    /// transaction as a new version per changed case).
    ImportGroundTruth {
        dir: PathBuf,
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// Write the demo study bundle (deterministic, no network).
    Demo {
        #[arg(long)]
        out: PathBuf,
    },
    /// The calibration report: clinicians against the LLM grader.
    Calibrate(calibrate::CalibrateArgs),
    /// The audit log.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Copy the database with SQLite's online backup (safe while the app is running).
    Backup {
        #[arg(long)]
        db: Option<PathBuf>,
        /// The backup file to write (must not exist).
        #[arg(long, required_unless_present = "rotate", conflicts_with = "rotate")]
        out: Option<PathBuf>,
        /// Write a dated backup into this folder and delete the oldest beyond --keep.
        #[arg(long)]
        rotate: Option<PathBuf>,
        /// How many rotated backups to keep.
        #[arg(long, default_value_t = 10, requires = "rotate", value_parser = clap::value_parser!(u16).range(1..))]
        keep: u16,
    },
    /// Multi-site studies: rater packages out, results packages back (docs/multisite.md).
    Package {
        #[command(subcommand)]
        command: package::PackageCommand,
    },
    /// Grade every stored response this grader has not graded yet (docs/formats.md §6).
    Grade(run::GradeArgs),
    /// Ask a model every task of the stored studies, with the key images (docs/formats.md §6).
    Respond(run::RespondArgs),
    /// A study bundle from folders a PACS, a CD or an archive exported (FORMATS.md §7):
    /// de-identified copies, pseudonymous case ids, the key beside the bundle.
    Scaffold(scaffold::ScaffoldArgs),
    /// Add a harness's responses (CSV or JSONL, read through --map) to a bundle's
    /// responses.jsonl; import the bundle again to store them.
    ImportResponses(scaffold::ImportResponsesArgs),
    /// Measure each response's rationale against its case's expected reasoning (MiniLM cosine,
    /// BERTScore, ROUGE-L) where not yet measured, and cache the results in the database.
    Metrics(metrics::MetricsArgs),
    /// Run the team server on PostgreSQL (docs/formats.md §8, docs/team-server.md).
    Serve(team::ServeArgs),
    /// Copy a study from a local database onto the team server's PostgreSQL, or add what is new
    /// (cases, responses, grader scores); optionally invite its lead.
    ServerImport(team::ServerImportArgs),
    /// Log in to a team server; the session is kept in a file only you can read (the password
    /// is read at the prompt or from standard input, and never kept).
    Login(remote::LoginArgs),
    /// End your session on a team server and delete its file.
    Logout(remote::LogoutArgs),
    /// The lead: bring every rating of a study on the team server into the database the study
    /// was copied from, for the report and exports (docs/team-server.md).
    Pull(remote::PullArgs),
    /// The lead: the study's progress on the team server, per rater and per site.
    TeamProgress(remote::TeamProgressArgs),
    /// Accounts on a team server: invitations, password changes and resets, sessions, top-ups
    /// and reveal locks (docs/team-server.md).
    Team {
        #[command(subcommand)]
        command: accounts::TeamCommand,
    },
    /// Replace the database with a backup (keeps the replaced file beside it).
    Restore {
        backup: PathBuf,
        #[arg(long)]
        db: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Check the hash chain; name the first broken entry.
    Verify {
        #[arg(long)]
        db: Option<PathBuf>,
        /// Also fail unless this entry still exists with this hash (as `audit head` printed it):
        /// a log cut short or rewritten since.
        #[arg(long, value_name = "N:HASH")]
        expect_head: Option<cases::store::audit::Head>,
    },
    /// Print the chain's head as N:HASH, to keep outside the database.
    Head {
        #[arg(long)]
        db: Option<PathBuf>,
    },
}

/// How a subcommand failed, which decides the exit code.
pub enum Failure {
    /// The user's input is wrong (exit 2); each line names file, line and field.
    Input(Vec<String>),
    /// Something else went wrong (exit 1).
    Internal(String),
    /// The command did its work and a required claim does not hold (exit 3: `calibrate
    /// --require`); each line says which and why.
    Gate(Vec<String>),
}

impl From<cases::Error> for Failure {
    fn from(error: cases::Error) -> Self {
        use cases::Error::*;
        match &error {
            Imaging(_)
            | SchemaTooNew { .. }
            | NotFound { .. }
            | ImageMissing { .. }
            | ImageChanged { .. }
            | StaleGroundTruth { .. }
            | CurationRefused(_)
            | Rating(_)
            | Package { .. }
            | ServerRatings { .. } => Failure::Input(vec![error.to_string()]),
            Responses { problems } => {
                Failure::Input(problems.iter().map(ToString::to_string).collect())
            }
            Io { source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::AlreadyExists
                ) =>
            {
                Failure::Input(vec![error.to_string()])
            }
            _ => Failure::Internal(error.to_string()),
        }
    }
}

fn write_stdout_line(line: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(error) = writeln!(std::io::stdout().lock(), "{line}") {
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("neurorater: cannot write to standard output: {error}");
            std::process::exit(1);
        }
        std::process::exit(0);
    }
}

/// `value` as pretty JSON on standard output: what every command that reports prints.
fn print_json<T: serde::Serialize>(value: &T) {
    say!(
        "{}",
        serde_json::to_string_pretty(value).expect("a summary serialises")
    );
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Import { dir, db } => data::import(&dir, db),
        Command::ImportRatings { csv, db } => ratings::import(&csv, db),
        Command::Cases { db, json: _ } => data::list_cases(db),
        Command::Probe { file, json: _ } => imaging::probe(&file),
        Command::Render(args) => imaging::render(&args),
        Command::Export(args) => data::export(&args),
        Command::Rater { command } => assign::rater(&command),
        Command::Assign(args) => assign::run(&args),
        Command::ImportGroundTruth { dir, db } => curation::import_ground_truth(&dir, db),
        Command::Demo { out } => data::demo(&out),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::Audit {
            command: AuditCommand::Verify { db, expect_head },
        } => data::audit_verify(db, expect_head.as_ref()),
        Command::Audit {
            command: AuditCommand::Head { db },
        } => data::audit_head(db),
        Command::Backup {
            db,
            out,
            rotate,
            keep,
        } => match (out, rotate) {
            (Some(out), None) => data::backup(db, &out),
            (None, Some(dir)) => data::rotate_backup(db, &dir, usize::from(keep)),
            _ => Err(Failure::Input(vec![
                "backup: give either --out FILE or --rotate DIR".into(),
            ])),
        },
        Command::Restore { backup, db } => data::restore(&backup, db),
        Command::Package { command } => package::run(&command),
        Command::Grade(args) => run::grade(&args),
        Command::Respond(args) => run::respond(&args),
        Command::Scaffold(args) => scaffold::run(&args),
        Command::ImportResponses(args) => scaffold::import_responses(&args),
        Command::Metrics(args) => metrics::run(&args),
        Command::Serve(args) => team::serve(&args),
        Command::ServerImport(args) => team::import(&args),
        Command::Login(args) => remote::login(&args),
        Command::Logout(args) => remote::logout(&args),
        Command::Pull(args) => remote::pull(&args),
        Command::TeamProgress(args) => remote::team_progress(&args),
        Command::Team { command } => accounts::run(&command),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(lines)) => {
            for line in lines {
                eprintln!("{line}");
            }
            ExitCode::from(2)
        }
        Err(Failure::Internal(message)) => {
            eprintln!("neurorater: {message}");
            ExitCode::from(1)
        }
        Err(Failure::Gate(lines)) => {
            for line in lines {
                eprintln!("{line}");
            }
            ExitCode::from(3)
        }
    }
}
