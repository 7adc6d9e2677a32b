package controller

// The event-diff mutant's watches. Instead of For() and Owns(), which only
// queue the WebApp's key, its handlers note what each event says changed,
// and its reconcile updates existing children only for those changes. With
// every event delivered one by one this is indistinguishable from the
// reference. But an informer may deliver several changes in one update event
// (a watch that coalesced them, or a relist after a gap, which compares the
// state it had with the present), and then all but one of them are lost.

import (
	"context"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The changes an event can name.
const (
	// changeAll: the WebApp was created, or listed after a (re)start.
	changeAll = "all"
	// changeScale: spec.replicas changed.
	changeScale = "scale"
	// changeReconfigure: spec.image, spec.args or spec.port changed.
	changeReconfigure = "reconfigure"
)

// changeTouches names the children each change updates. A child's own event
// names that child, so its drift is still repaired.
var changeTouches = map[string][]string{
	changeAll:         {"Deployment", "Service", "ConfigMap"},
	changeScale:       {"Deployment", "ConfigMap"},
	changeReconfigure: {"Deployment", "Service", "ConfigMap"},
	"Deployment":      {"Deployment"},
	"Service":         {"Service"},
	"ConfigMap":       {"ConfigMap"},
}

// changeSet is what one WebApp's events named since its last reconcile.
type changeSet map[string]bool

// touch reports whether a change in the set updates the child of this kind.
func (s changeSet) touch(kind string) bool {
	for change := range s {
		if slices.Contains(changeTouches[change], kind) {
			return true
		}
	}
	return false
}

// pendingChanges holds a changeSet per WebApp between its events and its
// reconcile; handlers and reconciles run on different goroutines.
type pendingChanges struct {
	mu    sync.Mutex
	byApp map[types.NamespacedName]changeSet
}

func (p *pendingChanges) record(key types.NamespacedName, change string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byApp == nil {
		p.byApp = map[types.NamespacedName]changeSet{}
	}
	if p.byApp[key] == nil {
		p.byApp[key] = changeSet{}
	}
	p.byApp[key][change] = true
}

// take returns and forgets the changes pending for one WebApp.
func (p *pendingChanges) take(key types.NamespacedName) changeSet {
	p.mu.Lock()
	defer p.mu.Unlock()
	changes := p.byApp[key]
	delete(p.byApp, key)
	return changes
}

// putBack returns changes a failed reconcile took, to those noted meanwhile.
func (p *pendingChanges) putBack(key types.NamespacedName, changes changeSet) {
	for change := range changes {
		p.record(key, change)
	}
}

// queue is the controller's work queue of reconcile requests.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// noteChange records a change for a WebApp and queues its reconcile, in that
// order, so the reconcile the key wakes finds the change.
func (r *Reconciler) noteChange(q queue, key types.NamespacedName, change string) {
	if change != "" {
		r.pending.record(key, change)
	}
	q.Add(reconcile.Request{NamespacedName: key})
}

// webAppEvents handles the WebApp watch. An update names ONE change, read
// from the difference between the event's old and new objects: the mistake,
// which assumes every update event carries a single change.
func (r *Reconciler) webAppEvents() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			r.noteChange(q, client.ObjectKeyFromObject(e.Object), changeAll)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			old, oldIsApp := e.ObjectOld.(*demov1.WebApp)
			app, newIsApp := e.ObjectNew.(*demov1.WebApp)
			if !oldIsApp || !newIsApp {
				return
			}
			change := ""
			if old.Spec.Replicas != app.Spec.Replicas {
				change = changeScale
			} else if old.Spec.Image != app.Spec.Image || old.Spec.Port != app.Spec.Port || !slices.Equal(old.Spec.Args, app.Spec.Args) {
				change = changeReconfigure
			}
			r.noteChange(q, client.ObjectKeyFromObject(app), change)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			r.noteChange(q, client.ObjectKeyFromObject(e.Object), "") // its children go with it
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) {
			r.noteChange(q, client.ObjectKeyFromObject(e.Object), "")
		},
	}
}

// childEvents handles the watch of one kind of child: an event names that
// child for the WebApp that controls it, as EnqueueRequestForOwner with
// OnlyControllerOwner maps a child to its owner.
func (r *Reconciler) childEvents(kind string) handler.EventHandler {
	noteOwner := func(q queue, obj client.Object) {
		owner := metav1.GetControllerOf(obj)
		if owner == nil || owner.Kind != "WebApp" {
			return
		}
		if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != demov1.GroupVersion.Group {
			return
		}
		r.noteChange(q, types.NamespacedName{Namespace: obj.GetNamespace(), Name: owner.Name}, kind)
	}
	return objectEvents(noteOwner)
}

// objectEvents calls note with the object of every event (both objects of an update).
func objectEvents(note func(q queue, obj client.Object)) handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) { note(q, e.Object) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			note(q, e.ObjectOld)
			note(q, e.ObjectNew)
		},
		DeleteFunc:  func(_ context.Context, e event.DeleteEvent, q queue) { note(q, e.Object) },
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { note(q, e.Object) },
	}
}
