//! Ports of a top module: the types, and a parser that reads them from the Verilog text.
//!
//! The parser understands what generators and people write for synthesizable modules:
//!
//! * non-ANSI port lists, as rust-hdl emits them: `module top(clock,a,b);` followed by
//!   `input wire clock; input wire [16:0] a; output reg [33:0] b;` (also `input [N:0] x`,
//!   several names per declaration, `signed`, and a range given on a later `reg`/`wire` declaration);
//! * ANSI port lists: `module top(input wire clock, input [7:0] a, b, output reg [8:0] s);`;
//! * ranges that are constant expressions over integers and the module's parameters
//!   (`[W-1:0]`, `[2*W:0]`, `[$clog2(N)-1:0]`), including parameters from a `#(...)` header.
//!
//! Comments, attributes `(* ... *)`, strings, compiler directives and the bodies of functions and
//! tasks (whose `input` declarations are not ports) are skipped. Unpacked-array ports, `inout`
//! ports and macro-valued ranges are reported as errors rather than guessed.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};

/// Direction of a top-level port, seen from the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PortDir {
    /// Driven by the harness (`input`).
    Input,
    /// Read by the harness (`output`).
    Output,
}

/// One top-level port: its Verilog name, width in bits and direction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Port {
    /// The Verilog identifier, as written (without the `\` of an escaped identifier).
    pub name: String,
    /// Width in bits (≥ 1).
    pub width: u32,
    /// Direction.
    pub dir: PortDir,
}

impl Port {
    /// An input port.
    pub fn input(name: impl Into<String>, width: u32) -> Self {
        Port { name: name.into(), width, dir: PortDir::Input }
    }

    /// An output port.
    pub fn output(name: impl Into<String>, width: u32) -> Self {
        Port { name: name.into(), width, dir: PortDir::Output }
    }

    /// Number of 32-bit words that hold a value of this port.
    pub fn words(&self) -> usize {
        self.width.div_ceil(32) as usize
    }
}

/// Reads the ports of module `top` from Verilog source text, in the order of the module header.
///
/// ```
/// use ecrt_sim::{parse_ports, Port};
/// let v = "module top(clock,a,b);\n input wire clock;\n input wire [16:0] a;\n output reg [33:0] b;\n endmodule";
/// assert_eq!(
///     parse_ports(v, "top").unwrap(),
///     vec![Port::input("clock", 1), Port::input("a", 17), Port::output("b", 34)]
/// );
/// ```
pub fn parse_ports(verilog: &str, top: &str) -> Result<Vec<Port>> {
    let toks = tokenize(verilog)?;
    let start = find_module(&toks, top)?;
    ModuleParser::new(&toks, start, top).parse()
}

/// Names of all modules defined in the Verilog text, in order of appearance.
pub fn module_names(verilog: &str) -> Result<Vec<String>> {
    let toks = tokenize(verilog)?;
    Ok(toks
        .windows(2)
        .filter(|w| w[0].is_ident("module") || w[0].is_ident("macromodule"))
        .filter_map(|w| match &w[1].tok {
            Tok::Ident(n) => Some(n.clone()),
            _ => None,
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// Identifier or keyword (escaped identifiers without their backslash).
    Ident(String),
    /// System identifier such as `$clog2`.
    SysIdent(String),
    /// A number literal, as written.
    Num(String),
    /// A string literal (contents irrelevant).
    Str,
    /// One punctuation character.
    Sym(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

impl Token {
    fn is_ident(&self, s: &str) -> bool {
        matches!(&self.tok, Tok::Ident(n) if n == s)
    }
    fn is_sym(&self, c: char) -> bool {
        self.tok == Tok::Sym(c)
    }
    fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(n) => Some(n),
            _ => None,
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

fn tokenize(src: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = chars.len();
    while i < n {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if i + 1 < n && chars[i + 1] == '/' => {
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if i + 1 < n && chars[i + 1] == '*' => {
                let start_line = line;
                i += 2;
                loop {
                    if i + 1 >= n {
                        return Err(SimError::Parse(format!("unterminated comment starting on line {start_line}")));
                    }
                    if chars[i] == '*' && chars[i + 1] == '/' {
                        i += 2;
                        break;
                    }
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            // Attribute `(* ... *)`, but not `@(*)` / `@( * )`.
            '(' if i + 2 < n
                && chars[i + 1] == '*'
                && chars[i + 2] != ')'
                && !matches!(toks.last(), Some(Token { tok: Tok::Sym('@'), .. })) =>
            {
                i += 2;
                while i + 1 < n && !(chars[i] == '*' && chars[i + 1] == ')') {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
            }
            '"' => {
                i += 1;
                while i < n && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    if i < n && chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 1;
                toks.push(Token { tok: Tok::Str, line });
            }
            '`' => {
                // Compiler directive or macro use. Directives are skipped to the end of the line;
                // a macro use becomes an identifier that no expression can evaluate.
                let s = i;
                i += 1;
                while i < n && is_ident_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[s..i].iter().collect();
                const DIRECTIVES: &[&str] = &[
                    "`timescale",
                    "`define",
                    "`undef",
                    "`include",
                    "`ifdef",
                    "`ifndef",
                    "`else",
                    "`elsif",
                    "`endif",
                    "`default_nettype",
                    "`resetall",
                    "`celldefine",
                    "`endcelldefine",
                    "`line",
                    "`pragma",
                ];
                if DIRECTIVES.contains(&word.as_str()) {
                    while i < n && chars[i] != '\n' {
                        // A `define body may continue over escaped newlines.
                        if chars[i] == '\\' && i + 1 < n && chars[i + 1] == '\n' {
                            line += 1;
                            i += 1;
                        }
                        i += 1;
                    }
                } else {
                    toks.push(Token { tok: Tok::Ident(word), line });
                }
            }
            '\\' => {
                let s = i + 1;
                i += 1;
                while i < n && !chars[i].is_whitespace() {
                    i += 1;
                }
                toks.push(Token { tok: Tok::Ident(chars[s..i].iter().collect()), line });
            }
            '$' => {
                let s = i;
                i += 1;
                while i < n && is_ident_char(chars[i]) {
                    i += 1;
                }
                toks.push(Token { tok: Tok::SysIdent(chars[s..i].iter().collect()), line });
            }
            c if is_ident_start(c) => {
                let s = i;
                while i < n && is_ident_char(chars[i]) {
                    i += 1;
                }
                toks.push(Token { tok: Tok::Ident(chars[s..i].iter().collect()), line });
            }
            c if c.is_ascii_digit() || c == '\'' => {
                let s = i;
                while i < n && (chars[i].is_ascii_digit() || chars[i] == '_') {
                    i += 1;
                }
                // Based literal: 'h.., 8'hFF, 4'sb1010, 'd3, also unbased unsized '0 / '1.
                let mut j = i;
                while j < n && chars[j] == ' ' {
                    j += 1;
                }
                if j < n && chars[j] == '\'' {
                    i = j + 1;
                    if i < n && (chars[i] == 's' || chars[i] == 'S') {
                        i += 1;
                    }
                    if i < n && "bBoOdDhH".contains(chars[i]) {
                        i += 1;
                    }
                    while i < n && chars[i] == ' ' {
                        i += 1;
                    }
                    while i < n && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '?') {
                        i += 1;
                    }
                }
                let text: String = chars[s..i].iter().filter(|c| **c != ' ').collect();
                toks.push(Token { tok: Tok::Num(text), line });
            }
            c => {
                toks.push(Token { tok: Tok::Sym(c), line });
                i += 1;
            }
        }
    }
    Ok(toks)
}

fn find_module(toks: &[Token], top: &str) -> Result<usize> {
    for (i, w) in toks.windows(2).enumerate() {
        if (w[0].is_ident("module") || w[0].is_ident("macromodule")) && w[1].is_ident(top) {
            return Ok(i + 2);
        }
    }
    let names: Vec<String> = toks
        .windows(2)
        .filter(|w| w[0].is_ident("module") || w[0].is_ident("macromodule"))
        .filter_map(|w| w[1].ident().map(str::to_owned))
        .collect();
    Err(SimError::Parse(format!(
        "module `{top}` not found (modules in the source: {})",
        if names.is_empty() { "none".to_owned() } else { names.join(", ") }
    )))
}

// ---------------------------------------------------------------------------------------------
// Module header and body

const NET_TYPES: &[&str] =
    &["wire", "reg", "logic", "var", "tri", "tri0", "tri1", "wand", "wor", "uwire", "supply0", "supply1", "bit"];

struct Decl {
    dir: Option<PortDir>,
    /// Width from explicit packed ranges or an integer type; None if neither was given.
    width: Option<u32>,
    names: Vec<String>,
}

struct ModuleParser<'a> {
    toks: &'a [Token],
    pos: usize,
    top: &'a str,
    params: HashMap<String, i128>,
}

impl<'a> ModuleParser<'a> {
    fn new(toks: &'a [Token], pos: usize, top: &'a str) -> Self {
        ModuleParser { toks, pos, top, params: HashMap::new() }
    }

    fn err(&self, msg: impl std::fmt::Display) -> SimError {
        let line = self.toks.get(self.pos).or(self.toks.last()).map(|t| t.line).unwrap_or(0);
        SimError::Parse(format!("module `{}`, line {line}: {msg}", self.top))
    }

    fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.pos)
    }

    /// Returns the tokens up to (not including) the bracket that closes the one at `self.pos`, and
    /// moves past the closing bracket.
    fn bracketed(&mut self) -> Result<&'a [Token]> {
        let open = match self.peek() {
            Some(Token { tok: Tok::Sym(c @ ('(' | '[' | '{')), .. }) => *c,
            _ => return Err(self.err("expected an opening bracket")),
        };
        let start = self.pos + 1;
        let mut depth = 0usize;
        for i in self.pos..self.toks.len() {
            match self.toks[i].tok {
                Tok::Sym('(' | '[' | '{') => depth += 1,
                Tok::Sym(')' | ']' | '}') => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(&self.toks[start..i]);
                    }
                }
                _ => {}
            }
        }
        Err(self.err(format!("unbalanced `{open}`")))
    }

    fn parse(mut self) -> Result<Vec<Port>> {
        // Parameter port list.
        if self.peek().is_some_and(|t| t.is_sym('#')) {
            self.pos += 1;
            let inner = self.bracketed()?;
            for item in split_top(inner, ',') {
                self.param_assignment(item);
            }
        }
        // Port list.
        let mut header: Vec<String> = Vec::new();
        let mut ports: Vec<(String, Option<PortDir>, Option<u32>)> = Vec::new();
        if self.peek().is_some_and(|t| t.is_sym('(')) {
            let inner = self.bracketed()?;
            let items = split_top(inner, ',');
            let ansi =
                items.iter().any(|it| it.iter().any(|t| matches!(t.ident(), Some("input" | "output" | "inout"))));
            if ansi {
                let (mut dir, mut width) = (None, None);
                for item in items {
                    let d = self.decl(item)?;
                    if d.names.len() != 1 {
                        return Err(self.err("cannot read an ANSI port declaration"));
                    }
                    if d.dir.is_some() {
                        dir = d.dir;
                        width = d.width;
                    } else if d.width.is_some() {
                        width = d.width;
                    }
                    let name = d.names.into_iter().next().unwrap_or_default();
                    ports.push((name, dir, Some(width.unwrap_or(1))));
                }
            } else {
                for item in items.iter().filter(|it| !it.is_empty()) {
                    match item {
                        [t] if t.ident().is_some() => header.push(t.ident().unwrap_or_default().to_owned()),
                        _ => {
                            return Err(self.err(
                                "only plain identifiers are supported in a non-ANSI port list \
                                 (no `.name(expr)` or concatenations)",
                            ))
                        }
                    }
                }
                ports = header.iter().map(|n| (n.clone(), None, None)).collect();
            }
        }
        if !self.peek().is_some_and(|t| t.is_sym(';')) {
            return Err(self.err("expected `;` after the module header"));
        }
        self.pos += 1;
        self.body(&mut ports)?;
        let mut out = Vec::with_capacity(ports.len());
        for (name, dir, width) in ports {
            let dir = dir.ok_or_else(|| self.err(format!("port `{name}` has no input/output declaration")))?;
            out.push(Port { name, width: width.unwrap_or(1), dir });
        }
        Ok(out)
    }

    /// Walks the module body: records parameters and port declarations, skips functions and tasks.
    fn body(&mut self, ports: &mut [(String, Option<PortDir>, Option<u32>)]) -> Result<()> {
        // Ports whose width came from a port declaration with an explicit range.
        let mut explicit: Vec<bool> = ports.iter().map(|p| p.2.is_some()).collect();
        while let Some(t) = self.peek() {
            let Some(word) = t.ident() else {
                self.pos += 1;
                continue;
            };
            match word {
                "endmodule" => return Ok(()),
                "function" | "task" => {
                    let end = if word == "function" { "endfunction" } else { "endtask" };
                    while self.peek().is_some_and(|t| !t.is_ident(end)) {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                "parameter" | "localparam" => {
                    let stmt = self.statement();
                    for item in split_top(&stmt[1..], ',') {
                        self.param_assignment(item);
                    }
                }
                "input" | "output" | "inout" => {
                    let stmt = self.statement();
                    let d = self.decl(stmt)?;
                    for name in d.names {
                        let Some(i) = ports.iter().position(|p| p.0 == name) else {
                            return Err(self.err(format!("`{name}` is declared {word} but is not in the port list")));
                        };
                        ports[i].1 = d.dir;
                        if let Some(w) = d.width {
                            ports[i].2 = Some(w);
                            explicit[i] = true;
                        }
                    }
                }
                w if NET_TYPES.contains(&w) || w == "integer" => {
                    // `reg [7:0] y;` after `output y;`: the range may be given here.
                    let stmt = self.statement();
                    if let Ok(d) = self.decl(stmt) {
                        if let Some(wd) = d.width {
                            for name in d.names {
                                if let Some(i) = ports.iter().position(|p| p.0 == name) {
                                    if !explicit[i] {
                                        ports[i].2 = Some(wd);
                                    }
                                }
                            }
                        }
                    }
                }
                _ => self.pos += 1,
            }
        }
        Err(self.err("missing `endmodule`"))
    }

    /// The tokens from `self.pos` up to the next `;` at bracket depth 0; moves past the `;`.
    fn statement(&mut self) -> &'a [Token] {
        let start = self.pos;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t.tok {
                Tok::Sym('(' | '[' | '{') => depth += 1,
                Tok::Sym(')' | ']' | '}') => depth -= 1,
                Tok::Sym(';') if depth <= 0 => {
                    self.pos += 1;
                    return &self.toks[start..self.pos - 1];
                }
                _ => {}
            }
            self.pos += 1;
        }
        &self.toks[start..]
    }

    /// `[parameter|localparam] [type] [signed] [range] NAME = expr`: records NAME if expr evaluates.
    fn param_assignment(&mut self, item: &[Token]) {
        let Some(eq) = item.iter().position(|t| t.is_sym('=')) else { return };
        if eq == 0 {
            return;
        }
        if let Some(name) = item[eq - 1].ident() {
            if let Ok(v) = self.eval(&item[eq + 1..]) {
                self.params.insert(name.to_owned(), v);
            }
        }
    }

    /// Parses `[direction] [net type] [signed] [range]... name [= expr] {, name [= expr]}`.
    fn decl(&self, toks: &[Token]) -> Result<Decl> {
        let mut i = 0;
        let mut dir = None;
        if let Some(w) = toks.first().and_then(Token::ident) {
            dir = match w {
                "input" => Some(PortDir::Input),
                "output" => Some(PortDir::Output),
                "inout" => {
                    return Err(self.err(
                        "inout ports are not supported by the simulation harness \
                         (list the other ports in ModelSpec::ports by hand to simulate without them)",
                    ));
                }
                _ => None,
            };
            if dir.is_some() {
                i += 1;
            }
        }
        let mut width: Option<u32> = None;
        while let Some(t) = toks.get(i) {
            match t.ident() {
                Some(w) if NET_TYPES.contains(&w) || w == "signed" || w == "unsigned" => i += 1,
                Some("integer" | "int") => {
                    width = Some(32);
                    i += 1;
                }
                Some("byte") => {
                    width = Some(8);
                    i += 1;
                }
                Some("shortint") => {
                    width = Some(16);
                    i += 1;
                }
                Some("longint") => {
                    width = Some(64);
                    i += 1;
                }
                _ => break,
            }
        }
        // Packed dimensions.
        while toks.get(i).is_some_and(|t| t.is_sym('[')) {
            let mut sub = ModuleParser { toks, pos: i, top: self.top, params: HashMap::new() };
            let inner = sub.bracketed()?;
            i = sub.pos;
            let w = self.range_width(inner)?;
            width = Some(width.map_or(Some(w), |old| old.checked_mul(w)).ok_or_else(|| self.err("port too wide"))?);
        }
        // Names.
        let mut names = Vec::new();
        for item in split_top(&toks[i..], ',') {
            let Some(name) = item.first().and_then(Token::ident) else {
                return Err(self.err("expected a port name in a declaration"));
            };
            if item.get(1).is_some_and(|t| t.is_sym('[')) {
                return Err(
                    self.err(format!("port `{name}` is an unpacked array, which cannot be a top-level port here"))
                );
            }
            names.push(name.to_owned());
        }
        Ok(Decl { dir, width, names })
    }

    fn range_width(&self, inner: &[Token]) -> Result<u32> {
        let parts = split_top(inner, ':');
        let [msb, lsb] = parts.as_slice() else {
            return Err(self.err("expected a range `[msb:lsb]`"));
        };
        let (m, l) = (self.eval(msb)?, self.eval(lsb)?);
        u32::try_from((m - l).abs() + 1).map_err(|_| self.err("range too wide"))
    }

    fn eval(&self, toks: &[Token]) -> Result<i128> {
        let mut e = ExprEval { toks, pos: 0, params: &self.params };
        let v = e.expr().map_err(|m| self.err(m))?;
        if e.pos != toks.len() {
            return Err(self.err("cannot evaluate a constant expression (unsupported operator)"));
        }
        Ok(v)
    }
}

/// Splits at `sep` outside brackets.
fn split_top(toks: &[Token], sep: char) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.tok {
            Tok::Sym('(' | '[' | '{') => depth += 1,
            Tok::Sym(')' | ']' | '}') => depth -= 1,
            Tok::Sym(c) if c == sep && depth == 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() || !out.is_empty() {
        out.push(&toks[start..]);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Constant expressions: + - * / % ** << >>, parentheses, unary minus, numbers, parameters, $clog2.

struct ExprEval<'a> {
    toks: &'a [Token],
    pos: usize,
    params: &'a HashMap<String, i128>,
}

impl ExprEval<'_> {
    fn sym(&self, c: char) -> bool {
        self.toks.get(self.pos).is_some_and(|t| t.is_sym(c))
    }
    fn sym2(&self, a: char, b: char) -> bool {
        self.sym(a) && self.toks.get(self.pos + 1).is_some_and(|t| t.is_sym(b))
    }

    fn expr(&mut self) -> Result<i128, String> {
        let mut v = self.additive()?;
        loop {
            if self.sym2('<', '<') {
                self.pos += 2;
                let r = self.additive()?;
                v = v.checked_shl(u32::try_from(r).map_err(|_| "bad shift")?).ok_or("overflow")?;
            } else if self.sym2('>', '>') {
                self.pos += 2;
                let r = self.additive()?;
                v = v.checked_shr(u32::try_from(r).map_err(|_| "bad shift")?).ok_or("overflow")?;
            } else {
                return Ok(v);
            }
        }
    }

    fn additive(&mut self) -> Result<i128, String> {
        let mut v = self.term()?;
        loop {
            if self.sym('+') {
                self.pos += 1;
                v = v.checked_add(self.term()?).ok_or("overflow")?;
            } else if self.sym('-') {
                self.pos += 1;
                v = v.checked_sub(self.term()?).ok_or("overflow")?;
            } else {
                return Ok(v);
            }
        }
    }

    fn term(&mut self) -> Result<i128, String> {
        let mut v = self.power()?;
        loop {
            if self.sym('*') && !self.sym2('*', '*') {
                self.pos += 1;
                v = v.checked_mul(self.power()?).ok_or("overflow")?;
            } else if self.sym('/') {
                self.pos += 1;
                v = v.checked_div(self.power()?).ok_or("division by zero")?;
            } else if self.sym('%') {
                self.pos += 1;
                v = v.checked_rem(self.power()?).ok_or("division by zero")?;
            } else {
                return Ok(v);
            }
        }
    }

    fn power(&mut self) -> Result<i128, String> {
        let b = self.unary()?;
        if self.sym2('*', '*') {
            self.pos += 2;
            let e = self.power()?;
            return b.checked_pow(u32::try_from(e).map_err(|_| "bad exponent")?).ok_or_else(|| "overflow".into());
        }
        Ok(b)
    }

    fn unary(&mut self) -> Result<i128, String> {
        if self.sym('-') {
            self.pos += 1;
            return Ok(-self.unary()?);
        }
        if self.sym('+') {
            self.pos += 1;
            return self.unary();
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<i128, String> {
        let t = self.toks.get(self.pos).ok_or("expression ends early")?;
        self.pos += 1;
        match &t.tok {
            Tok::Num(s) => parse_number(s),
            Tok::Ident(name) => {
                self.params.get(name).copied().ok_or_else(|| format!("`{name}` is not a known constant"))
            }
            Tok::SysIdent(f) if f == "$clog2" => {
                if !self.sym('(') {
                    return Err("expected `(` after $clog2".into());
                }
                self.pos += 1;
                let v = self.expr()?;
                if !self.sym(')') {
                    return Err("expected `)`".into());
                }
                self.pos += 1;
                Ok(if v <= 1 { 0 } else { (128 - (v - 1).leading_zeros()) as i128 })
            }
            Tok::Sym('(') => {
                let v = self.expr()?;
                if !self.sym(')') {
                    return Err("expected `)`".into());
                }
                self.pos += 1;
                Ok(v)
            }
            other => Err(format!("unexpected {other:?} in a constant expression")),
        }
    }
}

fn parse_number(s: &str) -> Result<i128, String> {
    let s = s.replace('_', "");
    let bad = || format!("cannot read number `{s}`");
    match s.find('\'') {
        None => s.parse::<i128>().map_err(|_| bad()),
        Some(q) => {
            let rest = s[q + 1..].trim_start_matches(['s', 'S']);
            let (radix, digits) = match rest.chars().next() {
                Some('b' | 'B') => (2, &rest[1..]),
                Some('o' | 'O') => (8, &rest[1..]),
                Some('d' | 'D') => (10, &rest[1..]),
                Some('h' | 'H') => (16, &rest[1..]),
                _ => (10, rest),
            };
            i128::from_str_radix(digits, radix).map_err(|_| bad())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_hdl_style() {
        let v = r#"
// Generated
module top$child(clock,x,y);
    input wire clock;
    input wire [3:0] x;
    output reg [3:0] y;
endmodule

module top(clock,a,b,s);
    // Module arguments
    input wire clock;
    input wire [129:0] a;
    input wire [129:0] b;
    output reg [130:0] s;
    // Stub signals
    reg [3:0] top$child$x;
    function [7:0] f;
        input [7:0] q;
        f = q;
    endfunction
    always @(posedge clock) begin
        s <= a + b;
    end
    always @(*) begin
        top$child$x = 32'h0;
    end
endmodule // top
"#;
        let p = parse_ports(v, "top").unwrap();
        assert_eq!(
            p,
            vec![Port::input("clock", 1), Port::input("a", 130), Port::input("b", 130), Port::output("s", 131)]
        );
        let c = parse_ports(v, "top$child").unwrap();
        assert_eq!(c, vec![Port::input("clock", 1), Port::input("x", 4), Port::output("y", 4)]);
        assert_eq!(module_names(v).unwrap(), vec!["top$child".to_owned(), "top".to_owned()]);
    }

    #[test]
    fn plain_and_multi_name_declarations() {
        let v = "module m (clk, rst, d, q, r);\n input clk, rst;\n input [N:0] d;\n output [7:0] q, r;\n reg [7:0] q;\n endmodule";
        // N is unknown: an error, not a guess.
        assert!(matches!(parse_ports(v, "m"), Err(SimError::Parse(_))));
        let v = v.replace("[N:0]", "[15:0]");
        let p = parse_ports(&v, "m").unwrap();
        assert_eq!(
            p,
            vec![
                Port::input("clk", 1),
                Port::input("rst", 1),
                Port::input("d", 16),
                Port::output("q", 8),
                Port::output("r", 8)
            ]
        );
    }

    #[test]
    fn range_on_later_reg_declaration_and_params() {
        let v = "`timescale 1ns/1ps\nmodule m #(parameter W = 8, parameter integer D = 2*W) (a, y, z);\n\
                 localparam L = $clog2(W) + 1;\n input wire signed [W-1:0] a; output y; output z;\n\
                 reg [D-1:0] y; wire [L:0] z = 0;\n endmodule";
        let p = parse_ports(v, "m").unwrap();
        assert_eq!(p, vec![Port::input("a", 8), Port::output("y", 16), Port::output("z", 5)]);
    }

    #[test]
    fn ansi_header() {
        let v = "module top (input wire clock, input [7:0] a, b, output reg [8:0] s, (* keep *) output logic [1:0][3:0] t);\n\
                 always @(*) s = a + b; endmodule";
        let p = parse_ports(v, "top").unwrap();
        assert_eq!(
            p,
            vec![
                Port::input("clock", 1),
                Port::input("a", 8),
                Port::input("b", 8),
                Port::output("s", 9),
                Port::output("t", 8)
            ]
        );
    }

    #[test]
    fn comments_escaped_names_and_attributes() {
        let v = "/* module top(x); */ module top(\\a.b , c /* , d */);\n (* keep *) input wire [0:3] \\a.b ;\n\
                 output reg [ 7 : 0 ] c; // output d;\n always @( * ) c = 8'd0; endmodule";
        let p = parse_ports(v, "top").unwrap();
        assert_eq!(p, vec![Port::input("a.b", 4), Port::output("c", 8)]);
    }

    #[test]
    fn errors() {
        assert!(
            matches!(parse_ports("module a(x); input x; endmodule", "top"), Err(SimError::Parse(m)) if m.contains("modules in the source: a"))
        );
        assert!(parse_ports("module top(x); endmodule", "top").is_err());
        assert!(parse_ports("module top(x); inout x; endmodule", "top").is_err());
        assert!(parse_ports("module top(x); input [3:0] x [0:1]; endmodule", "top").is_err());
        assert!(parse_ports("module top(x); input x;", "top").is_err());
        assert!(parse_ports("module top(x); input y; endmodule", "top").is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("8'hFF"), Ok(255));
        assert_eq!(parse_number("32'd1_000"), Ok(1000));
        assert_eq!(parse_number("4'sb1010"), Ok(10));
        assert_eq!(parse_number("'h10"), Ok(16));
        assert!(parse_number("4'bxx00").is_err());
    }
}
