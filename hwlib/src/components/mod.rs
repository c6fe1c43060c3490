//! The component implementations, one file per component (`<name>.rs` next to `rtl/mase_<name>.sv`).
//! Add `pub mod <name>;` here and one line in [`crate::registry`].

pub mod cast;
pub mod fifo;
pub mod linear;
pub mod mul;
pub mod relu;
pub mod skid_buffer;
