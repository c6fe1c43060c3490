//! The design report (`report.json`): per instance its component, parameters and cost-model
//! figures; for the whole design the analytic rate (the slowest instance's cycles per
//! inference), a latency estimate and resource totals (the resource model's estimate: the sum
//! of the instances' [`mase_hwlib::Component::resources`] plus the top's own glue). With a clock
//! frequency (`[hardware] clock_mhz`) the cycle figures are also given in real units, by
//! [`real_time`], the one place cycles and MHz become inferences per second and microseconds.

use serde::Serialize;

use mase_hwlib::components::embedding::Embedding;
use mase_hwlib::{Component, Params, Resources};

use crate::design::{Design, InstKind, TopPort};

/// Figures of one instance.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceReport {
    /// Instance name (`<name>_inst` in the top).
    pub name: String,
    /// Component (`external` for a user's module).
    pub component: String,
    /// SystemVerilog module instantiated.
    pub module: String,
    /// Why it exists.
    pub kind: InstKind,
    /// Graph node it implements or serves.
    pub node: String,
    /// Resolved parameters.
    pub params: Params,
    /// First-output latency at full input rate (cost model), cycles.
    pub latency_cycles: u64,
    /// Cycles per harness row of the component (a row, a sequence or a tensor).
    pub ii_cycles: u64,
    /// Cycles per inference of the graph.
    pub cycles_per_inference: u64,
    /// Multipliers.
    pub multipliers: u64,
    /// Memory bits (ROMs, buffers).
    pub memory_bits: u64,
    /// Resource model estimate (LUT, FF, DSP, BRAM18, LUTRAM); zero for a user's module, whose
    /// resources mase cannot know.
    pub resources: Resources,
}

/// A lookup table on the device: an `embedding` instance's table.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// The embedding node.
    pub node: String,
    /// Table rows (the vocabulary).
    pub rows: i64,
    /// Elements per row.
    pub dim: i64,
    /// Bits per element.
    pub element_bits: i64,
    /// Memory bits of the table.
    pub memory_bits: u64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Top module.
    pub top: String,
    /// Graph name.
    pub graph: String,
    /// Analytic initiation interval: cycles per inference of the slowest instance.
    pub ii_cycles: u64,
    /// The slowest instance.
    pub slowest: String,
    /// Latency estimate: cycles from the first input beat to the first output beat with no
    /// stalls, from the latency model ([`crate::latency`]).
    pub latency_cycles_estimate: u64,
    /// `ii_cycles` and `latency_cycles_estimate` in real units at the configured clock
    /// (`clock_mhz`, `inferences_per_s`, `latency_us`), when one is configured; absent
    /// otherwise.
    #[serde(flatten)]
    pub real_time: Option<RealTime>,
    /// The chain of instances that sets the latency, input side first, with the cycles each
    /// adds.
    pub latency_path: Vec<crate::latency::LatencyStep>,
    /// Total multipliers.
    pub multipliers: u64,
    /// Total memory bits.
    pub memory_bits: u64,
    /// Whole-design resource estimate: the instances' estimates plus [`Report::glue_resources`].
    pub resources: Resources,
    /// What the stitched top adds outside its instances ([`glue_resources`]).
    pub glue_resources: Resources,
    /// Instances by kind: node, cast, fork, fifo, lane_converter.
    pub instance_counts: std::collections::BTreeMap<String, usize>,
    /// The lookup tables the device holds (its `embedding` instances), with their memory.
    pub lookup_tables: Vec<TableReport>,
    /// Stream ports.
    pub ports: Vec<TopPort>,
    /// Every instance.
    pub instances: Vec<InstanceReport>,
}

/// Cycle figures in real units at a clock frequency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RealTime {
    /// The clock, MHz.
    pub clock_mhz: f64,
    /// Inferences per second, one per initiation interval; absent without an interval (a run
    /// of one inference measures none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferences_per_s: Option<f64>,
    /// The latency in microseconds.
    pub latency_us: f64,
}

/// Converts cycle figures into real units at `clock_mhz`: `clock_mhz · 10⁶ / ii_cycles`
/// inferences per second and `latency_cycles / clock_mhz` microseconds. Every real-unit figure
/// (report, README, `mase flow`, `mase sim`) comes from here, so a clock from elsewhere (a
/// measured Fmax) gives its figures the same way. An interval of zero or none gives no rate.
pub fn real_time(clock_mhz: f64, ii_cycles: Option<f64>, latency_cycles: f64) -> RealTime {
    RealTime {
        clock_mhz,
        inferences_per_s: ii_cycles.filter(|ii| *ii > 0.0).map(|ii| clock_mhz * 1e6 / ii),
        latency_us: latency_cycles / clock_mhz,
    }
}

impl RealTime {
    /// The figures for a line of text: `at 100 MHz: 12,346 inferences/s, latency 3.21 µs`
    /// (four significant digits, thousands separated), without the rate when there is none.
    pub fn describe(&self) -> String {
        let rate =
            self.inferences_per_s.map(|r| format!("{} inferences/s, ", significant(r))).unwrap_or_default();
        // The clock as given (`100`, `75.5`), the derived figures rounded.
        format!("at {} MHz: {rate}latency {} µs", self.clock_mhz, significant(self.latency_us))
    }
}

/// `x` to four significant digits, written out (no exponent) with thousands separated by
/// commas: `1,234,568`, `123.5`, `0.01235`.
fn significant(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).clamp(0, 9) as usize;
    let text = format!("{x:.decimals$}");
    let (int, frac) = text.split_once('.').map_or((text.as_str(), None), |(i, f)| (i, Some(f)));
    let (sign, digits) = int.strip_prefix('-').map_or(("", int), |d| ("-", d));
    let mut grouped = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Resource estimate of one instance: its component's model given its memories' contents
/// (Yosys drops ROM bit columns that hold one value in every word), or zero for a user's
/// module.
pub fn instance_resources(i: &crate::design::Instance) -> Resources {
    if i.external.is_some() {
        Resources::default()
    } else {
        let memories: mase_hwlib::StreamValues = i.memories.iter().cloned().collect();
        i.component().resources_with_memories(&i.params, &memories)
    }
}

/// What the stitched top adds outside its instances. The top only wires instances together
/// (forks, FIFOs and lane converters are instances of their own), so it adds no LUT, FF, DSP or
/// RAM; Yosys' one clock buffer (BUFG) is not a counted resource.
pub fn glue_resources(_d: &Design) -> Resources {
    Resources::default()
}

/// Whole-design resource estimate of `d`: the sum of its instances' resource models plus the
/// top's glue (the figure `report.json` and the project README carry; the sweep's columns).
pub fn design_resources(d: &Design) -> Resources {
    d.instances.iter().map(instance_resources).sum::<Resources>() + glue_resources(d)
}

/// Builds the report of `d`.
pub fn report(d: &Design) -> Report {
    let instances: Vec<InstanceReport> = d
        .instances
        .iter()
        .map(|i| {
            let cost = i.component().cost(&i.params);
            InstanceReport {
                name: i.name.clone(),
                component: i.component.clone(),
                module: i.module(),
                kind: i.kind,
                node: i.node.clone(),
                params: i.params.clone(),
                latency_cycles: cost.latency_cycles,
                ii_cycles: cost.ii_cycles,
                cycles_per_inference: i.cycles_per_inference(),
                multipliers: cost.multipliers,
                memory_bits: cost.memory_bits,
                resources: instance_resources(i),
            }
        })
        .collect();
    let slowest =
        instances.iter().max_by_key(|r| (r.cycles_per_inference, std::cmp::Reverse(r.name.clone())));
    let latency = crate::latency::latency(d);
    let mut counts = std::collections::BTreeMap::new();
    for i in &d.instances {
        let k =
            serde_json::to_value(i.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        *counts.entry(k).or_insert(0) += 1;
    }
    let lookup_tables = d
        .instances
        .iter()
        .zip(&instances)
        .filter(|(i, _)| i.external.is_none() && i.component == Embedding.name())
        .map(|(i, r)| {
            let p = |n: &str| i.params.get(n).copied().unwrap_or(0);
            TableReport {
                node: i.node.clone(),
                rows: p("WEIGHT_TENSOR_SIZE_DIM_1"),
                dim: p("WEIGHT_TENSOR_SIZE_DIM_0"),
                element_bits: p("WEIGHT_PRECISION_0"),
                memory_bits: r.memory_bits,
            }
        })
        .collect();
    Report {
        top: d.top.clone(),
        graph: d.graph.clone(),
        ii_cycles: slowest.map(|s| s.cycles_per_inference).unwrap_or(0),
        slowest: slowest.map(|s| s.name.clone()).unwrap_or_default(),
        latency_cycles_estimate: latency.cycles,
        real_time: None,
        latency_path: latency.path,
        multipliers: instances.iter().map(|r| r.multipliers).sum(),
        memory_bits: instances.iter().map(|r| r.memory_bits).sum(),
        resources: instances.iter().map(|r| r.resources).sum::<Resources>() + glue_resources(d),
        glue_resources: glue_resources(d),
        instance_counts: counts,
        lookup_tables,
        ports: d.ports.clone(),
        instances,
    }
}

impl Report {
    /// The report with its cycle figures also in real units at `clock_mhz` (unchanged without a
    /// clock).
    pub fn at_clock(mut self, clock_mhz: Option<f64>) -> Report {
        self.real_time =
            clock_mhz.map(|f| real_time(f, Some(self.ii_cycles as f64), self.latency_cycles_estimate as f64));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_time_is_the_clock_over_the_cycles() {
        let (f, ii, lat) = (125.0, 4_000.0, 9_750.0);
        let t = real_time(f, Some(ii), lat);
        let rate = t.inferences_per_s.unwrap();
        // Inverse relations rather than restated formulas: rate × ii cycles is the clock in Hz,
        // latency × clock is the cycles.
        assert!((rate * ii - f * 1e6).abs() < 1e-6 * f * 1e6);
        assert!((t.latency_us * f - lat).abs() < 1e-9 * lat);
        assert_eq!(real_time(f, None, lat).inferences_per_s, None);
        assert_eq!(real_time(f, Some(0.0), lat).inferences_per_s, None);
        // Twice the clock: twice the rate, half the latency.
        let t2 = real_time(2.0 * f, Some(ii), lat);
        assert!((t2.inferences_per_s.unwrap() - 2.0 * rate).abs() < 1e-9 * rate);
        assert!((2.0 * t2.latency_us - t.latency_us).abs() < 1e-12);
    }

    #[test]
    fn figures_print_with_four_significant_digits() {
        assert_eq!(significant(1_234_567.8), "1,234,568");
        assert_eq!(significant(31_250.0), "31,250");
        assert_eq!(significant(123.456), "123.5");
        assert_eq!(significant(0.012345), "0.01235");
        assert_eq!(significant(-1_500.0), "-1,500");
        let t = RealTime { clock_mhz: 100.0, inferences_per_s: Some(31_250.0), latency_us: 12.5 };
        assert_eq!(t.describe(), "at 100 MHz: 31,250 inferences/s, latency 12.50 µs");
        let t = RealTime { inferences_per_s: None, ..t };
        assert_eq!(t.describe(), "at 100 MHz: latency 12.50 µs");
    }
}
