//! The GitHub Actions workflows as text: what actionlint (in `.ci/run`) does not check.

use crate::common;

/// Issue 29 item 8: no step hides a failing command as `echo "x=$(cmd)"`: `bash -e` (the
/// default shell of a `run:` step) does not stop when a command substitution inside another
/// command's arguments fails, so the output would be set to an empty value and the job go on.
#[test]
fn no_workflow_step_hides_a_failing_command_substitution() {
    let dir = common::repo_root().join(".github/workflows");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let command = line.trim_start().trim_start_matches("run:").trim_start();
            if command.starts_with("echo ") && command.contains("$(") {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "assign the substitution to a variable first, then echo it:\n{}",
        found.join("\n")
    );
}
