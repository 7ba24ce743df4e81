//! The report's manifest (docs/formats.md §5): what a report was built from, enough to say that
//! two reports came from the same inputs. Everything in it is a pure function of those inputs
//! (no clock, no host, no path), so the same inputs serialise to byte-identical manifests.
//!
//! [`Manifest::new`] fills what any report knows (the version, the options, the audit head);
//! a caller that read a database adds the rest with [`Manifest::with_study`] and
//! [`Manifest::text_metric_model`].

use crate::input::ReportOptions;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Manifest {
    /// The NeuroRater version that built the report (the workspace version).
    pub neurorater_version: String,
    /// One entry per model and grader whose results the report reads, sorted by (kind, name);
    /// empty from a CSV, which names no spec.
    pub specs: Vec<SpecEntry>,
    /// The sentence-embedding model behind the automatic text metrics; `None` when the report
    /// has no automatic-metrics section.
    pub text_metric_model: Option<TextMetricModel>,
    /// The study's current rubric version; `None` from a CSV.
    pub rubric_version: Option<u32>,
    /// SHA-256 (hex) of the study's taxonomy JSON as stored; `None` from a CSV.
    pub taxonomy_sha256: Option<String>,
    /// The options that decide the figures, as [`ReportOptions`] serialises them but with
    /// `seed` as a decimal string: a 64-bit seed does not survive a JSON reader's doubles.
    pub options: serde_json::Value,
    /// The audit head of the database read (`N:HASH`); `None` from a CSV.
    pub audit_head: Option<String>,
}

/// A model's or grader's spec, as far as the database knows it. Imported responses and scores
/// have no spec: their entry names them with every other field `None`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SpecEntry {
    /// `grader` or `model`.
    pub kind: String,
    pub name: String,
    /// The spec's content hash exactly as stored with its runs.
    pub sha256: Option<String>,
    /// The model id the spec sends.
    pub model: Option<String>,
    /// The host of the spec's endpoint: never its scheme, credentials, port, path or query.
    pub endpoint_host: Option<String>,
    /// A decimal string, like the options' seed.
    pub seed: Option<String>,
    /// As text (`0`, `0.7`), so the entry is totally ordered and compares exactly.
    pub temperature: Option<String>,
}

/// The text-metric model, as the database keys its metrics (`all-MiniLM-L6-v2@` and the first
/// 16 hex digits of the weights' SHA-256).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextMetricModel {
    pub id: String,
    /// The weights' SHA-256 as far as the store keeps it (its first 16 hex digits); `None` when
    /// the stored identity carries no digest.
    pub sha256: Option<String>,
}

/// What a database adds to the manifest, read by the caller in the report's snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StudyProvenance {
    pub specs: Vec<SpecEntry>,
    pub rubric_version: u32,
    pub taxonomy_sha256: String,
    /// The stored identities of the study's text metrics (usually one).
    pub text_metric_models: Vec<String>,
}

impl Manifest {
    /// What every report knows: the version, the options and the audit head.
    pub fn new(options: &ReportOptions, audit_head: Option<String>) -> Manifest {
        let mut options_json = serde_json::to_value(options).expect("options serialise");
        options_json["seed"] = serde_json::Value::String(options.seed.to_string());
        Manifest {
            neurorater_version: env!("CARGO_PKG_VERSION").to_owned(),
            specs: Vec::new(),
            text_metric_model: None,
            rubric_version: None,
            taxonomy_sha256: None,
            options: options_json,
            audit_head,
        }
    }

    /// Adds what the study's database says: specs (sorted), rubric version, taxonomy hash.
    pub fn with_study(&mut self, study: &StudyProvenance) {
        let mut specs = study.specs.clone();
        specs.sort();
        specs.dedup();
        self.specs = specs;
        self.rubric_version = Some(study.rubric_version);
        self.taxonomy_sha256 = Some(study.taxonomy_sha256.clone());
    }

    /// Names the text-metric model; call it only when the report has automatic metrics.
    /// Several stored identities (metrics computed again with other weights) are joined, in
    /// order, so that the manifest still tells the reports apart.
    pub fn text_metric_model(&mut self, identities: &[String]) {
        let mut identities = identities.to_vec();
        identities.sort();
        identities.dedup();
        self.text_metric_model = match identities.as_slice() {
            [] => None,
            [one] => Some(TextMetricModel::from_identity(one)),
            several => Some(TextMetricModel {
                id: several.join(", "),
                sha256: None,
            }),
        };
    }
}

impl TextMetricModel {
    fn from_identity(identity: &str) -> TextMetricModel {
        match identity.split_once('@') {
            Some((id, digest)) => TextMetricModel {
                id: id.to_owned(),
                sha256: Some(digest.to_owned()),
            },
            None => TextMetricModel {
                id: identity.to_owned(),
                sha256: None,
            },
        }
    }
}

/// The host of an endpoint URL (`https://user:key@api.example.org:8443/v1?x=1` →
/// `api.example.org`); `None` when there is none. A manifest is published with the report, and
/// an endpoint's credentials, path or query may be secret.
pub fn endpoint_host(endpoint: &str) -> Option<String> {
    let after_scheme = endpoint
        .split_once("://")
        .map_or(endpoint, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        // An IPv6 literal keeps its brackets; its colons are not a port.
        bracketed
            .split_once(']')
            .map(|(inside, _)| format!("[{inside}]"))
    } else {
        host_port.split(':').next().map(str::to_owned)
    };
    host.filter(|h| !h.is_empty() && h != "[]")
        .map(|h| h.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_keeps_its_host_alone() {
        for (endpoint, host) in [
            ("http://127.0.0.1:8000/v1", Some("127.0.0.1")),
            (
                "https://user:s3cret@API.Example.org:8443/v1/deploy?key=abc#x",
                Some("api.example.org"),
            ),
            ("https://api.openai.com/v1", Some("api.openai.com")),
            ("http://[::1]:11434/v1", Some("[::1]")),
            ("localhost:8080/v1", Some("localhost")),
            ("https:///v1", None),
            ("", None),
        ] {
            assert_eq!(endpoint_host(endpoint).as_deref(), host, "{endpoint}");
        }
    }

    #[test]
    fn the_seed_is_a_string_and_everything_else_as_the_options_say() {
        let options = ReportOptions {
            seed: u64::MAX,
            ..ReportOptions::default()
        };
        let manifest = Manifest::new(&options, None);
        assert_eq!(manifest.options["seed"], "18446744073709551615");
        assert_eq!(manifest.options["bootstrap_resamples"], 2000);
        assert_eq!(manifest.options["bar_pearson_r"], 0.9);
        assert_eq!(manifest.neurorater_version, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn a_report_from_a_csv_has_a_manifest_of_what_it_knows_and_shows_it() {
        let table = crate::csv_input::parse_long_csv(
            "item,rater,score\na,dr-a,1\na,dr-b,2\nb,dr-a,3\nb,dr-b,3\nc,dr-a,5\nc,dr-b,4\n",
            "ratings.csv",
        )
        .unwrap();
        let input = crate::input::CalibrationInput {
            table,
            ..Default::default()
        };
        let options = ReportOptions {
            bootstrap_resamples: 50,
            seed: 7,
            ..ReportOptions::default()
        };
        let report =
            crate::report::build_report(&input, &options, &crate::progress::NoProgress).unwrap();
        let manifest = &report.manifest;
        assert!(manifest.specs.is_empty());
        assert_eq!(
            (
                manifest.rubric_version,
                &manifest.taxonomy_sha256,
                &manifest.audit_head,
                &manifest.text_metric_model
            ),
            (None, &None, &None, &None)
        );
        assert_eq!(manifest.options["seed"], "7");
        let json: serde_json::Value =
            serde_json::from_str(&crate::tables::to_json(&report)).unwrap();
        assert_eq!(json["manifest"]["options"]["bootstrap_resamples"], 50);
        assert_eq!(json["manifest"]["specs"], serde_json::json!([]));
        let html = crate::html::to_html(&report);
        assert!(html.contains("<h2>Provenance</h2>"));
        assert!(html.contains(&format!("NeuroRater {}", env!("CARGO_PKG_VERSION"))));
    }

    #[test]
    fn a_text_metric_identity_splits_into_name_and_digest() {
        let mut manifest = Manifest::new(&ReportOptions::default(), None);
        manifest.text_metric_model(&["all-MiniLM-L6-v2@0123456789abcdef".to_owned()]);
        assert_eq!(
            manifest.text_metric_model,
            Some(TextMetricModel {
                id: "all-MiniLM-L6-v2".into(),
                sha256: Some("0123456789abcdef".into()),
            })
        );
        manifest.text_metric_model(&[]);
        assert_eq!(manifest.text_metric_model, None);
    }
}
