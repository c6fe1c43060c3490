//! mase-emit: the hardware side of the flow. Hardware passes bind every node of a quantized
//! MaseGraph to a library component and choose its parallelism ([`hw_pass`], [`parallel`]);
//! the stitcher turns the graph into a design of instances and streams, inserting forks, FIFOs,
//! casts and lane converters ([`design`]); the design is written as a project (`top.sv`, the
//! library files, weight memories, file list, FuseSoC core, report, README: [`project`]; a
//! cocotb testbench: [`cocotb`]) and executed by the graph-level golden model ([`golden`]) that
//! Verilator runs are checked against.

pub mod bind;
pub mod calibration;
pub mod cocotb;
pub mod config;
pub mod design;
pub mod external;
pub mod flow;
pub mod golden;
pub mod host_project;
pub mod host_split;
pub mod hw_pass;
pub mod latency;
pub mod lock;
pub mod parallel;
pub mod partition;
pub mod parts;
pub mod per_op;
pub mod project;
pub mod report;
pub mod sv;
pub mod system;
pub mod system_project;

pub use config::{FlowConfig, HwConfig};
pub use design::{stitch, Design};
pub use hw_pass::add_hardware_metadata;
pub use report::design_resources;

use mase_ir::pass::{Pass, PassManager};
use mase_ir::{MaseGraph, Result};

/// The hardware passes, by name. Adding one: its file in this crate and one line here;
/// [`pass_manager`] registers them after the IR's.
pub static HARDWARE_PASSES: &[&dyn Pass] =
    &[&hw_pass::AddHardwareMetadata, &partition::PartitionDevices, &host_split::SPLIT_HOST_DEVICE];

/// Every pass, software and hardware: the IR's registry extended with [`HARDWARE_PASSES`]. The
/// CLI (`mase passes`) and the flow run passes through it.
pub fn pass_manager() -> PassManager {
    PassManager::software()
        .with(HARDWARE_PASSES)
        .expect("hardware pass names differ from the IR's (checked by a test of this crate)")
}

/// The design of a graph whose hardware metadata is recorded (by `add_hardware_metadata`).
pub fn design_of(graph: &MaseGraph, top: &str) -> Result<Design> {
    design_in(graph, top, None)
}

/// As [`design_of`], for a graph kept in an emitted project at `base` (relative EXTERNAL
/// manifest paths resolve there).
pub fn design_in(graph: &MaseGraph, top: &str, base: Option<&std::path::Path>) -> Result<Design> {
    let bound = bind::bind_graph(graph, base)?;
    let par = design::recorded_parallelism(&bound)?;
    stitch(&bound, &par, top)
}

#[cfg(test)]
mod tests {
    #[test]
    fn hardware_passes_register_after_the_software_ones_under_their_own_names() {
        let names: Vec<&str> = super::pass_manager().passes().map(|p| p.name()).collect();
        assert_eq!(names.len(), mase_ir::passes::REGISTRY.len() + super::HARDWARE_PASSES.len());
        assert!(names.contains(&"add_hardware_metadata") && names.contains(&"auto_precision"));
    }
}
