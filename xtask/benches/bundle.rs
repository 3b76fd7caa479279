//! Bundle benchmark: the dependency closure of one DLL over a synthetic 1 GiB SDK folder.
//!
//! The SDK is 24 real DLLs built with mingw-w64 (an import chain of 8 that the root reaches,
//! and 16 decoys that import it but that nothing in it imports), each padded to 40-48 MiB
//! with appended zeros (data after the last section, which no PE reader looks at), plus
//! headers and import libraries. The root is a DLL in a wheel folder that imports the head
//! of the chain.
//!
//! Timed, best of 3 alternating rounds, page cache warm:
//! - `bundle::closure::resolve` reading imports with `binary::read` (memory-mapped headers);
//! - the same walk reading imports by running `objdump -p` on every file of the closure,
//!   the obvious alternative.
//!
//! Run with `cargo bench --bench bundle` (needs x86_64-w64-mingw32-gcc and objdump);
//! results are printed as Markdown for BENCHMARKS.md. The target is a closure under 1 s.

mod common;

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{best_of, print_header, row, run_quiet, seconds};
use ct2v_bundle::binary;
use ct2v_bundle::bundler::Policy;
use ct2v_bundle::bundler::closure::{self, Closure, ClosureParams, LibraryFolder};
use ct2v_bundle::bundler::policy::SystemLibraries;

const MIB: u64 = 1 << 20;
const GCC: &str = "x86_64-w64-mingw32-gcc";
/// Libraries the root reaches, each importing the next two.
const CHAIN: usize = 8;
/// Libraries nothing in the chain imports; each imports the next decoy and the chain's tail.
const DECOYS: usize = 16;

fn main() {
    if !installed(GCC) {
        eprintln!("skipping: {GCC} is not installed (apt-get install gcc-mingw-w64-x86-64)");
        return;
    }
    let objdump = ["x86_64-w64-mingw32-objdump", "objdump"]
        .into_iter()
        .find(|tool| installed(tool));
    let Some(objdump) = objdump else {
        eprintln!("skipping: no objdump (apt-get install binutils-mingw-w64-x86-64)");
        return;
    };
    let scratch = tempfile::Builder::new()
        .prefix("bench-bundle-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let started = Instant::now();
    let tree = build_tree(scratch.path());
    eprintln!(
        "built the synthetic SDK ({} files, {}) in {:.1} s",
        tree.files,
        mib(tree.sdk_bytes),
        started.elapsed().as_secs_f64()
    );

    let system = SystemLibraries::for_policy(Policy::Windows);
    let locations = [
        LibraryFolder {
            dir: tree.wheel_dir.clone(),
            dest: "ctranslate2".into(),
            package: "wheel".into(),
            in_wheel: true,
        },
        LibraryFolder {
            dir: tree.sdk_dir.clone(),
            dest: "ctranslate2".into(),
            package: "synthetic sdk 1.0".into(),
            in_wheel: false,
        },
    ];
    let inputs = ClosureParams {
        roots: vec![(tree.root.clone(), "ctranslate2".into())],
        forced: &[],
        locations: &locations,
        system: &system,
    };
    let ours = |path: &Path| -> Result<Vec<String>, String> {
        let info = binary::read(path).map_err(|e| e.to_string())?;
        let mut names = info.imports;
        names.extend(info.delay_imports);
        Ok(names)
    };
    let theirs = |path: &Path| objdump_imports(objdump, path);

    // Both readers must find the same closure before either is timed.
    let expected = closure::resolve(&inputs, &ours).unwrap();
    let alternative = closure::resolve(&inputs, &theirs).unwrap();
    assert_eq!(
        names(&expected),
        names(&alternative),
        "both find the same closure"
    );
    assert_eq!(
        expected.libraries.len(),
        CHAIN + 1,
        "the root and the chain, no decoy: {:?}",
        names(&expected)
    );

    let (ours_time, theirs_time) = best_of(
        || {
            closure::resolve(&inputs, &ours).unwrap();
        },
        || {
            closure::resolve(&inputs, &theirs).unwrap();
        },
    );
    let bundled: u64 = expected
        .libraries
        .iter()
        .filter(|l| !l.in_wheel)
        .map(|l| fs::metadata(&l.source).unwrap().len())
        .sum();

    print_header();
    row(
        &format!(
            "closure of 1 DLL over a {} SDK folder ({} files, {} DLLs; {} reached)",
            mib(tree.sdk_bytes),
            tree.files,
            CHAIN + DECOYS,
            expected.libraries.len() - 1,
        ),
        ours_time,
        &format!("`{objdump} -p` per file of the closure"),
        theirs_time,
    );
    println!(
        "| bundle size vs whole SDK folder | {} bundled | whole folder: {} | {:.1}% of it ({} saved) |",
        mib(bundled),
        mib(tree.sdk_bytes),
        100.0 * bundled as f64 / tree.sdk_bytes as f64,
        mib(tree.sdk_bytes - bundled)
    );
    println!();
    println!(
        "target: closure under 1 s: {} ({})",
        if ours_time < Duration::from_secs(1) {
            "met"
        } else {
            "MISSED"
        },
        seconds(ours_time)
    );
}

struct Tree {
    wheel_dir: PathBuf,
    sdk_dir: PathBuf,
    root: PathBuf,
    files: usize,
    sdk_bytes: u64,
}

/// `wheel/ctranslate2/ctranslate2.dll` importing `chain00.dll`; `sdk/bin/` with the chain,
/// the decoys, and non-binary files.
fn build_tree(dir: &Path) -> Tree {
    let build = dir.join("build");
    let sdk_dir = dir.join("sdk/bin");
    let wheel_dir = dir.join("wheel/ctranslate2");
    for d in [&build, &sdk_dir, &wheel_dir] {
        fs::create_dir_all(d).unwrap();
    }
    let chain = |i: usize| format!("chain{i:02}");
    let decoy = |i: usize| format!("decoy{i:02}");

    // Built in dependency order: the chain from its tail, then the decoys from theirs.
    let mut dlls: Vec<(String, Vec<String>)> = Vec::new();
    for i in (0..CHAIN).rev() {
        dlls.push((chain(i), (i + 1..(i + 3).min(CHAIN)).map(chain).collect()));
    }
    for i in (0..DECOYS).rev() {
        let mut imports = vec![chain(CHAIN - 1)];
        if i + 1 < DECOYS {
            imports.push(decoy(i + 1));
        }
        dlls.push((decoy(i), imports));
    }
    dlls.push(("ctranslate2".into(), vec![chain(0)]));

    let mut files = 0;
    let mut sdk_bytes = 0;
    for (n, (name, imports)) in dlls.iter().enumerate() {
        let dll = compile(&build, name, imports);
        if name == "ctranslate2" {
            fs::copy(&dll, wheel_dir.join("ctranslate2.dll")).unwrap();
            continue;
        }
        let padded = if name.starts_with("chain") { 40 } else { 48 } * MIB - (n as u64 * 4096);
        let to = sdk_dir.join(format!("{name}.dll"));
        sdk_bytes += pad_copy(&dll, &to, padded);
        files += 1;
        // The SDK's other files: an import library and a header per DLL.
        let lib = sdk_dir.join(format!("{name}.lib"));
        fs::copy(build.join(format!("lib{name}.a")), &lib).unwrap();
        let header = sdk_dir.join(format!("{name}.h"));
        fs::write(&header, format!("int f_{name}(void);\n").repeat(512)).unwrap();
        sdk_bytes += fs::metadata(&lib).unwrap().len() + fs::metadata(&header).unwrap().len();
        files += 2;
    }
    Tree {
        root: wheel_dir.join("ctranslate2.dll"),
        wheel_dir,
        sdk_dir,
        files,
        sdk_bytes,
    }
}

/// `name.dll`, exporting `f_name` and calling the `f_` of each import (so the import table
/// is real); also writes `libname.a`, its import library.
fn compile(dir: &Path, name: &str, imports: &[String]) -> PathBuf {
    let mut c = String::new();
    for import in imports {
        c.push_str(&format!("__declspec(dllimport) int f_{import}(void);\n"));
    }
    c.push_str(&format!(
        "__declspec(dllexport) int f_{name}(void) {{ return 1"
    ));
    for import in imports {
        c.push_str(&format!(" + f_{import}()"));
    }
    c.push_str("; }\n");
    let source = dir.join(format!("{name}.c"));
    fs::write(&source, c).unwrap();
    let out = dir.join(format!("{name}.dll"));
    let mut cmd = Command::new(GCC);
    cmd.arg("-shared")
        .arg("-o")
        .arg(&out)
        .arg(&source)
        .arg(format!(
            "-Wl,--out-implib,{}",
            dir.join(format!("lib{name}.a")).display()
        ));
    for import in imports {
        cmd.arg(dir.join(format!("lib{import}.a")));
    }
    run_quiet(&mut cmd);
    out
}

/// Copies `from` to `to` and appends zeros up to `size` bytes (written, not a sparse hole).
fn pad_copy(from: &Path, to: &Path, size: u64) -> u64 {
    let bytes = fs::read(from).unwrap();
    let mut file = File::create(to).unwrap();
    file.write_all(&bytes).unwrap();
    let zeros = vec![0u8; MIB as usize];
    let mut left = size.saturating_sub(bytes.len() as u64);
    while left > 0 {
        let n = left.min(MIB) as usize;
        file.write_all(&zeros[..n]).unwrap();
        left -= n as u64;
    }
    file.sync_all().unwrap();
    fs::metadata(to).unwrap().len()
}

/// The import and delay-import DLL names, as `objdump -p` prints them.
fn objdump_imports(objdump: &str, path: &Path) -> Result<Vec<String>, String> {
    let output = Command::new(objdump)
        .arg("-p")
        .arg(path)
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("DLL Name:"))
        .map(|n| n.trim().to_string())
        .collect())
}

fn names(closure: &Closure) -> BTreeSet<String> {
    closure.libraries.iter().map(|l| l.name.clone()).collect()
}

fn installed(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}
