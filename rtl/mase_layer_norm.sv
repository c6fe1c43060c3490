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
// Multipliers. Every product wider than 18x18 bits is split by hand (MASE_LAYER_NORM_MUL) into
// 18x18-bit partial products, one MULT18X18D each (mase_dsp_mul: on ECP5 its own output register
// holds the partial product), and no path runs through a multiplier and an adder. At full rate a
// product takes three cycles from registered operands (partials, their pair sums registered, then
// the product): the DSP's output routing (3.5 ns on ECP5) meets one adder per path; the full-rate
// 1/sqrt unit's Newton multiplies keep their operand registers in the DSPs (their input registers),
// so the routing to a DSP ends at a register instead of running through the multiplier too. Folded,
// the same from the operands' registers: three cycles from the choice of operands (operands,
// partials, pair sums, then the product), two for the 1/sqrt unit's own multiplier at FOLD = 3,
// whose operands are registers loaded with the next multiply's operands. The constant multiplies
// D*S2 and D*x are balanced shift-add trees over the set bits of D.
//
// Schedule. Rows are written into a ring of NSLOT row slots. Each input beat is registered
// (x_r), squared (SQ cycles after it is taken the squares are registered), summed over the
// lanes by balanced adder trees into registers, and accumulated into S1 / S2; the end-of-row
// sums (row_end, SQ + 2 cycles after the row's last beat) enter a fully pipelined 1/sqrt unit
// (RS = 29 stages, never stalled: S1^2 (partials, pair sums, product), Q, Q's 8-bit groups, the
// top group, k, u, the seed, and per Newton step y*y, s, u*s, t, 3<<YF - t, y*f, y, each product
// three stages) which deposits (S1, y, k) with the slot. The normalising pipeline (issue, N1
// read, NR its register (the ring's block RAM output register), N2 centre, N3 / N4 / N5 c*y
// (partials, pair sums, product), N6 shift, N7 / N8 / N9 n*gamma, N10 +beta, output register)
// reads a slot once its statistics are ready, while later rows are still arriving; NSLOT = 2 +
// ceil((SD - 1 + FOLD) / (FOLD*D/P)) slots make this overlap complete for every row length.
//   Latency: D/P + SQ + RS + 14 = D/P + 47 cycles from the first input beat to the first output
//            (SQ = 4 at full rate).
//   II:      D/P cycles per row (P elements per cycle in and out).
//   Paths cut: data_in_0_ready is a register function (slot flags; folded, a register); the
//            output is the register of a mase_skid_buffer. Multiplier operands, partial
//            products and their pair sums are registers; the phase is one-hot (folded); the
//            sequential 1/sqrt unit's operand mux is decoded a cycle early, and at FOLD >= 4
//            takes t (lane 0 forms 3<<YF - t after the register), at FOLD = 3 3<<YF - t
//            from its own multiplier ((-u)*s plus a constant added with the partial
//            products, no subtracter after the product); the 1/sqrt seed table's
//            output is registered before it is squared; the normalising shift amount (k + BASE
//            + G) is added before it is delayed to the shifter.
//
// Folded form (FOLD >= 3): the same algorithm and numbers at 1/FOLD of the rate with fewer
// multipliers, for nodes that have slack. A free-running one-hot phase ph (0..FOLD-1) shares
// one (split) multiplier per lane, its operands registered (la_r, lb_r) from a mux on ph, its
// product the sum of the registered pair sums of the partials three cycles after the operands
// are chosen: ph FOLD-3 chooses c*y of N2 (its product arrives at ph 0 of the next beat period
// and is kept in N3 when the step moved that word there), ph FOLD-2 n*gamma of N4 (its product
// arrives at ph 1 and is kept in N5 likewise), ph FOLD-1 the square of the input beat (input
// taken only at ph 0, held in x_r). The normalising pipeline advances only at ph FOLD-1 (all of
// it at once, so a stalled step simply repeats the same products), and a finished beat waits in
// N6 until the output register takes it. The 1/sqrt unit is sequential, one row at a time: one
// multiplier steps through S1^2 and the six Newton multiplies of a row, one step per beat
// period (from ph 0, the result written UL cycles later), its own at FOLD = 3 (UL = 2: its
// operands are registers loaded when the previous result is written), lane 0's at FOLD >= 4
// (UL = 3: ph 0 is free there); FOLD*D/P must be at least ROWMIN (34 at FOLD = 3, 47 at 4, 59
// at 5, 11*FOLD - 1 above).
//   Latency: c0 + 6*FOLD + 2, c0 = the first cycle >= (D/P-1)*FOLD + SD with ph FOLD-1 (SD:
//            SEL1 + 10*FOLD + UL + 2, SEL1 = the first multiple of FOLD >= FOLD + 6; N6 is
//            handed to the output register in the cycle after it is loaded).
//   II:      FOLD*D/P cycles per row. Multiplier units: 3P + 7 (FOLD = 1), P + 1 (3), P (>= 4),
//            each split into 18x18-bit partial products.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif

// S = A * B for the signed AWID-bit A and BWID-bit B (registers, or a mux of registers: they
// route into the DSPs), as PWID bits (exact when PWID >= AWID + BWID): A and B are cut into
// 17-bit unsigned slices below a signed top slice of at most 18 bits, each pair of slices
// multiplied by one 18x18-bit multiplier into a register (mase_dsp_mul: on ECP5 the DSP's own
// output register), the partial products added in pairs into registers (the DSP's output
// routing, 3.5 ns on ECP5, then one adder), S the sum of those (combinational, one adder for up
// to four partial products): the product of A and B of 2 + OPR (enabled) cycles before, plus K
// (a PWID-bit addend taken with the partial products: '0, or a register function). OPR = 1: A
// and B are not registers but the values the operand registers would load, and the DSPs
// register them (their input registers): the path into a multiplier then ends at its input
// register instead of running through it, after the routing to the DSP. With at least
// two slices each, the first pair sum holds the low slices' product and the top slices' product,
// which do not overlap (the low one is below 2^34, the top one a multiple of 2^34): one is
// written into the other's low bits, which leaves that pair sum's adder free for K. All
// registers are enabled by EN. Declares the generate block NAME.
`define MASE_LAYER_NORM_MUL(NAME, EN, OPR, AWID, A, BWID, B, PWID, S, K) \
  if (1) begin : NAME \
    /* Slices of A and B. */ \
    localparam int NA = (AWID) > 18 ? ((AWID) - 2) / 17 + 1 : 1; \
    localparam int NB = (BWID) > 18 ? ((BWID) - 2) / 17 + 1 : 1; \
    /* Partial products; leaves of the final sum (pair sums); shifted terms (padded to pairs). */ \
    localparam int NT = NA * NB; \
    localparam int NN = (NT + 1) / 2; \
    localparam int TN = 2 * NN; \
    /* The first pair sum joins the low and the top slices' products (no overlap). */ \
    localparam bit LH = NA > 1 && NB > 1 && NT % 2 == 0; \
    /* Partial products, 36 bits each, slice pair (a, b) at a*NB + b. */ \
    logic [NA*NB*36-1:0] pp; \
    for (genvar pa = 0; pa < NA; pa++) begin : g_a \
      /* Slice pa of A as an 18-bit signed operand. */ \
      logic signed [17:0] ca; \
      if (pa == NA - 1) begin : g_top \
        assign ca = 18'($signed(A[(AWID)-1:17*pa])); \
      end else begin : g_low \
        assign ca = {1'b0, A[17*pa+:17]}; \
      end \
      for (genvar pb = 0; pb < NB; pb++) begin : g_b \
        /* Slice pb of B as an 18-bit signed operand. */ \
        logic signed [17:0] cb; \
        if (pb == NB - 1) begin : g_top \
          assign cb = 18'($signed(B[(BWID)-1:17*pb])); \
        end else begin : g_low \
          assign cb = {1'b0, B[17*pb+:17]}; \
        end \
        /* The registered partial product (on ECP5 the DSP's own output register). */ \
        mase_dsp_mul #(.A_WIDTH(18), .B_WIDTH(18), .SIGNED(1), .A_REG(OPR), .B_REG(OPR)) u_pp ( \
            .clk(clk), .ce(EN), .a(ca), .b(cb), .p(pp[(pa*NB+pb)*36+:36])); \
      end \
    end \
    /* The partial products at their weights (zero padding to pairs), term k of pair k/2: */ \
    /* in order of slice pairs, or (LH) the low and the top slices' products first. */ \
    logic [TN*(PWID)-1:0] tl; \
    for (genvar k = 0; k < TN; k++) begin : g_t \
      /* The partial product (slice pair) of term k. */ \
      localparam int M = !LH || k == 0 ? k : k == 1 ? NT - 1 : k - 1; \
      if (M < NT) begin : g_pp \
        assign tl[k*(PWID)+:(PWID)] = (PWID)'($signed(pp[M*36+:36])) << (17 * (M / NB + M % NB)); \
      end else begin : g_pad \
        assign tl[k*(PWID)+:(PWID)] = '0; \
      end \
    end \
    /* Leaves of the final sum: the pair sums, registered (the first one with K). */ \
    logic [(PWID)-1:0] lv[NN]; \
    always_ff @(posedge clk) begin \
      if (EN) begin \
        if (LH) lv[0] <= (tl[(PWID)+:(PWID)] | (PWID)'(pp[33:0])) + (PWID)'(K); \
        else lv[0] <= tl[0+:(PWID)] + tl[(PWID)+:(PWID)] + (PWID)'(K); \
        for (int k = 1; k < NN; k++) lv[k] <= tl[2*k*(PWID)+:(PWID)] + tl[(2*k+1)*(PWID)+:(PWID)]; \
      end \
    end \
    /* The final sum, a balanced tree of the leaves (heap order). */ \
    logic [(PWID)-1:0] tq[2*NN]; \
    always_comb begin \
      tq[0] = '0; \
      for (int k = 0; k < NN; k++) tq[NN+k] = lv[k]; \
      for (int k = NN - 1; k >= 1; k--) tq[k] = tq[2*k] + tq[2*k+1]; \
    end \
    assign S = tq[1]; \
    /* Node 0 is not part of the tree; this sink keeps lint quiet. */ \
    logic unused_tq0; \
    assign unused_tq0 = ^tq[0]; \
  end
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
    /// Cycles per beat: 1 (full rate, 3 multipliers per lane) or 3..16 (one multiplier per lane
    /// shared by the square, c*y and n*gamma, sequential 1/sqrt with its own multiplier at 3,
    /// lane 0's above; FOLD*D/P must be >= 34 at 3, >= 47 at 4, >= 59 at 5, >= 11*FOLD - 1
    /// above).
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
  /// k (up to QWE/2) width.
  localparam int KW = $clog2(QWE / 2 + 1) + 1;
  /// Groups of 8 bits of Q for the leading-one search.
  localparam int QG = (QW + 7) / 8;
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
  /// Stages of the fully pipelined 1/sqrt unit (FOLD = 1).
  localparam int RS = 29;
  /// Cycles from an input beat being taken to its registered squares (x_r, the partial products,
  /// their pair sums, the squares; folded: the square is chosen at ph FOLD-1 and takes four
  /// cycles more: operands, partials, pair sums, square).
  localparam int SQ = FOLD == 1 ? 4 : FOLD + 3;
  /// Cycles per row (FOLD per beat); slots that keep a row arriving while earlier ones wait for
  /// their statistics and are read (a read starts up to FOLD-1 cycles after they are ready).
  localparam int ROWC = FOLD * NW;
  /// Folded: cycle (after a row's last input beat) at which the sequential 1/sqrt unit's first
  /// step starts: the first ph 0 after row_end (SQ + 2); cycles from a step's ph 0 to its result
  /// (the unit's own multiplier at FOLD = 3: partials, pair sums, product; lane 0's at FOLD >= 4
  /// after its operand register).
  localparam int SEL1 = FOLD * ((SQ + 3 + FOLD - 1) / FOLD);
  localparam int UL = FOLD == 3 ? 2 : 3;
  /// Cycles from a row's last input beat to its statistics being ready (the 1/sqrt unit:
  /// row_end at SQ + 2, then RS pipelined stages and the write; sequential, 11 steps one beat
  /// period each from SEL1, the result of a step written two cycles after its operands are
  /// chosen, then the write), and the shortest row period the sequential unit keeps up with (one
  /// row in flight: the next row_end no earlier than the cycle the statistics are written).
  localparam int SD = FOLD == 1 ? SQ + RS + 3 : SEL1 + 10 * FOLD + UL + 2;
  localparam int ROWMIN = SD - 1 - (SQ + 2);
  localparam int NSLOT = 2 + (SD - 1 + FOLD + ROWC - 1) / ROWC;
  localparam int RAW = $clog2(NSLOT * NW);
  localparam int SLW = $clog2(NSLOT);
  localparam int WDW = NW > 1 ? $clog2(NW) : 1;
  /// Set bits of D (terms of the shift-add trees for D*x and D*S2).
  localparam int ND = ((D >> 0) & 1) + ((D >> 1) & 1) + ((D >> 2) & 1) + ((D >> 3) & 1)
      + ((D >> 4) & 1) + ((D >> 5) & 1) + ((D >> 6) & 1) + ((D >> 7) & 1) + ((D >> 8) & 1)
      + ((D >> 9) & 1) + ((D >> 10) & 1) + ((D >> 11) & 1) + ((D >> 12) & 1);

`ifndef SYNTHESIS
  generate
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
    if (EPS < 1) begin : g_check_EPS
      $fatal(1, "EPS must be between 1 and 2147483647, got %0d", EPS);
    end
    `MASE_CHECK_RANGE(EPS_FRAC, 0, 64);
    `MASE_CHECK_RANGE(NORM_FRAC, 1, 32);
    if (BF - NF - GF > 32 || NF + GF - BF > 32) begin : g_check_BIAS_PRECISION_1
      $fatal(1, "BIAS_PRECISION_1 (%0d) must be within 32 of NORM_FRAC + WEIGHT_PRECISION_1 (%0d)",
             BF, NF + GF);
    end
    if (INTERNAL > 120) begin : g_check_internal_width
      $fatal(1, "internal width must be between 1 and 120 bits, got %0d", INTERNAL);
    end
    if (FOLD != 1 && (FOLD < 3 || FOLD > 16)) begin : g_check_FOLD
      $fatal(1, "FOLD must be 1 or between 3 and 16, got %0d", FOLD);
    end
    if (FOLD > 1 && ROWC < ROWMIN) begin : g_check_fold_row
      $fatal(1, "FOLD * D/P (%0d) must be at least %0d (the sequential 1/sqrt unit)", ROWC, ROWMIN);
    end
  endgenerate
`endif

  /// The output skid buffer can take a beat; the normalising pipeline advances.
  logic adv, step;
  /// Phase within the FOLD cycles of a beat, one-hot (bit f in phase f; FOLD = 1: the constant
  /// 1), so that every decision on the phase reads one register bit, not a counter's compare;
  /// the last phase.
  logic [FOLD-1:0] ph;
  logic ph_last;
  if (FOLD > 1) begin : g_phase
    always_ff @(posedge clk) begin
      if (rst) ph <= FOLD'(1);
      else ph <= {ph[FOLD-2:0], ph[FOLD-1]};
    end
  end else begin : g_no_phase
    assign ph = 1'b1;
  end
  assign ph_last = ph[FOLD-1];

  // ---------------------------------------------------------------------------------------------
  // Input side: ring of NSLOT row slots, running sums
  /// Ring memory: slot s word j at s*NW + j, P elements per word. A slot is written only while
  /// free and issued (read into N1 with its valid flag) only while used, freed by its last
  /// issue, so no used read meets a write of its address (a step that issues nothing may read
  /// the slot being written, into an invalid N1) and synthesis is told so (no_rw_check):
  /// without it, Yosys 0.23 puts a collision bypass multiplexer between the block RAM's read
  /// and NR, which keeps NR out of the block RAM's output register and follows its slow
  /// clock-to-out (the encoder layer's critical path once the join FIFOs lost theirs).
  (* no_rw_check *)
  logic [P*W-1:0] ring[NSLOT*NW];
  /// Write pointer, word within the row, slot being written.
  logic [RAW-1:0] wr_ptr;
  logic [WDW-1:0] wr_word;
  logic [SLW-1:0] wr_slot;
  /// Slot s holds a complete row not yet fully read.
  logic [NSLOT-1:0] slot_used;
  /// The slot at rd_slot has its statistics (a register, see rd_ok's block below).
  logic rd_ok;
  /// Slot being read, its read pointer and word; the last word of the slot is issued.
  logic [SLW-1:0] rd_slot;
  logic [RAW-1:0] rd_ptr;
  logic [WDW-1:0] rd_word;
  logic rd_done;
  /// Input beat accepted; it is the last of its row.
  logic in_fire, in_last;
  /// The accepted beat (kept until the next one: the squares read it at ph FOLD-1).
  logic [P*W-1:0] x_r;
  /// A beat taken k cycles ago (k = 1..SQ+1), it was the first / last of its row, its slot.
  logic [SQ+1:1] bt_v, bt_first, bt_last;
  logic [SLW-1:0] bt_slot[SQ+2];
  /// Registered squares of the input lanes (valid SQ cycles after the beat is taken: a dedicated
  /// multiplier per lane on x_r, or the lane's shared multiplier at ph FOLD-1).
  logic [P*S2W-1:0] sq;
  /// Lane sums of the beat: S1 from x_r (registered at x_r's last cycle, then delayed to meet
  /// S2: S1D more registers), S2 from the registered squares (registered SQ+1 cycles after the
  /// beat).
  localparam int S1D = SQ - FOLD;
  logic signed [S1W-1:0] beat_s1, bs1_r, bs1_d;
  logic signed [S2W-1:0] beat_s2, bs2_r;
  /// Running sums (signed).
  logic signed [S1W-1:0] acc_s1;
  logic signed [S2W-1:0] acc_s2;
  /// The cycle after a row's sums are final (SQ + 2 cycles after its last beat); the row's slot.
  logic row_end;
  logic [SLW-1:0] row_slot;

  /// The slot being written is free. Folded: a register, decided at ph FOLD-1 for ph 0 (beats
  /// are taken at ph 0 only, so wr_slot holds; the slot is free unless used and not released by
  /// this cycle's read), off the paths of the phase and the slot flags into the write side. Full
  /// rate: a compare of the count of used slots.
  logic in_ok;
  if (FOLD > 1) begin : g_in_ok
    always_ff @(posedge clk) begin
      if (rst) in_ok <= 1'b1;
      else in_ok <= ph_last && (!slot_used[wr_slot] || (rd_done && rd_slot == wr_slot));
    end
  end else begin : g_in_free
    // Slots are taken in ring order at wr_slot and released in ring order at rd_slot, so the slot
    // at wr_slot is used exactly when all NSLOT are: one compare of a count of used slots replaces
    // the NSLOT-way select of slot_used on the path into x_r's enable.
    /// Width of the count of used slots.
    localparam int UCW = $clog2(NSLOT + 1);
    /// Used slots (0..NSLOT).
    logic [UCW-1:0] used_n;
    /// Its next value.
    logic [UCW-1:0] used_next;
    assign used_next = used_n + UCW'(in_fire && in_last) - UCW'(rd_done);
    always_ff @(posedge clk) begin
      if (rst) used_n <= '0;
      else used_n <= used_next;
    end
    assign in_ok = used_n != UCW'(NSLOT);
`ifndef SYNTHESIS
    // The count stands for the slot flags: the slot at wr_slot is free exactly when it says so.
    assert property (@(posedge clk) disable iff (rst) in_ok == !slot_used[wr_slot])
    else $error("%m: used-slot count (%0d) disagrees with slot %0d's flag", used_n, wr_slot);
`endif
  end
  assign data_in_0_ready = in_ok;
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign in_last = wr_word == WDW'(NW - 1);

  /// Balanced adder trees over the lanes (heap order: leaves at P..2P-1, node k sums 2k, 2k+1).
  logic signed [S1W-1:0] t1[2*P];
  logic signed [S2W-1:0] t2[2*P];
  always_comb begin
    t1[0] = '0;
    t2[0] = '0;
    for (int i = 0; i < P; i++) begin
      t1[P+i] = S1W'($signed(x_r[i*W+:W]));
      t2[P+i] = $signed(sq[i*S2W+:S2W]);
    end
    for (int k = P - 1; k >= 1; k--) begin
      t1[k] = t1[2*k] + t1[2*k+1];
      t2[k] = t2[2*k] + t2[2*k+1];
    end
    beat_s1 = t1[1];
    beat_s2 = t2[1];
  end
  /// Node 0 of the heap trees is not part of them; this sink keeps lint quiet.
  logic unused_t0;
  assign unused_t0 = ^{t1[0], t2[0]};

  always_ff @(posedge clk) begin
    if (in_fire) ring[wr_ptr] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (in_fire) x_r <= data_in_0;
    // S1 of the beat in x_r, read at its last cycle there (1 cycle after the beat at full rate,
    // FOLD folded), and delayed to the cycle the beat's S2 is registered; S2 of the squares.
    bs1_r  <= beat_s1;
    bs2_r  <= beat_s2;
    if (bt_v[SQ+1]) begin
      acc_s1 <= (bt_first[SQ+1] ? '0 : acc_s1) + bs1_d;
      acc_s2 <= (bt_first[SQ+1] ? '0 : acc_s2) + bs2_r;
    end
  end

  mase_delay #(.DEPTH(S1D), .WIDTH(S1W)) u_ds1 (.clk(clk), .rst(rst), .en(1'b1), .d(bs1_r),
                                                .q(bs1_d));

  always_ff @(posedge clk) begin
    bt_slot[1] <= wr_slot;
    for (int k = 2; k <= SQ + 1; k++) bt_slot[k] <= bt_slot[k-1];
    row_slot <= bt_slot[SQ+1];
  end
  /// bt_slot[0] is not used (the chain starts at 1); this sink keeps lint quiet.
  logic unused_bt0;
  assign unused_bt0 = ^bt_slot[0];

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr   <= '0;
      wr_word  <= '0;
      wr_slot  <= '0;
      bt_v     <= '0;
      bt_first <= '0;
      bt_last  <= '0;
      row_end  <= 1'b0;
    end else begin
      bt_v     <= {bt_v[SQ:1], in_fire};
      bt_first <= {bt_first[SQ:1], wr_word == '0};
      bt_last  <= {bt_last[SQ:1], in_last};
      row_end  <= bt_v[SQ+1] && bt_last[SQ+1];
      if (in_fire) begin
        wr_ptr  <= wr_ptr == RAW'(NSLOT * NW - 1) ? '0 : wr_ptr + 1'b1;
        wr_word <= in_last ? '0 : wr_word + 1'b1;
        if (in_last) wr_slot <= wr_slot == SLW'(NSLOT - 1) ? '0 : wr_slot + 1'b1;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // 1/sqrt unit: from the end-of-row sums to the statistics of the row
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
  /// FOLD >= 4: u_mb holds t and lane 0 takes 3<<YF - t (the subtracter off the path from the
  /// product into u_mb).
  logic u_nf;
  logic signed [UMA+UMB-1:0] u_mp;
  /// The unit finishes a row: write its statistics (slot, -S1, y, k; S1 negated here, off the
  /// centring tree's path).
  logic st_we;
  logic [SLW-1:0] st_wslot;
  logic signed [S1W-1:0] st_ws1;
  logic [YW-1:0] st_wy;
  logic [KW-1:0] st_wk;

  // The front of the 1/sqrt unit, in register steps for timing (the same in both schedules):
  // per group of 8 bits of Q, whether a bit is set and the index of the top one (q_groups);
  // the top group with a bit set, one-hot (q_hot); from it, k = ceil(L/2) for the bit length L
  // of Q and h = QWE/2 - k (q_k, q_h: per group a function of the 3-bit index, selected by the
  // one-hot group, no adder); the mantissa u, the top MF bits of Q << 2h (top bit at QWE-1 or
  // QWE-2: q_mant).
  /// Per group of Q: a bit set (bit QG + g... low QG bits), the top set bit's index (3 bits each,
  /// above them).
  function automatic logic [4*QG-1:0] q_groups(input logic [QW-1:0] q);
    logic [QG*8-1:0] qp;
    qp = (QG * 8)'(q);
    q_groups = '0;
    for (int g = 0; g < QG; g++) begin
      for (int b = 0; b < 8; b++) begin
        if (qp[g*8+b]) begin
          q_groups[g] = 1'b1;
          q_groups[QG+3*g+:3] = 3'(b);
        end
      end
    end
  endfunction

  /// The top group with a bit set (one-hot) of the group flags nz.
  function automatic logic [QG-1:0] q_hot(input logic [QG-1:0] nz);
    for (int g = 0; g < QG; g++) q_hot[g] = nz[g] && (nz >> (g + 1)) == '0;
  endfunction

  /// k of the top set bit at 8g + idx of the one-hot group g (L = 8g + idx + 1, k = 4g +
  /// (idx + 2)/2), or h = QWE/2 - k (H): constants per group selected by idx and the group.
  function automatic logic [KW-1:0] q_kh(input logic [QG-1:0] hot, input logic [3*QG-1:0] idx,
                                         input bit H);
    logic [KW-1:0] v;
    q_kh = '0;
    for (int g = 0; g < QG; g++) begin
      case (idx[3*g+1+:2])
        2'd0: v = KW'(H ? QWE / 2 - 4 * g - 1 : 4 * g + 1);
        2'd1: v = KW'(H ? QWE / 2 - 4 * g - 2 : 4 * g + 2);
        2'd2: v = KW'(H ? QWE / 2 - 4 * g - 3 : 4 * g + 3);
        default: v = KW'(H ? QWE / 2 - 4 * g - 4 : 4 * g + 4);
      endcase
      q_kh = q_kh | ({KW{hot[g]}} & v);
    end
  endfunction

  /// The mantissa: the top MF bits of Q << 2h.
  function automatic logic [MF-1:0] q_mant(input logic [QW-1:0] q, input logic [KW-1:0] h);
    q_mant = MF'((QWE'(q) << {h, 1'b0}) >> (QWE - MF));
  endfunction

  /// Position of set bit n (counted from 0) of v (13 bits): the shift of term n of a shift-add
  /// product by v.
  function automatic int nth_bit(input int v, input int n);
    int c;
    c = 0;
    nth_bit = 0;
    for (int b = 0; b < 13; b++) begin
      if (((v >> b) & 1) != 0) begin
        if (c == n) nth_bit = b;
        c = c + 1;
      end
    end
  endfunction

  /// D*S of the row sums S2 being captured (full rate: acc_s2 at row_end; folded: c_s2), as a
  /// balanced tree of the ND shifted copies of S (heap order).
  logic signed [S2W-1:0] ds2_in;
  logic signed [VW-1:0] ds2;
  logic signed [VW-1:0] td[2*ND];
  always_comb begin
    td[0] = '0;
    for (int j = 0; j < ND; j++) td[ND+j] = VW'(ds2_in) << nth_bit(D, j);
    for (int k = ND - 1; k >= 1; k--) td[k] = td[2*k] + td[2*k+1];
    ds2 = td[1];
  end
  /// Node 0 of the heap tree is not part of it; this sink keeps lint quiet.
  logic unused_td0;
  assign unused_td0 = ^td[0];

  if (FOLD == 1) begin : g_rsqrt_pipe
  // Fully pipelined: RS stages advancing every cycle, a row may enter every cycle. Every product
  // takes three stages from its registered operands (partials, their pair sums, the product).
  /// Valid bit, slot, -S1 and k of each stage 1..RS; u from R8, y from R9.
  logic [RS:1] rv;
  logic [SLW-1:0] rslot[RS+1];
  logic signed [S1W-1:0] rs1[RS+1];
  logic [KW-1:0] rk[RS+1];
  logic [MF-1:0] ru[RS+1];
  logic [YW-1:0] ry[RS+1];
  /// R1: D*S2 (S1^2 partials); R2: D*S2 aligned plus eps (S1^2 pair sums); R3: the same, S1^2;
  /// R4: Q; R5: Q and its groups; R6: Q, the top group (one-hot) and the groups' top-bit
  /// indices; R7: Q with h (and k).
  logic signed [VW-1:0] r1_ds2;
  logic [QW-1:0] r2_dq, r3_dq, r4_q, r5_q, r6_q, r7_q;
  logic signed [2*S1W-1:0] s1sq, r3_ss;
  logic [4*QG-1:0] r5_grp;
  logic [QG-1:0] r6_hot;
  logic [3*QG-1:0] r6_idx;
  logic [KW-1:0] r7_h;
  /// t (R15, R25) of the two Newton steps.
  logic [SW-1:0] r15_t, r25_t;
  /// The seed y (R9's) and the first step's y (R19's), as they are registered.
  logic [YW-1:0] y9_next, y19_next;
  /// Multiplier operands, the values of R9, R12, R16, R19, R22 and R26 as they are registered
  /// (unsigned values with a zero sign bit): y, u, s, f. The DSPs' input registers hold them
  /// (OPR = 1), so s and f (s = (y*y) >> YF, f = 3<<YF - t) have no fabric register: the
  /// routing to the DSPs (4 ns on ECP5) ends at a register instead of running through the
  /// multiplier (3.5 ns) as well.
  logic signed [YW:0] m9_y, m12_u, m16_y, m19_y, m22_u, m26_y;
  logic signed [SW:0] m12_s, m16_f, m22_s, m26_f;
  /// Products (of the operands of R9, R12, R16, R19, R22, R26, three stages later).
  logic [2*YW+1:0] p12_yy, p22_yy;
  logic [YW+SW+1:0] p15_us, p19_yf, p25_us, p29_yf;
  /// Table seed of the mantissa of R8.
  logic [TF+1:0] lut_y0;
  assign ds2_in = acc_s2;
  assign y9_next = YW'(lut_y0) << (YF - TF);
  assign y19_next = YW'(p19_yf >> (YF + 1));
  assign m9_y = {1'b0, y9_next};
  assign m12_u = {1'b0, ru[11]};
  assign m12_s = {1'b0, SW'(p12_yy >> YF)};
  assign m16_y = {1'b0, ry[15]};
  assign m16_f = {1'b0, SW'(3 << YF) - r15_t};
  assign m19_y = {1'b0, y19_next};
  assign m22_u = {1'b0, ru[21]};
  assign m22_s = {1'b0, SW'(p22_yy >> YF)};
  assign m26_y = {1'b0, ry[25]};
  assign m26_f = {1'b0, SW'(3 << YF) - r25_t};
  `MASE_LAYER_NORM_MUL(g_s1sq, 1'b1, 0, S1W, acc_s1, S1W, acc_s1, 2 * S1W, s1sq, '0)
  `MASE_LAYER_NORM_MUL(g_yy1, 1'b1, 1, YW + 1, m9_y, YW + 1, m9_y, 2 * YW + 2, p12_yy, '0)
  `MASE_LAYER_NORM_MUL(g_us1, 1'b1, 1, YW + 1, m12_u, SW + 1, m12_s, YW + SW + 2, p15_us, '0)
  `MASE_LAYER_NORM_MUL(g_yf1, 1'b1, 1, YW + 1, m16_y, SW + 1, m16_f, YW + SW + 2, p19_yf, '0)
  `MASE_LAYER_NORM_MUL(g_yy2, 1'b1, 1, YW + 1, m19_y, YW + 1, m19_y, 2 * YW + 2, p22_yy, '0)
  `MASE_LAYER_NORM_MUL(g_us2, 1'b1, 1, YW + 1, m22_u, SW + 1, m22_s, YW + SW + 2, p25_us, '0)
  `MASE_LAYER_NORM_MUL(g_yf2, 1'b1, 1, YW + 1, m26_y, SW + 1, m26_f, YW + SW + 2, p29_yf, '0)
  mase_layer_norm_rsqrt_lut u_lut (
      .idx(ru[8][MF-1-:TB]),
      .y0 (lut_y0)
  );
  /// The products' bits beyond the results are dropped (floor, exact widths); this sink keeps
  /// lint quiet.
  logic unused_low;
  assign unused_low = ^{p12_yy, p22_yy, p15_us, p25_us, p19_yf, p29_yf};

  always_ff @(posedge clk) begin
    // R1: D*S2; R2: (D*S2 << SV) + eps; R3: S1^2; R4: Q = that - S1^2 << SV
    r1_ds2 <= ds2;
    rs1[1] <= -acc_s1;
    rslot[1] <= row_slot;
    r2_dq <= (QW'(r1_ds2) << SV) + EPSQ;
    r3_dq <= r2_dq;
    r3_ss <= s1sq;
    r4_q <= r3_dq - (QW'(r3_ss) << SV);
    // R5: groups of Q; R6: the top group; R7: k, h; R8: mantissa; R9: seed
    r5_q <= r4_q;
    r5_grp <= q_groups(r4_q);
    r6_q <= r5_q;
    r6_hot <= q_hot(r5_grp[QG-1:0]);
    r6_idx <= r5_grp[4*QG-1:QG];
    r7_q <= r6_q;
    rk[7] <= q_kh(r6_hot, r6_idx, 1'b0);
    r7_h <= q_kh(r6_hot, r6_idx, 1'b1);
    ru[8] <= q_mant(r7_q, r7_h);
    ry[9] <= y9_next;
    // Newton steps: s = (y*y) >> YF (R12), t = (u*s) >> MF (R15), f = 3<<YF - t (R16), y =
    // (y*f) >> (YF+1) (R19); s and f are registered in the DSPs only
    r15_t <= SW'(p15_us >> MF);
    ry[19] <= y19_next;
    r25_t <= SW'(p25_us >> MF);
    ry[29] <= YW'(p29_yf >> (YF + 1));
    for (int s = 2; s <= RS; s++) begin
      rs1[s]   <= rs1[s-1];
      rslot[s] <= rslot[s-1];
    end
    for (int s = 8; s <= RS; s++) rk[s] <= rk[s-1];
    for (int s = 9; s <= RS; s++) ru[s] <= ru[s-1];
    for (int s = 10; s <= RS; s++) begin
      if (s != 19 && s != 29) ry[s] <= ry[s-1];
    end
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
  assign u_nf = 1'b0;
  assign unused_u = ^{u_ma, u_mb, u_mp, u_nf};
  assign st_we    = rv[RS];
  assign st_wslot = rslot[RS];
  assign st_ws1   = rs1[RS];
  assign st_wy    = ry[RS];
  assign st_wk    = rk[RS];
  end else begin : g_rsqrt_seq
  // Sequential: one row at a time (rows end at least FOLD*D/P cycles apart, see ROWMIN). The
  // row_end cycle captures the sums; then steps 1..11 (S1^2, Q, k, u, the seed and the six
  // Newton multiplies; D*S2 a shift-add tree) run one per beat period, step cnt's result written
  // UL cycles after its ph 0 (sel). The multiplier's operands (u_ma, u_mb) are registers, loaded
  // with the next multiply's operands when a result is written (at row_end S1 for S1^2): at
  // FOLD = 3 they go straight into the unit's own multiplier, whose product is there at ph 2
  // (UL = 2); at FOLD >= 4 lane 0's multiplier takes them at ph 0, a phase the lane does not
  // use, its product there at ph 3 (UL = 3). The statistics are written the cycle after step 11.
  /// Step of the row in flight (0 = idle, 12 = write the statistics).
  logic [3:0] cnt;
  /// Step cnt's beat period starts (ph 0), did one, two and three cycles ago; its result is
  /// written (UL cycles after sel).
  logic sel, sel_d1, sel_d2, sel_d3, wr;
  /// The row's slot, S1 and S2, D*S2, D*S2 aligned plus eps, V, Q, k, mantissa u, y.
  logic [SLW-1:0] c_slot;
  logic signed [S1W-1:0] c_s1;
  logic signed [S2W-1:0] c_s2;
  logic signed [VW-1:0] c_ds2;
  logic [QW-1:0] c_dq;
  logic signed [VW-1:0] c_v;
  logic [QW-1:0] c_q;
  logic [KW-1:0] c_k;
  logic [MF-1:0] c_u;
  logic [YW-1:0] c_y;
  /// Results of the product of step cnt: s = (y*y) >> YF, y = (y*f) >> (YF+1); the table seed.
  logic [SW-1:0] r_s;
  logic [YW-1:0] r_y, r_seed;
  assign r_s = SW'(u_mp >> YF);
  /// What steps 7 and 10 write into u_mb, (u_mp >> MF): at FOLD >= 4 t = (u*s) >> MF (lane 0
  /// forms 3<<YF - t, u_nf); at FOLD = 3 the Newton factor f = 3<<YF - t itself, the product
  /// being (-u)*s + UKC there (below 3<<YF, so SW bits hold t and f).
  logic [SW-1:0] r_tf;
  assign r_tf = SW'(u_mp >> MF);
  assign r_y = YW'(u_mp >> (YF + 1));
  assign ds2_in = c_s2;
  assign sel = ph[0] && cnt != '0 && cnt != 4'd12;
  assign wr = UL == 2 ? sel_d2 : sel_d3;

  /// FOLD = 3: the operands are -u and s (steps 7, 10), and the multiplier adds UKC with the
  /// partial products: floor(x / 2^MF) = q gives 3<<YF - q = (3<<(YF+MF) + 2^MF - 1 - x) >> MF,
  /// so the product is f << MF plus a remainder, and no subtracter follows the product's sum.
  logic u_ks;
  localparam logic [UMA+UMB-1:0] UKC = ((UMA + UMB)'(3) << (YF + MF)) + ((UMA + UMB)'(1) << MF)
      - 1'b1;
  if (FOLD == 3) begin : g_own_mult
    `MASE_LAYER_NORM_MUL(g_mul, 1'b1, 0, UMA, u_ma, UMB, u_mb, UMA + UMB, u_mp, u_ks ? UKC : '0)
  end else begin : g_no_ks
    /// u_ks is FOLD = 3's; this sink keeps lint quiet.
    logic unused_ks;
    assign unused_ks = u_ks;
  end

  /// The groups of Q and then its top group (registered, following c_q, ready by step 3); h of
  /// the row (step 3), the table seed of its mantissa.
  logic [4*QG-1:0] c_grp;
  logic [QG-1:0] c_hot;
  logic [3*QG-1:0] c_idx;
  logic [KW-1:0] c_h;
  logic [TF+1:0] lut_y0;
  mase_layer_norm_rsqrt_lut u_lut (
      .idx(c_u[MF-1-:TB]),
      .y0 (lut_y0)
  );
  /// The table's output registered (following c_u, ready long before step 5): the table is
  /// then a read with an output register, not one that takes c_u's register as its address
  /// register (which would put the mantissa's shifter before the table).
  logic [TF+1:0] c_y0;
  always_ff @(posedge clk) c_y0 <= lut_y0;
  assign r_seed = YW'(c_y0) << (YF - TF);
  /// The y step cnt writes: the seed at step 5, else the Newton update.
  logic [YW-1:0] r_ny;
  assign r_ny = cnt == 4'd5 ? r_seed : r_y;
  /// The product's high bits are dropped (floor, exact widths); this sink keeps lint quiet.
  logic unused_low;
  assign unused_low = ^u_mp;

  /// The next cycle writes the result of step 5, 8 or 11 (y), 6 or 9 (s), 7 or 10 (t): decoded a
  /// cycle early (cnt holds within a step), so that u_mb's input mux puts t (at FOLD = 3 f =
  /// 3<<YF - t, the longest path: the product's sum) one LUT from the register.
  logic wn_y, wn_s, wn_t;
  always_ff @(posedge clk) begin
    wn_y <= (UL == 2 ? sel_d1 : sel_d2) && (cnt == 4'd5 || cnt == 4'd8 || cnt == 4'd11);
    wn_s <= (UL == 2 ? sel_d1 : sel_d2) && (cnt == 4'd6 || cnt == 4'd9);
    wn_t <= (UL == 2 ? sel_d1 : sel_d2) && (cnt == 4'd7 || cnt == 4'd10);
  end

  always_ff @(posedge clk) begin
    // FOLD >= 4: t is written as such (lane 0 forms 3<<YF - t); FOLD = 3: the product of -u
    // and s plus UKC gives 3<<YF - t.
    if (row_end || wr) u_nf <= FOLD >= 4 && wn_t;
    if (row_end || wr) u_ks <= FOLD == 3 && wn_s;
    // The operands of the next multiply (mutually exclusive conditions; t first, nearest u_mb).
    if (wn_t) begin
      u_ma <= UMA'(c_y);
      u_mb <= UMB'(r_tf);
    end else if (wn_s) begin
      u_ma <= FOLD == 3 ? -(UMA'(c_u)) : UMA'(c_u);
      u_mb <= UMB'(r_s);
    end else if (wn_y) begin
      u_ma <= UMA'(r_ny);
      u_mb <= UMB'(r_ny);
    end else if (row_end) begin
      u_ma <= UMA'(acc_s1);
      u_mb <= UMB'(acc_s1);
    end
    if (rst) begin
      cnt    <= '0;
      sel_d1 <= 1'b0;
      sel_d2 <= 1'b0;
      sel_d3 <= 1'b0;
    end else begin
      sel_d1 <= sel;
      sel_d2 <= sel_d1;
      sel_d3 <= sel_d2;
      if (row_end) cnt <= 4'd1;
      else if (cnt == 4'd12) cnt <= '0;
      else if (wr) cnt <= cnt + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (row_end) begin
      c_s1   <= acc_s1;
      c_s2   <= acc_s2;
      c_slot <= row_slot;
    end
    // D*S2 and its aligned sum with eps follow the captured S2 (ready long before step 2).
    c_ds2 <= ds2;
    c_dq  <= (QW'(c_ds2) << SV) + EPSQ;
    c_grp <= q_groups(c_q);
    c_hot <= q_hot(c_grp[QG-1:0]);
    c_idx <= c_grp[4*QG-1:QG];
    if (wr) begin
      case (cnt)
        4'd1: c_v <= VW'(u_mp);
        4'd2: c_q <= c_dq - (QW'(c_v) << SV);
        4'd3: begin
          c_k <= q_kh(c_hot, c_idx, 1'b0);
          c_h <= q_kh(c_hot, c_idx, 1'b1);
        end
        4'd4: c_u <= q_mant(c_q, c_h);
        4'd5, 4'd8, 4'd11: c_y <= r_ny;
        default: ;
      endcase
    end
  end

  assign st_we    = cnt == 4'd12;
  assign st_wslot = c_slot;
  assign st_ws1   = -c_s1;
  assign st_wy    = c_y;
  assign st_wk    = c_k;
  end

  // Per-slot statistics, written when the 1/sqrt unit finishes a row (st_s1 holds -S1).
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
    end else begin
      for (int s = 0; s < NSLOT; s++) begin
        if (in_fire && in_last && wr_slot == SLW'(s)) slot_used[s] <= 1'b1;
        else if (rd_done && rd_slot == SLW'(s)) slot_used[s] <= 1'b0;
      end
    end
  end

  // Statistics arrive in ring order (rows end in the order their slots are written) and slots
  // are read in ring order, so the slot at rd_slot has its statistics exactly when some slot
  // has them and is not yet read: a count, and rd_ok its nonzero flag kept in a register (from
  // the deposit and the read's end, not the count's sum). An NSLOT-way select of per-slot flags
  // there ran through issue and rd_done into the used-slot count in one cycle (NSLOT = 38 at
  // D = 1: 8.1 ns on ECP5).
  /// Width of the count of slots with statistics not yet fully read.
  localparam int RCW = $clog2(NSLOT + 1);
  /// Slots with statistics not yet fully read (0..NSLOT).
  logic [RCW-1:0] ready_n;
  always_ff @(posedge clk) begin
    if (rst) begin
      ready_n <= '0;
      rd_ok   <= 1'b0;
    end else begin
      ready_n <= ready_n + RCW'(st_we) - RCW'(rd_done);
      // Nonzero next: a deposit, or a read's end leaving more than one, or unchanged.
      rd_ok   <= st_we || (rd_done ? ready_n != RCW'(1) : rd_ok);
    end
  end
`ifndef SYNTHESIS
  /// Per-slot statistics flags, the reference for rd_ok.
  logic [NSLOT-1:0] st_ready;
  always_ff @(posedge clk) begin
    if (rst) st_ready <= '0;
    else begin
      for (int s = 0; s < NSLOT; s++) begin
        if (st_we && st_wslot == SLW'(s)) st_ready[s] <= 1'b1;
        else if (rd_done && rd_slot == SLW'(s)) st_ready[s] <= 1'b0;
      end
    end
  end
  assert property (@(posedge clk) disable iff (rst) rd_ok == st_ready[rd_slot])
  else $error("%m: ready count (%0d) disagrees with slot %0d's statistics flag", ready_n, rd_slot);
`endif

  // ---------------------------------------------------------------------------------------------
  // Normalising pipeline
  /// A word is issued this cycle; it is the last of its row.
  logic issue, rd_last;
  assign issue = rd_ok && step;
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

  /// N1: words read and the row's statistics; NR: the same registered once more (the ring's
  /// block RAM output register); N2: centred values and what follows them.
  logic [P*W-1:0] n1_x, nr_x;
  logic [P*GW-1:0] n1_g, nr_g, n2_g;
  logic [P*BW-1:0] n1_b, nr_b, n2_b;
  logic signed [S1W-1:0] n1_s1, nr_s1;
  logic [YW-1:0] n1_y, nr_y, n2_y;
  logic [KW-1:0] n1_k, nr_k, n2_k;
  logic [P*CW-1:0] n2_c;
  /// Stage valid flags of N1, NR, N2.
  logic n1_v, nr_v, n2_v;
  /// The last stage: its valid flag and the sums n*gamma + beta.
  logic fin_v;
  logic [P*AW-1:0] fin_a;

  always_ff @(posedge clk) begin
    if (step) begin
      n1_x  <= ring[rd_ptr];
      n1_g  <= g_rom[rd_word];
      n1_b  <= b_rom[rd_word];
      n1_s1 <= st_s1[rd_slot];
      n1_y  <= st_y[rd_slot];
      n1_k  <= st_k[rd_slot];
      nr_x  <= n1_x;
      nr_g  <= n1_g;
      nr_b  <= n1_b;
      nr_s1 <= n1_s1;
      nr_y  <= n1_y;
      nr_k  <= n1_k;
      n2_g  <= nr_g;
      n2_b  <= nr_b;
      n2_y  <= nr_y;
      n2_k  <= nr_k;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      n1_v <= 1'b0;
      nr_v <= 1'b0;
      n2_v <= 1'b0;
    end else if (step) begin
      n1_v <= rd_ok;
      nr_v <= n1_v;
      n2_v <= nr_v;
    end
  end

  // N2: c = D*x - S1, a balanced tree of the ND shifted copies of x and -S1 (as stored; heap order).
  localparam int NC = ND + 1;
  for (genvar i = 0; i < P; i++) begin : g_centre
    /// Tree nodes.
    logic signed [CW-1:0] tc[2*NC];
    always_comb begin
      tc[0] = '0;
      for (int j = 0; j < ND; j++) tc[NC+j] = CW'($signed(nr_x[i*W+:W])) << nth_bit(D, j);
      tc[NC+ND] = CW'(nr_s1);
      for (int k = NC - 1; k >= 1; k--) tc[k] = tc[2*k] + tc[2*k+1];
    end
    /// Node 0 is not part of the tree; this sink keeps lint quiet.
    logic unused_tc0;
    assign unused_tc0 = ^tc[0];
    always_ff @(posedge clk) begin
      if (step) n2_c[i*CW+:CW] <= tc[1];
    end
  end

  // What N2 holds beside c travels unchanged to the stage that reads it, in chains that step
  // with the pipeline: the shift k + BASE + G to the shift, gamma to n*gamma, beta to + beta,
  // the valid flag to the last stage. Full rate: the shift at N6 reads its amount of N5, n*gamma
  // (partials at N7) gamma of N6, + beta (N10) beta of N9. Folded: the shift reads its amount
  // of N3, n*gamma gamma of N4, + beta (N6) beta of N5.
  /// Chain lengths from N2: shift, gamma, beta, valid.
  localparam int DK = FOLD == 1 ? 3 : 1;
  localparam int DG = FOLD == 1 ? 4 : 2;
  localparam int DB = FOLD == 1 ? 7 : 3;
  localparam int DV = FOLD == 1 ? 8 : 4;
  /// The shift amount k + BASE + G (added before the chain, not beside the shifter), as it
  /// enters the chain and at the shift; gamma at n*gamma, beta at + beta.
  logic [SHW-1:0] n2_sh, sh_n;
  logic [P*GW-1:0] ng_g;
  logic [P*BW-1:0] ab_b;
  assign n2_sh = SHW'(n2_k) + SHW'(BASE + G);
  mase_delay #(.DEPTH(DK), .WIDTH(SHW)) u_dk (.clk(clk), .rst(rst), .en(step), .d(n2_sh),
                                               .q(sh_n));
  mase_delay #(.DEPTH(DG), .WIDTH(P * GW)) u_dg (.clk(clk), .rst(rst), .en(step), .d(n2_g),
                                                  .q(ng_g));
  mase_delay #(.DEPTH(DB), .WIDTH(P * BW)) u_db (.clk(clk), .rst(rst), .en(step), .d(n2_b),
                                                  .q(ab_b));
  mase_delay #(.DEPTH(DV), .WIDTH(1), .RESET(1)) u_dv (.clk(clk), .rst(rst), .en(step),
                                                        .d(n2_v), .q(fin_v));

  if (FOLD == 1) begin : g_norm_full
    // N3 / N4 / N5: c*y (partials, pair sums, product); N6: the shift; N7 / N8 / N9: n*gamma;
    // N10: + beta.
    logic [P*PRG-1:0] n5_p;
    logic [P*NNW-1:0] n6_n;
    logic [P*MW-1:0] n9_m;
    logic [P*AW-1:0] n10_a;
    /// y as a signed multiplier operand (zero sign bit).
    logic signed [YW:0] m_y;
    assign m_y = {1'b0, n2_y};

    for (genvar i = 0; i < P; i++) begin : g_lane
      /// Multiplier operands of the lane: c, n, gamma.
      logic signed [CW-1:0] m_c;
      logic signed [NNW-1:0] m_n;
      logic signed [GW-1:0] m_g;
      /// Products c*y (of N2's operands) and n*gamma (of N6's).
      logic [PRG-1:0] cy;
      logic [MW-1:0] ng;
      assign m_c = n2_c[i*CW+:CW];
      assign m_n = n6_n[i*NNW+:NNW];
      assign m_g = ng_g[i*GW+:GW];
      `MASE_LAYER_NORM_MUL(g_cy, step, 0, CW, m_c, YW + 1, m_y, PRG, cy, '0)
      `MASE_LAYER_NORM_MUL(g_ng, step, 0, NNW, m_n, GW, m_g, MW, ng, '0)
      /// Product shifted left by G, then arithmetically right by k + BASE + G.
      logic signed [PRW-1:0] p_ext, p_sh;
      assign p_ext = PRW'($signed(n5_p[i*PRG+:PRG])) << G;
      assign p_sh  = p_ext >>> sh_n;
      /// n keeps the low NNW bits of p_sh (|n| < sqrt(D) 2^NF); this sink keeps lint quiet.
      logic unused_p_high;
      assign unused_p_high = ^p_sh;
      always_ff @(posedge clk) begin
        if (step) begin
          n5_p[i*PRG+:PRG] <= cy;
          n6_n[i*NNW+:NNW] <= NNW'(p_sh);
          n9_m[i*MW+:MW] <= ng;
          n10_a[i*AW+:AW] <= (AW'($signed(n9_m[i*MW+:MW])) << (AF - NF - GF))
              + (AW'($signed(ab_b[i*BW+:BW])) << (AF - BF));
        end
      end
    end
    assign fin_a = n10_a;
  end else begin : g_norm_fold
    // N3: c*y (chosen at ph FOLD-3, kept at ph 0 when the step moved its word into N3); N4: the
    // shift; N5: n*gamma (chosen at ph FOLD-2, kept at ph 1 likewise); N6: + beta.
    logic [P*PRG-1:0] n3_p;
    logic [P*NNW-1:0] n4_n;
    logic [P*MW-1:0] n5_m;
    logic [P*AW-1:0] n6_a;
    /// The pipeline stepped at the end of the last beat period (the c*y product arriving at ph 0
    /// belongs to the word now in N3, the n*gamma product arriving at ph 1 to the word now in N5).
    logic stepped;

    always_ff @(posedge clk) begin
      if (rst) stepped <= 1'b0;
      else if (ph_last) stepped <= step;
    end

    for (genvar i = 0; i < P; i++) begin : g_lane
      // One multiplier: ph FOLD-3 c*y, ph FOLD-2 n*gamma, ph FOLD-1 the input square, ph 0 the
      // 1/sqrt unit (lane 0, FOLD >= 4). Operands are sign-extended (y, unsigned,
      // zero-extended) and registered, the partial products' pair sums registered (the DSP's
      // output routing meets one adder per path); products are exact.
      localparam int LA0 = CW > NNW ? CW : NNW;
      localparam int LA1 = LA0 > W ? LA0 : W;
      localparam int LB0 = YW + 1 > GW ? YW + 1 : GW;
      localparam int LB1 = LB0 > W ? LB0 : W;
      /// Lane 0 also serves the 1/sqrt unit at ph 0 when FOLD >= 4.
      localparam bit SHARE = i == 0 && FOLD >= 4;
      localparam int LA = SHARE && UMA > LA1 ? UMA : LA1;
      localparam int LB = SHARE && UMB > LB1 ? UMB : LB1;
      logic signed [LA-1:0] la, la_r;
      logic signed [LB-1:0] lb, lb_r;
      /// The product of the operands chosen three cycles ago, and registered (the square).
      logic [LA+LB-1:0] ls, lp_r;
      /// The product's high bits are beyond every exact result; this sink keeps lint quiet.
      logic unused_lp;
      assign unused_lp = ^{ls, lp_r};
      always_comb begin
        if (SHARE && ph[0]) begin
          la = LA'(u_ma);
          lb = u_nf ? LB'(SW'(3 << YF) - SW'(u_mb)) : LB'(u_mb);
        end else if (ph[FOLD-3]) begin
          la = LA'($signed(n2_c[i*CW+:CW]));
          lb = LB'(n2_y);
        end else if (ph[FOLD-2]) begin
          la = LA'($signed(n4_n[i*NNW+:NNW]));
          lb = LB'($signed(ng_g[i*GW+:GW]));
        end else begin
          la = LA'($signed(x_r[i*W+:W]));
          lb = LB'($signed(x_r[i*W+:W]));
        end
      end
      always_ff @(posedge clk) begin
        la_r <= la;
        lb_r <= lb;
        lp_r <= ls;
      end
      `MASE_LAYER_NORM_MUL(g_mul, 1'b1, 0, LA, la_r, LB, lb_r, LA + LB, ls, '0)
      assign sq[i*S2W+:S2W] = S2W'(lp_r);
      if (SHARE) begin : g_share
        assign u_mp = (UMA + UMB)'(ls);
      end
      /// Product shifted left by G, then arithmetically right by k + BASE + G.
      logic signed [PRW-1:0] p_ext, p_sh;
      assign p_ext = PRW'($signed(n3_p[i*PRG+:PRG])) << G;
      assign p_sh  = p_ext >>> sh_n;
      /// n keeps the low NNW bits of p_sh (|n| < sqrt(D) 2^NF); this sink keeps lint quiet.
      logic unused_p_high;
      assign unused_p_high = ^p_sh;
      always_ff @(posedge clk) begin
        if (ph[0] && stepped) n3_p[i*PRG+:PRG] <= PRG'(ls);
        if (ph[1] && stepped) n5_m[i*MW+:MW] <= MW'(ls);
        if (step) begin
          n4_n[i*NNW+:NNW] <= NNW'(p_sh);
          n6_a[i*AW+:AW] <= (AW'($signed(n5_m[i*MW+:MW])) << (AF - NF - GF))
              + (AW'($signed(ab_b[i*BW+:BW])) << (AF - BF));
        end
      end
    end
    assign fin_a = n6_a;
  end

  if (FOLD == 1) begin : g_sq_full
    // A dedicated squarer per lane on the registered beat; the squares registered.
    for (genvar i = 0; i < P; i++) begin : g_lane
      /// The lane's input, its square (two cycles after x_r), registered.
      logic signed [W-1:0] m_x;
      logic [S2W-1:0] xx, sq_r;
      assign m_x = x_r[i*W+:W];
      `MASE_LAYER_NORM_MUL(g_sq, 1'b1, 0, W, m_x, W, m_x, S2W, xx, '0)
      always_ff @(posedge clk) sq_r <= xx;
      assign sq[i*S2W+:S2W] = sq_r;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output: cast, skid buffer
  logic [P*OW-1:0] y;
  for (genvar i = 0; i < P; i++) begin : g_out
    `MASE_CAST_TO(DATA_OUT_0, AW, AF, 1, 1, fin_a[i*AW+:AW], y[i*OW+:OW]);
  end

  /// Beat offered to the output skid buffer. Full rate: the last stage's beat, the pipeline
  /// advancing whenever the buffer has room. Folded: a beat stays offered until taken (n6_done
  /// after that), and the pipeline steps at ph FOLD-1 once N6 is empty, handed over or being
  /// taken.
  logic out_v;
  if (FOLD > 1) begin : g_out_fold
    logic n6_done;
    assign out_v = fin_v && !n6_done;
    assign step  = ph_last && (!out_v || adv);
    always_ff @(posedge clk) begin
      if (rst) n6_done <= 1'b0;
      else if (step) n6_done <= 1'b0;
      else if (out_v && adv) n6_done <= 1'b1;
    end
  end else begin : g_out_full
    assign out_v = fin_v;
    assign step  = adv && ph_last;  // ph_last is constant 1 here
  end

  `MASE_OUTPUT_SKID(OW, P, y, out_v, adv);

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule

`undef MASE_LAYER_NORM_RSQRT_FRONT
`undef MASE_LAYER_NORM_MUL
