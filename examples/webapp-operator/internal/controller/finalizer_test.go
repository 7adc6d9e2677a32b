package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The deletion path: the reference cleans up its directory entry and then
// releases its finalizer; each deletion mutant leaves the entry behind (or
// brings children back) where the reference does not. No operator runs
// here, so a deletion is finished by reconciling, as the controller would
// on the deletionTimestamp's event.

var errInjected = errors.New("injected server error")

// deleteAndFinalize deletes the WebApp and reconciles with r until it is gone.
func (e *env) deleteAndFinalize(r *Reconciler, app *demov1.WebApp) {
	e.t.Helper()
	e.must(e.c.Delete(e.ctx, app))
	e.must(poll(10*time.Second, func() (bool, string) {
		if err := e.reconcile(r, app.Name); err != nil {
			return false, err.Error()
		}
		err := e.c.Get(e.ctx, e.key(app.Name), &demov1.WebApp{})
		return isNotFound(err), fmt.Sprint(err)
	}))
}

// directoryEntryExists reports whether the WebApp's entry (directory-<uid>) is there.
func (e *env) directoryEntryExists(app *demov1.WebApp) bool {
	e.t.Helper()
	err := e.c.Get(e.ctx, e.key(directoryName(app)), &corev1.ConfigMap{})
	if err != nil && !isNotFound(err) {
		e.t.Fatal(err)
	}
	return err == nil
}

// terminating deletes the WebApp while a finalizer of the test's own holds it, so it stays
// terminating after the operator released its own.
func (e *env) terminating(app *demov1.WebApp) {
	e.t.Helper()
	held := e.app(app.Name)
	controllerutil.AddFinalizer(held, "test.reconcile-conformance.dev/hold")
	e.must(e.c.Update(e.ctx, held))
	e.must(e.c.Delete(e.ctx, held))
	e.t.Cleanup(func() {
		// Let it go, so the namespace can be deleted.
		_ = e.c.Patch(e.ctx, &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: e.ns}},
			client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
}

func TestReferenceRemovesItsDirectoryEntryBeforeReleasingTheFinalizer(t *testing.T) {
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	c, rec := e.recordingClient(nil)
	r := e.reconciler(None, c)
	app := e.converge(r, "web")
	if !controllerutil.ContainsFinalizer(app, FinalizerName) {
		t.Fatalf("finalizers %v, want %s", app.Finalizers, FinalizerName)
	}
	entry := &corev1.ConfigMap{}
	e.must(e.c.Get(e.ctx, e.key(directoryName(app)), entry))
	if len(entry.OwnerReferences) != 0 {
		t.Fatalf("the directory entry has owner references %v: the garbage collector would remove it", entry.OwnerReferences)
	}

	e.deletesEntryThenReleases(t, r, rec, app)
}

func TestBugReleaseBeforeCleanupLeavesTheEntryAfterACrash(t *testing.T) {
	both(t, ReleaseBeforeCleanup, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		app := e.converge(e.reconciler(bug, nil), "web")
		e.must(e.c.Delete(e.ctx, app))
		// A crash right after the deletion's first write: nothing after it happens.
		_ = e.reconcile(e.reconciler(bug, &crashAfterFirstWrite{Client: e.c}), "web")
		// The restarted operator reconciles whatever is still there.
		restarted := e.reconciler(bug, nil)
		e.must(poll(10*time.Second, func() (bool, string) {
			if err := e.reconcile(restarted, "web"); err != nil {
				return false, err.Error()
			}
			err := e.c.Get(e.ctx, e.key("web"), &demov1.WebApp{})
			return isNotFound(err), fmt.Sprint(err)
		}))
		if left := e.directoryEntryExists(app); left != (bug == ReleaseBeforeCleanup) {
			t.Fatalf("directory entry left behind: %v", left)
		}
	})
}

// crashAfterFirstWrite forwards the first update or delete and then reports a crash; a crashed
// process writes nothing more.
type crashAfterFirstWrite struct {
	client.Client
	crashed bool
}

func (c *crashAfterFirstWrite) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.once(func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c *crashAfterFirstWrite) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.once(func() error { return c.Client.Delete(ctx, obj, opts...) })
}

func (c *crashAfterFirstWrite) once(write func() error) error {
	if c.crashed {
		return errCrash
	}
	if err := write(); err != nil {
		return err
	}
	c.crashed = true
	return errCrash
}

func TestBugCleanupInMemoryForgetsTheEntryAcrossARestart(t *testing.T) {
	both(t, CleanupInMemory, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		app := e.converge(e.reconciler(bug, nil), "web")
		// The process that created the entry is gone; another one finalizes.
		e.deleteAndFinalize(e.reconciler(bug, nil), app)
		if left := e.directoryEntryExists(app); left != (bug == CleanupInMemory) {
			t.Fatalf("directory entry left behind: %v", left)
		}
	})
}

func TestBugResurrectWhileTerminatingRecreatesWhatTheGarbageCollectorRemoved(t *testing.T) {
	both(t, ResurrectWhileTerminating, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		r := e.reconciler(bug, nil)
		app := e.converge(r, "web")
		e.terminating(app)
		// What the garbage collector does during a foreground deletion: the owned Service goes first.
		e.must(e.c.Delete(e.ctx, e.service("web")))
		e.must(e.reconcile(r, "web"))
		err := e.c.Get(e.ctx, e.key("web"), &corev1.Service{})
		if recreated := err == nil; recreated != (bug == ResurrectWhileTerminating) {
			t.Fatalf("Service created again for a terminating WebApp: %v (%v)", recreated, err)
		}
	})
}

func TestBugCleanupGivesUpReleasesTheFinalizerAfterOneFailedDelete(t *testing.T) {
	both(t, CleanupGivesUp, func(t *testing.T, e *env, bug Bug) {
		e.createApp("web", defaultSpec())
		app := e.converge(e.reconciler(bug, nil), "web")
		failed := false
		c, _ := e.recordingClient(func(verb, _ string, obj client.Object) error {
			if verb == "delete" && obj.GetName() == directoryName(app) && !failed {
				failed = true
				return errInjected
			}
			return nil
		})
		r := e.reconciler(bug, c)
		e.must(e.c.Delete(e.ctx, app))
		_ = e.reconcile(r, "web") // the cleanup's delete fails
		stillGuarded := e.c.Get(e.ctx, e.key("web"), &demov1.WebApp{}) == nil
		if stillGuarded != (bug == None) {
			t.Fatalf("WebApp still held by its finalizer after a failed cleanup: %v", stillGuarded)
		}
		if bug == None {
			e.must(poll(10*time.Second, func() (bool, string) {
				err := e.reconcile(r, "web")
				gone := isNotFound(e.c.Get(e.ctx, e.key("web"), &demov1.WebApp{}))
				return gone, fmt.Sprint(err)
			}))
		}
		if left := e.directoryEntryExists(app); left != (bug == CleanupGivesUp) {
			t.Fatalf("directory entry left behind: %v", left)
		}
	})
}

// deletesEntryThenReleases deletes the WebApp through r and checks the
// operator's deletion writes (recorded by rec since its last reset): the
// directory entry first, then the finalizer's release, and the entry gone.
func (e *env) deletesEntryThenReleases(t *testing.T, r *Reconciler, rec *recorder, app *demov1.WebApp) {
	t.Helper()
	rec.reset()
	e.deleteAndFinalize(r, app)
	var sequence []string
	for _, w := range rec.all() {
		sequence = append(sequence, w.verb+" "+w.kind)
	}
	if want := []string{"delete ConfigMap", "update WebApp"}; !slices.Equal(sequence, want) {
		t.Fatalf("deletion writes %v, want %v (the entry first, then the finalizer's release)", sequence, want)
	}
	if e.directoryEntryExists(app) {
		t.Fatal("the directory entry outlived its WebApp")
	}
}
