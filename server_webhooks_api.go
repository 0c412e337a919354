package main

import (
	"flag"

	"shipgraph/resolve"
)

// WebhooksAPIConfig are the settings of the webhook API (issue 17,
// docs/webhooks.md): the per-account limit and the SSRF switch.
type WebhooksAPIConfig struct {
	Limit        int  // most webhooks per account; 0 = no limit
	AllowPrivate bool // http and private addresses allowed (demos, tests)
}

func bindWebhooksAPIConfig(fs *flag.FlagSet, c *WebhooksAPIConfig) {
	fs.IntVar(&c.Limit, "webhook-limit", envInt("WEBHOOK_LIMIT", resolve.DefaultWebhookLimit), "most webhooks one account may have; 0 = no limit (WEBHOOK_LIMIT)")
	fs.BoolVar(&c.AllowPrivate, "webhook-allow-private-urls", env("WEBHOOK_ALLOW_PRIVATE_URLS", "false") == "true", "let webhook URLs be http and point at loopback, private, link-local or metadata addresses; for local demos and tests only (WEBHOOK_ALLOW_PRIVATE_URLS)")
}

// webhookConfig is the resolver layer's webhook configuration.
func (c WebhooksAPIConfig) webhookConfig() resolve.WebhookConfig {
	return resolve.WebhookConfig{Limit: c.Limit, AllowPrivate: c.AllowPrivate}
}
