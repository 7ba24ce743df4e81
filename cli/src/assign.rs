//! `assign`: a study lead's assignment plan from the command line (docs/rating.md): which
//! responses each rater reads, in an order reproducible from the seed. An extension of
//! docs/formats.md §4.

use crate::data::db_path;
use crate::Failure;
use cases::rating::{PlanSpec, Rater, RaterRole, StratifyBy, TopUpSpec};
use cases::store::Store;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct AssignArgs {
    #[arg(long)]
    db: Option<PathBuf>,
    /// The study whose responses are assigned.
    #[arg(long)]
    study: String,
    /// The plan's name, unique within the study.
    #[arg(long)]
    name: String,
    /// Seeds every rater's order; the same seed gives the same queues.
    #[arg(long, required_unless_present = "top_up")]
    seed: Option<u64>,
    /// The study lead creating the plan: a rater's name (any role).
    #[arg(long)]
    lead: String,
    /// A reader, by name; repeat for each (`neurorater rater add` creates them). With
    /// `--top-up`, the readers joining the plan (none: only responses added since are dealt).
    #[arg(long = "rater", required_unless_present = "top_up")]
    raters: Vec<String>,
    /// Share of the study's responses read by every rater (inter-rater agreement), 0–1.
    #[arg(long, default_value_t = 0.0)]
    overlap: f64,
    /// First reads per rater, overlap included; default: the responses are shared out in full.
    #[arg(long)]
    per_rater: Option<u32>,
    /// Share of each rater's first reads read again later (intra-rater reliability), 0–1.
    #[arg(long, default_value_t = 0.0)]
    repeat: f64,
    /// Days before a repeat read opens.
    #[arg(long, default_value_t = 14)]
    repeat_after_days: u32,
    /// Balance each rater's reads across strata of model, sample and/or task_family; repeat
    /// for each key.
    #[arg(long = "stratify-by")]
    stratify_by: Vec<String>,
    /// Top up the existing plan `--name`: seat the `--rater`s given and deal the responses
    /// added since, with the plan's own seed, shares, cap and strata; no queue is reordered.
    #[arg(long, conflicts_with_all = ["seed", "overlap", "per_rater", "repeat", "stratify_by"])]
    top_up: bool,
}

pub fn run(args: &AssignArgs) -> Result<(), Failure> {
    let mut store = Store::open_existing(&db_path(args.db.clone())?)?;
    let known = store.raters()?;
    let find = |field: &str, name: &str| -> Result<&Rater, String> {
        known.iter().find(|r| r.name == name).ok_or_else(|| {
            format!("{field}: no rater named {name:?}; add them with `neurorater rater add`")
        })
    };
    let mut problems = Vec::new();
    let lead = find("--lead", &args.lead)
        .map_err(|m| problems.push(m))
        .ok();
    let raters: Vec<i64> = args
        .raters
        .iter()
        .filter_map(|name| find("--rater", name).map_err(|m| problems.push(m)).ok())
        .map(|r| r.id)
        .collect();
    let stratify_by: Vec<StratifyBy> = args
        .stratify_by
        .iter()
        .filter_map(|key| {
            serde_json::from_value(serde_json::Value::String(key.clone()))
                .map_err(|_| {
                    problems.push(format!(
                        "--stratify-by: {key:?} is not one of model, sample, task_family"
                    ))
                })
                .ok()
        })
        .collect();
    let Some(lead) = lead.filter(|_| problems.is_empty()) else {
        return Err(Failure::Input(problems));
    };
    if args.top_up {
        let spec = TopUpSpec {
            study_id: args.study.clone(),
            plan: args.name.clone(),
            new_raters: raters,
        };
        crate::print_json(&store.top_up_assignment_plan(lead.id, &spec)?);
        return Ok(());
    }
    let spec = PlanSpec {
        study_id: args.study.clone(),
        name: args.name.clone(),
        // Required by the argument parser unless topping up.
        seed: args.seed.unwrap_or_default(),
        raters,
        overlap_share: args.overlap,
        responses_per_rater: args.per_rater,
        repeat_share: args.repeat,
        repeat_after_days: args.repeat_after_days,
        stratify_by,
    };
    crate::print_json(&store.create_assignment_plan(lead.id, &spec)?);
    Ok(())
}

#[derive(clap::Subcommand)]
pub enum RaterCommand {
    /// Add a rater (every rating and every audit entry names one).
    Add {
        name: String,
        /// neuroradiologist, neurologist, resident or curator.
        #[arg(long)]
        role: String,
        #[arg(long)]
        years: Option<u32>,
        #[arg(long)]
        db: Option<PathBuf>,
    },
    /// List the raters as JSON.
    List {
        #[arg(long)]
        db: Option<PathBuf>,
    },
}

pub fn rater(command: &RaterCommand) -> Result<(), Failure> {
    match command {
        RaterCommand::Add {
            name,
            role,
            years,
            db,
        } => {
            let role: RaterRole = serde_json::from_value(serde_json::Value::String(role.clone()))
                .map_err(|_| {
                Failure::Input(vec![format!(
                    "--role: {role:?} is not one of neuroradiologist, neurologist, resident, \
                         curator"
                )])
            })?;
            let mut store = Store::open_existing(&db_path(db.clone())?)?;
            crate::print_json(&store.create_rater(name, role, *years)?);
            Ok(())
        }
        RaterCommand::List { db } => {
            let store = Store::open_existing(&db_path(db.clone())?)?;
            crate::print_json(&store.raters()?);
            Ok(())
        }
    }
}
