package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// The LeaderConfigMap variant's leader record, kept as client-go's old
// ConfigMap lock kept it (before Leases): a ConfigMap whose annotation
// control-plane.alpha.kubernetes.io/leader holds a JSON record of who holds
// the lock, since when, and when it last renewed. It is a manager Runnable
// beside the controller, not part of any reconcile, and lives in another
// namespace than the WebApps: many operators still write such a record of
// their own, whatever leader election the manager does. It gates nothing
// here (the manager's own leader election is off); a record another
// identity holds (a previous process of the same watch namespace) is taken
// over at once.

const (
	// LeaderRenewInterval is how often the record is renewed.
	LeaderRenewInterval = 2 * time.Second
	// LeaderRecordNamespace is where the record lives, whatever namespace the operator watches.
	LeaderRecordNamespace = "default"
	// LeaderAnnotation holds the record (client-go's resourcelock.LeaderElectionRecordAnnotationKey).
	LeaderAnnotation = resourcelock.LeaderElectionRecordAnnotationKey
	// leaderLeaseDuration is client-go's default LeaseDuration.
	leaderLeaseDuration = 15 * time.Second
)

// LeaderRecordName names the record of an operator process from the
// namespace it watches, so the processes of parallel scenarios (each
// watching one namespace) never share one.
func LeaderRecordName(watchNamespace string) string {
	if watchNamespace == "" {
		return "webapp-operator-leader"
	}
	return "webapp-operator-leader-" + watchNamespace
}

// LeaderElectionRecord is the old ConfigMap lock's record, the annotation's JSON.
type LeaderElectionRecord struct {
	HolderIdentity       string      `json:"holderIdentity"`
	LeaseDurationSeconds int         `json:"leaseDurationSeconds"`
	AcquireTime          metav1.Time `json:"acquireTime"`
	RenewTime            metav1.Time `json:"renewTime"`
	LeaderTransitions    int         `json:"leaderTransitions"`
}

// LeaderRecord is the Runnable that writes the record: once when the
// manager starts, then every LeaderRenewInterval until it stops.
type LeaderRecord struct {
	// Client writes the record (the manager's client: its writes are logged like the reconciler's).
	Client client.Client
	// Reader reads it straight from the API server: the manager's cache watches only the watch namespace.
	Reader client.Reader
	Clock  clock.PassiveClock
	// Identity is this process's holderIdentity.
	Identity string
	// Key is the record's ConfigMap.
	Key client.ObjectKey
}

var _ manager.Runnable = &LeaderRecord{}
var _ manager.LeaderElectionRunnable = &LeaderRecord{}

// AddLeaderRecord adds the LeaderConfigMap variant's Runnable to mgr, for
// an operator process that watches watchNamespace ("" for all).
func AddLeaderRecord(mgr ctrl.Manager, c client.Client, watchNamespace string) error {
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	return mgr.Add(&LeaderRecord{
		Client:   c,
		Reader:   mgr.GetAPIReader(),
		Clock:    clock.RealClock{},
		Identity: host + "_" + string(uuid.NewUUID()),
		Key:      client.ObjectKey{Namespace: LeaderRecordNamespace, Name: LeaderRecordName(watchNamespace)},
	})
}

// NeedLeaderElection is false: the record is the lock itself, kept whatever the manager elects.
func (l *LeaderRecord) NeedLeaderElection() bool { return false }

// Start writes the record now and every LeaderRenewInterval until ctx ends.
// A failed write is logged and tried again at the next tick; it never stops
// the manager.
func (l *LeaderRecord) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("leader-record").WithValues("configmap", l.Key.String())
	ticker := time.NewTicker(LeaderRenewInterval)
	defer ticker.Stop()
	for {
		if err := l.Renew(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "cannot write the leader record; trying again at the next renewal")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Renew creates the record, or takes it over (a new acquireTime, one more
// transition) when another identity holds it, or renews this process's
// (renewTime = now), from a fresh read, with its resourceVersion.
func (l *LeaderRecord) Renew(ctx context.Context) error {
	now := metav1.NewTime(l.Clock.Now().UTC().Truncate(time.Second))
	record := LeaderElectionRecord{
		HolderIdentity:       l.Identity,
		LeaseDurationSeconds: int(leaderLeaseDuration / time.Second),
		AcquireTime:          now,
		RenewTime:            now,
	}
	live := &corev1.ConfigMap{}
	err := l.Reader.Get(ctx, l.Key, live)
	if apierrors.IsNotFound(err) {
		encoded, err := json.Marshal(record)
		if err != nil {
			return err
		}
		return l.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: l.Key.Name, Namespace: l.Key.Namespace,
			Labels:      map[string]string{labelManagedBy: "webapp-operator"},
			Annotations: map[string]string{LeaderAnnotation: string(encoded)},
		}})
	}
	if err != nil {
		return err
	}
	previous, _, err := ReadLeaderRecord(live)
	if err != nil {
		return fmt.Errorf("the leader record of %s is not JSON: %w", l.Key, err)
	}
	switch previous.HolderIdentity {
	case l.Identity:
		record.AcquireTime, record.LeaderTransitions = previous.AcquireTime, previous.LeaderTransitions
	case "":
		record.LeaderTransitions = previous.LeaderTransitions
	default:
		record.LeaderTransitions = previous.LeaderTransitions + 1
	}
	encoded, err := json.Marshal(record)
	if err != nil {
		return err
	}
	if live.Annotations == nil {
		live.Annotations = map[string]string{}
	}
	live.Annotations[LeaderAnnotation] = string(encoded)
	return l.Client.Update(ctx, live)
}

// ReadLeaderRecord is the record a ConfigMap's annotation holds (false when it holds none).
func ReadLeaderRecord(cm *corev1.ConfigMap) (LeaderElectionRecord, bool, error) {
	raw, ok := cm.Annotations[LeaderAnnotation]
	if !ok {
		return LeaderElectionRecord{}, false, nil
	}
	var record LeaderElectionRecord
	err := json.Unmarshal([]byte(raw), &record)
	return record, err == nil, err
}
