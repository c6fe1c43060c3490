// mase_fifo: first-word-fall-through FIFO of DEPTH beats plus one read register and, with
// OUT_REG, one output register after it and, with IN_REG, one input register before it.
//
// Storage is a plain simple-dual-port memory with synchronous (registered) read, so synthesis
// infers block RAM or distributed (LUT) RAM depending on size; the memory's read register (S1) is
// the output register unless OUT_REG. A memory deeper than one block RAM is several block RAMs
// whose reads meet in a depth mux after their output latches; without OUT_REG that mux, after the
// block RAM's slow clock-to-out, runs straight into the consumer's logic (the encoder layer's
// residual FIFO into its add). OUT_REG adds a plain register S2 after it: S1 moves into S2 when S2
// is empty or being taken, and the memory is read when S1 is empty or moving, so the two
// registers stream one beat per cycle without a skid. Input ready comes from the occupancy
// register and the output data/valid from registers, so the FIFO cuts the data, valid and ready
// paths.
// IN_REG adds a register S0 before the memory: the producer's beat lands in S0 and S0 writes the
// memory, so the producer's valid reaches only S0's valid flag and the ready register, not the
// memory's write enable, the pointers or the occupancy counter (the stitcher's join FIFOs sit
// behind a fork, whose valid arrives late), and S0's data enable is the ready register itself.
// Input ready is then a register: S0 is empty or the memory has room to take S0's beat.
// READY_REG keeps the memory's not-full and not-empty flags in registers updated from the push
// and pop, so the write and read enables (which fan out to every block RAM of a deep memory)
// follow a register and a gate instead of a compare of the occupancy counter.
//   Pipeline: [S0 input register if IN_REG ->] memory write -> S1 memory read register
//             [-> S2 output register if OUT_REG].
//   Capacity: DEPTH + 1 + OUT_REG + IN_REG beats (DEPTH in the memory, one in S1, one in S2, one
//             in S0).
//   Latency:  2 + OUT_REG + IN_REG cycles (into S0 at edge t, write at t+1, read into S1 at t+2,
//             into S2 at t+3).
//   II:       1 beat per cycle with no back-pressure.
//   Paths cut: data, valid, ready.
// The data word is opaque: LANES lanes of DATA_WIDTH bits, lane i at [i*DATA_WIDTH +: DATA_WIDTH].
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_fifo #(
    /// The word (LANES 1..1024 lanes of DATA_WIDTH 1..64 bits), DEPTH, OUT_REG, IN_REG,
    /// READY_REG and NO_RW_CHECK (mase_assert.svh). Without NO_RW_CHECK, Yosys 0.23 builds the
    /// collision bypass in block RAM on ECP5 as a register and a multiplexer per bit after the
    /// read: the multiplexer follows the block RAM's slow clock-to-out and keeps S2 out of the
    /// block RAM's output register.
    `MASE_FIFO_PARAMS
) (
    /// Clock and reset (reset empties the FIFO).
    /// data_in_0: input beats (flat packed lanes), taken while the memory is not full (ready from a
    /// register), or with IN_REG while S0 is empty or moving into the memory (ready a register).
    /// data_out_0: output beats from the memory's read register, or from S2 with OUT_REG (valid
    /// registered).
    `MASE_STAGE_PORTS(LANES * DATA_WIDTH, LANES * DATA_WIDTH)
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_WORD;
    `MASE_CHECK_RANGE(DEPTH, 2, 65536);
    `MASE_CHECK_FLAG(OUT_REG);
    `MASE_CHECK_FLAG(IN_REG);
    `MASE_CHECK_FLAG(READY_REG);
    `MASE_CHECK_FLAG(NO_RW_CHECK);
  endgenerate
`endif

  /// Address width of the memory (kept >= 1 so that an invalid DEPTH still elaborates far enough
  /// for the parameter check above to report it).
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  /// Last address (pointers wrap after it; DEPTH need not be a power of two).
  localparam logic [AW-1:0] LAST = AW'(DEPTH - 1);
  /// Occupancy counter width (counts 0..DEPTH).
  localparam int CW = $clog2(DEPTH + 1);

  /// Next write address.
  logic [AW-1:0]               wr_ptr;
  /// Next read address.
  logic [AW-1:0]               rd_ptr;
  /// Beats held in the memory (not counting S1 and S2).
  logic [CW-1:0]               count;
  /// The memory's write side: the beat offered to the memory (data_in_0, or S0 with IN_REG),
  /// its valid, and the memory's room for it (not full).
  logic [LANES*DATA_WIDTH-1:0] wr_data;
  logic                        wr_valid, wr_ready;
  /// A beat is written this cycle.
  logic                        push;
  /// A beat is read from memory into S1 this cycle.
  logic                        pop;
  /// S1: the memory's read register (in block RAM, the RAM's own output latches).
  logic [LANES*DATA_WIDTH-1:0] rd_data;
  /// S1 holds a beat.
  logic                        rd_valid;
  /// S1's beat leaves this cycle (into S2, or out of the FIFO without OUT_REG).
  logic                        advance;

  /// The memory holds a beat (occupancy not 0): a register with READY_REG, else a compare.
  logic not_empty;
  if (READY_REG != 0) begin : g_ready_reg
    /// The memory is not full (next cycle's occupancy differs from DEPTH).
    logic not_full;
    /// The memory is full / one beat short of full: compares of the occupancy register alone,
    /// so that push and pop, which arrive late through their producer's and consumer's
    /// handshakes, meet them in the last gates (next occupancy is DEPTH exactly when nothing is
    /// popped and the memory is full, a push being impossible then, or one short and pushed).
    logic at_full, at_short;
    assign at_full  = count == CW'(DEPTH);
    assign at_short = count == CW'(DEPTH - 1);
    always_ff @(posedge clk) begin
      if (rst) not_full <= 1'b1;
      else not_full <= !(!pop && (at_full || (at_short && push)));
    end
    assign wr_ready = not_full;
    /// The memory is empty / holds one beat: compares of the occupancy register alone (next
    /// occupancy is 0 exactly when nothing is pushed and the memory is empty, a pop being
    /// impossible then, or holds one and pops it). In a join FIFO over several block RAMs the
    /// compare of the counter, the pop and the routing to every block RAM's read enable were
    /// the encoder layer's critical path.
    logic at_empty, at_one;
    assign at_empty = count == '0;
    assign at_one   = count == CW'(1);
    always_ff @(posedge clk) begin
      if (rst) not_empty <= 1'b0;
      else not_empty <= !(!push && (at_empty || (at_one && pop)));
    end
  end else begin : g_ready_cmp
    assign wr_ready  = count != CW'(DEPTH);
    assign not_empty = count != '0;
  end
  assign push = wr_valid && wr_ready;

  if (IN_REG != 0) begin : g_in_reg
    /// S0's beat and valid flag.
    logic [LANES*DATA_WIDTH-1:0] s0_data;
    logic                        s0_valid;
    /// Input ready as a register: S0 will be empty or the memory will not be full next cycle
    /// (S0 then moves into the memory while it takes the next beat).
    logic                        in_ready;
    /// S0 holds a beat next cycle: one is taken now, or S0's beat stays for want of room.
    logic                        s0_valid_next;
    /// The memory is full next cycle: full and nothing popped, or one short, pushed and nothing
    /// popped (registers and the internal push/pop only: the producer's valid is not in it).
    logic                        full_next;
    assign s0_valid_next = (data_in_0_valid && in_ready) || (s0_valid && !push);
    assign full_next = !pop && (count == CW'(DEPTH) || (count == CW'(DEPTH - 1) && push));
    always_ff @(posedge clk) begin
      if (rst) begin
        s0_valid <= 1'b0;
        in_ready <= 1'b1;
      end else begin
        s0_valid <= s0_valid_next;
        in_ready <= !(s0_valid_next && full_next);
      end
    end
    // While ready, S0 is empty or moving into the memory, so it may load whatever is offered;
    // s0_valid says whether that was a beat.
    always_ff @(posedge clk) begin
      if (in_ready) s0_data <= data_in_0;
    end
    assign data_in_0_ready = in_ready;
    assign wr_data         = s0_data;
    assign wr_valid        = s0_valid;
  end else begin : g_no_in_reg
    assign data_in_0_ready = wr_ready;
    assign wr_data         = data_in_0;
    assign wr_valid        = data_in_0_valid;
  end
  assign pop = not_empty && (!rd_valid || advance);

  // Synchronous read with enable: kept apart from S2 so that synthesis maps it into the memory.
  /// The storage: written at wr_ptr, read (registered) at rd_ptr; never both at one address, so
  /// NO_RW_CHECK may spare synthesis the collision bypass.
  (* no_rw_check = NO_RW_CHECK *)
  logic [LANES*DATA_WIDTH-1:0] mem[DEPTH];
  always_ff @(posedge clk) begin
    if (push) mem[wr_ptr] <= wr_data;
  end
  always_ff @(posedge clk) begin
    if (pop) rd_data <= mem[rd_ptr];
  end

  if (OUT_REG != 0) begin : g_out_reg
    assign advance = rd_valid && (!data_out_0_valid || data_out_0_ready);

    // S2: the memory's read (after any depth mux) registered before the consumer's logic.
    always_ff @(posedge clk) begin
      if (advance) data_out_0 <= rd_data;
    end

    always_ff @(posedge clk) begin
      if (rst) data_out_0_valid <= 1'b0;
      else if (advance) data_out_0_valid <= 1'b1;
      else if (data_out_0_ready) data_out_0_valid <= 1'b0;
    end
  end else begin : g_no_out_reg
    assign advance          = rd_valid && data_out_0_ready;
    assign data_out_0       = rd_data;
    assign data_out_0_valid = rd_valid;
  end

  /// The counter one up and one down, from the register alone: push and pop, which arrive late
  /// (through the producer's valid and the consumer's ready), only select among the counter and
  /// these, and no carry chain follows them (the softmax's FIFO E: its pop ran from the
  /// reciprocal FIFO's valid through the pop's fanout into the counter's adder, 8.0 ns on ECP5).
  logic [CW-1:0] count_up, count_down;
  assign count_up   = count + 1'b1;
  assign count_down = count - 1'b1;

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr           <= '0;
      rd_ptr           <= '0;
      count            <= '0;
      rd_valid         <= 1'b0;
    end else begin
      if (push) wr_ptr <= wr_ptr == LAST ? '0 : wr_ptr + 1'b1;
      if (pop) rd_ptr <= rd_ptr == LAST ? '0 : rd_ptr + 1'b1;
      if (push != pop) count <= push ? count_up : count_down;
      if (pop) rd_valid <= 1'b1;
      else if (advance) rd_valid <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  // The occupancy flags (registers with READY_REG) are the compares of the counter.
  assert property (@(posedge clk) disable iff (rst)
      not_empty == (count != '0) && wr_ready == (count != CW'(DEPTH)))
  else $error("%m: occupancy flags disagree with the counter");
`endif
  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
