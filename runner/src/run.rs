//! A run: the missing items sent concurrently (at most `concurrency` in flight), each result
//! stored in its own transaction as it arrives, so a run killed at any moment loses only the
//! requests in flight and the next run sends only what is still missing.
//!
//! Only this task touches the store; requests run in tokio tasks that hand back finished results.
//! Cancelling aborts the requests in flight (nothing of theirs was written) and stores the ones
//! that had already finished.

use crate::client::{CallError, Client};
use crate::grader::{self, Grade};
use crate::record::{self, Answer, GradingItem, Kind, Question, RunMeta, StudyScales};
use crate::spec::Spec;
use crate::RunError;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use cases::model::{ResponseKey, Turn};
use serde_json::json;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use tokio::task::JoinSet;

/// How many times an unusable grader reply is answered with a corrective message before the
/// item is listed as failed.
pub const MAX_REASKS: u32 = 2;

/// How a run reports as it goes (the CLI: a progress bar).
pub trait RunProgress {
    fn start(&self, total: u64);
    /// After each stored result: how many are stored, tokens used so far, and their cost.
    fn stored(&self, done: u64, tokens: u64, cost: Option<f64>);
    fn failed(&self, item: &str, reason: &str);
    /// Before the first request: a task the run leaves out, with why.
    fn skipped(&self, task: &str, reason: &str);
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunSummary {
    /// Items that were missing when the run started.
    pub total: usize,
    pub stored: usize,
    /// Each failed item with why, e.g. `ms-01/dx/vlm-a/0`.
    pub failed: Vec<(String, String)>,
    /// Tasks left out before any request was sent, as `case/task`, with why (a model run's task
    /// that names no key image).
    pub skipped: Vec<(String, String)>,
    /// Stopped by the user before every item was done.
    pub cancelled: bool,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost: Option<f64>,
}

/// The API key from the variable the spec names; it stays in memory only.
pub fn api_key(spec: &Spec) -> Result<Option<String>, RunError> {
    let Some(var) = &spec.api_key_env else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(key) if !key.is_empty() => Ok(Some(key)),
        _ => Err(RunError::MissingKey { var: var.clone() }),
    }
}

/// Grades every stored response of `study_id` that `spec`'s grader has not graded yet. `cancel`
/// resolving (Ctrl-C) stops the run cleanly.
pub async fn grade(
    store: &mut cases::store::Store,
    study_id: &str,
    spec: &Spec,
    progress: &dyn RunProgress,
    cancel: impl Future<Output = ()>,
) -> Result<RunSummary, RunError> {
    let Some(template) = spec.prompt.clone() else {
        return Err(RunError::Spec {
            problems: vec![format!(
                "{}: -: prompt: a grader spec needs a prompt template (docs/formats.md §6)",
                spec.name
            )],
        });
    };
    let key = api_key(spec)?;
    record::bind_spec(store, spec, Kind::Grader)?;
    let (items, scales) = record::pending_gradings(
        store,
        study_id,
        &spec.name,
        grader::wants_ground_truth(&template),
    )?;
    let work = Grading {
        spec: spec.clone(),
        template,
        scales,
    };
    execute(store, Arc::new(work), items, key, progress, cancel).await
}

/// Asks the model of `spec` every task of `study_id`, `samples` samples per task in all: sample
/// indexes 0..samples that are not stored yet are sent, so a larger `samples` adds samples after
/// those stored and a stopped run is completed by running it again. A task that names no key
/// image of a case that has images is skipped, reported before any request is sent
/// ([`RunProgress::skipped`]) and listed in the summary.
pub async fn respond(
    store: &mut cases::store::Store,
    study_id: &str,
    spec: &Spec,
    samples: u32,
    progress: &dyn RunProgress,
    cancel: impl Future<Output = ()>,
) -> Result<RunSummary, RunError> {
    let key = api_key(spec)?;
    record::bind_spec(store, spec, Kind::Model)?;
    let pending = record::pending_questions(store, study_id, spec, samples)?;
    for (task, why) in &pending.skipped {
        progress.skipped(task, why);
    }
    let work = Responding { spec: spec.clone() };
    let mut summary = execute(
        store,
        Arc::new(work),
        pending.questions,
        key,
        progress,
        cancel,
    )
    .await?;
    summary.skipped = pending.skipped;
    Ok(summary)
}

/// One kind of run: how an item is asked and how its result is stored.
trait Work: Send + Sync + 'static {
    type Item: Send + Sync + 'static;
    type Output: Send + 'static;
    fn spec(&self) -> &Spec;
    fn label(item: &Self::Item) -> String;
    fn ask(
        self: Arc<Self>,
        client: Arc<Client>,
        item: Arc<Self::Item>,
    ) -> impl Future<Output = Result<(Self::Output, RunMeta), ItemFailure>> + Send;
    /// Stores one result in one transaction; false when it was already stored.
    fn save(
        &self,
        store: &mut cases::store::Store,
        item: &Self::Item,
        output: &Self::Output,
        meta: &RunMeta,
    ) -> Result<bool, RunError>;
}

async fn execute<W: Work>(
    store: &mut cases::store::Store,
    work: Arc<W>,
    items: Vec<W::Item>,
    key: Option<String>,
    progress: &dyn RunProgress,
    cancel: impl Future<Output = ()>,
) -> Result<RunSummary, RunError> {
    let spec = work.spec().clone();
    let client = Arc::new(Client::new(&spec, key).map_err(RunError::Internal)?);
    let mut summary = RunSummary {
        total: items.len(),
        ..RunSummary::default()
    };
    progress.start(items.len() as u64);

    // At most `concurrency` requests exist at a time, each started when one finishes: a run's
    // memory does not grow with the number of items it has still to send.
    let mut waiting = items.into_iter();
    let mut in_flight = JoinSet::new();
    let start_next = |in_flight: &mut JoinSet<_>, waiting: &mut std::vec::IntoIter<W::Item>| {
        if let Some(item) = waiting.next() {
            let (client, work, item) = (client.clone(), work.clone(), Arc::new(item));
            in_flight.spawn(async move {
                let outcome = work.ask(client, item.clone()).await;
                (item, outcome)
            });
        }
    };
    for _ in 0..spec.concurrency {
        start_next(&mut in_flight, &mut waiting);
    }

    tokio::pin!(cancel);
    let mut stopped_by: Option<String> = None;
    loop {
        let next = tokio::select! {
            biased;
            () = &mut cancel => {
                summary.cancelled = true;
                in_flight.abort_all();
                None
            }
            next = in_flight.join_next() => next,
        };
        let Some(joined) = next else { break };
        // The slot is free whatever became of its request (after a stop the new one is aborted).
        start_next(&mut in_flight, &mut waiting);
        let Ok((item, outcome)) = joined else {
            continue;
        };
        if let Err(ItemFailure::StopsRun(message)) = &outcome {
            stopped_by = Some(message.clone());
            in_flight.abort_all();
            break;
        }
        settle(store, &*work, &item, outcome, &mut summary, progress)?;
    }
    // Requests that finished before the stop are stored; aborted ones wrote nothing.
    while let Some(joined) = in_flight.join_next().await {
        if let Ok((item, outcome @ Ok(_))) = joined {
            settle(store, &*work, &item, outcome, &mut summary, progress)?;
        }
    }
    match stopped_by {
        Some(message) => Err(RunError::Stopped(message)),
        None => Ok(summary),
    }
}

fn settle<W: Work>(
    store: &mut cases::store::Store,
    work: &W,
    item: &W::Item,
    outcome: Result<(W::Output, RunMeta), ItemFailure>,
    summary: &mut RunSummary,
    progress: &dyn RunProgress,
) -> Result<(), RunError> {
    match outcome {
        Ok((output, meta)) => {
            if work.save(store, item, &output, &meta)? {
                summary.stored += 1;
            }
            summary.prompt_tokens += meta.prompt_tokens;
            summary.completion_tokens += meta.completion_tokens;
            summary.cost = work
                .spec()
                .cost(summary.prompt_tokens, summary.completion_tokens);
            progress.stored(
                summary.stored as u64,
                summary.prompt_tokens + summary.completion_tokens,
                summary.cost,
            );
        }
        Err(ItemFailure::Failed(reason) | ItemFailure::StopsRun(reason)) => {
            let label = W::label(item);
            progress.failed(&label, &reason);
            summary.failed.push((label, reason));
        }
    }
    Ok(())
}

fn key_label(k: &ResponseKey) -> String {
    format!("{}/{}/{}/{}", k.case_id, k.task_id, k.model, k.sample)
}

enum ItemFailure {
    /// A refused key or an endpoint nobody answers at: the run stops.
    StopsRun(String),
    Failed(String),
}

impl From<CallError> for ItemFailure {
    fn from(error: CallError) -> Self {
        match error {
            error if error.stops_run() => ItemFailure::StopsRun(error.to_string()),
            other => ItemFailure::Failed(other.to_string()),
        }
    }
}

/// Sends one request of an item's conversation and adds its reply to the item's metadata.
async fn exchange(
    client: &Client,
    body: &serde_json::Value,
    meta: &mut RunMeta,
) -> Result<crate::client::Reply, ItemFailure> {
    let started = Instant::now();
    let reply = client.chat(body).await?;
    meta.latency_ms += started.elapsed().as_millis() as u64;
    meta.requests += 1;
    meta.prompt_tokens += reply.prompt_tokens;
    meta.completion_tokens += reply.completion_tokens;
    meta.raw_replies.push(reply.body.clone());
    Ok(reply)
}

struct Grading {
    spec: Spec,
    template: String,
    scales: BTreeMap<i64, StudyScales>,
}

impl Work for Grading {
    type Item = GradingItem;
    type Output = Grade;

    fn spec(&self) -> &Spec {
        &self.spec
    }

    fn label(item: &GradingItem) -> String {
        key_label(&item.key)
    }

    async fn ask(
        self: Arc<Self>,
        client: Arc<Client>,
        item: Arc<GradingItem>,
    ) -> Result<(Grade, RunMeta), ItemFailure> {
        let spec = &self.spec;
        let study = self
            .scales
            .get(&item.study)
            .ok_or_else(|| ItemFailure::Failed("the response's study has no rubric".into()))?;
        let prompt = grader::fill(
            &self.template,
            &item.context,
            &study.rubric,
            &study.taxonomy,
        );
        let response_format = grader::response_format(&study.rubric, &study.taxonomy);
        let mut messages = vec![json!({"role": "user", "content": prompt})];
        let mut meta = RunMeta::default();
        let mut last_problem = String::new();
        for _ in 0..=MAX_REASKS {
            let body = json!({
                "model": spec.model,
                "messages": messages,
                "temperature": spec.temperature,
                "seed": spec.seed,
                "max_tokens": spec.max_tokens,
                "response_format": response_format,
            });
            let reply = exchange(&client, &body, &mut meta).await?;
            match grader::read_grade(&reply.text, &study.rubric, &study.taxonomy) {
                Ok(grade) => return Ok((grade, meta)),
                Err(problem) => {
                    messages.push(json!({"role": "assistant", "content": reply.text}));
                    messages.push(json!({"role": "user", "content": format!(
                        "Your reply could not be used: {problem}. Reply again with only the \
                         JSON object the schema describes (score, dimensions, errors, rationale)."
                    )}));
                    last_problem = problem;
                }
            }
        }
        Err(ItemFailure::Failed(format!(
            "no usable reply after {} requests; the last: {last_problem}",
            MAX_REASKS + 1
        )))
    }

    fn save(
        &self,
        store: &mut cases::store::Store,
        item: &GradingItem,
        grade: &Grade,
        meta: &RunMeta,
    ) -> Result<bool, RunError> {
        record::save_grade(store, &self.spec, item, grade, meta)
    }
}

struct Responding {
    spec: Spec,
}

impl Work for Responding {
    type Item = Question;
    type Output = Answer;

    fn spec(&self) -> &Spec {
        &self.spec
    }

    fn label(item: &Question) -> String {
        key_label(&item.key)
    }

    async fn ask(
        self: Arc<Self>,
        client: Arc<Client>,
        item: Arc<Question>,
    ) -> Result<(Answer, RunMeta), ItemFailure> {
        let spec = &self.spec;
        // The task's images and every follow-up's, rendered once before the first request.
        let mut images = vec![item.images.clone()];
        images.extend(item.follow_up.iter().map(|turn| turn.images.clone()));
        let mut urls = tokio::task::spawn_blocking(move || {
            images
                .iter()
                .map(|turn| {
                    turn.iter()
                        .map(image_url)
                        .collect::<Result<Vec<_>, String>>()
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .await
        .map_err(|e| ItemFailure::Failed(format!("rendering the key images failed: {e}")))?
        .map_err(ItemFailure::Failed)?
        .into_iter();
        let content = text_and_images(&item.prompt, urls.next().unwrap_or_default());
        let mut messages = vec![json!({"role": "user", "content": content})];
        let mut turns = vec![Turn::new("user", item.prompt.clone())];
        let mut meta = RunMeta::default();
        let mut follow_ups = item.follow_up.iter();
        loop {
            let body = json!({
                "model": spec.model,
                "messages": messages,
                "temperature": spec.temperature,
                "seed": spec.seed,
                "max_tokens": spec.max_tokens,
            });
            let reply = exchange(&client, &body, &mut meta).await?;
            messages.push(json!({"role": "assistant", "content": reply.text}));
            turns.push(Turn::new("assistant", reply.text.clone()));
            let Some(next) = follow_ups.next() else {
                let (answer, rationale) = split_answer(&reply.text);
                let turns = (!item.follow_up.is_empty()).then_some(turns);
                return Ok((
                    Answer {
                        answer,
                        rationale,
                        turns,
                    },
                    meta,
                ));
            };
            // A follow-up without images stays a plain string, as it was before turns had any.
            let images = urls.next().unwrap_or_default();
            let content = if images.is_empty() {
                json!(next.text)
            } else {
                json!(text_and_images(&next.text, images))
            };
            messages.push(json!({"role": "user", "content": content}));
            turns.push(Turn {
                key_images: next.key_images.clone(),
                ..Turn::new("user", next.text.clone())
            });
        }
    }

    fn save(
        &self,
        store: &mut cases::store::Store,
        item: &Question,
        answer: &Answer,
        meta: &RunMeta,
    ) -> Result<bool, RunError> {
        record::save_answer(store, &self.spec, item, answer, meta)
    }
}

/// A key image as a `data:` URL of the PNG the model is shown.
fn image_url((path, options): &crate::record::KeyImageSource) -> Result<String, String> {
    let png = imaging::render_png(path, options)
        .map_err(|e| format!("key image {}: {e}", path.display()))?;
    Ok(format!("data:image/png;base64,{}", BASE64.encode(png)))
}

/// A user message's content parts: the text, then its images as `image_url` parts
/// (docs/formats.md §6).
fn text_and_images(text: &str, urls: Vec<String>) -> Vec<serde_json::Value> {
    let mut content = vec![json!({"type": "text", "text": text})];
    content.extend(
        urls.into_iter()
            .map(|url| json!({"type": "image_url", "image_url": {"url": url}})),
    );
    content
}

/// A reply that is a JSON object with `answer` (and `rationale`) is split into them; otherwise
/// the whole text is the answer.
pub fn split_answer(text: &str) -> (String, Option<String>) {
    let Some(map) = grader::json_object(text) else {
        return (text.trim().to_owned(), None);
    };
    match map.get("answer").and_then(serde_json::Value::as_str) {
        Some(answer) => (
            answer.to_owned(),
            map.get("rationale")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
        ),
        None => (text.trim().to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::split_answer;

    #[test]
    fn replies_split_into_answer_and_rationale_only_when_they_are_such_json() {
        assert_eq!(
            split_answer(r#"{"answer": "MS", "rationale": "ovoid lesions"}"#),
            ("MS".into(), Some("ovoid lesions".into()))
        );
        assert_eq!(
            split_answer("```json\n{\"answer\": \"MS\"}\n```"),
            ("MS".into(), None)
        );
        assert_eq!(split_answer(" Likely MS. "), ("Likely MS.".into(), None));
        assert_eq!(
            split_answer(r#"{"diagnosis": "MS"}"#),
            (r#"{"diagnosis": "MS"}"#.into(), None)
        );
    }
}
