package app

import (
	"log/slog"
	"time"

	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/graph/gqlhttp"
	"shipgraph/httpapi"
	"shipgraph/live"
	"shipgraph/load"
	"shipgraph/resolve"
	"shipgraph/respcache"
)

// ChainConfig is the HTTP chain's share of the configuration: the chain's
// own settings and those of the parts NewChain builds for it.
type ChainConfig struct {
	httpapi.Config
	// KeyCache is how many API keys (by hash) are kept resolved in
	// memory, least recently used first out; 0 looks every key up in the
	// database. Unknown keys are never cached.
	KeyCache int
	// KeyCachePing is how often the listening connection is pinged while
	// the key cache is on: cached keys are trusted only while a ping was
	// answered within the last four intervals, so a connection that dies
	// without a word turns the cache off within that time.
	KeyCachePing time.Duration
	// Live configures subscriptions (limits, queue, keep-alive, ping).
	Live live.Config
	// ResponseCacheBytes bounds the response cache; 0 keeps no answers
	// (ETags and 304s still work).
	ResponseCacheBytes int64
	// ResponseCacheMaxAge is the longest an answer is kept (the
	// reference cache's TTL: reference rows are not in the change log);
	// 0 is no limit.
	ResponseCacheMaxAge time.Duration
	// Resolver are the resolver layer's dependencies (Files and Shared
	// are taken from Config).
	Resolver resolve.Deps
}

// keyCachePing is how often the listening connection is pinged while the
// key cache is on, when KeyCachePing is 0: a silently dead listener stops
// the cache within a second. Not a setting (nobody has needed to tune it).
const keyCachePing = 250 * time.Millisecond

// HTTPConfig is the chain's configuration from the declared settings
// (config/settings.go hold every default).
func HTTPConfig(v *config.Values, log *slog.Logger) ChainConfig {
	var cc ChainConfig
	hc := &cc.Config
	hc.BodyLimit, hc.BodyTimeout, hc.RateLimit = v.Int64(config.BodyLimit), v.Duration(config.BodyTimeout), v.Int(config.RateLimit)
	hc.RequestTimeout, hc.ResponseLimit = v.Duration(config.RequestTimeout), v.Int64(config.GraphQLResponseLimit)
	g := &hc.GraphQL
	*g = gqlhttp.DefaultHandlerConfig
	g.Introspection = v.Bool(config.GraphQLIntrospection)
	g.NoFastPath = !v.Bool(config.GraphQLFastPath)
	g.ComplexityLimit, g.DepthLimit = v.Int(config.GraphQLComplexityLimit), v.Int(config.GraphQLDepthLimit)
	g.AliasLimit, g.TokenLimit = v.Int(config.GraphQLAliasLimit), v.Int(config.GraphQLTokenLimit)
	g.FieldLimit = v.Int(config.GraphQLFieldLimit)
	hc.CostBudget = v.Int(config.GraphQLCostBudget)
	g.Logger = log
	cc.Resolver.Loaders = load.DefaultLoaderConfig
	if d := v.Duration(config.LoaderWait); d > 0 {
		cc.Resolver.Loaders.Wait = d
	}
	hc.PlaygroundKey = v.String(config.PlaygroundAPIKey)
	hc.PublicBaseURL = v.String(config.PublicBaseURL)
	hc.Logger = log
	cc.KeyCache = v.Int(config.KeyCache)
	cc.ResponseCacheBytes = v.Int64(config.ResponseCacheBytes)
	cc.ResponseCacheMaxAge = v.Duration(config.ReferenceCacheTTL)
	cc.Resolver.Webhooks = resolve.WebhookConfig{Limit: v.Int(config.WebhookLimit), AllowPrivate: v.Bool(config.WebhookAllowPrivateURLs)}
	cc.Live = live.DefaultConfig
	cc.Live.MaxPerKey, cc.Live.Queue = v.Int(config.SubscriptionLimit), v.Int(config.SubscriptionQueue)
	if d := v.Duration(config.SubscriptionKeepalive); d > 0 {
		cc.Live.KeepAlive = d
	}
	return cc
}

// Chain is the HTTP chain with the parts NewChain built for it: the
// resolver layer and the listening connection are the process' own (the
// background components share them).
type Chain struct {
	*httpapi.Handler
	Resolver *resolve.Resolver
	// Listener is the process' one listening connection: the key cache,
	// the live hub, the response cache and the webhook fan-out's
	// wake-ups.
	Listener *db.Listener

	hub   *live.Hub
	keys  *httpapi.KeyCache
	cache *httpapi.ResponseCache
}

// NewChain builds the chain's parts over store — the listening connection
// (pinged as often as the key cache or the live hub asks), the resolver
// layer, the live hub, the key cache, the response cache and its feed —
// and the chain over them. With a key cache it starts listening for
// changed keys at once; until the listener is up, keys are looked up in
// the database.
func NewChain(store *db.DB, c ChainConfig) *Chain {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.KeyCachePing <= 0 {
		c.KeyCachePing = keyCachePing
	}
	if c.Shared != nil {
		store.ShareLSNs(c.Shared) // read-your-writes over every instance
		if c.Live.Shared == nil {
			c.Live.Shared = c.Shared
		}
	}
	if c.Live.Ping <= 0 {
		c.Live.Ping = live.DefaultConfig.Ping
	}
	ping := c.Live.Ping
	if c.KeyCache > 0 {
		ping = min(ping, c.KeyCachePing)
	}
	ch := &Chain{Listener: store.Listen(ping)}
	deps := c.Resolver
	deps.Files, deps.Shared = c.Files, c.Shared
	ch.Resolver = resolve.New(store, deps)
	if c.ResponseCacheBytes > 0 {
		ch.cache = httpapi.NewResponseCache(store, ch.Listener, respcache.New(c.ResponseCacheBytes, c.ResponseCacheMaxAge), log)
		// A subscriber that refetches on an event must not be answered
		// from before it: the cache reads a change before the hub sends it.
		c.Live.Before = ch.cache.Wait
	}
	ch.hub = live.New(store, ch.Listener, c.Live, log)
	ch.keys = httpapi.NewKeyCache(store, ch.Listener, log, c.KeyCache, c.KeyCachePing)
	parts := httpapi.Parts{Resolver: ch.Resolver, Live: ch.hub, Keys: ch.keys}
	if ch.cache != nil {
		parts.Cache = ch.cache
	}
	ch.Handler = httpapi.New(store, c.Config, parts)
	return ch
}

// Close ends the live hub, the key cache (recording the last uses of
// cached keys) and the response cache's feed, then closes the listening
// connection: after the HTTP server drained and the background components
// stopped. Requests still served after it look their keys up in the
// database.
func (ch *Chain) Close() {
	ch.hub.Close()
	ch.keys.Close()
	if ch.cache != nil {
		ch.cache.Close()
	}
	ch.Listener.Close()
}
