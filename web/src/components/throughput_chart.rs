//! `#/experiment/consensus-throughput`: runs the consensus-throughput experiment here, in
//! WebAssembly (a shorter window than the CLI's default), and draws writes per second and
//! commit latency as SVG bar charts, with the same numbers in a table.

use coordlab_sim::experiments::consensus_throughput::{
    run, Point, ThroughputConfig, BROWSER_DURATION_MS, MACHINES,
};
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

fn row(first: String, p: &Point) -> Html {
    let ms = |us: u64| format!("{:.1}", us as f64 / 1_000.0);
    html! {
        <tr>
            <th scope="row">{ first }</th>
            <td>{ p.writes_per_s }</td>
            <td>{ ms(p.median_us) }</td>
            <td>{ ms(p.p99_us) }</td>
            <td>{ format!("{}%", p.busiest_cpu_permille / 10) }</td>
        </tr>
    }
}

#[function_component(ThroughputChart)]
pub fn throughput_chart() -> Html {
    let report = use_state(|| None);
    {
        let report = report.clone();
        use_effect_with((), move |_| {
            // After the first paint, so the page shows "running" rather than a blank screen.
            let timeout = gloo_timers::callback::Timeout::new(0, move || {
                let config = ThroughputConfig::new(1, BROWSER_DURATION_MS).expect("a valid window");
                report.set(Some(run(&config)));
            });
            move || drop(timeout)
        });
    }
    let body = match &*report {
        None => html! { <p class="loading" role="status">{ "Running the experiment…" }</p> },
        Some(r) => {
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
            html! {
                <>
                    <div class="charts">
                        { bars("c1", "Writes/s, one group", &sizes, &[("writes/s", w(&r.by_size))], "writes/s", 1) }
                        { bars("c2", "Commit latency (ms), one group", &sizes, &lat(&r.by_size), "ms", 1_000) }
                        { bars("c3", &format!("Writes/s, groups of 3 on {MACHINES} machines"), &groups, &[("writes/s", w(&r.by_groups))], "writes/s", 1) }
                        { bars("c4", "Commit latency (ms), groups of 3", &groups, &lat(&r.by_groups), "ms", 1_000) }
                    </div>
                    <table class="results">
                        <caption>{ format!("The same numbers (seed 1, {BROWSER_DURATION_MS} ms of simulated load; the groups of 3 share {MACHINES} machines; latency in ms; CPU: the busiest machine's share)") }</caption>
                        <thead><tr>
                            <th scope="col">{ "setup" }</th><th scope="col">{ "writes/s" }</th>
                            <th scope="col">{ "median" }</th><th scope="col">{ "p99" }</th>
                            <th scope="col">{ "CPU" }</th>
                        </tr></thead>
                        <tbody>
                            { for r.by_size.iter().zip(&sizes).map(|(p, l)| row(format!("1 group of {l}"), p)) }
                            { for r.by_groups.iter().zip(&groups).map(|(p, l)| row(format!("{l} of 3"), p)) }
                        </tbody>
                    </table>
                </>
            }
        }
    };
    html! {
        <section class="experiment" aria-labelledby="experiment-title">
            <h1 id="experiment-title">{ "Consensus is for metadata, not volume" }</h1>
            <p class="lead">{ "The simulator's Raft server under a closed-loop write load. Every machine's CPU pays per message and per entry, so the leader's work bounds a group: each write is a majority round trip through it. More servers per group make the leader busier; more independent groups spread the leaders over the machines. Same numbers as coordlab experiment consensus-throughput --duration-ms 150." }</p>
            { body }
            <p><a href="#/choose">{ "← Choosing a design" }</a></p>
        </section>
    }
}
