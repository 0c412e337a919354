package sharedlimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Read-your-writes over instances (db.LSNStore, docs/scaling.md): each
// account's high-water WAL position, "<prefix>lsn:<account id>", and,
// for the response cache, its change-log position after its last
// answered write, "<prefix>logpos:<account id>", each as 16
// hexadecimal digits so that Lua compares positions as strings (its
// numbers are doubles). Raised only (SET-if-greater), expiring LSNTTL after
// the account's last write: by then every replica that is not skipped for
// lag has replayed it.

// LSNTTL is how long an account's position is kept after its last write.
const LSNTTL = 10 * time.Minute

var fallbackLSN = FallbackTotal.WithLabelValues("lsn")

// advanceLSN sets KEYS[1] to ARGV[1] unless it holds a higher position,
// and renews its expiry (ARGV[2] ms).
var advanceLSN = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if (not cur) or cur < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0
`)

// AccountLSN returns the highest WAL position recorded for the account by
// any instance (0: none in the last LSNTTL). An error (Redis down or slow,
// breaker open) means unknown: the caller reads from the primary.
func (l *Limits) AccountLSN(ctx context.Context, accountID string) (uint64, error) {
	return l.position(ctx, "lsn:", accountID)
}

// AdvanceAccountLSN raises the account's position to lsn.
func (l *Limits) AdvanceAccountLSN(ctx context.Context, accountID string, lsn uint64) error {
	return l.advance(ctx, "lsn:", accountID, lsn)
}

// AccountLogPosition returns the highest change-log position (an xid8
// horizon: every transaction below it had ended) recorded by any instance
// after a write of the account answered, for the response cache (0: none
// in the last LSNTTL). An error means unknown: the caller does not answer
// from its cache.
func (l *Limits) AccountLogPosition(ctx context.Context, accountID string) (uint64, error) {
	return l.position(ctx, "logpos:", accountID)
}

// AdvanceAccountLogPosition raises the account's change-log position to pos.
func (l *Limits) AdvanceAccountLogPosition(ctx context.Context, accountID string, pos uint64) error {
	return l.advance(ctx, "logpos:", accountID, pos)
}

// position reads "<prefix><kind><account>".
func (l *Limits) position(ctx context.Context, kind, accountID string) (uint64, error) {
	if !l.usable() {
		fallbackLSN.Inc()
		return 0, errors.New("redis unreachable")
	}
	rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	v, err := l.rdb.Get(rctx, l.o.Prefix+kind+accountID).Result()
	if errors.Is(err, redis.Nil) {
		l.ok()
		return 0, nil
	}
	if err != nil {
		if ctx.Err() == nil {
			l.failed("lsn", err)
			fallbackLSN.Inc()
		}
		return 0, err
	}
	l.ok()
	n, err := strconv.ParseUint(v, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("redis: account position %q: %w", v, err)
	}
	return n, nil
}

// advance raises "<prefix><kind><account>" to pos. It heeds its own
// breaker, not the one of the limit decisions: those fall back per process
// when Redis is slow for a moment (one command past Timeout on a loaded
// machine), while a position not recorded lets another instance answer
// from before the write, so it is tried unless recording itself failed
// within the last Breaker.
func (l *Limits) advance(ctx context.Context, kind, accountID string, pos uint64) error {
	if time.Now().UnixNano() < l.recordUntil.Load() {
		fallbackLSN.Inc()
		return errors.New("redis unreachable")
	}
	// A position not recorded lets another instance answer from what it
	// read before the write, so a slow answer (a loaded machine: one
	// command past Timeout) is tried again, up to advanceTries times
	// within ctx, before the breaker opens. Raising is idempotent.
	var err error
	for try := 0; try < advanceTries && ctx.Err() == nil; try++ {
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		err = advanceLSN.Run(rctx, l.rdb, []string{l.o.Prefix + kind + accountID}, fmt.Sprintf("%016x", pos), LSNTTL.Milliseconds()).Err()
		cancel()
		if err == nil {
			l.ok()
			return nil
		}
	}
	if err == nil { // ctx ended before the first try
		return ctx.Err()
	}
	if ctx.Err() == nil {
		l.failed("lsn", err)
		l.recordUntil.Store(time.Now().Add(l.o.Breaker).UnixNano())
		fallbackLSN.Inc()
	}
	return err
}

// advanceTries is how many times advance sends its command before it
// gives up (each within Options.Timeout).
const advanceTries = 3
