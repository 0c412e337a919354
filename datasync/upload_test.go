package datasync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/testkit/s3test"
)

// partRecorder is an HTTP proxy in front of the S3-compatible server that
// records the multipart upload's parts: their sizes and how many were in
// flight at once.
type partRecorder struct {
	mu               sync.Mutex
	parts            []int64
	inFlight, most   int
	multipartStarted bool
}

func (p *partRecorder) handler(upstream *url.URL) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(upstream)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		_, uploads := q["uploads"]
		isPart := r.Method == http.MethodPut && q.Get("partNumber") != ""
		p.mu.Lock()
		if r.Method == http.MethodPost && uploads {
			p.multipartStarted = true
		}
		if isPart {
			// A part sent with a trailing checksum is aws-chunked: its
			// payload's size is in this header.
			n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
			if err != nil {
				n = r.ContentLength
			}
			p.parts = append(p.parts, n)
			p.inFlight++
			p.most = max(p.most, p.inFlight)
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r) // the Host header is kept: the signature holds
		if isPart {
			p.mu.Lock()
			p.inFlight--
			p.mu.Unlock()
		}
	})
}

// liveHeap is the heap the last garbage collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A backfill file larger than several upload parts goes up in parts of
// S3's smallest size, one at a time, and the heap live during its upload
// stays near one part and one page: the transfer manager's defaults (six
// 8 MiB parts, a first read of 16 MiB) held about 70 MiB live and 150 MiB
// in use for a file of 100 pages, whatever else the process did.
func TestObjectStoreUploadBounded(t *testing.T) {
	srv := s3test.Start(t, "lake")
	upstream, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rec := &partRecorder{}
	proxy := httptest.NewServer(rec.handler(upstream))
	t.Cleanup(proxy.Close)
	ctx := context.Background()
	ot, err := openObjectTarget(ctx, fmt.Sprintf("s3://%s:%s@%s/bounded?endpoint=%s&region=%s&use_path_style=true",
		s3test.Access, s3test.Secret, srv.Bucket, proxy.URL, s3test.Region), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ot.Close() })

	tb := db.LookupSyncTable(db.SyncShipments)
	// Pages of random text (Zstandard cannot shrink it much): about half a MiB
	// of Parquet a page, so that 48 pages make a file of several parts.
	page := func(n int) []db.SyncRow {
		rows := make([]db.SyncRow, 1000)
		raw := make([]byte, 24)
		for i := range rows {
			r := make(db.SyncRow, len(tb.Columns))
			for j, c := range tb.Columns {
				switch c.Type {
				case "timestamp":
					r[j] = time.Unix(int64(1_700_000_000+n*1000+i), 0).UTC()
				case "integer", "bigint":
					r[j] = int64(n*1000 + i)
				default:
					_, _ = rand.Read(raw)
					r[j] = hex.EncodeToString(raw)
				}
			}
			rows[i] = r
		}
		return rows
	}
	const pages = 48
	f, err := ot.begin(ctx, tb, batchName(1, true, ""), 1)
	if err != nil {
		t.Fatal(err)
	}
	base := liveHeap()
	var peak uint64
	for n := range pages {
		if err := f.write(page(n), nil); err != nil {
			f.abort()
			t.Fatal(err)
		}
		peak = max(peak, liveHeap())
	}
	if err := f.commit(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	peak = max(peak, liveHeap())
	attrs, err := ot.b.Attributes(ctx, tb.Name+"/"+batchName(1, true, "")+".parquet")
	if err != nil {
		t.Fatal(err)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	t.Logf("a file of %d pages: %.1f MiB in %d parts (at most %d at once); live heap %.1f MiB before, %.1f MiB at most while writing",
		pages, float64(attrs.Size)/(1<<20), len(rec.parts), rec.most, float64(base)/(1<<20), float64(peak)/(1<<20))
	if !rec.multipartStarted || attrs.Size < 3*uploadPartBytes {
		t.Fatalf("the file (%d bytes) should have been large enough for a multipart upload of several parts", attrs.Size)
	}
	var sum int64
	for i, n := range rec.parts {
		if n > uploadPartBytes {
			t.Errorf("part %d has %d bytes: more than the %d of a part", i+1, n, uploadPartBytes)
		}
		sum += n
	}
	if sum != attrs.Size {
		t.Errorf("the parts sum to %d bytes, the file has %d", sum, attrs.Size)
	}
	if rec.most > uploadParts {
		t.Errorf("%d parts were in flight at once; at most %d should be", rec.most, uploadParts)
	}
	// One part filling, one in flight, one page and its encoding, with
	// room for the collector's timing; the defaults held over 60 MiB more.
	if grew := int64(peak) - int64(base); grew > 40<<20 {
		t.Errorf("the live heap grew %.1f MiB while the file was written; its upload's buffers should be bounded near %d MiB",
			float64(grew)/(1<<20), 3*uploadPartBytes>>20)
	}
}
