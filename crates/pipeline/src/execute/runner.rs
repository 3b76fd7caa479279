//! What each kind of plan step does when `build` runs it: the tool's own steps (fetch,
//! unpack, patch, bundle, checksum) call into the library; the others run their commands with
//! output to the step's log and a progress bar fed by ninja's `[n/m]` lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::bundle_job;
use super::info::{first_line, write_build_info};
use super::jobs;
use super::progress::run_commands;
use super::sdk_env::SdkEnv;
use super::toolchain::{check_compiler, check_python};
use crate::execute::executor::Handler;
use crate::execute::input_download;
use crate::plan::{Action, Plan, SourceArchive, Step};
use crate::sdk::msvc;
use ct2v_bundle::bundler::run as bundle_run;
use ct2v_bundle::checksums;
use ct2v_fetch::cache::Cache;
use ct2v_fetch::unpack;
use ct2v_fetch::{download, patch, wheelhouse};
use ct2v_support::owned_output::rerecord_after;
use ct2v_support::report::Reporter;

pub(crate) struct Runner {
    pub cache: Cache,
    pub download: download::Options,
    /// Folders the plan cannot know (SDK, compiler runtime); found on demand when missing.
    pub folders: bundle_job::Folders,
    /// The GPU SDK, once a step needed it (for its placeholders and build-info.json).
    pub sdk: SdkEnv,
    /// Windows: the MSVC x64 toolchain, once a step needed it.
    pub msvc: Option<msvc::Toolchain>,
    /// The C++ library was built by another run (`--prebuilt-native`): its SDK is the one its
    /// install step recorded, and this machine needs one only where the bundle copies from it.
    pub prebuilt_native: bool,
    /// This run stops before the bundle, the only step that reads device wheels (ROCm 10: one
    /// per GPU target, ~380 MB each): they are neither downloaded nor unpacked.
    pub skip_device_wheels: bool,
    /// Where the steps' progress is said.
    pub reporter: Reporter,
}

impl Handler for Runner {
    fn cannot_run(&self, plan: &Plan, step: &Step) -> Option<String> {
        if let Action::Unpack { input, .. } = &step.action
            && !self.needs(input)
        {
            return Some(
                "only the bundle reads a device wheel, and this run stops before the bundle".into(),
            );
        }
        let here = ct2v_support::platform::Platform::host();
        (matches!(step.action, Action::Verify(_)) && here != Some(plan.platform)).then(|| {
            format!(
                "installing and importing a {} wheel needs a {} machine; there, run \
                 `cargo xtask verify --variant {} --platform {} --python {}`",
                plan.platform, plan.platform, plan.variant, plan.platform, plan.python
            )
        })
    }

    fn run(&mut self, plan: &Plan, step: &Step, log: &Path) -> Result<()> {
        match &step.action {
            Action::Fetch { .. } => self.fetch(plan, log),
            Action::Unpack {
                input,
                archive,
                subdir,
                dest,
                expect,
            } => self.unpack(plan, input, archive, subdir.as_deref(), dest, expect),
            Action::AssembleSource {
                tag,
                submodules,
                dest,
            } => self.assemble(plan, tag, submodules, dest),
            Action::Patch { patches, tree, .. } => {
                let root = Path::new(&plan.root);
                let files: Vec<PathBuf> = patches.iter().map(|p| root.join(p)).collect();
                rerecord_after(Path::new(tree), || {
                    patch::apply_series(&files, Path::new(tree), log)
                })
            }
            Action::Clone { url, .. } => bail!(
                "step `{}`: cloning {url} is not supported by `build` yet; use a pinned archive",
                step.id
            ),
            Action::Bundle(_) => self.bundle(plan),
            Action::Checksum { dir, .. } => {
                let compiler = self.compiler_banner(plan)?;
                let cuda_arch = self.sdk.cuda_arch_list(plan)?;
                if let Some(list) = &cuda_arch {
                    let wheel = Path::new(&plan.outputs.fat_wheel);
                    let carried = crate::sdk::cuda_code::check_wheel(wheel, list)?;
                    self.reporter.say(format_args!(
                        "      {}",
                        ct2v_support::diagnostic::escaped(&carried)
                    ));
                }
                let sdk = (self.sdk.found.as_ref(), cuda_arch.as_deref());
                // The bundle's output folder: SHA256SUMS and build-info.json join its record.
                rerecord_after(Path::new(dir), || {
                    write_build_info(plan, sdk, &compiler, Path::new(dir))?;
                    checksums::write(Path::new(dir), checksums::default_jobs())
                })?;
                Ok(())
            }
            Action::Configure { .. } => {
                check_compiler(plan)?;
                let (step, env) = self
                    .sdk
                    .fill(plan, step, &mut self.folders, &self.reporter)?;
                let env = self.with_msvc(plan, &env)?;
                self.check_cuda_with_msvc(plan)?;
                run_commands(&step, &env, log, &self.reporter)
            }
            Action::Venv { .. } => {
                check_python(plan, "the build's tools venv")?;
                run_commands(step, &self.pip_env(step), log, &self.reporter)
            }
            Action::Build { .. } => {
                let (step, env) = self
                    .sdk
                    .fill(plan, step, &mut self.folders, &self.reporter)?;
                let mut env = self.with_msvc(plan, &env)?;
                let per_job = match plan.sdk.as_ref().map(|s| s.kind) {
                    Some(crate::variant::SdkKind::Cuda) => jobs::GIB_PER_NVCC_JOB,
                    _ => jobs::GIB_PER_CXX_JOB,
                };
                if let Some((n, why)) = jobs::for_host(per_job) {
                    self.reporter.say(format_args!("      {why}"));
                    env.insert(jobs::PARALLEL_ENV.to_string(), n.to_string());
                }
                run_commands(&step, &env, log, &self.reporter)
            }
            Action::Verify(_) => {
                check_python(plan, "the verify step (a fresh venv for the wheel)")?;
                run_commands(step, &self.pip_env(step), log, &self.reporter)
            }
            Action::CopyDlls { files, dest } => rerecord_after(Path::new(dest), || {
                for copied in crate::execute::copy_dlls::copy(files, Path::new(dest))? {
                    self.reporter
                        .say(format_args!("      {}", copied.display()));
                }
                Ok(())
            }),
            Action::Install { .. } => {
                let env = self.with_msvc(plan, &step.env)?;
                run_commands(step, &env, log, &self.reporter)?;
                match step.outputs.first() {
                    Some(prefix) => self.sdk.record(Path::new(prefix)),
                    None => Ok(()),
                }
            }
            Action::Wheel => {
                let env = self.with_msvc(plan, &step.env)?;
                // pip builds `python/` in place: its build/ and egg-info are the tool's own.
                match source_tree(plan) {
                    Some(tree) => {
                        rerecord_after(&tree, || run_commands(step, &env, log, &self.reporter))
                    }
                    None => run_commands(step, &env, log, &self.reporter),
                }
            }
        }
    }

    /// The compiler's and Python's versions: a new compiler rebuilds, a new Python re-wheels.
    fn runtime_fingerprint(&mut self, plan: &Plan, step: &Step) -> Result<String> {
        Ok(match &step.action {
            Action::Configure { .. } | Action::Build { .. } => self.compiler_banner(plan)?,
            // A cached file that went missing (or was deleted as corrupt) fetches again.
            Action::Fetch { .. } => plan
                .inputs
                .iter()
                .filter(|i| self.needs(&i.name))
                .map(|i| {
                    let cached = i
                        .cache_path
                        .as_ref()
                        .is_some_and(|p| Path::new(p).is_file());
                    format!("{}={cached};", i.name)
                })
                .collect(),
            Action::Patch { patches, .. } => {
                let files: Vec<PathBuf> = patches.iter().map(PathBuf::from).collect();
                patch::fingerprint(&files)?
            }
            // A tree patched with another series is unpacked afresh, then patched.
            Action::Unpack { dest, .. } | Action::AssembleSource { dest, .. } => {
                match patched_tree_series(plan, dest) {
                    Some(files) => patch::fingerprint(&files)?,
                    None => String::new(),
                }
            }
            // A new Python, or new pins in the requirements file, make a new venv.
            Action::Venv { requirements } => {
                let python = step
                    .commands
                    .first()
                    .map(|c| first_line(&c.program, "--version"))
                    .unwrap_or_default();
                let (pins, _) = ct2v_fetch::cache::sha256_file(Path::new(requirements))
                    .with_context(|| format!("cannot read {requirements}"))?;
                format!("{python};{pins}")
            }
            Action::Wheel => step
                .commands
                .first()
                .map(|c| first_line(&c.program, "--version"))
                .unwrap_or_default(),
            _ => String::new(),
        })
    }
}

impl Runner {
    /// Whether this run reads the input `name` (see [`Runner::skip_device_wheels`]).
    fn needs(&self, name: &str) -> bool {
        !(self.skip_device_wheels && name.starts_with(crate::variant::DEVICE_INPUT_PREFIX))
    }

    /// The plan's inputs into the cache and, online, the pip wheels an offline build needs.
    fn fetch(&mut self, plan: &Plan, log: &Path) -> Result<()> {
        let (wanted, left): (Vec<_>, Vec<_>) = plan
            .inputs
            .iter()
            .cloned()
            .partition(|i| self.needs(&i.name));
        if !left.is_empty() {
            self.reporter.say(format_args!(
                "      {} device wheel(s) left out: only the bundle reads them",
                left.len()
            ));
        }
        let wanted = Plan {
            inputs: wanted,
            ..plan.clone()
        };
        let summary = input_download::fetch_plan(&self.cache, &wanted, &self.download)?;
        self.reporter.say(format_args!("      {}", summary.line()));
        if !self.download.offline
            && let Some(requirements) = plan.venv_requirements()
        {
            // Online, the venv can still install from the index: a failure here
            // only means `--offline` will not work from this cache yet.
            match wheelhouse::download(
                self.cache.root(),
                plan.platform,
                &plan.python,
                &requirements,
                &[],
                log,
            ) {
                Ok(dir) => self.reporter.say(format_args!(
                    "      build-tool and runtime wheels in {}",
                    dir.display()
                )),
                Err(e) => self.reporter.say(format_args!(
                    "      warning: the pip wheels for offline builds were not fetched: {e:#}"
                )),
            }
        }
        Ok(())
    }

    fn unpack(
        &mut self,
        plan: &Plan,
        input: &str,
        archive: &str,
        subdir: Option<&str>,
        dest: &str,
        expect: &[String],
    ) -> Result<()> {
        let planned = plan.inputs.iter().find(|i| i.name == input);
        if let Some(i) = planned {
            self.verify_cached(i)?;
        }
        let file_name = planned.map_or(archive, |i| i.file_name.as_str());
        let url = planned.map_or("", |i| i.url.as_str());
        let unpacked = unpack::unpack_input(
            &unpack::CachedInput {
                name: input,
                archive: Path::new(archive),
                file_name,
                url,
            },
            subdir,
            Path::new(dest),
            unpack::Kept::Recorded,
            &self.reporter,
        )?;
        self.reporter.say(format_args!(
            "      {} files, {}",
            unpacked.files,
            ct2v_support::units::human_size(unpacked.bytes)
        ));
        unpack::check_expected(file_name, url, subdir, Path::new(dest), expect)
    }

    /// The tag's archive and its submodules' in place, each checked against its gitlink.
    fn assemble(
        &mut self,
        plan: &Plan,
        tag: &SourceArchive,
        submodules: &[SourceArchive],
        dest: &str,
    ) -> Result<()> {
        let assembly = assembly(plan, tag, submodules, Path::new(dest))?;
        for part in
            std::iter::once(&assembly.tag).chain(assembly.submodules.iter().map(|s| &s.part))
        {
            if let Some(i) = plan.inputs.iter().find(|i| i.name == part.input) {
                self.verify_cached(i)?;
            }
        }
        let unpacked = ct2v_fetch::assemble::assemble(&assembly, &self.reporter)?;
        self.reporter.say(format_args!(
            "      {} archive(s), {} files, {}",
            1 + assembly.submodules.len(),
            unpacked.files,
            ct2v_support::units::human_size(unpacked.bytes)
        ));
        Ok(())
    }

    /// The compiler's first line, for fingerprints and build-info.json: `c++ --version`, or
    /// on Windows the banner `cl` prints (on stderr) when run with no arguments.
    fn compiler_banner(&mut self, plan: &Plan) -> Result<String> {
        if !plan.platform.is_windows() {
            return Ok(first_line("c++", "--version"));
        }
        if ct2v_support::platform::Platform::host() != Some(plan.platform) {
            return Ok(String::new());
        }
        Ok(msvc::banner(self.msvc_toolchain()?))
    }

    fn msvc_toolchain(&mut self) -> Result<&msvc::Toolchain> {
        if self.msvc.is_none() {
            let found = msvc::find()?;
            self.reporter
                .say(format_args!("      MSVC x64 environment: {}", found.how()));
            self.msvc = Some(found);
        }
        Ok(self.msvc.as_ref().expect("set above"))
    }

    /// A CUDA toolkit that cannot compile with this MSVC stops the build before it compiles
    /// (see `sdk::cuda_msvc`).
    fn check_cuda_with_msvc(&mut self, plan: &Plan) -> Result<()> {
        let Some(found) = self.sdk.found.clone() else {
            return Ok(());
        };
        let cuda = matches!(
            plan.sdk.as_ref().map(|s| s.kind),
            Some(crate::variant::SdkKind::Cuda)
        );
        if plan.msvc.is_none() || !cuda {
            return Ok(());
        }
        let banner = msvc::banner(self.msvc_toolchain()?);
        if let Some(problem) = crate::sdk::cuda_msvc::problem(&found.version, &banner) {
            anyhow::bail!("{problem} (CUDA at {})", found.root.display());
        }
        Ok(())
    }

    /// A Windows source build's step environment inside the MSVC x64 environment.
    fn with_msvc(
        &mut self,
        plan: &Plan,
        env: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>> {
        if plan.msvc.is_none() {
            return Ok(env.clone());
        }
        Ok(msvc::step_env(self.msvc_toolchain()?, env))
    }

    /// Offline, pip installs only from the wheelhouse `fetch` filled.
    fn pip_env(&self, step: &Step) -> BTreeMap<String, String> {
        let mut env = step.env.clone();
        if self.download.offline {
            env.insert("PIP_NO_INDEX".into(), "1".into());
        }
        env
    }

    /// Re-hashes a pinned input before it is used: a file damaged since `fetch` ran is caught.
    fn verify_cached(&self, input: &crate::plan::PlannedInput) -> Result<()> {
        let Some(sha256) = &input.sha256 else {
            return Ok(());
        };
        let pin = ct2v_fetch::cache::Pin {
            url: input.url.clone(),
            sha256: sha256.clone(),
            size: input.size,
            file_name: input.file_name.clone(),
        };
        match self.cache.lookup(&pin) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => bail!(
                "input `{}` is not in the cache any more: run `cargo xtask fetch` (or the build \
                 again, which fetches it)",
                input.name
            ),
            Err(e) => Err(e).with_context(|| format!("input `{}`", input.name)),
        }
    }

    fn bundle(&mut self, plan: &Plan) -> Result<()> {
        let needs_sdk_files = plan
            .bundle_job()
            .is_some_and(crate::plan::unfilled::takes_from_sdk);
        match recorded_sdk_prefix(plan) {
            Some(prefix) if self.prebuilt_native && !needs_sdk_files && plan.sdk.is_some() => {
                self.sdk
                    .adopt_record(&prefix, &mut self.folders, &self.reporter)?;
            }
            _ => {
                self.sdk.find(plan, &mut self.folders, &self.reporter)?;
            }
        }
        let spec = bundle_job::from_plan(plan, &self.folders)?;
        let bundled = bundle_run::run(&spec, &self.reporter)?;
        for line in bundled.report.summary().lines() {
            self.reporter.say(format_args!("      {line}"));
        }
        Ok(())
    }
}

/// What an `assemble-source` step puts together, with each archive's file name and URL from
/// the plan's inputs (for messages).
pub fn assembly(
    plan: &Plan,
    tag: &SourceArchive,
    submodules: &[SourceArchive],
    dest: &Path,
) -> Result<ct2v_fetch::assemble::Assembly> {
    use ct2v_fetch::assemble::{Part, Submodule};
    let part = |a: &SourceArchive| -> Result<Part> {
        let input = plan
            .inputs
            .iter()
            .find(|i| i.name == a.input)
            .with_context(|| format!("the plan lists no input `{}`", a.input))?;
        Ok(Part {
            input: a.input.clone(),
            file_name: input.file_name.clone(),
            url: input.url.clone(),
            archive: PathBuf::from(&a.archive),
            subdir: a.subdir.clone(),
            commit: a.commit.clone(),
        })
    };
    Ok(ct2v_fetch::assemble::Assembly {
        tag: part(tag)?,
        submodules: submodules
            .iter()
            .map(|s| {
                Ok(Submodule {
                    path: s.path.clone(),
                    part: part(s)?,
                })
            })
            .collect::<Result<_>>()?,
        dest: dest.to_path_buf(),
    })
}

/// The prefix of the plan's last install step (CTranslate2's), where the SDK record is.
fn recorded_sdk_prefix(plan: &Plan) -> Option<PathBuf> {
    plan.steps
        .iter()
        .rev()
        .find(|s| matches!(s.action, Action::Install { .. }))
        .and_then(|s| s.outputs.first())
        .map(PathBuf::from)
}

/// Where the plan unpacks or assembles CTranslate2's source, if it does.
fn source_tree(plan: &Plan) -> Option<PathBuf> {
    plan.find_action(|a| match a {
        Action::AssembleSource { dest, .. } => Some(PathBuf::from(dest)),
        Action::Unpack { input, dest, .. } if input == crate::plan::SOURCE_INPUT => {
            Some(PathBuf::from(dest))
        }
        _ => None,
    })
}

/// The patches a plan applies to the tree unpacked at `dest`, if it patches that tree.
fn patched_tree_series(plan: &Plan, dest: &str) -> Option<Vec<PathBuf>> {
    plan.find_action(|a| match a {
        Action::Patch { patches, tree, .. } if tree == dest => {
            Some(patches.iter().map(PathBuf::from).collect())
        }
        _ => None,
    })
}

/// On Unix only: pip's in-tree build is stood in for by `mkdir -p`, which a Windows host (or
/// wine) does not have.
#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::plan::CommandLine;
    use ct2v_support::owned_output::{self, Claim, RECORD};
    use std::fs;

    /// A run that stops before the bundle (the native job) leaves out the unpack of each
    /// device wheel, and only those; a run that goes on unpacks them.
    #[test]
    fn a_run_before_the_bundle_leaves_device_wheels_out() {
        let unpack = |input: &str| {
            let action = Action::Unpack {
                input: input.into(),
                archive: String::new(),
                subdir: None,
                dest: String::new(),
                expect: vec![],
            };
            step("unpack", action, vec![])
        };
        let plan = Plan::of_steps(vec![]);
        let mut runner = Runner {
            cache: Cache::new("cache"),
            download: download::Options::default(),
            folders: bundle_job::Folders::default(),
            sdk: SdkEnv::default(),
            msvc: None,
            prebuilt_native: false,
            skip_device_wheels: true,
            reporter: Reporter::captured(),
        };
        let why = runner.cannot_run(&plan, &unpack("device-gfx1030")).unwrap();
        assert!(
            why.contains("only the bundle reads a device wheel"),
            "{why}"
        );
        for other in ["rocm-sdk-core", "rocm-sdk-libraries", "onednn"] {
            assert!(
                runner.cannot_run(&plan, &unpack(other)).is_none(),
                "{other}"
            );
        }
        runner.skip_device_wheels = false;
        assert!(
            runner
                .cannot_run(&plan, &unpack("device-gfx1030"))
                .is_none()
        );
    }

    fn step(id: &'static str, action: Action, commands: Vec<CommandLine>) -> Step {
        Step {
            id: id.into(),
            action,
            description: String::new(),
            after: vec![],
            inputs: vec![],
            commands,
            env: BTreeMap::new(),
            outputs: vec![],
            fingerprint: String::new(),
        }
    }

    /// A folder this tool wrote and recorded, at `dir/name`.
    fn recorded(dir: &Path, name: &str) -> PathBuf {
        let tree = dir.join(name);
        fs::create_dir_all(tree.join("python")).unwrap();
        fs::write(tree.join("python/setup.py"), "x").unwrap();
        owned_output::record(&tree, &tree).unwrap();
        tree
    }

    /// The steps that write into a recorded folder (the patch series and pip's in-tree build
    /// into the source tree, the checksums into the bundle's output) record it again, so that
    /// the next unpack or bundle may replace it.
    #[test]
    fn steps_writing_into_a_recorded_folder_record_it_again() {
        let dir = tempfile::tempdir().unwrap();
        let src = recorded(dir.path(), "src");
        let dist = recorded(dir.path(), "dist");
        let shown = |p: &Path| p.display().to_string();
        let pip_build = shown(&src.join("python/build"));
        let plan = Plan::of_steps(vec![
            step(
                "unpack-ctranslate2-source",
                Action::Unpack {
                    input: crate::plan::SOURCE_INPUT.into(),
                    archive: String::new(),
                    subdir: None,
                    dest: shown(&src),
                    expect: vec![],
                },
                vec![],
            ),
            step(
                "patch",
                Action::Patch {
                    series: String::new(),
                    patches: vec![],
                    tree: shown(&src),
                },
                vec![],
            ),
            step(
                "wheel",
                Action::Wheel,
                vec![CommandLine::new("mkdir").args(["-p", &pip_build])],
            ),
            step(
                "checksum",
                Action::Checksum {
                    dir: shown(&dist),
                    file: "SHA256SUMS".into(),
                },
                vec![],
            ),
        ]);
        let mut runner = Runner {
            cache: Cache::new(dir.path().join("cache")),
            download: download::Options::default(),
            folders: bundle_job::Folders::default(),
            sdk: SdkEnv::default(),
            msvc: None,
            prebuilt_native: false,
            skip_device_wheels: false,
            reporter: Reporter::captured(),
        };
        let log = dir.path().join("log");
        for step in &plan.steps[1..] {
            runner.run(&plan, step, &log).unwrap();
        }
        assert!(Path::new(&pip_build).is_dir() && dist.join("SHA256SUMS").is_file());
        for folder in [&src, &dist] {
            let claim = owned_output::claim("", folder).unwrap();
            assert!(matches!(claim, Claim::Ours(_)), "{}", folder.display());
        }
        let sums = fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
        assert!(
            sums.contains("build-info.json") && !sums.contains(RECORD),
            "{sums}"
        );
    }
    /// A CUDA build checks its wheel's CUDA code before it writes SHA256SUMS and
    /// build-info.json (which then names the list); a wheel without a listed target stops it.
    #[test]
    fn a_cuda_build_holds_its_wheel_to_the_list_before_the_checksums() {
        let dir = tempfile::tempdir().unwrap();
        for (list, good) in [("7.5;8.9;12.0+PTX", true), ("7.5;8.6;8.9;12.0+PTX", false)] {
            let dist = recorded(dir.path(), if good { "good" } else { "bad" });
            let wheel = crate::sdk::cuda_code::fixture::wheel_with(
                &dist,
                crate::sdk::cuda_code::fixture::TINY,
            );
            let mut plan = Plan::of_steps(vec![step(
                "checksum",
                Action::Checksum {
                    dir: dist.display().to_string(),
                    file: "SHA256SUMS".into(),
                },
                vec![],
            )]);
            plan.outputs.fat_wheel = wheel.display().to_string();
            let mut runner = Runner {
                cache: Cache::new(dir.path().join("cache")),
                download: download::Options::default(),
                folders: bundle_job::Folders::default(),
                sdk: SdkEnv {
                    found: Some(crate::sdk::Found {
                        root: dir.path().join("cuda"),
                        version: "13.0".into(),
                        how: "test".into(),
                    }),
                    cuda_arch: Some(list.into()),
                    before_bundle: false,
                },
                msvc: None,
                prebuilt_native: false,
                skip_device_wheels: false,
                reporter: Reporter::captured(),
            };
            let ran = runner.run(&plan, &plan.steps[0], &dir.path().join("log"));
            if good {
                ran.unwrap();
                let info = fs::read_to_string(dist.join("build-info.json")).unwrap();
                let info: serde_json::Value = serde_json::from_str(&info).unwrap();
                assert_eq!(info["sdk"]["cuda_arch_list"], list);
                assert!(dist.join("SHA256SUMS").is_file());
            } else {
                let err = ran.unwrap_err().to_string();
                assert!(err.contains("it lacks sm_86"), "{err}");
                assert!(
                    !dist.join("SHA256SUMS").exists() && !dist.join("build-info.json").exists()
                );
            }
        }
    }
}
