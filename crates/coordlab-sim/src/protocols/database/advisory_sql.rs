//! The statements of `advisory-locks`: PostgreSQL's advisory-lock functions on a job's name
//! squeezed through `hashtext`, one place for the SQL text the player shows and the
//! conformance tests run (`crates/coordlab-conformance`), and a port of `hashtext` so the
//! model computes the same key the server does.

crate::inbox!(AdvisoryMsg);

/// The report job's lock name.
pub const REPORT_JOB: &str = "job:report-5661";
/// An invoice job whose name hashes to another key than the report's.
pub const INVOICE_JOB: &str = "job:invoice-21143";
/// An unrelated invoice job whose name `hashtext` maps to the report's key.
pub const COLLIDING_INVOICE_JOB: &str = "job:invoice-21142";
/// `hashtext(REPORT_JOB)` and `hashtext(COLLIDING_INVOICE_JOB)` on PostgreSQL 15 (x86-64).
pub const REPORT_KEY: i64 = 1_980_164_416;
/// `hashtext(INVOICE_JOB)`.
pub const INVOICE_KEY: i64 = 888_775_970;

/// How long an advisory lock lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `…_xact_…`: until the transaction's COMMIT or ROLLBACK.
    Xact,
    /// Until `pg_advisory_unlock` on the same connection, or until it closes.
    Session,
}

/// What the lock call does when another session holds the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// `pg_try_…`: return false at once.
    Try,
    /// Block until the key is free.
    Block,
}

/// The lock function for a scope and a way of waiting.
pub fn lock_function(scope: Scope, wait: Wait) -> &'static str {
    match (scope, wait) {
        (Scope::Xact, Wait::Try) => "pg_try_advisory_xact_lock",
        (Scope::Xact, Wait::Block) => "pg_advisory_xact_lock",
        (Scope::Session, Wait::Try) => "pg_try_advisory_lock",
        (Scope::Session, Wait::Block) => "pg_advisory_lock",
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdvisoryRequest {
    Begin,
    /// `SELECT <lock function>(hashtext('<name>'))`.
    Lock {
        name: &'static str,
        scope: Scope,
        wait: Wait,
    },
    /// `SELECT pg_advisory_unlock(hashtext('<name>'))`.
    Unlock {
        name: &'static str,
    },
    Commit,
    Rollback,
    /// The client closes the connection (libpq's Terminate message): no SQL, no reply.
    Close,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdvisoryReply {
    Begun,
    /// A `pg_try_…` call's result, or `pg_advisory_unlock`'s.
    Bool(bool),
    /// A blocking lock call returned (its result is `void`): the lock is held.
    Granted,
    Committed,
    RolledBack,
    /// The statement came on a connection the database no longer has (SQLSTATE 08003).
    NoConnection,
}

/// A statement and the client connection it travels on (each pooled connection of a worker
/// has its own number), or a reply on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdvisoryMsg {
    Request { conn: u32, request: AdvisoryRequest },
    Reply { conn: u32, reply: AdvisoryReply },
}

impl AdvisoryRequest {
    /// The statement as the player shows it and the conformance tests run it.
    pub fn sql_text(&self) -> String {
        match self {
            AdvisoryRequest::Begin => "BEGIN".to_string(),
            AdvisoryRequest::Lock { name, scope, wait } => {
                format!("SELECT {}(hashtext('{name}'))", lock_function(*scope, *wait))
            }
            AdvisoryRequest::Unlock { name } => format!("SELECT pg_advisory_unlock(hashtext('{name}'))"),
            AdvisoryRequest::Commit => "COMMIT".to_string(),
            AdvisoryRequest::Rollback => "ROLLBACK".to_string(),
            AdvisoryRequest::Close => "(closes the connection)".to_string(),
        }
    }
}

/// PostgreSQL's `hashtext` for text in a deterministic collation: `hash_any` over the UTF-8
/// bytes (Bob Jenkins' lookup3, as in `src/common/hashfn.c`, read as a little-endian machine
/// does), as a signed 32-bit number. Advisory-lock calls widen it to the bigint key.
pub fn hashtext(text: &str) -> i32 {
    let bytes = text.as_bytes();
    let init = 0x9e37_79b9u32
        .wrapping_add(bytes.len() as u32)
        .wrapping_add(3_923_095);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut rest = bytes;
    while rest.len() >= 12 {
        let word = |i: usize| u32::from_le_bytes([rest[i], rest[i + 1], rest[i + 2], rest[i + 3]]);
        a = a.wrapping_add(word(0));
        b = b.wrapping_add(word(4));
        c = c.wrapping_add(word(8));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    for (i, byte) in rest.iter().enumerate() {
        let v = u32::from(*byte);
        match i {
            0..=3 => a = a.wrapping_add(v << (8 * i)),
            4..=7 => b = b.wrapping_add(v << (8 * (i - 4))),
            // The lowest byte of c holds the length, so the tail starts at its second.
            _ => c = c.wrapping_add(v << (8 * (i - 7))),
        }
    }
    finish(&mut a, &mut b, &mut c);
    c as i32
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    for (x, y, z, r) in [
        (0, 2, 1, 4),
        (1, 0, 2, 6),
        (2, 1, 0, 8),
        (0, 2, 1, 16),
        (1, 0, 2, 19),
        (2, 1, 0, 4),
    ] {
        let mut v = [*a, *b, *c];
        // x -= z; x ^= rot(z, r); z += y
        v[x] = v[x].wrapping_sub(v[y]) ^ v[y].rotate_left(r);
        v[y] = v[y].wrapping_add(v[z]);
        [*a, *b, *c] = v;
    }
}

fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
    for (x, y, r) in [
        (2, 1, 14),
        (0, 2, 11),
        (1, 0, 25),
        (2, 1, 16),
        (0, 2, 4),
        (1, 0, 14),
        (2, 1, 24),
    ] {
        let mut v = [*a, *b, *c];
        v[x] = (v[x] ^ v[y]).wrapping_sub(v[y].rotate_left(r));
        [*a, *b, *c] = v;
    }
}

/// The advisory-lock key of a job's name: `hashtext` widened to bigint.
pub fn key_of(name: &str) -> i64 {
    i64::from(hashtext(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashtext_matches_postgresql() {
        // Values from PostgreSQL 15: SELECT hashtext('…').
        assert_eq!(hashtext(REPORT_JOB), 1_980_164_416);
        assert_eq!(hashtext(COLLIDING_INVOICE_JOB), 1_980_164_416);
        assert_eq!(hashtext(INVOICE_JOB), 888_775_970);
        assert_eq!(hashtext("job:invoice-21141"), -752_200_924);
        assert_eq!(key_of(REPORT_JOB), REPORT_KEY);
        assert_eq!(key_of(INVOICE_JOB), INVOICE_KEY);
    }

    #[test]
    fn the_statements_read_as_postgresql_sql() {
        let lock = AdvisoryRequest::Lock {
            name: REPORT_JOB,
            scope: Scope::Xact,
            wait: Wait::Try,
        };
        assert_eq!(
            lock.sql_text(),
            "SELECT pg_try_advisory_xact_lock(hashtext('job:report-5661'))"
        );
        assert_eq!(
            AdvisoryRequest::Unlock { name: INVOICE_JOB }.sql_text(),
            "SELECT pg_advisory_unlock(hashtext('job:invoice-21143'))"
        );
    }
}
