//! The component registry: look-up over the one list in [`crate::components`] (one line per
//! component). It also yields the RTL file list ([`crate::rtl_files`]), the `mase components`
//! listing and the set the shared tests iterate.

use crate::component::Component;
use crate::components::REGISTRY;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every component accepts each of its `test_params` and rejects each of its
    /// `invalid_params` (the RTL side of the rejection is checked in `sim/tests/components.rs`).
    #[test]
    fn every_component_validates_its_own_parameter_sets() {
        for c in registry() {
            for good in c.test_params() {
                crate::resolve_params(*c, &good).unwrap_or_else(|e| panic!("{} {good:?}: {e}", c.name()));
            }
            for bad in c.invalid_params() {
                assert!(crate::resolve_params(*c, &bad).is_err(), "{} accepted {bad:?}", c.name());
            }
        }
    }
}
