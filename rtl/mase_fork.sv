// mase_fork: one stream to two consumers (data_out_0 and data_out_1), e.g. a residual branch.
//
// Both outputs carry the input beat. Each consumer takes it in its own time (its own ready); a
// register per consumer remembers that it already has the current beat, and the input beat is
// consumed in the cycle the last consumer takes it. Fan-out to more consumers: a tree of forks.
//   Latency: 0 (outputs are the input, gated by the per-consumer "taken" flags).
//   II: 1 beat per cycle when both consumers are ready.
//   Paths cut: none. data_out_k_valid depends combinationally on data_in_0_valid (never on any
//   ready); data_in_0_ready depends combinationally on both consumers' ready.
// The data word is opaque: LANES = PARALLELISM_DIM_0 x PARALLELISM_DIM_1 lanes of
// DATA_IN_0_PRECISION_0 bits.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_fork #(
    /// The stream forked: lanes of 1..64 bits, passed through (the fractional bits are format
    /// only).
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1)
) (
    /// Clock and reset (reset clears the "taken" flags).
    `MASE_CLOCK_PORTS,
    /// Input beats, consumed once every consumer has the beat or takes it now.
    `MASE_STREAM_IN(data_in_0,
                    DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0),
    /// Copy for consumer 0, valid until consumer 0 has taken the current beat.
    `MASE_STREAM_OUT(data_out_0,
                     DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0),
    /// Copy for consumer 1, valid until consumer 1 has taken the current beat.
    `MASE_STREAM_OUT(data_out_1,
                     DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0)
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 64);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
  endgenerate
`endif

  /// Consumer k already took the current input beat.
  logic [1:0] taken;
  /// Consumer k has the current beat after this cycle (took it before or takes it now).
  logic [1:0] done;

  assign data_out_0 = data_in_0;
  assign data_out_1 = data_in_0;
  assign data_out_0_valid = data_in_0_valid && !taken[0];
  assign data_out_1_valid = data_in_0_valid && !taken[1];
  assign done = taken | {data_out_1_ready, data_out_0_ready};
  assign data_in_0_ready = &done;

  always_ff @(posedge clk) begin
    if (rst || (data_in_0_valid && data_in_0_ready)) taken <= '0;
    else taken <= taken | ({data_out_1_valid, data_out_0_valid} & {data_out_1_ready, data_out_0_ready});
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_1)
endmodule
