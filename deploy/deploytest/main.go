// Command deploytest is the Go half of scripts/deploy-test.sh, which runs
// the Helm chart's rendered manifests under podman kube play:
//
//	deploytest split OUTDIR < rendered.yaml
//	deploytest load -backends URL,URL -key KEY [-path P] [-workers N]
//
// split turns one release's rendered chart into what podman 4.3's kube play
// takes: OUTDIR/deployment.yaml (the release's ConfigMap and Deployment),
// OUTDIR/migrate.yaml (the hook ConfigMap and the migration Job's pod
// template as a Pod: kube play runs no Jobs), and OUTDIR/secret-NAME.json
// for each Secret (podman reads a secretRef from a podman secret holding
// the Secret's data as JSON).
//
// load sends GET requests from several workers to the backends that answer
// /readyz 200 (polled every 100 ms, as endpoints follow a readiness probe)
// until SIGINT or SIGTERM (the first 20 failures of each backend as they
// happen), then prints the counts; it exits 1 when a
// request failed (transport error or a status other than 200), or, with
// -expect-rejoin, when no backend left and came back and served again.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: deploytest split OUTDIR | load -backends URL,URL -key KEY")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "split":
		if len(os.Args) != 3 {
			err = errors.New("usage: deploytest split OUTDIR < rendered.yaml")
			break
		}
		err = split(os.Stdin, os.Args[2])
	case "load":
		err = load(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploytest:", err)
		os.Exit(1)
	}
}

func split(r io.Reader, dir string) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var deployment, migrate [][]byte
	add := func(to *[][]byte, obj any) error {
		y, err := yaml.Marshal(obj)
		*to = append(*to, y)
		return err
	}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return err
		}
		switch tm.Kind {
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict([]byte(doc), &cm); err != nil {
				return err
			}
			to := &deployment
			if cm.Annotations["helm.sh/hook"] != "" {
				to = &migrate
			}
			cm.Annotations = nil
			if err := add(to, &cm); err != nil {
				return err
			}
		case "Secret":
			var s corev1.Secret
			if err := yaml.UnmarshalStrict([]byte(doc), &s); err != nil {
				return err
			}
			data, err := json.Marshal(s.Data)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "secret-"+s.Name+".json"), data, 0o600); err != nil {
				return err
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
				return err
			}
			forKubePlay(&d.Spec.Template.Spec, d.Name)
			if err := add(&deployment, &d); err != nil {
				return err
			}
		case "Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &j); err != nil {
				return err
			}
			forKubePlay(&j.Spec.Template.Spec, j.Name)
			pod := corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: j.Name, Labels: j.Spec.Template.Labels},
				Spec:       j.Spec.Template.Spec}
			if err := add(&migrate, &pod); err != nil {
				return err
			}
		}
	}
	if len(deployment) == 0 || len(migrate) == 0 {
		return errors.New("the rendered chart has no Deployment or no migration Job")
	}
	for name, docs := range map[string][][]byte{"deployment.yaml": deployment, "migrate.yaml": migrate} {
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Join(docs, []byte("---\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// forKubePlay adapts a pod spec to podman 4.3's kube play on the host's
// network: it refuses port mappings there, so the ports go, and the probes
// name the port by number instead; it makes a named volume of each
// emptyDir, shared by every pod naming it alike, so each pod's get its
// pod's name.
func forKubePlay(spec *corev1.PodSpec, pod string) {
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if spec.HostNetwork {
			named := map[string]int32{}
			for _, p := range c.Ports {
				named[p.Name] = p.ContainerPort
			}
			for _, pr := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
				if pr != nil && pr.HTTPGet != nil && pr.HTTPGet.Port.Type == intstr.String {
					pr.HTTPGet.Port = intstr.FromInt32(named[pr.HTTPGet.Port.StrVal])
				}
			}
			c.Ports = nil
		}
		for j := range c.VolumeMounts {
			c.VolumeMounts[j].Name = pod + "-" + c.VolumeMounts[j].Name
		}
	}
	for i := range spec.Volumes {
		spec.Volumes[i].Name = pod + "-" + spec.Volumes[i].Name
	}
}

// backend is one instance: whether its /readyz answered 200 last, and what
// it served.
type backend struct {
	url                    string
	ready                  atomic.Bool
	ok, failed             atomic.Int64
	drops, okSinceRejoined atomic.Int64
	rejoined               atomic.Bool
}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	backends := fs.String("backends", "", "comma-separated base URLs")
	key := fs.String("key", "", "API key")
	path := fs.String("path", "/v2/documents?page[size]=5", "path requested; a %d in it counts 1 to -pages, request after request")
	pages := fs.Int("pages", 1, "values of the %d in -path")
	workers := fs.Int("workers", 4, "concurrent requests")
	expectRejoin := fs.Bool("expect-rejoin", false, "fail unless a backend left, came back and served")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var bs []*backend
	for _, u := range strings.Split(*backends, ",") {
		bs = append(bs, &backend{url: strings.TrimRight(u, "/")})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	// Readiness: as endpoints follow a readiness probe.
	for _, b := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				ready := false
				if resp, err := client.Get(b.url + "/readyz"); err == nil {
					ready = resp.StatusCode == http.StatusOK
					resp.Body.Close()
				}
				was := b.ready.Swap(ready)
				switch {
				case was && !ready:
					b.drops.Add(1)
					fmt.Printf("%s %s left (readyz not 200)\n", time.Now().Format("15:04:05.000"), b.url)
				case !was && ready && b.drops.Load() > 0:
					b.rejoined.Store(true)
					fmt.Printf("%s %s came back\n", time.Now().Format("15:04:05.000"), b.url)
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	var next atomic.Uint64
	pick := func() *backend {
		for range len(bs) {
			b := bs[next.Add(1)%uint64(len(bs))]
			if b.ready.Load() {
				return b
			}
		}
		return nil
	}
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				b := pick()
				if b == nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				p := *path
				if strings.Contains(p, "%d") {
					p = fmt.Sprintf(p, 1+next.Load()%uint64(*pages))
				}
				req, _ := http.NewRequest(http.MethodGet, b.url+p, nil)
				req.Header.Set("Authorization", "Token "+*key)
				resp, err := client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					if b.failed.Add(1) <= 20 {
						fmt.Printf("%s %s failed: %v\n", time.Now().Format("15:04:05.000"), b.url, err)
					}
					continue
				}
				b.ok.Add(1)
				if b.rejoined.Load() {
					b.okSinceRejoined.Add(1)
				}
			}
		}()
	}
	<-ctx.Done()
	wg.Wait()
	var ok, failed int64
	rejoined := false
	w := bufio.NewWriter(os.Stdout)
	for _, b := range bs {
		fmt.Fprintf(w, "%s: ok %d, failed %d, left %d time(s), ok after coming back %d\n",
			b.url, b.ok.Load(), b.failed.Load(), b.drops.Load(), b.okSinceRejoined.Load())
		ok += b.ok.Load()
		failed += b.failed.Load()
		rejoined = rejoined || b.okSinceRejoined.Load() > 0
	}
	fmt.Fprintf(w, "requests: %d ok, %d failed\n", ok, failed)
	w.Flush()
	switch {
	case failed > 0:
		return fmt.Errorf("%d requests failed", failed)
	case ok == 0:
		return errors.New("no request succeeded")
	case *expectRejoin && !rejoined:
		return errors.New("no backend left, came back and served again")
	}
	return nil
}
