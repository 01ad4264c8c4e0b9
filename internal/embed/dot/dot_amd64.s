//go:build !purego

#include "textflag.h"

// func dotsFMA(q, v *float32, dim8, n, stride int, out *float32)
//
// out[i] = sum over j < dim8 of q[j] * v[i*stride+j], for i < n; dim8 is a
// multiple of 8. Four 8-lane accumulators over 32 values a step, then 8 a
// step. Needs AVX2 and FMA.
TEXT ·dotsFMA(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), AX
	MOVQ v+8(FP), SI
	MOVQ dim8+16(FP), CX
	MOVQ n+24(FP), BX
	MOVQ stride+32(FP), R8
	SHLQ $2, R8
	MOVQ out+40(FP), DX
	TESTQ BX, BX
	JZ    done

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   AX, R9
	MOVQ   SI, R10
	MOVQ   CX, R11
	CMPQ   R11, $32
	JL     step8

step32:
	VMOVUPS     (R9), Y4
	VMOVUPS     32(R9), Y5
	VMOVUPS     64(R9), Y6
	VMOVUPS     96(R9), Y7
	VFMADD231PS (R10), Y4, Y0
	VFMADD231PS 32(R10), Y5, Y1
	VFMADD231PS 64(R10), Y6, Y2
	VFMADD231PS 96(R10), Y7, Y3
	ADDQ        $128, R9
	ADDQ        $128, R10
	SUBQ        $32, R11
	CMPQ        R11, $32
	JGE         step32

step8:
	CMPQ        R11, $8
	JL          reduce
	VMOVUPS     (R9), Y4
	VFMADD231PS (R10), Y4, Y0
	ADDQ        $32, R9
	ADDQ        $32, R10
	SUBQ        $8, R11
	JMP         step8

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	ADDQ         R8, SI
	DECQ         BX
	JNZ          row

done:
	VZEROUPPER
	RET

// func dotsInt8FMA(q *float32, c *int8, dim8, n, stride int, scales, out *float32)
//
// out[i] = scales[i] * sum over j < dim8 of q[j] * c[i*stride+j], for i < n;
// dim8 is a multiple of 8. Each 8 codes are sign-extended to int32 and
// converted to float32 before the multiply-add. Needs AVX2 and FMA.
TEXT ·dotsInt8FMA(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), AX
	MOVQ c+8(FP), SI
	MOVQ dim8+16(FP), CX
	MOVQ n+24(FP), BX
	MOVQ stride+32(FP), R8
	MOVQ scales+40(FP), DI
	MOVQ out+48(FP), DX
	TESTQ BX, BX
	JZ    done8

row8:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   AX, R9
	MOVQ   SI, R10
	MOVQ   CX, R11
	CMPQ   R11, $32
	JL     istep8

istep32:
	VPMOVSXBD   (R10), Y4
	VPMOVSXBD   8(R10), Y5
	VPMOVSXBD   16(R10), Y6
	VPMOVSXBD   24(R10), Y7
	VCVTDQ2PS   Y4, Y4
	VCVTDQ2PS   Y5, Y5
	VCVTDQ2PS   Y6, Y6
	VCVTDQ2PS   Y7, Y7
	VFMADD231PS (R9), Y4, Y0
	VFMADD231PS 32(R9), Y5, Y1
	VFMADD231PS 64(R9), Y6, Y2
	VFMADD231PS 96(R9), Y7, Y3
	ADDQ        $128, R9
	ADDQ        $32, R10
	SUBQ        $32, R11
	CMPQ        R11, $32
	JGE         istep32

istep8:
	CMPQ        R11, $8
	JL          ireduce
	VPMOVSXBD   (R10), Y4
	VCVTDQ2PS   Y4, Y4
	VFMADD231PS (R9), Y4, Y0
	ADDQ        $32, R9
	ADDQ        $8, R10
	SUBQ        $8, R11
	JMP         istep8

ireduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMULSS       (DI), X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	ADDQ         $4, DI
	ADDQ         R8, SI
	DECQ         BX
	JNZ          row8

done8:
	VZEROUPPER
	RET
