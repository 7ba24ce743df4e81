//! Assignment plans: which responses each rater reads, in a seeded order, and top-ups that add
//! raters and responses to a running plan without touching anyone's queue.
//!
//! The algorithm (also in `docs/rating.md`), for a plan with seed `s`. Every rater of a plan has
//! a seat `1, 2, …` in the order they joined (the spec's order at creation); a deal has a number
//! `d`, 0 at creation and the top-up count after.
//! 1. The responses the plan has not dealt yet (all of them at creation), in store order, are
//!    shuffled with stream `d · 2³²`; responses dealt before that nobody received (left by the
//!    cap) are shuffled after them with the same stream.
//! 2. The new responses are grouped into strata (one stratum unless the plan is stratified by
//!    model, sample and/or task family), in the order of their keys; the first
//!    `round(overlap_share · n)` of each stratum's `n` are overlap: every rater reads them.
//! 3. The rest, then the leftovers, are dealt one by one, each to the rater with the fewest dealt
//!    reads of its stratum in this plan, then the fewest dealt reads overall, then the lowest
//!    seat, skipping raters who have the response already (in any plan of the study) and, with
//!    `responses_per_rater = k`, raters who have k first reads in the plan. Unstratified, at
//!    creation, that is round-robin; stratified, each rater's share of every stratum and of the
//!    whole differ from another's by at most one.
//! 4. A rater joining with this deal also receives the plan's earlier overlap.
//! 5. Each rater shuffles what they received with stream `d · 2³² + seat`; then, with the same
//!    stream, shuffles a copy and takes its first `round(repeat_share · received)` as repeat reads.
//!    First reads, then repeats (`read_no = 2`, `not_before = now + repeat_after_days`), go after
//!    the rater's existing positions in the plan.
//!
//! A stream is ChaCha8 keyed with `s` (little-endian in the key's first 8 bytes, zeros after) and
//! the stream number; a shuffle is Fisher–Yates from the last element down, drawing `j` in
//! `0..=i` by rejection sampling from `next_u64` (unbiased). The same seed, raters, responses and
//! deals therefore give the same queues on any machine and any build.

use super::{invalid, refused, Rater, NOW_SQL};
use crate::store::audit::Entry;
use crate::store::Store;
use crate::{Error, Result};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The demo study's id (the `demo` crate writes it).
pub const DEMO_STUDY_ID: &str = "neurorater-demo";
/// The seed of every demo queue.
const DEMO_SEED: u64 = 1;
const MAX_REPEAT_AFTER_DAYS: u32 = 3650;
const MAX_PLAN_NAME_CHARS: usize = 100;
/// A deal's streams start at `deal · 2³²`: room for 2³² − 1 seats per deal.
const DEAL_STREAM_SHIFT: u32 = 32;

/// Who a plan is recorded as made by: the study lead at this workstation, who is no rater (the
/// app with nobody chosen), or a named rater (a curator acting, `neurorater assign --lead NAME`).
/// A plan is the lead's work: never credited to whichever clinician happens to be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanMaker {
    StudyLead,
    Rater(i64),
}

impl From<i64> for PlanMaker {
    fn from(rater: i64) -> PlanMaker {
        PlanMaker::Rater(rater)
    }
}

/// The audit log's name for the study lead at this workstation, acting with no rater chosen.
pub const STUDY_LEAD: &str = "study lead";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct PlanSpec {
    pub study_id: String,
    pub name: String,
    /// Any `u64` the lead types: a string across IPC (`crate::wide`).
    #[serde(with = "crate::wide::u64_string")]
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub seed: u64,
    /// Rater ids, at least one; the order decides each rater's seat (their stream).
    pub raters: Vec<i64>,
    /// Share of the study's responses read by every rater, in [0, 1].
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub overlap_share: f64,
    /// First reads per rater, overlap included; `None`: every response is assigned.
    #[serde(default)]
    pub responses_per_rater: Option<u32>,
    /// Share of each rater's first reads read a second time, in [0, 1].
    #[serde(default)]
    #[cfg_attr(feature = "specta", specta(type = crate::finite::Finite))]
    pub repeat_share: f64,
    #[serde(default)]
    pub repeat_after_days: u32,
    /// What the strata are made of; empty: one stratum.
    #[serde(default)]
    pub stratify_by: Vec<StratifyBy>,
}

/// A key a plan may be stratified by: every combination of the chosen keys is one stratum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum StratifyBy {
    Model,
    Sample,
    TaskFamily,
}

/// A top-up of a study's plan: raters who join it, and every response the plan has not dealt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct TopUpSpec {
    pub study_id: String,
    /// The plan's name.
    pub plan: String,
    /// Rater ids joining the plan, after its raters; may be empty.
    #[serde(default)]
    pub new_raters: Vec<i64>,
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
    #[serde(with = "crate::wide::u64_string")]
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub seed: u64,
    pub created_at: String,
    pub n_responses: u32,
    pub n_overlap: u32,
    pub n_unassigned: u32,
    pub raters: Vec<PlanRaterSummary>,
    pub responses_per_rater: Option<u32>,
    pub stratify_by: Vec<StratifyBy>,
    /// How many times the plan was topped up.
    pub top_ups: u32,
}

/// A plan after a top-up, and what the top-up added.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TopUpSummary {
    pub plan: PlanSummary,
    /// Responses the plan had not dealt before this top-up.
    pub n_new_responses: u32,
    /// Per rater, the reads this top-up appended to their queue.
    pub added: Vec<PlanRaterSummary>,
}

/// A rater's place in a plan as a deal sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seat {
    pub seat: u64,
    /// Joins with this deal, so also receives the plan's earlier overlap.
    pub joining: bool,
    /// Responses the rater has a first read of in any plan of the study: never dealt again.
    pub has: BTreeSet<i64>,
    /// First reads in this plan (the cap counts them).
    pub first_reads: usize,
    /// Dealt (not overlap) first reads in this plan, per stratum and in all.
    pub dealt: BTreeMap<String, usize>,
    pub dealt_total: usize,
}

/// What one deal works on.
pub(crate) struct Deal<'a> {
    pub seed: u64,
    /// 0 at creation, then the top-up's number.
    pub number: u64,
    pub overlap_share: f64,
    pub responses_per_rater: Option<u32>,
    pub repeat_share: f64,
    /// Responses the plan has not dealt, in store order, each with its stratum.
    pub new: &'a [(i64, String)],
    /// Responses dealt before that nobody received, in store order, with their strata.
    pub leftover: &'a [(i64, String)],
    /// The plan's overlap so far, for joining raters.
    pub earlier_overlap: &'a [i64],
}

/// What a deal gives each seat, in reading order: response keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queue {
    pub first_reads: Vec<i64>,
    pub repeats: Vec<i64>,
}

/// The pure part of a plan and of each top-up: the new overlap, and what each seat receives.
/// `seats` are updated with what they received.
pub(crate) fn deal(deal: &Deal, seats: &mut [Seat]) -> (Vec<i64>, Vec<Queue>) {
    let base = deal.number << DEAL_STREAM_SHIFT;
    let mut rng = stream(deal.seed, base);
    let mut new = deal.new.to_vec();
    shuffle(&mut rng, &mut new);
    let mut leftover = deal.leftover.to_vec();
    shuffle(&mut rng, &mut leftover);

    let mut strata: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (response, stratum) in &new {
        strata.entry(stratum).or_default().push(*response);
    }
    let mut overlap = Vec::new();
    let mut to_deal: Vec<(i64, &str)> = Vec::new();
    for (stratum, responses) in &strata {
        let (shared, rest) = responses.split_at(share_of(deal.overlap_share, responses.len()));
        overlap.extend_from_slice(shared);
        to_deal.extend(rest.iter().map(|&r| (r, *stratum)));
    }
    to_deal.extend(leftover.iter().map(|(r, stratum)| (*r, stratum.as_str())));

    let mut received: Vec<Vec<i64>> = vec![Vec::new(); seats.len()];
    for (seat, mine) in seats.iter_mut().zip(&mut received) {
        let earlier = if seat.joining {
            deal.earlier_overlap
        } else {
            &[]
        };
        for &response in earlier.iter().chain(&overlap) {
            if seat.has.insert(response) {
                mine.push(response);
                seat.first_reads += 1;
            }
        }
    }
    let cap = deal.responses_per_rater.map_or(usize::MAX, |k| k as usize);
    for (response, stratum) in to_deal {
        let chosen = seats
            .iter()
            .enumerate()
            .filter(|(_, seat)| seat.first_reads < cap && !seat.has.contains(&response))
            .min_by_key(|(index, seat)| {
                let in_stratum = seat.dealt.get(stratum).copied().unwrap_or(0);
                (in_stratum, seat.dealt_total, *index)
            })
            .map(|(index, _)| index);
        if let Some(index) = chosen {
            let seat = &mut seats[index];
            seat.has.insert(response);
            seat.first_reads += 1;
            *seat.dealt.entry(stratum.to_owned()).or_default() += 1;
            seat.dealt_total += 1;
            received[index].push(response);
        }
    }

    let queues = seats
        .iter()
        .zip(received)
        .map(|(seat, mut first_reads)| {
            let mut rng = stream(deal.seed, base + seat.seat);
            shuffle(&mut rng, &mut first_reads);
            let mut repeats = first_reads.clone();
            shuffle(&mut rng, &mut repeats);
            repeats.truncate(share_of(deal.repeat_share, first_reads.len()));
            Queue {
                first_reads,
                repeats,
            }
        })
        .collect();
    (overlap, queues)
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

fn shuffle<T>(rng: &mut ChaCha8Rng, items: &mut [T]) {
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

/// Responses in store order, each with its stratum.
type Stratified = Vec<(i64, String)>;

/// A response's stratum: its values of the plan's keys, joined by a unit separator.
fn stratum_of(stratify_by: &[StratifyBy], model: &str, sample: i64, family: &str) -> String {
    stratify_by
        .iter()
        .map(|key| match key {
            StratifyBy::Model => model.to_owned(),
            StratifyBy::Sample => sample.to_string(),
            StratifyBy::TaskFamily => family.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

/// The study's responses in store order, each with its stratum.
fn study_responses(
    conn: &Connection,
    study: i64,
    stratify_by: &[StratifyBy],
) -> rusqlite::Result<Vec<(i64, String)>> {
    conn.prepare(
        "SELECT r.id, r.model, r.sample, t.family FROM responses r JOIN tasks t ON r.task = t.id
         JOIN cases c ON t.case_ref = c.id WHERE c.study = ?1 ORDER BY r.id",
    )?
    .query_map([study], |r| {
        Ok((
            r.get(0)?,
            stratum_of(
                stratify_by,
                &r.get::<_, String>(1)?,
                r.get(2)?,
                &r.get::<_, String>(3)?,
            ),
        ))
    })?
    .collect()
}

/// A plan's summary as stored: its raters by seat (raters of a plan imported from a rater
/// package, which has no seats, after them), with their counts.
fn plan_summary(conn: &Connection, plan: i64) -> rusqlite::Result<PlanSummary> {
    #[allow(clippy::type_complexity)]
    let (study, study_id, name, seed, created_at, per_rater, stratify, top_ups): (
        i64,
        String,
        String,
        i64,
        String,
        Option<u32>,
        String,
        u32,
    ) = conn.query_row(
        "SELECT p.study, s.study_id, p.name, p.seed, p.created_at, p.responses_per_rater,
                p.stratify_json, p.top_ups
         FROM assignment_plans p JOIN studies s ON p.study = s.id WHERE p.id = ?1",
        [plan],
        |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        },
    )?;
    let stratify_by = serde_json::from_str(&stratify).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(6, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let raters = conn
        .prepare(
            "WITH members (rater, place) AS (
                 SELECT rater, seat FROM plan_raters WHERE plan = ?1
                 UNION ALL
                 SELECT rater, 4294967296 + min(id) FROM assignments
                  WHERE plan = ?1 AND rater NOT IN (SELECT rater FROM plan_raters WHERE plan = ?1)
                  GROUP BY rater)
             SELECT ra.id, ra.name,
                    (SELECT count(*) FROM assignments a
                      WHERE a.plan = ?1 AND a.rater = ra.id AND a.read_no = 1),
                    (SELECT count(*) FROM assignments a
                      WHERE a.plan = ?1 AND a.rater = ra.id AND a.read_no = 1 AND a.overlap = 1),
                    (SELECT count(*) FROM assignments a
                      WHERE a.plan = ?1 AND a.rater = ra.id AND a.read_no > 1)
             FROM members m JOIN raters ra ON ra.id = m.rater ORDER BY m.place",
        )?
        .query_map([plan], |r| {
            Ok(PlanRaterSummary {
                rater_id: r.get(0)?,
                rater: r.get(1)?,
                first_reads: r.get(2)?,
                overlap: r.get(3)?,
                repeats: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let (n_responses, n_overlap, n_unassigned): (u32, u32, u32) = conn.query_row(
        "SELECT count(*),
                count(*) FILTER (WHERE r.id IN
                    (SELECT response FROM assignments WHERE plan = ?2 AND overlap = 1)),
                count(*) FILTER (WHERE r.id NOT IN
                    (SELECT response FROM assignments WHERE plan = ?2 AND read_no = 1))
         FROM responses r JOIN tasks t ON r.task = t.id JOIN cases c ON t.case_ref = c.id
         WHERE c.study = ?1",
        params![study, plan],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(PlanSummary {
        plan_id: plan,
        study_id,
        name,
        // Stored bit for bit.
        seed: seed as u64,
        created_at,
        n_responses,
        n_overlap,
        n_unassigned,
        raters,
        responses_per_rater: per_rater,
        stratify_by,
        top_ups,
    })
}

/// The stored plan a top-up works on.
struct StoredPlan {
    id: i64,
    seed: u64,
    overlap_share: f64,
    repeat_share: f64,
    repeat_after_days: u32,
    responses_per_rater: Option<u32>,
    stratify_by: Vec<StratifyBy>,
    top_ups: u32,
}

fn check_shares(overlap_share: f64, repeat_share: f64, repeat_after_days: u32) -> Result<()> {
    for (field, share) in [
        ("overlap_share", overlap_share),
        ("repeat_share", repeat_share),
    ] {
        if !(0.0..=1.0).contains(&share) {
            return Err(invalid(
                field,
                format!("a share between 0 and 1, got {share}"),
            ));
        }
    }
    if repeat_after_days > MAX_REPEAT_AFTER_DAYS {
        return Err(invalid(
            "repeat_after_days",
            format!("at most {MAX_REPEAT_AFTER_DAYS} days, got {repeat_after_days}"),
        ));
    }
    Ok(())
}

/// A new plan as dealt, ready to be written.
struct NewPlan<'a> {
    study: i64,
    name: &'a str,
    spec: &'a PlanSpec,
    raters: &'a [Rater],
    seats: &'a [Seat],
    /// The study's responses with their strata, all dealt.
    responses: &'a [(i64, String)],
    overlap: &'a [i64],
    /// One per rater, in `raters`' order.
    queues: &'a [Queue],
}

/// What a plan's spec must hold before anything is read: its trimmed name, shares in range,
/// strata and raters named once each.
fn check_plan_spec(spec: &PlanSpec) -> Result<&str> {
    let name = spec.name.trim();
    if name.is_empty() || name.chars().count() > MAX_PLAN_NAME_CHARS {
        return Err(invalid(
            "name",
            format!("a plan needs a name of 1 to {MAX_PLAN_NAME_CHARS} characters"),
        ));
    }
    check_shares(
        spec.overlap_share,
        spec.repeat_share,
        spec.repeat_after_days,
    )?;
    let stratify: BTreeSet<StratifyBy> = spec.stratify_by.iter().copied().collect();
    if stratify.len() != spec.stratify_by.len() {
        return Err(invalid("stratify_by", "a key is listed twice"));
    }
    if spec.raters.is_empty() {
        return Err(invalid("raters", "a plan needs at least one rater"));
    }
    Ok(name)
}

/// A cap on first reads per rater must hold the overlap every rater reads (and at least one).
fn check_cap_covers_overlap(spec: &PlanSpec, responses: &[(i64, String)]) -> Result<()> {
    let Some(cap) = spec.responses_per_rater else {
        return Ok(());
    };
    let mut per_stratum: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, stratum) in responses {
        *per_stratum.entry(stratum).or_default() += 1;
    }
    let n_overlap: usize = per_stratum
        .values()
        .map(|&n| share_of(spec.overlap_share, n))
        .sum();
    if (cap as usize) < n_overlap.max(1) {
        return Err(invalid(
            "responses_per_rater",
            format!("at least the overlap ({n_overlap} responses) and at least 1, got {cap}"),
        ));
    }
    Ok(())
}

impl Store {
    /// The named readers of a plan: distinct, existing, none a curator.
    fn plan_readers(&self, field: &str, ids: &[i64]) -> Result<Vec<Rater>> {
        let distinct: BTreeSet<i64> = ids.iter().copied().collect();
        if distinct.len() != ids.len() {
            return Err(invalid(field, "a rater is listed twice"));
        }
        let raters = ids
            .iter()
            .map(|&id| self.rater(id))
            .collect::<Result<Vec<_>>>()?;
        if let Some(curator) = raters.iter().find(|r| !r.role.reads_blinded()) {
            return Err(invalid(
                field,
                format!(
                    "{} is a curator: they know the ground truth, so their reading would not be \
                     blind",
                    curator.name
                ),
            ));
        }
        Ok(raters)
    }

    /// A seat for `rater` in `plan` (`None` for one joining): their first reads in the study
    /// and their counts in the plan.
    fn seat(
        &self,
        study: i64,
        plan: Option<i64>,
        rater: i64,
        seat: u64,
        strata: &BTreeMap<i64, String>,
    ) -> Result<Seat> {
        let rows: Vec<(i64, i64, bool)> = self
            .read()
            .prepare(
                "SELECT a.response, a.plan, a.overlap FROM assignments a
                 JOIN assignment_plans p ON a.plan = p.id
                 WHERE a.rater = ?1 AND p.study = ?2 AND a.read_no = 1",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![rater, study], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect()
            })
            .map_err(self.fail("reading a rater's assignments"))?;
        let mut found = Seat {
            seat,
            joining: plan.is_none(),
            ..Seat::default()
        };
        for (response, in_plan, overlap) in rows {
            found.has.insert(response);
            if Some(in_plan) == plan {
                found.first_reads += 1;
                if !overlap {
                    let stratum = strata.get(&response).cloned().unwrap_or_default();
                    *found.dealt.entry(stratum).or_default() += 1;
                    found.dealt_total += 1;
                }
            }
        }
        Ok(found)
    }

    /// Creates a plan and every rater's queue in one audited transaction, recorded as made by
    /// `maker`. A rater who already reads some of the study's responses (another plan) is given
    /// only the others.
    pub fn create_assignment_plan(
        &mut self,
        maker: impl Into<PlanMaker>,
        spec: &PlanSpec,
    ) -> Result<PlanSummary> {
        let actor = self.plan_maker(maker.into())?;
        let name = check_plan_spec(spec)?;
        let raters = self.plan_readers("raters", &spec.raters)?;
        let study = self.study_key(&spec.study_id)?;
        self.refuse_taken_plan_name(study, &spec.study_id, name)?;
        let responses = study_responses(self.read(), study, &spec.stratify_by)
            .map_err(self.fail("listing the study's responses"))?;
        if responses.is_empty() {
            return Err(refused(format!(
                "study {:?} has no responses to assign",
                spec.study_id
            )));
        }
        check_cap_covers_overlap(spec, &responses)?;
        let mut seats = raters
            .iter()
            .enumerate()
            .map(|(index, rater)| {
                self.seat(study, None, rater.id, index as u64 + 1, &BTreeMap::new())
            })
            .collect::<Result<Vec<_>>>()?;
        let (overlap, queues) = deal(
            &Deal {
                seed: spec.seed,
                number: 0,
                overlap_share: spec.overlap_share,
                responses_per_rater: spec.responses_per_rater,
                repeat_share: spec.repeat_share,
                new: &responses,
                leftover: &[],
                earlier_overlap: &[],
            },
            &mut seats,
        );
        self.write_new_plan(
            &actor,
            &NewPlan {
                study,
                name,
                spec,
                raters: &raters,
                seats: &seats,
                responses: &responses,
                overlap: &overlap,
                queues: &queues,
            },
        )
    }

    /// Refuses a second plan of one name in a study: plans are told apart by name.
    fn refuse_taken_plan_name(&self, study: i64, study_id: &str, name: &str) -> Result<()> {
        let taken: bool = self
            .read()
            .query_row(
                "SELECT count(*) > 0 FROM assignment_plans WHERE study = ?1 AND name = ?2",
                params![study, name],
                |r| r.get(0),
            )
            .map_err(self.fail("checking plan names"))?;
        if taken {
            return Err(invalid(
                "name",
                format!("study {study_id:?} already has a plan named {name:?}"),
            ));
        }
        Ok(())
    }

    /// Writes a dealt plan in one transaction: the plan, its seats and queues, and its audit entry.
    /// The rater a plan is recorded under (`None`: the study lead) and the audit log's name.
    fn plan_maker(&self, maker: PlanMaker) -> Result<(Option<i64>, String)> {
        match maker {
            PlanMaker::StudyLead => Ok((None, STUDY_LEAD.to_owned())),
            PlanMaker::Rater(id) => self.rater(id).map(|rater| (Some(rater.id), rater.name)),
        }
    }

    fn write_new_plan(
        &mut self,
        actor: &(Option<i64>, String),
        plan: &NewPlan,
    ) -> Result<PlanSummary> {
        let spec = plan.spec;
        let stratify_json =
            serde_json::to_string(&spec.stratify_by).map_err(|e| Error::Corrupt {
                what: format!("the plan's strata: {e}"),
            })?;
        self.write(|w| {
            let tx = w.tx();
            let created_at: String = tx
                .query_row(&format!("SELECT {NOW_SQL}"), [], |r| r.get(0))
                .map_err(|e| w.fail("reading the clock", e))?;
            tx.execute(
                "INSERT INTO assignment_plans (study, name, seed, overlap_share, repeat_share,
                     repeat_after_days, created_by, created_at, responses_per_rater,
                     stratify_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    plan.study,
                    plan.name,
                    // Stored bit for bit; read back with `as u64`.
                    spec.seed as i64,
                    spec.overlap_share,
                    spec.repeat_share,
                    spec.repeat_after_days,
                    actor.0,
                    created_at,
                    spec.responses_per_rater,
                    stratify_json
                ],
            )
            .map_err(|e| w.fail("creating the plan", e))?;
            let plan_id = tx.last_insert_rowid();
            let dealt: Vec<i64> = plan.responses.iter().map(|(r, _)| *r).collect();
            let joined: Vec<(i64, u64)> = plan
                .raters
                .iter()
                .zip(plan.seats)
                .map(|(r, s)| (r.id, s.seat))
                .collect();
            let by_rater: Vec<(i64, &Queue)> =
                plan.raters.iter().map(|r| r.id).zip(plan.queues).collect();
            write_deal(
                w,
                plan_id,
                &joined,
                &dealt,
                plan.overlap,
                &by_rater,
                &created_at,
                spec.repeat_after_days,
                |_| 0,
            )?;
            let summary =
                plan_summary(w.tx(), plan_id).map_err(|e| w.fail("summing up the plan", e))?;
            let after = serde_json::json!({ "spec": spec, "summary": summary });
            w.audit(&Entry {
                actor: &actor.1,
                action: "create assignment plan",
                entity: &format!("assignment_plan:{plan_id}"),
                before: None,
                after: Some(&after),
            })?;
            Ok(summary)
        })
    }

    /// Tops up a study's plan, recorded as made by `maker`: `new_raters` join it with queues of
    /// their own, and responses the plan has not dealt (new models, new samples, new cases) are
    /// dealt with the plan's shares, cap and strata. Nobody's existing assignments change: what
    /// a rater receives goes after their last position in the plan.
    pub fn top_up_assignment_plan(
        &mut self,
        maker: impl Into<PlanMaker>,
        spec: &TopUpSpec,
    ) -> Result<TopUpSummary> {
        let actor = self.plan_maker(maker.into())?;
        let new_raters = self.plan_readers("new_raters", &spec.new_raters)?;
        let study = self.study_key(&spec.study_id)?;
        let plan = self
            .read()
            .query_row(
                "SELECT id, seed, overlap_share, repeat_share, repeat_after_days,
                        responses_per_rater, stratify_json, top_ups
                 FROM assignment_plans WHERE study = ?1 AND name = ?2",
                params![study, spec.plan.trim()],
                |r| {
                    Ok((
                        StoredPlan {
                            id: r.get(0)?,
                            seed: r.get::<_, i64>(1)? as u64,
                            overlap_share: r.get(2)?,
                            repeat_share: r.get(3)?,
                            repeat_after_days: r.get(4)?,
                            responses_per_rater: r.get(5)?,
                            stratify_by: Vec::new(),
                            top_ups: r.get(7)?,
                        },
                        r.get::<_, String>(6)?,
                    ))
                },
            )
            .optional()
            .map_err(self.fail("finding the plan"))?
            .ok_or_else(|| Error::NotFound {
                what: format!("plan {:?} of study {:?}", spec.plan, spec.study_id),
            })
            .and_then(|(mut plan, stratify)| {
                plan.stratify_by = serde_json::from_str(&stratify).map_err(|e| Error::Corrupt {
                    what: format!("plan {:?}: its strata: {e}", spec.plan),
                })?;
                Ok(plan)
            })?;
        let members: Vec<(i64, u64)> = self
            .read()
            .prepare("SELECT rater, seat FROM plan_raters WHERE plan = ?1 ORDER BY seat")
            .and_then(|mut stmt| {
                stmt.query_map([plan.id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
                    .collect()
            })
            .map_err(self.fail("reading the plan's raters"))?;
        if members.is_empty() {
            return Err(refused(format!(
                "plan {:?} came with a rater package and has no seats here: top it up where it \
                 was made",
                spec.plan
            )));
        }
        if let Some(member) = new_raters
            .iter()
            .find(|r| members.iter().any(|(id, _)| *id == r.id))
        {
            return Err(invalid(
                "new_raters",
                format!("{} already reads in plan {:?}", member.name, spec.plan),
            ));
        }

        let responses = study_responses(self.read(), study, &plan.stratify_by)
            .map_err(self.fail("listing the study's responses"))?;
        let strata: BTreeMap<i64, String> = responses.iter().cloned().collect();
        let (dealt_before, received): (BTreeSet<i64>, BTreeSet<i64>) = {
            let conn = self.read();
            let list = |sql: &str| -> rusqlite::Result<BTreeSet<i64>> {
                conn.prepare(sql)?
                    .query_map([plan.id], |r| r.get(0))?
                    .collect()
            };
            (
                list("SELECT response FROM plan_responses WHERE plan = ?1")
                    .map_err(self.fail("reading the plan's responses"))?,
                list("SELECT response FROM assignments WHERE plan = ?1 AND read_no = 1")
                    .map_err(self.fail("reading the plan's assignments"))?,
            )
        };
        let earlier_overlap: Vec<i64> = self
            .read()
            .prepare(
                "SELECT DISTINCT response FROM assignments
                 WHERE plan = ?1 AND overlap = 1 ORDER BY response",
            )
            .and_then(|mut stmt| stmt.query_map([plan.id], |r| r.get(0))?.collect())
            .map_err(self.fail("reading the plan's overlap"))?;
        let (new, leftover): (Stratified, Stratified) = responses
            .into_iter()
            .filter(|(r, _)| !received.contains(r))
            .partition(|(r, _)| !dealt_before.contains(r));

        let last_seat = members.last().map_or(0, |(_, seat)| *seat);
        let mut seats = members
            .iter()
            .map(|&(rater, seat)| self.seat(study, Some(plan.id), rater, seat, &strata))
            .chain(new_raters.iter().enumerate().map(|(index, rater)| {
                self.seat(study, None, rater.id, last_seat + index as u64 + 1, &strata)
            }))
            .collect::<Result<Vec<_>>>()?;
        let number = u64::from(plan.top_ups) + 1;
        let (overlap, queues) = deal(
            &Deal {
                seed: plan.seed,
                number,
                overlap_share: plan.overlap_share,
                responses_per_rater: plan.responses_per_rater,
                repeat_share: plan.repeat_share,
                new: &new,
                leftover: &leftover,
                earlier_overlap: &earlier_overlap,
            },
            &mut seats,
        );
        let joining: Vec<(i64, u64)> = new_raters
            .iter()
            .zip(&seats[members.len()..])
            .map(|(r, s)| (r.id, s.seat))
            .collect();
        let all: Vec<i64> = members
            .iter()
            .map(|(id, _)| *id)
            .chain(new_raters.iter().map(|r| r.id))
            .collect();
        let new_ids: Vec<i64> = new.iter().map(|(r, _)| *r).collect();

        self.write(|w| {
            let tx = w.tx();
            let now: String = tx
                .query_row(&format!("SELECT {NOW_SQL}"), [], |r| r.get(0))
                .map_err(|e| w.fail("reading the clock", e))?;
            let mut last_position = BTreeMap::new();
            for &rater in &all {
                let last: i64 = tx
                    .query_row(
                        "SELECT coalesce(max(position), 0) FROM assignments
                         WHERE plan = ?1 AND rater = ?2",
                        params![plan.id, rater],
                        |r| r.get(0),
                    )
                    .map_err(|e| w.fail("reading a queue's end", e))?;
                last_position.insert(rater, last);
            }
            write_deal(
                w,
                plan.id,
                &joining,
                &new_ids,
                &overlap,
                &all.iter().copied().zip(&queues).collect::<Vec<_>>(),
                &now,
                plan.repeat_after_days,
                |rater| last_position[&rater],
            )?;
            w.tx()
                .execute(
                    "UPDATE assignment_plans SET top_ups = top_ups + 1 WHERE id = ?1",
                    [plan.id],
                )
                .map_err(|e| w.fail("counting the top-up", e))?;
            let summary =
                plan_summary(w.tx(), plan.id).map_err(|e| w.fail("summing up the plan", e))?;
            let added = all
                .iter()
                .zip(&queues)
                .map(|(&rater, queue)| {
                    let name = summary
                        .raters
                        .iter()
                        .find(|r| r.rater_id == rater)
                        .map(|r| r.rater.clone())
                        .unwrap_or_default();
                    PlanRaterSummary {
                        rater_id: rater,
                        rater: name,
                        first_reads: queue.first_reads.len() as u32,
                        overlap: queue
                            .first_reads
                            .iter()
                            .filter(|r| overlap.contains(r) || earlier_overlap.contains(r))
                            .count() as u32,
                        repeats: queue.repeats.len() as u32,
                    }
                })
                .collect();
            let topped = TopUpSummary {
                plan: summary,
                n_new_responses: new_ids.len() as u32,
                added,
            };
            let after = serde_json::json!({ "spec": spec, "top_up": number, "summary": topped });
            w.audit(&Entry {
                actor: &actor.1,
                action: "top up assignment plan",
                entity: &format!("assignment_plan:{}", plan.id),
                before: None,
                after: Some(&after),
            })?;
            Ok(topped)
        })
    }

    /// A study's plans in creation order, with each rater's counts.
    pub fn assignment_plans(&self, study_id: &str) -> Result<Vec<PlanSummary>> {
        let study = self.study_key(study_id)?;
        let conn = self.read();
        let ids: Vec<i64> = conn
            .prepare("SELECT id FROM assignment_plans WHERE study = ?1 ORDER BY id")
            .and_then(|mut stmt| stmt.query_map([study], |r| r.get(0))?.collect())
            .map_err(self.fail("listing plans"))?;
        ids.into_iter()
            .map(|plan| plan_summary(conn, plan).map_err(self.fail("summing up a plan")))
            .collect()
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
            stratify_by: Vec::new(),
        };
        // The app deals it on the study's behalf: the study lead's plan, not the reader's.
        self.create_assignment_plan(PlanMaker::StudyLead, &spec)
            .map(Some)
    }
}

/// Writes one deal: the seats of `joining` raters, the `dealt` responses as the plan's, and each
/// rater's reads after `after(rater)`, their last position in the plan.
#[allow(clippy::too_many_arguments)]
fn write_deal(
    w: &crate::store::Write<'_>,
    plan: i64,
    joining: &[(i64, u64)],
    dealt: &[i64],
    overlap: &[i64],
    queues: &[(i64, &Queue)],
    now: &str,
    repeat_after_days: u32,
    after: impl Fn(i64) -> i64,
) -> Result<()> {
    let tx = w.tx();
    let not_before: String = tx
        .query_row(
            "SELECT date(?1, '+' || ?2 || ' days')",
            params![now, repeat_after_days],
            |r| r.get(0),
        )
        .map_err(|e| w.fail("computing the repeat date", e))?;
    for (rater, seat) in joining {
        tx.execute(
            "INSERT INTO plan_raters (plan, rater, seat) VALUES (?1, ?2, ?3)",
            params![plan, rater, *seat as i64],
        )
        .map_err(|e| w.fail("seating a rater", e))?;
    }
    for response in dealt {
        tx.execute(
            "INSERT INTO plan_responses (plan, response) VALUES (?1, ?2)",
            params![plan, response],
        )
        .map_err(|e| w.fail("recording the plan's responses", e))?;
    }
    let overlap: BTreeSet<i64> = overlap.iter().copied().collect();
    let earlier_overlap: BTreeSet<i64> = tx
        .prepare("SELECT response FROM assignments WHERE plan = ?1 AND overlap = 1")
        .and_then(|mut stmt| stmt.query_map([plan], |r| r.get(0))?.collect())
        .map_err(|e| w.fail("reading the plan's overlap", e))?;
    let mut insert = tx
        .prepare(
            "INSERT INTO assignments (plan, rater, response, read_no, position, overlap,
                 not_before) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(|e| w.fail("writing assignments", e))?;
    for &(rater, queue) in queues {
        let reads = queue
            .first_reads
            .iter()
            .map(|r| (r, 1, None))
            .chain(queue.repeats.iter().map(|r| (r, 2, Some(&not_before))));
        let start = after(rater);
        for (index, (response, read_no, opens)) in reads.enumerate() {
            let shared = overlap.contains(response) || earlier_overlap.contains(response);
            insert
                .execute(params![
                    plan,
                    rater,
                    response,
                    read_no,
                    start + index as i64 + 1,
                    shared,
                    opens
                ])
                .map_err(|e| w.fail("writing assignments", e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The creation algorithm as docs/rating.md gave it before strata and top-ups (round-robin
    /// dealing with a quota): unstratified plans must still give exactly these queues.
    fn round_robin_reference(
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
        let quota =
            responses_per_rater.map_or(usize::MAX, |k| (k as usize).saturating_sub(n_overlap));
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

    fn fresh_seats(n: usize) -> Vec<Seat> {
        (0..n)
            .map(|i| Seat {
                seat: i as u64 + 1,
                joining: true,
                ..Seat::default()
            })
            .collect()
    }

    fn create(
        responses: &[(i64, String)],
        seats: &mut [Seat],
        seed: u64,
        overlap_share: f64,
        responses_per_rater: Option<u32>,
        repeat_share: f64,
    ) -> (Vec<i64>, Vec<Queue>) {
        deal(
            &Deal {
                seed,
                number: 0,
                overlap_share,
                responses_per_rater,
                repeat_share,
                new: responses,
                leftover: &[],
                earlier_overlap: &[],
            },
            seats,
        )
    }

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
    fn an_unstratified_plan_gives_the_queues_of_the_round_robin_algorithm() {
        for seed in 0..40u64 {
            let n = 5 + (seed as usize * 7) % 60;
            let responses: Vec<(i64, String)> =
                (1..=n as i64).map(|r| (r * 3, String::new())).collect();
            let ids: Vec<i64> = responses.iter().map(|(r, _)| *r).collect();
            let n_raters = 1 + seed as usize % 4;
            let overlap_share = [0.0, 0.2, 0.5, 1.0][seed as usize % 4];
            let n_overlap = share_of(overlap_share, n);
            let cap = (seed % 3 == 0).then_some((n_overlap + 3) as u32);
            let repeat = [0.0, 0.1, 0.25][seed as usize % 3];
            let expected = round_robin_reference(&ids, n_raters, seed, overlap_share, cap, repeat);
            let got = create(
                &responses,
                &mut fresh_seats(n_raters),
                seed,
                overlap_share,
                cap,
                repeat,
            );
            assert_eq!(got, expected, "seed {seed}");
        }
    }

    #[test]
    fn a_stratified_plan_balances_every_stratum_and_draws_the_overlap_per_stratum() {
        for seed in 0..30u64 {
            // Three strata of uneven sizes, interleaved in store order.
            let sizes = [5 + seed as usize % 7, 11, 2 + seed as usize % 3];
            let mut responses = Vec::new();
            let mut next = 1;
            for round in 0..sizes.iter().max().copied().unwrap_or(0) {
                for (stratum, &size) in sizes.iter().enumerate() {
                    if round < size {
                        responses.push((next, format!("s{stratum}")));
                        next += 1;
                    }
                }
            }
            let n_raters = 2 + seed as usize % 3;
            let share = 0.3;
            let mut seats = fresh_seats(n_raters);
            let (overlap, queues) = create(&responses, &mut seats, seed, share, None, 0.0);
            let stratum: BTreeMap<i64, &str> =
                responses.iter().map(|(r, s)| (*r, s.as_str())).collect();

            for (index, &size) in sizes.iter().enumerate() {
                let name = format!("s{index}");
                let in_overlap = overlap.iter().filter(|r| stratum[r] == name).count();
                assert_eq!(
                    in_overlap,
                    (0.3 * size as f64).round() as usize,
                    "seed {seed}"
                );
                let dealt: Vec<usize> = queues
                    .iter()
                    .map(|q| {
                        q.first_reads
                            .iter()
                            .filter(|r| stratum[r] == name && !overlap.contains(r))
                            .count()
                    })
                    .collect();
                let spread = dealt.iter().max().unwrap() - dealt.iter().min().unwrap();
                assert!(spread <= 1, "seed {seed} stratum {name}: {dealt:?}");
            }
            let totals: Vec<usize> = queues.iter().map(|q| q.first_reads.len()).collect();
            let spread = totals.iter().max().unwrap() - totals.iter().min().unwrap();
            assert!(spread <= 1, "seed {seed}: {totals:?}");
            // Every response is read: overlap by all, the rest by exactly one rater.
            for (response, _) in &responses {
                let readers = queues
                    .iter()
                    .filter(|q| q.first_reads.contains(response))
                    .count();
                let expected = if overlap.contains(response) {
                    n_raters
                } else {
                    1
                };
                assert_eq!(readers, expected, "seed {seed} response {response}");
            }
        }
    }

    #[test]
    fn a_top_up_deals_only_new_responses_and_never_what_a_rater_has() {
        let first: Vec<(i64, String)> = (1..=30).map(|r| (r, String::new())).collect();
        let mut seats = fresh_seats(3);
        let (overlap, _) = create(&first, &mut seats, 5, 0.2, None, 0.0);
        for seat in &mut seats {
            seat.joining = false;
        }
        let had: Vec<BTreeSet<i64>> = seats.iter().map(|s| s.has.clone()).collect();
        seats.push(Seat {
            seat: 4,
            joining: true,
            ..Seat::default()
        });
        let new: Vec<(i64, String)> = (31..=50).map(|r| (r, String::new())).collect();
        let top_up = Deal {
            seed: 5,
            number: 1,
            overlap_share: 0.2,
            responses_per_rater: None,
            repeat_share: 0.0,
            new: &new,
            leftover: &[],
            earlier_overlap: &overlap,
        };
        let (new_overlap, added) = deal(&top_up, &mut seats);
        assert_eq!(new_overlap.len(), 4); // round(0.2 · 20)
        for (index, queue) in added.iter().enumerate().take(3) {
            assert!(queue.first_reads.iter().all(|r| !had[index].contains(r)));
            assert!(queue.first_reads.iter().all(|r| *r > 30));
        }
        // The joining rater reads the plan's overlap, old and new.
        for response in overlap.iter().chain(&new_overlap) {
            assert!(added[3].first_reads.contains(response), "{response}");
        }
        // The 16 new responses outside the overlap: the joining rater, with nothing dealt, is
        // dealt first until level with the others' 8 each (24 dealt at creation, 3 raters), the
        // remaining 8 go round the four raters.
        let dealt: Vec<usize> = added
            .iter()
            .map(|q| {
                q.first_reads
                    .iter()
                    .filter(|r| **r > 30 && !new_overlap.contains(r))
                    .count()
            })
            .collect();
        assert_eq!(dealt, [2, 2, 2, 10]);
    }
}
