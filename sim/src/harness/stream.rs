//! The handshake ports of one stream (`<name>`, `<name>_valid`, `<name>_ready`) and its beat
//! count: what a driver and a monitor share.

use mase_hwlib::StreamSpec;

use crate::error::{Result, SimError};
use crate::model::{BitPort, Model, NarrowPort};

/// Port indices, direct port handles and progress of one stream.
pub(super) struct StreamPorts {
    /// The stream as the component declares it.
    pub spec: StreamSpec,
    /// Port index of the data port.
    pub data: usize,
    /// Port index of `<name>_valid`.
    pub valid: usize,
    /// Port index of `<name>_ready`.
    pub ready: usize,
    /// Direct handle of the data port when it has at most 64 bits (the fast path).
    pub data_p: Option<NarrowPort>,
    /// Direct handle of `<name>_valid`.
    pub valid_p: BitPort,
    /// Direct handle of `<name>_ready`.
    pub ready_p: BitPort,
    /// 32-bit words per beat (2 on the fast path: one u64).
    pub words: usize,
    /// Beats transferred so far.
    pub done: usize,
    /// Beats expected in total.
    pub total: usize,
    /// Cycles the current beat has waited (valid && !ready), for the watchdog.
    pub waiting: u64,
}

impl StreamPorts {
    /// Finds the stream's ports in `model`; `values` (its elements) must fill whole beats.
    pub fn new(model: &Model, s: &StreamSpec, values: &[i64]) -> Result<Self> {
        let data = model.port_index(&s.name)?;
        let valid = model.port_index(&format!("{}_valid", s.name))?;
        let ready = model.port_index(&format!("{}_ready", s.name))?;
        if !values.len().is_multiple_of(s.lanes) {
            return Err(SimError::Invalid(format!(
                "stream `{}`: {} values is not a whole number of {}-lane beats",
                s.name,
                values.len(),
                s.lanes
            )));
        }
        let bit = |port: usize, suffix: &str| {
            model
                .bit_port(port)
                .ok_or_else(|| SimError::Invalid(format!("port `{}_{suffix}` is not 1 bit wide", s.name)))
        };
        let narrow = s.port_width() <= 64;
        Ok(StreamPorts {
            spec: s.clone(),
            data,
            valid,
            ready,
            data_p: model.narrow_port(data),
            valid_p: bit(valid, "valid")?,
            ready_p: bit(ready, "ready")?,
            words: if narrow { 2 } else { s.port_width().div_ceil(32) },
            done: 0,
            total: values.len() / s.lanes,
            waiting: 0,
        })
    }

    /// Reads the data port into `words` (32-bit words, least significant first).
    #[inline]
    pub fn read(&self, model: &Model, words: &mut Vec<u32>) {
        if let Some(d) = self.data_p {
            let v = d.get();
            words.clear();
            words.extend([v as u32, (v >> 32) as u32]);
        } else {
            model.get_words(self.data, words);
        }
    }
}
