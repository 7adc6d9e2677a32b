package controller

// These tests run the reconciler against a real API server: a kwok cluster
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)
// started by the kit's own CLI. Reconcile is called directly, the way the
// controller would call it again and again, so each fault lands at an exact
// point without sleeps: a crash is a write that succeeds and then an error,
// a conflict is a concurrent write that makes the API server answer 409.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
	"reconcile-conformance.dev/examples/webapp-operator/internal/writehook"
)

var (
	restConfig *rest.Config
	scheme     = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(runWithCluster(m))
}

// runWithCluster starts a kwok cluster with the kit's CLI, installs the CRD,
// runs the tests and deletes the cluster. No cluster is a failure, not a skip.
func runWithCluster(m *testing.M) int {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := demov1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	repo, err := filepath.Abs("../../../..")
	if err != nil {
		panic(err)
	}
	name := fmt.Sprintf("webapp-go-%06x", rand.IntN(1<<24))
	cli := func(args ...string) (string, error) {
		cmd := exec.Command("node", append([]string{filepath.Join(repo, "dist", "cli.js")}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("reconcile-conformance %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), nil
	}
	out, err := cli("cluster", "create", "--provider", "kwok", "--name", name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot start a kwok cluster for the tests (run scripts/setup.sh first):", err)
		return 1
	}
	deleteCluster := func() {
		if _, err := cli("cluster", "delete", "--name", name); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	defer deleteCluster()
	// An interrupted test run (Ctrl-C, a CI timeout) still removes its cluster.
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-interrupted
		deleteCluster()
		os.Exit(1)
	}()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	restConfig, err = clientcmd.BuildConfigFromFlags("", lines[len(lines)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	restConfig.QPS, restConfig.Burst = 200, 400
	if err := installCRD(filepath.Join(repo, "examples", "webapp-operator", "crds", "webapp.yaml")); err != nil {
		fmt.Fprintln(os.Stderr, "installing the CRD:", err)
		return 1
	}
	return m.Run()
}

func installCRD(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		return err
	}
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := c.Create(ctx, crd); err != nil {
		return err
	}
	return poll(30*time.Second, func() (bool, string) {
		current := &unstructured.Unstructured{}
		current.SetGroupVersionKind(crd.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), current); err != nil {
			return false, err.Error()
		}
		conditions, _, _ := unstructured.NestedSlice(current.Object, "status", "conditions")
		for _, raw := range conditions {
			if c, ok := raw.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				// Established; make sure the kind is also served before tests create WebApps.
				list := &demov1.WebAppList{}
				if err := newBaseClient().List(ctx, list); err != nil {
					return false, err.Error()
				}
				return true, ""
			}
		}
		return false, "CRD not Established"
	})
}

// poll observes until done or the deadline; the reason for "not yet" ends up in the failure.
func poll(timeout time.Duration, check func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, reason := check()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s: %s", timeout, reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func newBaseClient() client.WithWatch {
	c, err := client.NewWithWatch(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		panic(err)
	}
	return c
}

// env is one test's namespace on the shared cluster.
type env struct {
	t     *testing.T
	ctx   context.Context
	c     client.WithWatch
	ns    string
	clock *clocktesting.FakeClock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	t.Parallel()
	e := &env{
		t:     t,
		ctx:   context.Background(),
		c:     newBaseClient(),
		ns:    fmt.Sprintf("t-%06x", rand.IntN(1<<24)),
		clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)),
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}
	e.must(e.c.Create(e.ctx, namespace))
	// The namespace controller removes everything in it; the shared cluster does not fill up.
	t.Cleanup(func() { _ = e.c.Delete(context.Background(), namespace) })
	return e
}

func (e *env) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

// reconciler builds a Reconciler with `bug` over client c (the plain client when nil).
func (e *env) reconciler(bug Bug, c client.Client) *Reconciler {
	if c == nil {
		c = e.c
	}
	return &Reconciler{Client: c, APIReader: c, Scheme: scheme, Clock: e.clock, Bug: bug}
}

func (e *env) createApp(name string, spec demov1.WebAppSpec) *demov1.WebApp {
	e.t.Helper()
	app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}, Spec: spec}
	e.must(e.c.Create(e.ctx, app))
	return app
}

func defaultSpec() demov1.WebAppSpec {
	return demov1.WebAppSpec{Image: "registry.example/web:1", Replicas: 1, Port: 8080, Args: []string{"--greeting=hi"}}
}

func (e *env) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: e.ns, Name: name}
}

func (e *env) reconcile(r *Reconciler, name string) error {
	_, err := r.Reconcile(e.ctx, ctrl.Request{NamespacedName: e.key(name)})
	return err
}

func (e *env) app(name string) *demov1.WebApp {
	e.t.Helper()
	app := &demov1.WebApp{}
	e.must(e.c.Get(e.ctx, e.key(name), app))
	return app
}

func (e *env) deployment(name string) *appsv1.Deployment {
	e.t.Helper()
	d := &appsv1.Deployment{}
	e.must(e.c.Get(e.ctx, e.key(name), d))
	return d
}

func (e *env) service(name string) *corev1.Service {
	e.t.Helper()
	s := &corev1.Service{}
	e.must(e.c.Get(e.ctx, e.key(name), s))
	return s
}

func readyCondition(app *demov1.WebApp) *metav1.Condition {
	return meta.FindStatusCondition(app.Status.Conditions, demov1.ConditionReady)
}

func isConverged(app *demov1.WebApp) bool {
	ready := readyCondition(app)
	return ready != nil && ready.Status == metav1.ConditionTrue && app.Status.ObservedGeneration == app.Generation
}

// converge reconciles, as the controller would on every event, until the
// WebApp is Ready for its current generation.
func (e *env) converge(r *Reconciler, name string) *demov1.WebApp {
	e.t.Helper()
	var app *demov1.WebApp
	err := poll(60*time.Second, func() (bool, string) {
		if err := e.reconcile(r, name); err != nil {
			return false, err.Error()
		}
		app = e.app(name)
		return isConverged(app), fmt.Sprintf("status %+v, generation %d", app.Status, app.Generation)
	})
	e.must(err)
	return app
}

func (e *env) patchSpec(name string, patch string) {
	e.t.Helper()
	e.must(e.c.Patch(e.ctx, &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}},
		client.RawPatch(types.MergePatchType, []byte(patch))))
}

// write is one write request seen by a recording client.
type write struct {
	verb, kind, name, subresource, sentVersion string
	err                                        error
	object                                     client.Object
}

// recorder wraps the base client, records every write, and runs an optional
// hook before a write is forwarded (to inject a fault at that exact point).
type recorder struct {
	mu     sync.Mutex
	writes []write
	before func(verb, subresource string, obj client.Object) error
}

func (e *env) recordingClient(before func(verb, subresource string, obj client.Object) error) (client.Client, *recorder) {
	rec := &recorder{before: before}
	return e.recordOn(e.c, rec), rec
}

// recordOn wraps a client (the plain one, or one with faults of its own) with the recorder.
func (e *env) recordOn(base client.WithWatch, rec *recorder) client.Client {
	do := func(c client.Client, verb, sub string, obj client.Object, forward func() error) error {
		sent := obj.GetResourceVersion()
		var err error
		if rec.before != nil {
			err = rec.before(verb, sub, obj)
		}
		if err == nil {
			err = forward()
		}
		gvk, _ := c.GroupVersionKindFor(obj)
		rec.mu.Lock()
		rec.writes = append(rec.writes, write{verb: verb, kind: gvk.Kind, name: obj.GetName(), subresource: sub, sentVersion: sent, err: err, object: obj.DeepCopyObject().(client.Object)})
		rec.mu.Unlock()
		return err
	}
	return writehook.Wrap(base, do)
}

func (r *recorder) all() []write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]write(nil), r.writes...)
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = nil
}

func (r *recorder) matching(verb, kind string) []write {
	var out []write
	for _, w := range r.all() {
		if w.verb == verb && w.kind == kind {
			out = append(out, w)
		}
	}
	return out
}

// concurrentWriter makes a write to an object with the base client, as
// another actor would: an annotation, without any precondition.
func (e *env) concurrentWrite(obj client.Object, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.reconcile-conformance.dev/concurrent-write":%q}}}`, value)
	target := obj.DeepCopyObject().(client.Object)
	return e.c.Patch(e.ctx, target, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// conflictOnce arms a fault: before the first matching write is forwarded, a
// concurrent write moves the object's resourceVersion, so the API server
// answers the operator's write with a real 409.
func (e *env) conflictOnce(verb, subresource, kind string) func(verb, subresource string, obj client.Object) error {
	var once sync.Once
	return func(v, sub string, obj client.Object) error {
		gvk, _ := e.c.GroupVersionKindFor(obj)
		if v != verb || sub != subresource || gvk.Kind != kind || obj.GetResourceVersion() == "" {
			return nil
		}
		var err error
		once.Do(func() { err = e.concurrentWrite(obj, "conflict") })
		return err
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
