// Command shots takes screenshots of each main screen of the web console at
// laptop and phone widths (PNG), in headless Chromium (test/console), into a
// directory:
//
//	go run ./test/console/shots -out /tmp/shots
//
// With no -url it builds the host (go build ./host, from the repository
// root), starts it on a fresh data directory with the example rows, makes a
// call, mints two tokens (one with limits), adds two long-named rows and
// stores four people (as their sign-in would) so every screen has something
// to show, and stops it at the end; the People screen is shown signed in as
// one of them, an admin. With -url and -key it photographs a running host
// instead (it writes to it: a call, two tokens, two rows), its People screen
// with the owner key.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
	"github.com/rowcall/rowcall/test/console"
)

func main() {
	out := flag.String("out", "shots", "the directory the PNG files go to")
	base := flag.String("url", "", "a running host (default: start one)")
	key := flag.String("key", os.Getenv("ROWCALL_OWNER_KEY"), "its owner key")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	admin := "" // a session of an admin among the people stored (none for -url)
	if *base == "" {
		url, data, stop, err := startHost()
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
		*base, *key = url, "rk_shots_owner_key"
		if admin, err = seedPeople(data); err != nil {
			log.Fatal(err)
		}
	}
	receipt, trace, err := seed(*base, *key)
	if err != nil {
		log.Fatal(err)
	}
	screens := []struct{ name, hash, wait string }{
		{"directory", "#/dir", "#rows"},
		{"ask", "#/dir?ask=what+time+is+it", "#matches"},
		{"contract", "#/row/ROW_DOSSIER", "#contract"},
		{"edit", "#/edit/NOW", "#row-form"},
		{"history", "#/history/NOW", "#history"},
		{"call", "#/call/ROW_DOSSIER", "#call-form"},
		{"trace", "#/trace/" + trace, "#trace-tree"},
		{"receipt", "#/receipt/" + receipt, "#browser-verdict"},
		{"tokens", "#/tokens", "#mint-form"},
		{"modules", "#/modules", "#modules"},
	}
	for _, size := range []console.Size{console.Laptop, console.Phone} {
		ctx, cancel, err := console.Browser(context.Background(), size)
		if err != nil {
			log.Fatal(err)
		}
		ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
		shot := func(name string) {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err == nil {
				file := filepath.Join(*out, size.Name+"-"+name+".png")
				if err = os.WriteFile(file, png, 0o644); err == nil {
					fmt.Println(file)
				}
			}
			if err != nil {
				log.Fatalf("%s at %s width: %v", name, size.Name, err)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(*base+"/"), console.Ready); err != nil {
			log.Fatal(err)
		}
		shot("signin")
		if err := chromedp.Do(ctx, console.SignIn(*base, *key)); err != nil {
			log.Fatal(err)
		}
		for _, s := range screens {
			if err := chromedp.Do(ctx, console.Go(s.hash), chromedp.WaitVisible(chromedp.CSS(s.wait))); err != nil {
				log.Fatalf("%s: %v", s.name, err)
			}
			shot(s.name)
		}
		// The call screen after a run: the result and the trace of receipts.
		if err := chromedp.Do(ctx, console.Go("#/call/ROW_DOSSIER"), console.Fill("#call-body", "NOW"), console.Click("#run"),
			chromedp.WaitVisible(chromedp.CSS("#trace-tree"))); err != nil {
			log.Fatalf("call-result: %v", err)
		}
		shot("call-result")
		// People, as the admin whose session was stored (the header names
		// them), or with the owner key.
		people := []chromedp.Action[chromedp.Void]{console.Go("#/people")}
		if admin != "" {
			on := true
			people = []chromedp.Action[chromedp.Void]{chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`),
				chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
					_, err := cdp.Call(ctx, t, network.SetCookie, network.SetCookieParams{Name: api.SessionCookie, Value: admin, URL: *base, Path: "/", HTTPOnly: &on})
					return err
				}),
				chromedp.Navigate("about:blank"), chromedp.Navigate(*base + "/#/people"), console.Ready}
		}
		if err := chromedp.Do(ctx, append(people, chromedp.WaitVisible(chromedp.CSS("#people-h")))...); err != nil {
			log.Fatalf("people: %v", err)
		}
		shot("people")
		cancelT()
		cancel()
	}
}

// startHost builds and starts the host on a free loopback port with a fresh
// data directory and the example rows: its URL and data directory.
func startHost() (string, string, func(), error) {
	dir, err := os.MkdirTemp("", "rowcall-shots")
	if err != nil {
		return "", "", nil, err
	}
	bin := filepath.Join(dir, "rowcall")
	build := exec.Command("go", "build", "-o", bin, "./host")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", "", nil, fmt.Errorf("go build ./host (run from the repository root): %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data", filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=rk_shots_owner_key")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", "", nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait(); os.RemoveAll(dir) }
	url := "http://" + addr
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(url + "/"); err == nil {
			res.Body.Close()
			return url, filepath.Join(dir, "data"), stop, nil
		}
	}
	stop()
	return "", "", nil, fmt.Errorf("the host at %s did not answer", url)
}

// seed runs the flow ROW_DOSSIER, mints two tokens (one with limits) and
// adds two rows named as an OpenAPI import names them; it returns a nested
// receipt's id and the call's trace.
func seed(base, key string) (receipt, trace string, err error) {
	post := func(path string, body any, out any) error {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode >= 300 {
			return fmt.Errorf("POST %s: %s", path, res.Status)
		}
		return json.NewDecoder(res.Body).Decode(out)
	}
	var call struct {
		Trace string `json:"trace"`
		Proof struct {
			ID string `json:"invocation_id"`
		} `json:"proof"`
	}
	if err := post("/api/dispatch", map[string]any{"key": "ROW_DOSSIER", "body": "NOW"}, &call); err != nil {
		return "", "", err
	}
	var tok map[string]any
	if err := post("/api/tokens", map[string]any{"name": "time only", "keys": []string{"NOW"}, "pin": []string{"NOW"}, "expires_in": 86400}, &tok); err != nil {
		return "", "", err
	}
	if err := post("/api/tokens", map[string]any{"name": "petstore agent", "categories": []string{"petstore_users", "petstore_pets"}, "rate": "30/minute", "burst": 10,
		"calls_day": 2000, "budget_usd_day": 5, "budget_usd_month": 50, "max_payload": 65536, "expires_in": 30 * 86400}, &tok); err != nil {
		return "", "", err
	}
	// Rows as an OpenAPI import names them: long keys and categories, long
	// descriptions (the tables' widest cells).
	for _, r := range [][3]string{
		{"PET_CREATE_USERS_WITH_ARRAY_INPUT", "petstore_users", "Creates list of users with given input array, one user per element, each checked against the User schema."},
		{"PET_FIND_PETS_BY_STATUS", "petstore_pets", "Finds Pets by status: multiple status values can be provided with comma separated strings."},
	} {
		row := map[string]any{"key": r[0], "type": "http", "target": "GET $SELF/api/directory/NOW", "category": r[1], "content": "# WHAT: " + r[2]}
		if err := post("/api/directory", row, &tok); err != nil {
			return "", "", err
		}
	}
	return call.Proof.ID, call.Trace, nil
}

// seedPeople stores four people in the host's database under data, as their
// first sign-in through the provider stores them (an admin, an editor whose
// role comes from their groups, a viewer, one disabled), and a session for
// the admin, whose cookie secret it returns.
func seedPeople(data string) (string, error) {
	db, err := sqlite.Open(filepath.Join(data, "rowcall.db"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	now := time.Now().UTC()
	at := now.Format(rowcall.Timestamp)
	for _, p := range []struct{ id, name, email, role, from, groups, cats, disabled string }{
		{"per_shots_ada", "Ada Lovelace", "ada@example.com", "admin", "admin", `[]`, `["*"]`, ""},
		{"per_shots_ed", "Edsger Dijkstra", "edsger@example.com", "editor", "groups", `["tools-editors","research"]`, `["*"]`, ""},
		{"per_shots_grace", "Grace Hopper", "grace@example.com", "viewer", "admin", `[]`, `["petstore_pets","time"]`, ""},
		{"per_shots_alan", "Alan Turing", "alan@example.com", "caller", "groups", `["tools-users"]`, `["*"]`, at},
	} {
		if _, err := db.Exec(`INSERT INTO people (id, issuer, subject, email, name, role, role_from, groups, categories, disabled_at, created_at, seen_at)
			VALUES (?, 'https://login.example.com', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, p.id, p.id, p.email, p.name, p.role, p.from, p.groups, p.cats, p.disabled, at, at); err != nil {
			return "", err
		}
	}
	b := make([]byte, 32)
	rand.Read(b)
	secret := hex.EncodeToString(b)
	sum := sha256.Sum256([]byte(secret))
	_, err = db.Exec(`INSERT INTO sessions (id, person_id, created_at, expires_at, idle_until) VALUES (?, 'per_shots_ada', ?, ?, ?)`,
		hex.EncodeToString(sum[:]), at, now.Add(api.SessionMax).Format(rowcall.Timestamp), now.Add(api.SessionIdle).Format(rowcall.Timestamp))
	return secret, err
}
