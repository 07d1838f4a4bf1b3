package main

import (
	"errors"
	"os"

	"github.com/spf13/pflag"

	"github.com/trainfn/trainfn/reconciler"
)

// defaultProgressService is the chart's Service with the release
// trainfn-reconciler: the host trainfn renders into progress jobs' URLs.
const defaultProgressService = "trainfn-reconciler"

func progressFlags(f *pflag.FlagSet, p *reconciler.ProgressOptions) {
	p.Address, p.SecretName = ":10443", "trainfn-reconciler-progress-tls"
	f.StringVar(&p.Address, "progress-address", p.Address,
		`address serving Kubeflow Trainer's progress API over TLS, for jobs rendered with progress reporting; "0" turns it off`)
	f.StringVar(&p.SecretName, "progress-tls-secret", p.SecretName,
		"Secret holding the progress server's CA and serving certificate, made and renewed by the reconciler and shared by its replicas")
	f.StringVar(&p.SecretNamespace, "progress-tls-secret-namespace", "", "namespace of --progress-tls-secret; by default $POD_NAMESPACE")
	f.StringSliceVar(&p.DNSNames, "progress-dns-names", nil,
		"DNS names of the progress server's Service, which its certificate is for, comma-separated; by default those of "+
			defaultProgressService+" in the Secret's namespace")
}

// completeProgress fills the options the flags leave to the environment.
func completeProgress(p *reconciler.ProgressOptions) error {
	if !p.On() {
		return nil
	}
	if p.SecretNamespace == "" {
		p.SecretNamespace = os.Getenv("POD_NAMESPACE")
	}
	if p.SecretNamespace == "" {
		return errors.New(`--progress-tls-secret-namespace (or $POD_NAMESPACE) is required while --progress-address is not "0"`)
	}
	if p.SecretName == "" {
		return errors.New(`--progress-tls-secret must name a Secret while --progress-address is not "0"`)
	}
	if len(p.DNSNames) == 0 {
		p.DNSNames = serviceDNSNames(defaultProgressService, p.SecretNamespace)
	}
	return nil
}

// serviceDNSNames are the names a Service is known by inside the cluster.
func serviceDNSNames(service, namespace string) []string {
	return []string{service, service + "." + namespace, service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local"}
}
