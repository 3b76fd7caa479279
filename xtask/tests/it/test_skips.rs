//! A test whose tool is missing fails under `CI=true`, and elsewhere is
//! counted in the run-wide list of skipped checks instead of passing silently.

use crate::common;

use common::skip;

#[test]
fn under_ci_a_missing_tool_fails_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("skipped.txt");
    let outcome = std::panic::catch_unwind(|| {
        skip::missing_in("no-such-tool", "apt-get install it", true, &record)
    });
    let message = outcome.unwrap_err();
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("CI=true") && text.contains("no-such-tool"),
        "{text}"
    );
    assert!(!record.exists(), "a failure is not a skip");
}

#[test]
fn elsewhere_a_skip_is_recorded_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("skipped.txt");
    assert!(skip::missing_in(
        "no-such-tool",
        "apt-get install it",
        false,
        &record
    ));
    assert!(skip::missing_in(
        "wine",
        "apt-get install wine",
        false,
        &record
    ));
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("no-such-tool is not installed (apt-get install it)"));
    assert!(
        text.contains("elsewhere_a_skip_is_recorded_with_its_reason"),
        "{text}"
    );
}
