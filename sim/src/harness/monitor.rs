//! The monitor of one output stream: drops ready in a cycle with the configured probability,
//! collects the beats taken, and checks the stream rule that a refused beat is offered again
//! unchanged.

use mase_hwlib::StreamSpec;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::pack::{unpack, unpack_u64_into};
use super::stream::StreamPorts;
use crate::error::{Result, SimError};
use crate::model::Model;

/// What a monitor saw in one cycle.
pub(super) enum Seen {
    /// Valid low.
    Nothing,
    /// Valid high while ready was low: the beat must stay.
    Refused,
    /// A beat was taken; its elements start at this index of [`Monitor::got`].
    Beat(usize),
}

/// Watches one output stream.
pub(super) struct Monitor {
    /// Ports and progress.
    pub s: StreamPorts,
    /// Values received (stream order).
    pub got: Vec<i64>,
    /// Ready this cycle.
    ready: bool,
    /// The beat offered but refused last cycle, which must still be offered unchanged.
    held: Option<Vec<u32>>,
}

impl Monitor {
    /// A monitor expecting `expected.len()` elements.
    pub fn new(model: &Model, spec: &StreamSpec, expected: &[i64]) -> Result<Self> {
        let s = StreamPorts::new(model, spec, expected)?;
        Ok(Monitor { s, got: Vec::with_capacity(expected.len()), ready: false, held: None })
    }

    /// Sets ready for this cycle. Draws from `rng` whenever `stall > 0`.
    #[inline]
    pub fn drive(&mut self, rng: &mut ChaCha8Rng, stall: f64) {
        self.ready = stall == 0.0 || rng.gen::<f64>() >= stall;
        self.s.ready_p.set(self.ready);
    }

    /// After the combinational settle: checks a held beat, then takes the offered beat when
    /// ready. `words` and `vals` are scratch buffers.
    #[inline]
    pub fn sample(
        &mut self,
        model: &Model,
        cycle: u64,
        words: &mut Vec<u32>,
        vals: &mut Vec<i64>,
    ) -> Result<Seen> {
        let s = &mut self.s;
        let valid = s.valid_p.get();
        check_held(s, self.held.take(), valid, model, cycle, words)?;
        if !valid {
            return Ok(Seen::Nothing);
        }
        if !self.ready {
            let mut h = Vec::new();
            s.read(model, &mut h);
            self.held = Some(h);
            return Ok(Seen::Refused);
        }
        if s.done >= s.total {
            return Err(SimError::Protocol {
                stream: s.spec.name.clone(),
                cycle,
                detail: format!("an extra beat beyond the {} expected", s.total),
            });
        }
        let (n, width, signed) = (s.spec.lanes, s.spec.width, s.spec.signed);
        let base = s.done * n;
        match s.data_p {
            Some(d) => unpack_u64_into(d.get(), n, width, signed, &mut self.got),
            None => {
                model.get_words(s.data, words);
                unpack(words, n, width, signed, vals);
                self.got.extend_from_slice(vals);
            }
        }
        s.done += 1;
        Ok(Seen::Beat(base))
    }
}

/// Checks a beat the consumer held back last cycle (`held`, its packed words): still valid and
/// unchanged, as the stream protocol requires; the protocol error names the stream and cycle.
pub(crate) fn check_held(
    s: &StreamPorts,
    held: Option<Vec<u32>>,
    valid: bool,
    model: &Model,
    cycle: u64,
    words: &mut Vec<u32>,
) -> Result<()> {
    let Some(h) = held else { return Ok(()) };
    s.read(model, words);
    let detail = if !valid {
        "valid dropped while the beat was back-pressured"
    } else if *words != h {
        "data changed while the beat was back-pressured"
    } else {
        return Ok(());
    };
    Err(SimError::Protocol { stream: s.spec.name.clone(), cycle, detail: detail.into() })
}
