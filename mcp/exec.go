package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// gqlError is one error of a GraphQL answer.
type gqlError struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func (e gqlError) code() string {
	c, _ := e.Extensions["code"].(string)
	return c
}

// toolError is an error a tool reports to the agent as its result
// (isError): the API's code and message.
type toolError struct {
	code, message string
}

func (e *toolError) Error() string {
	if e.code == "" {
		return e.message
	}
	return e.code + ": " + e.message
}

func failure(code, format string, args ...any) *toolError {
	return &toolError{code: code, message: fmt.Sprintf(format, args...)}
}

// execute runs op with vars as a POST /graphql through the chain's handler
// (after authentication: ctx carries the caller's principal), so that it
// takes the same way as any GraphQL request: response cache, loaders,
// complexity and depth limits, cost budget, trusted documents. It returns
// the answer's data, or a toolError with the API's first error.
func (s *service) execute(ctx context.Context, op *operation, vars map[string]any) (map[string]any, error) {
	body, err := json.Marshal(map[string]any{"query": op.text, "operationName": op.name, "variables": vars})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json")
	rec := &recorder{header: http.Header{}}
	s.graphql.ServeHTTP(rec, req)
	var answer struct {
		Data   map[string]any `json:"data"`
		Errors []gqlError     `json:"errors"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &answer); err != nil {
		return nil, failure("INTERNAL", "the API answered %d with no GraphQL response", rec.status())
	}
	if len(answer.Errors) > 0 {
		e := answer.Errors[0]
		msg := e.Message
		if len(answer.Errors) > 1 {
			msg += fmt.Sprintf(" (and %d more errors)", len(answer.Errors)-1)
		}
		if f, ok := e.Extensions["field"].(string); ok && f != "" && !strings.Contains(msg, f) {
			msg += " (" + f + ")"
		}
		return nil, &toolError{code: e.code(), message: msg}
	}
	if answer.Data == nil {
		return nil, failure("INTERNAL", "the API answered %d with no data", rec.status())
	}
	return answer.Data, nil
}

// recorder keeps the in-process answer of the GraphQL handler.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}
func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
