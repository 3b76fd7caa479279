//! `doctor`: what this machine has for GPU acceleration and which variant fits it; with
//! `--variant`, what that build needs here.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{PlatformArg, checked};
use ct2v_pipeline::commands::doctor::{BuildCheck, DoctorRequest};
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_support::report::Reporter;
use ct2v_support::workspace::Workspace;
use ct2v_support::{host, text_rules};

#[derive(Args)]
pub struct Doctor {
    /// Print the facts and the verdict as JSON
    #[arg(long)]
    pub json: bool,
    /// Check only what building this variant needs on this machine
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// With --variant: the platform (default: this host)
    #[arg(long, value_name = "PLATFORM", requires = "variant")]
    pub platform: Option<PlatformArg>,
    /// With --variant: the Python version (default: the host's python3)
    #[arg(long, value_name = "X.Y", requires = "variant")]
    pub python: Option<String>,
    /// With --variant: the CTranslate2 version
    #[arg(long, value_name = "VERSION", requires = "variant", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// With --variant: the GPU SDK on disk to check instead of searching for one
    #[arg(long, value_name = "DIR", requires = "variant")]
    pub sdk_dir: Option<PathBuf>,
    /// With --variant: the C++ library comes from another run (`build --prebuilt-native`):
    /// no SDK is needed here unless the bundle copies files from it
    #[arg(long, requires = "variant")]
    pub prebuilt_native: bool,
    /// The Python environment's site-packages whose installed ROCm 10 family wheel to
    /// examine: which HIP runtime `import ctranslate2` loads (Windows), its own or the
    /// display driver's
    #[arg(long, value_name = "DIR", conflicts_with = "variant")]
    pub site_packages: Option<PathBuf>,
}

impl Doctor {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        DoctorRequest {
            json: self.json,
            build: self.variant.map(|variant| BuildCheck {
                plan: PlanRequest {
                    variant,
                    platform: self.platform.map(Into::into),
                    python: self.python,
                    ctranslate2: self.ctranslate2,
                    sdk_dir: self.sdk_dir,
                    compiler_cache: host::compiler_cache(),
                    ..PlanRequest::default()
                },
                prebuilt_native: self.prebuilt_native,
            }),
            site_packages: self.site_packages,
        }
        .run(workspace, reporter)
    }
}
