package packaging_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/server"
)

// strict decodes one manifest document into v, refusing fields the API
// type does not have (a misspelt readinessProbe fails here).
func strict(t *testing.T, doc []byte, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%T: %v", v, err)
	}
}

func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root(t), "examples/kubernetes/*.yaml"))
	if err != nil || len(files) != 2 {
		t.Fatalf("manifests: %v %v", files, err)
	}
	t.Setenv("TOOLGATE_KEY", "kubernetes-test-key-0123")
	t.Setenv("TOOLGATE_STORE", "postgres://toolgate@127.0.0.1:5432/toolgate")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			var deploy *appsv1.Deployment
			var configText string
			for _, doc := range bytes.Split(b, []byte("\n---\n")) {
				var head struct{ Kind string }
				if err := yaml.Unmarshal(doc, &head); err != nil {
					t.Fatal(err)
				}
				kinds[head.Kind]++
				switch head.Kind {
				case "Deployment":
					deploy = new(appsv1.Deployment)
					strict(t, doc, deploy)
				case "ConfigMap":
					var cm corev1.ConfigMap
					strict(t, doc, &cm)
					configText = cm.Data["toolgate.yaml"]
				case "Service":
					strict(t, doc, new(corev1.Service))
				case "PersistentVolumeClaim":
					strict(t, doc, new(corev1.PersistentVolumeClaim))
				case "PodDisruptionBudget":
					strict(t, doc, new(policyv1.PodDisruptionBudget))
				default:
					t.Errorf("unexpected kind %q", head.Kind)
				}
			}
			if deploy == nil || kinds["ConfigMap"] != 1 || kinds["Service"] != 1 {
				t.Fatalf("kinds: %v", kinds)
			}
			checkConfig(t, configText)
			checkDeployment(t, deploy, strings.HasPrefix(filepath.Base(f), "sqlite"))
		})
	}
}

// checkConfig loads the ConfigMap's config as serve would.
func checkConfig(t *testing.T, text string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path); err != nil {
		t.Errorf("the ConfigMap's config: %v", err)
	}
	if !strings.Contains(text, "listen: 0.0.0.0:8470") {
		t.Error("the config does not listen on 0.0.0.0:8470, the port the probes use")
	}
}

// checkDeployment checks the probes against the health route and the
// container's port, the grace period against the drain, and SQLite's one
// replica.
func checkDeployment(t *testing.T, d *appsv1.Deployment, sqlite bool) {
	t.Helper()
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("containers: %d", len(spec.Containers))
	}
	c := spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8470 {
		t.Errorf("ports: %+v", c.Ports)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no %s probe over HTTP", name)
			continue
		}
		// /healthz is the route that answers without a key, 503 when the
		// store does not answer (server/health.go).
		if p.HTTPGet.Path != "/healthz" {
			t.Errorf("%s probe on %s, want /healthz", name, p.HTTPGet.Path)
		}
		if p.HTTPGet.Port.String() != c.Ports[0].Name {
			t.Errorf("%s probe on port %s, the container's is %q", name, p.HTTPGet.Port.String(), c.Ports[0].Name)
		}
	}
	drain := int64(server.DefaultShutdownTimeout.Seconds())
	var preStop int64
	if l := c.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		preStop = l.PreStop.Sleep.Seconds
	}
	if g := spec.TerminationGracePeriodSeconds; g == nil || *g < drain+preStop {
		t.Errorf("terminationGracePeriodSeconds %v is shorter than the %d s drain plus the %d s preStop", g, drain, preStop)
	}
	if sqlite && (d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType) {
		t.Error("a SQLite store needs one replica and the Recreate strategy")
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Error("no resource requests")
	}
}
