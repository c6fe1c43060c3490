// mase_pingpong_buffer: two-bank (double-buffered) memory between a writing stream and a reader
// that walks each completed bank in its own order.
//
// A unit (a row, a tensor, a block of weights) is WORDS beats of the input stream. The stream
// fills one bank while the reader reads the other, so writer and reader both move one word per
// cycle; a bank becomes readable when its last word is written and free again when the reader
// releases it. mase_linear and mase_matmul keep activation rows (and mase_matmul the B operand)
// here, mase_transpose whole tensors.
//   Write: beat wr_index (0..WORDS-1, counted here) of a unit goes to word wr_addr of the bank
//          being filled; a writer in arrival order connects wr_index to wr_addr.
//   Read:  rd_data is the registered (synchronous-read) word rd_addr of the read bank, loaded when
//          rd_en; rd_full says the read bank holds a complete unit; rd_release (with the last read
//          of the unit) frees the bank and moves the reader to the other one.
//   Ready: data_in_0_ready is a register function (the bank-full flags), so no combinational
//          path runs from the reader to the writer.
// Memory: 2 * 2^ceil(log2(WORDS)) words of WIDTH bits, bank b word w at {b, w} (1 write and 1
// synchronous read port: block or distributed RAM).
// Collisions: a write and a read of the same word in one cycle return the word's old value, so
// Yosys puts a bypass in front of a block RAM's read data (synth_ecp5, 32 x 256 words: +75 FF,
// +51 LUT, and the read no longer ends at a register the flow can fold into the block RAM's
// output register). NO_RW_CHECK = 1 drops it for a caller that uses rd_data only from reads made
// while rd_full, which never collide with a write: a write needs !full[wr_bank] (the ready), the
// read's bank is full (full[rd_bank]), both flags read in the same cycle, so the write goes to the
// other bank (wr_bank != rd_bank) and a colliding read is one whose word the caller discards.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_pingpong_buffer #(
    /// Bits per word (the parent checks its parameters; this primitive has no checks of its own,
    /// so an invalid parent elaborates far enough to print the parent's message).
    parameter int WIDTH = 8,
    /// Words per unit, i.e. per bank.
    parameter int WORDS = 4,
    /// 1: the caller uses rd_data only from reads made while rd_full, and the memory skips the
    /// read-during-write check (no bypass: see Collisions above); 0: a colliding read returns
    /// the old word. Only synthesis reads it (the memory's attribute), so Verilator sees no use.
    /* verilator lint_off UNUSEDPARAM */
    parameter int NO_RW_CHECK = 0,
    /* verilator lint_on UNUSEDPARAM */
    /// Address width of a bank (derived; at least 1 bit).
    localparam int AW = WORDS > 1 ? $clog2(WORDS) : 1
) (
    /// Clock and reset (reset empties both banks).
    `MASE_CLOCK_PORTS,
    /// Write stream: one word of a unit per beat, taken when the bank being filled has room
    /// (registered flags).
    `MASE_STREAM_IN(data_in_0, WIDTH),
    /// Number of the offered beat within its unit (registered counter).
    output logic [   AW-1:0] wr_index,
    /// Word of the bank being filled that the offered beat goes to.
    input  logic [   AW-1:0] wr_addr,
    /// The read bank holds a complete unit.
    output logic             rd_full,
    /// Word of the read bank to read.
    input  logic [   AW-1:0] rd_addr,
    /// Load rd_data with word rd_addr of the read bank.
    input  logic             rd_en,
    /// The word read (register).
    output logic [WIDTH-1:0] rd_data,
    /// The reader issues its last read of the unit: free the read bank, switch to the other one.
    input  logic             rd_release
);
  /// Two banks, bank b word w at {b, w}; no_rw_check as NO_RW_CHECK says.
  (* no_rw_check = NO_RW_CHECK *) logic [WIDTH-1:0] mem[2**(AW+1)];
  /// Bank being filled, bank being read.
  logic wr_bank, rd_bank;
  /// Bank b holds a complete unit not yet released.
  logic [1:0] full;
  /// A beat is written; it is the last beat of its unit.
  logic wr_fire, wr_last;

  assign data_in_0_ready = !full[wr_bank];
  assign rd_full = full[rd_bank];
  assign wr_fire = data_in_0_valid && data_in_0_ready;
  assign wr_last = wr_index == AW'(WORDS - 1);

  always_ff @(posedge clk) begin
    if (wr_fire) mem[{wr_bank, wr_addr}] <= data_in_0;
  end

  always_ff @(posedge clk) begin
    if (rd_en) rd_data <= mem[{rd_bank, rd_addr}];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_bank  <= 1'b0;
      wr_index <= '0;
      rd_bank  <= 1'b0;
      full     <= '0;
    end else begin
      if (wr_fire) begin
        wr_index <= wr_last ? '0 : wr_index + 1'b1;
        if (wr_last) wr_bank <= !wr_bank;
      end
      if (rd_release) rd_bank <= !rd_bank;
      for (int b = 0; b < 2; b++) begin
        if (wr_fire && wr_last && wr_bank == b[0]) full[b] <= 1'b1;
        else if (rd_release && rd_bank == b[0]) full[b] <= 1'b0;
      end
    end
  end

  // Handshake: the writer keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
endmodule
