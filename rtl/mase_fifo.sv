// mase_fifo: first-word-fall-through FIFO of DEPTH beats plus one output register.
//
// Storage is a plain simple-dual-port memory with synchronous (registered) read, so synthesis
// infers block RAM or distributed (LUT) RAM depending on size; the memory's read register is the
// output register. Input ready comes from the occupancy register and the output data/valid from
// registers, so the FIFO cuts the data, valid and ready paths.
//   Capacity: DEPTH + 1 beats (DEPTH in the memory, one in the output register).
//   Latency:  2 cycles (write at edge t, read issued in the next cycle, valid after edge t+1).
//   II:       1 beat per cycle with no back-pressure.
//   Paths cut: data, valid, ready.
// The data word is opaque: LANES lanes of DATA_WIDTH bits, lane i at [i*DATA_WIDTH +: DATA_WIDTH].
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_fifo #(
    /// The word: LANES lanes (1..1024) of DATA_WIDTH bits (1..64).
    `MASE_WORD_PARAMS,
    /// Memory depth in beats (2..65536); total capacity is DEPTH + 1.
    parameter int DEPTH = 16
) (
    /// Clock and reset (reset empties the FIFO).
    /// data_in_0: input beats (flat packed lanes), taken while the memory is not full (ready from a
    /// register).
    /// data_out_0: output beats from the memory's read register (valid registered).
    `MASE_STAGE_PORTS(LANES * DATA_WIDTH, LANES * DATA_WIDTH)
);
`ifndef SYNTHESIS
  initial begin
    `MASE_CHECK_WORD;
    `MASE_CHECK_RANGE(DEPTH, 2, 65536);
  end
`endif

  /// Address width of the memory (kept >= 1 so that an invalid DEPTH still elaborates far enough
  /// for the parameter check above to report it).
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  /// Last address (pointers wrap after it; DEPTH need not be a power of two).
  localparam logic [AW-1:0] LAST = AW'(DEPTH - 1);
  /// Occupancy counter width (counts 0..DEPTH).
  localparam int CW = $clog2(DEPTH + 1);

  /// The storage: written at wr_ptr, read (registered) at rd_ptr.
  logic [LANES*DATA_WIDTH-1:0] mem[DEPTH];
  /// Next write address.
  logic [AW-1:0]               wr_ptr;
  /// Next read address.
  logic [AW-1:0]               rd_ptr;
  /// Beats held in the memory (not counting the output register).
  logic [CW-1:0]               count;
  /// A beat is written this cycle.
  logic                        push;
  /// A beat is read from memory into the output register this cycle.
  logic                        pop;

  assign data_in_0_ready = count != CW'(DEPTH);
  assign push = data_in_0_valid && data_in_0_ready;
  assign pop = count != '0 && (!data_out_0_valid || data_out_0_ready);

  always_ff @(posedge clk) begin
    if (push) mem[wr_ptr] <= data_in_0;
  end

  // Synchronous read with enable: the memory's output register is the FIFO's output register.
  always_ff @(posedge clk) begin
    if (pop) data_out_0 <= mem[rd_ptr];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr           <= '0;
      rd_ptr           <= '0;
      count            <= '0;
      data_out_0_valid <= 1'b0;
    end else begin
      if (push) wr_ptr <= wr_ptr == LAST ? '0 : wr_ptr + 1'b1;
      if (pop) rd_ptr <= rd_ptr == LAST ? '0 : rd_ptr + 1'b1;
      count <= count + CW'(push) - CW'(pop);
      if (pop) data_out_0_valid <= 1'b1;
      else if (data_out_0_ready) data_out_0_valid <= 1'b0;
    end
  end

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
