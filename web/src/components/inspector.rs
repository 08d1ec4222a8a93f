//! The state inspector: the scenario's tables (accounts, lock manager, workers…) at this step.

use coordlab_sim::trace::Snapshot;
use std::rc::Rc;
use yew::prelude::*;

pub struct InspectorProps {
    pub snapshot: Rc<Snapshot>,
}

pub fn inspector(props: &InspectorProps) -> Html {
    html! {
        <section class="inspector" aria-labelledby="inspector-title">
            <h2 id="inspector-title">{ "State" }</h2>
            { for props.snapshot.tables.iter().map(|t| html! {
                <table data-table={t.title.clone()}>
                    <caption>{ &t.title }</caption>
                    <thead><tr>{ for t.columns.iter().map(|c| html! { <th scope="col">{ c }</th> }) }</tr></thead>
                    <tbody>
                        { for t.rows.iter().map(|r| html! {
                            <tr>{ for r.iter().map(|cell| html! { <td>{ cell }</td> }) }</tr>
                        }) }
                    </tbody>
                </table>
            }) }
        </section>
    }
}
