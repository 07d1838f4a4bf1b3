package pod

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A container added to run as main does keeps main's user and whatever
// the pod says, and loses the privileges it never needs.
func TestCopiedSecurity(t *testing.T) {
	for name, tt := range map[string]struct {
		spec string
		rsh  bool
		want string
	}{
		"nothing said: hardened, under the runtime's seccomp profile": {
			spec: `{containers: [{name: m}]}`,
			want: `{capabilities: {drop: [ALL]}, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"main's user, group and SELinux are kept; its privileges are not": {
			spec: `{containers: [{name: m, securityContext: {runAsUser: 1000, runAsGroup: 1000, seLinuxOptions: {level: "s0:c1,c2"},
				privileged: true, capabilities: {add: [SYS_ADMIN, NET_RAW]}, allowPrivilegeEscalation: true,
				readOnlyRootFilesystem: true}}]}`,
			want: `{capabilities: {drop: [ALL]}, seLinuxOptions: {level: "s0:c1,c2"}, runAsUser: 1000, runAsGroup: 1000,
				readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"root stays root": {
			spec: `{containers: [{name: m, securityContext: {runAsUser: 0}}]}`,
			want: `{capabilities: {drop: [ALL]}, runAsUser: 0, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"the pod's seccomp profile applies": {
			spec: `{securityContext: {seccompProfile: {type: Localhost, localhostProfile: p.json}}, containers: [{name: m}]}`,
			want: `{capabilities: {drop: [ALL]}, allowPrivilegeEscalation: false}`,
		},
		"main's own seccomp profile is kept": {
			spec: `{containers: [{name: m, securityContext: {seccompProfile: {type: Unconfined}}}]}`,
			want: `{capabilities: {drop: [ALL]}, allowPrivilegeEscalation: false, seccompProfile: {type: Unconfined}}`,
		},
		"rsh binds a privileged port, and may be setuid root": {
			spec: `{containers: [{name: m, securityContext: {runAsUser: 1000, capabilities: {add: [SYS_PTRACE]}}}]}`,
			rsh:  true,
			want: `{capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}`,
		},
		"rsh gets no capability main has not": {
			spec: `{containers: [{name: m, securityContext: {capabilities: {drop: [all]}, allowPrivilegeEscalation: false}}]}`,
			rsh:  true,
			want: `{capabilities: {drop: [ALL]}, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"rsh keeps the capability main adds back": {
			spec: `{containers: [{name: m, securityContext: {capabilities: {drop: [ALL], add: [CAP_NET_BIND_SERVICE]}}}]}`,
			rsh:  true,
			want: `{capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}, seccompProfile: {type: RuntimeDefault}}`,
		},
		"a Windows pod's container is main's copy": {
			spec: `{os: {name: windows}, containers: [{name: m, securityContext: {windowsOptions: {runAsUserName: ContainerUser}}}]}`,
			want: `{windowsOptions: {runAsUserName: ContainerUser}}`,
		},
		"a Windows pod's container with nothing said has nothing": {
			spec: `{os: {name: windows}, containers: [{name: m}]}`,
			want: ``,
		},
	} {
		t.Run(name, func(t *testing.T) {
			tpl := template(t, tt.spec)
			got := tpl.CopiedSecurity(tpl.Main(), tt.rsh)
			assertYAML(t, tt.want, got)
		})
	}
}

// A container of an image of trainfn's choosing meets restricted whatever
// main does, as the pod's user when that is not root.
func TestOwnImageSecurity(t *testing.T) {
	for name, tt := range map[string]struct{ spec, want string }{
		"nothing said: nobody": {
			spec: `{containers: [{name: m}]}`,
			want: `{capabilities: {drop: [ALL]}, runAsUser: 65534, runAsNonRoot: true, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"main's privileges are not its": {
			spec: `{containers: [{name: m, securityContext: {privileged: true, runAsUser: 0}}]}`,
			want: `{capabilities: {drop: [ALL]}, runAsUser: 65534, runAsNonRoot: true, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"the pod's non-root user": {
			spec: `{securityContext: {runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}, containers: [{name: m}]}`,
			want: `{capabilities: {drop: [ALL]}, runAsNonRoot: true, allowPrivilegeEscalation: false}`,
		},
		"a pod that runs as root": {
			spec: `{securityContext: {runAsUser: 0, runAsNonRoot: false, seccompProfile: {type: Localhost, localhostProfile: p.json}}, containers: [{name: m}]}`,
			want: `{capabilities: {drop: [ALL]}, runAsUser: 65534, runAsNonRoot: true, allowPrivilegeEscalation: false}`,
		},
		"a pod that runs unconfined": {
			spec: `{securityContext: {runAsNonRoot: true, seccompProfile: {type: Unconfined}}, containers: [{name: m}]}`,
			want: `{capabilities: {drop: [ALL]}, runAsUser: 65534, runAsNonRoot: true, allowPrivilegeEscalation: false, seccompProfile: {type: RuntimeDefault}}`,
		},
		"a Windows pod": {
			spec: `{os: {name: windows}, containers: [{name: m}]}`,
			want: ``,
		},
	} {
		t.Run(name, func(t *testing.T) {
			assertYAML(t, tt.want, template(t, tt.spec).OwnImageSecurity())
		})
	}
}

// The copy is the container's own: editing it leaves main as it was.
func TestCopiedSecurityLeavesMainAlone(t *testing.T) {
	tpl := template(t, `{containers: [{name: m, securityContext: {runAsUser: 1000, capabilities: {add: [NET_RAW]}}}]}`)
	before, err := yaml.String(tpl.Main().Get("securityContext"))
	require.NoError(t, err)
	tpl.CopiedSecurity(tpl.Main(), false)
	after, err := yaml.String(tpl.Main().Get("securityContext"))
	require.NoError(t, err)
	assert.Equal(t, before, after)
}

func template(t *testing.T, spec string) *Template {
	t.Helper()
	n, err := yaml.Parse(`{spec: ` + spec + `}`)
	require.NoError(t, err)
	return NewTemplate(n, field.NewPath("t"))
}

// assertYAML compares a node with YAML, as data: order and style aside.
func assertYAML(t *testing.T, want string, got *yaml.Node) {
	t.Helper()
	if want == "" {
		assert.Nil(t, got)
		return
	}
	require.NotNil(t, got)
	w, err := yaml.Parse(want)
	require.NoError(t, err)
	wantJSON, err := w.MarshalJSON()
	require.NoError(t, err)
	gotJSON, err := yaml.NewRNode(got).MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(gotJSON))
}
