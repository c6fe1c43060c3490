//! The scoreboard: compares every element an output stream delivers with the expectation and
//! keeps the first mismatches (with where and when) and their total count.

use super::Mismatch;

/// Expected values of the output streams and what differed.
pub(super) struct Scoreboard {
    /// Expected values per output stream (stream order), indexed by the monitor's slot.
    expected: Vec<Vec<i64>>,
    /// The first mismatches, at most `max`.
    pub mismatches: Vec<Mismatch>,
    /// Every differing element.
    pub count: usize,
    /// How many mismatches to record.
    max: usize,
}

impl Scoreboard {
    /// An empty scoreboard recording at most `max` mismatches.
    pub fn new(max: usize) -> Self {
        Scoreboard { expected: Vec::new(), mismatches: Vec::new(), count: 0, max }
    }

    /// Registers an output stream's expected values; returns its slot.
    pub fn expect(&mut self, values: Vec<i64>) -> usize {
        self.expected.push(values);
        self.expected.len() - 1
    }

    /// Checks one beat of stream `slot`: `got` are its elements, starting at element `base`.
    #[inline]
    pub fn check(&mut self, slot: usize, stream: &str, beat: usize, base: usize, got: &[i64], cycle: u64) {
        let exp = &self.expected[slot][base..base + got.len()];
        if got == exp {
            return;
        }
        for (k, (&v, &e)) in got.iter().zip(exp).enumerate() {
            if e != v {
                self.count += 1;
                if self.mismatches.len() < self.max {
                    self.mismatches.push(Mismatch {
                        stream: stream.to_string(),
                        index: base + k,
                        beat,
                        lane: k,
                        expected: e,
                        actual: v,
                        cycle,
                    });
                }
            }
        }
    }
}
