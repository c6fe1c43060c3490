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
//   Latency: 2*L/P + CL + RB + 2*TL + 21 cycles (first input beat to first output beat, no stalls;
//   CL = clog2(L), RB = RECIP_BITS, TL = clog2(P)); folded (FOLD = 2): 3*L/P + CL + RB + 2*TL
//   + 24.
//   II: L/P cycles per row (one beat per cycle; folded: 2*L/P), MASK_ROWS*L/P per tensor: the
//   keep beats cost no cycles (they move with the first row's beats).
//   Paths cut: data and valid at both inputs; their readies are registered except during a
//   tensor's first row, when each input's ready also depends on the other's valid (a join);
//   data, valid and ready at the output (skid buffer).
//   Resources: those of mase_softmax plus an L-bit mask register, one more bit per lane in the
//   row FIFO, 2P keep flags and a clog2(MASK_ROWS)-bit row counter.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_masked_softmax #(
    /// The softmax parameters (rtl/mase_assert.svh): input format and shape (P lanes of a row of
    /// L per beat), output format, DATA_OUT_0_SIGNED, shape and modes, EXP_FRAC, EXP_TABLE_BITS,
    /// RECIP_BITS, FOLD.
    `MASE_SOFTMAX_PARAMS,
    /// Rows per mask (1..2^20, dividing DATA_IN_0_TENSOR_SIZE_DIM_1): one keep vector of L bits
    /// is taken per MASK_ROWS rows (a sentence's heads x query rows).
    parameter int MASK_ROWS = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// The exp tables' .mem files, EXP_HI_MEM_FILE and EXP_LO_MEM_FILE ($readmemh; "" = all-zero
    /// table).
    `MASE_SOFTMAX_TABLE_PARAMS
) (
    /// Clock and reset, data_in_0 (the data), data_in_1 (the keep bits) and data_out_0 (the
    /// softmax values) (rtl/mase_assert.svh).
    `MASE_MASKED_SOFTMAX_PORTS
);
  mase_softmax_core #(
      `MASE_SOFTMAX_PASS,
      .MASKED(1),
      .MASK_ROWS(MASK_ROWS)
  ) u_core (
      .clk(clk),
      .rst(rst),
      `MASE_PASS_STREAM(data_in_0),
      `MASE_PASS_STREAM(data_in_1),
      `MASE_PASS_STREAM(data_out_0)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_in_1)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
