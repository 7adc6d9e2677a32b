package main

import (
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"reconcile-conformance.dev/examples/webapp-operator/internal/writehook"
)

// writeLogger logs every write request the operator makes, with the
// resourceVersion it carried and the outcome: the operator's own request
// log, for people reading what it did (the kit's proxy keeps its own).
func writeLogger(logger logr.Logger) writehook.Hook {
	return func(c client.Client, verb, subresource string, obj client.Object, forward func() error) error {
		sentVersion := obj.GetResourceVersion()
		err := forward()
		kind := "unknown"
		if gvk, gvkErr := c.GroupVersionKindFor(obj); gvkErr == nil {
			kind = gvk.Kind
		}
		values := []any{"verb", verb, "kind", kind, "namespace", obj.GetNamespace(), "name", obj.GetName(), "sentResourceVersion", sentVersion}
		if subresource != "" {
			values = append(values, "subresource", subresource)
		}
		if err != nil {
			values = append(values, "result", string(apierrors.ReasonForError(err)), "error", err.Error())
		} else {
			values = append(values, "result", "ok", "resourceVersion", obj.GetResourceVersion())
		}
		logger.Info("write", values...)
		return err
	}
}
