package main

import (
	"context"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// writeLogger logs every write request the operator makes, with the
// resourceVersion it carried and the outcome: the operator's own request
// log, for people reading what it did (the kit's proxy keeps its own).
func writeLogger(logger logr.Logger) interceptor.Funcs {
	record := func(c client.Client, verb, subresource string, obj client.Object, do func() error) error {
		sentVersion := obj.GetResourceVersion()
		err := do()
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
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return record(c, "create", "", obj, func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return record(c, "update", "", obj, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return record(c, "patch", "", obj, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return record(c, "delete", "", obj, func() error { return c.Delete(ctx, obj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, subresource string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return record(c, "update", subresource, obj, func() error { return c.SubResource(subresource).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, subresource string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return record(c, "patch", subresource, obj, func() error { return c.SubResource(subresource).Patch(ctx, obj, patch, opts...) })
		},
	}
}
