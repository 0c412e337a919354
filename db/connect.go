package db

import (
	"database/sql/driver"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
)

// Options bounds what the store waits for from PostgreSQL.
type Options struct {
	// ConnectTimeout bounds a new connection, handshake included (lib/pq's
	// connect_timeout): a server that accepts connections and never
	// answers fails them instead of hanging. Unless the URL sets its own
	// connect_timeout. 0 = no bound.
	ConnectTimeout time.Duration
	// StatementTimeout is the session's statement_timeout: a statement
	// running longer is cancelled by the server (57014, answered 503).
	// Unless the URL sets its own statement_timeout. 0 = none.
	StatementTimeout time.Duration
	// KeepAlive is the TCP keepalive idle time (probes every third of it,
	// three unanswered close the connection): a peer that vanished
	// without a word is noticed. 0 = the system's default.
	KeepAlive time.Duration
	// Pooler says the URL reaches PostgreSQL through a pooler in
	// transaction mode (PgBouncer, DATABASE_POOLER=pgbouncer), where a
	// server connection is the client's only for one transaction: no
	// statement is prepared per connection (prepared.go), each statement
	// with parameters goes in one round trip (lib/pq's
	// binary_parameters: parse, bind and execute before one sync, where a
	// describe-then-bind pair could land on two server connections), JSON
	// values travel as text, and statement_timeout is not sent as a
	// startup parameter (PgBouncer refuses it; set it on the role or the
	// database instead, docs/scaling.md).
	Pooler bool
	// DirectURL reaches PostgreSQL itself, bypassing the pooler: the
	// session-scoped work goes there (LISTEN on the listening connection,
	// migrations under their advisory lock). Required with Pooler.
	DirectURL string
	// Replicas are the URLs of streaming read replicas
	// (DATABASE_REPLICA_URLS, replica.go): reads of requests marked with
	// Reads go there when a replica has replayed the account's last
	// acknowledged write. Each has a pool of its own, prepared statements
	// as the primary's (none with Pooler).
	Replicas []string
	// ReplicaWait is how long a read waits for a replica to replay the
	// account's last write before it goes to the primary
	// (DATABASE_REPLICA_WAIT). 0 = DefaultReplicaWait; negative = no wait.
	ReplicaWait time.Duration
	// ReplicaMaxLag is the lag beyond which a replica is skipped
	// (DATABASE_REPLICA_MAX_LAG). 0 = DefaultReplicaMaxLag.
	ReplicaMaxLag time.Duration
	// ReplicaPoll is how often each replica's replay position (and the
	// primary's WAL position) is read. 0 = DefaultReplicaPoll.
	ReplicaPoll time.Duration
}

// DefaultOptions: connections within 5 s, statements within 30 s, a dead
// peer noticed within a minute or so.
var DefaultOptions = Options{
	ConnectTimeout:   5 * time.Second,
	StatementTimeout: 30 * time.Second,
	KeepAlive:        30 * time.Second,
}

// withTimeouts returns dsn with connect_timeout and statement_timeout
// added where o sets them and dsn does not.
func withTimeouts(dsn string, o Options) string {
	params := map[string]string{}
	if o.ConnectTimeout > 0 {
		// Whole seconds, at least one: lib/pq's unit.
		params["connect_timeout"] = strconv.Itoa(max(1, int((o.ConnectTimeout+time.Second-1)/time.Second)))
	}
	if o.StatementTimeout > 0 && !o.Pooler {
		params["statement_timeout"] = strconv.FormatInt(o.StatementTimeout.Milliseconds(), 10)
	}
	if o.Pooler {
		params["binary_parameters"] = "yes"
	}
	if len(params) == 0 {
		return dsn
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		for k, v := range params {
			if !q.Has(k) {
				q.Set(k, v)
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params {
		if !strings.Contains(dsn, k+"=") {
			dsn += " " + k + "=" + v
		}
	}
	return dsn
}

// connector is lib/pq's connector for dsn, dialling with TCP keepalives,
// whose connections keep the raw path's statements (raw.go).
//
// Prepared statements' results come in text form for every column
// (lib/pq's disable_prepared_binary_result): in binary form lib/pq
// allocates each uuid's 36-byte text and hex-encodes it, where the text
// form hands the row reader PostgreSQL's bytes (scanUUID); the Go values
// of every type are the same either way (int8 parsed instead of read,
// bytea hex-decoded).
func connector(dsn string, o Options) (driver.Connector, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DisablePreparedBinaryResult = true
	c, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, err
	}
	d := dialer{}
	if o.KeepAlive > 0 {
		d.KeepAliveConfig = net.KeepAliveConfig{Enable: true, Idle: o.KeepAlive, Interval: max(o.KeepAlive/3, time.Second), Count: 3}
	}
	c.Dialer(d)
	return rawConnector{c}, nil
}

// dialer is a net.Dialer in lib/pq's Dialer shape.
type dialer struct{ net.Dialer }

func (d dialer) Dial(network, address string) (net.Conn, error) {
	return d.Dialer.Dial(network, address)
}

func (d dialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	nd := d.Dialer
	nd.Timeout = timeout
	return nd.Dial(network, address)
}
