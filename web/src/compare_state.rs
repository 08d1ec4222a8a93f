//! Two runs side by side, stepping together. Both scenarios run with the same seed; a fault
//! clicked once is injected into both, right after the entry each side shows. The shared
//! cursor walks the two traces merged in true-time order, so each step is the next event of
//! whichever run has it first and the room sees the same moment in both.

use crate::nav::Nav;
use crate::same_trace::{self, SameTrace, States};
use crate::transport::{self, Move, Stepping};
use coordlab_sim::kernel::faults::Action as ScriptAction;
use coordlab_sim::scenarios::{self, ScenarioInfo};
use coordlab_sim::{Fault, RunRequest, Trace};
use std::rc::Rc;
use yew::Reducible;

pub use crate::route::CompareRoute;

#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub info: ScenarioInfo,
    pub actions: Vec<ScriptAction>,
    pub trace: SameTrace,
    /// The state after each step, computed when first shown.
    pub states: States,
}

impl Side {
    fn simulate(id: &str, seed: u64, actions: &[ScriptAction]) -> Result<Side, String> {
        let def = scenarios::find(id).map_err(|e| e.to_string())?;
        let (trace, states) = same_trace::simulate(&RunRequest {
            scenario: id.to_string(),
            params: Default::default(),
            seed,
            actions: actions.to_vec(),
        })?;
        Ok(Side {
            info: def.info(),
            actions: actions.to_vec(),
            trace,
            states,
        })
    }

    /// Whether this run has a node `node` that accepts this kind of fault.
    fn accepts(&self, fault: &Fault) -> bool {
        fault.nodes().iter().all(|n| {
            self.trace
                .nodes
                .get(n.index())
                .is_some_and(|info| info.faults.contains(&fault.kind()))
        })
    }
}

/// For every shared step, the entry each side shows.
fn merge(left: &Trace, right: &Trace) -> Vec<(usize, usize)> {
    let (mut l, mut r) = (0usize, 0usize);
    let mut out = vec![(0, 0)];
    let (nl, nr) = (left.entries.len(), right.entries.len());
    while l + 1 < nl || r + 1 < nr {
        let next_left = left.entries.get(l + 1).map(|e| e.time_us);
        let next_right = right.entries.get(r + 1).map(|e| e.time_us);
        match (next_left, next_right) {
            (Some(a), Some(b)) if a <= b => l += 1,
            (Some(_), None) => l += 1,
            _ => r += 1,
        }
        out.push((l, r));
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
pub struct Compare {
    pub seed: u64,
    pub left: Side,
    pub right: Side,
    /// Shared steps: the entry of each side on screen at that step.
    pub steps: Rc<Vec<(usize, usize)>>,
    /// Where stepping goes over the shared steps.
    pub nav: Rc<Nav>,
    pub stepping: Stepping,
    pub speed: u32,
    pub cursor: usize,
    pub playing: bool,
    pub notices: Vec<String>,
    /// Presenter mode: both pictures and both captions fill the screen.
    pub presenting: bool,
    /// The list of keys is open.
    pub help: bool,
}

pub enum CompareAction {
    /// Step, jump to either end, play or pause: the same for every run view.
    Transport(Move),
    Seek(usize),
    SetSeed(u64),
    /// Injected into both runs, right after the entry each one shows.
    Inject(Fault),
    ClearFaults,
    DismissNotices,
    Load(CompareRoute, Vec<String>),
    SetAllEvents(bool),
    ToggleAllEvents,
    SetSpeed(u32),
    /// Presenter mode on or off (the button, `f`).
    TogglePresent,
    Help(bool),
    ToggleHelp,
    /// Escape: closes the top-most thing open — the key list, else presenter mode.
    Leave,
    /// The browser left full screen (its own Escape, its control): see
    /// [`crate::presenter::full_screen_ended`].
    FullScreenEnded,
}

impl Compare {
    pub fn from_route(route: &CompareRoute, mut notices: Vec<String>) -> Result<Compare, String> {
        let side = |id: &str, actions: &[ScriptAction], notices: &mut Vec<String>| {
            Side::simulate(id, route.seed, actions).or_else(|e| {
                notices.push(format!(
                    "The faults in this link do not fit {id} ({e}); they were left out."
                ));
                Side::simulate(id, route.seed, &[])
            })
        };
        let left = side(&route.left, &route.left_actions, &mut notices)?;
        let right = side(&route.right, &route.right_actions, &mut notices)?;
        let steps = Rc::new(merge(&left.trace, &right.trace));
        let nav = Rc::new(Nav::merged(&left.trace, &right.trace, &steps));
        let last = steps.len() - 1;
        let cursor = match route.step {
            Some(s) if s as usize > last => {
                notices.push(format!(
                    "The link points at step {s}, but these runs have only {} shared steps; showing the last one.",
                    last + 1
                ));
                last
            }
            Some(s) => s as usize,
            None => 0,
        };
        Ok(Compare {
            seed: route.seed,
            left,
            right,
            steps,
            nav,
            stepping: Stepping::default(),
            speed: 4,
            cursor,
            playing: false,
            notices,
            presenting: route.present,
            help: false,
        })
    }

    pub fn route(&self) -> CompareRoute {
        CompareRoute {
            left: self.left.info.id.to_string(),
            right: self.right.info.id.to_string(),
            seed: self.seed,
            left_actions: self.left.actions.clone(),
            right_actions: self.right.actions.clone(),
            step: Some(self.cursor as u32),
            present: self.presenting,
        }
    }

    pub fn last(&self) -> usize {
        self.steps.len() - 1
    }

    /// The entry each side shows at the cursor.
    pub fn at(&self) -> (usize, usize) {
        self.steps[self.cursor.min(self.last())]
    }

    /// Which side the current step moved: `Some(true)` left, `Some(false)` right.
    pub fn moved(&self) -> Option<bool> {
        let now = self.at();
        let before = self.steps.get(self.cursor.checked_sub(1)?)?;
        Some(now.0 != before.0)
    }

    pub fn time_us(&self) -> u64 {
        let (l, r) = self.at();
        self.left.trace.entries[l]
            .time_us
            .max(self.right.trace.entries[r].time_us)
    }

    fn rerun(&mut self, left_actions: Vec<ScriptAction>, right_actions: Vec<ScriptAction>) {
        for (side, actions) in [(&mut self.left, left_actions), (&mut self.right, right_actions)] {
            match Side::simulate(side.info.id, self.seed, &actions) {
                Ok(s) => *side = s,
                Err(e) => self.notices.push(e),
            }
        }
        self.steps = Rc::new(merge(&self.left.trace, &self.right.trace));
        self.nav = Rc::new(Nav::merged(&self.left.trace, &self.right.trace, &self.steps));
        self.cursor = self.cursor.min(self.last());
    }

    fn inject(&mut self, fault: Fault) {
        let (l, r) = self.at();
        let mut left = self.left.actions.clone();
        let mut right = self.right.actions.clone();
        let mut applied = Vec::new();
        for (side, actions, at) in [(&self.left, &mut left, l), (&self.right, &mut right, r)] {
            if side.accepts(&fault) {
                actions.push(ScriptAction {
                    at_step: at as u32 + 1,
                    fault: fault.clone(),
                });
                applied.push(side.info.title);
            } else {
                self.notices.push(format!(
                    "{} has no node that takes this fault; only the other run got it.",
                    side.info.title
                ));
            }
        }
        if applied.is_empty() {
            return;
        }
        self.rerun(left, right);
        // Show the moment the fault landed on both sides.
        let want = (l + 1, r + 1);
        self.cursor = self
            .steps
            .iter()
            .position(|&(a, b)| {
                (a >= want.0 || a == self.left.trace.entries.len() - 1)
                    && (b >= want.1 || b == self.right.trace.entries.len() - 1)
            })
            .unwrap_or(self.last());
    }
}

impl Reducible for Compare {
    type Action = CompareAction;

    fn reduce(self: Rc<Self>, action: CompareAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            CompareAction::Seek(i) => next.cursor = i.min(next.last()),
            CompareAction::Transport(m) => {
                if m == Move::Tick && !next.playing {
                    return self; // a tick that arrives after a pause changes nothing
                }
                (next.cursor, next.playing) =
                    transport::apply(m, next.cursor, &next.nav, next.stepping, next.playing);
            }
            CompareAction::SetAllEvents(all) => next.stepping.all_events = all,
            CompareAction::ToggleAllEvents => next.stepping.all_events = !next.stepping.all_events,
            CompareAction::SetSpeed(s) => next.speed = s.clamp(1, 16),
            CompareAction::SetSeed(seed) => {
                next.seed = seed;
                let (l, r) = (next.left.actions.clone(), next.right.actions.clone());
                next.rerun(l, r);
            }
            CompareAction::Inject(fault) => {
                next.playing = false;
                next.inject(fault);
            }
            CompareAction::ClearFaults => next.rerun(Vec::new(), Vec::new()),
            CompareAction::DismissNotices => next.notices.clear(),
            CompareAction::TogglePresent => {
                next.presenting = !next.presenting;
                next.help = false;
            }
            CompareAction::Help(open) => next.help = open,
            CompareAction::ToggleHelp => next.help = !next.help,
            CompareAction::Leave => {
                let mut layers = crate::presenter::Layers {
                    presenting: next.presenting,
                    help: next.help,
                    dialog: false,
                };
                layers.escape();
                (next.presenting, next.help) = (layers.presenting, layers.help);
            }
            CompareAction::FullScreenEnded => {
                (next.presenting, next.help) =
                    crate::presenter::full_screen_ended(next.presenting, next.help);
            }
            CompareAction::Load(route, notices) => {
                if route == next.route() {
                    return self;
                }
                // The same runs, another step (or the route it was just made from): no need
                // to simulate them again.
                let runs = |r: &CompareRoute| CompareRoute {
                    step: None,
                    present: false,
                    ..r.clone()
                };
                if runs(&route) == runs(&next.route()) {
                    if let Some(step) = route.step {
                        next.cursor = (step as usize).min(next.last());
                    }
                    next.presenting = route.present;
                    if !notices.is_empty() {
                        next.notices = notices;
                    }
                    return Rc::new(next);
                }
                return match Compare::from_route(&route, notices) {
                    Ok(c) => Rc::new(c),
                    Err(_) => self,
                };
            }
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coordlab_sim::NodeId;

    /// Two scenarios that exist today and share node ids 0 and 1.
    fn route(left: &str, right: &str) -> CompareRoute {
        CompareRoute {
            left: left.into(),
            right: right.into(),
            seed: 1,
            left_actions: vec![],
            right_actions: vec![],
            step: None,
            present: false,
        }
    }

    fn compare(left: &str, right: &str) -> Rc<Compare> {
        Rc::new(Compare::from_route(&route(left, right), vec![]).unwrap())
    }

    #[test]
    fn the_shared_cursor_visits_every_entry_of_both_runs_in_time_order() {
        let c = compare("raft-election", "raft-partition");
        let (nl, nr) = (c.left.trace.entries.len(), c.right.trace.entries.len());
        assert_eq!(c.steps.len(), nl + nr - 1, "each step moves exactly one side");
        let mut last_time = 0;
        for w in c.steps.windows(2) {
            let ((l0, r0), (l1, r1)) = (w[0], w[1]);
            assert_eq!((l1 - l0) + (r1 - r0), 1);
            let t = if l1 > l0 {
                c.left.trace.entries[l1].time_us
            } else {
                c.right.trace.entries[r1].time_us
            };
            assert!(t >= last_time, "steps go forward in time");
            last_time = t;
        }
        assert_eq!(*c.steps.last().unwrap(), (nl - 1, nr - 1));
    }

    #[test]
    fn one_click_forks_both_runs_at_the_entry_each_shows() {
        let c = compare("raft-election", "raft-partition").reduce(CompareAction::Seek(40));
        let (l, r) = c.at();
        let before_left = c.left.trace.entries[..=l].to_vec();
        let before_right = c.right.trace.entries[..=r].to_vec();
        let c = c.reduce(CompareAction::Inject(Fault::Crash { node: NodeId(1) }));
        assert_eq!(c.left.actions[0].at_step as usize, l + 1);
        assert_eq!(c.right.actions[0].at_step as usize, r + 1);
        assert_eq!(&c.left.trace.entries[..=l], &before_left[..]);
        assert_eq!(&c.right.trace.entries[..=r], &before_right[..]);
        assert!(c.left.trace.entries[l + 1].fault.is_some());
        assert!(c.right.trace.entries[r + 1].fault.is_some());
        let (l2, r2) = c.at();
        assert!(l2 > l && r2 > r, "the cursor shows the fault on both sides");
    }

    #[test]
    fn a_fault_one_run_cannot_take_goes_to_the_other_with_a_notice() {
        // raft-election has a client node at id 5 that cannot crash.
        let c = compare("raft-election", "raft-partition");
        let node = NodeId(5);
        let c = c.reduce(CompareAction::Inject(Fault::Crash { node }));
        assert!(c.left.actions.is_empty() && c.right.actions.is_empty());
        assert_eq!(c.notices.len(), 2);
    }

    #[test]
    fn escape_closes_the_key_list_first_then_presenter_mode() {
        let mut r = route("redis-failover", "consensus-lock");
        r.present = true;
        let c = Rc::new(Compare::from_route(&r, vec![]).unwrap());
        assert!(c.presenting, "present=1 opens presenter mode");
        let c = c.reduce(CompareAction::ToggleHelp);
        assert!(c.help && c.presenting);
        let c = c.reduce(CompareAction::Leave);
        assert!(
            !c.help && c.presenting,
            "the first Escape closes only the key list"
        );
        let c = c.reduce(CompareAction::Leave);
        assert!(!c.presenting, "the next one leaves presenter mode");
        let c = c.reduce(CompareAction::Leave);
        assert!(
            !c.presenting && !c.help,
            "and then there is nothing left to close"
        );
    }

    #[test]
    fn leaving_full_screen_with_the_key_list_open_closes_only_the_list() {
        let c = compare("redis-failover", "consensus-lock")
            .reduce(CompareAction::TogglePresent)
            .reduce(CompareAction::Help(true));
        let c = c.reduce(CompareAction::FullScreenEnded);
        assert!(
            !c.help && c.presenting,
            "presenter mode works without full screen"
        );
        let c = c.reduce(CompareAction::FullScreenEnded);
        assert!(
            !c.presenting,
            "with nothing open, leaving full screen leaves presenter mode"
        );
        // Full screen ending after presenter mode was left (its own request) changes nothing.
        let c = c
            .reduce(CompareAction::Help(true))
            .reduce(CompareAction::FullScreenEnded);
        assert!(c.help && !c.presenting);
    }

    #[test]
    fn presenter_mode_round_trips_through_the_link_without_simulating_again() {
        let c = compare("redis-failover", "consensus-lock")
            .reduce(CompareAction::Seek(20))
            .reduce(CompareAction::TogglePresent);
        let link = crate::route::format(&crate::route::Route::Compare(c.route()));
        assert!(link.ends_with("&step=20&present=1"), "{link}");
        let crate::route::Route::Compare(parsed) = crate::route::parse(&link).route else {
            panic!("{link} is not a compare link")
        };
        assert_eq!(parsed, c.route());
        let again = Compare::from_route(&parsed, vec![]).unwrap();
        assert!(again.presenting);
        assert_eq!(again.cursor, 20);
        // Loading the same runs in another mode keeps the traces.
        let mut off = c.route();
        off.present = false;
        let d = c.clone().reduce(CompareAction::Load(off, vec![]));
        assert!(!d.presenting);
        assert!(d.left.trace == c.left.trace && d.right.trace == c.right.trace);
    }

    #[test]
    fn the_route_reproduces_the_view() {
        let c = compare("raft-election", "raft-partition")
            .reduce(CompareAction::Seek(30))
            .reduce(CompareAction::Inject(Fault::Crash { node: NodeId(0) }));
        let again = Compare::from_route(&c.route(), vec![]).unwrap();
        assert_eq!(again.at(), c.at());
        assert_eq!(again.left.trace.fingerprint(), c.left.trace.fingerprint());
        assert_eq!(again.right.trace.fingerprint(), c.right.trace.fingerprint());
    }
}
