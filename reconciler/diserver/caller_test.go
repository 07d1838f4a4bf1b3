package diserver

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPodWithAddress(t *testing.T) {
	set := workerSet("j", 1, 3)
	other := workerSet("k", 1, 1)
	owners := map[types.UID]bool{set.UID: true}
	running := podOf(set, "StatefulSet", 0, "10.0.0.1")
	dualStack := podOf(set, "StatefulSet", 1, "10.0.0.2")
	dualStack.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.2"}, {IP: "fd00::2"}}
	deleting := podOf(set, "StatefulSet", 2, "10.0.0.3")
	deleting.DeletionTimestamp = &deleting.CreationTimestamp
	succeeded := podOf(set, "StatefulSet", 3, "10.0.0.4")
	succeeded.Status.Phase = corev1.PodSucceeded
	failed := podOf(set, "StatefulSet", 4, "10.0.0.5")
	failed.Status.Phase = corev1.PodFailed
	hostNetwork := podOf(set, "StatefulSet", 5, "10.0.0.6")
	hostNetwork.Spec.HostNetwork = true
	anothers := podOf(other, "StatefulSet", 0, "10.0.0.7")
	// A pod that copies the job's labels but no workload of the job made.
	impostor := podOf(set, "StatefulSet", 6, "10.0.0.8")
	impostor.OwnerReferences = nil
	pods := []corev1.Pod{running, dualStack, deleting, succeeded, failed, hostNetwork, anothers, impostor}

	for addr, want := range map[string]string{
		"10.0.0.1":        running.Name,
		"::ffff:10.0.0.1": running.Name,
		"10.0.0.2":        dualStack.Name,
		"fd00::2":         dualStack.Name,
		"10.0.0.3":        deleting.Name,
		"10.0.0.4":        "",
		"10.0.0.5":        "",
		"10.0.0.6":        "",
		"10.0.0.7":        "",
		"10.0.0.8":        "",
		"10.0.0.9":        "",
	} {
		got := podWithAddress(pods, owners, netip.MustParseAddr(addr))
		if want == "" {
			require.Nil(t, got, addr)
			continue
		}
		require.NotNil(t, got, addr)
		require.Equal(t, want, got.Name, addr)
	}
}
