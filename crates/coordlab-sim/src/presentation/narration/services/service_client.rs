//! What a client of a lock service saw, and the sentences it reads as.

use crate::kernel::time::MS_US;
use crate::presentation::durations::seconds;
use crate::protocols::services::service_lock::Flavour;

/// One thing a lock-service client saw; `me` is the client's own name.
pub enum ServiceClientSaw<'a> {
    /// It holds the lock with `number`, renewing every `renew_every_ms`.
    Holds {
        flavour: Flavour,
        me: &'a str,
        number: u64,
        renew_every_ms: u64,
    },
    /// Redisson: the lock is taken for another `left_us`; it subscribes and waits.
    Subscribes {
        left_us: u64,
        me: &'a str,
    },
    /// Its renewal was refused; `in_job` while its job still runs (a refused write may
    /// already have stopped it).
    RenewalRefused {
        flavour: Flavour,
        me: &'a str,
        in_job: bool,
    },
    UnlockRefused {
        flavour: Flavour,
        me: &'a str,
    },
    StepRefused {
        me: &'a str,
        step: u32,
    },
    Stuck {
        me: &'a str,
        step: u32,
    },
}

impl From<ServiceClientSaw<'_>> for String {
    fn from(saw: ServiceClientSaw<'_>) -> String {
        use ServiceClientSaw::*;
        match saw {
            Holds {
                flavour,
                me,
                number,
                renew_every_ms,
            } => {
                let every = seconds(renew_every_ms);
                match flavour {
                    Flavour::Redisson => format!(
                        "{me} holds the lock and starts its job. Redisson's watchdog thread will renew the lock every {every} (a third of the 30 s watchdog timeout) for as long as the process runs."
                    ),
                    Flavour::Chubby => format!(
                        "{me} holds the lock with sequencer generation {number}. Its Chubby library sends a KeepAlive at once; the cell holds it until the lease nears its end."
                    ),
                    Flavour::Hazelcast => format!(
                        "{me} holds the FencedLock with fence {number}; its CP session is kept alive by a heartbeat every {every}."
                    ),
                }
            }
            Subscribes { left_us, me } => format!(
                "The lock is taken, and the script returns the key's remaining TTL, {}. Redisson subscribes {me} to the lock's channel: it waits for an unlock message, or for that TTL to run out, then tries again.",
                seconds(left_us / MS_US)
            ),
            RenewalRefused {
                flavour,
                me,
                in_job: false,
            } => format!(
                "{me}'s {} is refused: the lock is no longer its own. Its job had already stopped.",
                flavour.renewal_word()
            ),
            RenewalRefused { flavour, me, .. } => match flavour {
                Flavour::Redisson => format!(
                    "{me}'s watchdog finds the lock gone and stops renewing. Nothing tells the job thread: it carries on as if it still held the lock."
                ),
                // The refusal reaches the library's background thread, not the job: a job
                // that writes after this must not read as if it had been told to stop.
                Flavour::Chubby => format!(
                    "{me}'s KeepAlive is refused: the cell has ended its session, and its lock with it. The library will report the session expired, but the job thread is mid-step and does not check before its next write: only a sequencer check at the storage can refuse that write."
                ),
                Flavour::Hazelcast => format!(
                    "{me}'s CP session heartbeat is refused: the CP group closed that session, and {me}'s lock went with it. Heartbeats run on a background thread, so the job thread is not told: only its next lock or unlock call would fail (LockOwnershipLostException), and until then it writes as before."
                ),
            },
            UnlockRefused { flavour, me } => match flavour {
                Flavour::Redisson => format!(
                    "{me}'s unlock() fails with IllegalMonitorStateException: the lock is not its own any more. The first sign of trouble arrives after its writes have landed."
                ),
                Flavour::Hazelcast => format!(
                    "{me}'s unlock() fails with LockOwnershipLostException: its CP session was closed, and its lock with it."
                ),
                Flavour::Chubby => format!("{me}'s unlock is refused: it no longer held the lock."),
            },
            StepRefused { me, step } => format!(
                "{me}'s step {step} is refused. It learns it lost the lock and abandons the job."
            ),
            Stuck { me, step } => format!(
                "{me} writes step {step}, then its job thread blocks on a call that never returns (a socket read without a timeout). The process is alive, and so is the watchdog thread."
            ),
        }
    }
}
