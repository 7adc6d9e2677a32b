// Package writehook routes every write request of a controller-runtime client
// through one function: the operator's request log and the tests' recorder
// (with its fault injection) are both such a function.
package writehook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Hook sees one write: its verb (create, update, patch, delete), the
// subresource ("" for the object itself) and the object. Calling forward
// sends it; what Hook returns is what the caller gets.
type Hook func(c client.Client, verb, subresource string, obj client.Object, forward func() error) error

// Wrap returns base with every write passed through hook.
func Wrap(base client.WithWatch, hook Hook) client.WithWatch {
	return interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return hook(c, "create", "", obj, func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return hook(c, "update", "", obj, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return hook(c, "patch", "", obj, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return hook(c, "delete", "", obj, func() error { return c.Delete(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj client.Object, subResource client.Object, opts ...client.SubResourceCreateOption) error {
			return hook(c, "create", sub, obj, func() error { return c.SubResource(sub).Create(ctx, obj, subResource, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return hook(c, "update", sub, obj, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return hook(c, "patch", sub, obj, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	})
}
