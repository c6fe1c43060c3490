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
`ifndef MASE_ASSERT_SVH
`include "mase_assert.svh"
`endif
module mase_cast #(
    /// Input lane width in bits (1..64 signed, 1..63 unsigned).
    parameter int DATA_IN_0_PRECISION_0 = 16,
    /// Input fractional bits (-2^24..2^24).
    parameter int DATA_IN_0_PRECISION_1 = 8,
    /// 1 when input lanes are two's complement, 0 when unsigned.
    parameter int DATA_IN_0_SIGNED = 1,
    /// Tensor size along dim 0 (innermost; elements per row).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 8,
    /// Tensor size along dim 1 (rows).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 1,
    /// Elements per beat along dim 0.
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 4,
    /// Rows per beat (dim 1).
    parameter int DATA_IN_0_PARALLELISM_DIM_1 = 1,
    /// Output lane width in bits (1..64 signed, 1..63 unsigned).
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    /// Output fractional bits (-2^24..2^24).
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    /// 1 when output lanes are two's complement, 0 when unsigned.
    parameter int DATA_OUT_0_SIGNED = 1,
    /// Output tensor size along dim 0 (must equal the input's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = DATA_IN_0_TENSOR_SIZE_DIM_0,
    /// Output tensor size along dim 1 (must equal the input's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_1 = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// Output elements per beat along dim 0 (must equal the input's).
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = DATA_IN_0_PARALLELISM_DIM_0,
    /// Output rows per beat (must equal the input's).
    parameter int DATA_OUT_0_PARALLELISM_DIM_1 = DATA_IN_0_PARALLELISM_DIM_1,
    /// Rounding mode: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV.
    parameter int DATA_OUT_0_ROUNDING = 0,
    /// Overflow mode: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM.
    parameter int DATA_OUT_0_OVERFLOW = 1
) (
    /// Clock.
    input  logic                                           clk,
    /// Synchronous active-high reset: empties the output register.
    input  logic                                           rst,
    /// Input beat, lane i at [i*DATA_IN_0_PRECISION_0 +: DATA_IN_0_PRECISION_0].
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PARALLELISM_DIM_1*DATA_IN_0_PRECISION_0-1:0] data_in_0,
    /// Input beat valid.
    input  logic                                           data_in_0_valid,
    /// The cast can take a beat (output register empty or being drained).
    output logic                                           data_in_0_ready,
    /// Output beat (registered), lane i at [i*DATA_OUT_0_PRECISION_0 +: DATA_OUT_0_PRECISION_0].
    output logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PARALLELISM_DIM_1*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    /// Output beat valid (registered).
    output logic                                           data_out_0_valid,
    /// Consumer accepts the output beat.
    input  logic                                           data_out_0_ready
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
  initial begin
    `MASE_CHECK_RANGE(DATA_IN_0_SIGNED, 0, 1);
    `MASE_CHECK_FORMAT(DATA_IN_0, IN_MAX_W);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_RANGE(DATA_OUT_0_SIGNED, 0, 1);
    `MASE_CHECK_FORMAT(DATA_OUT_0, OUT_MAX_W);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
  end
`endif

  /// Converted lanes of the current input beat.
  logic [LANES*OW-1:0] cast_lanes;

  for (genvar i = 0; i < LANES; i++) begin : g_lane
    mase_cast_core #(
        .IN_WIDTH  (IW),
        .IN_FRAC   (DATA_IN_0_PRECISION_1),
        .IN_SIGNED (DATA_IN_0_SIGNED),
        .OUT_WIDTH (OW),
        .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
        .OUT_SIGNED(DATA_OUT_0_SIGNED),
        .ROUNDING  (DATA_OUT_0_ROUNDING),
        .OVERFLOW  (DATA_OUT_0_OVERFLOW)
    ) u_cast (
        .data_in (data_in_0[i*IW+:IW]),
        .data_out(cast_lanes[i*OW+:OW])
    );
  end

  assign data_in_0_ready = !data_out_0_valid || data_out_0_ready;

  always_ff @(posedge clk) begin
    if (rst) data_out_0_valid <= 1'b0;
    else if (data_in_0_ready) data_out_0_valid <= data_in_0_valid;
  end

  // The data register has no reset: validity is tracked by data_out_0_valid.
  always_ff @(posedge clk) begin
    if (data_in_0_ready && data_in_0_valid) data_out_0 <= cast_lanes;
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
