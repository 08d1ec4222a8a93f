//! Running a parser over many inputs and counting what happened.

use crate::Choices;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::{Duration, Instant};

/// What a parser did with one input, as its harness judges it.
pub enum Verdict {
    Accepted,
    /// Refused (or, for a total parser, fell back with a notice) and said why.
    Rejected,
    /// A property the parser promises does not hold; the text says which and how.
    Broken(String),
}

/// One parser's run: which inputs, from which seed.
pub struct Campaign {
    pub name: &'static str,
    pub seed: u64,
    /// The number of the first input; with `inputs` = 1, reproduces one input alone.
    pub first: u64,
    pub inputs: u64,
    /// The cargo command that runs this campaign's test, for the report's "again" line.
    pub command: &'static str,
}

/// Most failing inputs a report keeps (the counts go on).
const FAILURES_KEPT: usize = 5;

pub struct Failure {
    pub index: u64,
    pub input: String,
    pub what: String,
}

pub struct Report {
    pub campaign: Campaign,
    pub accepted: u64,
    pub rejected: u64,
    pub panics: u64,
    pub broken: u64,
    pub failures: Vec<Failure>,
    pub elapsed: Duration,
    /// The input that took longest, and how long: a pointer for a human, never asserted.
    pub slowest: (u64, Duration),
}

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a whole number")),
    )
}

impl Campaign {
    /// `default_inputs` inputs from seed 1, or what `COORDLAB_FUZZ_INPUTS`,
    /// `COORDLAB_FUZZ_SEED` and `COORDLAB_FUZZ_FIRST` say. With `COORDLAB_FUZZ_SHOW` set,
    /// [`Campaign::run`] prints every input before parsing it.
    pub fn from_env(name: &'static str, default_inputs: u64, command: &'static str) -> Campaign {
        Campaign {
            name,
            command,
            seed: env_u64("COORDLAB_FUZZ_SEED").unwrap_or(1),
            first: env_u64("COORDLAB_FUZZ_FIRST").unwrap_or(0),
            inputs: env_u64("COORDLAB_FUZZ_INPUTS").unwrap_or(default_inputs),
        }
    }

    /// Makes and checks every input, prints the counts, and returns them.
    pub fn run(self, make: impl Fn(&mut Choices) -> String, check: impl Fn(&str) -> Verdict) -> Report {
        install_quiet_panic_hook();
        let mut report = Report {
            accepted: 0,
            rejected: 0,
            panics: 0,
            broken: 0,
            failures: Vec::new(),
            elapsed: Duration::ZERO,
            slowest: (self.first, Duration::ZERO),
            campaign: self,
        };
        let started = Instant::now();
        let Campaign {
            seed, first, inputs, ..
        } = report.campaign;
        let show = std::env::var_os("COORDLAB_FUZZ_SHOW").is_some();
        for index in first..first + inputs {
            let input = make(&mut Choices::for_input(seed, index));
            if show {
                let shown: String = format!("{input:?}").chars().take(600).collect();
                println!("input #{index} ({} bytes): {shown}", input.len());
            }
            let one = Instant::now();
            CATCHING.with(|c| c.set(true));
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| check(&input)));
            CATCHING.with(|c| c.set(false));
            let took = one.elapsed();
            if took > report.slowest.1 {
                report.slowest = (index, took);
            }
            let failure = match outcome {
                Ok(Verdict::Accepted) => {
                    report.accepted += 1;
                    None
                }
                Ok(Verdict::Rejected) => {
                    report.rejected += 1;
                    None
                }
                Ok(Verdict::Broken(what)) => {
                    report.broken += 1;
                    Some(what)
                }
                Err(_) => {
                    report.panics += 1;
                    Some(format!(
                        "panicked: {}",
                        PANIC_MESSAGE.with(|m| m.take()).unwrap_or_default()
                    ))
                }
            };
            if let Some(what) = failure {
                if report.failures.len() < FAILURES_KEPT {
                    report.failures.push(Failure { index, input, what });
                }
            }
        }
        report.elapsed = started.elapsed();
        println!("{}", report.summary());
        report
    }
}

impl Report {
    pub fn summary(&self) -> String {
        let c = &self.campaign;
        format!(
            "fuzz {}: {} inputs, {} accepted, {} rejected, {} panics, {} broken properties; seed {}, \
             first input {}; {:.1} s (slowest input #{}: {:.2} ms)",
            c.name,
            c.inputs,
            self.accepted,
            self.rejected,
            self.panics,
            self.broken,
            c.seed,
            c.first,
            self.elapsed.as_secs_f64(),
            self.slowest.0,
            self.slowest.1.as_secs_f64() * 1000.0,
        )
    }

    /// Fails (panics, in a test) if any input panicked or broke a property, with each kept
    /// input escaped and the command that runs it alone.
    pub fn assert_clean(&self) {
        if self.failures.is_empty() {
            return;
        }
        let c = &self.campaign;
        let mut text = self.summary();
        for f in &self.failures {
            let shown: String = format!("{:?}", f.input).chars().take(2_000).collect();
            text.push_str(&format!(
                "\n\ninput #{} ({} bytes): {shown}\n  {}\n  again: COORDLAB_FUZZ_SEED={} COORDLAB_FUZZ_FIRST={} \
                 COORDLAB_FUZZ_INPUTS=1 {} -- --nocapture",
                f.index,
                f.input.len(),
                f.what,
                c.seed,
                f.index,
                c.command,
            ));
        }
        panic!("{text}");
    }
}

thread_local! {
    /// Whether this thread is inside a campaign's `catch_unwind`.
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic inside a campaign is counted and reported by the campaign, not printed as it
/// happens (a million of them would drown the report). Other threads' panics, such as other
/// tests failing, still reach the usual hook.
fn install_quiet_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let usual = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let at = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(format!("{message}{at}")));
            } else {
                usual(info);
            }
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_campaign_counts_panics_and_broken_properties_and_keeps_the_inputs() {
        let campaign = Campaign {
            name: "self-test",
            seed: 9,
            first: 0,
            inputs: 300,
            command: "cargo test -p coordlab-fuzz",
        };
        let report = campaign.run(
            |c| c.below(3).to_string(),
            |input| match input {
                "0" => Verdict::Accepted,
                "1" => Verdict::Broken("one is odd".into()),
                _ => panic!("two"),
            },
        );
        assert_eq!(report.accepted + report.broken + report.panics, 300);
        assert!(report.accepted > 0 && report.broken > 0 && report.panics > 0);
        assert_eq!(report.failures.len(), FAILURES_KEPT);
        assert!(report
            .failures
            .iter()
            .any(|f| f.input == "2" && f.what.contains("panicked: two")));
        let failed = panic::catch_unwind(AssertUnwindSafe(|| report.assert_clean()));
        let message = failed.expect_err("a report with failures is not clean");
        let text = message.downcast_ref::<String>().expect("a formatted message");
        assert!(
            text.contains("COORDLAB_FUZZ_SEED=9 COORDLAB_FUZZ_FIRST="),
            "{text}"
        );
    }
}
