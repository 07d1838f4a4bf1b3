package pytorchjob

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/waitfor"
	"github.com/trainfn/trainfn/render/workload"
)

// jobBuilder builds the renderer's input the way a test reads best.
type jobBuilder struct{ job Job }

// checkAndBuild checks and builds a job as the pipeline does, without the
// passes every kind shares.
func checkAndBuild(job *Job) (result.Output, field.ErrorList) {
	if errs := job.Check(); len(errs) > 0 {
		return result.Output{}, errs
	}
	out, _, errs := job.Build()
	return out, errs
}

func newJob(name string) *jobBuilder {
	return &jobBuilder{job: Job{
		Owner:           workload.Owner{Name: name},
		NprocPerNode:    "auto",
		RunPolicy:       workload.RunPolicy{CleanPodPolicy: "None"},
		ReplicaServices: true,
	}}
}

func replica(n int32, role string) *workload.Replica {
	return &workload.Replica{Replicas: n, RestartPolicy: "OnFailure",
		Template: yaml.MustParse(`{spec: {containers: [{name: pytorch, image: train:1}]}}`),
		Path:     field.NewPath("spec", "pytorchReplicaSpecs", role, "template")}
}

func (b *jobBuilder) master() *jobBuilder {
	b.job.Master = replica(1, "Master")
	return b
}

func (b *jobBuilder) workers(n int32) *jobBuilder {
	b.job.Worker = replica(n, "Worker")
	return b
}

func (b *jobBuilder) nproc(n string) *jobBuilder {
	b.job.NprocPerNode, b.job.NprocPerNodeWritten = n, true
	return b
}

func (b *jobBuilder) elastic(minR, maxR int32) *jobBuilder {
	b.job.Elastic = &ElasticPolicy{MinReplicas: minR, MaxReplicas: maxR, RDZVBackend: "c10d"}
	return b
}

// render renders the job and reads back its Jobs by name.
func (b *jobBuilder) render(t *testing.T) map[string]*batchv1.Job {
	t.Helper()
	out, errs := checkAndBuild(&b.job)
	require.Empty(t, errs)
	jobs := map[string]*batchv1.Job{}
	for _, o := range out.Objects {
		if o.GetKind() != "Job" {
			continue
		}
		s, err := o.String()
		require.NoError(t, err)
		var job batchv1.Job
		require.NoError(t, sigsyaml.UnmarshalStrict([]byte(s), &job))
		jobs[job.Name] = &job
	}
	return jobs
}

// env is the environment of a Job's pytorch container, by name.
func env(t *testing.T, job *batchv1.Job) map[string]string {
	t.Helper()
	require.NotNil(t, job)
	vars := map[string]string{}
	for _, c := range job.Spec.Template.Spec.Containers {
		if c.Name == pytorchContainer {
			for _, e := range c.Env {
				_, dup := vars[e.Name]
				require.False(t, dup, "%s is set twice", e.Name)
				vars[e.Name] = e.Value
			}
		}
	}
	return vars
}

func TestStaticRanksFollowTheMaster(t *testing.T) {
	jobs := newJob("mnist").master().workers(3).nproc("2").render(t)
	require.Len(t, jobs, 4, "the master's Job and one per worker")
	for name, rank := range map[string]string{"mnist-master": "0", "mnist-worker-0": "1", "mnist-worker-1": "2", "mnist-worker-2": "3"} {
		vars := env(t, jobs[name])
		assert.Equal(t, rank, vars["RANK"], name)
		assert.Equal(t, rank, vars["PET_NODE_RANK"], name)
		assert.Equal(t, "8", vars["WORLD_SIZE"], "4 pods of 2 processes")
		assert.Equal(t, "4", vars["PET_NNODES"])
		assert.Equal(t, "2", vars["PET_NPROC_PER_NODE"])
		assert.Equal(t, "mnist-master-0", vars["MASTER_ADDR"])
		assert.Equal(t, "23456", vars["MASTER_PORT"])
		assert.Equal(t, vars["MASTER_ADDR"], vars["PET_MASTER_ADDR"])
		assert.Equal(t, vars["MASTER_PORT"], vars["PET_MASTER_PORT"])
		assert.Equal(t, "0", vars["PYTHONUNBUFFERED"])
	}
	assert.Equal(t, "mnist-worker-2", jobs["mnist-worker-2"].Spec.Template.Spec.Hostname)
	assert.Equal(t, "mnist", jobs["mnist-worker-2"].Spec.Template.Spec.Subdomain)
	assert.Equal(t, "wait-for-master", jobs["mnist-worker-0"].Spec.Template.Spec.InitContainers[0].Name)
	assert.Empty(t, jobs["mnist-master"].Spec.Template.Spec.InitContainers)
}

func TestWorldSizeCountsPodsUnlessProcessesAreNumbered(t *testing.T) {
	for nproc, want := range map[string]string{"auto": "3", "gpu": "3", "4": "12"} {
		vars := env(t, newJob("j").master().workers(2).nproc(nproc).render(t)["j-master"])
		assert.Equal(t, want, vars["WORLD_SIZE"], nproc)
	}
}

func TestWorkersOnlyGetNodeCountAndProcesses(t *testing.T) {
	jobs := newJob("j").workers(3).render(t)
	require.Len(t, jobs, 1)
	job := jobs["j-worker"]
	assert.Equal(t, ptr.To(batchv1.IndexedCompletion), job.Spec.CompletionMode)
	assert.Equal(t, ptr.To[int32](3), job.Spec.Completions)
	assert.Nil(t, job.Spec.SuccessPolicy, "a static job succeeds when every worker has")
	assert.Equal(t, map[string]string{"PYTHONUNBUFFERED": "0", "PET_NNODES": "3", "PET_NPROC_PER_NODE": "auto"}, env(t, job))
	assert.Empty(t, job.Spec.Template.Spec.InitContainers)
}

func TestElasticEnvironment(t *testing.T) {
	b := newJob("e").workers(2).elastic(1, 3)
	id, port := "run-1", int32(29400)
	b.job.Elastic.RDZVID, b.job.Elastic.RDZVPort = &id, &port
	b.job.Elastic.RDZVConf = []RDZVConf{{"join_timeout", "60"}, {"last_call_timeout", "5"}}
	b.job.Elastic.Standalone = true
	b.job.Elastic.MaxRestarts = ptr.To[int32](7)
	job := b.render(t)["e-worker"]
	assert.Equal(t, map[string]string{
		"PYTHONUNBUFFERED":  "0",
		"PET_RDZV_ENDPOINT": "e-worker-0:29400",
		"PET_RDZV_BACKEND":  "c10d",
		"PET_NNODES":        "1:3",
		"PET_MAX_RESTARTS":  "7",
		"PET_RDZV_ID":       "run-1",
		"PET_RDZV_CONF":     "join_timeout=60,last_call_timeout=5",
		"PET_STANDALONE":    "1",
	}, env(t, job), "no PET_NPROC_PER_NODE unless written, as upstream; PET_STANDALONE an integer, as torchrun reads it")
	assert.Equal(t, []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}, job.Spec.SuccessPolicy.Rules)
	assert.Equal(t, "wait-for-rendezvous", job.Spec.Template.Spec.InitContainers[0].Name)
	assert.Equal(t, "e-worker-0", job.Spec.Template.Spec.InitContainers[0].Command[4])
}

func TestElasticRendezvousDefaultsToWorkerZerosPort(t *testing.T) {
	b := newJob("e").workers(2).elastic(2, 2)
	b.job.Worker.Template = yaml.MustParse(`{spec: {containers: [{name: pytorch, image: t:1, ports: [{name: pytorchjob-port, containerPort: 30000}]}]}}`)
	assert.Equal(t, "e-worker-0:30000", env(t, b.render(t)["e-worker"])["PET_RDZV_ENDPOINT"])
}

// services are the headless Services of a job's output, by name, with
// their selectors.
func services(t *testing.T, job *Job) map[string]map[string]string {
	t.Helper()
	out, errs := checkAndBuild(job)
	require.Empty(t, errs)
	services := map[string]map[string]string{}
	for _, o := range out.Objects {
		if o.GetKind() == "Service" {
			s, err := o.String()
			require.NoError(t, err)
			var svc corev1.Service
			require.NoError(t, sigsyaml.UnmarshalStrict([]byte(s), &svc))
			assert.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP)
			services[svc.Name] = svc.Spec.Selector
		}
	}
	return services
}

// As training-operator does, every replica has a Service of its own name,
// <job>-<type>-<i>, which selects its one pod however the workers run.
func TestEveryReplicaHasAService(t *testing.T) {
	scaled := newJob("s").workers(2).elastic(1, 4)
	scaled.job.Scaling = &handoff.Bounds{Min: 1, Max: 4}
	for name, tt := range map[string]struct {
		job *Job
		// key is the label that tells worker i's pod apart, and
		// value its value for worker 1.
		key, value string
		names      []string
	}{
		"static with a master": {&newJob("s").master().workers(2).job, handoff.ReplicaIndexLabel, "1",
			[]string{"s", "s-master-0", "s-worker-0", "s-worker-1"}},
		"static without a master": {&newJob("s").workers(2).job, batchv1.JobCompletionIndexAnnotation, "1",
			[]string{"s", "s-worker-0", "s-worker-1"}},
		"elastic with a master": {&newJob("s").master().workers(2).elastic(1, 2).job, batchv1.JobCompletionIndexAnnotation, "1",
			[]string{"s", "s-master-0", "s-worker-0", "s-worker-1"}},
		"scaled at run time, up to its most": {&scaled.job, appsv1.StatefulSetPodNameLabel, "s-worker-1",
			[]string{"s", "s-worker-0", "s-worker-1", "s-worker-2", "s-worker-3"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := services(t, tt.job)
			assert.ElementsMatch(t, tt.names, slices.Collect(maps.Keys(got)))
			assert.Equal(t, tt.value, got["s-worker-1"][tt.key])
			assert.Equal(t, "worker", got["s-worker-1"]["training.kubeflow.org/job-role"])
			if _, ok := got["s-master-0"]; ok {
				assert.Equal(t, "master", got["s-master-0"]["training.kubeflow.org/job-role"])
			}
			assert.NotContains(t, got["s"], "training.kubeflow.org/job-role", "the job's Service names every pod")
		})
	}
}

// Without a Service per worker, the job keeps the names its pods need:
// its own, the master's, and an elastic job's default rendezvous.
func TestReplicaServicesOff(t *testing.T) {
	static := newJob("s").master().workers(3)
	static.job.ReplicaServices = false
	assert.ElementsMatch(t, []string{"s", "s-master-0"}, slices.Collect(maps.Keys(services(t, &static.job))))
	elastic := newJob("s").workers(3).elastic(1, 3)
	elastic.job.ReplicaServices = false
	assert.ElementsMatch(t, []string{"s", "s-worker-0"}, slices.Collect(maps.Keys(services(t, &elastic.job))))
}

func TestExitCodeFailsTheJobOnProgramErrors(t *testing.T) {
	b := newJob("j").workers(1)
	b.job.Worker.RestartPolicy = "ExitCode"
	job := b.render(t)["j-worker"]
	assert.Equal(t, corev1.RestartPolicyNever, job.Spec.Template.Spec.RestartPolicy)
	rules := job.Spec.PodFailurePolicy.Rules
	require.Len(t, rules, 2)
	assert.Equal(t, batchv1.PodFailurePolicyActionFailJob, rules[0].Action)
	codes := rules[0].OnExitCodes.Values
	assert.Equal(t, []int32{1, 127}, []int32{codes[0], codes[len(codes)-1]})
	assert.Len(t, codes, 127)
}

func TestBoundsAsUpstreamDefaultsThem(t *testing.T) {
	two, five := ptr.To[int32](2), ptr.To[int32](5)
	for _, c := range []struct {
		minR, maxR *int32
		want       [2]int32
	}{
		{two, five, [2]int32{2, 5}},
		{nil, five, [2]int32{5, 5}},
		{two, nil, [2]int32{2, 2}},
		{nil, nil, [2]int32{3, 3}},
	} {
		lo, hi := bounds(c.minR, c.maxR, 3)
		assert.Equal(t, c.want, [2]int32{lo, hi})
	}
}

// The wait script runs under a real sh: it returns once the host resolves,
// and keeps waiting while it does not.
func TestWaitForHostScript(t *testing.T) {
	run := func(host string, within time.Duration) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", waitfor.HostScript, "wait-for-master", host)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	out, err := run("localhost", 10*time.Second)
	require.NoError(t, err, out)
	assert.Empty(t, out)

	// A pod whose own name does not resolve yet does not wait for itself.
	// Setting a hostname takes a UTS namespace, hence root.
	if os.Geteuid() == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		self := "worker-0.no-such-host.invalid"
		cmd := exec.CommandContext(ctx, "unshare", "--uts", "/bin/sh", "-c", `hostname "$0" && exec /bin/sh -c "$1" wait-for "$0"`, self, waitfor.HostScript)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}

	out, err = run("no-such-host.invalid", 3*time.Second)
	require.Error(t, err, "gave up or passed instead of waiting")
	assert.Contains(t, out, "waiting for no-such-host.invalid to resolve")
}

func TestElasticKeepsAWrittenNprocPerNode(t *testing.T) {
	vars := env(t, newJob("e").workers(2).elastic(1, 2).nproc("4").render(t)["e-worker"])
	assert.Equal(t, "4", vars["PET_NPROC_PER_NODE"])
}

func TestElasticWarnsWhenStartingOutsideItsBounds(t *testing.T) {
	out, errs := checkAndBuild(&newJob("e").workers(5).elastic(1, 3).job)
	require.Empty(t, errs)
	require.Len(t, out.Warnings, 1)
	assert.Equal(t, "spec.pytorchReplicaSpecs.Worker.replicas", out.Warnings[0].Field.String())
}

// torchrun's --standalone meets on the pod's own localhost: a job that
// may run more than one pod is told each trains alone, one that needs two
// is refused.
func TestStandalone(t *testing.T) {
	for _, tc := range []struct {
		workers, min, max int32
		warned, refused   bool
	}{
		{1, 1, 1, false, false},
		{1, 1, 3, true, false},
		{2, 1, 2, true, false},
		{2, 2, 2, false, true},
	} {
		b := newJob("e").workers(tc.workers).elastic(tc.min, tc.max)
		b.job.Elastic.Standalone = true
		out, errs := checkAndBuild(&b.job)
		at := "spec.elasticPolicy.standalone"
		if tc.refused {
			require.Len(t, errs, 1, "%+v", tc)
			assert.Equal(t, at, errs[0].Field)
			continue
		}
		require.Empty(t, errs, "%+v", tc)
		warned := slices.ContainsFunc(out.Warnings, func(w result.Warning) bool { return w.Field.String() == at })
		assert.Equal(t, tc.warned, warned, "%+v", tc)
	}
}

func TestTemplateMayNotTakeTheWaitContainersName(t *testing.T) {
	b := newJob("j").master().workers(1)
	b.job.Worker.Template = yaml.MustParse(`{spec: {initContainers: [{name: wait-for-master, image: x:1}], containers: [{name: pytorch, image: t:1}]}}`)
	out, errs := checkAndBuild(&b.job)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.pytorchReplicaSpecs.Worker.template.spec.initContainers[0].name", errs[0].Field)
	assert.Empty(t, out.Objects, "nothing half rendered")
}

func TestUncheckedInputIsAnErrorNotAPanic(t *testing.T) {
	b := newJob("j").workers(1)
	b.job.Worker.Template = yaml.MustParse(`{spec: {containers: [{name: trainer, image: t:1}]}}`)
	_, errs := checkAndBuild(&b.job)
	require.Len(t, errs, 1)
	_, errs = checkAndBuild(&newJob("e").elastic(1, 2).job)
	require.Len(t, errs, 1)
}

func TestTrainingOperatorLeavesJobsToKubernetes(t *testing.T) {
	spec := workload.RunPolicySpec{CleanPodPolicy: "None", ManagedBy: trainingOperator}
	assert.Empty(t, spec.Policy(trainingOperator).ManagedBy)
	spec.ManagedBy = "kueue.x-k8s.io/multikueue"
	assert.Equal(t, "kueue.x-k8s.io/multikueue", spec.Policy(trainingOperator).ManagedBy)
}

// A pod's name given as its address resolves nowhere under trainfn: the
// render says which name does.
func TestPodNameAsAnAddressWarns(t *testing.T) {
	const template = `{spec: {containers: [{name: pytorch, image: train:1,
  env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}],
  command: [bash, -c, "echo $POD_NAME; torchrun --local_addr=$POD_NAME train.py"]}]}}`
	for name, tt := range map[string]struct {
		job  *jobBuilder
		want []string
	}{
		"Indexed workers":               {newJob("j").workers(2).elastic(1, 2), []string{"j-worker-$JOB_COMPLETION_INDEX"}},
		"a master and a Job per worker": {newJob("j").master().workers(2), []string{"j-master-0", "j-worker-$((RANK - 1))"}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []*workload.Replica{tt.job.job.Master, tt.job.job.Worker} {
				if r != nil {
					r.Template = yaml.MustParse(template)
				}
			}
			out, errs := checkAndBuild(&tt.job.job)
			require.Empty(t, errs)
			var got []string
			for _, w := range out.Warnings {
				if strings.Contains(w.Message, "POD_NAME") {
					assert.Contains(t, w.Message, "POD_NAME is the pod's name (metadata.name), given as an address to --local_addr")
					got = append(got, w.Message[strings.LastIndex(w.Message, "hostname is the node's, ")+len("hostname is the node's, "):])
				}
			}
			assert.Equal(t, tt.want, got, "one warning per template, for the address alone, not the echo")
		})
	}
	scaled := newJob("j").workers(2).elastic(1, 3)
	scaled.job.Scaling = &handoff.Bounds{Min: 1, Max: 3}
	scaled.job.Worker.Template = yaml.MustParse(template)
	out, errs := checkAndBuild(&scaled.job)
	require.Empty(t, errs)
	for _, w := range out.Warnings {
		assert.NotContains(t, w.Message, "POD_NAME", "a StatefulSet's pod is named as its host")
	}
}

// An etcd rendezvous needs an etcd server, which no one runs at the
// default endpoint, worker 0.
func TestEtcdRendezvousWithoutAHostWarns(t *testing.T) {
	for _, backend := range []string{"etcd", "etcd-v2"} {
		b := newJob("j").workers(2).elastic(1, 2)
		b.job.Elastic.RDZVBackend = backend
		out, errs := checkAndBuild(&b.job)
		require.Empty(t, errs)
		var messages []string
		for _, w := range out.Warnings {
			messages = append(messages, w.Field.String()+": "+w.Message)
		}
		assert.Contains(t, messages, "spec.elasticPolicy.rdzvBackend: the "+backend+" rendezvous meets in an etcd server, and without rdzvHost it is sought at j-worker-0, "+
			"as training-operator set it, where no etcd runs: set rdzvHost and rdzvPort to your etcd's Service, or use rdzvBackend c10d, which worker 0's torchrun serves itself")

		host := "etcd"
		b.job.Elastic.RDZVHost = &host
		out, _ = checkAndBuild(&b.job)
		for _, w := range out.Warnings {
			assert.NotContains(t, w.Message, "etcd server")
		}
	}
}
