//! What the slow payment API saw of its calls, and the sentences it reads as.

use crate::presentation::durations::seconds;

/// One thing the payment API saw; `who` is the caller.
pub enum PaymentApiSaw<'a> {
    Up {
        usual_ms: u64,
    },
    Starts {
        who: &'a str,
        answer_ms: u64,
    },
    PaidBefore {
        key: &'a str,
        who: &'a str,
    },
    SentWithKey {
        amount: i64,
        who: &'a str,
        key: &'a str,
    },
    /// A payout without a key for a step already paid out.
    SentTwice {
        amount: i64,
        who: &'a str,
    },
    Sent {
        amount: i64,
        who: &'a str,
    },
}

impl From<PaymentApiSaw<'_>> for String {
    fn from(saw: PaymentApiSaw<'_>) -> String {
        use PaymentApiSaw::*;
        match saw {
            Up { usual_ms } => format!(
                "The payment API usually answers in {}. It knows nothing of leases or tokens.",
                seconds(usual_ms)
            ),
            Starts { who, answer_ms } => format!(
                "The payment API starts on {who}'s call; it will answer in {}.",
                seconds(answer_ms)
            ),
            PaidBefore { key, who } => format!(
                "Key {key} was paid before: the API answers {who} with the earlier result and sends nothing."
            ),
            SentWithKey { amount, who, key } => {
                format!("The API sends ₹{amount} for {who} and records key {key}.")
            }
            SentTwice { amount, who } => format!(
                "The API sends ₹{amount} for {who}: a second payout for the same job. Nothing told it the first was the same job."
            ),
            Sent { amount, who } => format!("The API sends ₹{amount} for {who}."),
        }
    }
}
