//! What a hostile user puts at the names this tool reserves: its record (`.ct2v-owned`), its
//! staging marker (`.ct2v-made-by-xtask`), its lock files (`.<name>.lock`) and its leftovers.
//! A link, a FIFO, a socket, a link to a device, a huge file or a user's own file there is
//! never written through, never waited on, never read whole, never deleted: the run refuses
//! (exit 2) naming it, or keeps it as not provably its own. Every run here has a deadline and a
//! 4 GiB address space, so that a hang or an unbounded read fails the test rather than the
//! machine. Also: every file the tool writes is opened by `ct2v_support::regular_file`.

use crate::common;

use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, Scratch, assert_exit, repo_root};
use ct2v_support::owned_output::RECORD;
use ct2v_support::staging::MARKER;

/// How long a run here may take: a small bundle takes well under a second.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs xtask `args` in `root` with at most 4 GiB of address space (an unbounded read fails
/// rather than taking the machine's memory) and kills it past [`DEADLINE`], failing the test
/// as a hang.
fn bounded_in(root: &Path, args: &[&str]) -> Run {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_xtask"))
        .arg("--root")
        .arg(root)
        .args(args);
    common::test_env(&mut command);
    let (code, stdout, stderr, _) = crate::probes::run_within(command, DEADLINE);
    let run = Run {
        code,
        stdout,
        stderr,
    };
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("memory allocation"),
        "xtask {args:?} crashed:\n{}",
        run.stderr
    );
    run
}

fn bundle(wheel: &Path, out: &Path) -> Run {
    bounded_in(&repo_root(), &common::command_args::bundle(wheel, out, &[]))
}

/// A bundle output in `dir/out`, written by a first run.
fn bundled(dir: &Path) -> (PathBuf, PathBuf) {
    let wheel = common::wheel::linux_wheel(dir, &[]);
    let out = dir.join("out");
    assert_exit(&bundle(&wheel, &out), 0, &[]);
    assert!(out.join(RECORD).is_file());
    (wheel, out)
}

/// The hostile things a test puts at a reserved name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A link to a user's file outside every destination.
    LinkToUsersFile,
    /// A link to a path that does not exist yet (a write through it would create it).
    DanglingLink,
    LinkToDevNull,
    LinkToDevZero,
    Fifo,
    Socket,
    /// A file far larger than anything the tool writes there (8 GiB, sparse).
    Huge,
    /// A user's own regular file.
    UsersFile,
    Folder,
}

const USERS_TEXT: &str = "a user's notes: years of work\n";

/// Puts `form` at `at`; the user's file a link points to is `dir/users.txt`. Returns the
/// listener that keeps a socket alive.
fn plant(form: Form, at: &Path, dir: &Path) -> Option<UnixListener> {
    let users = dir.join("users.txt");
    fs::write(&users, USERS_TEXT).unwrap();
    match form {
        Form::LinkToUsersFile => symlink(&users, at).unwrap(),
        Form::DanglingLink => symlink(dir.join("created-through-a-link"), at).unwrap(),
        Form::LinkToDevNull => symlink("/dev/null", at).unwrap(),
        Form::LinkToDevZero => symlink("/dev/zero", at).unwrap(),
        Form::Fifo => common::mkfifo(at),
        Form::Socket => return Some(UnixListener::bind(at).unwrap()),
        Form::Huge => fs::File::create(at).unwrap().set_len(8 << 30).unwrap(),
        Form::UsersFile => fs::write(at, USERS_TEXT).unwrap(),
        Form::Folder => fs::create_dir(at).unwrap(),
    }
    None
}

/// `form` is still at `at` as planted, and nothing outside was written through it.
fn still_there(form: Form, at: &Path, dir: &Path) {
    let meta = fs::symlink_metadata(at)
        .unwrap_or_else(|_| panic!("{form:?} at {} was deleted", at.display()));
    let kind = meta.file_type();
    let kept = match form {
        Form::LinkToUsersFile | Form::DanglingLink | Form::LinkToDevNull | Form::LinkToDevZero => {
            kind.is_symlink()
        }
        Form::Fifo => kind.is_fifo(),
        Form::Socket => kind.is_socket(),
        Form::Huge => kind.is_file() && meta.len() == 8 << 30,
        Form::UsersFile => fs::read_to_string(at).is_ok_and(|t| t == USERS_TEXT),
        Form::Folder => kind.is_dir(),
    };
    assert!(kept, "{form:?} at {} was changed", at.display());
    assert_eq!(
        fs::read_to_string(dir.join("users.txt")).unwrap(),
        USERS_TEXT,
        "{form:?}: the user's file was written through"
    );
    assert!(
        !dir.join("created-through-a-link").exists(),
        "{form:?}: a file was made through the link"
    );
}

fn remove(at: &Path) {
    match fs::symlink_metadata(at) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(at).unwrap(),
        Ok(_) => fs::remove_file(at).unwrap(),
        Err(_) => {}
    }
}

// ---------------------------------------------------------------------------------------
// The staging marker's name in an output.

/// A link, FIFO, socket or user's file at `.ct2v-made-by-xtask` at the top of an output is a
/// file this tool did not write, like any other: the next bundle refuses (exit 2) naming it,
/// before any work, and writes nothing through it; the user's file survives.
#[test]
fn anything_at_the_marker_name_in_an_output_stops_bundle_and_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    let at = out.join(MARKER);
    for form in [
        Form::LinkToUsersFile,
        Form::DanglingLink,
        Form::LinkToDevNull,
        Form::Fifo,
        Form::Socket,
        Form::UsersFile,
    ] {
        let _socket = plant(form, &at, dir.path());
        let run = bundle(&wheel, &out);
        assert_exit(&run, 2, &[&format!("{MARKER}: not written by this tool")]);
        still_there(form, &at, dir.path());
        remove(&at);
    }
    // What is left is the output as written: replaced as ever.
    assert_exit(&bundle(&wheel, &out), 0, &[]);
    assert!(!at.exists());
}

// ---------------------------------------------------------------------------------------
// Records and markers read as small regular files.

/// A record that is a FIFO, a link (to `/dev/zero`, to a copy of the real record), a socket,
/// a folder or an 8 GiB file is refused at once, exit 2 naming it: never waited on, never read
/// whole.
#[test]
fn a_record_that_is_not_a_small_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (wheel, out) = bundled(dir.path());
    let at = out.join(RECORD);
    let real = fs::read(&at).unwrap();
    let copy = dir.path().join("record-copy");
    fs::write(&copy, &real).unwrap();
    for form in [
        Form::Fifo,
        Form::LinkToDevZero,
        Form::LinkToUsersFile,
        Form::Socket,
        Form::Folder,
        Form::Huge,
    ] {
        remove(&at);
        let _socket = plant(form, &at, dir.path());
        if form == Form::LinkToUsersFile {
            remove(&at);
            symlink(&copy, &at).unwrap();
        }
        let run = bundle(&wheel, &out);
        assert_exit(&run, 2, &[RECORD, "not replaced"]);
        assert!(fs::symlink_metadata(&at).is_ok(), "{form:?} deleted");
    }
    remove(&at);
    fs::write(&at, &real).unwrap();
    assert_exit(&bundle(&wheel, &out), 0, &[]);
}

/// A dead run's leftover folder (staging or moved aside) whose marker is a FIFO, a link to
/// `/dev/zero`, a socket or an 8 GiB file proves nothing: the sweep of the next run neither
/// hangs nor reads it whole, and keeps the folder.
#[test]
fn a_leftovers_marker_that_is_not_a_small_regular_file_never_stalls_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let out = dir.path().join("out");
    let forms = [Form::Fifo, Form::LinkToDevZero, Form::Socket, Form::Huge];
    let mut planted = Vec::new();
    let mut sockets = Vec::new();
    for (i, form) in forms.into_iter().enumerate() {
        for prefix in [".bundle-", ".out.old-"] {
            let leftover = dir.path().join(format!("{prefix}99999999{i}"));
            fs::create_dir_all(leftover.join("sub")).unwrap();
            sockets.push(plant(form, &leftover.join(MARKER), dir.path()));
            planted.push((form, leftover));
        }
    }
    assert_exit(&bundle(&wheel, &out), 0, &[]);
    for (form, leftover) in &planted {
        assert!(
            leftover.join("sub").is_dir(),
            "{form:?}: {leftover:?} removed"
        );
        still_there(*form, &leftover.join(MARKER), dir.path());
    }
}

// ---------------------------------------------------------------------------------------
// Lock files.

/// A user's file at the lock file's name (`.out.lock`) is neither truncated nor deleted; a
/// FIFO there is not deleted; a folder, a link or a socket there is named, not `--out`: each
/// is exit 2, before any work.
#[test]
fn anything_but_a_lock_file_at_the_lock_name_is_kept_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let out = dir.path().join("out");
    let at = dir.path().join(".out.lock");
    for form in [
        Form::UsersFile,
        Form::Fifo,
        Form::Folder,
        Form::LinkToUsersFile,
        Form::DanglingLink,
        Form::Socket,
    ] {
        let _socket = plant(form, &at, dir.path());
        let run = bundle(&wheel, &out);
        assert_exit(&run, 2, &[".out.lock", "not a lock file of this tool"]);
        still_there(form, &at, dir.path());
        assert!(!out.exists(), "{form:?}: the bundle was written anyway");
        remove(&at);
    }
    // A lock file a killed run left (its holder's line, or empty) is this tool's.
    for left in ["pid 999999999: xtask bundle\n", ""] {
        fs::write(&at, left).unwrap();
        assert_exit(&bundle(&wheel, &out), 0, &[]);
        assert!(!at.exists(), "a killed run's lock file is removed");
    }
}

/// A run that fails after taking its lock leaves none of the folders made for the lock
/// (`release` into `target/new/deeper/4.7.1` with a build missing; `bundle` of a damaged
/// wheel into `a/b/out`).
#[test]
fn a_failing_run_leaves_no_folder_its_lock_made() {
    let scratch = Scratch::new();
    crate::release::fake_build(&scratch, "3.12");
    let out = scratch.path().join("target/new/deeper/4.7.1");
    let run = crate::release::release(&scratch, &out, "3.11,3.12");
    assert_exit(&run, 1, &["no artifacts"]);
    assert!(
        !scratch.path().join("target/new").exists(),
        "the lock's folders were left"
    );

    let dir = tempfile::tempdir().unwrap();
    let wheel = dir
        .path()
        .join("ctranslate2-4.7.1-cp312-cp312-manylinux_2_28_x86_64.whl");
    fs::write(&wheel, "not a zip").unwrap();
    let run = bundle(&wheel, &dir.path().join("a/b/out"));
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        !dir.path().join("a").exists(),
        "the lock's folders were left"
    );
}

// ---------------------------------------------------------------------------------------
// Leftovers deleted marker last.

/// A run killed while it deletes a leftover folder of a dead run leaves it still marked, so
/// that the run after removes it: the marker goes last. The leftover holds a folder of many
/// files that the listing gives after the marker, and the run is killed once half of them
/// are gone.
#[test]
fn a_run_killed_while_deleting_a_leftover_leaves_it_marked_for_the_next() {
    const FILES: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let wheel = common::wheel::linux_wheel(dir.path(), &[]);
    let out = dir.path().join("out");
    let leftover = dir.path().join(".out.old-999999999");
    fs::create_dir_all(&leftover).unwrap();
    ct2v_support::staging::mark(&leftover).unwrap();
    let bulk = (0..)
        .map(|i| leftover.join(format!("bulk{i}")))
        .find(|bulk| {
            fs::create_dir(bulk).unwrap();
            let order: Vec<_> = fs::read_dir(&leftover)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            let after_marker = order.iter().position(|n| n == MARKER)
                < order
                    .iter()
                    .position(|n| Some(n.as_os_str()) == bulk.file_name());
            if !after_marker {
                fs::remove_dir(bulk).unwrap();
            }
            after_marker
        })
        .unwrap();
    for i in 0..FILES {
        fs::write(bulk.join(format!("f{i}")), "").unwrap();
    }
    let args = common::command_args::bundle(&wheel, &out, &[]);
    let mut child = common::xtask_command(&repo_root(), &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let left = fs::read_dir(&bulk).map_or(0, Iterator::count);
        if left < FILES / 2 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "ran to its end unkilled"
        );
        assert!(started.elapsed() < DEADLINE, "the sweep never started");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        bulk.is_dir(),
        "killed after the deletion: nothing was tested"
    );
    assert!(
        leftover.join(MARKER).is_file(),
        "killed while deleting it, the leftover lost its marker first"
    );
    let run = bundle(&wheel, &out);
    assert_exit(&run, 0, &[".out.old-999999999"]);
    assert!(!leftover.exists(), "the next run did not remove it");
}

/// `pages` killed after it renamed its site into place leaves its lock file and its staging
/// folder: the rerun with the same flags finds the very site it writes (byte for byte), keeps
/// it, exits 0 and removes both. A site that differs (one byte, a file more) is still refused,
/// exit 2, untouched.
#[test]
fn pages_killed_after_its_rename_is_rerun_to_the_same_site_and_leaves_nothing() {
    let scratch = Scratch::new();
    let rel = scratch.path().join("rel");
    crate::release::fake_build(&scratch, "3.12");
    assert_exit(&crate::release::release(&scratch, &rel, "3.12"), 0, &[]);
    let sites = scratch.path().join("sites");
    let site = sites.join("site");
    let args = [
        "pages",
        "--release",
        rel.to_str().unwrap(),
        "--tag",
        "v4.7.1",
        "--download-base",
        "https://github.com/o/r/releases/download/",
        "--out",
        site.to_str().unwrap(),
    ];
    assert_exit(&bounded_in(scratch.path(), &args), 0, &[]);
    let clean = crate::owned_outputs::contents(&site);
    // What a run killed right after its rename leaves beside the site.
    fs::write(sites.join(".site.lock"), "pid 999999999: xtask pages\n").unwrap();
    let staging = sites.join(".pages-999999999-k1ll3d");
    fs::create_dir_all(&staging).unwrap();
    ct2v_support::staging::mark(&staging).unwrap();
    let rerun = bounded_in(scratch.path(), &args);
    assert_exit(&rerun, 0, &["already holds this output"]);
    assert_eq!(crate::owned_outputs::contents(&site), clean);
    let left: Vec<_> = fs::read_dir(&sites)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["site"], "left beside the site");

    let index = site.join("index.html");
    let mut edited = fs::read(&index).unwrap();
    edited[0] ^= 1;
    fs::write(&index, &edited).unwrap();
    assert_exit(&bounded_in(scratch.path(), &args), 2, &["is not empty"]);
    assert_eq!(fs::read(&index).unwrap(), edited);
    edited[0] ^= 1;
    fs::write(&index, &edited).unwrap();
    fs::write(site.join("mine.txt"), "mine").unwrap();
    assert_exit(&bounded_in(scratch.path(), &args), 2, &["is not empty"]);
    assert!(site.join("mine.txt").is_file());
}

// ---------------------------------------------------------------------------------------
// The one primitive.

/// Every file the workspace's code writes is opened by `ct2v_support::regular_file` (never
/// through a link, never onto a FIFO or device): no `fs::write`, `File::create`, `fs::copy`
/// or `OpenOptions` outside it, in code that is not a test.
#[test]
fn every_file_written_goes_through_the_regular_file_primitive() {
    const PRIMITIVE: &str = "crates/support/src/regular_file.rs";
    const CALLS: [&str; 5] = [
        "fs::write(",
        "File::create(",
        "fs::copy(",
        "OpenOptions::new()",
        "File::options()",
    ];
    let found: Vec<String> = common::source_scan::code_lines(&["crates", "xtask/src"])
        .into_iter()
        .filter(|line| line.file != PRIMITIVE && CALLS.iter().any(|c| line.text.contains(c)))
        .map(|line| format!("{}:{}: {}", line.file, line.number, line.text.trim_start()))
        .collect();
    assert!(
        found.is_empty(),
        "files written without ct2v_support::regular_file:\n{}",
        found.join("\n")
    );
}
