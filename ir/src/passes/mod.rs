//! Analysis and transform passes, one file each, and the registry that lists them.

mod validate;

use crate::pass::Pass;

pub use validate::ValidatePass;

/// Every pass, by name. Adding a pass: one file in this folder and one line here.
pub static REGISTRY: &[&dyn Pass] = &[&ValidatePass];
