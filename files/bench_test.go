package files_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"shipgraph/files"
)

// Throughput of a 5 MB file through the local store and Shipgraph's signed
// URLs (make bench; numbers in CHANGELOG/the report, not asserted).

func benchStore(b *testing.B) (*files.Store, *httptest.Server, context.Context) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	fs, err := files.Open(context.Background(), files.Config{Dir: b.TempDir(), Secret: secret})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fs.Close() })
	srv := httptest.NewServer(fs.Handler())
	b.Cleanup(srv.Close)
	return fs, srv, files.WithBaseURL(context.Background(), srv.URL)
}

func fiveMB() []byte {
	data := make([]byte, 5<<20)
	_, _ = rand.Read(data)
	return data
}

// storedFiveMB stores 5 MB of random bytes in a bench store and returns
// them with their download link.
func storedFiveMB(b *testing.B) ([]byte, string) {
	b.Helper()
	fs, _, ctx := benchStore(b)
	data := fiveMB()
	if err := fs.Put(ctx, "k", "application/pdf", data); err != nil {
		b.Fatal(err)
	}
	link, err := fs.DownloadURL(ctx, "k", "application/pdf", "x.pdf")
	if err != nil {
		b.Fatal(err)
	}
	return data, link
}

func BenchmarkUpload5MB(b *testing.B) {
	fs, _, ctx := benchStore(b)
	data := fiveMB()
	sum := md5.Sum(data)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		link, headers, err := fs.UploadURL(ctx, files.Upload{Key: "b/" + strconv.Itoa(i), ContentType: "application/pdf", ByteSize: int64(len(data)), Checksum: base64.StdEncoding.EncodeToString(sum[:])})
		if err != nil {
			b.Fatal(err)
		}
		req, _ := http.NewRequest("PUT", link, bytes.NewReader(data))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			b.Fatal(err, resp.StatusCode)
		}
		resp.Body.Close()
	}
}

func BenchmarkDownload5MB(b *testing.B) {
	data, link := storedFiveMB(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		resp, err := http.Get(link)
		if err != nil {
			b.Fatal(err)
		}
		if n, _ := io.Copy(io.Discard, resp.Body); n != int64(len(data)) {
			b.Fatal(n)
		}
		resp.Body.Close()
	}
}

// BenchmarkDownload5MBParallel16 runs 16 downloads at once and reports the
// process's peak RSS above the start (server and clients share the process;
// the clients discard what they read).
func BenchmarkDownload5MBParallel16(b *testing.B) {
	data, link := storedFiveMB(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	base := rss()
	var peak atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if r := rss(); r > peak.Load() {
				peak.Store(r)
			}
		}
	}()
	b.SetBytes(int64(len(data)) * 16)
	for b.Loop() {
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				resp, err := client.Get(link)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
	}
	close(stop)
	b.ReportMetric(float64(peak.Load()-base)/(1<<20), "MB-rss-growth")
	b.ReportMetric(float64(peak.Load())/(1<<20), "MB-rss-peak")
}

// rss is the process's resident set in bytes (Linux).
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}
