//! The provenance report: every bundled file, the package that provided it, its size and
//! sha256, why it is there, and the bytes saved against shipping the whole SDK.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use anyhow::Context;
use serde::Serialize;

use super::analyze::BundleAnalysis;
use super::job::BundleJob;
use super::layout::Placed;
use super::repair::Repaired;
use super::runpath::DroppedSearchPath;
use ct2v_support::diagnostic::escaped;
use ct2v_support::units::human_size;

pub const SCHEMA_VERSION: u32 = ct2v_support::contracts::PROVENANCE;

#[derive(Debug, Serialize)]
pub struct ProvenanceReport {
    pub schema_version: u32,
    pub variant: String,
    pub platform: String,
    pub files: Vec<ProvenanceEntry>,
    /// System libraries the binaries import, which are never bundled.
    pub system: Vec<String>,
    /// Libraries the binaries import that the maintainer declared present on the target
    /// system (`--assume-present`, e.g. the VC++ runtime): not bundled.
    pub assumed_present: Vec<String>,
    pub bundled_bytes: u64,
    /// Everything in the SDK packages the files were taken from.
    pub sdk_bytes: u64,
    pub(crate) saved_bytes: u64,
    /// Linux: the platform tag the fat wheel got and what the binaries prove.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_tag: Option<super::manylinux::Tagging>,
    /// Kernel data bundled per GPU target (rocBLAS / hipBLASLt `library/`), in bytes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub kernel_bytes: BTreeMap<String, u64>,
    /// Bytes bundled per library ([`library_of`]): a host library with its kernel archive's
    /// artifact and Tensile files beside it, so a family's size reads by what costs it.
    pub library_bytes: BTreeMap<String, u64>,
    /// Linux: search paths the bundled binaries brought that lead outside the wheel (into
    /// another package beside it, or the build machine), dropped from their RUNPATH.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_search_paths: Vec<DroppedSearchPath>,
}

/// What a bundled file is counted under in [`ProvenanceReport::library_bytes`]: a TheRock
/// kernel archive under its artifact (`blas (.kpack)`), a Tensile file under its library
/// (`rocblas (Tensile)`), any other file under its library's stem (`rocblas`).
pub fn library_of(path: &str) -> String {
    let name = ct2v_support::paths::last_segment(path);
    let folders: Vec<&str> = path.split('/').collect();
    if folders.contains(&".kpack")
        && let Some(artifact) = crate::kpack::artifact_of(name)
    {
        return format!("{artifact} (.kpack)");
    }
    if let Some(at) = folders.iter().position(|f| *f == "library")
        && at > 0
    {
        return format!("{} (Tensile)", folders[at - 1].to_ascii_lowercase());
    }
    crate::kpack::library_stem(name)
}

#[derive(Debug, Serialize)]
pub struct ProvenanceEntry {
    pub path: String,
    pub package: String,
    pub size: u64,
    pub sha256: String,
    pub reason: String,
}

impl ProvenanceReport {
    pub fn new(
        variant: &str,
        platform: &str,
        placed: &[Placed],
        system: Vec<String>,
        sdk_bytes: u64,
        hash: &dyn Fn(&Path) -> std::io::Result<(String, u64)>,
    ) -> std::io::Result<ProvenanceReport> {
        let mut files = Vec::new();
        for p in placed {
            let (sha256, size) = hash(&p.source)?;
            files.push(ProvenanceEntry {
                path: p.path_in_wheel(),
                package: p.package.clone(),
                size,
                sha256,
                reason: p.reason.clone(),
            });
        }
        let bundled_bytes = files.iter().map(|f| f.size).sum();
        let mut library_bytes: BTreeMap<String, u64> = BTreeMap::new();
        for f in &files {
            *library_bytes.entry(library_of(&f.path)).or_default() += f.size;
        }
        Ok(ProvenanceReport {
            schema_version: SCHEMA_VERSION,
            variant: variant.to_string(),
            platform: platform.to_string(),
            files,
            system,
            assumed_present: Vec::new(),
            bundled_bytes,
            sdk_bytes,
            saved_bytes: sdk_bytes.saturating_sub(bundled_bytes),
            platform_tag: None,
            kernel_bytes: BTreeMap::new(),
            library_bytes,
            dropped_search_paths: Vec::new(),
        })
    }

    /// The report of a bundle run: the placed files as shipped in `tree` (RUNPATHs may have
    /// been rewritten), hashed.
    pub(crate) fn of_bundle(
        spec: &BundleJob,
        analysis: &BundleAnalysis,
        repaired: &Repaired,
        tree: &Path,
    ) -> anyhow::Result<ProvenanceReport> {
        let shipped: Vec<Placed> = analysis
            .placed
            .iter()
            .map(|p| Placed {
                source: tree.join(p.path_in_wheel()),
                ..p.clone()
            })
            .collect();
        let mut report = ProvenanceReport::new(
            &spec.variant,
            &spec.platform,
            &shipped,
            analysis.system.clone(),
            analysis.sdk_bytes,
            &ct2v_fetch::cache::sha256_file,
        )
        .context("cannot hash the bundled files")?;
        report.assumed_present = analysis.assumed_present.clone();
        report.platform_tag = repaired.platform_tag.clone();
        report.kernel_bytes = analysis.kernel_bytes.clone();
        report.dropped_search_paths = repaired.dropped_search_paths.clone();
        Ok(report)
    }

    fn totals(&self) -> String {
        // Files from a build prefix or the compiler's runtime count as bundled but are not
        // in the SDK packages, so "out of" holds only when the SDK packages are the larger.
        if self.bundled_bytes > self.sdk_bytes && self.sdk_bytes > 0 {
            return format!(
                "{} files, {} bundled (the SDK packages searched hold {}; the rest comes from \
                 the build or the compiler's runtime).",
                self.files.len(),
                human_size(self.bundled_bytes),
                human_size(self.sdk_bytes)
            );
        }
        if self.sdk_bytes == 0 {
            return format!(
                "{} files, {} bundled (none from an SDK package).",
                self.files.len(),
                human_size(self.bundled_bytes)
            );
        }
        format!(
            "{} files, {} bundled out of {} in the SDK packages: {} saved.",
            self.files.len(),
            human_size(self.bundled_bytes),
            human_size(self.sdk_bytes),
            human_size(self.saved_bytes)
        )
    }

    /// The terminal view: one line per file, then the totals.
    pub fn summary(&self) -> String {
        let width = self.files.iter().map(|f| f.path.len()).max().unwrap_or(0);
        let mut out = String::new();
        for f in &self.files {
            let _ = writeln!(
                out,
                "{:<width$}  {:>9}  {}  <- {}",
                f.path,
                human_size(f.size),
                f.package,
                f.reason
            );
        }
        let _ = writeln!(out, "{}", self.totals());
        if let Some(line) = self.tag_line() {
            let _ = writeln!(out, "{line}");
        }
        if let Some(kernels) = self.kernels() {
            let _ = writeln!(out, "{kernels}");
        }
        if let Some(libraries) = self.by_library() {
            let _ = writeln!(out, "{libraries}");
        }
        if let Some(dropped) = self.dropped() {
            let _ = writeln!(out, "{dropped}");
        }
        out
    }

    /// The search paths dropped, in one sentence, each escaped as every name printed is.
    fn dropped(&self) -> Option<String> {
        let each: Vec<String> = self
            .dropped_search_paths
            .iter()
            .map(|d| format!("{} ({})", escaped(&d.entry), escaped(&d.file)))
            .collect();
        (!each.is_empty()).then(|| {
            format!(
                "Search paths dropped, leading outside the wheel: {}.",
                each.join(", ")
            )
        })
    }

    fn tag_line(&self) -> Option<String> {
        let t = self.platform_tag.as_ref()?;
        let mut line = format!(
            "Platform tag: {} (the binaries prove {}: the oldest manylinux whose glibc, \
             libstdc++ and libgcc have every symbol version their ELF files need, as \
             `auditwheel show` computes it",
            t.tag,
            t.proven.as_deref().unwrap_or("no manylinux tag")
        );
        if !t.excluded.is_empty() {
            line.push_str(&format!(
                ", leaving out {} as provided by the system",
                t.excluded.join(", ")
            ));
        }
        line.push_str(").");
        Some(line)
    }

    fn by_library(&self) -> Option<String> {
        let mut rows: Vec<(&String, &u64)> = self.library_bytes.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let rows: Vec<String> = rows
            .iter()
            .map(|(l, b)| format!("{l} {}", human_size(**b)))
            .collect();
        (!rows.is_empty()).then(|| format!("Size by library: {}.", rows.join(", ")))
    }

    fn kernels(&self) -> Option<String> {
        let per_target: Vec<String> = self
            .kernel_bytes
            .iter()
            .map(|(t, b)| format!("{t} {}", human_size(*b)))
            .collect();
        (!per_target.is_empty())
            .then(|| format!("Kernel data per GPU target: {}.", per_target.join(", ")))
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# Bundled libraries: {} ({})\n",
            self.variant, self.platform
        );
        let _ = writeln!(out, "{}\n", self.totals());
        if let Some(line) = self.tag_line() {
            let _ = writeln!(out, "{line}\n");
        }
        if let Some(kernels) = self.kernels() {
            let _ = writeln!(out, "{kernels}\n");
        }
        if let Some(libraries) = self.by_library() {
            let _ = writeln!(out, "{libraries}\n");
        }
        if let Some(dropped) = self.dropped() {
            let _ = writeln!(out, "{dropped}\n");
        }
        let _ = writeln!(out, "| file | package | size | sha256 | needed by |");
        let _ = writeln!(out, "|---|---|---:|---|---|");
        for f in &self.files {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | `{}…` | {} |",
                f.path,
                f.package,
                human_size(f.size),
                &f.sha256[..16.min(f.sha256.len())],
                f.reason
            );
        }
        if !self.system.is_empty() {
            let _ = writeln!(
                out,
                "\nProvided by the operating system, not bundled: {}",
                self.system.join(", ")
            );
        }
        if !self.assumed_present.is_empty() {
            let _ = writeln!(
                out,
                "\nAssumed present on the target system, not bundled: {}",
                self.assumed_present.join(", ")
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn totals_and_markdown() {
        let placed = vec![Placed {
            source: PathBuf::from("/sdk/amdhip64_7.dll"),
            dest: "_rocm_sdk_core/bin".into(),
            name: "amdhip64_7.dll".into(),
            reason: "ctranslate2.dll".into(),
            package: "rocm_sdk_core 7.2.0.dev0".into(),
        }];
        let hash = |_: &Path| Ok(("ab".repeat(32), 1024));
        let report = ProvenanceReport::new(
            "rocm",
            "windows-x86_64",
            &placed,
            vec!["KERNEL32.dll".into()],
            4096,
            &hash,
        )
        .unwrap();
        assert_eq!((report.bundled_bytes, report.saved_bytes), (1024, 3072));
        let md = report.markdown();
        assert!(
            md.contains(
                "| `_rocm_sdk_core/bin/amdhip64_7.dll` | rocm_sdk_core 7.2.0.dev0 | 1.0 KiB |"
            ),
            "{md}"
        );
        assert!(md.contains("3.0 KiB saved"), "{md}");
        assert!(md.contains("Size by library: amdhip64 1.0 KiB."), "{md}");
    }

    #[test]
    fn files_count_under_their_library() {
        for (path, library) in [
            (
                "_rocm_sdk_libraries/.kpack/blas_lib_gfx1100.kpack",
                "blas (.kpack)",
            ),
            (
                "_rocm_sdk_libraries/bin/rocblas/library/TensileLibrary_lazy_gfx1100.dat",
                "rocblas (Tensile)",
            ),
            (
                "_rocm_sdk_libraries/lib/hipblaslt/library/gfx1150/x.co",
                "hipblaslt (Tensile)",
            ),
            ("_rocm_sdk_libraries/bin/rocblas.dll", "rocblas"),
            ("_rocm_sdk_libraries/lib/librocblas.so.5", "rocblas"),
            ("ctranslate2/libiomp5md.dll", "iomp5md"),
        ] {
            assert_eq!(library_of(path), library, "{path}");
        }
    }

    /// A search path dropped from a RUNPATH is named, with its file, in both views; a control
    /// character in it is shown escaped.
    #[test]
    fn dropped_search_paths_are_named_escaped() {
        let hash = |_: &Path| Ok(("ab".repeat(32), 1));
        let mut report =
            ProvenanceReport::new("rocm", "linux-x86_64", &[], vec![], 0, &hash).unwrap();
        assert!(!report.summary().contains("dropped"));
        report.dropped_search_paths = vec![DroppedSearchPath {
            file: "ctranslate2/_rocm/lib/libhsa-runtime64.so.1".into(),
            entry: "$ORIGIN/../../_rocm_sdk_core/lib\x1b[2J".into(),
        }];
        for text in [report.summary(), report.markdown()] {
            assert!(
                text.contains(
                    "Search paths dropped, leading outside the wheel: \
                     $ORIGIN/../../_rocm_sdk_core/lib\\u{1b}[2J \
                     (ctranslate2/_rocm/lib/libhsa-runtime64.so.1)."
                ),
                "{text}"
            );
            assert!(!text.contains('\x1b'), "{text}");
        }
    }

    /// Never "37.1 KiB bundled out of 29.9 KiB".
    #[test]
    fn totals_never_say_more_bundled_than_there_was() {
        let placed = vec![Placed {
            source: PathBuf::from("/prefix/libctranslate2.so"),
            dest: "ctranslate2".into(),
            name: "libctranslate2.so".into(),
            reason: "_ext.so".into(),
            package: "the build".into(),
        }];
        let hash = |_: &Path| Ok(("ab".repeat(32), 38_000));
        let report =
            ProvenanceReport::new("cpu", "linux-x86_64", &placed, vec![], 30_600, &hash).unwrap();
        let text = report.summary();
        assert!(!text.contains("out of"), "{text}");
        assert!(text.contains("37.1 KiB bundled"), "{text}");
    }
}
