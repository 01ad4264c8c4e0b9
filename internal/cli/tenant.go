package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"

	"github.com/rowcall/rowcall/internal/hostmain"
)

// TenantCommand is `rowcall tenant VERB`: the operator's API of a host
// serving tenants (serve --tenants, docs/tenants.md), with the operator key
// ($ROWCALL_OPERATOR_KEY, else DATA/operator.key). One type serves every
// verb: each is one request.
type TenantCommand struct {
	client
	verb string
	rows string // quota: the rows quota ("none" removes it)
}

func (c *TenantCommand) Usage() (string, string) {
	switch c.verb {
	case "create":
		return "NAME", "create a tenant; prints its URL and its owner key (shown this once)"
	case "list":
		return "", "list the tenants: rows, calls today, receipts, storage, last use"
	case "quota":
		return "NAME --rows N|none", "set a tenant's quota of rows (none removes it)"
	}
	return "NAME", c.verb + " a tenant"
}

func (c *TenantCommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	c.operator = true
	if f := fs.Lookup("data"); f != nil {
		f.Usage = "data directory holding operator.key (when $" + operatorEnv + " is unset)"
	}
	if c.verb == "quota" {
		fs.StringVar(&c.rows, "rows", "", "most rows the tenant's directory may hold, or none")
	}
}

func (c *TenantCommand) Run(ctx context.Context, env *Env, args []string) error {
	name := "tenant " + c.verb
	if c.verb == "list" && len(args) != 0 || c.verb != "list" && len(args) != 1 || c.verb == "quota" && c.rows == "" {
		return usageError(name, c)
	}
	c.connect(ctx, env)
	method, path, body := http.MethodGet, "/operator/tenants", any(nil)
	switch c.verb {
	case "create":
		method, body = http.MethodPost, map[string]any{"name": args[0]}
	case "delete":
		method, path = http.MethodDelete, path+"/"+url.PathEscape(args[0])
	case "suspend", "resume":
		method, path = http.MethodPost, path+"/"+url.PathEscape(args[0])+"/"+c.verb
	case "quota":
		var rows any // JSON null removes the quota
		if c.rows != "none" {
			n, err := strconv.ParseInt(c.rows, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("--rows %q: give a whole number of at least 0, or none", c.rows)
			}
			rows = n
		}
		method, path, body = http.MethodPatch, path+"/"+url.PathEscape(args[0]), map[string]any{"quotas": map[string]any{"rows": rows}}
	}
	status, out, err := c.do(method, path, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		b, _ := json.Marshal(out)
		return fmt.Errorf("HTTP %d: %s", status, b)
	}
	switch c.verb {
	case "create":
		fmt.Fprintf(env.Stdout, "Tenant %s: %s\nIts owner key (shown this once; also in the host's DATA/tenants/%s/owner.key):\n  %s\n", out["name"], out["url"], out["name"], out["owner_key"])
	case "list":
		var list struct {
			Tenants []struct {
				Name         string `json:"name"`
				Rows         int64  `json:"rows"`
				CallsToday   int64  `json:"calls_today"`
				Receipts     int64  `json:"receipts"`
				StorageBytes int64  `json:"storage_bytes"`
				Open         bool   `json:"open"`
				Suspended    bool   `json:"suspended"`
				LastUse      string `json:"last_use"`
			} `json:"tenants"`
		}
		b, _ := json.Marshal(out)
		json.Unmarshal(b, &list)
		w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tROWS\tCALLS TODAY\tRECEIPTS\tSTORAGE\tSTATE\tLAST USE")
		for _, t := range list.Tenants {
			state := "closed"
			switch {
			case t.Suspended:
				state = "suspended"
			case t.Open:
				state = "open"
			}
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f MB\t%s\t%s\n", t.Name, t.Rows, t.CallsToday, t.Receipts, float64(t.StorageBytes)/1e6, state, t.LastUse)
		}
		return w.Flush()
	case "delete":
		fmt.Fprintf(env.Stdout, "Tenant %s deleted; its last checkpoint is kept in %s\n", args[0], out["checkpoint_file"])
	default:
		return printJSON(env.Stdout, out["tenant"])
	}
	return nil
}

// TenantAdoptCommand is `rowcall tenant adopt NAME --from OLD_DATA`: a
// single directory's data folder becomes a tenant of the host whose data
// folder is --data, on this machine (hostmain.AdoptTenant), its receipt
// chain continuing.
type TenantAdoptCommand struct {
	data, from string
}

func (c *TenantAdoptCommand) Usage() (string, string) {
	return "NAME --from OLD_DATA", "make a single directory's data folder a tenant of this host, its receipt chain continuing"
}

func (c *TenantAdoptCommand) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./data", "the data folder of the host serving tenants")
	fs.StringVar(&c.from, "from", "", "the data folder of the directory to adopt (its rowcall.db, owner.key, receipt.key)")
}

func (c *TenantAdoptCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || c.from == "" {
		return usageError("tenant adopt", c)
	}
	if err := hostmain.AdoptTenant(ctx, c.data, args[0], c.from, func(name string) (string, bool) {
		v := env.Getenv(name)
		return v, v != ""
	}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s is tenant %s of the host serving %s (its path: /t/%s/); its owner key is the one it had, and %s is unchanged.\n",
		c.from, args[0], c.data, args[0], c.from)
	return nil
}
