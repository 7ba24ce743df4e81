//! Clinicians' ratings from the long CSV into a real SQLite store holding the demo study: what is
//! written, that a second import changes nothing, and that refused files leave the store as it
//! was, with every problem on its own `FILE:LINE: field: message`.

use cases::import::import_bundle_dir;
use cases::progress::NoProgress;
use cases::ratings_import::{import_ratings_csv, ASSUMED_ROLE};
use cases::store::Store;
use cases::ImportError;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[path = "support/demo_study.rs"]
mod demo_study;

fn store_with_demo(dir: &Path) -> Store {
    let mut store = Store::open(&dir.join("study.sqlite")).expect("store");
    import_bundle_dir(&mut store, &demo_study::demo_bundle(), &NoProgress).expect("demo imports");
    store
}

/// The demo's ratings file split naively (it has no quoted fields): header and rows.
fn demo_rows() -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(demo_study::demo_bundle().join("ratings.csv"))
        .expect("ratings.csv");
    let mut lines = text.lines().filter(|l| !l.is_empty());
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

fn is_grader(rater: &str) -> bool {
    rater.starts_with("demo-grader")
}

/// Every row of the tables an import may touch, as text: equal snapshots mean nothing changed.
fn snapshot(store: &Store) -> BTreeMap<&'static str, Vec<String>> {
    let mut out = BTreeMap::new();
    for (table, sql) in [
        (
            "raters",
            "SELECT id || '|' || name || '|' || role FROM raters ORDER BY id",
        ),
        (
            "ratings",
            "SELECT id || '|' || response || '|' || rater || '|' || read_no || '|' ||
                    ifnull(overall, '-') || '|' || dimensions_json || '|' || status
             FROM ratings ORDER BY id",
        ),
        (
            "audit_log",
            "SELECT id || '|' || hash FROM audit_log ORDER BY id",
        ),
    ] {
        let mut stmt = store.read().prepare(sql).unwrap();
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        out.insert(table, rows);
    }
    out
}

fn problems(outcome: Result<impl std::fmt::Debug, ImportError>) -> Vec<String> {
    match outcome {
        Err(ImportError::Invalid(problems)) => problems.iter().map(ToString::to_string).collect(),
        other => panic!("expected a refused import, got {other:?}"),
    }
}

#[test]
fn the_demo_ratings_become_submitted_first_reads_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_demo(dir.path());
    let path = demo_study::demo_bundle().join("ratings.csv");
    let (header, rows) = demo_rows();
    let (item_at, rater_at, score_at, dim_at) = (
        header.iter().position(|h| h == "item").unwrap(),
        header.iter().position(|h| h == "rater").unwrap(),
        header.iter().position(|h| h == "score").unwrap(),
        header.iter().position(|h| h == "dimension").unwrap(),
    );
    let clinician_rows: Vec<&Vec<String>> =
        rows.iter().filter(|r| !is_grader(&r[rater_at])).collect();
    let expected_ratings: BTreeSet<(&str, &str)> = clinician_rows
        .iter()
        .map(|r| (r[item_at].as_str(), r[rater_at].as_str()))
        .collect();
    let expected_raters: Vec<String> = clinician_rows
        .iter()
        .map(|r| r[rater_at].clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    let audit_before = snapshot(&store)["audit_log"].len();
    let summary = import_ratings_csv(&mut store, &path, &NoProgress).expect("imports");
    assert_eq!(summary.rows, rows.len());
    assert_eq!(summary.ratings_added, expected_ratings.len());
    assert_eq!(summary.ratings_already_stored, 0);
    assert_eq!(
        summary.grader_rows_checked,
        rows.len() - clinician_rows.len()
    );
    assert_eq!(summary.raters_added, expected_raters);
    assert!(
        summary.roles_assumed.is_empty(),
        "the demo file gives every role"
    );
    let roles: BTreeMap<String, String> = store
        .raters()
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r.name,
                serde_json::to_value(r.role)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(roles["neurologist-C"], "neurologist");
    assert_eq!(roles["neurorad-A"], "neuroradiologist");

    let after = snapshot(&store);
    assert_eq!(after["ratings"].len(), expected_ratings.len());
    assert_eq!(
        after["audit_log"].len(),
        audit_before + 1 + expected_ratings.len(),
        "one audit entry for the file and one per rating (its state, for `audit verify`)"
    );
    assert_eq!(after["raters"].len(), expected_raters.len());

    // One rating read back: its overall and dimension scores are the file's rows.
    let (item, rater) = *expected_ratings.iter().next().unwrap();
    let file_scores: BTreeMap<String, f64> = clinician_rows
        .iter()
        .filter(|r| r[item_at] == item && r[rater_at] == rater)
        .map(|r| (r[dim_at].clone(), r[score_at].parse().unwrap()))
        .collect();
    let parts: Vec<&str> = item.split('/').collect();
    let (overall, dimensions, status, read_no, submitted_at): (
        f64,
        String,
        String,
        i64,
        Option<String>,
    ) = store
        .read()
        .query_row(
            "SELECT g.overall, g.dimensions_json, g.status, g.read_no, g.submitted_at
             FROM ratings g JOIN raters ra ON g.rater = ra.id JOIN responses r ON g.response = r.id
             JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
             WHERE ra.name = ?1 AND c.case_id = ?2 AND t.task_id = ?3 AND r.model = ?4
               AND r.sample = ?5",
            rusqlite::params![rater, parts[0], parts[1], parts[2], parts[3]],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap();
    assert_eq!(overall, file_scores["overall"]);
    let mut stored: BTreeMap<String, f64> = serde_json::from_str(&dimensions).unwrap();
    stored.insert("overall".into(), overall);
    assert_eq!(stored, file_scores);
    assert_eq!((status.as_str(), read_no), ("submitted", 1));
    assert!(submitted_at.is_some());

    // The same file again: nothing changes, not even the audit log.
    let again = import_ratings_csv(&mut store, &path, &NoProgress).expect("re-import");
    assert_eq!(again.ratings_added, 0);
    assert_eq!(again.ratings_already_stored, expected_ratings.len());
    assert!(again.raters_added.is_empty());
    assert_eq!(snapshot(&store), after);
}

#[test]
fn a_broken_file_is_refused_whole_with_every_problem_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_demo(dir.path());
    let (header, rows) = demo_rows();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let first = &rows[0];
    let item = &first[col("item")];
    let group = &first[col("disease_group")];
    let grader_score: f64 = rows
        .iter()
        .find(|r| {
            &r[col("item")] == item
                && is_grader(&r[col("rater")])
                && r[col("dimension")] == "overall"
        })
        .map(|r| r[col("score")].parse().unwrap())
        .unwrap();
    let wrong_grader_score = if grader_score >= 5.0 {
        1.0
    } else {
        grader_score + 1.0
    };
    let other_group = if group == "stroke" {
        "tumour"
    } else {
        "stroke"
    };
    let csv = format!(
        "item,rater,score,dimension,disease_group,rater_role\n\
         {item},dr-x,3,overall,,\n\
         nope/t1/m/0,dr-x,3,overall,,\n\
         {item},dr-x,6,diagnostic_accuracy,,\n\
         {item},dr-x,3,bedside_manner,,\n\
         {item},demo-grader-v1,{wrong_grader_score},overall,,\n\
         {item},dr-y,3,overall,{other_group},\n\
         {item},dr-z,2.5,overall,,\n\
         {item},dr-w,3,overall,,surgeon\n"
    );
    let path = dir.path().join("broken.csv");
    std::fs::write(&path, csv).unwrap();
    let file = path.display().to_string();
    let before = snapshot(&store);
    let found = problems(import_ratings_csv(&mut store, &path, &NoProgress));
    assert_eq!(
        found,
        vec![
            format!("{file}:3: item: `nope/t1/m/0` names no stored response (items are case/task/model/sample); import its study bundle first"),
            format!("{file}:4: score: 6 is not on the `diagnostic_accuracy` scale (1 to 5 in steps of 1)"),
            format!("{file}:5: dimension: `bedside_manner` is not a dimension of study `neurorater-demo`'s rubric (overall, diagnostic_accuracy, lesion_detection, reasoning, safety)"),
            format!("{file}:6: score: grader `demo-grader-v1` scored `{item}` {grader_score} on `overall` in grader.jsonl, here {wrong_grader_score}"),
            format!("{file}:7: disease_group: `{other_group}`, but the stored response `{item}` has `{group}`"),
            format!("{file}:8: score: 2.5 is not on the `overall` scale (1 to 5 in steps of 1)"),
            format!("{file}:9: rater_role: `surgeon` is not a role (neuroradiologist, neurologist, resident, curator)"),
        ]
    );
    assert_eq!(snapshot(&store), before, "a refused import writes nothing");

    // A row the report's own parser rejects is reported by it, with its line.
    let path = dir.path().join("unparsable.csv");
    std::fs::write(&path, format!("item,rater,score\n{item},dr-x,three\n")).unwrap();
    assert_eq!(
        problems(import_ratings_csv(&mut store, &path, &NoProgress)),
        vec![format!(
            "{}:2: score: `three` is not a number",
            path.display()
        )]
    );
    assert_eq!(snapshot(&store), before);
}

#[test]
fn a_row_contradicting_a_stored_rating_is_refused_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_demo(dir.path());
    let (_, rows) = demo_rows();
    let item = &rows[0][0];
    let path = dir.path().join("first.csv");
    std::fs::write(
        &path,
        format!("item,rater,score,dimension,rater_role\n{item},dr-x,3,overall,neurologist\n{item},dr-x,4,safety,neurologist\n"),
    )
    .unwrap();
    let summary = import_ratings_csv(&mut store, &path, &NoProgress).expect("imports");
    assert_eq!(summary.ratings_added, 1);
    assert!(summary.roles_assumed.is_empty(), "the file gives the role");
    let role: String = store
        .read()
        .query_row("SELECT role FROM raters WHERE name = 'dr-x'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(role, "neurologist");

    let before = snapshot(&store);
    let changed = dir.path().join("changed.csv");
    std::fs::write(
        &changed,
        format!("item,rater,score,dimension\n{item},dr-x,3,overall\n{item},dr-x,2,safety\n"),
    )
    .unwrap();
    assert_eq!(
        problems(import_ratings_csv(&mut store, &changed, &NoProgress)),
        vec![format!(
            "{}:3: score: `dr-x` already has a rating of `{item}`: stored safety 4, here 2; an \
             import never overwrites a rating",
            changed.display()
        )]
    );
    assert_eq!(snapshot(&store), before);
}

/// The demo's rubric with `safety` allowing "not applicable" (the demo's allows it nowhere).
fn allow_not_applicable_on_safety(dir: &Path) {
    let conn = rusqlite::Connection::open(dir.join("study.sqlite")).unwrap();
    let rubric: String = conn
        .query_row("SELECT rubric_json FROM studies", [], |r| r.get(0))
        .unwrap();
    let mut rubric: serde_json::Value = serde_json::from_str(&rubric).unwrap();
    for dimension in rubric["dimensions"].as_array_mut().unwrap() {
        if dimension["id"] == "safety" {
            dimension["allow_not_applicable"] = true.into();
        }
    }
    conn.execute("UPDATE studies SET rubric_json = ?1", [rubric.to_string()])
        .unwrap();
}

#[test]
fn na_marks_a_dimension_not_applicable_where_the_rubric_allows_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_demo(dir.path());
    allow_not_applicable_on_safety(dir.path());
    let (_, rows) = demo_rows();
    let item = &rows[0][0];
    let grader_row = rows.iter().find(|r| is_grader(&r[1])).unwrap();
    let before = snapshot(&store);

    let refused = dir.path().join("refused.csv");
    std::fs::write(
        &refused,
        format!(
            "item,rater,score,dimension\n{item},dr-na,3,overall\n{item},dr-na,NA,reasoning\n{},{},NA,safety\n",
            grader_row[0], grader_row[1]
        ),
    )
    .unwrap();
    let said = problems(import_ratings_csv(&mut store, &refused, &NoProgress));
    assert_eq!(said.len(), 2, "{said:#?}");
    assert!(
        said[0].starts_with(&format!(
            "{}:3: score: `{item}`: the rubric does not allow \"not applicable\"",
            refused.display()
        )),
        "{said:#?}"
    );
    assert!(
        said[1].starts_with(&format!(
            "{}:4: rater: `{}` is a grader",
            refused.display(),
            grader_row[1]
        )),
        "{said:#?}"
    );
    assert_eq!(snapshot(&store), before, "a refused import writes nothing");

    let path = dir.path().join("na.csv");
    std::fs::write(
        &path,
        format!("item,rater,score,dimension\n{item},dr-na,3,overall\n{item},dr-na,n/a,safety\n"),
    )
    .unwrap();
    let summary = import_ratings_csv(&mut store, &path, &NoProgress).expect("imports");
    assert_eq!(summary.ratings_added, 1);
    let (dimensions, not_applicable): (String, String) = store
        .read()
        .query_row(
            "SELECT g.dimensions_json, g.not_applicable_json FROM ratings g
               JOIN raters r ON g.rater = r.id WHERE r.name = 'dr-na'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (dimensions.as_str(), not_applicable.as_str()),
        ("{}", r#"["safety"]"#)
    );
    let again = import_ratings_csv(&mut store, &path, &NoProgress).expect("imports again");
    assert_eq!((again.ratings_added, again.ratings_already_stored), (0, 1));

    let stored = snapshot(&store);
    let scored = dir.path().join("scored.csv");
    std::fs::write(
        &scored,
        format!("item,rater,score,dimension\n{item},dr-na,3,overall\n{item},dr-na,4,safety\n"),
    )
    .unwrap();
    assert_eq!(
        problems(import_ratings_csv(&mut store, &scored, &NoProgress)),
        vec![format!(
            "{}:3: score: `dr-na` already has a rating of `{item}`: stored safety not applicable, \
             here not marked; an import never overwrites a rating",
            scored.display()
        )]
    );
    assert_eq!(snapshot(&store), stored);
}

#[test]
fn without_a_rater_role_column_new_raters_are_assumed_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = store_with_demo(dir.path());
    let (_, rows) = demo_rows();
    let item = &rows[0][0];
    let path = dir.path().join("no-roles.csv");
    std::fs::write(&path, format!("item,rater,score\n{item},dr-x,3\n")).unwrap();
    let summary = import_ratings_csv(&mut store, &path, &NoProgress).expect("imports");
    assert_eq!(summary.roles_assumed, vec!["dr-x".to_owned()]);
    let role: String = store
        .read()
        .query_row("SELECT role FROM raters WHERE name = 'dr-x'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(role, ASSUMED_ROLE);
}
