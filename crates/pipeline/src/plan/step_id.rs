//! Step ids as the plan, its JSON, the logs, the state files and `--until` spell them: a fixed
//! name (`fetch`, `venv`, `wheel`…) or a kind and what it applies to (`unpack-<input>`,
//! `configure-<component>`…).

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct StepId(Cow<'static, str>);

impl StepId {
    pub(crate) const FETCH: StepId = StepId::fixed("fetch");
    pub(crate) const CLONE_SOURCE: StepId = StepId::fixed("clone-ctranslate2");
    pub(crate) const ASSEMBLE_SOURCE: StepId = StepId::fixed("assemble-source");
    pub const PATCH: StepId = StepId::fixed("patch");
    pub(crate) const VENV: StepId = StepId::fixed("venv");
    pub(crate) const COPY_DLLS: StepId = StepId::fixed("copy-dlls");
    pub const WHEEL: StepId = StepId::fixed("wheel");
    pub(crate) const BUNDLE: StepId = StepId::fixed("bundle");
    pub(crate) const VERIFY: StepId = StepId::fixed("verify");
    pub(crate) const CHECKSUM: StepId = StepId::fixed("checksum");

    const fn fixed(id: &'static str) -> StepId {
        StepId(Cow::Borrowed(id))
    }

    fn of(kind: &str, what: &str) -> StepId {
        StepId(Cow::Owned(format!("{kind}-{what}")))
    }

    /// Unpacks the input `input` (the CTranslate2 source too, when it is an archive).
    pub fn unpack(input: &str) -> StepId {
        StepId::of("unpack", input)
    }

    pub fn configure(component: &str) -> StepId {
        StepId::of("configure", component)
    }

    pub fn build(component: &str) -> StepId {
        StepId::of("build", component)
    }

    pub fn install(component: &str) -> StepId {
        StepId::of("install", component)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Ids written by hand, for tests of code that only passes them around.
#[cfg(test)]
impl From<&'static str> for StepId {
    fn from(id: &'static str) -> StepId {
        StepId::fixed(id)
    }
}

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so that `{:<26}` lines up ids as it does strings.
        f.pad(&self.0)
    }
}

impl PartialEq<&str> for StepId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_and_shows_as_the_plain_id() {
        let ids = [
            StepId::unpack("onednn"),
            StepId::install("ctranslate2"),
            StepId::VENV,
        ];
        assert_eq!(
            serde_json::to_string(&ids).unwrap(),
            r#"["unpack-onednn","install-ctranslate2","venv"]"#
        );
        assert_eq!(format!("[{:<8}]", StepId::WHEEL), "[wheel   ]");
        assert_eq!(StepId::configure("onednn"), "configure-onednn");
    }
}
