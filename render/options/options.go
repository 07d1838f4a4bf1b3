// Package options holds what a job renders with beyond its spec: the
// function config's choices (trainfn's TrainFn document), which a job's
// annotations override one by one. Upstream job APIs are accepted verbatim,
// so trainfn's own choices live beside the spec, never in it.
package options

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/kueue"
	"github.com/trainfn/trainfn/render/trainjob/runtimes"
)

// LaunchMode is how mpirun starts processes on the workers.
type LaunchMode string

const (
	// SSH: workers run sshd; the launcher logs in with the job's key.
	SSH LaunchMode = "SSH"
	// KubectlExec: mpirun's remote shell is kubectl exec, for images
	// without sshd, at the price of RBAC for the launcher.
	KubectlExec LaunchMode = "KubectlExec"
	// Rsh: workers run an rsh server that trusts any peer the job's
	// NetworkPolicy admits, its own pods; no key, no RBAC, no encryption.
	Rsh LaunchMode = "Rsh"
)

// LaunchModes are the launch modes trainfn renders, in the order messages
// list them.
var LaunchModes = []LaunchMode{SSH, KubectlExec, Rsh}

// Scheduler is a gang scheduler trainfn renders for.
type Scheduler string

const (
	NoGang           Scheduler = ""
	Volcano          Scheduler = "Volcano"
	SchedulerPlugins Scheduler = "SchedulerPlugins"
	Kueue            Scheduler = "Kueue"
	// Kubernetes is Kubernetes' own gang scheduling: kube-scheduler's
	// GangScheduling plugin and the scheduling.k8s.io PodGroup.
	Kubernetes Scheduler = "Kubernetes"
)

// Annotations on a job that override the function config for that job.
const (
	LaunchModeAnnotation    = "trainfn.dev/mpi-launch-mode"
	GangSchedulerAnnotation = "trainfn.dev/gang-scheduler"
	// ElasticWorkersAnnotation, "MIN:MAX", lets the job's worker count
	// change at run time within those bounds: a person, a script or a
	// HorizontalPodAutoscaler scales the workers' StatefulSet, and
	// trainfn's reconciler keeps it within them.
	ElasticWorkersAnnotation = handoff.ElasticWorkers
	// ProgressAnnotation, "true" or "false", turns progress reporting on
	// or off for the job, whatever the function config's progress says.
	ProgressAnnotation = handoff.Progress
)

// known are the annotations a job may carry.
var known = []string{ElasticWorkersAnnotation, GangSchedulerAnnotation, LaunchModeAnnotation, ProgressAnnotation}

// AnnotationPrefix marks trainfn's own annotations, which configure the
// render and are not passed on to what it renders.
const AnnotationPrefix = "trainfn.dev/"

// noGang is the annotation value that turns gang scheduling off for a job
// when the function config turns it on.
const noGang = "None"

// Options are a job's rendering choices. The zero value is trainfn's
// default: SSH, no gang scheduling.
type Options struct {
	MPI     MPI     `json:"mpi"`
	PyTorch PyTorch `json:"pytorch"`
	Gang    Gang    `json:"gangScheduling"`
	DI      DI      `json:"di"`
	// Progress gives every job's pods what they need to report their
	// training progress to trainfn's reconciler, as Kubeflow Trainer's
	// pods report it to Trainer (package render/progress).
	Progress bool `json:"progress"`
	// ProgressServer is the progress server's HOST:PORT.
	ProgressServer string `json:"progressServer"`
	// ElasticWorkers is nil for a job whose worker count is the rendered
	// one; it is set by the job's annotation alone.
	ElasticWorkers *handoff.Bounds `json:"-"`
	// Runtimes are the Kubeflow Trainer runtimes of the input, which its
	// TrainJobs resolve their runtimeRef against.
	Runtimes runtimes.Catalog `json:"-"`
}

// MPI are the choices for MPIJobs.
type MPI struct {
	LaunchMode LaunchMode `json:"launchMode"`
	// KubectlDeliveryImage copies kubectl into the launcher (KubectlExec);
	// empty when the launcher's image has kubectl.
	KubectlDeliveryImage string `json:"kubectlDeliveryImage"`
}

// PyTorch are the choices for PyTorchJobs.
type PyTorch struct {
	// ReplicaServices renders a Service for every worker, as
	// training-operator creates them; nil means true.
	ReplicaServices *bool `json:"replicaServices"`
}

// EveryReplicaServed tells whether every worker gets a Service of its name.
func (p PyTorch) EveryReplicaServed() bool { return p.ReplicaServices == nil || *p.ReplicaServices }

// Gang are the choices for gang scheduling.
type Gang struct {
	Scheduler     Scheduler `json:"scheduler"`
	SchedulerName string    `json:"schedulerName"`
	Queue         string    `json:"queue"`
	// KubernetesVersion is the cluster's minor version, for which the
	// Kubernetes scheduler's objects are rendered.
	KubernetesVersion string `json:"kubernetesVersion"`
	// QueueLabel is the job's own kueue.x-k8s.io/queue-name label, the
	// LocalQueue Kueue reads: it chose Kueue, and its queue wins.
	QueueLabel string `json:"-"`
}

// ResizesJobs tells whether workers whose count changes at run time must
// run as an Indexed Job rather than a StatefulSet: Kueue refuses to resize
// a StatefulSet other than to or from zero, and resizes a batch/v1 Job
// through workload slices (its ElasticJobsViaWorkloadSlices feature).
func (g Gang) ResizesJobs() bool { return g.Scheduler == Kueue }

// DI are the choices for DIJobs.
type DI struct {
	// ServerURL is where the workers reach the DI server: DI_SERVER_URL.
	ServerURL string `json:"serverURL"`
}

// Default is what a render without a function config uses.
var Default = Options{
	MPI: MPI{LaunchMode: SSH, KubectlDeliveryImage: DefaultKubectlDeliveryImage},
	DI:  DI{ServerURL: DefaultDIServerURL},

	ProgressServer: DefaultProgressServer,
}

// DefaultDIServerURL is the DI server of trainfn's reconciler chart
// installed as its README says: release trainfn-reconciler in the
// namespace trainfn-system.
const DefaultDIServerURL = "http://trainfn-reconciler-di-server.trainfn-system:8082"

// DefaultProgressServer is the progress server of trainfn's reconciler
// chart installed as its README says: the Service trainfn-reconciler in the
// namespace trainfn-system, on the port Kubeflow Trainer's status server
// listens on.
const DefaultProgressServer = "trainfn-reconciler.trainfn-system.svc:10443"

// DefaultKubectlDeliveryImage is mpi-operator's own kubectl delivery image,
// which KubectlExec jobs used under the operator.
const DefaultKubectlDeliveryImage = "mpioperator/kubectl-delivery:latest"

// ForJob applies a job's annotations and labels to the options. An
// annotation with a value trainfn does not know is an error at the
// annotation's path; so is Kueue's queue label on a job another gang
// scheduler's, at the label's.
func (o Options) ForJob(annotations, labels map[string]string) (Options, field.ErrorList) {
	var errs field.ErrorList
	at := field.NewPath("metadata", "annotations")
	if v, ok := annotations[LaunchModeAnnotation]; ok {
		if mode := LaunchMode(v); slices.Contains(LaunchModes, mode) {
			o.MPI.LaunchMode = mode
		} else {
			errs = append(errs, field.NotSupported(at.Key(LaunchModeAnnotation), v, LaunchModes))
		}
	}
	v, annotated := annotations[GangSchedulerAnnotation]
	if annotated {
		switch s := Scheduler(v); s {
		case Volcano, SchedulerPlugins, Kueue, Kubernetes:
			if o.Gang.Scheduler != s {
				// Another scheduler's name would not fit this one.
				o.Gang = Gang{Scheduler: s, Queue: o.Gang.Queue, KubernetesVersion: o.Gang.KubernetesVersion}
			}
		case noGang:
			o.Gang = Gang{}
		default:
			errs = append(errs, field.NotSupported(at.Key(GangSchedulerAnnotation), v,
				[]string{string(Volcano), string(SchedulerPlugins), string(Kueue), string(Kubernetes), noGang}))
			annotated = false
		}
	}
	if queue := labels[kueue.QueueLabel]; queue != "" {
		if err := o.Gang.queuedByLabel(queue, annotated); err != nil {
			errs = append(errs, err)
		}
	}
	if v, ok := annotations[ElasticWorkersAnnotation]; ok {
		if b, err := handoff.ParseBounds(v); err != nil {
			errs = append(errs, field.Invalid(at.Key(ElasticWorkersAnnotation), v, err.Error()))
		} else {
			o.ElasticWorkers = &b
		}
	}
	if v, ok := annotations[ProgressAnnotation]; ok {
		switch v {
		case "true", "false":
			o.Progress = v == "true"
		default:
			errs = append(errs, field.NotSupported(at.Key(ProgressAnnotation), v, []string{"true", "false"}))
		}
	}
	// A misspelt annotation would otherwise be ignored without a word.
	var unknown []string
	for k := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) && !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		errs = append(errs, field.Invalid(at.Key(k), k,
			"not an annotation trainfn knows: it reads "+strings.Join(known, ", ")))
	}
	return o, errs
}

// queuedByLabel applies Kueue's queue label on the job, which is how
// Kueue's docs have users queue an MPIJob, a PyTorchJob or a TrainJob: it
// chooses Kueue, and so one Workload for the job, with no other setting.
// A job that chose another gang scheduler, or none, is refused: Kueue
// would still read the label, and it could only mean a second gang.
func (g *Gang) queuedByLabel(queue string, annotated bool) *field.Error {
	at := field.NewPath("metadata", "labels").Key(kueue.QueueLabel)
	const queues = "queues the job with Kueue, as one Workload"
	switch {
	case annotated && g.Scheduler == NoGang:
		return field.Invalid(at, queue, fmt.Sprintf("%s, while the annotation %s: %s turns gang scheduling off for it: remove the label or the annotation",
			queues, GangSchedulerAnnotation, noGang))
	case annotated && g.Scheduler != Kueue:
		return field.Invalid(at, queue, fmt.Sprintf("%s, while the annotation %s: %s chooses another gang scheduler: a job has one; remove the label or the annotation",
			queues, GangSchedulerAnnotation, g.Scheduler))
	case !annotated && g.Scheduler != NoGang && g.Scheduler != Kueue:
		return field.Invalid(at, queue, fmt.Sprintf("%s, while gangScheduling.scheduler in trainfn's function config chooses %s: a job has one gang scheduler; "+
			"remove the label, or choose Kueue for this job with the annotation %s: %s", queues, g.Scheduler, GangSchedulerAnnotation, Kueue))
	}
	if g.Scheduler != Kueue {
		*g = Gang{Scheduler: Kueue, KubernetesVersion: g.KubernetesVersion}
	}
	g.QueueLabel = queue
	return nil
}
