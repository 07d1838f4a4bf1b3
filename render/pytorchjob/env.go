package pytorchjob

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/workload"
)

// The pytorch container and its port, as training-operator names them.
const (
	pytorchContainer = "pytorch"
	portName         = "pytorchjob-port"
	defaultPort      = 23456
)

// envVar is a container environment variable.
type envVar struct{ Name, Value string }

// ports are the port of the master's and of the workers' pytorch container.
type ports struct{ master, worker int32 }

// noRank marks a pod whose rank the rendezvous assigns.
const noRank = -1

// env is the environment training-operator gives every container of a pod,
// in its order: the master's address and the pod's rank when the job has a
// master, then the rendezvous for an elastic job or the node count for a
// static one. Two additions: workers-only static jobs also get
// PET_NPROC_PER_NODE, and elastic ones a written nprocPerNode, both of
// which upstream drops. rank is 0 for the master, 1+i for worker i, noRank
// for the workers of an elastic job, whose rendezvous ranks them.
func (j *Job) env(p ports, rank int) []envVar {
	env := []envVar{{"PYTHONUNBUFFERED", "0"}}
	if j.Master != nil {
		addr := handoff.MasterHostname(j.Name)
		port := strconv.Itoa(int(p.master))
		env = append(env,
			envVar{"MASTER_PORT", port},
			envVar{"PET_MASTER_PORT", port},
			envVar{"MASTER_ADDR", addr},
			envVar{"PET_MASTER_ADDR", addr},
			envVar{"WORLD_SIZE", strconv.Itoa(j.worldSize())})
		if rank != noRank {
			env = append(env, envVar{"RANK", strconv.Itoa(rank)})
		}
		if j.NprocPerNode != "" {
			env = append(env, envVar{"PET_NPROC_PER_NODE", j.NprocPerNode})
		}
		if rank != noRank {
			env = append(env, envVar{"PET_NODE_RANK", strconv.Itoa(rank)})
		}
	}
	if e := j.Elastic; e != nil {
		env = append(env,
			envVar{"PET_RDZV_ENDPOINT", j.rendezvousHost() + ":" + strconv.Itoa(int(j.rendezvousPort(p)))},
			envVar{"PET_RDZV_BACKEND", e.RDZVBackend},
			envVar{"PET_NNODES", fmt.Sprintf("%d:%d", e.MinReplicas, e.MaxReplicas)})
		if e.MaxRestarts != nil {
			env = append(env, envVar{"PET_MAX_RESTARTS", strconv.Itoa(int(*e.MaxRestarts))})
		}
		if e.NProcPerNode != nil {
			env = append(env, envVar{"PET_NPROC_PER_NODE", strconv.Itoa(int(*e.NProcPerNode))})
		} else if j.Master == nil && j.NprocPerNodeWritten {
			// Upstream drops a written nprocPerNode here; torchrun would
			// then start one process per node whatever the user asked.
			env = append(env, envVar{"PET_NPROC_PER_NODE", j.NprocPerNode})
		}
		if e.RDZVID != nil {
			env = append(env, envVar{"PET_RDZV_ID", *e.RDZVID})
		}
		if len(e.RDZVConf) > 0 {
			conf := make([]string, len(e.RDZVConf))
			for i, c := range e.RDZVConf {
				conf[i] = c.Key + "=" + c.Value
			}
			env = append(env, envVar{"PET_RDZV_CONF", strings.Join(conf, ",")})
		}
		if e.Standalone {
			// torchrun reads it as bool(int(value)): training-operator's
			// empty value stops it with a ValueError before it starts.
			env = append(env, envVar{"PET_STANDALONE", "1"})
		}
		return env
	}
	env = append(env, envVar{"PET_NNODES", strconv.Itoa(int(j.replicas()))})
	if j.Master == nil && j.NprocPerNode != "" {
		env = append(env, envVar{"PET_NPROC_PER_NODE", j.NprocPerNode})
	}
	return env
}

// replicas is the number of pods the job starts with.
func (j *Job) replicas() int32 {
	var n int32
	for _, r := range []*workload.Replica{j.Master, j.Worker} {
		if r != nil {
			n += r.Replicas
		}
	}
	return n
}

// worldSize is WORLD_SIZE as training-operator computes it: one process per
// pod unless nprocPerNode is a number.
func (j *Job) worldSize() int {
	perNode, err := strconv.Atoi(j.NprocPerNode)
	if err != nil {
		perNode = 1
	}
	return int(j.replicas()) * perNode
}

// rendezvousHost is where an elastic job's agents meet: rdzvHost, else
// worker 0. torchrun's agent hosts the c10d store when the endpoint's host
// is its own hostname, so worker 0 is named by its hostname, which a Service
// of that name resolves for the other pods.
func (j *Job) rendezvousHost() string {
	if h := j.Elastic.RDZVHost; h != nil {
		return *h
	}
	return handoff.WorkerHostname(j.Name, 0)
}

func (j *Job) rendezvousPort(p ports) int32 {
	if port := j.Elastic.RDZVPort; port != nil {
		return *port
	}
	return p.worker
}
