package verb

import (
	"context"
	"io"
	"log/slog"

	"shipgraph/app"
	"shipgraph/config"
)

// Serve migrates, then serves HTTP on ADDR until ctx ends (app.Serve).
func Serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, v := flags("serve", config.Serve)
	if err := parse(fs, args, stdout, stderr, false); err != nil {
		return err
	}
	log, err := app.NewLogger(v, stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	return app.Serve(ctx, v, stdout, log)
}
