package verb

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"shipgraph/app"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/db/pgembed"
	"shipgraph/db/seed"
	"shipgraph/model"
)

// Migrate applies the database migrations (idempotent).
func Migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, v := flags("migrate", config.Migrate)
	if err := parse(fs, args, stdout, stderr, false); err != nil {
		return err
	}
	_, closeStore, err := open(ctx, v, stderr)
	if err != nil {
		return err
	}
	defer closeStore()
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

// open opens and migrates the store of a verb other than serve.
func open(ctx context.Context, v *config.Values, stderr io.Writer) (*db.DB, func(), error) {
	log, err := app.NewLogger(v, stderr)
	if err != nil {
		return nil, nil, err
	}
	store, closeStore, err := app.OpenStore(ctx, v, log)
	if err != nil {
		return nil, nil, err
	}
	if err := store.Migrate(ctx); err != nil {
		closeStore()
		return nil, nil, err
	}
	return store, closeStore, nil
}

// Psql opens an interactive psql on the database: DATABASE_URL when set,
// else the embedded cluster of DATA_DIR through its private socket — the
// one a running shipgraph serves, or one started for the session and
// stopped after it. The embedded cluster has no TCP port to point psql at,
// and only its owner (and root) may use its socket.
func Psql(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, v := flags("psql", config.Psql)
	if err := parse(fs, args, stdout, stderr, true); err != nil {
		return err
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		dir, err := pgembed.FindBinDir()
		if err != nil {
			return errors.New("psql not found: install the PostgreSQL client (e.g. apt-get install postgresql-client)")
		}
		psql = filepath.Join(dir, "psql")
	}
	target := v.String(config.DatabaseURL)
	if target == "" {
		dataDir := v.String(config.DataDir)
		if url, ok := pgembed.Running(dataDir); ok {
			target = url("shipgraph")
		} else {
			pg, err := pgembed.Start(ctx, pgembed.Options{DataDir: dataDir, Fast: v.Bool(config.EmbeddedFast)})
			if err != nil {
				return err
			}
			defer func() { _ = pg.Stop() }()
			if err := db.EnsureDatabase(ctx, pg.URL("postgres"), "shipgraph"); err != nil {
				return err
			}
			target = pg.URL("shipgraph")
		}
	}
	// Not CommandContext: Ctrl-C belongs to psql (it cancels the running
	// query); our own SIGINT handling only keeps us alive meanwhile.
	cmd := exec.Command(psql, append([]string{target}, fs.Args()...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	return cmd.Run()
}

// Seed fills an empty database with demo data and prints the demo keys.
func Seed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, v := flags("seed", config.Seed)
	force := fs.Bool("force", false, "replace the data of a non-empty database")
	ifEmpty := fs.Bool("if-empty", false, "do nothing (and succeed) when the database already has data")
	if err := parse(fs, args, stdout, stderr, false); err != nil {
		return err
	}
	shipments := v.Int(config.SeedShipments)
	if shipments < 1 {
		return fmt.Errorf("--seed-shipments must be at least 1")
	}
	log, err := app.NewLogger(v, stderr)
	if err != nil {
		return err
	}
	store, closeStore, err := open(ctx, v, stderr)
	if err != nil {
		return err
	}
	defer closeStore()
	if *ifEmpty {
		empty, err := store.IsEmpty(ctx)
		if err != nil {
			return err
		}
		if !empty {
			fmt.Fprintln(stderr, "database already has data; not seeding")
			return nil
		}
	}
	opts := seed.Options{Shipments: shipments, Seed: v.Int64(config.DemoSeed), Force: *force}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		opts.Progress = stderr
	}
	tokens, stats, err := seed.Run(ctx, store, opts)
	if err != nil {
		return err
	}
	if _, err := app.SeedFiles(ctx, v, store, log); err != nil {
		return fmt.Errorf("demo files: %w", err)
	}
	for _, t := range tokens {
		fmt.Fprintf(stdout, "token %s %s %s\n", t.Account, t.Role, t.Key)
	}
	secs := stats.Duration.Seconds()
	fmt.Fprintf(stderr, "seeded %d shipments (%d rows) in %.1fs (%.0f rows/s); demo keys are for demos only\n",
		shipments, stats.Rows, secs, float64(stats.Rows)/max(secs, 1e-9))
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Token creates or revokes an API key.
func Token(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "revoke") {
		fmt.Fprint(stderr, "usage: shipgraph token create --account ID|SLUG --role admin|member|viewer\n       shipgraph token revoke --account ID|SLUG --id TOKEN_ID\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return ErrUsage
	}
	sub := args[0]
	fs, v := flags("token "+sub, config.Token)
	account := fs.String("account", "", "account id or slug (required)")
	role := fs.String("role", "", "admin, member or viewer (create)")
	name := fs.String("name", "", "a note to tell keys apart (create)")
	id := fs.String("id", "", "id of the key to revoke (revoke)")
	if err := parse(fs, args[1:], stdout, stderr, false); err != nil {
		return err
	}
	if *account == "" {
		return fmt.Errorf("--account is required")
	}
	if sub == "create" && !model.ValidRole(*role) {
		return fmt.Errorf("--role must be admin, member or viewer")
	}
	if sub == "revoke" && *id == "" {
		return fmt.Errorf("--id is required")
	}
	store, closeStore, err := open(ctx, v, stderr)
	if err != nil {
		return err
	}
	defer closeStore()
	acct, err := store.FindAccount(ctx, *account)
	if err != nil {
		return fmt.Errorf("account %q: %s", *account, model.ErrorMessage(err))
	}
	if sub == "revoke" {
		if err := store.RevokeToken(ctx, acct.ID, *id); err != nil {
			return fmt.Errorf("key %q: %s", *id, model.ErrorMessage(err))
		}
		fmt.Fprintf(stdout, "revoked %s\n", *id)
		return nil
	}
	in := db.TokenInput{AccountID: acct.ID, Role: *role, Name: *name}
	if u, err := store.FirstUserWithRole(ctx, acct.ID, *role); err == nil {
		in.UserID = &u.ID
	} else if model.ErrorCode(err) != model.ENOTFOUND {
		return err
	}
	if in.Key, err = db.NewAPIKey(rand.Reader); err != nil {
		return err
	}
	tok, err := store.CreateToken(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token %s %s %s\n", acct.Slug, *role, in.Key)
	fmt.Fprintf(stderr, "key id %s; store the key now: it is shown only once\n", tok.ID)
	return nil
}
