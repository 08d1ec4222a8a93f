//! What the payment rail saw of the instructions it was sent, and the sentences it reads as.

/// One thing the payment rail saw; `who` is the sender.
pub enum RailSaw<'a> {
    Up,
    /// Its log's highest step for the job, 0 for none.
    Progress {
        steps_done: u32,
        who: &'a str,
    },
    Replay {
        key: &'a str,
        who: &'a str,
    },
    SentWithKey {
        amount: i64,
        key: &'a str,
    },
    Sent {
        amount: i64,
    },
}

impl From<RailSaw<'_>> for String {
    fn from(saw: RailSaw<'_>) -> String {
        use RailSaw::*;
        match saw {
            Up => "The payment rail is up. It has never heard of leases or fencing tokens.".to_string(),
            Progress { steps_done: 0, who } => {
                format!("The rail has no instruction for this job yet; it tells {who} so.")
            }
            Progress { steps_done, who } => format!(
                "The rail's log holds instructions for the job up to step {steps_done}; it tells {who} so."
            ),
            Replay { key, who } => format!(
                "The rail has already seen key {key}: {who}'s instruction is recognised as a replay. No money moves."
            ),
            SentWithKey { amount, key } => {
                format!("The rail sends ₹{amount} and remembers key {key}.")
            }
            Sent { amount } => format!(
                "The rail sends ₹{amount}. It has no idea who is allowed to ask, and no way to tell a repeat from a new payment."
            ),
        }
    }
}
