//! The JSON this tool writes for other programs to read, each with its schema version and the
//! page that documents it: the one place to look before changing one. docs/json-contracts.md
//! is the same list for readers; a test holds the two, and every `--help` naming a version,
//! to these constants. Bump a version on any change that could break a reader (a field
//! renamed or removed, a meaning changed); a new field comes without a bump.

/// One JSON contract.
pub struct Contract {
    /// What the docs call it.
    pub name: &'static str,
    /// The command that prints it, or the file it is written to and by what.
    pub written_by: &'static str,
    pub schema_version: u32,
    /// Whether the JSON carries `schema_version` itself (the matrix cannot: see [`MATRIX`]).
    pub carried: bool,
    /// The page documenting its fields.
    pub doc: &'static str,
    /// The commands whose `--help` names its version.
    pub help_of: &'static [&'static str],
}

/// `plan --json`, `build --dry-run --json`.
pub const PLAN: u32 = 2;
/// A release's `manifest.json`.
pub const MANIFEST: u32 = 1;
/// `variants --json`, a release's `variants.json`, the selector's data.
pub const VARIANTS: u32 = 1;
/// The bundle's `provenance.json`.
pub const PROVENANCE: u32 = 1;
/// `doctor --json`.
pub const DOCTOR: u32 = 1;
/// `build-info.json` beside a build's artifacts.
pub const BUILD_INFO: u32 = 1;
/// `matrix --json`: GitHub Actions reads it as a job matrix, where every top-level key but
/// `include` and `exclude` would be one more axis, so the version is kept here and in its doc,
/// not in the JSON.
pub const MATRIX: u32 = 1;

pub const ALL: &[Contract] = &[
    Contract {
        name: "plan",
        written_by: "`plan --json`, `build --dry-run --json`",
        schema_version: PLAN,
        carried: true,
        doc: "docs/plan-json.md",
        help_of: &["plan"],
    },
    Contract {
        name: "manifest",
        written_by: "`release`: `manifest.json`",
        schema_version: MANIFEST,
        carried: true,
        doc: "docs/releases.md",
        help_of: &[],
    },
    Contract {
        name: "variants.json",
        written_by: "`variants --json`; `release`: `variants.json`",
        schema_version: VARIANTS,
        carried: true,
        doc: "docs/variants.md",
        help_of: &["variants"],
    },
    Contract {
        name: "provenance",
        written_by: "`bundle`, `build`: `provenance.json`",
        schema_version: PROVENANCE,
        carried: true,
        doc: "docs/bundling.md",
        help_of: &[],
    },
    Contract {
        name: "matrix",
        written_by: "`matrix --json`",
        schema_version: MATRIX,
        carried: false,
        doc: "docs/json-contracts.md",
        help_of: &[],
    },
    Contract {
        name: "doctor",
        written_by: "`doctor --json`",
        schema_version: DOCTOR,
        carried: true,
        doc: "docs/json-contracts.md",
        help_of: &[],
    },
    Contract {
        name: "build-info",
        written_by: "`build`: `build-info.json` beside the artifacts",
        schema_version: BUILD_INFO,
        carried: true,
        doc: "docs/json-contracts.md",
        help_of: &[],
    },
];
