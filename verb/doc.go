// Package verb holds the binary's verbs apart from serving: each parses
// its flags (the settings package config declares for it, plus its own
// arguments) and calls the composition root (package app). Package main
// only picks the verb. Adding a verb is a function here, its constant in
// config (if settings apply to it) and its line in main's table.
package verb

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"shipgraph/config"
)

// ErrUsage marks an error already reported by the flag package: exit 2.
var ErrUsage = errors.New("usage")

// flags is a verb's flag set with the settings of v bound.
func flags(name string, v config.Verb) (*flag.FlagSet, *config.Values) {
	fs := flag.NewFlagSet("shipgraph "+name, flag.ContinueOnError)
	return fs, config.Bind(fs, v)
}

// parse parses args; flag.ErrHelp for --help, ErrUsage for a bad flag or
// a stray argument.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer, extra bool) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	if !extra && fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return ErrUsage
	}
	return nil
}
