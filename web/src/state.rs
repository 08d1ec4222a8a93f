//! The player's state and its reducer. Everything on screen is derived from
//! `(trace, cursor)`; the run's inputs (scenario, params, seed, actions) are what the URL
//! stores. The reducer changes the simulation only by asking the simulator for a new trace.

use crate::nav::Nav;
use crate::route::PlayRoute;
use crate::same_trace::{self, SameState, SameTrace, States};
use crate::transport::{self, Move, Stepping};
use coordlab_sim::kernel::faults::Action as ScriptAction;
use coordlab_sim::scenarios::{self, Params, ScenarioInfo};
use coordlab_sim::{Fault, RunRequest};
use std::rc::Rc;
use yew::Reducible;

/// Playback speeds in steps per second.
pub const SPEEDS: [u32; 5] = [1, 2, 4, 8, 16];
pub const DEFAULT_SPEED: u32 = 2;

#[derive(Clone, Debug, PartialEq)]
pub struct Player {
    /// Shared, not copied: the player is cloned at every render.
    pub info: Rc<ScenarioInfo>,
    pub params: Params,
    pub seed: u64,
    pub actions: Vec<ScriptAction>,
    pub trace: SameTrace,
    /// The state after each step, computed when first shown.
    pub states: States,
    /// Index of the entry on screen.
    pub cursor: usize,
    pub playing: bool,
    pub speed: u32,
    pub notices: Vec<String>,
    /// Where stepping goes in this trace.
    pub nav: Rc<Nav>,
    pub stepping: Stepping,
    /// Presenter mode: the picture and the story fill the screen.
    pub presenting: bool,
    /// The pictures on the stage and the diagram's axis.
    pub view: crate::picture::View,
    /// The list of keys is open.
    pub help: bool,
    /// The Embed dialog is open.
    pub embedding: bool,
    /// The frame size the Embed dialog's snippet has, and what its last copy did.
    pub embed_size: (u32, u32),
    /// The part of the run the Embed dialog's snippets show (from the beat on screen).
    pub embed_span: crate::embed_route::Span,
    pub copy_status: String,
    /// The tab open under the stage.
    pub tab: Tab,
    /// The answer picked for a beat's question: (beat index, answer index).
    pub picked: Option<(usize, u8)>,
    /// In presenter mode, the beat whose answer the room has been shown.
    pub revealed: Option<usize>,
    /// An embed locked to a range: the first and last step it may show.
    pub range: Option<(usize, usize)>,
}

/// The tools under the stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Story,
    Run,
    Faults,
    Network,
    State,
    Events,
}

pub enum Action {
    /// Step, jump to either end, play or pause: the same for every run view.
    Transport(Move),
    Seek(usize),
    SetSpeed(u32),
    SetParam(String, String),
    SetSeed(u64),
    /// Fork: apply a fault right after the entry on screen.
    Inject(Fault),
    RemoveFault(usize),
    ClearFaults,
    DismissNotices,
    /// The URL changed underneath us (back button, edited link).
    Load(PlayRoute, Vec<String>),
    /// Show the topology, the space-time diagram or both.
    SetPicture(crate::picture::Picture),
    /// The `d` key: the next of those.
    NextPicture,
    SetAxis(crate::picture::Axis),
    SetAllEvents(bool),
    ToggleAllEvents,
    SetStopAtBeats(bool),
    TogglePresent,
    Help(bool),
    ToggleHelp,
    /// The Embed dialog opens or closes.
    Embed(bool),
    EmbedSize((u32, u32)),
    /// What a Copy button did.
    CopyStatus(String),
    /// Escape: closes the top-most thing open — the key list, else the Embed dialog, else
    /// presenter mode.
    Leave,
    /// The browser left full screen: see [`crate::presenter::full_screen_ended`].
    FullScreenEnded,
    /// The range the Embed dialog's snippets lock the embed to.
    EmbedRange(crate::embed_route::Span),
    Tab(Tab),
    /// The learner answers the question of beat `.0` with answer `.1`.
    Pick(usize, u8),
    /// Play or pause, whatever the state (a host page's command, the frame leaving the view).
    #[cfg(feature = "embed")]
    SetPlaying(bool),
}

fn simulate(
    scenario: &str,
    params: &Params,
    seed: u64,
    actions: &[ScriptAction],
) -> Result<(SameTrace, States), String> {
    same_trace::simulate(&RunRequest {
        scenario: scenario.to_string(),
        params: params.clone(),
        seed,
        actions: actions.to_vec(),
    })
}

impl Player {
    /// Builds a player from a route; bad parts are dropped with a notice.
    pub fn from_route(route: &PlayRoute, mut notices: Vec<String>) -> Option<Player> {
        let info = Rc::new(scenarios::find(&route.scenario).ok()?.info());
        let ((trace, states), actions) =
            match simulate(&route.scenario, &route.params, route.seed, &route.actions) {
                Ok(t) => (t, route.actions.clone()),
                Err(e) => {
                    notices.push(format!(
                        "The faults in this link do not fit the scenario ({e}); they were left out."
                    ));
                    (
                        simulate(&route.scenario, &route.params, route.seed, &[]).ok()?,
                        Vec::new(),
                    )
                }
            };
        let last = trace.entries.len().saturating_sub(1);
        let cursor = match route.step {
            Some(s) if s as usize > last => {
                notices.push(format!(
                    "The link points at step {s}, but this run has only {} steps; showing the last one.",
                    last + 1
                ));
                last
            }
            Some(s) => s as usize,
            None => 0,
        };
        Some(Player {
            info,
            params: route.params.clone(),
            seed: route.seed,
            actions,
            nav: Rc::new(Nav::of(&trace)),
            trace,
            states,
            cursor,
            playing: false,
            speed: DEFAULT_SPEED,
            notices,
            stepping: Stepping {
                all_events: route.all_events,
                ..Stepping::default()
            },
            presenting: route.present,
            view: route.view,
            help: false,
            embedding: false,
            embed_size: crate::embed_route::DEFAULT_SIZE,
            embed_span: Default::default(),
            copy_status: String::new(),
            tab: Tab::Story,
            picked: None,
            revealed: None,
            range: None,
        })
    }

    /// A player for an embed: locked to the route's range, starting at its step or at the
    /// range's start.
    #[cfg(feature = "embed")]
    pub fn for_embed(route: &crate::embed_route::EmbedRoute, notices: Vec<String>) -> Option<Player> {
        let mut p = Player::from_route(&route.play, notices)?;
        let (lo, hi) = crate::embed_route::range_of(route, &p.trace, &mut p.notices);
        if (lo, hi) != (0, p.last()) {
            p.range = Some((lo, hi));
        }
        p.cursor = if route.play.step.is_some() { p.cursor } else { lo };
        p.keep_in_range();
        Some(p)
    }

    /// The first and last step this player may show.
    pub fn bounds(&self) -> (usize, usize) {
        self.range.unwrap_or((0, self.last()))
    }

    /// Holds the cursor inside the range; playback stops at its end.
    fn keep_in_range(&mut self) {
        let (lo, hi) = self.bounds();
        if self.cursor >= hi {
            self.cursor = hi;
            self.playing = false;
        }
        self.cursor = self.cursor.max(lo);
    }

    pub fn route(&self) -> PlayRoute {
        PlayRoute {
            scenario: self.info.id.to_string(),
            params: self.params.clone(),
            seed: self.seed,
            actions: self.actions.clone(),
            step: Some(self.cursor as u32),
            present: self.presenting,
            all_events: self.stepping.all_events,
            view: self.view,
        }
    }

    /// The question of the beat on screen, if the cursor is at a beat that asks one:
    /// (beat index, question).
    pub fn question(&self) -> Option<(usize, &coordlab_sim::trace::Question)> {
        let i = self.nav.beats.iter().position(|s| *s == self.cursor)?;
        let beat = self.trace.reached_beats().nth(i)?.1;
        beat.question.as_ref().map(|q| (i, q))
    }

    /// Whether the answer to beat `i`'s question is on screen.
    pub fn answered(&self, i: usize) -> bool {
        self.picked.is_some_and(|(b, _)| b == i) || self.revealed == Some(i)
    }

    /// The state after the step on screen.
    pub fn snapshot(&self) -> SameState {
        self.states.at(self.cursor)
    }

    pub fn last(&self) -> usize {
        self.trace.entries.len().saturating_sub(1)
    }

    /// Re-simulates after an input changed; keeps the cursor where it was when possible.
    fn rerun(&mut self) {
        match simulate(self.info.id, &self.params, self.seed, &self.actions) {
            Ok((trace, states)) => {
                self.nav = Rc::new(Nav::of(&trace));
                self.trace = trace;
                self.states = states;
            }
            Err(e) => self.notices.push(e),
        }
        self.cursor = self.cursor.min(self.last());
    }

    /// In presenter mode, the first step forward from a beat that asks a question shows the
    /// room the answer instead of moving on.
    fn reveal_first(&mut self) -> bool {
        match self.question() {
            Some((i, _)) if self.presenting && !self.answered(i) => {
                self.revealed = Some(i);
                true
            }
            _ => false,
        }
    }
}

impl Reducible for Player {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            Action::Seek(i) => next.cursor = i.min(next.last()),
            #[cfg(feature = "embed")]
            Action::SetPlaying(on) => {
                if on == next.playing {
                    return self;
                }
                next.playing = on;
                if on && next.cursor >= next.bounds().1 {
                    next.cursor = next.bounds().0; // playing from the end starts over
                }
            }
            Action::Transport(m) => {
                if m == Move::Tick && !next.playing {
                    return self; // a tick that arrives after a pause changes nothing
                }
                let (lo, hi) = next.bounds();
                if next.range.is_some() && m == Move::TogglePlay && !next.playing && next.cursor >= hi {
                    next.cursor = lo; // playing from the end of the range starts it over
                    next.playing = true;
                    return Rc::new(next);
                }
                if matches!(m, Move::Forward | Move::NextBeat) && next.reveal_first() {
                    return Rc::new(next);
                }
                (next.cursor, next.playing) =
                    transport::apply(m, next.cursor, &next.nav, next.stepping, next.playing);
            }
            Action::SetAllEvents(all) => next.stepping.all_events = all,
            Action::SetPicture(p) => next.view.picture = p,
            Action::NextPicture => next.view.picture = next.view.picture.next(),
            Action::SetAxis(a) => next.view.axis = a,
            Action::ToggleAllEvents => next.stepping.all_events = !next.stepping.all_events,
            Action::SetStopAtBeats(stop) => next.stepping.stop_at_beats = stop,
            Action::TogglePresent => {
                next.presenting = !next.presenting;
                next.help = false;
                // Presenter mode shows no dialog: one left open would come back behind it.
                next.embedding &= !next.presenting;
            }
            Action::Help(open) => next.help = open,
            Action::ToggleHelp => next.help = !next.help,
            Action::Embed(open) => {
                next.embedding = open;
                next.copy_status.clear();
            }
            Action::EmbedSize(size) => {
                next.embed_size = size;
                next.copy_status.clear();
            }
            Action::CopyStatus(m) => next.copy_status = m,
            Action::Leave => {
                let mut layers = crate::presenter::Layers {
                    help: next.help,
                    dialog: next.embedding,
                    presenting: next.presenting,
                };
                layers.escape();
                (next.help, next.embedding, next.presenting) =
                    (layers.help, layers.dialog, layers.presenting);
                next.copy_status.clear();
            }
            Action::FullScreenEnded => {
                (next.presenting, next.help) =
                    crate::presenter::full_screen_ended(next.presenting, next.help);
            }
            Action::EmbedRange(span) => {
                next.embed_span = span;
                next.copy_status.clear();
            }
            Action::Tab(tab) => next.tab = tab,
            Action::Pick(beat, answer) => next.picked = Some((beat, answer)),
            Action::SetSpeed(s) => next.speed = if SPEEDS.contains(&s) { s } else { DEFAULT_SPEED },
            Action::SetParam(key, value) => {
                match scenarios::set_param(&next.info, &next.params, &key, &value) {
                    Ok(p) => {
                        next.params = p;
                        next.rerun();
                    }
                    Err(e) => {
                        return Rc::new(Player {
                            notices: vec![e.to_string()],
                            ..(*self).clone()
                        })
                    }
                }
            }
            Action::SetSeed(seed) => {
                next.seed = seed;
                next.rerun();
            }
            Action::Inject(fault) => {
                next.playing = false;
                let at_step = next.cursor as u32 + 1;
                next.actions.push(ScriptAction { at_step, fault });
                next.rerun();
                next.cursor = (at_step as usize).min(next.last());
            }
            Action::RemoveFault(i) => {
                if i < next.actions.len() {
                    next.actions.remove(i);
                    next.rerun();
                }
            }
            Action::ClearFaults => {
                next.actions.clear();
                next.rerun();
            }
            Action::DismissNotices => next.notices.clear(),
            Action::Load(route, notices) => {
                if route == next.route() {
                    return self;
                }
                // The same run (the player was just made from this route, or only the step,
                // presenter mode or stepping changed): no need to simulate it again.
                let same_run = route.scenario == next.info.id
                    && route.params == next.params
                    && route.seed == next.seed
                    && route.actions == next.actions;
                if same_run {
                    if let Some(step) = route.step {
                        next.cursor = (step as usize).min(next.last());
                    }
                    next.presenting = route.present;
                    next.stepping.all_events = route.all_events;
                    next.view = route.view;
                    if !notices.is_empty() {
                        next.notices = notices;
                    }
                    return Rc::new(next);
                }
                return match Player::from_route(&route, notices) {
                    Some(p) => Rc::new(p),
                    None => self,
                };
            }
        }
        next.keep_in_range();
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::DEFAULT_SEED;
    use coordlab_sim::NodeId;

    fn default_route(id: &str) -> PlayRoute {
        PlayRoute {
            scenario: id.to_string(),
            params: Params::new(),
            seed: DEFAULT_SEED,
            actions: Vec::new(),
            step: None,
            present: false,
            all_events: false,
            view: Default::default(),
        }
    }

    fn player(lock: &str) -> Rc<Player> {
        let mut route = default_route("lost-update");
        route.params.insert("lock".into(), lock.into());
        route.params =
            scenarios::resolve_params(&scenarios::find("lost-update").unwrap().info(), &route.params)
                .unwrap();
        Rc::new(Player::from_route(&route, vec![]).unwrap())
    }

    #[test]
    fn loading_the_route_it_was_made_from_does_not_simulate_again() {
        let p = player("row-lock");
        let mut route = p.route();
        route.step = None;
        let q = p.clone().reduce(Action::Load(route.clone(), vec![]));
        assert!(q.trace == p.trace, "the same trace, by identity");
        assert_eq!(q.cursor, 0);
        route.step = Some(4);
        route.present = true;
        let q = q.reduce(Action::Load(route.clone(), vec![]));
        assert!(q.trace == p.trace);
        assert_eq!((q.cursor, q.presenting), (4, true));
        // Another run does simulate.
        route.seed += 1;
        let r = q.clone().reduce(Action::Load(route, vec![]));
        assert!(r.trace != q.trace);
        assert_eq!(r.seed, q.seed + 1);
    }

    #[test]
    fn stepping_moves_the_cursor_within_bounds() {
        let p = player("none");
        assert_eq!(p.cursor, 0);
        let p = p.reduce(Action::Transport(Move::Back));
        assert_eq!(p.cursor, 0);
        let p = p
            .reduce(Action::Transport(Move::Forward))
            .reduce(Action::Transport(Move::Forward));
        assert_eq!(p.cursor, 2);
        let p = p.reduce(Action::Transport(Move::Last));
        let end = p.cursor;
        assert_eq!(p.reduce(Action::Transport(Move::Forward)).cursor, end);
    }

    #[test]
    fn injecting_forks_at_the_cursor() {
        let p = player("none").reduce(Action::Seek(4));
        let before: Vec<_> = p.trace.entries[..5].to_vec();
        let p = p.reduce(Action::Inject(Fault::Crash { node: NodeId(2) }));
        assert_eq!(p.actions.len(), 1);
        assert_eq!(p.actions[0].at_step, 5);
        assert_eq!(p.cursor, 5);
        assert_eq!(&p.trace.entries[..5], &before[..]);
        assert!(p.trace.entries[5].fault.is_some());
    }

    #[test]
    fn escape_closes_the_key_list_then_the_embed_dialog_then_presenter_mode() {
        let p = player("none")
            .reduce(Action::Embed(true))
            .reduce(Action::ToggleHelp);
        assert!(p.help && p.embedding);
        let p = p.reduce(Action::Leave);
        assert!(!p.help && p.embedding, "the key list is on top: it closes first");
        let p = p.reduce(Action::Leave);
        assert!(!p.embedding);
        // Presenter mode closes the dialog (it cannot show there); Escape then closes the key
        // list and keeps presenter mode, and only the next Escape leaves it.
        let p = p
            .reduce(Action::Embed(true))
            .reduce(Action::TogglePresent)
            .reduce(Action::ToggleHelp);
        assert!(p.presenting && p.help && !p.embedding);
        let p = p.reduce(Action::Leave);
        assert!(p.presenting && !p.help, "the first Escape keeps presenter mode");
        let p = p.reduce(Action::Leave);
        assert!(!p.presenting);
    }

    #[test]
    fn leaving_full_screen_with_the_key_list_open_closes_the_list_and_keeps_presenter_mode() {
        let p = player("none")
            .reduce(Action::TogglePresent)
            .reduce(Action::Help(true));
        let p = p.reduce(Action::FullScreenEnded);
        assert!(p.presenting && !p.help);
        let p = p.reduce(Action::FullScreenEnded);
        assert!(
            !p.presenting,
            "with nothing open it leaves presenter mode, as before"
        );
        let p = p.reduce(Action::Help(true)).reduce(Action::FullScreenEnded);
        assert!(
            p.help && !p.presenting,
            "outside presenter mode it changes nothing"
        );
    }

    #[test]
    fn a_route_reproduces_the_same_view() {
        let p = player("row-lock")
            .reduce(Action::Seek(6))
            .reduce(Action::Inject(Fault::Pause {
                node: NodeId(1),
                duration_ms: 20,
            }));
        let again = Player::from_route(&p.route(), vec![]).unwrap();
        assert_eq!(again.cursor, p.cursor);
        assert_eq!(again.trace.fingerprint(), p.trace.fingerprint());
    }

    #[test]
    fn a_step_beyond_the_end_is_clamped_with_a_notice() {
        let mut route = default_route("lost-update");
        route.step = Some(10_000);
        let p = Player::from_route(&route, vec![]).unwrap();
        assert_eq!(p.cursor, p.last());
        assert_eq!(p.notices.len(), 1);
    }

    #[test]
    fn playback_pauses_at_each_beat_and_goes_on_when_played_again() {
        let mut p = player("none").reduce(Action::Transport(Move::TogglePlay));
        let mut stops = Vec::new();
        for _ in 0..20 {
            for _ in 0..100 {
                p = p.reduce(Action::Transport(Move::Tick));
            }
            assert!(!p.playing);
            stops.push(p.cursor);
            if p.cursor == p.last() {
                break;
            }
            p = p.reduce(Action::Transport(Move::TogglePlay));
        }
        let mut want = p.nav.beats.clone();
        if want.last() != Some(&p.last()) {
            want.push(p.last());
        }
        assert_eq!(stops, want, "one stop per beat, then the end");
    }

    #[test]
    fn playback_stops_at_the_end() {
        let p = player("none")
            .reduce(Action::SetStopAtBeats(false))
            .reduce(Action::Transport(Move::Last))
            .reduce(Action::Transport(Move::TogglePlay));
        assert!(p.playing);
        assert_eq!(p.cursor, 0, "playing from the end starts over");
        let mut p = p;
        for _ in 0..100 {
            p = p.reduce(Action::Transport(Move::Tick));
        }
        assert!(!p.playing);
        assert_eq!(p.cursor, p.last());
    }

    #[cfg(feature = "embed")]
    #[test]
    fn a_range_locked_embed_never_shows_a_step_outside_its_range() {
        let crate::route::Route::Embed(e) =
            crate::route::parse("#/embed/zombie-worker?fencing=write-predicate&from=b-takes-over&to=a-write")
                .route
        else {
            panic!("not an embed")
        };
        let mut p = Rc::new(Player::for_embed(&e, vec![]).unwrap());
        let (lo, hi) = p.bounds();
        assert!(0 < lo && lo < hi && hi < p.last(), "{lo}..{hi} of {}", p.last());
        assert_eq!(p.cursor, lo, "an embed starts at its range");
        for m in [Move::Back, Move::PrevBeat, Move::First] {
            p = p.reduce(Action::Transport(m));
            assert_eq!(p.cursor, lo, "{m:?} stays at the start");
        }
        for m in [Move::Last, Move::NextBeat, Move::Forward] {
            p = p.reduce(Action::Transport(m));
            assert_eq!(p.cursor, hi, "{m:?} stops at the end");
        }
        p = p.reduce(Action::Seek(0));
        assert_eq!(p.cursor, lo);
        p = p.reduce(Action::Seek(usize::MAX));
        assert_eq!(p.cursor, hi);
        p = p.reduce(Action::Transport(Move::TogglePlay));
        assert!(p.playing);
        assert_eq!(p.cursor, lo, "playing from the end of the range starts it over");
        for _ in 0..200 {
            p = p.reduce(Action::SetStopAtBeats(false));
            p = p.reduce(Action::Transport(Move::Tick));
            assert!((lo..=hi).contains(&p.cursor));
        }
        assert!(!p.playing, "playback stops at the end of the range");
        assert_eq!(p.cursor, hi);
    }
}
