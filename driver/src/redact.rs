//! What an error message may quote of an input it could not parse. An input given by mistake may
//! be a private key file, whose one line holds p and q: a message quotes a short prefix at most.

/// The most characters of an unparsed input that a message quotes.
pub const QUOTED_CHARS: usize = 10;

/// At most [`QUOTED_CHARS`] characters of `text`, control characters escaped (a terminal would
/// act on them), then "…" if `text` had more.
pub fn redacted(text: &str) -> String {
    let mut quoted = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == QUOTED_CHARS {
            quoted.push('…');
            break;
        }
        if c.is_control() {
            quoted.extend(c.escape_default());
        } else {
            quoted.push(c);
        }
    }
    quoted
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
}
