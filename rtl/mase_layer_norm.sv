// mase_layer_norm: LayerNorm over the innermost dimension,
//   y = (x - mean) / sqrt(var + eps) * gamma + beta,
// on rows of D = DATA_IN_0_TENSOR_SIZE_DIM_0 elements streamed as D/P beats of P =
// DATA_IN_0_PARALLELISM_DIM_0 lanes; gamma / beta come from two ROMs (word j = elements
// j*P .. j*P+P-1, files WEIGHT_MEM_FILE / BIAS_MEM_FILE), eps = EPS * 2^-EPS_FRAC.
//
// Exact integer algorithm (specified in hwlib/src/components/layer_norm.rs, whose model this
// module matches bit for bit):
//   S1 = sum x, S2 = sum x^2 (exact); V = D*S2 - S1^2 (= D^2 var, exact, no division);
//   c_i = D*x_i - S1 (= D (x_i - mean), exact);
//   Q = V << (FQ - 2F) + (D*D*EPS) << (FQ - EPS_FRAC), FQ = max(2F, EPS_FRAC rounded up to even);
//   k = ceil(bitlength(Q)/2), u = floor(Q * 2^(MF - 2k)) in [1/4, 1) (MF = 26 fractional bits);
//   y = LUT[u >> (MF - 7)] << (YF - 10) (mase_layer_norm_rsqrt_lut, YF = 24), then two Newton
//   steps s = (y*y) >> YF, t = (u*s) >> MF, y = (y * (3<<YF - t)) >> (YF+1);
//   n_i = floor(c_i * y * 2^-(k + YF - NORM_FRAC + F - FQ/2)) (NORM_FRAC fractional bits);
//   acc_i = n_i * gamma_i + beta_i exact, then mase_cast_core into the DATA_OUT_0 format.
//
// Schedule. Rows are written into a ring of NSLOT row slots while S1 / S2 accumulate (P
// squarers and two adder trees per beat). The end-of-row sums enter a fully pipelined 1/sqrt
// unit (RS = 11 stages, never stalled) which deposits (S1, y, k) with the slot. The normalising
// pipeline (issue, N1 read, N2 centre, N3 c*y, N4 shift, N5 *gamma, N6 +beta, output register)
// reads a slot once its statistics are ready, while later rows are still arriving;
// NSLOT = 2 + ceil((RS + 2) / (D/P)) slots make this overlap complete for every row length.
//   Latency: D/P + RS + 8 cycles from the first input beat to the first output beat.
//   II:      D/P cycles per row (P elements per cycle in and out).
//   Paths cut: data_in_0_ready is a register function (slot flags); the output is the register
//            of a mase_skid_buffer. Input data goes through the P squarers and the adder trees
//            into the sum registers within one cycle.
//
// Folded form (FOLD >= 3): the same algorithm and numbers at 1/FOLD of the rate with fewer
// multipliers, for nodes that have slack. A free-running phase counter ph (0..FOLD-1) shares
// one multiplier per lane: ph 0 squares the input beat (input taken only at ph 0), ph 1 forms
// c*y for N3, ph FOLD-1 forms n*gamma for N5; the normalising pipeline advances only at ph
// FOLD-1 (all of it at once, so a stalled step simply repeats the same products), and a
// finished beat waits in N6 until the output register takes it. The
// constant multiplies D*x and D*S2 are shift-add trees over the set bits of D. The 1/sqrt unit
// is sequential, one row at a time: one multiplier steps through S1^2 and the six Newton
// multiplies of a row, its own at FOLD = 3 (12 cycles per row), lane 0's at ph 2 (a phase the
// lane leaves free) at FOLD >= 4 (RS - 1 beat periods per row); FOLD*D/P must be at least
// ROWMIN (12, or 10*FOLD + 2).
//   Latency: c0 + 5*FOLD + 2, c0 = the first cycle >= (D/P-1)*FOLD + SD with ph FOLD-1 (SD:
//            RS + 2 at full rate, RS + 3 at FOLD = 3, (RS-1)*FOLD + 4 above; N6 is handed to
//            the output register in the cycle after it is loaded).
//   II:      FOLD*D/P cycles per row. Multipliers: 4P + 8 (FOLD = 1), P + 1 (3), P (>= 4).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif

// The front of the 1/sqrt unit, the same in both schedules (g_rsqrt_pipe, g_rsqrt_seq): q_len,
// the bit length L of LEN_Q; q_norm, Q shifted left by q_sh = QWE - 2K (top bit at QWE-1 or
// QWE-2) for K = ceil(L/2); u_d, its top MF bits (the mantissa u); lut_y0, the table seed of the
// mantissa U (mase_layer_norm_rsqrt_lut u_lut). Declares q_len, q_sh, q_norm, u_d and lut_y0.
`define MASE_LAYER_NORM_RSQRT_FRONT(LEN_Q, Q, K, U) \
  /* Leading-one position of LEN_Q (bit length), and the normalising shift. */ \
  logic [KW:0] q_len, q_sh; \
  /* Q shifted left by QWE - 2K (top bit at QWE-1 or QWE-2), its top MF bits. */ \
  logic [QWE-1:0] q_norm; \
  logic [MF-1:0] u_d; \
  /* Table seed. */ \
  logic [TF+1:0] lut_y0; \
  always_comb begin \
    q_len = '0; \
    for (int i = 0; i < QW; i++) begin \
      if (LEN_Q[i]) q_len = KW1'(i + 1); \
    end \
  end \
  assign q_sh = KW1'(QWE) - {K, 1'b0}; \
  assign q_norm = QWE'(Q) << q_sh; \
  if (QWE >= MF) begin : g_u_top \
    assign u_d = q_norm[QWE-1-:MF]; \
  end else begin : g_u_pad \
    assign u_d = MF'(q_norm) << (MF - QWE); \
  end \
  mase_layer_norm_rsqrt_lut u_lut ( \
      .idx(U[MF-1-:TB]), \
      .y0 (lut_y0) \
  );

module mase_layer_norm #(
    /// Input: W = DATA_IN_0_PRECISION_0 signed bits (1..32), F fractional bits (-32..32);
    /// D = DATA_IN_0_TENSOR_SIZE_DIM_0 elements per row (1..4096); any number of rows
    /// (1..1048576) stream back to back; P = DATA_IN_0_PARALLELISM_DIM_0 elements per beat
    /// (1..256, divides D); one row per beat.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 16, 8, 64, 1, 4, 1),
    /// Gamma ROM: signed 1..32 bits, fractional bits -32..32; D elements (must equal D), P per
    /// ROM word (must equal P).
    `MASE_VECTOR_PARAMS(WEIGHT, 16, 14, DATA_IN_0_TENSOR_SIZE_DIM_0, DATA_IN_0_PARALLELISM_DIM_0),
    /// Beta ROM: signed 1..32 bits, fractional bits -32..32 (within 32 of NORM_FRAC + gamma
    /// frac); D elements (must equal D), P per ROM word (must equal P).
    `MASE_VECTOR_PARAMS(BIAS, 16, 12, DATA_IN_0_TENSOR_SIZE_DIM_0, DATA_IN_0_PARALLELISM_DIM_0),
    /// Output format: signed 1..64 bits.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 16, 12),
    /// Output shape (must equal the input's: D per row, P per beat, one row per beat).
    `MASE_SHAPE_PARAMS_OF(DATA_OUT_0, DATA_IN_0),
    /// Rounding and overflow of the output cast.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// eps as an integer code: eps = EPS * 2^-EPS_FRAC (1..2^31-1).
    parameter int EPS = 687195,
    /// Fractional bits of EPS (0..64).
    parameter int EPS_FRAC = 36,
    /// NF: fractional bits of the normalised value before gamma (1..32).
    parameter int NORM_FRAC = 16,
    /// Cycles per beat: 1 (full rate, 4 multipliers per lane) or 3..16 (one multiplier per lane
    /// shared by the square, c*y and n*gamma, sequential 1/sqrt with its own multiplier at 3,
    /// lane 0's above; FOLD*D/P must be >= 12 at 3, >= 10*FOLD + 2 above).
    parameter int FOLD = 1,
    /// Path of the gamma .mem file ($readmemh; "" = all-zero gamma).
    parameter WEIGHT_MEM_FILE = "",
    /// Path of the beta .mem file ($readmemh; "" = all-zero beta).
    parameter BIAS_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the ring, the 1/sqrt unit and the pipeline).
    /// data_in_0: input beats: P consecutive elements of a row, taken when the slot being written
    /// is free (registered flags).
    /// data_out_0: output beats: P consecutive outputs of a row (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0,
                      DATA_OUT_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
  localparam int W = DATA_IN_0_PRECISION_0;
  localparam int F = DATA_IN_0_PRECISION_1;
  localparam int D = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int P = DATA_IN_0_PARALLELISM_DIM_0;
  /// Beats per row, log2 of D.
  localparam int NW = D / P;
  localparam int LD = D > 1 ? $clog2(D) : 0;
  /// Sum widths (signed).
  localparam int S1W = W + LD + 1;
  localparam int S2W = 2 * W + LD + 1;
  localparam int VW = 2 * W + 2 * LD + 2;
  /// Alignment of var and eps.
  localparam int EF = EPS_FRAC;
  localparam int EFE = EF + EF % 2;
  localparam int FQ = 2 * F > EFE ? 2 * F : EFE;
  localparam int SV = FQ - 2 * F;
  localparam int SE = FQ - EF;
  localparam int QA = VW + SV;
  localparam int QB = 2 * LD + 32 + SE;
  localparam int QW = (QA > QB ? QA : QB) + 1;
  localparam int QWE = QW + QW % 2;
  /// 1/sqrt constants: y fraction, mantissa fraction, table index / entry fraction.
  localparam int YF = 24;
  localparam int MF = 26;
  localparam int TB = 7;
  localparam int TF = 10;
  localparam int YW = YF + 2;
  localparam int SW = YF + 4;
  /// Widths of y*y, u*s and y*r.
  localparam int Y2W = 2 * YW;
  localparam int USW = MF + SW;
  localparam int YRW = YW + SW;
  /// k (up to QWE/2) width.
  localparam int KW = $clog2(QWE / 2 + 1) + 1;
  localparam int KW1 = KW + 1;
  /// Normalisation shift: n = (prod << G) >>> (k + BASE + G).
  localparam int NF = NORM_FRAC;
  localparam int BASE = YF - NF + F - FQ / 2;
  localparam int G = BASE < 0 ? -BASE : 0;
  localparam int CW = W + LD + 2;
  localparam int PRW = CW + YW + 1 + G;
  /// Width of the product c*y before the guard shift.
  localparam int PRG = PRW - G;
  localparam int NNW = NF + (LD + 1) / 2 + 2;
  localparam int SHW = $clog2(QWE / 2 + BASE + G + 1) + 1;
  /// gamma / beta / accumulator.
  localparam int GW = WEIGHT_PRECISION_0;
  localparam int GF = WEIGHT_PRECISION_1;
  localparam int BW = BIAS_PRECISION_0;
  localparam int BF = BIAS_PRECISION_1;
  localparam int MW = NNW + GW;
  localparam int AF = NF + GF > BF ? NF + GF : BF;
  localparam int AWA = MW + AF - NF - GF;
  localparam int AWB = BW + AF - BF;
  localparam int AW = (AWA > AWB ? AWA : AWB) + 1;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  localparam int INTERNAL = QW > PRW ? (QW > AW ? QW : AW) : (PRW > AW ? PRW : AW);
  /// Ring of row slots.
  localparam int RS = 11;
  /// Cycles per row (FOLD per beat); slots that keep a row arriving while earlier ones wait for
  /// their statistics and are read (a read starts up to FOLD-1 cycles after they are ready).
  localparam int ROWC = FOLD * NW;
  /// Cycles from a row's last input beat to its statistics being ready (the 1/sqrt unit: RS
  /// pipelined stages; sequential, a capture cycle and RS - 1 steps, one per cycle at FOLD = 3,
  /// one per beat period when it borrows lane 0's multiplier), and the shortest row period the
  /// sequential unit keeps up with (one row in flight).
  localparam int SD = FOLD == 1 ? RS + 2 : FOLD == 3 ? RS + 3 : (RS - 1) * FOLD + 4;
  localparam int ROWMIN = SD - 2;
  localparam int NSLOT = 2 + (SD - 1 + FOLD + ROWC - 1) / ROWC;
  /// Phase counter width.
  localparam int PHW = FOLD > 1 ? $clog2(FOLD) : 1;
  localparam int RAW = $clog2(NSLOT * NW);
  localparam int SLW = $clog2(NSLOT);
  localparam int WDW = NW > 1 ? $clog2(NW) : 1;

`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_RANGE(DATA_IN_0_PRECISION_0, 1, 32);
    `MASE_CHECK_RANGE(DATA_IN_0_PRECISION_1, -32, 32);
    `MASE_CHECK_ROW_SHAPE(DATA_IN_0, 4096, 1048576, 256);
    `MASE_CHECK_RANGE(WEIGHT_PRECISION_0, 1, 32);
    `MASE_CHECK_RANGE(WEIGHT_PRECISION_1, -32, 32);
    `MASE_CHECK_EQUAL(WEIGHT_TENSOR_SIZE_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_EQUAL(WEIGHT_PARALLELISM_DIM_0, DATA_IN_0_PARALLELISM_DIM_0);
    `MASE_CHECK_RANGE(BIAS_PRECISION_0, 1, 32);
    `MASE_CHECK_RANGE(BIAS_PRECISION_1, -32, 32);
    `MASE_CHECK_EQUAL(BIAS_TENSOR_SIZE_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_EQUAL(BIAS_PARALLELISM_DIM_0, DATA_IN_0_PARALLELISM_DIM_0);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
    if (EPS < 1)
      $fatal(1, "EPS must be between 1 and 2147483647, got %0d", EPS);
    `MASE_CHECK_RANGE(EPS_FRAC, 0, 64);
    `MASE_CHECK_RANGE(NORM_FRAC, 1, 32);
    if (BF - NF - GF > 32 || NF + GF - BF > 32)
      $fatal(1, "BIAS_PRECISION_1 (%0d) must be within 32 of NORM_FRAC + WEIGHT_PRECISION_1 (%0d)",
             BF, NF + GF);
    if (INTERNAL > 120)
      $fatal(1, "internal width must be between 1 and 120 bits, got %0d", INTERNAL);
    if (FOLD != 1 && (FOLD < 3 || FOLD > 16))
      $fatal(1, "FOLD must be 1 or between 3 and 16, got %0d", FOLD);
    if (FOLD > 1 && ROWC < ROWMIN)
      $fatal(1, "FOLD * D/P (%0d) must be at least %0d (the sequential 1/sqrt unit)", ROWC, ROWMIN);
  end
`endif

  /// The output skid buffer can take a beat; the normalising pipeline advances.
  logic adv, step;
  /// Phase within the FOLD cycles of a beat (always 0 when FOLD = 1); the last phase.
  logic [PHW-1:0] ph;
  logic ph_last;
  if (FOLD > 1) begin : g_phase
    always_ff @(posedge clk) begin
      if (rst) ph <= '0;
      else ph <= ph == PHW'(FOLD - 1) ? '0 : ph + 1'b1;
    end
    assign ph_last = ph == PHW'(FOLD - 1);
  end else begin : g_no_phase
    assign ph = '0;
    assign ph_last = 1'b1;
  end

  // ---------------------------------------------------------------------------------------------
  // Input side: ring of NSLOT row slots, running sums
  /// Ring memory: slot s word j at s*NW + j, P elements per word.
  logic [P*W-1:0] ring[NSLOT*NW];
  /// Write pointer, word within the row, slot being written.
  logic [RAW-1:0] wr_ptr;
  logic [WDW-1:0] wr_word;
  logic [SLW-1:0] wr_slot;
  /// Slot s holds a complete row not yet fully read; its statistics are ready.
  logic [NSLOT-1:0] slot_used, st_ready;
  /// Slot being read, its read pointer and word; the last word of the slot is issued.
  logic [SLW-1:0] rd_slot;
  logic [RAW-1:0] rd_ptr;
  logic [WDW-1:0] rd_word;
  logic rd_done;
  /// Input beat accepted; it is the last of its row.
  logic in_fire, in_last;
  /// Running sums (signed), sums of the current beat.
  logic signed [S1W-1:0] acc_s1, beat_s1;
  logic signed [S2W-1:0] acc_s2, beat_s2;
  /// One cycle after a row's last beat: the sums are final; the row's slot.
  logic row_end;
  logic [SLW-1:0] row_slot;

  assign data_in_0_ready = !slot_used[wr_slot] && ph == '0;
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign in_last = wr_word == WDW'(NW - 1);

  /// Squares of the input lanes (a dedicated squarer per lane, or the lane's shared multiplier
  /// at ph 0).
  logic [P*S2W-1:0] sq;

  always_comb begin
    beat_s1 = '0;
    beat_s2 = '0;
    for (int i = 0; i < P; i++) begin
      beat_s1 = beat_s1 + S1W'($signed(data_in_0[i*W+:W]));
      beat_s2 = beat_s2 + $signed(sq[i*S2W+:S2W]);
    end
  end

  always_ff @(posedge clk) begin
    if (in_fire) begin
      ring[wr_ptr] <= data_in_0;
      acc_s1 <= (wr_word == '0 ? '0 : acc_s1) + beat_s1;
      acc_s2 <= (wr_word == '0 ? '0 : acc_s2) + beat_s2;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr   <= '0;
      wr_word  <= '0;
      wr_slot  <= '0;
      row_end  <= 1'b0;
      row_slot <= '0;
    end else begin
      row_end <= in_fire && in_last;
      if (in_fire) begin
        wr_ptr  <= wr_ptr == RAW'(NSLOT * NW - 1) ? '0 : wr_ptr + 1'b1;
        wr_word <= in_last ? '0 : wr_word + 1'b1;
        if (in_last) begin
          row_slot <= wr_slot;
          wr_slot  <= wr_slot == SLW'(NSLOT - 1) ? '0 : wr_slot + 1'b1;
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // 1/sqrt unit: RS cycles from the end-of-row sums to the statistics of the row
  /// D*D*EPS aligned to FQ fractional bits.
  localparam logic [QW-1:0] EPSQ = (QW'(D) * QW'(D) * QW'(EPS)) << SE;
  /// Operands and product of the sequential unit's multiplier (FOLD > 1; signed, unsigned
  /// operands zero-extended, product exact).
  localparam int UMA0 = S1W > YW + 1 ? S1W : YW + 1;
  localparam int UMA = UMA0 > MF + 1 ? UMA0 : MF + 1;
  localparam int UMB0 = S1W > YW + 1 ? S1W : YW + 1;
  localparam int UMB = UMB0 > SW + 1 ? UMB0 : SW + 1;
  logic signed [UMA-1:0] u_ma;
  logic signed [UMB-1:0] u_mb;
  logic signed [UMA+UMB-1:0] u_mp;
  /// The unit finishes a row: write its statistics (slot, S1, y, k).
  logic st_we;
  logic [SLW-1:0] st_wslot;
  logic signed [S1W-1:0] st_ws1;
  logic [YW-1:0] st_wy;
  logic [KW-1:0] st_wk;

  if (FOLD == 1) begin : g_rsqrt_pipe
  // Fully pipelined: RS stages advancing every cycle, a row may enter every cycle.
  /// Valid bit, slot and S1 of each stage 1..RS.
  logic [RS:1] rv;
  logic [SLW-1:0] rslot[RS+1];
  logic signed [S1W-1:0] rs1[RS+1];
  /// R1: V; R2: Q; R3: k with Q; R4 ..: u and k.
  logic signed [VW-1:0] r1_v;
  logic [QW-1:0] r2_q, r3_q;
  logic [KW-1:0] rk[RS+1];
  logic [MF-1:0] ru[RS+1];
  /// y of R5 (seed), R8 (one step), R11 (two steps); s of R6 / R9; t of R7 / R10.
  logic [YW-1:0] ry5, ry8, ry11;
  logic [SW-1:0] rs6, rs9, rt7, rt10;
  /// y delayed to meet t: seed (R5) used at R8, y of R8 used at R11.
  logic [YW-1:0] ry5d, ry6d, ry8d, ry9d;
  /// Bit length of Q (R2), Q (R3) normalised by k (R3) to its mantissa, the seed of u (R4).
  `MASE_LAYER_NORM_RSQRT_FRONT(r2_q, r3_q, rk[3], ru[4])
  /// The bits of q_norm below the mantissa are dropped (floor); this sink keeps lint quiet.
  logic unused_q_low;
  assign unused_q_low = ^q_norm;

  /// Newton step factors 3<<YF - t (R8 and R11; below 3<<YF, so SW bits hold them).
  logic [SW-1:0] r8_f, r11_f;
  assign r8_f  = SW'(3 << YF) - rt7;
  assign r11_f = SW'(3 << YF) - rt10;

  always_ff @(posedge clk) begin
    // R1: V = D*S2 - S1^2
    r1_v <= $signed(VW'(D)) * $signed(VW'(acc_s2)) - $signed(VW'(acc_s1)) * $signed(VW'(acc_s1));
    rs1[1] <= acc_s1;
    rslot[1] <= row_slot;
    // R2: Q
    r2_q <= (QW'(r1_v) << SV) + EPSQ;
    // R3: k
    r3_q <= r2_q;
    rk[3] <= KW'((q_len + 1'b1) >> 1);
    // R4: mantissa
    ru[4] <= u_d;
    rk[4] <= rk[3];
    // R5: seed
    ry5 <= YW'(lut_y0) << (YF - TF);
    // R6 / R9: s = (y*y) >> YF
    rs6 <= SW'((Y2W'(ry5) * Y2W'(ry5)) >> YF);
    rs9 <= SW'((Y2W'(ry8) * Y2W'(ry8)) >> YF);
    // R7 / R10: t = (u*s) >> MF
    rt7 <= SW'((USW'(ru[6]) * USW'(rs6)) >> MF);
    rt10 <= SW'((USW'(ru[9]) * USW'(rs9)) >> MF);
    // R8 / R11: y = (y * (3<<YF - t)) >> (YF+1)
    ry8 <= YW'((YRW'(ry5d) * YRW'(r8_f)) >> (YF + 1));
    ry11 <= YW'((YRW'(ry8d) * YRW'(r11_f)) >> (YF + 1));
    for (int s = 2; s <= RS; s++) begin
      rs1[s]   <= rs1[s-1];
      rslot[s] <= rslot[s-1];
    end
    for (int s = 5; s <= RS; s++) begin
      ru[s] <= ru[s-1];
      rk[s] <= rk[s-1];
    end
  end

  always_ff @(posedge clk) begin
    ry6d <= ry5;
    ry5d <= ry6d;
    ry9d <= ry8;
    ry8d <= ry9d;
  end

  always_ff @(posedge clk) begin
    if (rst) rv <= '0;
    else rv <= {rv[RS-1:1], row_end};
  end

  // The sequential unit's multiplier port is unused at full rate.
  assign u_ma = '0;
  assign u_mb = '0;
  assign u_mp = '0;
  logic unused_u;
  assign unused_u = ^{u_ma, u_mb, u_mp};
  assign st_we    = rv[RS];
  assign st_wslot = rslot[RS];
  assign st_ws1   = rs1[RS];
  assign st_wy    = ry11;
  assign st_wk    = rk[RS];
  end else begin : g_rsqrt_seq
  // Sequential: one row at a time (rows end at least FOLD*D/P cycles apart, see ROWMIN). The
  // row_end cycle captures the sums; then steps 0..10 (what stages R1..R11 of the pipelined unit
  // do: S1^2 and the six Newton multiplies on one multiplier, D*S2 a shift-add tree) run one per
  // tick, and the statistics are written the cycle after step 10. FOLD = 3: the unit has its own
  // multiplier and ticks every cycle; FOLD >= 4: it borrows lane 0's multiplier at ph 2 (a
  // phase the lane does not use) and ticks once per beat period.
  /// Step + 1 of the row in flight (0 = idle, 12 = write the statistics).
  logic [3:0] cnt;
  /// A step may run this cycle.
  logic tick;
  /// The row's slot, S1 and S2, V, Q, k, mantissa u, y, s, t.
  logic [SLW-1:0] c_slot;
  logic signed [S1W-1:0] c_s1;
  logic signed [S2W-1:0] c_s2;
  logic signed [VW-1:0] c_v;
  logic [QW-1:0] c_q;
  logic [KW-1:0] c_k;
  logic [MF-1:0] c_u;
  logic [YW-1:0] c_y;
  logic [SW-1:0] c_s, c_t;
  /// Newton factor 3<<YF - t (below 3<<YF, so SW bits hold it).
  logic [SW-1:0] c_f;
  assign c_f = SW'(3 << YF) - c_t;
  /// D*S2 (shift-add over the set bits of D).
  logic signed [VW-1:0] ds2;

  if (FOLD == 3) begin : g_own_mult
    assign tick = 1'b1;
    assign u_mp = u_ma * u_mb;
  end else begin : g_lane_mult
    assign tick = ph == PHW'(2);
  end

  always_comb begin
    u_ma = UMA'(c_s1);
    u_mb = UMB'(c_s1);
    case (cnt)
      4'd6, 4'd9: begin
        u_ma = UMA'(c_y);
        u_mb = UMB'(c_y);
      end
      4'd7, 4'd10: begin
        u_ma = UMA'(c_u);
        u_mb = UMB'(c_s);
      end
      4'd8, 4'd11: begin
        u_ma = UMA'(c_y);
        u_mb = UMB'(c_f);
      end
      default: ;
    endcase
  end

  always_comb begin
    ds2 = '0;
    for (int b = 0; b < 13; b++) begin
      if (((D >> b) & 1) != 0) ds2 = ds2 + (VW'(c_s2) << b);
    end
  end

  /// Bit length of Q, Q normalised by k to its mantissa, the seed of u (all from the registers).
  `MASE_LAYER_NORM_RSQRT_FRONT(c_q, c_q, c_k, c_u)
  /// The bits of q_norm below the mantissa and the product's high bits are dropped (floor,
  /// exact widths); this sink keeps lint quiet.
  logic unused_low;
  assign unused_low = ^{q_norm, u_mp};

  always_ff @(posedge clk) begin
    if (rst) cnt <= '0;
    else if (row_end) cnt <= 4'd1;
    else if (cnt == 4'd12) cnt <= '0;
    else if (cnt != '0 && tick) cnt <= cnt + 1'b1;
  end

  always_ff @(posedge clk) begin
    if (row_end) begin
      c_s1   <= acc_s1;
      c_s2   <= acc_s2;
      c_slot <= row_slot;
    end
    if (tick) begin
      case (cnt)
        4'd1: c_v <= ds2 - VW'(u_mp);
        4'd2: c_q <= (QW'(c_v) << SV) + EPSQ;
        4'd3: c_k <= KW'((q_len + 1'b1) >> 1);
        4'd4: c_u <= u_d;
        4'd5: c_y <= YW'(lut_y0) << (YF - TF);
        4'd6, 4'd9: c_s <= SW'(u_mp >>> YF);
        4'd7, 4'd10: c_t <= SW'(u_mp >>> MF);
        4'd8, 4'd11: c_y <= YW'(u_mp >>> (YF + 1));
        default: ;
      endcase
    end
  end

  assign st_we    = cnt == 4'd12;
  assign st_wslot = c_slot;
  assign st_ws1   = c_s1;
  assign st_wy    = c_y;
  assign st_wk    = c_k;
  end

  // Per-slot statistics, written when the 1/sqrt unit finishes a row.
  logic signed [S1W-1:0] st_s1[NSLOT];
  logic [YW-1:0] st_y[NSLOT];
  logic [KW-1:0] st_k[NSLOT];

  always_ff @(posedge clk) begin
    if (st_we) begin
      st_s1[st_wslot] <= st_ws1;
      st_y[st_wslot]  <= st_wy;
      st_k[st_wslot]  <= st_wk;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      slot_used <= '0;
      st_ready  <= '0;
    end else begin
      for (int s = 0; s < NSLOT; s++) begin
        if (in_fire && in_last && wr_slot == SLW'(s)) slot_used[s] <= 1'b1;
        else if (rd_done && rd_slot == SLW'(s)) slot_used[s] <= 1'b0;
        if (st_we && st_wslot == SLW'(s)) st_ready[s] <= 1'b1;
        else if (rd_done && rd_slot == SLW'(s)) st_ready[s] <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Normalising pipeline
  /// A word is issued this cycle; it is the last of its row.
  logic issue, rd_last;
  assign issue = st_ready[rd_slot] && step;
  assign rd_last = rd_word == WDW'(NW - 1);
  assign rd_done = issue && rd_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_ptr  <= '0;
      rd_word <= '0;
      rd_slot <= '0;
    end else if (issue) begin
      rd_ptr  <= rd_ptr == RAW'(NSLOT * NW - 1) ? '0 : rd_ptr + 1'b1;
      rd_word <= rd_last ? '0 : rd_word + 1'b1;
      if (rd_last) rd_slot <= rd_slot == SLW'(NSLOT - 1) ? '0 : rd_slot + 1'b1;
    end
  end

  /// gamma / beta ROMs: word j, lane i = element j*P + i.
  logic [P*GW-1:0] g_rom[NW];
  logic [P*BW-1:0] b_rom[NW];
  `MASE_ROM_INIT(g_rom, NW, WEIGHT_MEM_FILE)
  `MASE_ROM_INIT(b_rom, NW, BIAS_MEM_FILE)

  /// N1: words read and the row's statistics.
  logic [P*W-1:0] n1_x;
  logic [P*GW-1:0] n1_g, n2_g, n3_g, n4_g;
  logic [P*BW-1:0] n1_b, n2_b, n3_b, n4_b, n5_b;
  logic signed [S1W-1:0] n1_s1;
  logic [YW-1:0] n1_y, n2_y;
  logic [KW-1:0] n1_k, n2_k, n3_k;
  /// Stage valid flags.
  logic n1_v, n2_v, n3_v, n4_v, n5_v, n6_v;
  /// N2 centred values, N3 products, N4 normalised values, N5 gamma products, N6 sums.
  logic [P*CW-1:0] n2_c;
  logic [P*PRG-1:0] n3_p;
  logic [P*NNW-1:0] n4_n;
  logic [P*MW-1:0] n5_m;
  logic [P*AW-1:0] n6_a;

  always_ff @(posedge clk) begin
    if (step) begin
      n1_x  <= ring[rd_ptr];
      n1_g  <= g_rom[rd_word];
      n1_b  <= b_rom[rd_word];
      n1_s1 <= st_s1[rd_slot];
      n1_y  <= st_y[rd_slot];
      n1_k  <= st_k[rd_slot];
      n2_g  <= n1_g;
      n2_b  <= n1_b;
      n2_y  <= n1_y;
      n2_k  <= n1_k;
      n3_g  <= n2_g;
      n3_b  <= n2_b;
      n3_k  <= n2_k;
      n4_g  <= n3_g;
      n4_b  <= n3_b;
      n5_b  <= n4_b;
    end
  end

  for (genvar i = 0; i < P; i++) begin : g_lane
    /// Product shifted left by G, then arithmetically right by k + BASE + G.
    logic signed [PRW-1:0] p_ext, p_sh;
    assign p_ext = PRW'($signed(n3_p[i*PRG+:PRG])) << G;
    assign p_sh  = p_ext >>> (SHW'(n3_k) + SHW'(BASE + G));
    /// n keeps the low NNW bits of p_sh (|n| < sqrt(D) 2^NF); this sink keeps lint quiet.
    logic unused_p_high;
    assign unused_p_high = ^p_sh;
    if (FOLD == 1) begin : g_full
      // Four multipliers: the square, D*x, c*y and n*gamma.
      assign sq[i*S2W+:S2W] = S2W'($signed(data_in_0[i*W+:W])) * S2W'($signed(data_in_0[i*W+:W]));
      always_ff @(posedge clk) begin
        if (step) begin
          n2_c[i*CW+:CW] <= $signed(CW'($signed(n1_x[i*W+:W]))) * $signed(CW'(D)) - CW'(n1_s1);
          n3_p[i*PRG+:PRG] <= $signed(PRG'($signed(n2_c[i*CW+:CW]))) * $signed(PRG'(n2_y));
          n5_m[i*MW+:MW] <= $signed(MW'($signed(n4_n[i*NNW+:NNW])))
              * $signed(MW'($signed(n4_g[i*GW+:GW])));
        end
      end
    end else begin : g_fold
      // One multiplier: ph 0 the input square, ph 1 c*y (held in fc until the step), ph FOLD-1
      // n*gamma. Operands are sign-extended (y, unsigned, zero-extended); products are exact.
      localparam int LA0 = CW > NNW ? CW : NNW;
      localparam int LA1 = LA0 > W ? LA0 : W;
      localparam int LB0 = YW + 1 > GW ? YW + 1 : GW;
      localparam int LB1 = LB0 > W ? LB0 : W;
      /// Lane 0 also serves the 1/sqrt unit at ph 2 when FOLD >= 4.
      localparam bit SHARE = i == 0 && FOLD >= 4;
      localparam int LA = SHARE && UMA > LA1 ? UMA : LA1;
      localparam int LB = SHARE && UMB > LB1 ? UMB : LB1;
      logic signed [LA-1:0] la;
      logic signed [LB-1:0] lb;
      logic signed [LA+LB-1:0] lp;
      /// c*y of the word in N2, formed at ph 1; D*x as a shift-add tree.
      logic [PRG-1:0] fc;
      logic signed [CW-1:0] dx;
      /// The product's high bits are beyond every exact result; this sink keeps lint quiet.
      logic unused_lp;
      assign unused_lp = ^lp;
      always_comb begin
        if (ph == '0) begin
          la = LA'($signed(data_in_0[i*W+:W]));
          lb = LB'($signed(data_in_0[i*W+:W]));
        end else if (ph == PHW'(1)) begin
          la = LA'($signed(n2_c[i*CW+:CW]));
          lb = LB'(n2_y);
        end else if (SHARE && ph == PHW'(2)) begin
          la = LA'(u_ma);
          lb = LB'(u_mb);
        end else begin
          la = LA'($signed(n4_n[i*NNW+:NNW]));
          lb = LB'($signed(n4_g[i*GW+:GW]));
        end
      end
      assign lp = la * lb;
      assign sq[i*S2W+:S2W] = S2W'(lp);
      if (SHARE) begin : g_share
        assign u_mp = (UMA + UMB)'(lp);
      end
      always_comb begin
        dx = '0;
        for (int b = 0; b < 13; b++) begin
          if (((D >> b) & 1) != 0) dx = dx + (CW'($signed(n1_x[i*W+:W])) << b);
        end
      end
      always_ff @(posedge clk) begin
        if (ph == PHW'(1)) fc <= PRG'(lp);
        if (step) begin
          n2_c[i*CW+:CW] <= dx - CW'(n1_s1);
          n3_p[i*PRG+:PRG] <= fc;
          n5_m[i*MW+:MW] <= MW'(lp);
        end
      end
    end
    always_ff @(posedge clk) begin
      if (step) begin
        n4_n[i*NNW+:NNW] <= NNW'(p_sh);
        n6_a[i*AW+:AW] <= (AW'($signed(n5_m[i*MW+:MW])) << (AF - NF - GF))
            + (AW'($signed(n5_b[i*BW+:BW])) << (AF - BF));
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      n1_v <= 1'b0;
      n2_v <= 1'b0;
      n3_v <= 1'b0;
      n4_v <= 1'b0;
      n5_v <= 1'b0;
      n6_v <= 1'b0;
    end else if (step) begin
      n1_v <= st_ready[rd_slot];
      n2_v <= n1_v;
      n3_v <= n2_v;
      n4_v <= n3_v;
      n5_v <= n4_v;
      n6_v <= n5_v;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output: cast, skid buffer
  logic [P*OW-1:0] y;
  for (genvar i = 0; i < P; i++) begin : g_out
    `MASE_CAST_TO(DATA_OUT_0, AW, AF, 1, 1, n6_a[i*AW+:AW], y[i*OW+:OW]);
  end

  /// Beat offered to the output skid buffer. Full rate: the N6 beat, the pipeline advancing
  /// whenever the buffer has room. Folded: a beat stays offered until taken (n6_done after
  /// that), and the pipeline steps at ph FOLD-1 once N6 is empty, handed over or being taken.
  logic out_v;
  if (FOLD > 1) begin : g_out_fold
    logic n6_done;
    assign out_v = n6_v && !n6_done;
    assign step  = ph_last && (!out_v || adv);
    always_ff @(posedge clk) begin
      if (rst) n6_done <= 1'b0;
      else if (step) n6_done <= 1'b0;
      else if (out_v && adv) n6_done <= 1'b1;
    end
  end else begin : g_out_full
    assign out_v = n6_v;
    assign step  = adv && ph_last;  // ph_last is constant 1 here
  end

  `MASE_OUTPUT_SKID(OW, P, y, out_v, adv);

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule

`undef MASE_LAYER_NORM_RSQRT_FRONT
