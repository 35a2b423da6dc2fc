// Command configdoc rewrites the key reference of docs/config.md from the
// doc comments of the config package's structs. It runs from the config
// directory (go generate ./config) and refuses to write while a key has no
// doc comment.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolgate/toolgate/internal/docgen"
)

func main() {
	dir := flag.String("config", ".", "the config package's directory")
	out := flag.String("out", "../docs/config.md", "the file to update")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	keys, problems, err := docgen.ConfigKeys(dir)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, p.Error())
		}
		return fmt.Errorf("%d key(s) without a doc comment", len(problems))
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	next, err := docgen.Splice(string(doc), docgen.RenderKeys(keys))
	if err != nil {
		return err
	}
	return os.WriteFile(out, []byte(next), 0o644)
}
