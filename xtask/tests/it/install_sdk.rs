//! `install-sdk` with a stand-in installer served over loopback: a shell script that lays out
//! a CUDA toolkit where `CUDA_PATH` points (what `build` looks at first), pinned like any
//! input. The real one is AMD's HIP SDK installer on a hosted windows-2022 runner; the
//! download, the pin check, the bounded run, the exit code and the check afterwards are the
//! same code.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::common::command_args::job;
use crate::common::server::Server;
use crate::common::{Scratch, assert_exit};

const PATH: &str = "/cuda-installer.run";

/// An installer that prints its arguments and then does what `body` says.
fn script(body: &str) -> Vec<u8> {
    format!("#!/bin/sh\necho \"installer args: $*\"\n{body}\n").into_bytes()
}

const LAYS_OUT_CUDA: &str = "mkdir -p \"$CUDA_PATH/bin\"\n\
    printf '#!/bin/sh\\necho \"Cuda compilation tools, release 12.8, V12.8.93\"\\n' > \"$CUDA_PATH/bin/nvcc\"\n\
    chmod +x \"$CUDA_PATH/bin/nvcc\"";

struct Setup {
    scratch: Scratch,
    server: Server,
    cuda: tempfile::TempDir,
}

/// The cuda variant with an installer for Linux, pinned to `bytes` (or unpinned).
fn setup(bytes: &[u8], pinned: bool) -> Setup {
    let server = Server::start();
    server.serve(PATH, Arc::new(bytes.to_vec()));
    let scratch = Scratch::new();
    let file = scratch.path().join("variants/cuda.toml");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let pin = if pinned {
        format!(
            "sha256 = \"{}\"\nsize = {}\n",
            ct2v_fetch::cache::hex(&Sha256::digest(bytes)),
            bytes.len()
        )
    } else {
        String::new()
    };
    text.push_str(&format!(
        "\n[platform.linux-x86_64.sdk]\ninstaller = \"cuda-installer\"\n\
         installer-args = [\"--silent\", \"--toolkit\"]\ninstaller-minutes = 1\n\
         [platform.linux-x86_64.inputs.cuda-installer]\nurl = \"{}\"\n{pin}",
        server.url(PATH)
    ));
    std::fs::write(&file, text).unwrap();
    Setup {
        scratch,
        server,
        cuda: tempfile::tempdir().unwrap(),
    }
}

impl Setup {
    fn install(&self, extra: &[&str]) -> crate::common::Run {
        let cache = self.scratch.path().join("cache");
        let cuda = self.cuda.path().join("cuda-12.8");
        let mut args = vec![
            "install-sdk",
            "--variant",
            "cuda",
            "--platform",
            "linux-x86_64",
            "--python",
            "3.12",
            "--cache-dir",
            cache.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        crate::common::xtask_with_env(
            self.scratch.path(),
            &args,
            &[
                ("CUDA_PATH", cuda.to_str().unwrap()),
                ("PATH", "/usr/bin:/bin"),
            ],
            &["CUDA_HOME"],
        )
    }

    fn log(&self) -> String {
        std::fs::read_to_string(
            self.scratch
                .path()
                .join("target/xtask/logs/cuda/linux-x86_64/install-sdk.log"),
        )
        .unwrap_or_default()
    }
}

#[test]
fn the_installer_runs_with_its_arguments_and_the_sdk_is_found_afterwards() {
    let s = setup(&script(LAYS_OUT_CUDA), true);
    let run = s.install(&[]);
    assert_exit(&run, 0, &["running", "--silent --toolkit"]);
    assert!(
        run.stdout.contains("installed in") && run.stdout.contains("SDK 12.8"),
        "{}",
        run.stdout
    );
    assert!(
        s.log().contains("installer args: --silent --toolkit"),
        "{}",
        s.log()
    );
    assert_eq!(s.server.hits(PATH).len(), 1);
    // Found now: nothing runs, nothing is downloaded.
    let again = s.install(&[]);
    assert_exit(&again, 0, &[]);
    assert!(
        again.stdout.contains("already installed: SDK 12.8"),
        "{}",
        again.stdout
    );
    assert_eq!(s.server.hits(PATH).len(), 1);
    // --force runs it again, from the cache.
    let forced = s.install(&["--force"]);
    assert_exit(&forced, 0, &[]);
    assert!(forced.stdout.contains("installed in"), "{}", forced.stdout);
    assert_eq!(s.server.hits(PATH).len(), 1, "the cached, verified copy");
}

#[test]
fn a_hung_installer_is_stopped_and_a_failing_one_named() {
    let hung = setup(&script("sleep 60"), true);
    let started = std::time::Instant::now();
    let run = hung.install(&["--installer-timeout", "1"]);
    assert_exit(
        &run,
        1,
        &[
            "did not finish within 1 s and was stopped",
            "install-sdk.log",
        ],
    );
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());

    let failing = setup(&script("echo broken >&2; exit 3"), true);
    let run = failing.install(&[]);
    assert_exit(&run, 1, &["failed (exit status: 3)", "install-sdk.log"]);
    assert!(failing.log().contains("broken"), "{}", failing.log());

    let silent = setup(&script("true"), true);
    let run = silent.install(&[]);
    assert_exit(
        &run,
        1,
        &["exited 0, but no fitting SDK is found afterwards", "CUDA"],
    );
}

#[test]
fn an_unpinned_or_changed_installer_never_runs() {
    let unpinned = setup(&script(LAYS_OUT_CUDA), false);
    let run = unpinned.install(&[]);
    assert_exit(
        &run,
        1,
        &[
            "input `cuda-installer` of variant `cuda` is not pinned",
            "cargo xtask pin --variant cuda",
        ],
    );
    assert!(unpinned.server.hits(PATH).is_empty());

    // Pinned to other bytes than the server's: refused before anything runs.
    let changed = setup(&script(LAYS_OUT_CUDA), true);
    changed
        .server
        .serve(PATH, Arc::new(script("touch \"$CUDA_PATH.ran\"")));
    let run = changed.install(&[]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("cuda-installer"), "{}", run.stderr);
    assert!(!changed.cuda.path().join("cuda-12.8.ran").exists());
}

#[test]
fn a_variant_without_an_installer_or_another_platform_is_bad_input() {
    let scratch = Scratch::new();
    let cpu = scratch.run(&["install-sdk", "--variant", "cpu", "--python", "3.12"]);
    assert_exit(&cpu, 2, &["variant `cpu` needs no GPU SDK"]);
    let cuda = scratch.run(&["install-sdk", "--variant", "cuda", "--python", "3.12"]);
    assert_exit(
        &cuda,
        2,
        &["has no unattended installer", "install the CUDA toolkit"],
    );
    let windows = scratch.run(&job(
        "install-sdk",
        "rocm-gfx1010",
        "windows-x86_64",
        "3.12",
        &[],
    ));
    assert_exit(
        &windows,
        2,
        &["installs on a windows-x86_64 machine, not here"],
    );
}
