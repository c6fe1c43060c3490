// mase_softmax: softmax over the innermost dimension (rows of L = DATA_IN_0_TENSOR_SIZE_DIM_0
// elements, P = DATA_IN_0_PARALLELISM_DIM_0 per beat) by an exact integer algorithm,
// bit-identical to mase_hwlib's softmax model: mase_softmax_core without a mask (MASKED = 0),
// which describes the algorithm and the architecture.
//   Latency: 2*L/P + CL + RB + 9 cycles (first input beat to first output beat, no stalls;
//   CL = clog2(L), RB = RECIP_BITS); folded (FOLD = 2): 3*L/P + CL + RB + 12.
//   II: L/P cycles per row (one beat per cycle); folded: 2*L/P.
//   Paths cut: data, valid and ready at both ports (input ready from FIFO registers, output from
//   the skid buffer).
//   Resources: 3P multipliers (folded: 2P), 2P exp table ROMs of 2^H x (EF+1) bits, four FIFOs,
//   a max tree, an adder tree and a CL+RB+1 stage divider (see mase_softmax_core).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_softmax #(
    /// Input: two's complement lanes of 1..16 bits, fractional bits 0..24; row length L =
    /// DATA_IN_0_TENSOR_SIZE_DIM_0 (the softmax dimension, 1..4096); P =
    /// DATA_IN_0_PARALLELISM_DIM_0 elements of a row per beat; one row per beat.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1),
    /// Output format: 1..32 bits, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 7),
    /// 1: output lanes are two's complement; 0: unsigned.
    parameter int DATA_OUT_0_SIGNED = 0,
    /// Output shape (must equal the input's).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0),
    /// Rounding and overflow of the output cast.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// Fractional bits EF of exp values and table entries (4..28).
    parameter int EXP_FRAC = 24,
    /// Index bits H of each exp table (1..12).
    parameter int EXP_TABLE_BITS = 10,
    /// Reciprocal precision RB (4..28).
    parameter int RECIP_BITS = 20,
    /// Cycles per exp beat: 1 (3P multipliers) or 2 (d*K and the table product share one
    /// multiplier per lane: 2P multipliers at half the rate).
    parameter int FOLD = 1,
    /// Path of the T_hi table .mem file ($readmemh; "" = all-zero table).
    parameter EXP_HI_MEM_FILE = "",
    /// Path of the T_lo table .mem file ($readmemh; "" = all-zero table).
    parameter EXP_LO_MEM_FILE = ""
) (
    /// Clock and reset (reset empties every buffer and pipeline).
    /// data_in_0: input beats: P consecutive elements of a row, taken when valid (ready from FIFO
    /// registers).
    /// data_out_0: output beats: the softmax values of the input beat's elements (data and valid
    /// registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
  // Waiver: the core's keep port is never offered a beat, so it never takes one.
  /* verilator lint_off UNUSEDSIGNAL */
  /// The core's (constant low) keep-port ready.
  logic unused_keep_ready;
  /* verilator lint_on UNUSEDSIGNAL */
  /// The core's keep-port data: a declared signal rather than a '0 literal, whose width Yosys
  /// 0.23 would resolve only by re-deriving this module under a $paramod name (then no module
  /// named mase_softmax is left for `synth_xilinx -top`).
  logic [DATA_IN_0_PARALLELISM_DIM_0-1:0] no_keep;
  assign no_keep = '0;

  mase_softmax_core #(
      .DATA_IN_0_PRECISION_0(DATA_IN_0_PRECISION_0),
      .DATA_IN_0_PRECISION_1(DATA_IN_0_PRECISION_1),
      .DATA_IN_0_TENSOR_SIZE_DIM_0(DATA_IN_0_TENSOR_SIZE_DIM_0),
      .DATA_IN_0_TENSOR_SIZE_DIM_1(DATA_IN_0_TENSOR_SIZE_DIM_1),
      .DATA_IN_0_PARALLELISM_DIM_0(DATA_IN_0_PARALLELISM_DIM_0),
      .DATA_IN_0_PARALLELISM_DIM_1(DATA_IN_0_PARALLELISM_DIM_1),
      .DATA_OUT_0_PRECISION_0(DATA_OUT_0_PRECISION_0),
      .DATA_OUT_0_PRECISION_1(DATA_OUT_0_PRECISION_1),
      .DATA_OUT_0_SIGNED(DATA_OUT_0_SIGNED),
      .DATA_OUT_0_TENSOR_SIZE_DIM_0(DATA_OUT_0_TENSOR_SIZE_DIM_0),
      .DATA_OUT_0_TENSOR_SIZE_DIM_1(DATA_OUT_0_TENSOR_SIZE_DIM_1),
      .DATA_OUT_0_PARALLELISM_DIM_0(DATA_OUT_0_PARALLELISM_DIM_0),
      .DATA_OUT_0_PARALLELISM_DIM_1(DATA_OUT_0_PARALLELISM_DIM_1),
      .DATA_OUT_0_ROUNDING(DATA_OUT_0_ROUNDING),
      .DATA_OUT_0_OVERFLOW(DATA_OUT_0_OVERFLOW),
      .EXP_FRAC(EXP_FRAC),
      .EXP_TABLE_BITS(EXP_TABLE_BITS),
      .RECIP_BITS(RECIP_BITS),
      .FOLD(FOLD),
      .MASKED(0),
      .MASK_ROWS(1),
      .EXP_HI_MEM_FILE(EXP_HI_MEM_FILE),
      .EXP_LO_MEM_FILE(EXP_LO_MEM_FILE)
  ) u_core (
      .clk(clk),
      .rst(rst),
      .data_in_0(data_in_0),
      .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready),
      .data_in_1(no_keep),
      .data_in_1_valid(1'b0),
      .data_in_1_ready(unused_keep_ready),
      .data_out_0(data_out_0),
      .data_out_0_valid(data_out_0_valid),
      .data_out_0_ready(data_out_0_ready)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
