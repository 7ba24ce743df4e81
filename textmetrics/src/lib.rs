//! Automatic text metrics beside the grader (issue 12 §3): a response's rationale against its
//! case's expected reasoning, as Neural-MedBench reports them.
//!
//! - [`MiniLm`]: sentence-transformers' all-MiniLM-L6-v2 run with candle on the CPU, from files
//!   on disk ([`weights`]); nothing is downloaded at run time.
//! - [`bertscore`]: BERTScore precision, recall and F1 by greedy matching of token embeddings
//!   (no idf weighting, no baseline rescaling), as the `bert_score` package computes them.
//! - [`rouge`]: ROUGE-L (LCS F-measure) with the `rouge-score` package's tokenizer.
//! - [`compute`]: a study's missing metrics computed and stored (`cases::text_metrics`).
//!
//! A crate of its own because candle and tokenizers take 10–15 minutes to build cold on two
//! cores: only the front ends that compute the metrics (the CLI, the app's Metrics page) pay for
//! them; the report reads stored values.

mod bert;
pub mod bertscore;
pub mod compute;
pub mod error;
mod kernels;
pub mod minilm;
pub mod rouge;
pub mod weights;

pub use error::{Error, Result};
pub use minilm::MiniLm;
