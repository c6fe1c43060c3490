// mase_assert.svh: the library's shared header: module-header groups, parameter checks and the
// stream-stability assertion, one macro per fact. (It keeps its first name because every
// component's file list starts with it.)
//
// Module headers. Every stream PORT of a component (DATA_IN_0, WEIGHT, DATA_OUT_0, ...) is
// described by the same group of parameters and carried by the same triple of ports; these macros
// write each group once, so a component's header is a list of its streams. Each expands to a
// comma-separated list for a `#(...)` parameter list or an ANSI port list (put a comma after it
// when more follows) and documents every parameter and port it declares; the use site carries a
// doc comment saying what the group is in that module. PORT is the upper-case parameter prefix,
// NAME the lower-case port name; defaults are expressions (earlier parameters allowed).
//   `MASE_FORMAT_PARAMS(PORT, P0, P1)        PORT_PRECISION_0 = P0 (lane bits),
//                                            PORT_PRECISION_1 = P1 (fractional bits)
//   `MASE_SHAPE_PARAMS(PORT, S0, S1, L0, L1) PORT_TENSOR_SIZE_DIM_0/1 = S0/S1,
//                                            PORT_PARALLELISM_DIM_0/1 = L0/L1
//   `MASE_SHAPE_PARAMS_OF(PORT, FROM)        the same four, defaulting to FROM's four
//   `MASE_TENSOR_PARAMS(PORT, P0, P1, S0, S1, L0, L1)   format then shape of a 2-D stream
//   `MASE_VECTOR_PARAMS(PORT, P0, P1, S0, L0) format, PORT_TENSOR_SIZE_DIM_0 = S0 and
//                                            PORT_PARALLELISM_DIM_0 = L0 of a 1-D tensor
//   `MASE_MODE_PARAMS(PORT)                  PORT_ROUNDING = 0 (TRN), PORT_OVERFLOW = 1 (SAT): the
//                                            library default of every cast to PORT's format
//   `MASE_CLOCK_PORTS                        input clk, input rst (synchronous, active high)
//   `MASE_STREAM_IN(NAME, WIDTH)             input [WIDTH-1:0] NAME, input NAME_valid,
//                                            output NAME_ready
//   `MASE_STREAM_OUT(NAME, WIDTH)            output [WIDTH-1:0] NAME, output NAME_valid,
//                                            input NAME_ready
//   `MASE_WORD_PARAMS                        DATA_WIDTH = 8 (bits per lane), LANES = 1 (lanes per
//                                            beat): the opaque word of the stream primitives
//   `MASE_LINK_WORD_PARAMS                   `MASE_WORD_PARAMS, then LINK_WIDTH = 8 (bits an
//                                            inter-device link carries per cycle)
//   `MASE_STAGE_PORTS(XW, YW)                the ports of a one-in one-out stage: clock, reset,
//                                            input stream data_in_0 (XW bits), output stream
//                                            data_out_0 (YW bits)
//
// Instance connections: the same groups passed through to an inner instance under the same
// names (a wrapper's parameters and ports to the module it wraps), for an instance's `#(...)` or
// port list (put a comma after it when more follows).
//   `MASE_PASS_FORMAT(PORT)                  .PORT_PRECISION_0(PORT_PRECISION_0), ..._1
//   `MASE_PASS_SHAPE(PORT)                   the four PORT_TENSOR_SIZE/PARALLELISM_DIM_0/1
//   `MASE_PASS_TENSOR(PORT)                  format then shape
//   `MASE_PASS_MODES(PORT)                   PORT_ROUNDING, PORT_OVERFLOW
//   `MASE_PASS_STREAM(NAME)                  .NAME(NAME), .NAME_valid(NAME_valid),
//                                            .NAME_ready(NAME_ready)
//   `MASE_PASS_STAGE_PORTS                   clk, rst, the data_in_0 and data_out_0 streams
//
// Datapath idioms (module scope, need the names they mention in scope):
//   `MASE_CAST_TO(PORT, XW, XF, XS, YS, X, Y);   a mase_cast_core instance u_cast taking X (XW
//       bits, XF fractional, signed when XS) to Y in PORT's format (PORT_PRECISION_0/1, signed
//       when YS) with PORT_ROUNDING and PORT_OVERFLOW
//   `MASE_OUTPUT_SKID(WIDTH, N_LANES, DATA, VALID, READY);   the output register of a component:
//       a mase_skid_buffer u_out (N_LANES lanes of WIDTH bits) taking beat DATA/VALID (READY:
//       it has room) and driving the data_out_0 stream
//   `MASE_VALID_REG(Q, EN, D)                a pipeline stage's valid bit: Q cleared by rst, else
//       loads D in the cycles EN is high
//   `MASE_ROM_INIT(ROM, WORDS, FILE)         fills the unpacked array ROM (WORDS words) at time 0
//       from the $readmemh file FILE, or with zeros when FILE is "" (generate blocks
//       g_ROM_file / g_ROM_zero)
//   `MASE_LINK_FLITS                         the flit arithmetic both ends of an inter-device link
//       share (mase_link_tx cuts beats into the flits mase_link_rx reassembles): localparams BW
//       (bits per beat, LANES*DATA_WIDTH), FLITS (flits per beat, ceil(BW / LINK_WIDTH), kept
//       >= 1), PW (FLITS*LINK_WIDTH, a beat padded to whole flits) and FW (flit counter width)
// Only `/* */` comments stand inside the definitions (a `//` comment would swallow the line
// continuation); Verilator, Yosys 0.23 and sv-parser (emit/src/sv/header.rs) all expand them.
//
// Parameter checks. Each macro is one or more generate items for a `generate` region under
// `ifndef SYNTHESIS`: a bad set stops elaboration with `$fatal`, so `verilator --lint-only` rejects
// it without building a model (an `initial` block fired only once a model was compiled and run).
// Each check is a named block, `g_check_<parameter>` (`_divides`, `_equal` for those rules), as
// -Wall in recent releases of the simulator warns of unnamed generate blocks (GENUNNAMED); a
// hand-written check names its block the same way. Each prints exactly the message of the matching Rust helper in
// hwlib/src/lib.rs (`check_range`, `check_divides`, `check_equal`), so a component's RTL and its
// `validate()` reject a parameter set with the same words; the validate-vs-RTL test in
// sim/tests/components.rs keeps the two equal. A parameter's name is printed from the macro
// argument itself (`"P`"), so name and value cannot drift apart.
//   `MASE_CHECK_RANGE(P, LO, HI);            P must be between LO and HI, got V
//   `MASE_CHECK_RANGE_OF(LABEL, NAME, V, LO, HI);  the same for a derived value V named by
//       string NAME (LABEL: an identifier naming the check's block)
//   `MASE_CHECK_FLAG(P);                     the same with LO = 0, HI = 1 (an option)
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
//   `MASE_CHECK_WORD;                        `check_lanes`: the opaque word of `MASE_WORD_PARAMS,
//                                            DATA_WIDTH in 1..64, LANES in 1..1024
//   `MASE_CHECK_LINK_WORD;                   `check_beat_and_link`: `MASE_CHECK_WORD, LINK_WIDTH
//                                            in 1..65536
//   `MASE_CHECK_ROW_SHAPE(PORT, MAX_ROW, MAX_ROWS, MAX_PAR);   a stream of whole rows, one row
//                                            per beat: PORT_TENSOR_SIZE_DIM_0 in 1..MAX_ROW,
//                                            PORT_TENSOR_SIZE_DIM_1 in 1..MAX_ROWS,
//                                            PORT_PARALLELISM_DIM_0 in 1..MAX_PAR and dividing the
//                                            row, PORT_PARALLELISM_DIM_1 = 1 (in this order)
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
// needs an include path, and a tool that compiles one file alone finds it with `-I rtl` / `-y rtl`.
// The guard stands on one line (sim/tests/lint.rs checks this exact form):
//   `ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
`ifndef MASE_ASSERT_SVH
`define MASE_ASSERT_SVH

`define MASE_FORMAT_PARAMS(PORT, P0, P1) \
    /* Bits of a PORT element (two's complement unless PORT_SIGNED says otherwise). */ \
    parameter int PORT``_PRECISION_0 = P0, \
    /* Fractional bits of a PORT element (may be negative or exceed the width). */ \
    parameter int PORT``_PRECISION_1 = P1

`define MASE_SHAPE_PARAMS(PORT, S0, S1, L0, L1) \
    /* PORT tensor size along dim 0 (innermost, elements per row). */ \
    parameter int PORT``_TENSOR_SIZE_DIM_0 = S0, \
    /* PORT tensor size along dim 1 (rows). */ \
    parameter int PORT``_TENSOR_SIZE_DIM_1 = S1, \
    /* PORT elements of dim 0 per beat (divides the dim-0 size). */ \
    parameter int PORT``_PARALLELISM_DIM_0 = L0, \
    /* PORT rows per beat (divides the dim-1 size). */ \
    parameter int PORT``_PARALLELISM_DIM_1 = L1

`define MASE_SHAPE_PARAMS_OF(PORT, FROM) \
    `MASE_SHAPE_PARAMS(PORT, FROM``_TENSOR_SIZE_DIM_0, FROM``_TENSOR_SIZE_DIM_1, \
                       FROM``_PARALLELISM_DIM_0, FROM``_PARALLELISM_DIM_1)

`define MASE_TENSOR_PARAMS(PORT, P0, P1, S0, S1, L0, L1) \
    `MASE_FORMAT_PARAMS(PORT, P0, P1), \
    `MASE_SHAPE_PARAMS(PORT, S0, S1, L0, L1)

`define MASE_VECTOR_PARAMS(PORT, P0, P1, S0, L0) \
    `MASE_FORMAT_PARAMS(PORT, P0, P1), \
    /* PORT length (elements of its only dimension). */ \
    parameter int PORT``_TENSOR_SIZE_DIM_0 = S0, \
    /* PORT elements per beat (divides the length). */ \
    parameter int PORT``_PARALLELISM_DIM_0 = L0

`define MASE_MODE_PARAMS(PORT) \
    /* Rounding into PORT's format: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, */ \
    /* 5 RND_MIN_INF, 6 RND_CONV. */ \
    parameter int PORT``_ROUNDING = 0, \
    /* Overflow into PORT's format: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM. */ \
    parameter int PORT``_OVERFLOW = 1

`define MASE_CLOCK_PORTS \
    /* Clock; everything is registered on its rising edge. */ \
    input logic clk, \
    /* Synchronous active-high reset. */ \
    input logic rst

`define MASE_STREAM_IN(NAME, WIDTH) \
    /* Input beat, lane i at [i*W +: W] for lane width W. */ \
    input logic [WIDTH-1:0] NAME, \
    /* Input beat valid. */ \
    input logic NAME``_valid, \
    /* The component takes the beat (a beat moves when valid && ready). */ \
    output logic NAME``_ready

`define MASE_STREAM_OUT(NAME, WIDTH) \
    /* Output beat, lane i at [i*W +: W] for lane width W. */ \
    output logic [WIDTH-1:0] NAME, \
    /* Output beat valid. */ \
    output logic NAME``_valid, \
    /* The consumer takes the beat (a beat moves when valid && ready). */ \
    input logic NAME``_ready

`define MASE_WORD_PARAMS \
    /* Bits per lane. */ \
    parameter int DATA_WIDTH = 8, \
    /* Lanes per beat; the data ports are LANES*DATA_WIDTH bits wide. */ \
    parameter int LANES = 1

`define MASE_FIFO_PARAMS \
    `MASE_WORD_PARAMS, \
    /* Memory depth in beats (2..65536); capacity is DEPTH + 1 + OUT_REG + IN_REG. */ \
    parameter int DEPTH = 16, \
    /* 1: the memory's read (after any depth mux) registered once more before the output */ \
    /* (latency +1); 0: the memory's read register is the output register (0..1). */ \
    parameter int OUT_REG = 0, \
    /* 1: the input beat registered before the memory write (latency +1, capacity +1), */ \
    /* so the producer's valid reaches neither the write enable nor the occupancy counter */ \
    /* and input ready is a register; 0: the input writes the memory directly (0..1). */ \
    parameter int IN_REG = 0, \
    /* 1: the occupancy flags are registers of their own (not full and not empty after this */ \
    /* cycle's push and pop), so neither a producer's enable nor the memory's read enable */ \
    /* waits for a compare of the occupancy counter; 0: both are compares of the counter. */ \
    /* Same behaviour either way (0..1). */ \
    parameter int READY_REG = 0, \
    /* 1: the memory carries Yosys's no_rw_check attribute (a read never meets a write of */ \
    /* its address: the pointers are equal only when the memory is empty or full), so */ \
    /* synthesis builds no collision bypass after the read; 0: no attribute, and on ECP5 a */ \
    /* word of LUTs and FFs after the block RAM's read (the 64-deep FIFO's critical path, */ \
    /* 124.6 MHz). Same behaviour either way (0..1). */ \
    parameter int NO_RW_CHECK = 1

`define MASE_LINK_WORD_PARAMS \
    `MASE_WORD_PARAMS, \
    /* Bits the link carries per cycle (1..65536). */ \
    parameter int LINK_WIDTH = 8

`define MASE_STAGE_PORTS(XW, YW) \
    `MASE_CLOCK_PORTS, \
    `MASE_STREAM_IN(data_in_0, XW), \
    `MASE_STREAM_OUT(data_out_0, YW)

`define MASE_PASS_FORMAT(PORT) \
    .PORT``_PRECISION_0(PORT``_PRECISION_0), \
    .PORT``_PRECISION_1(PORT``_PRECISION_1)

`define MASE_PASS_SHAPE(PORT) \
    .PORT``_TENSOR_SIZE_DIM_0(PORT``_TENSOR_SIZE_DIM_0), \
    .PORT``_TENSOR_SIZE_DIM_1(PORT``_TENSOR_SIZE_DIM_1), \
    .PORT``_PARALLELISM_DIM_0(PORT``_PARALLELISM_DIM_0), \
    .PORT``_PARALLELISM_DIM_1(PORT``_PARALLELISM_DIM_1)

`define MASE_PASS_TENSOR(PORT) \
    `MASE_PASS_FORMAT(PORT), \
    `MASE_PASS_SHAPE(PORT)

`define MASE_PASS_MODES(PORT) \
    .PORT``_ROUNDING(PORT``_ROUNDING), \
    .PORT``_OVERFLOW(PORT``_OVERFLOW)

`define MASE_PASS_STREAM(NAME) \
    .NAME(NAME), \
    .NAME``_valid(NAME``_valid), \
    .NAME``_ready(NAME``_ready)

`define MASE_PASS_STAGE_PORTS \
    .clk(clk), \
    .rst(rst), \
    `MASE_PASS_STREAM(data_in_0), \
    `MASE_PASS_STREAM(data_out_0)

`define MASE_CAST_TO(PORT, XW, XF, XS, YS, X, Y) \
  mase_cast_core #( \
      .IN_WIDTH  (XW), \
      .IN_FRAC   (XF), \
      .IN_SIGNED (XS), \
      .OUT_WIDTH (PORT``_PRECISION_0), \
      .OUT_FRAC  (PORT``_PRECISION_1), \
      .OUT_SIGNED(YS), \
      .ROUNDING  (PORT``_ROUNDING), \
      .OVERFLOW  (PORT``_OVERFLOW) \
  ) u_cast ( \
      .data_in (X), \
      .data_out(Y) \
  )

`define MASE_OUTPUT_SKID(WIDTH, N_LANES, DATA, VALID, READY) \
  mase_skid_buffer #( \
      .DATA_WIDTH(WIDTH), \
      .LANES     (N_LANES) \
  ) u_out ( \
      .clk             (clk), \
      .rst             (rst), \
      .data_in_0       (DATA), \
      .data_in_0_valid (VALID), \
      .data_in_0_ready (READY), \
      `MASE_PASS_STREAM(data_out_0) \
  )

`define MASE_CHECK_RANGE_OF(LABEL, NAME, V, LO, HI) \
  if ((V) < (LO) || (V) > (HI)) begin : g_check_``LABEL \
    $fatal(1, "%s must be between %0d and %0d, got %0d", NAME, LO, HI, V); \
  end

`define MASE_CHECK_RANGE(P, LO, HI) `MASE_CHECK_RANGE_OF(P, `"P`", P, LO, HI)

`define MASE_CHECK_FLAG(P) `MASE_CHECK_RANGE(P, 0, 1)

`define MASE_CHECK_DIVIDES(A, B) \
  if ((A) <= 0 || (B) % (A) != 0) begin : g_check_``A``_divides \
    $fatal(1, "%s (%0d) must divide %s (%0d)", `"A`", A, `"B`", B); \
  end

`define MASE_CHECK_EQUAL_TO(A, NAME, V) \
  if ((A) != (V)) begin : g_check_``A``_equal \
    $fatal(1, "%s (%0d) must equal %s (%0d)", `"A`", A, NAME, V); \
  end

`define MASE_CHECK_EQUAL(A, B) `MASE_CHECK_EQUAL_TO(A, `"B`", B)

`define MASE_CHECK_FORMAT(PORT, MAX_WIDTH) \
  `MASE_CHECK_RANGE(PORT``_PRECISION_0, 1, MAX_WIDTH); \
  `MASE_CHECK_RANGE(PORT``_PRECISION_1, -16777216, 16777216)

`define MASE_CHECK_BLOCK_SHAPE(PORT) \
  `MASE_CHECK_RANGE(PORT``_TENSOR_SIZE_DIM_0, 1, 1048576); \
  `MASE_CHECK_RANGE(PORT``_TENSOR_SIZE_DIM_1, 1, 1048576); \
  `MASE_CHECK_RANGE(PORT``_PARALLELISM_DIM_0, 1, 1024); \
  `MASE_CHECK_RANGE(PORT``_PARALLELISM_DIM_1, 1, 1024); \
  `MASE_CHECK_DIVIDES(PORT``_PARALLELISM_DIM_0, PORT``_TENSOR_SIZE_DIM_0); \
  `MASE_CHECK_DIVIDES(PORT``_PARALLELISM_DIM_1, PORT``_TENSOR_SIZE_DIM_1)

`define MASE_CHECK_SAME_SHAPE(A, B) \
  `MASE_CHECK_EQUAL(A``_TENSOR_SIZE_DIM_0, B``_TENSOR_SIZE_DIM_0); \
  `MASE_CHECK_EQUAL(A``_TENSOR_SIZE_DIM_1, B``_TENSOR_SIZE_DIM_1); \
  `MASE_CHECK_EQUAL(A``_PARALLELISM_DIM_0, B``_PARALLELISM_DIM_0); \
  `MASE_CHECK_EQUAL(A``_PARALLELISM_DIM_1, B``_PARALLELISM_DIM_1)

`define MASE_CHECK_MODES(PORT) \
  `MASE_CHECK_RANGE(PORT``_ROUNDING, 0, 6); \
  `MASE_CHECK_RANGE(PORT``_OVERFLOW, 0, 3)

`define MASE_CHECK_WORD \
  `MASE_CHECK_RANGE(DATA_WIDTH, 1, 64); \
  `MASE_CHECK_RANGE(LANES, 1, 1024)

`define MASE_CHECK_LINK_WORD \
  `MASE_CHECK_WORD; \
  `MASE_CHECK_RANGE(LINK_WIDTH, 1, 65536)

`define MASE_CHECK_ROW_SHAPE(PORT, MAX_ROW, MAX_ROWS, MAX_PAR) \
  `MASE_CHECK_RANGE(PORT``_TENSOR_SIZE_DIM_0, 1, MAX_ROW); \
  `MASE_CHECK_RANGE(PORT``_TENSOR_SIZE_DIM_1, 1, MAX_ROWS); \
  `MASE_CHECK_RANGE(PORT``_PARALLELISM_DIM_0, 1, MAX_PAR); \
  `MASE_CHECK_DIVIDES(PORT``_PARALLELISM_DIM_0, PORT``_TENSOR_SIZE_DIM_0); \
  `MASE_CHECK_RANGE(PORT``_PARALLELISM_DIM_1, 1, 1)


`define MASE_VALID_REG(Q, EN, D) \
  always_ff @(posedge clk) begin \
    if (rst) Q <= 1'b0; \
    else if (EN) Q <= D; \
  end

`define MASE_ROM_INIT(ROM, WORDS, FILE) \
  if (FILE != "") begin : g_``ROM``_file \
    initial $readmemh(FILE, ROM); \
  end else begin : g_``ROM``_zero \
    initial for (int k = 0; k < WORDS; k++) ROM[k] = '0; \
  end

`define MASE_LINK_FLITS \
  /* Bits per beat. */ \
  localparam int BW = LANES * DATA_WIDTH; \
  /* Flits per beat (kept >= 1 so an invalid LINK_WIDTH still elaborates to its check). */ \
  localparam int FLITS = LINK_WIDTH > 0 ? (BW + LINK_WIDTH - 1) / LINK_WIDTH : 1; \
  /* Bits of a beat padded to whole flits. */ \
  localparam int PW = FLITS * LINK_WIDTH; \
  /* Flit counter width. */ \
  localparam int FW = FLITS > 1 ? $clog2(FLITS) : 1;

// Aligned element-wise add and subtract (mase_add, mase_sub): the two components are one design
// that differs only in the operator, and SystemVerilog has no module templates. The design lives
// here, in the one header both components' file lists carry, so that a fix reaches both: each
// component file is `module mase_add #(`MASE_ALIGNED_BINARY_PARAMS) (`MASE_ALIGNED_BINARY_PORTS);
// `MASE_ALIGNED_BINARY(+)` plus its stream assertions. The parameters and ports are documented
// in the macros; the datapath is described in rtl/mase_add.sv.
`define MASE_ALIGNED_BINARY_PARAMS \
    /* Input 0: signed lanes of 1..64 bits, fractional bits -2^24..2^24. */ \
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1), \
    /* Input 1's format: signed 1..64 bits, fractional bits within 63 of input 0's. */ \
    `MASE_FORMAT_PARAMS(DATA_IN_1, 8, 4), \
    /* Input 1's shape (must equal input 0's). */ \
    `MASE_SHAPE_PARAMS_OF(DATA_IN_1, DATA_IN_0), \
    /* Output format: signed 1..64 bits. */ \
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4), \
    /* Output shape (must equal input 0's). */ \
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0), \
    /* Rounding and overflow of the cast of the exact result. */ \
    `MASE_MODE_PARAMS(DATA_OUT_0)

`define MASE_ALIGNED_BINARY_PORTS \
    /* Clock and reset (reset empties the output register). */ \
    `MASE_CLOCK_PORTS, \
    /* Input 0 beats, taken together with input 1's (a join). */ \
    `MASE_STREAM_IN(data_in_0, \
                    DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0), \
    /* Input 1 beats, taken together with input 0's (a join). */ \
    `MASE_STREAM_IN(data_in_1, \
                    DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_1_PRECISION_0), \
    /* Output beats (data and valid registered). */ \
    `MASE_STREAM_OUT(data_out_0, \
                     DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)

`ifndef SYNTHESIS
`define MASE_ALIGNED_BINARY_CHECKS \
  generate \
    `MASE_CHECK_FORMAT(DATA_IN_0, 64); \
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0); \
    `MASE_CHECK_FORMAT(DATA_IN_1, 64); \
    if (DATA_IN_1_PRECISION_1 - DATA_IN_0_PRECISION_1 > 63 || \
        DATA_IN_0_PRECISION_1 - DATA_IN_1_PRECISION_1 > 63) begin : g_check_alignment \
      $fatal(1, "DATA_IN_1_PRECISION_1 (%0d) must be within 63 of DATA_IN_0_PRECISION_1 (%0d)", \
             DATA_IN_1_PRECISION_1, DATA_IN_0_PRECISION_1); \
    end \
    `MASE_CHECK_SAME_SHAPE(DATA_IN_1, DATA_IN_0); \
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64); \
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0); \
    `MASE_CHECK_MODES(DATA_OUT_0); \
  endgenerate
`else
`define MASE_ALIGNED_BINARY_CHECKS
`endif

// The body: the join, the exact aligned OP of each lane pair cast to the output format, and the
// output register. Needs the parameters and ports above in scope.
`define MASE_ALIGNED_BINARY(OP) \
  /* Lanes per beat. */ \
  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1; \
  /* Lane widths. */ \
  localparam int W0 = DATA_IN_0_PRECISION_0; \
  localparam int W1 = DATA_IN_1_PRECISION_0; \
  localparam int WO = DATA_OUT_0_PRECISION_0; \
  /* Fractional bits of the exact result, and the alignment shifts of the two operands. */ \
  localparam int F = DATA_IN_0_PRECISION_1 > DATA_IN_1_PRECISION_1 ? DATA_IN_0_PRECISION_1 : \
      DATA_IN_1_PRECISION_1; \
  localparam int S0 = F - DATA_IN_0_PRECISION_1; \
  localparam int S1 = F - DATA_IN_1_PRECISION_1; \
  /* Width of the exact result (one bit wider than the wider aligned operand). */ \
  localparam int SW = (W0 + S0 > W1 + S1 ? W0 + S0 : W1 + S1) + 1; \
  /* The cast's rounding reads whether the exact result's bits below its half bit (the CR - 1 */ \
  /* lowest, CR = F - output frac dropped bits) are all zero. Its M lowest bits (M = the */ \
  /* smaller of CR - 1 and the larger alignment shift) are the unshifted operand's low bits */ \
  /* (negated for input 1 of a sub): zero exactly when that operand's MW lowest bits are. So */ \
  /* that test (an OR tree) runs on the input beside the adder, and E keeps its result in bit */ \
  /* 0 with bits 1..M-1 zero: the cast's OR over the dropped bits then has one live input, its */ \
  /* rounding decision no longer an OR tree deep before the output muxes (123.7 -> 130.7 MHz on */ \
  /* mase_sub's 64-bit-output test set, where the OR was 41 bits wide). Same cast result. */ \
  localparam int CR = F - DATA_OUT_0_PRECISION_1; \
  localparam int SX = S0 > S1 ? S0 : S1; \
  localparam int M = CR - 1 < SX ? CR - 1 : SX; \
  /* Width of the unshifted operand's bits the test reads (its bits above are sign bits). */ \
  localparam int MW = S0 >= S1 ? (M < W1 ? M : W1) : (M < W0 ? M : W0); \
  `MASE_ALIGNED_BINARY_CHECKS \
  /* Output register free or being drained; the exact stage E may load. */ \
  logic space, e_adv; \
  /* Both beats present and taken this cycle. */ \
  logic fire; \
  /* E: the exact results of the taken beats, lane i at [i*SW +: SW] (registered before the */ \
  /* cast, so the alignment adder and the cast's rounding and saturation are separate */ \
  /* register-to-register paths). */ \
  logic e_valid; \
  logic [LANES*SW-1:0] e_res, res_all; \
  /* Cast results of E's beat. */ \
  logic [LANES*WO-1:0] res_lanes; \
  assign space = !data_out_0_valid || data_out_0_ready; \
  assign e_adv = !e_valid || space; \
  assign fire = data_in_0_valid && data_in_1_valid && e_adv; \
  assign data_in_0_ready = data_in_1_valid && e_adv; \
  assign data_in_1_ready = data_in_0_valid && e_adv; \
  for (genvar i = 0; i < LANES; i++) begin : g_lane \
    /* The exact aligned result of the lane pair. */ \
    logic [SW-1:0] exact; \
    assign exact = (SW'($signed(data_in_0[i*W0+:W0])) << S0) OP \
        (SW'($signed(data_in_1[i*W1+:W1])) << S1); \
    if (M >= 2) begin : g_sticky \
      /* The unshifted operand's MW lowest bits are not all zero. */ \
      logic sticky; \
      if (S0 >= S1) begin : g_in1 \
        assign sticky = |data_in_1[i*W1+:MW]; \
      end else begin : g_in0 \
        assign sticky = |data_in_0[i*W0+:MW]; \
      end \
      assign res_all[i*SW+:SW] = {exact[SW-1:M], {(M - 1) {1'b0}}, sticky}; \
      /* Bits 0..M-1 of the exact result are replaced by sticky. */ \
      logic unused_low; \
      assign unused_low = ^exact[M-1:0]; \
    end else begin : g_exact \
      assign res_all[i*SW+:SW] = exact; \
    end \
    `MASE_CAST_TO(DATA_OUT_0, SW, F, 1, 1, e_res[i*SW+:SW], res_lanes[i*WO+:WO]); \
  end \
  always_ff @(posedge clk) begin \
    if (rst) begin \
      e_valid <= 1'b0; \
      data_out_0_valid <= 1'b0; \
    end else begin \
      if (e_adv) e_valid <= data_in_0_valid && data_in_1_valid; \
      if (space) data_out_0_valid <= e_valid; \
    end \
  end \
  /* The data registers have no reset: validity is tracked by e_valid and data_out_0_valid. */ \
  always_ff @(posedge clk) begin \
    if (fire) e_res <= res_all; \
    if (space && e_valid) data_out_0 <= res_lanes; \
  end

// Softmax (mase_softmax, mase_masked_softmax): both are mase_softmax_core under a header of
// their own, so the parameters the three modules share are written once here: the core and both
// components declare them with `MASE_SOFTMAX_PARAMS (first) and `MASE_SOFTMAX_TABLE_PARAMS (last,
// after the mask parameters of those that have them), and the components pass them on to the core
// with `MASE_SOFTMAX_PASS; the core and mase_masked_softmax have the same ports,
// `MASE_MASKED_SOFTMAX_PORTS. The algorithm and architecture are described in mase_softmax_core.
`define MASE_SOFTMAX_PARAMS \
    /* Input: two's complement lanes of 1..16 bits, fractional bits 0..24; row length L = */ \
    /* DATA_IN_0_TENSOR_SIZE_DIM_0 (the softmax dimension, 1..4096); P = */ \
    /* DATA_IN_0_PARALLELISM_DIM_0 elements of a row per beat; one row per beat. */ \
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1), \
    /* Output format: 1..32 bits, fractional bits -2^24..2^24. */ \
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 7), \
    /* 1: output lanes are two's complement; 0: unsigned. */ \
    parameter int DATA_OUT_0_SIGNED = 0, \
    /* Output shape (must equal the input's). */ \
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0), \
    /* Rounding and overflow of the output cast. */ \
    `MASE_MODE_PARAMS(DATA_OUT_0), \
    /* Fractional bits EF of exp values and table entries (4..28). */ \
    parameter int EXP_FRAC = 24, \
    /* Index bits H of each exp table (1..12). */ \
    parameter int EXP_TABLE_BITS = 10, \
    /* Reciprocal precision RB (4..28). */ \
    parameter int RECIP_BITS = 20, \
    /* Cycles per exp beat: 1 (3P multipliers) or 2 (d*K and the table product share one */ \
    /* multiplier per lane: 2P multipliers at half the rate). */ \
    parameter int FOLD = 1

`define MASE_SOFTMAX_TABLE_PARAMS \
    /* Path of the T_hi table .mem file ($readmemh; "" = all-zero table). */ \
    parameter EXP_HI_MEM_FILE = "", \
    /* Path of the T_lo table .mem file ($readmemh; "" = all-zero table). */ \
    parameter EXP_LO_MEM_FILE = ""

// The ports of the core and of mase_masked_softmax: the data, the keep bits and the output.
`define MASE_MASKED_SOFTMAX_PORTS \
    /* Clock and reset (reset empties every buffer and pipeline and restarts at a tensor's */ \
    /* first row). */ \
    `MASE_CLOCK_PORTS, \
    /* data_in_0: input beats: P consecutive elements of a row, taken when valid (ready from */ \
    /* FIFO registers; during a tensor's first row taken together with the data_in_1 beat of */ \
    /* the same positions). */ \
    `MASE_STREAM_IN(data_in_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0), \
    /* data_in_1: keep bits, one 1-bit lane per element of a data_in_0 beat (1 = keep, 0 = */ \
    /* masked), L/P beats per tensor of MASK_ROWS rows, taken with the tensor's first row */ \
    /* (mase_softmax_core with MASKED = 0: ignored, ready low). */ \
    `MASE_STREAM_IN(data_in_1, DATA_IN_0_PARALLELISM_DIM_0), \
    /* data_out_0: output beats: the softmax values of the input beat's elements, exactly 0 */ \
    /* for masked ones (data and valid registered). */ \
    `MASE_STREAM_OUT(data_out_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)

// Both groups above, passed on to the core (named, so their place in the list does not matter).
`define MASE_SOFTMAX_PASS \
    `MASE_PASS_TENSOR(DATA_IN_0), \
    `MASE_PASS_FORMAT(DATA_OUT_0), \
    .DATA_OUT_0_SIGNED(DATA_OUT_0_SIGNED), \
    `MASE_PASS_SHAPE(DATA_OUT_0), \
    `MASE_PASS_MODES(DATA_OUT_0), \
    .EXP_FRAC(EXP_FRAC), \
    .EXP_TABLE_BITS(EXP_TABLE_BITS), \
    .RECIP_BITS(RECIP_BITS), \
    .FOLD(FOLD), \
    .EXP_HI_MEM_FILE(EXP_HI_MEM_FILE), \
    .EXP_LO_MEM_FILE(EXP_LO_MEM_FILE)

// Table lookup (mase_gelu, and mase_tanh: mase_gelu with SHAPE = 1): both start with the
// lookup's input and output, `MASE_LOOKUP_IO_PARAMS(OUT_FRAC) (OUT_FRAC the default output
// fractional bits), and have the parameters of the lookup's two forms after the table range,
// `MASE_LOOKUP_FORM_PARAMS (FORM_PARAMS on the Rust side, hwlib/src/components/gelu.rs). x is the input code, with SHAPE = 1 its magnitude |x| (the
// bands then lie on magnitudes: inner below BAND_MID, middle in [BAND_MID, BAND_OUT)). The
// datapath is described in mase_gelu. `MASE_LOOKUP_FORM_PASS passes them on to a mase_gelu.
`define MASE_LOOKUP_IO_PARAMS(OUT_FRAC) \
    /* Input: two's complement lanes of 1..16 bits, fractional bits -2^24..2^24. */ \
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1), \
    /* Output format: two's complement lanes of 1..32 bits, fractional bits -2^24..2^24. */ \
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, OUT_FRAC), \
    /* Output shape (must equal the input's). */ \
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0), \
    /* Rounding and overflow into the output format: the table was generated with the same */ \
    /* modes (SHAPE 0: also those of the upper tail, cast(x); SHAPE 1: those of |t|, negative */ \
    /* inputs negate the result). */ \
    `MASE_MODE_PARAMS(DATA_OUT_0)

`define MASE_LOOKUP_FORM_PARAMS \
    /* 0: one table entry per tabulated code of [LO, HI]; 1: interpolated breakpoints. */ \
    parameter int FORM = 0, \
    /* FORM 1: segment bits of the inner band -BAND_MID <= x < BAND_MID (0..12). */ \
    parameter int SEG_BITS = 7, \
    /* FORM 1: segment bits of the middle band, -BAND_OUT <= x < BAND_OUT outside the inner */ \
    /* one (0..12). */ \
    parameter int SEG_BITS_MID = 7, \
    /* FORM 1: segment bits of the outer band (the rest of the table range; 0..12). */ \
    parameter int SEG_BITS_OUT = 7, \
    /* FORM 1: inner band threshold in codes (0..32768; BAND_MID = BAND_OUT = 32768: one band). */ \
    parameter int BAND_MID = 32768, \
    /* FORM 1: middle band threshold in codes (BAND_MID..32768). */ \
    parameter int BAND_OUT = 32768, \
    /* FORM 1: G, breakpoint bits below the output LSB (0..8). */ \
    parameter int GUARD_BITS = 4

`define MASE_LOOKUP_FORM_PASS \
    .FORM(FORM), \
    .SEG_BITS(SEG_BITS), \
    .SEG_BITS_MID(SEG_BITS_MID), \
    .SEG_BITS_OUT(SEG_BITS_OUT), \
    .BAND_MID(BAND_MID), \
    .BAND_OUT(BAND_OUT), \
    .GUARD_BITS(GUARD_BITS)

`ifndef SYNTHESIS
`define MASE_ASSERT_STREAM_STABLE(PORT) \
  assert property (@(posedge clk) disable iff (rst) \
      PORT``_valid && !PORT``_ready |=> PORT``_valid && $stable(PORT)) \
  else $error("%m: %s changed or dropped valid while stalled", `"PORT`");
`else
`define MASE_ASSERT_STREAM_STABLE(PORT)
`endif

`endif
