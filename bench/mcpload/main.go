// Command mcpload is the two halves of bench/mcpjungle.sh: the direct MCP
// server the others are compared with, and the load client that drives every
// target in interleaved rounds.
//
//	mcpload serve [-rtt DURATION] ADDR
//
// serves, on ADDR, an upstream (GET /v1/forecast answers a small JSON body)
// and a direct MCP server (the official Go SDK alone, Streamable HTTP, at
// /mcp) whose one tool, TEMP, makes that upstream request and returns its
// body as text: what rowcall's http row TEMP calls, and what MCPJungle
// proxies. -rtt puts the MCP server at a network's distance: every request to
// /mcp waits that long before it is read (one round trip, as a server across
// a network costs each request and its answer; loopback has no delay to
// add), whoever sends it: the load client calling directly, rowcall's MCP
// row, MCPJungle.
//
//	mcpload load [-rounds 3] [-secs 5] [-clients 1,8] [-key KEY] [-raw] [-protocol VERSION] NAME=URL[#TOOL[#ARGS]] ...
//
// connects, for each target, as many Go SDK client sessions as the largest
// client count (Streamable HTTP, keep-alive, x-terminal-key: KEY on every
// request), then runs rounds: in each, every target in turn (the order
// rotates from round to round) gets every client count for -secs seconds, each
// client calling TOOL with the JSON object ARGS as fast as it is answered. It
// prints each run (calls/s, p50, p99, errors, and the CPU each listed process
// spent a call: -cpu NAME=PID,...), then the medians over the rounds and the
// ratios of the first target to the others. With -raw the sessions are still
// the SDK client's (initialize, the session id, the protocol version it
// negotiated), but each tools/call is the same JSON-RPC request written
// straight to the connection and its whole answer read and checked: a load
// client that spends less of the two cores the servers share with it, so
// the figures are more the servers' own. -protocol 2025-11-25 makes every
// session a 2025-11-25 one (a server that speaks the stateless 2026-07-28
// protocol otherwise gets it, and one that does not falls back). Ratios come from the same run,
// on the same machine at the same moments; absolute figures move with the
// machine's load.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	log.SetFlags(0)
	if len(os.Args) < 2 {
		log.Fatal("usage: mcpload serve ADDR | mcpload load [flags] NAME=URL[#TOOL[#ARGS]] ...")
	}
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		rtt := fs.Duration("rtt", 0, "the round trip every request to /mcp waits before it is read")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			log.Fatal("usage: mcpload serve [-rtt DURATION] ADDR")
		}
		serve(fs.Arg(0), *rtt)
	case "load":
		load(os.Args[2:])
	default:
		log.Fatalf("mcpload: unknown command %q (serve or load)", os.Args[1])
	}
}

// serve runs the upstream and the direct MCP server on addr until killed,
// each request to the MCP server delayed by rtt.
func serve(addr string, rtt time.Duration) {
	upstream := "http://" + addr + "/v1/forecast?latitude=1&longitude=2"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	direct := sdk.NewServer(&sdk.Implementation{Name: "direct", Version: "1"}, nil)
	direct.AddTool(&sdk.Tool{Name: "TEMP", Description: "Current temperature", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := client.Get(upstream)
			if err != nil {
				return nil, err
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}}, nil
		})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/forecast", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"temperature_2m":15.7,"q":"`+r.URL.RawQuery+`"}`)
	})
	mcp := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return direct }, nil)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(rtt)
		mcp.ServeHTTP(w, r)
	})
	log.Printf("mcpload serving on %s (round trip to /mcp: %v)", addr, rtt)
	log.Fatal(http.ListenAndServe(addr, mux))
}

type target struct {
	name, url, tool string
	args            map[string]any
	sessions        []*sdk.ClientSession
}

// run is one target at one client count in one round.
type run struct {
	rate     float64 // calls/s
	p50, p99 time.Duration
	errors   int
	cpu      map[string]float64 // µs of CPU a call, by process name
}

func load(argv []string) {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	rounds := fs.Int("rounds", 3, "interleaved rounds")
	secs := fs.Float64("secs", 5, "seconds each target runs at each client count in a round")
	clientList := fs.String("clients", "1,8", "client counts, comma-separated")
	key := fs.String("key", "", "x-terminal-key sent on every request")
	cpuList := fs.String("cpu", "", "processes whose CPU a call is reported: NAME=PID,...")
	protocol := fs.String("protocol", "", "the protocol version every session asks for (\"\": the SDK's newest, 2026-07-28, stateless where the server is)")
	fs.BoolVar(&raw, "raw", false, "make each tools/call as raw HTTP on the SDK client's session (a lighter load client)")
	cpuProfile := fs.String("cpuprofile", "", "write the load client's own CPU profile (the measured rounds) to this file")
	fs.Parse(argv)
	var counts []int
	for _, s := range strings.Split(*clientList, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			log.Fatalf("mcpload: -clients: %q is not a positive whole number", s)
		}
		counts = append(counts, n)
	}
	procs := map[string]int{"load": os.Getpid()} // the load client's own CPU a call, beside the servers'
	if *cpuList != "" {
		for _, p := range strings.Split(*cpuList, ",") {
			name, pid, _ := strings.Cut(p, "=")
			n, err := strconv.Atoi(pid)
			if err != nil {
				log.Fatalf("mcpload: -cpu: %q is not NAME=PID", p)
			}
			procs[name] = n
		}
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 256}
	httpClient = &http.Client{Transport: keyed{key: *key, next: transport}}
	var targets []*target
	for _, spec := range fs.Args() {
		name, rest, ok := strings.Cut(spec, "=")
		if !ok {
			log.Fatalf("mcpload: target %q is not NAME=URL[#TOOL[#ARGS]]", spec)
		}
		parts := strings.SplitN(rest, "#", 3)
		t := &target{name: name, url: parts[0], tool: "TEMP"}
		if len(parts) > 1 {
			t.tool = parts[1]
		}
		if len(parts) > 2 {
			if err := json.Unmarshal([]byte(parts[2]), &t.args); err != nil {
				log.Fatalf("mcpload: %s: ARGS is not a JSON object: %v", name, err)
			}
		}
		for range slices.Max(counts) {
			c := sdk.NewClient(&sdk.Implementation{Name: "mcpload", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: t.url,
				HTTPClient: httpClient, DisableStandaloneSSE: true, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: *protocol})
			if err != nil {
				log.Fatalf("mcpload: %s: connecting to %s: %v", name, t.url, err)
			}
			defer cs.Close()
			t.sessions = append(t.sessions, cs)
		}
		if _, err := call(t.sessions[0], t); err != nil || raw && rawCall(t.sessions[0], t, 0) != nil {
			log.Fatalf("mcpload: %s: a first call of %s: %v", name, t.tool, err)
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		log.Fatal("mcpload: no targets")
	}
	for _, t := range targets { // warm up: a second each, at the largest count
		measure(t, slices.Max(counts), time.Second, nil)
	}
	dur := time.Duration(*secs * float64(time.Second))
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatalf("mcpload: -cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatalf("mcpload: -cpuprofile: %v", err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	results := map[string]map[int][]run{} // target → clients → a run a round
	for _, t := range targets {
		results[t.name] = map[int][]run{}
	}
	for r := range *rounds {
		for i := range targets {
			t := targets[(i+r)%len(targets)]
			for _, n := range counts {
				res := measure(t, n, dur, procs)
				results[t.name][n] = append(results[t.name][n], res)
				fmt.Printf("round %d  %-10s %2d clients  %7.0f calls/s  p50 %7.0f µs  p99 %7.0f µs  errors %d%s\n",
					r+1, t.name, n, res.rate, us(res.p50), us(res.p99), res.errors, cpuText(res.cpu))
			}
		}
	}
	fmt.Printf("\nmedians of %d rounds, %g s a run:\n", *rounds, *secs)
	first := targets[0].name
	for _, n := range counts {
		med := map[string]run{}
		for _, t := range targets {
			med[t.name] = median(results[t.name][n])
			m := med[t.name]
			fmt.Printf("%-10s %2d clients  %7.0f calls/s  p50 %7.0f µs  p99 %7.0f µs%s\n", t.name, n, m.rate, us(m.p50), us(m.p99), cpuText(m.cpu))
		}
		for _, t := range targets[1:] {
			fmt.Printf("  %d clients: %s / %s calls/s %.2f×, p50 %s − %s %+.0f µs\n", n, first, t.name,
				med[first].rate/med[t.name].rate, first, t.name, us(med[first].p50-med[t.name].p50))
		}
	}
}

// measure runs n clients of t for d: every call's latency, calls/s, errors,
// and the CPU each process in procs spent a call.
func measure(t *target, n int, d time.Duration, procs map[string]int) run {
	before := map[string]time.Duration{}
	for name, pid := range procs {
		before[name] = cpuOf(pid)
	}
	lat := make([][]time.Duration, n)
	errs := make([]int, n)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t0 := time.Now()
				var err error
				if raw {
					err = rawCall(t.sessions[i], t, len(lat[i])+errs[i]+1)
				} else {
					_, err = call(t.sessions[i], t)
				}
				if err != nil {
					errs[i]++
					continue
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	res := run{cpu: map[string]float64{}}
	for _, e := range errs {
		res.errors += e
	}
	if len(all) == 0 {
		return res
	}
	res.rate = float64(len(all)) / elapsed.Seconds()
	res.p50, res.p99 = all[len(all)/2], all[len(all)*99/100]
	for name, pid := range procs {
		res.cpu[name] = us(cpuOf(pid)-before[name]) / float64(len(all))
	}
	return res
}

// call makes one tools/call; a refused call, an error result or one without
// the upstream's body is an error.
func call(cs *sdk.ClientSession, t *target) (*sdk.CallToolResult, error) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: t.tool, Arguments: t.args})
	if err != nil {
		return nil, err
	}
	if res.IsError || len(res.Content) == 0 {
		b, _ := json.Marshal(res.Content)
		return nil, fmt.Errorf("tool error: %s", b)
	}
	if text, ok := res.Content[0].(*sdk.TextContent); !ok || !strings.Contains(text.Text, "temperature_2m") {
		return nil, fmt.Errorf("unexpected result: %+v", res.Content[0])
	}
	return res, nil
}

// raw and httpClient are load's -raw and the client every session uses.
var (
	raw        bool
	httpClient *http.Client
)

// rawCall is call as one HTTP request on cs's session: the JSON-RPC
// tools/call the SDK client sends, with its session and protocol headers; the
// answer (JSON or an SSE event) must carry the upstream's body and no error.
func rawCall(cs *sdk.ClientSession, t *target, id int) error {
	args, _ := json.Marshal(t.args)
	if t.args == nil {
		args = []byte("{}")
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, 1_000_000+id, t.tool, args)
	req, err := http.NewRequest("POST", t.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	res, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	got, err := io.ReadAll(res.Body)
	res.Body.Close()
	switch {
	case err != nil:
		return err
	case res.StatusCode != 200:
		return fmt.Errorf("HTTP %d: %s", res.StatusCode, got)
	case !strings.Contains(string(got), "temperature_2m") || strings.Contains(string(got), `"isError":true`):
		return fmt.Errorf("unexpected answer: %s", got)
	}
	return nil
}

// median is, field by field, the median of the runs.
func median(rs []run) run {
	pick := func(f func(run) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	m := run{cpu: map[string]float64{}}
	m.rate = pick(func(r run) float64 { return r.rate })
	m.p50 = time.Duration(pick(func(r run) float64 { return float64(r.p50) }))
	m.p99 = time.Duration(pick(func(r run) float64 { return float64(r.p99) }))
	for name := range rs[0].cpu {
		m.cpu[name] = pick(func(r run) float64 { return r.cpu[name] })
	}
	return m
}

func cpuText(cpu map[string]float64) string {
	if len(cpu) == 0 {
		return ""
	}
	names := make([]string, 0, len(cpu))
	for n := range cpu {
		names = append(names, n)
	}
	slices.SortFunc(names, cmp.Compare)
	var b strings.Builder
	b.WriteString("  CPU µs/call:")
	for _, n := range names {
		fmt.Fprintf(&b, " %s %.0f", n, cpu[n])
	}
	return b.String()
}

// cpuOf is the CPU time (user + system) process pid has used so far.
func cpuOf(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses:
	// state is field 3, utime 14 and stime 15, in clock ticks (1/100 s).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// keyed adds the x-terminal-key header (rowcall's credential; the others ignore it).
type keyed struct {
	key  string
	next http.RoundTripper
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.key != "" {
		r = r.Clone(r.Context())
		r.Header.Set("x-terminal-key", k.key)
	}
	return k.next.RoundTrip(r)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
