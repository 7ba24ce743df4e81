//! A run spec (docs/formats.md §6): which server, which model, which sampling settings, which prompt.
//!
//! A spec's identity is the hash of what decides its output (endpoint, model, sampling settings,
//! prompt); how fast it runs (concurrency, rate limit, retries) and what it costs do not change
//! what it answers, so they are left out and may be tuned under the same name.

use crate::RunError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Stored with every score or response this spec makes.
    pub name: String,
    /// The API's base URL; requests go to `{endpoint}/chat/completions`.
    pub endpoint: String,
    /// The model id sent in each request.
    pub model: String,
    /// The environment variable holding the API key (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    pub temperature: f64,
    pub seed: i64,
    pub max_tokens: u32,
    /// Requests in flight at most.
    pub concurrency: u32,
    /// Optional for models (the task's prompt with the clinical note); the template for graders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Price per input token, in the user's currency; with the next one the progress shows a cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_per_input_token: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_per_output_token: Option<f64>,
    /// Retries of a request after 429, 5xx, a timeout or a dropped connection.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Seconds before a request without an answer counts as timed out.
    #[serde(default = "default_timeout_seconds")]
    pub timeout_seconds: f64,
}

fn default_max_retries() -> u32 {
    5
}

fn default_timeout_seconds() -> f64 {
    120.0
}

impl Spec {
    /// Reads and checks a spec file; every problem is `FILE:LINE: field: message`.
    pub fn load(path: &Path) -> Result<Spec, RunError> {
        let text = std::fs::read_to_string(path).map_err(|e| RunError::Spec {
            problems: vec![format!("{}: -: cannot be read: {e}", path.display())],
        })?;
        Spec::parse(&text, &path.display().to_string())
    }

    /// Parses spec text; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<Spec, RunError> {
        let spec: Spec = toml::from_str(text).map_err(|e| RunError::Spec {
            problems: vec![toml_problem(text, file, &e)],
        })?;
        let problems = spec.problems(text, file);
        if problems.is_empty() {
            Ok(spec)
        } else {
            Err(RunError::Spec { problems })
        }
    }

    fn problems(&self, text: &str, file: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let mut problem = |field: &str, message: &str| {
            problems.push(format!(
                "{file}:{}: {field}: {message}",
                key_line(text, field).map_or("-".into(), |l| l.to_string())
            ))
        };
        if self.name.trim().is_empty() {
            problem("name", "must not be empty");
        }
        if !(self.endpoint.starts_with("http://") || self.endpoint.starts_with("https://")) {
            problem("endpoint", "must be an http:// or https:// URL");
        }
        if self.model.trim().is_empty() {
            problem("model", "must not be empty");
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            problem("temperature", "must be between 0 and 2");
        }
        if self.max_tokens == 0 {
            problem("max_tokens", "must be at least 1");
        }
        if self.concurrency == 0 {
            problem("concurrency", "must be at least 1");
        }
        if self.requests_per_minute == Some(0) {
            problem("requests_per_minute", "must be at least 1 (or left out)");
        }
        for (field, price) in [
            ("price_per_input_token", self.price_per_input_token),
            ("price_per_output_token", self.price_per_output_token),
        ] {
            if price.is_some_and(|p| !p.is_finite() || p < 0.0) {
                problem(field, "must be a non-negative number");
            }
        }
        if !(self.timeout_seconds.is_finite() && self.timeout_seconds > 0.0) {
            problem("timeout_seconds", "must be a positive number of seconds");
        }
        if self.api_key_env.as_deref().is_some_and(str::is_empty) {
            problem(
                "api_key_env",
                "must name an environment variable (or be left out)",
            );
        }
        problems
    }

    /// SHA-256 of what decides the spec's output, as hex.
    pub fn content_hash(&self) -> String {
        let identity = serde_json::json!({
            "endpoint": self.endpoint.trim_end_matches('/'),
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "prompt": self.prompt,
        });
        format!("{:x}", Sha256::digest(identity.to_string().as_bytes()))
    }

    /// The cost of a request's tokens, when the spec gives both prices.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> Option<f64> {
        Some(
            self.price_per_input_token? * input_tokens as f64
                + self.price_per_output_token? * output_tokens as f64,
        )
    }
}

/// The 1-based line on which `key` is assigned.
fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

/// A TOML error as `FILE:LINE: field: message`: the line from the error's span, the field from
/// the key assigned on that line, or from a "missing field" message.
fn toml_problem(text: &str, file: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().to_owned();
    let line = error
        .span()
        .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    let field = missing_field(&message).or_else(|| {
        let line = line?;
        let assigned = text.lines().nth(line - 1)?.split('=').next()?.trim();
        (!assigned.is_empty() && !assigned.starts_with('[')).then(|| assigned.to_owned())
    });
    // A missing field has no line of its own.
    let line = if missing_field(&message).is_some() {
        None
    } else {
        line
    };
    format!(
        "{file}:{}: {}: {message}",
        line.map_or("-".into(), |l| l.to_string()),
        field.as_deref().unwrap_or("-")
    )
}

fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "g-v1"
endpoint = "http://127.0.0.1:8000/v1"
model = "m"
temperature = 0.0
seed = 7
max_tokens = 300
concurrency = 4
prompt = "Grade {{answer}}"
"#;

    fn problems(text: &str) -> Vec<String> {
        match Spec::parse(text, "g.toml") {
            Err(RunError::Spec { problems }) => problems,
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn a_good_spec_parses_with_defaults() {
        let spec = Spec::parse(GOOD, "g.toml").unwrap();
        assert_eq!(spec.max_retries, 5);
        assert_eq!(spec.cost(10, 10), None);
    }

    #[test]
    fn a_wrong_type_names_file_line_and_field() {
        let text = GOOD.replace("seed = 7", "seed = \"seven\"");
        let found = problems(&text);
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("g.toml:5: seed: "), "{found:?}");
    }

    #[test]
    fn a_missing_field_is_named() {
        let text = GOOD.replace("model = \"m\"\n", "");
        assert_eq!(problems(&text), ["g.toml:-: model: missing field `model`"]);
    }

    #[test]
    fn out_of_range_values_name_their_line() {
        let text = GOOD.replace("concurrency = 4", "concurrency = 0");
        assert_eq!(
            problems(&text),
            ["g.toml:7: concurrency: must be at least 1"]
        );
    }

    #[test]
    fn the_hash_ignores_speed_settings_but_not_the_prompt() {
        let base = Spec::parse(GOOD, "g.toml").unwrap();
        let faster =
            Spec::parse(&GOOD.replace("concurrency = 4", "concurrency = 16"), "g").unwrap();
        let reworded = Spec::parse(&GOOD.replace("Grade", "Score"), "g").unwrap();
        assert_eq!(base.content_hash(), faster.content_hash());
        assert_ne!(base.content_hash(), reworded.content_hash());
    }
}

#[cfg(test)]
mod demo_specs {
    use super::Spec;

    #[test]
    fn the_demo_ships_valid_specs() {
        use demo::{DEMO_GRADER_SPEC_FILE, DEMO_MODEL_SPEC_FILE};
        let grader = Spec::parse(demo::DEMO_GRADER_SPEC, DEMO_GRADER_SPEC_FILE).unwrap();
        assert!(crate::grader::wants_ground_truth(
            grader.prompt.as_deref().unwrap()
        ));
        let model = Spec::parse(demo::DEMO_MODEL_SPEC, DEMO_MODEL_SPEC_FILE).unwrap();
        assert_eq!(model.prompt, None);
        // Both at vLLM's default address, keyless, on one server that serves them both.
        for spec in [&grader, &model] {
            assert_eq!(spec.endpoint, "http://127.0.0.1:8000/v1");
            assert_eq!(spec.api_key_env, None);
        }
        assert_eq!(grader.model, model.model);
    }
}
