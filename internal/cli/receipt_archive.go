package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/rowcall/rowcall/internal/hostmain"
	"github.com/rowcall/rowcall/sqlstore"
)

// ReceiptArchiveCommand is `rowcall receipt archive --archive DIR|s3://… --keys
// KEYS`: the operator's check of a receipt archive, offline, against the
// host's database — every sealed segment against the database's record of it
// and its signed checkpoint, and the segments and the table as one chain with
// every receipt intact and signed (sqlstore.Archive.Verify), one segment in
// memory at a time.
type ReceiptArchiveCommand struct {
	data, db, archive, auth, keys string
}

func (c *ReceiptArchiveCommand) Usage() (string, string) {
	return "", "check a receipt archive (the sealed segments of the chain) against the database and the host's public keys"
}

func (c *ReceiptArchiveCommand) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./data", "data directory")
	fs.StringVar(&c.db, "db", "", hostmain.DBFlagHelp)
	fs.StringVar(&c.archive, "archive", "", "serve's --receipt-archive (required): "+hostmain.ArchiveHelp)
	fs.StringVar(&c.auth, "archive-auth", hostmain.DefaultArchiveAuth, hostmain.ArchiveAuthHelp)
	fs.StringVar(&c.keys, "keys", "", "the host's public keys, saved by rowcall receipt keys (required)")
}

func (c *ReceiptArchiveCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 || c.archive == "" || c.keys == "" {
		return fmt.Errorf("usage: rowcall receipt archive --archive DIR|s3://BUCKET/PREFIX --keys KEYS.json [--data ./data] [--db URL]")
	}
	keys, err := readKeys(env, c.keys)
	if err != nil {
		return err
	}
	db, err := hostmain.Open(ctx, c.data, c.db)
	if err != nil {
		return err
	}
	defer db.Close()
	store := sqlstore.New(db)
	objects, err := hostmain.OpenArchive(c.archive, c.auth, env.LookupEnv)
	if err != nil {
		return err
	}
	archive := &sqlstore.Archive{Store: store, Objects: objects}
	n, err := archive.Verify(ctx, keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "OK: %d receipts, the archive's segments and the table one signed chain\n", n)
	return nil
}
