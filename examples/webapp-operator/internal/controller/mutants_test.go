package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// Each test runs one scenario twice, with the reference operator and with a
// mutant, on a real API server, and shows that the mutant's bug manifests
// exactly there while the reference behaves. These prove the mutants are real
// before any conformance suite looks at them.

func isConflictErr(err error) bool { return apierrors.IsConflict(err) }

func describe(writes []write) string {
	parts := make([]string, len(writes))
	for i, w := range writes {
		parts[i] = fmt.Sprintf("%s %s %s rv=%s err=%v", w.verb, w.kind, w.name, w.sentVersion, w.err)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// both runs scenario for the reference and for the mutant, each in its own namespace.
func both(t *testing.T, bug Bug, scenario func(t *testing.T, e *env, bug Bug)) {
	for _, b := range []Bug{None, bug} {
		name := "reference"
		if b != None {
			name = string(b)
		}
		t.Run(name, func(t *testing.T) { scenario(t, newEnv(t), b) })
	}
}

func TestBugGenerateNameDuplicatesTheDeployment(t *testing.T) {
	both(t, GenerateName, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		for range 3 {
			_ = e.reconcile(r, "web")
		}
		list := &appsv1.DeploymentList{}
		e.must(e.c.List(e.ctx, list, client.InNamespace(e.ns)))
		want := map[Bug]int{None: 1, GenerateName: 3}[bug]
		if len(list.Items) != want {
			t.Fatalf("%d Deployments after 3 reconciles, want %d", len(list.Items), want)
		}
	})
}

func TestBugIgnoreAlreadyExistsReportsReadyOverAWrongService(t *testing.T) {
	both(t, IgnoreAlreadyExists, func(t *testing.T, e *env, bug Bug) {
		e.must(e.c.Create(e.ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1234}}},
		}))
		e.createApp("web", defaultSpec())
		e.converge(e.reconciler(bug, nil), "web") // Ready either way...
		port := e.service("web").Spec.Ports[0].Port
		if want := map[Bug]int32{None: 8080, IgnoreAlreadyExists: 1234}[bug]; port != want {
			t.Fatalf("Ready with service port %d, want %d", port, want) // ...but only the reference fixed the Service
		}
	})
}

func TestBugDeepEqualUpdateWritesOnEveryReconcile(t *testing.T) {
	both(t, DeepEqualUpdate, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		c, rec := e.recordingClient(nil)
		r := e.reconciler(bug, c)
		e.converge(r, "web")
		rec.reset()
		for range 3 {
			e.must(e.reconcile(r, "web"))
		}
		updates := rec.matching("update", "Deployment")
		if want := map[Bug]int{None: 0, DeepEqualUpdate: 3}[bug]; len(updates) != want {
			t.Fatalf("%d Deployment updates over 3 converged reconciles, want %d: %s", len(updates), want, describe(updates))
		}
	})
}

func TestBugStatusEveryReconcileMovesResourceVersionAndTransitionTime(t *testing.T) {
	both(t, StatusEveryReconcile, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		before := e.converge(r, "web")
		e.clock.Step(time.Minute)
		e.must(e.reconcile(r, "web"))
		after := e.app("web")
		moved := after.ResourceVersion != before.ResourceVersion
		timeMoved := !readyCondition(after).LastTransitionTime.Equal(&readyCondition(before).LastTransitionTime)
		if want := bug == StatusEveryReconcile; moved != want || timeMoved != want {
			t.Fatalf("resourceVersion moved: %v, lastTransitionTime moved: %v; want %v", moved, timeMoved, want)
		}
	})
}

func TestBugStaleRetryResubmitsTheConflictingVersion(t *testing.T) {
	both(t, StaleRetry, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		e.converge(e.reconciler(bug, nil), "web")
		e.patchSpec("web", `{"spec":{"replicas":2}}`)
		c, rec := e.recordingClient(e.conflictOnce("update", "", "Deployment"))
		err := e.reconcile(e.reconciler(bug, c), "web")
		updates := rec.matching("update", "Deployment")
		resubmitted := 0
		for _, u := range updates[1:] {
			if u.sentVersion == updates[0].sentVersion {
				resubmitted++
			}
		}
		if bug == None && (err != nil || resubmitted != 0) {
			t.Fatalf("reference: err %v, updates %s", err, describe(updates))
		}
		if bug == StaleRetry && (!apierrors.IsConflict(err) || resubmitted < 2) {
			t.Fatalf("mutant: want every retry to resend the stale version and fail; err %v, updates %s", err, describe(updates))
		}
	})
}

func TestBugBlindOverwriteErasesTheConcurrentChange(t *testing.T) {
	both(t, BlindOverwrite, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		e.converge(e.reconciler(bug, nil), "web")
		e.patchSpec("web", `{"spec":{"replicas":2}}`)
		c, _ := e.recordingClient(e.conflictOnce("update", "", "Deployment"))
		e.must(e.reconcile(e.reconciler(bug, c), "web"))
		d := e.deployment("web")
		kept := d.Annotations["test.reconcile-conformance.dev/concurrent-write"] == "conflict"
		if *d.Spec.Replicas != 2 || kept != (bug == None) {
			t.Fatalf("replicas %d, concurrent annotation kept: %v", *d.Spec.Replicas, kept)
		}
	})
}

// drift changes a managed field of the Service (and adds foreign metadata), then reconciles.
func drift(t *testing.T, e *env, bug Bug) (before, after *corev1.Service) {
	e.createApp("web", defaultSpec())
	r := e.reconciler(bug, nil)
	e.converge(r, "web")
	before = e.service("web")
	changed := before.DeepCopy()
	changed.Spec.Ports[0].Port = 9999
	changed.Labels["team"] = "payments"
	e.must(e.c.Update(e.ctx, changed))
	for range 2 {
		e.must(e.reconcile(r, "web"))
	}
	return before, e.service("web")
}

func TestBugRecreateOnDriftReplacesTheChild(t *testing.T) {
	both(t, RecreateOnDrift, func(t *testing.T, e *env, bug Bug) {
		before, after := drift(t, e, bug)
		if after.Spec.Ports[0].Port != 8080 || (after.UID == before.UID) != (bug == None) {
			t.Fatalf("port %d, uid kept: %v", after.Spec.Ports[0].Port, after.UID == before.UID)
		}
	})
}

func TestBugNoDriftRepairLeavesTheDrift(t *testing.T) {
	both(t, NoDriftRepair, func(t *testing.T, e *env, bug Bug) {
		_, after := drift(t, e, bug)
		if want := map[Bug]int32{None: 8080, NoDriftRepair: 9999}[bug]; after.Spec.Ports[0].Port != want {
			t.Fatalf("port %d after drift and reconcile, want %d", after.Spec.Ports[0].Port, want)
		}
	})
}

func TestBugReplaceWholeObjectDropsForeignLabels(t *testing.T) {
	both(t, ReplaceWholeObject, func(t *testing.T, e *env, bug Bug) {
		before, after := drift(t, e, bug)
		kept := after.Labels["team"] == "payments"
		if after.Spec.Ports[0].Port != 8080 || after.UID != before.UID || kept != (bug == None) {
			t.Fatalf("port %d, same uid %v, foreign label kept %v", after.Spec.Ports[0].Port, after.UID == before.UID, kept)
		}
	})
}

func TestBugNameWithoutUIDAdoptsThePreviousLifesRegistration(t *testing.T) {
	both(t, NameWithoutUID, func(t *testing.T, e *env, bug Bug) {
		first := e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		e.must(e.reconcile(r, "web"))
		registrations := func() []corev1.ConfigMap {
			list := &corev1.ConfigMapList{}
			e.must(e.c.List(e.ctx, list, client.InNamespace(e.ns), client.MatchingLabels{labelInstance: "web"}))
			// (The directory entry carries the same labels.)
			return slices.DeleteFunc(list.Items, func(cm corev1.ConfigMap) bool { return !strings.HasPrefix(cm.Name, registrationPrefix) })
		}
		old := registrations()
		if len(old) != 1 {
			t.Fatalf("want one registration, got %d", len(old))
		}
		e.deleteAndFinalize(r, first)
		// The second life runs another image, so a registration it takes over shows the new spec.
		secondSpec := defaultSpec()
		secondSpec.Image = "registry.example/web:2"
		second := e.createApp("web", secondSpec)
		e.must(e.reconcile(r, "web"))

		reused := false
		for _, cm := range registrations() {
			if cm.UID == old[0].UID && cm.Data["image"] == secondSpec.Image {
				reused = true // the previous life's registration now speaks for the new WebApp
			}
		}
		if reused != (bug == NameWithoutUID) {
			t.Fatalf("previous life's registration taken over by the new WebApp (uid %s): %v", second.UID, reused)
		}
		if bug == None {
			fresh := &corev1.ConfigMap{}
			e.must(e.c.Get(e.ctx, e.key("registration-"+string(second.UID)), fresh))
			if owner := metav1.GetControllerOf(fresh); owner == nil || owner.UID != second.UID {
				t.Fatalf("new registration not owned by the new WebApp: %v", owner)
			}
		}
	})
}

// pair runs scenario for a correct variant and for the mutant made from it, each in its own namespace.
func pair(t *testing.T, variant, bug Bug, scenario func(t *testing.T, e *env, bug Bug)) {
	for _, b := range []Bug{variant, bug} {
		t.Run(string(b), func(t *testing.T) { scenario(t, newEnv(t), b) })
	}
}

func TestBugRegenerateSecretWritesANewPasswordAfterARestart(t *testing.T) {
	pair(t, GeneratedSecret, RegenerateSecret, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		password := func() string {
			secret := &corev1.Secret{}
			e.must(e.c.Get(e.ctx, e.key(secretName(&demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "web"}})), secret))
			return string(secret.Data["password"])
		}
		e.must(e.reconcile(e.reconciler(bug, nil), "web"))
		first := password()
		if first == "" {
			t.Fatal("no password generated")
		}
		// A restart: a reconciler of a new process, with nothing in memory.
		e.must(e.reconcile(e.reconciler(bug, nil), "web"))
		if regenerated := password() != first; regenerated != (bug == RegenerateSecret) {
			t.Fatalf("password regenerated by the restarted operator: %v", regenerated)
		}
	})
}

func TestBugUIDPrefixTakeoverTakesOverThePreviousLifesRegistration(t *testing.T) {
	pair(t, UIDPrefixName, UIDPrefixTakeover, func(t *testing.T, e *env, bug Bug) {
		first := e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		e.must(e.reconcile(r, "web"))
		old := &corev1.ConfigMap{}
		e.must(e.c.Get(e.ctx, e.key("registration-"+string(first.UID)[:8]), old))
		e.deleteAndFinalize(r, first)
		second := e.createApp("web", defaultSpec())
		e.must(e.reconcile(r, "web"))
		// (The previous life's registration may still be there: the variant's is owned and goes
		// with the garbage collector, in its own time; the mutant's is not owned at all.)
		fresh := "registration-" + string(second.UID)[:8]
		err := e.c.Get(e.ctx, e.key(fresh), &corev1.ConfigMap{})
		if created := err == nil; created != (bug == UIDPrefixName) {
			t.Fatalf("the second life made a registration of its own (%s): %v (%v)", fresh, created, err)
		}
	})
}

var errCrash = errors.New("simulated crash right after the write")

func TestBugCrashGapNeverCreatesTheService(t *testing.T) {
	both(t, CrashGap, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		// The process dies right after the Deployment create succeeded: the
		// write happened, the reconcile never got to go on.
		crashing, rec := e.recordingClient(nil)
		crashAfterDeployment := &Reconciler{Client: crashAfter(crashing, rec, "create", "Deployment"), APIReader: e.c, Scheme: scheme, Clock: e.clock, Bug: bug}
		if err := e.reconcile(crashAfterDeployment, "web"); !errors.Is(err, errCrash) {
			t.Fatalf("want the simulated crash, got %v", err)
		}
		r := e.reconciler(bug, nil) // the restarted operator
		for range 3 {
			e.must(e.reconcile(r, "web"))
		}
		err := e.c.Get(e.ctx, e.key("web"), &corev1.Service{})
		if missing := isNotFound(err); missing != (bug == CrashGap) {
			t.Fatalf("service missing after restart: %v (%v)", missing, err)
		}
	})
}

// crashAfter returns a client whose first matching write is forwarded and then reported as a crash.
func crashAfter(c client.Client, rec *recorder, verb, kind string) client.Client {
	return &crashingClient{Client: c, rec: rec, verb: verb, kind: kind}
}

type crashingClient struct {
	client.Client
	rec        *recorder
	verb, kind string
	crashed    bool
}

func (c *crashingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	gvk, _ := c.GroupVersionKindFor(obj)
	if !c.crashed && c.verb == "create" && gvk.Kind == c.kind {
		c.crashed = true
		return errCrash
	}
	return nil
}

func TestBugEarlyReadyClaimsTheGenerationBeforeTheChildren(t *testing.T) {
	both(t, EarlyReady, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		e.converge(e.reconciler(bug, nil), "web")
		e.patchSpec("web", `{"spec":{"replicas":2,"image":"registry.example/web:2"}}`)
		c, rec := e.recordingClient(nil)
		e.must(e.reconcile(e.reconciler(bug, c), "web"))
		claimIndex, deploymentIndex := -1, -1
		for i, w := range rec.all() {
			if app, ok := w.object.(*demov1.WebApp); ok && w.subresource == "status" && claimIndex < 0 {
				if ready := readyCondition(app); ready != nil && ready.Status == metav1.ConditionTrue && app.Status.ObservedGeneration == 2 {
					claimIndex = i
				}
			}
			if w.kind == "Deployment" && w.verb == "update" && deploymentIndex < 0 {
				deploymentIndex = i
			}
		}
		early := claimIndex >= 0 && claimIndex < deploymentIndex
		if early != (bug == EarlyReady) {
			t.Fatalf("Ready for generation 2 written before the Deployment update: %v (%s)", early, describe(rec.all()))
		}
	})
}

func TestBugStaleStatusGenerationStampsANewGenerationOnOldConclusions(t *testing.T) {
	both(t, StaleStatusGeneration, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		e.converge(e.reconciler(bug, nil), "web")
		e.patchSpec("web", `{"spec":{"replicas":2}}`)
		// While the operator writes status for generation 2, the spec moves to generation 3.
		var moved sync.Once
		c, _ := e.recordingClient(func(verb, sub string, obj client.Object) error {
			var err error
			if sub == "status" {
				moved.Do(func() {
					err = e.c.Patch(e.ctx, &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns}},
						client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)))
				})
			}
			return err
		})
		e.must(e.reconcile(e.reconciler(bug, c), "web"))
		app := e.app("web")
		replicas := *e.deployment("web").Spec.Replicas
		claimsUnappliedSpec := app.Status.ObservedGeneration == app.Generation && replicas != app.Spec.Replicas
		if claimsUnappliedSpec != (bug == StaleStatusGeneration) {
			t.Fatalf("observedGeneration %d of generation %d with Deployment replicas %d for spec replicas %d",
				app.Status.ObservedGeneration, app.Generation, replicas, app.Spec.Replicas)
		}
	})
}

func TestBugTimestampInTemplateRollsTheDeploymentEveryReconcile(t *testing.T) {
	both(t, TimestampInTemplate, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		before := e.deployment("web").Generation
		e.clock.Step(time.Minute)
		e.must(e.reconcile(r, "web"))
		rolled := e.deployment("web").Generation != before
		if rolled != (bug == TimestampInTemplate) {
			t.Fatalf("Deployment generation moved on a reconcile with nothing to do: %v", rolled)
		}
	})
}

func TestBugRecreateOnAlreadyExistsReplacesAChildItsCacheHasNotSeen(t *testing.T) {
	both(t, RecreateOnAlreadyExists, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		// Under a manager the operator reads from an informer cache, which shows
		// its own create only once the watch event arrives. This cache has not
		// seen the Service yet; writes and the direct reader go to the API server.
		cacheBehind := true
		lagging := interceptor.NewClient(e.c, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*corev1.Service); ok && cacheBehind {
					return apierrors.NewNotFound(corev1.Resource("services"), key.Name)
				}
				return c.Get(ctx, key, obj, opts...)
			},
		})
		r := &Reconciler{Client: lagging, APIReader: e.c, Scheme: scheme, Clock: e.clock, Bug: bug}
		e.must(e.reconcile(r, "web")) // creates the three children
		created := e.service("web")
		err := e.reconcile(r, "web") // its create of the Service answers AlreadyExists
		cacheBehind = false
		e.must(e.reconcile(r, "web"))

		if bug == None && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("reference: want AlreadyExists, so the work is requeued until the cache shows the Service; got %v", err)
		}
		if bug == RecreateOnAlreadyExists && err != nil {
			t.Fatalf("mutant: want the Service replaced without an error, got %v", err)
		}
		after := e.service("web")
		if kept := after.UID == created.UID; kept != (bug == None) {
			t.Fatalf("Service uid %s after the cache missed it (was %s): kept %v", after.UID, created.UID, kept)
		}
	})
}

// webAppWatch is the handler of the operator's WebApp watch: For()'s
// EnqueueRequestForObject for the reference, the mutant's own for EventDiff.
func webAppWatch(r *Reconciler) handler.EventHandler {
	if r.Bug == EventDiff {
		return r.webAppEvents()
	}
	return &handler.EnqueueRequestForObject{}
}

// updateThroughTheWatch applies update 1 (replicas 2) and update 2 (port 9090
// and new args), delivering them to the WebApp watch one event each (and
// converging after each), or in one event from the first state to the last,
// as a coalesced watch delivers them (then converging). It returns the Service.
func updateThroughTheWatch(e *env, bug Bug, coalesced bool) *corev1.Service {
	e.t.Helper()
	r := e.reconciler(bug, nil)
	watch := webAppWatch(r)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	e.createApp("web", defaultSpec())
	watch.Create(e.ctx, event.CreateEvent{Object: e.app("web")}, q)
	e.converge(r, "web")

	first := e.app("web")
	for _, patch := range []string{`{"spec":{"replicas":2}}`, `{"spec":{"port":9090,"args":["--greeting=hello"]}}`} {
		before := e.app("web")
		e.patchSpec("web", patch)
		if !coalesced {
			watch.Update(e.ctx, event.UpdateEvent{ObjectOld: before, ObjectNew: e.app("web")}, q)
			e.converge(r, "web")
		}
	}
	if coalesced {
		watch.Update(e.ctx, event.UpdateEvent{ObjectOld: first, ObjectNew: e.app("web")}, q)
		e.converge(r, "web")
	}
	if q.Len() != 1 {
		e.t.Fatalf("%d keys queued by the watch, want the WebApp's", q.Len())
	}
	return e.service("web")
}

func TestBugEventDiffLosesAChangeWhenOneEventCarriesTwo(t *testing.T) {
	both(t, EventDiff, func(t *testing.T, e *env, bug Bug) {
		svc := updateThroughTheWatch(e, bug, true)
		// Ready either way; the mutant read only "replicas changed" from the event.
		if want := map[Bug]int32{None: 9090, EventDiff: 8080}[bug]; svc.Spec.Ports[0].Port != want {
			t.Fatalf("service port %d after one event carrying both updates, want %d", svc.Spec.Ports[0].Port, want)
		}
		if d := e.deployment("web"); *d.Spec.Replicas != 2 || d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort != 9090 {
			t.Fatalf("deployment replicas %d, container port %d; want 2 and 9090", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort)
		}
	})
}

func TestBugEventDiffFollowsChangesDeliveredOneByOne(t *testing.T) {
	both(t, EventDiff, func(t *testing.T, e *env, bug Bug) {
		// The same updates, one event each: the mutant cannot be told from the reference.
		if svc := updateThroughTheWatch(e, bug, false); svc.Spec.Ports[0].Port != 9090 {
			t.Fatalf("service port %d after the updates' own events, want 9090", svc.Spec.Ports[0].Port)
		}
	})
}

// EventDiff's mistake is in the WebApp's events alone: the directory entry's own event names the
// entry, as every child's does, so the entry's drift is repaired like the reference's (the kill
// matrix once found it unrepaired, drift/managed-field failing on the entry's data).
func TestBugEventDiffRepairsDriftOfTheDirectoryEntry(t *testing.T) {
	both(t, EventDiff, func(t *testing.T, e *env, bug Bug) {
		r := e.reconciler(bug, nil)
		watch := webAppWatch(r)
		entries := directoryEntryEvents()
		if bug == EventDiff {
			entries = r.directoryEntryChanges()
		}
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		app := e.createApp("web", defaultSpec())
		watch.Create(e.ctx, event.CreateEvent{Object: e.app("web")}, q)
		e.converge(r, "web")

		entry := &corev1.ConfigMap{}
		e.must(e.c.Get(e.ctx, e.key(directoryName(e.app(app.Name))), entry))
		before := entry.DeepCopy()
		entry.Data["port"] = "8080-drift"
		e.must(e.c.Update(e.ctx, entry))
		entries.Update(e.ctx, event.UpdateEvent{ObjectOld: before, ObjectNew: entry}, q)
		if q.Len() != 1 {
			t.Fatalf("%d keys queued by the entry's event, want the WebApp's", q.Len())
		}
		e.converge(r, "web")
		e.must(e.c.Get(e.ctx, e.key(entry.Name), entry))
		if entry.Data["port"] != "8080" {
			t.Fatalf("directory entry's port %q after its drift's event, want it repaired to 8080", entry.Data["port"])
		}
	})
}

func TestBugPortOnlyAtCreateKeepsTheFirstContainerPort(t *testing.T) {
	both(t, PortOnlyAtCreate, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		e.patchSpec("web", `{"spec":{"port":9090}}`)
		e.converge(r, "web")
		service := e.service("web").Spec.Ports[0].Port
		container := e.deployment("web").Spec.Template.Spec.Containers[0].Ports[0].ContainerPort
		want := map[Bug]int32{None: 9090, PortOnlyAtCreate: 8080}[bug]
		if service != 9090 || container != want {
			t.Fatalf("after a port update to 9090: Service port %d, container port %d; want 9090 and %d", service, container, want)
		}
	})
}

func TestBugReplaceSkipsPortLosesThePortToARestartAfterTheDelete(t *testing.T) {
	both(t, ReplaceSkipsPort, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		e.converge(e.reconciler(bug, nil), "web")
		// Without a crash the replacement is whole: the container port follows the new spec.
		e.patchSpec("web", `{"spec":{"port":9090}}`)
		e.converge(e.reconciler(bug, nil), "web")
		if got := e.deployment("web").Spec.Template.Spec.Containers[0].Ports[0].ContainerPort; got != 9090 {
			t.Fatalf("after a port update to 9090 with no crash: container port %d; want 9090", got)
		}
		// The next port change, with a crash right after the replacement's delete: the Service
		// is gone and nothing else was written; a restarted process reconciles.
		e.patchSpec("web", `{"spec":{"port":9191}}`)
		e.must(e.c.Delete(e.ctx, e.service("web")))
		e.converge(e.reconciler(bug, nil), "web")
		service := e.service("web").Spec.Ports[0].Port
		container := e.deployment("web").Spec.Template.Spec.Containers[0].Ports[0].ContainerPort
		want := map[Bug]int32{None: 9191, ReplaceSkipsPort: 9090}[bug]
		if service != 9191 || container != want {
			t.Fatalf("after a restart that found the Service deleted: Service port %d, container port %d; want 9191 and %d", service, container, want)
		}
	})
}

func TestBugNeverPrunesKeepsTheOldEndpoint(t *testing.T) {
	both(t, NeverPrunes, func(t *testing.T, e *env, bug Bug) {
		app := e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		e.patchSpec("web", `{"spec":{"port":9090}}`)
		e.converge(r, "web")
		registration := &corev1.ConfigMap{}
		e.must(e.c.Get(e.ctx, e.key(registrationName(e.app(app.Name), bug)), registration))
		_, stale := registration.Data[endpointKey(8080)]
		_, current := registration.Data[endpointKey(9090)]
		if want := bug == NeverPrunes; stale != want || !current {
			t.Fatalf("registration data after a port update to 9090: %v; want endpoint-9090, and endpoint-8080 only for the mutant", registration.Data)
		}
	})
}

func TestBugFlipWithinReconcileRestampsReadyWhileTheDeploymentIsUnavailable(t *testing.T) {
	both(t, FlipWithinReconcile, func(t *testing.T, e *env, bug Bug) {
		// No Pod can be created in the namespace, so the Deployment stays unavailable.
		e.must(e.c.Create(e.ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "no-pods", Namespace: e.ns},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
		}))
		e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		e.must(e.reconcile(r, "web"))
		first := readyCondition(e.app("web"))
		e.clock.Step(2 * time.Second)
		result, err := r.Reconcile(e.ctx, ctrl.Request{NamespacedName: e.key("web")})
		e.must(err)
		second := readyCondition(e.app("web"))
		if first == nil || second == nil || first.Status != metav1.ConditionFalse || second.Status != metav1.ConditionFalse {
			t.Fatalf("Ready %+v, then %+v; want False both times", first, second)
		}
		moved := !second.LastTransitionTime.Equal(&first.LastTransitionTime)
		if want := bug == FlipWithinReconcile; moved != want || (result.RequeueAfter == PollInterval) != want {
			t.Fatalf("Ready=False's lastTransitionTime %s, then %s (requeue after %s); want it moved, and a poll, only for the mutant",
				first.LastTransitionTime, second.LastTransitionTime, result.RequeueAfter)
		}
	})
}

// exploredSpec is defaultSpec with the fields only spec exploration changes in the example's
// contract: a setting, an alias, verbose Pods and a Service affinity.
func exploredSpec() demov1.WebAppSpec {
	spec := defaultSpec()
	spec.Settings = map[string]string{"greeting-style": "plain"}
	spec.Aliases = []string{"www.web.example"}
	spec.Verbose = true
	spec.Service = &demov1.ServiceSpec{SessionAffinity: "None"}
	return spec
}

// registrationData is the registration's data once the WebApp has converged.
func (e *env) registrationData(name string, bug Bug) map[string]string {
	registration := &corev1.ConfigMap{}
	e.must(e.c.Get(e.ctx, e.key(registrationName(e.app(name), bug)), registration))
	return registration.Data
}

func TestBugAffinityOnlyAtCreateKeepsTheFirstAffinity(t *testing.T) {
	both(t, AffinityOnlyAtCreate, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", exploredSpec())
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		e.patchSpec("web", `{"spec":{"service":{"sessionAffinity":"ClientIP"}}}`)
		e.converge(r, "web")
		got := e.service("web").Spec.SessionAffinity
		if want := map[Bug]corev1.ServiceAffinity{None: "ClientIP", AffinityOnlyAtCreate: "None"}[bug]; got != want {
			t.Fatalf("Service affinity after an update to ClientIP: %s; want %s", got, want)
		}
	})
}

func TestBugSettingsNeverPrunedKeepsARemovedSetting(t *testing.T) {
	both(t, SettingsNeverPruned, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", exploredSpec())
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		e.patchSpec("web", `{"spec":{"settings":{"greeting-style":null},"port":9090}}`)
		e.converge(r, "web")
		data := e.registrationData("web", bug)
		_, setting := data[settingPrefix+"greeting-style"]
		_, oldEndpoint := data[endpointKey(8080)]
		// Every other stale key goes, the old port's endpoint included: only the setting stays.
		if want := bug == SettingsNeverPruned; setting != want || oldEndpoint {
			t.Fatalf("registration data after the setting's removal: %v; want the setting only for the mutant, and no endpoint-8080", data)
		}
	})
}

func TestBugVerboseLabelKeptLabelsPodsNoLongerVerbose(t *testing.T) {
	both(t, VerboseLabelKept, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", exploredSpec())
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		if e.deployment("web").Spec.Template.Labels[verboseLabel] != "true" {
			t.Fatalf("a verbose WebApp's Pods: labels %v; want %s", e.deployment("web").Spec.Template.Labels, verboseLabel)
		}
		e.patchSpec("web", `{"spec":{"verbose":false}}`)
		e.converge(r, "web")
		_, labelled := e.deployment("web").Spec.Template.Labels[verboseLabel]
		if want := bug == VerboseLabelKept; labelled != want {
			t.Fatalf("Pod labels after verbose turned off: %v; want %s only for the mutant", e.deployment("web").Spec.Template.Labels, verboseLabel)
		}
	})
}

func TestBugAliasesNeverShortenedKeepsTheLastAlias(t *testing.T) {
	both(t, AliasesNeverShortened, func(t *testing.T, e *env, bug Bug) {
		spec := exploredSpec()
		spec.Aliases = []string{"www.web.example", "web.example"}
		e.createApp("web", spec)
		r := e.reconciler(bug, nil)
		e.converge(r, "web")
		e.patchSpec("web", `{"spec":{"aliases":["www.web.example"]}}`)
		e.converge(r, "web")
		data := e.registrationData("web", bug)
		_, second := data[aliasPrefix+"1"]
		if want := bug == AliasesNeverShortened; second != want || data[aliasPrefix+"0"] != "www.web.example" {
			t.Fatalf("registration data after the aliases lost their last: %v; want alias-0, and alias-1 only for the mutant", data)
		}
	})
}

func TestBugPanicOnNoAliasPanicsWithoutAnAlias(t *testing.T) {
	both(t, PanicOnNoAlias, func(t *testing.T, e *env, bug Bug) {
		spec := exploredSpec()
		spec.Aliases = nil
		e.createApp("web", spec)
		r := e.reconciler(bug, nil)
		panicked := func() (recovered any) {
			defer func() { recovered = recover() }()
			_ = e.reconcile(r, "web")
			return nil
		}()
		if want := bug == PanicOnNoAlias; (panicked != nil) != want {
			t.Fatalf("reconcile of a WebApp without aliases panicked: %v; want a panic only for the mutant", panicked)
		}
	})
}
