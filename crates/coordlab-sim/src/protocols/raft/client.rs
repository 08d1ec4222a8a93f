//! A client that writes `set k=v` commands to whoever it believes leads, one at a time,
//! following redirects and trying the next server when an answer is overdue.

use super::msg::{ClientAnswer, RaftMsg};
use super::types::{Command, LogIndex};
use crate::kernel::ids::NodeId;
use crate::kernel::participant::{Ctx, Participant};
use crate::kernel::time::MS_US;
use crate::kernel::view::InputSpec;
use crate::presentation::narration::raft::client::RaftClientSaw;

/// The server after `guess` in `servers`, round the list: where a client tries next when its
/// guess at the leader is silent or points nowhere. A guess not in the list counts as the
/// first; with no servers the guess stays.
pub fn next_server(servers: &[NodeId], guess: NodeId) -> NodeId {
    let pos = servers.iter().position(|s| *s == guess).unwrap_or(0);
    servers
        .get((pos + 1) % servers.len().max(1))
        .copied()
        .unwrap_or(guess)
}

/// Settings of the client workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub servers: Vec<NodeId>,
    /// How many writes to make, one after another.
    pub writes: u32,
    pub start_ms: u64,
    /// Pause between a committed write and the next one.
    pub interval_ms: u64,
    /// How long to wait for an answer before trying another server.
    pub retry_ms: u64,
    pub stop_at_ms: u64,
    /// The id of the client's first write; the command follows from the id. Scenarios with
    /// several clients give each its own range so that their commands differ.
    pub first_id: u32,
    /// The server it asks first; the first of `servers` if none.
    pub first_guess: Option<NodeId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    /// The client sends its next request.
    Send,
    /// The client's request got no answer in time.
    Retry,
}

#[derive(Clone, Debug)]
pub struct RaftClient {
    /// A copy of the configuration; a user's extra write raises `writes`.
    pub config: ClientConfig,
    pub guess: NodeId,
    /// The request in flight, if any.
    pub outstanding: Option<u32>,
    pub committed: Vec<(u32, LogIndex)>,
    redirected: bool,
}

impl RaftClient {
    pub const WRITE_INPUT: &'static str = "write";

    pub fn new(config: ClientConfig) -> RaftClient {
        let guess = config
            .first_guess
            .or_else(|| config.servers.first().copied())
            .unwrap_or(NodeId(0));
        RaftClient {
            config,
            guess,
            outstanding: None,
            committed: Vec::new(),
            redirected: false,
        }
    }

    /// The id (and so the command) of the next write.
    pub fn next_id(&self) -> u32 {
        self.config.first_id.max(1) + self.committed.len() as u32
    }

    pub fn command(id: u32) -> Command {
        let keys = ["x", "y", "z"];
        Command::Set {
            key: keys[(id as usize - 1) % keys.len()].to_string(),
            value: id,
        }
    }

    fn send(&mut self, ctx: &mut Ctx<'_, Self>) {
        let Some(id) = self.outstanding else { return };
        if ctx.local_now_us >= self.config.stop_at_ms * MS_US {
            ctx.note(RaftClientSaw::StopsRetrying);
            return;
        }
        ctx.send(
            self.guess,
            RaftMsg::ClientRequest {
                id,
                command: RaftClient::command(id),
            },
        );
        ctx.set_timer(ClientTimer::Retry, self.config.retry_ms.max(1) * MS_US);
    }

    fn rotate(&mut self) {
        self.guess = next_server(&self.config.servers, self.guess);
    }

    /// One more write with a fresh command (the user input `write`): at once if the client
    /// is idle, otherwise right after the write it is waiting on (the normal one-at-a-time
    /// path).
    fn extra_write(&mut self, ctx: &mut Ctx<'_, Self>) -> Result<(), String> {
        if ctx.local_now_us >= self.config.stop_at_ms * MS_US {
            return Err("the demo is over and the client has stopped".into());
        }
        self.config.writes += 1;
        match self.outstanding {
            Some(busy) => ctx.note(RaftClientSaw::OneMoreWriteQueued { busy }),
            None => {
                // A scheduled next write (if any) is sent now instead; the extra one follows it.
                ctx.cancel_timer(ClientTimer::Send);
                let id = self.next_id();
                self.outstanding = Some(id);
                self.redirected = false;
                ctx.note(RaftClientSaw::SentExtraWrite {
                    id,
                    guess: ctx.name(self.guess),
                });
                self.send(ctx);
            }
        }
        Ok(())
    }
}

impl Participant for RaftClient {
    type Msg = RaftMsg;
    type Timer = ClientTimer;
    /// A client keeps nothing on disk.
    type Durable = ();
    type Config = ClientConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        if self.config.writes > 0 {
            ctx.set_timer(ClientTimer::Send, self.config.start_ms * MS_US);
        }
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, from: NodeId, msg: RaftMsg) {
        let RaftMsg::ClientReply { id, answer } = msg else {
            return;
        };
        if self.outstanding != Some(id) {
            return; // an answer to an earlier attempt
        }
        match answer {
            ClientAnswer::Committed { index } => {
                self.outstanding = None;
                self.committed.push((id, index));
                ctx.cancel_timer(ClientTimer::Retry);
                ctx.note(RaftClientSaw::Committed {
                    id,
                    index,
                    by: ctx.name(from),
                });
                if (self.committed.len() as u32) < self.config.writes {
                    ctx.set_timer(ClientTimer::Send, self.config.interval_ms * MS_US);
                }
            }
            ClientAnswer::NotLeader { leader } => {
                match leader {
                    Some(l) => self.guess = l,
                    None => self.rotate(),
                }
                self.redirected = true;
                ctx.set_timer(ClientTimer::Retry, 10 * MS_US);
            }
            ClientAnswer::Locked { .. } => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ClientTimer) {
        match timer {
            ClientTimer::Send => {
                let id = self.next_id();
                self.outstanding = Some(id);
                self.redirected = false;
                self.send(ctx);
            }
            ClientTimer::Retry => {
                if !self.redirected {
                    self.rotate();
                }
                self.redirected = false;
                self.send(ctx);
            }
        }
    }

    fn recover(config: &ClientConfig, _id: NodeId, _durable: &()) -> Self {
        RaftClient::new(config.clone())
    }

    fn inputs(&self) -> Vec<InputSpec> {
        vec![InputSpec {
            code: RaftClient::WRITE_INPUT.into(),
            label: "Send a client request".into(),
        }]
    }

    fn on_input(&mut self, ctx: &mut Ctx<'_, Self>, input: &str) -> Result<(), String> {
        if input == RaftClient::WRITE_INPUT {
            self.extra_write(ctx)
        } else {
            Err(format!("the client takes only `{}`", RaftClient::WRITE_INPUT))
        }
    }
}
