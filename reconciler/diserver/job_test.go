package diserver

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/trainfn/trainfn/render/handoff"
)

func reading(objs ...client.Object) client.Reader {
	return fake.NewClientBuilder().WithObjects(objs...).Build()
}

// requireRefusal checks that err is a refusal with the status and words.
func requireRefusal(t *testing.T, err error, status int, mentions string) {
	t.Helper()
	require.Error(t, err)
	var refused *requestError
	require.True(t, errors.As(err, &refused), "%T %v is not a refusal", err, err)
	require.Equal(t, status, refused.status, refused.message)
	require.Contains(t, refused.message, mentions)
}

func TestLoadJobReadsItsWorkloadsByFirstRank(t *testing.T) {
	learner := taskJob("j", "learner", 3, 2, 1)
	collector := taskJob("j", "collector", 3, 0, 2)
	j, err := loadJob(context.Background(), reading(learner, collector), JobID{"ns", "j", 3})
	require.NoError(t, err)
	require.Len(t, j.workloads, 2)
	require.Equal(t, "j-collector", j.workloads[0].object.GetName())
	require.Equal(t, "j-learner", j.workloads[1].object.GetName())
	require.Equal(t, int32(3), j.workers())
	require.Equal(t, int32(3), j.ranks())
	require.Nil(t, j.preemptible())
	leader, ok := j.leader()
	require.True(t, ok)
	require.Equal(t, "j-collector", leader.GetName())
}

func TestLoadJobKeepsTheNewestGeneration(t *testing.T) {
	old := taskJob("j", "old", 1, 0, 2)
	current := taskJob("j", "current", 2, 0, 2)
	ctx := context.Background()
	j, err := loadJob(ctx, reading(old, current), JobID{"ns", "j", 2})
	require.NoError(t, err)
	require.Len(t, j.workloads, 1)
	require.Equal(t, "j-current", j.workloads[0].object.GetName())

	_, err = loadJob(ctx, reading(old, current), JobID{"ns", "j", 1})
	requireRefusal(t, err, http.StatusNotFound, "job ns/j: at generation 2, not 1")
	_, err = loadJob(ctx, reading(old, current), JobID{"ns", "j", 3})
	requireRefusal(t, err, http.StatusNotFound, "at generation 2, not 3")
}

func TestLoadJobFindsNoJob(t *testing.T) {
	ctx := context.Background()
	elsewhere := workerSet("j", 1, 2)
	elsewhere.Namespace = "other"
	// An MPIJob of the same name: trainfn's, but not a DIJob's workload.
	mpi := &batchv1.Job{}
	mpi.Namespace, mpi.Name, mpi.Labels = "ns", "j-launcher", handoff.RoleLabels("j", handoff.RoleLauncher)
	_, err := loadJob(ctx, reading(elsewhere, mpi), JobID{"ns", "j", 1})
	requireRefusal(t, err, http.StatusNotFound, "job ns/j: no DIJob of that name")
}

func TestLoadJobRefusesUnreadableAnnotations(t *testing.T) {
	for key, value := range map[string]string{handoff.DIJobGeneration: "one", handoff.FirstRank: "-1"} {
		s := workerSet("j", 1, 2)
		s.Annotations[key] = value
		_, err := loadJob(context.Background(), reading(s), JobID{"ns", "j", 1})
		requireRefusal(t, err, http.StatusInternalServerError, "StatefulSet j-worker: metadata.annotations["+key+"]")
	}
}

func TestScalable(t *testing.T) {
	started := []string{handoff.ElasticWorkers, "1:4", handoff.ScaledFrom, "2"}
	id := JobID{"ns", "j", 1}
	preemptible := func(s ...client.Object) *appsv1.StatefulSet {
		j, err := loadJob(context.Background(), reading(s...), id)
		require.NoError(t, err)
		return j.preemptible()
	}

	b, err := scalable(id, preemptible(workerSet("j", 1, 2, started...)))
	require.NoError(t, err)
	require.Equal(t, int32(1), b.Min)
	require.Equal(t, int32(4), b.Max)

	_, err = scalable(id, preemptible(taskJob("j", "worker", 1, 0, 2)))
	requireRefusal(t, err, http.StatusConflict, "job ns/j is not preemptible")
	_, err = scalable(id, preemptible(workerSet("j", 1, 2)))
	requireRefusal(t, err, http.StatusConflict, "job ns/j is not preemptible")
	// Read again after a conflict, the StatefulSet may have lost the mark.
	_, err = scalable(id, workerSet("j", 1, 2))
	requireRefusal(t, err, http.StatusConflict, "job ns/j is no longer preemptible")
	_, err = scalable(id, preemptible(workerSet("j", 1, 2, handoff.ElasticWorkers, "1:4")))
	requireRefusal(t, err, http.StatusConflict, "has not set its first worker count yet")
	_, err = scalable(id, preemptible(workerSet("j", 1, 2, append(started, handoff.Ended, "Succeeded")...)))
	requireRefusal(t, err, http.StatusConflict, "job ns/j has ended (Succeeded)")
	_, err = scalable(id, preemptible(workerSet("j", 1, 2, handoff.ElasticWorkers, "4:1", handoff.ScaledFrom, "2")))
	requireRefusal(t, err, http.StatusInternalServerError, "metadata.annotations["+handoff.ElasticWorkers+"]")
}
