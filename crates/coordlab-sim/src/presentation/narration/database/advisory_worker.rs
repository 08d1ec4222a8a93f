//! What a scheduled worker with an advisory lock saw of its runs, and the sentences it reads
//! as.

/// One thing an advisory-lock worker saw; `me` is the worker's own name.
pub enum AdvisoryWorkerSaw<'a> {
    RunMissed {
        me: &'a str,
        run: &'a str,
        busy: &'a str,
    },
    SkipsRun {
        me: &'a str,
        name: &'a str,
    },
    ThrowsInTransaction {
        me: &'a str,
    },
    ThrowsBeforeUnlock {
        me: &'a str,
    },
    PoolRetires {
        me: &'a str,
    },
    ConnectionBroke {
        me: &'a str,
    },
}

impl From<AdvisoryWorkerSaw<'_>> for String {
    fn from(saw: AdvisoryWorkerSaw<'_>) -> String {
        use AdvisoryWorkerSaw::*;
        match saw {
            RunMissed { me, run, busy } => {
                format!("{me}'s run of {run} is due, but it is still busy with {busy}: this run is missed.")
            }
            SkipsRun { me, name } => {
                format!("{me} skips this run of {name}: as far as it can tell, another run is in progress.")
            }
            ThrowsInTransaction { me } => {
                format!("{me}'s job throws. The error path rolls the transaction back.")
            }
            ThrowsBeforeUnlock { me } => format!(
                "{me}'s job throws before its unlock line. The connection goes back to the pool, still open."
            ),
            PoolRetires { me } => {
                format!("{me}'s pool retires its connection (maximum lifetime).")
            }
            ConnectionBroke { me } => format!("{me}'s connection broke: its run is over."),
        }
    }
}
