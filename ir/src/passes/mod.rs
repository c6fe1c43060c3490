//! Analysis and transform passes, one file each, and the registry that lists them.

mod validate;

pub mod add_common_metadata;
pub mod add_software_metadata;
pub mod auto_precision;
pub mod count_ops;
pub mod init_metadata;
pub mod quantize;
mod raise_common;
pub mod raise_gelu;
pub mod raise_layer_norm;
pub mod raise_linear;
pub mod raise_mul_scalar;
pub mod remove_dropout;

use crate::pass::Pass;

pub use validate::ValidatePass;

/// Every IR pass, by name ([`crate::pass::PassManager::software`]). Adding a pass: one file in
/// this folder and one line here (hardware passes: `mase_emit::HARDWARE_PASSES`).
pub static REGISTRY: &[&dyn Pass] = &[
    &ValidatePass,
    &init_metadata::InitMetadataPass,
    &add_common_metadata::AddCommonMetadataPass,
    &add_software_metadata::AddSoftwareMetadataPass,
    &quantize::QuantizePass,
    &auto_precision::AutoPrecisionPass,
    &remove_dropout::RemoveDropoutPass,
    &count_ops::CountOpsPass,
    &raise_linear::RaiseLinearPass,
    &raise_gelu::RaiseGeluPass,
    &raise_layer_norm::RaiseLayerNormPass,
    &raise_mul_scalar::RaiseMulScalarPass,
];
