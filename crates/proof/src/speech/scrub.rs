//! The environment a frozen app is run with: what a plain user session has and nothing that
//! points a process at an SDK, a Python or a library folder (no LD_LIBRARY_PATH, PYTHONPATH,
//! HIP_PATH, CUDA_PATH, virtualenv…), and a PATH of the operating system's own folders only.

use std::collections::BTreeMap;

use ct2v_support::platform::Platform;

/// Variables kept (matched case-insensitively, as Windows does): a user session's basics.
const KEPT: [&str; 22] = [
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "TZ",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "APPDATA",
    "LOCALAPPDATA",
    "COMPUTERNAME",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "PATHEXT",
    "COMSPEC",
];

/// Which GPU a process may use is the user's choice, not an SDK's location: kept.
const KEPT_PREFIXES: [&str; 2] = ["CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"];

/// Whether a variable is one that points a process at libraries, a Python or an SDK (named
/// in the report; the rest of what is left out is noise such as SHELL or PWD).
pub(crate) fn points_somewhere(name: &str) -> bool {
    let upper = name.to_uppercase();
    [
        "PATH",
        "PYTHON",
        "CUDA",
        "HIP",
        "ROCM",
        "LD_",
        "VIRTUAL_ENV",
        "CONDA",
        "MKL",
        "OMP",
        "CT2_",
    ]
    .iter()
    .any(|needle| upper.contains(needle))
}

pub(crate) struct Scrubbed {
    pub env: BTreeMap<String, String>,
    /// The names of the variables left out, sorted (for the report).
    pub dropped: Vec<String>,
}

pub(crate) fn scrubbed(
    platform: Platform,
    current: impl IntoIterator<Item = (String, String)>,
) -> Scrubbed {
    let mut env = BTreeMap::new();
    let mut dropped = Vec::new();
    for (key, value) in current {
        let upper = key.to_uppercase();
        let kept = KEPT.contains(&upper.as_str()) || KEPT_PREFIXES.iter().any(|p| upper == *p);
        if kept {
            env.insert(key, value);
        } else if upper != "PATH" {
            dropped.push(key);
        }
    }
    let path = match platform {
        Platform::LinuxX86_64 => "/usr/bin:/bin".to_string(),
        Platform::WindowsX86_64 => {
            let root = env
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("SYSTEMROOT"))
                .map_or(r"C:\Windows".to_string(), |(_, v)| v.clone());
            format!(r"{root}\System32;{root};{root}\System32\Wbem")
        }
    };
    env.insert("PATH".into(), path);
    env.insert("PYTHONNOUSERSITE".into(), "1".into());
    dropped.sort();
    Scrubbed { env, dropped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn sdk_python_and_library_variables_are_dropped_and_path_is_the_systems() {
        let run = scrubbed(
            Platform::LinuxX86_64,
            vars(&[
                ("HOME", "/root"),
                ("PATH", "/opt/rocm/bin:/usr/local/cuda/bin:/usr/bin"),
                ("LD_LIBRARY_PATH", "/opt/rocm/lib"),
                ("PYTHONPATH", "/src"),
                ("PYTHONHOME", "/py"),
                ("VIRTUAL_ENV", "/venv"),
                ("CUDA_PATH", "/usr/local/cuda"),
                ("ROCM_PATH", "/opt/rocm"),
                ("CUDA_VISIBLE_DEVICES", "0"),
            ]),
        );
        assert_eq!(run.env["PATH"], "/usr/bin:/bin");
        assert_eq!(run.env["HOME"], "/root");
        assert_eq!(run.env["CUDA_VISIBLE_DEVICES"], "0");
        assert_eq!(run.env["PYTHONNOUSERSITE"], "1");
        assert_eq!(
            run.dropped,
            [
                "CUDA_PATH",
                "LD_LIBRARY_PATH",
                "PYTHONHOME",
                "PYTHONPATH",
                "ROCM_PATH",
                "VIRTUAL_ENV"
            ]
        );
        assert_eq!(run.env.len(), 4);
        assert!(run.dropped.iter().all(|v| points_somewhere(v)));
        assert!(!points_somewhere("SHELL"));
    }

    #[test]
    fn on_windows_hip_and_cuda_folders_leave_path_and_system_root_stays() {
        let run = scrubbed(
            Platform::WindowsX86_64,
            vars(&[
                ("SystemRoot", r"D:\Win"),
                ("Path", r"C:\Program Files\AMD\ROCm\6.2\bin;D:\Win\System32"),
                ("HIP_PATH", r"C:\Program Files\AMD\ROCm\6.2\"),
                ("HIP_PATH_62", r"C:\Program Files\AMD\ROCm\6.2\"),
                ("CUDA_PATH_V12_8", r"C:\CUDA"),
                ("USERPROFILE", r"C:\Users\u"),
            ]),
        );
        assert_eq!(
            run.env["PATH"],
            r"D:\Win\System32;D:\Win;D:\Win\System32\Wbem"
        );
        assert!(!run.env.contains_key("Path"));
        assert_eq!(run.dropped, ["CUDA_PATH_V12_8", "HIP_PATH", "HIP_PATH_62"]);
        assert_eq!(run.env["SystemRoot"], r"D:\Win");
    }
}
