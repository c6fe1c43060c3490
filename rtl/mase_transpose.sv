// mase_transpose: double-buffered reorder of a tensor stream, [A][B][C] -> [B][A][C].
//
// The input tensor has A = DATA_IN_0_TENSOR_SIZE_DIM_1 rows of DATA_IN_0_TENSOR_SIZE_DIM_0 =
// B*C elements; C = BLOCK_SIZE consecutive elements move as one unit. The output tensor has
// B rows of A*C elements. Three uses (the flat element order is all that matters when
// PARALLELISM_DIM_1 = 1):
//   - plain 2-D transpose [R, Cols] -> [Cols, R]:    A = R, B = Cols, BLOCK_SIZE = 1;
//   - head split  [S, H*d] -> [H, S, d] (as [H, S*d]): A = S, B = H, BLOCK_SIZE = d;
//   - head merge  [H, S, d] (as [H, S*d]) -> [S, H*d]: A = H, B = S, BLOCK_SIZE = d.
// Beats: with BLOCK_SIZE = 1 the input streams as blocks of P1 x P0 (P1 =
// DATA_IN_0_PARALLELISM_DIM_1 rows, P0 = DATA_IN_0_PARALLELISM_DIM_0 columns) and the output as
// blocks of P0 x P1 (each input block transposed: output lane i*P1 + j = input lane j*P0 + i);
// with BLOCK_SIZE > 1, P1 = 1 and P0 divides BLOCK_SIZE, so every beat is P0 consecutive
// elements of one unit, identical in both orders.
//
// Schedule. Each input beat is one word of a two-bank memory (bank = one whole tensor of NW
// words, written in arrival order). The read side walks a bank in output order (unit index b
// outer, a middle, word k within the unit inner) while the other bank takes the next tensor, so
// input and output both move one beat per cycle. It does not wait for the whole tensor: a word
// is read as soon as it has been written (the bank is full, or the word's address is below the
// write count of the bank being filled, which is then always the read bank), so each output
// beat leaves as soon as the input beat it moves has arrived.
//   Latency: 4 cycles from the first input beat to the first output beat (word 0 leaves first):
//            write, synchronous read (S1), S2 register, output register.
//   II:      NW cycles per tensor (one beat per cycle in and out).
//   Paths cut: data_in_0_ready is a register function (bank-full flags); the word read ends at
//            a plain register (S2), not at the skid buffer's input mux; the output is the
//            register of a mase_skid_buffer (data, valid and ready all cut).
// Memory: a mase_pingpong_buffer, 2 * 2^ceil(log2(NW)) words of P0*P1*W bits, synchronous read.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_transpose #(
    /// Input: W = DATA_IN_0_PRECISION_0 bits (1..64; the element is moved, never interpreted;
    /// the fractional bits are format only); B*C elements per row (1..65536, a multiple of
    /// BLOCK_SIZE); A rows (1..65536); P0 = DATA_IN_0_PARALLELISM_DIM_0 elements per beat
    /// (1..1024; divides dim 0, or BLOCK_SIZE when > 1); P1 = DATA_IN_0_PARALLELISM_DIM_1 rows
    /// per beat (1..1024; divides dim 1; must be 1 when BLOCK_SIZE > 1).
    `MASE_TENSOR_PARAMS(DATA_IN_0, 8, 4, 8, 4, 2, 2),
    /// C: consecutive elements moved as one unit (1 = plain transpose, d = head split/merge).
    parameter int BLOCK_SIZE = 1,
    /// Output format (must equal the input's).
    `MASE_FORMAT_PARAMS(DATA_OUT_0, DATA_IN_0_PRECISION_0, DATA_IN_0_PRECISION_1),
    /// Output shape: A*C elements per row, B = dim 0 / BLOCK_SIZE rows; P1 elements and P0 rows
    /// per beat when BLOCK_SIZE = 1, else P0 elements and one row.
    `MASE_SHAPE_PARAMS(DATA_OUT_0, 4, 8, 2, 2)
) (
    /// Clock and reset (reset empties both banks and the output).
    /// data_in_0: input beats: one P1 x P0 block, lane r*P0 + c at [(r*P0+c)*W +: W], taken when
    /// the bank being written has room (registered flags).
    /// data_out_0: output beats: one block of the reordered tensor, lanes row-major (data and valid
    /// registered).
    `MASE_STAGE_PORTS(DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0,
                      DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1 * DATA_IN_0_PRECISION_0)
);
  /// Element width.
  localparam int W = DATA_IN_0_PRECISION_0;
  /// Input block shape and lanes per beat.
  localparam int P0 = DATA_IN_0_PARALLELISM_DIM_0;
  localparam int P1 = DATA_IN_0_PARALLELISM_DIM_1;
  localparam int L = P0 * P1;
  /// Unit size.
  localparam int C = BLOCK_SIZE;
  /// Units along a (block rows when C = 1), units along b, words per unit.
  localparam int NA = C == 1 ? DATA_IN_0_TENSOR_SIZE_DIM_1 / P1 : DATA_IN_0_TENSOR_SIZE_DIM_1;
  localparam int NB = C == 1 ? DATA_IN_0_TENSOR_SIZE_DIM_0 / P0 : DATA_IN_0_TENSOR_SIZE_DIM_0 / C;
  localparam int U = C == 1 ? 1 : C / P0;
  /// Words (beats) per tensor and the address width.
  localparam int NW = NA * NB * U;
  localparam int AW = NW > 1 ? $clog2(NW) : 1;
  /// Derived output shape.
  localparam int OUT_D0 = DATA_IN_0_TENSOR_SIZE_DIM_1 * C;
  localparam int OUT_D1 = DATA_IN_0_TENSOR_SIZE_DIM_0 / (C > 0 ? C : 1);
  localparam int OUT_P0 = C == 1 ? P1 : P0;
  localparam int OUT_P1 = C == 1 ? P0 : P1;

`ifndef SYNTHESIS
  generate
    `MASE_CHECK_FORMAT(DATA_IN_0, 64);
    `MASE_CHECK_RANGE(DATA_IN_0_TENSOR_SIZE_DIM_0, 1, 65536);
    `MASE_CHECK_RANGE(DATA_IN_0_TENSOR_SIZE_DIM_1, 1, 65536);
    `MASE_CHECK_RANGE(DATA_IN_0_PARALLELISM_DIM_0, 1, 1024);
    `MASE_CHECK_RANGE(DATA_IN_0_PARALLELISM_DIM_1, 1, 1024);
    `MASE_CHECK_RANGE_OF(lanes, "DATA_IN_0_PARALLELISM_DIM_0 * DATA_IN_0_PARALLELISM_DIM_1", P0 * P1,
                        1, 1024);
    `MASE_CHECK_RANGE(BLOCK_SIZE, 1, 65536);
    `MASE_CHECK_DIVIDES(BLOCK_SIZE, DATA_IN_0_TENSOR_SIZE_DIM_0);
    if (BLOCK_SIZE == 1) begin : g_element_checks
      `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_0, DATA_IN_0_TENSOR_SIZE_DIM_0);
      `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_1, DATA_IN_0_TENSOR_SIZE_DIM_1);
    end else begin : g_block_checks
      `MASE_CHECK_DIVIDES(DATA_IN_0_PARALLELISM_DIM_0, BLOCK_SIZE);
    end
    if (BLOCK_SIZE > 1 && P1 != 1) begin : g_check_DATA_IN_0_PARALLELISM_DIM_1
      $fatal(1, "DATA_IN_0_PARALLELISM_DIM_1 must be 1 when BLOCK_SIZE > 1, got %0d", P1);
    end
    `MASE_CHECK_RANGE_OF(beats, "beats per tensor", NW, 1, 1048576);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_0, DATA_IN_0_PRECISION_0);
    `MASE_CHECK_EQUAL(DATA_OUT_0_PRECISION_1, DATA_IN_0_PRECISION_1);
    `MASE_CHECK_EQUAL_TO(DATA_OUT_0_TENSOR_SIZE_DIM_0, "DATA_IN_0_TENSOR_SIZE_DIM_1 * BLOCK_SIZE",
                        OUT_D0);
    `MASE_CHECK_EQUAL_TO(DATA_OUT_0_TENSOR_SIZE_DIM_1, "DATA_IN_0_TENSOR_SIZE_DIM_0 / BLOCK_SIZE",
                        OUT_D1);
    `MASE_CHECK_EQUAL_TO(
        DATA_OUT_0_PARALLELISM_DIM_0,
        "DATA_IN_0_PARALLELISM_DIM_1 if BLOCK_SIZE = 1, else DATA_IN_0_PARALLELISM_DIM_0", OUT_P0);
    `MASE_CHECK_EQUAL_TO(
        DATA_OUT_0_PARALLELISM_DIM_1,
        "DATA_IN_0_PARALLELISM_DIM_0 if BLOCK_SIZE = 1, else DATA_IN_0_PARALLELISM_DIM_1", OUT_P1);
  endgenerate
`endif

  /// The read pipeline advances: the output skid buffer can take a beat.
  logic adv;

  // ---------------------------------------------------------------------------------------------
  // Read side: address = a*NB*U + b*U + k, walked with b outer, a middle, k inner
  /// Counters of the word being issued.
  logic [AW-1:0] rd_k, rd_a, rd_b;
  /// Its address and the address of unit (a = 0, b) word 0.
  logic [AW-1:0] rd_addr, rd_base;
  /// The read bank holds a complete tensor; the word at rd_addr has been written; a word is
  /// issued this cycle; counters at their last value; the last word of the bank is issued.
  logic rd_full, rd_avail, issue, k_last, a_last, b_last, rd_done;
  /// Number of the arriving beat within its tensor (its word in the bank being filled).
  logic [AW-1:0] wr_addr;

  // A bank that is not full is the one being filled (the writer leaves a bank only when it is
  // full, and the reader releases it only after reading its last word, the last one written), so
  // its words below wr_addr are written. The last word in read order is word NW - 1, read only
  // once the bank is full.
  assign rd_avail = rd_full || rd_addr < wr_addr;
  assign issue = rd_avail && adv;
  assign k_last = rd_k == AW'(U - 1);
  assign a_last = rd_a == AW'(NA - 1);
  assign b_last = rd_b == AW'(NB - 1);
  assign rd_done = issue && k_last && a_last && b_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_k    <= '0;
      rd_a    <= '0;
      rd_b    <= '0;
      rd_addr <= '0;
      rd_base <= '0;
    end else if (issue) begin
      if (!k_last) begin
        rd_k    <= rd_k + 1'b1;
        rd_addr <= rd_addr + 1'b1;
      end else begin
        rd_k <= '0;
        if (!a_last) begin
          rd_a    <= rd_a + 1'b1;
          rd_addr <= rd_addr - AW'(U - 1) + AW'(NB * U);
        end else begin
          rd_a <= '0;
          if (!b_last) begin
            rd_b    <= rd_b + 1'b1;
            rd_base <= rd_base + AW'(U);
            rd_addr <= rd_base + AW'(U);
          end else begin
            rd_b    <= '0;
            rd_base <= '0;
            rd_addr <= '0;
          end
        end
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Two banks of one tensor each, written in arrival order
  /// S1: the word read (synchronous read, held while the pipeline waits).
  logic [L*W-1:0] s1_word;
  logic s1_valid;

  // No read-during-write check: a read whose word is used (rd_avail) never meets a write to its
  // address. Either its bank is full, so the writer (which needs a bank that is not full) is in
  // the other bank, or it reads a word below wr_addr of the bank being filled while the write
  // goes to wr_addr. A read made without rd_avail is discarded (s1_valid low) and repeated.
  mase_pingpong_buffer #(
      .WIDTH(L * W),
      .WORDS(NW),
      .NO_RW_CHECK(1)
  ) u_banks (
      .clk            (clk),
      .rst            (rst),
      `MASE_PASS_STREAM(data_in_0),
      .wr_index       (wr_addr),
      .wr_addr        (wr_addr),
      .rd_full        (rd_full),
      .rd_addr        (rd_addr),
      .rd_en          (adv),
      .rd_data        (s1_word),
      .rd_release     (rd_done)
  );

  `MASE_VALID_REG(s1_valid, adv, rd_avail)

  /// S1 word with the block transposed: output lane i*P1 + j = input lane j*P0 + i.
  logic [L*W-1:0] s1_out;
  for (genvar i = 0; i < P0; i++) begin : g_i
    for (genvar j = 0; j < P1; j++) begin : g_j
      assign s1_out[(i*P1+j)*W+:W] = s1_word[(j*P0+i)*W+:W];
    end
  end

  // ---------------------------------------------------------------------------------------------
  // S2: the word read, registered once more before the output skid buffer. A block RAM's read
  // register is slow to its output (DP16KD: 5.8 ns clock-to-out without its output register)
  // and the banks may sit far from the skid buffer, whose input mux (skid or new beat) then
  // ended the path: the encoder layer's critical path (88.6 MHz). S2 is a plain register the
  // placer keeps next to the block RAM. It advances with the rest of the pipeline, so ready
  // stays the skid buffer's register.
  /// S2: the transposed word and its valid bit.
  logic [L*W-1:0] s2_out;
  logic s2_valid;

  always_ff @(posedge clk) begin
    if (adv) s2_out <= s1_out;
  end

  `MASE_VALID_REG(s2_valid, adv, s1_valid)

  `MASE_OUTPUT_SKID(W, L, s2_out, s2_valid, adv);

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
