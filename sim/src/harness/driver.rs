//! The driver of one input stream: offers pre-packed beats, leaving valid low in a cycle with the
//! configured probability, and holds a beat (valid and data) until it is taken.

use mase_hwlib::StreamSpec;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::pack::pack;
use super::stream::StreamPorts;
use crate::error::{Result, SimError};
use crate::model::Model;

/// Drives one input stream.
pub(super) struct Driver {
    /// Ports and progress.
    pub s: StreamPorts,
    /// Every beat, `s.words` 32-bit words each.
    packed: Vec<u32>,
    /// A beat is being offered (valid high).
    offering: bool,
}

impl Driver {
    /// A driver of `values` (stream order), which must fit the stream's element format.
    pub fn new(model: &Model, spec: &StreamSpec, values: &[i64]) -> Result<Self> {
        let s = StreamPorts::new(model, spec, values)?;
        let (lo, hi) = spec.range();
        if let Some(v) = values.iter().find(|v| **v < lo || **v > hi) {
            return Err(SimError::Invalid(format!(
                "stream `{}`: value {v} outside the {}-bit {} range",
                spec.name,
                spec.width,
                if spec.signed { "signed" } else { "unsigned" }
            )));
        }
        let mut packed = Vec::with_capacity(s.total * s.words);
        let mut w = Vec::new();
        for b in values.chunks(spec.lanes) {
            pack(b, spec.width, &mut w);
            w.resize(s.words, 0);
            packed.extend_from_slice(&w);
        }
        Ok(Driver { s, packed, offering: false })
    }

    /// Sets valid (and data when a new beat is offered) for this cycle. Draws from `rng` only
    /// when idle with beats left and `stall > 0`.
    #[inline]
    pub fn drive(&mut self, model: &mut Model, rng: &mut ChaCha8Rng, stall: f64) {
        let s = &self.s;
        if !self.offering && s.done < s.total && (stall == 0.0 || rng.gen::<f64>() >= stall) {
            self.offering = true;
            let w = &self.packed[s.done * s.words..(s.done + 1) * s.words];
            match s.data_p {
                Some(d) => d.set(w[0] as u64 | (w[1] as u64) << 32),
                None => model.set_words(s.data, w),
            }
        }
        s.valid_p.set(self.offering);
    }

    /// After the combinational settle: whether the offered beat was taken this cycle.
    #[inline]
    pub fn sample(&mut self) -> bool {
        if self.offering && self.s.ready_p.get() {
            self.offering = false;
            self.s.done += 1;
            self.s.waiting = 0;
            true
        } else {
            if self.offering {
                self.s.waiting += 1;
            }
            false
        }
    }
}
