//! Differences between two versions of a case's ground truth: field by field for the side-by-side
//! history view, and unit by unit (a field, a lesion, a task) to compare two independent
//! curations and merge them into a consensus.
//!
//! Lesions are matched by `id` and tasks by `task_id`, so reordering them is no change and an
//! edit to one lesion is not reported as a change of every lesion after it; the differential is
//! compared by rank, because its order is what it says.

use super::CuratedTruth;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One field that differs: `null` stands for absent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// E.g. `diagnosis`, `differential[1].opposing[0]`, `lesions[l2].marks[0].points_lps_mm`.
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A unit on which two curations differ, with both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// `diagnosis`, `diagnosis_code`, `differential`, `expected_reasoning`, `difficulty`,
    /// `lesions[<id>]` or `tasks[<task_id>]`.
    pub unit: String,
    pub a: Value,
    pub b: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    A,
    B,
}

/// The fields that differ from `before` to `after`, in document order.
pub fn diff_versions(before: &CuratedTruth, after: &CuratedTruth) -> Vec<Change> {
    let mut changes = Vec::new();
    diff_value("", &keyed(before), &keyed(after), &mut changes);
    changes
}

/// The units on which curations `a` and `b` disagree.
pub fn compare(a: &CuratedTruth, b: &CuratedTruth) -> Vec<Disagreement> {
    let (a, b) = (units(a), units(b));
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort_by_key(|name| unit_order(name));
    names.dedup();
    names
        .into_iter()
        .filter_map(|unit| {
            let (left, right) = (
                a.get(unit).cloned().unwrap_or(Value::Null),
                b.get(unit).cloned().unwrap_or(Value::Null),
            );
            (left != right).then(|| Disagreement {
                unit: unit.clone(),
                a: left,
                b: right,
            })
        })
        .collect()
}

/// The consensus of `a` and `b`: what they agree on, and for each disagreement the side
/// `choices` names (a lesion or task chosen from a side that lacks it is left out). Fails with
/// the units no choice settles.
pub fn merge(
    a: &CuratedTruth,
    b: &CuratedTruth,
    choices: &BTreeMap<String, Side>,
) -> Result<CuratedTruth, Vec<String>> {
    let disagreements = compare(a, b);
    let unresolved: Vec<String> = disagreements
        .iter()
        .filter(|d| !choices.contains_key(&d.unit))
        .map(|d| d.unit.clone())
        .collect();
    if !unresolved.is_empty() {
        return Err(unresolved);
    }
    let pick = |unit: &str| choices.get(unit).copied().unwrap_or(Side::A);
    let side = |s: Side| if s == Side::A { a } else { b };
    let mut merged = CuratedTruth {
        diagnosis: side(pick("diagnosis")).diagnosis.clone(),
        diagnosis_code: side(pick("diagnosis_code")).diagnosis_code.clone(),
        differential: side(pick("differential")).differential.clone(),
        lesions: Vec::new(),
        expected_reasoning: side(pick("expected_reasoning")).expected_reasoning.clone(),
        difficulty: side(pick("difficulty")).difficulty,
        tasks: Vec::new(),
    };
    // A's order first, then what only B has.
    let mut lesion_ids: Vec<&str> = a.lesions.iter().map(|l| l.id.as_str()).collect();
    lesion_ids.extend(
        b.lesions
            .iter()
            .map(|l| l.id.as_str())
            .filter(|id| !a.lesions.iter().any(|l| l.id == *id)),
    );
    for id in lesion_ids {
        let chosen = side(pick(&format!("lesions[{id}]")));
        if let Some(lesion) = chosen.lesions.iter().find(|l| l.id == id) {
            merged.lesions.push(lesion.clone());
        }
    }
    let mut task_ids: Vec<&str> = a.tasks.iter().map(|t| t.task_id.as_str()).collect();
    task_ids.extend(
        b.tasks
            .iter()
            .map(|t| t.task_id.as_str())
            .filter(|id| !a.tasks.iter().any(|t| t.task_id == *id)),
    );
    for id in task_ids {
        let chosen = side(pick(&format!("tasks[{id}]")));
        if let Some(task) = chosen.tasks.iter().find(|t| t.task_id == id) {
            merged.tasks.push(task.clone());
        }
    }
    Ok(merged)
}

/// The truth as JSON with lesions and tasks as objects keyed by their ids.
fn keyed(truth: &CuratedTruth) -> Value {
    let mut value = serde_json::to_value(truth).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        for (list, key) in [("lesions", "id"), ("tasks", "task_id")] {
            if let Some(Value::Array(items)) = map.get(list) {
                let by_id: Map<String, Value> = items
                    .iter()
                    .map(|item| {
                        let id = item.get(key).and_then(Value::as_str).unwrap_or_default();
                        (id.to_owned(), item.clone())
                    })
                    .collect();
                map.insert(list.to_owned(), Value::Object(by_id));
            }
        }
    }
    value
}

fn units(truth: &CuratedTruth) -> BTreeMap<String, Value> {
    let mut units = BTreeMap::new();
    let value = serde_json::to_value(truth).unwrap_or(Value::Null);
    for field in [
        "diagnosis",
        "diagnosis_code",
        "differential",
        "expected_reasoning",
        "difficulty",
    ] {
        units.insert(
            field.to_owned(),
            value.get(field).cloned().unwrap_or(Value::Null),
        );
    }
    for lesion in &truth.lesions {
        units.insert(
            format!("lesions[{}]", lesion.id),
            serde_json::to_value(lesion).unwrap_or(Value::Null),
        );
    }
    for task in &truth.tasks {
        units.insert(
            format!("tasks[{}]", task.task_id),
            serde_json::to_value(task).unwrap_or(Value::Null),
        );
    }
    units
}

/// Units in the order a form shows them.
fn unit_order(unit: &str) -> (usize, String) {
    let rank = [
        "diagnosis",
        "diagnosis_code",
        "differential",
        "lesions[",
        "expected_reasoning",
        "difficulty",
        "tasks[",
    ]
    .iter()
    .position(|prefix| unit.starts_with(prefix))
    .unwrap_or(usize::MAX);
    (rank, unit.to_owned())
}

fn diff_value(path: &str, before: &Value, after: &Value, out: &mut Vec<Change>) {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut keys: Vec<&String> = b.keys().collect();
            keys.extend(a.keys().filter(|k| !b.contains_key(*k)));
            for key in keys {
                let child = if path.is_empty() {
                    key.clone()
                } else if is_id_map(path) {
                    format!("{path}[{key}]")
                } else {
                    format!("{path}.{key}")
                };
                diff_value(
                    &child,
                    b.get(key).unwrap_or(&Value::Null),
                    a.get(key).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(b), Value::Array(a)) if !is_points(path) => {
            for index in 0..b.len().max(a.len()) {
                diff_value(
                    &format!("{path}[{index}]"),
                    b.get(index).unwrap_or(&Value::Null),
                    a.get(index).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        _ if before != after => out.push(Change {
            field: path.to_owned(),
            before: before.clone(),
            after: after.clone(),
        }),
        _ => {}
    }
}

/// `lesions` and `tasks` became maps by id: their keys read as `lesions[l1]`.
fn is_id_map(path: &str) -> bool {
    path == "lesions" || path == "tasks"
}

/// A mark's points change as a whole (the mark moved), not coordinate by coordinate.
fn is_points(path: &str) -> bool {
    path.ends_with("points_lps_mm")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curation::CuratedLesion;
    use crate::model::DifferentialItem;

    fn truth() -> CuratedTruth {
        CuratedTruth {
            diagnosis: "Multiple sclerosis".into(),
            diagnosis_code: None,
            differential: vec![DifferentialItem {
                diagnosis: "MS".into(),
                supporting: vec!["ovoid lesions".into()],
                opposing: vec![],
            }],
            lesions: vec![
                CuratedLesion {
                    id: "l1".into(),
                    description: "periventricular".into(),
                    marks: vec![],
                    shown_on: vec![],
                },
                CuratedLesion {
                    id: "l2".into(),
                    description: "juxtacortical".into(),
                    marks: vec![],
                    shown_on: vec![],
                },
            ],
            expected_reasoning: "DIS and DIT".into(),
            difficulty: Some(1),
            tasks: vec![],
        }
    }

    #[test]
    fn the_diff_names_each_changed_field_and_matches_lesions_by_id() {
        let before = truth();
        let mut after = truth();
        after.lesions.swap(0, 1);
        assert!(
            diff_versions(&before, &after).is_empty(),
            "reordering is no change"
        );
        after.lesions[0].description = "juxtacortical, right frontal".into();
        after.differential[0].opposing.push("age".into());
        after.diagnosis_code = Some("G35".into());
        let fields: Vec<String> = diff_versions(&before, &after)
            .into_iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(
            fields,
            [
                "differential[0].opposing[0]",
                "lesions[l2].description",
                "diagnosis_code"
            ]
        );
    }

    #[test]
    fn two_curations_merge_by_the_choices_and_unresolved_units_are_named() {
        let a = truth();
        let mut b = truth();
        b.diagnosis = "Relapsing-remitting multiple sclerosis".into();
        b.lesions.remove(1);
        let disagreements = compare(&a, &b);
        let units: Vec<&str> = disagreements.iter().map(|d| d.unit.as_str()).collect();
        assert_eq!(units, ["diagnosis", "lesions[l2]"]);
        assert_eq!(disagreements[1].b, Value::Null);

        let only_diagnosis = BTreeMap::from([("diagnosis".to_owned(), Side::B)]);
        assert_eq!(merge(&a, &b, &only_diagnosis).unwrap_err(), ["lesions[l2]"]);
        let choices = BTreeMap::from([
            ("diagnosis".to_owned(), Side::B),
            ("lesions[l2]".to_owned(), Side::B),
        ]);
        let merged = merge(&a, &b, &choices).unwrap();
        assert_eq!(merged.diagnosis, b.diagnosis);
        assert_eq!(merged.lesions, b.lesions);
        let keep_both = BTreeMap::from([
            ("diagnosis".to_owned(), Side::A),
            ("lesions[l2]".to_owned(), Side::A),
        ]);
        assert_eq!(merge(&a, &b, &keep_both).unwrap(), a);
    }
}
