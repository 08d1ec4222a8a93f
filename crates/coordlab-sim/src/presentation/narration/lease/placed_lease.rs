//! What a placed lease table (on a primary, a replica or each node) saw as it ran the
//! commands of the store it stands for, and the sentences it reads as.

use crate::kernel::ids::FencingToken;
use crate::kernel::time::MS_US;
use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_store::sequence_name;
use crate::protocols::lease::placed_lease::TokenSource;

/// What a copy that took over holds.
pub enum Holding<'a> {
    Lease { owner: &'a str, token: FencingToken },
    Counter { token: FencingToken },
}

/// One thing a placed lease table saw; `me` is the table's node.
pub enum PlacedLeaseSaw<'a> {
    /// etcd deleted the lapsed holder's key, a revision of its own.
    EtcdKeyDeleted {
        owner: &'a str,
        token: FencingToken,
    },
    /// DynamoDB: the item's `expires`, from the holder's clock, is not past the sender's `:now`.
    NotPastClientNow {
        holder: &'a str,
        who: &'a str,
        expires_at_us: u64,
        client_now_us: u64,
    },
    K8sSeenUnchanged {
        who: &'a str,
        holder: &'a str,
        seen_for_us: u64,
        ttl_ms: u64,
    },
    K8sNotesTime {
        who: &'a str,
        holder: &'a str,
        ttl_ms: u64,
    },
    HeldByMyClock {
        holder: &'a str,
        lease: &'a str,
        left_us: u64,
        me: &'a str,
        who: &'a str,
    },
    ZkStillBehind {
        who: &'a str,
        czxid: u64,
        holder: &'a str,
    },
    ZkQueued {
        who: &'a str,
        holder: &'a str,
        czxid: u64,
    },
    ZkSessionTimedOut {
        gone: &'a str,
        who: &'a str,
    },
    /// How a source's grant reads, beyond the command and its answer; `before` is the
    /// holder whose lease ran out.
    SourceGrant {
        source: TokenSource,
        who: &'a str,
        before: Option<&'a str>,
        token: FencingToken,
    },
    ReplicaRefuses {
        me: &'a str,
        command: &'a str,
    },
    NotSyncedRefuses {
        me: &'a str,
        command: &'a str,
    },
    /// The acquiring command and what it returned: `granted` is `None` while someone else
    /// holds the lease.
    Ran {
        me: &'a str,
        command: &'a str,
        source: TokenSource,
        lease: &'a str,
        granted: Option<FencingToken>,
    },
    OthersTable {
        who: &'a str,
        me: &'a str,
        owner: &'a str,
        lease: &'a str,
        token: FencingToken,
    },
    OwnTable {
        me: &'a str,
        who: &'a str,
        before: FencingToken,
        token: FencingToken,
        lease: &'a str,
        ttl_ms: u64,
    },
    TableTakenOver {
        lease: &'a str,
        before: FencingToken,
        token: FencingToken,
        who: &'a str,
        ttl_ms: u64,
    },
    WaitsForCopy {
        source: TokenSource,
        me: &'a str,
        who: &'a str,
    },
    /// A read of the row; `left_us` is `None` when the row is free.
    Read {
        me: &'a str,
        lease: &'a str,
        owner: &'a str,
        token: FencingToken,
        left_us: Option<u64>,
    },
    ReadReplicaLags {
        me: &'a str,
    },
    ClaimUpdate {
        me: &'a str,
        who: &'a str,
        ttl_ms: u64,
        lease: &'a str,
        token: FencingToken,
    },
    ClaimOverwrote {
        who: &'a str,
        old: &'a str,
        lease: &'a str,
    },
    ClaimSet {
        who: &'a str,
        token: FencingToken,
    },
    ReplayedLate {
        me: &'a str,
        lease: &'a str,
        owner: &'a str,
        token: FencingToken,
    },
    HoldsChange {
        me: &'a str,
        lease: &'a str,
        owner: &'a str,
        token: FencingToken,
    },
    Rejoined {
        me: &'a str,
        who: &'a str,
    },
    SyncTakes {
        who: &'a str,
        me: &'a str,
        token: FencingToken,
    },
    SyncFindsNothing {
        who: &'a str,
        me: &'a str,
    },
    Committed {
        who: &'a str,
        me: &'a str,
        holder: &'a str,
    },
    TookOver {
        source: TokenSource,
        gone: &'a str,
        me: &'a str,
        has: Holding<'a>,
    },
    BackAsReplica {
        me: &'a str,
        standby: &'a str,
    },
}

/// The acquiring command of `source`, with its values bound.
pub fn acquire_command(source: TokenSource, lease: &str, who: &str, ttl_ms: u64) -> String {
    let ttl = seconds(ttl_ms);
    match source {
        TokenSource::LeaseTable => format!(
            "INSERT INTO lease … VALUES ('{lease}', '{who}', 1, now(), now() + interval '{ttl}') ON CONFLICT (name) DO UPDATE … WHERE lease.expires_at < now() OR lease.owner = '{who}' RETURNING fence_token"
        ),
        TokenSource::PostgresSequence => format!(
            "BEGIN; UPDATE lease SET owner = '{who}', fence_token = nextval('{seq}'), expires_at = now() + interval '{ttl}' WHERE name = '{lease}' AND (expires_at < now() OR owner = '{who}') RETURNING fence_token; COMMIT;",
            seq = sequence_name(lease)
        ),
        TokenSource::DynamoDb => format!(
            "UpdateItem(Key: {{pk: \"lease#{lease}\"}}, UpdateExpression: \"SET #owner = :me, expires = :exp ADD fence :one\", ConditionExpression: \"attribute_not_exists(pk) OR expires < :now OR #owner = :me\", ReturnValues: \"UPDATED_NEW\") with :me = \"{who}\""
        ),
        TokenSource::K8sLease => format!(
            "PUT /apis/coordination.k8s.io/v1/namespaces/default/leases/{lease} with the resourceVersion it read: holderIdentity \"{who}\", leaseDurationSeconds {}, leaseTransitions + 1",
            ttl_ms / 1_000
        ),
        TokenSource::Etcd => format!(
            "Txn().If(CreateRevision(\"/locks/{lease}\") == 0).Then(Put(\"/locks/{lease}\", \"{who}\", WithLease(ttl {ttl})))"
        ),
        TokenSource::ZooKeeper => format!(
            "create(\"/locks/{lease}/lock-\", \"{who}\", EPHEMERAL_SEQUENTIAL) under a container parent, returning its Stat; session timeout {ttl}"
        ),
        TokenSource::RedisLua => format!(
            "EVAL \"if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return false\" 2 lock:{lease} fence:{lease} {who} {ttl_ms}"
        ),
    }
}

/// What the command returns on a grant with token `t`.
fn granted_text(source: TokenSource, lease: &str, t: FencingToken) -> String {
    match source {
        TokenSource::LeaseTable | TokenSource::PostgresSequence => format!("fence_token {t}"),
        TokenSource::DynamoDb => format!("Attributes: {{fence: {t}, …}}"),
        TokenSource::K8sLease => format!("200 OK, spec.leaseTransitions {t}"),
        TokenSource::Etcd => format!("succeeded: true, header.revision {t}"),
        TokenSource::ZooKeeper => format!("\"/locks/{lease}/lock-…\", the lowest node: Stat.czxid {t}"),
        TokenSource::RedisLua => format!("(integer) {t}"),
    }
}

/// What the command returns while someone else holds the lease.
fn refused_text(source: TokenSource) -> &'static str {
    match source {
        TokenSource::LeaseTable => "0 rows",
        TokenSource::PostgresSequence => "UPDATE 0, no token",
        TokenSource::DynamoDb => "ConditionalCheckFailedException",
        TokenSource::K8sLease => "not sent: the Lease it read is held and unexpired",
        TokenSource::Etcd => "succeeded: false (the key exists)",
        TokenSource::ZooKeeper => "a node behind the holder's: wait, watching it",
        TokenSource::RedisLua => "(nil): the key exists",
    }
}

/// How a source's grant reads, beyond the command and its answer.
fn source_note(source: TokenSource, who: &str, before: Option<&str>, token: FencingToken) -> String {
    let change = match (before, source) {
        (Some(b), TokenSource::DynamoDb) => {
            format!("By {who}'s own clock, the :now it sent, {b}'s expires has passed, so {who} takes over")
        }
        (Some(b), TokenSource::K8sLease) => format!(
            "{who}'s client-go has seen {b}'s Lease unchanged for leaseDurationSeconds by its own clock, so {who} writes itself in as holder"
        ),
        (Some(b), _) => format!("{b}'s lease has run out, so {who} takes over"),
        (None, _) => format!("The lease is free, so {who} takes it"),
    };
    match source {
        TokenSource::PostgresSequence => format!(
            "{change}. The token is nextval, drawn inside the same transaction that takes the row: {token}. A sequence only grows, so a fence needs nothing more."
        ),
        TokenSource::DynamoDb => format!(
            "{change}. The condition and the ADD are one conditional write, and ReturnValues hands back the new counter in the same round trip: {token}."
        ),
        TokenSource::K8sLease => format!(
            "{change}. The holder changed, so leaseTransitions goes up by one: {token}. The write carried the resourceVersion {who} read, so had anyone changed the Lease since, the API server would have answered 409 Conflict. client-go's docs say its election gives no fencing: carrying leaseTransitions is up to you."
        ),
        TokenSource::Etcd => format!(
            "{change}. The key did not exist, so the put succeeds; its revision, {token}, is the token. etcd's revisions only grow, across the whole cluster."
        ),
        TokenSource::ZooKeeper => format!(
            "{change}: its node is the lowest under the lock. Its token is the node's czxid, {token}: the zxid of the create, which only grows. Not the number in the node's name: Curator's lock parent is a container node, deleted once empty, and a new one numbers from 0 again."
        ),
        TokenSource::RedisLua => format!(
            "{change}. The script runs as one step: SET NX succeeded, so it INCRs the fence key and returns {token}."
        ),
        TokenSource::LeaseTable => format!("{change}, with token {token}."),
    }
}

/// Microseconds as seconds, e.g. `15.644 s`.
fn at(us: u64) -> String {
    seconds(us / MS_US)
}

impl From<PlacedLeaseSaw<'_>> for String {
    fn from(saw: PlacedLeaseSaw<'_>) -> String {
        use PlacedLeaseSaw::*;
        match saw {
            EtcdKeyDeleted { owner, token } => format!(
                "When {owner}'s etcd lease ran out, etcd deleted its key: revision {}. The new put is revision {}.",
                token.0 + 1,
                token.0 + 2
            ),
            NotPastClientNow {
                holder,
                who,
                expires_at_us,
                client_now_us,
            } => format!(
                "{holder}'s item says expires = {}, from {holder}'s clock; {who} sent :now = {}, from its own. Not past, so the condition fails. DynamoDB reads no clock here: the lease holds only as well as the workers' clocks agree.",
                at(expires_at_us),
                at(client_now_us)
            ),
            K8sSeenUnchanged {
                who,
                holder,
                seen_for_us,
                ttl_ms,
            } => format!(
                "{who}'s client-go has seen {holder}'s Lease unchanged for {} by its own clock, short of leaseDurationSeconds ({}): it does not try. The API server judges no expiry.",
                at(seen_for_us),
                seconds(ttl_ms)
            ),
            K8sNotesTime { who, holder, ttl_ms } => format!(
                "{who}'s client-go reads the Lease, held by {holder}, and notes the time by its own clock: it will take over only if the record is still unchanged {} later by that clock.",
                seconds(ttl_ms)
            ),
            HeldByMyClock {
                holder,
                lease,
                left_us,
                me,
                who,
            } => format!(
                "{holder} holds {lease} for another {} by {me}'s clock, so {who} gets no lease and backs off.",
                at(left_us)
            ),
            ZkStillBehind { who, czxid, holder } => format!(
                "{who}'s node (czxid {czxid}) is still behind {holder}'s, whose session is alive: {who} keeps watching."
            ),
            ZkQueued { who, holder, czxid } => format!(
                "{who}'s node sorts behind {holder}'s: {who} does not hold the lock yet. As the recipe says, it sets a watch on the node just ahead and sends nothing more until it fires. Its czxid, {czxid}, was fixed at create."
            ),
            ZkSessionTimedOut { gone, who } => format!(
                "{gone}'s session times out: the ensemble deletes its ephemeral node, and the watch {who} set on it fires. {who} lists the children again: its own node is now the lowest."
            ),
            SourceGrant {
                source,
                who,
                before,
                token,
            } => source_note(source, who, before, token),
            ReplicaRefuses { me, command } => {
                format!("{me} is a replica and takes no writes: {command} is refused.")
            }
            NotSyncedRefuses { me, command } => format!(
                "{me} has not yet heard what the other copies hold, so it takes no writes yet: {command} is refused."
            ),
            Ran {
                me,
                command,
                source,
                lease,
                granted,
            } => {
                let answer = match granted {
                    Some(token) => granted_text(source, lease, token),
                    None => refused_text(source).to_string(),
                };
                format!("{me}: {command} → {answer}")
            }
            OthersTable {
                who,
                me,
                owner,
                lease,
                token,
            } => format!(
                "{who} writes to {me}, a table only {owner} is meant to use: it has never heard of anyone else, so {who} holds {lease} with token {token}."
            ),
            OwnTable {
                me,
                who,
                before,
                token,
                lease,
                ttl_ms,
            } => format!(
                "{me} is {who}'s own table. Nobody else writes here, so the row is always free for {who}: token {before} becomes {token}, and {who} holds {lease} for {}. Whatever the other nodes' tables say, this one says yes.",
                seconds(ttl_ms)
            ),
            TableTakenOver {
                lease,
                before,
                token,
                who,
                ttl_ms,
            } => format!(
                "The row for {lease} is expired, so the statement takes it over: token {before} becomes {token}, and {who} holds the lease for {}. Every worker asks this same row.",
                seconds(ttl_ms)
            ),
            WaitsForCopy { source, me, who } => match source {
                // PostgreSQL answers a COMMIT at once unless told to wait for a standby.
                TokenSource::LeaseTable | TokenSource::PostgresSequence => format!(
                    "{me} runs synchronous replication (synchronous_standby_names lists a standby; PostgreSQL's default is asynchronous), so COMMIT returns to {who} only once a standby holds the change."
                ),
                _ => format!(
                    "{me} tells {who} only once a replica holds the change: with {me} itself that is a majority of the three copies."
                ),
            },
            Read {
                me,
                lease,
                owner,
                token,
                left_us,
            } => {
                let state = match left_us {
                    None => "expired".to_string(),
                    Some(left_us) => format!("held by {owner} for another {}", at(left_us)),
                };
                format!(
                    "{me}: SELECT owner, fence_token, expires_at FROM lease WHERE name = '{lease}' → owner {owner}, fence_token {token}: {state}."
                )
            }
            ReadReplicaLags { me } => format!(
                "{me} is a read replica: it answers from the changes it has replayed so far, behind the primary by the replication lag. What it calls expired may already be taken there."
            ),
            ClaimUpdate {
                me,
                who,
                ttl_ms,
                lease,
                token,
            } => format!(
                "{me}: UPDATE lease SET owner = '{who}', fence_token = fence_token + 1, acquired_at = now(), expires_at = now() + interval '{}' WHERE name = '{lease}' RETURNING fence_token → {token}",
                seconds(ttl_ms)
            ),
            ClaimOverwrote { who, old, lease } => format!(
                "The UPDATE has no condition: {who} decided from its read that the lease was free, so the primary overwrites {old}'s unexpired row. {old} still believes it holds {lease}: two holders."
            ),
            ClaimSet { who, token } => format!("The primary sets the row to {who}, token {token}."),
            ReplayedLate {
                me,
                lease,
                owner,
                token,
            } => format!(
                "{me} replays the primary's change, late: {lease} is {owner}'s, fence_token {token}. Until now it still showed the old row."
            ),
            HoldsChange {
                me,
                lease,
                owner,
                token,
            } => format!("{me} now holds the change too: {lease} is {owner}'s, token {token}."),
            Rejoined { me, who } => format!(
                "{me}, the primary now, takes {who} back as a replica and sends it the row."
            ),
            SyncTakes { who, me, token } => format!(
                "{who} holds a change {me} missed: {me} takes it (token {token}) before taking writes."
            ),
            SyncFindsNothing { who, me } => {
                format!("{who} holds nothing {me} lacks: {me} takes writes now.")
            }
            Committed { who, me, holder } => format!(
                "{who} holds the grant: two of three copies have it, so it is committed and {me} answers {holder}."
            ),
            TookOver {
                source,
                gone,
                me,
                has,
            } => {
                let has = match has {
                    Holding::Lease { owner, token } => format!("{owner}'s lease with token {token}"),
                    Holding::Counter { token } => format!("no holder, and the counter at {token}"),
                };
                match source {
                    TokenSource::RedisLua => format!(
                        "Sentinel sees {gone} gone and promotes {me}, the replica. It has what the stream had carried when {gone} died: {has}."
                    ),
                    TokenSource::LeaseTable | TokenSource::PostgresSequence => format!(
                        "{gone} is gone; the failover manager (Patroni, say) promotes {me}, a synchronous standby. Every commit waited for a standby, so it has {has}."
                    ),
                    TokenSource::DynamoDb => format!(
                        "The storage node {gone} is gone; {me} takes over as leader of the partition's replica group. Each write was acknowledged only once a quorum had it, so it has {has}."
                    ),
                    TokenSource::ZooKeeper => format!(
                        "{gone}, the ZooKeeper leader, is gone; the survivors elect {me}. ZAB commits a change on a majority before anyone is told, so it has {has}."
                    ),
                    TokenSource::K8sLease | TokenSource::Etcd => format!(
                        "{gone}, the etcd leader, is gone; the survivors elect {me} in a new Raft term. Every grant was committed on a majority first, so it has {has}."
                    ),
                }
            }
            BackAsReplica { me, standby } => format!(
                "{me} was the primary when it went down; a crash of the primary promotes {standby}, so {me} comes back as a replica and takes no writes."
            ),
        }
    }
}
