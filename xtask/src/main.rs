//! The project's build tasks, run as `cargo xtask TASK` (the alias is in .cargo/config.toml).
//!
//!   cargo xtask dist                         every bundle, release (fat LTO, wasm-opt), into dist/,
//!                                            and the guides (docs/*.md) into dist/docs/
//!   cargo xtask dist --bundles "locks db"    only some, and the home bundle (quicker)
//!   cargo xtask dist --profile wasm-dev      no LTO, no wasm-opt, no terser: bigger files, so
//!                                            never for size; a rebuild takes seconds
//!   cargo xtask dist --dist /tmp/site        somewhere else than dist/
//!   cargo xtask dist --lanes 1               one cargo build at a time (default 2)
//!   cargo xtask minify-css FILE              FILE's stylesheet as the site ships it, on stdout
//!   cargo xtask dev-loader                   (Trunk.toml's hook) the loader for `trunk serve`
//!
//! The environment variables BUNDLES, WASM_PROFILE, DIST and SITE_LANES stand in for the
//! flags (a flag wins). Needs: the wasm32-unknown-unknown target, wasm-bindgen (the version
//! in Cargo.lock), wasm-opt and terser (npm, node_modules/.bin); scripts/ensure-tools.sh
//! installs them.

mod dist;
mod docs;
mod function_order;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str =
    "usage: cargo xtask dist [--bundles \"NAME ...\"] [--profile PROFILE] [--dist DIR] [--lanes N]
       cargo xtask minify-css FILE";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dist") => dist_options(&args[1..]).and_then(|options| dist::build(&options)),
        Some("minify-css") if args.len() == 2 => std::fs::read_to_string(&args[1])
            .map_err(|e| format!("{}: {e}", args[1]))
            .and_then(|css| dist::minify_css(&css))
            .map(|css| print!("{css}")),
        Some("dev-loader") if args.len() == 1 => dist::dev_loader(),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `dist`'s options: each flag, else its environment variable, else the default.
fn dist_options(args: &[String]) -> Result<dist::Options, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut bundles = env("BUNDLES");
    let mut profile = env("WASM_PROFILE");
    let mut dist = env("DIST");
    let mut lanes = env("SITE_LANES");
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let slot = match flag.as_str() {
            "--bundles" => &mut bundles,
            "--profile" => &mut profile,
            "--dist" => &mut dist,
            "--lanes" => &mut lanes,
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        };
        *slot = Some(rest.next().ok_or(format!("{flag} needs a value"))?.clone());
    }
    let lanes = match lanes {
        None => 2,
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=8).contains(n))
            .ok_or(format!("--lanes takes 1 to 8, not `{n}`"))?,
    };
    Ok(dist::Options {
        bundles: bundles.map(|b| b.split_whitespace().map(String::from).collect()),
        profile: profile.unwrap_or_else(|| "wasm-release".into()),
        dist: PathBuf::from(dist.unwrap_or_else(|| "dist".into())),
        lanes,
    })
}
