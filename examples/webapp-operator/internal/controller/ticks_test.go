package controller

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The clock-ticks variant is no mistake: a schedule of its own, each tick a
// ConfigMap, computed from the WebApp's creation and the clock at every
// reconcile. Step by step on the fake clock: each tick is made once, when it
// is due and not before, a restart repeats none, and a tick's ConfigMap is a
// child like the others (adopted, repaired in place, recreated). Under a
// manager with a real clock, its RequeueAfter makes the ticks on time. Each
// mutant of it runs the same steps beside it and shows its mistake.

// ticks is the WebApp web's tick ConfigMaps (named web-tick...), by name.
func (e *env) ticks() map[string]*corev1.ConfigMap {
	e.t.Helper()
	list := &corev1.ConfigMapList{}
	e.must(e.c.List(e.ctx, list, client.InNamespace(e.ns)))
	out := map[string]*corev1.ConfigMap{}
	for i := range list.Items {
		if cm := &list.Items[i]; strings.HasPrefix(cm.Name, "web-tick") {
			out[cm.Name] = cm
		}
	}
	return out
}

// tickNames is the names of ticks, sorted.
func tickNames(ticks map[string]*corev1.ConfigMap) []string {
	return slices.Sorted(maps.Keys(ticks))
}

// ticksNumbered is how many of ticks say they are tick k.
func ticksNumbered(ticks map[string]*corev1.ConfigMap, k int) int {
	n := 0
	for _, cm := range ticks {
		if cm.Data["tick"] == strconv.Itoa(k) {
			n++
		}
	}
	return n
}

// startTicks creates the WebApp web, sets the fake clock to its creation
// (before its first tick) and converges it with a reconciler of `bug`.
func (e *env) startTicks(bug Bug, c client.Client) (*demov1.WebApp, *Reconciler) {
	e.t.Helper()
	app := e.createApp("web", defaultSpec())
	e.clock.SetTime(app.CreationTimestamp.Time)
	r := e.reconciler(bug, c)
	e.converge(r, "web")
	return app, r
}

func (e *env) reconcileResult(r *Reconciler) ctrl.Result {
	e.t.Helper()
	result, err := r.Reconcile(e.ctx, ctrl.Request{NamespacedName: e.key("web")})
	e.must(err)
	return result
}

func TestVariantClockTicksFallOnTheWallClock(t *testing.T) {
	at := func(s string) time.Time {
		parsed, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return parsed
	}
	for _, tc := range []struct {
		name, created string
		ticks         []string
	}{
		{"the first boundary after the creation", "2026-01-01T12:00:03Z", []string{"12:00:05", "12:00:10", "12:00:15"}},
		{"a creation on a boundary: the next one", "2026-01-01T12:00:05Z", []string{"12:00:10", "12:00:15", "12:00:20"}},
		{"just before a boundary", "2026-01-01T12:00:09.999Z", []string{"12:00:10", "12:00:15", "12:00:20"}},
	} {
		created := at(tc.created)
		var got []string
		for k := 1; k <= MaxTicks; k++ {
			got = append(got, tickAt(created, k).Format("15:04:05"))
		}
		if !slices.Equal(got, tc.ticks) {
			t.Errorf("%s: ticks at %v, want %v", tc.name, got, tc.ticks)
		}
	}
	created := at("2026-01-01T12:00:03Z")
	for _, tc := range []struct {
		now   string
		due   int
		until time.Duration
	}{
		{"2026-01-01T12:00:03Z", 0, 2 * time.Second},
		{"2026-01-01T12:00:04.999Z", 0, time.Millisecond},
		{"2026-01-01T12:00:05Z", 1, TickPeriod},
		{"2026-01-01T12:00:14Z", 2, time.Second},
		{"2026-01-01T12:00:15Z", 3, 0},
		{"2026-01-02T12:00:00Z", 3, 0},
	} {
		now := at(tc.now)
		if due, until := ticksDue(created, now), untilNextTick(created, now); due != tc.due || until != tc.until {
			t.Errorf("at %s: %d due, next in %s; want %d, %s", tc.now, due, until, tc.due, tc.until)
		}
	}
}

func TestVariantClockTicksMakesEachTickOnceWhenDue(t *testing.T) {
	both(t, ClockTicks, func(t *testing.T, e *env, bug Bug) {
		c, rec := e.recordingClient(nil)
		app, r := e.startTicks(bug, c)
		created := app.CreationTimestamp.Time
		for k := 1; k <= MaxTicks; k++ {
			// Just before tick k: nothing to do yet, and the requeue is for tick k.
			e.clock.SetTime(tickAt(created, k).Add(-time.Millisecond))
			rec.reset()
			result := e.reconcileResult(r)
			if want := map[Bug]time.Duration{None: 0, ClockTicks: time.Millisecond}[bug]; result.RequeueAfter != want {
				t.Fatalf("before tick %d: RequeueAfter %s, want %s", k, result.RequeueAfter, want)
			}
			if writes := rec.all(); len(writes) != 0 {
				t.Fatalf("before tick %d: %s", k, describe(writes))
			}
			// At tick k: its ConfigMap, and a requeue for the next tick while one remains.
			e.clock.SetTime(tickAt(created, k))
			result = e.reconcileResult(r)
			want := time.Duration(0)
			if bug == ClockTicks && k < MaxTicks {
				want = TickPeriod
			}
			if result.RequeueAfter != want {
				t.Fatalf("at tick %d: RequeueAfter %s, want %s", k, result.RequeueAfter, want)
			}
			writes := rec.all()
			if bug == None && len(writes) != 0 || bug == ClockTicks &&
				(len(writes) != 1 || writes[0].verb != "create" || writes[0].name != tickName(app, k)) {
				t.Fatalf("at tick %d: %s", k, describe(writes))
			}
		}
		// The same process again, and a new one (a restart) long after: nothing to do.
		e.clock.Step(time.Hour)
		rec.reset()
		for _, again := range []*Reconciler{r, e.reconciler(bug, c)} {
			if result := e.reconcileResult(again); result.RequeueAfter != 0 {
				t.Fatalf("after every tick: RequeueAfter %s", result.RequeueAfter)
			}
		}
		if writes := rec.all(); len(writes) != 0 {
			t.Fatalf("after every tick, and after a restart: %s", describe(writes))
		}

		ticks := e.ticks()
		if bug == None {
			if len(ticks) != 0 {
				t.Fatalf("the reference made ticks: %v", tickNames(ticks))
			}
			return
		}
		if names := tickNames(ticks); !slices.Equal(names, []string{"web-tick-1", "web-tick-2", "web-tick-3"}) {
			t.Fatalf("ticks %v", names)
		}
		for k := 1; k <= MaxTicks; k++ {
			cm := ticks[tickName(app, k)]
			want := map[string]string{"tick": strconv.Itoa(k), "at": tickAt(created, k).Format(time.RFC3339)}
			if owner := metav1.GetControllerOf(cm); owner == nil || owner.UID != app.UID || !maps.Equal(cm.Data, want) {
				t.Errorf("tick %d: data %v (want %v), controller %v", k, cm.Data, want, owner)
			}
		}
	})
}

func TestVariantClockTicksTreatsATickAsAChild(t *testing.T) {
	e := newEnv(t)
	// An unowned ConfigMap under tick 1's name, with other data and a label of another team's.
	preexisting := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "web-tick-1", Namespace: e.ns, Labels: map[string]string{"team": "payments"}},
		Data:       map[string]string{"tick": "9"},
	}
	e.must(e.c.Create(e.ctx, preexisting))
	app, r := e.startTicks(ClockTicks, nil)
	created := app.CreationTimestamp.Time
	e.clock.SetTime(tickAt(created, 2))
	e.must(e.reconcile(r, "web"))
	ticks := e.ticks()
	adopted := ticks["web-tick-1"]
	if owner := metav1.GetControllerOf(adopted); owner == nil || owner.UID != app.UID || adopted.UID != preexisting.UID ||
		adopted.Data["tick"] != "1" || adopted.Labels["team"] != "payments" {
		t.Fatalf("the preexisting tick 1: uid kept %v, controller %v, data %v, labels %v",
			adopted.UID == preexisting.UID, owner, adopted.Data, adopted.Labels)
	}

	// Drift of tick 2 is repaired in place; a deleted tick 1 is made again.
	drifted := ticks["web-tick-2"].DeepCopy()
	drifted.Data["at"] = "yesterday"
	e.must(e.c.Update(e.ctx, drifted))
	e.must(e.c.Delete(e.ctx, adopted))
	e.must(e.reconcile(r, "web"))
	ticks = e.ticks()
	if repaired := ticks["web-tick-2"]; repaired.UID != drifted.UID || repaired.Data["at"] != tickAt(created, 2).Format(time.RFC3339) {
		t.Errorf("drifted tick 2: uid kept %v, data %v", repaired.UID == drifted.UID, repaired.Data)
	}
	if recreated, ok := ticks["web-tick-1"]; !ok || recreated.UID == adopted.UID || recreated.Data["tick"] != "1" {
		t.Errorf("deleted tick 1: %v", recreated)
	}
	if names := tickNames(ticks); !slices.Equal(names, []string{"web-tick-1", "web-tick-2"}) {
		t.Errorf("ticks %v", names)
	}
}

// Under a manager with a real clock, as main.go runs it: the RequeueAfter
// brings each tick on time, each is made once, and then it is quiet.
func TestVariantClockTicksUnderAManager(t *testing.T) {
	e := newEnv(t)
	app := e.createApp("web", defaultSpec())
	rec := &recorder{}
	e.runOperator(ClockTicks, rec)
	created := app.CreationTimestamp.Time
	e.must(poll(60*time.Second, func() (bool, string) {
		n := len(e.ticks())
		return n == MaxTicks, strconv.Itoa(n) + " ticks"
	}))
	// Time enough for a fourth tick, were there one, and for any repeat.
	time.Sleep(time.Until(tickAt(created, MaxTicks+1).Add(time.Second)))
	var creates []string
	for _, w := range rec.matching("create", "ConfigMap") {
		if strings.HasPrefix(w.name, "web-tick") {
			creates = append(creates, w.name)
		}
	}
	slices.Sort(creates)
	if !slices.Equal(creates, []string{"web-tick-1", "web-tick-2", "web-tick-3"}) {
		t.Fatalf("tick creates %v", creates)
	}
	for k, cm := range e.ticks() {
		n, _ := strconv.Atoi(cm.Data["tick"])
		// creationTimestamp has whole seconds, as the boundaries do.
		if made, due := cm.CreationTimestamp.Time, tickAt(created, n); made.Before(due) || made.After(due.Add(3*time.Second)) {
			t.Errorf("%s made at %s, its tick at %s", k, made.Format(time.RFC3339), due.Format(time.RFC3339))
		}
	}
	for _, w := range rec.all() {
		if w.kind == "ConfigMap" && strings.HasPrefix(w.name, "web-tick") && w.verb != "create" {
			t.Errorf("a tick written again: %s", describe([]write{w}))
		}
	}
}

func TestBugTickRerunAfterRestartRunsTheLatestTickAgain(t *testing.T) {
	pair(t, ClockTicks, TickRerunAfterRestart, func(t *testing.T, e *env, bug Bug) {
		app, r := e.startTicks(bug, nil)
		created := app.CreationTimestamp.Time
		for k := 1; k <= 2; k++ {
			e.clock.SetTime(tickAt(created, k))
			e.must(e.reconcile(r, "web"))
		}
		e.must(e.reconcile(r, "web")) // the same process again: nothing new
		if names := tickNames(e.ticks()); !slices.Equal(names, []string{"web-tick-1", "web-tick-2"}) {
			t.Fatalf("before the restart: ticks %v", names)
		}
		restarted := e.reconciler(bug, nil) // a new process, with nothing in memory
		for range 2 {
			e.must(e.reconcile(restarted, "web"))
		}
		ticks := e.ticks()
		if want := map[Bug]int{ClockTicks: 1, TickRerunAfterRestart: 2}[bug]; ticksNumbered(ticks, 2) != want || ticksNumbered(ticks, 1) != 1 {
			t.Fatalf("after the restart: ticks %v; want tick 2 %d time(s), tick 1 once", tickNames(ticks), want)
		}
		if bug == TickRerunAfterRestart {
			rerun := tickName(app, 2) + "-" + restarted.tickRuns.processID()
			if _, ok := ticks[rerun]; !ok {
				t.Fatalf("ticks %v, want %s among them", tickNames(ticks), rerun)
			}
		}
	})
}

func TestBugTickNameWithoutTickOverwritesTheFirstTick(t *testing.T) {
	pair(t, ClockTicks, TickNameWithoutTick, func(t *testing.T, e *env, bug Bug) {
		app, r := e.startTicks(bug, nil)
		created := app.CreationTimestamp.Time
		e.clock.SetTime(tickAt(created, 1))
		e.must(e.reconcile(r, "web"))
		e.clock.SetTime(tickAt(created, 2))
		e.must(e.reconcile(r, "web"))
		ticks := e.ticks()
		want := map[Bug][]string{ClockTicks: {"web-tick-1", "web-tick-2"}, TickNameWithoutTick: {"web-tick"}}[bug]
		if names := tickNames(ticks); !slices.Equal(names, want) {
			t.Fatalf("ticks %v, want %v", names, want)
		}
		if first := ticksNumbered(ticks, 1); first != map[Bug]int{ClockTicks: 1, TickNameWithoutTick: 0}[bug] {
			t.Fatalf("tick 1 is in %d ConfigMap(s) after tick 2: %v", first, tickNames(ticks))
		}
		if ticksNumbered(ticks, 2) != 1 {
			t.Fatalf("tick 2 is in %d ConfigMap(s)", ticksNumbered(ticks, 2))
		}
	})
}

func TestBugTickStatusGapMakesATickAgainAfterACrash(t *testing.T) {
	pair(t, ClockTicks, TickStatusGap, func(t *testing.T, e *env, bug Bug) {
		app, _ := e.startTicks(bug, nil)
		created := app.CreationTimestamp.Time
		e.clock.SetTime(tickAt(created, 1))
		// The process dies right after tick 1's create: the write happened, its record never did.
		crashing, rec := e.recordingClient(nil)
		crashed := &Reconciler{Client: crashAfter(crashing, rec, "create", "ConfigMap"), APIReader: e.c, Scheme: scheme, Clock: e.clock, Bug: bug}
		if err := e.reconcile(crashed, "web"); !errors.Is(err, errCrash) {
			t.Fatalf("want the simulated crash, got %v", err)
		}
		restarted := e.reconciler(bug, nil)
		for range 3 {
			e.must(e.reconcile(restarted, "web"))
		}
		// Without a crash it makes each tick once, as the variant does.
		e.clock.SetTime(tickAt(created, 2))
		for range 3 {
			e.must(e.reconcile(restarted, "web"))
		}
		ticks := e.ticks()
		if want := map[Bug]int{ClockTicks: 1, TickStatusGap: 2}[bug]; ticksNumbered(ticks, 1) != want || ticksNumbered(ticks, 2) != 1 {
			t.Fatalf("ticks %v: tick 1 in %d, tick 2 in %d; want %d and 1", tickNames(ticks), ticksNumbered(ticks, 1), ticksNumbered(ticks, 2), want)
		}
		if bug == TickStatusGap {
			if last := e.app("web").Status.LastTick; last != 2 {
				t.Fatalf("status.lastTick %d, want 2", last)
			}
			for name := range ticks {
				if !strings.HasPrefix(name, "web-tick-") || len(name) != len("web-tick-")+5 {
					t.Errorf("%s: not a name generateName web-tick- gives", name)
				}
			}
		}
	})
}
