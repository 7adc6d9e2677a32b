package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The heartbeat variant is no mistake: its status changes on a timer, and
// only its heartbeat does. A timer cannot be shown by calling Reconcile by
// hand, so these tests run the reconciler as main.go does, under a
// controller-runtime manager with a real clock: RequeueAfter, the watches
// and the informer cache are the controller's own.

var quietLogger sync.Once

// runOperator runs a Reconciler with `bug` under a manager confined to the
// test's namespace until the test ends, with every write recorded by rec.
func (e *env) runOperator(bug Bug, rec *recorder) {
	e.t.Helper()
	// The manager logs through controller-runtime's global logger; the recorder is the evidence here.
	quietLogger.Do(func() { ctrl.SetLogger(logr.Discard()) })
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{e.ns: {}}},
		// Parallel tests each run a controller named "webapp" in this one process.
		Controller: config.Controller{SkipNameValidation: ptr(true)},
		NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(config, options)
			if err != nil {
				return nil, err
			}
			return e.recordOn(c, rec), nil
		},
	})
	e.must(err)
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Scheme: scheme, Clock: clock.RealClock{}, Bug: bug}
	e.must(r.SetupWithManager(mgr))
	if bug == LeaderConfigMap {
		// As main.go adds it: the record of an operator that watches the test's namespace.
		e.must(AddLeaderRecord(mgr, mgr.GetClient(), e.ns))
		e.t.Cleanup(func() {
			record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: LeaderRecordNamespace, Name: LeaderRecordName(e.ns)}}
			_ = e.c.Delete(context.Background(), record)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			e.t.Errorf("manager: %v", err)
		}
	})
}

// childVersions is each child's UID and resourceVersion, by kind.
func (e *env) childVersions(app *demov1.WebApp) map[string][2]string {
	e.t.Helper()
	out := map[string][2]string{}
	for kind, obj := range map[string]client.Object{
		"Deployment": e.deployment(app.Name),
		"Service":    e.service(app.Name),
		"ConfigMap":  &corev1.ConfigMap{},
	} {
		if kind == "ConfigMap" {
			e.must(e.c.Get(e.ctx, e.key("registration-"+string(app.UID)), obj))
		}
		out[kind] = [2]string{string(obj.GetUID()), obj.GetResourceVersion()}
	}
	return out
}

// withoutHeartbeat is the status with lastHeartbeatTime cleared.
func withoutHeartbeat(status demov1.WebAppStatus) demov1.WebAppStatus {
	out := *status.DeepCopy()
	out.LastHeartbeatTime = nil
	return out
}

func TestVariantHeartbeatWritesOnlyItsHeartbeatOnATimer(t *testing.T) {
	const window = 7 * time.Second
	both(t, Heartbeat, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		rec := &recorder{}
		e.runOperator(bug, rec)
		var before *demov1.WebApp
		e.must(poll(60*time.Second, func() (bool, string) {
			before = e.app("web")
			return isConverged(before), "not converged"
		}))
		children := e.childVersions(before)
		rec.reset()
		time.Sleep(window)
		after := e.app("web")

		if got := e.childVersions(after); !equality.Semantic.DeepEqual(got, children) {
			t.Errorf("children (uid, resourceVersion) changed from %v to %v", children, got)
		}
		if ltt, was := readyCondition(after).LastTransitionTime, readyCondition(before).LastTransitionTime; !ltt.Equal(&was) {
			t.Errorf("Ready lastTransitionTime moved from %s to %s", was, ltt)
		}
		if !equality.Semantic.DeepEqual(withoutHeartbeat(after.Status), withoutHeartbeat(before.Status)) {
			t.Errorf("status beyond lastHeartbeatTime changed:\n%+v\n%+v", before.Status, after.Status)
		}

		if bug == None {
			if writes := rec.all(); len(writes) != 0 {
				t.Fatalf("the reference wrote within %s after convergence: %s", window, describe(writes))
			}
			if after.ResourceVersion != before.ResourceVersion || after.Status.LastHeartbeatTime != nil {
				t.Fatalf("resourceVersion %s -> %s, lastHeartbeatTime %v", before.ResourceVersion, after.ResourceVersion, after.Status.LastHeartbeatTime)
			}
			return
		}

		// Only status writes, each moving the heartbeat forward and changing nothing else.
		// (A write that met a 409 from a cache behind its own last heartbeat is retried on a fresh read.)
		heartbeat := before.Status.LastHeartbeatTime
		if heartbeat == nil {
			t.Fatalf("converged without a heartbeat: %+v", before.Status)
		}
		var written int
		for _, w := range rec.all() {
			if w.verb != "update" || w.kind != "WebApp" || w.subresource != "status" {
				t.Fatalf("a write other than a status update: %s", describe([]write{w}))
			}
			if w.err != nil {
				if isConflictErr(w.err) {
					continue
				}
				t.Fatalf("status update failed: %v", w.err)
			}
			written++
			status := w.object.(*demov1.WebApp).Status
			if status.LastHeartbeatTime == nil || !heartbeat.Before(status.LastHeartbeatTime) {
				t.Errorf("write %d: lastHeartbeatTime %v, want later than %s", written, status.LastHeartbeatTime, heartbeat)
			} else {
				heartbeat = status.LastHeartbeatTime
			}
			if !equality.Semantic.DeepEqual(withoutHeartbeat(status), withoutHeartbeat(before.Status)) {
				t.Errorf("write %d changed more than lastHeartbeatTime:\n%+v\n%+v", written, before.Status, status)
			}
		}
		// One write per interval, however many reconciles its own writes' events cause.
		if most := int(window/HeartbeatInterval) + 1; written < 2 || written > most {
			t.Fatalf("%d heartbeat writes in %s, want 2 to %d: %s", written, window, most, describe(rec.all()))
		}
		t.Logf("%d heartbeat writes in %s, the last at %s", written, window, heartbeat)
		if !after.Status.LastHeartbeatTime.Equal(heartbeat) || after.ResourceVersion == before.ResourceVersion {
			t.Fatalf("stored heartbeat %s (last written %s), resourceVersion %s -> %s",
				after.Status.LastHeartbeatTime, heartbeat, before.ResourceVersion, after.ResourceVersion)
		}
	})
}

// The same rule, step by step on the fake clock: a heartbeat is written once
// it is HeartbeatInterval old, not before, and every reconcile of the variant
// asks to come back after the interval; the reference waits for events.
func TestVariantHeartbeatIsWrittenWhenDueAndRequeued(t *testing.T) {
	both(t, Heartbeat, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		c, rec := e.recordingClient(nil)
		r := e.reconciler(bug, c)
		before := e.converge(r, "web")
		wantRequeue := map[Bug]time.Duration{None: 0, Heartbeat: HeartbeatInterval}[bug]
		// 2 s old: not due; 3 s old: due; just written: not due.
		for i, step := range []time.Duration{HeartbeatInterval - time.Second, time.Second, 0} {
			rec.reset()
			e.clock.Step(step)
			result, err := r.Reconcile(e.ctx, ctrl.Request{NamespacedName: e.key("web")})
			e.must(err)
			if result.RequeueAfter != wantRequeue {
				t.Fatalf("RequeueAfter %s, want %s", result.RequeueAfter, wantRequeue)
			}
			want := 0
			if bug == Heartbeat && i == 1 {
				want = 1
			}
			if writes := rec.all(); len(writes) != want {
				t.Fatalf("reconcile %d after convergence: %d writes, want %d: %s", i+1, len(writes), want, describe(writes))
			}
		}
		after := e.app("web")
		if ltt, was := readyCondition(after).LastTransitionTime, readyCondition(before).LastTransitionTime; !ltt.Equal(&was) {
			t.Errorf("Ready lastTransitionTime moved from %s to %s", was, ltt)
		}
		if bug == None {
			if after.ResourceVersion != before.ResourceVersion || after.Status.LastHeartbeatTime != nil {
				t.Fatalf("resourceVersion %s -> %s, lastHeartbeatTime %v", before.ResourceVersion, after.ResourceVersion, after.Status.LastHeartbeatTime)
			}
			return
		}
		if before.Status.LastHeartbeatTime == nil || after.Status.LastHeartbeatTime == nil {
			t.Fatalf("lastHeartbeatTime %v after convergence, %v at the end", before.Status.LastHeartbeatTime, after.Status.LastHeartbeatTime)
		}
		if want := before.Status.LastHeartbeatTime.Add(HeartbeatInterval); !after.Status.LastHeartbeatTime.Time.Equal(want) {
			t.Fatalf("lastHeartbeatTime %s, want %s", after.Status.LastHeartbeatTime, want)
		}
	})
}
