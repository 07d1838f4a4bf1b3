//go:build e2e

package reconcile

import (
	"strings"
	"text/template"
)

// mpiJob is an MPIJob as users write it for mpi-operator's v2beta1 API:
// elastic when it has bounds (horovodrun's --min-np and --max-np), static
// otherwise.
type mpiJob struct {
	Name           string
	Elastic        string // "MIN:MAX", or empty
	Workers, Slots int
	CleanPodPolicy string
	LauncherWorks  bool // runLauncherAsWorker
}

var mpiJobTemplate = template.Must(template.New("").Parse(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: {{.Name}}
{{- with .Elastic}}
  annotations:
    trainfn.dev/elastic-workers: "{{.}}"
{{- end}}
spec:
  slotsPerWorker: {{.Slots}}
  runLauncherAsWorker: {{.LauncherWorks}}
  runPolicy:
    cleanPodPolicy: {{.CleanPodPolicy}}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: horovod/horovod:0.28.1
            command: [horovodrun, --host-discovery-script, /etc/mpi/discover_hosts.sh, python, train.py]
    Worker:
      replicas: {{.Workers}}
      template:
        spec:
          containers:
          - name: worker
            image: horovod/horovod:0.28.1
`))

func (j mpiJob) String() string {
	var b strings.Builder
	if err := mpiJobTemplate.Execute(&b, j); err != nil {
		panic(err)
	}
	return b.String()
}

// elasticPyTorchJob is testdata/pytorch-elastic-scaled's job: torchrun
// agents that leave together when training is done.
func elasticPyTorchJob(name string) string {
	return strings.ReplaceAll(`apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: NAME
  annotations:
    trainfn.dev/elastic-workers: "1:2"
spec:
  elasticPolicy:
    rdzvBackend: c10d
    minReplicas: 1
    maxReplicas: 2
    maxRestarts: 100
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: kubeflow/pytorch-elastic-example-echo:latest
            command: [python, -m, torch.distributed.run, --rdzv_backend=c10d, ./echo.py]
`, "NAME", name)
}
