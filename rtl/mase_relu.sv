// mase_relu: element-wise ReLU, y = max(x, 0), on a stream of signed fixed-point blocks.
//
// Input and output share one format (a ReLU never needs rounding or saturation). The lanes are
// computed combinationally and registered by a mase_skid_buffer, so every path is cut.
//   Latency: 1 cycle.
//   II:      1 beat per cycle with no back-pressure; DATA_IN_0_TENSOR_SIZE_DIM_0 /
//            DATA_IN_0_PARALLELISM_DIM_0 beats per block row.
//   Paths cut: data, valid, ready (through mase_skid_buffer).
`ifndef MASE_ASSERT_SVH
`include "mase_assert.svh"
`endif
module mase_relu #(
    /// Total bits of an input element (1..64).
    parameter int DATA_IN_0_PRECISION_0 = 8,
    /// Fractional bits of an input element (format only; the ReLU ignores it).
    parameter int DATA_IN_0_PRECISION_1 = 4,
    /// Tensor size along dim 0 (innermost, columns).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 8,
    /// Tensor size along dim 1 (rows).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 1,
    /// Elements of dim 0 per beat.
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 4,
    /// Rows per beat.
    parameter int DATA_IN_0_PARALLELISM_DIM_1 = 1,
    /// Total bits of an output element (must equal the input's).
    parameter int DATA_OUT_0_PRECISION_0 = DATA_IN_0_PRECISION_0,
    /// Fractional bits of an output element (must equal the input's).
    parameter int DATA_OUT_0_PRECISION_1 = DATA_IN_0_PRECISION_1,
    /// Output tensor size along dim 0 (must equal the input's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = DATA_IN_0_TENSOR_SIZE_DIM_0,
    /// Output tensor size along dim 1 (must equal the input's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_1 = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// Output elements of dim 0 per beat (must equal the input's).
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = DATA_IN_0_PARALLELISM_DIM_0,
    /// Output rows per beat (must equal the input's).
    parameter int DATA_OUT_0_PARALLELISM_DIM_1 = DATA_IN_0_PARALLELISM_DIM_1
) (
    /// Clock.
    input  logic clk,
    /// Synchronous active-high reset.
    input  logic rst,
    /// Input block, lane i at [i*DATA_IN_0_PRECISION_0 +: DATA_IN_0_PRECISION_0], two's complement.
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PARALLELISM_DIM_1*DATA_IN_0_PRECISION_0-1:0] data_in_0,
    /// Input block valid.
    input  logic data_in_0_valid,
    /// Input block accepted when valid (registered).
    output logic data_in_0_ready,
    /// Output block, same layout and format as the input.
    output logic [DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PARALLELISM_DIM_1*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    /// Output block valid (registered).
    output logic data_out_0_valid,
    /// Consumer accepts the output block.
    input  logic data_out_0_ready
);
  /// Lanes per beat.
  localparam int N = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Bits per element.
  localparam int W = DATA_IN_0_PRECISION_0;

`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_RANGE(DATA_IN_0_PRECISION_0, 1, 64);
    `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_RANGE_OF("DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1", N, 1, 1024);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_0, DATA_IN_0_PRECISION_0);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_1, DATA_IN_0_PRECISION_1);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
  end
`endif

  /// ReLU of every lane (combinational).
  logic [N*W-1:0] relu;

  always_comb begin
    for (int i = 0; i < N; i++) begin
      relu[i*W+:W] = data_in_0[i*W+W-1] ? '0 : data_in_0[i*W+:W];
    end
  end

  mase_skid_buffer #(
      .DATA_WIDTH(W),
      .LANES(N)
  ) out_reg (
      .clk(clk),
      .rst(rst),
      .data_in_0(relu),
      .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready),
      .data_out_0(data_out_0),
      .data_out_0_valid(data_out_0_valid),
      .data_out_0_ready(data_out_0_ready)
  );
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
