//! Where a build leaves what it makes, named once: the plan computes an [`Outputs`] and the
//! executor (through the steps), `release` and the checks read it instead of deriving the
//! output folder and its file names again.

use ct2v_bundle::bundler::run::{BINARIES_JSON, PORTABLE_DIR, PORTABLE_INTERNAL, PYINSTALLER_HOOK};

use crate::variant::Output;

/// The checksum file the last step writes into the output folder.
pub(crate) const CHECKSUMS: &str = "SHA256SUMS";

/// The products of one variant × platform × Python build (absolute, `/`-separated).
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The output folder (`<work>/dist/py<python>`), replaced as a whole by the bundle step.
    pub dir: String,
    /// The wheel the bundle step starts from: pip's, or the one taken from upstream's archive.
    pub wheel: String,
    /// The bundled wheel, which the verify step installs.
    pub fat_wheel: String,
    /// The portable folder, where the variant asks for one.
    pub portable: Option<String>,
    /// `provenance.json` and `provenance.md`, where the variant asks for the report.
    pub report: Option<[String; 2]>,
    /// The checksum file of everything in `dir`.
    pub checksums: String,
}

impl Outputs {
    /// The outputs of a build whose bundle writes `produce` into `dir`, from `wheel`
    /// (bundled as `fat_wheel_name`).
    pub fn new(dir: String, wheel: String, fat_wheel_name: &str, produce: &[Output]) -> Outputs {
        Outputs {
            fat_wheel: format!("{dir}/{fat_wheel_name}"),
            portable: produce
                .contains(&Output::Portable)
                .then(|| format!("{dir}/{PORTABLE_DIR}")),
            report: produce.contains(&Output::Report).then(|| {
                [
                    format!("{dir}/provenance.json"),
                    format!("{dir}/provenance.md"),
                ]
            }),
            checksums: format!("{dir}/{CHECKSUMS}"),
            wheel,
            dir,
        }
    }

    /// What a successful build leaves, in the order of `produce`, then the checksums.
    pub fn artifacts(&self, produce: &[Output]) -> Vec<String> {
        let mut out = Vec::new();
        for output in produce {
            match output {
                Output::FatWheel => out.push(self.fat_wheel.clone()),
                Output::Portable => {
                    if let Some(portable) = &self.portable {
                        out.push(format!("{portable}/{PORTABLE_INTERNAL}"));
                        out.push(format!("{portable}/{BINARIES_JSON}"));
                        out.push(format!("{portable}/{PYINSTALLER_HOOK}"));
                    }
                }
                Output::Report => out.extend(self.report.iter().flatten().cloned()),
            }
        }
        out.push(self.checksums.clone());
        out
    }
}
