//go:build amd64 && !purego

#include "textflag.h"

// NEXT_LANE_BLOCK takes the next run of at most 255 64-byte blocks from CX
// (blocks left, at least 1) into DX, and clears the byte lanes Y12 and Y13
// that count them: a byte lane holds up to 255.
#define NEXT_LANE_BLOCK \
	MOVQ    $255, DX; \
	CMPQ    CX, DX; \
	CMOVQLT CX, DX; \
	SUBQ    DX, CX; \
	VPXOR   Y12, Y12, Y12; \
	VPXOR   Y13, Y13, Y13

// FOLD_LANES adds the byte lanes Y12 and Y13 into the four 64-bit sums of
// Y11 (VPSADBW against Y14, which is zero).
#define FOLD_LANES \
	VPSADBW Y14, Y12, Y12; \
	VPSADBW Y14, Y13, Y13; \
	VPADDQ  Y12, Y11, Y11; \
	VPADDQ  Y13, Y11, Y11

// SUM_LANES leaves the sum of Y11's four 64-bit sums in AX (uses X9).
#define SUM_LANES \
	VEXTRACTI128 $1, Y11, X9; \
	VPADDQ       X9, X11, X11; \
	VPSHUFD      $0x4e, X11, X9; \
	VPADDQ       X9, X11, X11; \
	VMOVQ        X11, AX

// func countLinesAVX2(p *byte, n int) int
//
// Counts the newlines of p[:n] (n a positive multiple of 64) that end a
// non-empty line: the byte before is not a newline, nor a CR with a newline
// before it. It reads p[-2:n], so the caller keeps two bytes before p.
// Byte lanes count up to 255 blocks before VPSADBW folds them into 64-bit
// sums, as bytes.Count does.
TEXT ·countLinesAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $6, CX // 64-byte blocks
	MOVQ $0x0a, AX
	VMOVQ AX, X0
	VPBROADCASTB X0, Y0
	MOVQ $0x0d, AX
	VMOVQ AX, X1
	VPBROADCASTB X1, Y1
	VPXOR Y14, Y14, Y14 // zero
	VPXOR Y11, Y11, Y11 // four 64-bit sums

outer:
	TESTQ CX, CX
	JZ    end
	NEXT_LANE_BLOCK // Y12: bytes 0..31 of each block, Y13: bytes 32..63

inner:
	VMOVDQU (SI), Y2
	VMOVDQU -1(SI), Y3
	VMOVDQU -2(SI), Y4
	VPCMPEQB Y0, Y2, Y2 // newline here
	VPCMPEQB Y1, Y3, Y5 // CR one byte before
	VPCMPEQB Y0, Y3, Y3 // newline one byte before
	VPCMPEQB Y0, Y4, Y4 // newline two bytes before
	VPAND    Y5, Y4, Y4
	VPOR     Y4, Y3, Y3 // the line is empty
	VPANDN   Y2, Y3, Y3 // a newline ending a non-empty line
	VPSUBB   Y3, Y12, Y12

	VMOVDQU 32(SI), Y6
	VMOVDQU 31(SI), Y7
	VMOVDQU 30(SI), Y8
	VPCMPEQB Y0, Y6, Y6
	VPCMPEQB Y1, Y7, Y9
	VPCMPEQB Y0, Y7, Y7
	VPCMPEQB Y0, Y8, Y8
	VPAND    Y9, Y8, Y8
	VPOR     Y8, Y7, Y7
	VPANDN   Y6, Y7, Y7
	VPSUBB   Y7, Y13, Y13

	ADDQ $64, SI
	DECQ DX
	JNZ  inner

	FOLD_LANES
	JMP outer

end:
	SUM_LANES
	MOVQ AX, ret+16(FP)
	VZEROUPPER
	RET

// func probeAVX2(p *byte, start, limit int, pr *probes) (pos int, mask uint64)
//
// Scans candidate starts s = start, start+64, ... while s <= limit. For
// each block of 64 starts it computes, per start, whether all three literal
// probes match (p[s+off[i]] == val[i], i < 3) or both escape probes match
// (i = 3, 4). It returns the first block with a candidate and its mask (bit
// k: start pos+k), or the first unscanned start and a zero mask.
TEXT ·probeAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), SI
	MOVQ start+8(FP), AX
	MOVQ limit+16(FP), DI
	MOVQ pr+24(FP), BX
	VPBROADCASTB 40(BX), Y0
	VPBROADCASTB 48(BX), Y1
	VPBROADCASTB 56(BX), Y2
	VPBROADCASTB 64(BX), Y3
	VPBROADCASTB 72(BX), Y4
	MOVQ 0(BX), R8
	MOVQ 8(BX), R9
	MOVQ 16(BX), R10
	MOVQ 24(BX), R11
	MOVQ 32(BX), R12

	CMPQ AX, DI
	JGT  done

	// Each compare loads its operand itself: a fused load-compare is one
	// instruction, and the loop is bound by instructions, not by loads.
loop:
	LEAQ (SI)(AX*1), R13

	VPCMPEQB (R13)(R8*1), Y0, Y5
	VPCMPEQB (R13)(R9*1), Y1, Y6
	VPAND Y6, Y5, Y5
	VPCMPEQB (R13)(R10*1), Y2, Y6
	VPAND Y6, Y5, Y5
	VPCMPEQB (R13)(R11*1), Y3, Y7
	VPCMPEQB (R13)(R12*1), Y4, Y6
	VPAND Y6, Y7, Y7
	VPOR Y7, Y5, Y5 // starts 0..31

	VPCMPEQB 32(R13)(R8*1), Y0, Y8
	VPCMPEQB 32(R13)(R9*1), Y1, Y6
	VPAND Y6, Y8, Y8
	VPCMPEQB 32(R13)(R10*1), Y2, Y6
	VPAND Y6, Y8, Y8
	VPCMPEQB 32(R13)(R11*1), Y3, Y7
	VPCMPEQB 32(R13)(R12*1), Y4, Y6
	VPAND Y6, Y7, Y7
	VPOR Y7, Y8, Y8 // starts 32..63

	VPOR Y5, Y8, Y9
	VPTEST Y9, Y9
	JNZ  found
	ADDQ $64, AX
	CMPQ AX, DI
	JLE  loop
	JMP  done

found:
	VPMOVMSKB Y5, CX
	VPMOVMSKB Y8, DX
	SHLQ $32, DX
	ORQ  DX, CX
	MOVQ AX, pos+32(FP)
	MOVQ CX, mask+40(FP)
	VZEROUPPER
	RET

done:
	MOVQ AX, pos+32(FP)
	MOVQ $0, mask+40(FP)
	VZEROUPPER
	RET

// func countNewlinesAVX2(p *byte, n int) (count int, flagged bool)
//
// Counts the newlines of p[:n] (n a positive multiple of 64) and reports
// whether the byte before some newline is in 0x08..0x0F, which holds both
// bytes that can make a line empty ('\n' and '\r'): without such a byte
// every newline ends a non-empty line. It reads p[-1:n]. Each 32 bytes
// take two loads and six vector operations, against the three loads and
// nine of countLinesAVX2.
TEXT ·countNewlinesAVX2(SB), NOSPLIT, $0-25
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $6, CX // 64-byte blocks
	MOVQ $0x0a, AX
	VMOVQ AX, X0
	VPBROADCASTB X0, Y0 // '\n'
	MOVQ $0x07, AX
	VMOVQ AX, X1
	VPBROADCASTB X1, Y1 // low three bits
	MOVQ $0x0f, AX
	VMOVQ AX, X2
	VPBROADCASTB X2, Y2 // 0x08..0x0F once ORed with 0x07
	VPXOR Y14, Y14, Y14 // zero
	VPXOR Y11, Y11, Y11 // four 64-bit sums
	VPXOR Y10, Y10, Y10 // flags

nlouter:
	TESTQ CX, CX
	JZ    nlend
	NEXT_LANE_BLOCK // Y12: bytes 0..31 of each block, Y13: bytes 32..63

nlinner:
	VMOVDQU  (SI), Y3
	VMOVDQU  -1(SI), Y4
	VPCMPEQB Y0, Y3, Y3 // newline here
	VPOR     Y1, Y4, Y4
	VPCMPEQB Y2, Y4, Y4 // 0x08..0x0F one byte before
	VPAND    Y3, Y4, Y4
	VPOR     Y4, Y10, Y10
	VPSUBB   Y3, Y12, Y12

	VMOVDQU  32(SI), Y5
	VMOVDQU  31(SI), Y6
	VPCMPEQB Y0, Y5, Y5
	VPOR     Y1, Y6, Y6
	VPCMPEQB Y2, Y6, Y6
	VPAND    Y5, Y6, Y6
	VPOR     Y6, Y10, Y10
	VPSUBB   Y5, Y13, Y13

	ADDQ $64, SI
	DECQ DX
	JNZ  nlinner

	FOLD_LANES
	JMP nlouter

nlend:
	SUM_LANES
	MOVQ   AX, count+16(FP)
	VPTEST Y10, Y10
	SETNE  flagged+24(FP)
	VZEROUPPER
	RET
