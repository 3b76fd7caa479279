//! The answers of GitHub's REST API that the loopback GitHubs serve.

/// The body of the contents API's answer for a file holding `text` (base64, as GitHub sends it).
pub fn file_answer(text: &str) -> String {
    format!(
        "{{\"type\": \"file\", \"encoding\": \"base64\", \"content\": \"{}\"}}",
        base64(text.as_bytes())
    )
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
