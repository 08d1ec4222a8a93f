//! What every Raft scenario shares: the parameters and the cluster builder. The world that
//! checks the paper's safety properties, [`RaftWorld`], is in [`super::raft_world`].

use super::{ChoiceOption, Expectation, ParamKind, ParamSpec, Params};
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::participant::Participant;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::properties::Verdict;
use crate::protocols::raft::{
    ClientConfig, RaftBug, RaftClient, RaftServer, ServerConfig, ServerDurable, MAX_SERVERS,
};
use crate::scenarios::lease_setup::choice;
use serde_json::Value;
use std::collections::BTreeMap;

pub use super::raft_world::{promised_verdicts, RaftView, RaftWorld, CONVERGES_AFTER_HEAL, PROPERTIES};

pub use super::common::int_param;

/// The cluster size, as a choice: the number of nodes must not change under a sweep that
/// draws integer parameters at random (its faults name nodes of the default layout).
pub fn servers_param(min: u32) -> ParamSpec {
    const LABELS: [&str; 7] = [
        "1 server (tolerates no failure)",
        "2 servers (tolerate no failure)",
        "3 servers (tolerate 1 failure)",
        "4 servers (tolerate 1 failure)",
        "5 servers (tolerate 2 failures)",
        "6 servers (tolerate 2 failures)",
        "7 servers (tolerate 3 failures)",
    ];
    const VALUES: [&str; 7] = ["1", "2", "3", "4", "5", "6", "7"];
    let options = (min as usize - 1..7)
        .map(|i| ChoiceOption {
            value: VALUES[i],
            label: LABELS[i],
        })
        .collect();
    ParamSpec::new(
        "servers",
        "Servers",
        "How many Raft servers form the cluster; a majority is needed to elect and to commit.",
        "5",
        ParamKind::Choice { options },
    )
}

/// The timing parameters and the planted-bug switch every Raft scenario offers.
pub fn common_params() -> Vec<ParamSpec> {
    vec![
        int_param(
            "election_timeout_ms_min",
            "Election timeout (min)",
            "Shortest wait before a follower that hears nothing stands for election.",
            "150",
            50,
            1_000,
            "ms",
        ),
        int_param(
            "election_timeout_ms_max",
            "Election timeout (max)",
            "Longest such wait; each server draws its timeout at random in between (a max below the min counts as the min).",
            "300",
            50,
            2_000,
            "ms",
        ),
        int_param(
            "heartbeat_ms",
            "Heartbeat interval",
            "How often the leader sends empty AppendEntries to hold its followers.",
            "50",
            10,
            500,
            "ms",
        ),
        choice(
            "bug",
            "Planted bug",
            "Break one rule of the paper on purpose, to see the safety checker catch it. raft-partition is scripted to show skip-up-to-date-check and raft-election forget-vote-on-restart; raft-figure-8 shows the third through its commit rule. Elsewhere a bug shows only under faults you add, or in a sweep.",
            &[
                ("none", "none — Raft as in the paper"),
                ("skip-up-to-date-check", "skip up-to-date check — vote for any candidate, whatever its log"),
                ("commit-old-term-by-count", "commit old term by count — commit an older term's entry once a majority stores it"),
                ("forget-vote-on-restart", "forget vote on restart — the vote is not kept across a crash"),
            ],
        ),
    ]
}

pub fn num(params: &Params, key: &str, default: u64) -> u64 {
    params.get(key).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The election timeout's range as the servers use it, `(min, max)` in ms, with the chapter's
/// default minimum `default_min_ms`: a maximum below the minimum is the minimum, a fixed
/// timeout that no randomness spreads.
pub fn election_timeouts_ms(params: &Params, default_min_ms: u64) -> (u64, u64) {
    let min = num(params, "election_timeout_ms_min", default_min_ms);
    (min, num(params, "election_timeout_ms_max", 300).max(min))
}

/// Randomized timeouts elect a leader for sure only from a range at least this wide: the
/// first server to time out is then far enough ahead of the next (a vote's round trip takes
/// a few ms) to win before the others stand. Narrower, or fixed, two servers can split the
/// vote term after term.
pub const MIN_SPREAD_MS: u64 = 100;

/// Timing like the chapter's default, which the stories' timelines assume: the heartbeat
/// well inside the election timeout, and a timeout short enough to elect inside the stories'
/// windows (at most 0.4 s) and randomized over at least [`MIN_SPREAD_MS`].
pub fn usual_timing(params: &Params) -> bool {
    let (min, max) = election_timeouts_ms(params, 150);
    num(params, "heartbeat_ms", 50) * 2 < min && max <= 400 && max >= min + MIN_SPREAD_MS
}

pub fn bug(params: &Params) -> RaftBug {
    params
        .get("bug")
        .and_then(|b| RaftBug::parse(b))
        .unwrap_or(RaftBug::None)
}

/// Every safety property holds, if the run plants no bug; nothing promised otherwise.
pub fn verdicts_if_correct(params: &Params) -> Vec<(String, Verdict)> {
    if bug(params) != RaftBug::None {
        return Vec::new();
    }
    PROPERTIES
        .iter()
        .map(|(n, _)| (n.to_string(), Verdict::Holds))
        .collect()
}

/// What a run promises: the safety properties its bug leaves sound and, if it plants no bug
/// and its timing lets the told story happen (`story`), the `told` outcome.
pub fn promise(params: &Params, story: bool, told: [(&str, Value); 3]) -> Expectation {
    let bug = bug(params);
    let outcome = if bug == RaftBug::None && story {
        told.into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect()
    } else {
        Vec::new()
    };
    Expectation {
        outcome,
        verdicts: promised_verdicts(bug),
    }
}

/// Who [`build`] added: the servers S1… in order, then the client if the plan writes.
#[derive(Clone, Debug)]
pub struct RaftCast {
    pub servers: Vec<NodeId>,
    pub client: Option<NodeId>,
}

/// Something a plan works out once it knows who [`build`] added.
pub type FromCast<T> = Box<dyn FnOnce(&RaftCast) -> T>;

/// How a scenario wants its cluster built.
#[derive(Default)]
pub struct ClusterPlan {
    pub servers: u32,
    /// Client writes; 0 for no client.
    pub writes: u32,
    pub client_start_ms: u64,
    pub stop_at_ms: u64,
    /// Faults at true times (ms).
    pub scripted: Option<FromCast<Vec<(u64, Fault)>>>,
    /// Nodes whose side of a partition is watched for commits, and when.
    pub watch: Option<FromCast<Watch>>,
    /// Whether S1 boots before the others (its first timeout is short), giving a predictable
    /// first leader. The narration says so when S1 starts.
    pub stagger_first: bool,
    /// Whether the narration says what a restarted server brings back from disk.
    pub narrate_restarts: bool,
    /// Each server's own election timeout range (ms), S1's first, instead of the parameters'.
    pub timeouts_ms: Vec<(u64, u64)>,
}

/// A window in which the world counts commits made by a group of servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watch {
    pub side: Vec<NodeId>,
    pub from_us: u64,
    pub until_us: u64,
}

pub fn server_names(n: u32) -> Vec<String> {
    (0..n).map(|i| format!("S{}", i + 1)).collect()
}

/// Faults a user may inject on a server. `Input`: servers advertise `timeout` and the client
/// `write` (see their `inputs`).
const SERVER_FAULTS: [FaultKind; 5] = [
    FaultKind::Crash,
    FaultKind::Restart,
    FaultKind::Pause,
    FaultKind::Network,
    FaultKind::Input,
];

/// Faults a user may inject on a client.
pub const CLIENT_FAULTS: [FaultKind; 2] = [FaultKind::Network, FaultKind::Input];

/// The servers `S1`… (and the client, if the plan writes), the network and the scripted
/// faults, with the world that checks them and who was added. The world is handed back rather
/// than set, so a scenario can wrap it in its own before [`Setup::set_world`].
pub fn build(params: &Params, plan: ClusterPlan) -> (Setup, RaftWorld, RaftCast) {
    let n = plan.servers.clamp(1, MAX_SERVERS);
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 5 * MS_US));
    // Every server's configuration names the whole cluster: the ids come first.
    let cluster: Vec<NodeId> = (0..n).map(|_| setup.reserve()).collect();
    let (min, max) = election_timeouts_ms(params, 150);
    let config = ServerConfig {
        cluster: cluster.clone(),
        election_timeout_ms_min: min,
        election_timeout_ms_max: max,
        heartbeat_ms: num(params, "heartbeat_ms", 50),
        stop_at_ms: plan.stop_at_ms,
        bug: bug(params),
    };
    for (i, (id, name)) in cluster.iter().zip(server_names(n)).enumerate() {
        let mut config = config.clone();
        if let Some(&(own_min, own_max)) = plan.timeouts_ms.get(i) {
            config.election_timeout_ms_min = own_min;
            config.election_timeout_ms_max = own_max;
        }
        let durable = ServerDurable::default();
        let mut server = RaftServer::recover(&config, *id, &durable);
        // S1 boots before the others: when they start, its first timer has less than the
        // minimum left, so it times out first. That gives every scenario a predictable first
        // leader to crash, cut off or freeze.
        if i == 0 && plan.stagger_first {
            server.first_timeout_ms = Some((min / 2, min / 2 + 10));
        }
        setup.place_live::<RaftServer>(*id, name, "raft-server", &SERVER_FAULTS, config, server, durable);
    }
    let client = (plan.writes > 0).then(|| {
        let config = ClientConfig {
            servers: cluster.clone(),
            writes: plan.writes,
            start_ms: plan.client_start_ms,
            interval_ms: 100,
            retry_ms: 150,
            stop_at_ms: plan.stop_at_ms,
            first_id: 1,
            first_guess: None,
        };
        setup.add::<RaftClient>("client", "raft-client", &CLIENT_FAULTS, config, ())
    });
    let cast = RaftCast {
        servers: cluster,
        client,
    };
    for (ms, fault) in plan.scripted.map_or_else(Vec::new, |f| f(&cast)) {
        setup.script(ms * MS_US, fault);
    }
    let watch = plan.watch.map(|f| f(&cast));
    let mut world = RaftWorld::new(cast.servers.clone(), client, watch);
    // A lone server has no others to boot before.
    world.early_boot = (plan.stagger_first && cast.servers.len() > 1).then(|| cast.servers[0]);
    world.narrate_restarts = plan.narrate_restarts;
    (setup, world, cast)
}

/// [`build`] for a scenario that needs no world of its own: the plain [`RaftWorld`], with the
/// outcome fields `derive_outcome` adds to the shared ones (if any).
pub fn build_with_world(
    params: &Params,
    plan: ClusterPlan,
    derive_outcome: Option<fn(&mut BTreeMap<String, Value>)>,
) -> (Setup, RaftCast) {
    let (mut setup, mut world, cast) = build(params, plan);
    world.derive_outcome = derive_outcome;
    setup.set_world(world);
    (setup, cast)
}
