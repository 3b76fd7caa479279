//! The card table: one row per GPU of the coverage, the builds that serve it (or `cpu`), in
//! words for the README's markdown and the Pages site's HTML.

use std::collections::BTreeMap;

use super::coverage::Coverage;
use ct2v_support::platform::Platform;

/// One row of the card table, in words: the README's markdown ([`markdown`]) and the Pages
/// site's HTML render the same rows.
pub(crate) struct CardRow {
    /// `NVIDIA Pascal: GTX 1080 Ti … 1050, Titan Xp`.
    pub gpu: String,
    /// `cc 6.1` or `gfx1030`.
    pub target: String,
    /// The variants that serve the card, in the order of its builds; empty: only `cpu`.
    pub served: Vec<ServedCell>,
}

/// One variant serving a card: its builds that do, and the platforms when not all.
pub(crate) struct ServedCell {
    pub variant: String,
    /// `(local version, through PTX)`.
    pub builds: Vec<(String, bool)>,
    /// `Windows` when the variant is released for fewer than every platform.
    pub only: Option<String>,
    /// AMD's status of the card's target per OS (`Windows`, "build passing only"), where less
    /// than release-ready.
    pub amd_status: Vec<(String, String)>,
}

/// How [`CardRow::served_text`] writes code (a variant, `+cu12`) and plain words.
pub(crate) struct Style {
    pub code: fn(&str) -> String,
    pub text: fn(&str) -> String,
}

impl CardRow {
    /// The "served by" cell: ``None`: `cpu` `` or `` `cuda` (`+cu12` through PTX) ``.
    pub(crate) fn served_text(&self, style: &Style) -> String {
        if self.served.is_empty() {
            return format!("{}{}", (style.text)("not served: "), (style.code)("cpu"));
        }
        let cells: Vec<String> = self
            .served
            .iter()
            .map(|cell| {
                let labels: Vec<String> = cell
                    .builds
                    .iter()
                    .map(|(local, ptx)| {
                        let label = (style.code)(&format!("+{local}"));
                        if *ptx { label + " through PTX" } else { label }
                    })
                    .collect();
                let only = match &cell.only {
                    Some(only) => format!(", {} only", (style.text)(only)),
                    None => String::new(),
                };
                // One clause per status, its OSes joined: "on Linux and Windows AMD lists…".
                let mut by_status: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for (os, status) in &cell.amd_status {
                    by_status.entry(status).or_default().push(os);
                }
                let status: String = by_status
                    .iter()
                    .map(|(status, oses)| {
                        let oses = oses.join(" and ");
                        (style.text)(&format!("; on {oses} AMD lists the target as {status}"))
                    })
                    .collect();
                format!(
                    "{} ({}{only}{status})",
                    (style.code)(&cell.variant),
                    labels.join(", ")
                )
            })
            .collect();
        cells.join("; ")
    }
}

/// The card table's rows: one per card of `coverage`.
pub(crate) fn card_rows(coverage: &Coverage) -> Vec<CardRow> {
    let all = Platform::names().len();
    let only = |variant: &str| {
        let platforms = coverage
            .variants
            .iter()
            .find(|v| v.name == variant)
            .map(|v| v.platforms.clone())
            .unwrap_or_default();
        (platforms.len() < all).then(|| {
            platforms
                .iter()
                .map(|p| os_word(p))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let mut rows = Vec::new();
    for card in &coverage.cards {
        let mut served: Vec<ServedCell> = Vec::new();
        for s in &card.served_by {
            let build = (s.local_version.clone(), s.how == "ptx");
            match served.iter_mut().find(|c| c.variant == s.variant) {
                Some(cell) => cell.builds.push(build),
                None => served.push(ServedCell {
                    variant: s.variant.clone(),
                    builds: vec![build],
                    only: only(&s.variant),
                    amd_status: s
                        .amd_status
                        .iter()
                        .map(|(p, status)| (os_word(p).to_string(), status.clone()))
                        .collect(),
                }),
            }
        }
        rows.push(CardRow {
            gpu: format!(
                "{} {}{}: {}",
                card.vendor,
                card.generation,
                if card.integrated { " (integrated)" } else { "" },
                card.products
            ),
            target: if card.vendor == "NVIDIA" {
                format!("cc {}", card.target)
            } else {
                card.target.clone()
            },
            served,
        });
    }
    rows
}

/// `Windows` for `windows-x86_64`.
fn os_word(platform: &str) -> &str {
    match platform.split('-').next().unwrap_or(platform) {
        "windows" => "Windows",
        "linux" => "Linux",
        other => other,
    }
}

/// The card table of the README: one row per card, the builds that serve it or `cpu`.
pub fn markdown(coverage: &Coverage) -> String {
    let style = Style {
        code: |t| format!("`{t}`"),
        text: str::to_string,
    };
    let mut out = String::from("| GPU | target | served by |\n|---|---|---|\n");
    for row in card_rows(coverage) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            row.gpu,
            row.target,
            row.served_text(&style)
        ));
    }
    out
}
