//! Reports: written to a file as pretty JSON, printed as one JSON line or as a table; and the
//! types every report's struct is made of, so that docs/figures.md reads the records back
//! through the structs that wrote them.

use anyhow::Context;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::path::PathBuf;

/// Writes a report to `out` as pretty JSON, and prints it as one JSON line (`json`) or as `table`
/// renders it. Its fields come out in the order of their names, whatever the struct's order.
pub fn emit_report(
    report: &impl Serialize,
    json: bool,
    out: Option<&PathBuf>,
    table: impl FnOnce(&Value),
) -> anyhow::Result<()> {
    let report = serde_json::to_value(report)?;
    if let Some(path) = out {
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if json {
        println!("{report}");
    } else {
        table(&report);
    }
    Ok(())
}

/// A figure the figures page shows: one value, as a tool writes it; or, in a report of
/// docs/figures/recorded.json, the values of several runs (an array, shown as a range).
#[derive(Debug, Clone, PartialEq)]
pub enum Figure<T> {
    /// One value: a plain number.
    One(T),
    /// Several runs' values, never empty.
    Runs(Vec<T>),
}

impl<T> From<T> for Figure<T> {
    fn from(x: T) -> Self {
        Figure::One(x)
    }
}

impl<T: num_traits::ToPrimitive> Figure<T> {
    /// The lowest and the highest value, as f64.
    pub fn bounds(&self) -> (f64, f64) {
        let f = |x: &T| x.to_f64().unwrap_or(f64::NAN);
        match self {
            Figure::One(x) => (f(x), f(x)),
            Figure::Runs(xs) => {
                xs.iter().map(f).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
            }
        }
    }
}

impl<T: Serialize> Serialize for Figure<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Figure::One(x) => x.serialize(s),
            Figure::Runs(xs) => xs.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Figure<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through a Value, not an untagged enum: with serde_json's arbitrary_precision (on in this
        // workspace), numbers buffered by an untagged enum no longer read as numbers.
        let one = |v: Value| T::deserialize(v).map_err(D::Error::custom);
        match Value::deserialize(d)? {
            Value::Array(xs) if xs.is_empty() => Err(D::Error::custom("an empty array of runs")),
            Value::Array(xs) => xs.into_iter().map(one).collect::<Result<_, _>>().map(Figure::Runs),
            x => one(x).map(Figure::One),
        }
    }
}

/// A part of a report that its writer takes whole from another crate's type `W` (the
/// accelerator's configuration, a Yosys estimate) and that a reader takes as `R`: the fields the
/// figures page shows, optional where older records lack them. `W` itself cannot read them back:
/// a record made before one of its fields existed would get that field's default, not its absence.
#[derive(Debug, Clone, PartialEq)]
pub enum Part<W, R> {
    /// As a writer made it.
    Written(W),
    /// As read from a record.
    Read(R),
}

impl<W: Serialize, R: DeserializeOwned + Clone> Part<W, R> {
    /// The fields a reader takes: a written part as it would read back.
    pub fn read(&self) -> R {
        match self {
            Part::Read(r) => r.clone(),
            Part::Written(w) => serde_json::to_value(w)
                .and_then(serde_json::from_value)
                .expect("a written part reads back (the report tests check it)"),
        }
    }
}

impl<W: Serialize, R: Serialize> Serialize for Part<W, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Part::Written(w) => w.serialize(s),
            Part::Read(r) => r.serialize(s),
        }
    }
}

impl<'de, W, R: Deserialize<'de>> Deserialize<'de> for Part<W, R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        R::deserialize(d).map(Part::Read)
    }
}

/// The accelerator's configuration in a report: the contract's whole `AcceleratorConfig` as
/// written, read back as [`ConfigFigures`].
pub type Config = Part<ecrt_contract::config::AcceleratorConfig, ConfigFigures>;

/// The fields of a report's configuration the figures page shows. Records made before the folding
/// multiplier lack `digits_per_step` (one digit per step), those before the segmented schedule
/// lack `schedule`, those before the lanes engine `engine` (two slots), and recorded reports have
/// little more than the key size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigFigures {
    pub key_bits: Figure<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<Figure<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_bits: Option<Figure<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_bits: Option<Figure<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ecrt_contract::config::ExponentSchedule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digits_per_step: Option<Figure<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<ecrt_contract::config::Engine>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_a_number_or_runs() {
        let one: Figure<u64> = serde_json::from_str("12").unwrap();
        assert_eq!((one.clone(), one.bounds()), (Figure::One(12), (12.0, 12.0)));
        assert_eq!(serde_json::to_string(&one).unwrap(), "12");
        let runs: Figure<f64> = serde_json::from_str("[6.3, 5.7, 6.5]").unwrap();
        assert_eq!(runs.bounds(), (5.7, 6.5));
        assert_eq!(serde_json::to_string(&Figure::One(1.5)).unwrap(), "1.5");
        assert!(serde_json::from_str::<Figure<f64>>("[]").is_err());
        assert!(serde_json::from_str::<Figure<f64>>("\"6\"").is_err());
        assert!(serde_json::from_str::<Figure<u64>>("1.5").is_err());
        assert_eq!(serde_json::from_str::<Option<Figure<f64>>>("null").unwrap(), None);
    }

    #[test]
    fn a_written_config_reads_back() {
        let config = ecrt_contract::config::AcceleratorConfig::default();
        let part = Config::Written(config.clone());
        assert_eq!(serde_json::to_value(&part).unwrap(), serde_json::to_value(&config).unwrap());
        let read: Config = serde_json::from_value(serde_json::to_value(&part).unwrap()).unwrap();
        assert_eq!(read.read(), part.read());
        assert_eq!(part.read().digits_per_step, Some(Figure::One(config.digits_per_step)));
        let old: Config = serde_json::from_str(r#"{"key_bits": 2048, "window_bits": 5}"#).unwrap();
        assert_eq!((old.read().digits_per_step, old.read().schedule), (None, None));
    }
}
