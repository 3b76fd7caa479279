//! Word error rate of a transcript against its reference: (substitutions + deletions +
//! insertions) / reference words, over words compared case- and punctuation-insensitively
//! (the normalisation is deliberately simpler than Whisper's English normaliser: the check
//! is one known sentence, where only letters, digits and apostrophes matter).

/// The words of `text`: lower-cased, split on anything that is not a letter, a digit or an
/// apostrophe.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.replace('’', "'").to_lowercase())
        .collect()
}

/// The word-level edit distance between `reference` and `hypothesis`, divided by the number
/// of reference words (1.0 for an empty reference unless the hypothesis is empty too).
pub(crate) fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let reference = words(reference);
    let hypothesis = words(hypothesis);
    if reference.is_empty() {
        return if hypothesis.is_empty() { 0.0 } else { 1.0 };
    }
    strsim::generic_levenshtein(&reference, &hypothesis) as f64 / reference.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const JFK: &str = "And so my fellow Americans, ask not what your country can do for you, \
                       ask what you can do for your country.";

    #[test]
    fn case_and_punctuation_do_not_count() {
        assert_eq!(
            word_error_rate(
                JFK,
                "and so my fellow americans ask not what your country can do for you ask what you can do for your country"
            ),
            0.0
        );
        assert_eq!(words("Don’t stop—now!"), ["don't", "stop", "now"]);
    }

    #[test]
    fn substitutions_deletions_and_insertions_each_count_once() {
        // 22 reference words.
        assert_eq!(words(JFK).len(), 22);
        let substituted = JFK.replace("fellow", "yellow");
        assert!((word_error_rate(JFK, &substituted) - 1.0 / 22.0).abs() < 1e-12);
        let deleted = JFK.replace("And so ", "");
        assert!((word_error_rate(JFK, &deleted) - 2.0 / 22.0).abs() < 1e-12);
        let inserted = format!("{JFK} thank you");
        assert!((word_error_rate(JFK, &inserted) - 2.0 / 22.0).abs() < 1e-12);
    }

    #[test]
    fn an_empty_or_unrelated_transcript_is_a_total_error() {
        assert_eq!(word_error_rate(JFK, ""), 1.0);
        assert!(word_error_rate(JFK, "the quick brown fox") >= 1.0 - 1e-12);
        assert_eq!(word_error_rate("", ""), 0.0);
        assert_eq!(word_error_rate("", "words"), 1.0);
    }
}
