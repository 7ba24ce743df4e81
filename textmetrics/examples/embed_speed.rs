//! Times all-MiniLM-L6-v2 sentence embeddings of the texts in a file (one per line), for
//! `scripts/bench/minilm_speed.py`, which runs this beside sentence-transformers on
//! the same texts. Prints one JSON line: texts, seconds (model loaded, tokenizing included),
//! texts per second, peak resident memory.
//!
//!     cargo run --release --example embed_speed -- TEXTS.txt [ROUNDS]

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: embed_speed TEXTS.txt [ROUNDS]");
    let rounds: usize = args
        .next()
        .map_or(1, |r| r.parse().expect("ROUNDS is a number"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let texts: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let dir = textmetrics::weights::locate().unwrap_or_else(|e| panic!("{e}"));
    let model = textmetrics::MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        let embeddings = model
            .sentence_embeddings(&texts)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(embeddings.len(), texts.len());
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "{{\"texts\": {}, \"seconds\": {best:.3}, \"texts_per_second\": {:.1}, \"peak_rss_mb\": {:.0}}}",
        texts.len(),
        texts.len() as f64 / best,
        peak_rss_mb()
    );
}

/// VmHWM from /proc (Linux); 0 elsewhere.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
