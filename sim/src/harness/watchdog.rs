//! The deadlock watchdog: when no beat has moved on any stream for the configured number of
//! cycles, the run fails with a report naming every unfinished stream and its handshake state.

use mase_hwlib::Direction;

use super::stream::StreamPorts;
use crate::error::{Result, SimError};
use crate::model::Model;

/// Cycles since the last beat moved.
pub(super) struct Watchdog {
    /// Cycles without progress that are still fine.
    limit: u64,
    /// Cycle of the last beat moved.
    last_progress: u64,
}

impl Watchdog {
    /// A watchdog firing after more than `limit` cycles without a beat.
    pub fn new(limit: u64) -> Self {
        Watchdog { limit, last_progress: 0 }
    }

    /// Records whether a beat moved in `cycle`; a deadlock error when none has for too long.
    #[inline]
    pub fn tick<'a>(
        &mut self,
        cycle: u64,
        progress: bool,
        model: &Model,
        streams: impl Iterator<Item = &'a StreamPorts>,
    ) -> Result<()> {
        if progress {
            self.last_progress = cycle;
        } else if cycle - self.last_progress > self.limit {
            return Err(SimError::Deadlock { cycle, detail: stall_report(streams, model) });
        }
        Ok(())
    }
}

/// Names every stream that has not finished, with its progress and handshake state.
fn stall_report<'a>(streams: impl Iterator<Item = &'a StreamPorts>, model: &Model) -> String {
    let mut parts = Vec::new();
    for l in streams.filter(|l| l.done < l.total) {
        let (v, r) = (model.get(l.valid) != 0, model.get(l.ready) != 0);
        let why = match (l.spec.dir, v, r) {
            (Direction::In, true, false) => {
                format!("input stalled: valid high, ready low for {} cycles", l.waiting)
            }
            (Direction::In, false, _) => "input idle (testbench not offering)".to_string(),
            (Direction::Out, false, _) => "output starved: valid low".to_string(),
            (Direction::Out, true, false) => "output back-pressured".to_string(),
            _ => "handshaking".to_string(),
        };
        parts.push(format!("`{}` {}/{} beats, {why}", l.spec.name, l.done, l.total));
    }
    if parts.is_empty() {
        "no stream pending".into()
    } else {
        parts.join("; ")
    }
}
