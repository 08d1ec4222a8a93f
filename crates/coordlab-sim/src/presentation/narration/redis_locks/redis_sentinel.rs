//! What a Redis Sentinel saw as it watched the primary, agreed with the others that it is down
//! and failed it over, and the sentences it reads as.

use crate::presentation::durations::tenths;

/// One thing a sentinel saw; `me` is the sentinel's own name.
pub enum SentinelSaw<'a> {
    /// Said once, by the first sentinel, when they start.
    Watching {
        sentinels: usize,
        primary: &'a str,
        ping_ms: u64,
        down_after_ms: u64,
        quorum: u32,
    },
    ToldToBecomeReplica {
        me: &'a str,
        node: &'a str,
        primary: &'a str,
    },
    RoundsStop,
    Announces {
        me: &'a str,
        primary: &'a str,
    },
    GivesUpElection {
        me: &'a str,
        votes: usize,
        needed: usize,
        epoch: u64,
    },
    SubjectivelyDown {
        me: &'a str,
        primary: &'a str,
        silent_ms: u64,
    },
    AnswersAgain {
        me: &'a str,
        primary: &'a str,
    },
    /// `agree` are the names of the sentinels that find it down, itself first.
    ObjectivelyDown {
        agree: &'a [&'a str],
        primary: &'a str,
        sentinels: usize,
        quorum: u32,
    },
    StartsElection {
        me: &'a str,
        primary: &'a str,
        epoch: u64,
        needed: usize,
        sentinels: usize,
    },
    VotesFor {
        me: &'a str,
        candidate: &'a str,
        epoch: u64,
    },
    WonElection {
        me: &'a str,
        votes: usize,
        sentinels: usize,
        epoch: u64,
    },
    NothingToPromote {
        me: &'a str,
        old: &'a str,
    },
    Promotes {
        me: &'a str,
        new: &'a str,
        offset: u64,
        old: &'a str,
    },
    AdoptsHello {
        me: &'a str,
        from: &'a str,
        primary: &'a str,
        epoch: u64,
    },
}

impl From<SentinelSaw<'_>> for String {
    fn from(saw: SentinelSaw<'_>) -> String {
        use SentinelSaw::*;
        match saw {
            Watching {
                sentinels,
                primary,
                ping_ms,
                down_after_ms,
                quorum,
            } => format!(
                "{sentinels} sentinels watch {primary}. Each pings every node every {ping_ms} ms; to a sentinel that hears nothing for {}, the primary is subjectively down. It is objectively down once {quorum} sentinels agree, and then a majority must vote for one sentinel to perform the failover. (Real Sentinel pings every second and waits 30 s by default.)",
                tenths(down_after_ms)
            ),
            ToldToBecomeReplica { me, node, primary } => format!(
                "{node} answers as a primary, but to {me} the primary is {primary}: it is told to become a replica."
            ),
            RoundsStop => "The sentinels stop their rounds here: the story is over.".to_string(),
            Announces { me, primary } => format!(
                "{primary} confirms it is the primary. {me} tells the clients to send their commands to {primary} from now on."
            ),
            GivesUpElection {
                me,
                votes,
                needed,
                epoch,
            } => format!(
                "{me} has {votes} of the {needed} votes it needs in epoch {epoch} and gives up this election. It tries again later, in a new epoch."
            ),
            SubjectivelyDown {
                me,
                primary,
                silent_ms,
            } => format!(
                "{me} has heard nothing from {primary} for {}: to it, {primary} is subjectively down. One sentinel's opinion is not enough; it asks the others.",
                tenths(silent_ms)
            ),
            AnswersAgain { me, primary } => {
                format!("{primary} answers {me} again: it no longer counts {primary} down.")
            }
            ObjectivelyDown {
                agree,
                primary,
                sentinels,
                quorum,
            } => format!(
                "{} find {primary} down: {} of {sentinels} sentinels, and the quorum is {quorum}. {primary} is objectively down.",
                agree.join(" and "),
                agree.len()
            ),
            StartsElection {
                me,
                primary,
                epoch,
                needed,
                sentinels,
            } => format!(
                "Only one sentinel may fail {primary} over. {me} starts epoch {epoch}: it votes for itself and asks the others for their vote. It needs {needed} of {sentinels}."
            ),
            VotesFor {
                me,
                candidate,
                epoch,
            } => format!(
                "{me} votes for {candidate} to perform the failover in epoch {epoch}: the first sentinel to ask in an epoch gets its vote."
            ),
            WonElection {
                me,
                votes,
                sentinels,
                epoch,
            } => format!(
                "{me} has {votes} of {sentinels} votes in epoch {epoch}, a majority: it performs the failover."
            ),
            NothingToPromote { me, old } => format!(
                "No replica of {old} answers {me}: there is nothing to promote. It gives up this attempt."
            ),
            Promotes {
                me,
                new,
                offset,
                old,
            } => format!(
                "{me} promotes {new}, the replica with the most data it has heard of (#{offset}), and points the other nodes at it. No one asks whether {new} has every write {old} acknowledged."
            ),
            AdoptsHello {
                me,
                from,
                primary,
                epoch,
            } => format!(
                "{me} hears from {from} that {primary} is the primary as of epoch {epoch}, newer than its own view: it adopts it."
            ),
        }
    }
}
