//! Programs that misbehave where `doctor` and the selector ask them (they sleep, flood a
//! stream, leave a child holding their output, detach one) and sysfs or KFD files that are not
//! what the kernel writes: both answer in bounded time, say each problem and keep what they
//! can still read.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{self, repo_root};
use crate::doctor::GPU_ENV;

const SELECTOR: &str = "crates/pipeline/python/ct2_variant_select.py";

/// How a GPU tool has been seen to hang or flood its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Misbehaviour {
    Sleeps,
    LeavesAChildHoldingItsOutput,
    DetachesAChild,
    Prints300Mb,
    /// 300 MB on stderr, nothing on stdout.
    Floods300MbOfStderr,
}

/// A stand-in GPU tool that misbehaves, in a folder whose unique path marks every process it
/// starts (its `sleep` is a link in that folder), so that what it left running can be found
/// with `pgrep -f` and is killed, by pid, when this is dropped.
pub(crate) struct HangingTool {
    dir: tempfile::TempDir,
    pub bin: PathBuf,
}

impl HangingTool {
    /// `name` in a `bin` folder, printing `line` first (except when it only sleeps).
    pub(crate) fn new(name: &str, how: Misbehaviour, line: &str) -> HangingTool {
        let dir = tempfile::Builder::new()
            .prefix("ct2v-hanging-tool-")
            .tempdir()
            .unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        let real_sleep = ["/usr/bin/sleep", "/bin/sleep"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .expect("sleep in /usr/bin or /bin");
        std::os::unix::fs::symlink(real_sleep, bin.join("sleep")).unwrap();
        let tool = HangingTool { dir, bin };
        tool.add(name, how, line);
        tool
    }

    /// Another misbehaving tool `name` in the same folder.
    pub(crate) fn add(&self, name: &str, how: Misbehaviour, line: &str) {
        let sleep = self.bin.join("sleep");
        let sleep = sleep.display();
        let body = match how {
            Misbehaviour::Sleeps => format!("{sleep} 600\n"),
            Misbehaviour::LeavesAChildHoldingItsOutput => {
                format!("echo '{line}'\n{sleep} 600 &\nexit 0\n")
            }
            Misbehaviour::DetachesAChild => {
                format!("echo '{line}'\nsetsid {sleep} 600 &\nexit 0\n")
            }
            Misbehaviour::Prints300Mb => "head -c 300000000 /dev/zero | tr '\\0' a\n".to_string(),
            Misbehaviour::Floods300MbOfStderr => {
                "head -c 300000000 /dev/zero | tr '\\0' a >&2\n".to_string()
            }
        };
        common::write_script(&self.bin.join(name), &format!("#!/bin/sh\n{body}"));
    }

    /// PATH with only this tool and the system's basic folders.
    pub(crate) fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.bin.display())
    }

    /// The pids of the processes it started that are still running (not zombies).
    fn running(&self) -> Vec<u32> {
        let out = std::process::Command::new("pgrep")
            .arg("-f")
            .arg(self.dir.path())
            .output()
            .expect("pgrep runs");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Asserts nothing it started is still running (a killed process may take a moment to go).
    pub(crate) fn assert_none_left(&self) {
        let deadline = Instant::now() + Duration::from_secs(3);
        while !self.running().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = self.running();
        assert!(left.is_empty(), "stand-in processes left running: {left:?}");
    }
}

impl Drop for HangingTool {
    fn drop(&mut self) {
        for pid in self.running() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// Runs `command` with its output in files (a pipe would hang the test where the code under
/// test hangs), killed after `limit`; its exit code, stdout, stderr and how long it took.
pub(crate) fn run_within(
    mut command: std::process::Command,
    limit: Duration,
) -> (i32, String, String, Duration) {
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    command
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap());
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let read = |mut f: fs::File| {
        use std::io::{Read, Seek};
        let mut text = Vec::new();
        f.rewind().unwrap();
        f.read_to_end(&mut text).unwrap();
        String::from_utf8_lossy(&text).into_owned()
    };
    (common::exit_code(status), read(out), read(err), took)
}

/// `xtask doctor <args>` with only `tool`'s folder and the system's on PATH, probes given
/// `timeout_s`, glibc 2.28 as the host's, no GPU variables and no cache folder.
fn doctor_with(tool: &HangingTool, timeout_s: u64, args: &[&str]) -> std::process::Command {
    let mut command = common::xtask_command(&common::repo_root(), &["doctor"]);
    command
        .args(args)
        .env("PATH", tool.path())
        .env("CT2V_PROBE_TIMEOUT_S", timeout_s.to_string());
    for var in GPU_ENV {
        command.env_remove(var);
    }
    command
}

/// `doctor --json` with a misbehaving `nvidia-smi` (timeout `timeout_s` through
/// `CT2V_PROBE_TIMEOUT_S`): it finishes within the timeout (twice where the tool is asked
/// twice) and a margin, says what happened, reports the card where the tool printed it, and
/// leaves nothing running.
fn doctor_survives(how: Misbehaviour, timeout_s: u64, said: &str) {
    let tool = HangingTool::new(
        "nvidia-smi",
        how,
        "NVIDIA GeForce RTX 3060, 8.6, 560.94, 12288 MiB",
    );
    let command = doctor_with(&tool, timeout_s, &["--json"]);
    let limit = Duration::from_secs(2 * timeout_s + 20);
    let (code, stdout, stderr, took) = run_within(command, limit);
    eprintln!("doctor with an nvidia-smi that {how:?}: {took:.2?}");
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        took < Duration::from_secs(timeout_s + 5),
        "took {took:?} with a {timeout_s} s timeout"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stdout);
    let problems = report["facts"]["tool_problems"].to_string();
    assert!(problems.contains(said), "`{said}` not in {problems}");
    assert!(
        report["verdict"]["notes"].to_string().contains(said),
        "{report:#}"
    );
    let cards = report["facts"]["nvidia_gpus"].to_string();
    match how {
        Misbehaviour::LeavesAChildHoldingItsOutput | Misbehaviour::DetachesAChild => {
            assert!(cards.contains("RTX 3060"), "{report:#}");
        }
        Misbehaviour::Sleeps | Misbehaviour::Prints300Mb | Misbehaviour::Floods300MbOfStderr => {
            assert_eq!(cards, "[]");
            assert!(
                problems.contains("the NVIDIA GPUs and the CUDA version"),
                "{problems}"
            );
        }
    }
    tool.assert_none_left();
}

#[test]
fn a_gpu_tool_that_sleeps_is_stopped_at_the_timeout_and_said() {
    doctor_survives(
        Misbehaviour::Sleeps,
        1,
        "nvidia-smi` did not answer within 1 s; it was stopped",
    );
}

#[test]
fn a_gpu_tool_that_leaves_a_child_holding_its_output_does_not_hang_doctor() {
    doctor_survives(
        Misbehaviour::LeavesAChildHoldingItsOutput,
        1,
        "nvidia-smi` exited but left a process holding its output open",
    );
}

#[test]
fn a_gpu_tool_that_detaches_a_child_does_not_hang_doctor() {
    doctor_survives(
        Misbehaviour::DetachesAChild,
        1,
        "nvidia-smi` exited but left a process holding its output open",
    );
}

#[test]
fn a_gpu_tool_that_prints_300_mb_is_cut_at_the_cap_and_said() {
    doctor_survives(
        Misbehaviour::Prints300Mb,
        10,
        "nvidia-smi` printed more than 1048576 bytes",
    );
}

/// `doctor --json` with every program it asks misbehaving at once (timeout 3 s): nvidia-smi,
/// rocminfo, clinfo and python3 sleep, hipinfo and gcc flood stderr, nvcc prints its version and
/// leaves a child holding its output, cmake detaches one. They are asked at once, so doctor
/// finishes within about one timeout (one after another it took one each, and the nvcc it
/// read to the end of its output hung it for good); each problem is said, the toolkit nvcc
/// named is still found, and nothing is left running.
#[test]
fn every_program_doctor_asks_that_hangs_costs_one_timeout_together_and_each_is_said() {
    use Misbehaviour::*;
    let nvcc = "Cuda compilation tools, release 12.4, V12.4.131";
    let tool = HangingTool::new("nvidia-smi", Sleeps, "");
    for (name, how, line) in [
        ("rocminfo", Sleeps, ""),
        ("clinfo", Sleeps, ""),
        ("python3", Sleeps, ""),
        ("hipinfo", Floods300MbOfStderr, ""),
        ("gcc", Floods300MbOfStderr, ""),
        ("nvcc", LeavesAChildHoldingItsOutput, nvcc),
        ("cmake", DetachesAChild, "cmake version 3.31.6"),
    ] {
        tool.add(name, how, line);
    }
    let timeout_s = 3;
    let command = doctor_with(&tool, timeout_s, &["--json"]);
    let (code, stdout, stderr, took) = run_within(command, Duration::from_secs(60));
    eprintln!("doctor with eight misbehaving programs and a {timeout_s} s timeout: {took:.2?}");
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stdout);
    let problems = report["facts"]["tool_problems"].to_string();
    for said in [
        format!("nvidia-smi` did not answer within {timeout_s} s; it was stopped"),
        format!("rocminfo` did not answer within {timeout_s} s; it was stopped"),
        format!("clinfo` did not answer within {timeout_s} s; it was stopped"),
        format!("python3` did not answer within {timeout_s} s; it was stopped"),
        "hipinfo` printed more than 1048576 bytes".to_string(),
        "gcc` printed more than 1048576 bytes".to_string(),
        "nvcc` exited but left a process holding its output open".to_string(),
        "cmake` exited but left a process holding its output open".to_string(),
    ] {
        assert!(problems.contains(&said), "`{said}` not in {problems}");
        assert!(
            report["verdict"]["notes"].to_string().contains(&said),
            "{report:#}"
        );
    }
    assert_eq!(
        report["facts"]["cuda_toolkit"]["version"], "12.4",
        "{report:#}"
    );
    assert!(
        took < Duration::from_secs(timeout_s + 4),
        "took {took:?} with a {timeout_s} s timeout"
    );
    tool.assert_none_left();
}

/// `doctor --variant cpu` (the plan asks the host's glibc and Python) with a `getconf` that
/// prints its answer and leaves a child holding its output and a `python3` that sleeps: the
/// two are asked at once and bounded, doctor answers within about one timeout (the build's own
/// Python is asked after the plan), each problem is said on stderr with what was not read,
/// and nothing is left running.
#[test]
fn a_hung_getconf_or_python3_does_not_hang_doctor_for_a_build() {
    let tool = HangingTool::new(
        "getconf",
        Misbehaviour::LeavesAChildHoldingItsOutput,
        "glibc 2.36",
    );
    tool.add("python3", Misbehaviour::Sleeps, "");
    let timeout_s = 3;
    let mut command = doctor_with(&tool, timeout_s, &["--variant", "cpu"]);
    command.env_remove("CT2V_HOST_GLIBC");
    let (code, stdout, stderr, took) = run_within(command, Duration::from_secs(60));
    eprintln!("doctor --variant cpu with a hung getconf and python3: {took:.2?}\n{stdout}{stderr}");
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for said in [
        "warning: `getconf` exited but left a process holding its output open; that process \
         was stopped"
            .to_string(),
        format!(
            "warning: `python3` did not answer within {timeout_s} s; it was stopped; the \
             host's Python version was not read"
        ),
    ] {
        assert!(stderr.contains(&said), "`{said}` not in {stderr}");
    }
    assert!(
        took < Duration::from_secs(2 * timeout_s + 4),
        "took {took:?} with a {timeout_s} s timeout"
    );
    tool.assert_none_left();
}

/// The interpreter behind `python3` (a pyenv shim needs a PATH the selector's runs lack).
pub(crate) fn python_exe() -> Option<std::path::PathBuf> {
    Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
}

/// The selector's `--json` answer on linux-x86_64 with `root` as `/` and `path` as PATH, its
/// tools given `timeout_s`; it must exit 0 without a traceback within `limit`.
fn select_within(
    root: &Path,
    path: &str,
    timeout_s: u64,
    limit: std::time::Duration,
) -> Option<(serde_json::Value, std::time::Duration)> {
    let Some(python) = python_exe() else {
        eprintln!("skipped: no python3");
        return None;
    };
    let mut command = Command::new(python);
    command
        .arg("-B")
        .arg(repo_root().join(SELECTOR))
        .args(["--json", "--platform", "linux-x86_64", "--root"])
        .arg(root)
        .env("PATH", path)
        .env("CT2V_PROBE_TIMEOUT_S", timeout_s.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let (code, stdout, stderr, took) = run_within(command, limit);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("Traceback"), "{stderr}");
    let answer = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    Some((answer, took))
}

/// The selector with a misbehaving `nvidia-smi` (1 s timeout): it answers within the timeout
/// and a margin, says what happened, uses the card where the tool printed it, and leaves
/// nothing running.
fn selector_survives(how: Misbehaviour, said: &str) {
    use {HangingTool, Misbehaviour};
    let tool = HangingTool::new("nvidia-smi", how, "NVIDIA GeForce RTX 3060, 8.6, 560.94");
    let root = tempfile::tempdir().unwrap();
    let limit = std::time::Duration::from_secs(30);
    let Some((answer, took)) = select_within(root.path(), &tool.path(), 1, limit) else {
        return;
    };
    eprintln!("the selector with an nvidia-smi that {how:?}: {took:.2?}");
    assert!(
        took < std::time::Duration::from_secs(1 + 4),
        "took {took:?}"
    );
    let reasons = answer["reasons"].to_string();
    assert!(reasons.contains(said), "`{said}` not in {answer:#}");
    let expected = match how {
        Misbehaviour::LeavesAChildHoldingItsOutput | Misbehaviour::DetachesAChild => "cuda",
        Misbehaviour::Sleeps | Misbehaviour::Prints300Mb | Misbehaviour::Floods300MbOfStderr => {
            "cpu"
        }
    };
    assert_eq!(answer["variant"], expected, "{answer:#}");
    tool.assert_none_left();
}

#[test]
fn the_selector_stops_an_nvidia_smi_that_sleeps_at_the_timeout() {
    selector_survives(Misbehaviour::Sleeps, "nvidia-smi did not answer within 1 s");
}

#[test]
fn the_selector_is_not_hung_by_a_child_holding_nvidia_smis_output() {
    selector_survives(
        Misbehaviour::LeavesAChildHoldingItsOutput,
        "nvidia-smi exited but left a process holding its output open; it was stopped",
    );
}

#[test]
fn the_selector_is_not_hung_by_a_child_nvidia_smi_detached() {
    selector_survives(
        Misbehaviour::DetachesAChild,
        "nvidia-smi exited but left a process holding its output open; it was stopped",
    );
}

#[test]
fn the_selector_stops_an_nvidia_smi_printing_300_mb_at_the_cap() {
    selector_survives(
        Misbehaviour::Prints300Mb,
        "nvidia-smi printed more than 1048576 bytes; it was stopped",
    );
}

/// A sysfs tree with a FIFO where `vendor` is, a `device` that links to /dev/zero, non-UTF-8
/// bytes, and KFD `properties` that are a FIFO and a link to /dev/zero: each is skipped with a
/// reason, an RX 6600 beside them is still found, and with none of it the answer is `cpu`; in
/// bounded time, no traceback.
#[test]
fn odd_sysfs_files_are_skipped_with_a_reason_not_waited_for() {
    let mkfifo = common::mkfifo;
    let card = |root: &Path, n: usize| {
        let dir = root.join(format!("sys/class/drm/card{n}/device"));
        fs::create_dir_all(&dir).unwrap();
        dir
    };
    let odd_tree = |root: &Path| {
        let fifo = card(root, 0);
        mkfifo(&fifo.join("vendor"));
        fs::write(fifo.join("device"), "0x73ff\n").unwrap();
        let zero = card(root, 1);
        fs::write(zero.join("vendor"), "0x1002\n").unwrap();
        std::os::unix::fs::symlink("/dev/zero", zero.join("device")).unwrap();
        let bytes = card(root, 2);
        fs::write(bytes.join("vendor"), b"\xff\xfe\x80\x00\x10\x02").unwrap();
        fs::write(bytes.join("device"), "0x73ff\n").unwrap();
        let nodes = root.join("sys/class/kfd/kfd/topology/nodes");
        for n in ["1", "2", "3"] {
            fs::create_dir_all(nodes.join(n)).unwrap();
        }
        mkfifo(&nodes.join("1/properties"));
        std::os::unix::fs::symlink("/dev/zero", nodes.join("2/properties")).unwrap();
        fs::write(
            nodes.join("3/properties"),
            b"vendor_id \xff\xff\ngfx\x80 1\n",
        )
        .unwrap();
    };
    let limit = std::time::Duration::from_secs(20);
    let path = "/nonexistent-ct2v";

    let odd = tempfile::tempdir().unwrap();
    odd_tree(odd.path());
    let Some((answer, took)) = select_within(odd.path(), path, 1, limit) else {
        return;
    };
    assert_eq!(answer["variant"], "cpu", "{answer:#}");
    let reasons = answer["reasons"].to_string();
    for said in [
        "skipped card0: ",
        "device/vendor is not a regular file",
        "skipped card1: ",
        "device/device is not a regular file",
        "skipped card2: ",
        "is not a PCI ID",
        "skipped a KFD node: ",
        "1/properties is not a regular file",
        "2/properties is not a regular file",
    ] {
        assert!(reasons.contains(said), "`{said}` not in {answer:#}");
    }
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");

    let with_card = tempfile::tempdir().unwrap();
    odd_tree(with_card.path());
    let good = card(with_card.path(), 3);
    fs::write(good.join("vendor"), "0x1002\n").unwrap();
    fs::write(good.join("device"), "0x73ff\n").unwrap();
    let (answer, took) = select_within(with_card.path(), path, 1, limit).unwrap();
    assert_eq!(answer["gpu"]["gfx"], "gfx1032", "{answer:#}");
    assert_ne!(answer["variant"], "cpu", "{answer:#}");
    assert!(
        answer["reasons"].to_string().contains("skipped card0: "),
        "{answer:#}"
    );
    eprintln!("the selector on odd sysfs files: {took:.2?}");
}

/// KFD nodes whose numbers are not what the kernel writes (superscript, Arabic-Indic and
/// fullwidth digits, which Python's `isdigit` accepts; 5,000 and 21 digits; negative; hex;
/// garbage; a PCI ID above 0xffff) beside a node of a real RX 6600 XT with no DRM card: each
/// odd node is skipped with a reason naming it and the card is still chosen, in bounded time,
/// no traceback.
#[test]
fn a_kfd_node_with_odd_numbers_is_skipped_and_the_gpu_beside_it_found() {
    let root = tempfile::tempdir().unwrap();
    let nodes = root.path().join("sys/class/kfd/kfd/topology/nodes");
    let node = |n: &str, text: &str| {
        fs::create_dir_all(nodes.join(n)).unwrap();
        fs::write(nodes.join(n).join("properties"), text).unwrap();
    };
    node(
        "0",
        "cpu_cores_count 8\ngfx_target_version 0\nvendor_id 0\n",
    );
    node(
        "1",
        "simd_count 56\ngfx_target_version 100302\nvendor_id 4098\ndevice_id 29695\n",
    );
    let odd = [
        (
            "gfx_target_version",
            "\u{b9}\u{2070}\u{2070}\u{b3}\u{2070}\u{2070}".to_string(),
        ),
        (
            "gfx_target_version",
            "\u{661}\u{660}\u{660}\u{663}\u{660}\u{660}".to_string(),
        ),
        (
            "device_id",
            "\u{ff12}\u{ff19}\u{ff16}\u{ff13}\u{ff11}".to_string(),
        ),
        ("device_id", "9".repeat(5000)),
        ("vendor_id", "1".repeat(21)),
        ("gfx_target_version", "-100300".to_string()),
        ("device_id", "0x73bf".to_string()),
        ("vendor_id", "banana\u{202e}".to_string()),
        ("device_id", "70000".to_string()),
    ];
    for (n, (key, value)) in odd.iter().enumerate() {
        let mut props = [
            ("gfx_target_version", "100300".to_string()),
            ("vendor_id", "4098".to_string()),
            ("device_id", "29631".to_string()),
        ];
        props.iter_mut().find(|(k, _)| k == key).unwrap().1 = value.clone();
        let text: String = props.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
        node(&(n + 2).to_string(), &text);
    }
    let limit = std::time::Duration::from_secs(20);
    let Some((answer, took)) = select_within(root.path(), "/nonexistent-ct2v", 1, limit) else {
        return;
    };
    assert_eq!(answer["gpu"]["gfx"], "gfx1032", "{answer:#}");
    assert_eq!(answer["variant"], "rocm-rdna2", "{answer:#}");
    assert_eq!(answer["gpus"].as_array().unwrap().len(), 1, "{answer:#}");
    let reasons: Vec<&str> = answer["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.as_str())
        .filter(|r| r.starts_with("skipped a KFD node: "))
        .collect();
    for (n, (key, _)) in odd.iter().enumerate() {
        let file = nodes.join((n + 2).to_string()).join("properties");
        let said = format!("{}: {key} ", file.display());
        assert!(
            reasons.iter().any(|r| r.contains(&said)),
            "`{said}` not in {reasons:#?}"
        );
    }
    assert_eq!(reasons.len(), odd.len(), "{reasons:#?}");
    assert!(reasons.iter().all(|r| r.len() < 400), "{reasons:#?}");
    assert!(
        !answer.to_string().contains('\u{202e}'),
        "a right-to-left override is printed escaped: {answer:#}"
    );
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}
