//! The calibration report of a stored study, the one way both front ends build it: read the
//! study in one snapshot (under the store's lock), then bootstrap without it.
//!
//! A front end that shows the report as it is built (the app) asks for the [`StudyReport::headline`]
//! first, the verdict's dimension alone, then the whole report; a [`ReportCache`] keeps built
//! reports per study, options and data version, so opening the view again costs nothing until the
//! data changes.

use super::LeadSession;
use crate::analysis::{study_data_then, StudyData};
use crate::automatic_metrics::automatic_metrics_input;
use crate::rating::RatingError;
use crate::store::Store;
use crate::{Error, Result};
use calibration::automatic_metrics::{automatic_metrics_report, AutomaticMetricsInput};
use calibration::bootstrap::Progress;
use calibration::input::{CalibrationInput, LongTable, MissedFindingsInput, ReportOptions};
use calibration::progress::NoProgress;
use calibration::report::{build_report, Report, ReportError};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A study read for its report, with the options completed from it; [`StudyReport::build`]
/// computes the report and needs no store.
pub struct StudyReport {
    /// Which report this is, for the cache: the study, the options as asked, the data version.
    key: CacheKey,
    pub input: CalibrationInput,
    pub options: ReportOptions,
    /// Every grader that scored a response of the study.
    pub graders: Vec<String>,
    /// The stored text metrics, answer lengths and grader runs the report's "automatic metrics
    /// against the clinicians" section reads.
    pub automatic: AutomaticMetricsInput,
    /// What each rubric dimension holds, attached to the whole report.
    pub coverage: Vec<calibration::coverage::DimensionCoverage>,
    /// Per rubric version, the submitted first reads saved under it, attached likewise.
    pub rubric_versions: Vec<calibration::coverage::RubricVersionCount>,
    /// The specs, rubric and taxonomy behind the data, for the report's manifest.
    pub provenance: calibration::manifest::StudyProvenance,
    /// Per model and grader spec run on the study, its reliability from the run records.
    pub model_reliability: Vec<calibration::reliability::ModelReliability>,
    /// Every answer matched against its case's curated diagnosis (`analysis::matched_answers`).
    pub truth_match: Vec<calibration::truth_match::MatchedAnswer>,
}

/// Reads `study_id` for its calibration report. `options` is completed from the study: the
/// rubric's overall scale, and every grader that scored it other than `options.grader` is
/// compared as another version of the grader (drift), never counted as a clinician. A named
/// grader must have scored the study.
pub fn study_report(
    store: &Store,
    lead: &LeadSession,
    study_id: &str,
    options: ReportOptions,
) -> Result<StudyReport> {
    study_report_with_headline(store, lead, study_id, options, |_| {})
}

/// [`study_report`], handing `headline` the headline ([`StudyReport::headline`]) as soon as the
/// scores are read, in the same snapshot, before the ground truth the missed findings need, which
/// is read from the images and is most of the reading at a study's size. A front end shows it
/// while the rest is read and built.
pub fn study_report_with_headline(
    store: &Store,
    _lead: &LeadSession,
    study_id: &str,
    options: ReportOptions,
    headline: impl FnOnce(std::result::Result<Report, ReportError>),
) -> Result<StudyReport> {
    let data = study_data_then(store, study_id, options.grader.as_deref(), |scores| {
        let completed = complete(study_id, &options, scores)?;
        headline(build_report(
            &headline_input(&scores.input),
            &completed,
            &NoProgress,
        ));
        Ok(())
    })?;
    let completed = complete(study_id, &options, &data)?;
    let automatic = automatic_metrics_input(store, study_id, options.grader.as_deref())?;
    let model_reliability =
        calibration::reliability::model_reliability(&run_records(store, study_id)?);
    let truth_match = crate::analysis::matched_answers(store, study_id)?;
    let key = CacheKey {
        study_id: study_id.to_owned(),
        options,
        data_version: data.input.audit_head.clone().unwrap_or_default(),
    };
    Ok(StudyReport {
        key,
        input: data.input,
        options: completed,
        graders: data.graders,
        automatic,
        coverage: data.coverage,
        rubric_versions: data.rubric_versions,
        provenance: data.provenance,
        model_reliability,
        truth_match,
    })
}

/// The run record of every result `neurorater respond`/`grade` (or the workbench) stored for the
/// study: a model's response of one of its tasks, a grader's score of one of its responses.
fn run_records(store: &Store, study_id: &str) -> Result<Vec<calibration::reliability::RunRecord>> {
    let fail = |e| Error::database(store.path(), "reading the run records", e);
    let conn = store.read();
    let mut stmt = conn
        .prepare(
            "SELECT x.spec_name, sp.kind, x.prompt_tokens, x.completion_tokens, x.latency_ms,
                    x.requests, x.cost
             FROM run_results x JOIN run_specs sp ON sp.name = x.spec_name
             LEFT JOIN grader_scores g ON g.id = x.grader_score
             JOIN responses r ON r.id = coalesce(x.response, g.response)
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies s ON c.study = s.id
             WHERE s.study_id = ?1 ORDER BY x.id",
        )
        .map_err(fail)?;
    let records = stmt
        .query_map([study_id], |row| {
            Ok(calibration::reliability::RunRecord {
                name: row.get(0)?,
                kind: row.get(1)?,
                prompt_tokens: row.get::<_, i64>(2)?.max(0) as u64,
                completion_tokens: row.get::<_, i64>(3)?.max(0) as u64,
                latency_ms: row.get::<_, i64>(4)?.max(0) as u64,
                requests: row.get::<_, i64>(5)?.max(0) as u64,
                cost: row.get(6)?,
            })
        })
        .map_err(fail)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(fail)?;
    Ok(records)
}

/// `options` completed from the study's data: its scale, and every other grader as another
/// version of the grader. Refused when the named grader scored nothing of the study.
fn complete(study_id: &str, options: &ReportOptions, data: &StudyData) -> Result<ReportOptions> {
    if let Some(grader) = options.grader.as_deref() {
        if !data.graders.iter().any(|g| g == grader) {
            return Err(Error::Rating(RatingError::Invalid {
                field: "grader".into(),
                message: format!(
                    "`{grader}` scored no response of study {study_id} (graders: {})",
                    if data.graders.is_empty() {
                        "none".to_owned()
                    } else {
                        data.graders.join(", ")
                    }
                ),
            }));
        }
    }
    let mut other_grader_versions = options.other_grader_versions.clone();
    for grader in &data.graders {
        if Some(grader.as_str()) != options.grader.as_deref()
            && !other_grader_versions.contains(grader)
        {
            other_grader_versions.push(grader.clone());
        }
    }
    Ok(ReportOptions {
        other_grader_versions,
        scale: Some(data.scale),
        ..options.clone()
    })
}

/// The graders that scored a response of the study, for a grader picker: one query, not the
/// study's whole report input, so the picker is filled at once however large the study.
pub fn graders(store: &Store, _lead: &LeadSession, study_id: &str) -> Result<Vec<String>> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "listing the study's graders", e);
    let known: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM studies WHERE study_id = ?1)",
            [study_id],
            |row| row.get(0),
        )
        .map_err(fail)?;
    if !known {
        return Err(Error::NotFound {
            what: format!("study {study_id:?}"),
        });
    }
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT g.grader FROM grader_scores g
             JOIN responses r ON g.response = r.id JOIN tasks t ON r.task = t.id
             JOIN cases c ON t.case_ref = c.id JOIN studies s ON c.study = s.id
             WHERE s.study_id = ?1 ORDER BY g.grader",
        )
        .map_err(fail)?;
    let graders = stmt
        .query_map([study_id], |row| row.get(0))
        .map_err(fail)?
        .collect::<rusqlite::Result<Vec<String>>>()
        .map_err(fail)?;
    Ok(graders)
}

/// The version of the data a report is built from: the audit log's head (`N:HASH`). Every change
/// to a study is written with its audit entry in the same transaction, so any change, from this
/// process or another, moves the head, and the same head names the same data.
pub fn data_version(store: &Store, _lead: &LeadSession) -> Result<String> {
    crate::store::audit::head(store.read())
        .map(|head| head.to_string())
        .map_err(|e| Error::database(store.path(), "reading the audit head", e))
}

impl StudyReport {
    /// Bootstraps and builds the report; long, so it reports `progress`, and stops with
    /// [`ReportError::Cancelled`] when `progress` is cancelled.
    pub fn build(&self, progress: &dyn Progress) -> std::result::Result<Report, ReportError> {
        let mut report = build_report(&self.input, &self.options, progress)?;
        report.automatic_metrics =
            automatic_metrics_report(&self.automatic, &self.input, &self.options);
        report.dimension_coverage = Some(self.coverage.clone());
        report.rubric_versions = Some(self.rubric_versions.clone());
        report.model_reliability = Some(self.model_reliability.clone());
        report.answer_accuracy = Some(calibration::truth_match::answer_accuracy(
            &self.truth_match,
            &self.input,
            &self.options,
            report.summary.dimensions.first().map(String::as_str),
        ));
        report.manifest.with_study(&self.provenance);
        if report.automatic_metrics.is_some() {
            report
                .manifest
                .text_metric_model(&self.provenance.text_metric_models);
        }
        Ok(report)
    }

    /// The verdict and its dimension's whole-study section alone, a small part of the report's
    /// work (one section of the dozens a study with subgroups has), for a view to show first.
    /// Every figure in it is the whole report's to the bit (each section's bootstrap depends on
    /// the seed alone), except the alternative annotator test: the report corrects it for every
    /// section at once, so `passed` here may change and is shown only with the whole report.
    /// Subgroups, error categories, pass@k, test-retest, missed findings and the automatic
    /// metrics are left out.
    pub fn headline(&self, progress: &dyn Progress) -> std::result::Result<Report, ReportError> {
        build_report(&headline_input(&self.input), &self.options, progress)
    }

    /// [`StudyReport::build`], kept in `cache` under this study, these options and this data.
    pub fn build_into(
        &self,
        cache: &ReportCache,
        progress: &dyn Progress,
    ) -> std::result::Result<Arc<Report>, ReportError> {
        let report = Arc::new(self.build(progress)?);
        cache.insert(self.key.clone(), Arc::clone(&report));
        Ok(report)
    }
}

/// The verdict's dimension ("overall", else the first by name, as the report orders them) with
/// no grouping column and none of the sections that need more than the scores.
fn headline_input(input: &CalibrationInput) -> CalibrationInput {
    let scores = &input.table.scores;
    let dimension = if scores.iter().any(|s| s.dimension == "overall") {
        "overall"
    } else {
        scores
            .iter()
            .map(|s| s.dimension.as_str())
            .min()
            .unwrap_or("overall")
    };
    CalibrationInput {
        table: LongTable {
            scores: scores
                .iter()
                .filter(|s| s.dimension == dimension)
                .cloned()
                .collect(),
            grouping_columns: Vec::new(),
            items: input.table.items.clone(),
            scales: input.table.scales.clone(),
        },
        errors: Vec::new(),
        correctness: Vec::new(),
        category_buckets: input.category_buckets.clone(),
        repeat_reads: Vec::new(),
        missed_findings: MissedFindingsInput {
            not_checked: Some("computed with the whole report".into()),
            ..MissedFindingsInput::default()
        },
        audit_head: input.audit_head.clone(),
        items_used: input.items_used.clone(),
    }
}

/// What a cached report was built from. The options are the caller's, before [`study_report`]
/// completes them from the data: the same options on the same data complete the same way.
#[derive(Debug, Clone, PartialEq)]
struct CacheKey {
    study_id: String,
    options: ReportOptions,
    data_version: String,
}

/// Reports already built, newest last, so a view opened again, or a grader picked again, is
/// shown at once. An entry is used only while the data version it was built from is the
/// database's; a report of a newer version replaces the study's older ones. Bounded: a report
/// holds every item's pair of scores per section.
pub struct ReportCache {
    entries: Mutex<VecDeque<(CacheKey, Arc<Report>)>>,
    capacity: usize,
}

impl Default for ReportCache {
    /// Room for each grader of a study with a few graders, and a choice of readers or margin.
    fn default() -> Self {
        ReportCache {
            entries: Mutex::new(VecDeque::new()),
            capacity: 6,
        }
    }
}

impl ReportCache {
    /// The report of `study_id` with `options` built from the database as it is now, if one is
    /// kept: the lookup reads only the audit head.
    pub fn get(
        &self,
        store: &Store,
        lead: &LeadSession,
        study_id: &str,
        options: &ReportOptions,
    ) -> Result<Option<Arc<Report>>> {
        let key = CacheKey {
            study_id: study_id.to_owned(),
            options: options.clone(),
            data_version: data_version(store, lead)?,
        };
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        Ok(entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, report)| Arc::clone(report)))
    }

    fn insert(&self, key: CacheKey, report: Arc<Report>) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        // Another version of the same study's data is older or newer than this one; either way
        // only one of them can still be current, and the newest build is the likelier.
        entries.retain(|(k, _)| {
            k.study_id != key.study_id || k.data_version == key.data_version && k != &key
        });
        entries.push_back((key, report));
        while entries.len() > self.capacity {
            entries.pop_front();
        }
    }
}
