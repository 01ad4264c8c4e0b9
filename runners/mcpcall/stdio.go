package mcpcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall"
)

// StdioServer is one operator-declared stdio server: the command it runs, its
// arguments, and the environment variables it may see.
type StdioServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string // NAME → value: a name listed alone takes the host's value
}

// ReadConfig reads the operator's stdio servers from the mcpServers JSON
// that MCP clients already use:
//
//	{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
//	                           "env": ["GITHUB_PERSONAL_ACCESS_TOKEN", "PATH"]}}}
//
// "env" lists the names of the host's environment variables the server sees
// (nothing else is passed, not even PATH or HOME unless listed); the object
// form {"NAME": "value"} the clients write is accepted too, each value given
// as written. Names are those of ParseTarget's stdio:NAME.
func ReadConfig(data []byte) (map[string]StdioServer, error) {
	var doc struct {
		Servers map[string]struct {
			Command string          `json:"command"`
			Args    []string        `json:"args"`
			Env     json.RawMessage `json:"env"`
		} `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not an mcpServers JSON document: %v", err)
	}
	out := map[string]StdioServer{}
	for name, s := range doc.Servers {
		if !validName(name) {
			return nil, fmt.Errorf("server name %q: use letters, digits, '_', '-' and '.'", name)
		}
		if s.Command == "" {
			return nil, fmt.Errorf("server %s has no command", name)
		}
		srv := StdioServer{Command: s.Command, Args: s.Args, Env: map[string]string{}}
		var names []string
		if len(s.Env) > 0 && json.Unmarshal(s.Env, &names) == nil {
			for _, n := range names {
				srv.Env[n] = ""
			}
		} else if len(s.Env) > 0 {
			var kv map[string]string
			if err := json.Unmarshal(s.Env, &kv); err != nil {
				return nil, fmt.Errorf("server %s: env is a list of variable names or an object of NAME: value", name)
			}
			for k, v := range kv {
				srv.Env[k] = "=" + v // given as written
			}
		}
		out[name] = srv
	}
	return out, nil
}

// Stdio starts the operator's stdio servers on first use, keeps each warm
// (one process, one session, shared by every call), starts it again after a
// crash (after a backoff that doubles from StdioBackoff up to StdioMaxBackoff
// while it keeps crashing), stops it after Idle without calls, and kills
// every one on Close. Each runs in its own process group with only its
// declared environment.
type Stdio struct {
	Servers map[string]StdioServer
	Getenv  func(string) (string, bool) // the host's environment (os.LookupEnv when nil)
	Idle    time.Duration               // 0: DefaultIdle

	mu        sync.Mutex
	procs     map[string]*proc
	closed    bool
	onChanged func(server string) // Config.OnToolsChanged of the runner it serves
}

// Backoff bounds for restarting a crashed stdio server.
const (
	StdioBackoff    = 100 * time.Millisecond
	StdioMaxBackoff = 30 * time.Second
)

type proc struct {
	mu      sync.Mutex // held while starting
	cs      *sdk.ClientSession
	cmd     *exec.Cmd
	done    chan struct{} // closed when the session ends
	idle    *time.Timer
	crashes int
	retryAt time.Time
	schemas *schemas // the running server's listed input schemas
}

// session returns name's running session, starting the server when needed.
func (s *Stdio) session(ctx context.Context, name string) (*sdk.ClientSession, *rowcall.Failure) {
	cs, _, fail := s.sessionOf(ctx, name)
	return cs, fail
}

// sessionOf is session, with the schemas its tools/list answers are kept in.
func (s *Stdio) sessionOf(ctx context.Context, name string) (*sdk.ClientSession, *schemas, *rowcall.Failure) {
	srv, ok := s.Servers[name]
	if !ok {
		known := make([]string, 0, len(s.Servers))
		for n := range s.Servers {
			known = append(known, n)
		}
		sort.Strings(known)
		return nil, nil, rowcall.Fail("mcp", "unknown_server", name).Because(fmt.Sprintf("the operator's MCP servers file declares no server %s (it declares %v)", name, known))
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, rowcall.Fail("mcp", "fetch", "the host is shutting down")
	}
	if s.procs == nil {
		s.procs = map[string]*proc{}
	}
	p := s.procs[name]
	if p == nil {
		p = &proc{}
		s.procs[name] = p
	}
	s.mu.Unlock()

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cs != nil {
		select {
		case <-p.done: // it exited: start it again below
			p.cs = nil
			p.crashes++
			p.retryAt = time.Now().Add(backoff(p.crashes))
		default:
			p.idle.Reset(s.idle())
			return p.cs, p.schemas, nil
		}
	}
	if wait := time.Until(p.retryAt); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, nil, rowcall.Fail("mcp", "fetch", "stdio server "+name+" is restarting after a crash; retry shortly")
		}
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = s.env(srv)
	cmd.Stderr = nil // discarded
	ownGroup(cmd)
	p.schemas = &schemas{}
	t := recording{&sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, p.schemas, "stdio:" + name}
	cs, err := newClient("stdio:"+name, s.onChanged).Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		killGroup(cmd)
		p.crashes++
		p.retryAt = time.Now().Add(backoff(p.crashes))
		return nil, nil, rowcall.Fail("mcp", "fetch", "stdio server "+name+" did not start: "+err.Error())
	}
	p.cs, p.cmd, p.done = cs, cmd, make(chan struct{})
	done := p.done
	go func() {
		cs.Wait()
		killGroup(cmd)
		close(done)
	}()
	if p.idle == nil {
		p.idle = time.AfterFunc(s.idle(), func() { s.stop(name, p) })
	} else {
		p.idle.Reset(s.idle())
	}
	return cs, p.schemas, nil
}

func (s *Stdio) idle() time.Duration {
	if s.Idle > 0 {
		return s.Idle
	}
	return DefaultIdle
}

// env is the server's environment: its declared variables only.
func (s *Stdio) env(srv StdioServer) []string {
	get := s.Getenv
	if get == nil {
		get = os.LookupEnv
	}
	out := []string{}
	for k, v := range srv.Env {
		if len(v) > 0 && v[0] == '=' {
			out = append(out, k+v)
		} else if hv, ok := get(k); ok {
			out = append(out, k+"="+hv)
		}
	}
	sort.Strings(out)
	return out
}

// stop ends p's server (it was idle), without counting a crash.
func (s *Stdio) stop(name string, p *proc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cs != nil {
		p.cs.Close()
		killGroup(p.cmd)
		<-p.done
		p.cs = nil
	}
}

// Close stops every server (their process groups killed) and refuses later calls.
func (s *Stdio) Close() {
	s.mu.Lock()
	s.closed = true
	procs := s.procs
	s.mu.Unlock()
	for name, p := range procs {
		if p.idle != nil {
			p.idle.Stop()
		}
		s.stop(name, p)
	}
}

// callStdio calls the tool on the named stdio server. A server that exits
// during the call fails the call (it is not sent again: the tool may have
// acted); the next call starts the server again.
func (r *Runner) callStdio(ctx context.Context, t Target, arguments json.RawMessage) rowcall.Output {
	cs, fail := r.cfg.Stdio.session(ctx, t.Stdio)
	if fail != nil {
		return fail.Output()
	}
	res, err := callSDK(ctx, cs, "stdio:"+t.Stdio, t.Tool, arguments)
	out, err := r.output(ctx, res, err, nil)
	if err == nil {
		r.cfg.Stdio.succeeded(t.Stdio)
		return out
	}
	if (errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF)) && ctx.Err() == nil {
		r.cfg.Stdio.broken(t.Stdio, cs)
		return rowcall.Fail("mcp", "fetch", "stdio server "+t.Stdio+" exited during the call; it starts again on the next call").Output()
	}
	return r.failure(ctx, err, 0, nil)
}

// broken forgets name's session cs (its process is gone), counting a crash.
func (s *Stdio) broken(name string, cs *sdk.ClientSession) {
	s.mu.Lock()
	p := s.procs[name]
	s.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cs == cs {
		cs.Close()
		killGroup(p.cmd)
		p.cs = nil
		p.crashes++
		p.retryAt = time.Now().Add(backoff(p.crashes))
	}
}

// backoff is the wait before starting a server again after its n-th crash in a row.
func backoff(n int) time.Duration { return min(StdioBackoff<<min(n-1, 20), StdioMaxBackoff) }

// succeeded resets name's crash count after a call it answered.
func (s *Stdio) succeeded(name string) {
	s.mu.Lock()
	p := s.procs[name]
	s.mu.Unlock()
	if p != nil && p.mu.TryLock() {
		p.crashes = 0
		p.mu.Unlock()
	}
}
