//! "New study…" through the application layer on a generated PACS export (`pacs_export`): the
//! draft's counts, labels and to-complete lists, thumbnails, corrections, cancel and a refused
//! import leaving nothing behind, and an import that stores what the lead corrected.

use cases::app::case_facts::{self, CaseFacts};
use cases::app::new_study::{
    self, CaseEdit, Draft, DraftTask, DraftView, ImportOutcome, NewStudyRequest, ScanOutcome,
    STRIP_LENGTH, THUMBNAIL_SIDE,
};
use cases::app::permissions::Action;
use cases::app::Session;
use cases::harness::{ColumnMap, Defaults};
use cases::model::{DiseaseGroup, SliceRef, TaskFamily, ToComplete};
use cases::progress::NoProgress;
use cases::scaffold::{Dates, ResponsesInput};
use cases::store::Store;
use neurorater_tests::pacs_export::{write_pacs_export, PacsExport};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

const STUDY: &str = "pacs-study";

struct Setup {
    _dir: tempfile::TempDir,
    export: PacsExport,
    folder: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let export = write_pacs_export(&dir.path().join("export"));
    let folder = dir.path().join("studies");
    std::fs::create_dir(&folder).expect("mkdir");
    Setup {
        _dir: dir,
        export,
        folder,
    }
}

fn request(setup: &Setup, responses: Option<ResponsesInput>) -> NewStudyRequest {
    NewStudyRequest {
        sources: vec![setup.export.root.clone()],
        folder: setup.folder.clone(),
        study_id: STUDY.into(),
        responses,
        dates: Dates::Remove,
    }
}

fn scan(request: &NewStudyRequest) -> ScanOutcome {
    let cancel = AtomicBool::new(false);
    new_study::scan(&Session::command_line(), request, &NoProgress, &cancel).expect("scan")
}

fn drafted(outcome: ScanOutcome) -> Box<Draft> {
    match outcome {
        ScanOutcome::Drafted(draft) => draft,
        ScanOutcome::Cancelled => panic!("cancelled"),
        ScanOutcome::Refused(problems) => panic!("refused: {problems:?}"),
    }
}

/// The names in `folder`, sorted.
fn listing(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn series_count(view: &DraftView) -> usize {
    view.cases.iter().map(|c| c.series.len()).sum()
}

#[test]
fn a_scan_drafts_every_case_with_guessed_labels_and_what_is_to_complete() {
    let setup = setup();
    let draft = drafted(scan(&request(&setup, None)));
    let view = draft.view();
    // As `neurorater scaffold` on the same export (cli/tests/scaffold.rs): two DICOM studies and
    // one BIDS session, six series, eighteen image files, eight files skipped with a reason.
    let ids: Vec<&str> = view.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["case-001", "case-002", "case-003"]);
    assert_eq!(series_count(&view), 6);
    let slices: usize = view
        .cases
        .iter()
        .flat_map(|c| &c.series)
        .map(|s| s.slices)
        .sum();
    assert_eq!(slices, 18);
    assert_eq!(view.skipped.len(), 8, "{:?}", view.skipped);
    assert!(view.cases.iter().flat_map(|c| &c.series).all(|s| s.guessed));
    let mr = &view.cases[1];
    let labels: Vec<&str> = mr.series.iter().map(|s| s.label.as_str()).collect();
    assert!(labels.contains(&"FLAIR"), "{labels:?}");
    for case in &view.cases {
        for wanted in [
            ToComplete::DiseaseGroup,
            ToComplete::Tasks,
            ToComplete::SeriesLabels,
        ] {
            assert!(case.to_complete.contains(&wanted), "{}", case.id);
        }
    }
    assert_eq!(view.bundle, setup.folder.join(STUDY).display().to_string());
    // The draft is hidden beside the study-to-be; nothing else is written yet.
    assert_eq!(
        listing(&setup.folder),
        [".pacs-study.draft", ".pacs-study.draft.key.csv"]
    );
}

#[test]
fn thumbnails_are_one_strip_of_evenly_spread_slices_per_series() {
    let setup = setup();
    let draft = drafted(scan(&request(&setup, None)));
    for case in draft.view().cases {
        for series in case.series {
            let png = draft
                .thumbnail_strip(&case.id, &series.id)
                .expect("thumbnails");
            let strip = image::load_from_memory(&png).expect("a PNG").to_luma8();
            let shown = series.slices.max(1).min(STRIP_LENGTH as usize) as u32;
            // A NIfTI series is one file of several slices: its strip is as long as the volume
            // allows, never longer than STRIP_LENGTH.
            assert_eq!(strip.height(), THUMBNAIL_SIDE, "{}/{}", case.id, series.id);
            assert!(
                strip.width().is_multiple_of(THUMBNAIL_SIDE)
                    && strip.width() / THUMBNAIL_SIDE >= shown,
                "{}/{}: {} wide for {} slices",
                case.id,
                series.id,
                strip.width(),
                series.slices
            );
            // The export's DICOM slices hold one value each (pacs_export: 100 + InstanceNumber),
            // so each of their thumbnails is one flat grey, whatever the window.
            if case.id != "case-003" {
                for at in 0..strip.width() / THUMBNAIL_SIDE {
                    let tile = image::imageops::crop_imm(&strip, at * THUMBNAIL_SIDE, 0, 96, 96)
                        .to_image();
                    let first = tile.get_pixel(0, 0).0[0];
                    assert!(
                        tile.pixels().all(|p| p.0[0] == first),
                        "{}/{} thumbnail {at} is not flat",
                        case.id,
                        series.id
                    );
                }
            }
        }
    }
    let missing = draft.thumbnail_strip("case-001", "no-such-series");
    assert!(matches!(missing, Err(cases::Error::NotFound { .. })));
}

#[test]
fn the_leads_corrections_leave_the_to_complete_list_as_they_answer_it() {
    let setup = setup();
    let mut draft = drafted(scan(&request(&setup, None)));
    let view = draft.view();
    let mr = view.cases[1].clone();
    let first = &mr.series[0];
    let corrected = draft.set_label(&mr.id, &first.id, "T1+C").expect("label");
    assert_eq!(corrected.series[0].label, "T1+C");
    assert!(!corrected.series[0].guessed);
    // Other labels are still guesses: the case still asks for them to be confirmed.
    assert!(corrected.to_complete.contains(&ToComplete::SeriesLabels));
    let mut last = corrected;
    for series in &mr.series[1..] {
        last = draft
            .set_label(&mr.id, &series.id, &series.label)
            .expect("label");
    }
    assert!(!last.to_complete.contains(&ToComplete::SeriesLabels));
    assert!(draft.set_label(&mr.id, &first.id, "  ").is_err());
    assert!(draft.set_label(&mr.id, "nope", "T2").is_err());

    let edit = |prompt: &str, note: &str| CaseEdit {
        disease_group: DiseaseGroup::MultipleSclerosis,
        clinical_note: note.into(),
        tasks: vec![DraftTask {
            id: "dx".into(),
            family: TaskFamily::DifferentialDiagnosis,
            prompt: prompt.into(),
            key_images: None,
        }],
    };
    let placeholder = draft
        .edit_case(&mr.id, edit("(prompt to be completed)", ""))
        .expect("edit");
    assert_eq!(placeholder.disease_group, DiseaseGroup::MultipleSclerosis);
    assert!(!placeholder.to_complete.contains(&ToComplete::DiseaseGroup));
    assert!(placeholder.to_complete.contains(&ToComplete::Tasks));
    assert!(placeholder.to_complete.contains(&ToComplete::ClinicalNote));
    let done = draft
        .edit_case(
            &mr.id,
            edit("What is the diagnosis?", "Numbness for 3 weeks."),
        )
        .expect("edit");
    assert!(!done.to_complete.contains(&ToComplete::Tasks));
    assert!(!done.to_complete.contains(&ToComplete::ClinicalNote));
}

#[test]
fn cancelling_a_scan_or_dropping_a_draft_leaves_nothing_behind() {
    let setup = setup();
    let cancel = AtomicBool::new(true);
    let outcome = new_study::scan(
        &Session::command_line(),
        &request(&setup, None),
        &NoProgress,
        &cancel,
    )
    .expect("scan");
    assert!(matches!(outcome, ScanOutcome::Cancelled));
    assert!(listing(&setup.folder).is_empty());

    let draft = drafted(scan(&request(&setup, None)));
    assert_eq!(listing(&setup.folder).len(), 2);
    drop(draft);
    assert!(listing(&setup.folder).is_empty());
}

#[test]
fn responses_that_name_no_study_are_refused_as_file_line_field_and_nothing_is_written() {
    let setup = setup();
    let csv = setup
        .folder
        .parent()
        .expect("parent")
        .join("predictions.csv");
    std::fs::write(
        &csv,
        format!(
            "study,prediction\n{},Multiple sclerosis\nZZ-NO-SUCH-STUDY,Stroke\n",
            setup.export.accessions[0]
        ),
    )
    .expect("write");
    let responses = ResponsesInput {
        path: csv.clone(),
        map: "case_id=study,answer=prediction"
            .parse::<ColumnMap>()
            .expect("map"),
        defaults: Defaults {
            model: Some("vlm-a".into()),
            task_id: Some("dx".into()),
        },
    };
    match scan(&request(&setup, Some(responses))) {
        ScanOutcome::Refused(problems) => {
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert_eq!(problems[0].file, csv.display().to_string());
            assert_eq!(problems[0].line, Some(3));
            assert_eq!(problems[0].field, "case_id");
        }
        _ => panic!("a response naming no study must be refused"),
    }
    assert!(listing(&setup.folder).is_empty());
}

#[test]
fn an_import_stores_the_corrections_and_a_refused_one_keeps_the_draft_and_stores_nothing() {
    let setup = setup();
    let db = setup.folder.parent().expect("parent").join("study.sqlite");
    let mut store = Store::open(&db).expect("store");
    let lead = Session::current(&store)
        .expect("session")
        .study_lead(Action::BuildStudy)
        .expect("nobody reads here");
    let mut draft = drafted(scan(&request(&setup, None)));
    let mr = draft.view().cases[1].clone();
    draft
        .set_label(&mr.id, &mr.series[0].id, "T1+C")
        .expect("label");

    // Two tasks with one id: the bundle loader refuses it, naming the case file.
    let twice = DraftTask {
        id: "dx".into(),
        family: TaskFamily::DifferentialDiagnosis,
        prompt: "What is the diagnosis?".into(),
        key_images: None,
    };
    draft
        .edit_case(
            &mr.id,
            CaseEdit {
                disease_group: DiseaseGroup::MultipleSclerosis,
                clinical_note: String::new(),
                tasks: vec![twice.clone(), twice.clone()],
            },
        )
        .expect("edit");
    match draft
        .import(&mut store, &lead, &NoProgress)
        .expect("import")
    {
        ImportOutcome::Refused(problems) => assert!(
            problems
                .iter()
                .any(|p| p.file == "cases/case-002/case.json" && p.field.contains("tasks")),
            "{problems:?}"
        ),
        ImportOutcome::Imported(_) => panic!("duplicate task ids must be refused"),
    }
    assert!(store.studies().expect("studies").is_empty());
    assert_eq!(
        listing(&setup.folder),
        [".pacs-study.draft", ".pacs-study.draft.key.csv"]
    );

    // Issue 41 finding 3: the lead names the task's key image; one outside the series is refused.
    let key_on = |slice: u32| DraftTask {
        key_images: Some(vec![SliceRef {
            series: mr.series[1].id.clone(),
            slice,
        }]),
        ..twice.clone()
    };
    let edit = |task: DraftTask| CaseEdit {
        disease_group: DiseaseGroup::MultipleSclerosis,
        clinical_note: String::new(),
        tasks: vec![task],
    };
    let beyond = mr.series[1].slices as u32;
    let refused = draft.edit_case(&mr.id, edit(key_on(beyond))).unwrap_err();
    assert!(
        refused.to_string().contains("slices count from 0"),
        "{refused}"
    );
    let keyed = draft.edit_case(&mr.id, edit(key_on(1))).expect("edit");
    let named = SliceRef {
        series: mr.series[1].id.clone(),
        slice: 1,
    };
    assert_eq!(keyed.tasks[0].key_images, Some(vec![named]));
    let summary = match draft
        .import(&mut store, &lead, &NoProgress)
        .expect("import")
    {
        ImportOutcome::Imported(summary) => summary,
        ImportOutcome::Refused(problems) => panic!("{problems:?}"),
    };
    assert_eq!(
        (summary.cases, summary.series, summary.images, summary.tasks),
        (3, 6, 18, 1)
    );
    drop(draft);
    // The bundle and its key are in place, the draft gone; dropping an imported draft keeps them.
    assert_eq!(listing(&setup.folder), ["pacs-study", "pacs-study.key.csv"]);
    let cases = store.cases(STUDY).expect("cases");
    let case = cases.iter().find(|c| c.id == mr.id).expect("case-002");
    assert_eq!(case.disease_group, Some(DiseaseGroup::MultipleSclerosis));
    assert_eq!(case.series_labels[0], "T1+C");
    assert!(!case.to_complete.contains(&ToComplete::DiseaseGroup));
    assert!(!case.to_complete.contains(&ToComplete::Tasks));
    // The other cases still need curation: the case list says so.
    assert!(cases
        .iter()
        .filter(|c| c.id != mr.id)
        .all(|c| c.to_complete.contains(&ToComplete::DiseaseGroup)));
    let key_images: String = store
        .read()
        .query_row(
            "SELECT t.key_images_json FROM tasks t JOIN cases c ON t.case_ref = c.id
             WHERE c.case_id = ?1",
            [&mr.id],
            |r| r.get(0),
        )
        .expect("task");
    let key_images: Vec<SliceRef> = serde_json::from_str(&key_images).expect("json");
    assert_eq!(key_images.len(), 1);
    assert_eq!(
        (key_images[0].series.as_str(), key_images[0].slice),
        (mr.series[1].id.as_str(), 1)
    );

    // After import the lead edits another case's group and note (no case.json, no re-import),
    // audited with what they were.
    let other = cases.iter().find(|c| c.id != mr.id).expect("another case");
    let facts = CaseFacts {
        disease_group: DiseaseGroup::Stroke,
        clinical_note: "  Sudden left-sided weakness.  ".into(),
    };
    let edited = case_facts::edit(&mut store, &lead, STUDY, &other.id, &facts).expect("edit");
    assert_eq!(edited.summary.disease_group, Some(DiseaseGroup::Stroke));
    assert_eq!(edited.clinical_note, "Sudden left-sided weakness.");
    let audited = |store: &Store| -> i64 {
        store
            .read()
            .query_row(
                "SELECT count(*) FROM audit_log WHERE action = 'edit case'",
                [],
                |r| r.get(0),
            )
            .expect("audit")
    };
    assert_eq!(audited(&store), 1);
    case_facts::edit(&mut store, &lead, STUDY, &other.id, &facts).expect("again");
    assert_eq!(audited(&store), 1, "the same facts again change nothing");
}

/// `date` (YYYYMMDD) moved by `days`, one calendar day at a time: a plain count, independent of
/// the day-number arithmetic the scaffold uses.
fn add_days(date: &str, days: i64) -> String {
    let (mut y, mut m, mut d): (i64, u32, u32) = (
        date[..4].parse().expect("year"),
        date[4..6].parse().expect("month"),
        date[6..8].parse().expect("day"),
    );
    let length = |y: i64, m: u32| match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    for _ in 0..days.unsigned_abs() {
        if days > 0 {
            d += 1;
            if d > length(y, m) {
                (d, m) = (1, m + 1);
                if m > 12 {
                    (m, y) = (1, y + 1);
                }
            }
        } else {
            d -= 1;
            if d == 0 {
                m = if m == 1 { 12 } else { m - 1 };
                if m == 12 {
                    y -= 1;
                }
                d = length(y, m);
            }
        }
    }
    format!("{y:04}{m:02}{d:02}")
}

/// Every DICOM copy in the draft, by case.
fn draft_copies(folder: &Path) -> Vec<(String, PathBuf)> {
    let cases = folder.join(".pacs-study.draft").join("cases");
    let mut copies = Vec::new();
    for case in std::fs::read_dir(&cases).expect("cases") {
        let case = case.expect("entry").path();
        for series in std::fs::read_dir(&case).expect("case") {
            let series = series.expect("entry").path();
            if !series.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&series).expect("series") {
                let file = file.expect("entry").path();
                let name = case
                    .file_name()
                    .expect("name")
                    .to_string_lossy()
                    .into_owned();
                copies.push((name, file));
            }
        }
    }
    copies
}

#[test]
fn shifted_dates_move_every_date_of_a_patient_by_one_offset_and_keep_intervals() {
    use dicom_dictionary_std::tags;
    let setup = setup();
    let mut shifted = request(&setup, None);
    shifted.dates = Dates::ShiftPerPatient;
    let _draft = drafted(scan(&shifted));
    // case-001 is the beta study (StudyDate 19710610), case-002 alpha (19350304); the
    // acquisitions were two days after each study, at 09:30.
    let originals = [("case-001", "19710610"), ("case-002", "19350304")];
    let mut offsets = Vec::new();
    for (case, original) in originals {
        let copies: Vec<PathBuf> = draft_copies(&setup.folder)
            .into_iter()
            .filter(|(c, _)| c == case)
            .map(|(_, p)| p)
            .collect();
        assert!(!copies.is_empty(), "{case}");
        let mut study_dates = std::collections::BTreeSet::new();
        for copy in &copies {
            let file = dicom_object::open_file(copy).expect("a DICOM copy");
            let text = |tag| {
                file.element(tag)
                    .ok()
                    .and_then(|e| e.to_str().ok())
                    .map(|s| s.trim_end_matches(['\0', ' ']).to_owned())
            };
            let study_date = text(tags::STUDY_DATE).expect("StudyDate shifted, not removed");
            let acquired = text(tags::ACQUISITION_DATE_TIME).expect("AcquisitionDateTime kept");
            assert_eq!(
                acquired[..8],
                add_days(&study_date, 2),
                "{}",
                copy.display()
            );
            assert_eq!(&acquired[8..], "093000", "the time of day is kept");
            assert!(
                text(tags::PATIENT_BIRTH_DATE).is_none(),
                "birth date removed"
            );
            study_dates.insert(study_date);
        }
        assert_eq!(study_dates.len(), 1, "{case}: one offset for all its files");
        let study_date = study_dates.into_iter().next().expect("one");
        let back = (366..=366 + 3652)
            .find(|&days| add_days(original, -days) == study_date)
            .unwrap_or_else(|| panic!("{case}: {study_date} is not 1–11 years before {original}"));
        offsets.push(back);
    }
    // No copy holds an original date (they are among the export's markers).
    for (_, copy) in draft_copies(&setup.folder) {
        let bytes = std::fs::read(&copy).expect("read");
        for marker in ["19350304", "19710610", "19350306", "19710612"] {
            let found = bytes.windows(8).any(|w| w == marker.as_bytes());
            assert!(!found, "{} holds {marker}", copy.display());
        }
    }
    assert_eq!(offsets.len(), 2);
}
