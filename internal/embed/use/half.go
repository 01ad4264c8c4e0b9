package use

import "math"

// IEEE 754 half precision (binary16), the storage of the packed weights
// (see matrix): values are rounded to nearest, ties to even.

// toHalf returns the binary16 bits nearest f (overflow gives ±Inf).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	e32 := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if e32 == 0xff { // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	exp := e32 - 127 + 15
	if exp >= 31 {
		return sign | 0x7c00
	}
	if exp <= 0 { // a subnormal half (or zero): units of 2^-24
		if exp < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint(14 - exp)
		h := m >> shift
		rem, mid := m&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > mid || rem == mid && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // a carry into the exponent is still the right value (or Inf)
	}
	return sign | uint16(h)
}

// fromHalf returns the float32 value of binary16 bits h.
func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	v := float32(mant) * (1.0 / (1 << 24)) // a subnormal half
	if sign != 0 {
		v = -v
	}
	return v
}

// tileHalfGo is the portable micro-kernel over a half-precision panel.
func tileHalfGo(tr, k int, a []float32, lda int, panel []uint16, c []float32, ldc int) {
	var b [panelWidth]float32
	var acc [tileRows][panelWidth]float32
	for l := 0; l < k; l++ {
		for j, h := range panel[l*panelWidth : (l+1)*panelWidth] {
			b[j] = fromHalf(h)
		}
		for r := range tr {
			x := a[r*lda+l]
			for j := range b {
				acc[r][j] += x * b[j]
			}
		}
	}
	for r := range tr {
		cr := c[r*ldc : r*ldc+panelWidth]
		for j := range cr {
			cr[j] += acc[r][j]
		}
	}
}
