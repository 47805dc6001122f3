//! Faults the emulated device injects on purpose (`--fault SPEC`), so that the host driver's
//! error paths can be tested without a broken board. They count the result frames of what hosts
//! asked for: the answers to the resynchronisation frames of takeovers are neither counted nor
//! corrupted (they still stall with the rest).

use std::fmt;
use std::str::FromStr;

/// A fault of the emulated device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// `stall-after=N`: once N result frames have left, the device sends no more (the registers
    /// still answer): it takes requests while its cores have room for their jobs, whose results
    /// never leave, and then no more. The N-th frame ends its packet (TLAST), so that all N reach
    /// the host even when more results were waiting to join its burst. Reads, and writes beyond
    /// the cores' room, then time out.
    StallAfter(u64),
    /// `corrupt-result=K`: bit 31 of word 1 (the first plaintext limb) of the K-th result frame
    /// (0-based, in the order results leave) is flipped on its way out. The tag in word 0 stays
    /// intact; the framing keeps bits [31:17] of a limb word 0, so a host can detect it.
    CorruptResult(u64),
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let usage = "stall-after=N or corrupt-result=K";
        let (name, count) = spec.split_once('=').ok_or_else(|| format!("a fault is {usage}, not {spec:?}"))?;
        let count: u64 =
            count.trim().parse().map_err(|_| format!("{count:?} is not a count (in the fault {spec:?})"))?;
        match name.trim() {
            "stall-after" => Ok(Fault::StallAfter(count)),
            "corrupt-result" => Ok(Fault::CorruptResult(count)),
            other => Err(format!("unknown fault {other:?}: the faults are {usage}")),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::StallAfter(n) => write!(f, "stall-after={n}"),
            Fault::CorruptResult(k) => write!(f, "corrupt-result={k}"),
        }
    }
}

/// The faults in force, as the device asks about them while results leave.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults {
    stall_after: Option<u64>,
    corrupt: Vec<u64>,
}

impl Faults {
    pub(crate) fn new(faults: &[Fault]) -> Self {
        let mut out = Faults::default();
        for fault in faults {
            match *fault {
                // Several stalls: the earliest wins.
                Fault::StallAfter(n) => out.stall_after = Some(out.stall_after.map_or(n, |m| m.min(n))),
                Fault::CorruptResult(k) => out.corrupt.push(k),
            }
        }
        out
    }

    /// Whether the device has stopped once `results` result frames have left.
    pub(crate) fn stalled(&self, results: u64) -> bool {
        self.stall_after.is_some_and(|n| results >= n)
    }

    /// Whether result frame `index` (0-based) leaves corrupted.
    pub(crate) fn corrupts(&self, index: u64) -> bool {
        self.corrupt.contains(&index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print() {
        for (spec, fault) in [("stall-after=3", Fault::StallAfter(3)), ("corrupt-result=0", Fault::CorruptResult(0))] {
            assert_eq!(spec.parse::<Fault>(), Ok(fault));
            assert_eq!(fault.to_string(), spec);
        }
        for bad in ["stall-after", "stall-after=x", "stall-after=-1", "drop=1", ""] {
            assert!(bad.parse::<Fault>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_earliest_stall_wins() {
        let faults = Faults::new(&[Fault::StallAfter(5), Fault::StallAfter(2), Fault::CorruptResult(1)]);
        assert!(!faults.stalled(1));
        assert!(faults.stalled(2));
        assert!(faults.corrupts(1) && !faults.corrupts(0));
        assert!(!Faults::new(&[]).stalled(u64::MAX));
    }
}
