//! The CUDA code a built wheel carries, held against the `CUDA_ARCH_LIST` it was built with:
//! CTranslate2's library must carry a cubin for every entry and PTX for every `+PTX` one, and
//! nothing else (read from its fatbins by `ct2v_bundle::binary::fatbin`, as `cuobjdump
//! --list-elf --list-ptx` lists them).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Result, bail};

use ct2v_bundle::binary::fatbin::{CodeKind, CudaCode, parse_cuda_code};
use ct2v_support::diagnostic::{InputError, escaped};

/// The cubins and PTX a library built with `list` (numbers, as `cuda_arch::for_toolkit` returns them)
/// carries: a cubin for each entry and PTX for each `+PTX` one (CMake's
/// select_compute_arch.cmake and patch 0005 make `code=sm_XY` and `code=compute_XY` of them).
fn expected_code(list: &str) -> Result<BTreeSet<CudaCode>, String> {
    let (sass, ptx) = crate::variant::coverage::arch_list(list)?;
    // `arch_list` has read each entry with `cc`; sm_XY leaves the minor one digit.
    let number = |arch: &String| -> Result<u32, String> {
        match crate::variant::coverage::cc(arch) {
            Some((major, minor)) if minor < 10 => Ok(major * 10 + minor),
            _ => Err(format!("`{arch}` is not a compute capability")),
        }
    };
    let mut expected = BTreeSet::new();
    for (archs, kind) in [(&sass, CodeKind::Cubin), (&ptx, CodeKind::Ptx)] {
        for arch in archs {
            expected.insert(CudaCode {
                kind,
                arch: number(arch)?,
            });
        }
    }
    Ok(expected)
}

/// Whether `found` (every entry of a library's fatbins) is exactly what `list` builds: every
/// cubin and PTX of the list, and nothing else. `Err` names what is missing and what is extra.
pub fn check_code(found: &[CudaCode], list: &str) -> Result<(), String> {
    let expected = expected_code(list)?;
    let found: BTreeSet<CudaCode> = found.iter().copied().collect();
    let names = |codes: Vec<&CudaCode>| -> String {
        let names: Vec<String> = codes.iter().map(ToString::to_string).collect();
        names.join(", ")
    };
    let missing: Vec<&CudaCode> = expected.difference(&found).collect();
    let extra: Vec<&CudaCode> = found.difference(&expected).collect();
    let mut problems = Vec::new();
    if found.is_empty() {
        problems.push("it carries no CUDA code at all".to_string());
    } else if !missing.is_empty() {
        problems.push(format!("it lacks {}", names(missing)));
    }
    if !extra.is_empty() {
        problems.push(format!("it also carries {}", names(extra)));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "built for CUDA_ARCH_LIST `{list}`, {}",
        problems.join("; ")
    ))
}

/// CTranslate2's own library in a wheel: `libctranslate2.so.4` (or auditwheel's
/// `ctranslate2.libs/libctranslate2-<hash>.so.4.7.1`) on Linux, `ctranslate2.dll` on Windows.
fn is_ctranslate2_library(member: &str) -> bool {
    let file = member.rsplit('/').next().unwrap_or(member);
    (file.starts_with("libctranslate2") && file.contains(".so"))
        || file.eq_ignore_ascii_case("ctranslate2.dll")
}

/// Checks that the CTranslate2 library in `wheel` carries exactly what `list` builds; returns
/// a line saying what it carries. A library whose fatbins cannot be read is bad input (exit 2).
pub fn check_wheel(wheel: &Path, list: &str) -> Result<String> {
    if let Err(why) = expected_code(list) {
        // Names CMake resolves itself (`Turing`, `Auto`, `8.6(8.0)`) say no fixed set of code.
        return Ok(format!(
            "CUDA code not checked: CUDA_ARCH_LIST `{list}`: {why}"
        ));
    }
    let members = ct2v_bundle::wheel::read_members(wheel, is_ctranslate2_library)?;
    if members.is_empty() {
        bail!(
            "{} has no CTranslate2 library (libctranslate2*.so*, ctranslate2.dll) to check the \
             CUDA code of",
            escaped(&wheel.display().to_string())
        );
    }
    let mut carried = BTreeSet::new();
    for (name, data) in &members {
        let label = format!("{} ({name})", wheel.display());
        let code = parse_cuda_code(data, Path::new(&label)).map_err(|e| {
            InputError::new(e.to_string())
                .note("the wheel's CTranslate2 library is damaged: build the wheel again")
        })?;
        if let Err(problem) = check_code(&code, list) {
            bail!("{}: {problem}", escaped(&label));
        }
        carried.extend(code);
    }
    let names: Vec<String> = carried.iter().map(ToString::to_string).collect();
    Ok(format!(
        "CUDA code as CUDA_ARCH_LIST `{list}` says: {}",
        names.join(", ")
    ))
}

/// A wheel whose CTranslate2 library is the fatbin fixture (nvcc 13.0: sm_75, sm_89, sm_120
/// and compute_120 PTX), for the tests here and the build's.
#[cfg(test)]
pub(crate) mod fixture {
    use std::path::Path;

    pub(crate) const TINY: &[u8] =
        include_bytes!("../../../bundle/tests/data/fatbin/libtiny-plain.so");

    /// A wheel whose CTranslate2 library is `library`, made with the bundle's wheel writer.
    pub(crate) fn wheel_with(dir: &Path, library: &[u8]) -> std::path::PathBuf {
        let tree = dir.join("tree");
        let info = tree.join("ctranslate2-4.7.1.dist-info");
        std::fs::create_dir_all(tree.join("ctranslate2")).unwrap();
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(tree.join("ctranslate2/libctranslate2.so.4"), library).unwrap();
        std::fs::write(tree.join("ctranslate2/__init__.py"), "").unwrap();
        let metadata = "Metadata-Version: 2.1\nName: ctranslate2\nVersion: 4.7.1\n";
        std::fs::write(info.join("METADATA"), metadata).unwrap();
        let tags = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n";
        std::fs::write(info.join("WHEEL"), tags).unwrap();
        let wheel = dir.join("ctranslate2-4.7.1-cp312-cp312-linux_x86_64.whl");
        ct2v_bundle::wheel::write(&tree, &wheel).unwrap();
        wheel
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::{TINY, wheel_with};
    use super::*;
    use crate::sdk::cuda_arch::COMMON_CUDA_13;

    fn code(kind: CodeKind, arch: u32) -> CudaCode {
        CudaCode { kind, arch }
    }

    #[test]
    fn the_built_library_must_carry_exactly_the_list() {
        use CodeKind::{Cubin, Ptx};
        // The fatbin fixture's entries (crates/bundle/tests/data/fatbin): three fatbins.
        let mut tiny = Vec::new();
        for with_ptx in [false, true, true] {
            tiny.extend([code(Cubin, 75), code(Cubin, 89), code(Cubin, 120)]);
            if with_ptx {
                tiny.push(code(Ptx, 120));
            }
        }
        assert_eq!(check_code(&tiny, "7.5;8.9;12.0+PTX"), Ok(()));
        assert_eq!(check_code(&tiny, "7.5 8.9 12.0 12.0+PTX"), Ok(()));
        let err = check_code(&tiny, "7.5;8.6;8.9;12.0").unwrap_err();
        assert!(err.contains("lacks sm_86"), "{err}");
        assert!(err.contains("also carries compute_120 (PTX)"), "{err}");
        let ptx_only = [code(Ptx, 86)];
        let err = check_code(&ptx_only, COMMON_CUDA_13).unwrap_err();
        assert!(
            err.contains("lacks sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120"),
            "{err}"
        );
        let err = check_code(&[], "9.0").unwrap_err();
        assert!(err.contains("carries no CUDA code at all"), "{err}");
        let lto = [code(Cubin, 90), code(CodeKind::Other(4), 90)];
        assert!(
            check_code(&lto, "9.0")
                .unwrap_err()
                .contains("kind 4 for 90")
        );
    }

    #[test]
    fn the_library_is_found_in_linux_and_windows_wheels() {
        for member in [
            "ctranslate2/libctranslate2.so.4",
            "ctranslate2.libs/libctranslate2-0a1b2c3d.so.4.7.1",
            "ctranslate2/ctranslate2.dll",
        ] {
            assert!(is_ctranslate2_library(member), "{member}");
        }
        for member in [
            "ctranslate2/_ext.cpython-312-x86_64-linux-gnu.so",
            "ctranslate2/cudnn64_9.dll",
        ] {
            assert!(!is_ctranslate2_library(member), "{member}");
        }
    }
    #[test]
    fn a_wheel_is_held_against_its_list() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = wheel_with(dir.path(), TINY);
        let line = check_wheel(&wheel, "7.5;8.9;12.0+PTX").unwrap();
        assert!(
            line.ends_with("sm_75, sm_89, sm_120, compute_120 (PTX)"),
            "{line}"
        );
        let err = check_wheel(&wheel, COMMON_CUDA_13).unwrap_err();
        assert!(
            err.downcast_ref::<InputError>().is_none(),
            "a wrong list is no bad input"
        );
        let err = err.to_string();
        assert!(
            err.contains("libctranslate2.so.4): built for CUDA_ARCH_LIST"),
            "{err}"
        );
        assert!(err.contains("lacks sm_80, sm_86, sm_90, sm_100"), "{err}");
    }

    #[test]
    fn a_list_of_names_cmake_resolves_is_said_not_checked() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = wheel_with(dir.path(), TINY);
        for list in ["Turing", "Auto", "8.6(8.0)"] {
            let line = check_wheel(&wheel, list).unwrap();
            assert!(line.starts_with("CUDA code not checked"), "{line}");
        }
    }

    #[test]
    fn a_damaged_library_in_a_wheel_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = wheel_with(dir.path(), &TINY[..TINY.len() / 2]);
        let err = check_wheel(&wheel, "7.5;8.9;12.0+PTX").unwrap_err();
        let input = err.downcast_ref::<InputError>().expect("exit 2");
        assert!(input.message.contains("is not a valid ELF file"), "{input}");
        assert!(
            input.to_string().contains("build the wheel again"),
            "{input}"
        );
        let empty = tempfile::tempdir().unwrap();
        let no_library = wheel_with(empty.path(), b"");
        let err = check_wheel(&no_library, "9.0").unwrap_err().to_string();
        assert!(err.contains("is neither a PE nor an ELF"), "{err}");
    }
}
