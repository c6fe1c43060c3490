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
// Pipeline: issue -> S1 memory words -> S2 products -> S3 product sums -> S4 accumulators ->
// mase_skid_buffer output register; every stage advances when the skid buffer can take a beat.
//   Latency: (M/P_OUT)*(K/P_IN) + K/P_IN + 4 cycles from the first input beat (both streams
//            offered from the start) to the first output beat: B must be complete first.
//   II:      N*(M/P_OUT)*(K/P_IN) cycles per sequence, every multiplier busy every cycle, as
//            long as B arrives in at most that many cycles (it has (M/P_OUT)*(K/P_IN) beats).
//   Paths cut: both input readies are registered flags; the output is a skid-buffer register.
module mase_matmul #(
    /// Width of A's elements in bits (1..32, signed).
    parameter int DATA_IN_0_PRECISION_0 = 8,
    /// Fractional bits of A.
    parameter int DATA_IN_0_PRECISION_1 = 4,
    /// K: elements per A row (1..65536).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 16,
    /// N: A rows per sequence (1..65536).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 4,
    /// P_IN: A elements per beat (1..1024, divides K).
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 4,
    /// A rows per beat (must be 1).
    parameter int DATA_IN_0_PARALLELISM_DIM_1 = 1,
    /// Width of B's elements in bits (1..32, signed).
    parameter int DATA_IN_1_PRECISION_0 = 8,
    /// Fractional bits of B.
    parameter int DATA_IN_1_PRECISION_1 = 4,
    /// Columns of data_in_1: M (TRANSPOSE_B = 0) or K (TRANSPOSE_B = 1).
    parameter int DATA_IN_1_TENSOR_SIZE_DIM_0 = 8,
    /// Rows of data_in_1: K (TRANSPOSE_B = 0) or M (TRANSPOSE_B = 1).
    parameter int DATA_IN_1_TENSOR_SIZE_DIM_1 = 16,
    /// Block columns of data_in_1: P_OUT (TRANSPOSE_B = 0) or P_IN (TRANSPOSE_B = 1).
    parameter int DATA_IN_1_PARALLELISM_DIM_0 = 2,
    /// Block rows of data_in_1: P_IN (TRANSPOSE_B = 0) or P_OUT (TRANSPOSE_B = 1).
    parameter int DATA_IN_1_PARALLELISM_DIM_1 = 4,
    /// Output element width in bits (1..64, signed).
    parameter int DATA_OUT_0_PRECISION_0 = 16,
    /// Output fractional bits.
    parameter int DATA_OUT_0_PRECISION_1 = 8,
    /// M: outputs per row (1..65536).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = 8,
    /// Output rows per sequence (must equal N).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_1 = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// P_OUT: outputs per beat (1..1024, divides M).
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = 2,
    /// Output rows per beat (must be 1).
    parameter int DATA_OUT_0_PARALLELISM_DIM_1 = 1,
    /// Output rounding: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV.
    parameter int DATA_OUT_0_ROUNDING = 0,
    /// Output overflow: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM.
    parameter int DATA_OUT_0_OVERFLOW = 1,
    /// 0: data_in_1 is B [K, M]; 1: data_in_1 is B^T [M, K].
    parameter int TRANSPOSE_B = 0
) (
    /// Clock.
    input  logic                                                         clk,
    /// Synchronous active-high reset: empties both buffers and the pipeline.
    input  logic                                                         rst,
    /// A beat: P_IN consecutive elements of an A row, lane i at [i*W +: W].
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0] data_in_0,
    /// A beat valid.
    input  logic                                                         data_in_0_valid,
    /// An A row bank is free (registered).
    output logic                                                         data_in_0_ready,
    /// B beat: one block of data_in_1 (see TRANSPOSE_B), lanes row-major.
    input  logic [DATA_IN_1_PARALLELISM_DIM_0*DATA_IN_1_PARALLELISM_DIM_1*DATA_IN_1_PRECISION_0-1:0]
                                                                         data_in_1,
    /// B beat valid.
    input  logic                                                         data_in_1_valid,
    /// A B bank is free (registered).
    output logic                                                         data_in_1_ready,
    /// Output beat: P_OUT consecutive elements of a C row, lane o at [o*W +: W].
    output logic [DATA_OUT_0_PARALLELISM_DIM_0*DATA_OUT_0_PRECISION_0-1:0] data_out_0,
    /// Output beat valid (registered).
    output logic                                                         data_out_0_valid,
    /// Downstream takes the output beat.
    input  logic                                                         data_out_0_ready
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
  /// Product width and fractional bits; sum of P_IN products; exact accumulator.
  localparam int PW = IW + BW;
  localparam int PF = DATA_IN_0_PRECISION_1 + DATA_IN_1_PRECISION_1;
  localparam int TW = PW + (P_IN > 1 ? $clog2(P_IN) : 0);
  localparam int AW = PW + (K > 1 ? $clog2(K) : 0) + 1;
  /// Expected data_in_1 shape.
  localparam int B_D0 = TRANSPOSE_B != 0 ? K : M;
  localparam int B_D1 = TRANSPOSE_B != 0 ? M : K;
  localparam int B_P0 = TRANSPOSE_B != 0 ? P_IN : P_OUT;
  localparam int B_P1 = TRANSPOSE_B != 0 ? P_OUT : P_IN;

`ifndef SYNTHESIS
  initial begin
    if (DATA_IN_0_PRECISION_0 < 1 || DATA_IN_0_PRECISION_0 > 32)
      $fatal(1, "DATA_IN_0_PRECISION_0 must be between 1 and 32, got %0d", DATA_IN_0_PRECISION_0);
    if (DATA_IN_0_PRECISION_1 < -16777216 || DATA_IN_0_PRECISION_1 > 16777216)
      $fatal(1, "DATA_IN_0_PRECISION_1 must be between -16777216 and 16777216, got %0d",
             DATA_IN_0_PRECISION_1);
    if (DATA_IN_0_TENSOR_SIZE_DIM_0 < 1 || DATA_IN_0_TENSOR_SIZE_DIM_0 > 65536)
      $fatal(1, "DATA_IN_0_TENSOR_SIZE_DIM_0 must be between 1 and 65536, got %0d",
             DATA_IN_0_TENSOR_SIZE_DIM_0);
    if (DATA_IN_0_TENSOR_SIZE_DIM_1 < 1 || DATA_IN_0_TENSOR_SIZE_DIM_1 > 65536)
      $fatal(1, "DATA_IN_0_TENSOR_SIZE_DIM_1 must be between 1 and 65536, got %0d",
             DATA_IN_0_TENSOR_SIZE_DIM_1);
    if (DATA_IN_0_PARALLELISM_DIM_0 < 1 || DATA_IN_0_PARALLELISM_DIM_0 > 1024)
      $fatal(1, "DATA_IN_0_PARALLELISM_DIM_0 must be between 1 and 1024, got %0d",
             DATA_IN_0_PARALLELISM_DIM_0);
    if (DATA_IN_0_TENSOR_SIZE_DIM_0 % DATA_IN_0_PARALLELISM_DIM_0 != 0)
      $fatal(1, "DATA_IN_0_PARALLELISM_DIM_0 (%0d) must divide DATA_IN_0_TENSOR_SIZE_DIM_0 (%0d)",
             DATA_IN_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    if (DATA_IN_0_PARALLELISM_DIM_1 < 1 || DATA_IN_0_PARALLELISM_DIM_1 > 1)
      $fatal(1, "DATA_IN_0_PARALLELISM_DIM_1 must be between 1 and 1, got %0d",
             DATA_IN_0_PARALLELISM_DIM_1);
    if (DATA_OUT_0_PRECISION_0 < 1 || DATA_OUT_0_PRECISION_0 > 64)
      $fatal(1, "DATA_OUT_0_PRECISION_0 must be between 1 and 64, got %0d",
             DATA_OUT_0_PRECISION_0);
    if (DATA_OUT_0_PRECISION_1 < -16777216 || DATA_OUT_0_PRECISION_1 > 16777216)
      $fatal(1, "DATA_OUT_0_PRECISION_1 must be between -16777216 and 16777216, got %0d",
             DATA_OUT_0_PRECISION_1);
    if (DATA_OUT_0_TENSOR_SIZE_DIM_0 < 1 || DATA_OUT_0_TENSOR_SIZE_DIM_0 > 65536)
      $fatal(1, "DATA_OUT_0_TENSOR_SIZE_DIM_0 must be between 1 and 65536, got %0d",
             DATA_OUT_0_TENSOR_SIZE_DIM_0);
    if (DATA_OUT_0_TENSOR_SIZE_DIM_1 != DATA_IN_0_TENSOR_SIZE_DIM_1)
      $fatal(1, "DATA_OUT_0_TENSOR_SIZE_DIM_1 (%0d) must equal DATA_IN_0_TENSOR_SIZE_DIM_1 (%0d)",
             DATA_OUT_0_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    if (DATA_OUT_0_PARALLELISM_DIM_0 < 1 || DATA_OUT_0_PARALLELISM_DIM_0 > 1024)
      $fatal(1, "DATA_OUT_0_PARALLELISM_DIM_0 must be between 1 and 1024, got %0d",
             DATA_OUT_0_PARALLELISM_DIM_0);
    if (DATA_OUT_0_TENSOR_SIZE_DIM_0 % DATA_OUT_0_PARALLELISM_DIM_0 != 0)
      $fatal(1, "DATA_OUT_0_PARALLELISM_DIM_0 (%0d) must divide DATA_OUT_0_TENSOR_SIZE_DIM_0 (%0d)",
             DATA_OUT_0_PARALLELISM_DIM_0, DATA_OUT_0_TENSOR_SIZE_DIM_0);
    if (DATA_OUT_0_PARALLELISM_DIM_1 < 1 || DATA_OUT_0_PARALLELISM_DIM_1 > 1)
      $fatal(1, "DATA_OUT_0_PARALLELISM_DIM_1 must be between 1 and 1, got %0d",
             DATA_OUT_0_PARALLELISM_DIM_1);
    if (P_IN * P_OUT > 4096)
      $fatal(1, "%s must be between 1 and 4096, got %0d",
             "DATA_IN_0_PARALLELISM_DIM_0 * DATA_OUT_0_PARALLELISM_DIM_0", P_IN * P_OUT);
    if (NIB * NOB > 1048576)
      $fatal(1, "B words per bank must be between 1 and 1048576, got %0d", NIB * NOB);
    if (DATA_OUT_0_ROUNDING < 0 || DATA_OUT_0_ROUNDING > 6)
      $fatal(1, "DATA_OUT_0_ROUNDING must be between 0 and 6, got %0d", DATA_OUT_0_ROUNDING);
    if (DATA_OUT_0_OVERFLOW < 0 || DATA_OUT_0_OVERFLOW > 3)
      $fatal(1, "DATA_OUT_0_OVERFLOW must be between 0 and 3, got %0d", DATA_OUT_0_OVERFLOW);
    if (TRANSPOSE_B < 0 || TRANSPOSE_B > 1)
      $fatal(1, "TRANSPOSE_B must be between 0 and 1, got %0d", TRANSPOSE_B);
    if (DATA_IN_1_PRECISION_0 < 1 || DATA_IN_1_PRECISION_0 > 32)
      $fatal(1, "DATA_IN_1_PRECISION_0 must be between 1 and 32, got %0d", DATA_IN_1_PRECISION_0);
    if (DATA_IN_1_PRECISION_1 < -16777216 || DATA_IN_1_PRECISION_1 > 16777216)
      $fatal(1, "DATA_IN_1_PRECISION_1 must be between -16777216 and 16777216, got %0d",
             DATA_IN_1_PRECISION_1);
    if (DATA_IN_1_TENSOR_SIZE_DIM_0 != B_D0)
      $fatal(1, "DATA_IN_1_TENSOR_SIZE_DIM_0 (%0d) must equal %s (%0d)",
             DATA_IN_1_TENSOR_SIZE_DIM_0, TRANSPOSE_B != 0 ? "K" : "M", B_D0);
    if (DATA_IN_1_TENSOR_SIZE_DIM_1 != B_D1)
      $fatal(1, "DATA_IN_1_TENSOR_SIZE_DIM_1 (%0d) must equal %s (%0d)",
             DATA_IN_1_TENSOR_SIZE_DIM_1, TRANSPOSE_B != 0 ? "M" : "K", B_D1);
    if (DATA_IN_1_PARALLELISM_DIM_0 != B_P0 && TRANSPOSE_B != 0)
      $fatal(1, "DATA_IN_1_PARALLELISM_DIM_0 (%0d) must equal P_IN (%0d)",
             DATA_IN_1_PARALLELISM_DIM_0, B_P0);
    if (DATA_IN_1_PARALLELISM_DIM_0 != B_P0 && TRANSPOSE_B == 0)
      $fatal(1, "DATA_IN_1_PARALLELISM_DIM_0 (%0d) must equal P_OUT (%0d)",
             DATA_IN_1_PARALLELISM_DIM_0, B_P0);
    if (DATA_IN_1_PARALLELISM_DIM_1 != B_P1 && TRANSPOSE_B != 0)
      $fatal(1, "DATA_IN_1_PARALLELISM_DIM_1 (%0d) must equal P_OUT (%0d)",
             DATA_IN_1_PARALLELISM_DIM_1, B_P1);
    if (DATA_IN_1_PARALLELISM_DIM_1 != B_P1 && TRANSPOSE_B == 0)
      $fatal(1, "DATA_IN_1_PARALLELISM_DIM_1 (%0d) must equal P_IN (%0d)",
             DATA_IN_1_PARALLELISM_DIM_1, B_P1);
  end
`endif

  /// The whole compute pipeline advances: the output skid buffer can take a beat.
  logic adv;

  // ---------------------------------------------------------------------------------------------
  // A side: double-buffered row memory (bank b, chunk c at word {b, c})
  logic [P_IN*IW-1:0] a_mem[2**(IBW+1)];
  /// Bank being written, next chunk, bank-full flags, bank being read.
  logic a_wr_bank;
  logic [IBW-1:0] a_wr_chunk;
  logic [1:0] a_full;
  logic a_rd_bank;
  /// A beat accepted; it ends a row. The compute side issues the last word of a row.
  logic a_fire, a_last, row_done;

  assign data_in_0_ready = !a_full[a_wr_bank];
  assign a_fire = data_in_0_valid && data_in_0_ready;
  assign a_last = a_wr_chunk == IBW'(NIB - 1);

  always_ff @(posedge clk) begin
    if (a_fire) a_mem[{a_wr_bank, a_wr_chunk}] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      a_wr_bank  <= 1'b0;
      a_wr_chunk <= '0;
      a_full     <= '0;
    end else begin
      if (a_fire) begin
        a_wr_chunk <= a_last ? '0 : a_wr_chunk + 1'b1;
        if (a_last) a_wr_bank <= !a_wr_bank;
      end
      for (int b = 0; b < 2; b++) begin
        if (a_fire && a_last && a_wr_bank == b[0]) a_full[b] <= 1'b1;
        else if (row_done && a_rd_bank == b[0]) a_full[b] <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // B side: two banks of NOB*NIB weight blocks, word ob*NIB + ib
  logic [P_OUT*P_IN*BW-1:0] b_mem[2**(WAW+1)];
  /// Bank being written, bank-full flags, bank being read.
  logic b_wr_bank;
  logic [1:0] b_full;
  logic b_rd_bank;
  /// Write counters: ob and ib of the arriving block, its word address.
  logic [OBW-1:0] bw_ob;
  logic [IBW-1:0] bw_ib;
  logic [WAW-1:0] bw_addr;
  /// B beat accepted; it ends the tensor. The compute side finishes a sequence.
  logic b_fire, b_last, seq_done;
  /// The arriving beat as a weight block (lane o*P_IN + i).
  logic [P_OUT*P_IN*BW-1:0] b_word;
  /// The arriving beat resized to P_OUT*P_IN lanes (the same width whenever the parameters are
  /// valid; the cast only keeps an invalid set elaborating far enough to report its error).
  logic [BWORD-1:0] b_in;
  assign b_in = BWORD'(data_in_1);

  assign data_in_1_ready = !b_full[b_wr_bank];
  assign b_fire = data_in_1_valid && data_in_1_ready;
  assign b_last = bw_ob == OBW'(NOB - 1) && bw_ib == IBW'(NIB - 1);

  for (genvar o = 0; o < P_OUT; o++) begin : g_bo
    for (genvar i = 0; i < P_IN; i++) begin : g_bi
      if (TRANSPOSE_B != 0) begin : g_t
        assign b_word[(o*P_IN+i)*BW+:BW] = b_in[(o*P_IN+i)*BW+:BW];
      end else begin : g_n
        assign b_word[(o*P_IN+i)*BW+:BW] = b_in[(i*P_OUT+o)*BW+:BW];
      end
    end
  end

  always_ff @(posedge clk) begin
    if (b_fire) b_mem[{b_wr_bank, bw_addr}] <= b_word;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      b_wr_bank <= 1'b0;
      b_full    <= '0;
      bw_ob     <= '0;
      bw_ib     <= '0;
      bw_addr   <= '0;
    end else begin
      if (b_fire) begin
        if (b_last) begin
          b_wr_bank <= !b_wr_bank;
          bw_ob     <= '0;
          bw_ib     <= '0;
          bw_addr   <= '0;
        end else if (TRANSPOSE_B != 0) begin
          // B^T blocks arrive ob-major, ib fastest: sequential words.
          bw_addr <= bw_addr + 1'b1;
          if (bw_ib == IBW'(NIB - 1)) begin
            bw_ib <= '0;
            bw_ob <= bw_ob + 1'b1;
          end else begin
            bw_ib <= bw_ib + 1'b1;
          end
        end else begin
          // B blocks arrive ib-major, ob fastest: word ob*NIB + ib.
          if (bw_ob == OBW'(NOB - 1)) begin
            bw_ob   <= '0;
            bw_ib   <= bw_ib + 1'b1;
            bw_addr <= WAW'(bw_ib) + 1'b1;
          end else begin
            bw_ob   <= bw_ob + 1'b1;
            bw_addr <= bw_addr + WAW'(NIB);
          end
        end
      end
      for (int b = 0; b < 2; b++) begin
        if (b_fire && b_last && b_wr_bank == b[0]) b_full[b] <= 1'b1;
        else if (seq_done && b_rd_bank == b[0]) b_full[b] <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Issue: A chunk ib, output block ob, A row r of the sequence
  logic [IBW-1:0] rd_chunk;
  logic [OBW-1:0] rd_block;
  logic [NBW-1:0] rd_row;
  logic [WAW-1:0] w_addr;
  logic issue, chunk_last, block_last, row_last;

  assign issue = a_full[a_rd_bank] && b_full[b_rd_bank] && adv;
  assign chunk_last = rd_chunk == IBW'(NIB - 1);
  assign block_last = rd_block == OBW'(NOB - 1);
  assign row_last = rd_row == NBW'(N - 1);
  assign row_done = issue && chunk_last && block_last;
  assign seq_done = row_done && row_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      a_rd_bank <= 1'b0;
      b_rd_bank <= 1'b0;
      rd_chunk  <= '0;
      rd_block  <= '0;
      rd_row    <= '0;
      w_addr    <= '0;
    end else if (issue) begin
      rd_chunk <= chunk_last ? '0 : rd_chunk + 1'b1;
      w_addr   <= row_done ? '0 : w_addr + 1'b1;
      if (chunk_last) rd_block <= block_last ? '0 : rd_block + 1'b1;
      if (row_done) begin
        a_rd_bank <= !a_rd_bank;
        rd_row    <= row_last ? '0 : rd_row + 1'b1;
      end
      if (seq_done) b_rd_bank <= !b_rd_bank;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // S1: weight block and A chunk (synchronous reads)
  logic [P_OUT*P_IN*BW-1:0] s1_w;
  logic [P_IN*IW-1:0] s1_x;
  logic s1_valid, s1_first, s1_last;

  always_ff @(posedge clk) begin
    if (adv) begin
      s1_w     <= b_mem[{b_rd_bank, w_addr}];
      s1_x     <= a_mem[{a_rd_bank, rd_chunk}];
      s1_first <= rd_chunk == '0;
      s1_last  <= chunk_last;
    end
  end

  // S2: products
  logic [P_OUT*P_IN*PW-1:0] s2_prod;
  logic s2_valid, s2_first, s2_last;

  for (genvar o = 0; o < P_OUT; o++) begin : g_mul_o
    for (genvar i = 0; i < P_IN; i++) begin : g_mul_i
      always_ff @(posedge clk) begin
        if (adv)
          s2_prod[(o*P_IN+i)*PW+:PW] <= $signed(s1_x[i*IW+:IW]) * $signed(s1_w[(o*P_IN+i)*BW+:BW]);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (adv) begin
      s2_first <= s1_first;
      s2_last  <= s1_last;
    end
  end

  // S3: sum of the P_IN products of each output
  logic [P_OUT*TW-1:0] s3_sum, sum_d;
  logic s3_valid, s3_first, s3_last;

  always_comb begin
    for (int o = 0; o < P_OUT; o++) begin
      sum_d[o*TW+:TW] = '0;
      for (int i = 0; i < P_IN; i++) begin
        sum_d[o*TW+:TW] = sum_d[o*TW+:TW] + TW'($signed(s2_prod[(o*P_IN+i)*PW+:PW]));
      end
    end
  end

  always_ff @(posedge clk) begin
    if (adv) begin
      s3_sum   <= sum_d;
      s3_first <= s2_first;
      s3_last  <= s2_last;
    end
  end

  // S4: exact accumulation over the chunks of a row
  logic [P_OUT*AW-1:0] acc;
  logic s4_valid;

  for (genvar o = 0; o < P_OUT; o++) begin : g_acc
    /// Sign-extended product sum.
    logic [AW-1:0] sum_ext;
    assign sum_ext = AW'($signed(s3_sum[o*TW+:TW]));
    always_ff @(posedge clk) begin
      if (adv && s3_valid) acc[o*AW+:AW] <= (s3_first ? '0 : acc[o*AW+:AW]) + sum_ext;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      s1_valid <= 1'b0;
      s2_valid <= 1'b0;
      s3_valid <= 1'b0;
      s4_valid <= 1'b0;
    end else if (adv) begin
      s1_valid <= a_full[a_rd_bank] && b_full[b_rd_bank];
      s2_valid <= s1_valid;
      s3_valid <= s2_valid;
      s4_valid <= s3_valid && s3_last;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output: cast, skid buffer
  logic [P_OUT*OW-1:0] y;

  for (genvar o = 0; o < P_OUT; o++) begin : g_out
    mase_cast_core #(
        .IN_WIDTH  (AW),
        .IN_FRAC   (PF),
        .IN_SIGNED (1),
        .OUT_WIDTH (OW),
        .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
        .OUT_SIGNED(1),
        .ROUNDING  (DATA_OUT_0_ROUNDING),
        .OVERFLOW  (DATA_OUT_0_OVERFLOW)
    ) u_cast (
        .data_in (acc[o*AW+:AW]),
        .data_out(y[o*OW+:OW])
    );
  end

  mase_skid_buffer #(
      .DATA_WIDTH(OW),
      .LANES     (P_OUT)
  ) u_out (
      .clk             (clk),
      .rst             (rst),
      .data_in_0       (y),
      .data_in_0_valid (s4_valid),
      .data_in_0_ready (adv),
      .data_out_0      (data_out_0),
      .data_out_0_valid(data_out_0_valid),
      .data_out_0_ready(data_out_0_ready)
  );

`ifndef SYNTHESIS
  a_out_stable :
  assert property (@(posedge clk) disable iff (rst)
      data_out_0_valid && !data_out_0_ready |=> data_out_0_valid && $stable(data_out_0))
  else $error("mase_matmul: data_out_0 changed or dropped valid while stalled");
  a_in0_stable :
  assert property (@(posedge clk) disable iff (rst)
      data_in_0_valid && !data_in_0_ready |=> data_in_0_valid && $stable(data_in_0))
  else $error("mase_matmul: data_in_0 changed or dropped valid while stalled");
  a_in1_stable :
  assert property (@(posedge clk) disable iff (rst)
      data_in_1_valid && !data_in_1_ready |=> data_in_1_valid && $stable(data_in_1))
  else $error("mase_matmul: data_in_1 changed or dropped valid while stalled");
`endif
endmodule
