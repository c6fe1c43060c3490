// mase_wide_fifo: a mase_fifo whose word may be wider than 1024 bits.
//
// The word is split into groups of at most 1024 bits (whole lanes; one lane per group when a lane
// is wider), each group kept in its own mase_fifo; the groups move in lockstep, so they behave as
// one FIFO of the whole word: the input is taken when every group has room, the head is offered
// when every group holds it. The split exists because the C++ that Verilator 5.006 emits for
// memory words wider than 1024 bits does not compile. Capacity, latency and cut paths are those
// of mase_fifo.
`ifndef MASE_ASSERT_SVH `include "mase_assert.svh" `endif
module mase_wide_fifo #(
    /// The word, DEPTH and every group's OUT_REG, IN_REG, READY_REG and NO_RW_CHECK, as mase_fifo's
    /// (the parent checks the parameters; this wrapper has no checks of its own).
    `MASE_FIFO_PARAMS
) (
    /// Clock and reset (reset empties the FIFO).
    /// data_in_0: input beats (flat packed lanes), taken when every group can accept the beat
    /// (registered in each group).
    /// data_out_0: output beats from the groups' output registers, valid when every group holds
    /// the beat.
    `MASE_STAGE_PORTS(LANES * DATA_WIDTH, LANES * DATA_WIDTH)
);
  /// Lanes per group (words of at most 1024 bits).
  localparam int G = DATA_WIDTH >= 1024 ? 1 : 1024 / DATA_WIDTH;
  /// Number of groups.
  localparam int NG = (LANES + G - 1) / G;

  /// Per-group input ready and head valid (all equal: the groups move in lockstep).
  logic [NG-1:0] in_ready_g, out_valid_g;

  for (genvar g = 0; g < NG; g++) begin : g_group
    /// Lanes of this group.
    localparam int GL = (LANES - g * G < G) ? LANES - g * G : G;
    mase_fifo #(
        .DATA_WIDTH (DATA_WIDTH),
        .LANES      (GL),
        .DEPTH      (DEPTH),
        .OUT_REG    (OUT_REG),
        .IN_REG     (IN_REG),
        .READY_REG  (READY_REG),
        .NO_RW_CHECK(NO_RW_CHECK)
    ) u_fifo (
        .clk             (clk),
        .rst             (rst),
        .data_in_0       (data_in_0[g*G*DATA_WIDTH+:GL*DATA_WIDTH]),
        .data_in_0_valid (data_in_0_valid),
        .data_in_0_ready (in_ready_g[g]),
        .data_out_0      (data_out_0[g*G*DATA_WIDTH+:GL*DATA_WIDTH]),
        .data_out_0_valid(out_valid_g[g]),
        .data_out_0_ready(data_out_0_ready)
    );
  end

  assign data_in_0_ready  = &in_ready_g;
  assign data_out_0_valid = &out_valid_g;

  // Handshake: every stream port keeps an offered beat offered and unchanged until taken.
  `MASE_ASSERT_STREAM_STABLE(data_in_0)
  `MASE_ASSERT_STREAM_STABLE(data_out_0)
endmodule
