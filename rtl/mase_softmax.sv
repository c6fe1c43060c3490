// mase_softmax: softmax over the innermost dimension (rows of L = DATA_IN_0_TENSOR_SIZE_DIM_0
// elements, P = DATA_IN_0_PARALLELISM_DIM_0 per beat) by an exact integer algorithm,
// bit-identical to mase_hwlib's softmax model: mase_softmax_core without a mask (MASKED = 0),
// which describes the algorithm and the architecture.
//   Latency: 2*L/P + CL + RB + 2*TL + 21 cycles (first input beat to first output beat, no stalls;
//   CL = clog2(L), RB = RECIP_BITS, TL = clog2(P)); folded (FOLD = 2): 3*L/P + CL + RB + 2*TL
//   + 24.
//   II: L/P cycles per row (one beat per cycle); folded: 2*L/P.
//   Paths cut: data, valid and ready at both ports (input ready from FIFO registers, output from
//   the skid buffer).
//   Resources: 3P multipliers (folded: 2P), 2P exp table ROMs of 2^H x (EF+1) bits, four FIFOs,
//   a max tree, an adder tree and a CL+RB+1 stage divider (see mase_softmax_core).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_softmax #(
    /// The softmax parameters (rtl/mase_assert.svh): input format and shape (P lanes of a row of
    /// L per beat), output format, DATA_OUT_0_SIGNED, shape and modes, EXP_FRAC, EXP_TABLE_BITS,
    /// RECIP_BITS, FOLD.
    `MASE_SOFTMAX_PARAMS,
    /// The exp tables' .mem files, EXP_HI_MEM_FILE and EXP_LO_MEM_FILE ($readmemh; "" = all-zero
    /// table).
    `MASE_SOFTMAX_TABLE_PARAMS
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
      `MASE_SOFTMAX_PASS,
      .MASKED(0),
      .MASK_ROWS(1)
  ) u_core (
      .clk(clk),
      .rst(rst),
      `MASE_PASS_STREAM(data_in_0),
      .data_in_1(no_keep),
      .data_in_1_valid(1'b0),
      .data_in_1_ready(unused_keep_ready),
      `MASE_PASS_STREAM(data_out_0)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
