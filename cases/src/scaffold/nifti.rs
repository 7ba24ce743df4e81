//! NIfTI images in a scan: BIDS datasets (`sub-*/[ses-*/]anat|dwi/*.nii[.gz]`, JSON sidecars,
//! `participants.tsv`) become one case per subject and session; loose NIfTI files one case per
//! folder.

use super::label::{self, Acquisition, Guess};
use super::{io, PlannedCase, PlannedSeries, SeriesImages, Skipped};
use crate::model::{Modality, Sex};
use crate::package::deid;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name without `.nii.gz` or `.nii`.
fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for extension in [".nii.gz", ".nii"] {
        if let Some(stem) = name.strip_suffix(extension) {
            return stem.to_owned();
        }
    }
    name
}

/// When `path` is a `.json` file beside a NIfTI image of the same name, that image.
pub(super) fn sidecar_image(path: &Path) -> Option<PathBuf> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".json")?;
    [".nii.gz", ".nii"]
        .iter()
        .map(|extension| path.with_file_name(format!("{stem}{extension}")))
        .find(|image| image.is_file())
}

/// Where a file sits in a BIDS dataset.
struct BidsPlace {
    root: PathBuf,
    subject: String,
    session: Option<String>,
    datatype: String,
}

fn bids_place(path: &Path) -> Option<BidsPlace> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    // …/sub-X/[ses-Y/]datatype/file
    let datatype_at = parts.len().checked_sub(2)?;
    let (subject_at, session) = match parts.get(datatype_at.checked_sub(1)?) {
        Some(s) if s.starts_with("ses-") => (datatype_at.checked_sub(2)?, Some(s.clone())),
        _ => (datatype_at - 1, None),
    };
    let subject = parts.get(subject_at)?;
    subject.starts_with("sub-").then(|| BidsPlace {
        root: parts[..subject_at].iter().collect(),
        subject: subject.clone(),
        session,
        datatype: parts[datatype_at].clone(),
    })
}

/// The structural images a rater reads; other BIDS datatypes (func, fmap, perf …) are not.
const READ_DATATYPES: [&str; 2] = ["anat", "dwi"];

pub(super) fn plan_cases(niftis: Vec<PathBuf>, skipped: &mut Vec<Skipped>) -> Vec<PlannedCase> {
    let mut groups: BTreeMap<(PathBuf, String), Vec<PathBuf>> = BTreeMap::new();
    let mut participants: BTreeMap<PathBuf, BTreeMap<String, (Option<u32>, Sex)>> = BTreeMap::new();
    for path in niftis {
        match bids_place(&path) {
            Some(place) if !READ_DATATYPES.contains(&place.datatype.as_str()) => {
                skipped.push(Skipped {
                    path,
                    reason: format!(
                        "BIDS {} data: a study shows structural and diffusion images",
                        place.datatype
                    ),
                });
            }
            Some(place) => {
                let source = match &place.session {
                    Some(session) => format!("{}/{session}", place.subject),
                    None => place.subject.clone(),
                };
                participants
                    .entry(place.root.clone())
                    .or_insert_with(|| read_participants(&place.root));
                groups.entry((place.root, source)).or_default().push(path);
            }
            None => {
                let folder = path.parent().unwrap_or(Path::new("")).to_path_buf();
                groups
                    .entry((folder, String::new()))
                    .or_default()
                    .push(path);
            }
        }
    }
    groups
        .into_iter()
        .map(|((root, source), mut files)| {
            files.sort();
            let subject = source.split('/').next().unwrap_or_default();
            let (age, sex) = participants
                .get(&root)
                .and_then(|p| p.get(subject))
                .copied()
                .unwrap_or((None, Sex::O));
            let sidecars: Vec<Option<serde_json::Value>> =
                files.iter().map(|f| read_sidecar(f)).collect();
            let all_ct = sidecars.iter().all(|s| {
                s.as_ref()
                    .and_then(|s| s.get("Modality"))
                    .and_then(|m| m.as_str())
                    == Some("CT")
            });
            let source_shown = if source.is_empty() {
                root.display().to_string()
            } else {
                format!("{}/{source}", root.display())
            };
            PlannedCase {
                first_source: files[0].clone(),
                study_uid: String::new(),
                accession: String::new(),
                source: source_shown,
                modality: if all_ct { Modality::CT } else { Modality::MR },
                age,
                sex,
                series: files
                    .into_iter()
                    .zip(sidecars)
                    .map(|(file, sidecar)| PlannedSeries {
                        guess: guess(&file, sidecar.as_ref()),
                        fallback_label: "unknown",
                        burned_in: false,
                        slices: Vec::new(),
                        images: SeriesImages::Nifti(file),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The BIDS suffix, else the sidecar's acquisition fields, else the file name.
fn guess(file: &Path, sidecar: Option<&serde_json::Value>) -> Option<Guess> {
    let stem = stem(file);
    if let Some(guess) = label::from_bids_name(&stem) {
        return Some(guess);
    }
    if let Some(sidecar) = sidecar {
        let text = |field: &str| {
            sidecar
                .get(field)
                .and_then(|v| v.as_str())
                .map(String::from)
        };
        // BIDS gives times in seconds.
        let ms = |field: &str| {
            sidecar
                .get(field)
                .and_then(|v| v.as_f64())
                .map(|s| s * 1000.0)
        };
        let acquisition = Acquisition {
            modality: text("Modality"),
            description: text("SeriesDescription")
                .or_else(|| text("ProtocolName"))
                .unwrap_or_default(),
            image_type: sidecar
                .get("ImageType")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            scanning_sequence: text("ScanningSequence"),
            inversion_time_ms: ms("InversionTime"),
            echo_time_ms: ms("EchoTime"),
            repetition_time_ms: ms("RepetitionTime"),
            diffusion_b_value: None,
            contrast_agent: text("ContrastBolusIngredient").is_some(),
        };
        if let Some(guess) = label::guess(&acquisition) {
            return Some(guess);
        }
    }
    let by_name = Acquisition {
        description: stem,
        ..Acquisition::default()
    };
    label::guess(&by_name).map(|g| Guess {
        basis: "file name",
        ..g
    })
}

fn read_sidecar(image: &Path) -> Option<serde_json::Value> {
    let path = image.with_file_name(format!("{}.json", stem(image)));
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// `participants.tsv` of a BIDS dataset: age (years) and sex by `participant_id`.
fn read_participants(root: &Path) -> BTreeMap<String, (Option<u32>, Sex)> {
    let Ok(text) = std::fs::read_to_string(root.join("participants.tsv")) else {
        return BTreeMap::new();
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let column = |name: &str| header.iter().position(|h| h.trim() == name);
    let (Some(id), age, sex) = (column("participant_id"), column("age"), column("sex")) else {
        return BTreeMap::new();
    };
    lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
            let age = age
                .and_then(|a| fields.get(a))
                .and_then(|a| a.parse::<f64>().ok())
                .filter(|a| (0.0..=130.0).contains(a))
                .map(|a| a as u32);
            let sex = match sex.and_then(|s| fields.get(s)).copied() {
                Some("F" | "f" | "female" | "Female") => Sex::F,
                Some("M" | "m" | "male" | "Male") => Sex::M,
                _ => Sex::O,
            };
            Some((fields.get(id)?.to_string(), (age, sex)))
        })
        .collect()
}

/// Writes the de-identified copy of `source` as `<series_id>.nii[.gz]` in `case_dir`; returns
/// its name.
pub(super) fn write_copy(source: &Path, case_dir: &Path, series_id: &str) -> crate::Result<String> {
    let bytes = std::fs::read(source).map_err(|e| io(source, e))?;
    let gzipped = bytes.starts_with(&[0x1F, 0x8B]);
    let copy = deid::deidentified_nifti(source, &bytes)?;
    let name = format!("{series_id}.{}", if gzipped { "nii.gz" } else { "nii" });
    let target = case_dir.join(&name);
    std::fs::write(&target, copy).map_err(|e| io(&target, e))?;
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bids_places_name_subject_session_and_datatype() {
        let place = bids_place(Path::new("/x/ds/sub-07/ses-2/anat/sub-07_ses-2_T1w.nii.gz"))
            .expect("a BIDS path");
        assert_eq!(place.root, Path::new("/x/ds"));
        assert_eq!(place.subject, "sub-07");
        assert_eq!(place.session.as_deref(), Some("ses-2"));
        assert_eq!(place.datatype, "anat");
        let place = bids_place(Path::new("ds/sub-07/dwi/sub-07_dwi.nii")).expect("a BIDS path");
        assert_eq!((place.session, place.datatype.as_str()), (None, "dwi"));
        assert!(bids_place(Path::new("/scans/patient/flair.nii")).is_none());
    }
}
