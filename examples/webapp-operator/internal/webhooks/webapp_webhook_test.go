package webhooks

import (
	"testing"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

func TestDefaultImage(t *testing.T) {
	for image, want := range map[string]string{
		"nginx":                        "nginx:latest",
		"nginx:1.27":                   "nginx:1.27",
		"registry.k8s.io/pause:3.10.1": "registry.k8s.io/pause:3.10.1",
		"localhost:5000/web":           "localhost:5000/web:latest",
		"localhost:5000/web:ci":        "localhost:5000/web:ci",
		"web@sha256:0123456789abcdef":  "web@sha256:0123456789abcdef",
		"":                             "",
	} {
		if got := DefaultImage(image); got != want {
			t.Errorf("DefaultImage(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		spec  demov1.WebAppSpec
		valid bool
	}{
		{"the sample", demov1.WebAppSpec{Image: "x:1", Replicas: 1, Port: 8080, Args: []string{"--greeting=hello"}}, true},
		{"as many replicas as allowed", demov1.WebAppSpec{Replicas: MaxReplicas}, true},
		{"too many replicas", demov1.WebAppSpec{Replicas: MaxReplicas + 1}, false},
		{"an empty argument", demov1.WebAppSpec{Args: []string{"--a", " "}}, false},
	} {
		if err := Validate(c.spec); (err == nil) != c.valid {
			t.Errorf("%s: Validate = %v, want valid=%v", c.name, err, c.valid)
		}
	}
}
