package controller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The random-port-order variant: two Service ports in a random order, compared by name.

// portNames is the Service's port names in their order.
func portNames(ports []corev1.ServicePort) []string {
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = p.Name
	}
	return names
}

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}
}

func TestVariantRandomPortOrderBuildsThePortsInEitherOrder(t *testing.T) {
	orders := map[string]int{}
	for range 200 {
		ports := randomOrderPorts(8080)
		byName := map[string]corev1.ServicePort{}
		for _, p := range ports {
			byName[p.Name] = p
		}
		if len(ports) != 2 || byName[portName] != servicePort(portName, 8080) || byName[adminPortName] != servicePort(adminPortName, 8081) {
			t.Fatalf("ports %+v, want http 8080 and admin 8081", ports)
		}
		orders[portNames(ports)[0]]++
	}
	if orders[portName] == 0 || orders[adminPortName] == 0 {
		t.Fatalf("200 builds, first port: %v; want both orders", orders)
	}
	if got := adminPort(65535); got != 65534 {
		t.Errorf("adminPort(65535) = %d, want 65534 (a port number has 16 bits)", got)
	}
}

func TestVariantRandomPortOrderComparesPortsByName(t *testing.T) {
	http, admin := servicePort(portName, 8080), servicePort(adminPortName, 8081)
	withNodePort := func(p corev1.ServicePort, nodePort int32) corev1.ServicePort { p.NodePort = nodePort; return p }
	for _, tc := range []struct {
		name          string
		live, desired []corev1.ServicePort
		want          []corev1.ServicePort
		changed       bool
	}{
		{"the same ports in another order are no difference", []corev1.ServicePort{admin, http}, []corev1.ServicePort{http, admin}, []corev1.ServicePort{admin, http}, false},
		{"a drifted port is repaired where it stands", []corev1.ServicePort{servicePort(adminPortName, 7000), http}, []corev1.ServicePort{http, admin}, []corev1.ServicePort{admin, http}, true},
		{"a repaired port keeps what the server set", []corev1.ServicePort{withNodePort(servicePort(portName, 1), 30001), admin}, []corev1.ServicePort{admin, http}, []corev1.ServicePort{withNodePort(http, 30001), admin}, true},
		{"a port of another name goes, a missing one is appended", []corev1.ServicePort{servicePort("metrics", 9000), http}, []corev1.ServicePort{admin, http}, []corev1.ServicePort{http, admin}, true},
		{"a second port of one name goes", []corev1.ServicePort{http, servicePort(portName, 8082), admin}, []corev1.ServicePort{admin, http}, []corev1.ServicePort{http, admin}, true},
		{"no ports yet", nil, []corev1.ServicePort{admin, http}, []corev1.ServicePort{admin, http}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := slices.Clone(tc.live)
			changed := syncPortsByName(&live, tc.desired)
			if changed != tc.changed || !slices.Equal(live, tc.want) {
				t.Fatalf("changed %v, ports %+v; want %v, %+v", changed, live, tc.changed, tc.want)
			}
		})
	}
	// The reference (one port) compares by position, and has nothing to order.
	r := &Reconciler{Bug: None}
	live := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{http}}}
	if r.syncService(live, &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{http}}}) {
		t.Fatal("the reference found a difference in equal ports")
	}
}

func TestVariantRandomPortOrderConvergesAndNeverRewritesAnOrder(t *testing.T) {
	e := newEnv(t)
	e.createApp("web", defaultSpec())
	c, rec := e.recordingClient(nil)
	r := e.reconciler(RandomPortOrder, c)
	e.converge(r, "web")
	svc := e.service("web")
	byName := func(s *corev1.Service) map[string]int32 {
		out := map[string]int32{}
		for _, p := range s.Spec.Ports {
			if p.TargetPort != intstr.FromInt32(p.Port) || p.Protocol != corev1.ProtocolTCP {
				t.Fatalf("port %+v: want targetPort = port, TCP", p)
			}
			out[p.Name] = p.Port
		}
		return out
	}
	if got := byName(svc); len(got) != 2 || got[portName] != 8080 || got[adminPortName] != 8081 {
		t.Fatalf("service ports %+v, want http 8080 and admin 8081", svc.Spec.Ports)
	}

	// Reconciles of a converged WebApp write nothing, whatever order they build the ports in.
	rec.reset()
	for range 5 {
		e.must(e.reconcile(r, "web"))
	}
	if writes := rec.all(); len(writes) != 0 {
		t.Fatalf("converged reconciles wrote: %s", describe(writes))
	}

	// Another writer reverses the ports: the same ports, so nothing to repair.
	slices.Reverse(svc.Spec.Ports)
	e.must(e.c.Update(e.ctx, svc))
	order := portNames(svc.Spec.Ports)
	e.must(e.reconcile(r, "web"))
	if writes := rec.all(); len(writes) != 0 {
		t.Fatalf("a reordered Service was rewritten: %s", describe(writes))
	}

	// Another writer moves the admin port: repaired in place, the order kept.
	svc = e.service("web")
	svc.Spec.Ports[slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == adminPortName })].Port = 7000
	e.must(e.c.Update(e.ctx, svc))
	e.must(e.reconcile(r, "web"))
	repaired := e.service("web")
	if updates := rec.matching("update", "Service"); len(updates) != 1 || len(rec.all()) != 1 {
		t.Fatalf("writes %s, want one Service update", describe(rec.all()))
	}
	if repaired.UID != svc.UID || !slices.Equal(portNames(repaired.Spec.Ports), order) || byName(repaired)[adminPortName] != 8081 {
		t.Fatalf("repaired Service: uid %s (was %s), ports %+v (order was %v)", repaired.UID, svc.UID, repaired.Spec.Ports, order)
	}

	// A port change reaches both ports, in place.
	e.patchSpec("web", `{"spec":{"port":9090}}`)
	e.converge(r, "web")
	updated := e.service("web")
	if got := byName(updated); updated.UID != svc.UID || got[portName] != 9090 || got[adminPortName] != 9091 ||
		!slices.Equal(portNames(updated.Spec.Ports), order) {
		t.Fatalf("after the port change: uid %s (was %s), ports %+v", updated.UID, svc.UID, updated.Spec.Ports)
	}
}
