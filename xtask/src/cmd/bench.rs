//! `bench`: time the built wheel against the official wheel of the same version.

use std::process::ExitCode;

use anyhow::Result;

use super::make_plan;
use crate::flags::BenchArgs;
use ct2v_support::workspace::Workspace;

pub fn run(workspace: &Workspace, args: BenchArgs) -> Result<ExitCode> {
    let plan = make_plan(workspace, &args.selection)?;
    let options = ct2v_proof::bench::Options {
        size: args.size,
        threads: args
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
        rounds: args.rounds,
        repeat: args.repeat,
        tokens: args.tokens,
        compute_types: args.compute_types,
        env: args.env,
        offline: args.offline,
        json: args.json,
    };
    let log_dir = workspace.log_dir(&plan.variant, plan.platform);
    std::fs::create_dir_all(&log_dir)?;
    let log = log_dir.join("bench.log");
    std::fs::write(&log, "")?;
    let json = ct2v_proof::bench::run(workspace, &plan, &options, &log)?;
    eprintln!("report: {} (log: {})", json.display(), log.display());
    Ok(ExitCode::SUCCESS)
}
