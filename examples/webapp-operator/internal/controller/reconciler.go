// Package controller reconciles WebApps: a Deployment, a Service and a
// registration ConfigMap per WebApp, a directory entry outside the owner
// tree that a finalizer guards (finalizer.go), and a status that changes
// only when the truth does. The reference behaviour follows every rule of idempotent
// reconciliation; Bug selects one seeded mistake (see bugs.go).
package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// Reconciler drives WebApps toward their spec.
type Reconciler struct {
	// Client reads (from the informer cache under a manager) and writes.
	Client client.Client
	// APIReader reads straight from the API server; retries after a conflict
	// use it so they never recompute from the same stale cached object.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	// Clock stamps lastTransitionTime; tests step a fake one.
	Clock clock.PassiveClock
	// Bug is the seeded mistake; None for the reference operator.
	Bug Bug

	// pending is EventDiff's memory of what each WebApp's events said changed.
	pending pendingChanges
	// passwords is RegenerateSecret's memory of the password of each WebApp: its mistake is
	// that it is only here, so a restarted operator has none and generates another.
	passwords   map[types.UID][]byte
	passwordsMu sync.Mutex
	// directory is CleanupInMemory's memory of the directory entries it created (finalizer.go).
	directory directoryMemory
	// tickRuns is TickRerunAfterRestart's memory of the ticks it ran (ticks.go).
	tickRuns tickMemory
}

// rememberedPassword is RegenerateSecret's password for app, generated the first time this process asks.
func (r *Reconciler) rememberedPassword(app *demov1.WebApp) []byte {
	r.passwordsMu.Lock()
	defer r.passwordsMu.Unlock()
	if r.passwords == nil {
		r.passwords = map[types.UID][]byte{}
	}
	if r.passwords[app.UID] == nil {
		r.passwords[app.UID] = newPassword()
	}
	return r.passwords[app.UID]
}

// SetupWithManager watches WebApps and the children they own, so drift of a
// child triggers a reconcile of its owner.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Bug == EventDiff {
		// The mistake's own handlers note what each event says changed (eventdiff.go).
		return ctrl.NewControllerManagedBy(mgr).
			Named("webapp").
			Watches(&demov1.WebApp{}, r.webAppEvents()).
			Watches(&appsv1.Deployment{}, r.childEvents("Deployment")).
			Watches(&corev1.Service{}, r.childEvents("Service")).
			Watches(&corev1.ConfigMap{}, r.childEvents("ConfigMap")).
			Watches(&corev1.ConfigMap{}, r.directoryEntryChanges()).
			Complete(r)
	}
	builder := ctrl.NewControllerManagedBy(mgr).
		For(&demov1.WebApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{})
	if r.Bug.generatesSecret() {
		builder = builder.Owns(&corev1.Secret{})
	}
	// The directory entry has no owner reference to follow: its label names its WebApp.
	return builder.Watches(&corev1.ConfigMap{}, directoryEntryEvents()).Complete(r)
}

// observation is what the children look like after this reconcile's writes.
type observation struct {
	deployment *appsv1.Deployment
	// conflicts names children that exist but belong to another controller.
	conflicts []string
	// nextTick is how long until the schedule's next tick (ticks.go); 0: none to come.
	nextTick time.Duration
}

// childConflictError: a child with our name is controlled by someone else.
// It is reported in status; retrying cannot fix it.
type childConflictError struct{ kind, name, owner string }

func (e *childConflictError) Error() string {
	return fmt.Sprintf("%s %s is controlled by %s, not by this WebApp", e.kind, e.name, e.owner)
}

// Reconcile is called for every event about a WebApp or its children, and on
// resyncs and restarts: each call re-reads and moves toward the current spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	var changes changeSet
	if r.Bug == EventDiff {
		// What the events since the last reconcile said changed; a failed
		// reconcile puts it back, so the retry still acts on it.
		changes = r.pending.take(req.NamespacedName)
		defer func() {
			if err != nil {
				r.pending.putBack(req.NamespacedName, changes)
			}
		}()
	}

	app := &demov1.WebApp{}
	if err := r.Client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		// The owned children go with their owner through garbage collection; the directory entry
		// is the finalizer's to remove.
		return ctrl.Result{}, r.finalize(ctx, app, changes)
	}
	if err := r.ensureFinalizer(ctx, app); err != nil {
		return ctrl.Result{}, err
	}

	if r.Bug == EarlyReady && app.Status.ObservedGeneration != app.Generation {
		// The mistake: claiming the new generation before acting on it.
		claim := app.DeepCopy()
		claim.Status.ObservedGeneration = app.Generation
		meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
			Type: demov1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Available",
			Message: "spec accepted", ObservedGeneration: app.Generation, LastTransitionTime: r.now(),
		})
		if err := r.Client.Status().Update(ctx, claim); err != nil {
			return ctrl.Result{}, err
		}
		app = claim
	}

	observed, err := r.reconcileChildren(ctx, app, changes)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileStatus(ctx, app, observed); err != nil {
		return ctrl.Result{}, err
	}
	if r.Bug == Heartbeat {
		// The variant: come back when the heartbeat is due, even if nothing else happens.
		return ctrl.Result{RequeueAfter: HeartbeatInterval}, nil
	}
	if observed.nextTick > 0 {
		// The schedule's: come back when the next tick is due, even if nothing else happens.
		return ctrl.Result{RequeueAfter: observed.nextTick}, nil
	}
	if r.Bug == FlipWithinReconcile && (observed.deployment == nil || !deploymentAvailable(observed.deployment, app.Spec.Replicas)) {
		// Its polling habit (not the mistake): look again soon while the Deployment is not available.
		return ctrl.Result{RequeueAfter: PollInterval}, nil
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) reconcileChildren(ctx context.Context, app *demov1.WebApp, changes changeSet) (observation, error) {
	var observed observation
	// A child controlled by someone else is reported in status and does not stop the others.
	note := func(err error) error {
		var conflict *childConflictError
		if errors.As(err, &conflict) {
			observed.conflicts = append(observed.conflicts, conflict.Error())
			return nil
		}
		return err
	}

	deployment, deploymentCreated, err := r.ensureChild(ctx, app, child{
		kind:    "Deployment",
		desired: r.desiredDeployment(app),
		empty:   func() client.Object { return &appsv1.Deployment{} },
		sync: func(live, desired client.Object) bool {
			return r.syncDeployment(live.(*appsv1.Deployment), desired.(*appsv1.Deployment))
		},
		owned:   true,
		changes: changes,
	})
	if err := note(err); err != nil {
		return observed, err
	}
	if deployment != nil {
		observed.deployment = deployment.(*appsv1.Deployment)
	}

	if r.Bug == ReplaceSkipsPort {
		if err := r.replaceServiceOnPortChange(ctx, app); err != nil {
			return observed, err
		}
	}
	if r.Bug != CrashGap || deploymentCreated {
		// (CrashGap's mistake: the Service is made only alongside the Deployment.)
		_, _, err = r.ensureChild(ctx, app, child{
			kind:    "Service",
			desired: r.desiredService(app),
			empty:   func() client.Object { return &corev1.Service{} },
			sync: func(live, desired client.Object) bool {
				return r.syncService(live.(*corev1.Service), desired.(*corev1.Service))
			},
			owned:   true,
			changes: changes,
		})
		if err := note(err); err != nil {
			return observed, err
		}
	}

	registration := r.desiredRegistration(app)
	if r.Bug == UIDPrefixTakeover {
		// The mistake: whatever registration carries this WebApp's labels is its own, whichever life made it.
		// (The directory entry carries the same labels; a registration is told by its name.)
		var found corev1.ConfigMapList
		if err := r.Client.List(ctx, &found, client.InNamespace(app.Namespace), client.MatchingLabels(childLabels(app))); err != nil {
			return observed, err
		}
		for _, cm := range found.Items {
			if strings.HasPrefix(cm.Name, registrationPrefix) {
				registration.Name = cm.Name
				break
			}
		}
	}
	_, _, err = r.ensureChild(ctx, app, child{
		kind:    "ConfigMap",
		desired: registration,
		empty:   func() client.Object { return &corev1.ConfigMap{} },
		sync: func(live, desired client.Object) bool {
			return r.syncRegistration(live.(*corev1.ConfigMap), desired.(*corev1.ConfigMap))
		},
		// NameWithoutUID's and UIDPrefixTakeover's mistake: an unowned registration, so nothing
		// ties it to this life of the WebApp.
		owned:   r.Bug != NameWithoutUID && r.Bug != UIDPrefixTakeover,
		changes: changes,
	})
	if err := note(err); err != nil {
		return observed, err
	}
	if err := note(r.ensureDirectoryEntry(ctx, app, changes)); err != nil {
		return observed, err
	}
	if r.Bug.ticks() {
		next, err := r.reconcileTicks(ctx, app, changes, note)
		if err != nil {
			return observed, err
		}
		observed.nextTick = next
	}
	if !r.Bug.generatesSecret() {
		return observed, nil
	}

	var remembered []byte
	password := newPassword()
	if r.Bug == RegenerateSecret {
		remembered = r.rememberedPassword(app)
		password = remembered
	}
	_, _, err = r.ensureChild(ctx, app, child{
		kind:    "Secret",
		desired: desiredSecret(app, password),
		empty:   func() client.Object { return &corev1.Secret{} },
		sync: func(live, desired client.Object) bool {
			return syncSecret(live.(*corev1.Secret), desired.(*corev1.Secret), remembered)
		},
		owned:   true,
		changes: changes,
	})
	return observed, note(err)
}

// child describes one child: its desired state and how to compare it.
type child struct {
	kind    string
	desired client.Object
	empty   func() client.Object
	// sync copies the managed fields of desired into live and reports a change.
	sync func(live, desired client.Object) bool
	// owned children carry a controller reference to the WebApp.
	owned bool
	// changes (EventDiff only) are what the events since the last reconcile said changed.
	changes changeSet
}

// ensureChild creates the child if it is missing, checks the identity of one
// that exists, and updates it only when a managed field differs. It returns
// the child as it now is, and whether this call created it.
func (r *Reconciler) ensureChild(ctx context.Context, app *demov1.WebApp, c child) (client.Object, bool, error) {
	key := client.ObjectKeyFromObject(c.desired)
	if c.owned {
		if err := controllerutil.SetControllerReference(app, c.desired, r.Scheme); err != nil {
			return nil, false, err
		}
	}

	if r.Bug == ApplyChild && c.kind == "ConfigMap" {
		return r.applyChild(ctx, app, c, key)
	}

	if r.Bug == IgnoreAlreadyExists && c.kind == "Service" {
		// The mistake: create, and take "already exists" for "is as I want it".
		err := r.Client.Create(ctx, c.desired)
		if apierrors.IsAlreadyExists(err) {
			return c.desired, false, nil
		}
		return c.desired, err == nil, err
	}

	live := c.empty()
	err := r.Client.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		created := c.desired
		if r.Bug == GenerateName && c.kind == "Deployment" {
			// The mistake: a server-generated name that the lookup above never finds.
			created = c.desired.DeepCopyObject().(client.Object)
			created.SetGenerateName(key.Name + "-")
			created.SetName("")
		}
		err = r.Client.Create(ctx, created)
		if r.Bug == RecreateOnAlreadyExists && apierrors.IsAlreadyExists(err) {
			// The mistake: a child the cache does not show is taken for a leftover, deleted
			// (exactly the one just read) and created again.
			leftover := c.empty()
			if err := r.APIReader.Get(ctx, key, leftover); err != nil {
				return nil, false, err
			}
			if err := r.Client.Delete(ctx, leftover, client.Preconditions{UID: ptr(leftover.GetUID())}); err != nil {
				return nil, false, err
			}
			return created, true, r.Client.Create(ctx, created)
		}
		// AlreadyExists here means our cache is behind; the error requeues and the next try reads it.
		return created, true, err
	}
	if err != nil {
		return nil, false, err
	}
	if err := r.checkIdentity(app, c, live); err != nil {
		return nil, false, err
	}

	adopt := c.owned && metav1.GetControllerOf(live) == nil
	if !c.sync(live.DeepCopyObject().(client.Object), c.desired) && !adopt {
		return live, false, nil // nothing we own differs: no write at all
	}
	switch r.Bug {
	case NoDriftRepair:
		return live, false, nil
	case EventDiff:
		if !c.changes.touch(c.kind) {
			// The mistake: no event it read named a change of this child, so the difference stays.
			return live, false, nil
		}
	case RecreateOnDrift:
		// The mistake: delete and create instead of an update in place.
		if err := r.Client.Delete(ctx, live, client.Preconditions{UID: ptr(live.GetUID())}); err != nil {
			return nil, false, err
		}
		return c.desired, true, r.Client.Create(ctx, c.desired)
	case ReplaceWholeObject:
		// The mistake: PUT a freshly built object, wiping whatever else is on the live one.
		replacement := c.desired.DeepCopyObject().(client.Object)
		replacement.SetResourceVersion(live.GetResourceVersion())
		return replacement, false, r.Client.Update(ctx, replacement)
	}
	updated, err := r.updateChild(ctx, app, c, key, live)
	return updated, false, err
}

// applyChild is the ApplyChild variant's ensureChild for the registration:
// read it, and when it is missing or a managed field differs, apply the
// fields this operator owns with server-side apply (which creates it when
// missing). Other writers' fields stay theirs.
func (r *Reconciler) applyChild(ctx context.Context, app *demov1.WebApp, c child, key client.ObjectKey) (client.Object, bool, error) {
	live := c.empty()
	err := r.Client.Get(ctx, key, live)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return nil, false, err
	}
	if !missing {
		if err := r.checkIdentity(app, c, live); err != nil {
			return nil, false, err
		}
		if !c.sync(live.DeepCopyObject().(client.Object), c.desired) && metav1.GetControllerOf(live) != nil {
			return live, false, nil
		}
	}
	desired := c.desired.(*corev1.ConfigMap)
	apply := corev1ac.ConfigMap(desired.Name, desired.Namespace).
		WithLabels(desired.Labels).
		WithData(desired.Data).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(demov1.GroupVersion.String()).WithKind("WebApp").
			WithName(app.Name).WithUID(app.UID).
			WithController(true).WithBlockOwnerDeletion(true))
	if err := r.Client.Apply(ctx, apply, client.FieldOwner("webapp-operator"), client.ForceOwnership); err != nil {
		return nil, false, err
	}
	return desired, missing, nil
}

// updateChild writes the managed fields onto the live child. The first try
// uses the object just read; after a conflict every retry re-reads from the
// API server, re-checks identity and recomputes, so another writer's change
// is built upon, never overwritten.
func (r *Reconciler) updateChild(ctx context.Context, app *demov1.WebApp, c child, key client.ObjectKey, live client.Object) (client.Object, error) {
	attempt := 0
	stale := live.DeepCopyObject().(client.Object)
	var result client.Object
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempt++
		var target client.Object
		resubmit := false
		switch {
		case attempt == 1:
			target = live.DeepCopyObject().(client.Object)
		case r.Bug == StaleRetry:
			// The mistake: the retry resends the object read before the loop.
			target, resubmit = stale, true
		case r.Bug == BlindOverwrite:
			// The mistake: borrow the newest resourceVersion, keep the stale content.
			latest := c.empty()
			if err := r.APIReader.Get(ctx, key, latest); err != nil {
				return err
			}
			target, resubmit = stale, true
			target.SetResourceVersion(latest.GetResourceVersion())
		default:
			target = c.empty()
			if err := r.APIReader.Get(ctx, key, target); err != nil {
				return err
			}
			if err := r.checkIdentity(app, c, target); err != nil {
				return err
			}
		}
		changed := c.sync(target, c.desired)
		if c.owned && metav1.GetControllerOf(target) == nil {
			if err := controllerutil.SetControllerReference(app, target, r.Scheme); err != nil {
				return err
			}
			changed = true
		}
		if r.Bug == StaleRetry || r.Bug == BlindOverwrite {
			stale = target
		}
		if !changed && !resubmit {
			result = target
			return nil
		}
		if err := r.Client.Update(ctx, target); err != nil {
			return err
		}
		result = target
		return nil
	})
	return result, err
}

// checkIdentity refuses a child that another controller owns.
func (r *Reconciler) checkIdentity(app *demov1.WebApp, c child, live client.Object) error {
	if !c.owned {
		return nil
	}
	if owner := metav1.GetControllerOf(live); owner != nil && owner.UID != app.UID {
		return &childConflictError{kind: c.kind, name: live.GetName(), owner: fmt.Sprintf("%s %s (uid %s)", owner.Kind, owner.Name, owner.UID)}
	}
	return nil
}

// desiredStatus derives the status from what the children look like now,
// starting from `current` so that an unchanged condition keeps its
// lastTransitionTime (and a stored lastHeartbeatTime stays as it is unless
// the Heartbeat variant refreshes it).
func (r *Reconciler) desiredStatus(app *demov1.WebApp, current demov1.WebAppStatus, observed observation) demov1.WebAppStatus {
	next := *current.DeepCopy()
	next.ObservedGeneration = app.Generation
	now := r.now()
	if r.Bug == Heartbeat && (current.LastHeartbeatTime == nil || now.Sub(current.LastHeartbeatTime.Time) >= HeartbeatInterval) {
		// The variant: a heartbeat that is due is written, and only then.
		next.LastHeartbeatTime = &now
	}
	ready := metav1.Condition{Type: demov1.ConditionReady, ObservedGeneration: app.Generation, LastTransitionTime: now}
	switch d := observed.deployment; {
	case len(observed.conflicts) > 0:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "ChildConflict", fmt.Sprint(observed.conflicts)
	case d == nil:
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, "Progressing", "waiting for the Deployment"
	case deploymentAvailable(d, app.Spec.Replicas):
		ready.Status, ready.Reason = metav1.ConditionTrue, "Available"
		ready.Message = fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, app.Spec.Replicas)
	default:
		ready.Status, ready.Reason = metav1.ConditionFalse, "Progressing"
		ready.Message = fmt.Sprintf("%d of %d replicas updated and available", d.Status.AvailableReplicas, app.Spec.Replicas)
	}
	if observed.deployment != nil {
		next.ReadyReplicas = observed.deployment.Status.ReadyReplicas
	}
	if r.Bug == FlipWithinReconcile && observed.deployment != nil && ready.Status == metav1.ConditionFalse {
		// The mistake: a verdict set, then overturned, in the same reconcile. Each
		// SetStatusCondition changes the status, so each stamps the time.
		meta.SetStatusCondition(&next.Conditions, metav1.Condition{
			Type: demov1.ConditionReady, Status: metav1.ConditionTrue, Reason: "ChildrenCreated",
			Message: "every child exists", ObservedGeneration: app.Generation, LastTransitionTime: now,
		})
	}
	if r.Bug == StatusEveryReconcile {
		// The mistake: the condition rebuilt from scratch, "now" every time.
		next.Conditions = []metav1.Condition{ready}
		return next
	}
	meta.SetStatusCondition(&next.Conditions, ready)
	if r.Bug == StatusJitter {
		// The variant: a transient condition that timing (here: chance) decides to write or not,
		// at most once while the Deployment is not available, gone once it is.
		degraded := meta.FindStatusCondition(next.Conditions, conditionDegraded)
		switch {
		case ready.Status == metav1.ConditionTrue:
			meta.RemoveStatusCondition(&next.Conditions, conditionDegraded)
		case degraded == nil && rand.IntN(2) == 0:
			meta.SetStatusCondition(&next.Conditions, metav1.Condition{
				Type: conditionDegraded, Status: metav1.ConditionTrue, Reason: "Settling",
				Message: "the Deployment is not available yet", ObservedGeneration: app.Generation, LastTransitionTime: now,
			})
		}
	}
	return next
}

// reconcileStatus writes status only when it differs from what is stored. A
// conflict is retried on a fresh read; if the spec moved on meanwhile
// (a new generation), these conclusions are about an old spec and are not
// written: the reconcile that the spec change queued will report instead.
func (r *Reconciler) reconcileStatus(ctx context.Context, app *demov1.WebApp, observed observation) error {
	attempt := 0
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempt++
		target := app.DeepCopy()
		if attempt > 1 {
			if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(app), target); err != nil {
				return client.IgnoreNotFound(err)
			}
			if target.Generation != app.Generation {
				if r.Bug != StaleStatusGeneration {
					log.FromContext(ctx).Info("spec changed during status update; leaving the status to the next reconcile",
						"applied", app.Generation, "current", target.Generation)
					return nil
				}
				// The mistake: the newest generation stamped on the old spec's conclusions.
				next := r.desiredStatus(app, target.Status, observed)
				next.ObservedGeneration = target.Generation
				for i := range next.Conditions {
					next.Conditions[i].ObservedGeneration = target.Generation
				}
				target.Status = next
				return r.Client.Status().Update(ctx, target)
			}
		}
		next := r.desiredStatus(app, target.Status, observed)
		if r.Bug != StatusEveryReconcile && equality.Semantic.DeepEqual(target.Status, next) {
			return nil
		}
		target.Status = next
		return r.Client.Status().Update(ctx, target)
	})
}

func (r *Reconciler) now() metav1.Time {
	return metav1.NewTime(r.Clock.Now().UTC().Truncate(1e9))
}

// conditionDegraded is written only by the StatusJitter variant.
const conditionDegraded = "Degraded"

func ptr[T any](v T) *T { return &v }

// replaceServiceOnPortChange is ReplaceSkipsPort's port change: a Service
// made for another port of the spec (builtForPortAnnotation; a drift of its
// ports is repaired in place) is deleted (ensureChild makes it again), and
// the Deployment's container port is brought to the spec's in between. The
// mistake: that step lives on this path only, so a restart after the delete,
// which finds no Service and takes the create path, never makes it.
func (r *Reconciler) replaceServiceOnPortChange(ctx context.Context, app *demov1.WebApp) error {
	desired := r.desiredService(app)
	live := &corev1.Service{}
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(desired), live)
	if apierrors.IsNotFound(err) || (err == nil && live.Annotations[builtForPortAnnotation] == desired.Annotations[builtForPortAnnotation]) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.Client.Delete(ctx, live, client.Preconditions{UID: ptr(live.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	// The step of this path only, retried on a conflict (the Deployment controller writes its status
	// meanwhile): only a crash between the delete and here skips it.
	want := r.desiredDeployment(app)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		deployment := &appsv1.Deployment{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), deployment); err != nil {
			return err
		}
		containers := deployment.Spec.Template.Spec.Containers
		if len(containers) == 0 || containerPortsEqual(containers[0].Ports, want.Spec.Template.Spec.Containers[0].Ports) {
			return nil
		}
		containers[0].Ports = want.Spec.Template.Spec.Containers[0].Ports
		return r.Client.Update(ctx, deployment)
	})
}
