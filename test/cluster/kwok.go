package cluster

import (
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodelease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

// kwokStages is kwok's configuration: the life its fake kubelets give nodes
// and pods. Nodes get kwok's own stages: ready, with a lease the node
// lifecycle controller watches. Pods run and turn ready once scheduled, with
// kwok's own stage, and stay up: kwok's stage that completes every pod a
// Job owns is left out, since a worker runs sshd until its job is done.
// A deleted pod ends as a kubelet ends it, failed first and removed after,
// so that the Job controller releases its tracking finalizer; kwok's own
// stage removes it at once and leaves it stuck behind that finalizer.
func kwokStages() string {
	return strings.Join([]string{
		nodefast.DefaultNodeInit,
		nodelease.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podTerminate,
		podRemove,
	}, "\n---\n")
}

const podTerminate = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-terminate
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: .metadata.deletionTimestamp
      operator: Exists
    - key: .status.phase
      operator: In
      values: [Pending, Running]
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Failed
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          terminated:
            exitCode: 137
            finishedAt: {{ $now | Quote }}
            reason: Error
      {{ end }}
`

const podRemove = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-remove
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: .metadata.deletionTimestamp
      operator: Exists
    - key: .status.phase
      operator: In
      values: [Succeeded, Failed]
  next:
    delete: true
`
