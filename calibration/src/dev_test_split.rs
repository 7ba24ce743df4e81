//! The development/test split of the clinician-rated items a grader prompt is tuned on.
//!
//! A study lead revises a grader's prompt while looking at its agreement on the development
//! items; the test items are judged only when a version is confirmed, so iterating cannot
//! quietly fit them. The split is stratified by case: each case puts half of its items (the odd
//! one by the seed) into each part, so both parts see every case, disease group and modality the
//! study has.
//!
//! An item once placed never moves: items rated later are placed among their case's existing
//! ones (into the part that case has fewer of), so a test item can never become a development
//! item because more ratings arrived.

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

/// An item to place, and the case whose items it is stratified with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitItem {
    pub item: String,
    pub case: String,
}

/// Places the items of `new` that `placed` does not hold yet; returns only those new placements.
///
/// Within a case, unplaced items are taken in the order of a seeded hash of their id (so the
/// order does not depend on how the caller listed them) and each goes into the part the case
/// has fewer items in; a tie goes by the hash's top bit. The same seed and items give the same
/// split on every machine.
pub fn place_new_items(
    seed: u64,
    placed: &[(SplitItem, Part)],
    new: &[SplitItem],
) -> BTreeMap<String, Part> {
    let mut counts: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for (item, part) in placed {
        counts.entry(&item.case).or_default()[*part as usize] += 1;
    }
    let known: std::collections::BTreeSet<&str> =
        placed.iter().map(|(i, _)| i.item.as_str()).collect();
    let mut waiting: Vec<(&str, u64, &str)> = new
        .iter()
        .filter(|i| !known.contains(i.item.as_str()))
        .map(|i| (i.case.as_str(), item_hash(seed, &i.item), i.item.as_str()))
        .collect();
    waiting.sort();
    waiting.dedup_by(|a, b| a.2 == b.2);
    let mut placements = BTreeMap::new();
    for (case, hash, item) in waiting {
        let count = counts.entry(case).or_default();
        let part = match count[0].cmp(&count[1]) {
            std::cmp::Ordering::Less => Part::Development,
            std::cmp::Ordering::Greater => Part::Test,
            std::cmp::Ordering::Equal if hash >> 63 == 0 => Part::Development,
            std::cmp::Ordering::Equal => Part::Test,
        };
        count[part as usize] += 1;
        placements.insert(item.to_owned(), part);
    }
    placements
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

    fn items(spec: &[(&str, usize)]) -> Vec<SplitItem> {
        spec.iter()
            .flat_map(|&(case, n)| {
                (0..n).map(move |i| SplitItem {
                    item: format!("{case}/t{i}/m/0"),
                    case: case.to_owned(),
                })
            })
            .collect()
    }

    fn counts(split: &BTreeMap<String, Part>, case: &str) -> (usize, usize) {
        let of = |p| {
            split
                .iter()
                .filter(|(i, part)| i.starts_with(&format!("{case}/")) && **part == p)
                .count()
        };
        (of(Part::Development), of(Part::Test))
    }

    #[test]
    fn each_case_is_halved_the_odd_item_by_the_seed() {
        let all = items(&[("a", 4), ("b", 3), ("c", 1), ("d", 10)]);
        let split = place_new_items(7, &[], &all);
        assert_eq!(split.len(), 18);
        for (case, n) in [("a", 4), ("b", 3), ("c", 1), ("d", 10)] {
            let (dev, test) = counts(&split, case);
            assert_eq!(dev + test, n, "{case}");
            assert!(dev.abs_diff(test) <= 1, "{case}: {dev} vs {test}");
        }
    }

    #[test]
    fn the_seed_fixes_the_split_whatever_the_listing_order() {
        let all = items(&[("a", 6), ("b", 5)]);
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
    fn placed_items_never_move_and_late_items_rebalance_their_case() {
        let first = items(&[("a", 3)]);
        let placed = place_new_items(1, &[], &first);
        let as_placed: Vec<(SplitItem, Part)> =
            first.iter().map(|i| (i.clone(), placed[&i.item])).collect();
        let later = items(&[("a", 6)]);
        let added = place_new_items(1, &as_placed, &later);
        assert_eq!(added.len(), 3, "only the three new items are placed");
        assert!(added.keys().all(|i| !placed.contains_key(i)));
        let mut all = placed.clone();
        all.extend(added);
        assert_eq!(counts(&all, "a"), (3, 3));
    }

    #[test]
    fn the_hash_is_the_documented_one() {
        // Pinned so that a split made on one machine is the split made on another; the value
        // is FNV-1a then SplitMix64's finaliser computed in Python (arbitrary-precision ints
        // masked to 64 bits), not by this code.
        assert_eq!(item_hash(7, "ms-01/dx/vlm-a/0"), 0xb54d_a809_568e_7a32);
    }
}
