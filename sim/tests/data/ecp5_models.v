// Behavioural models of the ECP5 block RAM (DP16KD) and multiplier (MULT18X18D) for the
// equivalence check of the netlist pass sim/src/bram_outreg.rs (sim/tests/bram_outreg.rs):
// Yosys 0.23 ships DP16KD only as a shell of parameters and MULT18X18D as a blackbox.
//
// DP16KD follows the semantics of Lattice's DP16KC/DP16KD simulation model for what the pass
// changes. Per read port x (A and B; in the 36-bit mode, B for all 36 outputs):
//  - the data latch loads on the port's clock edge when CEx is high (and CSx matches CSDECODE_x):
//    the word read, or on a write of the same port per WRITEMODE_x (NORMAL holds, WRITETHROUGH
//    takes the new data, READBEFOREWRITE the old); RSTx clears it (at the clock edge, ungated,
//    with RESETMODE SYNC; at once with ASYNC); it powers up to 0;
//  - with REGMODE_x = "OUTREG" an output register loads the latch on the same clock edge when
//    OCEx is high, whatever CEx; RSTx clears it (with OCEx when SYNC); it powers up to 0. With
//    NOREG there is no such register (none is generated, so an equivalence check cannot pair a
//    folded netlist's register with an unused one in the original);
//  - DOx is the output register in OUTREG, else the latch; in the 36-bit mode REGMODE_A picks
//    the register of the DOA half, which is clocked by CLKB with OCEB and RSTB (Lattice's DOAB).
// A pin's xMUX parameter is its name (plain), "INV", or a constant "0"/"1", as nextpnr sets them.
// The array is 1024 rows of 18 bits, INITVAL_kk holding rows 16kk..16kk+15 at 20 bits each (one
// initial loop per parameter: slicing one 20480-bit constant 1024 times elaborates slowly); a
// port narrower than 18 bits addresses a field of row AD[13:4] laid out as Lattice's model does
// (in the 1-, 2- and 4-bit modes a parity bit after every 8 data bits is skipped). Everything
// but the output register is the same in both netlists a check compares, so the rest only has
// to be deterministic; it is modelled plainly rather than exhaustively.
module DP16KD(
	input DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0,
	input ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0,
	input CEA, OCEA, CLKA, WEA, RSTA,
	input CSA2, CSA1, CSA0,
	output DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0,
	input DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0,
	input ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0,
	input CEB, OCEB, CLKB, WEB, RSTB,
	input CSB2, CSB1, CSB0,
	output DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0
);
	parameter DATA_WIDTH_A = 18;
	parameter DATA_WIDTH_B = 18;
	parameter REGMODE_A = "NOREG";
	parameter REGMODE_B = "NOREG";
	parameter RESETMODE = "SYNC";
	parameter ASYNC_RESET_RELEASE = "SYNC";
	parameter CSDECODE_A = "0b000";
	parameter CSDECODE_B = "0b000";
	parameter WRITEMODE_A = "NORMAL";
	parameter WRITEMODE_B = "NORMAL";
	parameter CEAMUX = "CEA";
	parameter CEBMUX = "CEB";
	parameter OCEAMUX = "OCEA";
	parameter OCEBMUX = "OCEB";
	parameter CLKAMUX = "CLKA";
	parameter CLKBMUX = "CLKB";
	parameter WEAMUX = "WEA";
	parameter WEBMUX = "WEB";
	parameter RSTAMUX = "RSTA";
	parameter RSTBMUX = "RSTB";
	parameter GSR = "ENABLED";
	parameter WID = 0;
	parameter INIT_DATA = "STATIC";
	parameter INITVAL_00 = 320'h0;
	parameter INITVAL_01 = 320'h0;
	parameter INITVAL_02 = 320'h0;
	parameter INITVAL_03 = 320'h0;
	parameter INITVAL_04 = 320'h0;
	parameter INITVAL_05 = 320'h0;
	parameter INITVAL_06 = 320'h0;
	parameter INITVAL_07 = 320'h0;
	parameter INITVAL_08 = 320'h0;
	parameter INITVAL_09 = 320'h0;
	parameter INITVAL_0A = 320'h0;
	parameter INITVAL_0B = 320'h0;
	parameter INITVAL_0C = 320'h0;
	parameter INITVAL_0D = 320'h0;
	parameter INITVAL_0E = 320'h0;
	parameter INITVAL_0F = 320'h0;
	parameter INITVAL_10 = 320'h0;
	parameter INITVAL_11 = 320'h0;
	parameter INITVAL_12 = 320'h0;
	parameter INITVAL_13 = 320'h0;
	parameter INITVAL_14 = 320'h0;
	parameter INITVAL_15 = 320'h0;
	parameter INITVAL_16 = 320'h0;
	parameter INITVAL_17 = 320'h0;
	parameter INITVAL_18 = 320'h0;
	parameter INITVAL_19 = 320'h0;
	parameter INITVAL_1A = 320'h0;
	parameter INITVAL_1B = 320'h0;
	parameter INITVAL_1C = 320'h0;
	parameter INITVAL_1D = 320'h0;
	parameter INITVAL_1E = 320'h0;
	parameter INITVAL_1F = 320'h0;
	parameter INITVAL_20 = 320'h0;
	parameter INITVAL_21 = 320'h0;
	parameter INITVAL_22 = 320'h0;
	parameter INITVAL_23 = 320'h0;
	parameter INITVAL_24 = 320'h0;
	parameter INITVAL_25 = 320'h0;
	parameter INITVAL_26 = 320'h0;
	parameter INITVAL_27 = 320'h0;
	parameter INITVAL_28 = 320'h0;
	parameter INITVAL_29 = 320'h0;
	parameter INITVAL_2A = 320'h0;
	parameter INITVAL_2B = 320'h0;
	parameter INITVAL_2C = 320'h0;
	parameter INITVAL_2D = 320'h0;
	parameter INITVAL_2E = 320'h0;
	parameter INITVAL_2F = 320'h0;
	parameter INITVAL_30 = 320'h0;
	parameter INITVAL_31 = 320'h0;
	parameter INITVAL_32 = 320'h0;
	parameter INITVAL_33 = 320'h0;
	parameter INITVAL_34 = 320'h0;
	parameter INITVAL_35 = 320'h0;
	parameter INITVAL_36 = 320'h0;
	parameter INITVAL_37 = 320'h0;
	parameter INITVAL_38 = 320'h0;
	parameter INITVAL_39 = 320'h0;
	parameter INITVAL_3A = 320'h0;
	parameter INITVAL_3B = 320'h0;
	parameter INITVAL_3C = 320'h0;
	parameter INITVAL_3D = 320'h0;
	parameter INITVAL_3E = 320'h0;
	parameter INITVAL_3F = 320'h0;

	localparam PDP = DATA_WIDTH_A == 36 && DATA_WIDTH_B == 36;

	// A pin behind its mux.
	function pin(input [8*8-1:0] mux, input [8*8-1:0] name, input v);
		pin = mux == "INV" ? ~v : mux == "0" ? 1'b0 : mux == "1" ? 1'b1 : v;
	endfunction
	// "0bXYZ" as 3 bits.
	function [2:0] decode(input [8*5-1:0] s);
		decode = {s[23:16] == "1", s[15:8] == "1", s[7:0] == "1"};
	endfunction
	// The bit offset in its row of a W-bit field (W < 18) at address pins `ad`.
	function [4:0] offset(input integer w, input [13:0] ad);
		offset = w == 9 ? 9 * ad[3] : w == 4 ? 4 * ad[3:2] + ad[3] : w == 2 ? 2 * ad[3:1] + ad[3] : ad[3:0] + ad[3];
	endfunction

	wire clka = pin(CLKAMUX, "CLKA", CLKA), clkb = pin(CLKBMUX, "CLKB", CLKB);
	wire cea = pin(CEAMUX, "CEA", CEA) && {CSA2, CSA1, CSA0} == decode(CSDECODE_A);
	wire ceb = pin(CEBMUX, "CEB", CEB) && {CSB2, CSB1, CSB0} == decode(CSDECODE_B);
	wire ocea = pin(OCEAMUX, "OCEA", OCEA), oceb = pin(OCEBMUX, "OCEB", OCEB);
	wire wea = pin(WEAMUX, "WEA", WEA), web = pin(WEBMUX, "WEB", WEB);
	wire rsta = pin(RSTAMUX, "RSTA", RSTA), rstb = pin(RSTBMUX, "RSTB", RSTB);
	wire [17:0] dia = {DIA17, DIA16, DIA15, DIA14, DIA13, DIA12, DIA11, DIA10, DIA9, DIA8, DIA7, DIA6, DIA5, DIA4, DIA3, DIA2, DIA1, DIA0}, dib = {DIB17, DIB16, DIB15, DIB14, DIB13, DIB12, DIB11, DIB10, DIB9, DIB8, DIB7, DIB6, DIB5, DIB4, DIB3, DIB2, DIB1, DIB0};
	wire [13:0] ada = {ADA13, ADA12, ADA11, ADA10, ADA9, ADA8, ADA7, ADA6, ADA5, ADA4, ADA3, ADA2, ADA1, ADA0}, adb = {ADB13, ADB12, ADB11, ADB10, ADB9, ADB8, ADB7, ADB6, ADB5, ADB4, ADB3, ADB2, ADB1, ADB0};

	reg [17:0] mem [0:1023];
	integer r;
	initial for (r = 0; r < 16; r = r + 1) mem[0 + r] = INITVAL_00[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[16 + r] = INITVAL_01[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[32 + r] = INITVAL_02[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[48 + r] = INITVAL_03[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[64 + r] = INITVAL_04[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[80 + r] = INITVAL_05[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[96 + r] = INITVAL_06[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[112 + r] = INITVAL_07[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[128 + r] = INITVAL_08[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[144 + r] = INITVAL_09[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[160 + r] = INITVAL_0A[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[176 + r] = INITVAL_0B[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[192 + r] = INITVAL_0C[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[208 + r] = INITVAL_0D[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[224 + r] = INITVAL_0E[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[240 + r] = INITVAL_0F[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[256 + r] = INITVAL_10[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[272 + r] = INITVAL_11[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[288 + r] = INITVAL_12[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[304 + r] = INITVAL_13[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[320 + r] = INITVAL_14[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[336 + r] = INITVAL_15[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[352 + r] = INITVAL_16[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[368 + r] = INITVAL_17[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[384 + r] = INITVAL_18[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[400 + r] = INITVAL_19[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[416 + r] = INITVAL_1A[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[432 + r] = INITVAL_1B[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[448 + r] = INITVAL_1C[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[464 + r] = INITVAL_1D[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[480 + r] = INITVAL_1E[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[496 + r] = INITVAL_1F[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[512 + r] = INITVAL_20[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[528 + r] = INITVAL_21[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[544 + r] = INITVAL_22[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[560 + r] = INITVAL_23[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[576 + r] = INITVAL_24[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[592 + r] = INITVAL_25[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[608 + r] = INITVAL_26[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[624 + r] = INITVAL_27[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[640 + r] = INITVAL_28[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[656 + r] = INITVAL_29[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[672 + r] = INITVAL_2A[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[688 + r] = INITVAL_2B[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[704 + r] = INITVAL_2C[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[720 + r] = INITVAL_2D[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[736 + r] = INITVAL_2E[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[752 + r] = INITVAL_2F[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[768 + r] = INITVAL_30[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[784 + r] = INITVAL_31[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[800 + r] = INITVAL_32[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[816 + r] = INITVAL_33[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[832 + r] = INITVAL_34[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[848 + r] = INITVAL_35[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[864 + r] = INITVAL_36[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[880 + r] = INITVAL_37[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[896 + r] = INITVAL_38[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[912 + r] = INITVAL_39[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[928 + r] = INITVAL_3A[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[944 + r] = INITVAL_3B[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[960 + r] = INITVAL_3C[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[976 + r] = INITVAL_3D[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[992 + r] = INITVAL_3E[r * 20 +: 18];
	initial for (r = 0; r < 16; r = r + 1) mem[1008 + r] = INITVAL_3F[r * 20 +: 18];

	generate if (PDP) begin : pdp
		// Writes from port A: 36 bits {DIB, DIA} at ADA[13:5], byte enables ADA[3:0].
		wire [9:0] wrow = {ada[13:5], 1'b0};
		always @(posedge clka)
			if (cea) begin
				if (ada[0]) mem[wrow][8:0] <= dia[8:0];
				if (ada[1]) mem[wrow][17:9] <= dia[17:9];
				if (ada[2]) mem[wrow | 1][8:0] <= dib[8:0];
				if (ada[3]) mem[wrow | 1][17:9] <= dib[17:9];
			end
		wire [35:0] word = {mem[{adb[13:5], 1'b1}], mem[{adb[13:5], 1'b0}]};
		reg [35:0] latch = 0;
		if (RESETMODE == "ASYNC") begin
			always @(posedge clkb, posedge rstb)
				if (rstb) latch <= 0; else if (ceb) latch <= word;
		end else begin
			always @(posedge clkb)
				if (rstb) latch <= 0; else if (ceb) latch <= word;
		end
		wire [35:0] out;
		if (REGMODE_A == "OUTREG" || REGMODE_B == "OUTREG") begin : outreg
			reg [35:0] q = 0;
			if (RESETMODE == "ASYNC") begin
				always @(posedge clkb, posedge rstb)
					if (rstb) q <= 0; else if (oceb) q <= latch;
			end else begin
				always @(posedge clkb)
					if (oceb) q <= rstb ? 36'd0 : latch;
			end
			assign out = {REGMODE_B == "OUTREG" ? q[35:18] : latch[35:18], REGMODE_A == "OUTREG" ? q[17:0] : latch[17:0]};
		end else begin
			assign out = latch;
		end
		assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0, DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = out;
	end else begin : dp
		// Port A.
		reg [17:0] latch_a = 0;
		wire [9:0] row_a = ada[13:4];
		wire [4:0] off_a = DATA_WIDTH_A == 18 ? 5'd0 : offset(DATA_WIDTH_A, ada);
		wire [17:0] ones_a = DATA_WIDTH_A == 18 ? 18'h3ffff : (18'd1 << DATA_WIDTH_A) - 1;
		// In the 18-bit mode AD[1:0] are the byte enables of a write.
		wire [17:0] mask_a = DATA_WIDTH_A == 18 ? {{9{ada[1]}}, {9{ada[0]}}} : ones_a << off_a;
		wire [17:0] old_a = mem[row_a];
		wire [17:0] new_a = (old_a & ~mask_a) | ((dia << off_a) & mask_a);
		wire [17:0] next_a = !wea || WRITEMODE_A == "READBEFOREWRITE" ? (old_a >> off_a) & ones_a :
			WRITEMODE_A == "WRITETHROUGH" ? (new_a >> off_a) & ones_a : latch_a;
		always @(posedge clka)
			if (cea && wea) mem[row_a] <= new_a;
		if (RESETMODE == "ASYNC") begin
			always @(posedge clka, posedge rsta)
				if (rsta) latch_a <= 0; else if (cea) latch_a <= next_a;
		end else begin
			always @(posedge clka)
				if (rsta) latch_a <= 0; else if (cea) latch_a <= next_a;
		end
		if (REGMODE_A == "OUTREG") begin : outreg_a
			reg [17:0] q = 0;
			if (RESETMODE == "ASYNC") begin
				always @(posedge clka, posedge rsta)
					if (rsta) q <= 0; else if (ocea) q <= latch_a;
			end else begin
				always @(posedge clka)
					if (ocea) q <= rsta ? 18'd0 : latch_a;
			end
			assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = q;
		end else begin
			assign {DOA17, DOA16, DOA15, DOA14, DOA13, DOA12, DOA11, DOA10, DOA9, DOA8, DOA7, DOA6, DOA5, DOA4, DOA3, DOA2, DOA1, DOA0} = latch_a;
		end
		// Port B.
		reg [17:0] latch_b = 0;
		wire [9:0] row_b = adb[13:4];
		wire [4:0] off_b = DATA_WIDTH_B == 18 ? 5'd0 : offset(DATA_WIDTH_B, adb);
		wire [17:0] ones_b = DATA_WIDTH_B == 18 ? 18'h3ffff : (18'd1 << DATA_WIDTH_B) - 1;
		// In the 18-bit mode AD[1:0] are the byte enables of a write.
		wire [17:0] mask_b = DATA_WIDTH_B == 18 ? {{9{adb[1]}}, {9{adb[0]}}} : ones_b << off_b;
		wire [17:0] old_b = mem[row_b];
		wire [17:0] new_b = (old_b & ~mask_b) | ((dib << off_b) & mask_b);
		wire [17:0] next_b = !web || WRITEMODE_B == "READBEFOREWRITE" ? (old_b >> off_b) & ones_b :
			WRITEMODE_B == "WRITETHROUGH" ? (new_b >> off_b) & ones_b : latch_b;
		always @(posedge clkb)
			if (ceb && web) mem[row_b] <= new_b;
		if (RESETMODE == "ASYNC") begin
			always @(posedge clkb, posedge rstb)
				if (rstb) latch_b <= 0; else if (ceb) latch_b <= next_b;
		end else begin
			always @(posedge clkb)
				if (rstb) latch_b <= 0; else if (ceb) latch_b <= next_b;
		end
		if (REGMODE_B == "OUTREG") begin : outreg_b
			reg [17:0] q = 0;
			if (RESETMODE == "ASYNC") begin
				always @(posedge clkb, posedge rstb)
					if (rstb) q <= 0; else if (oceb) q <= latch_b;
			end else begin
				always @(posedge clkb)
					if (oceb) q <= rstb ? 18'd0 : latch_b;
			end
			assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = q;
		end else begin
			assign {DOB17, DOB16, DOB15, DOB14, DOB13, DOB12, DOB11, DOB10, DOB9, DOB8, DOB7, DOB6, DOB5, DOB4, DOB3, DOB2, DOB1, DOB0} = latch_b;
		end
	end endgenerate
endmodule

// MULT18X18D, only as a multiplier without registers (the mode Yosys 0.23 maps $mul to; REG_*
// and the cascade ports are ignored). The pass never touches a multiplier: both netlists of a
// check hold the same ones, so a deterministic model is all the check needs.
module MULT18X18D(
	input A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0,
	input B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0,
	input C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0,
	input SIGNEDA, SIGNEDB, SOURCEA, SOURCEB,
	input CLK0, CLK1, CLK2, CLK3,
	input CE0, CE1, CE2, CE3,
	input RST0, RST1, RST2, RST3,
	input SRIA17, SRIA16, SRIA15, SRIA14, SRIA13, SRIA12, SRIA11, SRIA10, SRIA9, SRIA8, SRIA7, SRIA6, SRIA5, SRIA4, SRIA3, SRIA2, SRIA1, SRIA0,
	input SRIB17, SRIB16, SRIB15, SRIB14, SRIB13, SRIB12, SRIB11, SRIB10, SRIB9, SRIB8, SRIB7, SRIB6, SRIB5, SRIB4, SRIB3, SRIB2, SRIB1, SRIB0,
	output SROA17, SROA16, SROA15, SROA14, SROA13, SROA12, SROA11, SROA10, SROA9, SROA8, SROA7, SROA6, SROA5, SROA4, SROA3, SROA2, SROA1, SROA0,
	output SROB17, SROB16, SROB15, SROB14, SROB13, SROB12, SROB11, SROB10, SROB9, SROB8, SROB7, SROB6, SROB5, SROB4, SROB3, SROB2, SROB1, SROB0,
	output ROA17, ROA16, ROA15, ROA14, ROA13, ROA12, ROA11, ROA10, ROA9, ROA8, ROA7, ROA6, ROA5, ROA4, ROA3, ROA2, ROA1, ROA0,
	output ROB17, ROB16, ROB15, ROB14, ROB13, ROB12, ROB11, ROB10, ROB9, ROB8, ROB7, ROB6, ROB5, ROB4, ROB3, ROB2, ROB1, ROB0,
	output ROC17, ROC16, ROC15, ROC14, ROC13, ROC12, ROC11, ROC10, ROC9, ROC8, ROC7, ROC6, ROC5, ROC4, ROC3, ROC2, ROC1, ROC0,
	output P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0,
	output SIGNEDP
);
	parameter REG_INPUTA_CLK = "NONE";
	parameter REG_INPUTA_CE = "CE0";
	parameter REG_INPUTA_RST = "RST0";
	parameter REG_INPUTB_CLK = "NONE";
	parameter REG_INPUTB_CE = "CE0";
	parameter REG_INPUTB_RST = "RST0";
	parameter REG_INPUTC_CLK = "NONE";
	parameter REG_INPUTC_CE = "CE0";
	parameter REG_INPUTC_RST = "RST0";
	parameter REG_PIPELINE_CLK = "NONE";
	parameter REG_PIPELINE_CE = "CE0";
	parameter REG_PIPELINE_RST = "RST0";
	parameter REG_OUTPUT_CLK = "NONE";
	parameter REG_OUTPUT_CE = "CE0";
	parameter REG_OUTPUT_RST = "RST0";
	parameter CLK0_DIV = "ENABLED";
	parameter CLK1_DIV = "ENABLED";
	parameter CLK2_DIV = "ENABLED";
	parameter CLK3_DIV = "ENABLED";
	parameter HIGHSPEED_CLK = "NONE";
	parameter GSR = "ENABLED";
	parameter CAS_MATCH_REG = "FALSE";
	parameter SOURCEB_MODE = "B_SHIFT";
	parameter MULT_BYPASS = "DISABLED";
	parameter RESETMODE = "SYNC";
	wire [17:0] a = {A17, A16, A15, A14, A13, A12, A11, A10, A9, A8, A7, A6, A5, A4, A3, A2, A1, A0}, b = {B17, B16, B15, B14, B13, B12, B11, B10, B9, B8, B7, B6, B5, B4, B3, B2, B1, B0};
	wire signed [35:0] sa = SIGNEDA ? {{18{a[17]}}, a} : {18'd0, a};
	wire signed [35:0] sb = SIGNEDB ? {{18{b[17]}}, b} : {18'd0, b};
	wire [35:0] p = sa * sb;
	assign {P35, P34, P33, P32, P31, P30, P29, P28, P27, P26, P25, P24, P23, P22, P21, P20, P19, P18, P17, P16, P15, P14, P13, P12, P11, P10, P9, P8, P7, P6, P5, P4, P3, P2, P1, P0} = p;
	assign {ROA17, ROA16, ROA15, ROA14, ROA13, ROA12, ROA11, ROA10, ROA9, ROA8, ROA7, ROA6, ROA5, ROA4, ROA3, ROA2, ROA1, ROA0} = a;
	assign {ROB17, ROB16, ROB15, ROB14, ROB13, ROB12, ROB11, ROB10, ROB9, ROB8, ROB7, ROB6, ROB5, ROB4, ROB3, ROB2, ROB1, ROB0} = b;
	assign {ROC17, ROC16, ROC15, ROC14, ROC13, ROC12, ROC11, ROC10, ROC9, ROC8, ROC7, ROC6, ROC5, ROC4, ROC3, ROC2, ROC1, ROC0} = {C17, C16, C15, C14, C13, C12, C11, C10, C9, C8, C7, C6, C5, C4, C3, C2, C1, C0};
	assign {SROA17, SROA16, SROA15, SROA14, SROA13, SROA12, SROA11, SROA10, SROA9, SROA8, SROA7, SROA6, SROA5, SROA4, SROA3, SROA2, SROA1, SROA0} = a;
	assign {SROB17, SROB16, SROB15, SROB14, SROB13, SROB12, SROB11, SROB10, SROB9, SROB8, SROB7, SROB6, SROB5, SROB4, SROB3, SROB2, SROB1, SROB0} = b;
	assign SIGNEDP = SIGNEDA | SIGNEDB;
endmodule
