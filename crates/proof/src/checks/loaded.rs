//! What wine's loader loaded for a frozen app (`WINEDEBUG=+loaddll`), in lines `smoke`
//! prints.

use std::path::Path;

use anyhow::Result;

use crate::winpython::wine;

/// The DLLs wine's loader loaded for the app (from the log, past `from`): the app's own, and
/// how many came from the system.
pub(crate) fn loaded(log: &Path, from: u64, app: &Path) -> Result<Vec<String>> {
    let text = std::fs::read(log)?;
    let text = String::from_utf8_lossy(&text[(from as usize).min(text.len())..]).into_owned();
    let loaded = wine::loaded_dlls(&text);
    let app = app.display().to_string().to_lowercase();
    let (own, system): (Vec<_>, Vec<_>) = loaded
        .iter()
        .partition(|(path, _)| path.to_lowercase().starts_with(&app));
    let (modules, libraries): (Vec<_>, Vec<_>) = own
        .into_iter()
        .partition(|(path, _)| path.to_lowercase().ends_with(".pyd"));
    let mut lines = vec![format!(
        "libraries the app loaded (WINEDEBUG=+loaddll): {} DLLs and {} extension modules from \
         the app, {} from the system",
        libraries.len(),
        modules.len(),
        system.len()
    )];
    for (path, kind) in libraries {
        lines.push(format!(
            "  {kind:<8} {}",
            path.get(app.len()..).unwrap_or(path)
        ));
    }
    let (builtin, native): (Vec<_>, Vec<_>) =
        system.into_iter().partition(|(_, kind)| kind == "builtin");
    lines.push(format!(
        "  and {} of wine's builtin system DLLs; native from the system:",
        builtin.len()
    ));
    lines.extend(
        native
            .into_iter()
            .map(|(path, _)| format!("  native   {path}")),
    );
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loaded_dlls_are_the_apps_then_the_systems_past_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("smoke.log");
        let before =
            "0024:trace:loaddll:build_module Loaded L\"Z:\\\\old\\\\x.dll\" at 0: native\n";
        let text = format!(
            "{before}\
             0024:trace:loaddll:build_module Loaded L\"Z:\\\\app\\\\ctranslate2.dll\" at 1: native\n\
             0024:trace:loaddll:build_module Loaded L\"Z:\\\\app\\\\_ssl.pyd\" at 2: native\n\
             0024:trace:loaddll:build_module Loaded L\"C:\\\\windows\\\\system32\\\\kernelbase.dll\" at 3: builtin\n\
             0024:trace:loaddll:build_module Loaded L\"C:\\\\windows\\\\system32\\\\vcomp140.dll\" at 4: native\n"
        );
        ct2v_support::fsx::write(&log, text).unwrap();
        let lines = loaded(&log, before.len() as u64, Path::new("Z:\\app")).unwrap();
        assert_eq!(
            lines,
            [
                "libraries the app loaded (WINEDEBUG=+loaddll): 1 DLLs and 1 extension modules \
                 from the app, 2 from the system",
                "  native   \\ctranslate2.dll",
                "  and 1 of wine's builtin system DLLs; native from the system:",
                "  native   C:\\windows\\system32\\vcomp140.dll",
            ]
        );
    }
}
