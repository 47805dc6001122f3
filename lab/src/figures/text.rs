//! How the figures page writes a figure: numbers with thousands separators, ranges of several
//! runs, and a table's rows with their targets.

use crate::report::Figure;
use num_traits::ToPrimitive;

/// A figure: one value, or the range of several runs' values.
#[derive(Debug, Clone, Copy)]
pub(super) struct Val {
    pub lo: f64,
    pub hi: f64,
}

impl Val {
    pub fn one(x: f64) -> Val {
        Val { lo: x, hi: x }
    }

    /// A report's figure.
    pub fn of<T: ToPrimitive>(figure: &Figure<T>) -> Val {
        let (lo, hi) = figure.bounds();
        Val { lo, hi }
    }

    /// f on both ends (f monotone).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Val {
        let (a, b) = (f(self.lo), f(self.hi));
        Val { lo: a.min(b), hi: a.max(b) }
    }

    fn show(self, f: impl Fn(f64) -> String) -> String {
        let (a, b) = (f(self.lo), f(self.hi));
        if a == b {
            a
        } else {
            format!("{a}–{b}")
        }
    }
}

/// A report's figure, when the report has it.
pub(super) fn val<T: ToPrimitive>(figure: &Option<Figure<T>>) -> Option<Val> {
    figure.as_ref().map(Val::of)
}

/// x with `decimals` decimals and thousands separated by commas.
pub(super) fn num(x: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = text.split_once('.').map_or((text.as_str(), None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

pub(super) fn int(v: Val) -> String {
    v.show(|x| num(x, 0))
}

pub(super) fn dec(v: Val, decimals: usize) -> String {
    v.show(|x| num(x, decimals))
}

/// Without decimals when every end is whole, else with `decimals`.
pub(super) fn whole_or(v: Val, decimals: usize) -> String {
    if v.lo.fract() == 0.0 && v.hi.fract() == 0.0 {
        int(v)
    } else {
        dec(v, decimals)
    }
}

/// A bit width, without thousands separators.
pub(super) fn bits(v: Val) -> String {
    v.show(|x| format!("{x:.0}"))
}

pub(super) fn mega(v: Val) -> String {
    format!("{} M", v.show(|x| num(x / 1e6, 1)))
}

/// One line of a record's table.
pub(super) struct Row {
    pub figure: String,
    pub value: String,
    pub target: String,
}

pub(super) fn row(figure: &str, value: String) -> Row {
    Row { figure: figure.into(), value, target: String::new() }
}

pub(super) fn with_target(figure: &str, value: String, target: String) -> Row {
    Row { figure: figure.into(), value, target }
}

/// "met", or "missed" and by how many times (two decimals when one would say 1.0).
pub(super) fn against(v: Val, target: f64, at_most: bool) -> String {
    let (met, ratio) =
        if at_most { (v.hi <= target, v.map(|x| x / target)) } else { (v.lo >= target, v.map(|x| target / x)) };
    if met {
        "met".into()
    } else {
        let places = if ratio.hi < 1.05 { 2 } else { 1 };
        format!("missed, {}×", dec(ratio, places))
    }
}

/// Escapes a table cell.
pub(super) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(307_743.0, 0), "307,743");
        assert_eq!(num(153_232.5, 1), "153,232.5");
        assert_eq!(num(999.0, 0), "999");
        assert_eq!(num(1000.0, 0), "1,000");
        assert_eq!(num(0.556, 3), "0.556");
        assert_eq!(num(-1234.5, 1), "-1,234.5");
        assert_eq!(dec(Val { lo: 5.7, hi: 6.5 }, 1), "5.7–6.5");
        assert_eq!(dec(Val { lo: 5.71, hi: 5.74 }, 1), "5.7");
        assert_eq!(dec(Val::of(&Figure::Runs(vec![6.3, 5.7, 6.5])), 1), "5.7–6.5");
    }
}
