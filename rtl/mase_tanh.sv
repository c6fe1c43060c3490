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
//   and one multiplier per lane), with its stages for |x| and the compares, then the clamp.
//   Latency: 6 cycles (FORM 0; 7 for more than 2048 entries, banked), 12 (FORM 1). II: 1 beat
//   per cycle;
//   TENSOR_SIZE_DIM_0 / PARALLELISM_DIM_0 beats per row.
//   Paths cut: data, valid and ready (mase_gelu's input ready is a function of registers only).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_tanh #(
    /// Input and output (rtl/mase_assert.svh): signed lanes of 1..16 bits in, 1..32 bits out
    /// (default 6 fractional bits), the input's shape, and the rounding and overflow of |tanh|
    /// (the table was generated with the same modes; negative inputs negate the result).
    `MASE_LOOKUP_IO_PARAMS(6),
    /// Highest tabulated magnitude |x| (0..32768, clamped to 2^(W-1)); larger magnitudes read its
    /// entry.
    parameter int TABLE_POS = 32768,
    /// The lookup's form (rtl/mase_assert.svh), over the magnitudes [0, HI]: FORM (0 one table
    /// entry per magnitude, 1 interpolated), and for FORM 1 the bands' segment bits SEG_BITS
    /// (magnitudes below BAND_MID), SEG_BITS_MID ([BAND_MID, BAND_OUT)), SEG_BITS_OUT (from
    /// BAND_OUT to HI), the thresholds BAND_MID, BAND_OUT (magnitude codes) and GUARD_BITS.
    `MASE_LOOKUP_FORM_PARAMS,
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
      `MASE_PASS_TENSOR(DATA_IN_0),
      `MASE_PASS_FORMAT(DATA_OUT_0),
      `MASE_PASS_SHAPE(DATA_OUT_0),
      `MASE_PASS_MODES(DATA_OUT_0),
      .TABLE_NEG(0),
      .TABLE_POS(TABLE_POS),
      `MASE_LOOKUP_FORM_PASS,
      .TABLE_MEM_FILE(TABLE_MEM_FILE),
      .SHAPE(1)
  ) u_lookup (
      `MASE_PASS_STAGE_PORTS
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
