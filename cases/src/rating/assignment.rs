//! Assignment plans: which responses each rater reads, in a seeded order.
//!
//! The algorithm (also in `docs/rating.md`), for a plan with seed `s` and raters `r_0 … r_{R-1}`
//! in the order given:
//! 1. The study's `N` responses, in store order, are shuffled with stream 0.
//! 2. The first `round(overlap_share · N)` of them are the overlap: every rater reads them.
//! 3. The rest are dealt round-robin to the raters (sizes differ by at most one); with
//!    `responses_per_rater = k`, a rater stops receiving at `k` first reads and the remainder is
//!    left unassigned.
//! 4. Rater `r_i` shuffles their first reads with stream `i + 1`; then, with the same stream,
//!    shuffles a copy and takes its first `round(repeat_share · first reads)` as repeat reads,
//!    appended in that order with `read_no = 2` and `not_before = created_at + repeat_after_days`.
//!
//! A stream is ChaCha8 keyed with `s` (little-endian in the key's first 8 bytes, zeros after) and
//! the stream number; a shuffle is Fisher–Yates from the last element down, drawing `j` in
//! `0..=i` by rejection sampling from `next_u64` (unbiased). The same seed, raters and responses
//! therefore give the same queues on any machine and any build.

use super::{invalid, refused, NOW_SQL};
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, Result};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The demo study's id (the `demo` crate writes it).
pub const DEMO_STUDY_ID: &str = "neurorater-demo";
/// The seed of every demo queue.
const DEMO_SEED: u64 = 1;
const MAX_REPEAT_AFTER_DAYS: u32 = 3650;
const MAX_PLAN_NAME_CHARS: usize = 100;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PlanSpec {
    pub study_id: String,
    pub name: String,
    pub seed: u64,
    /// Rater ids, at least one; the order decides each rater's stream.
    pub raters: Vec<i64>,
    /// Share of the study's responses read by every rater, in [0, 1].
    pub overlap_share: f64,
    /// First reads per rater, overlap included; `None`: every response is assigned.
    #[serde(default)]
    pub responses_per_rater: Option<u32>,
    /// Share of each rater's first reads read a second time, in [0, 1].
    #[serde(default)]
    pub repeat_share: f64,
    #[serde(default)]
    pub repeat_after_days: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlanRaterSummary {
    pub rater_id: i64,
    pub rater: String,
    pub first_reads: u32,
    pub overlap: u32,
    pub repeats: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlanSummary {
    pub plan_id: i64,
    pub study_id: String,
    pub name: String,
    pub seed: u64,
    pub created_at: String,
    pub n_responses: u32,
    pub n_overlap: u32,
    pub n_unassigned: u32,
    pub raters: Vec<PlanRaterSummary>,
}

/// One rater's queue as the algorithm produces it: response keys in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queue {
    pub first_reads: Vec<i64>,
    pub repeats: Vec<i64>,
}

/// The pure part of a plan: queues for `n_raters` raters over `responses` (store order).
pub(crate) fn plan_queues(
    responses: &[i64],
    n_raters: usize,
    seed: u64,
    overlap_share: f64,
    responses_per_rater: Option<u32>,
    repeat_share: f64,
) -> (Vec<i64>, Vec<Queue>) {
    let mut shuffled = responses.to_vec();
    shuffle(&mut stream(seed, 0), &mut shuffled);
    let n_overlap = share_of(overlap_share, shuffled.len());
    let (overlap, rest) = shuffled.split_at(n_overlap);
    let quota = responses_per_rater.map_or(usize::MAX, |k| (k as usize).saturating_sub(n_overlap));
    let mut own: Vec<Vec<i64>> = vec![Vec::new(); n_raters];
    let mut next = 0;
    for &response in rest {
        if own.iter().all(|q| q.len() >= quota) {
            break;
        }
        while own[next].len() >= quota {
            next = (next + 1) % n_raters;
        }
        own[next].push(response);
        next = (next + 1) % n_raters;
    }
    let queues = own
        .into_iter()
        .enumerate()
        .map(|(index, own)| {
            let mut rng = stream(seed, index as u64 + 1);
            let mut first_reads: Vec<i64> = overlap.iter().copied().chain(own).collect();
            shuffle(&mut rng, &mut first_reads);
            let mut repeats = first_reads.clone();
            shuffle(&mut rng, &mut repeats);
            repeats.truncate(share_of(repeat_share, first_reads.len()));
            Queue {
                first_reads,
                repeats,
            }
        })
        .collect();
    (overlap.to_vec(), queues)
}

fn share_of(share: f64, n: usize) -> usize {
    ((share * n as f64).round() as usize).min(n)
}

fn stream(seed: u64, number: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(number);
    rng
}

fn shuffle(rng: &mut ChaCha8Rng, items: &mut [i64]) {
    for i in (1..items.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// Uniform in `0..n` (n ≥ 1): draws above the largest multiple of `n` are rejected.
fn below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    let limit = u64::MAX - u64::MAX % n;
    loop {
        let x = rng.next_u64();
        if x < limit {
            return x % n;
        }
    }
}

impl Store {
    /// Creates a plan and every rater's queue in one audited transaction.
    pub fn create_assignment_plan(&mut self, actor: i64, spec: &PlanSpec) -> Result<PlanSummary> {
        let actor = self.rater(actor)?;
        let name = spec.name.trim();
        if name.is_empty() || name.chars().count() > MAX_PLAN_NAME_CHARS {
            return Err(invalid(
                "name",
                format!("a plan needs a name of 1 to {MAX_PLAN_NAME_CHARS} characters"),
            ));
        }
        for (field, share) in [
            ("overlap_share", spec.overlap_share),
            ("repeat_share", spec.repeat_share),
        ] {
            if !(0.0..=1.0).contains(&share) {
                return Err(invalid(
                    field,
                    format!("a share between 0 and 1, got {share}"),
                ));
            }
        }
        if spec.repeat_after_days > MAX_REPEAT_AFTER_DAYS {
            return Err(invalid(
                "repeat_after_days",
                format!(
                    "at most {MAX_REPEAT_AFTER_DAYS} days, got {}",
                    spec.repeat_after_days
                ),
            ));
        }
        if spec.raters.is_empty() {
            return Err(invalid("raters", "a plan needs at least one rater"));
        }
        let distinct: BTreeSet<i64> = spec.raters.iter().copied().collect();
        if distinct.len() != spec.raters.len() {
            return Err(invalid("raters", "a rater is listed twice"));
        }
        let raters = spec
            .raters
            .iter()
            .map(|&id| self.rater(id))
            .collect::<Result<Vec<_>>>()?;
        if let Some(curator) = raters.iter().find(|r| !r.role.reads_blinded()) {
            return Err(invalid(
                "raters",
                format!(
                    "{} is a curator: they know the ground truth, so their reading would not be \
                     blind",
                    curator.name
                ),
            ));
        }

        let conn = self.read();
        let study: i64 = conn
            .query_row(
                "SELECT id FROM studies WHERE study_id = ?1",
                [&spec.study_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.fail("finding the plan's study"))?
            .ok_or_else(|| Error::NotFound {
                what: format!("study {:?}", spec.study_id),
            })?;
        let taken: bool = conn
            .query_row(
                "SELECT count(*) > 0 FROM assignment_plans WHERE study = ?1 AND name = ?2",
                params![study, name],
                |r| r.get(0),
            )
            .map_err(self.fail("checking plan names"))?;
        if taken {
            return Err(invalid(
                "name",
                format!(
                    "study {:?} already has a plan named {name:?}",
                    spec.study_id
                ),
            ));
        }
        let responses: Vec<i64> = conn
            .prepare(
                "SELECT r.id FROM responses r JOIN tasks t ON r.task = t.id
                 JOIN cases c ON t.case_ref = c.id WHERE c.study = ?1 ORDER BY r.id",
            )
            .and_then(|mut stmt| stmt.query_map([study], |r| r.get(0))?.collect())
            .map_err(self.fail("listing the study's responses"))?;
        if responses.is_empty() {
            return Err(refused(format!(
                "study {:?} has no responses to assign",
                spec.study_id
            )));
        }
        let n_overlap = share_of(spec.overlap_share, responses.len());
        if let Some(k) = spec.responses_per_rater {
            if (k as usize) < n_overlap.max(1) {
                return Err(invalid(
                    "responses_per_rater",
                    format!("at least the overlap ({n_overlap} responses) and at least 1, got {k}"),
                ));
            }
        }
        // A rater reads a response at most once per read number across plans.
        for rater in &raters {
            let already: i64 = conn
                .query_row(
                    "SELECT count(*) FROM assignments a JOIN responses r ON a.response = r.id
                     JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
                     WHERE a.rater = ?1 AND c.study = ?2",
                    params![rater.id, study],
                    |r| r.get(0),
                )
                .map_err(self.fail("checking existing assignments"))?;
            if already > 0 {
                return Err(refused(format!(
                    "{} already has {already} assignment(s) in study {:?}; a plan can only give \
                     raters responses they have no queue for yet — leave them out of this plan",
                    rater.name, spec.study_id
                )));
            }
        }

        let (overlap, queues) = plan_queues(
            &responses,
            raters.len(),
            spec.seed,
            spec.overlap_share,
            spec.responses_per_rater,
            spec.repeat_share,
        );
        let overlap: BTreeSet<i64> = overlap.into_iter().collect();
        let assigned: BTreeSet<i64> = queues
            .iter()
            .flat_map(|q| q.first_reads.iter().copied())
            .collect();

        self.write(|w| {
            let tx = w.tx();
            let created_at: String = tx
                .query_row(&format!("SELECT {NOW_SQL}"), [], |r| r.get(0))
                .map_err(|e| w.fail("reading the clock", e))?;
            let not_before: String = tx
                .query_row(
                    "SELECT date(?1, '+' || ?2 || ' days')",
                    params![created_at, spec.repeat_after_days],
                    |r| r.get(0),
                )
                .map_err(|e| w.fail("computing the repeat date", e))?;
            tx.execute(
                "INSERT INTO assignment_plans (study, name, seed, overlap_share, repeat_share,
                     repeat_after_days, created_by, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    study,
                    name,
                    // Stored bit for bit; read back with `as u64`.
                    spec.seed as i64,
                    spec.overlap_share,
                    spec.repeat_share,
                    spec.repeat_after_days,
                    actor.id,
                    created_at
                ],
            )
            .map_err(|e| w.fail("creating the plan", e))?;
            let plan_id = tx.last_insert_rowid();
            let mut insert = tx
                .prepare(
                    "INSERT INTO assignments (plan, rater, response, read_no, position, overlap,
                         not_before) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(|e| w.fail("writing assignments", e))?;
            let mut rater_summaries = Vec::new();
            for (rater, queue) in raters.iter().zip(&queues) {
                let reads = queue
                    .first_reads
                    .iter()
                    .map(|r| (r, 1, None))
                    .chain(queue.repeats.iter().map(|r| (r, 2, Some(&not_before))));
                for (position, (response, read_no, opens)) in reads.enumerate() {
                    insert
                        .execute(params![
                            plan_id,
                            rater.id,
                            response,
                            read_no,
                            position as i64 + 1,
                            overlap.contains(response),
                            opens
                        ])
                        .map_err(|e| w.fail("writing assignments", e))?;
                }
                rater_summaries.push(PlanRaterSummary {
                    rater_id: rater.id,
                    rater: rater.name.clone(),
                    first_reads: queue.first_reads.len() as u32,
                    overlap: overlap.len() as u32,
                    repeats: queue.repeats.len() as u32,
                });
            }
            let summary = PlanSummary {
                plan_id,
                study_id: spec.study_id.clone(),
                name: name.to_owned(),
                seed: spec.seed,
                created_at,
                n_responses: responses.len() as u32,
                n_overlap: overlap.len() as u32,
                n_unassigned: (responses.len() - assigned.len()) as u32,
                raters: rater_summaries,
            };
            let after = serde_json::json!({ "spec": spec, "summary": summary });
            w.audit(&Entry {
                actor: &actor.name,
                action: "create assignment plan",
                entity: &format!("assignment_plan:{plan_id}"),
                before: None,
                after: Some(&after),
            })?;
            Ok(summary)
        })
    }

    /// On the demo study, gives `rater` a queue of every response (plan `demo:<name>`, seed 1, no
    /// repeats) unless they already have assignments there. `None` when they already do, for a
    /// curator, whose reading would not be blind, and in a database without the demo study (a
    /// real study's queues come from its lead's plans).
    pub fn ensure_demo_queue(&mut self, rater: i64) -> Result<Option<PlanSummary>> {
        let who = self.rater(rater)?;
        if !who.role.reads_blinded() {
            return Ok(None);
        }
        let has_demo: bool = self
            .read()
            .query_row(
                "SELECT count(*) > 0 FROM studies WHERE study_id = ?1",
                params![DEMO_STUDY_ID],
                |r| r.get(0),
            )
            .map_err(self.fail("looking for the demo study"))?;
        if !has_demo {
            return Ok(None);
        }
        let has_queue: bool = self
            .read()
            .query_row(
                "SELECT count(*) > 0 FROM assignments a
                 JOIN assignment_plans p ON a.plan = p.id JOIN studies s ON p.study = s.id
                 WHERE a.rater = ?1 AND s.study_id = ?2",
                params![rater, DEMO_STUDY_ID],
                |r| r.get(0),
            )
            .map_err(self.fail("looking for the rater's demo queue"))?;
        if has_queue {
            return Ok(None);
        }
        let spec = PlanSpec {
            study_id: DEMO_STUDY_ID.to_owned(),
            name: format!("demo:{}", who.name),
            seed: DEMO_SEED,
            raters: vec![rater],
            overlap_share: 1.0,
            responses_per_rater: None,
            repeat_share: 0.0,
            repeat_after_days: 0,
        };
        self.create_assignment_plan(rater, &spec).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_reaches_every_value() {
        let mut rng = stream(7, 0);
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            seen[below(&mut rng, 5) as usize] += 1;
        }
        // 1000 expected per bucket; 5 sigma is about 140.
        assert!(seen.iter().all(|&n| (860..=1140).contains(&n)), "{seen:?}");
    }

    #[test]
    fn dealing_is_balanced_and_capped() {
        let responses: Vec<i64> = (1..=23).collect();
        let (overlap, queues) = plan_queues(&responses, 3, 9, 0.2, None, 0.0);
        assert_eq!(overlap.len(), 5); // round(0.2 * 23) = 4.6 → 5
        let own: Vec<usize> = queues.iter().map(|q| q.first_reads.len() - 5).collect();
        assert_eq!(own.iter().sum::<usize>(), 18);
        assert!(own.iter().all(|&n| n == 6), "{own:?}");

        let (_, capped) = plan_queues(&responses, 3, 9, 0.2, Some(7), 0.0);
        assert!(capped.iter().all(|q| q.first_reads.len() == 7));
    }
}
