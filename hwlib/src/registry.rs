//! The component registry: one line per component. It also yields the RTL file list
//! ([`crate::rtl_files`]), the `mase components` listing and the set the shared tests iterate.

use crate::component::Component;
use crate::components;

/// Every registered component, in listing order. Add one line per new component.
static REGISTRY: &[&dyn Component] = &[
    &components::fifo::Fifo,
    &components::skid_buffer::SkidBuffer,
    &components::relu::Relu,
    &components::cast::Cast,
    &components::linear::Linear,
    &components::fork::Fork,
    &components::lane_converter::LaneConverter,
    &components::add::Add,
    &components::mul::Mul,
    &components::gelu::Gelu,
    &components::softmax::Softmax,
    &components::transpose::Transpose,
    &components::matmul::Matmul,
    &components::layer_norm::LayerNorm,
];

/// All registered components.
pub fn registry() -> &'static [&'static dyn Component] {
    REGISTRY
}

/// The component called `name`, or an error listing the registered names.
pub fn lookup(name: &str) -> Result<&'static dyn Component, String> {
    REGISTRY.iter().copied().find(|c| c.name() == name).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|c| c.name()).collect();
        format!("unknown component `{name}`; registered components: {}", names.join(", "))
    })
}
