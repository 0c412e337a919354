// Package pgbouncertest moved to testkit/pgbouncertest; this alias keeps branches written before
// the move compiling until they are merged. New code imports testkit/pgbouncertest.
package pgbouncertest

import kit "shipgraph/testkit/pgbouncertest"

type Pooler = kit.Pooler

const Password = kit.Password

var (
	Binary = kit.Binary
	Start  = kit.Start
)
