//! A job table that makes the lock unnecessary: a unique key decides who inserts the run, or
//! a conditional update moves one job from pending to running exactly once.

use super::lease_msg::LeaseMsg;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobDurable {
    /// Rows of `job_run`, keyed by job key: who inserted it.
    pub runs: BTreeMap<String, NodeId>,
    /// `job.state` by key: `pending` until claimed, then `running by <node>`.
    pub claimed_by: BTreeMap<String, NodeId>,
    pub conflicts: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobTable {
    pub names: Vec<String>,
    pub durable: JobDurable,
}

impl JobTable {
    pub fn new(names: Vec<String>) -> JobTable {
        JobTable {
            names,
            durable: JobDurable {
                runs: BTreeMap::new(),
                claimed_by: BTreeMap::new(),
                conflicts: 0,
            },
        }
    }

    pub fn handle<P>(&mut self, ctx: &mut Ctx<'_, P>, from: NodeId, msg: LeaseMsg)
    where
        P: Participant<Msg = LeaseMsg>,
        P::Durable: From<JobDurable>,
    {
        let who = self.names.get(from.index()).cloned().unwrap_or_default();
        let rows = match msg {
            LeaseMsg::InsertJobRow { key } => match self.durable.runs.get(&key) {
                Some(owner) => {
                    self.durable.conflicts += 1;
                    let owner = self.names.get(owner.index()).cloned().unwrap_or_default();
                    ctx.note(format!("Duplicate key {key}: {owner} already inserted this run. {who}'s insert fails with a conflict."));
                    0
                }
                None => {
                    self.durable.runs.insert(key.clone(), from);
                    ctx.note(format!(
                        "{who} inserts {key}. The primary key now rejects every other copy."
                    ));
                    1
                }
            },
            LeaseMsg::ClaimJob { key } => {
                if self.durable.claimed_by.contains_key(&key) {
                    self.durable.conflicts += 1;
                    ctx.note(format!(
                        "{key} is no longer pending: {who}'s update matches zero rows."
                    ));
                    0
                } else {
                    self.durable.claimed_by.insert(key.clone(), from);
                    ctx.note(format!(
                        "{key} was pending: {who}'s update changes one row, so the work is {who}'s."
                    ));
                    1
                }
            }
            _ => return,
        };
        ctx.persist(self.durable.clone().into());
        ctx.send(from, LeaseMsg::RowsChanged { rows });
    }

    pub fn summary(&self) -> Vec<String> {
        vec![format!(
            "{} run row(s), {} claimed",
            self.durable.runs.len(),
            self.durable.claimed_by.len()
        )]
    }
}
