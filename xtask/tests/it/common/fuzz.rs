//! What the fuzz tests share: how many cases to run (`CT2V_FUZZ_CASES`, documented in
//! docs/reliability.md), a deterministic generator, and running one case with its panic
//! caught as a message.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// Cases per fuzz test: `CT2V_FUZZ_CASES` when set (a long run: `CT2V_FUZZ_CASES=20000 cargo
/// test -p xtask --test it fuzz`), else `default`, which keeps the default test run short.
pub fn cases(default: usize) -> usize {
    match std::env::var("CT2V_FUZZ_CASES") {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("CT2V_FUZZ_CASES={v:?} is not a number of cases")),
        Err(_) => default,
    }
}

/// xorshift64*: deterministic, so every failure names a reproducible case.
pub struct Rng(u64);

impl Rng {
    /// Seeded from a name (FNV-1a), so each fuzz test has its own reproducible stream.
    pub fn seeded(name: &str) -> Rng {
        let mut seed = 0xcbf2_9ce4_8422_2325_u64;
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

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `case`; a panic comes back as its message (printed by nobody: the default hook stays
/// quiet while a case runs, and only then).
pub fn catching<T>(case: impl FnOnce() -> T) -> Result<T, String> {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                default(info);
            }
        }));
    });
    CATCHING.with(|c| c.set(true));
    let outcome = panic::catch_unwind(AssertUnwindSafe(case));
    CATCHING.with(|c| c.set(false));
    outcome.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())
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
