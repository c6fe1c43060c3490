//! `validate`: checks the graph invariants (see [`crate::MaseGraph::validate`]).

use crate::error::Result;
use crate::graph::MaseGraph;
use crate::pass::{Pass, PassArgs, PassInfo};

/// Checks the graph invariants and reports the node count.
pub struct ValidatePass;

impl Pass for ValidatePass {
    fn name(&self) -> &'static str {
        "validate"
    }
    fn description(&self) -> &'static str {
        "check invariants: unique names, inputs defined before use (acyclic), one output, weights present, shapes consistent"
    }
    fn run(&self, graph: MaseGraph, _args: &PassArgs) -> Result<(MaseGraph, PassInfo)> {
        graph.validate()?;
        let mut info = PassInfo::new();
        info.insert("nodes".into(), graph.len().into());
        Ok((graph, info))
    }
}
