// mase_relu: element-wise ReLU, y = max(x, 0), on a stream of signed fixed-point blocks.
//
// Input and output share one format (a ReLU never needs rounding or saturation). The lanes are
// computed combinationally and registered by a mase_skid_buffer, so every path is cut.
//   Latency: 1 cycle.
//   II:      1 beat per cycle with no back-pressure; DATA_IN_0_TENSOR_SIZE_DIM_0 /
//            DATA_IN_0_PARALLELISM_DIM_0 beats per block row.
//   Paths cut: data, valid, ready (through mase_skid_buffer).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_relu #(
    /// Input stream: signed elements of 1..64 bits (the ReLU ignores the fractional bits).
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1),
    /// Output format (must equal the input's: a ReLU never rounds or saturates).
    `MASE_FORMAT_PARAMS(DATA_OUT_0, DATA_IN_0_PRECISION_0, DATA_IN_0_PRECISION_1),
    /// Output shape (must equal the input's).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0)
) (
    /// Clock and reset.
    /// data_in_0: input blocks, taken when the output register has room.
    /// data_out_0: output blocks (registered), same layout and format as the input.
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_OUT_0_PARALLELISM_DIM_0 * DATA_OUT_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Lanes per beat.
  localparam int N = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Bits per element.
  localparam int W = DATA_IN_0_PRECISION_0;

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_RANGE(DATA_IN_0_PRECISION_0, 1, 64);
    `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_RANGE_OF(lanes, "DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1", N, 1,
                        1024);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_0, DATA_IN_0_PRECISION_0);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_1, DATA_IN_0_PRECISION_1);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
  endgenerate
`endif

  /// ReLU of every lane (combinational).
  logic [N*W-1:0] relu;

  always_comb begin
    for (int i = 0; i < N; i++) begin
      relu[i*W+:W] = data_in_0[i*W+W-1] ? '0 : data_in_0[i*W+:W];
    end
  end

  `MASE_OUTPUT_SKID(W, N, relu, data_in_0_valid, data_in_0_ready);
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
