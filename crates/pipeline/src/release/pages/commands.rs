//! The install commands of the front page, written once for every shell a reader pastes them
//! into: sh, bash and zsh (Linux, macOS, Git Bash), cmd.exe and PowerShell (Windows). Each
//! value (the index URL, the requirement) is written in double quotes and holds only
//! characters that none of those shells reads inside double quotes, so the program gets
//! exactly the value, whichever shell runs the line:
//!
//! - sh, bash, zsh: inside double quotes `$`, `` ` ``, `\` and `"` are read (POSIX.1-2017,
//!   Shell Command Language, 2.2.3 Double-Quotes), and an interactive bash or zsh expands
//!   history with `!` (bash(1), HISTORY EXPANSION: double quotes do not stop it);
//! - cmd.exe: `%VAR%` is expanded inside double quotes, `!VAR!` too with delayed expansion,
//!   and `"` ends the quotes (cmd /?, set /?); the C runtime that splits the program's
//!   command line reads `\"` as a quote (Microsoft, "Parsing C command-line arguments");
//! - PowerShell: inside double quotes `$` and `` ` `` are read, and so are the typographic
//!   quotes `“ ” „` (about_Quoting_Rules), so no character outside ASCII is taken.
//!
//! So a value is letters, digits and `-._~:/+=@,[]`; anything else is refused, never written
//! into a command.

use ct2v_support::diagnostic::InputError;
use ct2v_support::text_rules::{Refusal, refused};

/// Characters other than ASCII letters and digits that no shell reads inside double quotes.
const INERT: &str = "-._~:/+=@,[]";

/// The shells a command of the page is written for, as the page says it.
pub(super) const SHELLS: &str = "sh, bash, zsh, cmd.exe and PowerShell";

/// `value` in double quotes, when no shell reads any of its characters there.
pub(super) fn quoted_value(value: &str) -> Result<String, Refusal> {
    if value.is_empty() {
        return Err(Refusal {
            why: "it is empty".into(),
            instead: INSTEAD,
        });
    }
    match value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || INERT.contains(*c)))
    {
        Some(c) => Err(Refusal {
            why: format!(
                "it has `{}`, which a shell reads in a pasted command ({SHELLS} are written for)",
                c.escape_default()
            ),
            instead: INSTEAD,
        }),
        None => Ok(format!("\"{value}\"")),
    }
}

const INSTEAD: &str = "a value of letters, digits and `-._~:/+=@,[]` (a URL without `%`, a \
                       version without an epoch `!`)";

/// [`quoted_value`], refused as bad input naming `what` (where the value came from).
pub(super) fn quoted(what: &str, value: &str) -> Result<String, InputError> {
    quoted_value(value).map_err(|refusal| refused(what, value, &refusal))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_values_no_shell_reads_are_quoted_and_the_rest_refused() {
        assert_eq!(
            quoted_value("https://o.github.io/r/whl/cpu").unwrap(),
            "\"https://o.github.io/r/whl/cpu\""
        );
        assert_eq!(
            quoted_value("ctranslate2==4.7.1+rocm10.rdna2").unwrap(),
            "\"ctranslate2==4.7.1+rocm10.rdna2\""
        );
        for bad in [
            "$(touch x)",
            "`touch x`",
            "a\"b",
            "a'b",
            "%PATH%",
            "1!4.7.1",
            "a\nb",
            "a b",
            "a\\b",
            "a;b",
            "a&b",
            "a|b",
            "a^b",
            "a<b",
            "“x”",
            "a\u{202e}b",
            "",
        ] {
            assert!(quoted_value(bad).is_err(), "{bad:?}");
        }
        let e = quoted("the requirement", "x==1!2").unwrap_err().to_string();
        assert!(
            e.starts_with("the requirement `x==1!2` is not allowed"),
            "{e}"
        );
        assert!(e.contains("`!`"), "{e}");
    }
}
