package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

// The wire formats of the worker's Workers AI and Vectorize adapters, checked
// natively; test/worker_vectors_test.go runs them in workerd against the
// stand-ins.

// recorded is a binder that records each call's JSON and answers from answer.
type recorded struct {
	calls  []string // "BINDING.method ARGS-JSON"
	answer func(method string, args []any) any
}

func (r *recorded) call(_ context.Context, binding, method string, args ...any) ([]byte, error) {
	enc, _ := encodeArgs(args)
	r.calls = append(r.calls, binding+"."+method+" "+string(enc))
	var back []any
	json.Unmarshal(enc, &back)
	return json.Marshal(r.answer(method, back))
}

var bge = rowcall.EmbedModel{Provider: "workers-ai", Name: "@cf/baai/bge-base-en-v1.5", Dim: 768}

func TestEmbedModel(t *testing.T) {
	m, err := embedModel("", "")
	if err != nil || m != bge || m.ID() != "workers-ai/@cf/baai/bge-base-en-v1.5/768" {
		t.Fatalf("default: %+v %v", m, err)
	}
	if _, err := embedModel("@cf/some/new-model", ""); err == nil || !strings.Contains(err.Error(), "ROWCALL_EMBED_MODEL") {
		t.Fatalf("an unknown model without ROWCALL_EMBED_DIM: %v", err)
	}
	if m, err := embedModel("@cf/some/new-model", "512"); err != nil || m.Dim != 512 {
		t.Fatalf("ROWCALL_EMBED_DIM: %+v %v", m, err)
	}
	if _, err := embedModel("", "2048"); err == nil {
		t.Fatal("a dimension past Vectorize's 1536 is accepted")
	}
	if got := indexName(bge); got != "rowcall-bge-base-en-v1-5" {
		t.Fatalf("indexName: %s", got)
	}
}

func TestWorkersAIEmbed(t *testing.T) {
	b := &recorded{answer: func(_ string, args []any) any {
		texts := args[1].(map[string]any)["text"].([]any)
		data := make([][]float32, len(texts))
		for i := range data {
			data[i] = make([]float32, 768)
			data[i][0], data[i][1] = 3, 4 // length 5: not normalised
		}
		return map[string]any{"shape": []int{len(texts), 768}, "data": data}
	}}
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = "text"
	}
	vs, err := workersAI{model: bge, b: b}.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 150 || len(b.calls) != 2 {
		t.Fatalf("%d vectors in %d calls, want 150 in 2 (at most 100 texts a call)", len(vs), len(b.calls))
	}
	if !strings.HasPrefix(b.calls[0], `AI.run ["@cf/baai/bge-base-en-v1.5",{"pooling":"cls","text":["text",`) {
		t.Fatalf("call: %.120s", b.calls[0])
	}
	if math.Abs(float64(vs[0][0])-0.6) > 1e-6 || math.Abs(float64(vs[0][1])-0.8) > 1e-6 {
		t.Fatalf("not normalised: %v", vs[0][:2])
	}
	if _, err := decodeEmbeddings([]byte(`{"shape":[1,384],"data":[[1,2]]}`), 1, 768); err == nil {
		t.Fatal("a vector of the wrong shape is accepted")
	}
}

func TestVectorizeWire(t *testing.T) {
	long := strings.Repeat("K", 100)
	if vectorID("SMS_DELIVER") != "SMS_DELIVER" || vectorID(strings.Repeat("A", 64)) != strings.Repeat("A", 64) {
		t.Fatal("a key of up to 64 bytes is not its own id")
	}
	if id := vectorID(long); len(id) != 44 || !strings.HasPrefix(id, "~") || id == vectorID(long+"X") {
		t.Fatalf("long key id %q", id)
	}
	dims := 768
	b := &recorded{answer: func(method string, args []any) any {
		switch method {
		case "describe":
			return map[string]any{"dimensions": dims, "vectorCount": 0}
		case "query":
			return map[string]any{"count": 2, "matches": []any{
				map[string]any{"id": vectorID(long), "score": 0.9}, map[string]any{"id": "B", "score": 0.5}}}
		case "getByIds":
			return []any{map[string]any{"id": vectorID(long), "values": map[string]any{"0": 1}, "metadata": map[string]any{"key": long}}}
		}
		return map[string]any{"mutationId": "1"}
	}}
	x := newVectorize(b)
	ctx := context.Background()
	v := make([]float32, 768)
	v[0] = 1
	if err := x.Upsert(ctx, bge, []rowcall.Vector{{Key: long, Values: v, Category: "time", Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Nearest(ctx, bge, v, 500, rowcall.VectorFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Key != long || hits[0].Cosine != 0.9 || hits[1].Key != "B" {
		t.Fatalf("hits %+v", hits)
	}
	if err := x.Delete(ctx, bge, []string{long}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`VECTORIZE.describe []`,
		`VECTORIZE.upsert [[{"id":"` + vectorID(long) + `","values":[1,`,
		`VECTORIZE.query [[1,`,
		`VECTORIZE.getByIds [["` + vectorID(long) + `"]]`,
		`VECTORIZE.deleteByIds [["` + vectorID(long) + `"]]`,
	}
	if len(b.calls) != len(want) {
		t.Fatalf("calls %q", b.calls)
	}
	for i, w := range want {
		if !strings.HasPrefix(b.calls[i], w) {
			t.Fatalf("call %d: %.200s, want it to start %s", i, b.calls[i], w)
		}
	}
	for _, part := range []string{`"metadata":{"category":"time","enabled":true,"key":"` + long + `","model":"workers-ai/@cf/baai/bge-base-en-v1.5/768"`, `"visible":false`} {
		if !strings.Contains(b.calls[1], part) {
			t.Fatalf("upsert lacks %s: %.300s", part, b.calls[1])
		}
	}
	if !strings.HasSuffix(b.calls[2], `{"filter":{"enabled":{"$eq":true},"model":{"$eq":"workers-ai/@cf/baai/bge-base-en-v1.5/768"},"visible":{"$eq":true}},"returnMetadata":"none","returnValues":false,"topK":100}]`) {
		t.Fatalf("query options: %s", b.calls[2][strings.LastIndex(b.calls[2], "]")+1:])
	}

	// An index of other dimensions refuses the model, naming the fix.
	dims = 384
	err = newVectorize(b).Upsert(ctx, bge, []rowcall.Vector{{Key: "A", Values: v}})
	if err == nil || !strings.Contains(err.Error(), "has 384 dimensions") || !strings.Contains(err.(*rowcall.Error).HowToFix, "--dimensions=768 --metric=cosine") {
		t.Fatalf("mismatched index: %v", err)
	}
}

// A row's stored vector and text hash are read back from getByIds, values
// as an array or as a Float32Array's JSON; another model's vector is not
// the row's.
func TestVectorizeStored(t *testing.T) {
	long := strings.Repeat("K", 100)
	h := rowcall.EmbedHash(bge, "text")
	hash := base64.RawURLEncoding.EncodeToString(h[:])
	arr, obj := make([]any, 768), map[string]any{}
	for i := range arr {
		arr[i], obj[strconv.Itoa(i)] = float64(i), float64(i)
	}
	b := &recorded{answer: func(method string, args []any) any {
		var out []any
		for _, id := range args[0].([]any) {
			switch id {
			case "A":
				out = append(out, map[string]any{"id": "A", "values": arr, "metadata": map[string]any{"key": "A", "model": bge.ID(), "text_hash": hash}})
			case vectorID(long):
				out = append(out, map[string]any{"id": id, "values": obj, "metadata": map[string]any{"key": long, "model": bge.ID(), "text_hash": hash}})
			case "OLD":
				out = append(out, map[string]any{"id": "OLD", "values": arr, "metadata": map[string]any{"key": "OLD", "model": "workers-ai/other/768", "text_hash": hash}})
			}
		}
		return out
	}}
	x := newVectorize(b)
	ctx := context.Background()
	for _, k := range []string{"A", long} {
		v, got, ok := x.Vector(ctx, bge, k)
		if !ok || got != h || len(v) != 768 || v[767] != 767 {
			t.Fatalf("Vector(%s): %v %v len %d", k[:1], ok, got == h, len(v))
		}
	}
	if _, _, ok := x.Vector(ctx, bge, "OLD"); ok {
		t.Fatal("another model's vector is the row's")
	}
	if _, _, ok := x.Vector(ctx, bge, "GONE"); ok {
		t.Fatal("a row without a vector has one")
	}
	hs, err := x.Hashes(ctx, bge, []string{"A", long, "OLD", "GONE"})
	if err != nil || len(hs) != 2 || hs["A"] != h || hs[long] != h {
		t.Fatalf("Hashes: %v %v", hs, err)
	}
}

// remembered embeds each text once: the sync after a write finds the vector
// its similar_rows check made.
func TestRememberedEmbeds(t *testing.T) {
	var texts []string
	b := &recorded{answer: func(_ string, args []any) any {
		in := args[1].(map[string]any)["text"].([]any)
		data := make([][]float32, len(in))
		for i, x := range in {
			texts = append(texts, x.(string))
			data[i] = make([]float32, 768)
			data[i][len(texts)%768] = 1
		}
		return map[string]any{"shape": []int{len(in), 768}, "data": data}
	}}
	e := remember(workersAI{model: bge, b: b})
	ctx := context.Background()
	first, err := e.Embed(ctx, []string{"row"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Embed(ctx, []string{"other", "row"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(texts, ",") != "row,other" || &again[1][0] != &first[0][0] || again[0][2] != 1 {
		t.Fatalf("embedded %q", texts)
	}
}

// TestVectorizeScopedNearest: a scope's categories are the query's metadata
// filter and its keys' vectors are read by id and scored here, so a scoped
// caller's k are its own best, merged best first, without the row left out.
func TestVectorizeScopedNearest(t *testing.T) {
	q, keyed := make([]float32, 768), make([]float32, 768)
	q[0], keyed[0], keyed[1] = 1, 0.7, 0.71414284
	b := &recorded{answer: func(method string, args []any) any {
		switch method {
		case "describe":
			return map[string]any{"dimensions": 768}
		case "query":
			// The index's own filter: only mine rows are answered.
			if !strings.Contains(fmt.Sprint(args[1]), "category:map[$in:[mine]]") {
				return map[string]any{"matches": []any{map[string]any{"id": "CROWD", "score": 1}}}
			}
			return map[string]any{"matches": []any{map[string]any{"id": "SELF", "score": 0.95},
				map[string]any{"id": "MINE_A", "score": 0.8}, map[string]any{"id": "MINE_B", "score": 0.6}}}
		case "getByIds":
			md := map[string]any{"key": "KEYED", "model": bge.ID(), "enabled": true, "visible": true,
				"text_hash": base64.RawURLEncoding.EncodeToString(make([]byte, 32))}
			return []any{map[string]any{"id": "KEYED", "values": keyed, "metadata": md}}
		}
		return nil
	}}
	hits, err := newVectorize(b).Nearest(context.Background(), bge, q, 2,
		rowcall.VectorFilter{Scope: &rowcall.Scope{Categories: []string{"mine"}, Keys: []string{"KEYED"}}, Except: "SELF"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Key != "MINE_A" || hits[1].Key != "KEYED" || math.Abs(hits[1].Cosine-0.7) > 1e-6 {
		t.Fatalf("hits %+v (calls %q)", hits, b.calls)
	}
	if !strings.Contains(b.calls[1], `"topK":3`) {
		t.Fatalf("query %s: want topK 3 (k and the row left out)", b.calls[1])
	}
}
