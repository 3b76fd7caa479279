//! File-name globs: `*` matches any run of characters, `?` one character.

pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Classic two-pointer match with backtracking to the last `*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("amd_comgr*.dll", "amd_comgr0702.dll"));
        assert!(matches("_ext*.pyd", "_ext.cp312-win_amd64.pyd"));
        assert!(matches("*", ""));
        assert!(matches("a?c", "abc"));
        assert!(!matches("hiprtc*.dll", "hiprtc0702.dll.bak"));
        assert!(!matches("a*b", "ac"));
    }
}
