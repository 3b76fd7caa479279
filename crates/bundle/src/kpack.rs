//! TheRock's kernel archives (`.kpack/<artifact>_<component>_<target>.kpack`) and the host
//! libraries whose device code each holds, as data: a bundle takes the archives of the
//! libraries its closure loads, and only those (a ROCm 10 device wheel also carries MIOpen's,
//! rocFFT's, rocRAND's, RCCL's… which CTranslate2 never loads).
//!
//! Sources, ROCm/TheRock branch `release/therock-10.0` @16adc4d (the branch, not main):
//! - the archive name: `build_tools/_therock_utils/artifact_builder.py` L281-285
//!   (`.kpack/{artifact}_{component}_*.kpack`, `.kpack/{artifact}_{component}.kpm`), and the
//!   split run with `--artifact-prefix <artifact>_<component>`
//!   (`cmake/therock_artifacts.cmake` L238-280);
//! - which artifacts a device wheel takes: `build_tools/build_python_packages.py`
//!   `device_artifact_filter` L586-613; of those, only target-specific ones are split per
//!   target (`BUILD_TOPOLOGY.toml` L588-719: hipdnn, miopenprovider and hipblasltprovider are
//!   target-neutral, so they have no per-target archive);
//! - which libraries an artifact holds: `math-libs/BLAS/artifact-blas.toml` (`lib` components
//!   of hipBLAS-common, rocRoller, origami, hipBLAS, hipBLASLt, rocBLAS, rocSOLVER, hipSOLVER,
//!   rocSPARSE, hipSPARSE, hipSPARSELt), `math-libs/CMakeLists.txt` L53-100 (rand: rocRAND,
//!   hipRAND), L322-372 (fft: rocFFT, hipFFT), `ml-libs/CMakeLists.txt` L74-82 (miopen),
//!   L340-348 (hipkernelprovider), `comm-libs/CMakeLists.txt` L106-116 (rccl).
//!
//! The host library loads its archive by a path relative to itself
//! (`../.kpack/<artifact>_<component>_@GFXARCH@.kpack`, ROCm/rocm-systems
//! `shared/kpack/runtime/src/loader.cpp`): an archive no bundled library names is never read.

/// `(artifact, libraries)`: the library names are file names without `lib`, version and
/// extension, lower case ([`library_stem`]).
pub const ARTIFACTS: &[(&str, &[&str])] = &[
    (
        "blas",
        &[
            "hipblas-common",
            "rocroller",
            "origami",
            "hipblas",
            "hipblaslt",
            "rocblas",
            "rocsolver",
            "hipsolver",
            "rocsparse",
            "hipsparse",
            "hipsparselt",
        ],
    ),
    ("fft", &["rocfft", "hipfft"]),
    ("rand", &["rocrand", "hiprand"]),
    ("miopen", &["miopen"]),
    ("rccl", &["rccl"]),
    // hipDNN's kernel provider plugin (its file name is not read from a real wheel).
    ("hipkernelprovider", &["hipkernelprovider"]),
];

/// `rocblas` for `rocblas.dll`, `librocblas.so.5`, `libhipblaslt.dll` → `hipblaslt`,
/// `MIOpen.dll` → `miopen`: lower case, without a `lib` prefix, the extension and what
/// follows it, and a trailing version (`amdhip64_7` → `amdhip64`).
pub fn library_stem(file_name: &str) -> String {
    let lower = file_name.to_ascii_lowercase();
    let base = match (lower.find(".so"), lower.rfind('.')) {
        (Some(at), _) => &lower[..at],
        (None, Some(at)) => &lower[..at],
        (None, None) => &lower[..],
    };
    let base = base.strip_prefix("lib").unwrap_or(base);
    let trimmed = match base.rsplit_once(['_', '-']) {
        Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => base,
    };
    trimmed.to_string()
}

/// The artifact of an archive or manifest name (`blas_lib_gfx1100.kpack`, `blas_lib.kpm` →
/// `blas`); `None` for a name that is neither.
pub fn artifact_of(name: &str) -> Option<&str> {
    if !(name.ends_with(".kpack") || name.ends_with(".kpm")) {
        return None;
    }
    name.split_once('_').map(|(artifact, _)| artifact)
}

/// Whether the archive `name` holds device code of a library in `closure` (library file
/// names). An archive of an artifact [`ARTIFACTS`] does not list is an error naming it: it
/// may hold code a bundled library needs, and guessing either way is wrong.
pub fn needed(name: &str, closure: &[String]) -> Result<bool, String> {
    let Some(artifact) = artifact_of(name) else {
        return Err(format!(
            "{name} is not a TheRock kernel archive (`<artifact>_<component>_<target>.kpack` \
             or `<artifact>_<component>.kpm`), in a data entry that takes the archives of the \
             closure's libraries"
        ));
    };
    let Some((_, libraries)) = ARTIFACTS.iter().find(|(a, _)| *a == artifact) else {
        let known: Vec<&str> = ARTIFACTS.iter().map(|(a, _)| *a).collect();
        return Err(format!(
            "{name} is the kernel archive of artifact `{artifact}`, which crates/bundle/src/kpack.rs \
             ARTIFACTS does not map to libraries (it knows {}): add the libraries that artifact \
             holds, from TheRock's artifact files, so the bundle knows whether the closure needs it",
            known.join(", ")
        ));
    };
    // Manifests are never read by the loader (rocm-systems loader.cpp resolves the archive
    // path embedded in the host library): left out.
    if name.ends_with(".kpm") {
        return Ok(false);
    }
    Ok(closure
        .iter()
        .any(|file| libraries.contains(&library_stem(file).as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_of_windows_and_linux_names() {
        for (file, stem) in [
            ("rocblas.dll", "rocblas"),
            ("librocblas.so.5", "rocblas"),
            ("libhipblaslt.dll", "hipblaslt"),
            ("libhipblaslt.so.1", "hipblaslt"),
            ("MIOpen.dll", "miopen"),
            ("libMIOpen.so.1", "miopen"),
            ("amdhip64_7.dll", "amdhip64"),
            ("librccl.so.1", "rccl"),
            ("hipfft.dll", "hipfft"),
        ] {
            assert_eq!(library_stem(file), stem, "{file}");
        }
    }

    #[test]
    fn only_the_closures_archives_are_needed() {
        let closure: Vec<String> = ["amdhip64_7.dll", "hipblas.dll", "rocblas.dll"]
            .map(String::from)
            .to_vec();
        assert_eq!(needed("blas_lib_gfx1100.kpack", &closure), Ok(true));
        for other in [
            "fft_lib_gfx1100.kpack",
            "rand_lib_gfx1100.kpack",
            "miopen_lib_gfx1100.kpack",
            "rccl_lib_gfx1100.kpack",
            "hipkernelprovider_lib_gfx1100.kpack",
            "blas_lib.kpm",
        ] {
            assert_eq!(needed(other, &closure), Ok(false), "{other}");
        }
        let linux: Vec<String> = ["librocfft.so.0".to_string()].to_vec();
        assert_eq!(needed("fft_lib_gfx1030.kpack", &linux), Ok(true));
        let unknown = needed("tensile_lib_gfx1100.kpack", &closure).unwrap_err();
        assert!(unknown.contains("artifact `tensile`"), "{unknown}");
        assert!(unknown.contains("ARTIFACTS"), "{unknown}");
        assert!(needed("notes.txt", &closure).is_err());
    }
}
