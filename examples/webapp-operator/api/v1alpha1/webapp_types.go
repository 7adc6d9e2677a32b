// Package v1alpha1 holds the WebApp API: a web application the operator runs
// as a Deployment behind a Service, with an external registration.
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of WebApp.
var GroupVersion = schema.GroupVersion{Group: "demo.reconcile-conformance.dev", Version: "v1alpha1"}

// AddToScheme registers WebApp and WebAppList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// ConditionReady is True when the Deployment runs the current spec with all
// replicas available and every child matches the spec.
const ConditionReady = "Ready"

// WebAppSpec is the desired state.
type WebAppSpec struct {
	// Image is the container image to run.
	Image string `json:"image"`
	// Replicas is the number of Pods; the CRD defaults it to 1.
	Replicas int32 `json:"replicas"`
	// Port is the container port, exposed by the Service on the same number.
	Port int32 `json:"port"`
	// Args are the container's arguments.
	Args []string `json:"args,omitempty"`
	// Settings are published in the registration, one key setting.<key> each.
	Settings map[string]string `json:"settings,omitempty"`
	// Aliases are other host names of the app, published in the
	// registration as alias-0, alias-1, ... in their order.
	Aliases []string `json:"aliases,omitempty"`
	// Verbose labels the Pods verbose (a log shipper's selector, say).
	Verbose bool `json:"verbose,omitempty"`
	// Service shapes the Service beyond its port.
	Service *ServiceSpec `json:"service,omitempty"`
}

// ServiceSpec is what the WebApp says of its Service beyond the port.
type ServiceSpec struct {
	// SessionAffinity is the Service's session affinity, None (the default)
	// or ClientIP.
	SessionAffinity string `json:"sessionAffinity,omitempty"`
}

// WebAppStatus is the observed state.
type WebAppStatus struct {
	// ObservedGeneration is the generation whose spec the conditions describe.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ReadyReplicas is copied from the Deployment.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Conditions: Ready.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastHeartbeatTime is refreshed on a timer, only by the heartbeat
	// variant (--bug=heartbeat); the reference never sets it.
	LastHeartbeatTime *metav1.Time `json:"lastHeartbeatTime,omitempty"`
	// LastTick is the last tick of the schedule whose ConfigMap was made, as
	// only the tick-status-gap mutant (--bug=tick-status-gap) records it; the
	// reference and the clock-ticks variant never set it.
	LastTick int32 `json:"lastTick,omitempty"`
}

// WebApp is the custom resource.
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec,omitempty"`
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppList is a list of WebApps.
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

// DeepCopyInto copies the receiver into out.
func (in *WebApp) DeepCopyInto(out *WebApp) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Args != nil {
		out.Spec.Args = append([]string(nil), in.Spec.Args...)
	}
	if in.Spec.Settings != nil {
		out.Spec.Settings = make(map[string]string, len(in.Spec.Settings))
		for k, v := range in.Spec.Settings {
			out.Spec.Settings[k] = v
		}
	}
	if in.Spec.Aliases != nil {
		out.Spec.Aliases = append([]string(nil), in.Spec.Aliases...)
	}
	if in.Spec.Service != nil {
		service := *in.Spec.Service
		out.Spec.Service = &service
	}
	out.Status = *in.Status.DeepCopy()
}

// DeepCopy returns a deep copy.
func (in *WebApp) DeepCopy() *WebApp {
	if in == nil {
		return nil
	}
	out := new(WebApp)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *WebApp) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *WebAppList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &WebAppList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]WebApp, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// DeepCopy returns a deep copy of the status.
func (in *WebAppStatus) DeepCopy() *WebAppStatus {
	if in == nil {
		return nil
	}
	out := *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	if in.LastHeartbeatTime != nil {
		out.LastHeartbeatTime = in.LastHeartbeatTime.DeepCopy()
	}
	return &out
}
