//! Whether every stored rating is what its audit entries say it is.
//!
//! The hash chain proves the audit log unchanged, not that the `ratings` and `error_labels`
//! tables were only ever changed through [`Store::write`]: another SQLite client can update a
//! score, add a label or insert a rating and write no entry. Every writer of a rating audits it
//! under the entity `rating:ID` with the whole state after the change (a save, a label, submit
//! and reopen: the rating as the reader shows it; a merged results package: the rating as it
//! travelled, under `rating`; `import-ratings`: one entry per rating added). So a rating's
//! current state is the fold of its entries, which is the last one's state; [`ratings_against_audit`]
//! compares it, field by field, with the tables.
//!
//! What old entries can prove: an entry only proves the fields it carries. Entries written before
//! repeat reads carry no `submitted_at`, which is then not compared. Ratings added by
//! `import-ratings` before it wrote an entry per rating have none of their own, only the file's
//! entry with a count: as many rating-less ratings as those imports added, each of the shape an
//! import writes (submitted, no labels, correctness, confidence or comment), are reported as
//! unprovable rather than as changed; any beyond that count are findings.

use super::reading::stored_rating;
use crate::store::Store;
use crate::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// The fields of a rating's state that its audit entries carry and the tables must match.
const COMPARED: [&str; 10] = [
    "status",
    "overall",
    "dimensions",
    "not_applicable",
    "correctness",
    "confidence",
    "comment",
    "seconds_on_task",
    "submitted_at",
    "labels",
];

/// A rating that differs from what its audit entries say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unaccounted {
    pub rating: i64,
    pub reason: String,
}

/// What [`ratings_against_audit`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FoldCheck {
    /// Ratings compared with their entries.
    pub checked: usize,
    /// Ratings from an `import-ratings` of an older version: no entry of their own to compare.
    pub unprovable: usize,
    pub unaccounted: Vec<Unaccounted>,
}

/// Compares every rating (and its labels) with the fold of its audit entries.
pub fn ratings_against_audit(store: &Store) -> Result<FoldCheck> {
    let conn = store.read();
    let fail = |e| Error::database(store.path(), "comparing ratings with the audit log", e);
    // One snapshot: a write between the two reads would look like a change without an entry.
    let snapshot = conn.unchecked_transaction().map_err(fail)?;
    let mut folded: BTreeMap<i64, (i64, Value)> = BTreeMap::new();
    let mut legacy_imported = 0;
    {
        let mut stmt = conn
            .prepare(
                "SELECT id, entity, after_json FROM audit_log
                 WHERE entity LIKE 'rating:%' OR entity LIKE 'ratings-file:%' ORDER BY id",
            )
            .map_err(fail)?;
        let mut rows = stmt.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            let entry: i64 = row.get(0).map_err(fail)?;
            let entity: String = row.get(1).map_err(fail)?;
            let after: Option<String> = row.get(2).map_err(fail)?;
            let after: Value = after
                .and_then(|a| serde_json::from_str(&a).ok())
                .unwrap_or(Value::Null);
            if entity.starts_with("ratings-file:") {
                // An import from before per-rating entries: its summary counts what it added.
                if after.get("per_rating_entries").is_none() {
                    legacy_imported += after["ratings_added"].as_u64().unwrap_or(0);
                }
                continue;
            }
            let Some(rating) = entity
                .strip_prefix("rating:")
                .and_then(|id| id.parse::<i64>().ok())
            else {
                continue;
            };
            let state = match after.get("rating") {
                Some(travelled) => travelled.clone(),
                None => after,
            };
            folded.insert(rating, (entry, state));
        }
    }
    let ratings: Vec<(i64, i64, i64, i64)> = conn
        .prepare("SELECT id, rater, response, read_no FROM ratings ORDER BY id")
        .and_then(|mut stmt| {
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect()
        })
        .map_err(fail)?;
    let mut check = FoldCheck::default();
    let mut without_entry = Vec::new();
    for (id, rater, response, read_no) in ratings {
        let Some((_, view)) = stored_rating(conn, rater, response, read_no).map_err(fail)? else {
            continue;
        };
        let now = serde_json::to_value(&view).expect("a rating serialises");
        match folded.remove(&id) {
            Some((entry, state)) => {
                check.checked += 1;
                if let Some(field) = first_difference(&state, &now) {
                    check.unaccounted.push(Unaccounted {
                        rating: id,
                        reason: format!(
                            "{field} differs: the table holds {}, its last audit entry \
                             ({entry}) {}; changed without an audit entry",
                            shown(&now, field),
                            shown(&state, field)
                        ),
                    });
                }
            }
            None => without_entry.push((id, now)),
        }
    }
    for (id, now) in without_entry {
        if legacy_imported > 0 && looks_imported(&now) {
            legacy_imported -= 1;
            check.unprovable += 1;
        } else {
            check.unaccounted.push(Unaccounted {
                rating: id,
                reason: "it has no audit entry: written without going through NeuroRater".into(),
            });
        }
    }
    for (id, (entry, _)) in folded {
        check.unaccounted.push(Unaccounted {
            rating: id,
            reason: format!(
                "its audit entry {entry} says it exists, but the ratings table has no such row: \
                 deleted without an audit entry"
            ),
        });
    }
    check.unaccounted.sort_by_key(|u| u.rating);
    drop(snapshot);
    Ok(check)
}

/// The first compared field the entry carries whose value differs from the table's.
fn first_difference(state: &Value, now: &Value) -> Option<&'static str> {
    let state = with_label_defaults(state);
    COMPARED
        .into_iter()
        .filter(|field| state.get(field).is_some())
        .find(|field| !same(&state[field], &now[field]))
}

/// The entry's labels with the fields labels gained later, as an entry without them means them:
/// a label audited before answers and turns could be labelled lies in the rationale, and a
/// results package leaves `text` and `turn` out for a rationale span.
fn with_label_defaults(state: &Value) -> Value {
    let mut state = state.clone();
    if let Some(labels) = state.get_mut("labels").and_then(Value::as_array_mut) {
        for label in labels.iter_mut().filter_map(Value::as_object_mut) {
            label
                .entry("text")
                .or_insert_with(|| Value::from("rationale"));
            label.entry("turn").or_insert(Value::Null);
        }
    }
    state
}

/// Equal as data: numbers by value (`2` and `2.0`), label ids ignored (a merge re-creates them).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            let keys = |o: &serde_json::Map<String, Value>| {
                let mut keys: Vec<String> = o.keys().filter(|k| *k != "id").cloned().collect();
                keys.sort();
                keys
            };
            keys(x) == keys(y) && keys(x).iter().all(|k| same(&x[k], &y[k]))
        }
        _ => a == b,
    }
}

fn shown(state: &Value, field: &str) -> String {
    match &state[field] {
        Value::Array(labels) if field == "labels" => format!("{} labels", labels.len()),
        other => other.to_string(),
    }
}

/// The shape `import-ratings` writes: submitted scores, nothing a reader adds.
fn looks_imported(now: &Value) -> bool {
    now["status"] == "submitted"
        && now["labels"].as_array().is_some_and(Vec::is_empty)
        && now["correctness"].is_null()
        && now["confidence"].is_null()
        && now["comment"] == ""
}
