//! What `lock-across-call` checks and shows. The lease table, the ledger and the job table are
//! the lease chapter's, checked and shown by a [`LeaseWorld`] that has no workers of its own;
//! this world adds the calling workers and the payment API's payouts.

use crate::json;
use crate::kernel::collections::VecSet;
use crate::kernel::ids::NodeId;
use crate::kernel::time::MS_US;
use crate::kernel::view::Holding;
use crate::kernel::world::{Nodes, World};
use crate::presentation::durations::seconds;
use crate::properties::PropertySpec;
use crate::protocols::job::Phase;
use crate::protocols::lease::call_worker::{CallLock, CallWorker, Check};
use crate::protocols::lease::payment_api::PaymentApi;
use crate::protocols::lease::payment_rail::RailDurable;
use crate::protocols::redis_locks::redis_job::JobDurable;
use crate::scenarios::common::{always, finished_by, runner_holdings, HolderCount};
use crate::scenarios::lease_world::{unsafe_window_highlight, LeaseProperty, LeaseWorld};
use crate::trace::{columns, TableView};
use std::collections::BTreeMap;

pub struct CallWorld {
    /// The store, the ledger and the job table, with the properties they decide.
    pub inner: LeaseWorld,
    pub workers: Vec<NodeId>,
    pub api: NodeId,
    pub holders: HolderCount,
}

impl CallWorld {
    fn believers(&self, nodes: &Nodes<'_>) -> Vec<NodeId> {
        let believes = |w: &NodeId| {
            nodes
                .live::<CallWorker>(*w)
                .is_some_and(CallWorker::believes_it_holds)
        };
        self.workers.iter().copied().filter(believes).collect()
    }

    fn api<'a>(&self, nodes: &Nodes<'a>) -> Option<&'a RailDurable> {
        let live = nodes.live::<PaymentApi>(self.api).map(|a| &a.durable);
        live.or_else(|| nodes.durable::<PaymentApi>(self.api))
    }

    fn finished(nodes: &Nodes<'_>, w: NodeId) -> bool {
        nodes
            .durable::<CallWorker>(w)
            .is_some_and(|d: &JobDurable| d.finished)
    }

    fn beliefs_table(&self, nodes: &Nodes<'_>) -> TableView {
        let rows = self
            .workers
            .iter()
            .map(|w| {
                let name = nodes.name(*w).to_string();
                let Some(worker) = nodes.live::<CallWorker>(*w) else {
                    return vec![name, "no".into(), "—".into(), "—".into(), "down".into()];
                };
                let now = nodes.local_now_us[w.index()];
                let (holds, token, left) = match worker.belief {
                    Some(b) if worker.believes_it_holds() => (
                        "yes",
                        b.token.to_string(),
                        match b.expires_local_us.checked_sub(now) {
                            Some(left) if left > 0 => seconds(left / MS_US),
                            _ => "0 s (still acting)".into(),
                        },
                    ),
                    _ => ("no", "—".into(), "—".into()),
                };
                vec![name, holds.into(), token, left, doing(worker)]
            })
            .collect();
        TableView {
            title: "what each worker believes".into(),
            columns: columns(&["worker", "holds it?", "token", "left by its clock", "doing"]),
            rows,
        }
    }
}

/// What a worker is doing, in a few words.
fn doing(worker: &CallWorker) -> String {
    match worker.phase {
        Phase::ReadingProgress => match worker.check {
            Check::Stamp => "stamping the row",
            Check::Claim => "claiming the job row",
            Check::Progress => "checking progress",
        },
        Phase::Working { .. } => "waiting for the API",
        Phase::Writing { .. } => "recording the payout",
        Phase::Stopped => return format!("stopped: {}", worker.stop),
        _ => return worker.doing(),
    }
    .to_string()
}

impl World for CallWorld {
    fn properties(&self) -> Vec<PropertySpec> {
        let mut specs = self.inner.properties();
        specs.push(always(
            "no-double-payment",
            "The payment API pays the job out at most once.",
        ));
        specs.push(LeaseProperty::JobCompletes.spec());
        specs
    }

    fn evaluate(&mut self, nodes: &Nodes<'_>, out: &mut Vec<bool>) {
        self.inner.evaluate(nodes, out);
        let believers = self.believers(nodes).len() as u32;
        self.holders.observe(believers, nodes.now_us);
        let mut paid = VecSet::new();
        let payments = self.api(nodes).map_or(&[][..], |d| &d.payments[..]);
        out.push(payments.iter().filter(|p| p.applied).all(|p| paid.insert(p.step)));
        out.push(self.workers.iter().any(|w| Self::finished(nodes, *w)));
    }

    fn tables(&self, nodes: &Nodes<'_>) -> Vec<TableView> {
        let mut tables = self.inner.tables(nodes);
        let beliefs = self.beliefs_table(nodes);
        match tables.iter_mut().find(|t| t.title == beliefs.title) {
            Some(t) => *t = beliefs,
            None => tables.push(beliefs),
        }
        if let Some(d) = self.api(nodes) {
            let mut payouts = LeaseWorld::payments_table(nodes, d);
            payouts.title = "payouts".into();
            let calls = nodes
                .live::<PaymentApi>(self.api)
                .map_or(&[][..], |a| &a.calls[..]);
            for c in calls {
                payouts.rows.push(vec![
                    nodes.name(c.from).to_string(),
                    c.step.to_string(),
                    format!("₹{}", c.amount),
                    c.key.clone().unwrap_or_else(|| "—".into()),
                    format!("… in progress, answers at {}", seconds(c.answers_at_us / MS_US)),
                ]);
            }
            tables.push(payouts);
        }
        tables
    }

    fn outcome(&self, nodes: &Nodes<'_>) -> BTreeMap<String, serde_json::Value> {
        let mut out = self.inner.outcome(nodes);
        out.insert(
            "finished_by".into(),
            finished_by::<CallWorker>(nodes, &self.workers),
        );
        self.holders.report(&mut out, nodes.now_us);
        let payments = self.api(nodes).map_or(&[][..], |d| &d.payments[..]);
        let sent = payments.iter().filter(|p| p.applied);
        out.insert("payments_sent".into(), json!(sent.clone().count()));
        out.insert("paid_total".into(), json!(sent.map(|p| p.amount).sum::<i64>()));
        out.insert(
            "replays_recognised".into(),
            json!(payments.iter().filter(|p| !p.applied).count()),
        );
        out
    }

    fn highlight(&self, nodes: &Nodes<'_>) -> Option<String> {
        unsafe_window_highlight(nodes, &self.believers(nodes), &self.inner.lease)
    }

    fn holdings(&self, nodes: &Nodes<'_>) -> Vec<Holding> {
        runner_holdings::<CallLock>(nodes, self.workers.iter().copied(), self.inner.granted_to(nodes))
    }

    fn take_notes(&mut self) -> Vec<String> {
        self.inner.take_notes()
    }
}
