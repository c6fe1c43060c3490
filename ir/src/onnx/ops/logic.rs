//! Comparisons and boolean logic, the mask arithmetic of transformer exports: `Equal`, `Less`,
//! `LessOrEqual`, `Greater`, `GreaterOrEqual`, `And`, `Or`, `Xor`, `Not`, `Where`.

use super::math::fixed;
use super::OnnxOp;
use crate::op::{CmpOp, LogicOp, Op};

/// The family's op types.
pub(super) const OPS: &[OnnxOp] = &[
    OnnxOp {
        name: "Equal",
        max_inputs: 2,
        convert: |i, n| fixed(i, n, Op::Compare { cmp: CmpOp::Equal }, 2),
    },
    OnnxOp { name: "Less", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Compare { cmp: CmpOp::Less }, 2) },
    OnnxOp {
        name: "LessOrEqual",
        max_inputs: 2,
        convert: |i, n| fixed(i, n, Op::Compare { cmp: CmpOp::LessOrEqual }, 2),
    },
    OnnxOp {
        name: "Greater",
        max_inputs: 2,
        convert: |i, n| fixed(i, n, Op::Compare { cmp: CmpOp::Greater }, 2),
    },
    OnnxOp {
        name: "GreaterOrEqual",
        max_inputs: 2,
        convert: |i, n| fixed(i, n, Op::Compare { cmp: CmpOp::GreaterOrEqual }, 2),
    },
    OnnxOp { name: "And", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Logic { logic: LogicOp::And }, 2) },
    OnnxOp { name: "Or", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Logic { logic: LogicOp::Or }, 2) },
    OnnxOp { name: "Xor", max_inputs: 2, convert: |i, n| fixed(i, n, Op::Logic { logic: LogicOp::Xor }, 2) },
    OnnxOp { name: "Not", max_inputs: 1, convert: |i, n| fixed(i, n, Op::Not, 1) },
    OnnxOp { name: "Where", max_inputs: 3, convert: |i, n| fixed(i, n, Op::Where, 3) },
];
