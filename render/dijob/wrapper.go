package dijob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/ynode"
)

// Why a prelude. The pods of one workload share a template, yet DI_RANK,
// DI_NODE_IDS_ARG and DI_ATTACHED_NODES_ARG differ by rank, and none is a
// plain function of the pod's index that Kubernetes could substitute:
// they need arithmetic (first rank + index, rank * parallel workers + k)
// and, for a mesh, a list as long as the rank. The other ways out cost
// more: a workload per rank multiplies objects and could not grow at run
// time without the reconciler rendering pods, which it never does; a
// ConfigMap of every rank's values grows with the square of the ranks in a
// mesh and still needs something in the pod to pick the rank's entry. So
// the index reaches the pod through the downward API (TRAINFN_POD_INDEX,
// from the label Kubernetes puts on every pod of an Indexed Job or a
// StatefulSet), and a POSIX sh prelude to the container's command
// computes the variables, exports them and execs the command unchanged.
// Every rank's values are then right by construction, for any count,
// including the workers a preemptible job gains at run time.
//
// The price: a container needs a command (an image's entrypoint cannot be
// prefixed from outside the image) and /bin/sh, which DI-engine's images
// have; and the three variables exist for the command's shell only, not
// for Kubernetes' $(VAR) references, which render therefore refuses.

// preludeName is $0 of the prelude, the name its messages carry.
const preludeName = "di-env"

// preludeScript reads its arguments: $1 the rank of index 0; $2 the
// parallel workers per worker, empty for a job with tasks; $3 the
// topology; $4 the workers' hostname prefix (<workload>-); $5 the job's
// Service. It avoids "$$", which Kubernetes would read as an escaped "$".
var preludeScript = strings.ReplaceAll(`index=${TRAINFN_POD_INDEX:?is not set: the pod lacks its index label}
case $index in ''|*[!0-9]*) echo "di-env: the pod index \"$index\" is not a number" >&2; exit 1 ;; esac
rank=$(($1 + index))
export DI_RANK="$rank"
if [ -n "$2" ]; then
  n=$2
  ids=
  i=0
  while [ "$i" -lt "$n" ]; do ids="$ids${ids:+,}$((rank * n + i))"; i=$((i + 1)); done
  export DI_NODE_IDS_ARG="--node-ids=$ids"
  attach=
  if [ "$rank" -gt 0 ]; then
    case $3 in
    star) attach="tcp://${4}0.$5:PORT" ;;
    mesh)
      r=0
      while [ "$r" -lt "$rank" ]; do
        i=0
        while [ "$i" -lt "$n" ]; do attach="$attach${attach:+,}tcp://$4$r.$5:$((PORT + i))"; i=$((i + 1)); done
        r=$((r + 1))
      done ;;
    esac
  fi
  export DI_ATTACHED_NODES_ARG="${attach:+--attach-to=$attach}"
fi
shift 5
exec "$@"
`, "PORT", strconv.Itoa(handoff.DIPort))

// rankVariables are what the prelude computes.
var rankVariables = []string{"DI_RANK", "DI_NODE_IDS_ARG", "DI_ATTACHED_NODES_ARG"}

// prelude prefixes a container's command with the prelude, whose
// arguments say how to compute the variables.
func prelude(c *pod.Container, args preludeArgs) {
	command := ynode.Seq("/bin/sh", "-c", ynode.Text(preludeScript), preludeName,
		ynode.String(strconv.Itoa(int(args.firstRank))), ynode.String(args.parallelWorkers),
		ynode.String(args.topology), ynode.String(args.hostPrefix), ynode.String(args.service))
	command.Content = append(command.Content, c.Get("command").Content...)
	c.Set("command", command)
}

type preludeArgs struct {
	firstRank       int32
	parallelWorkers string
	topology        string
	hostPrefix      string
	service         string
}

// rankReferences are the errors of a container that would not see the
// prelude's variables as it means to: a $(VAR) reference to one of them in
// its command, arguments or environment, which Kubernetes would leave as
// written (for a shell to run as a command), or a value of its own for
// one, which the prelude would replace.
func rankReferences(c *pod.Container) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []string{"command", "args"} {
		if seq := c.Get(list); seq != nil {
			for i, s := range seq.Content {
				if v := referenced(s.Value); v != "" {
					errs = append(errs, field.Invalid(c.Path().Child(list).Index(i), s.Value, referenceMessage(v)))
				}
			}
		}
	}
	if env := c.Get("env"); env != nil {
		for i, e := range env.Content {
			path := c.Path().Child("env").Index(i)
			name, value := pod.ContainerOf(e).Get("name"), pod.ContainerOf(e).Get("value")
			switch {
			case name != nil && slices.Contains(rankVariables, name.Value):
				errs = append(errs, field.Invalid(path.Child("name"), name.Value,
					"trainfn sets it in the pod from the worker's rank: a value of the template would be the same for every worker"))
			case value != nil && referenced(value.Value) != "":
				errs = append(errs, field.Invalid(path.Child("value"), value.Value, referenceMessage(referenced(value.Value))))
			}
		}
	}
	return errs
}

// referenced is the prelude's variable s refers to as $(VAR), if any.
func referenced(s string) string {
	for _, v := range rankVariables {
		if strings.Contains(s, "$("+v+")") {
			return v
		}
	}
	return ""
}

func referenceMessage(v string) string {
	return fmt.Sprintf("refers to $(%s), which trainfn computes in the pod from its rank, after Kubernetes substitutes $(VAR) references: write $%s, which the command's shell expands", v, v)
}
