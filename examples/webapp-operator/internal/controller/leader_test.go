package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The leader-configmap variant: a leader record of its own in the namespace default, beside the controller.

func TestVariantLeaderConfigMapWritesAndRenewsItsRecord(t *testing.T) {
	e := newEnv(t)
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	key := client.ObjectKey{Namespace: LeaderRecordNamespace, Name: LeaderRecordName(e.ns)}
	t.Cleanup(func() {
		_ = e.c.Delete(e.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}})
	})
	record := func() (LeaderElectionRecord, *corev1.ConfigMap) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		e.must(e.c.Get(e.ctx, key, cm))
		got, ok, err := ReadLeaderRecord(cm)
		if err != nil || !ok {
			t.Fatalf("annotations %v: no leader record (%v)", cm.Annotations, err)
		}
		return got, cm
	}
	first := &LeaderRecord{Client: e.c, Reader: e.c, Clock: clock, Identity: "host_one", Key: key}
	e.must(first.Renew(e.ctx))
	created, cm := record()
	start := metav1.NewTime(clock.Now())
	if created.HolderIdentity != "host_one" || created.LeaseDurationSeconds != 15 || created.LeaderTransitions != 0 ||
		!created.AcquireTime.Equal(&start) || !created.RenewTime.Equal(&start) {
		t.Fatalf("created record %+v", created)
	}
	if len(cm.OwnerReferences) != 0 || len(cm.Data) != 0 {
		t.Fatalf("the record's ConfigMap: owners %v, data %v; want only its annotation", cm.OwnerReferences, cm.Data)
	}

	// A renewal moves renewTime only.
	clock.Step(LeaderRenewInterval)
	e.must(first.Renew(e.ctx))
	renewed, _ := record()
	now := metav1.NewTime(clock.Now())
	if renewed.HolderIdentity != "host_one" || !renewed.AcquireTime.Equal(&start) || !renewed.RenewTime.Equal(&now) || renewed.LeaderTransitions != 0 {
		t.Fatalf("renewed record %+v", renewed)
	}

	// A new process (a restart) takes the record over: a new holder, acquireTime and transition.
	clock.Step(time.Second)
	e.must((&LeaderRecord{Client: e.c, Reader: e.c, Clock: clock, Identity: "host_two", Key: key}).Renew(e.ctx))
	taken, _ := record()
	now = metav1.NewTime(clock.Now())
	if taken.HolderIdentity != "host_two" || !taken.AcquireTime.Equal(&now) || !taken.RenewTime.Equal(&now) || taken.LeaderTransitions != 1 {
		t.Fatalf("taken-over record %+v", taken)
	}
}

// Under a manager with a real clock, as main.go runs it: the record is
// written at start and every LeaderRenewInterval, in the namespace default,
// and the WebApp's side is the reference's, with no write once converged.
func TestVariantLeaderConfigMapRenewsBesideTheController(t *testing.T) {
	const window = 5 * time.Second
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	rec := &recorder{}
	e.runOperator(LeaderConfigMap, rec)
	e.must(poll(60*time.Second, func() (bool, string) {
		return isConverged(e.app("web")), "not converged"
	}))
	before := e.app("web")
	children := e.childVersions(before)
	rec.reset()
	time.Sleep(window)

	var renewals int
	for _, w := range rec.all() {
		if w.kind != "ConfigMap" || w.object.GetNamespace() != LeaderRecordNamespace || w.name != LeaderRecordName(e.ns) {
			t.Fatalf("a write other than the leader record's: %s", describe([]write{w}))
		}
		if w.err != nil {
			t.Fatalf("leader record write failed: %v", w.err)
		}
		renewals++
	}
	if most := int(window/LeaderRenewInterval) + 1; renewals < 2 || renewals > most {
		t.Fatalf("%d leader record writes in %s, want 2 to %d: %s", renewals, window, most, describe(rec.all()))
	}
	cm := &corev1.ConfigMap{}
	e.must(e.c.Get(e.ctx, client.ObjectKey{Namespace: LeaderRecordNamespace, Name: LeaderRecordName(e.ns)}, cm))
	record, ok, err := ReadLeaderRecord(cm)
	if !ok || err != nil || record.HolderIdentity == "" || !record.AcquireTime.Before(&record.RenewTime) {
		t.Fatalf("leader record %+v (%v, %v)", record, ok, err)
	}
	after := e.app("web")
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("the WebApp's resourceVersion moved from %s to %s", before.ResourceVersion, after.ResourceVersion)
	}
	if got := e.childVersions(after); len(got) != len(children) {
		t.Errorf("children %v, were %v", got, children)
	} else {
		for kind, v := range children {
			if got[kind] != v {
				t.Errorf("%s (uid, resourceVersion) changed from %v to %v", kind, v, got[kind])
			}
		}
	}
}
