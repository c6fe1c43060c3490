//! The `add_hardware_metadata` pass: chooses every hardware node's parallelism
//! ([`crate::parallel`]) and records the binding in `hardware` metadata as the seeds describe it:
//! `is_implicit`, `toolchain`, `module`, `verilog_param`, `interface`, `device_id`,
//! `dependence_files` and `parallelism`.

use indexmap::IndexMap;
use mase_hwlib::rtl_file_names;
use mase_ir::metadata::{HardwareMeta, Interface, Toolchain};
use mase_ir::pass::{Pass, PassArgs, PassInfo};
use mase_ir::{MaseGraph, NodeId, Result};
use serde_json::json;

use crate::bind::{bind_graph, Bindings, Implementation, Role};
use crate::config::HwConfig;
use crate::parallel::{select, stream_lanes, Selection};

/// The pass (registered in [`crate::HARDWARE_PASSES`]).
pub struct AddHardwareMetadata;

impl Pass for AddHardwareMetadata {
    fn name(&self) -> &'static str {
        "add_hardware_metadata"
    }

    fn description(&self) -> &'static str {
        "bind nodes to components, choose parallelism (target_ii / multiplier_budget / lanes), record hardware metadata"
    }

    fn run(&self, graph: MaseGraph, args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
        let cfg = HwConfig::from_table(args, "add_hardware_metadata arguments")?;
        add_hardware_metadata(graph, &cfg)
    }
}

/// Runs the pass with a parsed configuration.
pub fn add_hardware_metadata(graph: MaseGraph, cfg: &HwConfig) -> Result<(MaseGraph, PassInfo)> {
    if !cfg.devices.is_empty() {
        return Err(crate::bind::graph_error(
            "add_hardware_metadata: the configuration has [[hardware.devices]]; run partition_devices, \
             which spreads the design over them",
        ));
    }
    let mut graph = with_node_settings(graph, cfg);
    let bound = bind_graph(&graph, None)?;
    check_forms(&bound)?;
    let sel = select(&bound, cfg)?;
    let (metas, info) = record(&bound, &sel, &|_| 0)?;
    drop(bound);
    apply(&mut graph, metas);
    Ok((graph, info))
}

/// The graph with the per-node settings of `cfg` that binding reads (EXTERNAL manifests,
/// component forms) recorded in hardware metadata.
pub(crate) fn with_node_settings(mut graph: MaseGraph, cfg: &HwConfig) -> MaseGraph {
    let ids: Vec<_> = graph.ids().collect();
    for id in &ids {
        let name = graph.node(*id).name.clone();
        let ext = cfg.nodes.get(&name).and_then(|n| n.external.as_ref());
        graph.node_mut(*id).meta.hardware.external =
            ext.map(|p| crate::external::resolve(cfg.base_dir.as_deref(), p).to_string_lossy().into_owned());
    }
    for id in &ids {
        let name = graph.node(*id).name.clone();
        graph.node_mut(*id).meta.hardware.form = cfg.nodes.get(&name).and_then(|n| n.form.clone());
    }
    graph
}

/// Writes recorded metadata into the graph.
pub(crate) fn apply(graph: &mut MaseGraph, metas: Vec<(NodeId, HardwareMeta)>) {
    for (id, hw) in metas {
        graph.node_mut(id).meta.hardware = hw;
    }
}

/// Every node's hardware metadata under selection `sel`, with its device from `device_of`, and
/// the pass's info map (mode, target, multipliers, per-node choices).
pub(crate) fn record(
    bound: &Bindings,
    sel: &Selection,
    device_of: &dyn Fn(NodeId) -> usize,
) -> Result<(Vec<(NodeId, HardwareMeta)>, PassInfo)> {
    let graph = bound.graph;
    let mut nodes = serde_json::Map::new();
    let mut total_mults = 0u64;
    let mut metas = Vec::new();
    for (id, binding) in bound.iter() {
        let node = graph.node(id);
        let external = node.meta.hardware.external.clone();
        let form = node.meta.hardware.form.clone();
        let mut hw = HardwareMeta { device_id: device_of(id) as i64, external, form, ..Default::default() };
        match (binding.role, &binding.implementation) {
            (Role::Implicit | Role::Constant, _) => hw.is_implicit = true,
            (Role::Input | Role::Output, _) | (Role::Hardware, None) => {}
            (Role::Hardware, Some(Implementation::External(ext))) => {
                let choice = sel.chosen[&id];
                hw.toolchain = Some(Toolchain::External);
                hw.module = Some(ext.manifest.module.clone());
                hw.verilog_param = ext.params.clone();
                hw.dependence_files = ext.sources.iter().map(|(f, _)| format!("rtl/{f}")).collect();
                let lanes = ext.manifest.lanes;
                for k in 0..node.inputs.len() {
                    hw.parallelism.insert(format!("data_in_{k}"), vec![lanes, 1]);
                }
                hw.parallelism.insert("data_out_0".into(), vec![lanes, 1]);
                total_mults += choice.multipliers;
                nodes.insert(
                    node.name.clone(),
                    json!({
                        "component": "external",
                        "module": ext.manifest.module,
                        "parallelism": [lanes, lanes],
                        "cycles_per_inference": choice.cycles,
                        "multipliers": choice.multipliers,
                    }),
                );
            }
            (Role::Hardware, Some(Implementation::Library(c))) => {
                let choice = sel.chosen[&id];
                let p = bound.params(id, choice.par)?;
                hw.toolchain = Some(Toolchain::Internal);
                hw.module = Some(format!("mase_{}", c.name()));
                hw.verilog_param = p.clone();
                hw.interface = c
                    .memories(&p)
                    .into_iter()
                    .map(|m| (m.name, Interface { storage: "BRAM".into(), transpose: false }))
                    .collect();
                hw.dependence_files = rtl_file_names(*c).into_iter().map(|f| format!("rtl/{f}")).collect();
                let mut par: IndexMap<String, Vec<usize>> = IndexMap::new();
                for s in c.streams(&p) {
                    let prefix = s.name.to_uppercase();
                    par.insert(s.name.clone(), vec![stream_lanes(&p, &prefix), 1]);
                }
                // `data_in_0` records p_in and `data_out_0` p_out (read back by the stitcher).
                par.insert("data_in_0".into(), vec![choice.par.p_in, 1]);
                par.insert("data_out_0".into(), vec![choice.par.p_out, 1]);
                hw.parallelism = par;
                total_mults += choice.multipliers;
                nodes.insert(
                    node.name.clone(),
                    json!({
                        "component": c.name(),
                        "parallelism": [choice.par.p_in, choice.par.p_out],
                        "cycles_per_inference": choice.cycles,
                        "multipliers": choice.multipliers,
                    }),
                );
            }
        }
        metas.push((id, hw));
    }
    let mut info = PassInfo::new();
    info.insert("mode".into(), sel.mode.into());
    info.insert("target_ii".into(), sel.target_ii.into());
    info.insert("multipliers".into(), total_mults.into());
    info.insert("nodes".into(), nodes.into());
    Ok((metas, info))
}

/// Every node with a `form` setting is bound to a library component that lists the form.
pub(crate) fn check_forms(bound: &crate::bind::Bindings) -> Result<()> {
    for (id, binding) in bound.iter() {
        let node = bound.graph.node(id);
        let Some(form) = &node.meta.hardware.form else { continue };
        let forms: &[&str] = match (binding.role, &binding.implementation) {
            (Role::Hardware, Some(Implementation::Library(c))) => c.forms(),
            _ => &[],
        };
        if !forms.contains(&form.as_str()) {
            let supported = if forms.is_empty() {
                "this node has no forms to choose from (remove `form`)".to_string()
            } else {
                format!(
                    "supported: {}",
                    forms.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ")
                )
            };
            return Err(node.error(format!(
                "hardware.nodes.{}.form = \"{form}\" is not supported; {supported}",
                node.name
            )));
        }
    }
    Ok(())
}
