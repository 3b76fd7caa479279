//! Where a download's progress goes: bars on a terminal, plain lines otherwise.

use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use ct2v_support::report::Reporter;
use ct2v_support::units::human_size;

use super::Options;
use super::worker::Target;

/// Where progress goes: bars on a terminal, plain lines otherwise.
pub(super) enum ProgressSink {
    Bars(MultiProgress, Reporter),
    Lines(Reporter),
}

impl ProgressSink {
    pub(super) fn new(options: &Options) -> ProgressSink {
        let reporter = options.reporter.clone();
        match options.reporter.bars().filter(|_| options.progress) {
            Some(target) => ProgressSink::Bars(MultiProgress::with_draw_target(target), reporter),
            None => ProgressSink::Lines(reporter),
        }
    }

    /// A line that stays (above the bars, when there are bars).
    pub(super) fn line(&self, text: &str) {
        match self {
            ProgressSink::Bars(multi, reporter) => {
                if multi.println(text).is_err() {
                    reporter.say(text);
                }
            }
            ProgressSink::Lines(reporter) => reporter.say(text),
        }
    }

    pub(super) fn start(&self, target: &Target, offset: u64) -> Progress<'_> {
        let size = target
            .size
            .map_or_else(|| "size unknown".into(), human_size);
        let bar = match self {
            ProgressSink::Bars(multi, _) => {
                let bar = match target.size {
                    Some(size) => ProgressBar::new(size).with_style(bar_style()),
                    None => ProgressBar::no_length().with_style(spinner_style()),
                };
                let bar = multi.add(bar.with_prefix(target.name.to_string()));
                bar.set_position(offset);
                bar.reset_eta();
                bar.enable_steady_tick(Duration::from_millis(200));
                Some(bar)
            }
            ProgressSink::Lines(_) => {
                if offset > 0 {
                    self.line(&format!(
                        "resuming {} at {} of {size}: {}",
                        target.name,
                        human_size(offset),
                        target.url
                    ));
                } else {
                    self.line(&format!(
                        "downloading {} ({size}): {}",
                        target.name, target.url
                    ));
                }
                None
            }
        };
        Progress {
            report: self,
            bar,
            name: target.name.to_string(),
            started: Instant::now(),
            offset,
        }
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{prefix:>24.bold} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )
    .expect("valid template")
    .progress_chars("=> ")
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>24.bold} {spinner} {bytes} {bytes_per_sec}")
        .expect("valid template")
}

/// One file's progress.
pub(super) struct Progress<'a> {
    report: &'a ProgressSink,
    bar: Option<ProgressBar>,
    name: String,
    started: Instant,
    /// The part file's length when the download started.
    offset: u64,
}

impl Progress<'_> {
    pub(super) fn set_length(&self, length: u64) {
        if let Some(bar) = &self.bar
            && bar.length() != Some(length)
        {
            bar.set_style(bar_style());
            bar.set_length(length);
        }
    }

    pub(super) fn set_position(&self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    pub(super) fn note(&self, text: &str) {
        self.report.line(text);
    }

    /// The closing line: size, time and the rate of what this run transferred.
    pub(super) fn finish(&self, size: u64) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let seconds = self.started.elapsed().as_secs_f64();
        let moved = size.saturating_sub(self.offset);
        let rate = if seconds > 0.0 {
            human_size((moved as f64 / seconds) as u64)
        } else {
            "-".into()
        };
        let resumed = if self.offset > 0 {
            format!(", resumed at {}", human_size(self.offset))
        } else {
            String::new()
        };
        self.report.line(&format!(
            "downloaded {}: {} in {seconds:.1} s ({rate}/s{resumed})",
            self.name,
            human_size(size)
        ));
    }

    pub(super) fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
