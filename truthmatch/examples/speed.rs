//! Issue 39's speed goal: 100,000 answers matched against their cases' ground truth in at most
//! 1 s. An example, not a test (timed tests are flaky on a loaded machine; docs/style.md):
//!
//!     cargo run --example speed -p neurorater-truthmatch
//!
//! The demo's curated truths, each prepared once; its correct answers, short (the final answer
//! alone) and long (final answer, findings and differential, as the report's analysis passes a
//! response), each matched until 100,000 have been.

use std::time::Instant;
use truthmatch::{AnswerFormat, PreparedTruth, Truth};

const ANSWERS: usize = 100_000;

fn main() {
    let json: serde_json::Value =
        serde_json::from_str(include_str!("../tests/data/demo_truths.json")).expect("JSON");
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut cases = Vec::new();
    for c in json["cases"].as_array().expect("cases") {
        let truth = PreparedTruth::new(&Truth {
            diagnosis: c["diagnosis"].as_str().unwrap_or_default().to_string(),
            code: c["code"].as_str().map(str::to_string),
            synonyms: Vec::new(),
            differential: strings(&c["differential"]),
            descriptions: strings(&c["descriptions"]),
        });
        let a = |k: &str| {
            c["correct_answer"][k]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let short = format!("Final answer: {}", a("answer"));
        let long = format!(
            "Final answer: {}\n{} {} {}. {}",
            a("answer"),
            a("sequence"),
            a("finding"),
            a("location"),
            a("differential")
        );
        cases.push((truth, short, long));
    }
    for (label, pick) in [("short", 0), ("long", 1)] {
        let text =
            |c: &(PreparedTruth, String, String)| if pick == 0 { c.1.clone() } else { c.2.clone() };
        let words = cases
            .iter()
            .map(|c| text(c).split_whitespace().count())
            .sum::<usize>()
            / cases.len();
        let start = Instant::now();
        let mut total = 0.0;
        for i in 0..ANSWERS {
            let case = &cases[i % cases.len()];
            let answer = if pick == 0 { &case.1 } else { &case.2 };
            total += case.0.match_answer(answer, AnswerFormat::FreeText).score;
        }
        println!(
            "{label} answers (~{words} words): {ANSWERS} in {:.3} s (mean score {:.3})",
            start.elapsed().as_secs_f64(),
            total / ANSWERS as f64
        );
    }
}
