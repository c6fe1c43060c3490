// mase_sub: element-wise difference data_in_0 - data_in_1 of two streams with format alignment.
//
// Joins data_in_0 and data_in_1 beat by beat (a beat of each is consumed together). Each input
// has its own signed format (PRECISION_0 bits, PRECISION_1 fractional bits). The two lanes are
// aligned to the finer fractional bit count F = max(frac_0, frac_1) and subtracted exactly (one
// bit wider than the wider aligned operand, so even min - max fits), then cast (mase_cast_core)
// to the DATA_OUT_0 format with the rounding DATA_OUT_0_ROUNDING and overflow DATA_OUT_0_OVERFLOW
// (default TRN + SAT), bit-identical to `mase_ir::fixed::sub` followed by `cast_code`.
//   Latency: 2 cycles (the exact result E registered, then its cast in the output register).
//   II: 1 beat per cycle.
//   Paths cut: data and valid (registered outputs); the exact operation from the cast. Each
//   input's ready depends combinationally on the other input's valid and on data_out_0_ready
//   (a join).
// The design is shared with mase_add (only the operator differs): its parameters, ports and body
// are the MASE_ALIGNED_BINARY macros of mase_assert.svh.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_sub #(
    /// Input 0, input 1 and output streams with the output's rounding and overflow (every
    /// parameter is documented in the macro).
    `MASE_ALIGNED_BINARY_PARAMS
) (
    /// clk, rst, data_in_0, data_in_1 (joined) and data_out_0 (registered).
    `MASE_ALIGNED_BINARY_PORTS
);
  `MASE_ALIGNED_BINARY(-)

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_in_1)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
