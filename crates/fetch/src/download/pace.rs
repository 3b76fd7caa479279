//! Whether a download is getting anywhere, counted across its attempts.

use std::time::{Duration, Instant};

use super::MIN_BYTES_PER_WINDOW;

/// Whether a download is getting anywhere: every `--timeout` window of request time must
/// bring [`MIN_BYTES_PER_WINDOW`], counted across reconnects. Counting failed attempts alone
/// is not enough: a server that sends a few bytes per connection and then stalls or cuts it
/// would make each resume look like progress, and be asked again forever.
pub(super) struct Pace {
    window: Duration,
    /// Whether bytes received are progress at all (not when every attempt starts from zero).
    resumable: bool,
    /// Request time of the finished attempts, and bytes received in all.
    spent: Duration,
    received: u64,
    /// When the running attempt started.
    running: Option<Instant>,
    /// `(request time, bytes received)` when the open window started, and at the last real
    /// progress.
    window_start: (Duration, u64),
    progress_at: (Duration, u64),
    /// Failed attempts since the last real progress.
    failures: u32,
}

impl Pace {
    pub(super) fn new(window: Duration, resumable: bool) -> Pace {
        Pace {
            window,
            resumable,
            spent: Duration::ZERO,
            received: 0,
            running: None,
            window_start: (Duration::ZERO, 0),
            progress_at: (Duration::ZERO, 0),
            failures: 0,
        }
    }

    pub(super) fn start(&mut self) {
        self.running = Some(Instant::now());
    }

    pub(super) fn stop(&mut self) {
        if let Some(started) = self.running.take() {
            self.spent += started.elapsed();
        }
    }

    fn now(&self) -> (Duration, u64) {
        let running = self
            .running
            .map_or(Duration::ZERO, |started| started.elapsed());
        (self.spent + running, self.received)
    }

    /// Request time and bytes in the open window.
    fn in_window(&self) -> (Duration, u64) {
        let (time, bytes) = self.now();
        (time - self.window_start.0, bytes - self.window_start.1)
    }

    /// Counts bytes that arrived; when they close a window that brought too few, says so.
    pub(super) fn received(&mut self, bytes: u64) -> Result<(), String> {
        self.received = self.received.saturating_add(bytes);
        let (elapsed, bytes) = self.in_window();
        if elapsed < self.window {
            return Ok(());
        }
        if bytes < MIN_BYTES_PER_WINDOW {
            return Err(format!(
                "the server sent {bytes} byte(s) in {:.1} s, below {MIN_BYTES_PER_WINDOW} per \
                 {:.1} s (--timeout): it trickles",
                elapsed.as_secs_f64(),
                self.window.as_secs_f64()
            ));
        }
        self.progressed();
        Ok(())
    }

    fn progressed(&mut self) {
        let now = self.now();
        self.window_start = now;
        if self.resumable {
            self.progress_at = now;
            self.failures = 0;
        }
    }

    /// Counts a failed attempt; returns the failures since the last real progress. An
    /// attempt cut short still counts as progress when its window already has enough bytes;
    /// a window that is over starts again, one that is not goes on into the next attempt.
    pub(super) fn failed(&mut self) -> u32 {
        let (elapsed, bytes) = self.in_window();
        if bytes >= MIN_BYTES_PER_WINDOW {
            self.progressed();
        } else if elapsed >= self.window {
            self.window_start = self.now();
        }
        self.failures += 1;
        self.failures
    }

    /// Bytes received and request time since the last real progress.
    pub(super) fn behind(&self) -> (u64, Duration) {
        let (time, bytes) = self.now();
        (bytes - self.progress_at.1, time - self.progress_at.0)
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use super::*;

    #[test]
    fn a_window_with_too_few_bytes_is_slow_and_progress_resets_the_failures() {
        let window = Duration::from_millis(20);
        let mut pace = Pace::new(window, true);
        // A quick attempt with a few bytes: a failure, the window stays open.
        pace.start();
        assert!(pace.received(10).is_ok());
        pace.stop();
        assert_eq!(pace.failed(), 1);
        // The next one fills the window: real progress, the count starts again.
        pace.start();
        assert!(pace.received(MIN_BYTES_PER_WINDOW).is_ok());
        pace.stop();
        assert_eq!(pace.failed(), 1);
        assert_eq!(pace.behind().0, 0);
        // A whole window with one byte in it is slow.
        pace.start();
        thread::sleep(window * 2);
        let slow = pace.received(1).unwrap_err();
        assert!(slow.contains("the server sent 1 byte(s)"), "{slow}");
        pace.stop();
        assert_eq!(pace.failed(), 2);
        assert_eq!(pace.behind().0, 1);

        // Without resume, bytes are no progress: the count only grows.
        let mut pace = Pace::new(window, false);
        for failures in 1..=3 {
            pace.start();
            assert!(pace.received(MIN_BYTES_PER_WINDOW * 10).is_ok());
            pace.stop();
            assert_eq!(pace.failed(), failures);
        }
    }
}
