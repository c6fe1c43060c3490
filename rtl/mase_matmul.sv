// mase_matmul: product C = A * B of two activation streams, one sequence after another.
//
// Per sequence A is [N, K] (N = DATA_IN_0_TENSOR_SIZE_DIM_1 rows of K = DATA_IN_0_TENSOR_SIZE_DIM_0,
// streamed row by row in beats of P_IN = DATA_IN_0_PARALLELISM_DIM_0 elements) and B is [K, M]
// (M = DATA_OUT_0_TENSOR_SIZE_DIM_0). C = [N, M] leaves row by row in beats of P_OUT =
// DATA_OUT_0_PARALLELISM_DIM_0 elements. P_IN x P_OUT multipliers.
//
// B is the buffered operand. TRANSPOSE_B = 0: data_in_1 carries B as a [K, M] tensor in blocks of
// P_IN rows x P_OUT columns (A*V: V rows arrive as they are). TRANSPOSE_B = 1: data_in_1 carries
// B^T as an [M, K] tensor in blocks of P_OUT rows x P_IN columns (Q*K^T: K's rows arrive as they
// are). Either way each beat is one P_OUT x P_IN "weight block" W[o][i] = B[ib*P_IN+i][ob*P_OUT+o],
// stored (lanes reordered for TRANSPOSE_B = 0) at word ob*(K/P_IN) + ib of one bank of a
// two-bank B memory: the next sequence's B loads into one bank while the current sequence
// computes from the other. A rows are double-buffered (2 banks of K/P_IN words), as in
// mase_linear, so the multipliers are busy every cycle while both operands keep up.
//
// Datapath (as mase_linear without bias): for each A row, each output block ob and each input
// chunk ib (fastest), multiply the A chunk by the weight block, sum the P_IN products of each
// output, accumulate exactly over the K/P_IN chunks (products at DATA_IN_0_PRECISION_1 +
// DATA_IN_1_PRECISION_1 fractional bits, enough integer bits that no sum overflows), then one
// output cast (mase_cast_core: DATA_OUT_0 format, ROUNDING / OVERFLOW modes).
//
// Pipeline: issue -> S1 memory words -> R (operands registered) -> D (operands registered again:
// the multipliers' input registers) -> S2 products -> [P partial sums, for products of 24 bits
// or more and P_IN >= 3] -> S3 product sums -> S4 accumulators -> mase_skid_buffer output
// register; every stage advances when the skid buffer can take a beat. Both operand buffers are
// mase_pingpong_buffers; R onwards is the mase_dot_product shared with mase_linear (which
// decides whether P exists: its SUM_STAGES).
//   Latency: (M/P_OUT)*(K/P_IN) + K/P_IN + 5 + SUM_STAGES cycles from the first input beat (both
//            streams offered from the start) to the first output beat: B must be complete first
//            (SUM_STAGES = 2 with P, else 1).
//   II:      N*(M/P_OUT)*(K/P_IN) cycles per sequence, every multiplier busy every cycle, as
//            long as B arrives in at most that many cycles (it has (M/P_OUT)*(K/P_IN) beats).
//   Paths cut: both input readies are registered flags; the output is a skid-buffer register.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_matmul #(
    /// A: signed 1..32 bits; K = DATA_IN_0_TENSOR_SIZE_DIM_0 elements per row (1..65536);
    /// N = DATA_IN_0_TENSOR_SIZE_DIM_1 rows per sequence (1..65536); P_IN =
    /// DATA_IN_0_PARALLELISM_DIM_0 elements per beat (1..1024, divides K); one row per beat.
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 16, 4, 4, 1),
    /// B: signed 1..32 bits. data_in_1 is B [K, M] (TRANSPOSE_B = 0: M columns, K rows, P_OUT
    /// block columns, P_IN block rows) or B^T [M, K] (TRANSPOSE_B = 1: K columns, M rows, P_IN
    /// block columns, P_OUT block rows).
    `MASE_TENSOR_PARAMS(DATA_IN_1, 8, 4, 8, 16, 2, 4),
    /// Output: signed 1..64 bits; M = DATA_OUT_0_TENSOR_SIZE_DIM_0 outputs per row (1..65536);
    /// N rows (must equal A's); P_OUT = DATA_OUT_0_PARALLELISM_DIM_0 outputs per beat (1..1024,
    /// divides M); one row per beat.
    `MASE_TENSOR_PARAMS(DATA_OUT_0, 16, 8, 8, DATA_IN_0_TENSOR_SIZE_DIM_1, 2, 1),
    /// Rounding and overflow of the output cast.
    `MASE_MODE_PARAMS(DATA_OUT_0),
    /// 0: data_in_1 is B [K, M]; 1: data_in_1 is B^T [M, K].
    parameter int TRANSPOSE_B = 0
) (
    /// Clock and reset (reset empties both buffers and the pipeline).
    `MASE_CLOCK_PORTS,
    /// A beats: P_IN consecutive elements of an A row, taken when an A row bank is free
    /// (registered).
    `MASE_STREAM_IN(data_in_0, DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PRECISION_0),
    /// B beats: one block of data_in_1 (see TRANSPOSE_B), lanes row-major, taken when a B bank is
    /// free (registered).
    `MASE_STREAM_IN(data_in_1,
                    DATA_IN_1_PARALLELISM_DIM_0 * DATA_IN_1_PARALLELISM_DIM_1 * DATA_IN_1_PRECISION_0),
    /// Output beats: P_OUT consecutive elements of a C row (data and valid registered).
    `MASE_STREAM_OUT(data_out_0, DATA_OUT_0_PARALLELISM_DIM_0 * DATA_OUT_0_PRECISION_0)
);
  /// Shapes.
  localparam int K = DATA_IN_0_TENSOR_SIZE_DIM_0;
  localparam int N = DATA_IN_0_TENSOR_SIZE_DIM_1;
  localparam int M = DATA_OUT_0_TENSOR_SIZE_DIM_0;
  localparam int P_IN = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int P_OUT = DATA_OUT_0_PARALLELISM_DIM_0;
  /// Chunks per A row, output blocks per row.
  localparam int NIB = K / P_IN;
  localparam int NOB = M / P_OUT;
  /// Element widths.
  localparam int IW = DATA_IN_0_PRECISION_0;
  localparam int BW = DATA_IN_1_PRECISION_0;
  localparam int OW = DATA_OUT_0_PRECISION_0;
  /// Bits of one weight block (P_OUT x P_IN elements of B).
  localparam int BWORD = P_OUT * P_IN * BW;
  /// Counter / address widths.
  localparam int IBW = NIB > 1 ? $clog2(NIB) : 1;
  localparam int OBW = NOB > 1 ? $clog2(NOB) : 1;
  localparam int NBW = N > 1 ? $clog2(N) : 1;
  localparam int WAW = NOB * NIB > 1 ? $clog2(NOB * NIB) : 1;
  /// Product width and fractional bits; exact accumulator.
  localparam int PW = IW + BW;
  localparam int PF = DATA_IN_0_PRECISION_1 + DATA_IN_1_PRECISION_1;
  localparam int AW = PW + (K > 1 ? $clog2(K) : 0) + 1;
  /// Expected data_in_1 shape.
  localparam int B_D0 = TRANSPOSE_B != 0 ? K : M;
  localparam int B_D1 = TRANSPOSE_B != 0 ? M : K;
  localparam int B_P0 = TRANSPOSE_B != 0 ? P_IN : P_OUT;
  localparam int B_P1 = TRANSPOSE_B != 0 ? P_OUT : P_IN;

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 32);
    `MASE_CHECK_ROW_SHAPE(DATA_IN_0, 65536, 65536, 1024);
    `MASE_CHECK_FORMAT(DATA_OUT_0, 64);
    `MASE_CHECK_RANGE(DATA_OUT_0_TENSOR_SIZE_DIM_0, 1, 65536);
    `MASE_CHECK_EQUAL(DATA_OUT_0_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    `MASE_CHECK_RANGE(DATA_OUT_0_PARALLELISM_DIM_0, 1, 1024);
    `MASE_CHECK_DIVIDES(DATA_OUT_0_PARALLELISM_DIM_0, DATA_OUT_0_TENSOR_SIZE_DIM_0);
    `MASE_CHECK_RANGE(DATA_OUT_0_PARALLELISM_DIM_1, 1, 1);
    `MASE_CHECK_RANGE_OF(multipliers, "DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PARALLELISM_DIM_0",
                        P_IN * P_OUT, 1, 4096);
    `MASE_CHECK_RANGE_OF(bank_words, "B words per bank", NIB * NOB, 1, 1048576);
    `MASE_CHECK_MODES(DATA_OUT_0);
    `MASE_CHECK_FLAG(TRANSPOSE_B);
    `MASE_CHECK_FORMAT(DATA_IN_1, 32);
    `MASE_CHECK_EQUAL_TO(DATA_IN_1_TENSOR_SIZE_DIM_0, TRANSPOSE_B != 0 ? "K" : "M", B_D0);
    `MASE_CHECK_EQUAL_TO(DATA_IN_1_TENSOR_SIZE_DIM_1, TRANSPOSE_B != 0 ? "M" : "K", B_D1);
    // (Two branches: a ?: of string literals of different lengths pads the shorter one.)
    if (TRANSPOSE_B != 0) begin : g_transposed_b_checks
      `MASE_CHECK_EQUAL_TO(DATA_IN_1_PARALLELISM_DIM_0, "P_IN", B_P0);
      `MASE_CHECK_EQUAL_TO(DATA_IN_1_PARALLELISM_DIM_1, "P_OUT", B_P1);
    end else begin : g_plain_b_checks
      `MASE_CHECK_EQUAL_TO(DATA_IN_1_PARALLELISM_DIM_0, "P_OUT", B_P0);
      `MASE_CHECK_EQUAL_TO(DATA_IN_1_PARALLELISM_DIM_1, "P_IN", B_P1);
    end
  endgenerate
`endif

  /// The whole compute pipeline advances: the output register can take a beat.
  logic adv;

  // ---------------------------------------------------------------------------------------------
  // Issue: A chunk ib, output block ob, A row r of the sequence
  logic [IBW-1:0] rd_chunk;
  logic [OBW-1:0] rd_block;
  logic [NBW-1:0] rd_row;
  logic [WAW-1:0] w_addr;
  /// The read banks hold a complete A row / a complete B.
  logic a_ready, b_ready;
  logic issue, chunk_last, block_last, row_last;
  /// The compute side issues the last word of an A row / of a sequence.
  logic row_done, seq_done;

  assign issue = a_ready && b_ready && adv;
  assign chunk_last = rd_chunk == IBW'(NIB - 1);
  assign block_last = rd_block == OBW'(NOB - 1);
  assign row_last = rd_row == NBW'(N - 1);
  assign row_done = issue && chunk_last && block_last;
  assign seq_done = row_done && row_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_chunk <= '0;
      rd_block <= '0;
      rd_row   <= '0;
      w_addr   <= '0;
    end else if (issue) begin
      rd_chunk <= chunk_last ? '0 : rd_chunk + 1'b1;
      w_addr   <= row_done ? '0 : w_addr + 1'b1;
      if (chunk_last) rd_block <= block_last ? '0 : rd_block + 1'b1;
      if (row_done) rd_row <= row_last ? '0 : rd_row + 1'b1;
    end
  end

  /// S1: A chunk and weight block (read registers of the two buffers) and their tags.
  logic [P_IN*IW-1:0] s1_x;
  logic [P_OUT*P_IN*BW-1:0] s1_w;
  logic s1_valid, s1_first, s1_last;

  // ---------------------------------------------------------------------------------------------
  // A side: double-buffered row memory, bank word = A chunk in arrival order
  /// Chunk number of the arriving A beat (its word in the bank).
  logic [IBW-1:0] a_wr_chunk;

  // NO_RW_CHECK (both buffers): s1_x and s1_w are used only when s1_valid, which loads
  // a_ready && b_ready (both buffers' rd_full) on the same advance as the reads.
  mase_pingpong_buffer #(
      .WIDTH(P_IN * IW),
      .WORDS(NIB),
      .NO_RW_CHECK(1)
  ) u_a (
      .clk            (clk),
      .rst            (rst),
      `MASE_PASS_STREAM(data_in_0),
      .wr_index       (a_wr_chunk),
      .wr_addr        (a_wr_chunk),
      .rd_full        (a_ready),
      .rd_addr        (rd_chunk),
      .rd_en          (adv),
      .rd_data        (s1_x),
      .rd_release     (row_done)
  );

  // ---------------------------------------------------------------------------------------------
  // B side: two banks of NOB*NIB weight blocks, word ob*NIB + ib
  /// The arriving beat resized to P_OUT*P_IN lanes (the same width whenever the parameters are
  /// valid; the cast only keeps an invalid set elaborating far enough to report its error).
  logic [BWORD-1:0] b_in;
  /// The arriving beat as a weight block (lane o*P_IN + i).
  logic [P_OUT*P_IN*BW-1:0] b_word;
  /// Number of the arriving B beat within B, and the word it goes to.
  logic [WAW-1:0] b_index, b_addr;

  assign b_in = BWORD'(data_in_1);

  for (genvar o = 0; o < P_OUT; o++) begin : g_bo
    for (genvar i = 0; i < P_IN; i++) begin : g_bi
      if (TRANSPOSE_B != 0) begin : g_t
        assign b_word[(o*P_IN+i)*BW+:BW] = b_in[(o*P_IN+i)*BW+:BW];
      end else begin : g_n
        assign b_word[(o*P_IN+i)*BW+:BW] = b_in[(i*P_OUT+o)*BW+:BW];
      end
    end
  end

  if (TRANSPOSE_B != 0) begin : g_b_seq
    // B^T blocks arrive ob-major, ib fastest: sequential words.
    assign b_addr = b_index;
  end else begin : g_b_perm
    // B blocks arrive ib-major, ob fastest: word ob*NIB + ib. From word w the next block is
    // w + NIB (next ob) until ob = NOB-1, i.e. w >= (NOB-1)*NIB; then ob wraps and ib steps:
    // w - (NOB-1)*NIB + 1, or 0 after the last word of B.
    /// First word of the last output block.
    localparam int LAST_OB = (NOB - 1) * NIB;
    /// Word of the arriving block.
    logic [WAW-1:0] bw_addr;
    assign b_addr = bw_addr;
    always_ff @(posedge clk) begin
      if (rst) bw_addr <= '0;
      else if (data_in_1_valid && data_in_1_ready) begin
        if (bw_addr < WAW'(LAST_OB)) bw_addr <= bw_addr + WAW'(NIB);
        else if (bw_addr == WAW'(NOB * NIB - 1)) bw_addr <= '0;
        else bw_addr <= bw_addr - WAW'(LAST_OB) + 1'b1;
      end
    end
    /// The beat number only matters for sequential writes.
    logic unused_index;
    assign unused_index = ^b_index;
  end

  mase_pingpong_buffer #(
      .WIDTH(P_OUT * P_IN * BW),
      .WORDS(NOB * NIB),
      .NO_RW_CHECK(1)
  ) u_b (
      .clk            (clk),
      .rst            (rst),
      .data_in_0      (b_word),
      .data_in_0_valid(data_in_1_valid),
      .data_in_0_ready(data_in_1_ready),
      .wr_index       (b_index),
      .wr_addr        (b_addr),
      .rd_full        (b_ready),
      .rd_addr        (w_addr),
      .rd_en          (adv),
      .rd_data        (s1_w),
      .rd_release     (seq_done)
  );

  always_ff @(posedge clk) begin
    if (adv) begin
      s1_first <= rd_chunk == '0;
      s1_last  <= chunk_last;
    end
  end

  `MASE_VALID_REG(s1_valid, adv, a_ready && b_ready)

  // ---------------------------------------------------------------------------------------------
  // S2..S4 and output: products, sums, exact accumulation from zero, cast, output register
  /// Unused tag of the shared datapath.
  logic unused_tag;
  /// The accumulators start from zero (no bias). A named signal, not '0 in the port map: Yosys
  /// 0.23 then loses the top's name after `chparam`.
  logic [P_OUT*AW-1:0] acc_init;
  assign acc_init = '0;
  /// No per-lane shift (one scale for all of B's columns).
  logic [P_OUT-1:0] no_lane_shift;
  assign no_lane_shift = '0;

  mase_dot_product #(
      .X_WIDTH   (IW),
      .W_WIDTH   (BW),
      .LANES_IN  (P_IN),
      .LANES_OUT (P_OUT),
      .ACC_WIDTH (AW),
      .ACC_FRAC  (PF),
      .SHIFT     (0),
      .TAG_WIDTH (1),
      .FUSED_RELU(0),
      .OUT_WIDTH (OW),
      .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
      .ROUNDING  (DATA_OUT_0_ROUNDING),
      .OVERFLOW  (DATA_OUT_0_OVERFLOW)
  ) u_dot (
      .clk             (clk),
      .rst             (rst),
      .adv             (adv),
      .in_valid        (s1_valid),
      .in_first        (s1_first),
      .in_last         (s1_last),
      .in_tag          (1'b0),
      .x               (s1_x),
      .w               (s1_w),
      .init_tag        (unused_tag),
      .init            (acc_init),
      .lane_shift      (no_lane_shift),
      `MASE_PASS_STREAM(data_out_0)
  );

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_in_1)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
