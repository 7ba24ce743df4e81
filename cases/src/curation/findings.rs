//! Missed findings: ground-truth lesions that a response to a lesion-identification task did not
//! mention and that no rater flagged as missed (taxonomy code P1).
//!
//! **Matching rule.** A lesion's key terms are the location words of [`LOCATION_TERMS`] found in
//! its description (whole words, case-insensitive; a description without any falls back to its
//! words of six letters or more). The response (answer, rationale and every turn) mentions the
//! lesion when it contains at least one key term and, if the description names one side only
//! (`left` or `right`), that side too. A submitted rating's P1 label covers a lesion when it has
//! no mark, or when its mark's centre lies within [`FLAG_RADIUS_MM`] of one of the lesion's marks'
//! centres. Only lesion-identification tasks are checked: a differential-diagnosis answer is not
//! expected to list findings.

use super::versions::current;
use super::CuratedLesion;
use crate::marks::Mark;
use crate::model::{TaskFamily, Turn};
use crate::store::Store;
use crate::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;

/// Anatomical location words a finding is named by.
pub const LOCATION_TERMS: &[&str] = &[
    "frontal",
    "parietal",
    "temporal",
    "occipital",
    "insula",
    "insular",
    "periventricular",
    "juxtacortical",
    "subcortical",
    "cortical",
    "callosal",
    "callosum",
    "thalamus",
    "thalamic",
    "putamen",
    "putaminal",
    "caudate",
    "capsule",
    "basal",
    "ganglia",
    "brainstem",
    "pons",
    "pontine",
    "midbrain",
    "medulla",
    "cerebellum",
    "cerebellar",
    "peduncle",
    "hippocampus",
    "hippocampal",
    "ventricle",
    "ventricular",
    "intraventricular",
    "sellar",
    "suprasellar",
    "pituitary",
    "extra-axial",
    "subdural",
    "extradural",
    "subarachnoid",
    "convexity",
    "falx",
    "mca",
    "aca",
    "pca",
    "centrum",
    "semiovale",
    "white-matter",
];

/// How near a rater's P1 mark must lie to a lesion's mark to count as flagging it, in mm.
pub const FLAG_RADIUS_MM: f64 = 20.0;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissedFinding {
    /// The response's key in the database.
    pub response: i64,
    pub case_id: String,
    pub task_id: String,
    pub model: String,
    pub sample: i64,
    pub lesion_id: String,
    pub description: String,
}

/// Per response of the study's lesion-identification tasks, the lesions of the case's current
/// ground truth it did not mention and no rater flagged; ordered by response, then lesion.
pub fn missed_findings(store: &Store, study_id: &str) -> Result<Vec<MissedFinding>> {
    missed_findings_given(store, study_id, &mut BTreeMap::new())
}

/// [`missed_findings`], with the lesions of cases whose current ground truth the caller has
/// already read (`lesions_of`, by case id; filled with any other it reads), so that it is read
/// once per case.
pub(crate) fn missed_findings_given(
    store: &Store,
    study_id: &str,
    lesions_of: &mut BTreeMap<String, Vec<CuratedLesion>>,
) -> Result<Vec<MissedFinding>> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "reading responses for missed findings", e);
    let mut stmt = conn
        .prepare(
            "SELECT r.id, c.case_id, t.task_id, r.model, r.sample, r.answer,
                    coalesce(r.rationale, ''), r.turns_json
             FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             JOIN studies st ON c.study = st.id
             WHERE st.study_id = ?1 AND t.family = ?2 ORDER BY c.case_id, t.task_id, r.id",
        )
        .map_err(fail)?;
    let family = crate::store::enum_text(&TaskFamily::LesionIdentification);
    let responses = stmt
        .query_map([study_id, family.as_str()], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, i64>(4)?,
                row.get::<_, String>(5)?,
                row.get::<_, String>(6)?,
                row.get::<_, Option<String>>(7)?,
            ))
        })
        .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        .map_err(fail)?;
    let mut flags_of = conn
        .prepare(
            "SELECT e.mark_json FROM error_labels e JOIN ratings g ON e.rating = g.id
             WHERE g.response = ?1 AND g.status = 'submitted' AND e.category = 'P1'",
        )
        .map_err(fail)?;
    let mut missed = Vec::new();
    for (response, case_id, task_id, model, sample, answer, rationale, turns) in responses {
        if !lesions_of.contains_key(&case_id) {
            let lesions = current(store, study_id, &case_id)?
                .map(|v| v.truth.lesions)
                .unwrap_or_default();
            lesions_of.insert(case_id.clone(), lesions);
        }
        let mut text = format!("{answer}\n{rationale}");
        if let Some(turns) = turns {
            let turns: Vec<Turn> = serde_json::from_str(&turns).map_err(|e| Error::Corrupt {
                what: format!("turns of response {response}: {e}"),
            })?;
            for turn in turns {
                text.push('\n');
                text.push_str(&turn.content);
            }
        }
        let words = words(&text);
        let flags: Vec<Option<Mark>> = flags_of
            .query_map([response], |row| row.get::<_, Option<String>>(0))
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(fail)?
            .into_iter()
            .map(|mark| mark.and_then(|json| serde_json::from_str(&json).ok()))
            .collect();
        for lesion in &lesions_of[&case_id] {
            if mentions(&words, &lesion.description) || flagged(&flags, lesion) {
                continue;
            }
            missed.push(MissedFinding {
                response,
                case_id: case_id.clone(),
                task_id: task_id.clone(),
                model: model.clone(),
                sample,
                lesion_id: lesion.id.clone(),
                description: lesion.description.clone(),
            });
        }
    }
    Ok(missed)
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether a response whose words are `said` mentions the lesion described by `description`.
pub fn mentions(said: &[String], description: &str) -> bool {
    let described = words(description);
    let mut key_terms: Vec<&str> = described
        .iter()
        .map(String::as_str)
        .filter(|w| LOCATION_TERMS.contains(w))
        .collect();
    if key_terms.is_empty() {
        key_terms = described
            .iter()
            .map(String::as_str)
            .filter(|w| w.chars().count() >= 6)
            .collect();
    }
    let says = |term: &str| said.iter().any(|w| w == term);
    if !key_terms.iter().any(|term| says(term)) {
        return false;
    }
    let left = described.iter().any(|w| w == "left");
    let right = described.iter().any(|w| w == "right");
    match (left, right) {
        (true, false) => says("left"),
        (false, true) => says("right"),
        _ => true,
    }
}

fn flagged(flags: &[Option<Mark>], lesion: &CuratedLesion) -> bool {
    flags.iter().any(|flag| match flag {
        None => true,
        Some(mark) => lesion.marks.iter().any(|lesion_mark| {
            let (a, b) = (centre(mark), centre(lesion_mark));
            (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt() <= FLAG_RADIUS_MM
        }),
    })
}

/// The mean of a mark's points (an ellipse's centre is its first point).
fn centre(mark: &Mark) -> [f64; 3] {
    if mark.kind == crate::marks::MarkKind::Ellipse {
        return mark.points_lps_mm[0];
    }
    let n = mark.points_lps_mm.len().max(1) as f64;
    let mut sum = [0.0; 3];
    for p in &mark.points_lps_mm {
        for i in 0..3 {
            sum[i] += p[i] / n;
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> Vec<String> {
        words(text)
    }

    #[test]
    fn a_lesion_is_mentioned_by_its_location_and_side() {
        let lesion = "Left middle cerebellar peduncle plaque";
        assert!(mentions(
            &said("A lesion in the left cerebellar peduncle."),
            lesion
        ));
        assert!(!mentions(
            &said("A lesion in the right cerebellar peduncle."),
            lesion
        ));
        assert!(!mentions(&said("Normal study."), lesion));
        // Both sides named: either will do.
        let both = "Bilateral periventricular lesions, left and right";
        assert!(mentions(&said("periventricular foci on the right"), both));
    }

    #[test]
    fn without_a_location_term_long_words_of_the_description_count() {
        let lesion = "Diffuse atrophy";
        assert!(mentions(&said("There is atrophy."), lesion));
        assert!(!mentions(&said("Unremarkable."), lesion));
    }
}
