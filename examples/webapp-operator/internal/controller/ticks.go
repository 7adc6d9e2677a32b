package controller

// The ClockTicks variant's schedule (bugs.go): a tick at every multiple of
// TickPeriod of Unix time after the WebApp's creation, at most MaxTicks, each
// the owned ConfigMap <name>-tick-<k>. Level-triggered: every reconcile
// computes from the creation time and the clock which ticks are due and
// makes sure each one's ConfigMap is there with its data, so a restart
// neither repeats a tick nor loses one, and a deleted or drifted tick is
// restored as any child is. The schedule's mutants (ClockBugs) each change
// one habit here.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// tickName is the ConfigMap of tick k (1-based): <name>-tick-<k>.
func tickName(app *demov1.WebApp, k int) string { return fmt.Sprintf("%s-tick-%d", app.Name, k) }

// tickAt is when tick k (1-based) falls: the k-th multiple of TickPeriod of
// Unix time strictly after created.
func tickAt(created time.Time, k int) time.Time {
	period := TickPeriod.Nanoseconds()
	first := (created.UnixNano()/period + 1) * period
	return time.Unix(0, first+int64(k-1)*period).UTC()
}

// ticksDue is how many ticks have come due by now: those whose time is not
// after now, at most MaxTicks.
func ticksDue(created, now time.Time) int {
	due := 0
	for due < MaxTicks && !tickAt(created, due+1).After(now) {
		due++
	}
	return due
}

// untilNextTick is how long from now until the next tick comes due; 0 when
// every tick has.
func untilNextTick(created, now time.Time) time.Duration {
	due := ticksDue(created, now)
	if due >= MaxTicks {
		return 0
	}
	return tickAt(created, due+1).Sub(now)
}

// desiredTick is tick k's ConfigMap under `name`: which tick it is and when
// it fell, in RFC 3339.
func desiredTick(app *demov1.WebApp, name string, k int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: app.Namespace, Labels: childLabels(app)},
		Data: map[string]string{
			"tick": strconv.Itoa(k),
			"at":   tickAt(app.CreationTimestamp.Time, k).Format(time.RFC3339),
		},
	}
}

// syncTick makes a tick's labels ours and its data exactly the desired data.
func syncTick(live, desired *corev1.ConfigMap) bool {
	changed := syncLabels(&live.ObjectMeta, desired.Labels)
	if !maps.Equal(live.Data, desired.Data) {
		live.Data = desired.Data
		changed = true
	}
	return changed
}

// ensureTick is ensureChild for a tick's ConfigMap: created when missing,
// an unowned one adopted, a drifted one repaired in place.
func (r *Reconciler) ensureTick(ctx context.Context, app *demov1.WebApp, desired *corev1.ConfigMap, changes changeSet) error {
	_, _, err := r.ensureChild(ctx, app, child{
		kind:    "ConfigMap",
		desired: desired,
		empty:   func() client.Object { return &corev1.ConfigMap{} },
		sync: func(live, desired client.Object) bool {
			return syncTick(live.(*corev1.ConfigMap), desired.(*corev1.ConfigMap))
		},
		owned:   true,
		changes: changes,
	})
	return err
}

// reconcileTicks makes sure the ConfigMap of every tick that is due is as
// it must be, and returns how long until the next tick comes due (0: none
// left, so no requeue). A tick's ConfigMap controlled by someone else is
// reported through note, as any child's.
func (r *Reconciler) reconcileTicks(ctx context.Context, app *demov1.WebApp, changes changeSet, note func(error) error) (time.Duration, error) {
	created := app.CreationTimestamp.Time
	now := r.Clock.Now()
	due := ticksDue(created, now)
	switch r.Bug {
	case TickNameWithoutTick:
		// The mistake: one name for every tick, so each tick's data replaces the one before.
		if due > 0 {
			if err := note(r.ensureTick(ctx, app, desiredTick(app, app.Name+"-tick", due), changes)); err != nil {
				return 0, err
			}
		}
	case TickStatusGap:
		if err := r.recordedTicks(ctx, app, due); err != nil {
			return 0, err
		}
	default:
		if r.Bug == TickRerunAfterRestart {
			if err := r.rerunLatestTick(ctx, app, due); err != nil {
				return 0, err
			}
		}
		for k := 1; k <= due; k++ {
			if err := note(r.ensureTick(ctx, app, desiredTick(app, tickName(app, k), k), changes)); err != nil {
				return 0, err
			}
		}
	}
	return untilNextTick(created, now), nil
}

// tickMemory is TickRerunAfterRestart's memory: the latest tick this
// process ran for each WebApp, and the process's own short id.
type tickMemory struct {
	mu   sync.Mutex
	last map[types.UID]int
	id   string
}

// ran is the latest tick this process remembers running for uid, and whether it remembers any.
func (m *tickMemory) ran(uid types.UID) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.last[uid]
	return k, ok
}

func (m *tickMemory) remember(uid types.UID, k int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		m.last = map[types.UID]int{}
	}
	m.last[uid] = max(m.last[uid], k)
}

// processID is 5 hex digits drawn once per process (per Reconciler).
func (m *tickMemory) processID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.id == "" {
		b := make([]byte, 3)
		if _, err := rand.Read(b); err != nil {
			panic(err) // crypto/rand never fails on Linux
		}
		m.id = hex.EncodeToString(b)[:5]
	}
	return m.id
}

// rerunLatestTick is TickRerunAfterRestart's mistake. A process that
// remembers running no tick of this WebApp starts its schedule as a
// scheduler that catches up on start does: it runs the latest due tick. If
// that tick's ConfigMap is there already (an earlier process ran it), the
// name is taken, so this run gets a name of its own,
// <name>-tick-<k>-<process id>: a second ConfigMap for one tick.
func (r *Reconciler) rerunLatestTick(ctx context.Context, app *demov1.WebApp, due int) error {
	if _, known := r.tickRuns.ran(app.UID); known || due == 0 {
		r.tickRuns.remember(app.UID, due)
		return nil
	}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: tickName(app, due)}, &corev1.ConfigMap{})
	switch {
	case err == nil:
		rerun := desiredTick(app, tickName(app, due)+"-"+r.tickRuns.processID(), due)
		if err := controllerutil.SetControllerReference(app, rerun, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, rerun); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	case !apierrors.IsNotFound(err):
		return err
	}
	r.tickRuns.remember(app.UID, due)
	return nil
}

// recordedTicks is TickStatusGap's schedule: what to make is decided from
// status.lastTick (read from the API server, so a reconcile right after its
// own record sees it), never from the children, each tick's ConfigMap made
// with generateName <name>-tick- and then recorded. The mistake: the record
// is a second write after the tick's create, so a crash between the two
// leaves a tick made and unrecorded, and the next process makes it again.
// (Nor is a tick's ConfigMap ever repaired or recreated: only the record
// counts.)
func (r *Reconciler) recordedTicks(ctx context.Context, app *demov1.WebApp, due int) error {
	fresh := &demov1.WebApp{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil {
		return client.IgnoreNotFound(err)
	}
	for k := int(fresh.Status.LastTick) + 1; k <= due; k++ {
		made := desiredTick(app, "", k)
		made.GenerateName = app.Name + "-tick-"
		if err := controllerutil.SetControllerReference(app, made, r.Scheme); err != nil {
			return err
		}
		if err := r.Client.Create(ctx, made); err != nil {
			return err
		}
		// The record: a merge patch of status.lastTick alone (no other writer has it).
		record := app.DeepCopy()
		base := record.DeepCopy()
		record.Status.LastTick = int32(k)
		if err := r.Client.Status().Patch(ctx, record, client.MergeFrom(base)); err != nil {
			return err
		}
		// This reconcile's status write (reconcileStatus) starts from the record as it now is.
		app.Status.LastTick = int32(k)
	}
	return nil
}
