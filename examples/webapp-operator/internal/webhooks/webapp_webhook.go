// Package webhooks holds the WebApp admission webhooks: a defaulting one
// (an image without a tag or digest gets ":latest", as a user would expect
// the registry to read it) and a validating one (rules the CRD's schema
// cannot say). They run only when the operator is started with
// --enable-webhooks; the manifests the API server needs are in
// webhooks/manifests.yaml.
package webhooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
)

// MaxReplicas is the most replicas a WebApp may ask for.
const MaxReplicas = 50

// Setup registers both webhooks with the manager's webhook server, on
// controller-runtime's paths (/mutate-demo-reconcile-conformance-dev-v1alpha1-webapp
// and /validate-...).
func Setup(mgr ctrl.Manager) error {
	log := mgr.GetLogger().WithName("webhook")
	return ctrl.NewWebhookManagedBy(mgr, &demov1.WebApp{}).
		WithDefaulter(Defaulter{Log: log}).
		WithValidator(Validator{Log: log}).
		Complete()
}

// Defaulter fills in what a user may leave out.
type Defaulter struct{ Log logr.Logger }

// Default gives an image without a tag or digest the tag "latest".
func (d Defaulter) Default(_ context.Context, app *demov1.WebApp) error {
	before := app.Spec.Image
	app.Spec.Image = DefaultImage(app.Spec.Image)
	d.Log.Info("defaulted", "webapp", app.Namespace+"/"+app.Name, "image", app.Spec.Image, "changed", before != app.Spec.Image)
	return nil
}

// DefaultImage is image with ":latest" when it names neither a tag nor a digest.
func DefaultImage(image string) string {
	if image == "" || strings.Contains(image, "@") {
		return image
	}
	last := image[strings.LastIndex(image, "/")+1:]
	if strings.Contains(last, ":") {
		return image
	}
	return image + ":latest"
}

// Validator refuses what the CRD's schema lets through.
type Validator struct{ Log logr.Logger }

// ValidateCreate checks a new WebApp.
func (v Validator) ValidateCreate(_ context.Context, app *demov1.WebApp) (admission.Warnings, error) {
	return nil, v.check("create", app)
}

// ValidateUpdate checks a changed WebApp.
func (v Validator) ValidateUpdate(_ context.Context, _, app *demov1.WebApp) (admission.Warnings, error) {
	return nil, v.check("update", app)
}

// ValidateDelete lets every deletion through.
func (Validator) ValidateDelete(context.Context, *demov1.WebApp) (admission.Warnings, error) {
	return nil, nil
}

func (v Validator) check(operation string, app *demov1.WebApp) error {
	err := Validate(app.Spec)
	v.Log.Info("validated", "operation", operation, "webapp", app.Namespace+"/"+app.Name, "allowed", err == nil)
	return err
}

// Validate is nil for a spec the operator accepts.
func Validate(spec demov1.WebAppSpec) error {
	if spec.Replicas > MaxReplicas {
		return fmt.Errorf("spec.replicas: %d is more than %d", spec.Replicas, MaxReplicas)
	}
	for i, arg := range spec.Args {
		if strings.TrimSpace(arg) == "" {
			return fmt.Errorf("spec.args[%d]: an empty argument", i)
		}
	}
	return nil
}
