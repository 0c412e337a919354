package db_test

import (
	"strings"
	"testing"

	"shipgraph/db"
)

// TestNormalizeDSN: both forms libpq documents come out in the key=value
// form lib/pq reads host lists from; bad values are errors that say what is
// wrong without the password.
func TestNormalizeDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write",
			"dbname='db' host='h1,h2' port='5432,5433' target_session_attrs='read-write' user='u'"},
		{"postgresql://u:p%40ss@127.0.0.1:1,127.0.0.2/shipgraph?sslmode=disable",
			"dbname='shipgraph' host='127.0.0.1,127.0.0.2' password='p@ss' port='1,5432' sslmode='disable' user='u'"},
		{"postgres://[::1]:5432,[fe80::1]/db", "dbname='db' host='::1,fe80::1' port='5432,5432'"},
		{"postgres://h/db", "dbname='db' host='h'"},
		{"postgres://u:it's@h/d b", `dbname='d b' host='h' password='it\'s' user='u'`},
		{"postgres://u@h1:1,h2:2/db?target_session_attrs=primary&connect_timeout=3",
			"connect_timeout='3' dbname='db' host='h1,h2' port='1,2' target_session_attrs='primary' user='u'"},
		{"  host=a,b port=1,2 dbname=x target_session_attrs=read-write ", "host=a,b port=1,2 dbname=x target_session_attrs=read-write"},
	} {
		got, err := db.NormalizeDSN(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"mysql://u@h/db", `scheme "mysql"`},
		{"just-a-host", "neither a postgres:// URL nor key=value"},
		{"postgres://u:secret@h1:1,h2:x/db", `port "x" of host h2`},
		{"postgres://u:secret@h1:1,,h2/db", "an empty host"},
		{"postgres://u:secret@h1/db?target_session_attrs=writable", "target_session_attrs"},
		{"host=a,b,c port=1,2 password=secret", "could not match"},
		{"postgres://u:secret@[::1/db", "missing ]"},
	} {
		_, err := db.NormalizeDSN(c.in)
		if err == nil {
			t.Errorf("%q: no error, want one saying %q", c.in, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: error %q, want one saying %q without the password", c.in, err, c.want)
		}
	}
}

// TestSplitDSNList: DATABASE_REPLICA_URLS holds connection strings that
// may themselves hold commas (host lists).
func TestSplitDSNList(t *testing.T) {
	got := db.SplitDSNList("postgres://u@h1:1,h2:2/db?target_session_attrs=standby, postgres://r3/db,host=a,b port=1,2 dbname=x")
	want := []string{"postgres://u@h1:1,h2:2/db?target_session_attrs=standby", "postgres://r3/db", "host=a,b port=1,2 dbname=x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
