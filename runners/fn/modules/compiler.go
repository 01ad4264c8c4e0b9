package modules

import (
	"context"
	"sync"

	"github.com/tetratelabs/wazero"
)

// Compiler checks that a module compiles, and links against the sandbox that
// will run it, without running any of its code. The fn runner implements it
// with the host's one wazero runtime (see fn.New), so a module that Put accepts
// is already compiled and cached for its first call.
type Compiler interface {
	Check(ctx context.Context, digest string, wasm []byte) error
}

// compileOnly is the Compiler a registry uses until SetCompiler: it compiles
// with a private wazero runtime and links nothing.
type compileOnly struct {
	once sync.Once
	rt   wazero.Runtime
}

func (c *compileOnly) Check(ctx context.Context, _ string, wasm []byte) error {
	c.once.Do(func() { c.rt = wazero.NewRuntime(context.Background()) })
	cm, err := c.rt.CompileModule(ctx, wasm)
	if err != nil {
		return err
	}
	return cm.Close(ctx)
}
