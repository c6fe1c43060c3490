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
// The table is a synchronous-read ROM loaded by $readmemh(TABLE_MEM_FILE), one entry per word;
// FORM 0 tables of more than BANK_WORDS entries as NB banks side by side (word r holds entries
// r, r + BANK_WORDS, ...), the bank picked after the read, from flip-flops.
// Resource choice: FORM 0: two lanes share one ROM, each on its own read port (a block RAM has
// two ports; RAMB36 serves two reads of up to 36 bits, RAMB18 two of up to 18), so P lanes cost
// ceil(P/2) ROMs and lanes never contend. FORM 1: one ROM per lane (a word of YW + DW, 36..42
// bits, is one simple-dual-port block RAM read; sharing would need a second port of that width,
// the silicon of a second copy, no saving).
// FORM 1 band select: four comparisons of x against the band starts pick the band's shift and
// word offset (constants), so the address is (x >>> S) + OFF, no subtraction of LO; the band is
// registered (one-hot) and the address selects the band's sum by AND-OR.
// Pipeline (one piece of arithmetic per register stage, for >= 125 MHz on ECP5; every stage
// advances together, the input ready is the last stage empty or the skid buffer's registered
// ready): [SHAPE 1: |x| and the comparisons with HI, registered -> the clamp to HI, registered]
// -> [FORM 1: the band, four comparisons, registered] -> address (FORM 0: x - LO; FORM 1:
// (x >>> S) + OFF of the band) and tail flags, registered -> ROM read (the block RAM's own
// register; the upper tail's cast beside it) -> the ROM word again in flip-flops (a block RAM's
// clock-to-out, ~5.8 ns on ECP5, leaves no room after it) -> [banked FORM 0: the word copied,
// registered] -> FORM 1: d_k and r registered again (the DSP's input registers on ECP5) ->
// d_k * r, registered -> y_k + step, registered -> its rounding, registered -> the overflow
// mode (the cast in two halves), registered -> bank select (banked FORM 0), negation (SHAPE 1)
// and tail select -> skid.
//   Latency: 4 cycles (FORM 0; 5 banked), 10 (FORM 1), two more with SHAPE 1. II: 1 beat per cycle;
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
  /// Bits of one table entry.
  localparam int WORD_BITS = FORM == 1 ? YW + DW : OW;
  /// Table entries (at least 1, so that invalid TABLE_NEG/POS reach the parameter checks).
  localparam int DEPTH = HI < LO ? 1 : FORM == 1 ? (CNT0 + CNT1 + CNT2 + CNT3 + CNT4 > 1 ?
      CNT0 + CNT1 + CNT2 + CNT3 + CNT4 : 1) : HI - LO + 1;
  /// Table address width.
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  /// FORM 0: entries per bank of a deep table. A 2048-word bank fills a column of ECP5 block RAMs
  /// in their 2K x 9 mode (a Xilinx RAMB36 in 2K x 18), so one bank's read has no read mux.
  localparam int BANK_WORDS = 2048;
  /// Banks: FORM 0 tables deeper than BANK_WORDS are read as NB banks side by side (ROM word r
  /// holds entries r, r + BANK_WORDS, ..., bank b in bits [b*WORD_BITS +: WORD_BITS]; mase_hwlib
  /// layout_table packs the .mem file so), and the bank is picked from flip-flops after the read:
  /// one ROM of many rows would put a wide read mux after the block RAMs' clock-to-out.
  localparam int NB = FORM == 0 && DEPTH > BANK_WORDS ? (DEPTH + BANK_WORDS - 1) / BANK_WORDS : 1;
  /// ROM words (rows of the .mem file).
  localparam int ROM_DEPTH = NB > 1 ? BANK_WORDS : DEPTH;
  /// Bits of one ROM word (NB table entries).
  localparam int ROM_BITS = NB * WORD_BITS;
  /// ROM address width (the low bits of the table address).
  localparam int RAW = NB > 1 ? $clog2(BANK_WORDS) : AW;
  /// Bank index width (at least 1).
  localparam int BW = NB > 1 ? $clog2(NB) : 1;
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
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 16);
    `MASE_CHECK_BLOCK_SHAPE(DATA_IN_0);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 32);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
    `MASE_CHECK_RANGE(TABLE_NEG, 0, 32768);
    `MASE_CHECK_RANGE(TABLE_POS, 0, POS_MAX);
    `MASE_CHECK_FLAG(FORM);
    `MASE_CHECK_RANGE(SEG_BITS, 0, 12);
    `MASE_CHECK_RANGE(SEG_BITS_MID, 0, 12);
    `MASE_CHECK_RANGE(SEG_BITS_OUT, 0, 12);
    `MASE_CHECK_RANGE(BAND_MID, 0, 32768);
    `MASE_CHECK_RANGE(BAND_OUT, BAND_MID, 32768);
    `MASE_CHECK_RANGE(GUARD_BITS, 0, 8);
    `MASE_CHECK_FLAG(SHAPE);
    if (FORM == 1) begin : g_interpolated_checks
      `MASE_CHECK_RANGE(WORD_BITS, 1, 62);
    end
  endgenerate
`endif

  /// Register stages before the skid buffer: SHAPE 1's sign and magnitude stages, FORM 1's band
  /// stage, the address, the ROM read and the ROM word, a banked table's bank stage, and FORM 1's
  /// operands, product, interpolated value, its rounding and its overflow mode.
  localparam int NS = 2 * SHAPE + 3 + 6 * FORM + (NB > 1 ? 1 : 0);
  /// Register stages from the ROM read to the last (the ROM read and the ROM word, a banked
  /// table's bank stage, FORM 1's operands, product, value, rounding and overflow mode): what
  /// the output stage needs of the address stage (the tail output and flags, the sign, the
  /// bank) travels beside the word through as many registers.
  localparam int SB = 2 + (NB > 1 ? 1 : 0) + 5 * FORM;

  /// Pipeline advance: the last register stage is empty or drains into the skid buffer (every
  /// stage moves together; the skid buffer's second entry takes the beat that moves while its
  /// ready, a register, is still high).
  logic en;
  /// Stage i holds a block (valid of register stage i, 0 the first).
  logic [NS-1:0] vld;
  /// Block entering the skid buffer is valid (the last stage).
  logic y_valid;
  /// Skid buffer can take a block (registered).
  logic out_ready;
  /// Lane results (input of the skid buffer).
  logic [N*OW-1:0] y;

  assign en = !y_valid || out_ready;
  assign data_in_0_ready = en;
  assign y_valid = vld[NS-1];

  always_ff @(posedge clk) begin
    if (rst) vld <= '0;
    else if (en) vld <= NS'({vld, data_in_0_valid});
  end

  for (genvar t = 0; t < NT; t++) begin : g_table
    /// The table of lanes LPT*t .. LPT*t+LPT-1 (one read port each).
    logic [ROM_BITS-1:0] rom[ROM_DEPTH];
    `MASE_ROM_INIT(rom, ROM_DEPTH, TABLE_MEM_FILE)

    for (genvar j = 0; j < LPT; j++) begin : g_port
      if (LPT * t + j < N) begin : g_lane
        /// Lane index.
        localparam int L = LPT * t + j;
        /// Input code, sign-extended.
        logic signed [XW-1:0] x;
        /// Table coordinate: the code x (SHAPE 0) or the registered magnitude min(|x|, HI)
        /// (SHAPE 1).
        logic signed [XW-1:0] xt;
        /// Code below / above the table (with xt; SHAPE 1: never).
        logic below, above;
        /// SHAPE 1: negative input (with xt; the output is negated).
        logic neg;
        /// Tail and sign flags and the input code entering the address stage (FORM 1: from the
        /// band stage). SHAPE 1 reads no input code (no tails).
        logic sa_below, sa_above, sa_neg;
        /* verilator lint_off UNUSEDSIGNAL */
        logic [IW-1:0] sa_x;
        /* verilator lint_on UNUSEDSIGNAL */
        /// ROM address (FORM 0: computed from xt, its low AW bits outside the table, where the
        /// tails replace the word; FORM 1: from the band stage, 0 outside the table).
        logic [AW-1:0] addr;
        /// Output of the tails at the ROM-read stage: 0 below the table, cast(x) above it.
        logic [OW-1:0] tv;
        assign x = XW'($signed(data_in_0[L*IW+:IW]));

        /// Address stage: registered ROM address (row and bank), tail and sign flags (the address
        /// arithmetic ends in a register, so the block RAM's address setup starts the next cycle).
        logic [RAW-1:0] a_row;
        logic [BW-1:0] a_bank;
        logic a_below, a_above, a_neg;
        /// ROM-read stage: the ROM word (the block RAM's own read register). Word stage: the ROM
        /// word again in flip-flops (a block RAM's clock-to-out is most of a cycle, so nothing
        /// else follows it).
        logic [ROM_BITS-1:0] b_t, c_t;
        always_ff @(posedge clk) begin
          if (en) begin
            a_row   <= RAW'(addr);
            a_bank  <= BW'(addr >> RAW);
            a_below <= sa_below;
            a_above <= sa_above;
            a_neg   <= sa_neg;
            b_t     <= rom[a_row];
            c_t     <= b_t;
          end
        end

        if (SHAPE == 1) begin : g_odd
          /// |x| (at most 2^(IW-1): IW bits, unsigned, hold it).
          logic [IW-1:0] mag;
          /// |x| > HI, found on x itself (in parallel with the negation).
          logic clamp;
          /// Sign stage: registered |x|, |x| > HI and the sign (the negation's carry chain and
          /// the comparisons take a cycle of their own; the clamp follows).
          logic [IW-1:0] s_mag;
          logic s_clamp, s_neg;
          /// Magnitude stage: registered min(|x|, HI) and sign (the clamp, a select, in a cycle
          /// of its own, ahead of the band select). The magnitude is at most 2^(IW-1): IW bits,
          /// unsigned, so what reads it (comparisons, address) sees constant upper bits.
          logic [IW-1:0] m_xt;
          logic m_neg;
          assign mag = IW'(x < 0 ? -x : x);
          assign clamp = x > XW'(HI) || x < -XW'(HI);
          always_ff @(posedge clk) begin
            if (en) begin
              s_mag   <= mag;
              s_clamp <= clamp;
              s_neg   <= x < 0;
              m_xt    <= s_clamp ? IW'(HI) : s_mag;
              m_neg   <= s_neg;
            end
          end
          assign xt = XW'({1'b0, m_xt});
          assign below = 1'b0;
          assign above = 1'b0;
          assign neg = m_neg;
          assign tv = '0;
        end else begin : g_code
          /// Registered input code (for the upper tail), beside the address.
          logic [IW-1:0] a_x;
          /// Upper tail: the input cast into the output format.
          logic [OW-1:0] tail;
          always_ff @(posedge clk) begin
            if (en) a_x <= sa_x;
          end
          assign xt = x;
          assign below = x < XW'(LO);
          assign above = x > XW'(HI);
          assign neg = 1'b0;
          if (1) begin : g_tail
            `MASE_CAST_TO(DATA_OUT_0, IW, DATA_IN_0_PRECISION_1, 1, 1, a_x, tail);
          end
          assign tv = a_below ? '0 : tail;
        end

        /// Table value in the output format.
        logic [OW-1:0] body;
        /// Table value negated, saturating (SHAPE 1, negative inputs).
        logic [OW-1:0] nbody;
        /// Tail output, tail taken and sign at the output stage, SB stages after the address.
        logic [OW-1:0] y_tv;
        logic y_tail, y_neg;
        /* verilator lint_off UNUSEDSIGNAL */
        /// The bank of the word at the output stage (FORM 1 has one bank and leaves it unread).
        logic [BW-1:0] y_bank;
        /* verilator lint_on UNUSEDSIGNAL */
        mase_delay #(.DEPTH(SB), .WIDTH(OW + 2 + BW)) u_side (.clk(clk), .rst(rst), .en(en),
            .d({tv, a_below || a_above, a_neg, a_bank}), .q({y_tv, y_tail, y_neg, y_bank}));
        if (FORM == 1) begin : g_interp
          /// Breakpoint y_k (word stage).
          logic signed [YW-1:0] yk;
          /// Difference d_k = y_(k+1) - y_k (word stage).
          logic signed [DW-1:0] dk;
          /// Normalised in-segment offset r << (M - S) at the word stage (registered with the
          /// address, then beside the ROM read and the word).
          logic [RW-1:0] c_r;
          /// Product stage: d_k * r (exact), registered two cycles after the word stage (the
          /// operands registered first, in the DSP's input registers on ECP5: the word register
          /// sits by its block RAM, and the routing from it to the DSP, the multiplier and the
          /// routing back do not fit one cycle).
          logic signed [DW+RW:0] prod;
          /// d_k * r floored by 2^M (|d_k * r / 2^M| < |d_k|: DW bits hold it).
          logic signed [DW-1:0] step;
          /// Breakpoint at the product stage (two registers after the word stage).
          logic signed [YW-1:0] d_yk;
          /// Interpolated value v = y_k + step (F_out + G fractional bits).
          logic signed [YW:0] v;
          /// Sum stage: registered v (the cast follows in two cycles).
          logic [YW:0] e_v;
          /// Bits of v rounded to F_out fractional bits: |v| <= 2^YW units of 2^-(F_out + G), so
          /// the rounded integer fits in YW - G + 2 bits; one more, so it never wraps.
          localparam int NRW = YW + 3 - GUARD_BITS;
          /// v rounded to F_out fractional bits (DATA_OUT_0_ROUNDING), not yet range-limited.
          logic [NRW-1:0] vr;
          /// Rounding stage: registered rounded v. The cast is split in two cycles, rounding
          /// then the overflow mode: cast(v) is exactly the overflow mode applied to the rounded
          /// integer (mase_cast_core), and each half is a carry chain.
          logic [NRW-1:0] n_v;
          /// v in the output format (the overflow mode applied to n_v).
          logic [OW-1:0] cv;
          /// Cast stage: registered cast value (the negation and the tail select follow in the
          /// last cycle).
          logic [OW-1:0] f_body;
          /// Band of the registered coordinate, one-hot (band b is [STb, ST(b+1)); none outside
          /// the table or when empty), decoded from the registered comparisons.
          logic [4:0] band;
          /// Band stage: registered xt, comparisons, tail and sign flags and input code (the
          /// comparisons take a cycle of their own, ahead of the address arithmetic, and end in
          /// flip-flops).
          logic signed [XW-1:0] q_xt;
          logic [5:0] q_ge;
          logic q_below, q_above, q_neg;
          logic [IW-1:0] q_x;
          /// Normalised in-segment offset (xt mod 2^S) << (M - S) of xt in its band.
          logic [RW-1:0] rn;
          /// Word of xt in its band, (xt >>> S) + OFF (0 outside the table; the address is its
          /// low AW bits, it lies in [0, DEPTH)).
          /* verilator lint_off UNUSEDSIGNAL */
          logic signed [XW-1:0] k;
          /* verilator lint_on UNUSEDSIGNAL */
          /// The registered table coordinate in 32 bits (for the in-segment offset).
          logic signed [31:0] xi;
          /// xt at or past the start of band b (b = 0..4), and past the table (b = 5): the starts
          /// rise with b, so band b is ge[b] && !ge[b+1].
          logic [5:0] ge;
          assign ge = {above, xt >= XW'(ST4), xt >= XW'(ST3), xt >= XW'(ST2), xt >= XW'(ST1), !below};
          assign band = q_ge[4:0] & ~q_ge[5:1];
          always_ff @(posedge clk) begin
            if (en) begin
              q_xt    <= xt;
              q_ge    <= ge;
              q_below <= below;
              q_above <= above;
              q_neg   <= neg;
              q_x     <= data_in_0[L*IW+:IW];
            end
          end
          assign sa_below = q_below;
          assign sa_above = q_above;
          assign sa_neg = q_neg;
          assign sa_x = q_x;
          assign xi = 32'(q_xt);
          // The band's word and offset, selected by AND-OR (0 with no band).
          assign k = ({XW{band[4]}} & ((q_xt >>> SH4) + XW'(OFF4)))
                   | ({XW{band[3]}} & ((q_xt >>> SH3) + XW'(OFF3)))
                   | ({XW{band[2]}} & ((q_xt >>> SH2) + XW'(OFF2)))
                   | ({XW{band[1]}} & ((q_xt >>> SH1) + XW'(OFF1)))
                   | ({XW{band[0]}} & ((q_xt >>> SH0) + XW'(OFF0)));
          assign rn = ({RW{band[4]}} & RW'((xi & MASK4) << (M - SH4)))
                    | ({RW{band[3]}} & RW'((xi & MASK3) << (M - SH3)))
                    | ({RW{band[2]}} & RW'((xi & MASK2) << (M - SH2)))
                    | ({RW{band[1]}} & RW'((xi & MASK1) << (M - SH1)))
                    | ({RW{band[0]}} & RW'((xi & MASK0) << (M - SH0)));
          assign addr = AW'(k);
          assign yk = c_t[DW+:YW];
          assign dk = c_t[DW-1:0];
          mase_dsp_mul #(
              .A_WIDTH(DW),
              .B_WIDTH(RW + 1),
              .SIGNED (1),
              .A_REG  (1),
              .B_REG  (1)
          ) u_prod (
              .clk(clk),
              .ce (en),
              .a  (dk),
              .b  ({1'b0, c_r}),
              .p  (prod)
          );
          assign step = DW'(prod >>> M);
          assign v = (YW + 1)'(d_yk) + (YW + 1)'(step);
          mase_delay #(.DEPTH(3), .WIDTH(RW)) u_r (.clk(clk), .rst(rst), .en(en), .d(rn), .q(c_r));
          mase_delay #(.DEPTH(2), .WIDTH(YW)) u_yk (
              .clk(clk), .rst(rst), .en(en), .d(yk), .q(d_yk)
          );
          always_ff @(posedge clk) begin
            if (en) begin
              e_v    <= v;
              n_v    <= vr;
              f_body <= cv;
            end
          end
          mase_cast_core #(
              .IN_WIDTH  (YW + 1),
              .IN_FRAC   (DATA_OUT_0_PRECISION_1 + GUARD_BITS),
              .IN_SIGNED (1),
              .OUT_WIDTH (NRW),
              .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
              .OUT_SIGNED(1),
              .ROUNDING  (DATA_OUT_0_ROUNDING),
              .OVERFLOW  (0)
          ) u_round (
              .data_in (e_v),
              .data_out(vr)
          );
          mase_cast_core #(
              .IN_WIDTH  (NRW),
              .IN_FRAC   (DATA_OUT_0_PRECISION_1),
              .IN_SIGNED (1),
              .OUT_WIDTH (OW),
              .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
              .OUT_SIGNED(1),
              .ROUNDING  (0),
              .OVERFLOW  (DATA_OUT_0_OVERFLOW)
          ) u_cast (
              .data_in (n_v),
              .data_out(cv)
          );
          assign body = f_body;
        end else begin : g_full
          /// Offset into the table range (the address is its low AW bits; outside the range the
          /// word read is replaced by the tails, so no comparison gates it).
          /* verilator lint_off UNUSEDSIGNAL */
          logic [XW-1:0] o;
          /* verilator lint_on UNUSEDSIGNAL */
          assign o = XW'(xt - XW'(LO));
          assign addr = AW'(o);
          assign sa_below = below;
          assign sa_above = above;
          assign sa_neg = neg;
          assign sa_x = data_in_0[L*IW+:IW];
          if (NB > 1) begin : g_banked
            /// Bank stage: the word register copied, so that the word register's one load lets
            /// it sit at its block RAM, and the bank select's inputs (from every bank's block
            /// RAMs across the device) come from here.
            logic [ROM_BITS-1:0] d_t;
            always_ff @(posedge clk) begin
              if (en) d_t <= c_t;
            end
            assign body = d_t[32'(y_bank)*OW+:OW];
          end else begin : g_one
            assign body = c_t[32'(y_bank)*OW+:OW];
          end
        end
        assign nbody = body == OMIN ? ~OMIN : -body;
        assign y[L*OW+:OW] = y_tail ? y_tv : y_neg ? nbody : body;
      end
    end
  end

  `MASE_OUTPUT_SKID(OW, N, y, y_valid, out_ready);
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
