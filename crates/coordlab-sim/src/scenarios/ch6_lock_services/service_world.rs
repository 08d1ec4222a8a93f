//! How chapter 6's lock-service scenarios are put together and checked: a lock server
//! (node 0), clients A and B (1, 2), and the storage they write to (3). Each scenario picks
//! the server's flavour and rules, the clients' plans and its scripted faults; this world
//! checks that no write from a superseded holder lands, and whether every client got the lock.

use crate::json;
use crate::kernel::beats::Step;
use crate::kernel::faults::{Fault, FaultKind};
use crate::kernel::ids::NodeId;
use crate::kernel::network::LinkConfig;
use crate::kernel::setup::Setup;
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::seconds;
use crate::properties::PropertySpec;
use crate::protocols::redis_locks::redis_job::JobDurable;
use crate::protocols::services::service_client::{ClientConfig, ServiceClient};
use crate::protocols::services::service_lock::{
    Check, Flavour, GuardedResource, LockServer, ResourceState, ServerConfig, WriteSeen,
};
use crate::scenarios::common::eventually;
use crate::scenarios::common::WORKER_FAULTS;
use crate::scenarios::lease_setup::int;
use crate::scenarios::property_library as library;
use crate::scenarios::Params;
use crate::trace::{columns, EventKind, TableView};
use std::collections::BTreeMap;

/// Who a lock-service story's [`build`] added: the lock service, clients A and B (placed
/// with [`place_clients`]), and the storage they write to.
#[derive(Clone, Copy, Debug)]
pub struct ServiceCast {
    pub server: NodeId,
    pub a: NodeId,
    pub b: NodeId,
    pub storage: NodeId,
}

const SERVER_FAULTS: [FaultKind; 2] = [FaultKind::Pause, FaultKind::Network];
const STORAGE_FAULTS: [FaultKind; 2] = [FaultKind::Pause, FaultKind::Network];

/// The checks a lock-service scenario can declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceProperty {
    NoStaleWrite,
    EveryClientAcquires,
}

impl ServiceProperty {
    fn spec(self) -> PropertySpec {
        match self {
            ServiceProperty::NoStaleWrite => library::no_stale_write_spec(),
            ServiceProperty::EveryClientAcquires => eventually(
                "every-client-acquires",
                "Every client that asks for the lock gets it at some point.",
            ),
        }
    }
}

/// Who takes part and what is checked.
pub struct ServicePlan {
    pub server: ServerConfig,
    /// Numbers issued before the story starts (6: the first grant gets 7).
    pub numbers_issued: u64,
    pub server_name: &'static str,
    pub check: Check,
    pub properties: Vec<ServiceProperty>,
}

/// How long a refused client waits before asking again (Redisson's clients wait out the
/// key's remaining TTL instead).
pub const RETRY_MS: u64 = 1_000;
/// When client A first asks for the lock, drawn from this range (ms).
pub const A_START_MS: (u64, u64) = (0, 200);
/// When client B first asks: after A's range, so A takes the lock first.
pub const B_START_MS: (u64, u64) = (500, 700);
/// A request and its answer take 2–8 ms on these links (1–4 ms each way); rounded up to
/// this, it covers any round trip an expectation has to allow for.
pub const ROUND_TRIP_SLACK_MS: u64 = 100;
/// The latest client A's grant comes: it asks by the end of [`A_START_MS`], and the grant
/// takes a round trip. Its lease, and every renewal after it, is timed from that grant.
pub const A_GRANT_BY_MS: u64 = A_START_MS.1 + ROUND_TRIP_SLACK_MS;
/// Closer than this to the moment a story turns on (the lock's expiry, the other client's
/// first write, the end of a job), message delays and start jitter decide: the expectation
/// promises nothing.
pub const CLOSE_CALL_MS: u64 = 500;

/// A client plan with the usual wiring; the scenario sets the rest.
/// A client of `cast`'s service that writes to its storage, starting after `start_after_ms`.
pub fn client(cast: ServiceCast, flavour: Flavour, start_after_ms: (u64, u64)) -> ClientConfig {
    ClientConfig {
        flavour,
        server: cast.server,
        resource: cast.storage,
        start_after_ms,
        retry_ms: RETRY_MS,
        renew_every_ms: 10_000,
        steps: 4,
        step_ms: 5_000,
        sends_number: false,
        stuck_after_step: None,
        horizon_ms: 180_000,
    }
}

/// The service, the storage and the world of a lock-service story, with the clients' ids
/// reserved between them: the clients name the storage, so [`place_clients`] puts them in
/// once the scenario has their configurations.
pub fn build(plan: ServicePlan) -> (Setup, ServiceCast) {
    let mut setup = Setup::new(LinkConfig::reliable(MS_US, 4 * MS_US));
    let flavour = plan.server.flavour;
    let initial = LockServer::initial(plan.numbers_issued);
    let server = setup.add::<LockServer>(plan.server_name, "server", &SERVER_FAULTS, plan.server, initial);
    let [a, b] = [setup.reserve(), setup.reserve()];
    let initial = ResourceState {
        highest: 0,
        writes: Vec::new(),
    };
    let storage = setup.add::<GuardedResource>(
        "storage",
        "resource",
        &STORAGE_FAULTS,
        (plan.check, flavour),
        initial,
    );
    let cast = ServiceCast {
        server,
        a,
        b,
        storage,
    };
    setup.set_world(ServiceWorld {
        cast,
        flavour,
        properties: plan.properties,
        max_holders: 0,
    });
    (setup, cast)
}

/// Puts clients A and B in the places [`build`] reserved.
pub fn place_clients(setup: &mut Setup, cast: ServiceCast, a: ClientConfig, b: ClientConfig) {
    let fresh = JobDurable::default();
    setup.place::<ServiceClient>(
        cast.a,
        "client-A",
        "worker",
        &WORKER_FAULTS,
        a.into(),
        fresh.clone(),
    );
    setup.place::<ServiceClient>(cast.b, "client-B", "worker", &WORKER_FAULTS, b.into(), fresh);
}

/// Accepted writes that came from a superseded holder: a higher grant had written first.
pub fn stale_writes(writes: &[WriteSeen]) -> (u32, u32) {
    let mut highest = 0;
    let (mut landed, mut refused) = (0, 0);
    for w in writes {
        if w.grant < highest {
            if w.accepted {
                landed += 1;
            } else {
                refused += 1;
            }
        }
        if w.accepted {
            highest = highest.max(w.grant);
        }
    }
    (landed, refused)
}

pub struct ServiceWorld {
    pub cast: ServiceCast,
    pub flavour: Flavour,
    pub properties: Vec<ServiceProperty>,
    pub max_holders: u32,
}

fn storage<'a>(nodes: &Nodes<'a>, cast: ServiceCast) -> Option<&'a ResourceState> {
    nodes
        .live::<GuardedResource>(cast.storage)
        .map(|r| &r.durable)
        .or_else(|| nodes.durable::<GuardedResource>(cast.storage))
}

fn server<'a>(
    nodes: &Nodes<'a>,
    cast: ServiceCast,
) -> Option<&'a crate::protocols::services::service_lock::ServerDurable> {
    nodes
        .live::<LockServer>(cast.server)
        .map(|s| &s.durable)
        .or_else(|| nodes.durable::<LockServer>(cast.server))
}

fn believes(nodes: &Nodes<'_>, id: NodeId) -> bool {
    nodes
        .live::<ServiceClient>(id)
        .is_some_and(ServiceClient::believes_it_holds)
}

/// Whether client `id` has been granted the lock at least once (it may have lost it since).
pub fn acquired(nodes: &Nodes<'_>, id: NodeId) -> bool {
    nodes.live::<ServiceClient>(id).is_some_and(|c| c.acquired)
}

/// Scripts client A's GC pause from the `pause_start_ms` and `pause_ms` parameters (ms);
/// none when the length is 0. The pause stories of this chapter all freeze A this way.
pub fn script_pause_of_a(setup: &mut Setup, params: &Params, cast: ServiceCast) {
    let pause_ms = int(params, "pause_ms");
    if pause_ms > 0 {
        let at = int::<u64>(params, "pause_start_ms") * MS_US;
        setup.script(
            at,
            Fault::Pause {
                node: cast.a,
                duration_ms: pause_ms,
            },
        );
    }
}

/// What a paused holder's story promises, when the timing leaves no doubt: `Some(true)` when
/// it woke `late` (after the takeover, as the caller judges), `Some(false)` when it woke at
/// least [`CLOSE_CALL_MS`] before its lock expired, and `None` in the margin, where the
/// outcome hangs on exact timing and the expectation promises nothing.
pub fn wake_verdict(late: bool, wake_ms: u64, expiry_ms: u64) -> Option<bool> {
    if late {
        Some(true)
    } else if wake_ms + CLOSE_CALL_MS < expiry_ms {
        Some(false)
    } else {
        None
    }
}

/// Whether a write of client `who` has reached the storage, whatever the storage made of it.
pub fn wrote_at_storage(nodes: &Nodes<'_>, cast: ServiceCast, who: NodeId) -> bool {
    nodes
        .live::<GuardedResource>(cast.storage)
        .is_some_and(|r| r.durable.writes.iter().any(|w| w.writer == who))
}

/// Whether this step is the lock server's own timer leaving the lock free: the holder's
/// session or lease ran out with nobody releasing it, the moment the service stories' beats
/// point at before a second client can take over.
pub fn lock_lapsed(nodes: &Nodes<'_>, step: &Step<'_>, cast: ServiceCast) -> bool {
    step.kind == EventKind::Timer
        && step.acted(cast.server)
        && nodes
            .live::<LockServer>(cast.server)
            .is_some_and(|s| s.durable.holder.is_none())
}

impl ServiceWorld {
    fn granted_to(&self, nodes: &Nodes<'_>) -> Option<NodeId> {
        let now = nodes
            .local_now_us
            .get(self.cast.server.index())
            .copied()
            .unwrap_or(0);
        server(nodes, self.cast)?
            .holder
            .as_ref()
            .filter(|h| h.expires_at_us > now)
            .map(|h| h.node)
    }
}

impl World for ServiceWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        self.properties.iter().map(|p| p.spec()).collect()
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        let ServiceCast { a, b, .. } = self.cast;
        let holders = [a, b].iter().filter(|c| believes(nodes, **c)).count() as u32;
        self.max_holders = self.max_holders.max(holders);
        for p in &self.properties {
            out.push(match p {
                ServiceProperty::NoStaleWrite => {
                    storage(nodes, self.cast).is_none_or(|s| stale_writes(&s.writes).0 == 0)
                }
                ServiceProperty::EveryClientAcquires => acquired(nodes, a) && acquired(nodes, b),
            });
        }
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = Vec::new();
        let word = self.flavour.number_word();
        if let Some(s) = server(nodes, self.cast) {
            let now = nodes
                .local_now_us
                .get(self.cast.server.index())
                .copied()
                .unwrap_or(0);
            let row = match s.holder.as_ref().filter(|h| h.expires_at_us > now) {
                Some(h) => vec![
                    nodes.name(h.node).to_string(),
                    h.number.to_string(),
                    seconds((h.expires_at_us - now) / MS_US),
                ],
                None => vec!["—".into(), "—".into(), "—".into()],
            };
            tables.push(TableView {
                title: "The lock, as the service records it".into(),
                columns: vec!["holder".into(), word.into(), "lease left".into()],
                rows: vec![row],
            });
        }
        if let Some(s) = storage(nodes, self.cast) {
            tables.push(TableView {
                title: "Writes at the storage".into(),
                columns: columns(&["writer", "step", "carries", "result"]),
                rows: s
                    .writes
                    .iter()
                    .map(|w| {
                        vec![
                            nodes.name(w.writer).to_string(),
                            w.step.to_string(),
                            w.number.map_or("nothing".into(), |n| format!("{word} {n}")),
                            if w.accepted { "applied" } else { "refused" }.to_string(),
                        ]
                    })
                    .collect(),
            });
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = BTreeMap::new();
        let (landed, refused) = storage(nodes, self.cast).map_or((0, 0), |s| stale_writes(&s.writes));
        out.insert("stale_writes_applied".into(), json!(landed));
        out.insert("stale_writes_refused".into(), json!(refused));
        out.insert("max_concurrent_holders".into(), json!(self.max_holders));
        out.insert("b_got_the_lock".into(), json!(acquired(nodes, self.cast.b)));
        if let Some(s) = server(nodes, self.cast) {
            out.insert("renewals".into(), json!(s.renewals));
        }
        out
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        (believes(nodes, self.cast.a) && believes(nodes, self.cast.b))
            .then(|| "Two clients believe they hold the lock".to_string())
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        Holding::of([self.cast.a, self.cast.b], self.granted_to(nodes), |n| {
            believes(nodes, n)
        })
    }
}
