//! The scenario library: each scenario is data (id, chapter, parameters, expected outcome)
//! plus a builder that sets up participants for the kernel. This module is the registry and
//! the validation of everything a user can type. The stories live in one folder per chapter
//! of the course (`ch1_locks` … `ch6_lock_services`), each file a scenario or its beats; the
//! files here are what several chapters share: parameter builders (`common`), the lease
//! family's plan and world (`lease_setup`, `lease_world`, `lease_table_beats`, `fence_world`),
//! the Raft builders and checks, the property library and the bundle layout.

pub mod ch1_locks;
pub mod ch2_leases;
pub mod ch3_late_holders;
pub mod ch4_fencing;
pub mod ch5_consensus;
pub mod ch6_lock_services;
pub mod common;
pub mod fence_world;
pub mod lease_setup;
mod lease_table_beats;
pub mod lease_world;
pub mod property_library;
pub mod raft_common;
mod raft_log_checks;
pub mod raft_world;
mod site_bundles;
pub use site_bundles::{site_bundles, SiteBundle, SiteLayout};

use crate::kernel::engine::{Engine, Limits, Recording};
use crate::kernel::faults::Action;
use crate::kernel::setup::Setup;
use crate::properties::Verdict;
use crate::trace::Trace;
use crate::trace::{NodeInfo, Snapshot};
use serde::Serialize;
use std::fmt;
use std::rc::Rc;

/// Parameter values by key, after validation every key of the scenario is present.
pub type Params = crate::kernel::collections::VecMap<String, String>;

/// A chapter of the curriculum; the library page groups scenarios by it, and the course walks
/// the chapters in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Chapter {
    pub number: u8,
    pub title: &'static str,
}

/// What the course says at a chapter's start and end, apart from [`Chapter`] so that the
/// library's bundle, which lists chapters, does not carry the player's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChapterNotes {
    pub number: u8,
    /// What goes wrong and what the chapter's runs show, in two to four sentences.
    pub intro: &'static str,
    /// The rules of thumb the chapter's runs teach (the choosing page lists them all).
    pub rules: &'static [&'static str],
}

pub const CHAPTERS: &[Chapter] = &[
    Chapter {
        number: 1,
        title: "Locks and lost updates",
    },
    Chapter {
        number: 2,
        title: "Leases: a lock across machines",
    },
    Chapter {
        number: 3,
        title: "When the holder is alive but late",
    },
    Chapter {
        number: 4,
        title: "Fencing tokens",
    },
    Chapter {
        number: 5,
        title: "Consensus: one authority on many machines",
    },
    Chapter {
        number: 6,
        title: "Real lock services",
    },
];

/// Each chapter's introduction and rules, for the course in the player.
pub const CHAPTER_NOTES: &[ChapterNotes] = &[
    ChapterNotes {
        number: 1,
        intro: "Two workers that read, change and write the same row can erase each other's work. Inside one database a lock fixes this cheaply: one lock manager, a connection that shows the holder is alive, and release on commit. You will see updates vanish, then watch row locks, advisory locks, queues and deadlocks do their job.",
        rules: &[
            "Lock the smallest thing: one row or one job key, never everything.",
            "Take several locks in one fixed order, or take only one.",
        ],
    },
    ChapterNotes {
        number: 2,
        intro: "Across machines there is no connection that dies with the holder, so a lock needs an expiry: it becomes a lease. You will see a scheduled job run twice, a lease row go through its whole life, a careless release free someone else's lease, and cases where no lease is needed at all.",
        rules: &[
            "Keep the lease in one store that every worker asks.",
            "Release only your own lease, checking the owner in the same statement.",
            "If the job is one guarded write, a unique key or a conditional update can replace the lease.",
        ],
    },
    ChapterNotes {
        number: 3,
        intro: "A paused or slow holder looks exactly like a dead one, so its lease expires while it still works. You will watch a frozen worker wake up and write after someone else took over, a clock step stretch a lease, waiters stampede, and a slow network call outlive the lock.",
        rules: &[
            "Set the lease against the worst pause you expect, and leave a margin.",
            "Do not hold a lock across a network call.",
            "Add jitter to retries.",
        ],
    },
    ChapterNotes {
        number: 4,
        intro: "The fix for a late holder is to check at the place the write lands: every grant carries a number that only goes up, and the resource refuses anything older than it has seen. You will see which numbers work as fences, where stores get them, and what to do when a resource cannot check one.",
        rules: &[
            "Take the token from the store that grants the lease, in the same operation.",
            "Compare the token in the write itself, on every write of the job.",
            "Where nothing can check a token, use an idempotency key.",
        ],
    },
    ChapterNotes {
        number: 5,
        intro: "A lock service on one machine stops everything when it dies; on several machines, they must agree on who holds what. Raft does this with elected leaders, terms and a log committed on a majority. You will see elections, split votes, replication, partitions and a storm of faults that never breaks the safety checks.",
        rules: &[
            "A cluster of N servers survives ⌊(N−1)/2⌋ failures.",
            "Use a consensus store for small, critical state such as who holds a lease.",
        ],
    },
    ChapterNotes {
        number: 6,
        intro: "The lock services you can deploy differ in what sits underneath: a consensus protocol, or a single primary that can lose a grant. You will compare ZooKeeper, etcd, Redis, Redlock, Redisson, ShedLock, Chubby and Hazelcast under the same kinds of faults.",
        rules: &[
            "When a lease must survive a node failure, keep it in a consensus store.",
            "Prefer a service that hands out a fencing token with the lock.",
            "Test the ugly case: pause the holder past its lease and check its writes are refused.",
        ],
    },
];

/// What a scenario teaches in the course, kept in its module beside its info: two or three
/// objectives and one question. Only the bundle that runs the scenario carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CourseNotes {
    pub objectives: &'static [&'static str],
    pub question: CheckQuestion,
}

/// A multiple-choice question with one right answer and why it is right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckQuestion {
    pub prompt: &'static str,
    pub answers: &'static [&'static str],
    pub correct: usize,
    pub why: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChoiceOption {
    pub value: &'static str,
    pub label: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ParamKind {
    Choice { options: Vec<ChoiceOption> },
    Int { min: i64, max: i64, unit: &'static str },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamSpec {
    pub key: &'static str,
    pub label: &'static str,
    pub help: &'static str,
    pub default: &'static str,
    pub kind: ParamKind,
    /// Defaults that depend on a variant, so that picking the variant shows its story
    /// without further settings. The first whose condition holds wins over `default`.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub variant_defaults: &'static [VariantDefault],
}

/// While choice parameter `when.0` has value `when.1`, a parameter defaults to `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct VariantDefault {
    pub when: (&'static str, &'static str),
    pub value: &'static str,
}

impl ParamSpec {
    /// A parameter with one default whatever the variant.
    pub const fn new(
        key: &'static str,
        label: &'static str,
        help: &'static str,
        default: &'static str,
        kind: ParamKind,
    ) -> Self {
        ParamSpec {
            key,
            label,
            help,
            default,
            kind,
            variant_defaults: &[],
        }
    }

    /// This parameter's default alongside the other parameters `params`.
    pub fn default_given(&self, params: &Params) -> &'static str {
        self.variant_defaults
            .iter()
            .find(|d| params.get(d.when.0).is_some_and(|v| v == d.when.1))
            .map_or(self.default, |d| d.value)
    }

    fn is_choice(&self) -> bool {
        matches!(self.kind, ParamKind::Choice { .. })
    }

    /// The allowed values in words, for error messages and `describe`.
    pub fn allowed(&self) -> String {
        match &self.kind {
            ParamKind::Choice { options } => options.iter().map(|o| o.value).collect::<Vec<_>>().join(", "),
            ParamKind::Int { min, max, unit } => {
                format!("an integer {min}..={max} {unit}").trim_end().to_string()
            }
        }
    }

    fn validate(&self, value: &str) -> Result<(), String> {
        let ok = match &self.kind {
            ParamKind::Choice { options } => options.iter().any(|o| o.value == value),
            ParamKind::Int { min, max, .. } => value.parse::<i64>().is_ok_and(|v| (*min..=*max).contains(&v)),
        };
        if ok {
            Ok(())
        } else {
            Err(self.allowed())
        }
    }
}

/// What a scenario's module says of it for the library: all of [`ScenarioInfo`] but the id and
/// chapter: the module states its `ID`, its folder the `CHAPTER`, and the registry adds both.
pub struct Listing {
    /// Curriculum sections it teaches, e.g. "§1–2".
    pub sections: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioInfo {
    pub id: &'static str,
    pub chapter: u8,
    /// Curriculum sections it teaches, e.g. "§1–2".
    pub sections: &'static str,
    pub title: &'static str,
    pub summary: &'static str,
    pub params: Vec<ParamSpec>,
}

/// What a scenario declares it will show, for given parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expectation {
    pub outcome: Vec<(String, serde_json::Value)>,
    pub verdicts: Vec<(String, Verdict)>,
}

impl Expectation {
    /// Every way `trace` differs from the expectation; empty when it matches.
    pub fn mismatches(&self, trace: &Trace) -> Vec<String> {
        let mut out = Vec::new();
        for (key, want) in &self.outcome {
            match trace.outcome.get(key) {
                Some(got) if got == want => {}
                got => out.push(format!(
                    "outcome {key}: expected {want}, got {}",
                    got.map_or("nothing".into(), |g| g.to_string())
                )),
            }
        }
        for (name, want) in &self.verdicts {
            match trace.properties.iter().find(|p| &p.name == name) {
                Some(p) if p.verdict == *want => {}
                Some(p) => out.push(format!(
                    "property {name}: expected {}, got {}",
                    want.as_str(),
                    p.verdict.as_str()
                )),
                None => out.push(format!("property {name}: not checked by this scenario")),
            }
        }
        out
    }
}

/// Everything a run is a function of — exactly what a permalink stores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRequest {
    pub scenario: String,
    pub params: Params,
    pub seed: u64,
    pub actions: Vec<Action>,
}

impl RunRequest {
    /// The one-line text form `scenario params seed actions`, e.g.
    /// `zombie-worker fencing=none,ttl_ms=30000 1 12@pause:1:400`; `-` stands for no
    /// parameters or no actions. Golden files and reproduction commands use it.
    pub fn to_line(&self) -> String {
        let params: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let params = if params.is_empty() {
            "-".to_string()
        } else {
            params.join(",")
        };
        let actions = crate::kernel::faults::script_code(&self.actions);
        let actions = if actions.is_empty() {
            "-".to_string()
        } else {
            actions
        };
        format!("{} {params} {} {actions}", self.scenario, self.seed)
    }

    /// Reads [`RunRequest::to_line`]'s form back. Checks syntax only; [`run`] validates the
    /// scenario, parameters and actions.
    pub fn parse_line(line: &str) -> Result<RunRequest, String> {
        let fields: Vec<&str> = line.split(' ').collect();
        let [scenario, params, seed, actions] = fields[..] else {
            return Err(format!(
                "expected `scenario params seed actions` (four fields), got {} in `{line}`",
                fields.len()
            ));
        };
        let named = [
            ("scenario", scenario),
            ("parameters", params),
            ("seed", seed),
            ("actions", actions),
        ];
        if let Some((name, _)) = named.iter().find(|(_, field)| field.is_empty()) {
            return Err(format!(
                "the {name} field is empty in `{line}` (two spaces?); `-` stands for no parameters or actions"
            ));
        }
        let mut parsed = Params::new();
        if params != "-" {
            for pair in params.split(',') {
                if pair.is_empty() {
                    return Err(format!(
                        "an empty parameter in `{line}`; expected key=value pairs separated by `,`, or `-` for none"
                    ));
                }
                let (k, v) = pair
                    .split_once('=')
                    .ok_or_else(|| format!("parameter `{pair}`: expected key=value"))?;
                parsed.insert(k.to_string(), v.to_string());
            }
        }
        let seed = seed
            .parse::<u64>()
            .map_err(|_| format!("seed `{seed}` is not a non-negative integer"))?;
        let actions = if actions == "-" {
            Vec::new()
        } else {
            crate::kernel::faults::parse_script(actions)?
        };
        Ok(RunRequest {
            scenario: scenario.to_string(),
            params: parsed,
            seed,
            actions,
        })
    }
}

/// A user-facing error: always names what would have been valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    UnknownScenario {
        id: String,
        valid: Vec<&'static str>,
    },
    UnknownParam {
        scenario: &'static str,
        key: String,
        valid: Vec<&'static str>,
    },
    BadValue {
        key: &'static str,
        value: String,
        allowed: String,
    },
    BadAction(String),
    /// The scenario exists, but this build does not hold its simulation (a browser bundle of
    /// another chapter).
    NotInThisBuild {
        id: &'static str,
        bundle: &'static str,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownScenario { id, valid } => {
                write!(f, "unknown scenario `{id}`; available: {}", valid.join(", "))
            }
            SimError::UnknownParam { scenario, key, valid } => write!(
                f,
                "scenario `{scenario}` has no parameter `{key}`; its parameters are: {}",
                if valid.is_empty() {
                    "(none)".to_string()
                } else {
                    valid.join(", ")
                }
            ),
            SimError::BadValue { key, value, allowed } => {
                write!(
                    f,
                    "`{value}` is not a valid value for `{key}`; allowed: {allowed}"
                )
            }
            SimError::BadAction(msg) => write!(f, "{msg}"),
            SimError::NotInThisBuild { id, bundle } => write!(
                f,
                "`{id}` is simulated by the `{bundle}` bundle, which this build does not include"
            ),
        }
    }
}

impl std::error::Error for SimError {}

/// Sets up a run: the participants, network, scripted faults and world for validated
/// parameters and a seed (some scenarios draw their fault storm from it).
pub type SetupFn = fn(&Params, u64) -> Setup;

/// One registered scenario: what it is, what it promises, and how to set up a run. The
/// registry builds and runs the engine; a scenario never does.
pub struct ScenarioDef {
    pub id: &'static str,
    /// Known in every build: the course's order needs it where the info is left out.
    pub chapter: u8,
    /// What the course says about it: `None` outside the bundle that runs it (and without the
    /// `course` feature), so each chapter's text is downloaded with that chapter only.
    pub course: Option<&'static CourseNotes>,
    /// `None` in a browser bundle that neither simulates this scenario nor shows the library
    /// (see [`ScenarioDef::info`]).
    pub info_fn: Option<fn() -> Listing>,
    pub expectation: fn(&Params) -> Expectation,
    /// `None` in a build without this scenario's bundle (see [`bundles`]).
    pub setup: Option<SetupFn>,
    /// The bundle (and cargo feature) that holds its simulation.
    pub bundle: &'static str,
}

/// A scenario module (by its chapter folder and file), its three entry points, and the bundle
/// its simulation belongs to. In a build without that bundle's feature the setup is left out,
/// and with it every participant and world only that setup reaches.
macro_rules! scenario {
    ($bundle:literal, $chapter:ident :: $module:ident $(, also $extra:literal)?) => {
        ScenarioDef {
            id: $chapter::$module::ID,
            chapter: $chapter::CHAPTER,
            course: if cfg!(all(feature = "course", feature = $bundle)) {
                Some(&$chapter::$module::COURSE)
            } else {
                None
            },
            info_fn: if cfg!(any(feature = "catalog", feature = $bundle $(, feature = $extra)?)) {
                Some($chapter::$module::info)
            } else {
                None
            },
            expectation: if cfg!(feature = "expectations") {
                $chapter::$module::expectation
            } else {
                no_expectation
            },
            setup: if cfg!(any(feature = $bundle $(, feature = $extra)?)) {
                Some($chapter::$module::setup)
            } else {
                None
            },
            bundle: $bundle,
        }
    };
}

impl ScenarioDef {
    /// What the scenario is: its id, chapter, title and parameters. A browser bundle of another
    /// chapter knows only the id (and loads the right bundle to show the rest).
    pub fn info(&self) -> ScenarioInfo {
        match self.info_fn {
            Some(info) => {
                let Listing {
                    sections,
                    title,
                    summary,
                    params,
                } = info();
                ScenarioInfo {
                    id: self.id,
                    chapter: self.chapter,
                    sections,
                    title,
                    summary,
                    params,
                }
            }
            None => ScenarioInfo {
                id: self.id,
                chapter: 0,
                sections: "",
                title: self.id,
                summary: "",
                params: Vec::new(),
            },
        }
    }
}

/// Stands in for every scenario's expectation in a build without the `expectations` feature
/// (the browser, which never checks runs against them).
fn no_expectation(_params: &Params) -> Expectation {
    Expectation {
        outcome: Vec::new(),
        verdicts: Vec::new(),
    }
}

/// Every scenario, in library order.
static REGISTRY: &[ScenarioDef] = &[
    scenario!("locks", ch1_locks::lost_update),
    scenario!("locks", ch1_locks::advisory_locks),
    scenario!("db", ch1_locks::skip_locked_queue),
    scenario!("db", ch1_locks::deadlock),
    scenario!("db", ch1_locks::row_lock_modes),
    scenario!("db", ch1_locks::lock_granularity),
    scenario!("leases", ch2_leases::duplicate_job),
    scenario!("leases", ch2_leases::lease_lifecycle),
    scenario!("leases", ch2_leases::wrong_release),
    scenario!("fencing", ch3_late_holders::zombie_worker),
    scenario!("fencing", ch3_late_holders::clock_skew),
    scenario!("unfenceable", ch4_fencing::unfenceable_resource),
    scenario!("across-call", ch3_late_holders::lock_across_call),
    scenario!("leases", ch2_leases::lock_alternatives),
    scenario!("fencing", ch3_late_holders::lease_stampede),
    scenario!("raft", ch5_consensus::raft_election),
    scenario!("raft", ch5_consensus::raft_split_vote),
    scenario!("raft", ch5_consensus::raft_log_replication),
    scenario!("raft", ch5_consensus::raft_partition),
    scenario!("raft", ch5_consensus::raft_stale_leader),
    scenario!("quorum", ch5_consensus::raft_figure_8),
    scenario!("quorum", ch5_consensus::raft_quorum),
    scenario!("raft", ch5_consensus::raft_chaos),
    scenario!("zk", ch6_lock_services::zookeeper_lock),
    scenario!("consensus", ch6_lock_services::consensus_lock, also "pair"),
    scenario!("redis", ch6_lock_services::redis_failover, also "pair"),
    scenario!("redlock", ch6_lock_services::redlock),
    scenario!("services", ch2_leases::lease_placement),
    scenario!("services", ch4_fencing::fence_mistakes),
    scenario!("services", ch4_fencing::token_sources),
    scenario!("lock-services", ch6_lock_services::redisson_watchdog),
    scenario!("lock-services", ch6_lock_services::scheduled_job_guard),
    scenario!("lock-services", ch6_lock_services::chubby_sequencer),
    scenario!("lock-services", ch6_lock_services::hazelcast_fenced_lock),
];

/// Every scenario, in library order.
pub fn registry() -> &'static [ScenarioDef] {
    REGISTRY
}

/// The course: every scenario chapter by chapter, in registry order within a chapter.
pub fn course() -> Vec<&'static ScenarioDef> {
    // Chapter by chapter rather than a sort: the library's bundle then carries no sorting
    // code (about 1 KB gzipped of its 110,000-byte cap).
    CHAPTERS
        .iter()
        .flat_map(|c| registry().iter().filter(move |d| d.chapter == c.number))
        .collect()
}

/// The scenarios before and after `id` in the course.
pub fn course_neighbours(id: &str) -> (Option<&'static ScenarioDef>, Option<&'static ScenarioDef>) {
    let order = course();
    let Some(at) = order.iter().position(|d| d.id == id) else {
        return (None, None);
    };
    (at.checked_sub(1).map(|i| order[i]), order.get(at + 1).copied())
}

/// The browser build's bundles in library order, each a cargo feature of this crate: the
/// simulations of a few scenarios that belong together (a chapter, or one lock service). The
/// first also serves the pages that name no scenario (the library).
pub const BUNDLES: &[&str] = &[
    "locks",
    "db",
    "leases",
    "fencing",
    "unfenceable",
    "across-call",
    "raft",
    "quorum",
    "zk",
    "redis",
    "redlock",
    "consensus",
    "services",
    "lock-services",
];

/// The pair the library shows side by side: one failure, two lock services, two outcomes.
pub const COMPARE_PAIR: (&str, &str) = ("redis-failover", "consensus-lock");

/// Whether this build can run `def` (its bundle's feature is on).
pub fn runnable(def: &ScenarioDef) -> bool {
    def.setup.is_some()
}

pub fn catalog() -> Vec<ScenarioInfo> {
    registry().iter().map(ScenarioDef::info).collect()
}

pub fn find(id: &str) -> Result<&'static ScenarioDef, SimError> {
    registry()
        .iter()
        .find(|d| d.id == id)
        .ok_or_else(|| SimError::UnknownScenario {
            id: id.to_string(),
            valid: registry().iter().map(|d| d.id).collect(),
        })
}

/// Checks user-given parameters and fills in defaults for the rest.
pub fn resolve_params(info: &ScenarioInfo, given: &Params) -> Result<Params, SimError> {
    for key in given.keys() {
        if !info.params.iter().any(|p| p.key == key) {
            return Err(SimError::UnknownParam {
                scenario: info.id,
                key: key.clone(),
                valid: info.params.iter().map(|p| p.key).collect(),
            });
        }
    }
    let mut out = Params::new();
    // Choices first: another parameter's default may depend on one (a variant default).
    for choices in [true, false] {
        for spec in info.params.iter().filter(|s| s.is_choice() == choices) {
            let value = given
                .get(spec.key)
                .map_or_else(|| spec.default_given(&out), String::as_str);
            spec.validate(value).map_err(|allowed| SimError::BadValue {
                key: spec.key,
                value: value.to_string(),
                allowed,
            })?;
            out.insert(spec.key.to_string(), value.to_string());
        }
    }
    Ok(out)
}

/// `params` (already resolved) with `key` set to `value`. Parameters left at the default the
/// old values implied move to the default the new ones imply, so switching variant brings
/// that variant's defaults while keeping what the user chose.
pub fn set_param(info: &ScenarioInfo, params: &Params, key: &str, value: &str) -> Result<Params, SimError> {
    let mut next = params.clone();
    next.insert(key.to_string(), value.to_string());
    for spec in info.params.iter().filter(|s| s.key != key) {
        if params.get(spec.key).map(String::as_str) == Some(spec.default_given(params)) {
            next.insert(spec.key.to_string(), spec.default_given(&next).to_string());
        }
    }
    resolve_params(info, &next)
}

/// Runs a request: validates it, sets the scenario up, simulates, and returns the trace.
pub fn run(request: &RunRequest, limits: Limits, recording: Recording) -> Result<Trace, SimError> {
    let (info, params, setup) = prepare(request)?;
    let engine =
        Engine::new(setup, request.seed, &request.actions, limits, recording).map_err(SimError::BadAction)?;
    Ok(engine.run(info.id, request.seed, params))
}

/// A request's run with its snapshots computed only as far as a viewer asks. [`run`] with
/// [`Recording::Lines`] gives every entry at a fraction of the cost of snapshotting each one;
/// this gives the state after entry `i` by running a second engine, with snapshots, just
/// past it. The same inputs make the same run, so its entries are the trace's.
pub struct LazySnapshots {
    engine: Engine,
    ended: bool,
}

impl LazySnapshots {
    pub fn new(request: &RunRequest, limits: Limits) -> Result<LazySnapshots, SimError> {
        let (_, _, setup) = prepare(request)?;
        let engine = Engine::new(setup, request.seed, &request.actions, limits, Recording::Full)
            .map_err(SimError::BadAction)?;
        Ok(LazySnapshots { engine, ended: false })
    }

    /// The state after entry `i`; `None` past the end of the run.
    pub fn at(&mut self, i: usize) -> Option<Rc<Snapshot>> {
        if !self.ended {
            self.ended = !self.engine.run_past(i);
        }
        self.engine.snapshot_at(i)
    }
}

/// Who takes part in a request's run, without simulating it (the participants can depend on
/// the parameters).
pub fn participants(request: &RunRequest) -> Result<Vec<NodeInfo>, SimError> {
    let (_, _, setup) = prepare(request)?;
    Ok(setup.infos().to_vec())
}

fn prepare(request: &RunRequest) -> Result<(ScenarioInfo, Params, Setup), SimError> {
    let def = find(&request.scenario)?;
    let info = def.info();
    let mut params = resolve_params(&info, &request.params)?;
    let setup = def.setup.ok_or(SimError::NotInThisBuild {
        id: info.id,
        bundle: def.bundle,
    })?;
    let mut setup = setup(&params, request.seed);
    params.extend(std::mem::take(&mut setup.derived_params));
    Ok((info, params, setup))
}

/// The declared expectation of a request's scenario and parameters.
pub fn expectation_for(request: &RunRequest) -> Result<Expectation, SimError> {
    let def = find(&request.scenario)?;
    let params = resolve_params(&def.info(), &request.params)?;
    Ok((def.expectation)(&params))
}

/// The course as a lesson file (docs/trainer.md, "Lessons"): one stop per scenario in course
/// order, its caption the chapter's introduction (at a chapter's first run), what the run
/// teaches, and the chapter's rules (at its last run); its question the scenario's. The site
/// ships it as `lessons/course.json` and walks it like any trainer's lesson; the test
/// `tests/course.rs` keeps that file equal to this.
#[cfg(feature = "course")]
pub fn course_lesson() -> serde_json::Value {
    let order = course();
    let stops: Vec<serde_json::Value> = order
        .iter()
        .enumerate()
        .filter_map(|(i, def)| {
            let notes = def.course?;
            let chapter = CHAPTERS.iter().find(|c| c.number == def.chapter)?;
            let about = CHAPTER_NOTES.iter().find(|c| c.number == def.chapter)?;
            let first = i == 0 || order[i - 1].chapter != def.chapter;
            let last = order.get(i + 1).is_none_or(|d| d.chapter != def.chapter);
            let mut caption = format!("Chapter {}: {}.", chapter.number, chapter.title);
            if first {
                caption.push_str(&format!("\n{}", about.intro));
            }
            caption.push_str("\nWhat this run teaches:");
            for o in notes.objectives {
                caption.push_str(&format!("\n• {o}"));
            }
            if last {
                caption.push_str(&format!("\nWhat chapter {} taught:", chapter.number));
                for r in about.rules {
                    caption.push_str(&format!("\n• {r}"));
                }
                caption.push_str("\n[Every rule, on the choosing page's checklist →](#/choose)");
            }
            let q = notes.question;
            Some(serde_json::json!({
                "scenario": def.id,
                "caption": caption,
                "question": {
                    "prompt": q.prompt,
                    "answers": q.answers,
                    "correct": [q.correct],
                    "explanation": q.why,
                },
            }))
        })
        .collect();
    serde_json::json!({
        "coordlab_lesson": 1,
        "title": "The coordlab course",
        "stops": stops,
    })
}
