//! What an error message may quote of an input it could not parse. An input given by mistake may
//! be a private key file, whose one line holds p and q: a message quotes a short prefix at most.

/// The most characters of an unparsed input that a message quotes.
pub const QUOTED_CHARS: usize = 10;

/// At most [`QUOTED_CHARS`] characters of `text`, control characters escaped (a terminal would
/// act on them), then "…" if `text` had more.
pub fn redacted(text: &str) -> String {
    let mut quoted = printable(&text.chars().take(QUOTED_CHARS).collect::<String>(), "");
    if text.chars().nth(QUOTED_CHARS).is_some() {
        quoted.push('…');
    }
    quoted
}

/// `text` with its control characters escaped (but those in `kept`): text from a service, a
/// device or an input cannot move the cursor, recolour or clear the terminal it is printed on.
pub fn printable(text: &str, kept: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && !kept.contains(c) { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_a_short_escaped_prefix() {
        assert_eq!(redacted(""), "");
        assert_eq!(redacted("1.5e3"), "1.5e3");
        assert_eq!(redacted("0123456789"), "0123456789");
        assert_eq!(redacted("0123456789a"), "0123456789…");
        assert_eq!(redacted("{\"kty\": \"DAJ\", \"p\": \"sYbBdlQe6tiB\"}"), "{\"kty\": \"D…");
        assert_eq!(redacted("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(redacted("ééééééééééé"), "éééééééééé…");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("a\u{1b}[2Jb\r\n", ""), "a\\u{1b}[2Jb\\r\\n");
        assert_eq!(printable("# HELP x\nx 1\n", "\n"), "# HELP x\nx 1\n");
        assert_eq!(printable("ключ", ""), "ключ");
    }
}
