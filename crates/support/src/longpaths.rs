//! Windows' MAX_PATH: paths of 260 characters and more fail in programs that are not
//! long-path aware, unless `LongPathsEnabled` (HKLM\SYSTEM\CurrentControlSet\Control\
//! FileSystem, a DWORD) is 1 (Microsoft Learn, "Maximum Path Length Limitation"). A build
//! writes its deepest file under `target/xtask/<variant>/<platform>/`: CTranslate2 4.7.1's
//! deepest source file (CUTLASS, `third_party/cutlass/include/cutlass/conv/threadblock/
//! depthwise_fprop_…_dilation.h`) is 136 characters below its tree, 193 below the checkout.
//! Where long paths are off, the unpack step refuses an entry whose path would reach the
//! limit, and `plan`/`build` say so before starting, from the archives already cached
//! (`build::long_paths::problem`).

/// MAX_PATH counts the terminating NUL: 259 characters is the longest path that works.
pub const LONGEST: usize = 259;

const KEY: &str = r"HKLM\SYSTEM\CurrentControlSet\Control\FileSystem";

/// `Some(value)` of `LongPathsEnabled` on Windows (`Some(false)` when it is not set), `None`
/// elsewhere.
pub fn enabled() -> Option<bool> {
    #[cfg(windows)]
    return Some(registry_dword().is_some_and(|v| v == 1));
    #[allow(unreachable_code)]
    None
}

/// `LongPathsEnabled = 1 (HKLM\…\FileSystem)`, or that it is not set.
pub fn describe() -> Option<String> {
    #[cfg(windows)]
    return Some(match registry_dword() {
        Some(v) => format!("LongPathsEnabled = {v} ({KEY})"),
        None => format!("LongPathsEnabled is not set ({KEY}): paths stop at 260 characters"),
    });
    #[allow(unreachable_code)]
    None
}

#[cfg(windows)]
fn registry_dword() -> Option<u32> {
    use windows_sys::Win32::System::Registry::{
        HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RegGetValueW,
    };
    let wide = |s: &str| s.encode_utf16().chain([0]).collect::<Vec<u16>>();
    let (key, value) = (
        wide(r"SYSTEM\CurrentControlSet\Control\FileSystem"),
        wide("LongPathsEnabled"),
    );
    let mut data = 0u32;
    let mut size = 4u32;
    // SAFETY: the strings are NUL-terminated and outlive the call; `data` holds a DWORD.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut data as *mut u32).cast(),
            &mut size,
        )
    };
    (status == 0).then_some(data)
}

/// What to do about a path of `length` characters (`example`).
pub fn advice(length: usize, example: &str) -> String {
    format!(
        "{example} would be {length} characters, and Windows stops at {} while long paths are \
         off ({KEY}\\LongPathsEnabled is not 1). Either enable long paths (as administrator, \
         then open a new terminal): reg add {KEY} /v LongPathsEnabled /t REG_DWORD /d 1 /f \
         -- or work from a checkout path at least {} characters shorter (e.g. git clone into \
         C:\\ct2v)",
        LONGEST + 1,
        length.saturating_sub(LONGEST),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_gives_both_fixes_and_how_much_shorter() {
        let text = advice(300, r"C:\x\deep.h");
        assert!(text.contains("300 characters"), "{text}");
        assert!(
            text.contains("/v LongPathsEnabled /t REG_DWORD /d 1"),
            "{text}"
        );
        assert!(text.contains("at least 41 characters shorter"), "{text}");
    }

    #[test]
    fn only_windows_has_the_setting() {
        assert_eq!(enabled().is_some(), cfg!(windows));
        assert_eq!(describe().is_some(), cfg!(windows));
    }
}
