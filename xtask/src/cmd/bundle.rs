//! `bundle`: the SDK libraries a wheel's binaries load: fat wheel, portable folder, report.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::flags::{PlatformArg, WheelArgs, checked};
use ct2v_pipeline::commands::bundle::BundleSource;
use ct2v_pipeline::plan::request::PlanRequest;
use ct2v_support::report::Reporter;
use ct2v_support::{text_rules, workspace::Workspace};

#[derive(Args)]
pub struct Bundle {
    /// Bundle for this variant's plan (the wheel and folders a build left under target/xtask)
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "wheel",
        required_unless_present = "wheel"
    )]
    pub variant: Option<String>,
    /// With --variant: the platform (default: this host)
    #[arg(long, value_name = "PLATFORM", requires = "variant")]
    pub platform: Option<PlatformArg>,
    /// With --variant: the Python version
    #[arg(long, value_name = "X.Y", requires = "variant")]
    pub python: Option<String>,
    /// With --variant: the CTranslate2 version (default: the variant's)
    #[arg(long, value_name = "VERSION", requires = "variant", value_parser = checked(text_rules::ctranslate2_version))]
    pub ctranslate2: Option<String>,
    /// With --variant: the GPU SDK on disk (as for `build --sdk-dir`; also $CT2V_SDK_DIR)
    #[arg(long, value_name = "DIR", visible_aliases = ["sdk-root", "rocm-path"], env = "CT2V_SDK_DIR")]
    pub sdk_dir: Option<PathBuf>,
    /// With --variant: the compiler runtime folder for `from = "toolchain"` sources
    #[arg(long, value_name = "DIR", requires = "variant")]
    pub toolchain_dir: Option<PathBuf>,
    #[command(flatten)]
    pub wheel: WheelArgs,
}

impl Bundle {
    pub fn run(self, workspace: &Workspace, reporter: &Reporter) -> Result<ExitCode> {
        let plan = self.variant.map(|variant| BundleSource::Plan {
            plan: Box::new(PlanRequest {
                platform: self.platform.map(Into::into),
                python: self.python,
                ctranslate2: self.ctranslate2,
                gpu_targets: self.wheel.gpu_targets.clone(),
                sdk_dir: self.sdk_dir,
                ..PlanRequest::only(variant)
            }),
            toolchain_dir: self.toolchain_dir,
        });
        self.wheel.request(plan).run(workspace, reporter)
    }
}
