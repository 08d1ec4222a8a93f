//! A job table that makes the lock unnecessary: a unique key decides who inserts the run, or
//! a conditional update moves one job from pending to running exactly once.

use super::lease_msg::LeaseMsg;
use crate::kernel::collections::VecMap;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, NoTimer, Participant};
use crate::presentation::narration::lease::job_table::JobTableSaw;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobDurable {
    /// Rows of `job_run`, keyed by job key: who inserted it.
    pub runs: VecMap<String, NodeId>,
    /// `job.state` by key: `pending` until claimed, then `running by <node>`.
    pub claimed_by: VecMap<String, NodeId>,
    pub conflicts: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobTable {
    pub durable: JobDurable,
}

impl JobTable {
    /// The tables before anything is claimed.
    pub fn initial() -> JobDurable {
        JobDurable::default()
    }
}

impl Participant for JobTable {
    type Msg = LeaseMsg;
    type Timer = NoTimer;
    type Durable = JobDurable;
    type Config = ();

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        ctx.note(JobTableSaw::Up {
            claimed: self.durable.runs.len() + self.durable.claimed_by.len(),
        });
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: LeaseMsg) {
        let who = ctx.name(from);
        let rows = match msg {
            LeaseMsg::InsertJobRow { key } => match self.durable.runs.get(&key) {
                Some(owner) => {
                    self.durable.conflicts += 1;
                    let owner = ctx.name(*owner);
                    ctx.note(JobTableSaw::DuplicateKey {
                        key: &key,
                        owner,
                        who,
                    });
                    0
                }
                None => {
                    self.durable.runs.insert(key.clone(), from);
                    ctx.note(JobTableSaw::Inserted { who, key: &key });
                    1
                }
            },
            LeaseMsg::ClaimJob { key } => {
                if self.durable.claimed_by.contains_key(&key) {
                    self.durable.conflicts += 1;
                    ctx.note(JobTableSaw::NotPending { key: &key, who });
                    0
                } else {
                    self.durable.claimed_by.insert(key.clone(), from);
                    ctx.note(JobTableSaw::Claimed { key: &key, who });
                    1
                }
            }
            _ => return,
        };
        ctx.persist(self.durable.clone());
        ctx.send(from, LeaseMsg::RowsChanged { rows });
    }

    fn recover(_config: &(), _id: NodeId, durable: &JobDurable) -> Self {
        JobTable {
            durable: durable.clone(),
        }
    }
}
