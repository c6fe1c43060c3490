// mase_assert.svh: the library's shared checks, one macro per rule.
//
// Parameter checks. Each macro is one statement for an `initial` block (elaboration-time check,
// under `ifndef SYNTHESIS`) and prints exactly the message of the matching Rust helper in
// hwlib/src/lib.rs (`check_range`, `check_divides`, `check_equal`), so a component's RTL and its
// `validate()` reject a parameter set with the same words; the validate-vs-RTL test in
// sim/tests/components.rs keeps the two equal. A parameter's name is printed from the macro
// argument itself (`"P`"), so name and value cannot drift apart.
//   `MASE_CHECK_RANGE(P, LO, HI);            P must be between LO and HI, got V
//   `MASE_CHECK_RANGE_OF(NAME, V, LO, HI);   the same for a derived value V named by string NAME
//   `MASE_CHECK_DIVIDES(A, B);               A (VA) must divide B (VB)    (also when A <= 0)
//   `MASE_CHECK_EQUAL(A, B);                 A (VA) must equal B (VB)
//   `MASE_CHECK_EQUAL_TO(A, NAME, V);        A (VA) must equal NAME (V)   (V derived)
// Groups of the rules above, one per Rust helper or loop that checks a port as a whole (same
// rules, same order as the Rust side):
//   `MASE_CHECK_FORMAT(PORT, MAX_WIDTH);     PORT_PRECISION_0 in 1..MAX_WIDTH, PORT_PRECISION_1 in
//                                            -2^24..2^24
//   `MASE_CHECK_BLOCK_SHAPE(PORT);           `check_block_shape`: sizes in 1..2^20, parallelisms
//                                            in 1..1024, each parallelism divides its size
//   `MASE_CHECK_SAME_SHAPE(A, B);            A's four TENSOR_SIZE/PARALLELISM_DIM_0/1 equal B's
//   `MASE_CHECK_MODES(PORT);                 `check_modes`: PORT_ROUNDING in 0..6, PORT_OVERFLOW
//                                            in 0..3
//
// A single-rule macro expands to an `if` without `else`: under a condition of its own, put it in a
// begin/end block (an `else` after it would bind to the macro's `if`).
//
// Stream handshake. `MASE_ASSERT_STREAM_STABLE(PORT) (no `;` after it) is a concurrent assertion
// (module scope, needs `clk` and `rst` in scope): once PORT_valid is high while PORT_ready is
// low, the next cycle still offers a beat and PORT is unchanged. Every component states it for
// each of its stream ports (inputs: a check on the producer; outputs: on the component itself);
// sim/tests/lint.rs checks that. Empty under SYNTHESIS, so Yosys 0.23 (which defines SYNTHESIS)
// only stores the definitions.
//
// Files include this header through an outer guard, so a tool that was handed the header as the
// first source (the file lists the library writes: component dependencies list it first) never
// needs an include path, and a tool that compiles one file alone finds it with `-I rtl` / `-y rtl`:
//   `ifndef MASE_ASSERT_SVH
//   `include "mase_assert.svh"
//   `endif
`ifndef MASE_ASSERT_SVH
`define MASE_ASSERT_SVH

`define MASE_CHECK_RANGE_OF(NAME, V, LO, HI) \
  if ((V) < (LO) || (V) > (HI)) \
    $fatal(1, "%s must be between %0d and %0d, got %0d", NAME, LO, HI, V)

`define MASE_CHECK_RANGE(P, LO, HI) `MASE_CHECK_RANGE_OF(`"P`", P, LO, HI)

`define MASE_CHECK_DIVIDES(A, B) \
  if ((A) <= 0 || (B) % (A) != 0) $fatal(1, "%s (%0d) must divide %s (%0d)", `"A`", A, `"B`", B)

`define MASE_CHECK_EQUAL_TO(A, NAME, V) \
  if ((A) != (V)) $fatal(1, "%s (%0d) must equal %s (%0d)", `"A`", A, NAME, V)

`define MASE_CHECK_EQUAL(A, B) `MASE_CHECK_EQUAL_TO(A, `"B`", B)

`define MASE_CHECK_FORMAT(PORT, MAX_WIDTH) \
  begin \
    `MASE_CHECK_RANGE(PORT``_PRECISION_0, 1, MAX_WIDTH); \
    `MASE_CHECK_RANGE(PORT``_PRECISION_1, -16777216, 16777216); \
  end

`define MASE_CHECK_BLOCK_SHAPE(PORT) \
  begin \
    `MASE_CHECK_RANGE(PORT``_TENSOR_SIZE_DIM_0, 1, 1048576); \
    `MASE_CHECK_RANGE(PORT``_TENSOR_SIZE_DIM_1, 1, 1048576); \
    `MASE_CHECK_RANGE(PORT``_PARALLELISM_DIM_0, 1, 1024); \
    `MASE_CHECK_RANGE(PORT``_PARALLELISM_DIM_1, 1, 1024); \
    `MASE_CHECK_DIVIDES(PORT``_PARALLELISM_DIM_0, PORT``_TENSOR_SIZE_DIM_0); \
    `MASE_CHECK_DIVIDES(PORT``_PARALLELISM_DIM_1, PORT``_TENSOR_SIZE_DIM_1); \
  end

`define MASE_CHECK_SAME_SHAPE(A, B) \
  begin \
    `MASE_CHECK_EQUAL(A``_TENSOR_SIZE_DIM_0, B``_TENSOR_SIZE_DIM_0); \
    `MASE_CHECK_EQUAL(A``_TENSOR_SIZE_DIM_1, B``_TENSOR_SIZE_DIM_1); \
    `MASE_CHECK_EQUAL(A``_PARALLELISM_DIM_0, B``_PARALLELISM_DIM_0); \
    `MASE_CHECK_EQUAL(A``_PARALLELISM_DIM_1, B``_PARALLELISM_DIM_1); \
  end

`define MASE_CHECK_MODES(PORT) \
  begin \
    `MASE_CHECK_RANGE(PORT``_ROUNDING, 0, 6); \
    `MASE_CHECK_RANGE(PORT``_OVERFLOW, 0, 3); \
  end

`ifndef SYNTHESIS
`define MASE_ASSERT_STREAM_STABLE(PORT) \
  assert property (@(posedge clk) disable iff (rst) \
      PORT``_valid && !PORT``_ready |=> PORT``_valid && $stable(PORT)) \
  else $error("%m: %s changed or dropped valid while stalled", `"PORT`");
`else
`define MASE_ASSERT_STREAM_STABLE(PORT)
`endif

`endif
