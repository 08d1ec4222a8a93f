//! What the lease store saw as it ran its statements, and the sentences it reads as.

use crate::kernel::ids::FencingToken;
use crate::kernel::time::MS_US;
use crate::presentation::durations::seconds;
use crate::protocols::lease::lease_store::{ReleaseStyle, EARLIER_OWNER};

/// Who had a row before a takeover, and how it came free.
pub enum Freed<'a> {
    /// A row an earlier run left, expired.
    ByEarlierRun,
    /// Its owner released it by setting `expires_at = now()`.
    Released { owner: &'a str },
    /// It expired at this store-clock instant.
    Expired { owner: &'a str, at_us: u64 },
}

/// Why a grant's expiry instant changed nothing.
pub enum Lapse<'a> {
    RowGone,
    TakenOverAndReleased { owner: &'a str, token: FencingToken },
    TakenOver { owner: &'a str, token: FencingToken },
    ReleasedAlready { owner: &'a str },
}

/// One thing the lease store saw while handling a request or a timer.
pub enum LeaseStoreSaw<'a> {
    Up {
        rows: usize,
    },
    EarlierRunRow {
        lease: &'a str,
        token: FencingToken,
    },
    /// The acquisition statement it ran: whole the first time, then only the deciding values;
    /// `returned` is `None` for zero rows.
    Acquisition {
        sql: &'a [String],
        whole: bool,
        me: &'a str,
        returned: Option<FencingToken>,
    },
    /// `drew` is the sequence number the statement drew and did not use.
    HeldByAnother {
        who: &'a str,
        lease: &'a str,
        holder: &'a str,
        left_us: u64,
        drew: Option<FencingToken>,
    },
    Inserted {
        lease: &'a str,
        token: FencingToken,
        who: &'a str,
        ttl_ms: u64,
        from_sequence: bool,
    },
    Renewed {
        who: &'a str,
        lease: &'a str,
        token: FencingToken,
        ttl_ms: u64,
        drew: Option<FencingToken>,
    },
    RenewedWithNewNumber {
        who: &'a str,
        lease: &'a str,
        was: FencingToken,
        token: FencingToken,
    },
    TakenOver {
        lease: &'a str,
        freed: Freed<'a>,
        who: &'a str,
        was: FencingToken,
        token: FencingToken,
        from_sequence: bool,
        /// Whether the statement tells a renewal from a takeover with a CASE (the renewal
        /// bug's statement has none).
        has_case: bool,
    },
    LowerThanBefore {
        prev: FencingToken,
        lease: &'a str,
        who: &'a str,
    },
    OverlapsLiveGrant {
        owner: &'a str,
        left_us: u64,
        lease: &'a str,
    },
    /// The release statement it ran and its command tag with the row count.
    Release {
        sql: &'a str,
        tag: &'a str,
        matched: bool,
    },
    ReleaseFoundNoRow {
        who: &'a str,
        lease: &'a str,
        tag: &'a str,
    },
    ReleaseByFormerOwner {
        who: &'a str,
        lease: &'a str,
        owner: &'a str,
        tag: &'a str,
    },
    NaiveReleaseOfAnothersRow {
        who: &'a str,
        lease: &'a str,
        owner: &'a str,
    },
    Released {
        who: &'a str,
        lease: &'a str,
        style: ReleaseStyle,
        from_sequence: bool,
        token: FencingToken,
    },
    LapsedWithoutChange {
        lease: &'a str,
        token: FencingToken,
        why: Lapse<'a>,
    },
    Expired {
        owner: &'a str,
        lease: &'a str,
        token: FencingToken,
    },
}

/// Store-clock microseconds as seconds, e.g. `15.644 s`.
fn at(us: u64) -> String {
    seconds(us / MS_US)
}

/// The unused sequence number a statement drew, as a sentence to append.
fn drew_unused(drew: Option<FencingToken>) -> String {
    drew.map_or(String::new(), |d| {
        format!(
            " nextval drew {d}, unused: a sequence leaves gaps, and a fence only needs its numbers to grow."
        )
    })
}

impl From<LeaseStoreSaw<'_>> for String {
    fn from(saw: LeaseStoreSaw<'_>) -> String {
        use LeaseStoreSaw::*;
        match saw {
            Up { rows } => format!(
                "The lease store is up: one table, one row per lockable name; {rows} row(s) now."
            ),
            EarlierRunRow { lease, token } => format!(
                "The row for {lease} is left from an earlier run (owner {EARLIER_OWNER}): expired, with fence_token {token}. The next holder takes it over with {}.",
                token.0 + 1
            ),
            Acquisition {
                sql,
                whole,
                me,
                returned,
            } => {
                let result = returned.map_or("0 rows".to_string(), |t| t.to_string());
                if whole {
                    let whole: Vec<&str> = sql.iter().map(|l| l.trim()).collect();
                    format!("{} → {result}", whole.join(" ").trim_end_matches(';'))
                } else {
                    format!(
                        "INSERT … ON CONFLICT (name) DO UPDATE … WHERE lease.expires_at < now() OR lease.owner = '{me}' RETURNING fence_token → {result}"
                    )
                }
            }
            HeldByAnother {
                who,
                lease,
                holder,
                left_us,
                drew,
            } => format!(
                "{who} asks for {lease}, but {holder} holds it for another {} by the store's clock: the WHERE matches nothing, zero rows returned. Back off.{}",
                seconds(left_us / MS_US),
                drew_unused(drew)
            ),
            Inserted {
                lease,
                token,
                who,
                ttl_ms,
                from_sequence: true,
            } => format!(
                "No row for {lease}, so the INSERT itself succeeds, with nextval as its fence_token: {token}. {who} holds it for {}.",
                seconds(ttl_ms)
            ),
            Inserted {
                lease,
                token,
                who,
                ttl_ms,
                from_sequence: false,
            } => format!(
                "No row for {lease}, so the INSERT itself succeeds and the row starts at fence_token {token}. {who} holds it for {}.",
                seconds(ttl_ms)
            ),
            Renewed {
                who,
                lease,
                token,
                ttl_ms,
                drew,
            } => format!(
                "{who} already owns {lease}: lease.owner = '{who}', so the CASE keeps token {token} and the renewal extends it by {}.{}",
                seconds(ttl_ms),
                drew_unused(drew)
            ),
            RenewedWithNewNumber {
                who,
                lease,
                was,
                token,
            } => format!(
                "{who} renews {lease}, and this store's statement has no CASE: every grant gets a new number, so {was} becomes {token}. Anything {who} still has in flight with {was} is now stale."
            ),
            TakenOver {
                lease,
                freed,
                who,
                was,
                token,
                from_sequence,
                has_case,
            } => {
                let why = match freed {
                    Freed::ByEarlierRun => format!(
                        "The row for {lease} is left from an earlier run: expired, with fence_token {was}."
                    ),
                    Freed::Released { owner } => format!(
                        "{lease} was released by setting its expires_at to now() ({owner} owned it), so the row is still there with fence_token {was}."
                    ),
                    Freed::Expired { owner, at_us } => format!(
                        "{lease} expired at {} by the store's clock ({owner} owned it), so lease.expires_at < now() lets the update through.",
                        at(at_us)
                    ),
                };
                let part = if has_case { "the CASE" } else { "the statement" };
                let rule = if from_sequence {
                    format!("{part} takes the number nextval drew")
                } else {
                    format!("{part} adds 1")
                };
                format!("{why} {who} takes it over and {rule}: token {was} becomes {token}.")
            }
            LowerThanBefore { prev, lease, who } => format!(
                "Token {prev} was handed out for {lease} before: deleting the row threw its count away. {who} now holds a lower number than an earlier holder, and anything that has seen {prev} will refuse {who}'s writes."
            ),
            OverlapsLiveGrant {
                owner,
                left_us,
                lease,
            } => format!(
                "But {owner}'s grant still has {} to run, and nobody has told {owner} it lost the lease: two workers now hold {lease} at once. Only the fencing token, checked where the writes land, can keep them apart.",
                seconds(left_us / MS_US)
            ),
            Release { sql, tag, matched } => format!(
                "{} → {tag} {}",
                sql.trim_end_matches(';'),
                u8::from(matched)
            ),
            ReleaseFoundNoRow { who, lease, tag } => format!(
                "{who} releases {lease}, but there is no row for it any more: {tag} 0."
            ),
            ReleaseByFormerOwner {
                who,
                lease,
                owner,
                tag,
            } => format!(
                "{who}'s release names itself as owner, but {lease} now belongs to {owner}: {tag} 0. The new holder's lease survives."
            ),
            NaiveReleaseOfAnothersRow { who, lease, owner } => format!(
                "{who} releases {lease} without checking the owner — but the row is {owner}'s now. {owner} still believes it holds the lease, and the lease is gone."
            ),
            Released {
                who,
                lease,
                style,
                from_sequence,
                token,
            } => match style {
                ReleaseStyle::Expire => format!(
                    "{who} releases {lease} by setting expires_at = now(). The row stays with fence_token {token}, so the next holder takes it over with a higher number."
                ),
                ReleaseStyle::Delete if from_sequence => format!(
                    "{who} releases {lease}: the row is deleted. The sequence keeps its count, so the next holder still gets a higher number."
                ),
                ReleaseStyle::Delete => format!(
                    "{who} releases {lease}: the row is deleted, and its fence_token {token} with it. The next INSERT starts again at 1."
                ),
            },
            LapsedWithoutChange { lease, token, why } => {
                let lapsed = format!("The grant of {lease} with token {token} would have lapsed now");
                match why {
                    Lapse::RowGone => format!("{lapsed}, but the row is gone already: nothing changes."),
                    Lapse::TakenOverAndReleased { owner, token } => format!(
                        "{lapsed}, but {owner} took it over with token {token} since, and has released it: nothing changes."
                    ),
                    Lapse::TakenOver { owner, token } => format!(
                        "{lapsed}, but {owner} holds it with token {token} since: nothing changes."
                    ),
                    Lapse::ReleasedAlready { owner } => {
                        format!("{lapsed}, but {owner} released it already: nothing changes.")
                    }
                }
            }
            Expired {
                owner,
                lease,
                token,
            } => format!(
                "By the store's clock, {owner}'s lease on {lease} (token {token}) has expired. Nobody is told: the next request decides."
            ),
        }
    }
}
