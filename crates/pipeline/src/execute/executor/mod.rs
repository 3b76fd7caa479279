//! The executor: runs a plan's steps in order, skipping a step whose fingerprint matches its
//! last successful run. A step that fails (or is interrupted) has no success record, so the
//! next run starts again from it. Every external command's output goes to the step's log.

mod state;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

pub use ct2v_support::process::run_logged;
pub(crate) use state::State;

use crate::plan::{Action, Plan, Step, StepId};
use ct2v_support::report::Reporter;

/// Does the work of one kind of step; the executor owns ordering, skipping and records.
pub trait Handler {
    /// Runs `step`; `log` is where external commands write their output.
    fn run(&mut self, plan: &Plan, step: &Step, log: &std::path::Path) -> Result<()>;

    /// Why `step` cannot run on this machine (e.g. it must run on the target platform), if
    /// so; the executor then leaves it out and says so.
    fn cannot_run(&self, _plan: &Plan, _step: &Step) -> Option<String> {
        None
    }

    /// Extra fingerprint input known only at run time (tool versions, file hashes).
    fn runtime_fingerprint(&mut self, _plan: &Plan, _step: &Step) -> Result<String> {
        Ok(String::new())
    }
}

#[derive(Debug, Default)]
pub(crate) struct RunReport {
    pub ran: Vec<StepId>,
    pub skipped: Vec<StepId>,
    /// Steps left out because they cannot run here, and why.
    pub(crate) not_run: Vec<(StepId, String)>,
    pub seconds: f64,
}

pub(crate) struct Executor<'a> {
    pub plan: &'a Plan,
    pub state: State,
    pub log_dir: PathBuf,
    /// Stop after the step with this id.
    pub until: Option<String>,
    /// The C++ library was built elsewhere: configure, build and install steps are not run,
    /// and their outputs must be there.
    pub prebuilt_native: bool,
}

impl<'a> Executor<'a> {
    pub(crate) fn new(plan: &'a Plan, state_dir: PathBuf, log_dir: PathBuf) -> Executor<'a> {
        Executor {
            plan,
            state: State::new(state_dir),
            log_dir,
            until: None,
            prebuilt_native: false,
        }
    }

    /// Runs every step in order with `handler`, saying one line per step through `reporter`.
    pub(crate) fn run(
        &mut self,
        handler: &mut dyn Handler,
        reporter: &Reporter,
    ) -> Result<RunReport> {
        let started = Instant::now();
        let mut report = RunReport::default();
        let total = self.plan.steps.len();
        let mut upstream_ran = std::collections::BTreeSet::new();
        let last = match &self.until {
            Some(until) => self
                .plan
                .steps
                .iter()
                .position(|s| s.id == until.as_str())
                .with_context(|| format!("--until {until}: the plan has no such step"))?,
            None => total.saturating_sub(1),
        };
        for (n, step) in self.plan.steps.iter().enumerate().take(last + 1) {
            if self.prebuilt_native && is_native(&step.action) {
                prebuilt(step)?;
                reporter.say(format_args!(
                    "[{}/{total}] {} — built by another run (--prebuilt-native)",
                    n + 1,
                    step.id
                ));
                report.skipped.push(step.id.clone());
                continue;
            }
            if let Some(why) = handler.cannot_run(self.plan, step) {
                reporter.say(format_args!(
                    "[{}/{total}] {} — not run here: {why}",
                    n + 1,
                    step.id
                ));
                report.not_run.push((step.id.clone(), why));
                continue;
            }
            let extra = handler.runtime_fingerprint(self.plan, step)?;
            let fingerprint = format!("{}:{extra}", step.fingerprint);
            let after_reran = step.after.iter().any(|a| upstream_ran.contains(a));
            // Done before, unchanged, and what it made is still there.
            let outputs_exist = step
                .outputs
                .iter()
                .all(|o| std::path::Path::new(o).exists());
            if !after_reran && outputs_exist && self.state.is_done(step.id.as_str(), &fingerprint) {
                reporter.say(format_args!("[{}/{total}] {} — up to date", n + 1, step.id));
                report.skipped.push(step.id.clone());
                continue;
            }
            self.state.forget(step.id.as_str())?;
            let log = self.log_dir.join(format!("{}.log", step.id));
            std::fs::create_dir_all(&self.log_dir)?;
            // Each run of a step starts its log afresh.
            ct2v_support::fsx::write(&log, "")?;
            reporter.say(format_args!(
                "[{}/{total}] {} — {}",
                n + 1,
                step.id,
                step.description
            ));
            let step_started = Instant::now();
            if let Err(err) = handler.run(self.plan, step, &log) {
                bail!(
                    "step `{}` failed: {err:#}\n(full log: {})",
                    step.id,
                    log.display()
                );
            }
            reporter.say(format_args!(
                "[{}/{total}] {} — done in {:.1} s",
                n + 1,
                step.id,
                step_started.elapsed().as_secs_f64()
            ));
            // What the step depends on at run time as it is now that the step is done (a
            // fetch has put its inputs into the cache), so that the next run finds it done.
            let extra = handler.runtime_fingerprint(self.plan, step)?;
            self.state
                .record(step.id.as_str(), &format!("{}:{extra}", step.fingerprint))?;
            upstream_ran.insert(step.id.clone());
            report.ran.push(step.id.clone());
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }
}

/// The steps that compile the C++ library (oneDNN, CTranslate2): the same for every Python.
fn is_native(action: &Action) -> bool {
    matches!(
        action,
        Action::Configure { .. } | Action::Build { .. } | Action::Install { .. }
    )
}

/// A step `--prebuilt-native` does not run: what an install step would have made (the
/// prefix the wheel and the bundle read) must be there; the build folders need not be.
fn prebuilt(step: &Step) -> Result<()> {
    if !matches!(step.action, Action::Install { .. }) {
        return Ok(());
    }
    for output in &step.outputs {
        if !std::path::Path::new(output).exists() {
            bail!(
                "step `{}` was not run (--prebuilt-native), and its output {output} is not there: \
                 put the native job's artifact (the install prefixes) in place, or build without \
                 --prebuilt-native",
                step.id
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Action, CommandLine};

    fn plan(steps: Vec<Step>) -> Plan {
        Plan::of_steps(steps)
    }

    fn step(id: &'static str, after: &[&'static str], fingerprint: &str) -> Step {
        Step {
            id: id.into(),
            action: Action::Wheel,
            description: id.into(),
            after: after.iter().map(|&s| s.into()).collect(),
            inputs: vec![],
            commands: vec![CommandLine::new("true")],
            env: Default::default(),
            outputs: vec![],
            fingerprint: fingerprint.into(),
        }
    }

    struct Recorder {
        ran: Vec<String>,
        fail: Option<String>,
    }

    impl Handler for Recorder {
        fn run(&mut self, _: &Plan, step: &Step, _: &std::path::Path) -> Result<()> {
            self.ran.push(step.id.to_string());
            if self.fail.as_deref() == Some(step.id.as_str()) {
                bail!("boom");
            }
            Ok(())
        }
    }

    /// `a` configure, `b` build, `c` install (output `prefix`), `d` wheel.
    fn native_plan(prefix: &std::path::Path) -> Plan {
        let mut steps = vec![
            step("a", &[], "1"),
            step("b", &["a"], "2"),
            step("c", &["b"], "3"),
            step("d", &["c"], "4"),
        ];
        let component = || "ctranslate2".to_string();
        steps[0].action = Action::Configure {
            component: component(),
        };
        steps[1].action = Action::Build {
            component: component(),
        };
        steps[2].action = Action::Install {
            component: component(),
        };
        steps[2].outputs = vec![prefix.display().to_string()];
        steps[1].outputs = vec!["/nonexistent/build/folder".into()];
        plan(steps)
    }

    #[test]
    fn until_stops_after_the_step_and_prebuilt_native_runs_only_what_is_not_compiling() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("prefix");
        let p = native_plan(&prefix);
        let mut native = Executor::new(&p, dir.path().join("s1"), dir.path().join("l"));
        native.until = Some("c".into());
        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        native.run(&mut handler, &Reporter::captured()).unwrap();
        assert_eq!(handler.ran, ["a", "b", "c"]);

        // Another machine: no prefix yet, so the wheel job stops at the install step, naming
        // what is missing; with the prefix in place (the native job's artifact) only `d` runs.
        let mut wheel = Executor::new(&p, dir.path().join("s2"), dir.path().join("l"));
        wheel.prebuilt_native = true;
        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        let err = wheel
            .run(&mut handler, &Reporter::captured())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("step `c` was not run (--prebuilt-native)"),
            "{err}"
        );
        assert!(err.contains(&prefix.display().to_string()), "{err}");
        std::fs::create_dir_all(&prefix).unwrap();
        let report = wheel.run(&mut handler, &Reporter::captured()).unwrap();
        assert_eq!(handler.ran, ["d"]);
        assert_eq!(report.skipped, ["a", "b", "c"]);
    }

    #[test]
    fn skips_what_is_done_and_resumes_from_the_failed_step() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(vec![
            step("a", &[], "1"),
            step("b", &["a"], "2"),
            step("c", &["b"], "3"),
        ]);
        let mut exec = Executor::new(&p, dir.path().join("state"), dir.path().join("logs"));
        let mut handler = Recorder {
            ran: vec![],
            fail: Some("b".into()),
        };
        let err = exec
            .run(&mut handler, &Reporter::captured())
            .unwrap_err()
            .to_string();
        assert!(err.contains("step `b` failed: boom"), "{err}");
        assert!(err.contains("b.log"), "{err}");
        assert_eq!(handler.ran, ["a", "b"]);

        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        let reporter = Reporter::captured();
        let report = exec.run(&mut handler, &reporter).unwrap();
        assert_eq!(handler.ran, ["b", "c"], "a is up to date; b is rerun");
        assert_eq!(report.skipped, ["a"]);
        let said = reporter.said();
        let lines: Vec<&str> = said.err.lines().collect();
        assert_eq!(
            lines[..2],
            ["[1/3] a — up to date", "[2/3] b — b"],
            "{lines:?}"
        );
        assert!(lines[2].starts_with("[2/3] b — done in "), "{lines:?}");
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(said.out.is_empty(), "the steps are progress, not a result");

        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        exec.run(&mut handler, &Reporter::captured()).unwrap();
        assert!(handler.ran.is_empty(), "nothing changed: nothing runs");
    }

    #[test]
    fn a_step_whose_output_is_gone_runs_again() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("made");
        std::fs::write(&made, "x").unwrap();
        let mut a = step("a", &[], "1");
        a.outputs = vec![made.display().to_string()];
        let p = plan(vec![a, step("b", &["a"], "2")]);
        let mut exec = Executor::new(&p, dir.path().join("s"), dir.path().join("l"));
        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        exec.run(&mut handler, &Reporter::captured()).unwrap();
        std::fs::remove_file(&made).unwrap();
        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        exec.run(&mut handler, &Reporter::captured()).unwrap();
        assert_eq!(handler.ran, ["a", "b"]);
    }

    #[test]
    fn a_changed_fingerprint_reruns_the_step_and_what_comes_after() {
        let dir = tempfile::tempdir().unwrap();
        let first = plan(vec![step("a", &[], "1"), step("b", &["a"], "2")]);
        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        Executor::new(&first, dir.path().join("s"), dir.path().join("l"))
            .run(&mut handler, &Reporter::captured())
            .unwrap();
        let second = plan(vec![step("a", &[], "1-changed"), step("b", &["a"], "2")]);
        let mut handler = Recorder {
            ran: vec![],
            fail: None,
        };
        Executor::new(&second, dir.path().join("s"), dir.path().join("l"))
            .run(&mut handler, &Reporter::captured())
            .unwrap();
        assert_eq!(handler.ran, ["a", "b"]);
    }
}
