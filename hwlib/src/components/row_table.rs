//! The ROM of a table read one row at a time, shared by the components that hold one
//! (`embedding` looks rows up by index, `add_table` reads them in turn): its geometry, its
//! `weight` memory and layout, and its output stream. The table has `rows` rows of `h` signed
//! `WEIGHT_PRECISION_0`-bit elements (`WEIGHT_TENSOR_SIZE_DIM_1` × the component's row-length
//! parameter); a row leaves as `NB = h / par` beats of `par` elements, so word `r·NB + j`, lane
//! `i` holds `table[r][j·par + i]`.

use crate::component::{Direction, MemorySpec, Params, Stimulus, StreamSpec};
use crate::param;

/// The geometry of a row table.
#[derive(Debug, Clone, Copy)]
pub struct RowTable {
    /// Table rows (`WEIGHT_TENSOR_SIZE_DIM_1`).
    pub rows: usize,
    /// Elements per row.
    pub h: usize,
    /// Elements per beat.
    pub par: usize,
}

impl RowTable {
    /// The table of an instance whose row length is parameter `h` and whose lanes are
    /// parameter `par` (each at least 1).
    pub fn of(p: &Params, h: &str, par: &str) -> RowTable {
        let u = |n: &str| param(p, n).max(1) as usize;
        RowTable { rows: u("WEIGHT_TENSOR_SIZE_DIM_1"), h: u(h), par: u(par) }
    }

    /// Beats per row.
    pub fn nb(&self) -> usize {
        self.h / self.par
    }

    /// ROM words.
    pub fn words(&self) -> usize {
        self.rows * self.nb()
    }

    /// Bits of the ROM (`words × par × WEIGHT_PRECISION_0`).
    pub fn memory_bits(&self, p: &Params) -> u64 {
        (self.words() * self.par) as u64 * param(p, "WEIGHT_PRECISION_0") as u64
    }

    /// The `weight` memory (`WEIGHT_MEM_FILE`).
    pub fn memory(&self, p: &Params) -> MemorySpec {
        MemorySpec {
            name: "weight".into(),
            param: "WEIGHT_MEM_FILE".into(),
            values: self.rows * self.h,
            depth: self.words(),
            lanes: self.par,
            lane_width: param(p, "WEIGHT_PRECISION_0") as u32,
            signed: true,
        }
    }

    /// `data_out_0`: `par` signed `DATA_OUT_0_PRECISION_0`-bit lanes, `NB` beats per row.
    pub fn out_stream(&self, p: &Params) -> StreamSpec {
        StreamSpec {
            name: "data_out_0".into(),
            dir: Direction::Out,
            lanes: self.par,
            width: param(p, "DATA_OUT_0_PRECISION_0") as u32,
            signed: true,
            beats_per_row: self.nb(),
        }
    }

    /// `values`, the table row-major, checked to hold `rows × h` elements (`component`'s memory
    /// `weight`; an error names the component otherwise).
    fn check<'a>(&self, component: &str, values: &'a [i64]) -> Result<&'a [i64], String> {
        if values.len() != self.rows * self.h {
            return Err(format!(
                "{component}: weight memory needs {} values (rows × row length = {} × {}), got {}",
                self.rows * self.h,
                self.rows,
                self.h,
                values.len()
            ));
        }
        Ok(values)
    }

    /// The ROM words of memory `mem` of `component` from the table row-major.
    pub fn layout(&self, component: &str, mem: &str, values: &[i64]) -> Result<Vec<Vec<i64>>, String> {
        if mem != "weight" {
            return Err(format!("component `{component}` has no memory `{mem}` (memories: weight)"));
        }
        Ok(self.check(component, values)?.chunks(self.par).map(<[i64]>::to_vec).collect())
    }

    /// The table a model reads from its stimulus, checked.
    pub fn values<'a>(&self, component: &str, stim: &'a Stimulus) -> Result<&'a [i64], String> {
        let t =
            stim.memories.get("weight").ok_or_else(|| format!("{component} model: missing memory weight"))?;
        self.check(component, t)
    }
}
