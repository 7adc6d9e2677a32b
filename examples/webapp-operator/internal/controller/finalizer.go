package controller

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The deletion path. Every WebApp has a directory entry that stands for a
// record in a system outside the cluster (a service directory, a DNS zone),
// which the garbage collector cannot remove: the operator writes it without
// an owner reference and guards the WebApp with a finalizer; on deletion it
// removes the entry, then releases the finalizer. The rules the deletion
// mutants break: clean up before releasing (ReleaseBeforeCleanup), find what
// to clean up from the cluster, not from memory (CleanupInMemory), create
// and repair nothing for an owner that is terminating
// (ResurrectWhileTerminating), keep the finalizer until the cleanup
// succeeded (CleanupGivesUp).

// FinalizerName guards a WebApp's directory entry.
const FinalizerName = "demo.reconcile-conformance.dev/directory"

// DotFinalizerName is the DotFinalizer variant's finalizer: the same guard,
// named dot-qualified after the CRD's group (webapps.<group>), with no slash.
const DotFinalizerName = "deletion.finalizers.webapps.demo.reconcile-conformance.dev"

// finalizerName is the finalizer this operator puts on its WebApps.
func (r *Reconciler) finalizerName() string {
	if r.Bug == DotFinalizer {
		return DotFinalizerName
	}
	return FinalizerName
}

// directoryPrefix names a WebApp's entry: directory-<uid>, one per life.
const directoryPrefix = "directory-"

func directoryName(app *demov1.WebApp) string { return directoryPrefix + string(app.UID) }

func (r *Reconciler) desiredDirectoryEntry(app *demov1.WebApp) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: directoryName(app), Namespace: app.Namespace, Labels: childLabels(app)},
		Data: map[string]string{
			"service": app.Name + "." + app.Namespace,
			"port":    strconv.Itoa(int(app.Spec.Port)),
		},
	}
}

// directoryEntryEvents maps an event about a directory entry (which has no
// owner reference to follow) to its WebApp, by its instance label.
func directoryEntryEvents() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, object client.Object) []reconcile.Request {
		if key, ok := directoryEntryOwner(object); ok {
			return []reconcile.Request{{NamespacedName: key}}
		}
		return nil
	})
}

// directoryEntryOwner is the WebApp a directory entry belongs to, by its name and instance label.
func directoryEntryOwner(object client.Object) (types.NamespacedName, bool) {
	name := object.GetLabels()[labelInstance]
	if name == "" || !strings.HasPrefix(object.GetName(), directoryPrefix) || object.GetName() == directoryPrefix {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: object.GetNamespace(), Name: name}, true
}

// directoryEntryChanges is directoryEntryEvents for EventDiff: like every
// child's own event (childEvents), the entry's names the entry, so its drift
// is repaired; EventDiff's mistake is in the WebApp's events alone. Without
// it, the entry's drift went unrepaired (found by the kill matrix, where
// drift/managed-field failed on the entry's data).
func (r *Reconciler) directoryEntryChanges() handler.EventHandler {
	return objectEvents(func(q queue, object client.Object) {
		if key, ok := directoryEntryOwner(object); ok {
			r.noteChange(q, key, "ConfigMap")
		}
	})
}

// directoryMemory is CleanupInMemory's record of the entries this process created.
type directoryMemory struct {
	mu      sync.Mutex
	entries map[types.UID]string
}

func (m *directoryMemory) remember(uid types.UID, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[types.UID]string{}
	}
	m.entries[uid] = name
}

func (m *directoryMemory) recall(uid types.UID) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, ok := m.entries[uid]
	return name, ok
}

// ensureFinalizer adds the finalizer before anything is registered outside
// the owner-reference tree, so no entry can outlive a WebApp unguarded.
func (r *Reconciler) ensureFinalizer(ctx context.Context, app *demov1.WebApp) error {
	if controllerutil.ContainsFinalizer(app, r.finalizerName()) {
		return nil
	}
	controllerutil.AddFinalizer(app, r.finalizerName())
	return r.Client.Update(ctx, app)
}

// ensureDirectoryEntry creates or repairs the entry (no owner reference: it stands for an outside record).
func (r *Reconciler) ensureDirectoryEntry(ctx context.Context, app *demov1.WebApp, changes changeSet) error {
	desired := r.desiredDirectoryEntry(app)
	_, created, err := r.ensureChild(ctx, app, child{
		kind:    "ConfigMap",
		desired: desired,
		empty:   func() client.Object { return &corev1.ConfigMap{} },
		sync: func(live, desired client.Object) bool {
			l, d := live.(*corev1.ConfigMap), desired.(*corev1.ConfigMap)
			changed := syncLabels(&l.ObjectMeta, d.Labels)
			if !maps.Equal(l.Data, d.Data) {
				l.Data = d.Data
				changed = true
			}
			return changed
		},
		owned:   false,
		changes: changes,
	})
	if err == nil && created {
		r.directory.remember(app.UID, desired.Name)
	}
	return err
}

// finalize runs for a WebApp with a deletionTimestamp.
func (r *Reconciler) finalize(ctx context.Context, app *demov1.WebApp, changes changeSet) error {
	if r.Bug == ResurrectWhileTerminating {
		// The mistake: reconciling the children as if the WebApp were not going away, so what the
		// garbage collector deletes while it terminates is created again.
		if _, err := r.reconcileChildren(ctx, app, changes); err != nil {
			return err
		}
	}
	if !controllerutil.ContainsFinalizer(app, r.finalizerName()) {
		return nil
	}
	if r.Bug == ReleaseBeforeCleanup {
		// The mistake: the finalizer goes first; a crash before the delete leaves the entry for good.
		if err := r.release(ctx, app); err != nil {
			return err
		}
		return r.deleteDirectoryEntry(ctx, app.Namespace, directoryName(app))
	}
	name := directoryName(app)
	if r.Bug == CleanupInMemory {
		// The mistake: what to clean up is what this process remembers creating.
		remembered, ok := r.directory.recall(app.UID)
		if !ok {
			log.FromContext(ctx).Info("no directory entry remembered; nothing to clean up")
			return r.release(ctx, app)
		}
		name = remembered
	}
	if err := r.deleteDirectoryEntry(ctx, app.Namespace, name); err != nil {
		if r.Bug == CleanupGivesUp {
			// The mistake: one failed cleanup and the finalizer is released anyway.
			log.FromContext(ctx).Error(err, "cleanup failed; releasing the finalizer anyway")
			return r.release(ctx, app)
		}
		return err
	}
	return r.release(ctx, app)
}

func (r *Reconciler) deleteDirectoryEntry(ctx context.Context, namespace, name string) error {
	entry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := r.Client.Delete(ctx, entry); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func (r *Reconciler) release(ctx context.Context, app *demov1.WebApp) error {
	controllerutil.RemoveFinalizer(app, r.finalizerName())
	return r.Client.Update(ctx, app)
}
