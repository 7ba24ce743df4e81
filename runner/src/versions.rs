//! Grader versions in the store, for the grader workbench: every grader spec bound to its name,
//! a new version made by editing a stored one's prompt (under a new name: a name is bound to its
//! spec for good), and the line diff between two versions' prompts.

use crate::record::{self, Kind};
use crate::spec::Spec;
use crate::RunError;
use cases::store::Store;
use rusqlite::OptionalExtension;
use serde::Serialize;

/// A stored spec, when its name was bound (saved in the workbench or first run), and how many
/// results runs stored under it (scores of a grader, responses of a model).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredSpec {
    pub spec: Spec,
    pub spec_sha256: String,
    pub bound_at: String,
    pub stored: i64,
}

fn database_error(store: &Store, doing: &str, e: rusqlite::Error) -> RunError {
    RunError::Store(cases::Error::Database {
        path: store.path().to_path_buf(),
        doing: doing.into(),
        source: e,
    })
}

fn parse_stored(name: &str, json: &str) -> Result<Spec, RunError> {
    serde_json::from_str(json).map_err(|e| {
        RunError::Store(cases::Error::Corrupt {
            what: format!("the stored spec of {name:?}: {e}"),
        })
    })
}

/// Every spec of `kind` bound in the store, oldest first.
pub fn stored_specs(store: &Store, kind: Kind) -> Result<Vec<StoredSpec>, RunError> {
    let fail = |e| database_error(store, "listing the stored specs", e);
    let mut stmt = store
        .read()
        .prepare(
            "SELECT s.name, s.spec_json, s.spec_sha256, s.first_run_at,
                    (SELECT count(*) FROM run_results r WHERE r.spec_name = s.name)
             FROM run_specs s WHERE s.kind = ?1
             ORDER BY s.first_run_at, s.name",
        )
        .map_err(fail)?;
    let rows: Vec<(String, String, String, String, i64)> = stmt
        .query_map([kind.as_str()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .map_err(fail)?
        .collect::<rusqlite::Result<_>>()
        .map_err(fail)?;
    rows.into_iter()
        .map(|(name, json, spec_sha256, bound_at, stored)| {
            Ok(StoredSpec {
                spec: parse_stored(&name, &json)?,
                spec_sha256,
                bound_at,
                stored,
            })
        })
        .collect()
}

/// The spec bound to `name`, of `kind`.
pub fn stored_spec(store: &Store, name: &str, kind: Kind) -> Result<Spec, RunError> {
    let found: Option<(String, String)> = store
        .read()
        .query_row(
            "SELECT kind, spec_json FROM run_specs WHERE name = ?1",
            [name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| database_error(store, "reading a stored spec", e))?;
    match found {
        Some((stored_kind, json)) if stored_kind == kind.as_str() => parse_stored(name, &json),
        Some((stored_kind, _)) => Err(RunError::NameInUse {
            name: name.into(),
            why: format!("it names a {stored_kind}, not a {}", kind.as_str()),
        }),
        None => Err(RunError::Store(cases::Error::NotFound {
            what: format!("a {} spec named {name:?}", kind.as_str()),
        })),
    }
}

/// Adds a spec from its TOML text (`file` names it in messages) and binds its name.
pub fn add_spec(store: &mut Store, toml: &str, file: &str, kind: Kind) -> Result<Spec, RunError> {
    let spec = Spec::parse(toml, file)?;
    if kind == Kind::Grader && spec.prompt.is_none() {
        return Err(RunError::Spec {
            problems: vec![format!(
                "{file}: -: prompt: a grader spec needs a prompt template (FORMATS.md §6)"
            )],
        });
    }
    record::bind_spec(store, &spec, kind)?;
    Ok(spec)
}

/// Binds the demo study's grader and model specs (the bundle's `specs/*.toml`) exactly as
/// `neurorater grade`/`respond --spec` binds them on a first run: same table, content hash and
/// audit entry. The app calls this when it builds the demo on first start, so that a new user's
/// workbench lists a grader and a model to run; a later `grade --spec demo/specs/grader.toml`
/// finds its name bound to the same spec and runs.
pub fn bind_demo_specs(store: &mut Store) -> Result<(), RunError> {
    use demo::{DEMO_GRADER_SPEC, DEMO_GRADER_SPEC_FILE, DEMO_MODEL_SPEC, DEMO_MODEL_SPEC_FILE};
    add_spec(store, DEMO_GRADER_SPEC, DEMO_GRADER_SPEC_FILE, Kind::Grader)?;
    add_spec(store, DEMO_MODEL_SPEC, DEMO_MODEL_SPEC_FILE, Kind::Model)?;
    Ok(())
}

/// A new grader version: `base`'s spec with `prompt`, under `name`. Refused when the name is
/// bound (to anything: a changed prompt is a new version) or imported scores carry it.
pub fn new_grader_version(
    store: &mut Store,
    base: &str,
    name: &str,
    prompt: &str,
) -> Result<Spec, RunError> {
    let mut spec = stored_spec(store, base, Kind::Grader)?;
    if stored_spec(store, name, Kind::Grader).is_ok() {
        return Err(RunError::NameInUse {
            name: name.into(),
            why: "a stored grader version has it already".into(),
        });
    }
    spec.name = name.trim().to_owned();
    spec.prompt = Some(prompt.to_owned());
    // The edited spec passes the same checks as a spec file.
    let text = toml::to_string(&spec).map_err(|e| RunError::Internal(e.to_string()))?;
    let spec = Spec::parse(&text, &format!("version {name}"))?;
    record::bind_spec(store, &spec, Kind::Grader)?;
    Ok(spec)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
// Its name in the generated TypeScript bindings (ui/src/bindings.ts), beside curation's `Change`;
// JSON never writes a container's name.
#[serde(rename = "LineChange")]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Same,
    Removed,
    Added,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DiffLine {
    pub change: Change,
    pub text: String,
}

/// The line diff from `before` to `after`: a longest common subsequence of lines, removals
/// before additions where a block changed. Prompts are short (tens of lines), so the quadratic
/// table is a few kilobytes.
pub fn line_diff(before: &str, after: &str) -> Vec<DiffLine> {
    let (a, b): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    // common[i][j]: the LCS length of a[i..] and b[j..].
    let mut common = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let line = |change, text: &str| DiffLine {
        change,
        text: text.to_owned(),
    };
    let (mut i, mut j, mut lines) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lines.push(line(Change::Same, a[i]));
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || common[i + 1][j] >= common[i][j + 1]) {
            lines.push(line(Change::Removed, a[i]));
            i += 1;
        } else {
            lines.push(line(Change::Added, b[j]));
            j += 1;
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(before: &str, after: &str, expected: &[(&str, &str)]) {
        let diff = line_diff(before, after);
        let got: Vec<(&str, &str)> = diff
            .iter()
            .map(|l| {
                let sign = match l.change {
                    Change::Same => " ",
                    Change::Removed => "-",
                    Change::Added => "+",
                };
                (sign, l.text.as_str())
            })
            .collect();
        assert_eq!(got, expected, "{before:?} → {after:?}");
    }

    #[test]
    fn diffs_of_prompts() {
        check("a\nb\nc", "a\nb\nc", &[(" ", "a"), (" ", "b"), (" ", "c")]);
        check(
            "Grade {{answer}}\nBe fair.",
            "Grade {{answer}}\nBe strict.\nCite codes.",
            &[
                (" ", "Grade {{answer}}"),
                ("-", "Be fair."),
                ("+", "Be strict."),
                ("+", "Cite codes."),
            ],
        );
        check("", "new", &[("+", "new")]);
        check("old", "", &[("-", "old")]);
        check(
            "x\na\ny",
            "a\nz",
            &[("-", "x"), (" ", "a"), ("-", "y"), ("+", "z")],
        );
    }
}
