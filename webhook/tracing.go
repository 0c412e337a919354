package webhook

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"shipgraph/db"
)

// Traces of deliveries (docs/tracing.md), when Config.Tracer is set: each
// attempt is a trace of its own, rooted at an internal span
//
//	webhook <event>        shipgraph.webhook.{id,notification_id,event,attempt,status}
//	├── SELECT …           the payload's statements (db's statement spans)
//	├── POST               client span: the request to the receiver
//	└── WITH …             recording the attempt
//
// The client span follows the HTTP client conventions, but for url.full:
// a webhook URL's path and query may hold the receiver's credentials, so it
// is the origin only (scheme, host and port), as the logs never show more.
// The receiver gets the client span's W3C traceparent.

const tracerName = "shipgraph/webhook"

// startSpan starts an attempt's root span, or returns ctx and nil when
// tracing is off.
func (d *Dispatcher) startSpan(ctx context.Context, w *db.WebhookDelivery) (context.Context, trace.Span) {
	if d.cfg.Tracer == nil {
		return ctx, nil
	}
	return d.cfg.Tracer.Tracer(tracerName).Start(ctx, "webhook "+w.Event, trace.WithNewRoot(), trace.WithAttributes(
		attribute.String("shipgraph.webhook.id", w.WebhookID),
		attribute.String("shipgraph.webhook.notification_id", w.ID),
		attribute.String("shipgraph.webhook.event", w.Event),
		attribute.Int("shipgraph.webhook.attempt", w.Attempts+1),
	))
}

// endSpan ends the attempt's span with its outcome.
func endSpan(sp trace.Span, a *db.WebhookAttempt) {
	if sp == nil {
		return
	}
	if a.Status != "" {
		sp.SetAttributes(attribute.String("shipgraph.webhook.status", string(a.Status)))
	}
	if a.Error != "" {
		sp.SetStatus(codes.Error, a.Error)
	}
	sp.End()
}

// startHTTPSpan starts the client span of req (its context's child) and
// writes its traceparent into req's headers; nil when tracing is off.
func (d *Dispatcher) startHTTPSpan(ctx context.Context, req *http.Request) trace.Span {
	parent := trace.SpanFromContext(ctx)
	if d.cfg.Tracer == nil || !parent.SpanContext().IsValid() {
		return nil
	}
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "443"
		if req.URL.Scheme == "http" {
			port = "80"
		}
	}
	p, _ := strconv.Atoi(port)
	ctx, sp := d.cfg.Tracer.Tracer(tracerName).Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.HTTPRequestMethodKey.String(req.Method),
		semconv.ServerAddress(host),
		semconv.ServerPort(p),
		semconv.URLFull(req.URL.Scheme+"://"+net.JoinHostPort(host, port)),
	))
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return sp
}

// endHTTPSpan ends the client span with the response's status or the
// error (never the URL: errors are the dispatcher's, already without it).
func endHTTPSpan(sp trace.Span, resp *http.Response, err error) {
	if sp == nil {
		return
	}
	switch {
	case err != nil:
		sp.SetAttributes(semconv.ErrorTypeOther)
		sp.SetStatus(codes.Error, "request failed")
	default:
		sp.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
		if !succeeded(resp.StatusCode) {
			sp.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
			sp.SetStatus(codes.Error, "")
		}
	}
	sp.End()
}
