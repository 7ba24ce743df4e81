//! The development/test split of the clinician-rated items a grader prompt is tuned on.
//!
//! A study lead revises a grader's prompt while looking at its agreement on the development
//! items; the test items are judged only when a version is confirmed, so iterating cannot
//! quietly fit them. The split is by **whole cases**: the items of one case share its images,
//! its difficulty and the clinicians' reading of it, so a case with items on both sides would let
//! the prompt learn on the test part through its siblings (issue 33). Cases are stratified by
//! their stratum (the disease group): within each, a new case goes to the part holding fewer
//! cases of that stratum, a tie by a seeded hash of the case id, so both parts see every disease
//! group the study has.
//!
//! A case once placed never moves, and neither do its items: items rated later join their case's
//! part. A case a split made before 2026-11-28 halved keeps its items where they are; its new
//! items join the part holding more of them (the test part on a tie), so that no new item of it
//! is developed on beside a test sibling it did not have before.

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Development,
    Test,
}

impl Part {
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Development => "development",
            Part::Test => "test",
        }
    }

    pub fn parse(text: &str) -> Option<Part> {
        match text {
            "development" => Some(Part::Development),
            "test" => Some(Part::Test),
            _ => None,
        }
    }
}

/// An item to place, its case, and the stratum its case is balanced within.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitItem {
    pub item: String,
    pub case: String,
    /// The case's disease group (any label that should be balanced across the parts).
    pub stratum: String,
}

/// Places the items of `new` that `placed` does not hold yet; returns only those new placements.
///
/// An item of a placed case joins its case's part. Unplaced cases are taken in the order of a
/// seeded hash of their id (so the order does not depend on how the caller listed them) and each
/// goes into the part holding fewer cases of its stratum; a tie goes by the hash's top bit. The
/// same seed and items give the same split on every machine.
pub fn place_new_items(
    seed: u64,
    placed: &[(SplitItem, Part)],
    new: &[SplitItem],
) -> BTreeMap<String, Part> {
    // Items per part of each placed case, and placed cases per part of each stratum.
    let mut case_items: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for (item, part) in placed {
        case_items.entry(&item.case).or_default()[*part as usize] += 1;
    }
    let case_part = |counts: &[usize; 2]| {
        if counts[0] > counts[1] {
            Part::Development
        } else {
            Part::Test
        }
    };
    let mut part_of_case: BTreeMap<&str, Part> = case_items
        .iter()
        .map(|(case, counts)| (*case, case_part(counts)))
        .collect();
    let mut stratum_cases: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    let mut counted = std::collections::BTreeSet::new();
    for (item, _) in placed {
        if counted.insert(item.case.as_str()) {
            stratum_cases.entry(&item.stratum).or_default()
                [part_of_case[item.case.as_str()] as usize] += 1;
        }
    }
    let known: std::collections::BTreeSet<&str> =
        placed.iter().map(|(i, _)| i.item.as_str()).collect();
    let mut waiting: Vec<(u64, &str, &str)> = new
        .iter()
        .filter(|i| !part_of_case.contains_key(i.case.as_str()))
        .map(|i| {
            (
                item_hash(seed, &i.case),
                i.case.as_str(),
                i.stratum.as_str(),
            )
        })
        .collect();
    waiting.sort();
    waiting.dedup_by(|a, b| a.1 == b.1);
    for (hash, case, stratum) in waiting {
        let count = stratum_cases.entry(stratum).or_default();
        let part = match count[0].cmp(&count[1]) {
            std::cmp::Ordering::Less => Part::Development,
            std::cmp::Ordering::Greater => Part::Test,
            std::cmp::Ordering::Equal if hash >> 63 == 0 => Part::Development,
            std::cmp::Ordering::Equal => Part::Test,
        };
        count[part as usize] += 1;
        part_of_case.insert(case, part);
    }
    new.iter()
        .filter(|i| !known.contains(i.item.as_str()))
        .map(|i| (i.item.clone(), part_of_case[i.case.as_str()]))
        .collect()
}

/// FNV-1a over the seed's and the id's bytes, finished with SplitMix64's mixer: stable across
/// platforms and Rust versions, which `std`'s hasher does not promise.
fn item_hash(seed: u64, item: &str) -> u64 {
    seeded::mix(seeded::fnv1a(
        seed.to_le_bytes().iter().chain(item.as_bytes()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(case, stratum, items)`.
    fn items(spec: &[(&str, &str, usize)]) -> Vec<SplitItem> {
        spec.iter()
            .flat_map(|&(case, stratum, n)| {
                (0..n).map(move |i| SplitItem {
                    item: format!("{case}/t{i}/m/0"),
                    case: case.to_owned(),
                    stratum: stratum.to_owned(),
                })
            })
            .collect()
    }

    fn parts_of(split: &BTreeMap<String, Part>, case: &str) -> Vec<Part> {
        let mut parts: Vec<Part> = split
            .iter()
            .filter(|(i, _)| i.starts_with(&format!("{case}/")))
            .map(|(_, p)| *p)
            .collect();
        parts.dedup();
        parts
    }

    #[test]
    fn whole_cases_go_to_one_part_balanced_within_each_disease_group() {
        let all = items(&[
            ("a", "stroke", 4),
            ("b", "stroke", 3),
            ("c", "stroke", 1),
            ("d", "stroke", 10),
            ("e", "ms", 2),
            ("f", "ms", 5),
            ("g", "tumour", 3),
        ]);
        let split = place_new_items(7, &[], &all);
        assert_eq!(split.len(), 28);
        for case in ["a", "b", "c", "d", "e", "f", "g"] {
            assert_eq!(
                parts_of(&split, case).len(),
                1,
                "case {case} is not divided"
            );
        }
        let in_part = |cases: &[&str], part| {
            cases
                .iter()
                .filter(|c| parts_of(&split, c) == [part])
                .count()
        };
        assert_eq!(in_part(&["a", "b", "c", "d"], Part::Test), 2);
        assert_eq!(in_part(&["e", "f"], Part::Test), 1);
    }

    #[test]
    fn the_seed_fixes_the_split_whatever_the_listing_order() {
        let all = items(&[("a", "s", 6), ("b", "s", 5), ("c", "t", 2), ("d", "t", 2)]);
        let mut reversed = all.clone();
        reversed.reverse();
        let first = place_new_items(42, &[], &all);
        assert_eq!(first, place_new_items(42, &[], &reversed));
        let others: Vec<_> = (0..20)
            .map(|seed| place_new_items(seed, &[], &all))
            .collect();
        assert!(
            others.iter().any(|o| *o != first),
            "another seed gives another split"
        );
    }

    #[test]
    fn placed_items_never_move_and_late_items_join_their_case() {
        let first = items(&[("a", "s", 3), ("b", "s", 1)]);
        let placed = place_new_items(1, &[], &first);
        let as_placed: Vec<(SplitItem, Part)> =
            first.iter().map(|i| (i.clone(), placed[&i.item])).collect();
        let later = items(&[("a", "s", 6), ("b", "s", 2), ("c", "s", 2)]);
        let added = place_new_items(1, &as_placed, &later);
        assert_eq!(added.len(), 6, "only the new items are placed");
        assert!(added.keys().all(|i| !placed.contains_key(i)));
        let mut all = placed.clone();
        all.extend(added);
        for case in ["a", "b", "c"] {
            assert_eq!(parts_of(&all, case).len(), 1, "case {case} is not divided");
        }
        assert_eq!(parts_of(&all, "a"), parts_of(&placed, "a"));
    }

    #[test]
    fn a_case_halved_by_an_older_split_keeps_its_items_and_adds_to_its_larger_part() {
        let old = items(&[("a", "s", 4)]);
        let placed: Vec<(SplitItem, Part)> = old
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let part = if i == 0 {
                    Part::Development
                } else {
                    Part::Test
                };
                (item.clone(), part)
            })
            .collect();
        let added = place_new_items(3, &placed, &items(&[("a", "s", 6)]));
        assert_eq!(added.len(), 2);
        assert!(added.values().all(|p| *p == Part::Test));
    }

    #[test]
    fn the_hash_is_the_documented_one() {
        // Pinned so that a split made on one machine is the split made on another; the value
        // is FNV-1a then SplitMix64's finaliser computed in Python (arbitrary-precision ints
        // masked to 64 bits), not by this code.
        assert_eq!(item_hash(7, "ms-01/dx/vlm-a/0"), 0xb54d_a809_568e_7a32);
    }
}
