package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	apppath "github.com/argoproj/argo-cd/v3/util/app/path"
	"github.com/argoproj/argo-cd/v3/util/cli"
	"github.com/argoproj/argo-cd/v3/util/git"
	grpcutil "github.com/argoproj/argo-cd/v3/util/grpc"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// generate renders an Application's source as Argo CD would before a sync.
// The manifests go to standard output as YAML (the repo-server hands the
// controller JSON; YAML reads better in a reviewed file). Standard error
// carries Argo CD's log and, on lines of their own, what the repo-server
// answers besides: "sourceType: ", "command: " (each command it ran), or
// "error: " and the error the Application would show.
func generate(args []string) int {
	flags := flag.NewFlagSet("generate", flag.ContinueOnError)
	repoRoot := flags.String("repo", "", "the checked-out repository the Application's repoURL names")
	appFile := flags.String("application", "", "the Application manifest")
	cmFile := flags.String("argocd-cm", "", "the argocd-cm ConfigMap as installed, labels included")
	// The commit the repo-server would have resolved targetRevision to; it
	// only reaches plugins and kustomize as ARGOCD_APP_REVISION.
	revision := flags.String("revision", "0123456789abcdef0123456789abcdef01234567", "the resolved commit")
	kubeVersion := flags.String("kube-version", "1.37.1", "the destination cluster's Kubernetes version")
	// The controller's default controller.repo.server.timeout.seconds.
	timeout := flags.Duration("timeout", 60*time.Second, "how long the controller waits for the repo-server")
	logLevel := flags.String("loglevel", "warn", "Argo CD's log level: debug, info, warn, error")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *repoRoot == "" || *appFile == "" || *cmFile == "" || flags.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: argocd-harness generate --repo DIR --application FILE --argocd-cm FILE")
		return 2
	}
	if _, err := log.ParseLevel(*logLevel); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// As Argo CD's commands set them: its exec tracing reads them too.
	cli.SetLogFormat("text")
	cli.SetLogLevel(*logLevel)

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	res, err := generateManifests(ctx, *repoRoot, *appFile, *cmFile, *revision, *kubeVersion)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %s\n", sanitize(*repoRoot, err))
		return 1
	}
	fmt.Fprintf(os.Stderr, "sourceType: %s\n", res.SourceType)
	for _, c := range res.Commands {
		fmt.Fprintf(os.Stderr, "command: %s\n", c)
	}
	for _, m := range res.Manifests {
		doc, err := yaml.JSONToYAML([]byte(m))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("---\n%s", doc)
	}
	return 0
}

// generateManifests builds the request the application controller sends
// (controller/state.go: the source, argocd-cm's kustomize, tracking and
// source-type settings) and answers it with the repo-server's own function.
func generateManifests(ctx context.Context, repoRoot, appFile, cmFile, revision, kubeVersion string) (*apiclient.ManifestResponse, error) {
	var app v1alpha1.Application
	if err := readStrict(appFile, &app); err != nil {
		return nil, err
	}
	var cm corev1.ConfigMap
	if err := readStrict(cmFile, &cm); err != nil {
		return nil, err
	}
	if cm.Name != "argocd-cm" || cm.Namespace == "" {
		return nil, fmt.Errorf("%s: want the argocd-cm ConfigMap with its namespace, got %s/%s", cmFile, cm.Namespace, cm.Name)
	}
	if app.Spec.HasMultipleSources() {
		return nil, errors.New("multi-source Applications are not supported here")
	}

	mgr := settings.NewSettingsManager(ctx, fake.NewClientset(&cm), cm.Namespace)
	kustomizeOptions, err := mgr.GetKustomizeSettings()
	if err != nil {
		return nil, err
	}
	appLabelKey, err := mgr.GetAppInstanceLabelKey()
	if err != nil {
		return nil, err
	}
	trackingMethod, err := mgr.GetTrackingMethod()
	if err != nil {
		return nil, err
	}
	installationID, err := mgr.GetInstallationID()
	if err != nil {
		return nil, err
	}
	enabledSourceTypes, err := mgr.GetEnabledSourceTypes()
	if err != nil {
		return nil, err
	}

	root, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, err
	}
	source := app.Spec.GetSource()
	appPath, err := apppath.Path(root, source.Path)
	if err != nil {
		return nil, err
	}
	q := &apiclient.ManifestRequest{
		Repo:               &v1alpha1.Repository{Repo: source.RepoURL},
		Revision:           source.TargetRevision,
		AppLabelKey:        appLabelKey,
		AppName:            app.InstanceName(cm.Namespace),
		Namespace:          app.Spec.Destination.Namespace,
		ApplicationSource:  &source,
		KustomizeOptions:   kustomizeOptions,
		KubeVersion:        kubeVersion,
		TrackingMethod:     trackingMethod,
		EnabledSourceTypes: enabledSourceTypes,
		ProjectName:        app.Spec.Project,
		InstallationID:     installationID,
	}

	helmPaths, err := os.MkdirTemp("", "argocd-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(helmPaths)
	// The repo-server unlocks the checkout once the tar stream is sent; the
	// channel must take that signal without a reader.
	tarDone := make(chan bool, 1)
	// The repo-server's default --max-combined-directory-manifests-size.
	maxCombined := resource.MustParse("10M")
	return repository.GenerateManifests(ctx, appPath, root, revision, q, false, git.NoopCredsStore{}, maxCombined,
		utilio.NewRandomizedTempPaths(helmPaths), repository.WithCMPTarDoneChannel(tarDone))
}

// sanitize words err as the repo-server's gRPC layer does before the error
// reaches the controller and the UI: the checkout's own folder, random in a
// real repo-server (rootDir/<uuid>), is replaced by a placeholder.
func sanitize(repoRoot string, err error) string {
	root, absErr := filepath.Abs(repoRoot)
	if absErr != nil {
		return err.Error()
	}
	s := grpcutil.NewSanitizer()
	// The expression of repository.getRepoSanitizerRegex, unexported.
	s.AddRegexReplacement(regexp.MustCompile(regexp.QuoteMeta(filepath.Dir(root))+`/[^ /]*`), "<path to cached source>")
	return s.Replace(err.Error())
}

// readStrict reads one YAML document into v, refusing fields v does not
// have: a typo in an example's Application or argocd-cm must fail here, not
// be silently ignored as it would be by a lenient decoder.
func readStrict(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
