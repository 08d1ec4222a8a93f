//! ShedLock on a JDBC table: every instance of a service runs the same `@Scheduled` job,
//! and each run first tries to take a row of the `shedlock` table. Taking it is one
//! conditional UPDATE (`… WHERE name = :name AND lock_until <= :now`); letting it go sets
//! `lock_until` to `max(now, locked_at + lockAtLeastFor)`.
//!
//! Which clock `:now` reads decides the story. With `usingDbTime()` it is the database's
//! clock in both statements, so the row is consistent but an instance whose clock runs ahead
//! fires its schedule early and may finish before the others fire. With the application's
//! clock (ShedLock's default) each instance stamps the row with its own reading.

use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, NoTimer, Participant};
use crate::kernel::time::MS_US;
use crate::presentation::narration::services::shedlock::{ScheduledInstanceSaw, ShedlockDbSaw};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShedMsg {
    /// `now_us`: the instance's reading, or `None` to use the database's (`usingDbTime()`).
    TryLock {
        slot: u32,
        now_us: Option<u64>,
        at_most_ms: u64,
    },
    Locked {
        slot: u32,
        locked_at_us: u64,
    },
    NotLocked {
        slot: u32,
    },
    /// Runs the job's effect: one report row for the schedule `slot`.
    Report {
        slot: u32,
    },
    Unlock {
        now_us: Option<u64>,
        locked_at_us: u64,
        at_least_ms: u64,
    },
}

crate::inbox!(ShedMsg);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShedRow {
    pub lock_until_us: u64,
    pub locked_at_us: u64,
    pub locked_by: Option<NodeId>,
}

/// One report the job wrote: which schedule, by whom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportRow {
    pub slot: u32,
    pub by: NodeId,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShedDbDurable {
    pub row: ShedRow,
    pub reports: Vec<ReportRow>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShedlockDb {
    pub durable: ShedDbDurable,
}

impl ShedlockDb {
    pub fn initial() -> ShedDbDurable {
        ShedDbDurable::default()
    }

    /// How many times the job ran for schedule `slot`.
    pub fn runs(d: &ShedDbDurable, slot: u32) -> u32 {
        d.reports.iter().filter(|r| r.slot == slot).count() as u32
    }
}

impl Participant for ShedlockDb {
    type Msg = ShedMsg;
    type Timer = NoTimer;
    type Durable = ShedDbDurable;
    type Config = ();

    fn on_start(&mut self, _ctx: &mut Ctx<'_, Self>) {}

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: ShedMsg) {
        let who = ctx.name(from);
        let db_now = ctx.local_now_us;
        match msg {
            ShedMsg::TryLock {
                slot,
                now_us,
                at_most_ms,
            } => {
                let now = now_us.unwrap_or(db_now);
                let own_clock = now_us.is_some();
                let row = &mut self.durable.row;
                if row.lock_until_us <= now {
                    let was = row.lock_until_us;
                    row.lock_until_us = now + at_most_ms * MS_US;
                    row.locked_at_us = now;
                    row.locked_by = Some(from);
                    ctx.note(ShedlockDbSaw::Locked {
                        was_us: was,
                        now_us: now,
                        who,
                        own_clock,
                        until_us: row.lock_until_us,
                        at_most_ms,
                    });
                    let locked_at_us = now;
                    ctx.persist(self.durable.clone());
                    ctx.send(from, ShedMsg::Locked { slot, locked_at_us });
                } else {
                    ctx.note(ShedlockDbSaw::Skipped {
                        until_us: row.lock_until_us,
                        now_us: now,
                        who,
                        own_clock,
                    });
                    ctx.send(from, ShedMsg::NotLocked { slot });
                }
            }
            ShedMsg::Report { slot } => {
                self.durable.reports.push(ReportRow { slot, by: from });
                ctx.note(ShedlockDbSaw::Report {
                    who,
                    slot,
                    runs: ShedlockDb::runs(&self.durable, slot),
                });
                ctx.persist(self.durable.clone());
            }
            ShedMsg::Unlock {
                now_us,
                locked_at_us,
                at_least_ms,
            } => {
                let now = now_us.unwrap_or(db_now);
                let until = now.max(locked_at_us + at_least_ms * MS_US);
                self.durable.row.lock_until_us = until;
                ctx.note(if until > now {
                    ShedlockDbSaw::UnlockHeld {
                        who,
                        until_us: until,
                        at_least_ms,
                        now_us: now,
                    }
                } else {
                    ShedlockDbSaw::Unlocked { who, until_us: until }
                });
                ctx.persist(self.durable.clone());
            }
            _ => {}
        }
    }

    fn recover(_config: &(), _id: NodeId, durable: &ShedDbDurable) -> Self {
        ShedlockDb {
            durable: durable.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceConfig {
    pub db: NodeId,
    /// The cron period: the job fires at every multiple of it, by the instance's clock.
    pub period_ms: u64,
    pub job_ms: u64,
    pub at_most_ms: u64,
    pub at_least_ms: u64,
    /// Whether `:now` is the instance's clock (ShedLock's default) or the database's.
    pub app_time: bool,
    /// The last schedule it fires for.
    pub last_slot: u32,
    /// How late its scheduler thread wakes, at most (ms), drawn per run.
    pub wake_jitter_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledInstance {
    pub config: InstanceConfig,
    /// The run in progress: its schedule and when the row was locked.
    pub running: Option<(u32, u64)>,
    pub runs: u32,
    /// Whether a firing has thrown on settings ShedLock refuses.
    pub refused: bool,
}

/// An instance's scheduler starts this long after the process, and arms its first firing then.
pub const BOOT_MS: u64 = 1_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstanceTimer {
    Boot,
    Cron(u32),
    JobDone,
}

impl ScheduledInstance {
    fn arm(&self, ctx: &mut Ctx<'_, Self>) {
        let period = self.config.period_ms * MS_US;
        let slot = ctx.local_now_us / period + 1;
        if slot as u32 > self.config.last_slot {
            return;
        }
        let jitter = crate::kernel::rng::between_us(ctx.rng, 0, self.config.wake_jitter_ms * MS_US);
        let after = slot * period - ctx.local_now_us + jitter;
        ctx.set_timer(InstanceTimer::Cron(slot as u32), after);
    }

    fn now(&self, ctx: &Ctx<'_, Self>) -> Option<u64> {
        self.config.app_time.then_some(ctx.local_now_us)
    }
}

impl Participant for ScheduledInstance {
    type Msg = ShedMsg;
    type Timer = InstanceTimer;
    type Durable = ();
    type Config = InstanceConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.set_timer(InstanceTimer::Boot, BOOT_MS * MS_US);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, _from: NodeId, msg: ShedMsg) {
        match msg {
            ShedMsg::Locked { slot, locked_at_us } => {
                self.running = Some((slot, locked_at_us));
                ctx.note(ScheduledInstanceSaw::Runs { me: ctx.me(), slot });
                ctx.set_timer(InstanceTimer::JobDone, self.config.job_ms * MS_US);
            }
            ShedMsg::NotLocked { .. } => self.arm(ctx),
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: InstanceTimer) {
        match timer {
            InstanceTimer::Boot => self.arm(ctx),
            InstanceTimer::Cron(slot) => {
                let (at_least_ms, at_most_ms) = (self.config.at_least_ms, self.config.at_most_ms);
                if at_least_ms > at_most_ms {
                    // ShedLock builds the lock's configuration at every firing, and refuses
                    // one that would keep the row longer than it lets a holder keep it.
                    ctx.note(ScheduledInstanceSaw::Refused {
                        me: ctx.me(),
                        at_least_ms,
                        at_most_ms,
                    });
                    self.refused = true;
                    return self.arm(ctx);
                }
                let now_us = self.now(ctx);
                ctx.send(
                    self.config.db,
                    ShedMsg::TryLock {
                        slot,
                        now_us,
                        at_most_ms: self.config.at_most_ms,
                    },
                );
            }
            InstanceTimer::JobDone => {
                if let Some((slot, locked_at_us)) = self.running.take() {
                    self.runs += 1;
                    ctx.send(self.config.db, ShedMsg::Report { slot });
                    let now_us = self.now(ctx);
                    ctx.send(
                        self.config.db,
                        ShedMsg::Unlock {
                            now_us,
                            locked_at_us,
                            at_least_ms: self.config.at_least_ms,
                        },
                    );
                    self.arm(ctx);
                }
            }
        }
    }

    fn recover(config: &InstanceConfig, _id: NodeId, _durable: &()) -> Self {
        ScheduledInstance {
            config: config.clone(),
            running: None,
            runs: 0,
            refused: false,
        }
    }
}
