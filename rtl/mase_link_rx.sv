// mase_link_rx: the receiving end of an inter-device link. Reassembles the flits mase_link_tx
// sends (LINK_WIDTH bits per cycle, lowest beat bits first, FLITS = ceil(LANES*DATA_WIDTH /
// LINK_WIDTH) per beat) into beats, buffers up to DEPTH beats and offers them as a valid/ready
// stream; each beat that leaves the buffer returns one credit to the sender.
//
// The sender holds DEPTH credits and spends one per beat, so at most DEPTH beats are ever in
// flight or buffered: the buffer (a mase_wide_fifo of max(DEPTH, 3) beats: a memory of
// max(DEPTH - 1, 2) words plus its output register) always has room for an arriving beat, which
// an assertion checks.
//   Latency: 2 cycles from the last flit of a beat at the input to the beat valid at the output
//            (the FIFO's); the credit pulse follows the beat's handshake by 1 cycle.
//   II:      1 beat per FLITS cycles (the link's rate); the output side runs at 1 beat per cycle.
//   Paths cut: data, valid and ready of data_out_0 (FIFO registers); `link_credit` registered.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_link_rx #(
    /// The beat, LANES lanes (1..1024) of DATA_WIDTH bits (1..64), and LINK_WIDTH, the bits the
    /// link carries per cycle (1..65536).
    `MASE_LINK_WORD_PARAMS,
    /// Beats buffered (1..65536); the sender's CREDITS must equal it.
    parameter int DEPTH = 8
) (
    /// Clock and reset (reset drops a partly received beat and empties the buffer).
    `MASE_CLOCK_PORTS,
    /// The flit on the link this cycle.
    input logic [LINK_WIDTH-1:0] link_data,
    /// `link_data` carries a flit this cycle.
    input logic link_valid,
    /// One-cycle pulse (registered): one beat left the buffer, its slot is free again.
    output logic link_credit,
    /// Reassembled beats (flat packed lanes) from the buffer's output register (data and valid
    /// registered).
    `MASE_STREAM_OUT(data_out_0, LANES * DATA_WIDTH)
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_LINK_WORD;
    `MASE_CHECK_RANGE(DEPTH, 1, 65536);
  endgenerate
`endif

  /// The flit arithmetic of both ends: BW bits per beat, FLITS flits per beat, PW padded bits,
  /// FW flit counter bits.
  `MASE_LINK_FLITS
  /// Memory words of the buffer FIFO: with its output register it holds max(DEPTH, 3) beats
  /// (mase_fifo needs at least 2 words).
  localparam int MEM_DEPTH = DEPTH > 3 ? DEPTH - 1 : 2;

  /// Index of the next flit of the beat being received.
  logic [FW-1:0] flit;
  /// The last flit of a beat arrives this cycle: the whole beat is pushed into the buffer.
  logic          beat_done;
  /// The beat completed by this cycle's flit: the earlier flits and this one, padding dropped.
  logic [BW-1:0] beat;
  /// The buffer can take a beat (the credit protocol guarantees it whenever a beat completes).
  logic          buf_ready;

  assign beat_done = link_valid && flit == FW'(FLITS - 1);

  if (FLITS > 1) begin : g_assemble
    /// Flits 0..FLITS-2 of the beat being received, the latest one at the top (each new flit
    /// shifts the earlier ones down, so after the last flit flit 0 sits at the bottom).
    logic [PW-LINK_WIDTH-1:0] held;
    /// This cycle's flit on top of the held ones: a whole padded beat when it is the last.
    logic [PW-1:0] whole;
    assign whole = {link_data, held};
    // Padding bits of the last flit are never part of a beat.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [PW-1:0] whole_unused;
    /* verilator lint_on UNUSEDSIGNAL */
    assign whole_unused = whole;
    assign beat = whole[BW-1:0];
    always_ff @(posedge clk) begin
      if (link_valid) held <= whole[PW-1:LINK_WIDTH];
    end
  end else begin : g_single
    // One flit per beat; bits above the beat are padding.
    /* verilator lint_off UNUSEDSIGNAL */
    logic [LINK_WIDTH-1:0] flit_unused;
    /* verilator lint_on UNUSEDSIGNAL */
    assign flit_unused = link_data;
    assign beat = link_data[BW-1:0];
  end

  always_ff @(posedge clk) begin
    if (rst) flit <= '0;
    else if (link_valid) flit <= beat_done ? '0 : flit + 1'b1;
  end

  mase_wide_fifo #(
      .DATA_WIDTH(DATA_WIDTH),
      .LANES     (LANES),
      .DEPTH     (MEM_DEPTH)
  ) u_buf (
      .clk             (clk),
      .rst             (rst),
      .data_in_0       (beat),
      .data_in_0_valid (beat_done),
      .data_in_0_ready (buf_ready),
      `MASE_PASS_STREAM(data_out_0)
  );

  always_ff @(posedge clk) begin
    if (rst) link_credit <= 1'b0;
    else link_credit <= data_out_0_valid && data_out_0_ready;
  end

`ifndef SYNTHESIS
  // Credit protocol: a completed beat always finds room (the sender holds at most DEPTH credits).
  assert property (@(posedge clk) disable iff (rst) beat_done |-> buf_ready)
  else $error("%m: beat arrived with the buffer full (sender holds more than DEPTH = %0d credits?)", DEPTH);
`endif

  // Handshake: the output stream keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
