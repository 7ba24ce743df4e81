//! The demo bundle, read back through dicom-object and the model types rather than through the
//! generator's own assumptions.

use cases::model::{
    CaseFile, DiseaseGroup, GraderLine, MarkShape, Modality, ResponseLine, StudyFile,
};
use cases::progress::NoProgress;
use demo::{write_demo_bundle, DemoSummary};
use dicom_dictionary_std::tags;
use dicom_object::{open_file, DefaultDicomObject};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Geometry read from DICOM text is compared to this (decimal strings carry 6 decimals).
const POSITION_TOLERANCE_MM: f64 = 1e-3;

/// The taxonomy codes of docs/domain.md the demo plants (all but R4, anchoring, which is not a
/// phrase of one answer), listed here independently of the generator.
const TAXONOMY: [&str; 13] = [
    "P1", "P2", "P3", "P4", "P5", "T1", "G1", "G2", "R1", "R2", "R3", "K1", "C1",
];

struct Bundle {
    _dir: tempfile::TempDir,
    root: PathBuf,
    summary: DemoSummary,
}

/// Generating takes seconds; every test reads the same bundle.
fn bundle() -> &'static Bundle {
    static BUNDLE: OnceLock<Bundle> = OnceLock::new();
    BUNDLE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path().join("demo");
        let summary = write_demo_bundle(&root, &NoProgress).expect("demo bundle");
        Bundle {
            _dir: dir,
            root,
            summary,
        }
    })
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn tree_hash(root: &Path) -> BTreeMap<String, String> {
    files_under(root)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).expect("readable file");
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            let digest = Sha256::digest(&bytes);
            (
                relative,
                digest.iter().map(|b| format!("{b:02x}")).collect(),
            )
        })
        .collect()
}

fn case_files() -> Vec<CaseFile> {
    let mut cases: Vec<CaseFile> = std::fs::read_dir(bundle().root.join("cases"))
        .expect("cases directory")
        .map(|entry| {
            let path = entry.unwrap().path().join("case.json");
            let text = std::fs::read_to_string(&path).expect("case.json");
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect();
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    cases
}

fn strings(object: &DefaultDicomObject, tag: dicom_core::Tag) -> Vec<String> {
    object
        .element(tag)
        .unwrap_or_else(|_| panic!("missing {tag}"))
        .to_str()
        .unwrap()
        .split('\\')
        .map(|s| s.trim().to_string())
        .collect()
}

fn numbers(object: &DefaultDicomObject, tag: dicom_core::Tag) -> Vec<f64> {
    strings(object, tag)
        .iter()
        .map(|s| s.parse::<f64>().unwrap_or_else(|_| panic!("{tag}: {s:?}")))
        .collect()
}

fn text(object: &DefaultDicomObject, tag: dicom_core::Tag) -> String {
    strings(object, tag).join("\\")
}

fn u16_tag(object: &DefaultDicomObject, tag: dicom_core::Tag) -> u16 {
    object.element(tag).unwrap().to_int::<u16>().unwrap()
}

/// A series as the files on disk describe it.
struct SeriesGeometry {
    positions: Vec<[f64; 3]>,
    row_direction: [f64; 3],
    column_direction: [f64; 3],
    spacing: [f64; 2],
    rows: usize,
    columns: usize,
    objects: Vec<DefaultDicomObject>,
}

impl SeriesGeometry {
    fn read(dir: &Path) -> SeriesGeometry {
        let objects: Vec<DefaultDicomObject> = files_under(dir)
            .iter()
            .map(|p| open_file(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .collect();
        assert!(!objects.is_empty(), "{}: no files", dir.display());
        let first = &objects[0];
        let orientation = numbers(first, tags::IMAGE_ORIENTATION_PATIENT);
        let spacing = numbers(first, tags::PIXEL_SPACING);
        SeriesGeometry {
            positions: objects
                .iter()
                .map(|o| {
                    let p = numbers(o, tags::IMAGE_POSITION_PATIENT);
                    [p[0], p[1], p[2]]
                })
                .collect(),
            row_direction: [orientation[0], orientation[1], orientation[2]],
            column_direction: [orientation[3], orientation[4], orientation[5]],
            // PixelSpacing is (between rows, between columns).
            spacing: [spacing[0], spacing[1]],
            rows: usize::from(u16_tag(first, tags::ROWS)),
            columns: usize::from(u16_tag(first, tags::COLUMNS)),
            objects,
        }
    }

    fn normal(&self) -> [f64; 3] {
        let (a, b) = (self.row_direction, self.column_direction);
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    /// Where an LPS point falls: (column, row, slice), fractional, from the tags alone.
    fn voxel_of(&self, p: [f64; 3]) -> [f64; 3] {
        let d = [
            p[0] - self.positions[0][0],
            p[1] - self.positions[0][1],
            p[2] - self.positions[0][2],
        ];
        let dot = |u: [f64; 3]| d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
        let step = dot_of(sub(self.positions[1], self.positions[0]), self.normal());
        [
            dot(self.row_direction) / self.spacing[1],
            dot(self.column_direction) / self.spacing[0],
            dot(self.normal()) / step,
        ]
    }

    fn contains(&self, p: [f64; 3]) -> bool {
        let [c, r, s] = self.voxel_of(p);
        let inside = |v: f64, n: usize| v >= -0.5 && v <= n as f64 - 0.5;
        inside(c, self.columns) && inside(r, self.rows) && inside(s, self.positions.len())
    }

    /// The modality value (stored × slope + intercept) at the voxel nearest to `p`.
    fn value_at(&self, p: [f64; 3]) -> f64 {
        let [c, r, s] = self.voxel_of(p).map(|v| v.round() as usize);
        let object = &self.objects[s];
        let bytes = object
            .element(tags::PIXEL_DATA)
            .unwrap()
            .to_bytes()
            .unwrap();
        let offset = 2 * (r * self.columns + c);
        let stored = u16::from_le_bytes([bytes[offset], bytes[offset + 1]]);
        let slope = numbers(object, tags::RESCALE_SLOPE)[0];
        let intercept = numbers(object, tags::RESCALE_INTERCEPT)[0];
        f64::from(stored) * slope + intercept
    }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot_of(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[test]
fn two_runs_write_byte_identical_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let again = dir.path().join("again");
    let summary = write_demo_bundle(&again, &NoProgress).unwrap();
    assert_eq!(summary, bundle().summary);
    let first = tree_hash(&bundle().root);
    let second = tree_hash(&again);
    assert_eq!(first.len(), second.len());
    for (path, digest) in &first {
        assert_eq!(
            Some(digest),
            second.get(path),
            "{path} differs between runs"
        );
    }
}

#[test]
fn bundle_is_small_enough_to_ship() {
    let bytes: u64 = files_under(&bundle().root)
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(bytes < 100_000_000, "{bytes} bytes");
}

#[test]
fn study_covers_every_group_with_ct_and_ground_truth() {
    let study: StudyFile =
        serde_json::from_str(&std::fs::read_to_string(bundle().root.join("study.json")).unwrap())
            .unwrap();
    assert!(study.taxonomy.is_none(), "the default taxonomy is meant");
    assert!((3..=4).contains(&study.rubric.dimensions.len()));
    for scale in std::iter::once(&study.rubric.overall)
        .chain(study.rubric.dimensions.iter().map(|d| &d.scale))
    {
        assert_eq!((scale.min, scale.max, scale.step), (1.0, 5.0, 1.0));
        assert_eq!(scale.levels.len(), 5, "one descriptor per level");
    }

    let cases = case_files();
    assert!(cases.len() >= 12, "{} cases", cases.len());
    assert_eq!(bundle().summary.cases, cases.len());
    let groups: BTreeSet<DiseaseGroup> = cases.iter().map(|c| c.disease_group).collect();
    assert_eq!(groups.len(), 5, "{groups:?}");
    assert!(cases.iter().filter(|c| c.modality == Modality::CT).count() >= 2);
    let mut families = BTreeSet::new();
    let mut levels = BTreeSet::new();
    for case in &cases {
        let truth = case
            .ground_truth
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no ground truth", case.id));
        assert!(!truth.diagnosis.is_empty() && !truth.differential.is_empty());
        assert!(!truth.expected_reasoning.is_empty() && truth.difficulty.is_some());
        let focal = matches!(
            case.disease_group,
            DiseaseGroup::MultipleSclerosis | DiseaseGroup::Stroke | DiseaseGroup::Tumour
        );
        if focal {
            assert!(!truth.lesions.is_empty(), "{}: lesions not marked", case.id);
        }
        if case.disease_group == DiseaseGroup::Normal {
            assert!(
                truth.lesions.is_empty(),
                "{}: a normal case with lesions",
                case.id
            );
        }
        for task in &case.tasks {
            families.insert(task.family);
            levels.insert(task.level);
        }
    }
    assert_eq!(families.len(), 3);
    assert_eq!(levels, BTreeSet::from([1, 2, 3]));
}

#[test]
fn every_series_reads_back_as_a_consistent_axial_dicom_series() {
    let mut series_uids = BTreeSet::new();
    let mut sop_uids = BTreeSet::new();
    let mut series_count = 0;
    let mut image_count = 0;
    for case in case_files() {
        let case_dir = bundle().root.join("cases").join(&case.id);
        for spec in &case.series {
            let series = SeriesGeometry::read(&case_dir.join(&spec.path));
            series_count += 1;
            image_count += series.objects.len();
            let where_ = format!("{}/{}", case.id, spec.id);
            assert!(series.positions.len() >= 20, "{where_}: too few slices");
            // Axial: the normal points superior (+z in LPS).
            let normal = series.normal();
            assert!(
                (normal[2] - 1.0).abs() < 1e-9,
                "{where_}: normal {normal:?}"
            );
            assert_eq!(
                series.spacing[0], series.spacing[1],
                "{where_}: square pixels"
            );
            match case.modality {
                // A clinical head CT: a 512² matrix over a field of view of about 230 mm.
                Modality::CT => {
                    assert_eq!((series.rows, series.columns), (512, 512), "{where_}");
                    let field_of_view = series.spacing[0] * 512.0;
                    assert!(
                        (field_of_view - 230.0).abs() < 0.01,
                        "{where_}: {field_of_view} mm"
                    );
                }
                Modality::MR => assert!(
                    (1.0..=1.5).contains(&series.spacing[0]),
                    "{where_}: {} mm",
                    series.spacing[0]
                ),
            }
            let thickness = numbers(&series.objects[0], tags::SLICE_THICKNESS)[0];
            assert!((3.0..=5.0).contains(&thickness), "{where_}: {thickness} mm");
            let heights: Vec<f64> = series
                .positions
                .iter()
                .map(|p| dot_of(*p, normal))
                .collect();
            for pair in heights.windows(2) {
                let step = pair[1] - pair[0];
                assert!(
                    step > 0.0,
                    "{where_}: positions not increasing along the normal"
                );
                assert!(
                    (step - thickness).abs() < POSITION_TOLERANCE_MM,
                    "{where_}: gap {step}"
                );
            }
            let series_uid = text(&series.objects[0], tags::SERIES_INSTANCE_UID);
            assert!(series_uid.starts_with("2.25.") && series_uid.len() <= 64);
            assert!(
                series_uids.insert(series_uid.clone()),
                "{where_}: series UID reused"
            );
            for (index, object) in series.objects.iter().enumerate() {
                assert_eq!(text(object, tags::SERIES_INSTANCE_UID), series_uid);
                assert!(sop_uids.insert(text(object, tags::SOP_INSTANCE_UID)));
                assert_eq!(
                    numbers(object, tags::INSTANCE_NUMBER)[0],
                    (index + 1) as f64
                );
                assert_eq!(
                    text(object, tags::PHOTOMETRIC_INTERPRETATION),
                    "MONOCHROME2"
                );
                assert_eq!(u16_tag(object, tags::BITS_ALLOCATED), 16);
                assert!(text(object, tags::PATIENT_NAME).starts_with("DEMO^"));
                assert_eq!(
                    object.meta().transfer_syntax().trim_end_matches('\0'),
                    "1.2.840.10008.1.2.1",
                    "{where_}: explicit VR little endian"
                );
                let pixels = object
                    .element(tags::PIXEL_DATA)
                    .unwrap()
                    .to_bytes()
                    .unwrap();
                assert_eq!(pixels.len(), series.rows * series.columns * 2);
                let (modality, sop_class) = match case.modality {
                    Modality::CT => ("CT", "1.2.840.10008.5.1.4.1.1.2"),
                    Modality::MR => ("MR", "1.2.840.10008.5.1.4.1.1.4"),
                };
                assert_eq!(text(object, tags::MODALITY), modality);
                assert_eq!(
                    text(object, tags::SOP_CLASS_UID).trim_end_matches('\0'),
                    sop_class
                );
                if case.modality == Modality::CT {
                    assert_eq!(numbers(object, tags::RESCALE_INTERCEPT)[0], -1024.0);
                    assert_eq!(numbers(object, tags::RESCALE_SLOPE)[0], 1.0);
                    assert_eq!(numbers(object, tags::WINDOW_CENTER)[0], 40.0);
                    assert_eq!(numbers(object, tags::WINDOW_WIDTH)[0], 80.0);
                }
            }
            assert!(!text(&series.objects[0], tags::SERIES_DESCRIPTION).is_empty());
        }
        for task in &case.tasks {
            for key in &task.key_images {
                let spec = case.series.iter().find(|s| s.id == key.series).unwrap();
                let files = files_under(&case_dir.join(&spec.path)).len();
                assert!(
                    (key.slice as usize) < files,
                    "{}/{}: key slice",
                    case.id,
                    task.id
                );
            }
        }
    }
    assert_eq!(series_count, bundle().summary.series);
    assert_eq!(image_count, bundle().summary.images);
}

/// The centre of a series' field of view on its first slice, in LPS mm, from the tags alone.
fn field_centre(series: &SeriesGeometry) -> [f64; 2] {
    let half_width = (series.columns - 1) as f64 * series.spacing[1] / 2.0;
    let half_height = (series.rows - 1) as f64 * series.spacing[0] / 2.0;
    let first = series.positions[0];
    [
        first[0] + half_width * series.row_direction[0] + half_height * series.column_direction[0],
        first[1] + half_width * series.row_direction[1] + half_height * series.column_direction[1],
    ]
}

#[test]
fn ct_and_mr_series_share_slices_and_centre_whatever_their_matrix() {
    let cases = case_files();
    let read = |modality: Modality| {
        let case = cases.iter().find(|c| c.modality == modality).unwrap();
        let dir = bundle().root.join("cases").join(&case.id);
        SeriesGeometry::read(&dir.join(&case.series[0].path))
    };
    let (ct, mr) = (read(Modality::CT), read(Modality::MR));
    assert!(
        ct.rows * ct.columns > 4 * mr.rows * mr.columns,
        "CT has the finer matrix"
    );
    // Key images are slice numbers: slice n must be the same height on CT and MR.
    assert_eq!(ct.positions.len(), mr.positions.len());
    for (slice, (c, m)) in ct.positions.iter().zip(&mr.positions).enumerate() {
        assert!(
            (c[2] - m[2]).abs() < POSITION_TOLERANCE_MM,
            "slice {slice}: CT z {} vs MR z {}",
            c[2],
            m[2]
        );
    }
    let (ct_centre, mr_centre) = (field_centre(&ct), field_centre(&mr));
    for axis in 0..2 {
        assert!(
            (ct_centre[axis] - mr_centre[axis]).abs() < POSITION_TOLERANCE_MM,
            "centre CT {ct_centre:?} vs MR {mr_centre:?}"
        );
    }
}

#[test]
fn ground_truth_marks_lie_inside_their_volumes() {
    for case in case_files() {
        let truth = case.ground_truth.as_ref().unwrap();
        for lesion in &truth.lesions {
            for mark in &lesion.marks {
                let spec = case.series.iter().find(|s| s.id == mark.series).unwrap();
                let dir = bundle().root.join("cases").join(&case.id).join(&spec.path);
                let series = SeriesGeometry::read(&dir);
                assert!(matches!(mark.shape, MarkShape::Ellipse | MarkShape::Point));
                for point in &mark.points_mm {
                    assert!(
                        series.contains(*point),
                        "{}/{}: {point:?}",
                        case.id,
                        lesion.id
                    );
                }
            }
        }
    }
}

fn lesion_centre(case_id: &str, lesion_id: &str) -> [f64; 3] {
    let case = case_files().into_iter().find(|c| c.id == case_id).unwrap();
    let truth = case.ground_truth.unwrap();
    let lesion = truth.lesions.iter().find(|l| l.id == lesion_id).unwrap();
    lesion.marks[0].points_mm[0]
}

/// The value at a lesion's marked centre, on one of the case's series.
fn value_at_lesion(case_id: &str, lesion_id: &str, series_id: &str) -> f64 {
    let dir = bundle().root.join("cases").join(case_id).join(series_id);
    SeriesGeometry::read(&dir).value_at(lesion_centre(case_id, lesion_id))
}

/// The value at the mirror image of a lesion's centre across the midline (LPS x = 0 in the
/// template's symmetric space): the same tissue, without the lesion.
fn mirrored_value(case_id: &str, lesion_id: &str, series_id: &str) -> f64 {
    let [x, y, z] = lesion_centre(case_id, lesion_id);
    let dir = bundle().root.join("cases").join(case_id).join(series_id);
    SeriesGeometry::read(&dir).value_at([-x, y, z])
}

#[test]
fn lesions_have_the_signal_their_diagnosis_implies_where_they_are_marked() {
    // Acute haematoma 60–80 HU; infarct hypodense (< 25 HU) — standard CT teaching values.
    let clot = value_at_lesion("stroke-03", "L1", "ct");
    assert!((60.0..=80.0).contains(&clot), "haematoma {clot} HU");
    let infarct = value_at_lesion("stroke-02", "L1", "ct");
    assert!((10.0..25.0).contains(&infarct), "infarct {infarct} HU");
    // Restricted diffusion: bright on DWI, dark on ADC, against the case's own white matter.
    let dwi = value_at_lesion("stroke-01", "L1", "dwi");
    let adc = value_at_lesion("stroke-01", "L1", "adc");
    let contralateral_dwi = mirrored_value("stroke-01", "L1", "dwi");
    assert!(
        dwi > 1.5 * contralateral_dwi,
        "DWI {dwi} vs contralateral {contralateral_dwi}"
    );
    assert!(adc < 600.0, "ADC {adc}");
    // An MS plaque is FLAIR-bright.
    let plaque = value_at_lesion("ms-01", "L1", "flair");
    assert!(plaque > 900.0, "plaque FLAIR {plaque}");
}

fn jsonl<T: serde::de::DeserializeOwned>(name: &str) -> Vec<T> {
    let path = bundle().root.join(name);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1))
        })
        .collect()
}

#[test]
fn responses_plant_every_taxonomy_error_with_quotes_from_their_rationale() {
    let responses: Vec<ResponseLine> = jsonl("responses.jsonl");
    assert_eq!(responses.len(), bundle().summary.responses);
    let cases = case_files();
    let models: BTreeSet<&str> = responses.iter().map(|r| r.model.as_str()).collect();
    assert_eq!(models.len(), 3);
    let mut planted_codes = BTreeSet::new();
    let mut error_free = 0;
    for response in &responses {
        let case = cases.iter().find(|c| c.id == response.case_id).unwrap();
        let task = case
            .tasks
            .iter()
            .find(|t| t.id == response.task_id)
            .unwrap();
        assert_eq!(
            task.level == 3,
            response.turns.is_some(),
            "{:?}",
            response.task_id
        );
        let rationale = response.rationale.as_deref().unwrap();
        let planted = response.extra["demo_planted_errors"].as_array().unwrap();
        if planted.is_empty() {
            error_free += 1;
        }
        for error in planted {
            let code = error["category"].as_str().unwrap();
            assert!(TAXONOMY.contains(&code), "{code}");
            planted_codes.insert(code.to_string());
            let quote = error["quote"].as_str().unwrap();
            assert!(rationale.contains(quote), "quote not in rationale: {quote}");
        }
    }
    assert_eq!(planted_codes.len(), TAXONOMY.len(), "{planted_codes:?}");
    assert!(
        error_free > responses.len() / 10,
        "correct reasoning must appear too"
    );
    let samples: BTreeMap<(&str, &str, &str), u32> =
        responses.iter().fold(BTreeMap::new(), |mut m, r| {
            *m.entry((r.case_id.as_str(), r.task_id.as_str(), r.model.as_str()))
                .or_default() += 1;
            m
        });
    assert!(samples.values().all(|n| (3..=5).contains(n)));
}

#[test]
fn grader_scores_refer_to_responses_and_stay_on_the_rubric_scale() {
    let responses: Vec<ResponseLine> = jsonl("responses.jsonl");
    let keys: BTreeSet<(String, String, String, u32)> = responses
        .iter()
        .map(|r| {
            (
                r.case_id.clone(),
                r.task_id.clone(),
                r.model.clone(),
                r.sample,
            )
        })
        .collect();
    let grades: Vec<GraderLine> = jsonl("grader.jsonl");
    assert_eq!(grades.len(), bundle().summary.grader_scores);
    let graders: BTreeSet<&str> = grades.iter().map(|g| g.grader.as_str()).collect();
    assert_eq!(
        graders,
        BTreeSet::from(["demo-grader-v1", "demo-grader-v2"])
    );
    for grade in &grades {
        let key = (
            grade.case_id.clone(),
            grade.task_id.clone(),
            grade.model.clone(),
            grade.sample,
        );
        assert!(keys.contains(&key), "{key:?}");
        for score in
            std::iter::once(grade.score).chain(grade.dimensions.as_ref().unwrap().values().copied())
        {
            assert!(
                (1.0..=5.0).contains(&score) && score.fract() == 0.0,
                "{score}"
            );
        }
    }
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    sxy / (sxx * syy).sqrt()
}

#[test]
fn ratings_table_has_clinicians_and_a_lenient_correlated_grader() {
    let text = std::fs::read_to_string(bundle().root.join("ratings.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "item,rater,score,dimension,case,disease_group,modality,task_family,level,model,rater_role"
    );
    // item → rater → overall score
    let mut overall: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    let mut dimensions = BTreeSet::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 11, "{line}");
        let expected_role = match fields[1] {
            "neurologist-C" => "neurologist",
            "demo-grader-v1" => "",
            _ => "neuroradiologist",
        };
        assert_eq!(fields[10], expected_role, "{line}");
        dimensions.insert(fields[3].to_string());
        if fields[3] == "overall" {
            overall
                .entry(fields[0].to_string())
                .or_default()
                .insert(fields[1].to_string(), fields[2].parse().unwrap());
        }
    }
    assert_eq!(dimensions.len(), 5, "overall plus four rubric dimensions");
    let clinicians = ["neurorad-A", "neurorad-B", "neurologist-C"];
    let (mut grader, mut mean) = (Vec::new(), Vec::new());
    for scores in overall.values() {
        if clinicians.iter().all(|c| scores.contains_key(*c)) {
            grader.push(scores["demo-grader-v1"]);
            mean.push(clinicians.iter().map(|c| scores[*c]).sum::<f64>() / 3.0);
        }
    }
    let r = pearson(&grader, &mean);
    assert!((0.8..0.97).contains(&r), "grader vs clinicians r = {r}");
    let bias = grader.iter().zip(&mean).map(|(g, m)| g - m).sum::<f64>() / grader.len() as f64;
    assert!((0.05..0.6).contains(&bias), "grader leniency {bias}");
    let pairwise = pearson(
        &overall
            .values()
            .filter_map(|s| s.get("neurorad-A").copied())
            .collect::<Vec<_>>(),
        &overall
            .values()
            .filter_map(|s| s.get("neurorad-B").copied())
            .collect::<Vec<_>>(),
    );
    assert!(pairwise > 0.75, "clinicians agree: r = {pairwise}");
}

#[test]
fn notice_carries_the_template_licence_and_says_it_is_synthetic() {
    let notice = std::fs::read_to_string(bundle().root.join("NOTICE")).unwrap();
    assert!(notice.contains("Copyright (C) 1993-2009 Louis Collins"));
    assert!(notice.contains("McConnell Brain Imaging Centre"));
    assert!(notice.to_lowercase().contains("synthetic"));
}
