// The receiver of run.sh (the kill -9 run): counts deliveries per notification id.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	var mu sync.Mutex
	seen := map[string]int{}
	total := 0
	http.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		dup := 0
		for _, n := range seen {
			if n > 1 {
				dup += n - 1
			}
		}
		fmt.Fprintf(w, "requests %d distinct %d duplicates %d\n", total, len(seen), dup)
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var doc struct {
			Data struct{ ID string } `json:"data"`
		}
		_ = json.Unmarshal(b, &doc)
		time.Sleep(20 * time.Millisecond) // a receiver doing some work
		mu.Lock()
		seen[doc.Data.ID]++
		total++
		mu.Unlock()
		w.WriteHeader(204)
	})
	_ = http.ListenAndServe(os.Args[1], nil)
}
