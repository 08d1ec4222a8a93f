//! How many writes a Raft group commits per second, and how long each takes, as the cluster
//! grows and as the data is split over more independent groups: "consensus is for metadata,
//! not volume" measured on the simulator's real Raft server.
//!
//! One run:
//! - `nodes` machines host `groups` independent Raft groups of `replicas` servers each. Group
//!   `g` has its leader on machine `g * nodes / groups` and its followers on the next machines
//!   round the ring, so with as many groups as machines every machine leads one group and
//!   follows others: the leaders' work is spread.
//! - Every group starts with its leader already elected (term 1; the election is
//!   `election-downtime`'s subject, not this one's) and election timeouts far beyond the run,
//!   so the measurement sees a steady leader.
//! - [`CLIENTS_PER_GROUP`] clients per group (unless the config says otherwise) each keep one
//!   write outstanding against the
//!   group's leader: a *closed loop*, the next write leaves as soon as the last one is
//!   answered. The leader answers once the entry is committed (stored on a majority) and
//!   applied.
//!
//! Time is spent in three places:
//! - the CPU: every machine is one processor that handles one message (or timer) at a time,
//!   first come first served. Handling costs [`MESSAGE_CPU_US`] for the message taken in and
//!   the same again for every message sent out (serialising, the syscall, the checksum), plus
//!   [`ENTRY_CPU_US`] for every log entry an AppendEntries carries in or out. A message that
//!   arrives while the processor is busy waits in its queue. This is what bounds throughput:
//!   for every write a leader takes in the client's request, sends the client's reply and
//!   copies the entry out to every follower, and it sends and hears back one AppendEntries
//!   per follower per batch, so a bigger group is a busier leader; a follower does a
//!   fraction of that.
//! - flow control: a leader keeps at most one AppendEntries in flight to each follower (as
//!   real implementations bound their in-flight window); what the server asks to send
//!   meanwhile waits, and the answer brings the next AppendEntries with every entry appended
//!   since (at most [`ThroughputConfig::batch_entries`], which cannot exceed the server's own
//!   limit of 16). Without it the server re-sends the whole
//!   unacknowledged tail on every client request and the leader drowns in copies.
//! - the wire: each message takes a one-way delay uniform in
//!   [`LATENCY_MIN_US`]`..=`[`LATENCY_MAX_US`], drawn per message.
//! - the disk: a server that persists before it sends (the leader its new entry, a follower
//!   what it appended) sends [`DURABLE_WRITE_US`] later; the disk works beside the processor
//!   (many writes may be in flight), so it lengthens a write but does not bound throughput.
//!
//! Clients cost nothing: they stand for many application servers.
//!
//! The two CPU costs are illustrative assumptions, not measurements of any real server; the
//! page and the CLI say so and print etcd's published benchmark ([`ETCD_PUBLISHED`]) beside
//! the model's numbers. [`caps`] computes what each limit (CPU, batch, clients) allows a
//! setup, so every row can name the one that holds it; in a closed loop the mean latency is
//! the clients divided by the throughput (Little's law), so the latency shown is queueing.
//!
//! Writes committed during the measurement window (after [`WARMUP_MS`] of warm-up) give
//! writes per second; their latency, from the client sending the write to the client
//! receiving the answer, gives the median and the 99th percentile.
//!
//! Everything is a pure function of the [`ThroughputConfig`]: one seeded random stream draws
//! the network delays and the servers' own draws, and events are ordered by `(time, seq)`.

use super::summary::nearest_rank;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Effect, Participant};
use crate::kernel::rng::{between_us, stream, SimRng, Stream};
use crate::kernel::time::MS_US;
use crate::protocols::raft::{
    ClientAnswer, Command, LogIndex, RaftBug, RaftMsg, RaftServer, RaftTimer, Role, ServerConfig,
    ServerDurable, Term,
};
use std::collections::BTreeMap;

/// CPU time to handle one message, charged once for the message taken in and once for each
/// message sent out. An illustrative assumption, not a measurement of any real server: 50 µs
/// stands for a full RPC through a server's stack (decode, checks, encode, a system call),
/// not the few instructions of the Raft rule itself. The default of
/// [`ThroughputConfig::message_cpu_us`].
pub const MESSAGE_CPU_US: u64 = 50;
/// CPU time to copy one log entry into or out of an AppendEntries (encoding the command,
/// its checksum). A leader pays it once per follower for every write. Illustrative, like
/// [`MESSAGE_CPU_US`].
pub const ENTRY_CPU_US: u64 = 10;
/// Most entries one AppendEntries carries: the simulator's Raft server sends at most 16, so a
/// smaller batch can be asked for and a larger one cannot.
pub const BATCH_ENTRIES_MAX: u32 = 16;
/// Bounds on the model a user may set (the page's controls and the CLI's options).
pub const CLIENTS_MAX: u32 = 1_000;
pub const SERVERS_MAX: u32 = 9;
pub const GROUPS_MAX: u32 = 16;
pub const MESSAGE_CPU_US_MIN: u64 = 1;
pub const MESSAGE_CPU_US_MAX: u64 = 10_000;
pub const ENTRY_CPU_US_MAX: u64 = 10_000;
/// Shortest one-way delay on the wire: machines in one data centre.
pub const LATENCY_MIN_US: u64 = 200;
/// Longest one-way delay.
pub const LATENCY_MAX_US: u64 = 400;
/// One durable write (an fsync on a fast SSD), paid before what a server sends after it.
pub const DURABLE_WRITE_US: u64 = 500;
/// Writes each group's clients keep outstanding, unless told otherwise: enough to keep the
/// busiest leader busy.
pub const CLIENTS_PER_GROUP: u32 = 64;
/// Simulated time before the measurement starts (the queues fill up).
pub const WARMUP_MS: u64 = 50;
/// The cluster sizes the first table compares, one group each.
pub const CLUSTER_SIZES: [u32; 3] = [3, 5, 7];
/// The group counts the second table compares.
pub const GROUP_COUNTS: [u32; 4] = [1, 2, 4, 8];
/// Machines the groups are spread over in the second table.
pub const MACHINES: u32 = 8;
/// Replicas of each group in the second table.
pub const GROUP_REPLICAS: u32 = 3;
/// Bounds on a request.
pub const DURATION_MS_MIN: u64 = 20;
pub const DURATION_MS_MAX: u64 = 5_000;
/// The measurement window of `coordlab experiment consensus-throughput` unless told.
pub const DEFAULT_DURATION_MS: u64 = 400;
/// A smaller window for the browser, which runs all seven setups in well under a second.
pub const BROWSER_DURATION_MS: u64 = 150;
/// Most events one setup may process (a safety net; the default runs use far fewer).
pub const MAX_EVENTS: u64 = 5_000_000;

/// What to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThroughputConfig {
    pub seed: u64,
    /// The measurement window, in simulated ms, after [`WARMUP_MS`].
    pub duration_ms: u64,
    /// The load, the costs, the batch and the extra setup.
    pub model: Model,
}

impl ThroughputConfig {
    /// Checks a request; the error says what is allowed. The model takes its defaults.
    pub fn new(seed: u64, duration_ms: u64) -> Result<Self, String> {
        if !(DURATION_MS_MIN..=DURATION_MS_MAX).contains(&duration_ms) {
            return Err(format!(
                "a measurement window of {duration_ms} ms is out of range; allowed {DURATION_MS_MIN}..={DURATION_MS_MAX} ms"
            ));
        }
        Ok(ThroughputConfig {
            seed,
            duration_ms,
            model: Model {
                clients_per_group: CLIENTS_PER_GROUP,
                message_cpu_us: MESSAGE_CPU_US,
                entry_cpu_us: ENTRY_CPU_US,
                batch_entries: BATCH_ENTRIES_MAX,
                servers: GROUP_REPLICAS,
                groups: 1,
            },
        })
    }

    /// The same request with another model; checks every bound and names the allowed range.
    pub fn with_model(self, model: Model) -> Result<Self, String> {
        let Model {
            clients_per_group,
            message_cpu_us,
            entry_cpu_us,
            batch_entries,
            servers,
            groups,
        } = model;
        let out_of = |what: &str, v: u64, lo: u64, hi: u64| {
            (!(lo..=hi).contains(&v)).then(|| format!("{what} {v} is out of range; allowed {lo}..={hi}"))
        };
        let checks = [
            out_of(
                "clients per group",
                clients_per_group.into(),
                1,
                CLIENTS_MAX.into(),
            ),
            out_of("servers per group", servers.into(), 1, SERVERS_MAX.into()),
            out_of("groups", groups.into(), 1, GROUPS_MAX.into()),
            out_of(
                "CPU per message (µs)",
                message_cpu_us,
                MESSAGE_CPU_US_MIN,
                MESSAGE_CPU_US_MAX,
            ),
            out_of("CPU per entry (µs)", entry_cpu_us, 0, ENTRY_CPU_US_MAX),
            out_of(
                "batch size (entries)",
                batch_entries.into(),
                1,
                BATCH_ENTRIES_MAX.into(),
            ),
        ];
        if let Some(error) = checks.into_iter().flatten().next() {
            return Err(error);
        }
        Ok(ThroughputConfig { model, ..self })
    }

    /// The model this config runs.
    pub fn model(&self) -> Model {
        self.model
    }

    /// The extra setup: `groups` groups of `servers`, on as many machines as either, so no
    /// machine leads two groups.
    pub fn setup(&self) -> Layout {
        let Model { servers, groups, .. } = self.model;
        Layout {
            machines: servers.max(groups),
            groups,
            replicas: servers,
        }
    }
}

/// One published measurement of a real Raft store, shown beside the model's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Published {
    pub setup: &'static str,
    pub clients: u32,
    pub writes_per_s: u64,
    /// Average latency per request, in tenths of a ms.
    pub latency_tenth_ms: u64,
}

/// Where [`ETCD_PUBLISHED`] comes from.
pub const ETCD_SOURCE: &str = "etcd operations guide, \"Performance\" (etcd 3.2.0; three members of 8 vCPUs, 16 GB, SSD on Google Compute Engine; 8-byte keys, 256-byte values)";
/// Its address.
pub const ETCD_SOURCE_URL: &str = "https://etcd.io/docs/v3.4/op-guide/performance/";
/// etcd's published write benchmark: one real group of three.
pub const ETCD_PUBLISHED: [Published; 3] = [
    Published {
        setup: "1 client, to the leader",
        clients: 1,
        writes_per_s: 583,
        latency_tenth_ms: 16,
    },
    Published {
        setup: "1,000 clients, to the leader",
        clients: 1_000,
        writes_per_s: 44_341,
        latency_tenth_ms: 220,
    },
    Published {
        setup: "1,000 clients, to all members",
        clients: 1_000,
        writes_per_s: 50_104,
        latency_tenth_ms: 200,
    },
];

/// What a user may vary: the load, the two illustrative costs, the batch and one setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    pub clients_per_group: u32,
    pub message_cpu_us: u64,
    pub entry_cpu_us: u64,
    pub batch_entries: u32,
    pub servers: u32,
    pub groups: u32,
}

/// One setup: how many machines, groups and replicas per group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub machines: u32,
    pub groups: u32,
    pub replicas: u32,
}

impl Layout {
    /// Group `g`'s servers, its leader first.
    pub fn members(&self, g: u32) -> Vec<NodeId> {
        let leader = g * self.machines / self.groups;
        (0..self.replicas)
            .map(|k| NodeId((leader + k) % self.machines))
            .collect()
    }
}

/// What one setup measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub layout: Layout,
    /// Writes answered during the window.
    pub writes: u64,
    /// Writes answered per simulated second.
    pub writes_per_s: u64,
    pub median_us: u64,
    pub p99_us: u64,
    /// Rounded down to a whole µs.
    pub mean_us: u64,
    /// What the model allows at most, by each of its three limits.
    pub caps: Caps,
    pub clients_per_group: u32,
    /// The busiest machine's CPU use during the window, in thousandths.
    pub busiest_cpu_permille: u64,
    /// Messages the busiest machine handled (in and out) per write, in hundredths.
    pub messages_per_write_centi: u64,
}

impl Point {
    /// Writes in flight at any moment: every client of every group has one outstanding.
    pub fn clients_in_flight(&self) -> u32 {
        self.clients_per_group * self.layout.groups
    }
}

/// The two tables and the chosen setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThroughputReport {
    pub config: ThroughputConfig,
    /// One group of 3, 5 and 7 servers.
    pub by_size: Vec<Point>,
    /// 1, 2, 4 and 8 groups of three on eight machines.
    pub by_groups: Vec<Point>,
    /// [`ThroughputConfig::setup`].
    pub setup: Point,
}

/// Which of the model's limits allows the fewest writes per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The busiest machine's CPU: every write costs it messages and entries.
    Cpu,
    /// The batch: one AppendEntries in flight per follower, each with at most
    /// `batch_entries`, so a group commits at most a batch per round trip.
    Batch,
    /// The clients: each has one write outstanding, so a group answers at most `clients`
    /// writes per unloaded commit latency (Little's law).
    Clients,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::Cpu => "CPU",
            Limit::Batch => "batch",
            Limit::Clients => "clients",
        }
    }
}

/// The most writes per second each limit allows a setup, from the model's constants at mean
/// wire delays (estimates: queueing and unequal delays make the real figure a little lower).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub cpu_per_s: u64,
    pub batch_per_s: u64,
    pub clients_per_s: u64,
}

impl Caps {
    /// The lowest cap: what bounds the setup.
    pub fn binding(&self) -> (Limit, u64) {
        [
            (Limit::Cpu, self.cpu_per_s),
            (Limit::Batch, self.batch_per_s),
            (Limit::Clients, self.clients_per_s),
        ]
        .into_iter()
        .min_by_key(|(_, v)| *v)
        .expect("three limits")
    }
}

/// The three caps of one setup under a config's model.
///
/// - CPU: a leader pays, per write, the request in and the reply out (2 messages), the entry
///   copied to each follower, and per batch one AppendEntries out and one answer in per
///   follower; a follower pays per write the entry in and per batch one message in and one
///   out. The busiest machine (its leader and follower duties added up) caps each group.
/// - Batch: a follower acknowledges at most one batch per round trip: the wire both ways,
///   its handling and its disk write, and the leader's handling of the answer (which sends
///   the next AppendEntries and answers the batch's clients). A write commits when the
///   majority's slowest needed follower has it, so the group commits a batch per round trip.
/// - Clients: a closed loop answers `clients ÷ latency` writes per second (Little's law), so
///   at most `clients ÷` the unloaded commit latency.
pub fn caps(config: &ThroughputConfig, layout: Layout) -> Caps {
    let (m, e) = (config.model.message_cpu_us, config.model.entry_cpu_us);
    let b = u64::from(config.model.batch_entries);
    let followers = u64::from(layout.replicas.saturating_sub(1));
    // CPU per write, in hundredths of a µs so the per-batch shares stay exact enough.
    let leader_centi = 100 * (2 * m + followers * e) + 100 * 2 * m * followers / b;
    let follower_centi = 100 * e + 100 * 2 * m / b;
    let busiest_centi = (0..layout.machines)
        .map(|machine| {
            (0..layout.groups)
                .map(|g| match layout.members(g).iter().position(|n| n.0 == machine) {
                    Some(0) => leader_centi,
                    Some(_) => follower_centi,
                    None => 0,
                })
                .sum::<u64>()
        })
        .max()
        .unwrap_or(leader_centi)
        .max(1);
    let groups = u64::from(layout.groups);
    let cpu_per_s = groups * 100 * 1_000_000 / busiest_centi;
    let wire_us = (LATENCY_MIN_US + LATENCY_MAX_US) / 2;
    let batch_per_s = if followers == 0 {
        u64::MAX
    } else {
        let follower_us = 2 * m + b * e;
        let leader_us = 2 * m + b * e + b * m;
        let round_trip_us = 2 * wire_us + follower_us + DURABLE_WRITE_US + leader_us;
        groups * b * 1_000_000 / round_trip_us
    };
    // Unloaded: client → leader, the leader's handling and disk write, leader → follower,
    // the follower's handling and disk write, back, the leader's handling, → client.
    let unloaded_us =
        4 * wire_us + (m + followers * (m + e)) + DURABLE_WRITE_US + (2 * m + e) + DURABLE_WRITE_US + 2 * m;
    let clients_per_s = groups * u64::from(config.model.clients_per_group) * 1_000_000 / unloaded_us;
    Caps {
        cpu_per_s,
        batch_per_s,
        clients_per_s,
    }
}

/// Runs both tables and the chosen setup.
pub fn run(config: &ThroughputConfig) -> ThroughputReport {
    let by_size = CLUSTER_SIZES
        .iter()
        .map(|&n| {
            measure(
                config,
                Layout {
                    machines: n,
                    groups: 1,
                    replicas: n,
                },
            )
        })
        .collect();
    let by_groups = GROUP_COUNTS
        .iter()
        .map(|&g| {
            measure(
                config,
                Layout {
                    machines: MACHINES,
                    groups: g,
                    replicas: GROUP_REPLICAS,
                },
            )
        })
        .collect();
    ThroughputReport {
        config: *config,
        by_size,
        by_groups,
        setup: measure(config, config.setup()),
    }
}

enum Event {
    /// A message reaches a machine or a client.
    Deliver {
        to: NodeId,
        from: NodeId,
        group: u32,
        msg: RaftMsg,
    },
    /// A server's timer, valid only if its generation is still the current one.
    Timer {
        machine: NodeId,
        group: u32,
        timer: RaftTimer,
        generation: u64,
    },
}

struct Sim {
    layout: Layout,
    clients_per_group: u32,
    message_cpu_us: u64,
    entry_cpu_us: u64,
    batch_entries: usize,
    now_us: u64,
    seq: u64,
    queue: BTreeMap<(u64, u64), Event>,
    /// Server of group g on machine m: `servers[(m, g)]`.
    servers: BTreeMap<(u32, u32), RaftServer>,
    timers: BTreeMap<(u32, u32, bool), u64>,
    generation: u64,
    /// When each machine's processor is next free.
    busy_until_us: Vec<u64>,
    /// Processor time spent per machine inside the window.
    busy_in_window_us: Vec<u64>,
    /// Messages handled (in and out) per machine inside the window.
    messages_in_window: Vec<u64>,
    rng: SimRng,
    names: Vec<String>,
    /// When each client sent its outstanding write, by client id.
    sent_at_us: BTreeMap<u32, u64>,
    next_request: BTreeMap<u32, u32>,
    window_start_us: u64,
    window_end_us: u64,
    latencies_us: Vec<u64>,
    /// AppendEntries sent and not yet answered, as (group, follower).
    in_flight: std::collections::BTreeSet<(u32, u32)>,
}

impl Sim {
    fn push(&mut self, at_us: u64, event: Event) {
        self.seq += 1;
        self.queue.insert((at_us, self.seq), event);
    }

    fn client_id(&self, group: u32, k: u32) -> NodeId {
        NodeId(self.layout.machines + group * self.clients_per_group + k)
    }

    fn group_of_client(&self, client: NodeId) -> u32 {
        (client.0 - self.layout.machines) / self.clients_per_group
    }

    fn wire_us(&mut self) -> u64 {
        between_us(&mut self.rng, LATENCY_MIN_US, LATENCY_MAX_US)
    }

    /// A client sends its next write to its group's leader.
    fn client_send(&mut self, client: NodeId) {
        let group = self.group_of_client(client);
        let leader = self.layout.members(group)[0];
        let id = {
            let next = self.next_request.entry(client.0).or_insert(0);
            *next += 1;
            *next
        };
        self.sent_at_us.insert(client.0, self.now_us);
        let at = self.now_us + self.wire_us();
        self.push(
            at,
            Event::Deliver {
                to: leader,
                from: client,
                group,
                msg: RaftMsg::ClientRequest {
                    id,
                    // An empty key: the server copies its whole log on every durable write
                    // (the persisted state is a value), and an empty string copies without
                    // allocating, which keeps the experiment fast enough for the browser.
                    command: Command::Set {
                        key: String::new(),
                        value: id,
                    },
                },
            },
        );
    }

    /// Runs one handler of the server of `group` on `machine` on its processor, now, and
    /// applies what it asked for.
    fn handle(
        &mut self,
        machine: NodeId,
        group: u32,
        entries_in: u64,
        run: impl FnOnce(&mut RaftServer, &mut Ctx<'_, RaftServer>),
    ) {
        let mut effects: Vec<Effect<RaftServer>> = Vec::new();
        let server = self
            .servers
            .get_mut(&(machine.0, group))
            .expect("a message reaches only a group's members");
        run(
            server,
            &mut Ctx::new(machine, self.now_us, &mut self.rng, &self.names, &mut effects),
        );
        // Flow control: at most one AppendEntries in flight to each follower. A newer one is
        // not sent while the last is unanswered; the answer brings the next, with every
        // entry appended meanwhile (up to the server's batch limit).
        effects.retain(|e| match e.sent::<RaftMsg>() {
            Some((to, RaftMsg::AppendEntries { .. })) => self.in_flight.insert((group, to.0)),
            _ => true,
        });
        // The batch limit: a shorter AppendEntries is still a valid one (the follower
        // matches what it got, and the leader sends the rest next).
        let outputs: Vec<Output> = effects
            .into_iter()
            .map(|effect| match effect {
                Effect::Send { to, msg } => {
                    let mut msg = *msg
                        .into_any()
                        .downcast::<RaftMsg>()
                        .expect("a Raft server sends Raft messages");
                    if let RaftMsg::AppendEntries { entries, .. } = &mut msg {
                        entries.truncate(self.batch_entries);
                    }
                    Output::Send(to, msg)
                }
                other => Output::Other(other),
            })
            .collect();
        let sends = outputs.iter().filter(|o| matches!(o, Output::Send(..))).count() as u64;
        let entries_out: u64 = outputs
            .iter()
            .map(|o| match o {
                Output::Send(_, RaftMsg::AppendEntries { entries, .. }) => entries.len() as u64,
                _ => 0,
            })
            .sum();
        let cost_us = self.message_cpu_us * (1 + sends) + self.entry_cpu_us * (entries_in + entries_out);
        let m = machine.index();
        self.busy_until_us[m] = self.now_us + cost_us;
        if (self.window_start_us..self.window_end_us).contains(&self.now_us) {
            self.busy_in_window_us[m] += cost_us;
            self.messages_in_window[m] += 1 + sends;
        }
        let done_us = self.busy_until_us[m];
        let mut disk_us = 0;
        for output in outputs {
            let effect = match output {
                Output::Send(to, msg) => {
                    let at = done_us + disk_us + self.wire_us();
                    self.push(
                        at,
                        Event::Deliver {
                            to,
                            from: machine,
                            group,
                            msg,
                        },
                    );
                    continue;
                }
                Output::Other(effect) => effect,
            };
            match effect {
                Effect::Persist(_) => disk_us = DURABLE_WRITE_US,
                Effect::Send { .. } => unreachable!("sends were taken out above"),
                Effect::SetTimer {
                    timer,
                    after_local_us,
                } => {
                    self.generation += 1;
                    let key = (machine.0, group, timer == RaftTimer::Heartbeat);
                    self.timers.insert(key, self.generation);
                    let generation = self.generation;
                    self.push(
                        self.now_us + after_local_us,
                        Event::Timer {
                            machine,
                            group,
                            timer,
                            generation,
                        },
                    );
                }
                Effect::CancelTimer { timer } => {
                    self.timers
                        .remove(&(machine.0, group, timer == RaftTimer::Heartbeat));
                }
                Effect::Note(_) => {}
            }
        }
    }

    /// A machine whose processor is busy takes the event later, in arrival order.
    fn wait_for_cpu(&mut self, machine: NodeId, event: Event) -> Option<Event> {
        let free_us = self.busy_until_us[machine.index()];
        if free_us > self.now_us {
            self.push(free_us, event);
            None
        } else {
            Some(event)
        }
    }

    fn step(&mut self, event: Event) {
        match event {
            Event::Deliver { to, from, group, msg } if to.0 >= self.layout.machines => {
                // A client: its write is answered; it sends the next one at once.
                if let RaftMsg::ClientReply {
                    answer: ClientAnswer::Committed { .. },
                    ..
                } = msg
                {
                    let sent = self.sent_at_us.get(&to.0).copied().unwrap_or(self.now_us);
                    if (self.window_start_us..self.window_end_us).contains(&self.now_us) {
                        self.latencies_us.push(self.now_us - sent);
                    }
                    let _ = (from, group);
                    self.client_send(to);
                }
            }
            event @ Event::Deliver { to, .. } => {
                let Some(Event::Deliver { to, from, group, msg }) = self.wait_for_cpu(to, event) else {
                    return;
                };
                if matches!(msg, RaftMsg::AppendReply { .. }) {
                    self.in_flight.remove(&(group, from.0));
                }
                let entries_in = match &msg {
                    RaftMsg::AppendEntries { entries, .. } => entries.len() as u64,
                    _ => 0,
                };
                self.handle(to, group, entries_in, |s, ctx| s.on_message(ctx, from, msg));
            }
            Event::Timer {
                machine,
                group,
                timer,
                generation,
            } => {
                let key = (machine.0, group, timer == RaftTimer::Heartbeat);
                if self.timers.get(&key) != Some(&generation) {
                    return; // replaced or cancelled
                }
                let event = Event::Timer {
                    machine,
                    group,
                    timer,
                    generation,
                };
                let Some(Event::Timer { timer, .. }) = self.wait_for_cpu(machine, event) else {
                    return;
                };
                self.timers.remove(&key);
                self.handle(machine, group, 0, |s, ctx| s.on_timer(ctx, timer));
            }
        }
    }
}

/// The server settings of one group: elections never start during the run.
fn server_config(members: &[NodeId], end_ms: u64) -> ServerConfig {
    let mut cluster = members.to_vec();
    cluster.sort();
    ServerConfig {
        cluster,
        election_timeout_ms_min: 100 * end_ms.max(1_000),
        election_timeout_ms_max: 100 * end_ms.max(1_000),
        heartbeat_ms: 50,
        stop_at_ms: 10 * end_ms.max(1_000),
        bug: RaftBug::None,
    }
}

/// What a handler asked for, its messages taken out of their boxes (so the batch limit can
/// shorten an AppendEntries).
enum Output {
    Send(NodeId, RaftMsg),
    Other(Effect<RaftServer>),
}

/// Runs one setup and measures it.
pub fn measure(config: &ThroughputConfig, layout: Layout) -> Point {
    let window_start_us = WARMUP_MS * MS_US;
    let window_end_us = window_start_us + config.duration_ms * MS_US;
    let mut names: Vec<String> = (0..layout.machines).map(|m| format!("S{}", m + 1)).collect();
    for g in 0..layout.groups {
        for k in 0..config.model.clients_per_group {
            names.push(format!("client-{}-{}", g + 1, k + 1));
        }
    }
    let mut sim = Sim {
        layout,
        clients_per_group: config.model.clients_per_group,
        message_cpu_us: config.model.message_cpu_us,
        entry_cpu_us: config.model.entry_cpu_us,
        batch_entries: config.model.batch_entries as usize,
        now_us: 0,
        seq: 0,
        queue: BTreeMap::new(),
        servers: BTreeMap::new(),
        timers: BTreeMap::new(),
        generation: 0,
        busy_until_us: vec![0; layout.machines as usize],
        busy_in_window_us: vec![0; layout.machines as usize],
        messages_in_window: vec![0; layout.machines as usize],
        rng: stream(config.seed, Stream::Network),
        names,
        sent_at_us: BTreeMap::new(),
        next_request: BTreeMap::new(),
        window_start_us,
        window_end_us,
        latencies_us: Vec::new(),
        in_flight: std::collections::BTreeSet::new(),
    };
    let end_ms = window_end_us / MS_US;
    for g in 0..layout.groups {
        let members = layout.members(g);
        let leader = members[0];
        let server_config = server_config(&members, end_ms);
        for &m in &members {
            let durable = ServerDurable {
                term: Term(1),
                voted_for: Some(leader),
                log: Vec::new(),
                log_cuts: 0,
            };
            let server = RaftServer::recover(&server_config, m, &durable);
            sim.servers.insert((m.0, g), server);
            sim.handle(m, g, 0, |s, ctx| s.on_start(ctx));
            sim.busy_until_us[m.index()] = 0; // starting is free
        }
        // The leader already won term 1: it leads, and its heartbeat rounds begin.
        let s = sim.servers.get_mut(&(leader.0, g)).expect("just added");
        s.role = Role::Leader;
        s.leader_hint = Some(leader);
        for &p in &members[1..] {
            s.next_index.insert(p, LogIndex(1));
            s.match_index.insert(p, LogIndex(0));
        }
        sim.timers.remove(&(leader.0, g, false));
        sim.handle(leader, g, 0, |s, ctx| s.on_timer(ctx, RaftTimer::Heartbeat));
        sim.busy_until_us[leader.index()] = 0;
        for k in 0..config.model.clients_per_group {
            let client = sim.client_id(g, k);
            sim.client_send(client);
        }
    }
    let mut events = 0;
    while let Some(((at_us, _), event)) = sim.queue.pop_first() {
        if at_us >= window_end_us || events >= MAX_EVENTS {
            break;
        }
        sim.now_us = at_us;
        sim.step(event);
        events += 1;
    }
    let mut latencies = std::mem::take(&mut sim.latencies_us);
    latencies.sort_unstable();
    let writes = latencies.len() as u64;
    let busiest = (0..layout.machines as usize)
        .max_by_key(|&m| (sim.busy_in_window_us[m], std::cmp::Reverse(m)))
        .unwrap_or(0);
    let window_us = window_end_us - window_start_us;
    let total_us: u128 = latencies.iter().map(|v| u128::from(*v)).sum();
    Point {
        layout,
        writes,
        writes_per_s: writes * 1_000_000 / window_us,
        median_us: nearest_rank(&latencies, 0, 50).unwrap_or(0),
        p99_us: nearest_rank(&latencies, 0, 99).unwrap_or(0),
        mean_us: (total_us / u128::from(writes.max(1))) as u64,
        caps: caps(config, layout),
        clients_per_group: config.model.clients_per_group,
        busiest_cpu_permille: (sim.busy_in_window_us[busiest] * 1_000 / window_us).min(1_000),
        messages_per_write_centi: sim.messages_in_window[busiest] * 100 / writes.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> ThroughputConfig {
        ThroughputConfig::new(1, BROWSER_DURATION_MS).expect("valid")
    }

    #[test]
    fn bad_windows_are_refused() {
        assert!(ThroughputConfig::new(1, DURATION_MS_MIN - 1).is_err());
        assert!(ThroughputConfig::new(1, DURATION_MS_MAX + 1).is_err());
        assert!(ThroughputConfig::new(1, DEFAULT_DURATION_MS).is_ok());
    }

    #[test]
    fn leaders_are_spread_round_the_ring() {
        let l = Layout {
            machines: 8,
            groups: 4,
            replicas: 3,
        };
        assert_eq!(l.members(0), vec![NodeId(0), NodeId(1), NodeId(2)]);
        assert_eq!(l.members(3), vec![NodeId(6), NodeId(7), NodeId(0)]);
    }

    #[test]
    fn a_bigger_group_commits_fewer_writes_and_more_slowly() {
        let r = run(&quick());
        let w: Vec<u64> = r.by_size.iter().map(|p| p.writes_per_s).collect();
        assert!(w[0] > w[1] && w[1] > w[2], "{:?}", r.by_size);
        assert!(r.by_size[2].median_us > r.by_size[0].median_us, "{:?}", r.by_size);
        // The leader is the bottleneck: its processor is busy most of the time.
        assert!(
            r.by_size.iter().all(|p| p.busiest_cpu_permille > 800),
            "{:?}",
            r.by_size
        );
        let g: Vec<u64> = r.by_groups.iter().map(|p| p.writes_per_s).collect();
        assert!(g.windows(2).all(|p| p[0] < p[1]), "{:?}", r.by_groups);
        assert!(g[3] > 3 * g[0], "{:?}", r.by_groups);
    }

    fn model(f: impl FnOnce(&mut Model)) -> ThroughputConfig {
        let mut m = quick().model();
        f(&mut m);
        quick().with_model(m).expect("valid")
    }

    fn within(measured: u64, cap: u64, low_percent: u64) -> bool {
        measured * 100 >= cap * low_percent && measured * 100 <= cap * 105
    }

    #[test]
    fn bad_models_are_refused_with_the_allowed_range() {
        let bad = |f: fn(&mut Model)| {
            let mut m = quick().model();
            f(&mut m);
            quick().with_model(m).unwrap_err()
        };
        assert!(bad(|m| m.clients_per_group = 0).contains("1..=1000"));
        assert!(bad(|m| m.batch_entries = 17).contains("batch size (entries) 17"));
        assert!(bad(|m| m.message_cpu_us = 0).contains("1..=10000"));
        assert!(bad(|m| m.servers = 10).contains("1..=9"));
        assert!(bad(|m| m.groups = 0).contains("1..=16"));
        assert!(bad(|m| m.entry_cpu_us = 10_001).contains("0..=10000"));
    }

    /// The default model: the 3-server group is held by its 16-entry batch (a batch per
    /// round trip), the 5- and 7-server groups and the 8 groups by the leader's CPU. Each
    /// row's measurement lands just under the cap the model computes for it.
    #[test]
    fn each_row_is_held_by_the_cap_the_model_names() {
        let r = run(&quick());
        let limits: Vec<Limit> = r.by_size.iter().map(|p| p.caps.binding().0).collect();
        assert_eq!(limits, [Limit::Batch, Limit::Cpu, Limit::Cpu], "{:?}", r.by_size);
        assert_eq!(r.by_groups[3].caps.binding().0, Limit::Cpu);
        // 3 servers: 16 entries per 2.42 ms round trip; 5: 165 µs of leader CPU per write.
        assert_eq!(r.by_size[0].caps.batch_per_s, 6_611);
        assert_eq!(r.by_size[1].caps.cpu_per_s, 6_060);
        for p in r.by_size.iter().chain(&r.by_groups) {
            let (limit, cap) = p.caps.binding();
            assert!(within(p.writes_per_s, cap, 90), "{limit:?} cap {cap}: {p:?}");
        }
    }

    #[test]
    fn few_clients_are_held_by_the_clients() {
        let c = model(|m| m.clients_per_group = 1);
        let p = measure(&c, c.setup());
        let (limit, cap) = p.caps.binding();
        assert_eq!(limit, Limit::Clients, "{p:?}");
        assert!(within(p.writes_per_s, cap, 85), "cap {cap}: {p:?}");
    }

    #[test]
    fn a_smaller_batch_lowers_the_batch_cap_and_the_writes() {
        let small = model(|m| m.batch_entries = 4);
        let p = measure(&small, small.setup());
        let q = measure(&quick(), quick().setup());
        assert_eq!(p.caps.binding().0, Limit::Batch, "{p:?}");
        assert!(p.writes_per_s < q.writes_per_s, "{p:?} vs {q:?}");
        assert!(within(p.writes_per_s, p.caps.batch_per_s, 85), "{p:?}");
    }

    /// Little's law: in a closed loop the mean latency is the writes in flight (the clients)
    /// divided by the throughput, so the latency shown is queueing at the busy leader.
    #[test]
    fn the_latency_is_clients_divided_by_throughput() {
        for clients in [1, 64, 200] {
            let c = model(|m| m.clients_per_group = clients);
            let r = run(&c);
            for p in r.by_size.iter().chain(&r.by_groups) {
                let in_flight = u64::from(clients * p.layout.groups);
                let littles_us = in_flight * 1_000_000 / p.writes_per_s;
                let diff = p.mean_us.abs_diff(littles_us);
                assert!(
                    diff * 100 <= littles_us * 3,
                    "{clients} clients: {littles_us} µs vs {p:?}"
                );
            }
        }
    }

    #[test]
    fn a_run_is_a_pure_function_of_its_config() {
        let c = quick();
        let l = Layout {
            machines: 3,
            groups: 1,
            replicas: 3,
        };
        assert_eq!(measure(&c, l), measure(&c, l));
    }
}
