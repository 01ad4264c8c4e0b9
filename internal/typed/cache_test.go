package typed

import (
	"fmt"
	"testing"
)

// The compiled-schema cache holds at most MaxCached schemas, dropping the
// least recently used: a stream of distinct schemas does not grow it.
func TestCacheBounded(t *testing.T) {
	cache.Purge()
	schema := func(i int) string {
		return fmt.Sprintf(`{"type":"object","properties":{"p%d":{"type":"string"}}}`, i)
	}
	first, err := Compile(schema(0))
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := Compile(schema(1))
	for i := 2; i < MaxCached+100; i++ {
		if _, err := Compile(schema(i)); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			Compile(schema(1)) // used again: stays
		}
	}
	if n := cache.Len(); n != MaxCached {
		t.Fatalf("%d schemas cached, want %d", n, MaxCached)
	}
	if again, _ := Compile(schema(1)); again != kept {
		t.Error("a schema in use was dropped")
	}
	if again, _ := Compile(schema(0)); again == first {
		t.Error("the least recently used schema was kept")
	} else if again.Names()[0] != "p0" {
		t.Errorf("recompiled %v", again.Names())
	}
}
