//! What the benchmarks share: best-of timing, the machine they ran on, and the Markdown table
//! they print for BENCHMARKS.md.

use std::process::Command;
use std::time::{Duration, Instant};

/// How many times each side of a comparison runs; the best time counts.
pub const ROUNDS: usize = 3;

/// Runs `command` and asserts that it succeeds (its stderr is the message when it does not).
pub fn run_quiet(command: &mut Command) {
    let output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

pub fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// The best of `ROUNDS` timings of each, run alternately.
pub fn best_of(mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (Duration, Duration) {
    let mut best = (Duration::MAX, Duration::MAX);
    for _ in 0..ROUNDS {
        best.0 = best.0.min(timed(&mut ours));
        best.1 = best.1.min(timed(&mut theirs));
    }
    best
}

pub fn seconds(d: Duration) -> String {
    if d < Duration::from_millis(10) {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

/// The machine line and the head of the results table.
pub fn print_header() {
    println!("machine: {}", machine());
    println!();
    println!("| benchmark | ct2-variants | alternative | ratio (speed, alternative = 1.0) |");
    println!("|---|---|---|---|");
}

/// A row of the results table: our time, the alternative's, and how many times faster.
pub fn row(what: &str, ours: Duration, alternative: &str, theirs: Duration) {
    println!(
        "| {what} | {} | {alternative}: {} | {:.2}× |",
        seconds(ours),
        seconds(theirs),
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| "unknown CPU".to_string(), |s| s.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))?
                .split_whitespace()
                .nth(1)?
                .parse::<u64>()
                .ok()
        })
        .map_or_else(String::new, |kib| format!(", {} GiB", kib >> 20));
    format!(
        "{cpu}, {cores} cores{memory}, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
