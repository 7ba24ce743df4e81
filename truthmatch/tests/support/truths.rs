//! The demo's curated truths (tests/data/demo_truths.json), shared by the labelled table and
//! the perturbation suite.

use std::collections::BTreeMap;
use truthmatch::Truth;

pub struct DemoCase {
    pub truth: Truth,
    /// The demo's correct answer phrases: answer, differential, lesion_answer, location, …
    pub correct: BTreeMap<String, String>,
}

pub fn demo_cases() -> BTreeMap<String, DemoCase> {
    let text = include_str!("../data/demo_truths.json");
    let json: serde_json::Value = serde_json::from_str(text).expect("demo_truths.json is JSON");
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    json["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            let truth = Truth {
                diagnosis: c["diagnosis"].as_str().expect("diagnosis").to_string(),
                code: c["code"].as_str().map(str::to_string),
                synonyms: Vec::new(),
                differential: strings(&c["differential"]),
                descriptions: strings(&c["descriptions"]),
            };
            let correct = c["correct_answer"]
                .as_object()
                .expect("correct_answer")
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect();
            (
                c["id"].as_str().expect("id").to_string(),
                DemoCase { truth, correct },
            )
        })
        .collect()
}
