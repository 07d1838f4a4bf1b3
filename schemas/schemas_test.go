package schemas

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// validate checks doc against the schema of its kind, as rendering does.
func validate(doc *yaml.RNode) (*Validated, Problems) {
	return Validate(doc, For(Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()}))
}

// Each job kind's schema is compiled by render's tests, which hold the
// table of kinds; the config's is this package's own.
func TestFunctionConfigSchemaCompiles(t *testing.T) {
	def, err := NewValidator().schema(For(FunctionConfig))
	require.NoError(t, err)
	require.NoError(t, def.Err())
}

const minimal = `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: app:1
            command:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: app:1
`

func TestMPIJobDefaults(t *testing.T) {
	v, problems := validate(yaml.MustParse(minimal))
	require.Empty(t, problems)

	var spec map[string]any
	require.NoError(t, v.Decode("spec", &spec))
	assert.EqualValues(t, 1, spec["slotsPerWorker"])
	assert.Equal(t, false, spec["runLauncherAsWorker"])
	assert.Equal(t, "/root/.ssh", spec["sshAuthMountPath"])
	assert.Equal(t, "AtStartup", spec["launcherCreationPolicy"])
	assert.Equal(t, "OpenMPI", spec["mpiImplementation"])
	assert.Equal(t, map[string]any{"cleanPodPolicy": "None", "suspend": false}, spec["runPolicy"])

	replicas := spec["mpiReplicaSpecs"].(map[string]any)
	launcher, worker := replicas["Launcher"].(map[string]any), replicas["Worker"].(map[string]any)
	assert.EqualValues(t, 1, launcher["replicas"])
	assert.Equal(t, "OnFailure", launcher["restartPolicy"])
	assert.EqualValues(t, 2, worker["replicas"])
	assert.Equal(t, "Never", worker["restartPolicy"])
}

func TestNullMeansUnset(t *testing.T) {
	v, problems := validate(yaml.MustParse(minimal))
	require.Empty(t, problems)
	container, err := v.Doc.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "containers", "[name=launcher]"))
	require.NoError(t, err)
	assert.Nil(t, container.Field("command"), "`command:` without a value is no command, as Kubernetes reads it")
}

// YAML that means the same validates the same: a null reached through an
// alias is the null written out.
func TestNullThroughAnAliasMeansUnset(t *testing.T) {
	doc := yaml.MustParse(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          affinity: &none
          containers:
          - name: launcher
            image: app:1
    Worker:
      replicas: 1
      template:
        spec:
          affinity: *none
          containers:
          - name: worker
            image: app:1
            command: *none
`)
	v, problems := validate(doc)
	require.Empty(t, problems)
	for _, role := range []string{"Launcher", "Worker"} {
		spec, err := v.Doc.Pipe(yaml.Lookup("spec", "mpiReplicaSpecs", role, "template", "spec"))
		require.NoError(t, err)
		assert.Nil(t, spec.Field("affinity"), role)
	}
}

func TestValidateLeavesTheDocumentAlone(t *testing.T) {
	doc := yaml.MustParse(minimal)
	before := doc.MustString()
	_, problems := validate(doc)
	require.Empty(t, problems)
	assert.Equal(t, before, doc.MustString())
}

func TestProblemsPointAtTheField(t *testing.T) {
	doc := yaml.MustParse(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  slotsPerWorker: -1
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: app:1
            imagePullPolicy: 3
`)
	_, problems := validate(doc)
	require.Len(t, problems, 2)
	assert.Equal(t, "spec.slotsPerWorker", problems[0].Field)
	assert.Equal(t, [2]int{6, 3}, [2]int{problems[0].Line, problems[0].Column})
	assert.Equal(t, "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].imagePullPolicy", problems[1].Field)
	assert.Equal(t, [2]int{14, 13}, [2]int{problems[1].Line, problems[1].Column})
}

func TestPosition(t *testing.T) {
	doc := yaml.MustParse(`metadata:
  labels:
    app.kubernetes.io/name: x
spec:
  items:
  - a: 1
  - b: 2
`)
	tests := map[string][2]int{
		"metadata.labels[app.kubernetes.io/name]": {3, 5},
		"spec.items[1].b":                         {7, 5},
		"spec.items[1].missing.deeper":            {7, 5},
		"spec.absent":                             {4, 1},
		"":                                        {1, 1},
	}
	for path, want := range tests {
		line, col := Position(doc, path)
		assert.Equal(t, want, [2]int{line, col}, path)
	}
}

func TestNearest(t *testing.T) {
	fields := []string{"slotsPerWorker", "runLauncherAsWorker", "sshAuthMountPath", "mpiReplicaSpecs"}
	assert.Equal(t, "slotsPerWorker", nearest("slotPerWorker", fields))
	assert.Equal(t, "slotsPerWorker", nearest("slotsperworker", fields))
	assert.Equal(t, "mpiReplicaSpecs", nearest("mpiReplicaSpec", fields))
	assert.Equal(t, "", nearest("image", fields), "nothing close: no suggestion")
}

func TestBoundRule(t *testing.T) {
	assert.Equal(t, "must be greater than or equal to 0", boundRule(">=0"))
	assert.Equal(t, "must be less than 5", boundRule("<5"))
	assert.Equal(t, "must fit in a 32-bit integer", boundRule("<=2147483647"))
	assert.Equal(t, "must fit in a 64-bit integer", boundRule(">=-9223372036854775808"))
}

// TestV1MPIJobReplicaDefaults: training-operator defaults a v1 MPIJob's
// launcher to one and its workers to none, each role its own default.
func TestV1MPIJobReplicaDefaults(t *testing.T) {
	v, problems := validate(yaml.MustParse(`apiVersion: kubeflow.org/v1
kind: MPIJob
metadata:
  name: w
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: launcher
            image: app:1
    Worker:
      template:
        spec:
          containers:
          - name: worker
            image: app:1
`))
	require.Empty(t, problems)
	var replicas map[string]map[string]any
	require.NoError(t, v.Decode("spec.mpiReplicaSpecs", &replicas))
	assert.EqualValues(t, 1, replicas["Launcher"]["replicas"])
	assert.EqualValues(t, 0, replicas["Worker"]["replicas"])
}

func TestLongBadValuesAreAbridged(t *testing.T) {
	for name, c := range map[string]struct{ value, want string }{
		"short": {`"eight"`, `spec.slotsPerWorker: Invalid value: "eight": must be an integer`},
		"long": {`"` + strings.Repeat("a", 5000) + `"`,
			`spec.slotsPerWorker: Invalid value: "` + strings.Repeat("a", 63) + `… (5002 bytes): must be an integer`},
		// The cut falls inside the third byte of a "€"; it keeps the whole rune out.
		"multibyte": {`"ab` + strings.Repeat("€", 100) + `"`,
			`spec.slotsPerWorker: Invalid value: "ab` + strings.Repeat("€", 20) + `… (304 bytes): must be an integer`},
	} {
		t.Run(name, func(t *testing.T) {
			doc := yaml.MustParse(strings.Replace(minimal, "spec:\n", "spec:\n  slotsPerWorker: "+c.value+"\n", 1))
			_, problems := validate(doc)
			require.Len(t, problems, 1)
			assert.Equal(t, c.want, problems[0].Error())
		})
	}
}

// slotsPerWorker takes 0 where the operator's own validation does
// (mpi-operator's v2beta1 and training-operator's v1 ask for a non-negative
// count, and write 0 slots into the hostfile); mpi-operator 0.2's CRD asked
// for 1 or more in v1alpha2, and trainfn's v1alpha1 for its per-worker
// split.
func TestSlotsPerWorkerBounds(t *testing.T) {
	for _, c := range []struct {
		apiVersion string
		least      int
	}{
		{"kubeflow.org/v2beta1", 0},
		{"kubeflow.org/v1", 0},
		{"kubeflow.org/v1alpha2", 1},
		{"kubeflow.org/v1alpha1", 1},
	} {
		for _, slots := range []int{c.least - 1, c.least} {
			doc := yaml.MustParse(`apiVersion: ` + c.apiVersion + `
kind: MPIJob
metadata:
  name: pi
spec:
  slotsPerWorker: ` + strconv.Itoa(slots) + `
`)
			_, problems := validate(doc)
			var onSlots Problems
			for _, p := range problems {
				if p.Field == "spec.slotsPerWorker" {
					onSlots = append(onSlots, p)
				}
			}
			if slots < c.least {
				assert.NotEmpty(t, onSlots, "%s slotsPerWorker %d is refused", c.apiVersion, slots)
			} else {
				assert.Empty(t, onSlots, "%s slotsPerWorker %d is accepted", c.apiVersion, slots)
			}
		}
	}
}
