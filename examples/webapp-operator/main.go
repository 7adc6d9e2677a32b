// Command webapp-operator runs the WebApp controller out of cluster against
// the API server of a kubeconfig (--kubeconfig or KUBECONFIG). It is the
// example operator of reconcile-conformance: correct by default, with one
// seeded mistake when --bug or WEBAPP_BUG names one. With --enable-webhooks
// (or ENABLE_WEBHOOKS=true) it also serves its defaulting and validating
// admission webhooks, as a kubebuilder operator does.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"reconcile-conformance.dev/examples/webapp-operator/internal/writehook"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	demov1 "reconcile-conformance.dev/examples/webapp-operator/api/v1alpha1"
	"reconcile-conformance.dev/examples/webapp-operator/internal/controller"
	"reconcile-conformance.dev/examples/webapp-operator/internal/webhooks"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "webapp-operator:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		leaderElect     bool
		leaderNamespace string
		metricsAddress  string
		probeAddress    string
		watchNamespace  string
		bugFlag         string
		logWrites       bool
		enableWebhooks  bool
		webhookPort     int
		webhookCertPath string
	)
	// --kubeconfig is registered by controller-runtime's config package.
	flag.BoolVar(&leaderElect, "leader-elect", false, "use a Lease so only one instance reconciles")
	flag.StringVar(&leaderNamespace, "leader-election-namespace", "", "namespace of the Lease (default: --watch-namespace, else default)")
	flag.StringVar(&metricsAddress, "metrics-bind-address", "0", `metrics address, e.g. ":8080"; "0" disables`)
	flag.StringVar(&probeAddress, "health-probe-bind-address", "0", `health probe address, e.g. ":8081"; "0" disables`)
	flag.StringVar(&watchNamespace, "watch-namespace", "", "reconcile only this namespace (default: all)")
	flag.StringVar(&bugFlag, "bug", os.Getenv("WEBAPP_BUG"), "seeded mistake (or variant) to run with (default $WEBAPP_BUG; empty: the correct operator)")
	flag.BoolVar(&logWrites, "log-writes", true, "log every write request with its outcome")
	flag.BoolVar(&enableWebhooks, "enable-webhooks", os.Getenv("ENABLE_WEBHOOKS") == "true", "serve the admission webhooks (default: $ENABLE_WEBHOOKS is \"true\")")
	flag.IntVar(&webhookPort, "webhook-port", webhook.DefaultPort, "port of the webhook server")
	flag.StringVar(&webhookCertPath, "webhook-cert-path", "", "directory of the webhook server's tls.crt and tls.key (default: controller-runtime's, under $TMPDIR)")
	zapOptions := zap.Options{Development: true}
	zapOptions.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOptions)))
	logger := ctrl.Log.WithName("webapp-operator")

	bug, err := controller.ParseBug(bugFlag)
	if err != nil {
		return fmt.Errorf("--bug: %w", err)
	}
	switch {
	case slices.Contains(controller.Variants, bug):
		logger.Info("running a variant of the reference behaviour", "variant", bug)
	case bug != controller.None:
		logger.Info("running with a seeded bug", "bug", bug)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := demov1.AddToScheme(scheme); err != nil {
		return err
	}

	config, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	options := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddress},
		HealthProbeBindAddress: probeAddress,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "webapp-operator.demo.reconcile-conformance.dev",
		// Out of cluster there is no service-account namespace to default to.
		LeaderElectionNamespace: firstNonEmpty(leaderNamespace, watchNamespace, "default"),
	}
	if enableWebhooks {
		options.WebhookServer = webhook.NewServer(webhook.Options{Port: webhookPort, CertDir: webhookCertPath})
	}
	if watchNamespace != "" {
		options.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{watchNamespace: {}}}
	}
	if logWrites {
		options.NewClient = func(config *rest.Config, options client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(config, options)
			if err != nil {
				return nil, err
			}
			return writehook.Wrap(c, writeLogger(logger.WithName("write"))), nil
		}
	}
	mgr, err := ctrl.NewManager(config, options)
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if probeAddress != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	reconciler := &controller.Reconciler{
		Client:    client.WithFieldOwner(mgr.GetClient(), "webapp-operator"),
		APIReader: mgr.GetAPIReader(),
		Scheme:    scheme,
		Clock:     clock.RealClock{},
		Bug:       bug,
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	if bug == controller.LeaderConfigMap {
		// The variant: a leader record of its own in the namespace default, beside the controller.
		if err := controller.AddLeaderRecord(mgr, reconciler.Client, watchNamespace); err != nil {
			return fmt.Errorf("leader record: %w", err)
		}
	}
	if enableWebhooks {
		if err := webhooks.Setup(mgr); err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
	}
	logger.Info("starting", "watchNamespace", watchNamespace, "leaderElection", leaderElect, "webhooks", enableWebhooks)
	return mgr.Start(ctrl.SetupSignalHandler())
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
