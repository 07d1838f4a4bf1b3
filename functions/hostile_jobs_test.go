package functions

// Hostile job specs: huge lists, names at the limits of what Kubernetes
// takes, counts that overflow, and text no ASCII tool expects.

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/objectsize"
)

// withEnv gives a container of hostileJob (the one named container) n
// variables, each value pad bytes long.
func withEnv(t *testing.T, container string, n, pad int) string {
	t.Helper()
	var env strings.Builder
	env.WriteString("            env:\n")
	for i := range n {
		fmt.Fprintf(&env, "            - name: VAR_%d\n              value: %s\n", i, strings.Repeat("v", pad))
	}
	line := "          - name: " + container + "\n"
	return edited(t, hostileJob, line, line+env.String())
}

func TestHostileEnvironmentOf100000Entries(t *testing.T) {
	r := renderHostile(t, withEnv(t, "worker", 100_000, 8))
	diags := readDiagnostics(t, r)
	require.Len(t, diags, 1)
	assert.Equal(t, "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env", diags[0].Field)
	assert.Equal(t, "<stdin>:20:13: error: MPIJob pi: spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env: the MPIJob takes more than 1572864 bytes as JSON (YAML aliases expanded), the most the API server stores in one object (etcd's default request limit), so its operator could not have stored it either: most of it is here (100000 entries); make it smaller", diags[0].String())
}

func TestHostileEnvironmentCopiedPastTheObjectLimit(t *testing.T) {
	// About 0.8 MiB of variables: the job spec fits, but the launcher's
	// Job holds them twice, in mpirun's container and in wait-for-workers
	// (its container names no command, so the wait cannot run in it).
	r := renderHostile(t, withEnv(t, "launcher", 12_000, 40))
	require.NoError(t, r.readErr)
	messages := strings.Split(r.messages(), "\n")
	assert.Contains(t, messages[0], "the launcher's container has no command")
	assert.Equal(t, "<stdin>:12:13: error: MPIJob pi: spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].env: Invalid value: the Job pi-launcher rendered from this job would take more than 1572864 bytes as JSON, the most the API server stores in one object (etcd's default request limit): most of the job spec is here (12000 entries); make it smaller", messages[len(messages)-1])
}

func TestHostileLargeEnvironmentRendersWhole(t *testing.T) {
	const n = 3_000
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(withEnv(t, "worker", n, 40)))
	require.NoError(t, err)
	objects, diags := Expand(docs)
	require.False(t, diags.HasErrors(), diags.Error())
	for _, o := range objects {
		assert.LessOrEqual(t, objectsize.JSON(o.YNode(), objectsize.Max), objectsize.Max, o.GetName())
		if o.GetName() != "pi-worker" {
			continue
		}
		env, err := o.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=worker]", "env"))
		require.NoError(t, err)
		elements, err := env.Elements()
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(elements), n)
		assert.Equal(t, "VAR_2999", elements[n-1].Field("name").Value.YNode().Value, "every variable, in order")
	}
}

// names are the jobs of each kind with a name of n letters and the given
// worker count.
func namedJob(kind string, n, workers int) string {
	name := strings.Repeat("a", n)
	switch kind {
	case "MPIJob":
		return strings.NewReplacer("name: pi", "name: "+name, "replicas: 2", fmt.Sprintf("replicas: %d", workers)).Replace(hostileJob)
	case "PyTorchJob":
		return fmt.Sprintf(`apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: %s
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/train:1
    Worker:
      replicas: %d
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example/train:1
`, name, workers)
	}
	return fmt.Sprintf(`apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: %s
spec:
  minReplicas: %d
  template:
    spec:
      containers:
      - name: di-container
        image: opendilab/ding:v0.4
        command: ["ditask"]
`, name, workers)
}

func TestHostileNamesAtTheLimit(t *testing.T) {
	// The longest derived name is the last worker's hostname,
	// <job>-worker-<i>, a DNS label of at most 63 characters; for an
	// MPIJob also <job>-launcher. The schemas leave exactly that room.
	for _, c := range []struct {
		kind          string
		length, count int
		fits          bool
	}{
		{"MPIJob", 54, 2, true},
		{"MPIJob", 54, 10, true},
		{"MPIJob", 55, 1, false},
		{"MPIJob", 54, 11, false},
		{"MPIJob", 53, 11, true},
		{"MPIJob", 63, 1, false},
		{"MPIJob", 64, 1, false},
		{"PyTorchJob", 54, 10, true},
		{"PyTorchJob", 54, 11, false},
		{"PyTorchJob", 53, 11, true},
		{"PyTorchJob", 63, 1, false},
		{"DIJob", 54, 10, true},
		{"DIJob", 54, 11, false},
		{"DIJob", 53, 11, true},
		{"DIJob", 253, 1, false},
	} {
		t.Run(fmt.Sprintf("%s named with %d letters, %d workers", c.kind, c.length, c.count), func(t *testing.T) {
			docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(namedJob(c.kind, c.length, c.count)))
			require.NoError(t, err)
			objects, diags := Expand(docs)
			if !c.fits {
				require.True(t, diags.HasErrors())
				assert.Equal(t, "metadata.name", diags[0].Field)
				assert.Contains(t, diags[0].Message, "must be a DNS-1035 label of at most")
				return
			}
			require.False(t, diags.HasErrors(), diags.Error())
			for _, o := range objects {
				requireNamesKubernetesTakes(t, o)
			}
		})
	}
}

func TestHostileTaskNamesAtTheLimit(t *testing.T) {
	// A DIJob's task t runs as <job>-<t>, its pods' hosts <job>-<t>-<i>.
	job := func(task string) string {
		return `apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: ` + strings.Repeat("j", 30) + `
spec:
  tasks:
  - name: ` + task + `
    type: learner
    template:
      spec:
        containers:
        - name: di-container
          image: opendilab/ding:v0.4
          command: ["ditask"]
`
	}
	r := renderHostile(t, job(strings.Repeat("t", 30)))
	require.False(t, r.failed(), r.messages())
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(r.output))
	require.NoError(t, err)
	for _, d := range docs {
		requireNamesKubernetesTakes(t, d.Node)
	}

	r = renderHostile(t, job(strings.Repeat("t", 31)))
	require.True(t, r.failed())
	assert.Equal(t, "metadata.name", r.diags[0].Field)
	assert.Contains(t, r.diags[0].Message, "must be a DNS-1035 label of at most 29 characters")
}

// requireNamesKubernetesTakes checks every name an object gives: its own,
// its labels, and its pods' hostname and subdomain.
func requireNamesKubernetesTakes(t *testing.T, o *yaml.RNode) {
	t.Helper()
	name := o.GetName()
	assert.Empty(t, validation.IsDNS1123Subdomain(name), name)
	if o.GetKind() == "Service" {
		assert.Empty(t, validation.IsDNS1035Label(name), "a Service's name is a DNS-1035 label: %s", name)
	}
	for k, v := range o.GetLabels() {
		assert.Empty(t, validation.IsQualifiedName(k), k)
		assert.Empty(t, validation.IsValidLabelValue(v), "%s of %s", k, name)
	}
	for _, f := range []string{"hostname", "subdomain"} {
		if v, _ := o.Pipe(yaml.Lookup("spec", "template", "spec", f)); v != nil {
			assert.Empty(t, validation.IsDNS1123Label(v.YNode().Value), "%s of %s", f, name)
		}
	}
}

func TestHostileReplicaCounts(t *testing.T) {
	for _, c := range []struct {
		value, message string
	}{
		{"2147483648", "Invalid value: 2147483648: must fit in a 32-bit integer"},
		{"9223372036854775808", "Invalid value: 9223372036854775808: must fit in a 32-bit integer"},
		// Beyond 64 bits the schemas see a float, and say "must be an
		// integer" of it: refused at the right field, in unclear words.
		{"18446744073709551617", ""},
		{"1e100", "Invalid value: 1e+100: must be an integer"},
		{"-1", "Invalid value: -1: must be between 1 and 100000"},
		{"-9223372036854775809", ""},
		{"0", "Invalid value: 0: must be between 1 and 100000"},
		{"100001", "Invalid value: 100001: must be between 1 and 100000"},
		{"1.5", "Invalid value: 1.5: must be an integer"},
		{`"2"`, `Invalid value: "2": must be an integer`},
		{".inf", "must be an integer"},
		{".nan", "Invalid value: NaN: must be an integer"},
		{"[2]", "Invalid value: [2]: must be an integer"},
	} {
		for _, kind := range []string{"MPIJob", "PyTorchJob", "DIJob"} {
			t.Run(kind+" "+c.value, func(t *testing.T) {
				job := namedJob(kind, 2, 7)
				field := map[string]string{
					"MPIJob":     "spec.mpiReplicaSpecs.Worker.replicas",
					"PyTorchJob": "spec.pytorchReplicaSpecs.Worker.replicas",
					"DIJob":      "spec.minReplicas",
				}[kind]
				count := map[string]string{"DIJob": "minReplicas: 7"}[kind]
				if count == "" {
					count = "replicas: 7"
				}
				job = edited(t, job, count, strings.Replace(count, "7", c.value, 1))
				r := renderHostile(t, job)
				require.NoError(t, r.readErr)
				require.True(t, r.diags.HasErrors())
				var messages []string
				for _, d := range r.diags {
					if d.Severity == Error {
						assert.Equal(t, field, d.Field, d.String())
						messages = append(messages, d.Message)
					}
				}
				assert.Contains(t, strings.Join(messages, "\n"), c.message)
			})
		}
	}
}

func TestHostileUnicodeNames(t *testing.T) {
	for _, name := range []string{"café", "πι", "ｐｉ", "pi\u200d", "pi\u200f", "pi\u202egnp", "pi😀", "p\u0131"} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			r := renderHostile(t, edited(t, hostileJob, "name: pi\n", fmt.Sprintf("name: %q\n", name)))
			require.NoError(t, r.readErr)
			require.True(t, r.diags.HasErrors())
			assert.Equal(t, "metadata.name", r.diags[0].Field)
			assert.Contains(t, r.diags[0].Message, "must be a DNS-1035 label")
			line := r.diags[0].String()
			assert.Equal(t, -1, strings.IndexFunc(line, func(r rune) bool { return unicode.Is(unicode.Cf, r) }),
				"no character in the message reorders or hides the rest of it: %q", line)
		})
	}
	for _, c := range []struct{ metadata, field, message string }{
		{"  namespace: café\n", "metadata.namespace", `Invalid value: "café": a lowercase RFC 1123 label must consist of`},
		{"  labels:\n    team: café\n", "metadata.labels[team]", `Invalid value: "café": a valid label must be an empty string or consist of`},
		{"  labels:\n    team: \"a\\u200db\"\n", "metadata.labels[team]", `Invalid value: "a\u200db": a valid label`},
		{"  labels:\n    équipe: a\n", "metadata.labels[équipe]", `Invalid value: "équipe": a label's name: name part must consist of`},
		{"  annotations:\n    note😀: a\n", "metadata.annotations[note😀]", `an annotation's name: name part must consist of`},
	} {
		t.Run(c.field, func(t *testing.T) {
			r := renderHostile(t, edited(t, hostileJob, "  name: pi\n", "  name: pi\n"+c.metadata))
			require.NoError(t, r.readErr)
			require.True(t, r.diags.HasErrors())
			assert.Equal(t, c.field, r.diags[0].Field)
			assert.Contains(t, r.diags[0].String(), c.message)
		})
	}
}

// hostileValues are strings no byte of which may change on the way
// through: non-ASCII letters, combining and zero-width characters,
// bidirectional controls, emoji sequences, and strings YAML would read as
// something else unless quoted.
var hostileValues = []string{
	"café", "cafe\u0301", "ナイーブ", "\u200f\u202eevil\u202c", "a\u200db", "👩\u200d👩\u200d👧", "😀",
	"\u2028line\u2029", "a\u0085b", "\ufeffbom", "\u00a0nbsp", "x\ufffdy", "\u3000", "\u061c", "\u2066isolate\u2069",
	"\x00nul", "\x1bescape", "\x7fdel", "tab\tin", "trailing ", " leading", "", "null", "~", "yes", "0x10", "1e3",
	"'single'", `"double"`, "#hash", "a: b", "- x", "multi\nline\n", "no final newline\nhere", `back\slash`,
}

func TestHostileUnicodeValuesPassThroughExactly(t *testing.T) {
	var data, env, args, annotations strings.Builder
	for i, v := range hostileValues {
		q := yamlQuoted(v)
		fmt.Fprintf(&data, "  k%d: %s\n", i, q)
		fmt.Fprintf(&env, "            - name: V%d\n              value: %s\n", i, q)
		fmt.Fprintf(&args, "            - %s\n", q)
		fmt.Fprintf(&annotations, "    a%d: %s\n", i, q)
	}
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: values\n  annotations:\n" + annotations.String() + "data:\n" + data.String()
	job := edited(t, hostileJob, "          - name: worker\n", "          - name: worker\n            args:\n"+args.String()+"            env:\n"+env.String())
	job = edited(t, job, "  name: pi\n", "  name: pi\n  annotations:\n"+annotations.String())

	r := renderHostile(t, configMap+"---\n"+job)
	require.False(t, r.failed(), r.messages())
	docs, err := ReadDocuments([]string{Stdin}, strings.NewReader(r.output))
	require.NoError(t, err)
	byName := map[string]*yaml.RNode{}
	for _, d := range docs {
		byName[d.Node.GetName()] = d.Node
	}
	values, worker := byName["values"], byName["pi-worker"]
	require.NotNil(t, values)
	require.NotNil(t, worker)
	for i, v := range hostileValues {
		assert.Equal(t, v, values.GetDataMap()[fmt.Sprintf("k%d", i)], "data k%d", i)
		assert.Equal(t, v, values.GetAnnotations()[fmt.Sprintf("a%d", i)], "annotation a%d", i)
	}

	container, err := worker.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "[name=worker]"))
	require.NoError(t, err)
	var got struct {
		Args []string `yaml:"args"`
		Env  []struct{ Name, Value string }
	}
	require.NoError(t, container.YNode().Decode(&got))
	assert.Equal(t, hostileValues, got.Args)
	for i, v := range hostileValues {
		assert.Equal(t, fmt.Sprintf("V%d", i), got.Env[i].Name)
		assert.Equal(t, v, got.Env[i].Value, "env V%d", i)
	}
	for i, v := range hostileValues {
		assert.Equal(t, v, worker.GetAnnotations()[fmt.Sprintf("a%d", i)], "the job's annotation a%d on its Job", i)
	}
}

// yamlQuoted writes s as a double-quoted YAML scalar, every character
// that is not plainly printable as an escape.
func yamlQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestHostilePortsAndQuantities puts ports out of range and quantities
// that are no quantities in every kind's pods: the render refuses each at
// its field, in the API server's words, where before only the API server
// did, at apply. functions' schemas tests hold the rules themselves to the
// API server's code.
func TestHostilePortsAndQuantities(t *testing.T) {
	const (
		outOfRange   = "must be between 1 and 65535, inclusive"
		notAQuantity = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
	)
	// container is the fields to add to a container whose fields are
	// indented so.
	container := func(indent string) string {
		return indent + strings.ReplaceAll(`ports:
- containerPort: 70000
  hostPort: -1
- containerPort: 8080
  name: Metrics--
readinessProbe:
  httpGet: {path: /, port: 0}
livenessProbe:
  tcpSocket: {port: metrics_port}
startupProbe:
  grpc: {port: 65536}
lifecycle:
  preStop:
    httpGet: {path: /, port: 80000}
resources:
  limits: {cpu: lots, memory: 1e, nvidia.com/gpu: -1}
  requests: {ephemeral-storage: "-1Gi", cpu: 1.2.3}`, "\n", "\n"+indent) + "\n"
	}
	want := func(prefix string) []string {
		return []string{
			prefix + "ports[0].containerPort: Invalid value: 70000: " + outOfRange,
			prefix + "ports[0].hostPort: Invalid value: -1: " + outOfRange,
			prefix + `ports[1].name: Invalid value: "Metrics--": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			prefix + `ports[1].name: Invalid value: "Metrics--": must not begin or end with a hyphen`,
			prefix + `ports[1].name: Invalid value: "Metrics--": must not contain consecutive hyphens`,
			prefix + "readinessProbe.httpGet.port: Invalid value: 0: " + outOfRange,
			prefix + `livenessProbe.tcpSocket.port: Invalid value: "metrics_port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
			prefix + "startupProbe.grpc.port: Invalid value: 65536: " + outOfRange,
			prefix + "lifecycle.preStop.httpGet.port: Invalid value: 80000: " + outOfRange,
			prefix + `resources.limits.cpu: Invalid value: "lots": ` + notAQuantity,
			prefix + `resources.limits.memory: Invalid value: "1e": unable to parse quantity's suffix`,
			prefix + "resources.limits.nvidia.com/gpu: Invalid value: -1: must be greater than or equal to 0",
			prefix + `resources.requests.ephemeral-storage: Invalid value: "-1Gi": must be greater than or equal to 0`,
			prefix + `resources.requests.cpu: Invalid value: "1.2.3": ` + notAQuantity,
		}
	}
	for _, c := range []struct {
		kind, job, at, prefix string
	}{
		{"MPIJob", hostileJob, "          - name: worker\n", "spec.mpiReplicaSpecs.Worker.template.spec.containers[0]."},
		{"PyTorchJob", namedJob("PyTorchJob", 2, 2), "          - name: pytorch\n", "spec.pytorchReplicaSpecs.Master.template.spec.containers[0]."},
		{"DIJob", namedJob("DIJob", 2, 2), "      - name: di-container\n", "spec.template.spec.containers[0]."},
		{"TrainingRuntime", readCase(t, "plain-runtime"), "                - name: node\n", "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0]."},
	} {
		t.Run(c.kind, func(t *testing.T) {
			indent := strings.Repeat(" ", strings.Index(c.at, "-")+2)
			job := edited(t, c.job, c.at, c.at+container(indent))
			r := renderHostile(t, job)
			require.NoError(t, r.readErr)
			var got []string
			for _, d := range r.diags {
				// The TrainJob of the runtime says it is invalid, too.
				if d.Severity == Error && d.Field != "spec.runtimeRef" {
					got = append(got, d.Field+": "+d.Message)
				}
			}
			assert.ElementsMatch(t, want(c.prefix), got)
		})
	}
	t.Run("TrainJob", func(t *testing.T) {
		job := edited(t, readCase(t, "plain-runtime"), "    numNodes: 3\n", "    numNodes: 3\n    resourcesPerNode:\n      limits: {cpu: lots}\n      requests: {memory: -1}\n")
		r := renderHostile(t, job)
		require.True(t, r.failed())
		assert.Contains(t, r.messages(), `TrainJob plain: spec.trainer.resourcesPerNode.limits.cpu: Invalid value: "lots": `+notAQuantity)
		assert.Contains(t, r.messages(), `TrainJob plain: spec.trainer.resourcesPerNode.requests.memory: Invalid value: -1: must be greater than or equal to 0`)
	})
	t.Run("overhead and a gang's minimum", func(t *testing.T) {
		job := edited(t, hostileJob, "spec:\n  mpiReplicaSpecs:", "spec:\n  runPolicy:\n    schedulingPolicy:\n      minResources: {cpu: plenty}\n  mpiReplicaSpecs:")
		job = edited(t, job, "        spec:\n          containers:\n          - name: worker", "        spec:\n          overhead: {memory: \"-64Mi\"}\n          containers:\n          - name: worker")
		r := renderHostile(t, job)
		assert.Contains(t, r.messages(), `spec.runPolicy.schedulingPolicy.minResources.cpu: Invalid value: "plenty": `+notAQuantity)
		assert.Contains(t, r.messages(), `spec.mpiReplicaSpecs.Worker.template.spec.overhead.memory: Invalid value: "-64Mi": must be greater than or equal to 0`)
	})
}
