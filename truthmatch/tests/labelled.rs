//! The matcher against the hand-labelled answers (tests/data/labelled_answers.csv; who labelled
//! them and how: tests/data/README.md).

#[path = "support/truths.rs"]
mod truths;

use truthmatch::{AnswerFormat, Check, DiagnosisOutcome, PreparedTruth};

fn outcome_label(outcome: DiagnosisOutcome) -> String {
    match outcome {
        DiagnosisOutcome::Ranked {
            rank,
            hedged: false,
            ..
        } => format!("rank:{rank}"),
        DiagnosisOutcome::Ranked {
            rank, hedged: true, ..
        } => format!("hedged:{rank}"),
        DiagnosisOutcome::Absent => "absent".into(),
        DiagnosisOutcome::Negated => "negated".into(),
        DiagnosisOutcome::Unmatched => "unmatched".into(),
    }
}

fn check_label(check: Check) -> &'static str {
    match check {
        Check::Agree => "agree",
        Check::Contradict => "contradict",
        Check::NotStated => "not_stated",
    }
}

#[test]
fn matcher_agrees_with_the_hand_labels() {
    let cases = truths::demo_cases();
    let mut reader = csv::Reader::from_reader(&include_bytes!("data/labelled_answers.csv")[..]);
    let mut rows = 0;
    let mut wrong = Vec::new();
    for record in reader.records() {
        let r = record.expect("a CSV row");
        let (case, format, answer) = (&r[0], &r[1], &r[2]);
        let truth = PreparedTruth::new(
            &cases
                .get(case)
                .unwrap_or_else(|| panic!("case {case}"))
                .truth,
        );
        let format = if format == "json" {
            AnswerFormat::Json
        } else {
            AnswerFormat::FreeText
        };
        let m = truth.match_answer(answer, format);
        let got = [
            outcome_label(m.diagnosis),
            check_label(m.findings.laterality).into(),
            check_label(m.findings.territory).into(),
            check_label(m.findings.signal).into(),
        ];
        for (column, (expected, got)) in ["diagnosis", "laterality", "territory", "signal"]
            .iter()
            .zip(r.iter().skip(3).zip(got.iter()))
        {
            if expected != "-" && expected != got {
                wrong.push(format!(
                    "{case} {answer:?}: {column} expected {expected}, got {got}"
                ));
            }
        }
        if matches!(m.diagnosis, DiagnosisOutcome::Unmatched) {
            assert!(
                !m.unmatched_spans.is_empty(),
                "{answer:?}: an unmatched answer shows its span"
            );
        }
        rows += 1;
    }
    assert!(rows >= 40, "the table has {rows} rows");
    assert!(
        wrong.is_empty(),
        "{} of {rows} rows disagree:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The demo writes each case's correct final answer from its catalogue, beside the curated
/// diagnosis; the matcher must rank it first for its own case.
#[test]
fn each_demo_correct_answer_is_its_case_s_diagnosis() {
    for (id, case) in truths::demo_cases() {
        let answer = &case.correct["answer"];
        let m = PreparedTruth::new(&case.truth).match_answer(answer, AnswerFormat::FreeText);
        assert_eq!(
            m.within(1),
            Some(true),
            "{id}: {answer:?} gave {:?}",
            m.diagnosis
        );
    }
}

/// `exact`: the primary statement is the curated diagnosis word for word once normalised, with
/// or without a label; a synonym or an abbreviation is a match but not exact.
#[test]
fn exact_means_the_curated_words() {
    let cases = truths::demo_cases();
    let truth = PreparedTruth::new(&cases["ms-01"].truth);
    let exact = |answer: &str| truth.match_answer(answer, AnswerFormat::FreeText).exact;
    assert!(exact("Relapsing-remitting multiple sclerosis"));
    assert!(exact(
        "Final answer: relapsing remitting multiple sclerosis.\nThe lesions are ovoid."
    ));
    assert!(!exact("RRMS"));
    assert!(!exact(
        "Relapsing-remitting multiple sclerosis with optic neuritis"
    ));
    let json = r#"{"diagnosis": "MS", "code": "G35"}"#;
    assert!(
        truth.match_answer(json, AnswerFormat::Json).exact,
        "the code is the curated one"
    );
}
