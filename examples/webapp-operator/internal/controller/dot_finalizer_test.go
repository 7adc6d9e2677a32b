package controller

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The dot-finalizer variant: the reference's finalizer under a dot-qualified name.

func TestVariantDotFinalizerNamesItsFinalizerAfterTheGroup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "crds", "webapp.yaml"))
	e := newEnv(t)
	e.must(err)
	var crd struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Plural string `json:"plural"`
			} `json:"names"`
		} `json:"spec"`
	}
	e.must(yaml.Unmarshal(data, &crd))
	if want := "deletion.finalizers." + crd.Spec.Names.Plural + "." + crd.Spec.Group; DotFinalizerName != want || crd.Spec.Group != demov1.GroupVersion.Group {
		t.Fatalf("DotFinalizerName %q, want %q (the CRD's group %q)", DotFinalizerName, want, crd.Spec.Group)
	}
	if errs := validation.IsQualifiedName(DotFinalizerName); len(errs) != 0 || strings.Contains(DotFinalizerName, "/") {
		t.Fatalf("%q is not a qualified name without a slash: %v", DotFinalizerName, errs)
	}

	// The deletion runs as the reference's: the entry's delete, then the release.
	e.createApp("web", defaultSpec())
	c, rec := e.recordingClient(nil)
	r := e.reconciler(DotFinalizer, c)
	app := e.converge(r, "web")
	if !slices.Equal(app.Finalizers, []string{DotFinalizerName}) {
		t.Fatalf("finalizers %v, want only %s", app.Finalizers, DotFinalizerName)
	}
	if controllerutil.ContainsFinalizer(app, FinalizerName) {
		t.Fatalf("the reference's finalizer %s is there too", FinalizerName)
	}
	e.deletesEntryThenReleases(t, r, rec, app)
}
