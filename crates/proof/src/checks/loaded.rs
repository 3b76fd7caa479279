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
    lines.extend(native.into_iter().map(|(path, _)| format!("  native   {path}")));
    Ok(lines)
}
