//! The long ratings CSV of docs/formats.md §3: `item,rater,score[,dimension][,grouping columns...]`.
//!
//! - `item`, `rater`, `score` are required; `dimension` defaults to `overall`;
//! - `case` (optional) names the case an item belongs to, the cluster the bootstrap resamples;
//!   without it each item is its own cluster;
//! - `rater_role` (optional) is a property of the rater, read by `neurorater import-ratings` and
//!   ignored by the report;
//! - `scale_min`, `scale_max` (optional, together) and `scale_step` (optional, default 1)
//!   declare the scale the row's rater scored the row's dimension on; one scale per rater and
//!   dimension, and every score within it (a grader on 0–10 beside clinicians on 1–5 is then
//!   compared by ordering only, unless a mapping is declared: `crate::scales`);
//! - every other column is a grouping variable, and must hold one value per item;
//! - RFC 4180 quoting (`"a, b"`, `""` for a quote); blank lines are skipped; a UTF-8 BOM is
//!   ignored.
//!
//! All problems are reported, each as `FILE:LINE: field: message`, and nothing is returned when
//! there is any.

use crate::input::{LongTable, RaterScale, ScaleSpec, ScoreRow};
use std::collections::BTreeMap;
use std::fmt;

/// One problem in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.field, self.message
        )
    }
}

/// Every problem found in the file, in line order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    pub problems: Vec<Problem>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.problems.iter().map(Problem::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

const REQUIRED: [&str; 3] = ["item", "rater", "score"];
/// The column giving a rater's role: it varies within an item, so it is no grouping variable.
pub const RATER_ROLE_COLUMN: &str = "rater_role";
/// The columns declaring a row's scale (rater and dimension): minimum, maximum, step.
pub const SCALE_COLUMNS: [&str; 3] = ["scale_min", "scale_max", "scale_step"];
/// Problems reported before giving up, so a wholly wrong file does not flood the terminal.
const MAX_PROBLEMS: usize = 200;

/// Splits CSV text into records of fields, each with the line number it starts on.
/// A record's starting line and its fields.
type Record = (usize, Vec<String>);

fn records(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut field = String::new();
    let mut fields = Vec::new();
    let mut start_line = 1;
    let mut in_quotes = false;
    let mut field_was_quoted = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                '\n' => {
                    line += 1;
                    field.push('\n');
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() && !field_was_quoted => {
                in_quotes = true;
                field_was_quoted = true;
            }
            '"' => return Err((line, "a quote inside an unquoted field".into())),
            ',' => {
                fields.push(std::mem::take(&mut field));
                field_was_quoted = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                field_was_quoted = false;
                if !(fields.len() == 1 && fields[0].trim().is_empty()) {
                    out.push((start_line, std::mem::take(&mut fields)));
                }
                fields.clear();
                line += 1;
                start_line = line;
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err((start_line, "a quoted field is never closed".into()));
    }
    if !field.is_empty() || !fields.is_empty() || field_was_quoted {
        fields.push(field);
        if !(fields.len() == 1 && fields[0].trim().is_empty()) {
            out.push((start_line, fields));
        }
    }
    Ok(out)
}

/// Parses the long ratings CSV; `file_name` only labels the problems.
pub fn parse_long_csv(text: &str, file_name: &str) -> Result<LongTable, Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let problem = |line: usize, field: &str, message: String| Problem {
        file: file_name.to_string(),
        line,
        field: field.to_string(),
        message,
    };
    let rows = records(text).map_err(|(line, message)| Error {
        problems: vec![problem(line, "(row)", message)],
    })?;
    let Some((header_line, header)) = rows.first() else {
        return Err(Error {
            problems: vec![problem(
                1,
                "(header)",
                "the file is empty; expected a header `item,rater,score`".into(),
            )],
        });
    };
    let header: Vec<String> = header.iter().map(|h| h.trim().to_string()).collect();
    let mut problems = Vec::new();
    let mut position: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, name) in header.iter().enumerate() {
        if name.is_empty() {
            problems.push(problem(
                *header_line,
                "(header)",
                format!("column {} has no name", i + 1),
            ));
        } else if position.insert(name.as_str(), i).is_some() {
            problems.push(problem(
                *header_line,
                name,
                "the column appears twice".into(),
            ));
        }
    }
    for required in REQUIRED {
        if !position.contains_key(required) {
            problems.push(problem(
                *header_line,
                required,
                format!("required column missing (header is `{}`)", header.join(",")),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Error { problems });
    }
    let column = |name: &str| position.get(name).copied();
    let (item_at, rater_at, score_at) = (position["item"], position["rater"], position["score"]);
    let (dimension_at, case_at) = (column("dimension"), column("case"));
    let grouping: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            !matches!(
                h.as_str(),
                "item" | "rater" | "score" | "dimension" | "case" | RATER_ROLE_COLUMN
            ) && !SCALE_COLUMNS.contains(&h.as_str())
        })
        .map(|(i, h)| (i, h.clone()))
        .collect();

    let mut table = LongTable {
        grouping_columns: grouping.iter().map(|g| g.1.clone()).collect(),
        ..LongTable::default()
    };
    let scale_at = SCALE_COLUMNS.map(column);
    if scale_at[0].is_some() != scale_at[1].is_some() {
        return Err(Error {
            problems: vec![problem(
                *header_line,
                if scale_at[0].is_none() {
                    "scale_min"
                } else {
                    "scale_max"
                },
                "scale_min and scale_max come together (scale_step is optional, default 1)".into(),
            )],
        });
    }
    // Where each (item, rater, dimension) and each item attribute was first given.
    let mut seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    // Each (rater, dimension)'s declared scale and the line that declared it first.
    let mut declared: BTreeMap<(String, String), (ScaleSpec, usize)> = BTreeMap::new();
    let mut first_line_of_item: BTreeMap<String, usize> = BTreeMap::new();
    for (line, fields) in rows.iter().skip(1) {
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
        let line = *line;
        if fields.len() != header.len() {
            problems.push(problem(
                line,
                "(row)",
                format!(
                    "has {} fields, the header has {}",
                    fields.len(),
                    header.len()
                ),
            ));
            continue;
        }
        let get = |i: usize| fields[i].trim();
        let (item, rater) = (get(item_at), get(rater_at));
        let mut ok = true;
        if item.is_empty() {
            problems.push(problem(line, "item", "is empty".into()));
            ok = false;
        }
        if rater.is_empty() {
            problems.push(problem(line, "rater", "is empty".into()));
            ok = false;
        }
        let dimension = dimension_at
            .map(get)
            .filter(|d| !d.is_empty())
            .unwrap_or("overall")
            .to_string();
        let not_applicable = is_not_applicable_score(get(score_at));
        let score = match get(score_at).parse::<f64>() {
            _ if not_applicable && dimension == "overall" => {
                problems.push(problem(
                    line,
                    "score",
                    format!(
                        "`{}`: the overall score cannot be marked not applicable; give a number",
                        get(score_at)
                    ),
                ));
                ok = false;
                None
            }
            _ if not_applicable => None,
            Ok(v) if v.is_finite() => Some(v),
            _ => {
                problems.push(problem(
                    line,
                    "score",
                    format!("`{}` is not a number", get(score_at)),
                ));
                ok = false;
                None
            }
        };
        if !ok {
            continue;
        }
        if let Some(scale) =
            score.and_then(|_| row_scale(&scale_at, &get, line, &problem, &mut problems))
        {
            let score = score.unwrap_or_default();
            let key = (rater.to_string(), dimension.clone());
            match declared.get(&key) {
                Some((first, at)) if *first != scale => problems.push(problem(
                    line,
                    "scale_min",
                    format!(
                        "`{rater}` on `{dimension}` has the scale {} at line {at}, here {}; one rater scores one dimension on one scale",
                        first.describe(),
                        scale.describe()
                    ),
                )),
                Some(_) => {}
                None => {
                    declared.insert(key, (scale, line));
                }
            }
            if score < scale.min || score > scale.max {
                problems.push(problem(
                    line,
                    "score",
                    format!("{score} is outside the row's scale {}", scale.describe()),
                ));
            }
        }
        let key = (item.to_string(), rater.to_string(), dimension.clone());
        if let Some(first) = seen.get(&key) {
            problems.push(problem(
                line,
                "rater",
                format!("`{rater}` already scored item `{item}` on `{dimension}` at line {first}"),
            ));
            continue;
        }
        seen.insert(key, line);

        let first_line = *first_line_of_item.entry(item.to_string()).or_insert(line);
        let info = table.items.entry(item.to_string()).or_default();
        if let Some(c) = case_at.map(get).filter(|c| !c.is_empty()) {
            match &info.case {
                Some(existing) if existing != c => problems.push(problem(
                    line,
                    "case",
                    format!(
                        "item `{item}` is in case `{existing}` at line {first_line}, here `{c}`"
                    ),
                )),
                _ => info.case = Some(c.to_string()),
            }
        }
        for (i, name) in &grouping {
            let value = get(*i);
            if value.is_empty() {
                continue;
            }
            match info.groups.get(name) {
                Some(existing) if existing != value => problems.push(problem(
                    line,
                    name,
                    format!("item `{item}` has `{existing}` at line {first_line}, here `{value}`; a grouping column holds one value per item"),
                )),
                Some(_) => {}
                None => {
                    info.groups.insert(name.clone(), value.to_string());
                }
            }
        }
        // A dimension marked not applicable is no score: the agreement statistics leave it out
        // (its item and grouping values above still count).
        if let Some(score) = score {
            table.scores.push(ScoreRow {
                item: item.to_string(),
                rater: rater.to_string(),
                dimension,
                score,
            });
        }
    }
    table.scales = declared
        .into_iter()
        .map(|((rater, dimension), (scale, _))| RaterScale {
            rater: Some(rater),
            dimension: Some(dimension),
            scale,
        })
        .collect();
    if table.scores.is_empty() && problems.is_empty() {
        problems.push(problem(
            *header_line + 1,
            "(row)",
            "the file has a header but no scores".into(),
        ));
    }
    if problems.is_empty() {
        Ok(table)
    } else {
        Err(Error { problems })
    }
}

/// What the `score` cell holds for a dimension the rater marked "not applicable" (where the
/// rubric allows it): `NA`, in any case (`N/A` reads the same). Not a score: the agreement
/// statistics leave the row out, and `neurorater import-ratings` stores it as that mark.
pub const NOT_APPLICABLE_SCORE: &str = "NA";

/// Whether a `score` cell marks its dimension not applicable ([`NOT_APPLICABLE_SCORE`]).
pub fn is_not_applicable_score(cell: &str) -> bool {
    let cell = cell.trim();
    cell.eq_ignore_ascii_case(NOT_APPLICABLE_SCORE) || cell.eq_ignore_ascii_case("N/A")
}

/// The scale a row declares, if its scale cells are filled; a half-filled or malformed one is a
/// problem.
fn row_scale<'a>(
    at: &[Option<usize>; 3],
    get: &dyn Fn(usize) -> &'a str,
    line: usize,
    problem: &dyn Fn(usize, &str, String) -> Problem,
    problems: &mut Vec<Problem>,
) -> Option<ScaleSpec> {
    let cells: Vec<(&str, &str)> = SCALE_COLUMNS
        .iter()
        .zip(at)
        .filter_map(|(name, at)| Some((*name, get((*at)?))))
        .collect();
    if cells.iter().all(|(_, v)| v.is_empty()) {
        return None;
    }
    let mut values = [None, None, Some(1.0)];
    for (i, (name, text)) in cells.iter().enumerate() {
        match (text.parse::<f64>(), *name) {
            (_, "scale_step") if text.is_empty() => {}
            (Ok(v), _) if v.is_finite() => values[i] = Some(v),
            _ => problems.push(problem(
                line,
                name,
                format!("`{text}` is not a number (a scale needs scale_min and scale_max)"),
            )),
        }
    }
    let [Some(min), Some(max), Some(step)] = values else {
        return None;
    };
    if !(step > 0.0 && max >= min && (max - min) / step <= 1000.0) {
        problems.push(problem(
            line,
            "scale_step",
            format!("min {min}, max {max}, step {step} do not describe a scale (need step > 0, max ≥ min, at most 1000 levels)"),
        ));
        return None;
    }
    Some(ScaleSpec { min, max, step })
}
