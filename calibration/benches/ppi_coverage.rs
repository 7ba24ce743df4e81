//! Coverage of the PPI++ interval on clustered answers (issue 35): how often the 95 % interval of
//! [`calibration::ppi::ppi_mean`] holds the true mean when the answers of a case share both the
//! truth (a case is easy or hard) and the grader's error, with the variance summed by case (the
//! report's) and with every answer taken as independent (ppi_py's iid interval). A simulation, run
//! by hand (`cargo bench -p neurorater-calibration --bench ppi_coverage`), not a test: its result
//! is a rate. Also times the report's load: 16 models × 1,000 answers.

use calibration::ppi::{ppi_mean, Answer, PpiMean};
use calibration::Estimate;
use std::time::Instant;

struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// How the answers clinicians read are drawn.
#[derive(Clone, Copy)]
enum Reading {
    /// A random `share` of the answers.
    Answers,
    /// Every answer of a random `share` of the cases.
    Cases,
}

#[derive(Clone, Copy)]
struct Design {
    cases: usize,
    per_case: usize,
    share_read: f64,
    reading: Reading,
    /// The standard deviation of what a case's answers share (truth and grader error alike).
    case_sd: f64,
    binary: bool,
}

/// One study: clinicians' truth and the grader per answer, the case effects shared. Scores have
/// true mean 3; a 0/1 target ("correct") is the truth above 3, true share 0.5 by symmetry.
fn study(rng: &mut Lcg, d: Design) -> Vec<Answer> {
    let read_case: Vec<bool> = (0..d.cases).map(|_| rng.uniform() < d.share_read).collect();
    let mut answers = Vec::with_capacity(d.cases * d.per_case);
    for (case, &case_read) in read_case.iter().enumerate() {
        let case_truth = d.case_sd * rng.normal();
        let case_grader_error = d.case_sd * rng.normal();
        for _ in 0..d.per_case {
            let truth = 3.0 + case_truth + 0.7 * rng.normal();
            let grader = truth + case_grader_error + 0.4 * rng.normal();
            let read = match d.reading {
                Reading::Answers => rng.uniform() < d.share_read,
                Reading::Cases => case_read,
            };
            let (truth, grader) = if d.binary {
                (f64::from(truth > 3.0), f64::from(grader > 3.0))
            } else {
                (truth, grader)
            };
            answers.push(Answer {
                case,
                grader,
                clinicians: read.then_some(truth),
            });
        }
    }
    answers
}

fn as_independent(answers: &[Answer]) -> Vec<Answer> {
    answers
        .iter()
        .enumerate()
        .map(|(case, a)| Answer { case, ..*a })
        .collect()
}

#[derive(Default)]
struct Tally {
    covered: usize,
    studies: usize,
    width: f64,
}

impl Tally {
    fn add(&mut self, low: f64, high: f64, truth: f64) {
        self.studies += 1;
        self.covered += usize::from(low <= truth && truth <= high);
        self.width += high - low;
    }
    fn coverage(&self) -> f64 {
        100.0 * self.covered as f64 / self.studies as f64
    }
    fn mean_width(&self) -> f64 {
        self.width / self.studies as f64
    }
}

fn main() {
    let studies = 4000;
    println!("| target | cases × answers | clinicians read | case SD | labelled answers / cases (mean) | by case: PPI++ | iid (ppi_py): PPI++ | by case: clinicians only | PPI++ width / clinicians-only width |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut rng = Lcg(35);
    for binary in [false, true] {
        for (cases, per_case, share_read, reading, case_sd) in [
            (50, 1, 0.2, Reading::Answers, 0.0),
            (200, 1, 0.2, Reading::Answers, 0.0),
            (200, 5, 0.1, Reading::Answers, 0.5),
            (200, 5, 0.2, Reading::Answers, 1.0),
            (200, 5, 0.1, Reading::Cases, 0.5),
            (200, 5, 0.2, Reading::Cases, 0.5),
            (200, 5, 0.2, Reading::Cases, 1.0),
            (100, 10, 0.3, Reading::Cases, 0.5),
        ] {
            let design = Design {
                cases,
                per_case,
                share_read,
                reading,
                case_sd,
                binary,
            };
            let truth = if binary { 0.5 } else { 3.0 };
            let (mut by_case, mut iid, mut clinicians) =
                (Tally::default(), Tally::default(), Tally::default());
            let (mut labelled, mut labelled_cases) = (0usize, 0usize);
            for _ in 0..studies {
                let answers = study(&mut rng, design);
                let (Estimate::Value(p), Estimate::Value(q)) =
                    (ppi_mean(&answers), ppi_mean(&as_independent(&answers)))
                else {
                    continue; // too few reads drawn: no interval, counted nowhere
                };
                labelled += p.n_labelled;
                labelled_cases += answers
                    .iter()
                    .filter(|a| a.clinicians.is_some())
                    .map(|a| a.case)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                by_case.add(p.low, p.high, truth);
                iid.add(q.low, q.high, truth);
                clinicians.add(p.clinicians_only.low, p.clinicians_only.high, truth);
            }
            println!(
                "| {} | {cases} × {per_case} | {:.0} % of the {} | {case_sd} | {:.0} / {:.0} | {:.1} % | {:.1} % | {:.1} % | {:.2} |",
                if binary { "correct (0/1)" } else { "mean score" },
                100.0 * share_read,
                match reading {
                    Reading::Answers => "answers",
                    Reading::Cases => "cases",
                },
                labelled as f64 / by_case.studies as f64,
                labelled_cases as f64 / by_case.studies as f64,
                by_case.coverage(),
                iid.coverage(),
                clinicians.coverage(),
                by_case.mean_width() / clinicians.mean_width(),
            );
        }
    }
    println!("({studies} studies per row; simulation error ± 0.7 points at 95 %)");

    // The report's load: 16 models × 1,000 answers (200 cases × 5), 10 % read.
    let design = Design {
        cases: 200,
        per_case: 5,
        share_read: 0.1,
        reading: Reading::Answers,
        case_sd: 0.5,
        binary: false,
    };
    let models: Vec<Vec<Answer>> = (0..16).map(|_| study(&mut rng, design)).collect();
    let started = Instant::now();
    let estimates: Vec<Estimate<PpiMean>> = models.iter().map(|m| ppi_mean(m)).collect();
    let elapsed = started.elapsed();
    assert!(estimates.iter().all(|e| e.value().is_some()));
    println!(
        "16 models × 1,000 answers: {:.3} ms",
        elapsed.as_secs_f64() * 1000.0
    );
}
