// mase_cast: element-wise fixed-point format conversion of a stream, ap_fixed semantics.
//
// Every lane of every beat is re-quantized from the input format (DATA_IN_0_PRECISION_0 bits,
// DATA_IN_0_PRECISION_1 fractional bits, DATA_IN_0_SIGNED) into the output format with the
// rounding mode DATA_OUT_0_ROUNDING and the overflow mode DATA_OUT_0_OVERFLOW, bit-identical to
// `mase_ir::fixed::cast_code` (see mase_cast_core for the mode codes).
// A beat is a block of PARALLELISM_DIM_1 x PARALLELISM_DIM_0 elements; the lane count is their
// product. The conversion is followed by one output register stage.
//   Latency: 1 cycle. II: 1 beat per cycle.
//   Paths cut: data and valid (registered outputs); ready passes through combinationally
//   (data_in_0_ready = !data_out_0_valid || data_out_0_ready).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_cast #(
    /// Input format: 1..64 bits signed or 1..63 unsigned, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(DATA_IN_0, 16, 8),
    /// 1 when input lanes are two's complement, 0 when unsigned.
    parameter int DATA_IN_0_SIGNED = 1,
    /// Input shape.
    `MASE_SHAPE_PARAMS(DATA_IN_0, 8, 1, 4, 1),
    /// Output format: 1..64 bits signed or 1..63 unsigned, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4),
    /// 1 when output lanes are two's complement, 0 when unsigned.
    parameter int DATA_OUT_0_SIGNED = 1,
    /// Output shape (must equal the input's).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0),
    /// Rounding and overflow of the cast.
    `MASE_MODE_PARAMS(DATA_OUT_0)
) (
    /// Clock and reset (reset empties the output register).
    /// data_in_0: input beats, taken when the output register is empty or being drained.
    /// data_out_0: output beats (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Lanes per beat.
  localparam int LANES = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Input lane width.
  localparam int IW = DATA_IN_0_PRECISION_0;
  /// Output lane width.
  localparam int OW = DATA_OUT_0_PRECISION_0;

`ifndef SYNTHESIS
  /// Widest input lane the signedness allows.
  localparam int IN_MAX_W = DATA_IN_0_SIGNED != 0 ? 64 : 63;
  /// Widest output lane the signedness allows.
  localparam int OUT_MAX_W = DATA_OUT_0_SIGNED != 0 ? 64 : 63;
  generate
    `MASE_CHECK_FLAG(DATA_IN_0_SIGNED);
    `MASE_CHECK_FORMAT(DATA_IN_0, IN_MAX_W);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_FLAG(DATA_OUT_0_SIGNED);
    `MASE_CHECK_FORMAT(DATA_OUT_0, OUT_MAX_W);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
  endgenerate
`endif

  /// Converted lanes of the current input beat.
  logic [LANES*OW-1:0] cast_lanes;

  for (genvar i = 0; i < LANES; i++) begin : g_lane
    `MASE_CAST_TO(DATA_OUT_0, IW, DATA_IN_0_PRECISION_1, DATA_IN_0_SIGNED, DATA_OUT_0_SIGNED, data_in_0[i*IW+:IW], cast_lanes[i*OW+:OW]);
  end

  assign data_in_0_ready = !data_out_0_valid || data_out_0_ready;

  `MASE_VALID_REG(data_out_0_valid, data_in_0_ready, data_in_0_valid)

  // The data register has no reset: validity is tracked by data_out_0_valid.
  always_ff @(posedge clk) begin
    if (data_in_0_ready && data_in_0_valid) data_out_0 <= cast_lanes;
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
