// mase_masked_softmax: softmax over the innermost dimension (rows of L =
// DATA_IN_0_TENSOR_SIZE_DIM_0 elements, P = DATA_IN_0_PARALLELISM_DIM_0 per beat) under a
// key-padding mask, by the exact integer algorithm of mase_softmax, bit-identical to mase_hwlib's
// masked_softmax model: mase_softmax_core with MASKED = 1, which describes the algorithm and the
// architecture.
// Driving the mask: data_in_1 carries one keep bit per row position (1 = keep, 0 = masked: the
// positions where an additive attention mask holds -inf), P bits per beat (lane i of beat b is
// position b*P + i), L/P beats per tensor of MASK_ROWS rows (one sentence's heads x query rows),
// once per tensor, before or alongside that tensor's first row: the keep beats are taken together
// with the data beats of the tensor's first row and reused for its other MASK_ROWS - 1 rows.
// Masked elements are left out of the row's maximum and sum and output exactly 0; a row with
// every element masked outputs all zeros.
//   Latency: 2*L/P + CL + RB + 9 cycles (first input beat to first output beat, no stalls;
//   CL = clog2(L), RB = RECIP_BITS); folded (FOLD = 2): 3*L/P + CL + RB + 12.
//   II: L/P cycles per row (one beat per cycle; folded: 2*L/P), MASK_ROWS*L/P per tensor: the
//   keep beats cost no cycles (they move with the first row's beats).
//   Paths cut: data and valid at both inputs; their readies are registered except during a
//   tensor's first row, when each input's ready also depends on the other's valid (a join);
//   data, valid and ready at the output (skid buffer).
//   Resources: those of mase_softmax plus an L-bit mask register, one more bit per lane in the
//   row FIFO, 2P keep flags and a clog2(MASK_ROWS)-bit row counter.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_masked_softmax #(
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
    /// Rows per mask (1..2^20, dividing DATA_IN_0_TENSOR_SIZE_DIM_1): one keep vector of L bits
    /// is taken per MASK_ROWS rows (a sentence's heads x query rows).
    parameter int MASK_ROWS = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// Path of the T_hi table .mem file ($readmemh; "" = all-zero table).
    parameter EXP_HI_MEM_FILE = "",
    /// Path of the T_lo table .mem file ($readmemh; "" = all-zero table).
    parameter EXP_LO_MEM_FILE = ""
) (
    /// Clock and reset (reset empties every buffer and pipeline and restarts at a tensor's first
    /// row).
    `MASE_CLOCK_PORTS,
    /// data_in_0: input beats: P consecutive elements of a row (during a tensor's first row taken
    /// together with the data_in_1 beat of the same positions).
    `MASE_STREAM_IN(data_in_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0),
    /// data_in_1: keep bits, one 1-bit lane per element of a data_in_0 beat (1 = keep, 0 =
    /// masked), L/P beats per tensor of MASK_ROWS rows, taken with the tensor's first row.
    `MASE_STREAM_IN(data_in_1, DATA_IN_0_PARALLELISM_DIM_0),
    /// data_out_0: output beats: the softmax values of the input beat's elements, exactly 0 for
    /// masked ones (data and valid registered).
    `MASE_STREAM_OUT(data_out_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
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
      .MASKED(1),
      .MASK_ROWS(MASK_ROWS),
      .EXP_HI_MEM_FILE(EXP_HI_MEM_FILE),
      .EXP_LO_MEM_FILE(EXP_LO_MEM_FILE)
  ) u_core (
      .clk(clk),
      .rst(rst),
      .data_in_0(data_in_0),
      .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready),
      .data_in_1(data_in_1),
      .data_in_1_valid(data_in_1_valid),
      .data_in_1_ready(data_in_1_ready),
      .data_out_0(data_out_0),
      .data_out_0_valid(data_out_0_valid),
      .data_out_0_ready(data_out_0_ready)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_in_1)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
