//! The wine harness: Windows programs run on a Linux host under Debian's wine 8, in a prefix
//! of their own, with what wine 8 needs to run a Windows CPython and these wheels. None of it
//! ends up in a wheel or an app: it is the harness's, printed by [`accommodations`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use ct2v_support::diagnostic::InputError;
use ct2v_support::process::{CommandLine, run_logged};
use ct2v_support::report::Reporter;
use ct2v_support::staging;
use ct2v_support::workspace::Workspace;

/// What wine 8 needs that Windows does not, and why (each applied by the harness).
pub fn accommodations() -> [&'static str; 5] {
    [
        "stdin from /dev/null, stdout and stderr pipes (CPython's init_sys_streams fails on wine 8's console handles)",
        "`_wmi` disabled by the interpreter's sitecustomize.py, PyInstaller's --exclude-module _wmi (wine 8 lacks propsys.VariantToString)",
        "a ProcessPrng stand-in, bcryptprimitives.dll, in the prefix's system32 (wine 8 lacks it; Rust's std in tokenizers imports it)",
        "KMP_AFFINITY=disabled (Intel OpenMP calls GetNumaNodeProcessorMaskEx, not implemented in wine 8)",
        "numpy 1.26.4 (numpy 2.x imports C99 complex functions that are stubs in wine 8's ucrtbase)",
    ]
}

/// A wine prefix of this run's, removed (with every process in it) when dropped.
pub struct Wine {
    prefix: PathBuf,
    env: BTreeMap<String, String>,
}

impl Wine {
    /// A new prefix at `prefix` (a leftover of a killed run there, whose marker proves it ours
    /// (`support::staging`), is stopped and removed first; anything else there is refused),
    /// with the ProcessPrng stand-in built from the checkout's `scripts/wine/` into its
    /// system32.
    pub fn start(workspace: &Workspace, prefix: &Path, reporter: &Reporter) -> Result<Wine> {
        for (tool, package) in [
            ("wine", "wine wine64"),
            ("wineserver", "wine wine64"),
            ("x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64"),
        ] {
            if !ct2v_support::host::on_path(tool) {
                bail!(
                    "`{tool}` is not installed: a Windows wheel is checked on Linux under wine \
                     (apt-get install {package}), or run the same command on Windows"
                );
            }
        }
        if prefix.exists() {
            if !staging::marked(prefix) {
                return Err(InputError::new(format!(
                    "{} exists and is not a wine prefix this tool made: remove it, or choose \
                     another folder",
                    prefix.display()
                ))
                .into());
            }
            reporter.say(format_args!(
                "removing the wine prefix {}, left by an interrupted run",
                prefix.display()
            ));
        }
        let mut env = BTreeMap::new();
        env.insert("WINEPREFIX".to_string(), prefix.display().to_string());
        env.insert("WINEDEBUG".to_string(), "-all".to_string());
        env.insert(
            "WINEDLLOVERRIDES".to_string(),
            "mscoree,mshtml=".to_string(),
        );
        env.insert("KMP_AFFINITY".to_string(), "disabled".to_string());
        let wine = Wine {
            prefix: prefix.to_path_buf(),
            env,
        };
        if let Err(first) = wine.boot() {
            reporter.say(format_args!(
                "wine could not make its prefix ({first:#}); trying once more in a new one \
                 (wine 8's first boot fails now and then on a loaded machine)"
            ));
            wine.boot()
                .context("wine could not make its prefix, twice")?;
        }
        let system32 = prefix.join("drive_c/windows/system32");
        ct2v_support::regular_file::copy(shim(workspace)?, system32.join("bcryptprimitives.dll"))
            .context("cannot put the ProcessPrng stand-in into the prefix")?;
        Ok(wine)
    }

    /// A new, empty prefix folder (what was there is ours: marked, or made by this run), made a
    /// Windows system by `wineboot --init`.
    fn boot(&self) -> Result<()> {
        let prefix = &self.prefix;
        if prefix.exists() {
            kill_prefix(prefix);
            std::fs::remove_dir_all(prefix)
                .with_context(|| format!("cannot remove {}", prefix.display()))?;
        }
        std::fs::create_dir_all(prefix)
            .with_context(|| format!("cannot create {}", prefix.display()))?;
        staging::mark(prefix)?;
        run_logged(
            &CommandLine::new("wine").args(["wineboot", "--init"]),
            &self.env,
            &prefix.join("wineboot.log"),
            &mut |_| {},
        )?;
        Ok(())
    }

    /// The environment every program of this prefix gets (added to this process's).
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// Runs `wine program args` with its output in `log` (and shown to `watch`), stopped with
    /// every process of the prefix after `limit`.
    pub fn run(
        &self,
        program: &Path,
        args: &[String],
        extra_env: &BTreeMap<String, String>,
        log: &Path,
        limit: Duration,
        watch: &mut dyn FnMut(&str),
    ) -> Result<()> {
        let mut env = self.env.clone();
        env.extend(extra_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        let command = CommandLine::new("wine")
            .arg(program.display().to_string())
            .args(args.iter().cloned());
        let guard = self.watchdog(limit);
        let result = run_logged(&command, &env, log, watch);
        if guard.fired() {
            bail!(
                "{} did not finish within {} s under wine and was stopped; its output: {}",
                program.display(),
                limit.as_secs(),
                log.display()
            );
        }
        result.map_err(Into::into)
    }

    /// Stops every process of this prefix when `limit` passes before the guard is dropped.
    pub fn watchdog(&self, limit: Duration) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let fired = Arc::new(AtomicBool::new(false));
        let (d, f, prefix) = (done.clone(), fired.clone(), self.prefix.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            while !d.load(Ordering::SeqCst) {
                if start.elapsed() >= limit {
                    f.store(true, Ordering::SeqCst);
                    kill_prefix(&prefix);
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        Watchdog { done, fired }
    }
}

impl Drop for Wine {
    fn drop(&mut self) {
        kill_prefix(&self.prefix);
        let _ = std::fs::remove_dir_all(&self.prefix);
    }
}

/// Stops what a [`Wine::watchdog`] watches when dropped.
pub struct Watchdog {
    done: Arc<AtomicBool>,
    fired: Arc<AtomicBool>,
}

impl Watchdog {
    /// Whether the limit passed and the prefix's processes were stopped.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// `wineserver -k` for `prefix`: every Windows process in it ends, and the server with them.
fn kill_prefix(prefix: &Path) {
    let _ = std::process::Command::new("wineserver")
        .arg("-k")
        .env("WINEPREFIX", prefix)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// The ProcessPrng stand-in, built once from `scripts/wine/` with mingw-w64 into
/// `target/xtask/wine/` (rebuilt when its source is newer).
fn shim(workspace: &Workspace) -> Result<PathBuf> {
    let src = workspace.root.join("scripts/wine/bcryptprimitives.c");
    let def = workspace.root.join("scripts/wine/bcryptprimitives.def");
    let dir = workspace.xtask_dir().join("wine");
    let dll = dir.join("bcryptprimitives.dll");
    let fresh = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if dll.is_file() && fresh(&dll) >= fresh(&src) {
        return Ok(dll);
    }
    std::fs::create_dir_all(&dir)?;
    let temp = dir.join(format!("bcryptprimitives.dll.{}", std::process::id()));
    let out = std::process::Command::new("x86_64-w64-mingw32-gcc")
        .args(["-O2", "-shared", "-o"])
        .arg(&temp)
        .arg(&src)
        .arg(&def)
        .arg("-ladvapi32")
        .output()
        .context("cannot run x86_64-w64-mingw32-gcc")?;
    if !out.status.success() {
        bail!(
            "building the ProcessPrng stand-in from {} failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::rename(&temp, &dll)?;
    Ok(dll)
}

/// `path` as a Windows program under wine sees it (wine maps `/` to drive Z:).
pub fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// The DLLs wine's loader reported (`WINEDEBUG=+loaddll`): path and `native` or `builtin`.
pub(crate) fn loaded_dlls(stderr: &str) -> Vec<(String, String)> {
    stderr
        .lines()
        .filter_map(|line| {
            let rest = line.split("Loaded L\"").nth(1)?;
            let (path, after) = rest.split_once('"')?;
            let kind = after.rsplit(": ").next()?.trim();
            Some((path.replace("\\\\", "\\"), kind.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_lines_and_paths_read_as_wine_writes_them() {
        let stderr = "0024:trace:loaddll:build_module Loaded L\"C:\\\\windows\\\\system32\\\\kernelbase.dll\" at 00006FFFFFB30000: builtin\n\
                      0024:trace:loaddll:build_module Loaded L\"Z:\\\\app\\\\_internal\\\\ctranslate2\\\\ctranslate2.dll\" at 0000000180000000: native\n\
                      noise\n";
        assert_eq!(
            loaded_dlls(stderr),
            [
                (
                    "C:\\windows\\system32\\kernelbase.dll".to_string(),
                    "builtin".to_string()
                ),
                (
                    "Z:\\app\\_internal\\ctranslate2\\ctranslate2.dll".to_string(),
                    "native".to_string()
                ),
            ]
        );
        assert_eq!(
            windows_path(Path::new("/tmp/a b/c.exe")),
            "Z:\\tmp\\a b\\c.exe"
        );
    }
}
