//! The resource model's vocabulary: [`Resources`] (LUT, FF, DSP, BRAM, LUTRAM of an instance on a
//! 7-series FPGA as Yosys `synth_xilinx` maps it) and the mapping rules the components' estimates
//! share (how many DSP48E1 a multiplier takes, how many block RAMs a ROM takes).
//!
//! The per-component formulas live in each component's [`crate::Component::resources`]; their
//! constants were fitted with `cargo run -p mase-sim --example resource_fit` (Yosys 0.23).

use serde::{Deserialize, Serialize};

/// FPGA resources of one instance (or the sum over a design).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// LUTs used as logic (LUT1..LUT6).
    pub lut: u64,
    /// Flip-flops.
    pub ff: u64,
    /// DSP48E1 slices.
    pub dsp: u64,
    /// Block RAM in 18 kbit equivalents (a RAMB36E1 counts 2, a RAMB18E1 1).
    pub bram18: u64,
    /// LUTs used as distributed RAM.
    pub lutram: u64,
}

impl std::ops::Add for Resources {
    type Output = Resources;
    fn add(self, o: Resources) -> Resources {
        Resources {
            lut: self.lut + o.lut,
            ff: self.ff + o.ff,
            dsp: self.dsp + o.dsp,
            bram18: self.bram18 + o.bram18,
            lutram: self.lutram + o.lutram,
        }
    }
}

impl std::ops::AddAssign for Resources {
    fn add_assign(&mut self, o: Resources) {
        *self = *self + o;
    }
}

impl std::iter::Sum for Resources {
    fn sum<I: Iterator<Item = Resources>>(iter: I) -> Resources {
        iter.fold(Resources::default(), |a, b| a + b)
    }
}

/// Rounds a fitted real-valued estimate to a count (never negative).
pub fn round(x: f64) -> u64 {
    x.max(0.0).round() as u64
}
