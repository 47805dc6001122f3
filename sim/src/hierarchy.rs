//! A Verilog design's module hierarchy, deduplicated by content, and cut into synthesis units.
//!
//! rust-hdl writes one Verilog module per *instance*: a 512-bit core has 1,178 modules, most of them
//! copies of a few dozen bodies under different names. [`Design::parse`] splits the source into
//! modules and finds their instantiations; [`Design::dedup`] renames every module, bottom-up, to
//! a hash of its body with its children already renamed, so that copies get the same name, and
//! counts how often each distinct body occurs in the instance tree; [`Dedup::units`] turns each
//! distinct module that has children into a self-contained synthesis unit (its leaf children
//! inlined, its other children as black boxes named by their interface), so that a resource
//! estimate can synthesize every distinct body once and sum by instance counts.
//!
//! The lexer knows enough Verilog for that: comments, strings, escaped and system identifiers,
//! based numbers. An instantiation is a known module's name followed by an identifier or `#`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use crate::cache::content_key;
use crate::error::{Result, SimError};

/// A token of Verilog source, as a byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A simple identifier (or keyword): `[A-Za-z_][A-Za-z0-9_$]*`.
    Ident,
    /// Everything else that matters: a comment is skipped, a number, string, escaped or system
    /// identifier or punctuation character is one token.
    Other,
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    span: Range<usize>,
}

/// Compiler directives whose arguments run to the end of the line.
const DIRECTIVES: [&str; 12] = [
    "timescale",
    "define",
    "undef",
    "ifdef",
    "ifndef",
    "elsif",
    "else",
    "endif",
    "include",
    "default_nettype",
    "resetall",
    "celldefine",
];

/// Splits `src` into tokens, dropping comments and white space.
fn lex(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(b.len());
            continue;
        }
        let kind = if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && ident_char(b[i]) {
                i += 1;
            }
            Kind::Ident
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            Kind::Other
        } else if c == b'\\' {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            Kind::Other
        } else if c == b'`' && DIRECTIVES.iter().any(|d| src[i + 1..].starts_with(d)) {
            // A compiler directive that takes the rest of its line.
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            Kind::Other
        } else if c.is_ascii_digit() || c == b'$' || c == b'`' {
            // A number (its digits, exponent or base letters included), a system task or
            // function, or a compiler directive: never a module name.
            i += 1;
            while i < b.len() && (ident_char(b[i]) || (c.is_ascii_digit() && b[i] == b'.')) {
                i += 1;
            }
            Kind::Other
        } else if c == b'\'' {
            // A based literal's base and digits: `'h3ffff`, `'sb1`, `'0`.
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'?') {
                i += 1;
            }
            Kind::Other
        } else {
            i += src[i..].chars().next().map_or(1, char::len_utf8);
            Kind::Other
        };
        out.push(Token { kind, span: start..i });
    }
    out
}

/// One module of a design.
#[derive(Debug, Clone)]
pub(crate) struct Module {
    /// Its name as written.
    pub name: String,
    /// Its text, from `module` to `endmodule` inclusive.
    text: String,
    /// The tokens of `text` (spans relative to it).
    tokens: Vec<Token>,
    /// The token index of the name in the header.
    name_token: usize,
    /// Instantiations: the token index of the instantiated module's name, that name, and the
    /// instance's name.
    instances: Vec<(usize, String, String)>,
}

/// A parsed design: its modules and whatever text lies outside them.
#[derive(Debug, Clone)]
pub(crate) struct Design {
    /// Text outside every module, comments dropped (directives such as `` `timescale ``).
    preamble: String,
    modules: Vec<Module>,
    index: HashMap<String, usize>,
}

impl Design {
    /// Splits `src` into modules and finds each one's instantiations of the others.
    pub fn parse(src: &str) -> Result<Design> {
        let tokens = lex(src);
        let text = |t: &Token| &src[t.span.clone()];
        let is = |t: &Token, s: &str| t.kind == Kind::Ident && text(t) == s;
        let mut preamble = String::new();
        let mut modules = Vec::new();
        let mut i = 0;
        let mut outside = 0;
        while i < tokens.len() {
            if !(is(&tokens[i], "module") || is(&tokens[i], "macromodule")) {
                i += 1;
                if i == tokens.len() && outside < i {
                    preamble.push_str(&render(src, &tokens[outside..i], &[]));
                }
                continue;
            }
            if outside < i {
                preamble.push_str(&render(src, &tokens[outside..i], &[]));
            }
            let name_tok = tokens
                .get(i + 1)
                .filter(|t| t.kind == Kind::Ident)
                .ok_or_else(|| SimError::Spec("a `module` without a name".into()))?;
            let name = text(name_tok).to_owned();
            let end = (i + 2..tokens.len())
                .find(|&j| is(&tokens[j], "endmodule"))
                .ok_or_else(|| SimError::Spec(format!("module `{name}` has no `endmodule`")))?;
            let base = tokens[i].span.start;
            let body: Vec<Token> = tokens[i..=end]
                .iter()
                .map(|t| Token { kind: t.kind, span: t.span.start - base..t.span.end - base })
                .collect();
            modules.push(Module {
                name,
                text: src[base..tokens[end].span.end].to_owned(),
                tokens: body,
                name_token: 1,
                instances: Vec::new(),
            });
            i = end + 1;
            outside = i;
        }
        let mut index = HashMap::new();
        for (k, m) in modules.iter().enumerate() {
            if index.insert(m.name.clone(), k).is_some() {
                return Err(SimError::Spec(format!("module `{}` is defined twice", m.name)));
            }
        }
        for m in &mut modules {
            let t = &m.tokens;
            for j in 2..t.len().saturating_sub(1) {
                let word = &m.text[t[j].span.clone()];
                if t[j].kind == Kind::Ident && index.contains_key(word) {
                    let next = &t[j + 1];
                    if next.kind == Kind::Ident || &m.text[next.span.clone()] == "#" {
                        let instance = instance_name(&m.text, t, j + 1).ok_or_else(|| {
                            SimError::Spec(format!("an instance of `{word}` in `{}` has no name", m.name))
                        })?;
                        m.instances.push((j, word.to_owned(), instance));
                    }
                }
            }
        }
        Ok(Design { preamble, modules, index })
    }

    /// The names of the modules, in source order.
    #[cfg(test)]
    pub fn module_names(&self) -> Vec<&str> {
        self.modules.iter().map(|m| m.name.as_str()).collect()
    }

    /// Renames every module below `top` to a hash of its body (see the module docs) and keeps one
    /// copy of each.
    pub fn dedup(&self, top: &str) -> Result<Dedup> {
        let &root = self.index.get(top).ok_or_else(|| SimError::Spec(format!("no module `{top}` in the design")))?;
        // Post-order over the instance graph from the top (iterative: hierarchies can be deep).
        let mut canon: Vec<Option<String>> = vec![None; self.modules.len()];
        let mut on_stack = vec![false; self.modules.len()];
        let mut stack = vec![(root, 0usize)];
        on_stack[root] = true;
        let mut modules = BTreeMap::new();
        while let Some(&mut (k, ref mut next)) = stack.last_mut() {
            let m = &self.modules[k];
            if let Some((_, child, _)) = m.instances.get(*next) {
                *next += 1;
                let c = self.index[child];
                if on_stack[c] {
                    return Err(SimError::Spec(format!("module `{child}` instantiates itself")));
                }
                if canon[c].is_none() {
                    on_stack[c] = true;
                    stack.push((c, 0));
                }
                continue;
            }
            stack.pop();
            on_stack[k] = false;
            let children: Vec<String> =
                m.instances.iter().map(|(_, c, _)| canon[self.index[c]].clone().expect("visited")).collect();
            let mut subst: Vec<(usize, &str)> = vec![(m.name_token, SELF)];
            subst.extend(m.instances.iter().zip(&children).map(|((j, _, _), c)| (*j, c.as_str())));
            let body = render(&m.text, &m.tokens, &subst);
            let name = format!("m_{}", content_key(&[self.preamble.as_bytes(), body.as_bytes()]));
            modules.entry(name.clone()).or_insert_with(|| CanonModule {
                body,
                children: children.clone(),
                instance_names: m.instances.iter().map(|(_, _, i)| i.clone()).collect(),
                originals: Vec::new(),
            });
            modules.get_mut(&name).expect("inserted").originals.push(m.name.clone());
            canon[k] = Some(name);
        }
        let top = canon[root].clone().expect("visited");
        // Instance counts, parents before children (reverse post-order of a DAG).
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        counts.insert(top.clone(), 1);
        for name in topological(&modules, &top) {
            let n = counts[&name];
            for child in &modules[&name].children {
                *counts.entry(child.clone()).or_default() += n;
            }
        }
        Ok(Dedup { preamble: self.preamble.clone(), top, modules, counts })
    }
}

/// The placeholder for a module's own name in its canonical body.
const SELF: &str = "__ecrt_self__";

/// `text`'s tokens (a contiguous run of them) with the tokens at the given indices replaced, and
/// the white space and comments between tokens normalized: none stays none, a gap with a line
/// break becomes one line break, any other gap one space.
fn render(text: &str, tokens: &[Token], subst: &[(usize, &str)]) -> String {
    let subst: HashMap<usize, &str> = subst.iter().copied().collect();
    let mut out = String::with_capacity(text.len());
    for (j, t) in tokens.iter().enumerate() {
        if j > 0 {
            let gap = &text[tokens[j - 1].span.end..t.span.start];
            if gap.contains('\n') {
                out.push('\n');
            } else if !gap.is_empty() {
                out.push(' ');
            }
        }
        out.push_str(subst.get(&j).copied().unwrap_or(&text[t.span.clone()]));
    }
    out.push('\n');
    out
}

/// The name of the instance whose module name is the token before `at`: the identifier there, or
/// after a `#( … )` parameter list. An escaped identifier loses its backslash, as in Yosys' names.
fn instance_name(text: &str, tokens: &[Token], mut at: usize) -> Option<String> {
    let word = |t: &Token| &text[t.span.clone()];
    if word(tokens.get(at)?) == "#" {
        at += 1;
        let mut depth = 0usize;
        loop {
            match word(tokens.get(at)?) {
                "(" => depth += 1,
                ")" => depth = depth.checked_sub(1)?,
                _ => {}
            }
            at += 1;
            if depth == 0 {
                break;
            }
        }
    }
    let t = tokens.get(at)?;
    let w = word(t);
    match t.kind {
        Kind::Ident => Some(w.to_owned()),
        Kind::Other if w.len() > 1 && w.starts_with('\\') => Some(w[1..].to_owned()),
        Kind::Other => None,
    }
}

/// The modules reachable from `top`, parents before children.
fn topological(modules: &BTreeMap<String, CanonModule>, top: &str) -> Vec<String> {
    let mut post = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![(top.to_owned(), 0usize)];
    seen.insert(top.to_owned());
    while let Some((name, next)) = stack.last_mut() {
        let children = &modules[name.as_str()].children;
        if let Some(c) = children.get(*next) {
            *next += 1;
            if seen.insert(c.clone()) {
                stack.push((c.clone(), 0));
            }
        } else {
            post.push(name.clone());
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// One distinct module body.
#[derive(Debug, Clone)]
pub(crate) struct CanonModule {
    /// The canonical text, its own name written as [`SELF`], its children by canonical name.
    body: String,
    /// The canonical names of the modules it instantiates, one per instance.
    pub children: Vec<String>,
    /// The instances' names, as `children` (part of the body, so the same in every copy).
    pub instance_names: Vec<String>,
    /// The names the body had in the source.
    pub originals: Vec<String>,
}

/// A design with one copy of each distinct module body.
#[derive(Debug, Clone)]
pub(crate) struct Dedup {
    preamble: String,
    /// The top module's canonical name.
    pub top: String,
    /// Distinct modules by canonical name.
    pub modules: BTreeMap<String, CanonModule>,
    /// How often each distinct module occurs in the instance tree below the top (the top: 1).
    pub counts: BTreeMap<String, u64>,
}

/// A self-contained piece of Verilog to synthesize on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The canonical name of the module it stands for.
    pub module: String,
    /// Copies of it in the design.
    pub count: u64,
    /// The Verilog: the module (named [`UNIT_TOP`]) and the leaf modules it instantiates.
    pub verilog: String,
    /// Black-box declarations of the other modules it instantiates (`read_verilog -lib`).
    pub blackboxes: String,
    /// The black boxes' module names, as cell types that are not the unit's own resources.
    pub blackbox_names: BTreeSet<String>,
}

/// The top module of every [`Unit`].
pub(crate) const UNIT_TOP: &str = "ecrt_unit";

impl Dedup {
    /// The whole deduplicated design as Verilog, the top module keeping the name `top_name`.
    #[cfg(test)]
    pub fn verilog(&self, top_name: &str) -> String {
        let mut out = self.preamble.clone();
        for (name, m) in &self.modules {
            let own = if *name == self.top { top_name } else { name };
            out.push_str(&m.body.replacen(SELF, own, 1));
        }
        out
    }

    /// The distinct modules below the top, the top first and every module before its children.
    pub fn parents_first(&self) -> Vec<String> {
        topological(&self.modules, &self.top)
    }

    /// One [`Unit`] per distinct module where `cut` cuts the hierarchy, and one for the top: each
    /// inlines the modules below it down to the next cuts (so flip-flop and memory wrappers end up
    /// next to the logic that uses them, as flattening would put them) and sees the modules at
    /// those cuts as black boxes.
    pub fn units(&self, cut: Cut) -> Vec<Unit> {
        let is_root = |name: &str| {
            let m = &self.modules[name];
            name == self.top || (!m.children.is_empty() && (cut == Cut::EveryParent || self.counts[name] > 1))
        };
        let mut units = Vec::new();
        for name in topological(&self.modules, &self.top) {
            if !is_root(&name) {
                continue;
            }
            let mut verilog = self.preamble.clone();
            let mut blackboxes = String::new();
            let mut blackbox_names = BTreeSet::new();
            let mut inlined = BTreeSet::from([name.clone()]);
            let mut queue = vec![name.clone()];
            while let Some(n) = queue.pop() {
                let m = &self.modules[&n];
                let mut renamed: HashMap<&str, String> = HashMap::new();
                for child in &m.children {
                    if is_root(child) {
                        if renamed.contains_key(child.as_str()) {
                            continue;
                        }
                        // Named by its interface, so that the unit does not change when only the
                        // child's contents do.
                        let stub = stub(&self.modules[child].body);
                        let bb = format!("bb_{}", content_key(&[stub.as_bytes()]));
                        if blackbox_names.insert(bb.clone()) {
                            blackboxes.push_str(&stub.replacen(SELF, &bb, 1));
                        }
                        renamed.insert(child, bb);
                    } else if inlined.insert(child.clone()) {
                        queue.push(child.clone());
                    }
                }
                let own = if n == name { UNIT_TOP } else { n.as_str() };
                let body = m.body.replacen(SELF, own, 1);
                verilog.push_str(&if renamed.is_empty() { body } else { replace_tokens(&body, &renamed) });
            }
            units.push(Unit { module: name.clone(), count: self.counts[&name], verilog, blackboxes, blackbox_names });
        }
        units
    }
}

/// Where [`Dedup::units`] cuts the hierarchy into units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// At every module that has children: the finest units.
    EveryParent,
    /// At modules that have children and occur more than once: the fewest boundaries that still
    /// synthesize each repeated block once. Not used: on the accelerator it moved the LUT count
    /// as far from the flat run's as `EveryParent` did (−10 % at 512 bits, +10 % at 1024), at
    /// the cost of bigger units.
    #[cfg_attr(not(test), allow(dead_code))]
    Repeated,
}

/// Replaces whole-token occurrences of identifiers in canonical text.
fn replace_tokens(text: &str, map: &HashMap<&str, String>) -> String {
    let tokens = lex(text);
    let subst: Vec<(usize, &str)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind == Kind::Ident)
        .filter_map(|(j, t)| map.get(&text[t.span.clone()]).map(|to| (j, to.as_str())))
        .collect();
    render(text, &tokens, &subst)
}

/// A module's interface: its header, its port, parameter and type declarations outside functions
/// and tasks, and `endmodule`.
fn stub(body: &str) -> String {
    let tokens = lex(body);
    let word = |t: &Token| &body[t.span.clone()];
    let mut runs: Vec<Range<usize>> = Vec::new();
    // The header: up to the first `;` outside parentheses.
    let mut depth = 0i32;
    let mut j = 0;
    while j < tokens.len() {
        let w = word(&tokens[j]);
        j += 1;
        match w {
            "(" => depth += 1,
            ")" => depth -= 1,
            ";" if depth == 0 => break,
            _ => {}
        }
    }
    runs.push(0..j);
    let mut in_sub = false;
    while j < tokens.len() {
        match word(&tokens[j]) {
            "function" | "task" => in_sub = true,
            "endfunction" | "endtask" => in_sub = false,
            "input" | "output" | "inout" | "parameter" | "localparam" if !in_sub => {
                let start = j;
                while j + 1 < tokens.len() && word(&tokens[j]) != ";" {
                    j += 1;
                }
                runs.push(start..j + 1);
            }
            _ => {}
        }
        j += 1;
    }
    let mut s: String = runs.into_iter().map(|r| render(body, &tokens[r], &[])).collect();
    s.push_str("endmodule\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"// Generated: do not edit.
`timescale 1ns/1ps
module top(clock, a, q);
    input wire clock;
    input wire [7:0] a;
    output reg [7:0] q; // the result
    wire [7:0] x;
    wire [7:0] y;
    /* two copies of the same pipeline, under different names */
    top$p0 p0(.clock(clock), .d(a), .q(x));
    top$p1 p1(.clock(clock), .d(x), .q(y));
    always @(*) q = y + 8'h1f;
endmodule // top

module top$p0(clock, d, q);
    input wire clock; input wire [7:0] d; output wire [7:0] q;
    wire [7:0] m;
    top$p0$r0 r0(.d(d), .q(m), .clock(clock));
    top$p0$r1 r1(.d(m), .q(q), .clock(clock));
endmodule // top$p0

module top$p1(clock, d, q);
    input wire clock; input wire [7:0] d; output wire [7:0] q;
    wire [7:0] m;
    top$p1$r0 r0(.d(d), .q(m), .clock(clock));
    top$p1$r1 r1(.d(m), .q(q), .clock(clock));
endmodule // top$p1

module top$p0$r0(d, q, clock);
    input wire [7:0] d; output reg [7:0] q; input wire clock;
    initial begin q = 8'h0; end
    always @(posedge clock) q <= d;
endmodule // top$p0$r0
module top$p0$r1(d, q, clock);
    input wire [7:0] d; output reg [7:0] q; input wire clock;
    initial begin q = 8'h0; end
    always @(posedge clock) q <= d;
endmodule
module top$p1$r0(d, q, clock);
    input wire [7:0] d; output reg [7:0] q; input wire clock;
    initial begin q = 8'h0; end
    always @(posedge clock) q <= d;
endmodule
module top$p1$r1(d, q, clock);
    input wire [7:0] d; output reg [7:0] q; input wire clock;
    initial begin q = 8'h0; end
    always @(posedge clock) $display("top$p0 x(", q); // not an instance
endmodule
"#;

    #[test]
    fn lexes_numbers_comments_and_strings() {
        let src = "a = 18'h3ffff + 32'sd5 /* top x( */ + \"top y(\" + \\esc$ape + $clog2(b) + 1.5e3; // top z(";
        let words: Vec<&str> = lex(src).iter().map(|t| &src[t.span.clone()]).collect();
        assert_eq!(
            words,
            [
                "a",
                "=",
                "18",
                "'h3ffff",
                "+",
                "32",
                "'sd5",
                "+",
                "\"top y(\"",
                "+",
                "\\esc$ape",
                "+",
                "$clog2",
                "(",
                "b",
                ")",
                "+",
                "1.5e3",
                ";"
            ]
        );
        assert!(lex(src).iter().filter(|t| t.kind == Kind::Ident).all(|t| matches!(&src[t.span.clone()], "a" | "b")));
    }

    #[test]
    fn splits_modules_and_finds_instances() {
        let d = Design::parse(SRC).unwrap();
        assert_eq!(d.module_names(), ["top", "top$p0", "top$p1", "top$p0$r0", "top$p0$r1", "top$p1$r0", "top$p1$r1"]);
        let insts =
            |n: &str| -> Vec<String> { d.modules[d.index[n]].instances.iter().map(|(_, c, _)| c.clone()).collect() };
        assert_eq!(insts("top"), ["top$p0", "top$p1"]);
        assert_eq!(insts("top$p1"), ["top$p1$r0", "top$p1$r1"]);
        assert!(insts("top$p1$r1").is_empty());
        let names: Vec<&str> = d.modules[d.index["top$p0"]].instances.iter().map(|(_, _, i)| i.as_str()).collect();
        assert_eq!(names, ["r0", "r1"]);
        let params = "module a(); b #(.W(8), .D((2))) \\u$1 (); b u2(); endmodule module b(); endmodule";
        let d2 = Design::parse(params).unwrap();
        let names: Vec<&str> = d2.modules[0].instances.iter().map(|(_, _, i)| i.as_str()).collect();
        assert_eq!(names, ["u$1", "u2"]);
        assert!(Design::parse("module a(); b #(1) ; endmodule module b(); endmodule").is_err());
        assert!(d.preamble.contains("`timescale 1ns/1ps"));
        assert!(Design::parse("module a(); endmodule module a(); endmodule").is_err());
        assert!(Design::parse("module a(); wire x;").is_err());
    }

    #[test]
    fn dedups_bottom_up() {
        let d = Design::parse(SRC).unwrap().dedup("top").unwrap();
        // r0 = r1 = p0's registers; p1$r1 differs (its $display), so p0 and p1 differ too.
        assert_eq!(d.modules.len(), 5);
        let reg = d.modules.iter().find(|(_, m)| m.originals.len() == 3).unwrap();
        assert_eq!(reg.1.originals, ["top$p0$r0", "top$p0$r1", "top$p1$r0"]);
        assert_eq!(d.counts[reg.0], 3);
        assert_eq!(d.counts[&d.top], 1);
        assert_eq!(d.modules[&d.top].originals, ["top"]);
        // The same body under another name, with other comments, hashes the same.
        let renamed = SRC.replace("top$p1$r1", "other_name").replace("// the result", "");
        let d2 = Design::parse(&renamed).unwrap().dedup("top").unwrap();
        assert_eq!(d2.top, d.top);
        // Two identical pipelines collapse to one body with two instances.
        let same = SRC.replace("$display(\"top$p0 x(\", q)", "q <= d");
        let d3 = Design::parse(&same).unwrap().dedup("top").unwrap();
        assert_eq!(d3.modules.len(), 3);
        let pipe = &d3.modules[&d3.top].children[0];
        assert_eq!(d3.modules[&d3.top].children, [pipe.clone(), pipe.clone()]);
        assert_eq!(d3.modules[&d3.top].instance_names, ["p0", "p1"]);
        assert_eq!(d3.parents_first()[..2], [d3.top.clone(), pipe.clone()]);
        assert_eq!(d3.counts[pipe], 2);
        assert_eq!(d3.counts.values().sum::<u64>(), 1 + 2 + 4);
        // The deduplicated design still parses, with the same hierarchy.
        let v = d3.verilog("top");
        let again = Design::parse(&v).unwrap().dedup("top").unwrap();
        assert_eq!(again.counts.values().copied().collect::<Vec<_>>(), d3.counts.values().copied().collect::<Vec<_>>());
        assert!(Design::parse(SRC).unwrap().dedup("nope").is_err());
        let cyclic = "module a(); b x(); endmodule module b(); a y(); endmodule";
        assert!(Design::parse(cyclic).unwrap().dedup("a").is_err());
    }

    #[test]
    fn cuts_units_at_modules_with_children() {
        let same = SRC.replace("$display(\"top$p0 x(\", q)", "q <= d");
        let d = Design::parse(&same).unwrap().dedup("top").unwrap();
        let units = d.units(Cut::EveryParent);
        assert_eq!(units.len(), 2);
        // Cut only at repeated blocks, the same here: the pipeline occurs twice.
        assert_eq!(d.units(Cut::Repeated), units);
        let (top, pipe) = (&units[0], &units[1]);
        assert_eq!((top.module.as_str(), top.count, pipe.count), (d.top.as_str(), 1, 2));
        // The pipeline inlines its register module once and has no black boxes.
        assert_eq!(pipe.verilog.matches("module ").count(), 2);
        assert!(pipe.verilog.contains(&format!("module {UNIT_TOP}")));
        assert!(pipe.blackboxes.is_empty());
        // The top sees the pipeline as a black box with its ports and nothing else.
        assert_eq!(top.blackbox_names.len(), 1);
        let bb = top.blackbox_names.iter().next().unwrap();
        assert_eq!(top.verilog.matches(bb.as_str()).count(), 2);
        assert!(top.blackboxes.starts_with(&format!("module {bb}(")));
        assert!(top.blackboxes.contains("output wire [7:0] q;"));
        assert!(!top.blackboxes.contains("wire [7:0] m"));
        // A change inside the pipeline leaves the top's unit as it was.
        let changed = same.replace("wire [7:0] m;", "wire [7:0] m; wire unused;");
        let d2 = Design::parse(&changed).unwrap().dedup("top").unwrap();
        let u2 = d2.units(Cut::EveryParent);
        assert_ne!(d2.top, d.top);
        assert_eq!(u2[0].verilog, top.verilog);
        assert_ne!(u2[1].verilog, pipe.verilog);
        // With two different pipelines, `Repeated` inlines both into the top.
        let d3 = Design::parse(SRC).unwrap().dedup("top").unwrap();
        assert_eq!(d3.units(Cut::EveryParent).len(), 3);
        let whole = d3.units(Cut::Repeated);
        assert_eq!(whole.len(), 1);
        assert!(whole[0].blackboxes.is_empty());
        assert_eq!(whole[0].verilog.matches("module ").count(), 5);
    }
}
