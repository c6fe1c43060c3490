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
// Pipeline: issue (ROM / row-memory address) -> S1 memory words -> S2 products -> S3 per-output
// product sums (bias word read alongside) -> S4 accumulators -> output register of a
// mase_skid_buffer. Every stage advances together when the skid buffer can take a beat.
//   Latency: 2*IN/P_IN + 4 cycles from the first input beat to the first output beat.
//   II:      (OUT/P_OUT) * (IN/P_IN) cycles per row (every multiplier busy every cycle);
//            the input side takes IN/P_IN cycles per row and overlaps the computation.
//   Paths cut: data, valid and ready of the output (skid buffer); data_in_0_ready is a register.
//
// Memories: weights and bias are synchronous-read ROMs loaded by $readmemh from the files named
// by WEIGHT_MEM_FILE and BIAS_MEM_FILE (contents in the read order above, laid out by the Rust
// side, hwlib/src/components/linear.rs); an empty file name gives an all-zero ROM. The row memory
// is a 1-write 1-read RAM (distributed RAM on FPGAs).
module mase_linear #(
    /// Input element width in bits (1..32, signed).
    parameter int DATA_IN_0_PRECISION_0 = 8,
    /// Input fractional bits.
    parameter int DATA_IN_0_PRECISION_1 = 4,
    /// IN: elements per input row (1..65536).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_0 = 64,
    /// Rows per tensor (1..1048576; the module processes any number of rows back to back).
    parameter int DATA_IN_0_TENSOR_SIZE_DIM_1 = 1,
    /// P_IN: input elements per beat (1..1024, divides IN).
    parameter int DATA_IN_0_PARALLELISM_DIM_0 = 4,
    /// Input rows per beat (must be 1).
    parameter int DATA_IN_0_PARALLELISM_DIM_1 = 1,
    /// Weight width in bits (1..32, signed).
    parameter int WEIGHT_PRECISION_0 = 8,
    /// Weight fractional bits.
    parameter int WEIGHT_PRECISION_1 = 4,
    /// Weight columns (must equal IN).
    parameter int WEIGHT_TENSOR_SIZE_DIM_0 = DATA_IN_0_TENSOR_SIZE_DIM_0,
    /// OUT: weight rows = outputs per row (1..65536).
    parameter int WEIGHT_TENSOR_SIZE_DIM_1 = 64,
    /// Weight block columns (must equal P_IN).
    parameter int WEIGHT_PARALLELISM_DIM_0 = DATA_IN_0_PARALLELISM_DIM_0,
    /// P_OUT: outputs per beat (1..1024, divides OUT).
    parameter int WEIGHT_PARALLELISM_DIM_1 = 4,
    /// 1: add the bias vector, 0: no bias.
    parameter int HAS_BIAS = 1,
    /// Bias width in bits (1..32, signed).
    parameter int BIAS_PRECISION_0 = 8,
    /// Bias fractional bits (within 32 of input frac + weight frac when HAS_BIAS).
    parameter int BIAS_PRECISION_1 = 4,
    /// Bias elements (must equal OUT).
    parameter int BIAS_TENSOR_SIZE_DIM_0 = WEIGHT_TENSOR_SIZE_DIM_1,
    /// Bias elements per word (must equal P_OUT).
    parameter int BIAS_PARALLELISM_DIM_0 = WEIGHT_PARALLELISM_DIM_1,
    /// Output element width in bits (1..64, signed).
    parameter int DATA_OUT_0_PRECISION_0 = 8,
    /// Output fractional bits.
    parameter int DATA_OUT_0_PRECISION_1 = 4,
    /// Output elements per row (must equal OUT).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_0 = WEIGHT_TENSOR_SIZE_DIM_1,
    /// Output rows per tensor (must equal the input's).
    parameter int DATA_OUT_0_TENSOR_SIZE_DIM_1 = DATA_IN_0_TENSOR_SIZE_DIM_1,
    /// Output elements per beat (must equal P_OUT).
    parameter int DATA_OUT_0_PARALLELISM_DIM_0 = WEIGHT_PARALLELISM_DIM_1,
    /// Output rows per beat (must equal the input's, 1).
    parameter int DATA_OUT_0_PARALLELISM_DIM_1 = DATA_IN_0_PARALLELISM_DIM_1,
    /// Output rounding: 0 TRN, 1 TRN_ZERO, 2 RND, 3 RND_ZERO, 4 RND_INF, 5 RND_MIN_INF, 6 RND_CONV.
    parameter int DATA_OUT_0_ROUNDING = 0,
    /// Output overflow: 0 WRAP, 1 SAT, 2 SAT_ZERO, 3 SAT_SYM.
    parameter int DATA_OUT_0_OVERFLOW = 1,
    /// 1: fused ReLU, max(0, .) applied to the exact sum before the output cast.
    parameter int FUSED_RELU = 0,
    /// Path of the weight .mem file ($readmemh; "" = all-zero weights).
    parameter WEIGHT_MEM_FILE = "",
    /// Path of the bias .mem file ($readmemh; "" = all-zero bias).
    parameter BIAS_MEM_FILE = ""
) (
    /// Clock.
    input  logic                                                           clk,
    /// Synchronous active-high reset: empties the row buffer and the pipeline.
    input  logic                                                           rst,
    /// Input beat: P_IN consecutive elements of a row, lane i at [i*W +: W].
    input  logic [DATA_IN_0_PARALLELISM_DIM_0*DATA_IN_0_PRECISION_0-1:0]   data_in_0,
    /// Input beat valid.
    input  logic                                                           data_in_0_valid,
    /// A row-buffer bank is free (registered).
    output logic                                                           data_in_0_ready,
    /// Output beat: P_OUT consecutive outputs of a row, lane o at [o*W +: W].
    output logic [WEIGHT_PARALLELISM_DIM_1*DATA_OUT_0_PRECISION_0-1:0]     data_out_0,
    /// Output beat valid (registered).
    output logic                                                           data_out_0_valid,
    /// Consumer accepts the output beat.
    input  logic                                                           data_out_0_ready
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
  /// Width of a sum of P_IN products.
  localparam int TW = PW + (P_IN > 1 ? $clog2(P_IN) : 0);
  /// Accumulator fractional bits: the finer of products and bias.
  localparam int AF = (HAS_BIAS != 0 && BIAS_PRECISION_1 > PF) ? BIAS_PRECISION_1 : PF;
  /// Left shifts aligning products and bias to AF.
  localparam int SP = AF - PF;
  localparam int SB = AF - BIAS_PRECISION_1;
  /// Width of a sum of IN aligned products, and of the accumulator (one extra bit for the bias).
  localparam int SUMW = PW + (IN > 1 ? $clog2(IN) : 0) + SP;
  localparam int AW = (HAS_BIAS != 0 && BW + SB > SUMW) ? BW + SB + 1 : SUMW + 1;

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
    if (DATA_IN_0_TENSOR_SIZE_DIM_1 < 1 || DATA_IN_0_TENSOR_SIZE_DIM_1 > 1048576)
      $fatal(1, "DATA_IN_0_TENSOR_SIZE_DIM_1 must be between 1 and 1048576, got %0d",
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
    if (WEIGHT_PRECISION_0 < 1 || WEIGHT_PRECISION_0 > 32)
      $fatal(1, "WEIGHT_PRECISION_0 must be between 1 and 32, got %0d", WEIGHT_PRECISION_0);
    if (WEIGHT_PRECISION_1 < -16777216 || WEIGHT_PRECISION_1 > 16777216)
      $fatal(1, "WEIGHT_PRECISION_1 must be between -16777216 and 16777216, got %0d",
             WEIGHT_PRECISION_1);
    if (WEIGHT_TENSOR_SIZE_DIM_0 != DATA_IN_0_TENSOR_SIZE_DIM_0)
      $fatal(1, "WEIGHT_TENSOR_SIZE_DIM_0 (%0d) must equal DATA_IN_0_TENSOR_SIZE_DIM_0 (%0d)",
             WEIGHT_TENSOR_SIZE_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
    if (WEIGHT_TENSOR_SIZE_DIM_1 < 1 || WEIGHT_TENSOR_SIZE_DIM_1 > 65536)
      $fatal(1, "WEIGHT_TENSOR_SIZE_DIM_1 must be between 1 and 65536, got %0d",
             WEIGHT_TENSOR_SIZE_DIM_1);
    if (WEIGHT_PARALLELISM_DIM_0 != DATA_IN_0_PARALLELISM_DIM_0)
      $fatal(1, "WEIGHT_PARALLELISM_DIM_0 (%0d) must equal DATA_IN_0_PARALLELISM_DIM_0 (%0d)",
             WEIGHT_PARALLELISM_DIM_0, DATA_IN_0_PARALLELISM_DIM_0);
    if (WEIGHT_PARALLELISM_DIM_1 < 1 || WEIGHT_PARALLELISM_DIM_1 > 1024)
      $fatal(1, "WEIGHT_PARALLELISM_DIM_1 must be between 1 and 1024, got %0d",
             WEIGHT_PARALLELISM_DIM_1);
    if (WEIGHT_TENSOR_SIZE_DIM_1 % WEIGHT_PARALLELISM_DIM_1 != 0)
      $fatal(1, "WEIGHT_PARALLELISM_DIM_1 (%0d) must divide WEIGHT_TENSOR_SIZE_DIM_1 (%0d)",
             WEIGHT_PARALLELISM_DIM_1, WEIGHT_TENSOR_SIZE_DIM_1);
    if (P_IN * P_OUT > 4096)
      $fatal(1, "%s must be between 1 and 4096, got %0d",
             "DATA_IN_0_PARALLELISM_DIM_0 * WEIGHT_PARALLELISM_DIM_1", P_IN * P_OUT);
    if (HAS_BIAS < 0 || HAS_BIAS > 1)
      $fatal(1, "HAS_BIAS must be between 0 and 1, got %0d", HAS_BIAS);
    if (BIAS_PRECISION_0 < 1 || BIAS_PRECISION_0 > 32)
      $fatal(1, "BIAS_PRECISION_0 must be between 1 and 32, got %0d", BIAS_PRECISION_0);
    if (BIAS_PRECISION_1 < -16777216 || BIAS_PRECISION_1 > 16777216)
      $fatal(1, "BIAS_PRECISION_1 must be between -16777216 and 16777216, got %0d",
             BIAS_PRECISION_1);
    if (HAS_BIAS != 0 && (BIAS_PRECISION_1 - PF > 32 || PF - BIAS_PRECISION_1 > 32))
      $fatal(1, "BIAS_PRECISION_1 (%0d) must be within 32 of %s (%0d)", BIAS_PRECISION_1,
             "DATA_IN_0_PRECISION_1 + WEIGHT_PRECISION_1", PF);
    if (BIAS_TENSOR_SIZE_DIM_0 != WEIGHT_TENSOR_SIZE_DIM_1)
      $fatal(1, "BIAS_TENSOR_SIZE_DIM_0 (%0d) must equal WEIGHT_TENSOR_SIZE_DIM_1 (%0d)",
             BIAS_TENSOR_SIZE_DIM_0, WEIGHT_TENSOR_SIZE_DIM_1);
    if (BIAS_PARALLELISM_DIM_0 != WEIGHT_PARALLELISM_DIM_1)
      $fatal(1, "BIAS_PARALLELISM_DIM_0 (%0d) must equal WEIGHT_PARALLELISM_DIM_1 (%0d)",
             BIAS_PARALLELISM_DIM_0, WEIGHT_PARALLELISM_DIM_1);
    if (DATA_OUT_0_PRECISION_0 < 1 || DATA_OUT_0_PRECISION_0 > 64)
      $fatal(1, "DATA_OUT_0_PRECISION_0 must be between 1 and 64, got %0d",
             DATA_OUT_0_PRECISION_0);
    if (DATA_OUT_0_PRECISION_1 < -16777216 || DATA_OUT_0_PRECISION_1 > 16777216)
      $fatal(1, "DATA_OUT_0_PRECISION_1 must be between -16777216 and 16777216, got %0d",
             DATA_OUT_0_PRECISION_1);
    if (DATA_OUT_0_TENSOR_SIZE_DIM_0 != WEIGHT_TENSOR_SIZE_DIM_1)
      $fatal(1, "DATA_OUT_0_TENSOR_SIZE_DIM_0 (%0d) must equal WEIGHT_TENSOR_SIZE_DIM_1 (%0d)",
             DATA_OUT_0_TENSOR_SIZE_DIM_0, WEIGHT_TENSOR_SIZE_DIM_1);
    if (DATA_OUT_0_TENSOR_SIZE_DIM_1 != DATA_IN_0_TENSOR_SIZE_DIM_1)
      $fatal(1, "DATA_OUT_0_TENSOR_SIZE_DIM_1 (%0d) must equal DATA_IN_0_TENSOR_SIZE_DIM_1 (%0d)",
             DATA_OUT_0_TENSOR_SIZE_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    if (DATA_OUT_0_PARALLELISM_DIM_0 != WEIGHT_PARALLELISM_DIM_1)
      $fatal(1, "DATA_OUT_0_PARALLELISM_DIM_0 (%0d) must equal WEIGHT_PARALLELISM_DIM_1 (%0d)",
             DATA_OUT_0_PARALLELISM_DIM_0, WEIGHT_PARALLELISM_DIM_1);
    if (DATA_OUT_0_PARALLELISM_DIM_1 != DATA_IN_0_PARALLELISM_DIM_1)
      $fatal(1, "DATA_OUT_0_PARALLELISM_DIM_1 (%0d) must equal DATA_IN_0_PARALLELISM_DIM_1 (%0d)",
             DATA_OUT_0_PARALLELISM_DIM_1, DATA_IN_0_PARALLELISM_DIM_1);
    if (DATA_OUT_0_ROUNDING < 0 || DATA_OUT_0_ROUNDING > 6)
      $fatal(1, "DATA_OUT_0_ROUNDING must be between 0 and 6, got %0d", DATA_OUT_0_ROUNDING);
    if (DATA_OUT_0_OVERFLOW < 0 || DATA_OUT_0_OVERFLOW > 3)
      $fatal(1, "DATA_OUT_0_OVERFLOW must be between 0 and 3, got %0d", DATA_OUT_0_OVERFLOW);
    if (FUSED_RELU < 0 || FUSED_RELU > 1)
      $fatal(1, "FUSED_RELU must be between 0 and 1, got %0d", FUSED_RELU);
  end
`endif

  /// The whole pipeline advances: the output skid buffer can take a beat.
  logic adv;

  // ---------------------------------------------------------------------------------------------
  // Input side: double-buffered row memory
  /// Row memory: bank b, chunk c at word {b, c}; P_IN elements per word.
  logic [P_IN*IW-1:0] row_mem[2**(IBW+1)];
  /// Bank being written by the input stream.
  logic wr_bank;
  /// Next chunk of the row being written.
  logic [IBW-1:0] wr_chunk;
  /// Bank b holds a complete row not yet fully read.
  logic [1:0] bank_full;
  /// Bank being read by the datapath.
  logic rd_bank;
  /// Input beat accepted.
  logic in_fire;
  /// Last chunk of a row is being written.
  logic in_last;
  /// The datapath reads the last word of the bank this cycle.
  logic rd_done;

  assign data_in_0_ready = !bank_full[wr_bank];
  assign in_fire = data_in_0_valid && data_in_0_ready;
  assign in_last = wr_chunk == IBW'(NIB - 1);

  always_ff @(posedge clk) begin
    if (in_fire) row_mem[{wr_bank, wr_chunk}] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_bank   <= 1'b0;
      wr_chunk  <= '0;
      bank_full <= '0;
    end else begin
      if (in_fire) begin
        wr_chunk <= in_last ? '0 : wr_chunk + 1'b1;
        if (in_last) wr_bank <= !wr_bank;
      end
      for (int b = 0; b < 2; b++) begin
        if (in_fire && in_last && wr_bank == b[0]) bank_full[b] <= 1'b1;
        else if (rd_done && rd_bank == b[0]) bank_full[b] <= 1'b0;
      end
    end
  end

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

  assign issue = bank_full[rd_bank] && adv;
  assign chunk_last = rd_chunk == IBW'(NIB - 1);
  assign block_last = rd_block == OBW'(NOB - 1);
  assign rd_done = issue && chunk_last && block_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_bank  <= 1'b0;
      rd_chunk <= '0;
      rd_block <= '0;
      w_addr   <= '0;
    end else if (issue) begin
      rd_chunk <= chunk_last ? '0 : rd_chunk + 1'b1;
      w_addr   <= rd_done ? '0 : w_addr + 1'b1;
      if (chunk_last) rd_block <= block_last ? '0 : rd_block + 1'b1;
      if (rd_done) rd_bank <= !rd_bank;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Memories (synchronous read, advancing with the pipeline)
  /// Weight ROM: word ob*NIB + ib, lane o*P_IN + i = W[ob*P_OUT + o][ib*P_IN + i].
  (* rom_style = "block" *) logic [P_OUT*P_IN*WW-1:0] w_rom[NOB*NIB];
  if (WEIGHT_MEM_FILE != "") begin : g_w_file
    initial $readmemh(WEIGHT_MEM_FILE, w_rom);
  end else begin : g_w_zero
    initial for (int k = 0; k < NOB * NIB; k++) w_rom[k] = '0;
  end

  /// S1: weight block, input chunk and their tags.
  logic [P_OUT*P_IN*WW-1:0] s1_w;
  logic [P_IN*IW-1:0] s1_x;
  logic s1_valid, s1_first, s1_last;
  logic [OBW-1:0] s1_block;

  always_ff @(posedge clk) begin
    if (adv) begin
      s1_w     <= w_rom[w_addr];
      s1_x     <= row_mem[{rd_bank, rd_chunk}];
      s1_first <= rd_chunk == '0;
      s1_last  <= chunk_last;
      s1_block <= rd_block;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // S2: products
  /// Product of input lane i and weight lane o*P_IN + i at [(o*P_IN+i)*PW +: PW].
  logic [P_OUT*P_IN*PW-1:0] s2_prod;
  logic s2_valid, s2_first, s2_last;
  logic [OBW-1:0] s2_block;

  for (genvar o = 0; o < P_OUT; o++) begin : g_mul_o
    for (genvar i = 0; i < P_IN; i++) begin : g_mul_i
      always_ff @(posedge clk) begin
        if (adv)
          s2_prod[(o*P_IN+i)*PW+:PW] <= $signed(s1_x[i*IW+:IW]) * $signed(s1_w[(o*P_IN+i)*WW+:WW]);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (adv) begin
      s2_first <= s1_first;
      s2_last  <= s1_last;
      s2_block <= s1_block;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // S3: sum of the P_IN products of each output; bias word of the block
  /// Sum for output lane o at [o*TW +: TW].
  logic [P_OUT*TW-1:0] s3_sum;
  /// Combinational sums feeding s3_sum.
  logic [P_OUT*TW-1:0] sum_d;
  logic s3_valid, s3_first, s3_last;
  /// Bias word of the block in S3 (lane o = b[ob*P_OUT + o]).
  logic [P_OUT*BW-1:0] s3_bias;

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

  if (HAS_BIAS != 0) begin : g_bias
    /// Bias ROM: word ob, lane o = b[ob*P_OUT + o].
    logic [P_OUT*BW-1:0] b_rom[NOB];
    if (BIAS_MEM_FILE != "") begin : g_b_file
      initial $readmemh(BIAS_MEM_FILE, b_rom);
    end else begin : g_b_zero
      initial for (int k = 0; k < NOB; k++) b_rom[k] = '0;
    end
    always_ff @(posedge clk) begin
      if (adv) s3_bias <= b_rom[s2_block];
    end
  end else begin : g_no_bias
    assign s3_bias = '0;
    /// Without bias the block index and the (zero) bias word are not needed.
    logic unused_no_bias;
    assign unused_no_bias = ^{s2_block, s3_bias};
  end

  // ---------------------------------------------------------------------------------------------
  // S4: exact accumulation (starting from the aligned bias)
  /// Accumulator of output lane o at [o*AW +: AW].
  logic [P_OUT*AW-1:0] acc;
  /// S4 holds the finished sums of a block.
  logic s4_valid;

  for (genvar o = 0; o < P_OUT; o++) begin : g_acc
    /// Aligned bias and aligned product sum.
    logic [AW-1:0] bias_al, sum_al;
    if (HAS_BIAS != 0) begin : g_b
      assign bias_al = AW'($signed(s3_bias[o*BW+:BW])) << SB;
    end else begin : g_nb
      assign bias_al = '0;
    end
    assign sum_al = AW'($signed(s3_sum[o*TW+:TW])) << SP;
    always_ff @(posedge clk) begin
      if (adv && s3_valid) acc[o*AW+:AW] <= (s3_first ? bias_al : acc[o*AW+:AW]) + sum_al;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      s1_valid <= 1'b0;
      s2_valid <= 1'b0;
      s3_valid <= 1'b0;
      s4_valid <= 1'b0;
    end else if (adv) begin
      s1_valid <= bank_full[rd_bank];
      s2_valid <= s1_valid;
      s3_valid <= s2_valid;
      s4_valid <= s3_valid && s3_last;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Output: ReLU, cast, skid buffer
  /// Cast outputs of the block in S4.
  logic [P_OUT*OW-1:0] y;

  for (genvar o = 0; o < P_OUT; o++) begin : g_out
    /// Sum after the optional ReLU.
    logic [AW-1:0] pre;
    assign pre = (FUSED_RELU != 0 && acc[o*AW+AW-1]) ? '0 : acc[o*AW+:AW];
    mase_cast_core #(
        .IN_WIDTH  (AW),
        .IN_FRAC   (AF),
        .IN_SIGNED (1),
        .OUT_WIDTH (OW),
        .OUT_FRAC  (DATA_OUT_0_PRECISION_1),
        .OUT_SIGNED(1),
        .ROUNDING  (DATA_OUT_0_ROUNDING),
        .OVERFLOW  (DATA_OUT_0_OVERFLOW)
    ) u_cast (
        .data_in (pre),
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
  // Handshake: an offered output beat stays offered and unchanged until taken.
  a_out_stable :
  assert property (@(posedge clk) disable iff (rst)
      data_out_0_valid && !data_out_0_ready |=> data_out_0_valid && $stable(data_out_0))
  else $error("mase_linear: data_out_0 changed or dropped valid while stalled");
  // The producer must keep an offered input beat offered and unchanged until taken.
  a_in_stable :
  assert property (@(posedge clk) disable iff (rst)
      data_in_0_valid && !data_in_0_ready |=> data_in_0_valid && $stable(data_in_0))
  else $error("mase_linear: data_in_0 changed or dropped valid while stalled");
`endif
endmodule
