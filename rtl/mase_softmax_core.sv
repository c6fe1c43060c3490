// mase_softmax_core: softmax over the innermost dimension (rows of L = DATA_IN_0_TENSOR_SIZE_DIM_0
// elements, P = DATA_IN_0_PARALLELISM_DIM_0 per beat) by an exact integer algorithm,
// bit-identical to mase_hwlib's softmax model, optionally under a key-padding mask (MASKED = 1).
// The datapath of two library components: mase_softmax (MASKED = 0, no mask port) and
// mase_masked_softmax (MASKED = 1); each is this module with its own header and stream
// assertions, so the plain component's ports and parameters stay those it always had.
//
// Algorithm (W = DATA_IN_0_PRECISION_0, F = DATA_IN_0_PRECISION_1, EF = EXP_FRAC,
// H = EXP_TABLE_BITS, RB = RECIP_BITS, KF = 24, CL = clog2(L), Z = EF + CL + RB):
//   1. m = max of the row; d_i = m - x_i (W bits unsigned).
//   2. t_i = d_i * K, K = round(log2(e) * 2^24) = 24204406; k_i = t_i >> (F + KF);
//      f_i = bits [F+KF-1 -: 2H] of t_i; fh = f_i >> H, fl = f_i mod 2^H.
//   3. e_i = (T_hi[fh] * T_lo[fl]) >> (EF + k_i), or 0 when k_i > EF, with
//      T_hi[j] = round(2^(-j/2^H) * 2^EF), T_lo[j] = round(2^(-j/2^2H) * 2^EF) (EF+1 bits,
//      ROMs loaded from EXP_HI_MEM_FILE / EXP_LO_MEM_FILE; the row maximum gives exactly 2^EF).
//   4. S = sum of e_i (exact).
//   5. R = floor(2^Z / S) by non-restoring division, one quotient bit per pipeline stage
//      (CL + RB + 1 stages, free-running).
//   6. y_i = cast(e_i * R) from Z fractional bits into the output format (mase_cast_core with
//      DATA_OUT_0_SIGNED / _ROUNDING / _OVERFLOW).
// Mask (MASKED = 1): keep bits k_i arrive on data_in_1, P per beat (lane i of beat b is row
// position b*P + i; 1 = keep, 0 = masked), L bits once per MASK_ROWS rows (one tensor or
// sentence), and apply to each of those rows. Masked elements take part in neither the maximum
// (step 1 takes max over kept x_i) nor the sum: e_i = 0 for them (step 3), so S sums the kept
// elements only and y_i = cast(0 * R) = 0 exactly. Kept elements get exactly the values of the
// unmasked algorithm run over the kept elements alone. A row with every element masked has S = 0
// and outputs all zeros (the divider's quotient is then all ones and multiplies only zeros).
// Architecture: (A) input beats enter FIFO X (2 rows + 4 beats) while the running maximum is
// taken by a pipelined max tree (a leaf register, TL = clog2(P) registered levels of one compare
// each, then the compare with the running maximum, registered); the row maximum enters FIFO M
// TL + 2 cycles after the row's last beat. MASKED = 1: the first row of each
// tensor joins data_in_0 with data_in_1 beat by beat (each keep beat is taken with the data beat
// of the same positions, and stored); the other MASK_ROWS - 1 rows read the stored bits, so the
// mask for tensor k+1 is taken with tensor k+1's first row, after tensor k's last row entered,
// at no cost in throughput. The mask register is an L-bit ring that rotates by P bits per beat,
// so the current beat's bits are always its low P bits (no multiplexer). Masked lanes enter the
// max tree as the most negative code, and each lane's keep bit travels with it through X (one
// extra bit per lane) to stage B, where a masked lane's shift is forced past EF (e = 0).
// (B) when the head row's maximum is known, its beats leave X through 10 registered stages
// (difference, d*K partial products, d*K, table reads, table entries again, table product
// operands in the DSPs, table product partial products, registered again in fabric, table
// product, shifted exp value;
// products wider than one DSP are mase_split_mul), the exp values enter FIFO E (1 row + divider
// stages + TL + 9 beats); a pipelined adder tree (TL registered levels) and the accumulator sum them, and the registered
// row sum enters the divider, whose quotients enter FIFO Rq (deep enough for the reciprocal of
// every row whose last beat is in E, so the divider never stalls and needs no credit). (C) when
// the head row's reciprocal is known, its exp values leave E and are multiplied by R (partial
// products, registered again in fabric, then the product registered), cast, and leave through a mase_skid_buffer. Row n+1's maximum and exps are computed while row n is
// normalized: one beat per cycle in steady state.
//   Latency: 2*L/P + CL + RB + 2*TL + 21 cycles (first input beat to first output beat, no
//   stalls).
//   II: L/P cycles per row (one beat per cycle).
//   Paths cut: data, valid and ready at both ports (input ready from FIFO registers, output from
//   the skid buffer); every compare of the max tree, every level of the adder tree, the exp
//   tables' read ports and each multiplier's DSPs from its adders; X's and E's LUT RAM reads
//   from their consumers (OUT_REG); E's occupancy compare from stage B's enable (READY_REG);
//   the running maximum's compare from M's LUT RAM write (M takes the registered maximum).
//   Stage B's enable waits for no credit counter (Rq is sized to need none). Every FIFO's
//   memory is marked free of read-write collisions (NO_RW_CHECK), so no bypass logic follows a
//   block RAM read and E's and X's output registers become the block RAMs' own.
//   Folded (FOLD = 2): stage B steps once every 2 cycles (a free-running phase; a finished
//   beat stays offered to E until taken) and each lane's table product (phase 0) and d*K
//   (phase 1) share one mase_split_mul whose partial products are registered every cycle and
//   again in fabric (PP_REG = 1), so each product is summed two cycles after its operands, in
//   their phase: the table product is taken at the phase 0 after a step, d*K at the phase 1
//   two cycles after a step (7 stages: d*K's partial products occupy stage 2). The operand
//   multiplexer picks the next cycle's operands by the next phase into the DSPs' input
//   registers (OP_REG = 1), so neither the phase flag's fan-out nor the block RAM reads run
//   into the multipliers. The table entries pass through the tables' output registers half a
//   step after their read (block RAM output registers on ECP5) into the stage ST+2 registers.
//   2P multipliers' worth of DSPs, L/P*2 cycles per row (stages A and C
//   keep their rates; E and the input back-pressure them). Latency 3*L/P + CL + RB + 2*TL + 24:
//   the first step waits a phase, each beat takes 2 cycles, the last one 7 more through the
//   later steps.
//   MASKED = 1: the same latency (the keep beats move with the first row's data beats) and II;
//   ready of data_in_0 depends on data_in_1_valid during a tensor's first row and vice versa (a
//   join, as in mase_add). Extra resources: the L-bit mask register, P bits per X entry, keep
//   flags in stage B and a row counter of clog2(MASK_ROWS) bits.
//   Resources: 3P products (d*K, table product, e*R; each one DSP per pair of 17-bit operand
//   chunks), 2P table ROMs of 2^H x (EF+1) bits (each lane has its own pair, one read port each),
//   four FIFOs (X and E as mase_wide_fifo: lock-step mase_fifo groups of lanes with words of at
//   most 1024 bits), a max tree and an adder tree of depth TL, and a CL+RB+1 stage divider of
//   (EF+CL+1)-bit subtractors.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_softmax_core #(
    /// The softmax parameters (rtl/mase_assert.svh): input format and shape (P lanes of a row of
    /// L per beat), output format, DATA_OUT_0_SIGNED, shape and modes, EXP_FRAC, EXP_TABLE_BITS,
    /// RECIP_BITS, FOLD.
    `MASE_SOFTMAX_PARAMS,
    /// 1: the key-padding mask of data_in_1 applies; 0: no mask (data_in_1 is ignored and never
    /// taken).
    parameter int MASKED = 0,
    /// Rows per mask (MASKED = 1): one keep vector is taken per MASK_ROWS rows; divides
    /// DATA_IN_0_TENSOR_SIZE_DIM_1.
    parameter int MASK_ROWS = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// The exp tables' .mem files, EXP_HI_MEM_FILE and EXP_LO_MEM_FILE ($readmemh; "" = all-zero
    /// table).
    `MASE_SOFTMAX_TABLE_PARAMS
) (
    /// Clock and reset, data_in_0 (the data), data_in_1 (the keep bits) and data_out_0 (the
    /// softmax values) (rtl/mase_assert.svh).
    `MASE_MASKED_SOFTMAX_PORTS
);
  /// Lanes per beat.
  localparam int P = DATA_IN_0_PARALLELISM_DIM_0;
  /// Input lane width.
  localparam int W = DATA_IN_0_PRECISION_0;
  /// Output lane width.
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Row length.
  localparam int L = DATA_IN_0_TENSOR_SIZE_DIM_0;
  /// Beats per row.
  localparam int NB = L / P;
  /// Beat counter width.
  localparam int BW = NB > 1 ? $clog2(NB) : 1;
  /// Exp fraction bits.
  localparam int EF = EXP_FRAC;
  /// Table index bits.
  localparam int H = EXP_TABLE_BITS;
  /// Exp value / table entry width.
  localparam int EW = EF + 1;
  /// Fractional bits of K.
  localparam int KF = 24;
  /// round(log2(e) * 2^KF) (mase_hwlib softmax::log2e_const).
  localparam logic [24:0] K = 25'd24204406;
  /// Fractional bits of t = d * K.
  localparam int TF = DATA_IN_0_PRECISION_1 + KF;
  /// Width of t, at least TF + 1 so that the integer part has a bit.
  localparam int TW = (W + 25 > TF + 1) ? W + 25 : TF + 1;
  /// ceil(log2(L)).
  localparam int CL = L > 1 ? $clog2(L) : 0;
  /// Reciprocal fraction bits Z.
  localparam int Z = EF + CL + RECIP_BITS;
  /// Quotient bits (divider stages).
  localparam int QB = CL + RECIP_BITS + 1;
  /// Row sum width (S <= L * 2^EF).
  localparam int SW = EF + CL + 1;
  /// Width of the clamped shift k (0..EF+1).
  localparam int KB = $clog2(EF + 2);
  /// FIFO depths: row buffer X, maxima M, exp values E, reciprocals Rq.
  localparam int DX = 2 * NB + 4;
  /// FIFO depth of the row maxima.
  localparam int DM = 8;
  /// K >> 1 (K is even): the multiplier's constant operand, 24 bits.
  localparam logic [23:0] KO = 24'(K >> 1);
  /// Stage of the exp pipeline that holds t = d * K: after the registered partial products of
  /// stage 2 (FOLD = 2: the shared multiplier's partial products, registered twice, are in
  /// flight during stage 2 and t is loaded at the phase 1 two cycles after the step into it).
  localparam int ST = 3;
  /// Stages of the exp pipeline: d, d*K partial products, t, table read, table register,
  /// (FOLD = 1: table product operands, table product partial products and again in fabric),
  /// table product, exp value.
  localparam int NS = FOLD == 1 ? 10 : 7;
  /// Stages that carry the shift k: ST+1 .. NS-1.
  localparam int NK = NS - ST - 1;
  /// Levels of the max and adder trees: ceil(log2 P).
  localparam int TL = P > 1 ? $clog2(P) : 0;
  /// Cycles from a row's last exp beat pushed into E to its sum entering the divider: TL adder
  /// tree levels and the accumulator stage.
  localparam int DS = TL + 1;
  /// FIFO depth of the exp values.
  localparam int DE = NB + QB + DS + 8;
  /// FIFO depth of the reciprocals: a row's reciprocal is in the sum pipeline, the divider or Rq
  /// only while its last beat is in E (it leaves Rq with that beat), and k such rows need at
  /// least (k - 1) * NB + 1 of E's DE + 2 places (memory, read and output registers), so
  /// k <= (DE + 1) / NB + 1 = DR: a push into Rq finds at most DR - 1 words in its memory.
  localparam int DR = (DE + 1) / NB + 1;
  /// Lane width of X: the input code, and with MASKED = 1 its keep bit above it.
  localparam int XW = W + MASKED;
  /// The most negative input code (a masked lane's value in the max tree).
  localparam logic [W-1:0] XMIN = W'(1) << (W - 1);

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_RANGE(DATA_IN_0_PRECISION_0, 1, 16);
    `MASE_CHECK_RANGE(DATA_IN_0_PRECISION_1, 0, 24);
    `MASE_CHECK_RANGE(DATA_IN_0_TENSOR_SIZE_DIM_0, 1, 4096);
    `MASE_CHECK_RANGE(DATA_IN_0_TENSOR_SIZE_DIM_1, 1, 1048576);
    `MASE_CHECK_RANGE(DATA_IN_0_PARALLELISM_DIM_0, 1, 1024);
    `MASE_CHECK_RANGE(DATA_IN_0_PARALLELISM_DIM_1, 1, 1);
    `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 32);
    `MASE_CHECK_FLAG(DATA_OUT_0_SIGNED);
    `MASE_CHECK_SAME_SHAPE(DATA_OUT_0, DATA_IN_0);
    `MASE_CHECK_MODES(DATA_OUT_0);
    `MASE_CHECK_RANGE(EXP_FRAC, 4, 28);
    `MASE_CHECK_RANGE(EXP_TABLE_BITS, 1, 12);
    `MASE_CHECK_RANGE(RECIP_BITS, 4, 28);
    `MASE_CHECK_RANGE(FOLD, 1, 2);
    `MASE_CHECK_FLAG(MASKED);
    if (MASKED == 1) begin : g_mask_checks
      `MASE_CHECK_RANGE(MASK_ROWS, 1, 1048576);
      `MASE_CHECK_DIVIDES(MASK_ROWS, DATA_IN_0_TENSOR_SIZE_DIM_1);
    end
  endgenerate
`endif

  // ---------------------------------------------------------------------------------------------
  // Stage A: row FIFO X and the running maximum
  /// X: input side ready.
  logic x_in_ready;
  /// X: head beat.
  logic [P*XW-1:0] x_out;
  /// X: head beat valid.
  logic x_out_valid;
  /// X: pop the head beat.
  logic x_out_ready;
  /// M: input side ready.
  logic m_in_ready;
  /// M: head row maximum.
  logic [W-1:0] m_out;
  /// M: head valid.
  logic m_out_valid;
  /// M: pop the head maximum.
  logic m_out_ready;
  /// Index of the next input beat in its row.
  logic [BW-1:0] a_cnt;
  /// Maximum of the row's beats accepted so far.
  logic signed [W-1:0] a_max;
  /// Maximum of the input beat.
  logic signed [W-1:0] beat_max;
  /// The beat at the tree's last level raises the running maximum (or starts a row): a_max
  /// loads it. The compare drives only a_max's enable and a_max's data is the beat maximum
  /// itself, with no select after the compare (a select there was mapped into four levels of
  /// wide multiplexers after the compare's carry chain: 8.2 ns on ECP5 at P = 1).
  logic a_max_load;
  /// An input beat is accepted.
  logic a_take;
  /// The input beat is the last of its row.
  logic a_last;
  /// X has room for the input beat.
  logic a_room;
  /// Keep bits of the input beat's lanes (MASKED = 0: all ones).
  logic [P-1:0] keep_now;
  /// X input: the beat's lanes (with MASKED = 1 each lane's keep bit above its code).
  logic [P*XW-1:0] x_in;

  if (MASKED == 1) begin : g_mask
    /// Row counter width.
    localparam int RW = MASK_ROWS > 1 ? $clog2(MASK_ROWS) : 1;
    /// Index of the input row within its tensor (0..MASK_ROWS-1).
    logic [RW-1:0] a_row;
    /// The input row is its tensor's first: its beats are joined with the keep beats.
    logic first_row;
    /// The tensor's keep bits as a ring: bits [P-1:0] belong to the next input beat (after the
    /// first row; during it the ring fills from data_in_1).
    logic [L-1:0] keep_q;
    assign first_row = a_row == '0;
    assign keep_now = first_row ? data_in_1 : keep_q[P-1:0];
    assign data_in_0_ready = a_room && (!first_row || data_in_1_valid);
    assign data_in_1_ready = a_room && first_row && data_in_0_valid;
    always_ff @(posedge clk) begin
      if (rst) begin
        a_row <= '0;
      end else if (a_take && a_last) begin
        a_row <= (a_row == RW'(MASK_ROWS - 1)) ? '0 : a_row + 1'b1;
      end
    end
    if (NB > 1) begin : g_ring
      always_ff @(posedge clk) begin
        if (a_take) keep_q <= {keep_now, keep_q[L-1:P]};
      end
    end else begin : g_one
      always_ff @(posedge clk) begin
        if (a_take) keep_q <= keep_now;
      end
    end
    for (genvar i = 0; i < P; i++) begin : g_x
      assign x_in[i*XW+:XW] = {keep_now[i], data_in_0[i*W+:W]};
    end
  end else begin : g_plain
    // Waiver: without a mask the keep stream is not read.
    /* verilator lint_off UNUSEDSIGNAL */
    /// Sink of the unused keep port.
    logic unused_keep;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_keep = ^{data_in_1, data_in_1_valid};
    assign keep_now = '1;
    assign data_in_0_ready = a_room;
    assign data_in_1_ready = 1'b0;
    assign x_in = data_in_0;
  end

  // Stage A's max pipeline (free-running: every accepted beat moves one level per cycle). A0
  // registers the beat's lanes as leaves (a masked lane as the most negative code, so the
  // maximum is that of the kept lanes; any value when none is kept: every e is then 0); a
  // mase_reduce_tree (TL registered levels of one compare each) takes their maximum; the beat
  // maximum then meets the running maximum in one compare, whose result is written to a_max;
  // after a row's last beat a_max, the row maximum, is written to M. So no register-to-register
  // path holds more than one W-bit compare, and none runs from a compare into M's LUT RAM.
  /// A0: the leaves, and whether they are a beat, its row's first, its row's last.
  logic [P*W-1:0] a0_x;
  logic a0_v, a0_first, a0_last;
  always_ff @(posedge clk) begin
    if (rst) a0_v <= 1'b0;
    else a0_v <= a_take;
  end
  always_ff @(posedge clk) begin
    a0_first <= a_cnt == '0;
    a0_last  <= a_last;
  end
  for (genvar j = 0; j < P; j++) begin : g_leaf
    always_ff @(posedge clk) a0_x[j*W+:W] <= keep_now[j] ? data_in_0[j*W+:W] : XMIN;
  end
  /// The beat maximum (level TL) is valid.
  logic am_v;
  /// The beat at level TL is its row's first.
  logic am_first;
  /// The beat at level TL is its row's last: its row maximum is pushed into M.
  logic am_last;
  mase_reduce_tree #(.N(P), .WIDTH(W), .OP(0), .TAG(2)) u_max (
      .clk(clk), .rst(rst), .in_data(a0_x), .in_valid(a0_v), .in_tag({a0_first, a0_last}),
      .out_data(beat_max), .out_valid(am_v), .out_tag({am_first, am_last})
  );
  assign a_max_load = am_v && (am_first || beat_max > a_max);
  assign a_last = a_cnt == BW'(NB - 1);
  // M never fills (see p_m_room), so only X's room gates the input.
  assign a_room = x_in_ready;
  assign a_take = data_in_0_valid && data_in_0_ready;

  always_ff @(posedge clk) begin
    if (rst) begin
      a_cnt <= '0;
    end else if (a_take) begin
      a_cnt <= a_last ? '0 : a_cnt + 1'b1;
    end
  end
  always_ff @(posedge clk) begin
    if (a_max_load) a_max <= beat_max;
  end
  /// a_max holds a row's maximum: it is pushed into M.
  logic m_push;
  always_ff @(posedge clk) begin
    if (rst) m_push <= 1'b0;
    else m_push <= am_v && am_last;
  end

  // X (P*XW bits per word, possibly more than 1024) is a mase_wide_fifo. OUT_REG: Yosys builds
  // its read register as an address register before the LUT RAM's asynchronous read, so without
  // a register after the read the RAM's access would run into stage B's subtract. The extra
  // cycle costs no latency: a row's beats wait in X for its maximum anyway.
  mase_wide_fifo #(
      .DATA_WIDTH(XW),
      .LANES(P),
      .DEPTH(DX),
      .OUT_REG(1),
      .NO_RW_CHECK(1)
  ) u_x (
      .clk(clk),
      .rst(rst),
      .data_in_0(x_in),
      .data_in_0_valid(a_take),
      .data_in_0_ready(x_in_ready),
      .data_out_0(x_out),
      .data_out_0_valid(x_out_valid),
      .data_out_0_ready(x_out_ready)
  );

  mase_fifo #(
      .DATA_WIDTH(W),
      .LANES(1),
      .DEPTH(DM),
      .NO_RW_CHECK(1)
  ) u_m (
      .clk(clk),
      .rst(rst),
      .data_in_0(a_max),
      .data_in_0_valid(m_push),
      .data_in_0_ready(m_in_ready),
      .data_out_0(m_out),
      .data_out_0_valid(m_out_valid),
      .data_out_0_ready(m_out_ready)
  );

  // ---------------------------------------------------------------------------------------------
  // Stage B: exp pipeline, row sum, divider
  /// E: input side ready.
  logic e_in_ready;
  /// E: push valid.
  logic e_in_valid;
  /// E: head beat of exp values.
  logic [P*EW-1:0] e_out;
  /// E: head valid.
  logic e_out_valid;
  /// E: pop the head beat.
  logic e_out_ready;
  /// Exp values of the beat in the last stage (registered).
  logic [P*EW-1:0] b_e;
  /// Stage valid flags (bit n: stage n holds a beat).
  logic [NS:1] vb;
  /// Stage "last beat of the row" flags.
  logic [NS:1] lb;
  /// Pipeline advance.
  logic b_en;
  /// The last stage may hand its beat over (E has room).
  logic b_push_ok;
  /// A beat of X enters the pipeline.
  logic b_go;
  /// Index of the next beat of X in its row.
  logic [BW-1:0] b_cnt;
  /// Running row sum of the exp values summed so far.
  logic [SW-1:0] acc;
  /// Sum of the exp values of the beat at the adder tree's last level.
  logic [SW-1:0] beat_sum;
  /// The beat in the last stage is pushed into E.
  logic b_push;
  /// Rq: pop the head reciprocal.
  logic r_out_ready;
  /// Rq: head valid.
  logic r_out_valid;

  /// Phase of the folded exp pipeline (FOLD = 2: the shared multiplier takes a*c at phase 0
  /// and d*K at phase 1; the pipeline steps at phase 1).
  logic b_ph;
  /// The last stage's valid and last flags.
  logic vbl, lbl;
  assign vbl = vb[NS];
  assign lbl = lb[NS];

  assign b_push_ok = e_in_ready;
  assign b_go = x_out_valid && m_out_valid && b_en;
  assign x_out_ready = b_go;
  assign m_out_ready = b_go && b_cnt == BW'(NB - 1);
  assign b_push = e_in_valid && e_in_ready;
  if (FOLD == 1) begin : g_b_full
    assign b_ph = 1'b1;
    assign b_en = b_ph && (!vbl || b_push_ok);  // b_ph is constant 1 here
    assign e_in_valid = vbl;
  end else begin : g_b_fold
    /// The beat in the last stage was pushed into E; it stays until the next step.
    logic bl_done;
    // The phase runs while stage B has work and rests at 0 when it is idle, so the first step
    // comes one cycle after a row's beats become available (a fixed latency).
    /// The phase of the next cycle (the shared multipliers load that phase's operands now).
    logic b_ph_next;
    assign b_ph_next = (x_out_valid && m_out_valid) || (|vb) ? !b_ph : 1'b0;
    always_ff @(posedge clk) begin
      if (rst) b_ph <= 1'b0;
      else b_ph <= b_ph_next;
    end
    always_ff @(posedge clk) begin
      if (rst) bl_done <= 1'b0;
      else if (b_en) bl_done <= 1'b0;
      else if (b_push) bl_done <= 1'b1;
    end
    // Offered until taken; the pipeline steps at phase 1 once the last stage is empty, pushed,
    // or being pushed.
    assign e_in_valid = vbl && !bl_done;
    assign b_en = b_ph && (!vbl || bl_done || b_push_ok);
    /// The pipeline stepped at the last edge, so the shared multipliers' products of this
    /// (phase 0) cycle are a*c of the beats that entered stage NS-1.
    logic b_stepped;
    /// The pipeline stepped two edges ago, so the shared multipliers' products of this (phase 1)
    /// cycle are d*K of the beats that entered stage 2.
    logic b_stepped2;
    always_ff @(posedge clk) begin
      if (rst) begin
        b_stepped  <= 1'b0;
        b_stepped2 <= 1'b0;
      end else begin
        b_stepped  <= b_en;
        b_stepped2 <= b_stepped;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      vb <= '0;
      b_cnt <= '0;
    end else if (b_en) begin
      vb <= {vb[NS-1:1], b_go};
      if (b_go) b_cnt <= (b_cnt == BW'(NB - 1)) ? '0 : b_cnt + 1'b1;
    end
  end
  always_ff @(posedge clk) begin
    if (b_en) lb <= {lb[NS-1:1], b_cnt == BW'(NB - 1)};
  end

  for (genvar i = 0; i < P; i++) begin : g_exp
    /// This lane's T_hi table.
    logic [EW-1:0] rom_hi[2**H];
    /// This lane's T_lo table.
    logic [EW-1:0] rom_lo[2**H];
    `MASE_ROM_INIT(rom_hi, 2 ** H, EXP_HI_MEM_FILE)
    `MASE_ROM_INIT(rom_lo, 2 ** H, EXP_LO_MEM_FILE)

    /// d = m - x (W bits, non-negative) of the beat entering stage 1.
    logic [W-1:0] d0;
    assign d0 = W'(m_out - x_out[i*XW+:W]);
    // Waiver: the algorithm truncates t below its top 2H fractional bits (step 2), so those
    // low bits of t are never read.
    /* verilator lint_off UNUSEDSIGNAL */
    /// Stage ST: t = d * K.
    logic [TW-1:0] tq;
    /* verilator lint_on UNUSEDSIGNAL */
    /// Integer part of t.
    logic [TW-TF-1:0] k_full;
    /// Top 2H fractional bits of t.
    logic [2*H-1:0] f;
    /// Stage ST+1: table entries (the tables' read registers).
    logic [EW-1:0] ar, cr;
    /// Stage ST+2: table entries registered again, so that no path runs from a table's read
    /// port into the multiplier.
    logic [EW-1:0] aq, cq;
    /// The shift k clamped to EF + 1 (EF + 1 means e = 0, also for a masked element) in stages
    /// ST+1 .. NS-1 (entry n at [n*KB +: KB]: stage ST+1+n).
    logic [NK*KB-1:0] kq;
    /// The shift of the table product's stage (NS-1).
    logic [KB-1:0] kl;
    assign kl = kq[(NK-1)*KB+:KB];
    // Waiver: e drops the table product's EF low bits (step 3), so they are never read.
    /* verilator lint_off UNUSEDSIGNAL */
    /// Stage NS-1: table product.
    logic [2*EW-1:0] pq;
    /* verilator lint_on UNUSEDSIGNAL */
    /// Table product >> EF.
    logic [2*EW-EF-1:0] ps;
    /// Stage ST: the element is kept (MASKED = 0: always).
    logic keep_t;
    if (MASKED == 1) begin : g_keep
      /// Stages 1 .. ST: the element is kept.
      logic [ST:1] keep;
      always_ff @(posedge clk) begin
        if (b_en) keep <= {keep[ST-1:1], x_out[i*XW+W]};
      end
      assign keep_t = keep[ST];
    end else begin : g_all
      assign keep_t = 1'b1;
    end

    assign k_full = tq[TW-1:TF];
    assign f = tq[TF-1-:2*H];

    if (FOLD == 1) begin : g_full
      /// d * (K >> 1): d registered in stage 1 in the DSPs' own input registers (so the routing
      /// to the DSPs ends at a register instead of running through the multipliers as well:
      /// from a fabric register, 7.9 ns on ECP5), its partial products in stage 2.
      logic [W+24-1:0] dk;
      /// The table product: its operands registered in stage ST+3 (the DSPs' input registers,
      /// so that the routing from the block RAMs' output registers aq, cq to the DSPs is a path
      /// of its own), its partial products in stage ST+4 and again in fabric in ST+5 (the
      /// routing out of the DSPs then has a cycle of its own, not shared with the adders).
      logic [2*EW-1:0] ac;
      mase_split_mul #(
          .A_WIDTH(W),
          .B_WIDTH(24),
          .OP_REG (1)
      ) u_dk (
          .clk(clk),
          .en (b_en),
          .a  (d0),
          .b  (KO),
          .y  (dk)
      );
      mase_split_mul #(
          .A_WIDTH(EW),
          .B_WIDTH(EW),
          .OP_REG (1),
          .PP_REG (1)
      ) u_ac (
          .clk(clk),
          .en (b_en),
          .a  (aq),
          .b  (cq),
          .y  (ac)
      );
      always_ff @(posedge clk) begin
        if (b_en) begin
          tq <= TW'(dk) << 1;
          pq <= ac;
          aq <= ar;
          cq <= cr;
        end
      end
    end else begin : g_fold
      // One shared multiplier, its partial products registered every cycle and again in fabric
      // (PP_REG = 1: the routing out of the DSPs gets a cycle of its own before the adders), so
      // a product is summed two cycles after its operands, in the same phase. The operands
      // are a cycle ahead in the DSPs' input registers (OP_REG = 1): they load the next
      // cycle's operands (below), so the products are those of operands two cycles back, as
      // if the multiplexer fed the multipliers directly, without the phase flag's fan-out to
      // every lane's multiplexer running into the multipliers' own delay. Phase 0 takes
      // a*c (the product registered into pq at the phase 0 after the step that follows, when
      // aq's beat has moved to stage NS-1), phase 1 takes d*K (the product registered into tq
      // at the phase 1 two cycles after a step, when d1's beat is in stage 2; it moves to ST
      // at the next step). Operands of a phase are those of the cycle before the step (a
      // phase 0 cycle's aq, a phase 1 cycle's d1 hold until the step), so a stall changes
      // neither product. Both products exact.
      localparam int FA = W > EW ? W : EW;
      localparam int FB = 24 > EW ? 24 : EW;
      /// Stage 1: d.
      logic [W-1:0] d1;
      always_ff @(posedge clk) begin
        if (b_en) d1 <= d0;
      end
      /// The table entries of stage ST+1 half a step later: the tables' output registers (the
      /// ECP5 flow folds them into the block RAMs), loaded at the phase 0 after the step that
      /// read them, and held until the phase 0 after the next step, so that aq and cq take them
      /// at that step (and at a later one after a stall) and the multiplier's input registers
      /// with them. Without them the block RAM's read fed the operand multiplexer.
      logic [EW-1:0] ao, co;
      always_ff @(posedge clk) begin
        if (g_b_fold.b_stepped) begin
          ao <= ar;
          co <= cr;
        end
      end
      /// The multiplier's operands of the next cycle, into its input registers: d1 and K at
      /// phase 1, aq and cq at phase 0, each as it will be then. d1 is itself for a phase 1
      /// next (stage B steps only at phase 1, so not now); aq and cq take ao and co if the
      /// pipeline steps now.
      logic [FA-1:0] fa;
      logic [FB-1:0] fb;
      /// aq and cq as they will be at the next cycle.
      logic [EW-1:0] aq_next, cq_next;
      /// The product.
      logic [FA+FB-1:0] fp;
      assign aq_next = b_en ? ao : aq;
      assign cq_next = b_en ? co : cq;
      assign fa = g_b_fold.b_ph_next ? FA'(d1) : FA'(aq_next);
      assign fb = g_b_fold.b_ph_next ? FB'(KO) : FB'(cq_next);
      mase_split_mul #(
          .A_WIDTH(FA),
          .B_WIDTH(FB),
          .OP_REG (1),
          .PP_REG (1)
      ) u_f (
          .clk(clk),
          .en (1'b1),
          .a  (fa),
          .b  (fb),
          .y  (fp)
      );
      /// The product's high bits lie beyond both exact results when the operands are narrow;
      /// this sink keeps lint quiet.
      logic unused_fp;
      assign unused_fp = ^fp;
      always_ff @(posedge clk) begin
        if (b_ph && g_b_fold.b_stepped2) tq <= TW'(fp) << 1;
        if (!b_ph && g_b_fold.b_stepped) pq <= (2 * EW)'(fp);
        aq <= aq_next;
        cq <= cq_next;
      end
    end

    if (NK > 1) begin : g_kq
      always_ff @(posedge clk) begin
        if (b_en) kq[NK*KB-1:KB] <= kq[(NK-1)*KB-1:0];
      end
    end
    always_ff @(posedge clk) begin
      if (b_en) begin
        ar <= rom_hi[f[2*H-1:H]];
        cr <= rom_lo[f[H-1:0]];
        kq[KB-1:0] <= (!keep_t || 32'(k_full) > 32'(EF)) ? KB'(EF + 1) : KB'(k_full);
        b_e[i*EW+:EW] <= (kl > KB'(EF)) ? '0 : EW'(ps >> kl);
      end
    end
    assign ps = pq[2*EW-1:EF];
  end

  // The row sum, off stage B's critical paths: each beat pushed into E (the last stage's
  // registers are the leaves) enters a mase_reduce_tree of TL registered levels, then the
  // accumulator stage, which registers the row sum S for the divider at a row's last beat. A
  // row's sum thus enters the divider DS = TL + 1 cycles after its last beat entered E.
  /// The exp values of the pushed beat, SW bits each.
  logic [P*SW-1:0] s0_e;
  for (genvar j = 0; j < P; j++) begin : g_sum_leaf
    assign s0_e[j*SW+:SW] = SW'(b_e[j*EW+:EW]);
  end
  /// The beat sum at the tree's last level is valid; the beat is its row's last.
  logic bs_v, bs_last;
  mase_reduce_tree #(.N(P), .WIDTH(SW), .OP(1), .TAG(1)) u_sum (
      .clk(clk), .rst(rst), .in_data(s0_e), .in_valid(b_push), .in_tag(lbl),
      .out_data(beat_sum), .out_valid(bs_v), .out_tag(bs_last)
  );

  /// Divider input valid: a row sum is registered.
  logic d0_v;
  /// Divider input: the row sum S (registered).
  logic [SW-1:0] d0_s;
  always_ff @(posedge clk) begin
    if (rst) begin
      acc  <= '0;
      d0_v <= 1'b0;
    end else begin
      if (bs_v) acc <= bs_last ? '0 : acc + beat_sum;
      d0_v <= bs_v && bs_last;
    end
  end
  always_ff @(posedge clk) begin
    d0_s <= acc + beat_sum;
  end

  // E (P*EW bits per word) is a mase_wide_fifo, as X, and registers its read for the same
  // reason (the LUT RAM's access would run into c1's registers and their enable); no latency
  // either: a row's exp values wait in E for its reciprocal. READY_REG: E's ready gates stage
  // B's enable, whose fanout (every stage register, X's and M's pops) leaves no time for the
  // occupancy compare before it.
  mase_wide_fifo #(
      .DATA_WIDTH(EW),
      .LANES(P),
      .DEPTH(DE),
      .OUT_REG(1),
      .READY_REG(1),
      .NO_RW_CHECK(1)
  ) u_e (
      .clk(clk),
      .rst(rst),
      .data_in_0(b_e),
      .data_in_0_valid(e_in_valid),
      .data_in_0_ready(e_in_ready),
      .data_out_0(e_out),
      .data_out_0_valid(e_out_valid),
      .data_out_0_ready(e_out_ready)
  );

  // Divider: R = floor(2^Z / S), one quotient bit per stage, non-restoring: a stage's signed
  // remainder rho is twice the last one's plus S when that was negative and minus S otherwise,
  // and its quotient bit is rho >= 0. Those are the restoring divider's bits (its remainder is
  // rho, or rho + S when rho is negative), and the add-or-subtract is chosen by a register bit
  // (the last remainder's sign) before one carry chain, where restoring division chose between
  // the difference and the doubled remainder after the compare's chain (the divisor-fits
  // compare fanned out to every remainder bit: 8.0 ns on ECP5). It starts from the remainder
  // 2^(EF-1) (the bits of 2^Z above the quotient's range), which is below S.
  for (genvar j = 1; j <= QB; j++) begin : g_div
    /// Stage valid.
    logic v;
    /// Stage partial quotient.
    logic [QB-1:0] q;
    // Waiver: the last stage's divisor and remainder are not read (the final remainder is
    // discarded), nor is the top bit of the previous quotient (shifted out; it is always 0).
    /* verilator lint_off UNUSEDSIGNAL */
    /// Stage divisor.
    logic [SW-1:0] s;
    /// Stage remainder rho, signed (-S < rho < S).
    logic [SW:0] r;
    /// Previous stage quotient.
    logic [QB-1:0] pq;
    /* verilator lint_on UNUSEDSIGNAL */
    /// Previous stage valid.
    logic pv;
    /// Previous stage divisor.
    logic [SW-1:0] ps;
    /// Previous stage remainder (signed).
    logic [SW:0] pr;
    if (j == 1) begin : g_first
      assign pv = d0_v;
      assign ps = d0_s;
      assign pr = (SW + 1)'(1) << (EF - 1);
      assign pq = '0;
    end else begin : g_next
      assign pv = g_div[j-1].v;
      assign ps = g_div[j-1].s;
      assign pr = g_div[j-1].r;
      assign pq = g_div[j-1].q;
    end
    /// Add S (the previous remainder is negative) or subtract it: S or its complement, and the
    /// carry in, as one adder's operand {B, carry} beside {2 rho, 1} (its low bit then carries
    /// the carry in), so a single chain computes 2 rho +- S.
    logic add_s;
    logic [SW:0] sb;
    logic [SW+1:0] sum;
    /// The new remainder: 2 rho +- S (modulo 2^(SW+1): it lies within (-S, S)).
    logic [SW:0] rn;
    assign add_s = pr[SW];
    assign sb = add_s ? {1'b0, ps} : ~{1'b0, ps};
    assign sum = {pr[SW-1:0], 1'b0, 1'b1} + {sb, !add_s};
    assign rn = sum[SW+1:1];
    /// The carry-in position's own sum bit is not part of the result; this sink keeps lint quiet.
    logic unused_ci;
    assign unused_ci = sum[0];
    always_ff @(posedge clk) begin
      if (rst) v <= 1'b0;
      else v <= pv;
    end
    always_ff @(posedge clk) begin
      s <= ps;
      r <= rn;
      q <= {pq[QB-2:0], !rn[SW]};
    end
  end


  /// Divider output valid (last stage).
  logic div_valid;
  /// Divider output quotient R (last stage).
  logic [QB-1:0] div_q;
  assign div_valid = g_div[QB].v;
  assign div_q = g_div[QB].q;

  /// Rq: head reciprocal.
  logic [QB-1:0] r_out;
  /// Rq: input ready (always true by DR's sizing; unused).
  logic r_in_ready;

  mase_fifo #(
      .DATA_WIDTH(QB),
      .LANES(1),
      .DEPTH(DR),
      .NO_RW_CHECK(1)
  ) u_r (
      .clk(clk),
      .rst(rst),
      .data_in_0(div_q),
      .data_in_0_valid(div_valid),
      .data_in_0_ready(r_in_ready),
      .data_out_0(r_out),
      .data_out_0_valid(r_out_valid),
      .data_out_0_ready(r_out_ready)
  );

  // ---------------------------------------------------------------------------------------------
  // Stage C: normalize
  /// Pipeline advance (c1..c4 step together when c4 is empty or the skid buffer takes it).
  logic c_en;
  /// A beat of E enters the multiply stage.
  logic c_go;
  /// Index of the next beat of E in its row.
  logic [BW-1:0] c_cnt;
  /// c1, c2 and c3 (partial products of e * R, in the DSPs and again in fabric) and c4 (e * R)
  /// valid.
  logic vc1, vc2, vc3, vc4;
  /// c1 exp values.
  logic [P*EW-1:0] ce1;
  /// c1 reciprocal.
  logic [QB-1:0] cr1;
  /// Skid buffer ready (registered).
  logic sk_ready;
  /// Cast results.
  logic [P*OW-1:0] y;

  assign c_en = !vc4 || sk_ready;
  assign c_go = e_out_valid && r_out_valid && c_en;
  assign e_out_ready = c_go;
  assign r_out_ready = c_go && c_cnt == BW'(NB - 1);

  always_ff @(posedge clk) begin
    if (rst) begin
      vc1   <= 1'b0;
      vc2   <= 1'b0;
      vc3   <= 1'b0;
      vc4   <= 1'b0;
      c_cnt <= '0;
    end else if (c_en) begin
      vc1 <= c_go;
      vc2 <= vc1;
      vc3 <= vc2;
      vc4 <= vc3;
      if (c_go) c_cnt <= (c_cnt == BW'(NB - 1)) ? '0 : c_cnt + 1'b1;
    end
  end
  always_ff @(posedge clk) begin
    if (c_en) begin
      ce1 <= e_out;
      cr1 <= r_out;
    end
  end

  for (genvar i = 0; i < P; i++) begin : g_norm
    /// e * R (Z fractional bits), its partial products registered in c2 (the DSPs' output
    /// registers) and again in c3 (fabric registers: the routing out of the DSPs, up to 3.6 ns on
    /// ECP5, is then a path of its own, not one with the adders that sum the partial products).
    logic [EW+QB-1:0] er;
    /// c4: e * R, registered so that the cast starts from a register.
    logic [EW+QB-1:0] prod;
    mase_split_mul #(
        .A_WIDTH(EW),
        .B_WIDTH(QB),
        .PP_REG (1)
    ) u_er (
        .clk(clk),
        .en (c_en),
        .a  (ce1[i*EW+:EW]),
        .b  (cr1),
        .y  (er)
    );
    always_ff @(posedge clk) begin
      if (c_en) prod <= er;
    end
    `MASE_CAST_TO(DATA_OUT_0, EW + QB, Z, 0, DATA_OUT_0_SIGNED, prod, y[i*OW+:OW]);
  end

  `MASE_OUTPUT_SKID(OW, P, y, vc4, sk_ready);

`ifndef SYNTHESIS
  // DR's sizing keeps Rq from overflowing: the divider never pushes into a full FIFO.
  property p_rq_room;
    @(posedge clk) disable iff (rst) div_valid |-> r_in_ready;
  endproperty
  a_rq_room : assert property (p_rq_room)
  else $error("mase_softmax: reciprocal FIFO overflow (DR too small)");
  // M never fills: a row's maximum is in M (or on its way) only while the row's last beat is in
  // X, and X holds at most 2*NB + 6 beats, so at most 8 rows are counted against M's 8 words
  // and its read register (which takes the oldest maximum the cycle after its push and keeps it
  // until its row leaves, so a push finds at most 7 words in use).
  property p_m_room;
    @(posedge clk) disable iff (rst) m_push |-> m_in_ready;
  endproperty
  a_m_room : assert property (p_m_room)
  else $error("mase_softmax: row maximum FIFO overflow");
`endif
  // The stream-stability assertions are stated by the two component modules on their ports.
endmodule
