//! Placeholders in CMake option and environment values, such as `{onednn.prefix}`, which the
//! plan replaces with real paths. CMake's own `${VAR}` is left alone.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Placeholder {
    /// The CTranslate2 source tree.
    Source,
    /// Where CTranslate2 is installed.
    Prefix,
    /// Where oneDNN is installed.
    OneDnnPrefix,
    /// `INTEL_ROOT`: the unpacked `intel-openmp` wheel's folder.
    OpenMpRoot,
    /// The CUDA toolkit or HIP SDK found at build time.
    SdkRoot,
    /// The folder of the HIP SDK's clang, found at build time (`llvm/bin` in AMD's
    /// layout, `lib/llvm-21/bin` in Debian's).
    SdkClang,
    /// The GPU targets, `;`-separated.
    GpuTargets,
    /// The CUDA architectures.
    CudaArch,
}

impl Placeholder {
    const ALL: [(Placeholder, &'static str); 8] = [
        (Placeholder::Source, "source"),
        (Placeholder::Prefix, "prefix"),
        (Placeholder::OneDnnPrefix, "onednn.prefix"),
        (Placeholder::OpenMpRoot, "openmp.root"),
        (Placeholder::SdkRoot, "sdk.root"),
        (Placeholder::SdkClang, "sdk.clang"),
        (Placeholder::GpuTargets, "gpu-targets"),
        (Placeholder::CudaArch, "cuda-arch"),
    ];

    pub(crate) fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|(_, n)| *n).collect()
    }

    fn from_name(name: &str) -> Option<Placeholder> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(p, _)| *p)
    }
}

/// The placeholders used in `value`, or the first unknown name.
pub(crate) fn placeholders(value: &str) -> Result<Vec<Placeholder>, String> {
    let mut found = Vec::new();
    for name in names_in(value) {
        found.push(Placeholder::from_name(name).ok_or_else(|| name.to_string())?);
    }
    Ok(found)
}

/// Replaces every placeholder with what `fill` gives for it.
pub(crate) fn expand(value: &str, fill: &dyn Fn(Placeholder) -> String) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some((before, name, after)) = next_name(rest) {
        out.push_str(before);
        match Placeholder::from_name(name) {
            Some(p) => out.push_str(&fill(p)),
            None => out.push_str(&format!("{{{name}}}")),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn names_in(value: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = value;
    while let Some((_, name, after)) = next_name(rest) {
        names.push(name);
        rest = after;
    }
    names
}

/// The text from a `{` that no `}` closes (CMake's `${` is not ours), if any.
pub(super) fn unclosed(value: &str) -> Option<&str> {
    let mut rest = value;
    while let Some((_, _, after)) = next_name(rest) {
        rest = after;
    }
    let open = rest.find('{')?;
    let cmake = open > 0 && rest.as_bytes()[open - 1] == b'$';
    (!cmake).then(|| &rest[open..])
}

/// Splits at the next `{name}` that is not CMake's `${name}`.
fn next_name(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    loop {
        let open = from + text[from..].find('{')?;
        let close = open + text[open..].find('}')?;
        if open > 0 && text.as_bytes()[open - 1] == b'$' {
            from = close + 1;
            continue;
        }
        return Some((&text[..open], &text[open + 1..close], &text[close + 1..]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_known_names_and_leaves_cmake_variables() {
        let fill = |p: Placeholder| match p {
            Placeholder::OneDnnPrefix => "/p/onednn".to_string(),
            other => format!("<{other:?}>"),
        };
        assert_eq!(
            expand("{onednn.prefix};${CMAKE_PREFIX_PATH}", &fill),
            "/p/onednn;${CMAKE_PREFIX_PATH}"
        );
    }

    #[test]
    fn reports_unknown_names() {
        assert_eq!(
            placeholders("{openmp.root}/lib"),
            Ok(vec![Placeholder::OpenMpRoot])
        );
        assert_eq!(
            placeholders("{opnemp.root}"),
            Err("opnemp.root".to_string())
        );
        assert_eq!(placeholders("${X}"), Ok(vec![]));
    }
}
