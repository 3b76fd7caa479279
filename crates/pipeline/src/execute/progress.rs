//! A step's commands run with their output in its log, and ninja's `[n/m]` lines as progress.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use crate::plan::Step;
use ct2v_support::process::run_logged;
use ct2v_support::report::Reporter;

/// Runs a step's commands in order with `env`, output to `log`, with a bar for ninja's
/// `[n/m]` lines (or plain lines said through `reporter`).
pub(crate) fn run_commands(
    step: &Step,
    env: &BTreeMap<String, String>,
    log: &Path,
    reporter: &Reporter,
) -> Result<()> {
    let bar = NinjaProgress::new(step.id.as_str(), reporter);
    for command in &step.commands {
        run_logged(command, env, log, &mut |line| bar.line(line))?;
    }
    bar.finish();
    Ok(())
}

/// `[n/m] what` lines become a bar on a terminal, or a line every tenth of the way otherwise.
struct NinjaProgress<'a> {
    bar: Option<ProgressBar>,
    step: String,
    last_tenth: std::cell::Cell<u64>,
    reporter: &'a Reporter,
}

impl<'a> NinjaProgress<'a> {
    fn new(step: &str, reporter: &'a Reporter) -> NinjaProgress<'a> {
        let bar = reporter.bars().map(|target| {
            let bar = ProgressBar::with_draw_target(Some(0), target);
            bar.set_style(
                ProgressStyle::with_template(
                    "      {bar:30} {pos}/{len} [{elapsed_precise} / eta {eta}] {wide_msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        NinjaProgress {
            bar,
            step: step.to_string(),
            last_tenth: std::cell::Cell::new(0),
            reporter,
        }
    }

    fn line(&self, line: &str) {
        let Some((done, total, what)) = parse_ninja(line) else {
            return;
        };
        match &self.bar {
            Some(bar) => {
                bar.set_length(total);
                bar.set_position(done);
                bar.set_message(what.to_string());
            }
            None => {
                let tenth = done * 10 / total.max(1);
                if tenth > self.last_tenth.get() {
                    self.last_tenth.set(tenth);
                    self.reporter
                        .say(format_args!("      {}: {done}/{total}", self.step));
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `[12/424] Building CXX object …` → (12, 424, "Building CXX object …").
pub(crate) fn parse_ninja(line: &str) -> Option<(u64, u64, &str)> {
    let rest = line.strip_prefix('[')?;
    let (counts, what) = rest.split_once(']')?;
    let (done, total) = counts.split_once('/')?;
    Some((
        done.trim().parse().ok()?,
        total.trim().parse().ok()?,
        what.trim(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a terminal, ninja's `[n/m]` lines become a plain line each tenth of the way,
    /// and other lines say nothing.
    #[test]
    fn ninja_lines_without_a_terminal_are_said_each_tenth() {
        let reporter = Reporter::captured();
        let progress = NinjaProgress::new("build-ctranslate2", &reporter);
        for n in 1..=20 {
            progress.line(&format!("[{n}/20] Building CXX object a{n}.o"));
            progress.line("-- not ninja's");
        }
        progress.finish();
        let said = reporter.said().err;
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 10, "{said}");
        assert_eq!(lines[0], "      build-ctranslate2: 2/20");
        assert_eq!(lines[9], "      build-ctranslate2: 20/20");
    }

    #[test]
    fn ninja_progress_lines() {
        assert_eq!(
            parse_ninja("[12/424] Building CXX object src/a.cpp.o"),
            Some((12, 424, "Building CXX object src/a.cpp.o"))
        );
        assert_eq!(parse_ninja("-- Configuring done"), None);
        assert_eq!(parse_ninja("[x/y] no"), None);
    }
}
