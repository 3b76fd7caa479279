//! The GPU SDK a build's steps need: found once per run, then filled into a step (its
//! `{sdk.root}`, `{sdk.clang}` and `{sdk.cuda-arch}` placeholders) and its environment
//! (`CUDA_PATH`, or `HIP_PATH`/`ROCM_PATH` and the HIP compile environment).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

use super::bundle_job::Folders;
use crate::plan::{Plan, Step};
use crate::sdk::{self, cuda_arch};
use crate::variant::SdkKind;
use ct2v_support::report::Reporter;

/// What this run found of the plan's SDK, once a step needed it.
#[derive(Debug, Default)]
pub(crate) struct SdkEnv {
    /// The SDK found on this machine (also for build-info.json).
    pub found: Option<sdk::Found>,
    /// CUDA: the `CUDA_ARCH_LIST` for the toolkit found (`{sdk.cuda-arch}`).
    pub cuda_arch: Option<String>,
    /// This run stops before the bundle step (`--until install-ctranslate2`: the native
    /// library only), so the SDK need not hold the rocBLAS kernels the bundle would take.
    pub(crate) before_bundle: bool,
}

/// The file an install step leaves in its prefix naming the SDK the library was compiled
/// against: a wheel built on top of that prefix elsewhere (`--prebuilt-native`) needs the
/// SDK's version (its local version, `[bundle.requires-dist]`) but not the SDK itself.
pub(crate) const RECORD: &str = "ct2v-sdk.json";

impl SdkEnv {
    /// Writes [`RECORD`] into `prefix` when this run found an SDK.
    pub(crate) fn record(&self, prefix: &Path) -> Result<()> {
        let Some(found) = &self.found else {
            return Ok(());
        };
        ct2v_support::fsx::write_atomically(
            &prefix.join(RECORD),
            &serde_json::to_string_pretty(found)?,
        )
    }

    /// Takes the SDK from the [`RECORD`] an install step left in `prefix`, instead of finding
    /// one here, and says which; an error names the file when it is missing or unreadable.
    pub(crate) fn adopt_record(
        &mut self,
        prefix: &Path,
        folders: &mut Folders,
        reporter: &Reporter,
    ) -> Result<sdk::Found> {
        let path = prefix.join(RECORD);
        // A record is a small regular file: never a link, never waited on, never read whole.
        let text = ct2v_support::regular_file::read_small_to_string(&path, 1 << 20).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e}: the native build writes it when it installs the library; build the \
                 library here (without --prebuilt-native) or download the native job's prefix again",
                path.display()
            )
        })?;
        let mut found: sdk::Found = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: not an SDK record: {e}", path.display()))?;
        found.how = format!("recorded by the native build in {}", path.display());
        reporter.say(format_args!(
            "      SDK {} (the library was compiled against it: {})",
            found.version,
            path.display()
        ));
        folders.sdk_version = Some(found.version.clone());
        self.found = Some(found.clone());
        Ok(found)
    }

    /// The SDK the plan needs, found once per run (`--sdk-dir`, in `folders.sdk_root`, is
    /// checked, not searched) and said with its CUDA arch list; `folders` learns its root and
    /// version for the bundle step.
    pub(crate) fn find(
        &mut self,
        plan: &Plan,
        folders: &mut Folders,
        reporter: &Reporter,
    ) -> Result<Option<sdk::Found>> {
        let Some(wanted) = &plan.sdk else {
            return Ok(None);
        };
        if let Some(found) = &self.found {
            return Ok(Some(found.clone()));
        }
        // The SDK must have rocBLAS kernels for the targets only where the bundle takes them
        // from it (Linux) and this run bundles; the Windows HIP SDK bundles take the community
        // build's instead.
        let gpu_targets: Vec<String> = plan
            .bundle_job()
            .filter(|_| !self.before_bundle)
            .filter(|b| {
                b.data
                    .iter()
                    .any(|d| crate::plan::unfilled::in_sdk(&d.base) && d.filter_gpu_targets)
            })
            .map(|b| b.gpu_targets.clone())
            .unwrap_or_default();
        let found = sdk::find(
            wanted,
            plan.platform,
            &gpu_targets,
            folders.sdk_root.as_deref(),
            reporter,
        )?;
        reporter.say(format_args!(
            "      {} {} at {} ({})",
            match wanted.kind {
                SdkKind::Cuda => "CUDA toolkit",
                SdkKind::Hip => "HIP SDK",
            },
            found.version,
            found.root.display(),
            found.how
        ));
        if let (SdkKind::Cuda, Some(requested)) = (wanted.kind, &plan.cuda_arch) {
            let list = cuda_arch::for_toolkit(requested, &found.version)?;
            reporter.say(format_args!(
                "      CUDA_ARCH_LIST for CUDA {}: {list}",
                found.version
            ));
            self.cuda_arch = Some(list);
        }
        folders.sdk_root = Some(found.root.clone());
        folders.sdk_version = Some(found.version.clone());
        self.found = Some(found.clone());
        Ok(Some(found))
    }

    /// The `CUDA_ARCH_LIST` this build's CTranslate2 was compiled with: the one its configure
    /// step got, else (a reused native prefix) the plan's for the toolkit recorded with it.
    pub(crate) fn cuda_arch_list(&self, plan: &Plan) -> Result<Option<String>> {
        if let Some(list) = &self.cuda_arch {
            return Ok(Some(list.clone()));
        }
        match (&plan.cuda_arch, &self.found) {
            (Some(requested), Some(found)) => {
                Ok(Some(cuda_arch::for_toolkit(requested, &found.version)?))
            }
            _ => Ok(None),
        }
    }

    /// `step` with `{sdk.root}` and `{sdk.clang}` replaced by the SDK found here, and its environment plus
    /// `CUDA_PATH` (CMake's FindCUDA looks there first) or `HIP_PATH`/`ROCM_PATH`. A missing
    /// or unfit SDK stops the build.
    pub(crate) fn fill(
        &mut self,
        plan: &Plan,
        step: &Step,
        folders: &mut Folders,
        reporter: &Reporter,
    ) -> Result<(Step, BTreeMap<String, String>)> {
        let Some(found) = self.find(plan, folders, reporter)? else {
            return Ok((step.clone(), step.env.clone()));
        };
        let slashed = |p: &Path| p.display().to_string().replace('\\', "/");
        let root = slashed(&found.root);
        let clang = crate::sdk::hip::clang_dir(&found.root).map(|d| slashed(&d));
        let fill = |text: &str| -> Result<String> {
            let mut text = text.replace("{sdk.root}", &root);
            if let Some(list) = &self.cuda_arch {
                text = text.replace("{sdk.cuda-arch}", list);
            }
            if !text.contains("{sdk.clang}") {
                return Ok(text);
            }
            let Some(clang) = &clang else {
                bail!(
                    "step `{}` needs the SDK's clang ({{sdk.clang}}), but {} has none in llvm/bin \
                     or lib/llvm-*/bin",
                    step.id,
                    found.root.display()
                );
            };
            Ok(text.replace("{sdk.clang}", clang))
        };
        let mut filled = step.clone();
        for command in &mut filled.commands {
            command.program = fill(&command.program)?;
            for arg in &mut command.args {
                *arg = fill(arg)?;
            }
        }
        let mut env = BTreeMap::new();
        for (k, v) in &step.env {
            env.insert(k.clone(), fill(v)?);
        }
        let step = filled;
        let vars: &[&str] = match plan.sdk.as_ref().map(|s| s.kind) {
            Some(SdkKind::Cuda) => &["CUDA_PATH"],
            _ => &["HIP_PATH", "ROCM_PATH"],
        };
        for var in vars {
            env.insert(var.to_string(), found.root.display().to_string());
        }
        if !plan.platform.is_windows() && vars.contains(&"ROCM_PATH") {
            env.extend(crate::sdk::hip::compile_env(&found.root));
        }
        Ok((step, env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_recorded_sdk_gives_its_version_to_a_later_run() {
        let dir = tempfile::tempdir().unwrap();
        let native = SdkEnv {
            found: Some(sdk::Found {
                root: PathBuf::from("/usr/local/cuda-12.8"),
                version: "12.8".into(),
                how: "CUDA_PATH".into(),
            }),
            ..SdkEnv::default()
        };
        native.record(dir.path()).unwrap();
        let mut wheel = SdkEnv::default();
        let mut folders = Folders::default();
        let reporter = Reporter::captured();
        let found = wheel
            .adopt_record(dir.path(), &mut folders, &reporter)
            .unwrap();
        assert_eq!(found.version, "12.8");
        assert_eq!(
            reporter.said().err,
            format!(
                "      SDK 12.8 (the library was compiled against it: {})\n",
                dir.path().join(RECORD).display()
            )
        );
        assert!(found.how.contains(RECORD), "{}", found.how);
        assert_eq!(folders.sdk_version.as_deref(), Some("12.8"));
        assert_eq!(
            folders.sdk_root, None,
            "the SDK's folder is not on this machine"
        );

        let missing = SdkEnv::default()
            .adopt_record(
                &dir.path().join("none"),
                &mut Folders::default(),
                &Reporter::captured(),
            )
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains(RECORD) && missing.contains("--prebuilt-native"),
            "{missing}"
        );
        std::fs::write(dir.path().join(RECORD), "{").unwrap();
        let bad = format!(
            "{:#}",
            SdkEnv::default()
                .adopt_record(dir.path(), &mut Folders::default(), &Reporter::captured())
                .unwrap_err()
        );
        assert!(bad.contains("not an SDK record"), "{bad}");
    }

    /// A record that is a FIFO or a link to `/dev/zero` (a downloaded prefix is anybody's) is
    /// named, never waited on nor read whole.
    #[cfg(unix)]
    #[test]
    fn a_record_that_is_a_fifo_or_a_device_link_is_named_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join(RECORD);
        std::os::unix::fs::symlink("/dev/zero", &record).unwrap();
        let adopt = || {
            SdkEnv::default()
                .adopt_record(dir.path(), &mut Folders::default(), &Reporter::captured())
                .unwrap_err()
                .to_string()
        };
        let e = adopt();
        assert!(e.contains(RECORD) && e.contains("a link"), "{e}");
        std::fs::remove_file(&record).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(&record)
            .status()
            .unwrap();
        assert!(status.success());
        let e = adopt();
        assert!(e.contains(RECORD) && e.contains("a FIFO"), "{e}");
    }
}
