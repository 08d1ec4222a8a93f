//! Small ordered collections for simulation state.
//!
//! Simulation state needs ordered collections (iteration order must be the same on every run
//! and target), and its maps are small: a handful of nodes, a log of tens of entries, the
//! messages in flight. [`VecMap`] and [`VecSet`] keep their items in a sorted `Vec`, so they
//! iterate in key order exactly like `BTreeMap`/`BTreeSet`, are faster at these sizes, and
//! cost a fraction of the code: every `BTreeMap<K, V>` type instantiates the B-tree's node
//! handling anew, which made up a sixth of the browser bundle. [`sort_by_key`] is a stable
//! insertion sort for the same reason (the standard library's sort is large per call site).

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;

/// A map kept as a `Vec` sorted by key: `BTreeMap`'s order and semantics for small maps.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VecMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { items: Vec::new() }
    }
}

impl<K: Ord, V> VecMap<K, V> {
    pub const fn new() -> Self {
        VecMap { items: Vec::new() }
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.items.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// Inserts or replaces; returns the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.items[i].1, value)),
            Err(i) => {
                self.items.insert(i, (key, value));
                None
            }
        }
    }

    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.items[i].1)
    }

    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(move |i| &mut self.items[i].1)
    }

    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.items.remove(i).1)
    }

    /// The value at `key`, inserted with `make` first if absent.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (key, make()));
                i
            }
        };
        &mut self.items[i].1
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.items.retain_mut(|(k, v)| keep(k, v));
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.items.iter().map(|(k, v)| (k, v))
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> + ExactSizeIterator {
        self.items.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.items.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.items.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.items.iter_mut().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.items.first().map(|(k, v)| (k, v))
    }

    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.items.last().map(|(k, v)| (k, v))
    }

    /// The keys in order, consuming the map.
    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        self.items.into_iter().map(|(k, _)| k)
    }

    /// Entries whose key is at least `from`, in key order.
    pub fn iter_from<Q: Ord + ?Sized>(&self, from: &Q) -> impl DoubleEndedIterator<Item = (&K, &V)>
    where
        K: Borrow<Q>,
    {
        let start = self.find(from).unwrap_or_else(|i| i);
        self.items[start..].iter().map(|(k, v)| (k, v))
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = VecMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter().map(|(k, v)| (k, v))
    }
}

/// Like `BTreeMap`'s: the entries in key order, after their keys.
impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(entries: [(K, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

/// `map[&key]`: the value at `key`; panics if there is none, like `BTreeMap`'s.
impl<K: Ord + Borrow<Q>, Q: Ord + ?Sized, V> std::ops::Index<&Q> for VecMap<K, V> {
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

/// Printed like `BTreeMap`: `{k: v, ...}`.
impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.items.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

/// Serialised as a map, like `BTreeMap` (so traces keep their JSON form).
impl<K: Serialize, V: Serialize> Serialize for VecMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.items.iter().map(|(k, v)| (k, v)))
    }
}

/// Read from a map, like `BTreeMap`: a later duplicate key replaces an earlier one.
impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Deserialize<'de> for VecMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Visitor<'de> for Entries<K, V> {
            type Value = VecMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut map = VecMap::new();
                while let Some((k, v)) = access.next_entry()? {
                    map.insert(k, v);
                }
                Ok(map)
            }
        }
        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A set kept as a sorted `Vec`: `BTreeSet`'s order and semantics for small sets.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VecSet<T> {
    items: Vec<T>,
}

impl<T> Default for VecSet<T> {
    fn default() -> Self {
        VecSet { items: Vec::new() }
    }
}

impl<T: Ord> VecSet<T> {
    pub const fn new() -> Self {
        VecSet { items: Vec::new() }
    }

    /// Adds `item`; `false` if it was there already.
    pub fn insert(&mut self, item: T) -> bool {
        match self.items.binary_search(&item) {
            Ok(_) => false,
            Err(i) => {
                self.items.insert(i, item);
                true
            }
        }
    }

    pub fn contains<Q: Ord + ?Sized>(&self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.items.binary_search_by(|t| t.borrow().cmp(item)).is_ok()
    }

    pub fn remove<Q: Ord + ?Sized>(&mut self, item: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        match self.items.binary_search_by(|t| t.borrow().cmp(item)) {
            Ok(i) => {
                self.items.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.items.retain(keep);
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }
}

/// The items in order, read as a slice (`len`, `is_empty`, `iter`, `first`, `last`, …). Only
/// reading: the set's own methods keep it sorted and free of repeats.
impl<T> std::ops::Deref for VecSet<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T: Ord> FromIterator<T> for VecSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut set = VecSet::new();
        for t in iter {
            set.insert(t);
        }
        set
    }
}

impl<T: Ord> Extend<T> for VecSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for t in iter {
            self.insert(t);
        }
    }
}

impl<T> IntoIterator for VecSet<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a VecSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<T: Ord, const N: usize> From<[T; N]> for VecSet<T> {
    fn from(items: [T; N]) -> Self {
        items.into_iter().collect()
    }
}

/// Printed like `BTreeSet`: `{a, b, ...}`.
impl<T: fmt::Debug> fmt::Debug for VecSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.items.iter()).finish()
    }
}

/// Serialised as a sequence, like `BTreeSet`.
impl<T: Serialize> Serialize for VecSet<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.items.iter())
    }
}

/// Sorts by `key`, keeping equal items in their order (like `slice::sort_by_key`), by
/// insertion: quadratic, so only for the short lists simulation state holds, and a few
/// hundred bytes of code where the standard sort costs kilobytes per call site.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && key(&items[j - 1]) > key(&items[j]) {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// [`sort_by_key`] by the items themselves.
pub fn sort<T: Ord>(items: &mut [T]) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && items[j - 1] > items[j] {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A seeded walk of inserts, removals and lookups gives the same answers and the same
    /// order as the standard B-tree collections.
    #[test]
    fn behaves_like_the_btree_collections() {
        let mut ours: VecMap<u32, u32> = VecMap::new();
        let mut theirs: BTreeMap<u32, u32> = BTreeMap::new();
        let mut set: VecSet<u32> = VecSet::new();
        let mut bset: BTreeSet<u32> = BTreeSet::new();
        let mut x: u32 = 12_345;
        for step in 0..5_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let key = (x >> 16) % 64;
            match step % 5 {
                0 | 1 => {
                    assert_eq!(ours.insert(key, step), theirs.insert(key, step));
                    assert_eq!(set.insert(key), bset.insert(key));
                }
                2 => {
                    assert_eq!(ours.remove(&key), theirs.remove(&key));
                    assert_eq!(set.remove(&key), bset.remove(&key));
                }
                3 => *ours.get_or_insert_with(key, || 7) += 1,
                _ => {
                    assert_eq!(ours.get(&key), theirs.get(&key));
                    assert_eq!(set.contains(&key), bset.contains(&key));
                }
            }
            if step % 5 == 3 {
                *theirs.entry(key).or_insert(7) += 1;
            }
        }
        assert!(ours.iter().eq(theirs.iter()));
        assert!(set.iter().eq(bset.iter()));
        assert!(ours.iter_from(&30).eq(theirs.range(30..)));
    }

    /// A map is written and read back as the same JSON as a `BTreeMap` (a run's parameters
    /// are one, in every trace file); a repeated key read back keeps the last value.
    #[test]
    fn json_matches_the_btree_map() {
        let pairs = [
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "1".to_string()),
        ];
        let ours = VecMap::from(pairs.clone());
        let theirs = BTreeMap::from(pairs);
        let text = serde_json::to_string(&ours).unwrap();
        assert_eq!(text, serde_json::to_string(&theirs).unwrap());
        assert_eq!(
            serde_json::from_str::<VecMap<String, String>>(&text).unwrap(),
            ours
        );
        let repeated: VecMap<String, u32> = serde_json::from_str(r#"{"k":1,"a":0,"k":2}"#).unwrap();
        let btree: BTreeMap<String, u32> = serde_json::from_str(r#"{"k":1,"a":0,"k":2}"#).unwrap();
        assert!(repeated.iter().eq(btree.iter()));
    }

    /// Construction from arrays (a repeated key: the last value wins), indexing, consuming
    /// the keys and `{:?}` match the standard collections.
    #[test]
    fn the_helpers_match_the_btree_collections() {
        let pairs = [(3, "c"), (1, "a"), (2, "b"), (1, "z")];
        let ours = VecMap::from(pairs);
        let theirs = BTreeMap::from(pairs);
        assert!(ours.iter().eq(theirs.iter()));
        assert_eq!(ours[&1], theirs[&1]);
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
        assert!(ours.clone().into_keys().eq(theirs.clone().into_keys()));
        let names: VecMap<String, u32> = VecMap::from([("b".to_string(), 2), ("a".to_string(), 1)]);
        assert_eq!(names["a"], 1);
        let set = VecSet::from([5, 1, 3, 1]);
        let bset = BTreeSet::from([5, 1, 3, 1]);
        assert!(set.iter().eq(bset.iter()));
        assert_eq!(format!("{set:?}"), format!("{bset:?}"));
        let empty: VecSet<u8> = VecSet::new();
        assert_eq!(format!("{empty:?}"), format!("{:?}", BTreeSet::<u8>::new()));
    }

    #[test]
    #[should_panic(expected = "no entry found for key")]
    fn indexing_a_missing_key_panics_like_btree_map() {
        let map: VecMap<u32, u32> = VecMap::from([(1, 1)]);
        let _ = map[&2];
    }

    #[test]
    fn sorting_is_stable_like_the_standard_sort() {
        let mut ours: Vec<(u32, u32)> = (0..200).map(|i| ((i * 7919) % 13, i)).collect();
        let mut theirs = ours.clone();
        sort_by_key(&mut ours, |p| p.0);
        theirs.sort_by_key(|p| p.0);
        assert_eq!(ours, theirs);
        let mut plain: Vec<u32> = (0..100).map(|i| (i * 37) % 17).collect();
        let mut want = plain.clone();
        sort(&mut plain);
        want.sort();
        assert_eq!(plain, want);
    }
}
