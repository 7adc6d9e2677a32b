package controller

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	mathrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// The children of a WebApp, their desired state, and the comparison of only
// the fields this operator owns. Everything else on a live child (server
// defaults, other writers' labels and annotations, status) is left alone.

const (
	labelName      = "app.kubernetes.io/name"
	labelInstance  = "app.kubernetes.io/instance"
	labelManagedBy = "app.kubernetes.io/managed-by"
	containerName  = "app"
	portName       = "http"
	// reconciledAtAnnotation is written only by the timestamp-in-template mutant.
	reconciledAtAnnotation = "demo.reconcile-conformance.dev/reconciled-at"
	// verboseLabel marks the Pods of a verbose WebApp.
	verboseLabel = "demo.reconcile-conformance.dev/verbose"
	// settingPrefix and aliasPrefix begin the registration's keys of a setting and of an alias.
	settingPrefix = "setting."
	aliasPrefix   = "alias-"
)

// selectorLabels select the Pods of one WebApp; they never change for its life.
func selectorLabels(app *demov1.WebApp) map[string]string {
	return map[string]string{labelName: "webapp", labelInstance: app.Name}
}

// childLabels are set on every child and on the Pod template.
func childLabels(app *demov1.WebApp) map[string]string {
	labels := selectorLabels(app)
	labels[labelManagedBy] = "webapp-operator"
	return labels
}

// registrationPrefix begins every registration's name.
const registrationPrefix = "registration-"

// registrationName is the name of the external registration. It carries the
// owner's UID so a WebApp deleted and recreated under the same name never
// adopts the registration of its previous life.
func registrationName(app *demov1.WebApp, bug Bug) string {
	switch bug {
	case NameWithoutUID:
		return registrationPrefix + app.Name
	case UIDPrefixName, UIDPrefixTakeover:
		return registrationPrefix + string(app.UID)[:8]
	case HashName:
		sum := sha256.Sum256([]byte(app.Namespace + "/" + app.Name))
		return registrationPrefix + hex.EncodeToString(sum[:])[:10]
	}
	return registrationPrefix + string(app.UID)
}

// secretName is the GeneratedSecret variant's credentials Secret.
func secretName(app *demov1.WebApp) string { return app.Name + "-auth" }

// newPassword is a password generated once: 16 random bytes in hex.
func newPassword() []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return []byte(hex.EncodeToString(b))
}

// desiredSecret: the user is fixed; the password is `password` (a new one
// when the Secret is created, or RegenerateSecret's remembered one).
func desiredSecret(app *demov1.WebApp, password []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName(app), Namespace: app.Namespace, Labels: childLabels(app)},
		Data:       map[string][]byte{"user": []byte("webapp"), "password": password},
	}
}

// syncSecret keeps the user as it must be and a password the Secret has as
// it is: generated once, it is never written again. Only a missing one is
// generated (RegenerateSecret: `remembered` replaces whatever is there).
func syncSecret(live, desired *corev1.Secret, remembered []byte) bool {
	changed := syncLabels(&live.ObjectMeta, desired.Labels)
	if live.Data == nil {
		live.Data = map[string][]byte{}
	}
	if string(live.Data["user"]) != string(desired.Data["user"]) {
		live.Data["user"] = desired.Data["user"]
		changed = true
	}
	switch {
	case remembered != nil && string(live.Data["password"]) != string(remembered):
		live.Data["password"] = remembered
		changed = true
	case len(live.Data["password"]) == 0:
		live.Data["password"] = newPassword()
		changed = true
	}
	return changed
}

func (r *Reconciler) desiredDeployment(app *demov1.WebApp) *appsv1.Deployment {
	replicas := app.Spec.Replicas
	podLabels := childLabels(app)
	if app.Spec.Verbose {
		podLabels[verboseLabel] = "true"
	}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  containerName,
			Image: app.Spec.Image,
			Args:  slices.Clone(app.Spec.Args),
			Ports: []corev1.ContainerPort{{Name: portName, ContainerPort: app.Spec.Port, Protocol: corev1.ProtocolTCP}},
		}}},
	}
	if r.Bug == TimestampInTemplate {
		// The mistake: a value that changes every reconcile in the template.
		template.Annotations = map[string]string{reconciledAtAnnotation: r.Clock.Now().UTC().Format("2006-01-02T15:04:05Z")}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace, Labels: childLabels(app)},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(app)},
			Template: template,
		},
	}
}

// syncDeployment copies the managed fields of desired into live and reports
// whether anything changed. The selector is immutable and never touched.
func (r *Reconciler) syncDeployment(live, desired *appsv1.Deployment) bool {
	changed := syncLabels(&live.ObjectMeta, desired.Labels)
	if r.Bug == DeepEqualUpdate {
		// The mistake: the live spec carries server defaults the desired one
		// lacks, so this is "different" on every reconcile.
		if !equality.Semantic.DeepEqual(live.Spec, desired.Spec) {
			live.Spec = *desired.Spec.DeepCopy()
			changed = true
		}
		return changed
	}
	if live.Spec.Replicas == nil || *live.Spec.Replicas != *desired.Spec.Replicas {
		live.Spec.Replicas = desired.Spec.Replicas
		changed = true
	}
	if syncLabels(&live.Spec.Template.ObjectMeta, desired.Spec.Template.Labels) {
		changed = true
	}
	// The verbose label is ours to take away too (VerboseLabelKept's mistake: it never does).
	if _, wanted := desired.Spec.Template.Labels[verboseLabel]; !wanted && r.Bug != VerboseLabelKept {
		if _, has := live.Spec.Template.Labels[verboseLabel]; has {
			delete(live.Spec.Template.Labels, verboseLabel)
			changed = true
		}
	}
	if setEntries(&live.Spec.Template.Annotations, desired.Spec.Template.Annotations) {
		changed = true
	}
	want := desired.Spec.Template.Spec.Containers[0]
	index := slices.IndexFunc(live.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == containerName })
	if index < 0 {
		live.Spec.Template.Spec.Containers = append(live.Spec.Template.Spec.Containers, want)
		return true
	}
	got := &live.Spec.Template.Spec.Containers[index]
	if got.Image != want.Image {
		got.Image = want.Image
		changed = true
	}
	if !slices.Equal(got.Args, want.Args) {
		got.Args = want.Args
		changed = true
	}
	// PortOnlyAtCreate's mistake: the port is the create's, never brought to a later spec.
	// (ReplaceSkipsPort brings it only when it replaces the Service: replaceServiceOnPortChange.)
	if r.Bug != PortOnlyAtCreate && r.Bug != ReplaceSkipsPort && !containerPortsEqual(got.Ports, want.Ports) {
		got.Ports = want.Ports
		changed = true
	}
	return changed
}

func containerPortsEqual(live, desired []corev1.ContainerPort) bool {
	return slices.EqualFunc(live, desired, func(a, b corev1.ContainerPort) bool {
		return a.Name == b.Name && a.ContainerPort == b.ContainerPort && a.Protocol == b.Protocol
	})
}

func (r *Reconciler) desiredService(app *demov1.WebApp) *corev1.Service {
	ports := []corev1.ServicePort{{
		Name:       portName,
		Port:       app.Spec.Port,
		TargetPort: intstr.FromInt32(app.Spec.Port),
		Protocol:   corev1.ProtocolTCP,
	}}
	if r.Bug == RandomPortOrder {
		ports = randomOrderPorts(app.Spec.Port)
	}
	var annotations map[string]string
	if r.Bug == ReplaceSkipsPort {
		// The spec's port it was made for: a spec change replaces the Service, a drift is repaired in place.
		annotations = map[string]string{builtForPortAnnotation: strconv.Itoa(int(app.Spec.Port))}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace, Labels: childLabels(app), Annotations: annotations},
		Spec: corev1.ServiceSpec{
			Selector:        selectorLabels(app),
			Ports:           ports,
			SessionAffinity: sessionAffinity(app),
		},
	}
}

// sessionAffinity is the spec's, or None (the API server's default) when it says none.
func sessionAffinity(app *demov1.WebApp) corev1.ServiceAffinity {
	if app.Spec.Service != nil && app.Spec.Service.SessionAffinity != "" {
		return corev1.ServiceAffinity(app.Spec.Service.SessionAffinity)
	}
	return corev1.ServiceAffinityNone
}

// adminPortName is the RandomPortOrder variant's second Service port.
const adminPortName = "admin"

// adminPort is the RandomPortOrder variant's admin port: the spec's port + 1
// (the one below when the spec's port is the highest there is).
func adminPort(port int32) int32 {
	if port == 65535 {
		return port - 1
	}
	return port + 1
}

// randomOrderPorts is the RandomPortOrder variant's ports, built from a map
// by name as some operators do: their order is whatever the map's iteration
// gives, a new one each time they are built (shuffled here, so every order
// is as likely, whatever the runtime's map iteration happens to do).
func randomOrderPorts(port int32) []corev1.ServicePort {
	byName := map[string]int32{portName: port, adminPortName: adminPort(port)}
	ports := make([]corev1.ServicePort, 0, len(byName))
	for name, number := range byName {
		ports = append(ports, corev1.ServicePort{
			Name: name, Port: number, TargetPort: intstr.FromInt32(number), Protocol: corev1.ProtocolTCP,
		})
	}
	mathrand.Shuffle(len(ports), func(i, j int) { ports[i], ports[j] = ports[j], ports[i] })
	return ports
}

// syncService restores selector and ports; clusterIP, nodePorts and the rest stay as the server set them.
func (r *Reconciler) syncService(live, desired *corev1.Service) bool {
	changed := syncLabels(&live.ObjectMeta, desired.Labels)
	if !maps.Equal(live.Spec.Selector, desired.Spec.Selector) {
		live.Spec.Selector = desired.Spec.Selector
		changed = true
	}
	// AffinityOnlyAtCreate's mistake: the affinity is the create's, never brought to a later spec.
	if r.Bug != AffinityOnlyAtCreate && live.Spec.SessionAffinity != desired.Spec.SessionAffinity {
		live.Spec.SessionAffinity = desired.Spec.SessionAffinity
		changed = true
	}
	if r.Bug == RandomPortOrder {
		// The variant: ports are keyed by name, so their order is nobody's business.
		return syncPortsByName(&live.Spec.Ports, desired.Spec.Ports) || changed
	}
	portsEqual := slices.EqualFunc(live.Spec.Ports, desired.Spec.Ports, servicePortEqual)
	if !portsEqual {
		live.Spec.Ports = desired.Spec.Ports
		changed = true
	}
	return changed
}

// servicePortEqual compares the fields of a Service port this operator manages.
func servicePortEqual(a, b corev1.ServicePort) bool {
	return a.Name == b.Name && a.Port == b.Port && a.TargetPort == b.TargetPort && a.Protocol == b.Protocol
}

// syncPortsByName makes *live hold exactly the desired ports, matched by
// name: a port whose managed fields differ is repaired where it stands (its
// nodePort and appProtocol kept), a port of another name is dropped, a
// missing one appended. The live order is kept: an order alone is no
// difference. Reports whether anything changed.
func syncPortsByName(live *[]corev1.ServicePort, desired []corev1.ServicePort) bool {
	changed := false
	wanted := map[string]corev1.ServicePort{}
	for _, p := range desired {
		wanted[p.Name] = p
	}
	kept := (*live)[:0:0]
	seen := map[string]bool{}
	for _, got := range *live {
		want, ok := wanted[got.Name]
		if !ok || seen[got.Name] {
			changed = true // not ours (or a second port of one name): it goes
			continue
		}
		seen[got.Name] = true
		if !servicePortEqual(got, want) {
			got.Port, got.TargetPort, got.Protocol = want.Port, want.TargetPort, want.Protocol
			changed = true
		}
		kept = append(kept, got)
	}
	for _, want := range desired {
		if !seen[want.Name] {
			kept = append(kept, want)
			changed = true
		}
	}
	if changed {
		*live = kept
	}
	return changed
}

func (r *Reconciler) desiredRegistration(app *demov1.WebApp) *corev1.ConfigMap {
	registration := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: registrationName(app, r.Bug), Namespace: app.Namespace, Labels: childLabels(app)},
		Data: map[string]string{
			"owner":    app.Name,
			"image":    app.Spec.Image,
			"replicas": strconv.Itoa(int(app.Spec.Replicas)),
			"port":     strconv.Itoa(int(app.Spec.Port)),
			"args":     strings.Join(app.Spec.Args, "\n"),
			// The endpoints the app serves, one key each, as a service registry lists them.
			endpointKey(app.Spec.Port): portName + "/" + string(corev1.ProtocolTCP),
		},
	}
	for key, value := range app.Spec.Settings {
		registration.Data[settingPrefix+key] = value
	}
	for i, alias := range app.Spec.Aliases {
		registration.Data[aliasPrefix+strconv.Itoa(i)] = alias
	}
	if r.Bug == PanicOnNoAlias {
		// The mistake: the first alias is taken for granted (an index out of range without one).
		registration.Data["primary"] = app.Spec.Aliases[0]
	}
	return registration
}

func endpointKey(port int32) string { return "endpoint-" + strconv.Itoa(int(port)) }

// syncRegistration makes the registration's data exactly the desired data:
// the keys of an endpoint the spec no longer has go too.
func (r *Reconciler) syncRegistration(live, desired *corev1.ConfigMap) bool {
	changed := syncLabels(&live.ObjectMeta, desired.Labels)
	if r.Bug == NeverPrunes {
		// The mistake: desired keys are added and updated, stale ones stay for good.
		return setEntries(&live.Data, desired.Data) || changed
	}
	if r.Bug == SettingsNeverPruned || r.Bug == AliasesNeverShortened {
		// The mistake: stale keys go, but for the settings' (or the aliases') own, which stay for good.
		prefix := map[Bug]string{SettingsNeverPruned: settingPrefix, AliasesNeverShortened: aliasPrefix}[r.Bug]
		for key := range live.Data {
			if _, wanted := desired.Data[key]; !wanted && !strings.HasPrefix(key, prefix) {
				delete(live.Data, key)
				changed = true
			}
		}
		return setEntries(&live.Data, desired.Data) || changed
	}
	if !maps.Equal(live.Data, desired.Data) {
		live.Data = desired.Data
		changed = true
	}
	return changed
}

// syncLabels sets our labels to our values and keeps everybody else's.
func syncLabels(meta *metav1.ObjectMeta, ours map[string]string) bool {
	return setEntries(&meta.Labels, ours)
}

// setEntries sets every entry of want in *m (making the map when it has none),
// leaves the other entries alone, and reports whether anything changed.
func setEntries(m *map[string]string, want map[string]string) bool {
	changed := false
	for key, value := range want {
		if (*m)[key] != value {
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[key] = value
			changed = true
		}
	}
	return changed
}

// deploymentAvailable is true when the Deployment controller has seen the
// current template and every desired replica is updated and available.
func deploymentAvailable(d *appsv1.Deployment, replicas int32) bool {
	return d.Status.ObservedGeneration == d.Generation &&
		d.Status.UpdatedReplicas == replicas &&
		d.Status.AvailableReplicas == replicas &&
		d.Status.Replicas == replicas
}

// builtForPortAnnotation is ReplaceSkipsPort's record, on the Service, of the spec's port it was made for.
const builtForPortAnnotation = "demo.reconcile-conformance.dev/built-for-port"
