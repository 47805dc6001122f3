//! The XDMA streaming engines' data path between host bytes and AXI4-Stream beats: an H2C write
//! becomes one packet of beats, and C2H beats collect in a bounded buffer that host reads drain.
//! Word k of a packet is bytes 4k…4k+3, little-endian, in lane k mod L of beat ⌊k/L⌋ (see
//! `docs/interface.md`).

use ecrt_contract::interface::{bytes_to_words, words_to_bytes, LANE_BYTES};
use std::collections::VecDeque;

/// The words of one H2C packet of `lanes`-word beats: `bytes` as little-endian words, the last
/// beat zero-padded if partial (there is no TKEEP). The packet has `words.len() / lanes` beats.
pub(crate) fn packet_words(bytes: &[u8], lanes: usize) -> Vec<u32> {
    let beat_bytes = lanes * LANE_BYTES;
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().div_ceil(beat_bytes) * beat_bytes, 0);
    bytes_to_words(&padded)
}

/// C2H data received from the card and not yet read by the host, with the packet boundaries
/// (TLAST) that end reads early. Bounded: the device stops the card's stream (TREADY low) while a
/// beat would not fit, so nothing is ever dropped.
#[derive(Debug)]
pub(crate) struct C2hBuffer {
    bytes: VecDeque<u8>,
    /// Stream positions (bytes since the start) just past the last byte of each buffered packet.
    ends: VecDeque<u64>,
    /// Stream position of the first buffered byte.
    start: u64,
    capacity: usize,
}

impl C2hBuffer {
    /// An empty buffer of `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        C2hBuffer { bytes: VecDeque::with_capacity(capacity), ends: VecDeque::new(), start: 0, capacity }
    }

    /// Whether `len` more bytes fit, when a pending read of `reserved` bytes can take them: XDMA
    /// moves data straight into a posted read's buffer, so that much may arrive whatever the
    /// capacity.
    pub(crate) fn has_room(&self, len: usize, reserved: usize) -> bool {
        self.bytes.len() + len <= self.capacity.max(reserved)
    }

    /// Appends a beat; `last` (TLAST) ends the packet after it.
    pub(crate) fn push_beat(&mut self, words: &[u32], last: bool) {
        self.bytes.extend(words_to_bytes(words));
        if last {
            self.ends.push_back(self.start + self.bytes.len() as u64);
        }
    }

    /// How many bytes a read of `size` bytes returns now: `size` once that many have arrived,
    /// fewer when a packet ends before (a short read); `None` while neither has happened.
    pub(crate) fn ready(&self, size: usize) -> Option<usize> {
        if let Some(&end) = self.ends.front() {
            let packet = (end - self.start) as usize;
            if packet <= size {
                return Some(packet);
            }
        }
        (self.bytes.len() >= size).then_some(size)
    }

    /// Removes and returns the first `len` bytes (at most what is buffered).
    pub(crate) fn take(&mut self, len: usize) -> Vec<u8> {
        let len = len.min(self.bytes.len());
        let out: Vec<u8> = self.bytes.drain(..len).collect();
        self.start += len as u64;
        while self.ends.front().is_some_and(|&end| end <= self.start) {
            self.ends.pop_front();
        }
        out
    }

    /// Bytes buffered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_becomes_whole_beats() {
        let words = packet_words(&[1, 0, 0, 0, 2, 0, 0, 0, 3], 4);
        assert_eq!(words, [1, 2, 3, 0]);
        assert_eq!(packet_words(&[], 2), Vec::<u32>::new());
        assert_eq!(packet_words(&[0xFF; 8], 2), [u32::MAX, u32::MAX]);
    }

    #[test]
    fn reads_end_at_packet_boundaries_and_keep_the_rest() {
        let mut buffer = C2hBuffer::new(64);
        buffer.push_beat(&[1, 2], false);
        assert_eq!(buffer.ready(16), None, "neither 16 bytes nor a TLAST yet");
        assert_eq!(buffer.ready(4), Some(4));
        buffer.push_beat(&[3, 4], true);
        buffer.push_beat(&[5, 6], true);
        // A large read returns the first packet only (a short read).
        assert_eq!(buffer.ready(1000), Some(16));
        // A read smaller than the packet takes part of it; the rest stays for the next read.
        assert_eq!(buffer.take(buffer.ready(6).unwrap()), [1, 0, 0, 0, 2, 0]);
        assert_eq!(buffer.ready(1000), Some(10));
        assert_eq!(buffer.take(10), [0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
        assert_eq!(buffer.ready(1000), Some(8));
        assert_eq!(buffer.take(8), [5, 0, 0, 0, 6, 0, 0, 0]);
        assert_eq!((buffer.len(), buffer.ready(1)), (0, None));
    }

    #[test]
    fn room_is_bounded() {
        let mut buffer = C2hBuffer::new(16);
        assert!(buffer.has_room(16, 0));
        buffer.push_beat(&[1, 2], true);
        assert!(buffer.has_room(8, 0) && !buffer.has_room(9, 0));
        buffer.push_beat(&[3, 4], false);
        assert!(!buffer.has_room(1, 0));
        assert!(buffer.has_room(8, 24), "a pending read of 24 bytes takes more");
        buffer.take(8);
        assert!(buffer.has_room(8, 0));
    }
}
