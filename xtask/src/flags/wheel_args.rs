//! `bundle`'s flags for a wheel bundled with explicit folders (`--wheel`), and the ones both
//! of its ways take (`--assume-present`, `--gpu-targets`, `--out`).

use std::path::PathBuf;

use clap::Args;

use ct2v_bundle::bundler::job::WheelFlags;
use ct2v_bundle::bundler::{Output, Policy};
use ct2v_pipeline::commands::bundle::{BundleRequest, BundleSource};

#[derive(Args)]
pub struct WheelArgs {
    /// The wheel to bundle for
    #[arg(long, value_name = "WHEEL", requires = "out")]
    pub wheel: Option<PathBuf>,
    /// A folder to find libraries in, in order; `=DEST` places its libraries in that folder of
    /// the wheel (default: the folder of the first --binary) (repeatable)
    #[arg(long = "search", value_name = "DIR[=DEST]", requires = "wheel")]
    pub search: Vec<String>,
    /// Root binaries whose imports are followed, `folder/pattern` inside the wheel (repeatable;
    /// default: every PE/ELF file in the wheel)
    #[arg(long = "binary", value_name = "GLOB", requires = "wheel")]
    pub roots: Vec<String>,
    /// A library loaded at run time (file-name glob, e.g. 'amd_comgr*.dll') (repeatable)
    #[arg(long = "force", value_name = "GLOB", requires = "wheel")]
    pub force: Vec<String>,
    /// A library the target system provides and that is never bundled (file-name glob)
    #[arg(long = "assume-present", value_name = "GLOB")]
    pub assume_present: Vec<String>,
    /// Data files, `DIR/PATTERN=DEST`, filtered by --gpu-targets when given (repeatable)
    #[arg(long = "data", value_name = "DIR/PATTERN=DEST", requires = "wheel")]
    pub data: Vec<String>,
    /// GPU targets whose data files are kept, e.g. gfx1010
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub gpu_targets: Option<Vec<String>>,
    /// System libraries that are never bundled (default: from the wheel's platform tag)
    #[arg(long, value_name = "POLICY", requires = "wheel")]
    pub policy: Option<PolicyArg>,
    /// What to write (repeatable; default: all three)
    #[arg(long = "output", value_name = "KIND", requires = "wheel")]
    pub outputs: Vec<OutputArg>,
    /// The output folder (replaced as a whole); with --variant it defaults to the plan's
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Linux, with --wheel: when the binaries do not prove the manylinux tag (symbol versions
    /// newer than the policy allows), write the wheel as `linux_x86_64` instead of stopping;
    /// for this machine only: PyPI refuses it, and `release` too unless --allow-linux-tag
    #[arg(long, requires = "wheel")]
    pub keep_linux_tag: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum PolicyArg {
    #[value(name = "windows")]
    Windows,
    #[value(name = "manylinux_2_28")]
    Manylinux2_28,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OutputArg {
    FatWheel,
    Portable,
    Report,
}

impl WheelArgs {
    /// The bundle these flags ask for: of `plan` (`--variant`), else of the wheel they name.
    pub fn request(self, plan: Option<BundleSource>) -> BundleRequest {
        let source = plan.unwrap_or_else(|| BundleSource::Wheel(Box::new(self.flags())));
        BundleRequest {
            source,
            assume_present: self.assume_present,
            out: self.out,
        }
    }

    /// The flags of `bundle --wheel`, for the library to check.
    pub fn flags(&self) -> WheelFlags {
        WheelFlags {
            wheel: self
                .wheel
                .clone()
                .expect("clap requires --wheel without --variant"),
            policy: self.policy.map(|p| match p {
                PolicyArg::Windows => Policy::Windows,
                PolicyArg::Manylinux2_28 => Policy::Manylinux2_28,
            }),
            roots: self.roots.clone(),
            force: self.force.clone(),
            search: self.search.clone(),
            data: self.data.clone(),
            gpu_targets: self.gpu_targets.clone(),
            outputs: self
                .outputs
                .iter()
                .map(|o| match o {
                    OutputArg::FatWheel => Output::FatWheel,
                    OutputArg::Portable => Output::Portable,
                    OutputArg::Report => Output::Report,
                })
                .collect(),
            out: self.out.clone().expect("clap requires --out with --wheel"),
            keep_linux_tag: self.keep_linux_tag,
        }
    }
}
