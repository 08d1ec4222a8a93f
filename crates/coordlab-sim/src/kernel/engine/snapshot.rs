//! The state after a step, as the UI draws it. Node views that did not change are shared with
//! the previous snapshot, so a long run stays cheap to keep.

use super::Engine;
use crate::kernel::ids::NodeId;
use crate::kernel::participant::ViewCtx;
use crate::kernel::world::Nodes;
use crate::trace::{LinkView, MsgView, NodeStatus, NodeView, Snapshot};
use std::rc::Rc;

impl Engine {
    pub(super) fn snapshot(&self) -> Snapshot {
        let previous = self.entries.last().and_then(|e| e.snapshot.as_ref());
        let nodes = (0..self.slots.len())
            .map(|i| {
                let id = NodeId(i as u32);
                let local_us = self.clock_readings[i];
                let card = self.slots[i].card(&ViewCtx::new(id, local_us, &self.names));
                let view = NodeView {
                    id,
                    status: self.status[i],
                    local_time_us: local_us,
                    clock_offset_us: self.clocks[i].offset_us(self.now_us),
                    waiting_inputs: self.waiting[i].len() as u32,
                    summary: card.summary,
                    gauge: card.gauge,
                    log: card.log,
                    // A paused node takes no input until it wakes.
                    inputs: if self.status[i] == NodeStatus::Up {
                        card.inputs
                    } else {
                        Vec::new()
                    },
                };
                match previous.and_then(|s| s.nodes.get(i)) {
                    Some(old) if **old == view => Rc::clone(old),
                    _ => Rc::new(view),
                }
            })
            .collect();
        let messages = self
            .net
            .in_flight()
            .map(|m| MsgView {
                id: m.id,
                from: m.from,
                to: m.to,
                label: m.msg.label(),
                sent_us: m.sent_us,
                deliver_us: m.deliver_us,
            })
            .collect();
        let links = self
            .net
            .abnormal_links()
            .into_iter()
            .map(|(from, to, cut, held)| LinkView { from, to, cut, held })
            .collect();
        let view = Nodes {
            slots: &self.slots,
            names: &self.names,
            local_now_us: &self.clock_readings,
            now_us: self.now_us,
        };
        Snapshot {
            time_us: self.now_us,
            nodes,
            messages,
            links,
            tables: self.world.tables(&view),
            highlight: self.world.highlight(&view),
        }
    }
}
