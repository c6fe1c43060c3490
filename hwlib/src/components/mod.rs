//! The component implementations, one file per component (`<name>.rs` next to `rtl/mase_<name>.sv`)
//! and the registry: the one list below declares each module and registers its component, in
//! listing order (`mase components`, the README table, the shared component test). Adding a
//! component is one line `<name>::<Type>,` here.

pub mod binary;
pub mod gelu_interp;
pub mod row_table;

/// Declares `pub mod <module>;` for each entry and the registry array of their components.
macro_rules! registry {
    ($($module:ident :: $ty:ident),* $(,)?) => {
        $( pub mod $module; )*

        /// Every registered component, in listing order.
        pub(crate) static REGISTRY: &[&dyn crate::component::Component] = &[$(&$module::$ty),*];
    };
}

registry! {
    fifo::Fifo,
    skid_buffer::SkidBuffer,
    relu::Relu,
    cast::Cast,
    linear::Linear,
    qlinear::Qlinear,
    fork::Fork,
    lane_converter::LaneConverter,
    add::Add,
    add_table::AddTable,
    sub::Sub,
    mul::Mul,
    gelu::Gelu,
    tanh::Tanh,
    softmax::Softmax,
    masked_softmax::MaskedSoftmax,
    transpose::Transpose,
    row_select::RowSelect,
    embedding::Embedding,
    matmul::Matmul,
    layer_norm::LayerNorm,
    link::Link,
}
