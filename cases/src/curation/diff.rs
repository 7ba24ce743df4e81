//! Differences between two versions of a case's ground truth: field by field for the side-by-side
//! history view, and unit by unit (a field, a lesion, a task) to compare two independent
//! curations and merge them into a consensus.
//!
//! Lesions are matched by `id` and tasks by `task_id`, so reordering them is no change and an
//! edit to one lesion is not reported as a change of every lesion after it; the differential is
//! compared by rank, because its order is what it says. Two curators name their lesions
//! independently, so a lesion disagreement also says whether the two sides' marks lie in the same
//! place, and a lesion only one side has names the other side's lesion at that place, if any.

use super::{CuratedLesion, CuratedTruth};
use crate::marks::{Mark, MarkKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One field that differs: `null` stands for absent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Change {
    /// E.g. `diagnosis`, `differential[1].opposing[0]`, `lesions[l2].marks[0].points_lps_mm`.
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A unit on which two curations differ, with both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Disagreement {
    /// `diagnosis`, `diagnosis_code`, `differential`, `expected_reasoning`, `difficulty`,
    /// `lesions[<id>]` or `tasks[<task_id>]`.
    pub unit: String,
    pub a: Value,
    pub b: Value,
    /// What a curator needs to decide quickly: for the differential, whether only the order
    /// differs; for a lesion, whether its marks on the two sides overlap (patient coordinates,
    /// so marks on different series of the case compare) and which fields differ.
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
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
    let (units_a, units_b) = (units(a), units(b));
    let mut names: Vec<&String> = units_a.keys().chain(units_b.keys()).collect();
    names.sort_by_key(|name| unit_order(name));
    names.dedup();
    names
        .into_iter()
        .filter_map(|unit| {
            let (left, right) = (
                units_a.get(unit).cloned().unwrap_or(Value::Null),
                units_b.get(unit).cloned().unwrap_or(Value::Null),
            );
            (left != right).then(|| Disagreement {
                unit: unit.clone(),
                detail: detail(unit, a, b),
                a: left,
                b: right,
            })
        })
        .collect()
}

/// Marks within this distance of each other (between the edges of their extents) count as the
/// same place: two curators clicking one small lesion land a few millimetres apart.
pub const SAME_PLACE_MM: f64 = 3.0;

fn detail(unit: &str, a: &CuratedTruth, b: &CuratedTruth) -> Option<String> {
    if unit == "differential" {
        let names = |t: &CuratedTruth| {
            let mut names: Vec<String> = t
                .differential
                .iter()
                .map(|d| d.diagnosis.trim().to_lowercase())
                .collect();
            names.sort();
            names
        };
        let order_a: Vec<&str> = a
            .differential
            .iter()
            .map(|d| d.diagnosis.as_str())
            .collect();
        let order_b: Vec<&str> = b
            .differential
            .iter()
            .map(|d| d.diagnosis.as_str())
            .collect();
        return Some(if order_a == order_b {
            "same diagnoses in the same order; the evidence differs".to_owned()
        } else if names(a) == names(b) {
            "same diagnoses in a different order".to_owned()
        } else {
            "different diagnoses".to_owned()
        });
    }
    let id = unit.strip_prefix("lesions[")?.strip_suffix(']')?;
    let find = |t: &'_ CuratedTruth| t.lesions.iter().find(|l| l.id == id).cloned();
    Some(match (find(a), find(b)) {
        (Some(left), Some(right)) => {
            let mut differs = Vec::new();
            if left.description != right.description {
                differs.push("description");
            }
            if left.marks != right.marks {
                differs.push("marks");
            }
            if left.shown_on != right.shown_on {
                differs.push("slices shown on");
            }
            let place = match same_place(&left, &right) {
                Some(true) => "the marks overlap",
                Some(false) => "the marks do not overlap: two different places",
                None if left.marks.is_empty() && right.marks.is_empty() => "neither side marks it",
                None => "only one side marks it",
            };
            format!("{place}; differs in {}", differs.join(", "))
        }
        (Some(only), None) => only_on_one_side("A", &only, "B", &b.lesions),
        (None, Some(only)) => only_on_one_side("B", &only, "A", &a.lesions),
        (None, None) => return None,
    })
}

fn only_on_one_side(
    side: &str,
    lesion: &CuratedLesion,
    other: &str,
    others: &[CuratedLesion],
) -> String {
    let overlapping: Vec<&str> = others
        .iter()
        .filter(|o| same_place(lesion, o) == Some(true))
        .map(|o| o.id.as_str())
        .collect();
    if overlapping.is_empty() {
        format!("only {side} has it; nothing of {other}'s is marked there")
    } else {
        format!(
            "only {side} has it; its marks overlap {other}'s {} (the same lesion named differently?)",
            overlapping.join(", ")
        )
    }
}

/// Whether any mark of `a` meets any mark of `b`; `None` when either has no marks.
fn same_place(a: &CuratedLesion, b: &CuratedLesion) -> Option<bool> {
    if a.marks.is_empty() || b.marks.is_empty() {
        return None;
    }
    Some(a.marks.iter().any(|m| {
        b.marks.iter().any(|n| {
            let (lo_m, hi_m) = extent(m);
            let (lo_n, hi_n) = extent(n);
            (0..3).all(|i| lo_m[i] <= hi_n[i] + SAME_PLACE_MM && lo_n[i] <= hi_m[i] + SAME_PLACE_MM)
        })
    }))
}

/// The box a mark covers, in patient mm: an arrow's head (what it points at), an ellipse's full
/// outline, a point, or an outline's points.
fn extent(mark: &Mark) -> ([f64; 3], [f64; 3]) {
    let p = &mark.points_lps_mm;
    match (mark.kind, p.as_slice()) {
        (MarkKind::Arrow, [_, head, ..]) => (*head, *head),
        (MarkKind::Ellipse, [c, u, v, ..]) => {
            let half = |i: usize| ((u[i] - c[i]).powi(2) + (v[i] - c[i]).powi(2)).sqrt();
            (
                [c[0] - half(0), c[1] - half(1), c[2] - half(2)],
                [c[0] + half(0), c[1] + half(1), c[2] + half(2)],
            )
        }
        _ => {
            let mut lo = [f64::INFINITY; 3];
            let mut hi = [f64::NEG_INFINITY; 3];
            for point in p {
                for i in 0..3 {
                    lo[i] = lo[i].min(point[i]);
                    hi[i] = hi[i].max(point[i]);
                }
            }
            (lo, hi)
        }
    }
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
    use crate::marks::Plane;
    use crate::model::DifferentialItem;

    fn mark(kind: MarkKind, points: &[[f64; 3]]) -> Mark {
        Mark {
            series_id: "flair".into(),
            kind,
            plane: Plane::Axial,
            points_lps_mm: points.to_vec(),
        }
    }

    fn detail_of<'a>(disagreements: &'a [Disagreement], unit: &str) -> &'a str {
        disagreements
            .iter()
            .find(|d| d.unit == unit)
            .and_then(|d| d.detail.as_deref())
            .unwrap_or_else(|| panic!("no detail for {unit}: {disagreements:?}"))
    }

    #[test]
    fn a_lesion_disagreement_says_whether_the_marks_lie_in_one_place() {
        let mut a = truth();
        let mut b = truth();
        a.lesions[0].marks = vec![mark(MarkKind::Point, &[[10.0, 0.0, 0.0]])];
        // Same id, 40 mm away: two curators meant different lesions.
        b.lesions[0].marks = vec![mark(MarkKind::Point, &[[50.0, 0.0, 0.0]])];
        // An ellipse centred 7 mm from A's point with a 5 mm semi-axis along x: its outline
        // reaches 12 mm, within SAME_PLACE_MM (3) of the point at 10.
        b.lesions.push(CuratedLesion {
            id: "l3".into(),
            description: "periventricular".into(),
            marks: vec![mark(
                MarkKind::Ellipse,
                &[[17.0, 0.0, 0.0], [22.0, 0.0, 0.0], [17.0, 4.0, 0.0]],
            )],
            shown_on: vec![],
        });
        // An arrow whose tail is far away points at A's l1.
        a.lesions[1].marks = vec![mark(
            MarkKind::Arrow,
            &[[90.0, 90.0, 0.0], [51.0, 1.0, 0.0]],
        )];
        b.lesions[1].marks = vec![mark(MarkKind::Point, &[[50.0, 0.0, 0.0]])];
        let found = compare(&a, &b);
        assert_eq!(
            detail_of(&found, "lesions[l1]"),
            "the marks do not overlap: two different places; differs in marks"
        );
        assert_eq!(
            detail_of(&found, "lesions[l2]"),
            "the marks overlap; differs in marks"
        );
        assert_eq!(
            detail_of(&found, "lesions[l3]"),
            "only B has it; its marks overlap A's l1 (the same lesion named differently?)"
        );
        b.lesions[2].marks[0].points_lps_mm =
            vec![[30.0, 0.0, 0.0], [35.0, 0.0, 0.0], [30.0, 4.0, 0.0]];
        assert_eq!(
            detail_of(&compare(&a, &b), "lesions[l3]"),
            "only B has it; nothing of A's is marked there"
        );
    }

    #[test]
    fn a_differential_disagreement_says_whether_only_the_order_differs() {
        let mut a = truth();
        a.differential.push(DifferentialItem {
            diagnosis: "ADEM".into(),
            supporting: vec![],
            opposing: vec![],
        });
        let mut b = a.clone();
        b.differential.reverse();
        assert_eq!(
            detail_of(&compare(&a, &b), "differential"),
            "same diagnoses in a different order"
        );
        b.differential[0].diagnosis = "NMOSD".into();
        assert_eq!(
            detail_of(&compare(&a, &b), "differential"),
            "different diagnoses"
        );
        let mut c = a.clone();
        c.differential[1].supporting.push("young adult".into());
        assert_eq!(
            detail_of(&compare(&a, &c), "differential"),
            "same diagnoses in the same order; the evidence differs"
        );
        assert_eq!(compare(&a, &c)[0].unit, "differential");
        assert!(compare(&a, &a).is_empty());
    }

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
