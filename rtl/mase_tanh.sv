// mase_tanh: element-wise hyperbolic tangent, by mase_gelu's table lookup with the odd,
// saturating shape (SHAPE = 1). This module only names tanh's parameters and passes them on:
// the datapath, the parameter checks and their messages are mase_gelu's.
//
// Per lane, with HI = min(TABLE_POS, 2^(W-1)) (W = DATA_IN_0_PRECISION_0) and m = min(|x|, HI):
//   y = t(m) for x >= 0, y = -t(m) for x < 0 (negation saturating: the most negative output
//   code becomes the largest), where
//   FORM 0: t(m) = table[m], entries generated in Rust by mase_hwlib tanh_table:
//           from_f64(tanh(m * 2^-F_in)) in the output format, the output rounding and overflow
//           applied to |tanh| (so TRN rounds toward zero for both signs);
//   FORM 1: t(m) by linear segments over the magnitudes [0, HI] (bands, segment bits and guard
//           bits as in mase_gelu; words from mase_hwlib gelu_interp's odd spec).
// Magnitudes past HI read the entry of HI: tanh saturates, and the binding puts HI where every
// larger magnitude rounds to the same output code.
// Resource choice, pipeline and timing: mase_gelu's (FORM 0: two lanes per ROM, FORM 1: one ROM
//   and one multiplier per lane). Latency: 2 cycles (FORM 0), 3 (FORM 1). II: 1 beat per cycle;
//   TENSOR_SIZE_DIM_0 / PARALLELISM_DIM_0 beats per row.
//   Paths cut: data, valid and ready (mase_gelu's input ready is a function of registers only).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_tanh #(
    /// Input: two's complement lanes of 1..16 bits, fractional bits -2^24..2^24.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 1, 4, 1),
    /// Output format: two's complement lanes of 1..32 bits, fractional bits -2^24..2^24.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 6),
    /// Output shape (must equal the input's).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0),
    /// Rounding and overflow of |tanh| (the table was generated with the same modes; negative
    /// inputs negate the result).
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// Highest tabulated magnitude |x| (0..32768, clamped to 2^(W-1)); larger magnitudes read its
    /// entry.
    parameter int TABLE_POS = 32768,
    /// 0: one table entry per magnitude of [0, HI]; 1: interpolated breakpoints.
    parameter int FORM = 0,
    /// FORM 1: segment bits of the inner band, magnitudes below BAND_MID (0..12).
    parameter int SEG_BITS = 7,
    /// FORM 1: segment bits of the middle band, magnitudes in [BAND_MID, BAND_OUT) (0..12).
    parameter int SEG_BITS_MID = 7,
    /// FORM 1: segment bits of the outer band, magnitudes from BAND_OUT to HI (0..12).
    parameter int SEG_BITS_OUT = 7,
    /// FORM 1: inner band threshold (magnitude codes, 0..32768).
    parameter int BAND_MID = 32768,
    /// FORM 1: middle band threshold (magnitude codes, BAND_MID..32768).
    parameter int BAND_OUT = 32768,
    /// FORM 1: G, breakpoint bits below the output LSB (0..8).
    parameter int GUARD_BITS = 4,
    /// Path of the table .mem file ($readmemh; "" = all-zero table).
    parameter TABLE_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the pipeline).
    /// data_in_0: input blocks, taken when the lookup's input register has room.
    /// data_out_0: output blocks (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// The lookup: tanh's parameters, no negative table range, the odd saturating shape.
  mase_gelu #(
      .DATA_IN_0_PRECISION_0       (DATA_IN_0_PRECISION_0),
      .DATA_IN_0_PRECISION_1       (DATA_IN_0_PRECISION_1),
      .DATA_IN_0_TENSOR_SIZE_DIM_0 (DATA_IN_0_TENSOR_SIZE_DIM_0),
      .DATA_IN_0_TENSOR_SIZE_DIM_1 (DATA_IN_0_TENSOR_SIZE_DIM_1),
      .DATA_IN_0_PARALLELISM_DIM_0 (DATA_IN_0_PARALLELISM_DIM_0),
      .DATA_IN_0_PARALLELISM_DIM_1 (DATA_IN_0_PARALLELISM_DIM_1),
      .DATA_OUT_0_PRECISION_0      (DATA_OUT_0_PRECISION_0),
      .DATA_OUT_0_PRECISION_1      (DATA_OUT_0_PRECISION_1),
      .DATA_OUT_0_TENSOR_SIZE_DIM_0(DATA_OUT_0_TENSOR_SIZE_DIM_0),
      .DATA_OUT_0_TENSOR_SIZE_DIM_1(DATA_OUT_0_TENSOR_SIZE_DIM_1),
      .DATA_OUT_0_PARALLELISM_DIM_0(DATA_OUT_0_PARALLELISM_DIM_0),
      .DATA_OUT_0_PARALLELISM_DIM_1(DATA_OUT_0_PARALLELISM_DIM_1),
      .DATA_OUT_0_ROUNDING         (DATA_OUT_0_ROUNDING),
      .DATA_OUT_0_OVERFLOW         (DATA_OUT_0_OVERFLOW),
      .TABLE_NEG                   (0),
      .TABLE_POS                   (TABLE_POS),
      .FORM                        (FORM),
      .SEG_BITS                    (SEG_BITS),
      .SEG_BITS_MID                (SEG_BITS_MID),
      .SEG_BITS_OUT                (SEG_BITS_OUT),
      .BAND_MID                    (BAND_MID),
      .BAND_OUT                    (BAND_OUT),
      .GUARD_BITS                  (GUARD_BITS),
      .TABLE_MEM_FILE              (TABLE_MEM_FILE),
      .SHAPE                       (1)
  ) u_lookup (
      .clk            (clk),
      .rst            (rst),
      .data_in_0      (data_in_0),
      .data_in_0_valid(data_in_0_valid),
      .data_in_0_ready(data_in_0_ready),
      .data_out_0      (data_out_0),
      .data_out_0_valid(data_out_0_valid),
      .data_out_0_ready(data_out_0_ready)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
