package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Proxy is the stdio transport for desktop clients (shipgraph mcp): it
// reads JSON-RPC messages, one a line, from in, posts each to url (a
// Shipgraph /mcp) with key, and writes the answers to out, one a line.
// The server is stateless, so a message needs nothing but the key and the
// negotiated protocol version. A request the server cannot be reached
// for is answered with a JSON-RPC error rather than left hanging. It
// returns when in ends or ctx is done.
func Proxy(ctx context.Context, url, key string, in io.Reader, out io.Writer, client *http.Client) error {
	if client == nil {
		client = http.DefaultClient
	}
	p := &proxy{url: url, key: key, out: out, client: client}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := p.forward(ctx, line); err != nil {
			return err
		}
	}
	return sc.Err()
}

type proxy struct {
	url, key string
	out      io.Writer
	client   *http.Client
	version  string // the protocol version initialize negotiated
}

// message is what the proxy reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result,omitempty"`
}

func (p *proxy) forward(ctx context.Context, line []byte) error {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return p.write(rpcError(nil, -32700, "parse error: "+err.Error()))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(line))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Token "+p.key)
	if p.version != "" {
		req.Header.Set("MCP-Protocol-Version", p.version)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return p.fail(m, fmt.Sprintf("cannot reach %s: %v", p.url, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return p.fail(m, fmt.Sprintf("reading the answer of %s: %v", p.url, err))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var answers [][]byte
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil // a notification or a response: nothing to answer
	case mt == "text/event-stream":
		for _, ev := range strings.Split(string(body), "\n\n") {
			var data []string
			for _, l := range strings.Split(ev, "\n") {
				if d, ok := strings.CutPrefix(l, "data:"); ok {
					data = append(data, strings.TrimPrefix(d, " "))
				}
			}
			if len(data) > 0 {
				answers = append(answers, []byte(strings.Join(data, "\n")))
			}
		}
	case mt == "application/json" && json.Valid(body):
		answers = [][]byte{body}
	default:
		return p.fail(m, fmt.Sprintf("%s answered %s: %s", p.url, resp.Status, strings.TrimSpace(string(body))))
	}
	for _, a := range answers {
		var r message
		if json.Unmarshal(a, &r) == nil && r.Result != nil && r.Result.ProtocolVersion != "" && m.Method == "initialize" {
			p.version = r.Result.ProtocolVersion
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, a); err != nil {
			continue
		}
		if err := p.write(compact.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// fail answers a request (a message with an id) with a JSON-RPC error;
// a notification's failure has no one to tell.
func (p *proxy) fail(m message, msg string) error {
	if len(m.ID) == 0 || m.Method == "" {
		return nil
	}
	return p.write(rpcError(m.ID, -32603, msg))
}

func rpcError(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

func (p *proxy) write(b []byte) error {
	_, err := p.out.Write(append(b, '\n'))
	return err
}
