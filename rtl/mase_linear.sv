// mase_linear: fixed-point fully connected layer y = x * W^T + b over a stream of rows.
//
// Each row x has IN = DATA_IN_0_TENSOR_SIZE_DIM_0 elements and arrives as IN/P_IN beats of
// P_IN = DATA_IN_0_PARALLELISM_DIM_0 lanes; each output row y has OUT = WEIGHT_TENSOR_SIZE_DIM_1
// elements and leaves as OUT/P_OUT beats of P_OUT = WEIGHT_PARALLELISM_DIM_1 lanes. The
// datapath has P_OUT x P_IN multipliers.
//
// Schedule. A row is written into one bank of a double-buffered row memory (2 banks of IN/P_IN
// words of P_IN elements) while the previous row is computed from the other bank, so the
// multipliers never wait for input. For each block ob of P_OUT outputs and each chunk ib of
// P_IN inputs (ib fastest) the datapath reads one ROM word holding the P_OUT x P_IN weight block
// W[ob*P_OUT + o][ib*P_IN + i] (lane o*P_IN + i) and one row-memory word, multiplies all pairs,
// sums each output's P_IN products and accumulates over the IN/P_IN chunks. The accumulator
// starts from the bias (read from a second ROM, word ob = b[ob*P_OUT +: P_OUT]) and is exact:
// products and bias are aligned to max(input frac + weight frac, bias frac) fractional bits with
// enough integer bits that no sum can overflow. After the last chunk the optional ReLU (on the
// exact sum) and the output cast (mase_cast_core: DATA_OUT_0 format, ROUNDING / OVERFLOW modes,
// default TRN + SAT) give the P_OUT outputs of the block.
//
// Per-channel weight precision (WEIGHT_PER_CHANNEL = 1). Output channel o has its own weight
// fraction width f_o = WEIGHT_PRECISION_1 - s_o, with s_o in 0..2^WEIGHT_SHIFT_WIDTH-1 read from a
// third ROM (WEIGHT_SHIFT_MEM_FILE, word ob = s[ob*P_OUT +: P_OUT], WEIGHT_SHIFT_WIDTH-bit unsigned
// lanes), so WEIGHT_PRECISION_1 is the finest channel's fraction width. Channel o's product sums
// (fraction DATA_IN_0_PRECISION_1 + f_o) are shifted left by s_o more bits on their way into the
// accumulator, so every channel's exact sum has the same AF fractional bits as the (per-tensor)
// bias and the one output cast, rounding once, is the per-tensor one. Why there: the shift code is
// constant over a block and the shifted addend of the exact accumulator merges into the adder's
// LUTs. A barrel shifter on the final sum, or a multi-cycle shifter behind the accumulator, needs
// a second AW-bit register or mux per lane; a variable-fraction output cast would shift the bias
// too. Measured (Yosys synth_xilinx, 64x64 P4x4 int8, random ROM contents): per-tensor 417 LUT /
// 264 FF; per-channel WEIGHT_SHIFT_WIDTH = 1 (spread 1 bit) 423 LUT / 272 FF (+1.4 % LUT), 2
// (spread 3 bits) 490 LUT / 284 FF (+17.5 %), 3 (spread 7 bits) 553 LUT / 304 FF. The shift ROM
// is read like the bias ROM (its registered word is due in S3), so latency and II do not change.
// WEIGHT_PER_CHANNEL = 0 builds no shift ROM and no shifter: the per-tensor datapath.
//
// Pipeline: issue (ROM / row-memory address) -> S1 memory words -> [M, split weight ROM only]
// -> R (operands registered: on ECP5 the weight ROM's output register) -> D (operands registered
// again: the multipliers' input registers) -> S2 products -> [P partial sums, for products of 24
// bits or more and P_IN >= 3] -> S3 per-output product sums -> S4 accumulators -> output register
// of a mase_skid_buffer;
// the bias and shift words are read two stages before S3 and registered twice, so no block RAM
// output drives the accumulator's adder. Every stage advances together when the skid buffer can
// take a beat. The row memory is a mase_pingpong_buffer and R onwards the mase_dot_product
// shared with mase_matmul (which decides whether P exists: its SUM_STAGES).
// Split weight ROM (M). A weight ROM deeper than its cheapest block-RAM aspect ratio (see
// w_piece_depth: 4096 words of 128 bits, the FFN of a BERT-tiny layer at P 4x4, take 30 block
// RAMs as 2048x9, two deep, against 32 as 4096x4) is split by depth by the synthesis tool, and its
// multiplexer between the block RAMs and R kept R out of their output registers: 95.1 MHz for
// the demo's encoder on LFE5U-85F-6, block-RAM clock-to-out (5.6 ns) and the LUT in one path.
// Here such a ROM is cut into WK pieces of WPD words read side by side; their read is registered
// in M (the block RAMs' output registers) and the piece is selected between M and R, one more
// cycle of latency (the row chunk, flags and tag wait in M too). A ROM that one aspect ratio
// holds unsplit at the lowest cost has no M.
//   Latency: 2*IN/P_IN + 5 + SUM_STAGES + WM cycles from the first input beat to the first output
//            beat (SUM_STAGES = 2 with P, else 1; WM = 1 with M, else 0).
//   II:      (OUT/P_OUT) * (IN/P_IN) cycles per row (every multiplier busy every cycle);
//            the input side takes IN/P_IN cycles per row and overlaps the computation.
//   Paths cut: data, valid and ready of the output (skid buffer); data_in_0_ready is a register.
//
// Memories: weights, bias and channel shifts are synchronous-read ROMs loaded by $readmemh from the
// files named by WEIGHT_MEM_FILE, BIAS_MEM_FILE and WEIGHT_SHIFT_MEM_FILE (contents in the read
// order above, laid out by the Rust side, hwlib/src/components/linear.rs; a split weight ROM's
// file word a holds weight words a, WPD + a, 2*WPD + a, ... side by side, zeros past the last);
// an empty file name gives an all-zero ROM. The row memory
// is a 1-write 1-read RAM (distributed RAM on FPGAs).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_linear #(
    /// Input: signed 1..32 bits; IN = DATA_IN_0_TENSOR_SIZE_DIM_0 elements per row (1..65536);
    /// any number of rows (1..1048576) back to back; P_IN = DATA_IN_0_PARALLELISM_DIM_0
    /// elements per beat (1..1024, divides IN); one row per beat.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 64, 1, 4, 1),
    /// Weight ROM: signed 1..32 bits; IN columns (must equal IN) and OUT =
    /// WEIGHT_TENSOR_SIZE_DIM_1 rows = outputs per row (1..65536); P_IN block columns (must
    /// equal P_IN) and P_OUT = WEIGHT_PARALLELISM_DIM_1 outputs per beat (1..1024, divides OUT).
    `MASE_TENSOR_PARAMS(WEIGHT, 8, 4, DATA_IN_0_TENSOR_SIZE_DIM_0, 64,
                        DATA_IN_0_PARALLELISM_DIM_0, 4),
    /// 1: add the bias vector, 0: no bias.
    parameter int HAS_BIAS = 1,
    /// Bias ROM: signed 1..32 bits, fractional bits within 32 of input frac + weight frac when
    /// HAS_BIAS; OUT elements (must equal OUT), P_OUT per word (must equal P_OUT).
    `MASE_VECTOR_PARAMS(BIAS, 8, 4, WEIGHT_TENSOR_SIZE_DIM_1, WEIGHT_PARALLELISM_DIM_1),
    /// Output format: signed 1..64 bits.
    `MASE_FORMAT_PARAMS(DATA_OUT_0, 8, 4),
    /// Output shape: OUT elements per row, the input's rows, P_OUT per beat, one row per beat
    /// (each must equal these defaults).
    `MASE_SHAPE_PARAMS(DATA_OUT_0, WEIGHT_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1,
                       WEIGHT_PARALLELISM_DIM_1, DATA_IN_0_PARALLELISM_DIM_1),
    /// Rounding and overflow of the output cast.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// 1: fused ReLU, max(0, .) applied to the exact sum before the output cast.
    parameter int FUSED_RELU = 0,
    /// 1: per-output-channel weight fraction widths WEIGHT_PRECISION_1 - s_o (shift ROM), 0: one
    /// weight format.
    parameter int WEIGHT_PER_CHANNEL = 0,
    /// Bits of each channel's shift code s_o (1..4; spread of the channels' fraction widths up to
    /// 2^WEIGHT_SHIFT_WIDTH - 1 bits). Unused when WEIGHT_PER_CHANNEL = 0.
    parameter int WEIGHT_SHIFT_WIDTH = 2,
    /// Path of the weight .mem file ($readmemh; "" = all-zero weights).
    parameter WEIGHT_MEM_FILE = "",
    /// Path of the bias .mem file ($readmemh; "" = all-zero bias).
    parameter BIAS_MEM_FILE = "",
    /// Path of the channel shift .mem file ($readmemh; "" = every s_o = 0); WEIGHT_PER_CHANNEL = 1.
    parameter WEIGHT_SHIFT_MEM_FILE = ""
) (
    /// Clock and reset (reset empties the row buffer and the pipeline).
    /// data_in_0: input beats: P_IN consecutive elements of a row, taken when a row-buffer bank is
    /// free (registered).
    /// data_out_0: output beats: P_OUT consecutive outputs of a row (data and valid registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0,
                      WEIGHT_PARALLELISM_DIM_1 * DATA_OUT_0_PRECISION_0)
);
  // ---------------------------------------------------------------------------------------------
  // Derived sizes
  /// Inputs per row.
  localparam int IN = DATA_IN_0_TENSOR_SIZE_DIM_0;
  /// Outputs per row.
  localparam int OUT = WEIGHT_TENSOR_SIZE_DIM_1;
  /// Input lanes.
  localparam int P_IN = DATA_IN_0_PARALLELISM_DIM_0;
  /// Output lanes.
  localparam int P_OUT = WEIGHT_PARALLELISM_DIM_1;
  /// Input chunks per row (beats per input row).
  localparam int NIB = IN / P_IN;
  /// Output blocks per row (beats per output row).
  localparam int NOB = OUT / P_OUT;
  /// Input, weight, bias, output widths.
  localparam int IW = DATA_IN_0_PRECISION_0;
  localparam int WW = WEIGHT_PRECISION_0;
  localparam int BW = BIAS_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Counter widths (at least 1 bit).
  localparam int IBW = NIB > 1 ? $clog2(NIB) : 1;
  localparam int OBW = NOB > 1 ? $clog2(NOB) : 1;
  localparam int WAW = NOB * NIB > 1 ? $clog2(NOB * NIB) : 1;
  /// Product width and fractional bits.
  localparam int PW = IW + WW;
  localparam int PF = DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1;
  /// Accumulator fractional bits: the finer of products and bias.
  localparam int AF = (HAS_BIAS != 0 && BIAS_PRECISION_1 > PF) ? BIAS_PRECISION_1 : PF;
  /// Left shifts aligning products and bias to AF.
  localparam int SP = AF - PF;
  localparam int SB = AF - BIAS_PRECISION_1;
  /// Bits of a channel shift code (0: per-tensor weights) and the largest channel shift.
  localparam int SHW = WEIGHT_PER_CHANNEL != 0 ? WEIGHT_SHIFT_WIDTH : 0;
  localparam int SMAX = SHW > 0 ? (1 << SHW) - 1 : 0;
  /// Width of a sum of IN aligned products, and of the accumulator (one extra bit for the bias).
  localparam int SUMW = PW + (IN > 1 ? $clog2(IN) : 0) + SP + SMAX;
  localparam int AW = (HAS_BIAS != 0 && BW + SB > SUMW) ? BW + SB + 1 : SUMW + 1;

  /// Block RAMs of 18 kbit (ECP5 DP16KD; a 7-series RAMB18E1 has the same aspect ratios
  /// 16384x1, 8192x2, 4096x4, 2048x9, 1024x18, 512x36) that a memory of `depth` words of `width`
  /// bits takes in its cheapest aspect ratio: over all ratios when `unsplit` = 0, over the ratios
  /// at least `depth` deep (no split by depth, so no multiplexer after the reads) when 1 (a large
  /// number when none is that deep).
  function automatic int w_brams(int depth, int width, int unsplit);
    int rw, rd, n;
    w_brams = 1 << 30;
    for (int r = 0; r < 6; r++) begin
      rw = r < 3 ? 1 << r : 9 << (r - 3);
      rd = 16384 >> r;
      n  = ((width + rw - 1) / rw) * ((depth + rd - 1) / rd);
      if ((unsplit == 0 || rd >= depth) && n < w_brams) w_brams = n;
    end
  endfunction

  /// Words per weight-ROM piece. A memory deeper than its cheapest block-RAM aspect ratio is
  /// split by depth by the synthesis tool, whose multiplexer then sits between the block RAMs'
  /// reads and the first register, so the block RAMs' output registers cannot take it. So the
  /// ROM stays whole when a ratio deep enough for it is among the cheapest, and is otherwise cut
  /// into the fewest pieces of a power-of-two depth (at least 512, where every ratio fits) whose
  /// side-by-side words are cheapest unsplit.
  function automatic int w_piece_depth(int words, int width);
    int pd;
    if (w_brams(words, width, 1) <= w_brams(words, width, 0)) begin
      w_piece_depth = words;
    end else begin
      pd = 1 << ($clog2(words) - 1);
      for (int j = 0; j < 32; j++) begin
        if (pd > 512 &&
            w_brams(pd, ((words + pd - 1) / pd) * width, 1) >
            w_brams(pd, ((words + pd - 1) / pd) * width, 0))
          pd = pd / 2;
      end
      w_piece_depth = pd;
    end
  endfunction

  /// Bits of a weight word (one P_OUT x P_IN block) and weight words.
  localparam int WB = P_OUT * P_IN * WW;
  localparam int NW = NOB * NIB;
  /// Words per piece (NW when unsplit, else a power of two) and pieces (see w_piece_depth).
  localparam int WPD = w_piece_depth(NW, WB);
  localparam int WK = (NW + WPD - 1) / WPD;
  /// Extra stage on the weight path when split (the pieces' output registers, then the select);
  /// the chunk, flags and tag wait in it too.
  localparam int WM = WK > 1 ? 1 : 0;

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 32);
    `MASE_CHECK_ROW_SHAPE(DATA_IN_0, 65536, 1048576, 1024);
    `MASE_CHECK_FORMAT(WEIGHT, 32);
    `MASE_CHECK_EQUAL(WEIGHT_TENSOR_SIZE_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_RANGE(WEIGHT_TENSOR_SIZE_DIM_1, 1, 65536);
    `MASE_CHECK_EQUAL(WEIGHT_PARALLELISM_DIM_0, DATA_IN_0_PARALLELISM_DIM_0);
    `MASE_CHECK_RANGE(WEIGHT_PARALLELISM_DIM_1, 1, 1024);
    `MASE_CHECK_DIVIDES(WEIGHT_PARALLELISM_DIM_1, WEIGHT_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_RANGE_OF(multipliers, "DATA_IN_0_PARALLELISM_DIM_0 * WEIGHT_PARALLELISM_DIM_1",
                        P_IN * P_OUT, 1, 4096);
    `MASE_CHECK_FLAG(HAS_BIAS);
    `MASE_CHECK_FORMAT(BIAS, 32);
    if (HAS_BIAS != 0 && (BIAS_PRECISION_1 - PF > 32 || PF - BIAS_PRECISION_1 > 32)) begin : g_check_BIAS_PRECISION_1
      $fatal(1, "BIAS_PRECISION_1 (%0d) must be within 32 of %s (%0d)", BIAS_PRECISION_1,
             "DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1", PF);
    end
    `MASE_CHECK_EQUAL(BIAS_TENSOR_SIZE_DIM_0, WEIGHT_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_EQUAL(BIAS_PARALLELISM_DIM_0, WEIGHT_PARALLELISM_DIM_1);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_EQUAL(DATA_OUT_0_TENSOR_SIZE_DIM_0, WEIGHT_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_EQUAL(DATA_OUT_0_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PARALLELISM_DIM_0, WEIGHT_PARALLELISM_DIM_1);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PARALLELISM_DIM_1, DATA_IN_0_PARALLELISM_DIM_1);
    `MASE_CHECK_MODES(DATA_OUT_0);
    `MASE_CHECK_FLAG(FUSED_RELU);
    `MASE_CHECK_FLAG(WEIGHT_PER_CHANNEL);
    `MASE_CHECK_RANGE(WEIGHT_SHIFT_WIDTH, 1, 4);
  endgenerate
`endif

  /// The whole pipeline advances: the output register can take a beat.
  logic adv;

  // ---------------------------------------------------------------------------------------------
  // Input side: double-buffered row memory, bank word = input chunk in arrival order
  /// Chunk number of the arriving beat (its word in the bank).
  logic [IBW-1:0] wr_chunk;
  /// The read bank holds a complete row.
  logic row_full;
  /// The datapath reads the last word of the bank this cycle.
  logic rd_done;

  // ---------------------------------------------------------------------------------------------
  // Issue: weight-block and row-memory addresses
  /// Chunk ib of the current output block.
  logic [IBW-1:0] rd_chunk;
  /// Output block ob.
  logic [OBW-1:0] rd_block;
  /// Weight ROM word ob*NIB + ib.
  logic [WAW-1:0] w_addr;
  /// A (block, chunk) pair is issued this cycle.
  logic issue;
  /// Last chunk of a block / last block of a row.
  logic chunk_last, block_last;

  assign issue = row_full && adv;
  assign chunk_last = rd_chunk == IBW'(NIB - 1);
  assign block_last = rd_block == OBW'(NOB - 1);
  assign rd_done = issue && chunk_last && block_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_chunk <= '0;
      rd_block <= '0;
      w_addr   <= '0;
    end else if (issue) begin
      rd_chunk <= chunk_last ? '0 : rd_chunk + 1'b1;
      w_addr   <= rd_done ? '0 : w_addr + 1'b1;
      if (chunk_last) rd_block <= block_last ? '0 : rd_block + 1'b1;
    end
  end

  /// S1: input chunk (row-memory read register), weight block and their tags.
  logic [P_IN*IW-1:0] s1_x;
  logic s1_valid, s1_first, s1_last;
  logic [OBW-1:0] s1_block;

  // NO_RW_CHECK: s1_x is used only when s1_valid, which loads row_full (the buffer's rd_full) on
  // the same advance as the read, so only reads made while rd_full are used.
  mase_pingpong_buffer #(
      .WIDTH(P_IN * IW),
      .WORDS(NIB),
      .NO_RW_CHECK(1)
  ) u_rows (
      .clk            (clk),
      .rst            (rst),
      `MASE_PASS_STREAM(data_in_0),
      .wr_index       (wr_chunk),
      .wr_addr        (wr_chunk),
      .rd_full        (row_full),
      .rd_addr        (rd_chunk),
      .rd_en          (adv),
      .rd_data        (s1_x),
      .rd_release     (rd_done)
  );

  always_ff @(posedge clk) begin
    if (adv) begin
      s1_first <= rd_chunk == '0;
      s1_last  <= chunk_last;
      s1_block <= rd_block;
    end
  end

  `MASE_VALID_REG(s1_valid, adv, row_full)

  // ---------------------------------------------------------------------------------------------
  // Weight ROM (synchronous read, advancing with the pipeline), split by depth when one block
  // RAM's depth at the word's width does not hold it
  /// Weight block and chunk, flags, tag and valid as the dot product takes them (S1's, or one
  /// advance later when the ROM is split).
  logic [WB-1:0] dp_w;
  logic [P_IN*IW-1:0] dp_x;
  logic dp_valid, dp_first, dp_last;
  logic [OBW-1:0] dp_block;

  if (WK == 1) begin : g_w_whole
    /// Weight ROM: word ob*NIB + ib, lane o*P_IN + i = W[ob*P_OUT + o][ib*P_IN + i].
    (* rom_style = "block" *) logic [WB-1:0] w_rom[NW];
    `MASE_ROM_INIT(w_rom, NW, WEIGHT_MEM_FILE)
    always_ff @(posedge clk) begin
      if (adv) dp_w <= w_rom[w_addr];
    end
  end else begin : g_w_pieces
    // The pieces sit side by side in one memory of WPD words (piece k at [k*WB +: WB] of word a
    // holds weight word k*WPD + a), so one $readmemh file fills them all; the word is read at the
    // low address bits and registered again (the pieces' output registers, folded into the block
    // RAMs), and only then does the registered high address bits' select pick the piece: the
    // multiplexer runs from those registers into the dot product's register R.
    /// Bits of a piece's address and of the piece select.
    localparam int PAW = $clog2(WPD);
    localparam int SW = WAW - PAW;
    /// The pieces (contents laid out by the Rust side, hwlib/src/components/linear.rs).
    (* rom_style = "block" *) logic [WK*WB-1:0] w_rom[WPD];
    `MASE_ROM_INIT(w_rom, WPD, WEIGHT_MEM_FILE)
    /// The read (S1) and its register (M); the select beside them.
    logic [WK*WB-1:0] s1_pieces, m_pieces;
    logic [SW-1:0] s1_sel, m_sel;
    always_ff @(posedge clk) begin
      if (adv) begin
        s1_pieces <= w_rom[w_addr[PAW-1:0]];
        s1_sel    <= w_addr[WAW-1:PAW];
        m_pieces  <= s1_pieces;
        m_sel     <= s1_sel;
      end
    end
    always_comb begin
      dp_w = m_pieces[0+:WB];
      for (int k = 1; k < WK; k++) if (m_sel == SW'(k)) dp_w = m_pieces[k*WB+:WB];
    end
  end

  mase_delay #(.DEPTH(WM), .WIDTH(P_IN * IW + 2 + OBW)) u_m (.clk(clk), .rst(rst), .en(adv),
      .d({s1_x, s1_first, s1_last, s1_block}), .q({dp_x, dp_first, dp_last, dp_block}));
  mase_delay #(.DEPTH(WM), .WIDTH(1), .RESET(1)) u_m_valid (.clk(clk), .rst(rst), .en(adv),
      .d(s1_valid), .q(dp_valid));

  // ---------------------------------------------------------------------------------------------
  // Bias: the accumulators of a block start from its aligned bias word (read two advances before
  // S3 with the dot product's init_tag, registered once more, due in S3: the block RAM's
  // clock-to-out ends at a register, not in the accumulator adder)
  /// Block index of the chunk two advances before S3 (the dot product's init_tag).
  logic [OBW-1:0] init_block;
  /// Aligned bias of output lane o at [o*AW +: AW].
  logic [P_OUT*AW-1:0] bias_al;

  if (HAS_BIAS != 0) begin : g_bias
    /// Bias ROM: word ob, lane o = b[ob*P_OUT + o].
    logic [P_OUT*BW-1:0] b_rom[NOB];
    /// Bias word of the block one advance before S3 (the ROM's read register) and in S3.
    logic [P_OUT*BW-1:0] pre_bias, s3_bias;
    `MASE_ROM_INIT(b_rom, NOB, BIAS_MEM_FILE)
    always_ff @(posedge clk) begin
      if (adv) begin
        pre_bias <= b_rom[init_block];
        s3_bias  <= pre_bias;
      end
    end
    for (genvar o = 0; o < P_OUT; o++) begin : g_al
      assign bias_al[o*AW+:AW] = AW'($signed(s3_bias[o*BW+:BW])) << SB;
    end
  end else begin : g_no_bias
    assign bias_al = '0;
    /// Without bias (and without channel shifts) the block index is not needed.
    logic unused_no_bias;
    assign unused_no_bias = ^init_block;
  end

  // ---------------------------------------------------------------------------------------------
  // Channel shifts: the product sums of a block's channels are shifted by the block's shift word
  // (read and registered like the bias, due in S3 with every chunk of the block)
  /// Width of a lane of the shift word (1 when there is none).
  localparam int SHP = SHW > 0 ? SHW : 1;
  /// Shift code of output lane o at [o*SHP +: SHP].
  logic [P_OUT*SHP-1:0] s3_shift;

  if (SHW > 0) begin : g_shift
    /// Shift ROM: word ob, lane o = s[ob*P_OUT + o] (unsigned).
    logic [P_OUT*SHW-1:0] s_rom[NOB];
    `MASE_ROM_INIT(s_rom, NOB, WEIGHT_SHIFT_MEM_FILE)
    /// Shift word of the block one advance before S3 (the ROM's read register).
    logic [P_OUT*SHW-1:0] pre_shift;
    always_ff @(posedge clk) begin
      if (adv) begin
        pre_shift <= s_rom[init_block];
        s3_shift  <= pre_shift;
      end
    end
  end else begin : g_no_shift
    assign s3_shift = '0;
  end

  // ---------------------------------------------------------------------------------------------
  // S2..S4 and output: products, sums, exact accumulation, ReLU, cast, output register
  mase_dot_product #(
      .X_WIDTH   (IW),
      .W_WIDTH   (WW),
      .LANES_IN  (P_IN),
      .LANES_OUT (P_OUT),
      .ACC_WIDTH (AW),
      .ACC_FRAC  (AF),
      .SHIFT     (SP),
      .TAG_WIDTH (OBW),
      .FUSED_RELU(FUSED_RELU),
      .OUT_WIDTH (OW),
      .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
      .ROUNDING  (DATA_OUT_0_ROUNDING),
      .OVERFLOW  (DATA_OUT_0_OVERFLOW),
      .LANE_SHIFT_WIDTH(SHW)
  ) u_dot (
      .clk             (clk),
      .rst             (rst),
      .adv             (adv),
      .in_valid        (dp_valid),
      .in_first        (dp_first),
      .in_last         (dp_last),
      .in_tag          (dp_block),
      .x               (dp_x),
      .w               (dp_w),
      .init_tag        (init_block),
      .init            (bias_al),
      .lane_shift      (s3_shift),
      `MASE_PASS_STREAM(data_out_0)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
