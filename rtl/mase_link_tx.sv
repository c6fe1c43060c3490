// mase_link_tx: the sending end of an inter-device link. Serialises a valid/ready stream of beats
// (LANES lanes of DATA_WIDTH bits) onto a link of LINK_WIDTH bits per cycle, with credit-based
// flow control: the link itself has no ready.
//
// A beat is cut into FLITS = ceil(LANES*DATA_WIDTH / LINK_WIDTH) flits, lowest bits first (the
// last flit is zero-padded), sent one per cycle. The sender holds CREDITS credits, one per beat
// slot of the receiver's buffer: taking a beat spends one, a `link_credit` pulse (the receiver
// freed a slot) returns one. A beat is taken only while a credit is held, so the receiver never
// overflows.
//   Latency: 1 cycle (a beat taken in cycle t shows its first flit after edge t).
//   II:      FLITS cycles per beat; consecutive beats' flits are back to back (the next beat is
//            taken in the cycle the last flit of the current one is shown) while data and credits
//            are there.
//   Paths cut: all outputs come from registers (`link_data` is the low flit of the shift
//            register, `data_in_0_ready` is a register too).
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_link_tx #(
    /// The beat, LANES lanes (1..1024) of DATA_WIDTH bits (1..64), and LINK_WIDTH, the bits the
    /// link carries per cycle (1..65536).
    `MASE_LINK_WORD_PARAMS,
    /// Beats the receiver buffers (1..65536): the credits held after reset.
    parameter int CREDITS = 8
) (
    /// Clock and reset (reset drops the beat in flight and restores CREDITS credits).
    `MASE_CLOCK_PORTS,
    /// Beats to send (flat packed lanes), taken while a credit is held and no flit but the
    /// current beat's last is still to show (ready from registers).
    `MASE_STREAM_IN(data_in_0, LANES * DATA_WIDTH),
    /// The flit on the link this cycle (registered; lowest beat bits in the first flit).
    output logic [LINK_WIDTH-1:0] link_data,
    /// `link_data` carries a flit this cycle (registered).
    output logic link_valid,
    /// One-cycle pulse from the receiver: one beat slot was freed (one credit returns).
    input logic link_credit
);
`ifndef SYNTHESIS
  generate
    `MASE_CHECK_LINK_WORD;
    `MASE_CHECK_RANGE(CREDITS, 1, 65536);
  endgenerate
`endif

  /// The flit arithmetic of both ends: BW bits per beat, FLITS flits per beat, PW padded bits,
  /// FW flit counter bits.
  `MASE_LINK_FLITS
  /// Credit counter width (counts 0..CREDITS; kept >= 1 for an invalid CREDITS).
  localparam int CW = CREDITS > 0 ? $clog2(CREDITS + 1) : 1;

  /// The beat being sent, rotated down one flit per cycle: its low flit is `link_data`.
  logic [PW-1:0] shreg;
  /// Index of the flit shown this cycle (valid while `link_valid`).
  logic [FW-1:0] flit;
  /// Credits spent: beats taken whose slot the receiver has not freed yet (0..CREDITS).
  logic [CW-1:0] spent;
  /// A beat is taken this cycle.
  logic          take;
  /// Next `flit`.
  logic [FW-1:0] flit_next;
  /// Next `spent`.
  logic [CW-1:0] spent_next;
  /// Next `link_valid`.
  logic          valid_next;
  /// The flit shown this cycle is its beat's last (or nothing is shown).
  logic          last;

  // Ready is a register (computed from the next state), so `take` is a two-input AND: the
  // shift register's per-bit load mux stays one small LUT instead of Yosys folding the whole
  // control logic into every bit.
  assign take = data_in_0_valid && data_in_0_ready;
  assign last = !link_valid || flit == FW'(FLITS - 1);
  assign valid_next = take || !last;
  assign flit_next = take ? '0 : last ? flit : flit + 1'b1;
  assign spent_next = spent + CW'(take) - CW'(link_credit);
  assign link_data = shreg[LINK_WIDTH-1:0];

  // Rotate rather than shift in zeros: every bit is then a plain 2:1 mux (load or move one flit
  // down); a shift in of zeros becomes a synchronous reset that Yosys maps irregularly.
  always_ff @(posedge clk) begin
    if (take) shreg <= PW'(data_in_0);
    else shreg <= PW'({shreg, shreg} >> LINK_WIDTH);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      link_valid      <= 1'b0;
      flit            <= '0;
      spent           <= '0;
      data_in_0_ready <= 1'b1;
    end else begin
      link_valid      <= valid_next;
      flit            <= flit_next;
      spent           <= spent_next;
      // A beat can be taken next cycle when a credit is left and nothing but a last flit shows.
      data_in_0_ready <= spent_next != CW'(CREDITS) && (!valid_next || flit_next == FW'(FLITS - 1));
    end
  end

`ifndef SYNTHESIS
  // Credit protocol: the receiver never returns more credits than it was given.
  assert property (@(posedge clk) disable iff (rst) link_credit |-> spent != '0 || take)
  else $error("%m: credit returned while all %0d credits are held", CREDITS);
`endif

  // Handshake: the input stream keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
endmodule
