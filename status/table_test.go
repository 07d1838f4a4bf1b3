package status_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/internal/fixture"
	"github.com/trainfn/trainfn/status/output"
	"github.com/trainfn/trainfn/status/phase"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden; review the diff before committing it")

// golden compares got with testdata/name, or with -update writes it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./status/ -update writes it")
	assert.Equal(t, string(want), string(got), "%s (go test ./status/ -update rewrites it: review the diff)", path)
}

// showcase is a job of each kind, in each state an on-call engineer meets,
// two hours into the first one.
func showcase() []status.Job {
	of := func(namespace, name, kind string, objs phase.Objects) status.Job {
		return status.JobOf(namespace, name, fixture.OfKind(kind, objs))
	}
	report := func(percent, remaining int32) string {
		s := status.TrainerStatus{ProgressPercentage: ptr.To(percent), EstimatedRemainingSeconds: ptr.To(remaining),
			Metrics: []status.Metric{{Name: "loss", Value: "0.23"}, {Name: "accuracy", Value: "0.91"}}, LastUpdatedTime: fixture.At(58)}
		data, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		return string(data)
	}
	ready := func(m int) []fixture.PodState {
		return []fixture.PodState{fixture.RunningReady, fixture.StartedAt(fixture.At(m - 1)), fixture.ReadySince(fixture.At(m))}
	}

	// A running MPIJob that reports its progress.
	launcher := fixture.IndexedJob("pi-launcher", handoff.RoleLauncher, 1, handoff.TrainerStatus, report(45, 795))
	workers := fixture.IndexedJob("pi-worker", handoff.RoleWorker, 2, handoff.EndsWith, handoff.EndsWithJob("pi-launcher"))
	pi := of("research", "pi", "MPIJob", fixture.Objects(fixture.Jobs(launcher, workers), nil,
		fixture.JobPods(&launcher, 1, ready(6)...), fixture.JobPods(&workers, 2, ready(4)...)))

	// A PyTorchJob whose worker ran out of memory and restarts.
	master := fixture.With(fixture.IndexedJob("bert-master", handoff.RoleMaster, 1), fixture.CreatedAt(fixture.At(30)))
	bertWorkers := fixture.With(fixture.IndexedJob("bert-worker", handoff.RoleWorker, 2, handoff.EndsWith, handoff.EndsWithJob("bert-master")), fixture.CreatedAt(fixture.At(30)))
	bert := of("research", "bert", "PyTorchJob", fixture.Objects(fixture.Jobs(master, bertWorkers), nil,
		fixture.JobPods(&master, 1, ready(33)...), fixture.Pods(fixture.JobPod(&bertWorkers, 0, ready(33)...),
			fixture.JobPod(&bertWorkers, 1, fixture.RestartedAfter(137, "OOMKilled", fixture.At(95)), fixture.RunningNotReady, fixture.StartedAt(fixture.At(31)), fixture.ReadySince(fixture.At(95))))))

	// A PyTorchJob whose master failed, past its backoff limit.
	resnetMaster := fixture.With(fixture.IndexedJob("resnet-master", handoff.RoleMaster, 1, handoff.TrainerStatus, report(62, 1800)),
		failedAt(80, "BackoffLimitExceeded", "Job has reached the specified backoff limit"))
	resnetWorkers := fixture.IndexedJob("resnet-worker", handoff.RoleWorker, 1, handoff.EndsWith, handoff.EndsWithJob("resnet-master"))
	resnet := of("research", "resnet", "PyTorchJob", fixture.Objects(fixture.Jobs(resnetMaster, resnetWorkers), nil,
		fixture.JobPods(&resnetMaster, 1, fixture.Failed, fixture.StartedAt(fixture.At(2)), fixture.FinishedAt(fixture.At(79), 1, "Error")), fixture.JobPods(&resnetWorkers, 1, ready(3)...)))

	// A preemptible DIJob waiting for the allocator.
	set := fixture.StatefulSet("dqn-worker", handoff.RoleWorker, ptr.To[int32](2),
		handoff.DIJobGeneration, "1", handoff.FirstRank, "0", handoff.ElasticWorkers, "1:4", handoff.Workers, "2", handoff.ScaledFrom, "2")
	set.CreationTimestamp = fixture.At(110)
	dqn := of("team-a", "dqn", "DIJob", fixture.Objects(nil, fixture.Sets(set), fixture.SetPods(&set, 2, fixture.Gated)))

	// A TrainJob complete, resumed once.
	node := fixture.With(fixture.IndexedJob("llm-node-0", "node", 2, handoff.TrainerStatus, report(100, 0)), resumed(12), fixture.CompletedAt(fixture.At(70)),
		func(j *batchv1.Job) { j.Labels["jobset.sigs.k8s.io/replicatedjob-name"] = "node" })
	llm := of("team-a", "llm", "TrainJob", fixture.Objects(fixture.Jobs(node), nil, fixture.JobPods(&node, 2, fixture.Succeeded, fixture.StartedAt(fixture.At(13)), fixture.FinishedAt(fixture.At(70), 0, ""))))

	// An MPIJob a queue holds.
	sweepLauncher := fixture.With(fixture.IndexedJob("sweep-launcher", handoff.RoleLauncher, 1), suspended(119), fixture.CreatedAt(fixture.At(119)))
	sweepWorkers := fixture.With(fixture.IndexedJob("sweep-worker", handoff.RoleWorker, 8, handoff.EndsWith, handoff.EndsWithJob("sweep-launcher")), suspended(119), fixture.CreatedAt(fixture.At(119)))
	sweep := of("team-b", "sweep", "MPIJob", fixture.Objects(fixture.Jobs(sweepLauncher, sweepWorkers), nil))

	return []status.Job{bert, pi, resnet, dqn, llm, sweep}
}

// now is two hours into the showcase.
var now = fixture.T0.Add(2 * time.Hour)

func TestTableGolden(t *testing.T) {
	jobs := showcase()
	for name, opts := range map[string]printers.PrintOptions{
		"table.golden":            {},
		"table-namespaces.golden": {WithNamespace: true},
		"table-wide.golden":       {WithNamespace: true, Wide: true},
	} {
		var b bytes.Buffer
		require.NoError(t, writeTable(&b, jobs, opts, now))
		golden(t, name, b.Bytes())
	}

	var b bytes.Buffer
	p, err := output.New("json", false, false)
	require.NoError(t, err)
	require.NoError(t, p.Print(&b, jobs, false))
	golden(t, "jobs.json.golden", b.Bytes())
}

// TestTableOf: a row's object is its job's document, and carries its
// metadata for the printer's NAMESPACE column.
func TestTableOf(t *testing.T) {
	jobs := showcase()
	table := status.TableOf(jobs, now)
	require.Len(t, table.Rows, len(jobs))
	var wide []string
	for _, c := range table.ColumnDefinitions {
		if c.Priority == 1 {
			wide = append(wide, c.Name)
		}
	}
	assert.Equal(t, []string{"Progress", "ETA", "Reason", "Message"}, wide)
	for i, row := range table.Rows {
		want, err := json.Marshal(jobs[i])
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(row.Object.Raw))
		meta, ok := row.Object.Object.(*metav1.PartialObjectMetadata)
		require.True(t, ok, "%T", row.Object.Object)
		assert.Equal(t, [2]string{jobs[i].Namespace, jobs[i].Name}, [2]string{meta.Namespace, meta.Name})
		assert.Len(t, row.Cells, len(table.ColumnDefinitions))
	}

	var b bytes.Buffer
	require.NoError(t, writeTable(&b, nil, printers.PrintOptions{}, now))
	assert.Empty(t, b.String(), "no job, no header: NoneFound says so")
}

// writeTable prints jobs as `trainfn status` does, through its printer.
func writeTable(w io.Writer, jobs []status.Job, opts printers.PrintOptions, now time.Time) error {
	format := ""
	if opts.Wide {
		format = "wide"
	}
	p, err := output.New(format, opts.NoHeaders, opts.WithNamespace)
	if err != nil {
		return err
	}
	p.Now = func() time.Time { return now }
	return p.Print(w, jobs, false)
}
