//! Raters and the current rater. A single-user desktop has no passwords; choosing who you are is
//! recorded, and every later write names that rater in the audit log.

use super::invalid;
use crate::store::audit::Entry;
use crate::store::{enum_text, Store, Write};
use crate::{Error, Result};
use rusqlite::{params, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RaterRole {
    Neuroradiologist,
    Neurologist,
    Resident,
    Curator,
}

impl RaterRole {
    /// Clinicians who read responses are blinded to the models, the grader and the ground truth;
    /// curators build the ground truth, so nothing they read would be blind.
    pub fn reads_blinded(self) -> bool {
        !matches!(self, RaterRole::Curator)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Rater {
    pub id: i64,
    pub name: String,
    pub role: RaterRole,
    pub years_experience: Option<u32>,
}

/// Longer names are almost certainly pasted by mistake.
const MAX_NAME_CHARS: usize = 100;
/// The most years of experience a rater is recorded with.
pub const MAX_YEARS_EXPERIENCE: u32 = 70;
const CURRENT_RATER_KEY: &str = "current_rater";

fn rater_from_row(row: &Row<'_>) -> rusqlite::Result<Rater> {
    let role: String = row.get(2)?;
    Ok(Rater {
        id: row.get(0)?,
        name: row.get(1)?,
        role: serde_json::from_value(serde_json::Value::String(role.clone())).map_err(|_| {
            rusqlite::Error::FromSqlConversionFailure(
                2,
                rusqlite::types::Type::Text,
                format!("unexpected role {role:?}").into(),
            )
        })?,
        years_experience: row.get(3)?,
    })
}

impl Store {
    pub fn raters(&self) -> Result<Vec<Rater>> {
        self.read()
            .prepare("SELECT id, name, role, years_experience FROM raters ORDER BY name")
            .and_then(|mut stmt| {
                stmt.query_map([], rater_from_row)?
                    .collect::<rusqlite::Result<_>>()
            })
            .map_err(self.fail("listing raters"))
    }

    pub fn rater(&self, id: i64) -> Result<Rater> {
        self.read()
            .query_row(
                "SELECT id, name, role, years_experience FROM raters WHERE id = ?1",
                [id],
                rater_from_row,
            )
            .optional()
            .map_err(self.fail("reading a rater"))?
            .ok_or_else(|| Error::NotFound {
                what: format!("rater {id}"),
            })
    }

    /// Adds a rater; the audit entry names the new rater as the actor (they register themselves).
    pub fn create_rater(
        &mut self,
        name: &str,
        role: RaterRole,
        years_experience: Option<u32>,
    ) -> Result<Rater> {
        let name = name.trim();
        if name.is_empty() {
            return Err(invalid("name", "a rater needs a name"));
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(invalid(
                "name",
                format!(
                    "at most {MAX_NAME_CHARS} characters, got {}",
                    name.chars().count()
                ),
            ));
        }
        if name.chars().any(char::is_control) {
            return Err(invalid(
                "name",
                "line breaks and control characters are not allowed",
            ));
        }
        if let Some(years) = years_experience.filter(|y| *y > MAX_YEARS_EXPERIENCE) {
            return Err(invalid(
                "years_experience",
                format!("at most {MAX_YEARS_EXPERIENCE} years, got {years}"),
            ));
        }
        let taken: bool = self
            .read()
            .query_row(
                "SELECT count(*) > 0 FROM raters WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .map_err(self.fail("checking rater names"))?;
        if taken {
            return Err(invalid(
                "name",
                format!("a rater named {name:?} already exists; choose them instead, or use another name"),
            ));
        }
        self.write(|w| {
            let rater = Rater {
                id: insert_rater(w, name, role, years_experience)?,
                name: name.to_owned(),
                role,
                years_experience,
            };
            let after = serde_json::to_value(&rater).expect("a rater serialises");
            w.audit(&Entry {
                actor: name,
                action: "create rater",
                entity: &format!("rater:{}", rater.id),
                before: None,
                after: Some(&after),
            })?;
            Ok(rater)
        })
    }

    /// The rater chosen last on this database, if any (and if they still exist).
    pub fn current_rater(&self) -> Result<Option<Rater>> {
        let id: Option<String> = self
            .read()
            .query_row(
                "SELECT value FROM settings WHERE key = ?1",
                [CURRENT_RATER_KEY],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.fail("reading the current rater"))?;
        match id.and_then(|id| id.parse::<i64>().ok()) {
            Some(id) => match self.rater(id) {
                Ok(rater) => Ok(Some(rater)),
                Err(Error::NotFound { .. }) => Ok(None),
                Err(other) => Err(other),
            },
            None => Ok(None),
        }
    }

    /// Ends the current rater's session: the workstation is then a study lead's, who may open
    /// the calibration report. Audited like choosing a rater.
    pub fn leave_reading(&mut self) -> Result<()> {
        let Some(leaving) = self.current_rater()? else {
            return Ok(());
        };
        self.write(|w| {
            w.tx()
                .execute("DELETE FROM settings WHERE key = ?1", [CURRENT_RATER_KEY])
                .map_err(|e| w.fail("leaving reading mode", e))?;
            w.audit(&Entry {
                actor: &leaving.name,
                action: "leave reading",
                entity: "settings:current_rater",
                before: Some(&serde_json::json!({ "rater": leaving.name })),
                after: None,
            })
        })
    }

    pub fn set_current_rater(&mut self, rater: i64) -> Result<Rater> {
        let chosen = self.rater(rater)?;
        let before = self
            .current_rater()?
            .map(|r| serde_json::json!({ "rater": r.name }));
        self.write(|w| {
            w.tx()
                .execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![CURRENT_RATER_KEY, chosen.id.to_string()],
                )
                .map_err(|e| w.fail("recording the current rater", e))?;
            w.audit(&Entry {
                actor: &chosen.name,
                action: "choose rater",
                entity: "settings:current_rater",
                before: before.as_ref(),
                after: Some(&serde_json::json!({ "rater": chosen.name })),
            })
        })?;
        Ok(chosen)
    }
}

/// Writes a rater and returns their key: the one writer of `raters`, used by every path that
/// brings a rater in (the app's form, packages, ratings files, the team server's pull, received
/// curation versions). Each caller has already checked the name and decided the role; the audit
/// entry is the caller's, which knows why the rater came.
pub(crate) fn insert_rater(
    w: &Write<'_>,
    name: &str,
    role: RaterRole,
    years_experience: Option<u32>,
) -> Result<i64> {
    w.tx()
        .execute(
            "INSERT INTO raters (name, role, years_experience) VALUES (?1, ?2, ?3)",
            params![name, enum_text(&role), years_experience],
        )
        .map_err(|e| w.fail("adding a rater", e))?;
    Ok(w.tx().last_insert_rowid())
}
