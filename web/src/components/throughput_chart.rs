//! `#/experiment/consensus-throughput`: runs the consensus-throughput experiment here, in
//! WebAssembly (a shorter window than the CLI's default), and draws writes per second and
//! commit latency as SVG bar charts, with the same numbers in a table, the cap that holds
//! each row, etcd's published figures for scale, and a form that re-runs the model with
//! other clients, costs, batch and setup (the checks are the simulator's own).

use coordlab_sim::experiments::consensus_throughput::{
    run, Model, Point, ThroughputConfig, ThroughputReport, BROWSER_DURATION_MS, ETCD_PUBLISHED, ETCD_SOURCE,
    ETCD_SOURCE_URL, MACHINES,
};
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// One bar chart: a title, one label per bar group, and one or two series (the second drawn
/// as an outline, so the two differ by shape and not only by colour).
fn bars(
    id: &str,
    title: &str,
    labels: &[String],
    series: &[(&str, Vec<u64>)],
    unit: &str,
    scale: u64,
) -> Html {
    const W: u64 = 320;
    const H: u64 = 200;
    const TOP: u64 = 44;
    const BOTTOM: u64 = 32;
    let most = series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .max()
        .unwrap_or(1)
        .max(1);
    let slot = (W - 20) / labels.len().max(1) as u64;
    let bar = (slot - 10) / series.len().max(1) as u64;
    let text = |v: u64| {
        if scale == 1 {
            v.to_string()
        } else {
            format!("{:.1}", v as f64 / scale as f64)
        }
    };
    let summary: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let values: Vec<String> = series
                .iter()
                .map(|(n, v)| format!("{n} {} {unit}", text(v[i])))
                .collect();
            format!("{l}: {}", values.join(", "))
        })
        .collect();
    html! {
        <figure class="chart">
            <svg viewBox={format!("0 0 {W} {H}")} role="img" aria-labelledby={id.to_string()}>
                <title id={id.to_string()}>{ format!("{title}. {}", summary.join("; ")) }</title>
                <text x="10" y="18" class="chart-title">{ title }</text>
                if series.len() > 1 {
                    <text x="10" y="34" class="chart-legend">{ "filled: median · outline: p99" }</text>
                }
                <line x1="10" x2={(W - 10).to_string()} y1={(H - BOTTOM).to_string()} y2={(H - BOTTOM).to_string()} class="axis" />
                { for labels.iter().enumerate().map(|(i, label)| {
                    let x0 = 10 + slot * i as u64 + 5;
                    html! {
                        <g>
                            { for series.iter().enumerate().map(|(k, (_, values))| {
                                let v = values[i];
                                let h = (v * (H - TOP - BOTTOM - 16) / most).max(1);
                                let x = x0 + bar * k as u64;
                                let y = H - BOTTOM - h;
                                html! {
                                    <g>
                                        <rect x={x.to_string()} y={y.to_string()} width={(bar - 4).to_string()} height={h.to_string()}
                                            class={if k == 0 { "bar" } else { "bar outline" }} />
                                        <text x={(x + (bar - 4) / 2).to_string()} y={(y - 4).to_string()} text-anchor="middle" class={if series.len() > 1 { "bar-value small" } else { "bar-value" }}>{ text(v) }</text>
                                    </g>
                                }
                            }) }
                            <text x={(x0 + (slot - 10) / 2).to_string()} y={(H - BOTTOM + 18).to_string()} text-anchor="middle" class="bar-label">{ label.clone() }</text>
                        </g>
                    }
                }) }
            </svg>
        </figure>
    }
}

fn ms(us: u64) -> String {
    format!("{:.1}", us as f64 / 1_000.0)
}

fn row(first: String, p: &Point) -> Html {
    let (limit, cap) = p.caps.binding();
    let littles_us = u64::from(p.clients_in_flight()) * 1_000_000 / p.writes_per_s.max(1);
    html! {
        <tr>
            <th scope="row">{ first }</th>
            <td>{ p.writes_per_s }</td>
            <td>{ ms(p.median_us) }</td>
            <td>{ ms(p.p99_us) }</td>
            <td>{ ms(littles_us) }</td>
            <td>{ format!("{}%", p.busiest_cpu_permille / 10) }</td>
            <td class="held-by">{ format!("{} ({cap})", limit.name()) }</td>
        </tr>
    }
}

fn head(first: &str) -> Html {
    html! {
        <thead><tr>
            <th scope="col">{ first.to_string() }</th><th scope="col">{ "writes/s" }</th>
            <th scope="col">{ "median" }</th><th scope="col">{ "p99" }</th>
            <th scope="col"><abbr title="clients in flight divided by writes per second (Little's law)">{ "clients ÷ writes/s" }</abbr></th>
            <th scope="col">{ "CPU" }</th>
            <th scope="col">{ "held by (cap, writes/s)" }</th>
        </tr></thead>
    }
}

/// The form's fields: name, label, the model's value, and how to put a parsed number back.
const FIELDS: [(&str, &str); 6] = [
    ("clients", "Clients per group"),
    ("servers", "Servers per group (your setup)"),
    ("groups", "Groups (your setup)"),
    ("message", "CPU per message (µs)"),
    ("entry", "CPU per entry (µs)"),
    ("batch", "Batch size (entries, at most 16)"),
];

fn field_value(m: &Model, name: &str) -> u64 {
    match name {
        "clients" => m.clients_per_group.into(),
        "servers" => m.servers.into(),
        "groups" => m.groups.into(),
        "message" => m.message_cpu_us,
        "entry" => m.entry_cpu_us,
        _ => m.batch_entries.into(),
    }
}

fn set_field(m: &mut Model, name: &str, v: u64) {
    let small = u32::try_from(v).unwrap_or(u32::MAX);
    match name {
        "clients" => m.clients_per_group = small,
        "servers" => m.servers = small,
        "groups" => m.groups = small,
        "message" => m.message_cpu_us = v,
        "entry" => m.entry_cpu_us = v,
        _ => m.batch_entries = small,
    }
}

/// Reads the form into a model, or says what is wrong with each field. The ranges are the
/// simulator's: each field is checked by [`ThroughputConfig::with_model`] on its own, whose
/// error names the allowed range.
fn read_form(form: &NodeRef) -> Result<ThroughputConfig, Vec<(&'static str, String)>> {
    let base = ThroughputConfig::new(1, BROWSER_DURATION_MS).expect("a valid window");
    let mut model = base.model();
    let mut errors = Vec::new();
    for (name, label) in FIELDS {
        let text = form
            .cast::<web_sys::Element>()
            .and_then(|f| f.query_selector(&format!("input[name={name}]")).ok().flatten())
            .map(|e| wasm_bindgen::JsCast::unchecked_into::<HtmlInputElement>(e).value())
            .unwrap_or_default();
        let Ok(v) = text.trim().parse::<u64>() else {
            errors.push((name, format!("{label}: `{}` is not a whole number.", text.trim())));
            continue;
        };
        let mut alone = base.model();
        set_field(&mut alone, name, v);
        match base.with_model(alone) {
            Ok(_) => set_field(&mut model, name, v),
            Err(e) => errors.push((name, format!("{label}: {e}."))),
        }
    }
    if errors.is_empty() {
        base.with_model(model).map_err(|e| vec![("clients", e)])
    } else {
        Err(errors)
    }
}

fn tables(r: &ThroughputReport) -> Html {
    let sizes: Vec<String> = r
        .by_size
        .iter()
        .map(|p| format!("{} servers", p.layout.replicas))
        .collect();
    let groups: Vec<String> = r
        .by_groups
        .iter()
        .map(|p| {
            format!(
                "{} group{}",
                p.layout.groups,
                if p.layout.groups == 1 { "" } else { "s" }
            )
        })
        .collect();
    let w = |ps: &[Point]| ps.iter().map(|p| p.writes_per_s).collect::<Vec<_>>();
    let lat = |ps: &[Point]| {
        vec![
            ("median", ps.iter().map(|p| p.median_us).collect::<Vec<_>>()),
            ("p99", ps.iter().map(|p| p.p99_us).collect::<Vec<_>>()),
        ]
    };
    let c = &r.config;
    let s = &r.setup;
    html! {
        <>
            <div class="charts">
                { bars("c1", "Writes/s, one group", &sizes, &[("writes/s", w(&r.by_size))], "writes/s", 1) }
                { bars("c2", "Commit latency (ms), one group", &sizes, &lat(&r.by_size), "ms", 1_000) }
                { bars("c3", &format!("Writes/s, groups of 3 on {MACHINES} machines"), &groups, &[("writes/s", w(&r.by_groups))], "writes/s", 1) }
                { bars("c4", "Commit latency (ms), groups of 3", &groups, &lat(&r.by_groups), "ms", 1_000) }
            </div>
            <div class="table-scroll" role="region" aria-label="The model's numbers" tabindex="0">
            <table class="results">
                <caption>{ format!("The model's numbers (seed 1, {BROWSER_DURATION_MS} ms of simulated load; {} clients per group; {} µs per message, {} µs per entry, batches of at most {}; the groups of 3 share {MACHINES} machines; latency in ms; CPU: the busiest machine's share)", c.model.clients_per_group, c.model.message_cpu_us, c.model.entry_cpu_us, c.model.batch_entries) }</caption>
                { head("setup") }
                <tbody>
                    { for r.by_size.iter().zip(&sizes).map(|(p, l)| row(format!("1 group of {l}"), p)) }
                    { for r.by_groups.iter().zip(&groups).map(|(p, l)| row(format!("{l} of 3"), p)) }
                </tbody>
            </table>
            </div>
            <div class="table-scroll" role="region" aria-label="Your setup" tabindex="0">
            <table class="results setup-result">
                <caption>{ "Your setup" }</caption>
                { head("setup") }
                <tbody>{ row(format!("{} group{} of {} on {} machines", s.layout.groups, if s.layout.groups == 1 { "" } else { "s" }, s.layout.replicas, s.layout.machines), s) }</tbody>
            </table>
            </div>
        </>
    }
}

fn published() -> Html {
    html! {
        <div class="table-scroll" role="region" aria-label="etcd's published figures" tabindex="0">
        <table class="results published">
            <caption>
                { "For scale, a real group of three: " }
                <a href={ETCD_SOURCE_URL}>{ ETCD_SOURCE }</a>
            </caption>
            <thead><tr>
                <th scope="col">{ "etcd, published" }</th><th scope="col">{ "writes/s" }</th>
                <th scope="col">{ "average latency (ms)" }</th>
                <th scope="col"><abbr title="clients divided by writes per second (Little's law)">{ "clients ÷ writes/s" }</abbr></th>
            </tr></thead>
            <tbody>
                { for ETCD_PUBLISHED.iter().map(|p| html! {
                    <tr>
                        <th scope="row">{ p.setup }</th>
                        <td>{ p.writes_per_s }</td>
                        <td>{ format!("{}.{}", p.latency_tenth_ms / 10, p.latency_tenth_ms % 10) }</td>
                        <td>{ ms(u64::from(p.clients) * 1_000_000 / p.writes_per_s) }</td>
                    </tr>
                }) }
            </tbody>
        </table>
        </div>
    }
}

#[function_component(ThroughputChart)]
pub fn throughput_chart() -> Html {
    let report = use_state(|| None::<ThroughputReport>);
    let config = use_state(|| ThroughputConfig::new(1, BROWSER_DURATION_MS).expect("a valid window"));
    let errors = use_state(Vec::<(&'static str, String)>::new);
    let form = use_node_ref();
    {
        let report = report.clone();
        use_effect_with(*config, move |config| {
            let config = *config;
            report.set(None);
            // After the next paint, so the page shows "running" rather than freezing.
            let timeout = gloo_timers::callback::Timeout::new(0, move || {
                report.set(Some(run(&config)));
            });
            move || drop(timeout)
        });
    }
    let onsubmit = {
        let (form, config, errors) = (form.clone(), config.clone(), errors.clone());
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            match read_form(&form) {
                Ok(c) => {
                    errors.set(Vec::new());
                    config.set(c);
                }
                Err(found) => errors.set(found),
            }
        })
    };
    let model = config.model();
    let body = match &*report {
        None => html! { <p class="loading" role="status">{ "Running the experiment…" }</p> },
        Some(r) => tables(r),
    };
    html! {
        <section class="experiment" aria-labelledby="experiment-title">
            <h1 id="experiment-title">{ "Consensus is for metadata, not volume" }</h1>
            <p class="lead">{ "The simulator's Raft server under a closed-loop write load: each client keeps one write outstanding. Every machine's CPU pays per message and per entry, so the leader's work bounds a group: each write is a majority round trip through it. More servers per group make the leader busier; more independent groups spread the leaders over the machines. With the defaults, the same numbers as coordlab experiment consensus-throughput --duration-ms 150." }</p>
            <p class="assumptions"><strong>{ "Illustrative assumptions, not measurements: " }</strong>{ "the CPU costs per message and per entry are made up to show the shape (bigger groups slower, more groups faster), not to predict a real store; the network (0.2–0.4 ms one way) and the 0.5 ms disk write are typical of one data centre. The server sends at most 16 entries per AppendEntries and one AppendEntries at a time per follower; real stores batch and pipeline far more, and their costs are their own, so one etcd group of three (below) does about as much as the model's eight groups. Compare the shape, not the numbers." }</p>
            <p>{ "The latency shown is mostly queueing: in a closed loop the mean latency is the clients in flight divided by the throughput (Little's law), so with 64 clients and about 6,600 writes/s a write waits about 9.7 ms, though a write alone takes about 2.5 ms. More clients add waiting, not writes. Each row names what holds it: the CPU of its busiest machine, the batch (at most one batch per follower round trip), or the clients (clients ÷ the unloaded latency); the cap beside it is the model's estimate of that limit." }</p>
            <form class="model-form" ref={form.clone()} onsubmit={onsubmit} aria-label="The model" novalidate=true>
                <fieldset>
                    <legend>{ "Change the model and run it again" }</legend>
                    { for FIELDS.iter().map(|(name, label)| {
                        let wrong = errors.iter().any(|(n, _)| n == name);
                        html! {
                            <label>
                                { *label }
                                <input type="text" inputmode="numeric" name={*name} value={field_value(&model, name).to_string()}
                                    aria-invalid={wrong.then_some("true")} aria-describedby={wrong.then(|| format!("error-{name}"))} />
                            </label>
                        }
                    }) }
                    <button type="submit">{ "Run" }</button>
                </fieldset>
                if !errors.is_empty() {
                    <div class="field-error" role="alert">
                        { for errors.iter().map(|(name, message)| html! { <p id={format!("error-{name}")}>{ message.clone() }</p> }) }
                    </div>
                }
            </form>
            { body }
            { published() }
            <p><a href="#/choose">{ "← Choosing a design" }</a></p>
        </section>
    }
}
