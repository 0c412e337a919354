// Command gqlgen is gqlgen's `generate` with one plugin more: the query
// fast path (fastpath.go), which writes graph/executor/fastpath.gen.go beside
// gqlgen's graph/executor/generated.go. `make generate` runs it
// (scripts/generate.sh); it reads gqlgen.yml like gqlgen does.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if errors.Is(err, fs.ErrNotExist) {
		cfg, err = config.LoadDefaultConfig()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(2)
	}
	if err := api.Generate(cfg, api.AddPlugin(fastPath{filename: "graph/executor/fastpath.gen.go"})); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(1)
	}
}
