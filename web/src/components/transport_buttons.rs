//! The transport buttons the player and the side-by-side view share: first, previous beat,
//! back, play, forward, next beat, last. Arrows are pictures (hidden from screen readers); the
//! words give every button its name, shown beside the arrow on a wide screen. Each title
//! says the button's key.

use crate::transport::Move;
use yew::prelude::*;

pub struct TransportButtonsProps {
    pub cursor: usize,
    pub last: usize,
    pub playing: bool,
    pub on_move: Callback<Move>,
}

pub fn transport_buttons(props: &TransportButtonsProps) -> Html {
    let go = |m: Move| props.on_move.reform(move |_: MouseEvent| m);
    let at_start = props.cursor == 0;
    let at_end = props.cursor >= props.last;
    let playing = props.playing;
    html! {
        <>
            <button onclick={go(Move::First)} disabled={at_start} title="First step (Home)">
                <span aria-hidden="true">{ "|◀" }</span><span class="visually-hidden">{ "Restart from the first step" }</span>
            </button>
            <button onclick={go(Move::PrevBeat)} disabled={at_start} title="Previous beat (p, Page Up)">
                <span aria-hidden="true">{ "◀◀" }</span><span class="visually-hidden">{ "Previous " }</span><span class="label">{ " Beat" }</span>
            </button>
            <button onclick={go(Move::Back)} disabled={at_start} title="Step back (←)">
                <span aria-hidden="true">{ "◀" }</span><span class="visually-hidden">{ "Step " }</span><span class="label">{ " Back" }</span>
            </button>
            <button class="play" onclick={go(Move::TogglePlay)} title="Play / pause (Space)">
                <span aria-hidden="true">{ if playing { "‖ " } else { "▶ " } }</span>{ if playing { "Pause" } else { "Play" } }
            </button>
            <button onclick={go(Move::Forward)} disabled={at_end} title="Step forward (→)">
                <span class="label">{ "Step " }</span><span class="visually-hidden">{ "forward" }</span><span aria-hidden="true">{ "▶" }</span>
            </button>
            <button class="next-beat" onclick={go(Move::NextBeat)} disabled={at_end} title="Next beat (n, Page Down)">
                <span class="visually-hidden">{ "Next " }</span><span class="label">{ "Beat " }</span><span aria-hidden="true">{ "▶▶" }</span>
            </button>
            <button onclick={go(Move::Last)} disabled={at_end} title="Last step (End)">
                <span aria-hidden="true">{ "▶|" }</span><span class="visually-hidden">{ "Jump to the last step" }</span>
            </button>
        </>
    }
}
