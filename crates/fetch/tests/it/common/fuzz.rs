//! What the fuzz tests share (`binary_fuzz`, `archive_fuzz`, `input_fuzz`, `patch_safety`):
//! deterministic randomness, the case count, running a case with its panic caught and
//! recorded, and byte-level damage for text inputs.

use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// The random cases per fixture: `CT2V_FUZZ_CASES` when set (a longer hunt), else `default`
/// (sized so that a plain `cargo test` stays quick).
pub fn cases(default: usize) -> usize {
    match std::env::var("CT2V_FUZZ_CASES") {
        Ok(value) => value.trim().parse().unwrap_or_else(|_| {
            panic!("CT2V_FUZZ_CASES={value:?}: expected a number of cases, e.g. 100000")
        }),
        Err(_) => default,
    }
}

/// xorshift64*: deterministic, so every failure names a reproducible case.
pub struct Rng(u64);

impl Rng {
    pub fn seeded(name: &str) -> Rng {
        let mut seed = 0xcbf2_9ce4_8422_2325_u64; // FNV-1a of the fixture's name
        for b in name.bytes() {
            seed = (seed ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn in_range(&mut self, range: &Range<usize>) -> usize {
        range.start + self.below(range.len())
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic hook that, while [`catch`] runs on this thread, records the panic's message,
/// location and backtrace instead of printing them; other panics print as usual.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let trace = Backtrace::force_capture();
                CAUGHT.with(|c| *c.borrow_mut() = Some(format!("{info}\nbacktrace:\n{trace}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`; a panic becomes `Err` with its message, location and backtrace.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    CATCHING.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(false));
    result.map_err(|payload| {
        let recorded = CAUGHT.with(|c| c.borrow_mut().take());
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a non-string payload)".into());
        format!(
            "PANIC: {message}\n{}",
            recorded.unwrap_or_else(|| "(no backtrace recorded)".into())
        )
    })
}

/// Byte-level damage every text fuzzer applies: flip, delete, duplicate, truncate, insert one
/// of `fragments`.
pub fn damage(rng: &mut Rng, text: &[u8], fragments: &[&[u8]]) -> (Vec<u8>, String) {
    let mut bytes = text.to_vec();
    let at = rng.below(bytes.len() + 1);
    let what = match rng.below(6) {
        0 if !bytes.is_empty() => {
            let at = at.min(bytes.len() - 1);
            bytes[at] ^= 1 << rng.below(8);
            format!("bit flipped at {at}")
        }
        1 => {
            let end = (at + 1 + rng.below(64)).min(bytes.len());
            bytes.drain(at..end);
            format!("{}..{end} deleted", at)
        }
        2 => {
            let end = (at + 1 + rng.below(64)).min(bytes.len());
            let copy = bytes[at..end].to_vec();
            bytes.splice(at..at, copy);
            format!("{at}..{end} duplicated")
        }
        3 => {
            bytes.truncate(at);
            format!("truncated at {at}")
        }
        _ => {
            let fragment = rng.pick(fragments);
            bytes.splice(at..at, fragment.iter().copied());
            format!("{:?} inserted at {at}", String::from_utf8_lossy(fragment))
        }
    };
    (bytes, what)
}
