//! The friendly banner for anything a link or an input asked for that could not be honoured.

use yew::prelude::*;

pub struct NoticesProps {
    pub notices: Vec<String>,
    pub on_dismiss: Option<Callback<()>>,
}

pub fn notices(props: &NoticesProps) -> Html {
    if props.notices.is_empty() {
        return html! {};
    }
    let dismiss = props.on_dismiss.clone().map(|cb| {
        html! { <button class="dismiss" onclick={Callback::from(move |_| cb.emit(()))}>{ "Dismiss" }</button> }
    });
    html! {
        <div class="notice" role="alert">
            <strong>{ "Heads up: " }</strong>
            <ul>{ for props.notices.iter().map(|n| html! { <li>{ n }</li> }) }</ul>
            { for dismiss }
        </div>
    }
}
