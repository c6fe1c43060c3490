//! The ROM of a table read one row at a time, shared by the components that hold one
//! (`embedding` looks rows up by index, `add_table` reads them in turn): its geometry, its
//! `weight` memory and layout, and its output stream. The table has `rows` rows of `h` signed
//! `WEIGHT_PRECISION_0`-bit elements (`WEIGHT_TENSOR_SIZE_DIM_1` × the component's row-length
//! parameter); a row leaves as `NB = h / par` beats of `par` elements, so word `r·NB + j`, lane
//! `i` holds `table[r][j·par + i]`.

use mase_ir::fixed::FixedFormat;
use mase_ir::tensor::QuantTensor;

use crate::binding::NodeView;
use crate::component::{check_memory_len, Direction, MemorySpec, Params, Stimulus, StreamSpec};
use crate::param;

/// The quantized tensor `name` of node `v` as the table of `component`: one format for the whole
/// table (per-channel quantization is refused, naming the node), signed (an unsigned table's codes
/// fit the signed format one bit wider).
pub fn quantized_table<'g>(
    v: &NodeView<'g>,
    name: &str,
    component: &str,
) -> mase_ir::Result<(FixedFormat, &'g QuantTensor)> {
    let q = v.qweight(name)?;
    if q.channel_frac.is_some() {
        return Err(v.error(format!(
            "its table '{name}' is quantized per channel; the {component} component takes one format for the whole table"
        )));
    }
    let f = q.format;
    Ok((if f.signed { f } else { FixedFormat { signed: true, width: f.width + 1, ..f } }, q))
}

/// The `weight` memory's logical contents: the table's codes, row-major.
pub fn weight_memory(q: &QuantTensor) -> Vec<(String, Vec<i64>)> {
    vec![("weight".to_string(), q.codes.iter().copied().collect())]
}

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
        let what = format!("rows × row length = {} × {}", self.rows, self.h);
        check_memory_len(component, "weight", values, self.rows * self.h, &what)?;
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

/// The [`crate::Component`] methods of a component whose one memory is a row table:
/// `memories` and `layout_memory` of the table `$geo(p)` gives, errors naming `$name`.
#[macro_export]
macro_rules! row_table_memory {
    ($geo:path, $name:literal) => {
        fn memories(&self, p: &$crate::Params) -> Vec<$crate::component::MemorySpec> {
            vec![$geo(p).memory(p)]
        }

        /// `[rows][H]` row-major values → word `r·NB + j` = elements `j·PAR ..` of row `r`.
        fn layout_memory(
            &self,
            p: &$crate::Params,
            mem: &str,
            values: &[i64],
        ) -> Result<Vec<Vec<i64>>, String> {
            $geo(p).layout($name, mem, values)
        }
    };
}
