//! A client of a named lock service ([`super::service_lock`]): it waits for the lock, runs a
//! job of a few steps that each end in a write to the resource, keeps the lock alive from a
//! separate thread (Redisson's watchdog, Chubby's KeepAlives, a CP session's heartbeats),
//! and unlocks when the job is done.
//!
//! The keep-alive thread and the job thread live in one process: a stop-the-world pause
//! stops both, while a job thread that is merely stuck leaves the keep-alive running.

use super::service_lock::{Flavour, ServiceMsg};
use crate::kernel::ids::NodeId;
use crate::kernel::message::Label;
use crate::kernel::participant::{Ctx, Participant, ViewCtx};
use crate::kernel::rng::between_us;
use crate::kernel::time::MS_US;
use crate::kernel::view::{Summary, Tone};
use crate::protocols::card;
use crate::protocols::lease_msg::seconds;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    pub flavour: Flavour,
    pub server: NodeId,
    pub resource: NodeId,
    /// When it first asks for the lock, drawn from this range (ms).
    pub start_after_ms: (u64, u64),
    /// How long it waits before asking again after a refusal (Redisson instead waits for the
    /// unlock message or the key's remaining TTL).
    pub retry_ms: u64,
    /// How often the keep-alive thread renews (Chubby: the next KeepAlive goes out as soon as
    /// the cell answers the last).
    pub renew_every_ms: u64,
    pub steps: u32,
    pub step_ms: u64,
    /// Whether each write carries the grant's number (a sequencer or a fence).
    pub sends_number: bool,
    /// The job thread blocks for good after writing this step (a stuck thread).
    pub stuck_after_step: Option<u32>,
    /// Nobody starts anything after this time by its own clock: where the run stops watching.
    pub horizon_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientPhase {
    Waiting,
    Holding,
    /// The job thread is blocked; the keep-alive thread carries on.
    Stuck,
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientState {
    pub phase: ClientPhase,
    /// The grant it believes it holds.
    pub number: Option<u64>,
    pub steps_written: u32,
    /// Whether the keep-alive thread is still renewing.
    pub renewing: bool,
    pub acquired: bool,
    pub renewals: u32,
    /// Refusals it has waited out (Redisson: narrated the first time).
    pub waits: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceClient {
    pub config: ClientConfig,
    pub state: ClientState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientTimer {
    TryLock,
    Renew,
    Step,
}

impl Label for ClientTimer {
    fn label(&self) -> String {
        match self {
            ClientTimer::TryLock => "try the lock".into(),
            ClientTimer::Renew => "keep-alive".into(),
            ClientTimer::Step => "job step done".into(),
        }
    }
}

impl ServiceClient {
    pub fn fresh() -> ClientState {
        ClientState {
            phase: ClientPhase::Waiting,
            number: None,
            steps_written: 0,
            renewing: false,
            acquired: false,
            renewals: 0,
            waits: 0,
        }
    }

    /// Whether it believes it holds the lock.
    pub fn believes_it_holds(&self) -> bool {
        matches!(self.state.phase, ClientPhase::Holding | ClientPhase::Stuck)
    }

    /// Schedules the next renewal; a Chubby library sends its next KeepAlive at once, since
    /// the cell answers only near the lease's end.
    fn keep_alive(&mut self, ctx: &mut Ctx<'_, Self>) {
        match (self.config.flavour, self.state.number) {
            (Flavour::Chubby, Some(number)) => ctx.send(self.config.server, ServiceMsg::Renew { number }),
            _ => ctx.set_timer(ClientTimer::Renew, self.config.renew_every_ms * MS_US),
        }
    }

    fn before_horizon(&self, ctx: &Ctx<'_, Self>) -> bool {
        ctx.local_now_us < self.config.horizon_ms * MS_US
    }

    fn write_step(&mut self, ctx: &mut Ctx<'_, Self>) {
        let Some(number) = self.state.number else {
            return;
        };
        self.state.steps_written += 1;
        let step = self.state.steps_written;
        let sent = self.config.sends_number.then_some(number);
        ctx.send(
            self.config.resource,
            ServiceMsg::Write {
                step,
                number: sent,
                grant: number,
            },
        );
        if self.config.stuck_after_step == Some(step) {
            self.state.phase = ClientPhase::Stuck;
            ctx.note(format!(
                "{} writes step {step}, then its job thread blocks on a call that never returns (a socket read without a timeout). The process is alive, and so is the watchdog thread.",
                ctx.me()
            ));
        } else if step < self.config.steps {
            ctx.set_timer(ClientTimer::Step, self.config.step_ms * MS_US);
        } else {
            ctx.send(self.config.server, ServiceMsg::Release { number });
            self.state.phase = ClientPhase::Done;
            self.state.renewing = false;
            ctx.cancel_timer(ClientTimer::Renew);
        }
    }
}

impl Participant for ServiceClient {
    type Msg = ServiceMsg;
    type Timer = ClientTimer;
    type Durable = ();
    type Config = ClientConfig;

    fn on_start(&mut self, ctx: &mut Ctx<'_, Self>) {
        let (lo, hi) = self.config.start_after_ms;
        let after = between_us(ctx.rng, lo * MS_US, hi * MS_US);
        ctx.set_timer(ClientTimer::TryLock, after);
    }

    fn on_message(&mut self, ctx: &mut Ctx<'_, Self>, _from: NodeId, msg: ServiceMsg) {
        let me = ctx.me().to_string();
        let flavour = self.config.flavour;
        match msg {
            ServiceMsg::Granted { number } if self.state.phase == ClientPhase::Waiting => {
                self.state.phase = ClientPhase::Holding;
                self.state.number = Some(number);
                self.state.acquired = true;
                self.state.renewing = true;
                let every = seconds(self.config.renew_every_ms);
                ctx.note(match flavour {
                    Flavour::Redisson => format!(
                        "{me} holds the lock and starts its job. Redisson's watchdog thread will renew the lock every {every} (a third of the 30 s watchdog timeout) for as long as the process runs."
                    ),
                    Flavour::Chubby => format!(
                        "{me} holds the lock with sequencer generation {number}. Its Chubby library sends a KeepAlive at once; the cell holds it until the lease nears its end."
                    ),
                    Flavour::Hazelcast => format!(
                        "{me} holds the FencedLock with fence {number}; its CP session is kept alive by a heartbeat every {every}."
                    ),
                });
                ctx.set_timer(ClientTimer::Step, self.config.step_ms * MS_US);
                self.keep_alive(ctx);
            }
            ServiceMsg::Busy { left_us, .. }
                if self.state.phase == ClientPhase::Waiting && self.before_horizon(ctx) =>
            {
                self.state.waits += 1;
                if flavour == Flavour::Redisson {
                    // tryLock's script returns the key's remaining TTL; Redisson subscribes to
                    // the lock's channel and waits that long at most.
                    if self.state.waits == 1 {
                        ctx.note(format!(
                            "The lock is taken, and the script returns the key's remaining TTL, {}. Redisson subscribes {me} to the lock's channel: it waits for an unlock message, or for that TTL to run out, then tries again.",
                            seconds(left_us / MS_US)
                        ));
                    }
                    ctx.set_timer(ClientTimer::TryLock, left_us);
                } else {
                    ctx.set_timer(ClientTimer::TryLock, self.config.retry_ms * MS_US);
                }
            }
            ServiceMsg::UnlockPublished if self.state.phase == ClientPhase::Waiting => {
                ctx.cancel_timer(ClientTimer::TryLock);
                ctx.send(self.config.server, ServiceMsg::Acquire);
            }
            ServiceMsg::Renewed => {
                self.state.renewals += 1;
                if self.state.renewing && self.believes_it_holds() && self.before_horizon(ctx) {
                    self.keep_alive(ctx);
                }
            }
            ServiceMsg::RenewRefused => {
                self.state.renewing = false;
                ctx.note(match flavour {
                    Flavour::Redisson => format!(
                        "{me}'s watchdog finds the lock gone and stops renewing. Nothing tells the job thread: it carries on as if it still held the lock."
                    ),
                    _ => format!("{me}'s {} is refused: its hold on the lock is over.", flavour.renewal_word()),
                });
            }
            ServiceMsg::Released { ok: false } => {
                ctx.note(match flavour {
                    Flavour::Redisson => format!(
                        "{me}'s unlock() fails with IllegalMonitorStateException: the lock is not its own any more. The first sign of trouble arrives after its writes have landed."
                    ),
                    _ => format!("{me}'s unlock is refused: it no longer held the lock."),
                });
            }
            ServiceMsg::WriteResult {
                step,
                accepted: false,
            } => {
                self.state.phase = ClientPhase::Done;
                self.state.renewing = false;
                self.state.number = None;
                ctx.cancel_timer(ClientTimer::Step);
                ctx.cancel_timer(ClientTimer::Renew);
                ctx.note(format!(
                    "{me}'s step {step} is refused. It learns it lost the lock and abandons the job."
                ));
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, ctx: &mut Ctx<'_, Self>, timer: ClientTimer) {
        match timer {
            ClientTimer::TryLock => {
                if self.state.phase == ClientPhase::Waiting {
                    ctx.send(self.config.server, ServiceMsg::Acquire);
                }
            }
            ClientTimer::Renew => {
                if let (Some(number), true) = (self.state.number, self.state.renewing) {
                    if self.believes_it_holds() {
                        ctx.send(self.config.server, ServiceMsg::Renew { number });
                    }
                }
            }
            ClientTimer::Step => {
                if self.state.phase == ClientPhase::Holding {
                    self.write_step(ctx);
                }
            }
        }
    }

    fn recover(config: &ClientConfig, _id: NodeId, _durable: &()) -> Self {
        ServiceClient {
            config: config.clone(),
            state: ServiceClient::fresh(),
        }
    }

    fn durable_summary(_config: &ClientConfig, _durable: &(), _view: &ViewCtx<'_>) -> Summary {
        card::down("keeps nothing on disk")
    }

    fn summary(&self, _view: &ViewCtx<'_>) -> Summary {
        let flavour = self.config.flavour;
        let st = &self.state;
        let written = format!("steps written: {}", card::of(st.steps_written, self.config.steps));
        let s = match (st.phase, st.number) {
            (ClientPhase::Waiting, _) => card::waiting("for the lock"),
            (ClientPhase::Holding, Some(n)) => card::holder(written).badge(flavour.number_word(), n),
            (ClientPhase::Stuck, Some(n)) => Summary::new("stuck", Tone::Holds)
                .badge(flavour.number_word(), n)
                .detail("job thread blocked")
                .detail(written),
            // A refused write took its number away: it learnt it had lost the lock.
            (ClientPhase::Done, None) if st.acquired => card::stopped("write refused").detail(written),
            (ClientPhase::Done, _) => card::done().detail(written),
            _ => card::holder(written),
        };
        if self.believes_it_holds() {
            let renewal = flavour.renewal_word();
            s.detail(if st.renewing {
                format!("{renewal} on")
            } else {
                format!("{renewal} stopped")
            })
        } else {
            s
        }
    }
}
