//! The component implementations, one file per component (`<name>.rs` next to `rtl/mase_<name>.sv`).
//! Add `pub mod <name>;` here and one line in [`crate::registry`].

pub mod add;
pub mod cast;
pub mod fifo;
pub mod fork;
pub mod gelu;
pub mod lane_converter;
pub mod layer_norm;
pub mod linear;
pub mod matmul;
pub mod mul;
pub mod relu;
pub mod skid_buffer;
pub mod softmax;
pub mod transpose;
