//! A stored case as curation needs it: its series (with their geometry, loaded on demand) and
//! tasks, to validate ground truth against and to turn the bundle's ground truth into a version.

use super::{plane_of, CuratedLesion, CuratedTruth, TaskTruth};
use crate::marks::{Mark, MarkKind};
use crate::model::{GroundTruth, SeriesKind, SliceRef, TaskFamily};
use crate::store::Store;
use crate::{Error, Result};
use imaging::SeriesGeometry;
use rusqlite::OptionalExtension;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

pub struct CaseContext {
    pub case_key: i64,
    pub study_id: String,
    pub case_id: String,
    /// Series id → (series key, kind).
    pub series: BTreeMap<String, (i64, SeriesKind)>,
    /// Task id → (task key, family, key images as the bundle lists them).
    pub tasks: BTreeMap<String, (i64, TaskFamily, Vec<SliceRef>)>,
    geometry: RefCell<BTreeMap<String, SeriesGeometry>>,
}

impl CaseContext {
    pub fn load(store: &Store, study_id: &str, case_id: &str) -> Result<CaseContext> {
        let conn = store.read();
        let fail = |e| Error::database(store.path(), "reading a case for curation", e);
        let case_key: i64 = conn
            .query_row(
                "SELECT c.id FROM cases c JOIN studies st ON c.study = st.id
                 WHERE st.study_id = ?1 AND c.case_id = ?2",
                [study_id, case_id],
                |row| row.get(0),
            )
            .optional()
            .map_err(fail)?
            .ok_or_else(|| Error::NotFound {
                what: format!("case {case_id:?} of study {study_id:?}"),
            })?;
        Self::load_key(store, case_key)
    }

    pub(crate) fn load_key(store: &Store, case_key: i64) -> Result<CaseContext> {
        let conn = store.read();
        let fail = |e| Error::database(store.path(), "reading a case for curation", e);
        let (study_id, case_id): (String, String) = conn
            .query_row(
                "SELECT st.study_id, c.case_id FROM cases c JOIN studies st ON c.study = st.id
                 WHERE c.id = ?1",
                [case_key],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .map_err(fail)?;
        let mut series = BTreeMap::new();
        let mut stmt = conn
            .prepare("SELECT id, series_id, kind FROM series WHERE case_ref = ?1")
            .map_err(fail)?;
        let rows = stmt
            .query_map([case_key], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(fail)?;
        for (key, id, kind) in rows {
            series.insert(id, (key, parse_text(&kind)?));
        }
        let mut tasks = BTreeMap::new();
        let mut stmt = conn
            .prepare("SELECT id, task_id, family, key_images_json FROM tasks WHERE case_ref = ?1")
            .map_err(fail)?;
        let rows = stmt
            .query_map([case_key], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                ))
            })
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
            .map_err(fail)?;
        for (key, id, family, key_images) in rows {
            let key_images = serde_json::from_str(&key_images).map_err(|e| Error::Corrupt {
                what: format!("key images of task {id:?}: {e}"),
            })?;
            tasks.insert(id, (key, parse_text(&family)?, key_images));
        }
        Ok(CaseContext {
            case_key,
            study_id,
            case_id,
            series,
            tasks,
            geometry: RefCell::new(BTreeMap::new()),
        })
    }

    /// The series' geometry, as import stored it from the images' headers
    /// ([`Store::series_geometry`]).
    pub(crate) fn geometry(&self, store: &Store, series_id: &str) -> Result<SeriesGeometry> {
        if let Some(known) = self.geometry.borrow().get(series_id) {
            return Ok(*known);
        }
        let (key, _) = self.series.get(series_id).ok_or_else(|| Error::NotFound {
            what: format!("series {series_id:?} of case {:?}", self.case_id),
        })?;
        let geometry = store.series_geometry(*key)?;
        self.geometry
            .borrow_mut()
            .insert(series_id.to_owned(), geometry);
        Ok(geometry)
    }

    /// Every way `truth` contradicts this case ([`truth_problems`]), geometry as stored.
    pub fn check(&self, store: &Store, truth: &CuratedTruth) -> Result<Vec<(String, String)>> {
        truth_problems(&StoredCase { case: self, store }, truth)
    }

    /// The bundle's ground truth as a curated version: marks in the shared primitive, each
    /// lesion shown on the slices its marks lie on, and every task with its family and key
    /// images as the study lists them.
    pub(crate) fn curated_from_bundle(
        &self,
        store: &Store,
        truth: &GroundTruth,
    ) -> Result<CuratedTruth> {
        let mut lesions = Vec::with_capacity(truth.lesions.len());
        for lesion in &truth.lesions {
            let mut marks = Vec::new();
            let mut shown_on: Vec<SliceRef> = Vec::new();
            for mark in &lesion.marks {
                let kind = match mark.shape {
                    crate::model::MarkShape::Point => MarkKind::Point,
                    crate::model::MarkShape::Arrow => MarkKind::Arrow,
                    crate::model::MarkShape::Ellipse => MarkKind::Ellipse,
                    crate::model::MarkShape::Freehand => MarkKind::Freehand,
                };
                marks.push(Mark {
                    series_id: mark.series.clone(),
                    kind,
                    plane: plane_of(&mark.points_mm),
                    points_lps_mm: mark.points_mm.clone(),
                });
                if let (Some(first), true) = (
                    mark.points_mm.first(),
                    self.series.contains_key(&mark.series),
                ) {
                    let geometry = self.geometry(store, &mark.series)?;
                    if let Some(slice) = slice_through(&geometry, first) {
                        let slice = SliceRef {
                            series: mark.series.clone(),
                            slice,
                        };
                        if !shown_on.contains(&slice) {
                            shown_on.push(slice);
                        }
                    }
                }
            }
            lesions.push(CuratedLesion {
                id: lesion.id.clone(),
                description: lesion.description.clone(),
                marks,
                shown_on,
            });
        }
        Ok(CuratedTruth {
            diagnosis: truth.diagnosis.clone(),
            diagnosis_code: truth.diagnosis_code.clone(),
            differential: truth.differential.clone(),
            lesions,
            expected_reasoning: truth.expected_reasoning.clone(),
            difficulty: truth.difficulty,
            tasks: self
                .tasks
                .iter()
                .map(|(id, (_, family, key_images))| TaskTruth {
                    task_id: id.clone(),
                    family: *family,
                    key_images: key_images.clone(),
                })
                .collect(),
        })
    }
}

/// What the check of a version needs of its case: its series and tasks, and each series'
/// geometry. The local store reads them from SQLite ([`CaseContext`]), the team server from
/// PostgreSQL.
pub trait CaseShape {
    fn case_id(&self) -> &str;
    fn has_series(&self, series_id: &str) -> bool;
    fn task_family(&self, task_id: &str) -> Option<TaskFamily>;
    /// The geometry of one of the case's series.
    fn geometry(&self, series_id: &str) -> Result<SeriesGeometry>;
}

struct StoredCase<'a> {
    case: &'a CaseContext,
    store: &'a Store,
}

impl CaseShape for StoredCase<'_> {
    fn case_id(&self) -> &str {
        &self.case.case_id
    }

    fn has_series(&self, series_id: &str) -> bool {
        self.case.series.contains_key(series_id)
    }

    fn task_family(&self, task_id: &str) -> Option<TaskFamily> {
        self.case.tasks.get(task_id).map(|(_, family, _)| *family)
    }

    fn geometry(&self, series_id: &str) -> Result<SeriesGeometry> {
        self.case.geometry(self.store, series_id)
    }
}

/// Every way `truth` contradicts `case`, as (field path, message): unknown series or task, a mark
/// outside its series' volume, a slice beyond the last, empty required text. The one check of a
/// version, for the local store and the team server alike.
pub fn truth_problems(
    case: &impl CaseShape,
    truth: &CuratedTruth,
) -> Result<Vec<(String, String)>> {
    let mut problems = Vec::new();
    let mut problem = |field: String, message: String| problems.push((field, message));
    if truth.diagnosis.trim().is_empty() {
        problem("diagnosis".into(), "the diagnosis is empty".into());
    }
    if let Some(d) = truth.difficulty.filter(|d| !(1..=3).contains(d)) {
        problem(
            "difficulty".into(),
            format!("{d} is not a level: 1 direct, 2 complex, 3 multi-turn"),
        );
    }
    for (i, item) in truth.differential.iter().enumerate() {
        if item.diagnosis.trim().is_empty() {
            problem(
                format!("differential[{i}].diagnosis"),
                "the diagnosis is empty".into(),
            );
        }
    }
    let mut lesion_ids = BTreeSet::new();
    for (l, lesion) in truth.lesions.iter().enumerate() {
        let field = format!("lesions[{l}]");
        if lesion.id.trim().is_empty() {
            problem(format!("{field}.id"), "the lesion has no id".into());
        } else if !lesion_ids.insert(lesion.id.as_str()) {
            problem(
                format!("{field}.id"),
                format!("lesion id {:?} is used twice", lesion.id),
            );
        }
        if lesion.description.trim().is_empty() {
            problem(
                format!("{field}.description"),
                "the description is empty".into(),
            );
        }
        for (m, mark) in lesion.marks.iter().enumerate() {
            let field = format!("{field}.marks[{m}]");
            if let Err(message) = mark.check_shape() {
                problem(format!("{field}.points_lps_mm"), message);
                continue;
            }
            if !case.has_series(&mark.series_id) {
                problem(
                    format!("{field}.series_id"),
                    format!("no series {:?} in case {}", mark.series_id, case.case_id()),
                );
                continue;
            }
            let geometry = case.geometry(&mark.series_id)?;
            if let Some(message) = crate::rating::rules::mark_outside(&geometry, mark) {
                problem(format!("{field}.points_lps_mm"), message);
            }
        }
        for (s, slice) in lesion.shown_on.iter().enumerate() {
            check_slice(case, &format!("{field}.shown_on[{s}]"), slice, &mut problem)?;
        }
    }
    let mut task_ids = BTreeSet::new();
    for (t, task) in truth.tasks.iter().enumerate() {
        let field = format!("tasks[{t}]");
        if !task_ids.insert(task.task_id.as_str()) {
            problem(
                format!("{field}.task_id"),
                format!("task {:?} is listed twice", task.task_id),
            );
        }
        match case.task_family(&task.task_id) {
            None => problem(
                format!("{field}.task_id"),
                format!("no task {:?} in case {}", task.task_id, case.case_id()),
            ),
            Some(family) if family != task.family => problem(
                format!("{field}.family"),
                format!(
                    "task {:?} is a {} task in the study, not {}",
                    task.task_id,
                    crate::store::enum_text(&family),
                    crate::store::enum_text(&task.family)
                ),
            ),
            Some(_) => {}
        }
        for (k, slice) in task.key_images.iter().enumerate() {
            check_slice(
                case,
                &format!("{field}.key_images[{k}]"),
                slice,
                &mut problem,
            )?;
        }
    }
    Ok(problems)
}

fn check_slice(
    case: &impl CaseShape,
    field: &str,
    slice: &SliceRef,
    problem: &mut impl FnMut(String, String),
) -> Result<()> {
    if !case.has_series(&slice.series) {
        problem(
            format!("{field}.series"),
            format!("no series {:?} in case {}", slice.series, case.case_id()),
        );
        return Ok(());
    }
    let slices = case.geometry(&slice.series)?.dims[2];
    if slice.slice as usize >= slices {
        problem(
            format!("{field}.slice"),
            format!(
                "slice {} is beyond the last of series {:?} ({} slices, counted from 0)",
                slice.slice, slice.series, slices
            ),
        );
    }
    Ok(())
}

/// The slice (0-based, display order) whose plane is nearest to `point`, if inside the volume.
/// The slice axis is the affine's third column; rows and columns are orthogonal to it in every
/// volume the imaging module builds, so projecting onto it suffices.
fn slice_through(geometry: &SeriesGeometry, point: &[f64; 3]) -> Option<u32> {
    let m = &geometry.voxel_to_patient;
    let axis = [m[0][2], m[1][2], m[2][2]];
    let length_squared: f64 = axis.iter().map(|v| v * v).sum();
    if length_squared <= 0.0 {
        return None;
    }
    let offset = [point[0] - m[0][3], point[1] - m[1][3], point[2] - m[2][3]];
    let k = (0..3).map(|i| offset[i] * axis[i]).sum::<f64>() / length_squared;
    let k = k.round();
    (k >= 0.0 && (k as usize) < geometry.dims[2]).then_some(k as u32)
}

fn parse_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|e| Error::Corrupt {
        what: format!("{text:?}: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slice_through_a_point_follows_the_slice_axis() {
        // 2 mm slices along patient z, origin at z = -10.
        let geometry = SeriesGeometry {
            dims: [4, 4, 10],
            voxel_to_patient: [
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 2.0, -10.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
        };
        assert_eq!(slice_through(&geometry, &[1.0, 1.0, -10.0]), Some(0));
        assert_eq!(slice_through(&geometry, &[1.0, 1.0, -3.1]), Some(3));
        assert_eq!(slice_through(&geometry, &[1.0, 1.0, 8.0]), Some(9));
        assert_eq!(slice_through(&geometry, &[1.0, 1.0, 12.0]), None);
    }
}
