//! `Loc<T>`: a value from a variant file that remembers which file and byte range it came
//! from, so that a problem found after the layers are merged can still point at its line.

use std::cell::Cell;
use std::cmp::Ordering;
use std::ops::Range;

use serde::{Deserialize, Deserializer};

thread_local! {
    /// The file being deserialized on this thread; set only inside [`reading_file`].
    static CURRENT_FILE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Runs `parse` with every `Loc` it produces tagged with `file`.
pub(crate) fn reading_file<R>(file: usize, parse: impl FnOnce() -> R) -> R {
    let previous = CURRENT_FILE.replace(file);
    let result = parse();
    CURRENT_FILE.set(previous);
    result
}

#[derive(Debug, Clone)]
pub struct Loc<T> {
    pub value: T,
    pub file: usize,
    pub span: Range<usize>,
}

impl<T> Loc<T> {
    pub fn get(&self) -> &T {
        &self.value
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Loc<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = toml::Spanned::<T>::deserialize(deserializer)?;
        Ok(Loc {
            file: CURRENT_FILE.get(),
            span: spanned.span(),
            value: spanned.into_inner(),
        })
    }
}

impl<T: PartialEq> PartialEq for Loc<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Loc<T> {}

impl<T: PartialOrd> PartialOrd for Loc<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<T: Ord> Ord for Loc<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.value.cmp(&other.value)
    }
}
