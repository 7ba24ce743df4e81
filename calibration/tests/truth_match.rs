//! The ground-truth match section's accuracy and macro-F1 over disease groups against
//! scikit-learn (tests/data/truth_match_reference.json, made by
//! scripts/reference/calibration/make_truth_match_reference.py), and its pass@k and agreement
//! on a small study worked by hand.

use calibration::input::{CalibrationInput, CorrectnessJudgement, ReportOptions};
use calibration::truth_match::{answer_accuracy, group_scores, MatchedAnswer};

/// The figures are ratios of small counts: only rounding separates the two implementations.
const TOLERANCE: f64 = 1e-12;

#[test]
fn accuracy_and_macro_f1_are_scikit_learn_s() {
    let reference: serde_json::Value =
        serde_json::from_str(include_str!("data/truth_match_reference.json")).expect("JSON");
    let tables = reference["tables"].as_object().expect("tables");
    assert!(tables.len() >= 4);
    for (name, table) in tables {
        let pairs: Vec<(String, String)> = table["pairs"]
            .as_array()
            .expect("pairs")
            .iter()
            .map(|p| {
                (
                    p[0].as_str().unwrap().to_owned(),
                    p[1].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let borrowed: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(t, p)| (t.as_str(), p.as_str()))
            .collect();
        let (accuracy, macro_f1, classes) = group_scores(&borrowed);
        let close = |a: f64, b: &serde_json::Value| (a - b.as_f64().unwrap()).abs() < TOLERANCE;
        assert!(
            close(accuracy, &table["accuracy"]),
            "{name}: accuracy {accuracy} vs {}",
            table["accuracy"]
        );
        assert!(
            close(macro_f1, &table["macro_f1"]),
            "{name}: macro-F1 {macro_f1} vs {}",
            table["macro_f1"]
        );
        let per_class = table["per_class"].as_object().expect("per_class");
        assert_eq!(classes.len(), per_class.len(), "{name}: classes");
        for c in &classes {
            assert!(
                close(c.f1, &per_class[&c.group]),
                "{name}: {} F1 {} vs {}",
                c.group,
                c.f1,
                per_class[&c.group]
            );
        }
    }
}

fn answer(
    case: &str,
    task: &str,
    sample: u32,
    top1: Option<bool>,
    top3: Option<bool>,
) -> MatchedAnswer {
    MatchedAnswer {
        item: format!("{case}/{task}/m/{sample}"),
        case: case.into(),
        task: format!("{case}/{task}"),
        model: "m".into(),
        task_family: "differential_diagnosis".into(),
        level: "1".into(),
        true_group: "stroke".into(),
        top1,
        top3,
        predicted_group: match top1 {
            Some(true) => "stroke".into(),
            Some(false) => "tumour".into(),
            None => "unmatched".into(),
        },
        exact: false,
        contradictions: 0,
        unmatched_span: top1.is_none().then(|| "Neurosarcoidosis".to_owned()),
    }
}

/// Two cases, one task each: case a's four samples 2 right at top-1 (3 at top-3), one
/// undecided; case b's two samples both right.
#[test]
fn rows_pass_at_k_and_agreement_on_a_small_study() {
    let answers = vec![
        answer("a", "t1", 0, Some(true), Some(true)),
        answer("a", "t1", 1, Some(false), Some(true)),
        answer("a", "t1", 2, Some(true), Some(true)),
        answer("a", "t1", 3, Some(false), Some(false)),
        answer("a", "t1", 4, None, None),
        answer("b", "t1", 0, Some(true), Some(true)),
        answer("b", "t1", 1, Some(true), Some(true)),
    ];
    // Clinicians judged four answers: agreeing with the matcher on three.
    let judgement = |case: &str, sample: u32, correct: bool| CorrectnessJudgement {
        case: case.into(),
        model: "m".into(),
        task_family: "differential_diagnosis".into(),
        level: "1".into(),
        task: format!("{case}/t1"),
        sample,
        rater: "dr".into(),
        correct,
    };
    let input = CalibrationInput {
        correctness: vec![
            judgement("a", 0, true),
            judgement("a", 1, true),
            judgement("a", 3, false),
            judgement("b", 0, true),
            judgement("a", 4, true),
        ],
        ..CalibrationInput::default()
    };
    let options = ReportOptions {
        pass_at: vec![1, 2],
        ..ReportOptions::default()
    };
    let rows = answer_accuracy(&answers, &input, &options, None);
    // The model's own row, then its one task family and level: the same answers.
    assert_eq!(rows.len(), 2);
    assert!(rows[0].task_family.is_none() && rows[1].task_family.is_some());
    for row in &rows {
        assert_eq!((row.n, row.unmatched), (7, 1));
        let top1 = row.top1.value().expect("top-1");
        // 4 of 6 decided answers; cases a (4) and b (2): Kish (6²)/(4² + 2²) = 1.8.
        assert!((top1.value - 4.0 / 6.0).abs() < TOLERANCE);
        assert!((top1.effective_cases - 1.8).abs() < TOLERANCE);
        assert!((row.top3.value().unwrap().value - 5.0 / 6.0).abs() < TOLERANCE);

        // pass@1: a has n 4, c 2 → 0.5; b n 2, c 2 → 1; mean 0.75. pass@2: a 1 − C(2,2)/C(4,2)
        // = 5/6, b 1; mean 11/12.
        let pass = |k: &str| row.pass_at[k].value().map(|p| p.value).expect("pass@k");
        assert!((pass("1") - 0.75).abs() < TOLERANCE);
        assert!((pass("2") - 11.0 / 12.0).abs() < TOLERANCE);

        // Disease groups over all 7 answers: stroke 4 right; tumour 2 and unmatched 1 wrong.
        assert_eq!(row.group_accuracy.value(), Some(&(4.0 / 7.0)));

        // Against the clinicians: the undecided answer is left out; 3 of 4 agree.
        let clinicians = &row.agreement[0];
        assert_eq!(
            (clinicians.against.as_str(), clinicians.n),
            ("clinicians", 4)
        );
        assert_eq!(clinicians.percent_agreement.value(), Some(&75.0));
        // No grader: nothing to compare.
        let grader = &row.agreement[1];
        assert_eq!((grader.against.as_str(), grader.n), ("grader", 0));
        assert!(grader.percent_agreement.value().is_none());
    }
    // The undecided answer's span, once, on the model's own row.
    assert_eq!(rows[0].undecided.len(), 1);
    assert_eq!(rows[0].undecided[0].item, "a/t1/m/4");
    assert!(rows[1].undecided.is_empty());
}
