package httpapi

import (
	"context"
	"log/slog"
	"time"

	"shipgraph/db"
	"shipgraph/respcache"
)

// KeyCache resolves API keys for the chain (keycache.go): the composition
// root builds it over the process' listening connection and closes it
// after the chain.
type KeyCache struct{ c *keyCache }

// NewKeyCache keeps up to size keys resolved (0: every key is looked up in
// the database, and listen may be nil). listen must be pinged at least
// every ping: cached keys are trusted only while a ping was answered
// within the last four.
func NewKeyCache(store *db.DB, listen *db.Listener, log *slog.Logger, size int, ping time.Duration) *KeyCache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &KeyCache{newKeyCache(store, listen, log, size, ping)}
}

// Close stops following key changes and records the last uses of cached
// keys; requests served after it look their keys up in the database.
func (k *KeyCache) Close() { k.c.close() }

// ResponseCache is a response cache with the feed that follows every
// account's change log for it (respcache.go): the composition root builds
// it and closes it after the chain.
type ResponseCache struct {
	cache *respcache.Cache
	feed  *cacheFeed
}

// NewResponseCache follows the change log (woken through listen) for
// cache and starts at once.
func NewResponseCache(store *db.DB, listen *db.Listener, cache *respcache.Cache, log *slog.Logger) *ResponseCache {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ResponseCache{cache: cache, feed: newCacheFeed(store, listen, cache, log)}
}

// Close stops following the change log.
func (rc *ResponseCache) Close() { rc.feed.close() }

// Wait returns once the feed read account's change log up to position pos
// (with account "", once it serves), or ctx ends.
func (rc *ResponseCache) Wait(ctx context.Context, account string, pos int64) error {
	return rc.feed.wait(ctx, account, pos)
}
