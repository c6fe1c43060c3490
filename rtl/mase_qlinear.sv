// mase_qlinear: a fully connected layer on integer codes with real scales (a quantized model's
// own arithmetic): y = requant(sum_i (x_i - z_x) * w[j,i] + b[j]).
//
// The input codes x (DATA_IN_0_PRECISION_0 bits, two's complement or unsigned per
// DATA_IN_0_SIGNED) mean (x - z_x) * s_x; the weight codes w[j,i] (two's complement, zero point
// 0) mean w * s_w[j]; the bias codes b[j] are on the sum's grid s_x * s_w[j] * 2^-BIAS_PRECISION_1.
// The input zero point is subtracted from each code as it enters (exact, one bit wider), then a
// mase_linear computes the exact sum on the codes (its output format holds every sum, so its
// cast rounds nothing), with the optional ReLU on the exact sum, and a mase_requant multiplies
// column j's sum by m[j] * 2^-MULT_SHIFT (the real M[j] = s_x * s_w[j] / s_y, rounded to
// MULT_WIDTH bits by the Rust side), rounds half to even, adds the output zero point and
// saturates into the output codes. The Rust model is mase_ir::quant::qlinear's arithmetic.
// Rows, lanes, schedule and memories of the weights and bias are mase_linear's.
//   Latency: mase_linear's + 8 (mase_requant).
//   II: mase_linear's, (OUT/P_OUT) * (IN/P_IN) cycles per row.
//   Paths cut: those of mase_linear and mase_requant; the zero-point subtraction sits before
//   mase_linear's row buffer.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_qlinear #(
    /// Input codes: 1..31 bits; rows of IN elements, P_IN per beat, as mase_linear's input. The
    /// fraction only names the grid the neighbours see (a weight-only layer's fixed-point input);
    /// the arithmetic is on the codes, and the multipliers carry every scale.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 0, 64, 1, 4, 1),
    /// 1: two's complement input codes; 0: unsigned.
    parameter int DATA_IN_0_SIGNED = 1,
    /// Input zero point (within the input code range).
    parameter int DATA_IN_0_ZERO_POINT = 0,
    /// Weight codes: two's complement 1..32 bits, 0 fractional bits; OUT rows of IN, blocks of
    /// P_OUT x P_IN, as mase_linear's weight.
    `MASE_TENSOR_PARAMS(WEIGHT, 8, 0, DATA_IN_0_TENSOR_SIZE_DIM_0, 64, DATA_IN_0_PARALLELISM_DIM_0, 4),
    /// 1: add the bias vector, 0: no bias.
    parameter int HAS_BIAS = 1,
    /// Bias codes: two's complement 1..32 bits with 0..16 fractional bits on the sum's grid;
    /// OUT elements, P_OUT per word.
    `MASE_VECTOR_PARAMS(BIAS, 32, 0, WEIGHT_TENSOR_SIZE_DIM_1, WEIGHT_PARALLELISM_DIM_1),
    /// 1: ReLU on the exact sum before the requantisation.
    parameter int FUSED_RELU = 0,
    /// Bits of each column's unsigned requantisation multiplier (1..32).
    parameter int MULT_WIDTH = 24,
    /// Fraction bits of every multiplier (0..62).
    parameter int MULT_SHIFT = 30,
    /// Output codes: 1..32 bits; the fraction, like the input's, only names the grid.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 0),
    /// 1: two's complement output codes; 0: unsigned.
    parameter int DATA_OUT_0_SIGNED = 1,
    /// Output zero point, added after the rounding (within the output code range).
    parameter int DATA_OUT_0_ZERO_POINT = 0,
    /// Output shape: OUT elements per row, the input's rows, P_OUT per beat, one row per beat.
    `MASE_SHAPE_PARAMS(DATA_OUT_0, WEIGHT_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1,
                       WEIGHT_PARALLELISM_DIM_1, DATA_IN_0_PARALLELISM_DIM_1),
    /// Path of the weight .mem file (mase_linear's layout; "" = all-zero weights).
    parameter WEIGHT_MEM_FILE = "",
    /// Path of the bias .mem file ("" = all-zero bias).
    parameter BIAS_MEM_FILE = "",
    /// Path of the multiplier .mem file (word b: the multipliers of columns b*P_OUT ..;
    /// "" = all-zero multipliers).
    parameter MULT_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the row buffer and the pipelines).
    /// data_in_0: input codes, P_IN consecutive elements of a row, taken when a row-buffer bank
    /// is free (registered).
    /// data_out_0: output codes, P_OUT consecutive outputs of a row (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0,
                      WEIGHT_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Inputs per row and lanes.
  localparam int IN = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int P_IN = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int P_OUT = WEIGHT_PARALLELISM_DIM_1;
  /// Input code width, and the width of a code minus the zero point (one bit wider).
  localparam int IW = DATA_IN_0_PRECISION_0;
  localparam int XW = IW + 1;
  /// Weight and bias widths, bias fraction.
  localparam int WW = WEIGHT_PRECISION_0;
  localparam int BW = BIAS_PRECISION_0;
  localparam int BF = HAS_BIAS != 0 ? BIAS_PRECISION_1 : 0;
  /// Exact sums: BF fraction bits, every integer bit mase_linear's accumulator has (so its
  /// output cast drops and saturates nothing).
  localparam int SUMW = XW + WW + (IN > 1 ? $clog2(IN) : 0) + BF;
  localparam int AW = (HAS_BIAS != 0 && BW > SUMW) ? BW + 1 : SUMW + 1;
  /// Smallest and largest input and output codes.
  localparam longint IN_MIN = DATA_IN_0_SIGNED != 0 ? -(64'sd1 <<< (IW - 1)) : 0;
  localparam longint IN_MAX = DATA_IN_0_SIGNED != 0 ? (64'sd1 <<< (IW - 1)) - 1 : (64'sd1 <<< IW) - 1;
  localparam longint OUT_MIN = DATA_OUT_0_SIGNED != 0 ? -(64'sd1 <<< (DATA_OUT_0_PRECISION_0 - 1)) : 0;
  localparam longint OUT_MAX =
      DATA_OUT_0_SIGNED != 0 ? (64'sd1 <<< (DATA_OUT_0_PRECISION_0 - 1)) - 1 : (64'sd1 <<< DATA_OUT_0_PRECISION_0) - 1;
  /// The zero points, 64 bits (compared with the 64-bit code ranges).
  localparam longint ZX = 64'(DATA_IN_0_ZERO_POINT);
  localparam longint ZY = 64'(DATA_OUT_0_ZERO_POINT);

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 31);
    `MASE_CHECK_FLAG(DATA_IN_0_SIGNED);
    `MASE_CHECK_RANGE_OF(DATA_IN_0_ZERO_POINT, "DATA_IN_0_ZERO_POINT", ZX, IN_MIN, IN_MAX);
    `MASE_CHECK_RANGE(WEIGHT_PRECISION_1, 0, 0);
    if (HAS_BIAS != 0) begin : g_bias_checks
      `MASE_CHECK_RANGE(BIAS_PRECISION_1, 0, 16);
    end
    `MASE_CHECK_RANGE(MULT_WIDTH, 1, 32);
    `MASE_CHECK_RANGE(MULT_SHIFT, 0, 62);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 32);
    `MASE_CHECK_FLAG(DATA_OUT_0_SIGNED);
    `MASE_CHECK_RANGE_OF(DATA_OUT_0_ZERO_POINT, "DATA_OUT_0_ZERO_POINT", ZY, OUT_MIN, OUT_MAX);
    if (AW > 64) begin : g_check_sum_width
      $fatal(1, "the exact sum needs %0d bits; at most 64 are supported", AW);
    end
  endgenerate
`endif

  /// The input codes minus the zero point, XW-bit two's complement lanes.
  logic [P_IN*XW-1:0] x_centred;
  for (genvar i = 0; i < P_IN; i++) begin : g_centre
    /// The code extended to XW bits by its signedness.
    logic signed [XW-1:0] xe;
    if (DATA_IN_0_SIGNED != 0) begin : g_signed
      assign xe = XW'($signed(data_in_0[i*IW+:IW]));
    end else begin : g_unsigned
      assign xe = XW'({1'b0, data_in_0[i*IW+:IW]});
    end
    assign x_centred[i*XW+:XW] = xe - XW'(DATA_IN_0_ZERO_POINT);
  end

  /// The exact sums (AW bits, BF fraction bits), P_OUT per beat.
  logic [P_OUT*AW-1:0] acc;
  logic acc_valid, acc_ready;

  mase_linear #(
      .DATA_IN_0_PRECISION_0      (XW),
      .DATA_IN_0_PRECISION_1      (0),
      `MASE_PASS_SHAPE(DATA_IN_0),
      `MASE_PASS_TENSOR(WEIGHT),
      .HAS_BIAS                   (HAS_BIAS),
      `MASE_PASS_FORMAT(BIAS),
      .BIAS_TENSOR_SIZE_DIM_0     (BIAS_TENSOR_SIZE_DIM_0),
      .BIAS_PARALLELISM_DIM_0     (BIAS_PARALLELISM_DIM_0),
      .DATA_OUT_0_PRECISION_0     (AW),
      .DATA_OUT_0_PRECISION_1     (BF),
      `MASE_PASS_SHAPE(DATA_OUT_0),
      .DATA_OUT_0_ROUNDING        (0),
      .DATA_OUT_0_OVERFLOW        (1),
      .FUSED_RELU                 (FUSED_RELU),
      .WEIGHT_MEM_FILE            (WEIGHT_MEM_FILE),
      .BIAS_MEM_FILE              (BIAS_MEM_FILE)
  ) u_linear (
      .clk             (clk),
      .rst             (rst),
      .data_in_0       (x_centred),
      .data_in_0_valid (data_in_0_valid),
      .data_in_0_ready (data_in_0_ready),
      .data_out_0      (acc),
      .data_out_0_valid(acc_valid),
      .data_out_0_ready(acc_ready)
  );

  mase_requant #(
      .DATA_IN_0_PRECISION_0      (AW),
      .DATA_IN_0_PRECISION_1      (BF),
      .DATA_IN_0_TENSOR_SIZE_DIM_0(WEIGHT_TENSOR_SIZE_DIM_1),
      .DATA_IN_0_PARALLELISM_DIM_0(P_OUT),
      .MULT_WIDTH                 (MULT_WIDTH),
      .MULT_SHIFT                 (MULT_SHIFT),
      .DATA_OUT_0_PRECISION_0     (DATA_OUT_0_PRECISION_0),
      .DATA_OUT_0_SIGNED          (DATA_OUT_0_SIGNED),
      .DATA_OUT_0_ZERO_POINT      (DATA_OUT_0_ZERO_POINT),
      .MULT_MEM_FILE              (MULT_MEM_FILE)
  ) u_requant (
      .clk             (clk),
      .rst             (rst),
      .data_in_0       (acc),
      .data_in_0_valid (acc_valid),
      .data_in_0_ready (acc_ready),
      `MASE_PASS_STREAM(data_out_0)
  );
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
