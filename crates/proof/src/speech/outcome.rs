//! What `crates/proof/python/transcribe.py` reports, and the verdict on it: the transcript's word
//! error rate against the reference, and (for a frozen app) which loaded libraries came from
//! outside the app.

use std::path::Path;

use serde::Deserialize;

use super::wer::word_error_rate;

#[derive(Debug, Clone, Deserialize)]
pub struct Outcome {
    pub text: String,
    pub device: String,
    pub compute_type: String,
    pub(crate) audio_seconds: f64,
    pub(crate) transcribe_seconds: f64,
    pub(crate) real_time_factor: f64,
    pub ctranslate2: String,
    #[serde(default)]
    pub frozen: bool,
    #[serde(default)]
    pub(crate) loaded_libraries: Vec<String>,
}

/// The transcript against the reference: `Err` names what is wrong.
pub(crate) fn judge(
    outcome: &Outcome,
    reference: Option<&str>,
    max_wer: f64,
) -> Result<Option<f64>, String> {
    if outcome.text.trim().is_empty() {
        return Err(format!(
            "the transcript is empty ({} s of audio on {}, {})",
            outcome.audio_seconds, outcome.device, outcome.compute_type
        ));
    }
    let Some(reference) = reference else {
        return Ok(None);
    };
    let wer = word_error_rate(reference, &outcome.text);
    if wer > max_wer {
        return Err(format!(
            "word error rate {wer:.3} is above {max_wer}:\n  heard:    {}\n  expected: {reference}",
            outcome.text
        ));
    }
    Ok(Some(wer))
}

/// Where a library the frozen app loaded came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Inside the app's folder.
    App,
    /// The operating system's own folders (the C library, the GPU driver's user-mode part).
    System,
    /// The GPU driver's user-mode library, wherever the driver put it (a container runtime
    /// mounts it from the host, e.g. /usr/local/nvidia/lib64/libcuda.so.*): the user's own
    /// driver install, never something to bundle.
    Driver,
    /// Anywhere else: an SDK, a Python, a venv. A user's machine does not have it.
    Elsewhere,
}

/// The operating system's library folders, lower-case with `/` (the GPU drivers install
/// their user-mode libraries there: libcuda.so.1 in /usr/lib/x86_64-linux-gnu, nvcuda.dll
/// and amdhip64_6.dll in C:\Windows\System32).
const SYSTEM_DIRS: [&str; 7] = [
    "/lib/",
    "/lib64/",
    "/usr/lib/",
    "/usr/lib64/",
    "c:/windows/system32/",
    "c:/windows/syswow64/",
    "c:/windows/winsxs/",
];

/// File names (lower-case) of the GPU drivers' user-mode libraries: NVIDIA's libcuda and its
/// libnvidia-* helpers (Linux), nvcuda.dll and nvml.dll (Windows).
fn is_driver(name: &str) -> bool {
    name.starts_with("libcuda.so")
        || name.starts_with("libnvidia-")
        || name == "nvcuda.dll"
        || name == "nvml.dll"
}

pub fn origin(library: &str, app: &Path) -> Origin {
    let norm = |p: &str| p.replace('\\', "/").to_lowercase();
    let library = norm(library);
    let name = ct2v_support::paths::last_segment(&library);
    let mut app = norm(&app.display().to_string());
    if !app.ends_with('/') {
        app.push('/');
    }
    if library.starts_with(&app) {
        Origin::App
    } else if SYSTEM_DIRS.iter().any(|d| library.starts_with(d)) {
        Origin::System
    } else if is_driver(name) {
        Origin::Driver
    } else {
        Origin::Elsewhere
    }
}

/// The loaded libraries from elsewhere.
pub(crate) fn from_elsewhere<'a>(outcome: &'a Outcome, app: &Path) -> Vec<&'a str> {
    outcome
        .loaded_libraries
        .iter()
        .filter(|l| origin(l, app) == Origin::Elsewhere)
        .map(String::as_str)
        .collect()
}

/// Whether `library` is under one of the `allowed` folders.
pub(crate) fn is_allowed(library: &str, allowed: &[String]) -> bool {
    let library = library.replace('\\', "/");
    allowed
        .iter()
        .any(|a| library.starts_with(a.replace('\\', "/").trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(text: &str, libraries: &[&str]) -> Outcome {
        Outcome {
            text: text.into(),
            device: "cpu".into(),
            compute_type: "int8_float32".into(),
            audio_seconds: 11.0,
            transcribe_seconds: 2.0,
            real_time_factor: 0.18,
            ctranslate2: "4.7.1".into(),
            frozen: true,
            loaded_libraries: libraries.iter().map(|s| s.to_string()).collect(),
        }
    }

    const REFERENCE: &str = "ask not what your country can do for you";

    #[test]
    fn an_exact_transcript_passes_with_wer_zero_and_a_wrong_one_names_both_texts() {
        let good = outcome("Ask not what your country can do for you.", &[]);
        assert_eq!(judge(&good, Some(REFERENCE), 0.1), Ok(Some(0.0)));
        let bad = outcome("Ask what your cat can do for me.", &[]);
        let err = judge(&bad, Some(REFERENCE), 0.1).unwrap_err();
        assert!(
            err.contains("heard:    Ask what your cat") && err.contains(REFERENCE),
            "{err}"
        );
    }

    #[test]
    fn an_empty_transcript_fails_even_without_a_reference() {
        let err = judge(&outcome("  ", &[]), None, 0.1).unwrap_err();
        assert!(err.contains("empty"), "{err}");
        assert_eq!(judge(&outcome("words", &[]), None, 0.1), Ok(None));
    }

    #[test]
    fn libraries_are_told_apart_by_folder() {
        let app = Path::new("/tmp/run/app");
        assert_eq!(
            origin(
                "/tmp/run/app/_internal/ctranslate2/libctranslate2.so.4",
                app
            ),
            Origin::App
        );
        assert_eq!(origin("/tmp/run/application/x.so", app), Origin::Elsewhere);
        assert_eq!(
            origin("/usr/lib/x86_64-linux-gnu/libcuda.so.1", app),
            Origin::System
        );
        assert_eq!(
            origin("/usr/local/cuda/lib64/libcublas.so.13", app),
            Origin::Elsewhere
        );
        let win = Path::new(r"C:\Users\u\app");
        assert_eq!(
            origin(r"C:\Users\u\app\_internal\ctranslate2\ctranslate2.dll", win),
            Origin::App
        );
        assert_eq!(
            origin(r"C:\WINDOWS\System32\nvcuda.dll", win),
            Origin::System
        );
        assert_eq!(
            origin(r"C:\Program Files\AMD\ROCm\6.2\bin\rocblas.dll", win),
            Origin::Elsewhere
        );
    }

    #[test]
    fn an_sdk_library_loaded_from_outside_is_listed_unless_its_folder_is_allowed() {
        let app = Path::new("/tmp/app");
        let run = outcome(
            "x",
            &[
                "/tmp/app/_internal/libgomp.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/usr/local/cuda/lib64/libcublas.so.13",
            ],
        );
        let outside = from_elsewhere(&run, app);
        assert_eq!(outside, ["/usr/local/cuda/lib64/libcublas.so.13"]);
        assert!(is_allowed(outside[0], &["/usr/local/cuda/".into()]));
        assert!(!is_allowed(outside[0], &["/opt/rocm".into()]));
    }
}
