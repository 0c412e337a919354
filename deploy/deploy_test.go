package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	goyaml "github.com/goccy/go-yaml"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const chart = "helm/shipgraph"

// TestValuesTable fails when docs/deploy.md's values table differs from
// the chart's values.yaml: run make chart-docs.
func TestValuesTable(t *testing.T) {
	values, err := os.ReadFile(chart + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	table, err := ValuesTable(values)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"`replicaCount`", "`resources`", "`memory.limitPercent`", "`shutdown.delaySeconds`", "`existingSecret`"} {
		if !strings.Contains(table, "| "+key+" |") {
			t.Errorf("the values table has no row for %s", key)
		}
	}
	doc, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := ReplaceTable(doc, table)
	if !ok {
		t.Fatalf("docs/deploy.md has no values markers %q … %q", BeginMarker, EndMarker)
	}
	if !bytes.Equal(doc, want) {
		t.Fatal("docs/deploy.md's values table differs from deploy/helm/shipgraph/values.yaml: run make chart-docs")
	}
}

// helm runs the helm pinned in go.mod (go tool helm).
func helm(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "helm"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

func TestChartLint(t *testing.T) {
	out := helm(t, "lint", "--strict", chart, "--set", "secrets.DATABASE_URL=postgres://db/shipgraph")
	if !bytes.Contains(out, []byte("0 chart(s) failed")) {
		t.Fatalf("helm lint:\n%s", out)
	}
}

// rendered is the chart rendered with one set of values, each document
// decoded strictly into its Kubernetes type.
type rendered struct {
	deployment *appsv1.Deployment
	jobs       []*batchv1.Job
	kinds      []string
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor
// (monitoring.coreos.com/v1) the chart writes; unknown fields are refused.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// render runs helm template with args and decodes every document strictly
// (sigs.k8s.io/yaml.UnmarshalStrict: unknown and duplicate fields refused)
// into the k8s.io/api type of its apiVersion and kind: the schema check,
// with no network.
func render(t *testing.T, args ...string) rendered {
	t.Helper()
	out := helm(t, append([]string{"template", "rel", chart, "--namespace", "prod", "--kube-version", "1.33.0"}, args...)...)
	r := rendered{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(out), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(doc, "")) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			obj = &corev1.ConfigMap{}
		case "v1 Secret":
			obj = &corev1.Secret{}
		case "v1 Service":
			obj = &corev1.Service{}
		case "v1 ServiceAccount":
			obj = &corev1.ServiceAccount{}
		case "apps/v1 Deployment":
			obj = &appsv1.Deployment{}
		case "batch/v1 Job":
			obj = &batchv1.Job{}
		case "autoscaling/v2 HorizontalPodAutoscaler":
			obj = &autoscalingv2.HorizontalPodAutoscaler{}
		case "networking.k8s.io/v1 Ingress":
			obj = &networkingv1.Ingress{}
		case "policy/v1 PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		case "monitoring.coreos.com/v1 ServiceMonitor":
			obj = &serviceMonitor{}
		default:
			t.Fatalf("unexpected kind %q %q in the rendered chart", tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s does not validate: %v\n%s", tm.Kind, err, doc)
		}
		r.kinds = append(r.kinds, tm.Kind)
		var meta metav1.Object
		switch o := obj.(type) {
		case *appsv1.Deployment:
			r.deployment = o
			meta = o
		case *batchv1.Job:
			r.jobs = append(r.jobs, o)
			meta = o
		case *corev1.ConfigMap:
			r.configMaps[o.Name] = o
			meta = o
		case *corev1.Secret:
			r.secrets[o.Name] = o
			meta = o
		case *serviceMonitor:
			meta = &o.ObjectMeta
		case metav1.Object:
			meta = o
		}
		if !dnsLabel.MatchString(meta.GetName()) {
			t.Errorf("%s name %q is not a DNS label", tm.Kind, meta.GetName())
		}
	}
	slices.Sort(r.kinds)
	return r
}

func envValue(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// TestChartRenders renders the chart's defaults and checks what an
// operator relies on: probes, drain timing, GOMEMLIMIT from the memory
// limit, the security context, the migration hook and its settings.
func TestChartRenders(t *testing.T) {
	r := render(t, "--set", "secrets.DATABASE_URL=postgres://db/shipgraph")
	want := []string{"ConfigMap", "ConfigMap", "Deployment", "Job", "PodDisruptionBudget", "Secret", "Secret", "Service", "ServiceAccount"}
	if !slices.Equal(r.kinds, want) {
		t.Fatalf("kinds %v, want %v", r.kinds, want)
	}
	d := r.deployment
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", *d.Spec.Replicas)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labelSet(d.Spec.Template.Labels)) {
		t.Errorf("the selector %v does not match the pod labels %v", sel, d.Spec.Template.Labels)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.StartupProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes: readiness %s, liveness %s, startup %s", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path, c.StartupProbe.HTTPGet.Path)
	}
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds != 2 {
		t.Errorf("preStop %+v, want a 2 s sleep", c.Lifecycle)
	}
	// The grace period covers preStop, SHUTDOWN_DELAY and SHUTDOWN_TIMEOUT.
	cm := r.configMaps["rel-shipgraph"]
	if cm.Data["SHUTDOWN_DELAY"] != "5s" || cm.Data["SHUTDOWN_TIMEOUT"] != "10s" || cm.Data["ADDR"] != "0.0.0.0:8080" {
		t.Errorf("config %v", cm.Data)
	}
	if g := *pod.TerminationGracePeriodSeconds; g < 2+5+10 {
		t.Errorf("terminationGracePeriodSeconds %d < preStop 2 + delay 5 + timeout 10", g)
	}
	if v, _ := envValue(c, "GOMEMLIMIT"); v != "307MiB" {
		t.Errorf("GOMEMLIMIT %q, want 307MiB (80%% of 384Mi)", v)
	}
	sc := c.SecurityContext
	if !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("securityContext %+v", sc)
	}
	if *pod.SecurityContext.RunAsUser == 0 || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("pod: runAsUser %d, automountServiceAccountToken %v", *pod.SecurityContext.RunAsUser, pod.AutomountServiceAccountToken)
	}
	if len(pod.TopologySpreadConstraints) != 2 {
		t.Errorf("topology spread %+v", pod.TopologySpreadConstraints)
	}
	if len(r.jobs) != 1 {
		t.Fatalf("%d jobs", len(r.jobs))
	}
	job := r.jobs[0]
	if job.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" || !slices.Equal(job.Spec.Template.Spec.Containers[0].Args, []string{"migrate"}) {
		t.Errorf("migration job: annotations %v, args %v", job.Annotations, job.Spec.Template.Spec.Containers[0].Args)
	}
	// The job reads hook copies of the settings, made before it.
	hookSecret := r.secrets["rel-shipgraph-migrate"]
	if hookSecret == nil || string(hookSecret.Data["DATABASE_URL"]) != "postgres://db/shipgraph" || hookSecret.Annotations["helm.sh/hook-weight"] != "-10" {
		t.Errorf("the migration's secret %+v", hookSecret)
	}
	if fs := r.secrets["rel-shipgraph"].Data["FILE_URL_SECRET"]; len(fs) < 32 {
		t.Errorf("FILE_URL_SECRET %d bytes, want 32+", len(fs))
	}
}

type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

// TestChartRendersOptions turns every optional part on, and an existing
// Secret, a memory limit in Gi and no preStop.
func TestChartRendersOptions(t *testing.T) {
	r := render(t, "--set", "existingSecret=shipgraph-env", "--set", "ingress.enabled=true",
		"--set", "ingress.hosts[0].host=api.example.com", "--set", "ingress.hosts[0].paths[0].path=/",
		"--set", "autoscaling.enabled=true", "--set", "serviceMonitor.enabled=true",
		"--set", "resources.limits.memory=2Gi", "--set", "memory.limitPercent=90", "--set", "shutdown.preStopSeconds=0")
	want := []string{"ConfigMap", "ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Ingress", "Job", "PodDisruptionBudget", "Service", "ServiceAccount", "ServiceMonitor"}
	if !slices.Equal(r.kinds, want) {
		t.Fatalf("kinds %v, want %v", r.kinds, want)
	}
	d := r.deployment
	if d.Spec.Replicas != nil {
		t.Errorf("replicas %d with the autoscaler on, want none", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if v, _ := envValue(c, "GOMEMLIMIT"); v != "1843MiB" {
		t.Errorf("GOMEMLIMIT %q, want 1843MiB (90%% of 2Gi)", v)
	}
	if c.Lifecycle != nil {
		t.Errorf("lifecycle %+v with preStopSeconds 0", c.Lifecycle)
	}
	if got := c.EnvFrom[1].SecretRef.Name; got != "shipgraph-env" {
		t.Errorf("secret %q, want the existing one", got)
	}
	if got := r.jobs[0].Spec.Template.Spec.Containers[0].EnvFrom[1].SecretRef.Name; got != "shipgraph-env" {
		t.Errorf("the migration's secret %q, want the existing one", got)
	}
}

// TestChartRejectsMemoryUnit: a limit GOMEMLIMIT cannot be derived from
// fails the render rather than leaving the runtime's 1 GiB default.
func TestChartRejectsMemoryUnit(t *testing.T) {
	cmd := exec.Command("go", "tool", "helm", "template", "rel", chart, "--set", "resources.limits.memory=700M")
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("use Mi or Gi")) {
		t.Fatalf("helm template with 700M: %v\n%s", err, out)
	}
}

// composeFile is the part of the Compose specification compose.yaml uses;
// unknown keys are refused.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Anchor   map[string]any            `yaml:"x-shipgraph"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]map[string]any `yaml:"volumes"`
}

type composeService struct {
	Image           string            `yaml:"image"`
	Command         []string          `yaml:"command"`
	Restart         string            `yaml:"restart"`
	ReadOnly        bool              `yaml:"read_only"`
	User            string            `yaml:"user"`
	CapDrop         []string          `yaml:"cap_drop"`
	SecurityOpt     []string          `yaml:"security_opt"`
	Tmpfs           []string          `yaml:"tmpfs"`
	MemLimit        string            `yaml:"mem_limit"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Environment     map[string]string `yaml:"environment"`
	Ports           []string          `yaml:"ports"`
	Volumes         []string          `yaml:"volumes"`
	Healthcheck     *struct {
		Test     []string `yaml:"test"`
		Interval string   `yaml:"interval"`
		Timeout  string   `yaml:"timeout"`
		Retries  int      `yaml:"retries"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

// TestComposeFile checks deploy/compose.yaml structurally (no compose
// implementation runs here): the services, that dependencies exist and
// their conditions are the specification's, that the instances reach
// PostgreSQL through PgBouncer and each other's shared state through
// Redis, and that host ports differ.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := goyaml.UnmarshalWithOptions(b, &f, goyaml.Strict()); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var names []string
	for name := range f.Services {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"carrier-sim", "migrate", "pgbouncer", "postgres", "redis", "shipgraph-1", "shipgraph-2"}
	if !slices.Equal(names, want) {
		t.Fatalf("services %v, want %v", names, want)
	}
	ports := map[string]string{}
	conditions := []string{"service_started", "service_healthy", "service_completed_successfully"}
	for name, s := range f.Services {
		if s.Image == "" {
			t.Errorf("%s: no image", name)
		}
		for dep, d := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("%s depends on %s, which is not a service", name, dep)
			}
			if !slices.Contains(conditions, d.Condition) {
				t.Errorf("%s: depends_on %s condition %q", name, dep, d.Condition)
			}
			if d.Condition == "service_healthy" && f.Services[dep].Healthcheck == nil {
				t.Errorf("%s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
		for _, p := range s.Ports {
			host := p[:strings.LastIndex(p, ":")]
			if other, ok := ports[host]; ok {
				t.Errorf("%s and %s both publish %s", name, other, host)
			}
			ports[host] = name
		}
		for _, v := range s.Volumes {
			if vol, _, _ := strings.Cut(v, ":"); !strings.HasPrefix(vol, "/") && !strings.HasPrefix(vol, ".") {
				if _, ok := f.Volumes[vol]; !ok {
					t.Errorf("%s mounts volume %s, which is not declared", name, vol)
				}
			}
		}
	}
	for _, name := range []string{"shipgraph-1", "shipgraph-2"} {
		s := f.Services[name]
		env := s.Environment
		if !strings.Contains(env["DATABASE_URL"], "@pgbouncer:") || env["DATABASE_POOLER"] != "pgbouncer" ||
			!strings.Contains(env["DATABASE_DIRECT_URL"], "@postgres:") || !strings.Contains(env["REDIS_URL"], "redis:6379") {
			t.Errorf("%s environment %v", name, env)
		}
		if !strings.Contains(env["CARRIERS"], "MAEU=http://carrier-sim:8091/MAEU") {
			t.Errorf("%s CARRIERS %q", name, env["CARRIERS"])
		}
		if !s.ReadOnly || s.User == "" || strings.HasPrefix(s.User, "0") || s.DependsOn["migrate"].Condition != "service_completed_successfully" {
			t.Errorf("%s: read_only %v, user %q, depends_on %v", name, s.ReadOnly, s.User, s.DependsOn)
		}
		if s.MemLimit != "384m" || env["GOMEMLIMIT"] != "307MiB" {
			t.Errorf("%s: mem_limit %q, GOMEMLIMIT %q (80%% of the limit, as the chart)", name, s.MemLimit, env["GOMEMLIMIT"])
		}
	}
	if pool := f.Services["pgbouncer"].Environment["POOL_MODE"]; pool != "transaction" {
		t.Errorf("pgbouncer POOL_MODE %q", pool)
	}
}
