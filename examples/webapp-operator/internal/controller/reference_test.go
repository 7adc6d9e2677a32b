package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestReferenceConvergesWithOwnedChildrenAndThenWritesNothing(t *testing.T) {
	e := newEnv(t)
	app := e.createApp("web", defaultSpec())
	c, rec := e.recordingClient(nil)
	r := e.reconciler(None, c)
	converged := e.converge(r, "web")

	// The three children exist, controlled by this WebApp.
	dep := e.deployment("web")
	svc := e.service("web")
	reg := &corev1.ConfigMap{}
	e.must(e.c.Get(e.ctx, e.key("registration-"+string(converged.UID)), reg))
	for _, child := range []client.Object{dep, svc, reg} {
		owner := metav1.GetControllerOf(child)
		if owner == nil || owner.UID != converged.UID {
			t.Fatalf("%s %s: controller %v, want WebApp uid %s", child.GetObjectKind().GroupVersionKind().Kind, child.GetName(), owner, app.UID)
		}
	}
	if got := svc.Spec.Ports[0]; got.Port != 8080 || got.TargetPort.IntVal != 8080 || got.Protocol != corev1.ProtocolTCP {
		t.Errorf("service port = %+v", got)
	}
	if got := dep.Spec.Template.Spec.Containers[0]; got.Image != "registry.example/web:1" || !slices.Equal(got.Args, []string{"--greeting=hi"}) {
		t.Errorf("container = %+v", got)
	}
	var kinds []string
	for _, w := range rec.all() {
		if w.verb == "create" {
			kinds = append(kinds, w.kind)
		}
	}
	if !slices.Equal(kinds, []string{"Deployment", "Service", "ConfigMap", "ConfigMap"}) {
		t.Errorf("creates = %v, want Deployment, Service, ConfigMap (registration), ConfigMap (directory entry) once each", kinds)
	}

	// Reconciling a converged WebApp again and again makes no write request at all.
	rec.reset()
	e.clock.Step(time.Minute)
	for range 3 {
		e.must(e.reconcile(r, "web"))
	}
	if writes := rec.all(); len(writes) != 0 {
		t.Fatalf("converged reconciles wrote: %+v", writes)
	}

	// Both spec updates converge, and each is followed by quiet.
	for _, patch := range []string{`{"spec":{"replicas":2}}`, `{"spec":{"port":9090,"args":["--greeting=hello"]}}`} {
		e.patchSpec("web", patch)
		converged = e.converge(r, "web")
		rec.reset()
		e.must(e.reconcile(r, "web"))
		if writes := rec.all(); len(writes) != 0 {
			t.Fatalf("after %s, a converged reconcile wrote: %+v", patch, writes)
		}
	}
	if converged.Generation != 3 || converged.Status.ObservedGeneration != 3 {
		t.Errorf("generation %d, observedGeneration %d; want 3 and 3", converged.Generation, converged.Status.ObservedGeneration)
	}
	if got := e.service("web"); got.UID != svc.UID || got.Spec.Ports[0].Port != 9090 {
		t.Errorf("service after update: uid %s (was %s), port %d", got.UID, svc.UID, got.Spec.Ports[0].Port)
	}
	if got := e.deployment("web"); got.UID != dep.UID || *got.Spec.Replicas != 2 {
		t.Errorf("deployment after update: uid %s (was %s), replicas %d", got.UID, dep.UID, *got.Spec.Replicas)
	}
}

func TestReferenceKeepsLastTransitionTimeWhenNothingTransitions(t *testing.T) {
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	r := e.reconciler(None, nil)
	e.converge(r, "web")
	e.clock.Step(time.Hour)
	e.patchSpec("web", `{"spec":{"args":["--greeting=bye"]}}`)
	after := readyCondition(e.converge(r, "web"))
	// The rollout may flip Ready to False and back (a real transition), which moves the time;
	// reconciles with no transition in between must not.
	stable := after.LastTransitionTime
	e.clock.Step(time.Hour)
	e.must(e.reconcile(r, "web"))
	if got := readyCondition(e.app("web")).LastTransitionTime; !got.Equal(&stable) {
		t.Fatalf("lastTransitionTime moved from %s to %s without a transition", stable, got)
	}
}

func TestReferenceAdoptsAndFixesAnUnownedPreexistingChild(t *testing.T) {
	e := newEnv(t)
	e.must(e.c.Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "other"}, Ports: []corev1.ServicePort{{Port: 1234}}},
	}))
	e.createApp("web", defaultSpec())
	app := e.converge(e.reconciler(None, nil), "web")
	svc := e.service("web")
	if svc.Spec.Ports[0].Port != 8080 || svc.Spec.Selector["app"] != "" {
		t.Fatalf("preexisting service not fixed: %+v", svc.Spec)
	}
	if owner := metav1.GetControllerOf(svc); owner == nil || owner.UID != app.UID {
		t.Fatalf("preexisting service not adopted: %v", owner)
	}
}

func TestReferenceReportsAChildControlledBySomeoneElse(t *testing.T) {
	e := newEnv(t)
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other-owner", Namespace: e.ns}}
	e.must(e.c.Create(e.ctx, other))
	yes := true
	e.must(e.c.Create(e.ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: other.Name, UID: other.UID, Controller: &yes,
		}}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1234}}},
	}))
	e.createApp("web", defaultSpec())
	r := e.reconciler(None, nil)
	for range 3 {
		e.must(e.reconcile(r, "web"))
	}
	ready := readyCondition(e.app("web"))
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != "ChildConflict" {
		t.Fatalf("Ready = %+v, want False/ChildConflict", ready)
	}
	if port := e.service("web").Spec.Ports[0].Port; port != 1234 {
		t.Fatalf("the other controller's service was changed: port %d", port)
	}
}

func TestReferenceRepairsDriftInPlaceAndKeepsForeignMetadata(t *testing.T) {
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	r := e.reconciler(None, nil)
	e.converge(r, "web")
	svc := e.service("web")
	svc.Spec.Ports[0].Port = 9999
	svc.Spec.Selector["extra"] = "x"
	svc.Labels["team"] = "payments"
	svc.Annotations = map[string]string{"note": "keep me"}
	e.must(e.c.Update(e.ctx, svc))
	dep := e.deployment("web")
	dep.Spec.Template.Spec.Containers[0].Image = "registry.example/evil:6"
	e.must(e.c.Update(e.ctx, dep))

	e.must(e.reconcile(r, "web"))
	got := e.service("web")
	if got.UID != svc.UID || got.Spec.Ports[0].Port != 8080 || got.Spec.Selector["extra"] != "" {
		t.Fatalf("service not repaired in place: uid %s/%s spec %+v", got.UID, svc.UID, got.Spec)
	}
	if got.Labels["team"] != "payments" || got.Annotations["note"] != "keep me" {
		t.Fatalf("foreign metadata lost: labels %v annotations %v", got.Labels, got.Annotations)
	}
	if d := e.deployment("web"); d.UID != dep.UID || d.Spec.Template.Spec.Containers[0].Image != "registry.example/web:1" {
		t.Fatalf("deployment not repaired in place")
	}
}

func TestReferenceRetriesAConflictOnAFreshReadAndKeepsTheOtherWrite(t *testing.T) {
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	e.converge(e.reconciler(None, nil), "web")
	e.patchSpec("web", `{"spec":{"replicas":3}}`)

	c, rec := e.recordingClient(e.conflictOnce("update", "", "Deployment"))
	e.must(e.reconcile(e.reconciler(None, c), "web"))

	requireRetriesOnFreshReads(t, rec.matching("update", "Deployment"))
	d := e.deployment("web")
	if *d.Spec.Replicas != 3 || d.Annotations["test.reconcile-conformance.dev/concurrent-write"] != "conflict" {
		t.Fatalf("replicas %d, annotations %v", *d.Spec.Replicas, d.Annotations)
	}
}

// requireRetriesOnFreshReads holds updates to: the injected 409 first, a success
// last, only conflicts between, and no retry resending a resourceVersion that
// conflicted. The kube-controller-manager's Deployment controller writes the
// Deployment's status (scaling to 3) meanwhile, so a retry built on a fresh read
// can meet a real conflict of its own (seen under load, in both tests that use
// this): that is not a mistake of the operator, a resent resourceVersion is.
func requireRetriesOnFreshReads(t *testing.T, updates []write) {
	t.Helper()
	last := len(updates) - 1
	if len(updates) < 2 || !isConflictErr(updates[0].err) || updates[last].err != nil {
		t.Fatalf("want a 409 first and a success last, got %s", describe(updates))
	}
	for i, u := range updates[:last] {
		if !isConflictErr(u.err) {
			t.Fatalf("update %d failed otherwise than by a conflict: %s", i, describe(updates))
		}
		if updates[i+1].sentVersion == u.sentVersion {
			t.Fatalf("a retry resubmitted the resourceVersion that conflicted (%s): %s", u.sentVersion, describe(updates))
		}
	}
}

// Under a manager the operator reads children from an informer cache, which
// can lag behind the server. After a conflict its retry must read from the
// API server: re-reading the (stale) cache would recompute from the same old
// object and conflict again. The cache here stays stale on purpose.
func TestReferenceRetriesFromTheAPIServerNotTheCache(t *testing.T) {
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	e.converge(e.reconciler(None, nil), "web")
	stale := e.deployment("web")
	e.patchSpec("web", `{"spec":{"replicas":3}}`)

	staleCache := interceptor.NewClient(e.c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if d, ok := obj.(*appsv1.Deployment); ok && key.Name == stale.Name {
				stale.DeepCopyInto(d)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	rec := &recorder{before: e.conflictOnce("update", "", "Deployment")}
	r := &Reconciler{Client: e.recordOn(staleCache, rec), APIReader: e.c, Scheme: scheme, Clock: e.clock}
	e.must(e.reconcile(r, "web"))

	// Re-reading the stale cache would resend the resourceVersion that conflicted, every time.
	requireRetriesOnFreshReads(t, rec.matching("update", "Deployment"))
	if d := e.deployment("web"); *d.Spec.Replicas != 3 || d.Annotations["test.reconcile-conformance.dev/concurrent-write"] != "conflict" {
		t.Fatalf("replicas %d, annotations %v", *d.Spec.Replicas, d.Annotations)
	}
}
