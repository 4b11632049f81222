// Command namegen writes the typed query names of a package (see package
// gen), from a go:generate line in that package.
package main

import (
	"fmt"
	"os"

	"github.com/shardjob/shardjob/sql/namedsql/gen"
)

func main() {
	files, err := gen.Generate(".", os.Args[1:])
	for _, f := range files {
		if err == nil {
			err = os.WriteFile(f.Path, f.Src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "namegen:", err)
		os.Exit(1)
	}
}
