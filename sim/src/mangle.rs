//! Verilator's mapping from Verilog identifiers to C++ member names.
//!
//! Verilator (`AstNode::encodeName`, `V3Name`) keeps letters, digits and single underscores, writes
//! every other character as `__0HH` (its hex code: `a$b` → `a__024b`), writes the second `_` of a
//! `__` pair as `__05F` (`q__r` → `q___05Fr`), and prefixes names that are C++ keywords or common
//! C++ words with `__SYM__` (`template` → `__SYM__template`). The harness checks the result against
//! the generated `Vtop.h`, so a mismatch with a future Verilator shows up as a clear build error.

/// The C++ member name Verilator gives to a top-level port named `name`.
pub fn cpp_port_name(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(name.len() + 8);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let keep = if i == 0 { c.is_ascii_alphabetic() } else { c.is_ascii_alphanumeric() };
        if keep {
            out.push(c as char);
        } else if c == b'_' {
            if bytes.get(i + 1) == Some(&b'_') {
                out.push_str("___05F");
                i += 1;
            } else {
                out.push('_');
            }
        } else {
            out.push_str(&format!("__0{c:02x}"));
        }
        i += 1;
    }
    if CPP_WORDS.binary_search(&out.as_str()).is_ok() {
        out.insert_str(0, "__SYM__");
    }
    out
}

/// Words Verilator renames with `__SYM__` (V3LanguageWords: C++ keywords, common C++ and SystemC
/// names). Sorted for binary search.
const CPP_WORDS: &[&str] = &[
    "NULL",
    "abort",
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "atomic_cancel",
    "atomic_commit",
    "atomic_noexcept",
    "auto",
    "bit_vector",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "cdecl",
    "char",
    "char16_t",
    "char32_t",
    "char8_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "complex",
    "concept",
    "const",
    "const_cast",
    "const_iterator",
    "consteval",
    "constexpr",
    "constinit",
    "continue",
    "decltype",
    "default",
    "delete",
    "deque",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "far",
    "float",
    "for",
    "friend",
    "goto",
    "huge",
    "if",
    "import",
    "inline",
    "int",
    "interrupt",
    "iterator",
    "list",
    "long",
    "map",
    "module",
    "mutable",
    "namespace",
    "near",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "override",
    "pascal",
    "private",
    "protected",
    "public",
    "queue",
    "reference",
    "reflexpr",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "sc_clock",
    "sc_in",
    "sc_inout",
    "sc_out",
    "sc_signal",
    "sensitive",
    "sensitive_neg",
    "sensitive_pos",
    "set",
    "short",
    "signed",
    "sizeof",
    "stack",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "synchronized",
    "template",
    "this",
    "thread_local",
    "throw",
    "transaction_safe",
    "transaction_safe_dynamic",
    "true",
    "try",
    "type_info",
    "typedef",
    "typeid",
    "typename",
    "uint16_t",
    "uint32_t",
    "uint8_t",
    "union",
    "unsigned",
    "using",
    "vector",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_sorted() {
        assert!(CPP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn encodings() {
        assert_eq!(cpp_port_name("clock"), "clock");
        assert_eq!(cpp_port_name("data_in"), "data_in");
        assert_eq!(cpp_port_name("x$y"), "x__024y");
        assert_eq!(cpp_port_name("q__r"), "q___05Fr");
        assert_eq!(cpp_port_name("template"), "__SYM__template");
        assert_eq!(cpp_port_name("a.b"), "a__02eb");
        assert_eq!(cpp_port_name("_x"), "_x");
        assert_eq!(cpp_port_name("1c"), "__031c");
        assert_eq!(cpp_port_name("p___q"), "p___05F_q");
        assert_eq!(cpp_port_name("q__r_"), "q___05Fr_");
        assert_eq!(cpp_port_name("register"), "__SYM__register");
    }
}
