package kubeclient

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Flags are kubectl's connection flags (--kubeconfig, --context,
// --cluster, --user, -n/--namespace, --server, --token, --as,
// --request-timeout and the rest), bound as kubectl binds them: from
// client-go's clientcmd, which cli-runtime's ConfigFlags wrap. That
// package is not linked because it registers every API group's types at
// start-up, a cost the KRM function would pay at every build.
type Flags struct {
	Kubeconfig string
	Overrides  clientcmd.ConfigOverrides
}

// Bind adds the flags to fs.
func (f *Flags) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use; by default $KUBECONFIG, else ~/.kube/config, else the pod's service account")
	clientcmd.BindOverrideFlags(&f.Overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))
}

// Namespace is the namespace the flags name, "" when -n was not given.
func (f *Flags) Namespace() string { return f.Overrides.Context.Namespace }

// Config finds the API server and the namespace as Config does, with the
// flags' overrides applied.
func (f *Flags) Config() (*rest.Config, string, error) {
	return load(f.Kubeconfig, &f.Overrides)
}

// Loader is the flags' kubeconfig, for reading its contexts (shell
// completion).
func (f *Flags) Loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &f.Overrides)
}

func load(kubeconfig string, overrides *clientcmd.ConfigOverrides) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	config, err := loader.ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return nil, "", fmt.Errorf("finding the API server: no kubeconfig (--kubeconfig, $%s, %s), and not in a pod", clientcmd.RecommendedConfigPathEnvVar, clientcmd.RecommendedHomeFile)
	case err != nil:
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	namespace, _, err := loader.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig's namespace: %w", err)
	}
	config.QPS, config.Burst = -1, 0
	return config, namespace, nil
}
