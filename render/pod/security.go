package pod

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// The securityContext of every container trainfn adds to a pod meets the
// Pod Security Standards' restricted level as far as the pod lets it
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/),
// so that a job whose templates meet a level renders pods that meet it:
// a namespace held to that level admits them.

// NobodyUID is the user a container of trainfn's own image runs as when the
// pod names no other non-root user: nobody, which distributions and
// minimal images alike have.
const NobodyUID = 65534

// netBindService is the capability to open a port below 1024, the one
// capability the restricted level lets a container add.
const netBindService corev1.Capability = "NET_BIND_SERVICE"

// CopiedSecurity is the securityContext of a container trainfn adds to run
// as the pod's main container does, in its image and as its user, which it
// must: a wait for the workers logs in with mpirun's key, as mpirun's user.
// It is main's own, less what such a container never needs: it is not
// privileged, holds no capability, cannot gain privileges (no_new_privs),
// and runs under the container runtime's seccomp profile when neither main
// nor the pod names one. User, group, SELinux and AppArmor stay main's: a
// container whose main runs as root runs as root.
//
// A container that opens a privileged port as rsh does (privilegedPort)
// keeps what that needs, and main has: the capability to bind it, and, for
// a non-root user whose rsh is setuid root, the privilege it gains.
//
// A Windows pod's containers take none of these Linux fields, which the API
// server refuses on them: main's own is copied as it is.
func CopiedSecurity(main *corev1.SecurityContext, spec *corev1.PodSpec, privilegedPort bool) *corev1.SecurityContext {
	if windows(spec) {
		return main.DeepCopy()
	}
	sc := main.DeepCopy()
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	sc.Privileged = nil
	sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	if !privilegedPort {
		sc.AllowPrivilegeEscalation = new(false)
	} else if holds(main, netBindService) {
		sc.Capabilities.Add = []corev1.Capability{netBindService}
	}
	if sc.SeccompProfile == nil && podSeccomp(spec) == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return sc
}

// OwnImageSecurity is the securityContext of a container trainfn adds that
// runs an image of its own, whose user is the image's (root, in
// mpi-operator's kubectl delivery image): it meets the restricted level
// whatever the pod's main container does. It runs as the pod's user when
// that is not root, else as NobodyUID; it cannot gain privileges, holds no
// capability, and runs under the runtime's seccomp profile unless the pod
// names a profile restricted admits (RuntimeDefault or Localhost). Nil in
// a Windows pod, whose containers take none of these Linux fields.
func OwnImageSecurity(spec *corev1.PodSpec) *corev1.SecurityContext {
	if windows(spec) {
		return nil
	}
	sc := &corev1.SecurityContext{
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		RunAsNonRoot:             new(true),
		AllowPrivilegeEscalation: new(false),
	}
	if s := spec.SecurityContext; s == nil || s.RunAsUser == nil || *s.RunAsUser == 0 {
		sc.RunAsUser = new(int64(NobodyUID))
	}
	if p := podSeccomp(spec); p == nil || p.Type == corev1.SeccompProfileTypeUnconfined {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return sc
}

// CopiedSecurity is CopiedSecurity for a container added to the template,
// as YAML.
func (t *Template) CopiedSecurity(main *Container, privilegedPort bool) *yaml.Node {
	var sc *corev1.SecurityContext
	spec, err := t.typedSpec()
	if err == nil {
		err = decodeTyped(main.Get("securityContext"), &sc)
	}
	if err != nil {
		// The schema accepted the template, which Kubernetes' types then
		// read; should they not, main's own is what the container had.
		if n := main.Get("securityContext"); n != nil {
			return yaml.CopyYNode(n)
		}
		return nil
	}
	return typedNode(CopiedSecurity(sc, spec, privilegedPort))
}

// OwnImageSecurity is OwnImageSecurity for a container added to the
// template, as YAML.
func (t *Template) OwnImageSecurity() *yaml.Node {
	spec, err := t.typedSpec()
	if err != nil {
		// As CopiedSecurity: not met once the schema accepted the
		// template; a pod that says nothing is the strictest to run in.
		spec = &corev1.PodSpec{}
	}
	return typedNode(OwnImageSecurity(spec))
}

// typedSpec reads the pod spec with Kubernetes' types.
func (t *Template) typedSpec() (*corev1.PodSpec, error) {
	var spec corev1.PodSpec
	return &spec, decodeTyped(t.spec(), &spec)
}

func decodeTyped(n *yaml.Node, v any) error {
	if n == nil {
		return nil
	}
	b, err := yaml.NewRNode(n).MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// typedNode is a securityContext as a node; nil for none.
func typedNode(sc *corev1.SecurityContext) *yaml.Node {
	if sc == nil {
		return nil
	}
	n, err := ynode.FromTyped(sc)
	if err != nil {
		// A securityContext always marshals.
		panic(err)
	}
	return n
}

func windows(spec *corev1.PodSpec) bool {
	return spec != nil && spec.OS != nil && spec.OS.Name == corev1.Windows
}

func podSeccomp(spec *corev1.PodSpec) *corev1.SeccompProfile {
	if spec == nil || spec.SecurityContext == nil {
		return nil
	}
	return spec.SecurityContext.SeccompProfile
}

// holds tells whether a container with this securityContext has a
// capability: the container runtime's default set (which holds
// NET_BIND_SERVICE) as the context drops from it and adds to it.
func holds(sc *corev1.SecurityContext, c corev1.Capability) bool {
	if sc == nil || sc.Capabilities == nil {
		return true
	}
	if sc.Privileged != nil && *sc.Privileged {
		return true
	}
	same := func(x corev1.Capability) bool {
		return strings.EqualFold(strings.TrimPrefix(strings.ToUpper(string(x)), "CAP_"), string(c))
	}
	for _, a := range sc.Capabilities.Add {
		if same(a) {
			return true
		}
	}
	for _, d := range sc.Capabilities.Drop {
		if strings.EqualFold(string(d), "ALL") || same(d) {
			return false
		}
	}
	return true
}
