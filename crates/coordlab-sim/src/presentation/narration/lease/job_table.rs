//! What the job table saw of the claims on its rows, and the sentences it reads as.

/// One thing the job table saw; `who` is the worker whose statement it ran.
pub enum JobTableSaw<'a> {
    Up {
        claimed: usize,
    },
    DuplicateKey {
        key: &'a str,
        owner: &'a str,
        who: &'a str,
    },
    Inserted {
        who: &'a str,
        key: &'a str,
    },
    NotPending {
        key: &'a str,
        who: &'a str,
    },
    Claimed {
        key: &'a str,
        who: &'a str,
    },
}

impl From<JobTableSaw<'_>> for String {
    fn from(saw: JobTableSaw<'_>) -> String {
        use JobTableSaw::*;
        match saw {
            Up { claimed: 0 } => "The job table is up and nothing is claimed yet. A claim is one row, and the database alone decides who gets it.".to_string(),
            Up { claimed } => format!("The job table is up with {claimed} claimed job(s)."),
            DuplicateKey { key, owner, who } => format!(
                "Duplicate key {key}: {owner} already inserted this run. {who}'s insert fails with a conflict."
            ),
            Inserted { who, key } => {
                format!("{who} inserts {key}. The primary key now rejects every other copy.")
            }
            NotPending { key, who } => {
                format!("{key} is no longer pending: {who}'s update matches zero rows.")
            }
            Claimed { key, who } => format!(
                "{key} was pending: {who}'s update changes one row, so the work is {who}'s."
            ),
        }
    }
}
