// mase_skid_buffer: full-throughput register slice for a valid/ready stream.
//
// Two entries (a main register and a skid register). The output data and valid come straight
// from registers and the input ready is a register, so the slice cuts the data, valid AND ready
// combinational paths between producer and consumer.
//   Latency: 1 cycle (input beat accepted at edge t is valid at the output after edge t).
//   II:      1 beat per cycle with no back-pressure.
//   Paths cut: data, valid, ready.
// The data word is opaque: LANES lanes of DATA_WIDTH bits, lane i at [i*DATA_WIDTH +: DATA_WIDTH].
module mase_skid_buffer #(
    /// Bits per lane (1..64).
    parameter int DATA_WIDTH = 8,
    /// Lanes per beat (1..1024); the data ports are LANES*DATA_WIDTH bits wide.
    parameter int LANES = 1
) (
    /// Clock.
    input  logic                        clk,
    /// Synchronous active-high reset: empties the slice.
    input  logic                        rst,
    /// Input beat (flat packed lanes).
    input  logic [LANES*DATA_WIDTH-1:0] data_in_0,
    /// Input beat valid.
    input  logic                        data_in_0_valid,
    /// Slice can accept a beat (registered: the skid register is empty).
    output logic                        data_in_0_ready,
    /// Output beat (registered).
    output logic [LANES*DATA_WIDTH-1:0] data_out_0,
    /// Output beat valid (registered).
    output logic                        data_out_0_valid,
    /// Consumer accepts the output beat.
    input  logic                        data_out_0_ready
);
`ifndef SYNTHESIS
  initial begin
    if (DATA_WIDTH < 1 || DATA_WIDTH > 64)
      $fatal(1, "DATA_WIDTH must be between 1 and 64, got %0d", DATA_WIDTH);
    if (LANES < 1 || LANES > 1024) $fatal(1, "LANES must be between 1 and 1024, got %0d", LANES);
  end
`endif

  /// Skid register: holds the beat that arrived while the output was stalled.
  logic [LANES*DATA_WIDTH-1:0] skid_data;
  /// Skid register occupied.
  logic                        skid_valid;

  assign data_in_0_ready = !skid_valid;

  always_ff @(posedge clk) begin
    if (rst) begin
      data_out_0_valid <= 1'b0;
      skid_valid       <= 1'b0;
    end else if (!data_out_0_valid || data_out_0_ready) begin
      // Output register free (or drained this cycle): refill from the skid, else from the input.
      if (skid_valid) begin
        data_out_0_valid <= 1'b1;
        skid_valid       <= 1'b0;
      end else begin
        data_out_0_valid <= data_in_0_valid;
      end
    end else if (data_in_0_valid && !skid_valid) begin
      // Output stalled and a beat arrives: park it in the skid register.
      skid_valid <= 1'b1;
    end
  end

  // Data registers carry no reset (cheaper; validity is tracked by the valid flags).
  always_ff @(posedge clk) begin
    if (!data_out_0_valid || data_out_0_ready) begin
      data_out_0 <= skid_valid ? skid_data : data_in_0;
    end
    if (data_in_0_valid && data_in_0_ready && data_out_0_valid && !data_out_0_ready) begin
      skid_data <= data_in_0;
    end
  end

`ifndef SYNTHESIS
  // Handshake: an offered output beat stays offered and unchanged until taken.
  property p_out_stable;
    @(posedge clk) disable iff (rst) data_out_0_valid && !data_out_0_ready |=>
      data_out_0_valid && $stable(data_out_0);
  endproperty
  a_out_stable : assert property (p_out_stable)
  else $error("mase_skid_buffer: data_out_0 changed or dropped valid while stalled");
`endif
endmodule
