// mase_gelu: element-wise GELU, x * Phi(x) (erf form), by table lookup with two tails.
//
// Per lane, with the table range [LO, HI] = [max(-TABLE_NEG, min input code),
// min(TABLE_POS, max input code)] (it always holds code 0):
//   x <  LO : y = 0                      (GELU tends to 0)
//   x in [LO, HI] : FORM 0: y = table[x - LO] (entries generated in Rust by mase_hwlib
//                   gelu_table: from_f64(gelu(x * 2^-F_in), output format));
//                   FORM 1: five bands [LO, -BAND_OUT), [-BAND_OUT, -BAND_MID), [-BAND_MID,
//                   BAND_MID), [BAND_MID, BAND_OUT), [BAND_OUT, HI] (clamped to the range) with
//                   segment bits S = SEG_BITS_OUT, _MID, SEG_BITS, _MID, _OUT; segments on the
//                   code grid: word = table[(x >>> S) + OFF_band] = {y_k (YW bits), d_k (DW
//                   bits)}, r = (x mod 2^S) << (M - S) (M the largest S of a non-empty band),
//                   v = y_k + ((d_k * r) >>> M), y = cast(v, F_out + G frac bits) (G guard bits,
//                   linear interpolation; the words come from mase_hwlib gelu_interp, which
//                   does the same integer steps)
//   x >  HI : y = cast(x) into the output format with DATA_OUT_0_ROUNDING / _OVERFLOW
//             (mase_cast_core; GELU tends to the identity)
// SHAPE = 1 (set by mase_tanh, the odd saturating functions; mase_gelu's own instances keep 0):
// the table covers magnitudes [LO, HI] = [0, min(TABLE_POS, 2^(W-1))] (TABLE_NEG is not read),
// the lookup above (either FORM) takes m = min(|x|, HI) instead of x, so every magnitude past HI
// reads the entry of HI (saturation, no tails), and the output is t(m) for x >= 0 and -t(m) for
// x < 0 (negation saturating: the most negative code becomes the largest).
// The table is a synchronous-read ROM loaded by $readmemh(TABLE_MEM_FILE), one entry per word.
// Resource choice: FORM 0: two lanes share one ROM, each on its own read port (a block RAM has
// two ports; RAMB36 serves two reads of up to 36 bits, RAMB18 two of up to 18), so P lanes cost
// ceil(P/2) ROMs and lanes never contend. FORM 1: one ROM per lane (a word of YW + DW, 36..42
// bits, is one simple-dual-port block RAM read; sharing would need a second port of that width,
// the silicon of a second copy, no saving).
// FORM 1 band select: four comparisons of x against the band starts pick the band's shift and
// word offset (constants), so the address is (x >>> S) + OFF, no subtraction of LO.
// Pipeline: FORM 0: ROM read + input register -> tail select / cast (combinational) -> skid.
//   FORM 1: ROM read + input register -> interpolation (one multiply, registered) -> tail
//   select / cast -> skid. Latency: 2 cycles (FORM 0), 3 (FORM 1). II: 1 beat per cycle;
//   TENSOR_SIZE_DIM_0 / PARALLELISM_DIM_0 beats per row.
//   Paths cut: data, valid and ready (input ready is a function of registers only).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_gelu #(
    /// Input and output (rtl/mase_assert.svh): signed lanes of 1..16 bits in, 1..32 bits out
    /// (default 4 fractional bits), the input's shape, and the rounding and overflow of the upper
    /// tail, cast(x); the table was generated with the same modes (its entries saturate with the
    /// overflow mode).
    `MASE_LOOKUP_IO_PARAMS(4),
    /// The lowest tabulated input code is -TABLE_NEG (0..32768, clamped to the input range);
    /// below it the output is 0.
    parameter int TABLE_NEG = 32768,
    /// Highest tabulated input code (0..32767, clamped to the input range); above it the output
    /// is cast(x). SHAPE 1: highest tabulated magnitude (0..32768, clamped to 2^(W-1)).
    parameter int TABLE_POS = 32767,
    /// The lookup's form (rtl/mase_assert.svh): FORM (0 full table, 1 interpolated), and for
    /// FORM 1 the bands' segment bits SEG_BITS, SEG_BITS_MID, SEG_BITS_OUT, their thresholds
    /// BAND_MID, BAND_OUT and GUARD_BITS.
    `MASE_LOOKUP_FORM_PARAMS,
    /// Path of the table .mem file ($readmemh; "" = all-zero table).
    parameter TABLE_MEM_FILE = "",
    /// Function shape: 0 GELU's (table over codes [LO, HI], 0 below, cast(x) above); 1 odd and
    /// saturating (tanh: table over magnitudes [0, HI], |x| clamped to HI, sign restored). Set by
    /// mase_tanh; not a parameter of the gelu component.
    parameter int SHAPE = 0
) (
    /// Clock and reset (reset empties the pipeline).
    /// data_in_0: input blocks, taken when the input register has room (ready from registers).
    /// data_out_0: output blocks (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  /// Lanes per beat.
  localparam int N = DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1;
  /// Input lane width.
  localparam int IW = DATA_IN_0_PRECISION_0;
  /// Output lane width.
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Smallest input code.
  localparam int IMIN = -(1 <<< (IW - 1));
  /// Largest input code.
  localparam int IMAX = (1 <<< (IW - 1)) - 1;
  /// Largest TABLE_POS: the largest input code (SHAPE 0) or magnitude, -IMIN (SHAPE 1).
  localparam int POS_MAX = SHAPE == 1 ? 32768 : 32767;
  /// Effective lowest tabulated code (SHAPE 1: magnitude 0).
  localparam int LO = SHAPE == 1 ? 0 : -TABLE_NEG > IMIN ? -TABLE_NEG : IMIN;
  /// Effective highest tabulated code (SHAPE 1: magnitude).
  localparam int HI = SHAPE == 1 ? (TABLE_POS < -IMIN ? TABLE_POS : -IMIN) :
      TABLE_POS < IMAX ? TABLE_POS : IMAX;
  /// Most negative output code (its negation saturates to the largest).
  localparam logic [OW-1:0] OMIN = OW'(64'd1 << (OW - 1));
  /// FORM 1: shift from input codes to breakpoint units, A = F_out + G - F_in.
  localparam int A = DATA_OUT_0_PRECISION_1 + GUARD_BITS - DATA_IN_0_PRECISION_1;
  /// FORM 1: one past the table range.
  localparam int END = HI + 1 > LO ? HI + 1 : LO;
  /// FORM 1: band starts (band b is [STb, ST(b+1)), ST0 = LO, ST5 = END), clamped to the range.
  localparam int ST1 = -BAND_OUT < LO ? LO : -BAND_OUT > END ? END : -BAND_OUT;
  localparam int ST2 = -BAND_MID < LO ? LO : -BAND_MID > END ? END : -BAND_MID;
  localparam int ST3 = BAND_MID < LO ? LO : BAND_MID > END ? END : BAND_MID;
  localparam int ST4 = BAND_OUT < LO ? LO : BAND_OUT > END ? END : BAND_OUT;
  /// FORM 1: segment bits of the bands.
  localparam int SH0 = SEG_BITS_OUT;
  localparam int SH1 = SEG_BITS_MID;
  localparam int SH2 = SEG_BITS;
  localparam int SH3 = SEG_BITS_MID;
  localparam int SH4 = SEG_BITS_OUT;
  /// FORM 1: in-segment offset masks of the bands, 2^SHb - 1.
  localparam int MASK0 = (1 << SH0) - 1;
  localparam int MASK1 = (1 << SH1) - 1;
  localparam int MASK2 = (1 << SH2) - 1;
  localparam int MASK3 = (1 << SH3) - 1;
  localparam int MASK4 = (1 << SH4) - 1;
  /// FORM 1: words of the bands (grid segments the band touches; 0 when empty).
  localparam int CNT0 = ST1 > LO ? ((ST1 - 1) >>> SH0) - (LO >>> SH0) + 1 : 0;
  localparam int CNT1 = ST2 > ST1 ? ((ST2 - 1) >>> SH1) - (ST1 >>> SH1) + 1 : 0;
  localparam int CNT2 = ST3 > ST2 ? ((ST3 - 1) >>> SH2) - (ST2 >>> SH2) + 1 : 0;
  localparam int CNT3 = ST4 > ST3 ? ((ST4 - 1) >>> SH3) - (ST3 >>> SH3) + 1 : 0;
  localparam int CNT4 = END > ST4 ? ((END - 1) >>> SH4) - (ST4 >>> SH4) + 1 : 0;
  /// FORM 1: word of code x in band b: (x >>> SHb) + OFFb.
  localparam int OFF0 = -(LO >>> SH0);
  localparam int OFF1 = CNT0 - (ST1 >>> SH1);
  localparam int OFF2 = CNT0 + CNT1 - (ST2 >>> SH2);
  localparam int OFF3 = CNT0 + CNT1 + CNT2 - (ST3 >>> SH3);
  localparam int OFF4 = CNT0 + CNT1 + CNT2 + CNT3 - (ST4 >>> SH4);
  /// FORM 1: running maximum of the segment bits of the non-empty bands.
  localparam int MX2 = CNT2 > 0 ? SH2 : 0;
  localparam int MX1 = CNT1 > 0 && SH1 > MX2 ? SH1 : MX2;
  localparam int MX3 = CNT3 > 0 && SH3 > MX1 ? SH3 : MX1;
  localparam int MX0 = CNT0 > 0 && SH0 > MX3 ? SH0 : MX3;
  /// FORM 1: M, the largest segment bits of a non-empty band.
  localparam int M = CNT4 > 0 && SH4 > MX0 ? SH4 : MX0;
  /// FORM 1: larger of W - 1 and M.
  localparam int WS = IW - 1 > M ? IW - 1 : M;
  /// FORM 1: breakpoint bits, max(max(W - 1, M) + A + 3, G + 4) (as gelu_interp::widths).
  localparam int YW = WS + A + 3 > GUARD_BITS + 4 ? WS + A + 3 : GUARD_BITS + 4;
  /// FORM 1: difference bits, max(M + A + 3, 3).
  localparam int DW = M + A + 3 > 3 ? M + A + 3 : 3;
  /// Bits of one ROM word.
  localparam int WORD_BITS = FORM == 1 ? YW + DW : OW;
  /// Table entries (at least 1, so that invalid TABLE_NEG/POS reach the parameter checks).
  localparam int DEPTH = HI < LO ? 1 : FORM == 1 ? (CNT0 + CNT1 + CNT2 + CNT3 + CNT4 > 1 ?
      CNT0 + CNT1 + CNT2 + CNT3 + CNT4 : 1) : HI - LO + 1;
  /// Table address width.
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  /// Width of the address arithmetic (input codes and LO/HI are within 17 bits).
  localparam int XW = 18;
  /// FORM 1: width of the normalised in-segment offset (at least 1).
  localparam int RW = M > 0 ? M : 1;
  /// Lanes per ROM: FORM 0 two (two read ports of one block RAM), FORM 1 one (its 36..42-bit
  /// words fill a block RAM port as a simple dual port; a second port of that width costs a
  /// second copy's silicon, and Yosys 0.23 maps the shared form to LUTs).
  localparam int LPT = FORM == 1 ? 1 : 2;
  /// ROMs.
  localparam int NT = (N + LPT - 1) / LPT;

`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_FORMAT(DATA_IN_0, 16);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 32);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
    `MASE_CHECK_RANGE(TABLE_NEG, 0, 32768);
    `MASE_CHECK_RANGE(TABLE_POS, 0, POS_MAX);
    `MASE_CHECK_RANGE(FORM, 0, 1);
    `MASE_CHECK_RANGE(SEG_BITS, 0, 12);
    `MASE_CHECK_RANGE(SEG_BITS_MID, 0, 12);
    `MASE_CHECK_RANGE(SEG_BITS_OUT, 0, 12);
    `MASE_CHECK_RANGE(BAND_MID, 0, 32768);
    `MASE_CHECK_RANGE(BAND_OUT, BAND_MID, 32768);
    `MASE_CHECK_RANGE(GUARD_BITS, 0, 8);
    `MASE_CHECK_RANGE(SHAPE, 0, 1);
    if (FORM == 1) `MASE_CHECK_RANGE(WORD_BITS, 1, 62);
  end
`endif

  /// Pipeline advance: the last register stage is empty or drains into the skid buffer.
  logic en;
  /// Stage 1 (ROM read) holds a block.
  logic s1_valid;
  /// Block entering the skid buffer is valid (stage 1 for FORM 0, stage 2 for FORM 1).
  logic y_valid;
  /// Skid buffer can take a block (registered).
  logic out_ready;
  /// Lane results (input of the skid buffer).
  logic [N*OW-1:0] y;

  assign en = !y_valid || out_ready;
  assign data_in_0_ready = en;

  `MASE_VALID_REG(s1_valid, en, data_in_0_valid)

  if (FORM == 1) begin : g_s2
    /// Stage 2 (interpolation) holds a block.
    logic s2_valid;
    `MASE_VALID_REG(s2_valid, en, s1_valid)
    assign y_valid = s2_valid;
  end else begin : g_s1
    assign y_valid = s1_valid;
  end

  for (genvar t = 0; t < NT; t++) begin : g_table
    /// The table of lanes LPT*t .. LPT*t+LPT-1 (one read port each).
    logic [WORD_BITS-1:0] rom[DEPTH];
    `MASE_ROM_INIT(rom, DEPTH, TABLE_MEM_FILE)

    for (genvar j = 0; j < LPT; j++) begin : g_port
      if (LPT * t + j < N) begin : g_lane
        /// Lane index.
        localparam int L = LPT * t + j;
        /// Input code, sign-extended.
        logic signed [XW-1:0] x;
        /// Table coordinate: the code x (SHAPE 0) or the magnitude min(|x|, HI) (SHAPE 1).
        logic signed [XW-1:0] xt;
        /// Code below the table.
        logic below;
        /// Code above the table.
        logic above;
        /// SHAPE 1: negative input (the output is negated).
        logic neg;
        /// ROM address (0 outside the table).
        logic [AW-1:0] addr;
        assign x = XW'($signed(data_in_0[L*IW+:IW]));
        if (SHAPE == 1) begin : g_odd
          /// |x| (at most 2^15: XW bits hold it).
          logic signed [XW-1:0] mag;
          assign mag = x < 0 ? -x : x;
          assign xt = mag > XW'(HI) ? XW'(HI) : mag;
          assign below = 1'b0;
          assign above = 1'b0;
          assign neg = x < 0;
        end else begin : g_code
          assign xt = x;
          assign below = x < XW'(LO);
          assign above = x > XW'(HI);
          assign neg = 1'b0;
        end

        /// Registered ROM word.
        logic [WORD_BITS-1:0] s1_t;
        /// Registered input code (for the upper tail).
        logic [IW-1:0] s1_x;
        /// Registered below/above/negative flags.
        logic s1_below, s1_above, s1_neg;
        always_ff @(posedge clk) begin
          if (en) begin
            s1_t     <= rom[addr];
            s1_x     <= data_in_0[L*IW+:IW];
            s1_below <= below;
            s1_above <= above;
            s1_neg   <= neg;
          end
        end

        /// Upper tail: the input cast into the output format.
        logic [OW-1:0] tail;
        /// Table value in the output format.
        logic [OW-1:0] body;
        /// Table value negated, saturating (SHAPE 1, negative inputs).
        logic [OW-1:0] nbody;
        /// Tail and sign flags at the output stage.
        logic y_below, y_above, y_neg;
        /// Input code at the output stage.
        logic [IW-1:0] y_x;
        if (FORM == 1) begin : g_interp
          /// Breakpoint y_k.
          logic signed [YW-1:0] yk;
          /// Difference d_k = y_(k+1) - y_k.
          logic signed [DW-1:0] dk;
          /// Registered normalised in-segment offset r << (M - S).
          logic [RW-1:0] s1_r;
          /// d_k * r (exact).
          logic signed [DW+RW:0] prod;
          /// d_k * r floored by 2^M (|d_k * r / 2^M| < |d_k|: DW bits hold it).
          logic signed [DW-1:0] step;
          /// Interpolated value v (F_out + G fractional bits).
          logic signed [YW:0] v;
          /// Registered v.
          logic [YW:0] s2_v;
          /// Registered flags and input code.
          logic s2_below, s2_above, s2_neg;
          logic [IW-1:0] s2_x;
          /// Normalised in-segment offset (xt mod 2^S) << (M - S) of xt in its band.
          logic [RW-1:0] rn;
          /// Word of xt in its band, (xt >>> S) + OFF (0 outside the table; the address is its
          /// low AW bits, it lies in [0, DEPTH)).
          /* verilator lint_off UNUSEDSIGNAL */
          logic signed [XW-1:0] k;
          /* verilator lint_on UNUSEDSIGNAL */
          /// The table coordinate in 32 bits (for the in-segment offset).
          logic signed [31:0] xi;
          assign xi = 32'(xt);
          always_comb begin
            if (below || above) begin
              k  = '0;
              rn = '0;
            end else if (xt >= XW'(ST4)) begin
              k  = (xt >>> SH4) + XW'(OFF4);
              rn = RW'((xi & MASK4) << (M - SH4));
            end else if (xt >= XW'(ST3)) begin
              k  = (xt >>> SH3) + XW'(OFF3);
              rn = RW'((xi & MASK3) << (M - SH3));
            end else if (xt >= XW'(ST2)) begin
              k  = (xt >>> SH2) + XW'(OFF2);
              rn = RW'((xi & MASK2) << (M - SH2));
            end else if (xt >= XW'(ST1)) begin
              k  = (xt >>> SH1) + XW'(OFF1);
              rn = RW'((xi & MASK1) << (M - SH1));
            end else begin
              k  = (xt >>> SH0) + XW'(OFF0);
              rn = RW'((xi & MASK0) << (M - SH0));
            end
          end
          assign addr = AW'(k);
          assign yk = s1_t[DW+:YW];
          assign dk = s1_t[DW-1:0];
          assign prod = dk * $signed({1'b0, s1_r});
          assign step = DW'(prod >>> M);
          assign v = (YW + 1)'(yk) + (YW + 1)'(step);
          always_ff @(posedge clk) begin
            if (en) begin
              s1_r     <= rn;
              s2_v     <= v;
              s2_below <= s1_below;
              s2_above <= s1_above;
              s2_neg   <= s1_neg;
              s2_x     <= s1_x;
            end
          end
          `MASE_CAST_TO(DATA_OUT_0, YW + 1, DATA_OUT_0_PRECISION_1 + GUARD_BITS, 1, 1, s2_v, body);
          assign y_below = s2_below;
          assign y_above = s2_above;
          assign y_neg = s2_neg;
          assign y_x = s2_x;
        end else begin : g_full
          /// Offset into the table range (0 outside it; the address is its low AW bits).
          /* verilator lint_off UNUSEDSIGNAL */
          logic [XW-1:0] o;
          /* verilator lint_on UNUSEDSIGNAL */
          assign o = (below || above) ? '0 : XW'(xt - XW'(LO));
          assign addr = AW'(o);
          assign body = s1_t[OW-1:0];
          assign y_below = s1_below;
          assign y_above = s1_above;
          assign y_neg = s1_neg;
          assign y_x = s1_x;
        end
        if (1) begin : g_tail
          `MASE_CAST_TO(DATA_OUT_0, IW, DATA_IN_0_PRECISION_1, 1, 1, y_x, tail);
        end
        assign nbody = body == OMIN ? ~OMIN : -body;
        assign y[L*OW+:OW] = y_below ? '0 : y_above ? tail : y_neg ? nbody : body;
      end
    end
  end

  `MASE_OUTPUT_SKID(OW, N, y, y_valid, out_ready);
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
