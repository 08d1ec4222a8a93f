//! The bounded search for counterexamples: every schedule of up to K faults, drawn from the
//! scenario's own fault vocabulary, run breadth-first — fewer faults first, then earlier
//! steps — so the first schedule that breaks a property is a shortest one. Where nothing
//! breaks, the result is a claim a learner can repeat: "no schedule of ≤ K faults of these
//! kinds breaks P — N schedules checked".
//!
//! The space is fixed by the request, before anything runs:
//! - the **atoms**: one fault at one step — a pause of each candidate length, or a crash — on
//!   each participant that offers that fault, at every step of the undisturbed run;
//! - a **schedule** of k faults is a set of k atoms, and schedules are numbered level by level
//!   (0 faults, then 1, then 2…), each level in the lexicographic order of its atoms. That
//!   number is the schedule's identity: a shard runs the numbers `≡ I (mod N)`, and the
//!   merged answer (per property, the lowest number that breaks it) is the single run's.
//!
//! Pause lengths come from the scenario's timing parameters (TTL, heartbeat, renewal,
//! election timeout): half of each, a tenth short of it and a fifth past it, so a pause ends
//! well inside, just inside and just beyond each period. Everything here is deterministic; the threads that share the work are
//! the caller's (the command line's), since the simulator runs in the browser too.

use crate::kernel::faults::{Action, Fault, FaultKind, MAX_FAULT_MS};
use crate::kernel::ids::NodeId;
use crate::kernel::view::Holding;
use crate::properties::{PropertyKind, Verdict};
use crate::scenarios::{self, RunRequest, SimError};
use crate::trace::{EventKind, Trace};
use crate::{Limits, Recording};
use std::collections::BTreeMap;

/// The most faults one schedule may hold: beyond 3 the space outgrows any machine.
pub const MAX_SEARCH_FAULTS: u32 = 3;
/// The most schedules one search may hold (a guard against a space no run will finish).
pub const MAX_SCHEDULES: u64 = 50_000_000;

/// The kinds of fault a search places.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SearchKind {
    Pause,
    Crash,
}

impl SearchKind {
    pub fn code(self) -> &'static str {
        match self {
            SearchKind::Pause => "pause",
            SearchKind::Crash => "crash",
        }
    }

    pub fn from_code(code: &str) -> Option<SearchKind> {
        match code {
            "pause" => Some(SearchKind::Pause),
            "crash" => Some(SearchKind::Crash),
            _ => None,
        }
    }
}

/// What to search: the run to disturb, how many faults at most, of which kinds, and which
/// properties to check (empty: every always-property of the scenario).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchSpec {
    pub base: RunRequest,
    pub max_faults: u32,
    pub kinds: Vec<SearchKind>,
    pub properties: Vec<String>,
    /// Pause lengths to try; `None` derives them from the scenario's timing.
    pub pause_ms: Option<Vec<u64>>,
}

/// The space of schedules a spec describes.
#[derive(Clone, Debug)]
pub struct Space {
    pub spec: SearchSpec,
    /// Single faults, in the order schedules are numbered by.
    pub atoms: Vec<Action>,
    /// The always-properties checked.
    pub checked: Vec<String>,
    pub pause_ms: Vec<u64>,
    /// Steps of the undisturbed run: where a fault may be placed.
    pub steps: u32,
    /// How many schedules each level (0, 1, … K faults) holds.
    pub level_sizes: Vec<u64>,
    /// Per participant (by index), the steps of the undisturbed run it takes part in, with
    /// their times (µs): where a pause of it can change anything.
    busy: Vec<Vec<(u32, u64)>>,
    /// Each step's time in the undisturbed run (µs).
    step_us: Vec<u64>,
    /// The undisturbed run's broken properties: what a schedule that cannot differ from it
    /// breaks.
    undisturbed: Vec<(String, u32)>,
}

/// The first schedule (lowest number) that broke a property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub index: u64,
    pub faults: Vec<Action>,
    /// The step at which the property first broke.
    pub at_seq: u32,
}

/// What a search (or one part of it) ran and found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchReport {
    pub schedules: u64,
    pub events: u64,
    pub witnesses: BTreeMap<String, Witness>,
}

impl SearchReport {
    pub fn empty() -> SearchReport {
        SearchReport {
            schedules: 0,
            events: 0,
            witnesses: BTreeMap::new(),
        }
    }

    /// Adds another part's work: counts add up, and per property the lower-numbered
    /// witness wins, so merging parts in any order gives the single run's answer.
    pub fn absorb(&mut self, other: SearchReport) {
        self.schedules += other.schedules;
        self.events += other.events;
        for (name, w) in other.witnesses {
            match self.witnesses.get(&name) {
                Some(mine) if mine.index <= w.index => {}
                _ => {
                    self.witnesses.insert(name, w);
                }
            }
        }
    }
}

fn binomial(n: u64, k: u64) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * u128::from(n - i) / u128::from(i + 1);
    }
    r
}

/// The `rank`-th k-combination of `0..n` in lexicographic order (the combinatorial number
/// system), without listing the ones before it.
fn unrank(n: u64, k: usize, rank: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(k);
    let mut rank = u128::from(rank);
    let mut next = 0u64;
    for left in (1..=k as u64).rev() {
        while next < n {
            let with_this = binomial(n - next - 1, left - 1);
            next += 1;
            if rank < with_this {
                out.push(next - 1);
                break;
            }
            rank -= with_this;
        }
    }
    out
}

/// Half of each timing parameter, a tenth short of it and a fifth past it: the lengths a
/// pause is tried at.
fn timing_pauses(trace: &Trace) -> Vec<u64> {
    let timing = [
        "ttl",
        "timeout",
        "heartbeat",
        "renew",
        "lease",
        "lock_at",
        "watchdog",
        "session",
    ];
    let mut out: Vec<u64> = trace
        .params
        .iter()
        // `_ms` last, or before a bound (`election_timeout_ms_min`): without the bounds a Raft
        // search paused a leader only for fractions of a heartbeat, never long enough to be
        // deposed.
        .filter(|(k, _)| {
            (k.ends_with("_ms") || k.ends_with("_ms_min") || k.ends_with("_ms_max"))
                && timing.iter().any(|t| k.contains(t))
        })
        .filter_map(|(_, v)| v.parse::<u64>().ok())
        .filter(|v| *v > 0)
        .flat_map(|v| [v / 2, v - v / 10, v + v / 5])
        .filter(|v| (1..=MAX_FAULT_MS).contains(v))
        .collect();
    if out.is_empty() {
        out = vec![1_000, 10_000, 30_000];
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Parameters by which a scenario injects its story's own fault (its pause), and the value
/// that switches it off.
const STORY_FAULT_PARAMS: &[(&str, &str)] = &[("pause_ms", "0")];

/// The request with the story's own fault switched off, where the scenario injects it by a
/// parameter the user did not set, and what was switched: the search then asks whether the
/// design breaks under faults it places itself, not whether the story's fault breaks it. A
/// story whose fault is scripted or a choice keeps it (the search reports it as breaking
/// with no added fault).
pub fn without_story_faults(base: &RunRequest) -> Result<(RunRequest, Vec<String>), SimError> {
    let info = scenarios::find(&base.scenario)?.info();
    let mut request = base.clone();
    let mut switched = Vec::new();
    for (key, off) in STORY_FAULT_PARAMS {
        let offered = info.params.iter().any(|p| {
            p.key == *key
                && matches!(p.kind, crate::scenarios::ParamKind::Int { min, .. } if min.to_string() == *off)
        });
        if offered && !base.params.contains_key(*key) {
            request.params.insert(key.to_string(), off.to_string());
            switched.push(format!("{key}={off}"));
        }
    }
    Ok((request, switched))
}

impl Space {
    pub fn new(spec: SearchSpec) -> Result<Space, SimError> {
        if spec.max_faults > MAX_SEARCH_FAULTS {
            return Err(SimError::BadAction(format!(
                "--faults {} is more than {MAX_SEARCH_FAULTS}: the space would not finish",
                spec.max_faults
            )));
        }
        if spec.kinds.is_empty() {
            return Err(SimError::BadAction(
                "no fault kinds to search (pause, crash)".into(),
            ));
        }
        // With its lines: which participant takes part in which step, and when.
        let probe = scenarios::run(&spec.base, Limits::default(), Recording::Lines)?;
        for name in &spec.properties {
            if !probe
                .properties
                .iter()
                .any(|p| &p.name == name && p.kind == PropertyKind::Always)
            {
                let valid: Vec<&str> = probe
                    .properties
                    .iter()
                    .filter(|p| p.kind == PropertyKind::Always)
                    .map(|p| p.name.as_str())
                    .collect();
                return Err(SimError::BadAction(format!(
                    "scenario `{}` has no safety property `{name}`; its safety properties are: {}",
                    spec.base.scenario,
                    valid.join(", ")
                )));
            }
        }
        let checked: Vec<String> = probe
            .properties
            .iter()
            .filter(|p| p.kind == PropertyKind::Always)
            .filter(|p| spec.properties.is_empty() || spec.properties.contains(&p.name))
            .map(|p| p.name.clone())
            .collect();
        let pause_ms = match &spec.pause_ms {
            Some(list) => {
                if let Some(bad) = list.iter().find(|d| !(1..=MAX_FAULT_MS).contains(*d)) {
                    return Err(SimError::BadAction(format!(
                        "a pause of {bad} ms is outside 1..={MAX_FAULT_MS}"
                    )));
                }
                let mut list = list.clone();
                list.sort_unstable();
                list.dedup();
                list
            }
            None => timing_pauses(&probe),
        };
        let steps = u32::try_from(probe.event_count).unwrap_or(u32::MAX);
        let nodes = scenarios::participants(&spec.base)?;
        let mut atoms = Vec::new();
        for at_step in 0..steps {
            for node in &nodes {
                if spec.kinds.contains(&SearchKind::Pause) && node.faults.contains(&FaultKind::Pause) {
                    for &duration_ms in &pause_ms {
                        atoms.push(Action {
                            at_step,
                            fault: Fault::Pause {
                                node: node.id,
                                duration_ms,
                            },
                        });
                    }
                }
                if spec.kinds.contains(&SearchKind::Crash) && node.faults.contains(&FaultKind::Crash) {
                    atoms.push(Action {
                        at_step,
                        fault: Fault::Crash { node: node.id },
                    });
                }
            }
        }
        let a = atoms.len() as u64;
        let level_sizes: Vec<u64> = (0..=u64::from(spec.max_faults))
            .map(|k| u64::try_from(binomial(a, k)).unwrap_or(u64::MAX))
            .collect();
        let total = level_sizes.iter().fold(0u64, |t, n| t.saturating_add(*n));
        if total > MAX_SCHEDULES {
            return Err(SimError::BadAction(format!(
                "{total} schedules is more than the limit of {MAX_SCHEDULES}: use fewer faults, fewer kinds or fewer pause lengths"
            )));
        }
        let mut busy = vec![Vec::new(); nodes.len()];
        for e in &probe.entries {
            for n in &e.nodes {
                if let Some(list) = busy.get_mut(n.index()) {
                    list.push((e.seq, e.time_us));
                }
            }
        }
        let undisturbed = broken_in(&probe, &checked);
        Ok(Space {
            spec,
            atoms,
            checked,
            pause_ms,
            steps,
            level_sizes,
            busy,
            step_us: probe.entries.iter().map(|e| e.time_us).collect(),
            undisturbed,
        })
    }

    /// How many schedules the space holds.
    pub fn len(&self) -> u64 {
        self.level_sizes.iter().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The faults of schedule `index` (levels in order, each in lexicographic order).
    pub fn schedule(&self, mut index: u64) -> Vec<Action> {
        for (k, size) in self.level_sizes.iter().enumerate() {
            if index < *size {
                return unrank(self.atoms.len() as u64, k, index)
                    .into_iter()
                    .map(|i| self.atoms[i as usize].clone())
                    .collect();
            }
            index -= size;
        }
        Vec::new()
    }

    /// The request that runs schedule `faults` on top of the base's own actions.
    pub fn request(&self, faults: &[Action]) -> RunRequest {
        let mut request = self.spec.base.clone();
        request.actions.extend(faults.iter().cloned());
        request.actions.sort_by_key(|a| a.at_step);
        request
    }

    /// Runs one schedule: its events and the checked properties it broke, with the step. A
    /// schedule that cannot differ from the undisturbed run is not run (0 events): it breaks
    /// what that run breaks.
    pub fn evaluate(&self, faults: &[Action]) -> Result<(u64, Vec<(String, u32)>), SimError> {
        if let [only] = faults {
            if self.cannot_differ(only) {
                return Ok((0, self.undisturbed.clone()));
            }
        }
        let trace = scenarios::run(&self.request(faults), Limits::default(), Recording::Summary)?;
        Ok((trace.event_count, broken_in(&trace, &self.checked)))
    }

    /// Whether one fault, alone, cannot change the run: a pause in which its participant has
    /// nothing to do — no step of the undisturbed run that it takes part in (acts, receives,
    /// or sends what is delivered) falls between the pause's start and its end, inclusive.
    /// Nothing waits on it then, so nothing moves. Only for a schedule of one fault: after a
    /// first fault the run is no longer the undisturbed one this reads. Crashes always run
    /// (a crash is seen by others — a dropped connection frees its locks — even when the
    /// crashed node has nothing left to do).
    pub fn cannot_differ(&self, fault: &Action) -> bool {
        let Fault::Pause { node, duration_ms } = fault.fault else {
            return false;
        };
        let Some(busy) = self.busy.get(node.index()) else {
            return false;
        };
        // The fault is applied once `at_step` steps have run, at the time of the last of them.
        let start_us = match fault.at_step.checked_sub(1) {
            Some(last) => self.step_us.get(last as usize).copied().unwrap_or(u64::MAX),
            None => 0,
        };
        let end_us = start_us.saturating_add(duration_ms.saturating_mul(1_000));
        let next = busy.partition_point(|(seq, _)| *seq < fault.at_step);
        busy.get(next).is_none_or(|(_, at_us)| *at_us > end_us)
    }

    /// Runs every schedule whose number `keep` accepts, in order.
    pub fn run_part(
        &self,
        keep: impl Fn(u64) -> bool,
        mut progress: impl FnMut(),
    ) -> Result<SearchReport, SimError> {
        let mut report = SearchReport::empty();
        for index in (0..self.len()).filter(|i| keep(*i)) {
            let faults = self.schedule(index);
            let (events, broken) = self.evaluate(&faults)?;
            report.schedules += 1;
            report.events += events;
            for (name, at_seq) in broken {
                report.witnesses.entry(name).or_insert_with(|| Witness {
                    index,
                    faults: faults.clone(),
                    at_seq,
                });
            }
            progress();
        }
        Ok(report)
    }

    /// The witness made smaller where it still breaks `property`: each pause cut to the
    /// shortest length (to the millisecond, by halving) that still breaks it.
    pub fn shrink(&self, property: &str, witness: &Witness) -> Result<Witness, SimError> {
        let breaks = |faults: &[Action]| -> Result<Option<u32>, SimError> {
            let (_, broken) = self.evaluate(faults)?;
            Ok(broken.into_iter().find(|(n, _)| n == property).map(|(_, s)| s))
        };
        let mut faults = witness.faults.clone();
        let mut at_seq = witness.at_seq;
        for i in 0..faults.len() {
            let Fault::Pause { node, duration_ms } = faults[i].fault.clone() else {
                continue;
            };
            // The longest length known not to break it, and the shortest known to.
            let (mut lo, mut hi) = (0u64, duration_ms);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                faults[i].fault = Fault::Pause {
                    node,
                    duration_ms: mid,
                };
                if breaks(&faults)?.is_some() {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            faults[i].fault = Fault::Pause {
                node,
                duration_ms: hi,
            };
            if let Some(seq) = breaks(&faults)? {
                at_seq = seq;
            }
        }
        Ok(Witness {
            index: witness.index,
            faults,
            at_seq,
        })
    }
}

/// The checked always-properties a run broke, each with the step it first broke at.
fn broken_in(trace: &Trace, checked: &[String]) -> Vec<(String, u32)> {
    trace
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Violated && checked.contains(&p.name))
        .map(|p| (p.name.clone(), p.first_violation_seq.unwrap_or(0)))
        .collect()
}

/// The faults a space places, in words: `pauses of 5000, 27000 ms and crashes`.
pub fn vocabulary(space: &Space) -> String {
    let pauses: Vec<String> = space.pause_ms.iter().map(|p| p.to_string()).collect();
    space
        .spec
        .kinds
        .iter()
        .map(|k| match k {
            SearchKind::Pause => format!("pauses of {} ms", pauses.join(", ")),
            SearchKind::Crash => "crashes".to_string(),
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `1392` as `1,392`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Space {
    /// The bounded claim for a property no schedule broke — the words the command line and
    /// the player both print.
    pub fn claim(&self, property: &str, schedules: u64) -> String {
        format!(
            "{property}: no schedule of ≤ {} ({}, at any step) breaks it — {} schedules checked",
            plural(u64::from(self.spec.max_faults), "fault", "faults"),
            vocabulary(self),
            grouped(schedules)
        )
    }
}

/// What one part of a search in the browser came to. The player runs the search in a Web
/// Worker part by part — a part lasts as long as the worker's `more` says, about a tenth of a
/// second — so it can show progress and be cancelled between parts; messages both ways are
/// text ([`part_message`], [`PartReply::text`]), the one thing a worker passes cheaply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartReply {
    /// Schedules `0..done` of `total` ran and broke nothing: the next part starts at `done`.
    Progress { done: u64, total: u64 },
    /// A schedule broke `property` at step `at_seq`: the run to load (the story's own fault
    /// switched off and the shrunk witness's faults as its fault script), and why it broke
    /// ([`chain`]; worked out in the worker, so the page needs none of the search's code).
    Found {
        property: String,
        at_seq: u32,
        run: RunRequest,
        chain: Vec<(u32, String)>,
    },
    /// Every schedule ran and none broke anything: the bounded claims, one a property, after
    /// a line that says which of the story's own faults the search switched off, if any.
    Clean(Vec<String>),
    /// The search could not start (e.g. more schedules than the limit).
    Failed(String),
}

impl PartReply {
    pub fn text(&self) -> String {
        match self {
            PartReply::Progress { done, total } => format!("progress {done} {total}"),
            PartReply::Found {
                property,
                at_seq,
                run,
                chain,
            } => {
                let links: Vec<String> = chain
                    .iter()
                    .map(|(seq, line)| format!("\n{seq} {line}"))
                    .collect();
                format!("found {at_seq} {property}\n{}{}", run.to_line(), links.concat())
            }
            PartReply::Clean(claims) => format!("clean\n{}", claims.join("\n")),
            PartReply::Failed(why) => format!("failed\n{why}"),
        }
    }

    /// Reads [`PartReply::text`] back; anything else is a failure that says what came.
    pub fn parse(text: &str) -> PartReply {
        let (head, rest) = text.split_once('\n').unwrap_or((text, ""));
        let words: Vec<&str> = head.splitn(3, ' ').collect();
        let number = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        match words[0] {
            "progress" => {
                if let (Some(done), Some(total)) = (number(1), number(2)) {
                    return PartReply::Progress { done, total };
                }
            }
            "found" => {
                let mut lines = rest.lines();
                let run = RunRequest::parse_line(lines.next().unwrap_or_default());
                let chain: Option<Vec<(u32, String)>> = lines
                    .map(|l| {
                        let (seq, line) = l.split_once(' ')?;
                        Some((seq.parse().ok()?, line.to_string()))
                    })
                    .collect();
                if let (Some(at_seq), Some(property), Ok(run), Some(chain)) =
                    (number(1), words.get(2), run, chain)
                {
                    return PartReply::Found {
                        property: property.to_string(),
                        at_seq: u32::try_from(at_seq).unwrap_or(u32::MAX),
                        run,
                        chain,
                    };
                }
            }
            "clean" => return PartReply::Clean(rest.lines().map(str::to_string).collect()),
            "failed" => return PartReply::Failed(rest.to_string()),
            _ => {}
        }
        PartReply::Failed(format!("the search sent `{head}`"))
    }
}

/// The message that asks a worker for the part of a search starting at schedule `from`: up to
/// `max_faults` faults of `kinds`, placed on `base` (its own fault script left out). Its
/// parameters at their defaults are left out, as a link leaves them out, so that the story's
/// own fault is switched off as on the command line unless the learner changed it.
pub fn part_message(base: &RunRequest, max_faults: u32, kinds: &[SearchKind], from: u64) -> String {
    let specs = scenarios::find(&base.scenario)
        .map(|d| d.info().params)
        .unwrap_or_default();
    let at_default = |key: &str, value: &str| {
        specs
            .iter()
            .any(|s| s.key == key && s.default_given(&base.params) == value)
    };
    let base = RunRequest {
        params: base
            .params
            .iter()
            .filter(|(k, v)| !at_default(k, v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        actions: Vec::new(),
        ..base.clone()
    };
    let kinds: Vec<&str> = kinds.iter().map(|k| k.code()).collect();
    format!("{from} {max_faults} {} {}", kinds.join(","), base.to_line())
}

/// Runs the part of a search [`part_message`] asks for, while `more` says to go on (at least
/// one schedule), and stops at the first schedule that breaks a property, which it shrinks.
pub fn run_message(message: &str, mut more: impl FnMut() -> bool) -> PartReply {
    let mut words = message.splitn(4, ' ');
    let (Some(from), Some(max_faults), Some(kinds), Some(line)) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return PartReply::Failed(format!(
            "a search message reads `from faults kinds run`, not `{message}`"
        ));
    };
    let spec = (|| -> Result<(SearchSpec, Vec<String>, u64), String> {
        let base = RunRequest::parse_line(line)?;
        let (base, story_off) = without_story_faults(&base).map_err(|e| e.to_string())?;
        let kinds = kinds
            .split(',')
            .map(|k| {
                SearchKind::from_code(k).ok_or_else(|| format!("`{k}` is not a fault kind the search places"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let spec = SearchSpec {
            base,
            max_faults: max_faults
                .parse()
                .map_err(|_| format!("bad fault count `{max_faults}`"))?,
            kinds,
            properties: Vec::new(),
            pause_ms: None,
        };
        Ok((
            spec,
            story_off,
            from.parse().map_err(|_| format!("bad start `{from}`"))?,
        ))
    })();
    let (spec, story_off, from) = match spec {
        Ok(s) => s,
        Err(e) => return PartReply::Failed(e),
    };
    let space = match Space::new(spec) {
        Ok(s) => s,
        Err(e) => return PartReply::Failed(e.to_string()),
    };
    let total = space.len();
    let mut index = from;
    while index < total {
        let faults = space.schedule(index);
        let broken = match space.evaluate(&faults) {
            Ok((_, broken)) => broken,
            Err(e) => return PartReply::Failed(e.to_string()),
        };
        if let Some((property, at_seq)) = broken.into_iter().next() {
            let found = Witness {
                index,
                faults,
                at_seq,
            };
            let explained = space.shrink(&property, &found).and_then(|small| {
                let run = space.request(&small.faults);
                let trace = scenarios::run(&run, Limits::default(), Recording::Lines)?;
                Ok(PartReply::Found {
                    chain: chain(&trace, small.at_seq),
                    run,
                    property,
                    at_seq: small.at_seq,
                })
            });
            return explained.unwrap_or_else(|e| PartReply::Failed(e.to_string()));
        }
        index += 1;
        if !more() {
            break;
        }
    }
    if index < total {
        return PartReply::Progress { done: index, total };
    }
    let story = story_off
        .iter()
        .map(|s| format!("The story's own fault is off ({s}): the search placed every fault itself."));
    PartReply::Clean(
        story
            .chain(space.checked.iter().map(|name| space.claim(name, total)))
            .collect(),
    )
}

/// Why the property broke, as the chain of steps the violation depends on: the faults of the
/// schedule, the steps where someone came to hold or lost the lock (by the authority's
/// record or by its own belief), and the violating step — each in the causal past of the
/// violation (reached back through the messages it received and each node's earlier
/// steps). A trace without holdings (Raft) keeps the causal steps of the violating node
/// since the first fault instead.
pub fn chain(trace: &Trace, at_seq: u32) -> Vec<(u32, String)> {
    let Some(v) = trace.entries.iter().position(|e| e.seq == at_seq) else {
        return Vec::new();
    };
    let entries = &trace.entries;
    // The causal past: walk back through senders and each node's previous step.
    let mut past = vec![false; v + 1];
    let mut stack = vec![v];
    while let Some(i) = stack.pop() {
        if past[i] {
            continue;
        }
        past[i] = true;
        let e = &entries[i];
        if let Some(actor) = e.nodes.first() {
            if let Some(p) = (0..i).rev().find(|&j| entries[j].nodes.first() == Some(actor)) {
                stack.push(p);
            }
        }
        if let (EventKind::Deliver, Some(m)) = (e.kind, &e.message) {
            if let Some(s) = (0..i)
                .rev()
                .find(|&j| entries[j].time_us == m.sent_us && entries[j].nodes.first() == Some(&m.from))
            {
                stack.push(s);
            }
        }
    }
    let first_fault = entries
        .iter()
        .position(|e| {
            e.kind == EventKind::Fault && trace.actions.iter().any(|a| Some(&a.fault) == e.fault.as_ref())
        })
        .unwrap_or(0);
    let with_holdings = entries.iter().any(|e| !e.holdings.is_empty());
    let mut out = Vec::new();
    for i in first_fault..=v {
        let e = &entries[i];
        if !past[i] && e.kind != EventKind::Fault {
            continue;
        }
        let change = if i > 0 { holding_change(trace, i) } else { None };
        let keep = i == v
            || i == first_fault
            || (e.kind == EventKind::Fault && past[i])
            || change.is_some()
            || (!with_holdings && e.nodes.first() == entries[v].nodes.first());
        if !keep {
            continue;
        }
        let mut line = e.text.clone();
        if let Some(c) = change {
            line = format!("{line} — {c}");
        }
        out.push((e.seq, line));
    }
    // A long causal run of one node says little past its last few steps.
    if !with_holdings && out.len() > 8 {
        let head = out[0].clone();
        let tail = out.split_off(out.len() - 6);
        out = std::iter::once(head).chain(tail).collect();
    }
    out
}

fn holding_of(list: &[Holding], n: NodeId) -> Option<&Holding> {
    list.iter().find(|h| h.node == n)
}

/// What changed in who holds the lock at entry `i`, in words, if anything.
fn holding_change(trace: &Trace, i: usize) -> Option<String> {
    let before = &trace.entries[i - 1].holdings;
    let after = &trace.entries[i].holdings;
    let mut nodes: Vec<NodeId> = before.iter().chain(after).map(|h| h.node).collect();
    nodes.sort();
    nodes.dedup();
    let mut said = Vec::new();
    for n in nodes {
        let (b, a) = (holding_of(before, n), holding_of(after, n));
        let (bg, ag) = (b.is_some_and(|h| h.granted), a.is_some_and(|h| h.granted));
        let (bb, ab) = (b.is_some_and(|h| h.believes), a.is_some_and(|h| h.believes));
        let name = trace.node_name(n);
        if !bg && ag {
            said.push(format!("the record now names {name} the holder"));
        }
        if bg && !ag {
            said.push(format!("the record no longer names {name}"));
        }
        if !bb && ab {
            said.push(format!("{name} believes it holds the lock"));
        }
        if bb && !ab {
            said.push(format!("{name} no longer believes it holds it"));
        }
    }
    (!said.is_empty()).then(|| said.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn combos(start: u64, n: u64, k: u64, cur: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
        if k == 0 {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            combos(i + 1, n, k - 1, cur, out);
            cur.pop();
        }
    }

    #[test]
    fn unranking_gives_every_combination_once_in_lexicographic_order() {
        for n in [1u64, 5, 9] {
            for k in 0..=3usize {
                let mut expected = Vec::new();
                combos(0, n, k as u64, &mut Vec::new(), &mut expected);
                let count = binomial(n, k as u64) as u64;
                assert_eq!(count as usize, expected.len(), "C({n}, {k})");
                let got: Vec<Vec<u64>> = (0..count).map(|r| unrank(n, k, r)).collect();
                assert_eq!(got, expected, "n = {n}, k = {k}");
            }
        }
    }
}
